"""The tcgen05.mma.sp forms whose metadata the text gives as figures only: one ``figure-only``
warning naming each data path with the kinds the catalog places no metadata for, and what
therefore goes unchecked -- Layout F (M = 64, one CTA, without .ws) and a pair's C (M = 128)
and A (M = 256), every kind; not D, E or G, whose metadata the catalog places."""

from __future__ import annotations

from formal import catalog
from formal.parse.tc_meta import figure_only, read_tc_meta

NAME = "catalog/sparse-metadata/tcgen05.md"
ALL = ".kind::tf32, f16, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4"


def _text() -> str:
    return (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")


def _warned(text: str) -> list[str]:
    sections, findings = read_tc_meta(text, NAME)
    assert not findings  # the reader reads; what the sections leave out is figure_only's
    return [f.message for f in figure_only(sections, NAME)
            if f.kind == "figure-only" and f.severity == "warning"]


def test_the_catalog_warns_once_for_f_c_and_a_with_every_kind() -> None:
    (got,) = _warned(_text())
    assert got.startswith(
        "tcgen05.mma.sp: the catalog places no metadata for "
        f"Layout F (M = 64, one CTA, without .ws; {ALL}); Layout C (M = 128, a CTA pair; "
        f"{ALL}); Layout A (M = 256, a CTA pair; {ALL}) -- the text gives the placement as "
        "figures only.")
    assert "which (lane, column, bit) holds each (row, chunk)'s field" in got
    assert "Layout D" not in got and "Layout E" not in got and "Layout G" not in got


def test_a_section_catalogued_leaves_its_kind_out_and_one_removed_is_named() -> None:
    text = _text()
    # the .ws M = 64 f16 section read as the one-CTA M = 64 f16 form: F no longer lacks f16
    f64 = text.replace("## Sparse metadata for tcgen05.mma.ws.sp .kind::f16 with M=64, K=32",
                       "## Sparse metadata for tcgen05.mma.sp .kind::f16 with M=64, K=32")
    assert f64 != text
    (got,) = _warned(f64)
    assert "Layout F (M = 64, one CTA, without .ws; .kind::tf32, f8f6f4, i8, mxf8f6f4," in got
    # ... and .ws at M = 64 (Layout E) now lacks f16, which is named
    assert "Layout E (M = 64, one CTA, .ws; .kind::f16)" in got
