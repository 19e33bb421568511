"""The sparsity metadata of tcgen05.mma.sp in tensor memory: the catalog's .kind::f16 M = 128
layout proved for each selector value, its placement and selector facts mutated and refuted
with the cells they are about, and its placement checked against CuTe's metadata fragment
(where the installed CUTLASS wheel ships it).  The other kinds' and the .ws forms' own
mutations are in test_tc_meta_kinds.py; the mutations here work on the f16 section alone."""

from __future__ import annotations

import itertools
from pathlib import Path

from formal.api import TC_META_CATALOG, with_tc_meta
from formal.model.tc_meta import meta_layouts
from formal.parse.tc_meta import read_tc_meta
from formal.prove.tc_meta import META_OBLIGATIONS, admitted_meta_selectors, prove_meta
from formal.prove.verdicts import Proof

CATALOG = (Path(__file__).resolve().parents[1] / "formal" / "catalog" / "sparse-metadata"
           / "tcgen05.md")
CATALOG_TEXT = CATALOG.read_text(encoding="utf-8")
F16_TITLE = "## Sparse metadata for tcgen05.mma.sp .kind::f16 with M=128, K=32"


def section(title: str) -> str:
    """One section of the catalog, its heading to the next, as a document of its own."""
    head = CATALOG_TEXT.index(title + "\n")
    end = CATALOG_TEXT.find("\n## ", head + 1)
    return CATALOG_TEXT[head:] if end < 0 else CATALOG_TEXT[head:end + 1]


TEXT = section(F16_TITLE)
LANE = "lane   = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)"
BIT = "bit    = 4 * (chunk % 4) + 16 * ((row / 8) % 2)"


def _prove(text: str) -> tuple[list, list]:
    secs, found = read_tc_meta(text, "mutant.md")
    assert not found and len(secs) == 1
    results, findings = prove_meta(meta_layouts(secs)[0])
    return results, [f for f in findings if f.severity == "error"]


def _mutate(old: str, new: str) -> str:
    assert TEXT.count(old) == 1
    return TEXT.replace(old, new)


def test_catalog_reads_the_f16_m128_form() -> None:
    secs, found = read_tc_meta(CATALOG_TEXT, TC_META_CATALOG)
    assert not found
    assert [(s.kind, s.m, s.k, s.rows, s.chunks, s.width, s.columns, s.lanes) for s in secs][0] \
        == ("f16", 128, 32, 128, 8, 4, 2, 128)
    secs, _ = read_tc_meta(TEXT, TC_META_CATALOG)
    lay = meta_layouts(secs)[0]
    assert lay.id == "tcgen05.sp_meta.m128.f16" and lay.sels == (0, 1)
    placed = {(p[0], p[1]): p[2:5] for p in lay.placed(1)}
    # row 0's chunk 5 (K 20-23): eight lanes down, bits 4-7 of column 1; row 8 the high half
    assert placed[(0, 0)] == (0, 1, 0) and placed[(0, 5)] == (8, 1, 4)
    assert placed[(8, 0)] == (0, 1, 16) and placed[(127, 7)] == (127, 1, 28)


def test_catalog_proved_per_selector_in_the_default_run() -> None:
    proof = with_tc_meta(Proof((), ()), evidence=True)
    assert [r.id for r in proof.scales][:2] == ["tcgen05.sp_meta.m128.f16.sel0",
                                                "tcgen05.sp_meta.m128.f16.sel1"]
    for r in proof.scales:
        assert {v.name: v.status for v in r.verdicts} == {
            **{n: "proved" for n in META_OBLIGATIONS[:-1]}, "hardware": "unconfirmed"}
        assert "sm_100a" in r.verdict("hardware").message
    assert not [f for f in proof.findings if f.severity == "error"]
    quiet = with_tc_meta(Proof((), ()))
    assert {r.verdict("hardware").status for r in quiet.scales} == {"not-applicable"}


def test_admitted_selectors_are_the_two_columns() -> None:
    secs, _ = read_tc_meta(TEXT, "x")
    assert admitted_meta_selectors(meta_layouts(secs)[0]) == (0, 1)


def test_a_lane_off_by_one_is_refuted_with_the_cell() -> None:
    results, errors = _prove(_mutate(LANE, LANE + " + 1"))
    v = results[0].verdict("metadata-coverage")
    assert v.status == "refuted"
    # row 119's chunk 4 (7 + 8 + 112 + 1) goes to lane 128, past the 128 lanes
    assert v.counterexample == {"selector": 0, "a": [119, 4],
                                "place": {"lane": 128, "column": 0, "bit": 0},
                                "name": "lane"}
    assert results[0].verdict("lane-partition").status == "refuted"
    assert {f.kind for f in errors} == {"metadata-coverage", "selector-range", "lane-partition"}
    assert errors[0].span.line == TEXT.split("\n").index("  " + LANE) + 1


def test_a_bit_shifted_past_the_word_is_refuted() -> None:
    results, errors = _prove(_mutate(BIT, BIT.replace("16 *", "20 *")))
    v = results[0].verdict("metadata-coverage")
    assert v.status == "refuted"
    assert v.counterexample == {"selector": 0, "a": [8, 3],
                                "place": {"lane": 0, "column": 0, "bit": 32}, "name": "bit"}
    assert "bits 32-35, past the 32-bit word" in v.message


def test_two_fields_on_the_same_bits_are_refuted() -> None:
    results, _ = _prove(_mutate(BIT, "bit    = 4 * (chunk % 4)"))
    v = results[1].verdict("metadata-coverage")
    assert v.status == "refuted"
    assert v.counterexample == {"selector": 1, "a": [0, 0], "b": [8, 0],
                                "place": {"lane": 0, "column": 1, "bit": 0}, "name": "bit"}


def test_a_selector_range_past_the_columns_is_refuted() -> None:
    results, errors = _prove(_mutate("sel    = {0, 1}", "sel    = {0, 1, 2}"))
    assert [r.id[-4:] for r in results] == ["sel0", "sel1", "sel2"]
    assert results[0].verdict("selector-range").counterexample == {"stated": [0, 1, 2],
                                                                   "admitted": [0, 1]}
    assert results[2].verdict("metadata-coverage").counterexample["place"]["column"] == 2
    assert [f.kind for f in errors].count("selector-range") == 1


def test_a_field_width_unlike_the_granularity_is_refuted() -> None:
    results, _ = _prove(_mutate("8 fields of 4 bits", "8 fields of 2 bits"))
    v = results[0].verdict("register-budget")
    assert v.status == "refuted" and "a chunk has 2 indices of 2 bits" in v.message


def test_an_incomplete_program_is_not_checked() -> None:
    results, errors = _prove(_mutate(BIT + "\n", ""))
    assert {v.status for v in results[0].verdicts[:-1]} == {"error"}
    assert "defines no bit" in errors[0].message


def test_the_placement_is_cutes_f16_metadata_fragment() -> None:
    """CuTe's tmem_e_frg for 16-bit A at M = 128 (mma_traits_sm100.hpp) is the layout
    ((8,2,8),(16,2)):((1,2048,16),(128,8)) from (row, k) to a one-bit element of virtual
    tensor memory (lane + 128 * element); each field's four bits are its chunk's K."""
    secs, _ = read_tc_meta(TEXT, "x")
    lay = meta_layouts(secs)[0]
    cute = {}
    for m0, m1, m2, k0, k1 in itertools.product(range(8), range(2), range(8), range(16),
                                                range(2)):
        v = m0 + 2048 * m1 + 16 * m2 + 128 * k0 + 8 * k1
        cute[(m0 + 8 * m1 + 16 * m2, k0 + 16 * k1)] = (v % 128, (v // 128) // 32,
                                                       (v // 128) % 32)
    for row, chunk, lane, col, bit, *_ in lay.placed(0):
        for j in range(4):
            assert cute[(row, 4 * chunk + j)] == (lane, col, bit + j)


def test_the_hash_written_from_arrays_is_the_hash_of_a_dict_a_row() -> None:
    """prove.tc_meta.meta_hash writes its rows from the placement arrays; the reference is
    ``cell_table_hash`` of a dict a row: the same hash for every catalog section, for the
    same layouts walked point by point (no array), and for a mutant whose lanes are negative
    (the hash moves with the map)."""
    from dataclasses import replace

    from formal.base.hashes import cell_table_hash
    from formal.prove.tc_meta import meta_hash

    def by_rows(lay: object) -> str:
        names = ("sel", "row", "chunk", "lane", "column", "bit", "copy")
        rows = [dict(zip(names, (s, *f), strict=True))
                for s in lay.sels for f in lay.placed(s)]  # type: ignore[attr-defined]
        return cell_table_hash("tcgen05.sp_meta", f"m{lay.m}", lay.id,  # type: ignore
                               "fields", rows)
    lays = meta_layouts(read_tc_meta(CATALOG_TEXT, "t.md")[0])
    assert len(lays) >= 10 and all(lay.table is not None for lay in lays)
    for lay in lays:
        want = by_rows(lay)
        assert meta_hash(lay) == want == meta_hash(replace(lay, table=None)), lay.id
    assert len({meta_hash(lay) for lay in lays}) == len(lays)
    secs, _found = read_tc_meta(_mutate(LANE, "lane   = row % 8 - 8 * (chunk / 4)"), "m.md")
    odd = meta_layouts(secs)[0]
    assert min(f[2] for f in odd.placed(odd.sels[0])) < 0
    assert meta_hash(odd) == by_rows(odd) != meta_hash(meta_layouts(read_tc_meta(TEXT, "t")[0])[0])
