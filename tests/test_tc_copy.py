"""tcgen05.cp (shared memory -> tensor memory): the catalog's six forms and two decompression
formats proved, their placement, multicast and width facts mutated and refuted with the cells
they are about."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.api import TC_COPY_CATALOG, with_tc_copy
from formal.model.tc_copy import copy_format, copy_layouts
from formal.parse.tc_copy import read_tc_copy
from formal.prove.tc_copy import COPY_OBLIGATIONS, prove_copy, prove_copy_format
from formal.prove.verdicts import Proof

CATALOG = (Path(__file__).resolve().parents[1] / "formal" / "catalog" / "tensor-copy"
           / "tcgen05.md")
TEXT = CATALOG.read_text(encoding="utf-8")
FORMS = ["tcgen05.cp.128x256b", "tcgen05.cp.4x256b", "tcgen05.cp.128x128b",
         "tcgen05.cp.64x128b.warpx2::02_13", "tcgen05.cp.64x128b.warpx2::01_23",
         "tcgen05.cp.32x128b.warpx4"]


def _section(title: str) -> str:
    """The catalog's preamble-free section of one form (its heading to the next heading)."""
    head = f"## Copy {title}\n"
    start = TEXT.index(head)
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start:end if end > 0 else len(TEXT)]


def _prove(text: str) -> tuple[list, list]:
    secs, _formats, found = read_tc_copy(text, "mutant.md")
    assert not found and len(secs) == 1
    results, findings = prove_copy(copy_layouts(secs)[0])
    return results, [f for f in findings if f.severity == "error"]


def _mutate(title: str, old: str, new: str) -> str:
    sec = _section(title)
    assert sec.count(old) == 1
    return sec.replace(old, new)


def test_catalog_reads_every_form() -> None:
    secs, formats, found = read_tc_copy(TEXT, TC_COPY_CATALOG)
    assert not found
    lays = copy_layouts(secs)
    assert [lay.id for lay in lays] == FORMS
    by = {lay.id: lay for lay in lays}
    assert [(s.rows, s.pieces, s.places, s.columns, s.lanes) for s in secs] == [
        (128, 8, 1, 8, 128), (4, 8, 1, 8, 4), (128, 4, 1, 4, 128), (64, 4, 2, 4, 128),
        (64, 4, 2, 4, 128), (32, 4, 4, 4, 128)]
    land = {(p[0], p[1], p[2]): (p[3], p[4])
            for p in by["tcgen05.cp.64x128b.warpx2::01_23"].landings}
    # 01_23: rows 0-31 to warps 0 and 1, rows 32-63 to warps 2 and 3
    assert land[(5, 2, 0)] == (5, 2) and land[(5, 2, 1)] == (37, 2)
    assert land[(40, 0, 0)] == (72, 0) and land[(40, 0, 1)] == (104, 0)
    land = {(p[0], p[1], p[2]): (p[3], p[4])
            for p in by["tcgen05.cp.64x128b.warpx2::02_13"].landings}
    assert land[(5, 2, 1)] == (69, 2) and land[(40, 3, 0)] == (40, 3)
    assert sorted(land[(7, 0, c)][0] for c in (0, 1)) == [7, 71]
    warpx4 = {(p[0], p[2]): p[3] for p in by["tcgen05.cp.32x128b.warpx4"].landings}
    assert [warpx4[(3, c)] for c in range(4)] == [3, 35, 67, 99]
    assert [(f.src, f.count, f.bits, f.padding, f.unit) for f in formats] == [
        ("b6x16_p32", 16, 6, 32, 128), ("b4x16_p64", 16, 4, 64, 128)]


def test_catalog_proved_in_the_default_run() -> None:
    proof = with_tc_copy(Proof((), ()), evidence=True)
    assert [r.id for r in proof.scales] == [*FORMS, "tcgen05.cp.b8x16.b6x16_p32",
                                            "tcgen05.cp.b8x16.b4x16_p64"]
    for r in proof.scales[:6]:
        assert r.instruction == "tcgen05.cp" and r.operand == "source"
        assert {v.name: v.status for v in r.verdicts} == {
            **{n: "proved" for n in COPY_OBLIGATIONS[:-1]}, "hardware": "unconfirmed"}
        assert "sm_100a" in r.verdict("hardware").message
    assert [(r.verdict("decompression").status, r.verdict("hardware").status)
            for r in proof.scales[6:]] == [("proved", "unconfirmed")] * 2
    assert not [f for f in proof.findings if f.severity == "error"]
    quiet = with_tc_copy(Proof((), ()))
    assert {r.verdict("hardware").status for r in quiet.scales[:6]} == {"not-applicable"}


def test_a_lane_set_missing_a_quarter_is_refuted_with_the_cell() -> None:
    text = _mutate("tcgen05.cp.32x128b.warpx4", "lane   = row + 32 * copy",
                   "lane   = row + 32 * (copy % 3)")
    results, errors = _prove(text)
    cover = results[0].verdict("copy-coverage")
    assert cover.status == "refuted"
    assert cover.counterexample == {"a": [0, 0, 0], "b": [0, 0, 3],
                                    "place": {"lane": 0, "column": 0}, "name": "lane"}
    pairs = results[0].verdict("warp-pairs")
    assert pairs.status == "refuted" and pairs.counterexample["warps"] == [0, 0, 1, 2]
    assert pairs.span is not None  # the line of the lane definition
    assert text.split("\n")[pairs.span.line - 1].strip().startswith("lane   = row + 32 * (copy")
    assert {f.kind for f in errors} == {"copy-coverage", "warp-pairs"}


def test_the_wrong_pairing_is_refuted_by_warp_pairs_only() -> None:
    # 02_13's stated placement under the 01_23 qualifier: a bijection, but warps 0 and 2
    text = _mutate("tcgen05.cp.64x128b.warpx2::02_13", "warpx2::02_13", "warpx2::01_23")
    results, errors = _prove(text)
    assert results[0].verdict("copy-coverage").status == "proved"
    pairs = results[0].verdict("warp-pairs")
    assert pairs.status == "refuted"
    assert pairs.counterexample == {"a": [0, 0], "lanes": [0, 64], "warps": [0, 2],
                                    "name": "lane"}
    assert [f.kind for f in errors] == ["warp-pairs"]


def test_a_column_off_by_one_is_refuted_with_the_cell() -> None:
    text = _mutate("tcgen05.cp.128x256b", "column = piece", "column = piece + 1")
    results, _errors = _prove(text)
    cover = results[0].verdict("copy-coverage")
    assert cover.status == "refuted"
    assert cover.counterexample == {"a": [0, 7, 0], "place": {"lane": 0, "column": 8},
                                    "name": "column"}
    assert "column 8, outside the 8 columns" in cover.message


def test_an_empty_word_is_refuted() -> None:
    text = _mutate("tcgen05.cp.128x128b", "lane   = row", "lane   = row / 2 * 2")
    results, _errors = _prove(text)
    cover = results[0].verdict("copy-coverage")
    assert cover.status == "refuted" and cover.counterexample["b"] == [1, 0, 0]


@pytest.mark.parametrize(("old", "new", "fault"), [
    ("64 rows x 4 pieces", "32 rows x 4 pieces", "32 rows; the shape moves 64"),
    ("to 2 places each", "to 4 places each", "4 places a piece"),
    ("warpx2::02_13", "warpx4", ".64x128b takes .warpx2::02_13 or .warpx2::01_23"),
])
def test_stated_numbers_against_the_variant_table(old: str, new: str, fault: str) -> None:
    text = _mutate("tcgen05.cp.64x128b.warpx2::02_13", old, new)
    results, errors = _prove(text)
    shape = results[0].verdict("copy-shape")
    assert shape.status == "refuted" and fault in shape.message
    assert "copy-shape" in {f.kind for f in errors}


@pytest.mark.parametrize(("old", "new", "fault"), [
    ("32 bits of padding", "64 bits of padding", "spell .b6x16_p64, not .b6x16_p32"),
    ("16 elements of 6 bits", "16 elements of 7 bits", "16 x 7 + 32 = 144 bits"),
])
def test_decompression_widths(old: str, new: str, fault: str) -> None:
    head = TEXT.index("## Decompression tcgen05.cp .b8x16.b6x16_p32")
    sec = TEXT[head:TEXT.index("\n## ", head)]
    _c, formats, found = read_tc_copy(sec.replace(old, new), "mutant.md")
    assert not found
    results, findings = prove_copy_format(copy_format(formats[0]))
    v = results[0].verdict("decompression")
    assert v.status == "refuted" and fault in v.message
    assert [f.kind for f in findings] == ["decompression"]


def test_a_missing_program_is_an_error_not_a_crash() -> None:
    sec = _section("tcgen05.cp.4x256b").split("```")[0]
    secs, _f, found = read_tc_copy(sec, "mutant.md")
    assert not secs and [f.kind for f in found] == ["tensor-copy"]
    assert "no 'Copy: R rows" in found[0].message


def test_the_landings_over_arrays_are_the_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each catalog form's landings, the program evaluated over every point at once, are the
    point-by-point walk's (forced by refusing the arrays), row by row, value for value."""
    import formal.model.tc_copy as T
    from formal.model.block_scale import TooWide
    secs = read_tc_copy(TEXT, "t")[0]
    fast = copy_layouts(secs)
    assert [lay.id for lay in fast] == FORMS

    def refuse(*_a: object, **_k: object) -> None:
        raise TooWide("refused")
    monkeypatch.setattr(T, "program_grid", refuse)
    walked = copy_layouts(secs)
    for a, b in zip(fast, walked, strict=True):
        assert a.landings == b.landings and len(a.landings) == a.rows * a.pieces * len(a.copies)
        assert all(type(x) is int for p in a.landings[:5] for x in p)
