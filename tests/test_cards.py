"""Every id the proof report names is an id ``list`` prints and ``show`` answers: beside the
fragments' grids, the block-scale factors, the sparse metadata, the packing formats and the
shared-memory examples, canonical forms and tables get a card (``formal.writers.cards``):
where the text states it, each obligation's status, and the family's drawing where it has
one.  The cells below are worked out by hand from the catalog's programs."""

from __future__ import annotations

from typing import Any

from formal.base.source import Span
from formal.prove.smem import SmemResult
from formal.prove.verdicts import Verdict
from formal.writers import cards

from .inproc import run


def _grid_row(text: str, lane: int) -> list[str]:
    return next(line.split()[1:] for line in text.splitlines()
                if line.split()[:1] == [str(lane)])


def test_list_names_exactly_the_ids_the_report_names(catalog_run: Any) -> None:
    proof = catalog_run.proof
    reported = {i.removeprefix("catalog:") for i in (
        *(r.layout.id for r in proof.results),
        *(r.id for r in (*proof.smem, *proof.scales, *proof.datapaths)))}
    code, out, _ = run("list")
    listed = [i.removeprefix("catalog:") for i in out.splitlines()]
    assert code == 0 and len(listed) == len(set(listed)) and set(listed) == reported


def test_the_sparse_metadata_card_draws_each_field_where_the_program_puts_it() -> None:
    # lane = row % 8 + 8 * (chunk / 4) + 16 * (row / 16),
    # bit = 4 * (chunk % 4) + 16 * ((row / 8) % 2), column = sel
    code, out, err = run("show", "tcgen05.sp_meta.m128.f16.sel1")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == ("tcgen05.sp_meta.m128.f16.sel1: tcgen05.mma.sp metadata, "
                                   "m128k32, 128 x 8 (f16)")
    assert "  stated at catalog/sparse-metadata/tcgen05.md:" in out
    assert [ln.split()[:2] for ln in out.splitlines() if ln.startswith("  lane-partition")] \
        == [["lane-partition", "proved"]]
    head = next(line.split() for line in out.splitlines() if line.startswith("lane "))
    assert head[1:] == [f"c1.b{4 * k}" for k in range(8)]
    assert _grid_row(out, 8) == ["r0c4", "r0c5", "r0c6", "r0c7", "r8c4", "r8c5", "r8c6", "r8c7"]
    assert _grid_row(out, 16)[4] == "r24c0"
    assert _grid_row(out, 127) == [f"r119c{c}" for c in range(4, 8)] + \
        [f"r127c{c}" for c in range(4, 8)]


def test_a_block_scale_id_shows_its_card_and_sub_columns() -> None:
    # scale_A of .scale_vec::1X at M = 128: lane = row % 32, column = row / 32, byte = sf_id
    code, out, _ = run("show", "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0"
                               ".scale_A")
    assert code == 0
    assert "  sub-column-fit   proved" in out and "  hardware         unconfirmed: not run" in out
    sf2 = out[out.index("sf_id = 2"):]
    assert sf2.splitlines()[1].split() == ["lane", "c0.b2", "c1.b2", "c2.b2", "c3.b2"]
    assert _grid_row(sf2, 5) == ["r5k0", "r37k0", "r69k0", "r101k0"]
    code, out, _ = run("show", "mma.block_scale.m16n8k32.mxf8f6f4.1X.ue8m0.scale_B")
    assert code == 0 and out.startswith("mma.block_scale.m16n8k32.mxf8f6f4.1X.ue8m0.scale_B: "
                                        "mma.block_scale scale_B, m16n8k32, 1 x 8 (ue8m0)\n")


def test_tables_and_canonical_forms_get_a_card_and_a_prefix_names_several() -> None:
    code, out, _ = run("show", "catalog:tcgen05.smem.descriptor")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "tcgen05.smem.descriptor: tcgen05.smem A/B, descriptor"
    assert lines[1].startswith("  stated at catalog/smem/layouts.md:")
    assert lines[2:] == ["  field-fit  proved", "  hardware   not-applicable"]
    code, out, err = run("show", "tcgen05.sp_meta.m128.f16")
    assert (code, out) == (2, "")
    assert err == ("ptxlayout: 'tcgen05.sp_meta.m128.f16' matches 2 results; name one of "
                   "them:\n  catalog:tcgen05.sp_meta.m128.f16.sel0\n"
                   "  catalog:tcgen05.sp_meta.m128.f16.sel1\n")
    code, _, err = run("show", "wgmma.smem.canonical.K-major.16B")  # no such swizzle
    assert code == 2 and err.startswith("ptxlayout: no shared-memory layout matches")


def test_a_refuted_obligation_shows_its_counterexample_and_is_not_ok() -> None:
    span = Span("doc.md", 7, 1)
    bad = SmemResult("wgmma.smem.example.K-major.32B.f16", "wgmma.smem", span, (
        Verdict("exact-layout", "proved"),
        Verdict("injective", "refuted", "two elements share a byte",
                {"a": [0, 1], "b": [1, 0], "byte": 16})), "K-major 32B", ("f16",), (8, 16))
    text = cards.card(bad)
    assert not cards.ok(bad) and text.splitlines() == [
        "wgmma.smem.example.K-major.32B.f16: wgmma.smem A/B, K-major 32B, 8 x 16 (f16)",
        "  stated at doc.md:7",
        "  exact-layout  proved",
        "  injective     refuted: two elements share a byte",
        '                counterexample: {"a": [0, 1], "b": [1, 0], "byte": 16}']
    assert cards.ok(SmemResult("x", "wgmma.smem", span, (
        Verdict("hardware", "unconfirmed", "not run", severity="warning"),)))
    assert cards.pick([bad], "catalog:WGMMA.smem.example.K-major.32B.f16") == [bad]
    assert cards.pick([bad], "wgmma.smem.example.K-major") == [bad]
    assert cards.pick([bad], "wgmma.smem.example.K-maj") == []


def test_show_answers_one_id_of_every_instruction_and_shape_beyond_the_fragments() -> None:
    from formal.api import results_beyond_fragments
    first: dict[tuple[str, str], str] = {}
    for r in results_beyond_fragments():
        first.setdefault((r.instruction, r.id.split(".")[2]), r.id)
    assert len(first) >= 10
    for ident in first.values():
        code, out, err = run("show", ident)
        assert (code, err) == (0, ""), (ident, err)
        assert out.startswith(f"{ident}: "), ident
