"""Issue 'm8n8k4 on the executor': four products a warp (one per quad-pair), the .row / .col
qualifiers of A and B, and m8n8k4 .f64 -- the variant table, the export, the block-diagonal
packing checked against a product computed straight from the spec's formulas, corrupted maps,
discovery, PTX text and ptxas.  No GPU needed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from formal.base.hashes import cell_table_hash
from formal.base.variants import (
    ANY_LAYOUTS,
    VARIANTS,
    layout_serves,
    record_arrangement,
    records_by_operand,
)
from formal.execute import compare, cpu, devices, discover, numbers, ptx, record, supervisor

HAS_PTXAS = ptx.ptxas_path() is not None
M8N8K4 = [v for v in VARIANTS if v.shape == "m8n8k4"]
F16 = [v for v in M8N8K4 if v.a == "f16"]


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    from formal.api import model_of
    from formal.base.records import expand
    from formal.writers.export import to_json

    return expand(json.loads(to_json(model_of([], corrections=True).layouts))["layouts"])


def variant(key: str) -> Any:
    return next(v for v in VARIANTS if v.key == key)


# ---- the spec's formulas, written out by hand (independent of the catalog and the export) ----

Cell = Callable[[int, int], tuple[int, int]]


def _hi(lane: int) -> int:
    return 4 if lane >= 16 else 0


SPEC: dict[tuple[str, str], Cell] = {
    ("A", "row"): lambda t, i: (t % 4 + _hi(t), i),
    ("A", "col"): lambda t, i: (i % 4 + _hi(t), t % 4),
    ("B", "row"): lambda t, i: (t % 4, i + _hi(t)),
    ("B", "col"): lambda t, i: (i, t % 4 + _hi(t)),
    ("C", "f16"): lambda t, i: (t % 4 + _hi(t), i),
    ("C", "f32"): lambda t, i: ((t & 1) + (i & 2) + _hi(t), (i & 4) + (t & 2) + (i & 1)),
}


def quad_pair(q: int) -> list[int]:
    return [4 * q + j for j in range(4)] + [16 + 4 * q + j for j in range(4)]


def _elements(words: np.ndarray, bits: int, n: int) -> np.ndarray:
    return cpu.unpack_elements(words, bits, n)


# ---- the table ----------------------------------------------------------------------------------


def test_the_table_has_every_layout_combination_for_f16_and_only_row_col_for_f64() -> None:
    assert len(F16) == 8
    assert {(v.c, v.layouts) for v in F16} == {(c, lay) for c in ("f16", "f32")
                                               for lay in ANY_LAYOUTS}
    assert len({v.key for v in VARIANTS}) == len(VARIANTS)
    assert variant("mma.m8n8k4.col.row.f32.f16.f16.f32").arrangement("A") == "col"
    assert variant("mma.m8n8k4.col.row.f32.f16.f16.f32").arrangement("B") == "row"
    f64 = variant("mma.m8n8k4.f64.f64.f64.f64")
    assert f64.layouts == ("row", "col") and f64.replication == 1
    for v in F16:
        assert v.replication == 4
        assert (v.words("A"), v.words("B")) == (2, 2)
        assert v.words("C") == (4 if v.c == "f16" else 8)
    # every other row keeps its key and its .row.col
    assert variant("mma.m16n8k16.f32.f16.f16.f32").layouts == ("row", "col")


def test_layouts_serve_the_variants_of_their_qualifier(records: list[dict[str, Any]]) -> None:
    for v in F16:
        recs = records_by_operand(v, records)
        assert recs["A"]["id"].endswith("." + v.layouts[0])
        assert recs["B"]["id"].endswith("." + v.layouts[1])
        assert recs["C/D"]["id"].startswith(f"catalog:mma.m8n8k4.CD.{v.c}")
    row_col = variant("mma.m8n8k4.row.col.f16.f16.f16.f16")
    assert layout_serves(row_col, "A", "mma", "m8n8k4", ["f16"], arrangement="row")
    assert not layout_serves(row_col, "A", "mma", "m8n8k4", ["f16"], arrangement="col")
    assert not layout_serves(row_col, "B", "mma", "m8n8k4", ["f16"], arrangement="row")
    # records written before the field existed: the id's last part says it
    assert record_arrangement({"id": "x:mma.m8n8k4.A.f16.col"}) == "col"
    assert record_arrangement({"id": "x:mma.m16n8k16.A.f16"}) == ""
    assert record_arrangement({"id": "x:mma.m8n8k4.A.f16.col", "arrangement": ""}) == ""


def test_the_export_carries_groups_and_arrangements(records: list[dict[str, Any]]) -> None:
    rep = [r for r in records if r["shape"] == "m8n8k4" and "f64" not in r["types"]]
    assert len(rep) == 6
    for r in rep:
        assert r["groups"] == {"name": "quad-pair", "count": 4}
        assert all(c["group"] == (c["lane"] >> 2) % 4 for c in r["cells"])
        assert r.get("arrangement", "") == ("" if r["operand"] == "C/D" else r["id"][-3:])
    f64 = [r for r in records if r["shape"] == "m8n8k4" and "f64" in r["types"]]
    assert len(f64) == 3
    assert all("groups" not in r and "group" not in r["cells"][0] for r in f64)
    other = next(r for r in records if r["id"] == "catalog:mma.m16n8k16.A.f16-bf16")
    assert "arrangement" not in other and "groups" not in other


# ---- packing and the product ------------------------------------------------------------------


def test_the_plan_is_block_diagonal(records: list[dict[str, Any]]) -> None:
    p = cpu.plan(variant("mma.m8n8k4.row.col.f32.f16.f16.f32"), records)
    assert p.groups == 4 and p.dims == (32, 32, 16)
    assert (p.a.tile, p.b.tile, p.cd.tile) == ((32, 16), (16, 32), (32, 32))
    assert (p.a.block, p.b.block, p.cd.block) == ((8, 4), (4, 8), (8, 8))
    for m in (p.a, p.b, p.cd):
        g = np.arange(32)[:, None] >> 2 & 3
        assert (m.row // m.block[0] == g).all() and (m.col // m.block[1] == g).all()
        mask = cpu.block_mask(m)
        assert mask is not None and mask.sum() == 32 * m.n  # the diagonal is all held
    assert p.cd.cell_name("D", 17, 18) == "D[1][2] of product 2"
    assert cpu.block_mask(cpu.plan(variant("mma.m8n8k4.f64.f64.f64.f64"), records).a) is None


@pytest.mark.parametrize("key", [v.key for v in F16])
def test_emulation_is_four_products_of_the_spec_formulas(records: list[dict[str, Any]],
                                                         key: str) -> None:
    """Trials packed through the block-diagonal view, read back with the spec's formulas
    written out by hand, lane by lane: each quad-pair's D is its own A x B + C."""
    v = variant(key)
    p = cpu.plan(v, records)
    trial = cpu.make_trials(p, np.random.default_rng(3), 4)
    wa, wb, wc = v.words("A"), v.words("B"), v.words("C")
    x = trial.inputs
    a_el = numbers.decode("f16", _elements(x[..., :wa], 16, 4))
    b_el = numbers.decode("f16", _elements(x[..., wa:wa + wb], 16, 4))
    cbits = 16 if v.c == "f16" else 32
    c_el = numbers.decode(v.c, _elements(x[..., wa + wb:wa + wb + wc], cbits, 8))
    d_el = numbers.decode(v.d, _elements(trial.expected, cbits, 8))
    fa, fb, fc = SPEC[("A", v.layouts[0])], SPEC[("B", v.layouts[1])], SPEC[("C", v.c)]
    for t in range(4):
        for q in range(4):
            a, b, c = np.zeros((8, 4)), np.zeros((4, 8)), np.zeros((8, 8))
            for lane in quad_pair(q):
                for i in range(4):
                    a[fa(lane, i)] = a_el[t, lane, i]
                    b[fb(lane, i)] = b_el[t, lane, i]
                for i in range(8):
                    c[fc(lane, i)] = c_el[t, lane, i]
            d = a @ b + c
            assert (a != 0).sum() > 8  # random data, not a zero product
            for lane in quad_pair(q):
                for i in range(8):
                    assert d_el[t, lane, i] == d[fc(lane, i)], (key, t, q, lane, i)
    # and the emulated device agrees
    assert not compare.compare(p, cpu.emulate(p, trial.inputs), trial.expected)


def test_f64_m8n8k4_runs_one_product(records: list[dict[str, Any]]) -> None:
    v = variant("mma.m8n8k4.f64.f64.f64.f64")
    p = cpu.plan(v, records)
    assert p.dims == (8, 8, 4) and p.groups == 1
    trial = cpu.make_trials(p, np.random.default_rng(4), 3)
    a = numbers.decode("f64", trial.a)
    # lane t holds A[t >> 2][t % 4] in its one .f64 (two words, low first)
    words = trial.inputs[:, :, :2].astype(np.uint64)
    got = numbers.decode("f64", words[..., 0] | (words[..., 1] << np.uint64(32)))
    assert np.array_equal(got, a[:, np.arange(32) >> 2, np.arange(32) % 4])
    assert not compare.compare(p, cpu.emulate(p, trial.inputs), trial.expected)


def _swap(records: list[dict[str, Any]], layout_id: str, a: int, b: int) \
        -> list[dict[str, Any]]:
    out = json.loads(json.dumps(records))
    rec = next(r for r in out if r["id"] == layout_id)
    ca, cb = rec["cells"][a], rec["cells"][b]
    for k in ("row", "col", "group"):
        ca[k], cb[k] = cb[k], ca[k]
    rec["map_hash"] = cell_table_hash(rec["instruction"], rec["shape"], rec["operand"], "cells",
                                    rec["cells"])
    return out


@pytest.mark.parametrize("layout_id,a,b", [
    ("catalog:mma.m8n8k4.A.f16.col", 1, 2),  # within one lane: a transposed pair
    ("catalog:mma.m8n8k4.CD.f32@f16", 0, 40),  # lane 0 c0 and lane 5 c0: two products
])
def test_a_corrupted_map_is_caught_and_named_by_product(records: list[dict[str, Any]],
                                                        layout_id: str, a: int, b: int) -> None:
    key = "mma.m8n8k4.col.row.f32.f16.f16.f32"
    bad = _swap(records, layout_id, a, b)
    report = supervisor.run_all(devices.FakeDevice(records), bad, trials=4, only=key,
                                use_ptxas=False)
    (run,) = report.runs
    assert run.result == "mismatch" and "of product" in run.detail
    assert run.d_cells and all(len(c) == 3 and 0 <= c[2] < 4 for c in run.d_cells)
    rec = next(r for r in bad if r["id"] == layout_id)
    if rec["operand"] == "C/D":  # the swapped cells are among those that differ
        for c in (rec["cells"][a], rec["cells"][b]):
            assert [c["row"], c["col"], c["group"]] in run.d_cells


def test_discovery_recovers_m8n8k4_and_sees_a_wrong_map(records: list[dict[str, Any]]) -> None:
    for v in M8N8K4:
        p = cpu.plan(v, records)
        d = discover.discover_dense(p, lambda s, x, p=p: cpu.emulate(p, x, s))
        assert d.agrees, (v.key, d.anomalies, d.differences)
        assert d.hashes == {"A": p.a.map_hash, "B": p.b.map_hash, "C/D": p.cd.map_hash}
        assert all("group" in c for c in d.maps["A"]) == (v.a == "f16")
    key = "mma.m8n8k4.row.row.f16.f16.f16.f16"
    truth = cpu.plan(variant(key), records)
    wrong = cpu.plan(variant(key), _swap(records, "catalog:mma.m8n8k4.B.f16.row", 0, 5))
    d = discover.discover_dense(wrong, lambda s, x: cpu.emulate(truth, x, s))
    assert not d.agrees and d.differences["B"] and not d.differences["A"]
    assert d.hashes["B"] == truth.b.map_hash  # named in the given labels, it is the truth


def test_discovery_runs_for_m8n8k4_in_the_harness(records: list[dict[str, Any]]) -> None:
    report = supervisor.run_all(devices.FakeDevice(records), records, trials=2, only="m8n8k4",
                                do_discover=True, use_ptxas=False)
    disc = [r for r in report.runs if r.mode == "discover"]
    assert len(disc) == 9 and {r.result for r in disc} == {"match"}
    assert {r.result for r in report.runs if r.mode == "check"} == {"match"}
    assert "mma m8n8k4" in record.table(report)


def test_missing_layouts_and_product_counts_are_named(records: list[dict[str, Any]]) -> None:
    v = variant("mma.m8n8k4.row.col.f16.f16.f16.f16")
    no_cd = [r for r in records if r["id"] != "catalog:mma.m8n8k4.CD.f16@f16"]
    with pytest.raises(cpu.LayoutError, match="no layout for C/D"):
        cpu.plan(v, no_cd)
    flat = json.loads(json.dumps(records))
    for r in flat:
        if r["id"] == "catalog:mma.m8n8k4.A.f16.row":
            for c in r["cells"]:
                del c["group"]
            r.pop("groups")
    with pytest.raises(cpu.LayoutError, match="1 product"):
        cpu.plan(v, flat)


# ---- PTX --------------------------------------------------------------------------------------


def test_m8n8k4_ptx_golden_substrings() -> None:
    f32 = ptx.module(variant("mma.m8n8k4.col.row.f32.f16.f16.f32")).text
    assert "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32" in f32
    assert ("{%dd0, %dd1, %dd2, %dd3, %dd4, %dd5, %dd6, %dd7}, {%w0, %w1}, {%w2, %w3}, "
            "{%cc0, %cc1, %cc2, %cc3, %cc4, %cc5, %cc6, %cc7};") in f32
    assert ".version 6.4" in f32 and ".target sm_70" in f32
    f16 = ptx.module(variant("mma.m8n8k4.row.row.f16.f16.f16.f16")).text
    assert "mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16" in f16
    assert "{%o0, %o1, %o2, %o3}, {%w0, %w1}, {%w2, %w3}, {%w4, %w5, %w6, %w7};" in f16
    f64 = ptx.module(variant("mma.m8n8k4.f64.f64.f64.f64")).text
    assert "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64" in f64
    assert "{%dd0, %dd1}, {%fa0}, {%fb0}, {%cc0, %cc1};" in f64
    texts = {ptx.module(v).text for v in M8N8K4}
    assert len(texts) == len(M8N8K4)  # one kernel (and one CuPy path) each


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_m8n8k4_rows_assemble_and_f64_refuses_other_layouts() -> None:
    results = ptx.check(M8N8K4, ["sm_90"])
    assert {r.status for r in results} == {"ok"}, [r.detail for r in results]
    text = ptx.module(variant("mma.m8n8k4.f64.f64.f64.f64")).text
    ok, msg = ptx.assemble(text.replace(".row.col.f64", ".col.row.f64"), "sm_90")
    assert not ok and "layout" in msg  # why the .f64 row has no layout choice
