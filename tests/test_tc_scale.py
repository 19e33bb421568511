"""Block-scale factors of tcgen05.mma in tensor memory: the catalog proved for every legal
form, its selector and placement facts mutated and refuted with counterexamples, equivalent
rewritings proved, the K = 96 forms' run past the word a warning, the kernels assembled."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from formal.api import block_scale_catalog, prove_block_scale
from formal.base.matrix_variants import TCGEN05_SCALE_FORMS
from formal.model.tc_scale import tc_scale_layouts
from formal.parse.block_scale import read_block_scale
from formal.prove.tc_scale import TC_SCALE_OBLIGATIONS, admitted_ids, prove_tc_scale

CATALOG = Path(__file__).resolve().parents[1] / "formal" / "catalog" / "block-scale" / "tcgen05.md"
TEXT = CATALOG.read_text(encoding="utf-8")
TITLE_2X = ("## Block scaling for tcgen05.mma .kind::mxf4 .scale_vec::2X .ue8m0 with M=128, "
            "N=256, K=64")
TITLE_1X = ("## Block scaling for tcgen05.mma .kind::mxf8f6f4 .scale_vec::1X .ue8m0 with M=128, "
            "N=256, K=32")
TITLE_K96 = "## Block scaling for tcgen05.mma .kind::mxf4 .block32 .ue8m0 with M=128, N=256, K=96"


def _section(title: str) -> str:
    start = TEXT.index(title)
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start:] if end < 0 else TEXT[start:end]


def _mutate(old: str, new: str, title: str = TITLE_2X, operand: str = "Scale A") -> str:
    sec = _section(title)
    k = sec.index(old, sec.index(operand))
    return sec[:k] + new + sec[k + len(old):]


def _prove(text: str, which: str = "scale_A") -> tuple[dict, list, int]:
    """The verdicts and findings of one layout of a catalog text, and the line of its
    program's first definition."""
    doc = read_block_scale(text, "mutant.md")
    assert not doc.findings
    lay = next(x for x in tc_scale_layouts(doc) if x.id.endswith(which))
    res, findings = prove_tc_scale(lay)
    return {v.name: v for v in res.verdicts}, findings, lay.line_of("sf_id").line


def test_catalog_reads_every_legal_form() -> None:
    doc = block_scale_catalog("tcgen05")
    assert not doc.findings and not doc.sections
    forms = [(k, f, t, kk, kk // b) for k, f, t, kk, b in TCGEN05_SCALE_FORMS]
    for m, cta in ((128, 1), (64, 1), (256, 2)):  # every form at each M, in that order
        got = [(s.kind, s.form, s.stype, s.k, s.vec) for s in doc.tc_sections
               if (s.m, s.cta_group) == (m, cta)]
        assert got == forms, m
    # M = 128 with a pair: every form of the dense mma (Layout B), and of the sparse one
    # (Layout C) every form but K = 96's, at twice the K
    got = [(s.kind, s.form, s.stype, s.k, s.vec, s.sparse) for s in doc.tc_sections
           if (s.m, s.cta_group) == (128, 2)]
    assert got == [(*f, False) for f in forms] + [
        (k, f, t, 2 * kk, v, True) for k, f, t, kk, v in forms if kk != 96]
    assert len(doc.tc_sections) == 4 * len(forms) + 5
    lays = tc_scale_layouts(doc)
    assert len(lays) == 82
    assert {(x.operand, x.tile, x.columns) for x in lays if (x.m, x.cta_group) == (128, 1)} == {
        ("A", (128, 1), 4), ("B", (1, 256), 8), ("A", (128, 2), 4), ("B", (2, 256), 8),
        ("A", (128, 4), 4), ("B", (4, 256), 8), ("A", (128, 3), 8), ("B", (3, 256), 16),
        ("A", (128, 6), 8), ("B", (6, 256), 16)}
    # M = 64 takes two columns of scale_A (four at K = 96); a pair's CTA four each (eight)
    assert {(x.tile, x.columns) for x in lays if x.m == 64 and x.operand == "A"} == {
        ((64, 1), 2), ((64, 2), 2), ((64, 4), 2), ((64, 3), 4), ((64, 6), 4)}
    assert {(x.tile, x.columns) for x in lays if x.m == 256 and x.operand == "A"} == {
        ((256, 1), 4), ((256, 2), 4), ((256, 4), 4), ((256, 3), 8), ((256, 6), 8)}
    assert {x.cta_group for x in lays if x.m == 256} == {2}
    # a pair's M = 128: two columns of scale_A a CTA (four at K = 96); scale_B in four (eight)
    # columns of the two partitions of its half for the dense forms, in eight (sixteen) of
    # every partition for the sparse ones
    pair = [x for x in lays if (x.m, x.cta_group) == (128, 2)]
    assert {(x.operand, x.sparse, x.k == 96, x.columns) for x in pair} == {
        ("A", False, False, 2), ("A", False, True, 4), ("B", False, False, 4),
        ("B", False, True, 8), ("A", True, False, 2), ("B", True, False, 8)}
    assert {x.states("half") for x in pair if x.operand == "B"} == {True, False}
    assert all(x.states("half") != x.sparse for x in pair if x.operand == "B")
    assert {x.sf_ids for x in lays if x.vec == 2} == {(0, 2)}


def test_catalog_proved_k96_block32_a_warning() -> None:
    proof = prove_block_scale()
    mine = [r for r in proof.results if r.instruction == "tcgen05.block_scale"
            and r.id.startswith("tcgen05.")]
    assert len(mine) == 82
    for r in mine:
        got = {v.name: v.status for v in r.verdicts}
        fit = "refuted" if ".block32." in r.id else "proved"
        assert got == {**{n: "proved" for n in TC_SCALE_OBLIGATIONS[:-2]},
                       "sub-column-fit": fit, "hardware": "unconfirmed"}, r.id
        assert r.verdict("sub-column-fit").severity == ("warning" if fit == "refuted"
                                                        else "error")
        assert "sm_100a" in r.verdict("hardware").message
    tc = [f for f in proof.findings if f.layout.startswith("tcgen05.")]
    assert not [f for f in tc if f.severity == "error"]
    fits = [f for f in tc if f.kind == "block-scale-sub-column-fit"]
    assert len(fits) == 16  # the two .block32 forms' A and B at M = 64, 128 and a pair's 256, 128
    assert fits[0].counterexample == {"selector": 2, "row": 0, "columns": [0, 1], "needed": 1}


def test_placements_named_factor_by_factor() -> None:
    lay = next(x for x in tc_scale_layouts(block_scale_catalog("tcgen05"))
               if x.id == "tcgen05.block_scale.m128n256k64.mxf4.scale_vec::2X.ue8m0.scale_A")
    at = {(p[0], p[1]): p[2:5] for p in lay.placed(2)}
    assert at[(0, 0)] == (0, 0, 2) and at[(0, 1)] == (0, 0, 3)
    assert at[(33, 1)] == (1, 1, 3) and at[(127, 0)] == (31, 3, 2)
    b = next(x for x in tc_scale_layouts(block_scale_catalog("tcgen05"))
             if x.id == "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_B")
    assert {(p[0], p[1]): p[2:5] for p in b.placed(3)}[(0, 200)] == (8, 6, 3)
    assert admitted_ids(lay) == (0, 2) and admitted_ids(b) == (0, 1, 2, 3)


def test_column_formula_mutated_collides_with_counterexample() -> None:
    v, findings, line = _prove(_mutate("column = row / 32", "column = row / 64"))
    cov = v["scale-coverage"]
    assert cov.status == "refuted"
    assert cov.counterexample == {"selector": 0, "a": [0, 0], "b": [32, 0],
                                  "place": {"lane": 0, "column": 0, "byte": 0},
                                  "name": "byte"}
    err = next(f for f in findings if f.kind == "block-scale-scale-coverage")
    assert err.severity == "error" and line <= err.span.line <= line + 3


def test_selector_range_mutated_refuted() -> None:
    v, findings, line = _prove(_mutate("sf_id  = {0, 2}", "sf_id  = {0, 1}"))
    sel = v["selector-range"]
    assert sel.status == "refuted" and sel.counterexample == {"stated": [0, 1],
                                                              "admitted": [0, 2]}
    assert "sf_id 1 is not a multiple of 2" in sel.message
    assert v["scale-coverage"].status == "proved"  # 1 still places each factor once
    err = next(f for f in findings if f.kind == "block-scale-selector-range")
    assert err.span.line == line
    v, _f, _l = _prove(_mutate("sf_id  = {0, 2}", "sf_id  = {0}"))
    assert v["selector-range"].counterexample == {"stated": [0], "admitted": [0, 2]}


def test_byte_past_the_word_refuted() -> None:
    v, _f, _l = _prove(_mutate("byte   = sf_id + block", "byte   = sf_id + block + 1"))
    cov = v["scale-coverage"]
    assert cov.status == "refuted" and cov.counterexample["name"] == "byte"
    assert cov.counterexample["a"] == [0, 1] and cov.counterexample["place"]["byte"] == 4
    assert v["selector-range"].counterexample == {"stated": [0, 2], "admitted": [0]}


def test_lane_past_the_partition_refuted() -> None:
    v, _f, _l = _prove(_mutate("lane   = row % 32", "lane   = row % 64"))
    cov = v["scale-coverage"]
    assert cov.status == "refuted"
    assert cov.counterexample["a"] == [32, 0] and cov.counterexample["name"] == "lane"


def test_stated_shape_and_columns_mutated() -> None:
    v, _f, _l = _prove(_mutate("scale_A is 128 x 2", "scale_A is 128 x 4"))
    assert v["tile-shape"].status == "refuted"
    assert v["tile-shape"].counterexample == {"stated": [128, 4], "expected": [128, 2]}
    v, _f, _l = _prove(_mutate("in 4 columns", "in 5 columns"))
    assert v["register-budget"].status == "refuted"
    assert "use columns 0-3" in v["register-budget"].message


def test_illegal_form_refuted() -> None:
    text = _section(TITLE_1X).replace(".kind::mxf8f6f4 .scale", ".kind::mxf4 .scale")
    v, _f, _l = _prove(text)
    assert v["tile-shape"].status == "refuted"
    assert v["tile-shape"].counterexample == {"form": ["mxf4", "scale_vec::1X", "ue8m0", 32]}


@pytest.mark.parametrize("old,new", [
    ("lane   = row % 32", "lane   = row & 31"),
    ("column = row / 32", "column = row >> 5"),
    ("byte   = sf_id + block", "byte   = block + sf_id"),
])
def test_equivalent_rewritings_proved(old: str, new: str) -> None:
    v, _f, _l = _prove(_mutate(old, new))
    assert all(x.status in ("proved", "unconfirmed") for x in v.values())


def test_k96_run_past_the_word_is_a_warning() -> None:
    v, findings, _l = _prove(_section(TITLE_K96))
    fit = v["sub-column-fit"]
    assert (fit.status, fit.severity) == ("refuted", "warning")
    assert "does not say where those past the word go" in fit.message
    assert [f.severity for f in findings if f.kind.startswith("block-scale")] == ["warning"]
    # the same reading with only the IDs whose factors fit one word: nothing to warn of
    v, _f, _l = _prove(_section(TITLE_K96).replace("sf_id  = {0, 1, 2, 3}", "sf_id  = {0, 1}", 1))
    assert v["sub-column-fit"].status == "proved"
    assert v["selector-range"].counterexample == {"stated": [0, 1], "admitted": [0, 1, 2, 3]}


def test_an_undefined_name_is_a_fault_not_a_crash() -> None:
    v, findings, _l = _prove(_mutate("byte   = sf_id + block", "byte   = sf_id + blok"))
    assert {x.status for n, x in v.items() if n != "hardware"} == {"error"}
    assert any("blok" in f.message for f in findings if f.severity == "error")


def test_each_place_evaluated_over_the_matrix_equals_the_walk_point_by_point(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """model.tc_scale evaluates a program once over all factors (numpy); the scalar walk is
    the reference: the same placements, in the same order, for every catalog operand and
    every ID, and for programs whose C arithmetic differs from numpy's or Python's
    (truncating division of negatives, shifts past 63, values past int64)."""
    import formal.model.tc_scale as T
    sd = block_scale_catalog("tcgen05")
    cases = [(op, s) for sec in sd.tc_sections for op in sec.operands for s in range(4)]
    # 18 operands of the legal forms at M = 64, 128 and a pair's 256 and 128, and 10 of the
    # sparse forms of a pair's M = 128
    assert len(cases) == 4 * 82
    import formal.model.block_scale as B
    by_point = B._table_by_point

    def walk(defs: dict, op: object, s: int) -> tuple:
        exprs = [B.definition_expr(defs[n]) for n in T.PLACE_NAMES]
        return tuple(by_point(exprs, T._axes(op), {"sf_id": s}, defs))  # type: ignore[arg-type]
    monkeypatch.setattr(B, "_table_by_point", None)  # the catalog's are never walked
    for op, s in cases:
        defs = {d.name: d for d in op.program.definitions}
        assert T._placed(defs, op, s) == walk(defs, op, s)
    monkeypatch.undo()
    odd = [("lane   = row % 32", "lane   = (row - 70) / 3 % 32"),
           ("lane   = row % 32", "lane   = (0 - row) % 7"),
           ("byte   = sf_id + block", "byte   = (block << 70) + (sf_id >> 65) + (row >> 2)"),
           ("column = row / 32", "column = (row << 40) / (1 << 40) / 32"),
           ("column = row / 32", "column = 123456789012 * row / 123456789012 / 32")]
    for old, new in odd:
        sec = read_block_scale(_mutate(old, new), "t.md").tc_sections[0]
        op = sec.operands[0]
        defs = {d.name: d for d in op.program.definitions}
        for s in range(4):
            got = T._placed(defs, op, s)
            assert got == walk(defs, op, s), new
            assert len(got) == 256
    op = read_block_scale(_mutate(*odd[0]), "t.md").tc_sections[0].operands[0]
    lane = {p[0]: p[2] for p in T._placed({d.name: d for d in op.program.definitions}, op, 0)}
    assert (lane[0], lane[67], lane[70]) == (-23, -1, 0)  # C truncates: -70 / 3 is -23

def test_the_hash_written_from_arrays_is_the_hash_of_a_dict_a_row() -> None:
    """prove.tc_scale.tc_scale_hash writes its rows from the placement arrays; the reference
    is ``cell_table_hash`` of a dict a row: the same hash for every catalog operand (a pair's
    with its ``cta`` and ``half``), for the same layouts walked point by point (no array), and
    for a mutant whose lanes are negative and whose bytes lie 2**70 apart (rows written one by
    one)."""
    from dataclasses import replace

    from formal.base.hashes import cell_table_hash
    from formal.prove.tc_scale import tc_scale_hash

    def by_rows(lay: object) -> str:
        more = [(f, i) for f, i in (("cta", 5), ("half", 6))
                if lay.cta_group > 1 and lay.states(f)]  # type: ignore[attr-defined]
        names = ("sf_id", "row", "col", "lane", "column", "byte", *(f for f, _i in more))
        rows = [dict(zip(names, (s, *p[:5], *(p[i] for _f, i in more)), strict=True))
                for s in lay.sf_ids for p in lay.placed(s)]  # type: ignore[attr-defined]
        return cell_table_hash("tcgen05.block_scale", lay.shape, lay.id,  # type: ignore
                               "places", rows)
    lays = tc_scale_layouts(block_scale_catalog("tcgen05"))
    assert len(lays) == 82 and all(lay.table is not None for lay in lays)
    assert sum(lay.cta_group > 1 and lay.states("half") for lay in lays) > 0
    for lay in lays:
        want = by_rows(lay)
        assert tc_scale_hash(lay) == want, lay.id
        assert tc_scale_hash(replace(lay, table=None)) == want, lay.id
    assert len({tc_scale_hash(lay) for lay in lays}) == 82
    for old, new in (("lane   = row % 32", "lane   = (row - 70) / 3 % 32"),
                     ("byte   = sf_id + block", "byte   = (block << 70) + sf_id")):
        lay = tc_scale_layouts(read_block_scale(_mutate(old, new), "t.md"))[0]
        assert tc_scale_hash(lay) == by_rows(lay) != tc_scale_hash(lays[0]), new


def test_a_program_stated_again_is_evaluated_once_and_places_the_same() -> None:
    """model.tc_scale evaluates each program once a process over its matrix: the catalog's 82
    operands state 30 programs; each operand's table equals its own program evaluated afresh
    (the memo emptied), and an edited program is evaluated as its own."""
    import numpy as np

    import formal.model.tc_scale as T
    doc = block_scale_catalog("tcgen05")
    lays = tc_scale_layouts(doc)
    assert len({id(lay.table) for lay in lays}) == 30
    ops = [(sec, op) for sec in doc.tc_sections for op in sec.operands]
    assert len(ops) == len(lays)
    for (sec, op), lay in zip(ops, lays, strict=True):
        T._TABLES.clear()
        again = T.tc_scale_layout(sec, op)
        assert again.id == lay.id and again.table is not lay.table
        assert np.array_equal(again.table, lay.table), lay.id
    mutant = tc_scale_layouts(read_block_scale(_mutate("lane   = row % 32",
                                                       "lane   = (row + 1) % 32"), "t.md"))[0]
    plain = tc_scale_layouts(read_block_scale(_section(TITLE_2X), "t.md"))[0]
    assert not np.array_equal(mutant.table, plain.table)
    assert [p[2] for p in mutant.placed(0)][:2] == [1, 1] != [p[2] for p in plain.placed(0)][:2]


# ---- M = 64 and the pair of M = 256 (.cta_group::2): placements and their mutations ----------

TITLE_M64 = ("## Block scaling for tcgen05.mma .kind::mxf4 .scale_vec::2X .ue8m0 with M=64, "
             "N=256, K=64")
TITLE_PAIR = ("## Block scaling for tcgen05.mma .cta_group::2 .kind::mxf4 .scale_vec::2X .ue8m0 "
              "with M=256, N=256, K=64")
PAIR_A = "tcgen05.block_scale.m256n256k64.mxf4.scale_vec::2X.ue8m0.cta_group::2.scale_A"


def test_pair_places_each_half_of_a_in_its_cta() -> None:
    lay = next(x for x in tc_scale_layouts(block_scale_catalog("tcgen05")) if x.id == PAIR_A)
    assert lay.instruction == "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.scale_vec::2X"
    at = {(p[0], p[1]): (p[5], *p[2:5]) for p in lay.placed(2)}  # cta, lane, column, byte
    assert at[(0, 0)] == (0, 0, 0, 2) and at[(127, 1)] == (0, 31, 3, 3)
    assert at[(128, 0)] == (1, 0, 0, 2) and at[(160, 1)] == (1, 0, 1, 3)
    m64 = next(x for x in tc_scale_layouts(block_scale_catalog("tcgen05"))
               if x.id == "tcgen05.block_scale.m64n256k64.mxf4.scale_vec::2X.ue8m0.scale_A")
    assert {(p[0], p[1]): p[2:5] for p in m64.placed(0)}[(63, 1)] == (31, 1, 1)
    assert admitted_ids(lay) == (0, 2) and admitted_ids(m64) == (0, 2)


def test_pair_mutations_refuted_with_the_cell() -> None:
    # the CTA of a row off by a factor: rows 64-127 go to CTA 1, where Layout A keeps them in
    # CTA 0 (and rows 128.. to a third CTA)
    v, findings, _l = _prove(_mutate("cta    = row / 128", "cta    = row / 64", TITLE_PAIR))
    cov = v["scale-coverage"]
    assert cov.status == "refuted" and cov.counterexample["name"] == "cta"
    assert cov.counterexample["a"] == [64, 0]
    assert cov.counterexample["place"] == {"cta": 1, "lane": 0, "column": 2, "byte": 0}
    assert cov.counterexample["data_path"] == {"layout": "A", "cta": 0}
    assert _section(TITLE_PAIR).splitlines()[cov.span.line - 1].split() == \
        ["cta", "=", "row", "/", "128"]  # the refutation names the line of `cta`
    # the column of a pair's row not restarted in CTA 1: rows 128.. past the four columns
    v, _f, _l = _prove(_mutate("column = (row % 128) / 32", "column = row / 32", TITLE_PAIR))
    assert v["scale-coverage"].counterexample["a"] == [128, 0]
    assert v["scale-coverage"].counterexample["name"] == "column"
    # a pair's scale_A that states no CTA is incomplete, not a crash
    v, findings, _l = _prove(_mutate("  cta    = row / 128\n", "", TITLE_PAIR))
    assert {x.status for n, x in v.items() if n != "hardware"} == {"error"}
    assert any("cta" in f.message for f in findings if f.severity == "error")


TITLE_M128_PAIR = ("## Block scaling for tcgen05.mma .cta_group::2 .kind::mxf4 .scale_vec::2X "
                   ".ue8m0 with M=128, N=256, K=64")
TITLE_M128_SP = ("## Block scaling for tcgen05.mma.sp .cta_group::2 .kind::mxf4 .scale_vec::2X "
                 ".ue8m0 with M=128, N=256, K=128")
M128_PAIR = "tcgen05.block_scale.m128n256k64.mxf4.scale_vec::2X.ue8m0.cta_group::2"


def test_m128_pair_places_rows_by_cta_and_columns_by_half() -> None:
    lays = {x.id: x for x in tc_scale_layouts(block_scale_catalog("tcgen05"))}
    a, b = lays[M128_PAIR + ".scale_A"], lays[M128_PAIR + ".scale_B"]
    # scale_A: row r in CTA r / 64 (Layout B's half of D), lane r % 32, column (r % 64) / 32
    at = {(p[0], p[1]): (p[5], *p[2:5]) for p in a.placed(2)}  # cta, lane, column, byte
    assert at[(0, 0)] == (0, 0, 0, 2) and at[(63, 1)] == (0, 31, 1, 3)
    assert at[(64, 0)] == (1, 0, 0, 2) and at[(127, 1)] == (1, 31, 1, 3)
    # scale_B (CuTe's 2by2): column n in the half n / 128 of each CTA, column (n % 128) / 32
    bt = {(p[0], p[1]): (p[5], p[6], *p[2:5]) for p in b.placed(0)}  # cta, half, lane, ...
    assert bt[(0, 0)] == (0, 0, 0, 0, 0) and bt[(1, 127)] == (0, 0, 31, 3, 1)
    assert bt[(0, 128)] == (0, 1, 0, 0, 0) and bt[(1, 200)] == (0, 1, 8, 2, 1)
    assert admitted_ids(a) == (0, 2) and admitted_ids(b) == (0, 2)
    assert b.instruction == "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.scale_vec::2X"
    sp = lays["tcgen05.block_scale.m128n256k128.mxf4.scale_vec::2X.ue8m0.cta_group::2.sp"
              ".scale_B"]
    assert sp.instruction == "tcgen05.mma.sp.cta_group::2.kind::mxf4.block_scale.scale_vec::2X"
    assert {(p[0], p[1]): p[2:5] for p in sp.placed(0)}[(1, 200)] == (8, 6, 1)
    assert all(v.status in ("proved", "unconfirmed") for lay in (a, b, sp)
               for v in prove_tc_scale(lay)[0].verdicts)


def test_m128_pair_mutations_refuted_with_the_cell() -> None:
    t = TITLE_M128_PAIR
    # a row sent to the other CTA: rows 0-63 in CTA 1, where Layout B keeps them in CTA 0
    v, findings, _l = _prove(_mutate("cta    = row / 64", "cta    = 1 - row / 64", t))
    cov = v["scale-coverage"]
    assert cov.status == "refuted" and cov.counterexample == {
        "selector": 0, "a": [0, 0], "place": {"cta": 1, "lane": 0, "column": 0, "byte": 0},
        "name": "cta", "data_path": {"layout": "B", "cta": 0}}
    mutant = _mutate("cta    = row / 64", "cta    = 1 - row / 64", t)
    assert mutant.splitlines()[cov.span.line - 1].split() == ["cta", "=", "1", "-", "row", "/",
                                                              "64"]
    assert any(f.kind == "block-scale-scale-coverage" for f in findings)
    # the pair's CTA of M = 256 kept at M = 128: rows 0 and 64 on one byte of CTA 0
    v, _f, _l = _prove(_mutate("cta    = row / 64", "cta    = row / 128", t))
    assert v["scale-coverage"].counterexample["a"] == [64, 0]
    assert v["scale-coverage"].counterexample["data_path"] == {"layout": "B", "cta": 1}
    # scale_B split between the CTAs: column 128 only in CTA 1, but both CTAs compute it
    v, _f, _l = _prove(_mutate("half   = col / 128", "cta    = col / 128", t, "Scale B"),
                       "scale_B")
    assert v["scale-coverage"].status == "refuted"
    assert v["scale-coverage"].counterexample["name"] == "cta"
    assert "each holds all of scale_B" in v["scale-coverage"].message
    # the halves swapped: column 0 in lanes 64-127, where Layout B keeps column 0 of D in 0-63
    v, _f, _l = _prove(_mutate("half   = col / 128", "half   = 1 - col / 128", t, "Scale B"),
                       "scale_B")
    assert v["scale-coverage"].counterexample == {
        "selector": 0, "a": [0, 0], "place": {"half": 1, "lane": 0, "column": 0, "byte": 0},
        "name": "half", "data_path": {"layout": "B", "half": 0}}
    # no half (the 4x1 duplication into every partition) in CuTe's four columns: columns 0
    # and 128 of scale_B on one byte
    v, _f, _l = _prove(_mutate("  half   = col / 128\n", "", t, "Scale B"), "scale_B")
    assert v["scale-coverage"].counterexample["a"] == [0, 0]
    assert v["scale-coverage"].counterexample["b"] == [0, 128]
    # a half stated for the sparse form, whose Layout C keeps every column in all partitions
    v, _f, _l = _prove(_mutate("lane   = col % 32", "half   = col / 128\n  lane   = col % 32",
                               TITLE_M128_SP, "Scale B"), "scale_B")
    assert v["scale-coverage"].counterexample["data_path"] == {"layout": "C", "half": None}


def test_m64_mutations_refuted_with_the_cell() -> None:
    # a lane off by one: row 31 lands on lane 32, past the partition
    v, _f, _l = _prove(_mutate("lane   = row % 32", "lane   = row % 32 + 1", TITLE_M64))
    assert v["scale-coverage"].counterexample == {
        "selector": 0, "a": [31, 0], "place": {"lane": 32, "column": 0, "byte": 0},
        "name": "lane"}
    # a byte past the word: ID 2's second factor on byte 4
    v, _f, _l = _prove(_mutate("byte   = sf_id + block", "byte   = 2 * sf_id + block", TITLE_M64))
    assert v["scale-coverage"].counterexample == {
        "selector": 2, "a": [0, 0], "place": {"lane": 0, "column": 0, "byte": 4},
        "name": "byte"}
    # a shifted selector: the IDs {1, 3} are not half-word aligned
    v, _f, _l = _prove(_mutate("sf_id  = {0, 2}", "sf_id  = {1, 3}", TITLE_M64))
    assert v["selector-range"].status == "refuted"
    assert v["selector-range"].counterexample == {"stated": [1, 3], "admitted": [0, 2]}
    # M = 64 stated with M = 128's four columns: the IDs use two
    v, _f, _l = _prove(_mutate("in 2 columns", "in 4 columns", TITLE_M64))
    assert "use columns 0-1" in v["register-budget"].message


def test_show_names_the_pair(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.scale_vec::2X.scale_A"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.scale_vec::2X" in out
    assert "cta_group::1" not in out
    lines = out.splitlines()
    k = lines.index("sf_id = 0: 16 sub-columns")  # 2 CTAs x 4 columns x 2 bytes
    assert lines[k + 1].split()[:3] == ["lane", "cta0.c0.b0", "cta0.c0.b1"]
    assert lines[k + 1].split()[-1] == "cta1.c3.b1"


def test_prove_the_catalog_document(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from formal.cli import main
    rc = main(["prove", str(CATALOG), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert data["summary"]["layouts"] == 82
    lay = data["layouts"][2]
    assert (lay["instruction"], lay["operand"], lay["shape"], lay["tile"]) == \
        ("tcgen05.block_scale", "scale_A", "m128n256k64", [128, 2])
    kinds = sorted({f["kind"] for f in data["findings"]})
    assert kinds == ["block-scale-sub-column-fit", "hardware"]
    assert all(f["severity"] == "warning" for f in data["findings"])


# ---- ptxas: every legal form assembles for sm_100a, dense and .sp; Table 55's others do not --


def _assemble(ptx: str, tmp_path: Path, name: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / f"{name}.ptx"
    src.write_text(ptx, encoding="utf-8")
    return subprocess.run(["ptxas", "-arch=sm_100a", str(src), "-o", str(tmp_path / "x.cubin")],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize("sparse", [False, True])
def test_every_legal_form_assembles_for_sm_100a(tmp_path: Path, sparse: bool) -> None:
    from formal.execute.ptx_tcgen05 import tcgen05_scale_module
    forms = sorted({(f[0], f[1]) for f in TCGEN05_SCALE_FORMS})
    ptx = tcgen05_scale_module(forms, sparse)
    # each of the 7 forms by one CTA and by a pair (M = 256, and a pair's M = 128: M is the
    # instruction descriptor's, a register, so M = 64 and 128 are the same text)
    assert [ptx.count(f".cta_group::{g}.kind::") for g in (1, 2)] == [7, 7]
    assert ptx.count(".block_scale.") == 14 and ptx.count("tcgen05.mma.sp.") == \
        (14 if sparse else 0)
    assert ptx.count(".explicitcluster .reqnctapercluster 2, 1, 1") == 7
    got = _assemble(ptx, tmp_path, "legal")
    assert got.returncode == 0, got.stderr


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
def test_forms_the_table_leaves_out_are_refused(tmp_path: Path) -> None:
    from formal.execute.ptx_tcgen05 import tcgen05_scale_module
    legal = {(f[0], f[1]) for f in TCGEN05_SCALE_FORMS}
    every = {(k, f) for k in ("mxf8f6f4", "mxf4", "mxf4nvf4")
             for f in ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32")}
    # block32 is mxf8f6f4's name for 1X (Table 55) though the catalog states it at K = 96 only
    for form in sorted(every - legal - {("mxf8f6f4", "block32")}):
        got = _assemble(tcgen05_scale_module([form], groups=(1,)), tmp_path, "illegal")
        assert got.returncode != 0 and "cannot be combined" in got.stderr, form


# ---- ptxlayout show: the sub-columns each ID selects, as the spec's figures draw them --------


def test_show_one_operand_draws_every_id(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X.scale_A"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "scale_A (128 x 2) in 4 tensor-memory columns, scale factor A ID in {0, 2}" in out
    assert "sf_id = 2: 8 sub-columns" in out
    lines = out.splitlines()
    k = lines.index("sf_id = 2: 8 sub-columns")
    assert lines[k + 1].split() == ["lane", "c0.b2", "c0.b3", "c1.b2", "c1.b3", "c2.b2",
                                    "c2.b3", "c3.b2", "c3.b3"]
    assert lines[k + 3].split()[:4] == ["1", "r1k0", "r1k1", "r33k0"]
    assert "hardware: unconfirmed" in out and "scale_B" not in out


def test_show_k96_carries_its_warning(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32.scale_B"])
    out = capsys.readouterr().out
    assert rc == 0  # a warning, not an error
    assert "(.ue8m0, K = 64)" in out and "(.ue8m0, K = 96)" in out
    assert "warning: sub-column-fit: sf_id 2: column 0's 3 one-byte factors" in out


def test_show_an_illegal_form_names_the_legal_ones(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::4X"])
    captured = capsys.readouterr()
    assert rc == 1
    assert ("no legal block-scaled tcgen05.mma matches .kind::mxf4 .scale_vec::4X: .kind::mxf4 "
            "takes .block32 or .scale_vec::2X") in captured.err
    assert "kind::mxf4.block_scale.scale_vec::2X" in captured.out


# ---- the real section (../notes mirror, read at test time) in Markdown, HTML and text --------

REAL = Path("/work/notes/bw-sections/9-7-16-10-7-block-scaling.md")


def _render(kind: str) -> str:
    from tests.renderings import browser, sphinx
    md = REAL.read_text(encoding="utf-8")
    return md if kind == "md" else (sphinx(md) if kind == "html" else browser(md)).text


@pytest.mark.skipif(not REAL.is_file(), reason="the spec's block-scaling section is not here")
@pytest.mark.parametrize("kind", ["md", "html", "txt"])
def test_the_real_section_read_in_every_rendering(tmp_path: Path, kind: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from formal.cli import main
    doc = tmp_path / f"block-scaling.{kind}"
    doc.write_text(_render(kind), encoding="utf-8")
    rc = main(["prove", str(doc), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1  # the B figures' captions name SFA_ID: one error
    (entry,) = data["layouts"]
    got = {o["name"]: o["status"] for o in entry["obligations"]}
    assert got == {"selector-names": "refuted", "sub-column-fit": "refuted",
                   "selector-range": "proved", "hardware": "unconfirmed"}
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert [(f["kind"], f["counterexample"]["figures"][:2]) for f in errors] == [
        ("block-scale-caption", [243, 244])]
    assert len(errors[0]["counterexample"]["figures"]) == 16
    # a caption that draws an ID the layout does not admit: an error at that caption
    text = _render(kind)
    for old in ("SFA\\_ID=10", "SFA_ID=10"):  # escaped or not, as the rendering keeps it
        text = text.replace(f"block16 with K=96 with {old}",
                            f"block16 with K=96 with {old[:-2]}01", 1)
    doc.write_text(text, encoding="utf-8")
    main(["prove", str(doc), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    bad = [f for f in data["findings"] if f["severity"] == "error"
           and "drawn" in (f["counterexample"] or {})]
    assert len(bad) == 1 and bad[0]["counterexample"] == {
        "drawn": [0, 1], "admitted": [0, 2], "figures": [238, 239]}
    line = text.splitlines()[bad[0]["line"] - 1] if kind != "html" else ""
    assert kind == "html" or "SFA_ID=01" in line.replace("\\_", "_")


def test_every_id_at_once_is_each_ids_core() -> None:
    """placement_cores checks every ID's placements in one pass and asks tc_placement_core
    only where that finds a fault: for every catalog tcgen05 scale layout and planted faults
    (a factor moved outside the lanes, a factor moved onto another's byte, scale_A's factor
    moved to the other CTA of a pair), the cores are those of tc_placement_core at each ID."""
    from dataclasses import replace

    import numpy as np

    from formal.api import block_scale_catalog
    from formal.model.tc_scale import SF_ID_VALUES, tc_scale_layouts
    from formal.prove.repeats import placed_array
    from formal.prove.tc_scale import placement_cores, tc_placement_core

    def each(lay):  # type: ignore[no-untyped-def]
        return {s: tc_placement_core(lay, s) for s in range(SF_ID_VALUES)
                if s in lay.sf_ids or s % max(lay.aligned, 1) == 0}

    lays = tc_scale_layouts(block_scale_catalog("tcgen05"))
    refuted = 0
    for n, lay in enumerate(lays):
        assert placement_cores(lay) == each(lay)
        if n % 7:
            continue
        s = lay.sf_ids[0]
        p = placed_array(lay, s)
        plants = [p.copy() for _ in range(3)]
        plants[0][len(p) // 2, 2] = lay.lanes  # outside the lanes
        plants[1][-1, 2:5] = p[0, 2:5]  # onto factor 0's byte
        plants[1][-1, 5:7] = p[0, 5:7]
        plants[2][0, 5] = 1 - p[0, 5] if lay.cta_group > 1 else p[0, 5]
        for planted in plants:
            table = list(lay.table) if lay.table is not None else None
            every = [(v, tuple(map(tuple, planted.tolist())) if v == s else ps)
                     for v, ps in lay.every]
            if table is not None:
                table[s] = np.asarray(planted)
            mutant = replace(lay, every=tuple(every),
                             table=None if table is None else tuple(table))
            got = placement_cores(mutant)
            assert got == each(mutant), mutant.id
            refuted += got[s].status == "refuted"
    assert refuted >= 2 * len(range(0, len(lays), 7))
