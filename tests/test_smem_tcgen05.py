"""tcgen05's own shared-memory sections read as their own source: its atom table (with the
128-byte swizzle of 32-byte atomicity), its canonical layouts and examples (whose LBO rows say
"relative offset"), named tcgen05's, in Markdown and plain text alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.cli import main
from formal.model.smem import DescriptorRead, Swizzle
from formal.parse.smem import read_smem
from formal.prove.smem import ATOM32, prove_smem
from tests import smem_sections as S


@pytest.mark.parametrize("render", [lambda t: t, S.plain], ids=["markdown", "plain"])
def test_tcgen05_sections_are_tcgen05s_and_read_whole(render) -> None:  # type: ignore[no-untyped-def]
    text = read_smem(render(S.TCGEN05), "tc.md")
    assert text.mentions == ("tcgen05",) and text.findings == ()
    ex = text.examples[0]
    assert ex.lbo_mode == "relative"
    assert {p.name: p.value.bytes({"tf32": 4}) for p in ex.params}["LBO"] == 256
    assert [(a.mode, a.major, a.dims) for a in text.atoms][:2] == [
        ("128B-base32B", "MN", (8, 4)), ("128B", "MN", (8, 8))]
    proof = prove_smem(text)
    ids = {r.id: r for r in proof.results}
    assert "tcgen05.smem.example.K-major.none.tf32" in ids and proof.findings == ()
    assert all(r.id.startswith("tcgen05.") for r in proof.results)
    atom = ids["tcgen05.smem.atom.MN-major.128B-base32B"]
    assert [(v.name, v.status) for v in atom.verdicts] == [("atom-shape", "proved"),
                                                          ("hardware", "not-applicable")]
    # the canonical rows are checked against the 16-byte-atomicity rows, not the 32-byte one
    assert {v.name: v.status for v in ids["tcgen05.smem.canonical.MN-major.128B"].verdicts}[
        "atom-shape"] == "proved"


def test_the_32_byte_atomicity_atom_edited_is_refuted() -> None:
    text = read_smem(S.TCGEN05.replace("| 128B Swizzling with 32B atomicity | M/N | 8x4 |",
                                       "| 128B Swizzling with 32B atomicity | M/N | 8x8 |"),
                     "tc.md")
    bad = [r for r in prove_smem(text).results if r.id.endswith("128B-base32B")][0]
    v = bad.verdicts[0]
    assert v.status == "refuted" and v.counterexample == {"table": [8, 8], "swizzle": [8, 4]}
    assert v.span.line == 5


def test_the_32_byte_atomicity_swizzle_moves_32_byte_units() -> None:
    assert ATOM32 == Swizzle(2, 5, 2) and ATOM32.period == 512
    # byte 128 (row 1, unit 0) goes to unit 1 of row 1; a 32-byte unit stays whole
    assert [ATOM32(128 + b) for b in (0, 31, 32)] == [160, 191, 128]
    read = DescriptorRead("tcgen05", 16, 1024, "128B-base32B")
    assert read.bit_address("MN", 16, 0, 1) == ATOM32(128) * 8


def test_a_table_alone_checks_nothing_and_says_so(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    doc = tmp_path / "sbo.md"
    doc.write_text(S.DEFINITIONS.split("9.7.15.5.1.2.1.2.")[0], encoding="utf-8")
    assert main(["prove", str(doc), "-o", str(tmp_path / "o")]) == 1
    assert "nothing in it was checked" in (tmp_path / "o").read_text()


# ---- the K slice one instruction reads (dense and sparse) --------------------------------------

K_SLICES = Path("formal/catalog/smem/k-slices.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("render", [lambda t: t, S.plain], ids=["markdown", "plain"])
def test_the_catalogs_k_slices_are_read_and_proved(render) -> None:  # type: ignore[no-untyped-def]
    text = read_smem(render(K_SLICES), "k.md")
    assert len(text.k_slices) == 14 and text.findings == ()
    f16 = [r for r in text.k_slices if (r.family, r.type) == ("wgmma", "f16")][0]
    assert (f16.bits, f16.k, f16.sparse_k) == (16, 16, 32)
    b1 = [r for r in text.k_slices if r.type == "b1"][0]
    assert (b1.k, b1.sparse_k) == (256, None)  # no sparse form
    proof = prove_smem(text)
    assert proof.findings == () and len(proof.results) == 14
    v = {r.id: r.verdicts[0] for r in proof.results}["wgmma.smem.k-slice.f16"]
    assert v.message == ("K = 16 x 16 bits = 32 bytes of each row; sparse K = 32: A's "
                         "compressed row 32 bytes, B's 64 bytes (atom rows: 2 of 32B, 1 of "
                         "64B, 1 of 128B)")


@pytest.mark.parametrize("old,new,cex", [
    ("| wgmma | f16 | 16 | 16 | 32 |", "| wgmma | f16 | 16 | 16 | 48 |",
     {"sparse_k": 48, "twice_k": 32}),
    ("| tcgen05 | tf32 | 32 | 8 | 16 |", "| tcgen05 | tf32 | 32 | 16 | 32 |",
     {"k": 16, "bits": 32, "bytes": 64}),
    ("| wgmma | e4m3 | 8 | 32 | 64 |", "| wgmma | e4m3 | 16 | 16 | 32 |",
     {"type": "e4m3", "bits": 16, "width": 8}),
])
def test_a_k_slice_edited_is_refuted_at_its_row(old: str, new: str, cex: dict) -> None:  # type: ignore[type-arg]
    text = K_SLICES.replace(old, new)
    proof = prove_smem(read_smem(text, "k.md"))
    [f] = proof.findings
    assert f.kind == "smem-k-slice" and f.counterexample == cex
    assert f.span.line == S.line_of(text, new)


def test_prove_json_of_the_k_slices_and_tcgen05_sections_meets_the_schema(
        tmp_path: Path) -> None:
    import json
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(Path("docs/schema/prove.schema.json").read_text(encoding="utf-8"))
    for name, text in (("k.md", K_SLICES), ("tc.md", S.TCGEN05)):
        doc = tmp_path / name
        doc.write_text(text, encoding="utf-8")
        out = tmp_path / f"{name}.json"
        assert main(["prove", str(doc), "--format", "json", "-o", str(out)]) == 0
        data = json.loads(out.read_text())
        jsonschema.validate(data, schema)
        assert data["summary"]["layouts"] == (14 if name == "k.md" else 1 + 8 + 1)  # + atom
