"""The block-scaled rows of the ``tcgen05-mma`` family (``base.matrix_variants.
TCGEN05_MMA_SCALE_VARIANTS``): each a check on a fake sm_100 device -- A and B by a catalog
shared-memory layout (4-bit e2m1 packed two a byte), scale_A and scale_B by the catalog's
scale layouts at the row's IDs, D the exact scaled product -- and the planted edits that must
mismatch, with their cells; on sm_90 each row is assembled for sm_100a, not run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import (
    TCGEN05_MMA_SCALE_VARIANTS,
    TCGEN05_SCALE_IDS,
    variant,
)
from formal.execute.idesc import decode_idesc
from formal.execute.runs import Job, Task
from formal.execute.tcgen05_mma import (
    FakeTcgen05Device,
    run_tc_task,
    scale_row_tasks,
    tc_mma_tasks,
)
from formal.execute.tcgen05_scale import (
    pack_nibbles,
    row_scales,
    scale_view,
    unpack_nibbles,
)

ROW_1X = ("tcgen05.mma.m128n64k32.kind::mxf8f6f4.block_scale.scale_vec::1X.ue8m0.f32.e4m3.e4m3."
          "layoutD.sf3_1")
ROW_4X = ("tcgen05.mma.m128n64k64.kind::mxf4nvf4.block_scale.scale_vec::4X.ue4m3.f32.e2m1.e2m1."
          "layoutD.sf0_0")


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


def test_the_rows(records: list[dict[str, Any]]) -> None:
    rows = TCGEN05_MMA_SCALE_VARIANTS
    # D: 16 (e4m3, every pair) + 4 (e5m2 x e4m3, diagonal) + 4 + 4 (2X, every pair) + 1 + 1
    # (4X); F: 4 (1X diagonal) + 2 (mxf4 2X diagonal) + 1 (4X ue4m3); a pair's A and B: 4 + 4
    # (e4m3 1X diagonal)
    assert len(rows) == 45 and len({v.key for v in rows}) == 45
    assert all(variant(v.key) is v for v in rows)
    assert variant(ROW_1X).scale_ids == (3, 1) and variant(ROW_1X).target == "sm_100a"
    assert {v.datapath for v in rows} == {"A", "B", "D", "F"}
    # the IDs the table admits are the records' legal IDs, for scale_A and for scale_B
    for v in rows:
        pair = row_scales(records, v)
        assert pair is not None, v.key
        for view, sid in zip(map(scale_view, pair), v.scale_ids, strict=True):
            assert view.sf_ids == TCGEN05_SCALE_IDS[v.scale_vec] and sid in view.sf_ids
            assert view.m == v.dims.m
    assert {(v.scale_ids) for v in rows if v.datapath == "D" and v.a == "e4m3"} == \
        {(i, j) for i in range(4) for j in range(4)}


def test_the_tasks_and_their_plants() -> None:
    tasks = scale_row_tasks(TCGEN05_MMA_SCALE_VARIANTS)
    checks = [t for t in tasks if t.mode == "check"]
    plants = [t for t in tasks if t.mode == "experiment"]
    assert len(checks) == 45
    # 10 forms (data path, kind, .scale_vec, scale type) x factors-swapped, factor-moved and
    # b-factors-swapped, scale-id-wrong where another ID is legal (1X and 2X: 7 forms), and a
    # pair's factor-other-cta (Layouts A and B)
    assert len(plants) == 10 * 3 + 7 + 2
    assert sorted(t.key.split(".")[-2] for t in plants if t.plant == "factor-other-cta") == \
        ["layoutA", "layoutB"]
    assert not [t for t in plants if t.plant == "scale-id-wrong" and "4X" in t.key]
    # the 4-bit rows' images by the 8-bit layouts (32 bytes of K a row); every mode met
    assert {t.catalog.split(".")[3] for t in checks if "e2m1" in t.key} == \
        {"none", "32B", "64B", "128B"}
    assert all(t.catalog.endswith(".b8") for t in checks)


def test_4_bit_elements_two_a_byte() -> None:
    # element k at bit 4k of its byte: codes 1, 2, 3, 4 are the bytes 0x21, 0x43
    assert pack_nibbles(np.array([[1, 2, 3, 4]])).tolist() == [[0x21, 0x43]]
    c = np.random.default_rng(0).integers(0, 16, size=(3, 64))
    assert np.array_equal(unpack_nibbles(pack_nibbles(c)), c)


def test_every_row_matches_and_every_plant_mismatches_on_a_truthful_fake(
        records: list[dict[str, Any]]) -> None:
    fake = FakeTcgen05Device(records)
    for t in scale_row_tasks(TCGEN05_MMA_SCALE_VARIANTS):
        run = run_tc_task(fake, t, records, 1)
        v = variant(t.key)
        assert run.result == t.expect, (t.key, t.plant, run.detail)
        pair = row_scales(records, v)
        assert pair is not None
        assert run.layout_hashes["scale_A"] == scale_view(pair[0]).map_hash
        assert run.layout_hashes["scale_B"] == scale_view(pair[1]).map_hash
        rows = {c[0] for c in run.d_cells}
        if t.plant == "factors-swapped":  # scale_A's rows 0 and 1 only
            assert rows and rows <= {0, 1}, run.detail
        elif t.plant == "factor-moved":  # (row 0, block 0)'s factor: row 0 only
            assert rows == {0}, run.detail
        elif t.plant == "b-factors-swapped":  # scale_B's columns 0 and 1: D's columns 0, 1
            assert run.d_cells and {c[1] for c in run.d_cells} <= {0, 1}, run.detail
        elif t.plant == "factor-other-cta":  # row 0's factor, and the other CTA's row there
            # (the cells listed are the first 64: row 0's)
            assert rows and rows <= {0, v.dims.m // 2}, run.detail
            assert int(run.detail.split(" of ")[0]) <= 2 * v.n, run.detail
        elif t.plant == "scale-id-wrong":  # every row reads other bytes
            assert int(run.detail.split(" of ")[0]) > v.dims.m * v.n // 2, run.detail
        else:
            assert f"at IDs {v.scale_ids[0]} and {v.scale_ids[1]}" in run.detail
    assert fake.launches == 45 + 39


def test_the_idesc_of_a_row(records: list[dict[str, Any]]) -> None:
    from formal.execute.datapath import datapath_map
    from formal.execute.tcgen05_mma import tc_scale_operands, tc_smem_record
    v = variant(ROW_4X)
    pair = row_scales(records, v)
    rec = tc_smem_record(records, "tcgen05.smem.K-major.128B.b8")
    assert pair is not None and rec is not None
    ops = tc_scale_operands(v, datapath_map(records, "D", 64), rec, pair, (0, 0),
                            np.random.default_rng(3))
    x = decode_idesc("mxf4nvf4", ops.launch.idesc)
    # e2m1 code 1 for A and B, ue4m3 (scale format 0), M 128, N 64
    assert (x.a_format, x.b_format, x.scale_format, x.m, x.n) == (1, 1, 0, 128, 64)
    assert ops.launch.kernel.opcode == \
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
    # A's row 0 is 64 elements in 32 bytes; the image holds them packed (byte 0: k 0 and 1)
    assert ops.a.shape == (128, 64) and ops.launch.scales is not None
    assert ops.launch.scales.shape == (128, 4 + 8)


def test_a_fake_whose_scale_layout_differs_is_caught_with_its_cell(
        records: list[dict[str, Any]]) -> None:
    # the device's truth: scale_A of mxf8f6f4 1X with rows 0 and 1 in each other's places
    # (drawn unequal: rows 0 and 5 could be equal, and the check then match)
    wrong = [dict(r) for r in records]
    for r in wrong:
        if r.get("id") == "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A":
            places = [list(p) for p in r["places"]]
            for p in places:
                p[0:3], p[3:6] = p[3:6], p[0:3]
            r["places"] = places
    run = run_tc_task(FakeTcgen05Device(wrong), Task(ROW_1X, "check",
                                                      catalog="tcgen05.smem.K-major.none.b8"),
                      records, 1)
    assert run.result == "mismatch"
    assert {c[0] for c in run.d_cells} <= {0, 1} and run.d_cells
    assert "cells of D differ read through Layout D" in run.detail


def test_on_sm_90_each_row_is_assembled_not_run(records: list[dict[str, Any]]) -> None:
    from formal.execute.ptx import ptxas_path
    from formal.execute.tcgen05_run import assembled
    tasks = tc_mma_tasks(Job(records, only="block_scale"), 90)
    assert [t.mode for t in tasks] == ["compile"] * 45
    if ptxas_path() is None:
        pytest.skip("no ptxas")
    memo: dict[str, Any] = {}
    for t in tasks:
        run = assembled(variant(t.key), records, 90, True, memo)
        assert run.result == "compiled-only", (t.key, run.detail)
        assert run.detail.startswith("tcgen05.mma needs sm_100a; the device is sm_90")


def test_a_real_device_launch_passes_every_parameter_of_the_entry(
        records: list[dict[str, Any]], tmp_path: Any) -> None:
    # CupyTcgen05 with a numpy stand-in for CuPy: one argument a .param of the kernel's entry,
    # in its order (a block-scaled row's last one its scale words, a .sp row's its metadata)
    import re
    from types import SimpleNamespace

    from formal.execute.ptx_tcgen05 import kernel_text
    from formal.execute.tcgen05_run import CupyTcgen05
    calls: list[tuple[str, tuple[Any, ...]]] = []

    class Module:
        def __init__(self, path: str) -> None:
            self.text = open(path, encoding="utf-8").read()

        def get_function(self, name: str) -> Any:
            def run(grid: Any, block: Any, args: tuple[Any, ...]) -> None:
                calls.append((self.text, args))
            return run

    cp = SimpleNamespace(full=np.full, asarray=np.asarray, asnumpy=np.asarray, uint32=np.uint32,
                         RawModule=lambda path: Module(path), cuda=SimpleNamespace(
                             get_current_stream=lambda: SimpleNamespace(synchronize=lambda: None)))
    dev = CupyTcgen05(SimpleNamespace(cp=cp, tmp=tmp_path, broken=False))
    keys = [ROW_1X, "tcgen05.mma.sp.m128n64k32.kind::f16.f32.f16.f16.layoutD.sel1",
            "tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD"]
    for key in keys:
        run_tc_task(dev, Task(key, "check", catalog="tcgen05.smem.K-major.128B.b"
                              + ("8" if "e4m3" in key else "16")), records, 1)
    assert len(calls) == 3
    for (text, args), key in zip(calls, keys, strict=True):
        params = re.findall(r"\.param \.u(?:32|64) (\w+)", text.split("{")[0])
        assert len(args) == len(params), (key, params)
        if key == ROW_1X:
            assert params[-1] == "scales" and args[-1].shape == (128 * (4 + 8),)
        elif ".sp." in key:
            assert params[-1] == "meta"
    assert "scales" in kernel_text(variant_kernel(records, ROW_1X))


def variant_kernel(records: list[dict[str, Any]], key: str) -> Any:
    from formal.execute.datapath import datapath_map
    from formal.execute.tcgen05_mma import kernel_of
    v = variant(key)
    return kernel_of(v, datapath_map(records, v.datapath, v.n), 4096, records)


def test_a_row_s_kernel_without_its_layouts_issues_the_row_s_own_mma() -> None:
    """``ptx --out`` / ``ptx --check`` write a row's kernel where no layouts are at hand
    (``ptx_tcgen05.row_kernel``): a block-scaled row's is block-scaled at its .scale_vec, a
    ``.sp`` row's is ``.sp`` (``.ws`` where the row issues it) -- a plain mma under those
    names was assembled before, and reported as theirs."""
    from formal.base.matrix_variants import TCGEN05_MMA_SP_VARIANTS
    from formal.execute.ptx import assemble, module, ptxas_path
    one_x = variant(ROW_1X)
    four_x = next(v for v in TCGEN05_MMA_SCALE_VARIANTS if v.scale_vec == 4)
    sp_g = next(v for v in TCGEN05_MMA_SP_VARIANTS if v.datapath == "G")
    expected = {one_x: "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X",
                four_x: f"tcgen05.mma.cta_group::1.kind::{four_x.kind}.block_scale.scale_vec::4X",
                sp_g: f"tcgen05.mma.ws.sp.cta_group::1.kind::{sp_g.kind}"}
    for v, opcode in expected.items():
        text = module(v).text
        assert f"{opcode} " in text or f"{opcode}\t" in text, (v.key, opcode)
    if ptxas_path() is not None:
        for v in expected:
            ok, msg = assemble(module(v).text, v.target)
            assert ok, (v.key, msg)


ROW_PAIR = ("tcgen05.mma.m128n64k32.kind::mxf8f6f4.block_scale.scale_vec::1X.ue8m0.f32.e4m3.e4m3."
            "layoutB.sf2_2")


def test_a_pair_row_launches_each_ctas_factors(records: list[dict[str, Any]]) -> None:
    from formal.execute.datapath import datapath_map
    from formal.execute.tcgen05_mma import tc_scale_operands, tc_smem_record
    for key, m, cols in ((ROW_PAIR, 128, (2, 4)),
                         (ROW_PAIR.replace("m128n", "m256n").replace("layoutB", "layoutA"), 256,
                          (4, 8))):
        v = variant(key)
        pair = row_scales(records, v)
        rec = tc_smem_record(records, "tcgen05.smem.K-major.128B.b8")
        assert pair is not None and rec is not None
        assert [scale_view(r).cta_group for r in pair] == [2, 2]
        ops = tc_scale_operands(v, datapath_map(records, v.datapath, 64), rec, pair, (2, 2),
                                np.random.default_rng(5))
        x = decode_idesc("mxf8f6f4", ops.launch.idesc)
        assert (x.m, x.n, x.a_scale_id, x.b_scale_id) == (m, 64, 2, 2)
        k = ops.launch.kernel
        assert k.opcode == "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X"
        assert k.scale_columns == cols and ops.launch.scales is not None
        assert ops.launch.scales.shape == (256, sum(cols))  # CTA 1's 128 lanes after CTA 0's


def test_a_fake_whose_pair_holds_scale_a_in_the_other_cta_is_caught(
        records: list[dict[str, Any]]) -> None:
    # the device's truth: the pair's M = 128 scale_A with each row's CTA exchanged (row r in
    # CTA 1 - r / 64): every row of D reads the other CTA's row's factor
    sfa = "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.cta_group::2.scale_A"
    wrong = [dict(r) for r in records]
    for r in wrong:
        if r.get("id") == sfa:
            r["places"] = [[1 - x if j % 4 == 3 else x for j, x in enumerate(p)]
                           for p in r["places"]]
    task = Task(ROW_PAIR, "check", catalog="tcgen05.smem.K-major.none.b8")
    assert run_tc_task(FakeTcgen05Device(records), task, records, 1).result == "match"
    run = run_tc_task(FakeTcgen05Device(wrong), task, records, 1)
    assert run.result == "mismatch" and "cells of D differ read through Layout B" in run.detail
    # most rows of D differ (a factor equal by chance to the other CTA's leaves its row alone)
    assert int(run.detail.split(" of ")[0]) > 8192 // 2, run.detail
