"""ldmatrix / stmatrix / movmatrix / wgmma execution without a GPU: hand-computed cells, an
emulator written from the spec's sentences (independent of formal.execute.matrix), the
descriptor layouts, and the PTX through ptxas.  The ``gpu``-marked test runs on a device."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

from formal.base.matrix_variants import (
    BY_KEY,
    MATRIX_VARIANTS,
    Variant,
    runs_on,
    variant,
    wgmma_ns,
)
from formal.execute import cpu, devices, gpu_matrix, ptx
from formal.execute import matrix as mx
from formal.execute.maps import operand_map
from formal.execute.ptx import ptxas_path

# ---- the spec's layouts, as the catalog will state them (cells in the export's form) ---------


def _move_record(instr: str, num: int, trans: bool) -> dict[str, Any]:
    cells = []
    for lane in range(32):
        for j in range(num):
            for h in range(2):
                r, c = ((8 * j + 2 * (lane % 4) + h, lane // 4) if trans
                        else (8 * j + lane // 4, 2 * (lane % 4) + h))
                cells.append({"lane": lane, "element": 2 * j + h, "row": r, "col": c})
    return {"instruction": instr, "shape": f"m8n8.x{num}{'.trans' if trans else ''}",
            "operand": "C/D" if instr == "ldmatrix" else "A", "types": ["b16"], "cells": cells}


def _mov_records() -> list[dict[str, Any]]:
    cells = [{"lane": lane, "element": h, "row": lane // 4, "col": 2 * (lane % 4) + h}
             for lane in range(32) for h in range(2)]
    return [{"instruction": "movmatrix", "shape": "m8n8.trans", "operand": op, "types": ["b16"],
             "cells": cells} for op in ("A", "C/D")]


def _wgmma_records(v: Variant) -> list[dict[str, Any]]:
    a_cells, d_cells = [], []
    for t in range(128):
        w, lane = divmod(t, 32)
        g, q = lane // 4, lane % 4
        for i in range(v.elements("A")):
            if v.a in ("f16", "bf16"):
                r, c = g + 8 * ((i // 2) % 2), 2 * q + i % 2 + 8 * (i // 4)
            elif v.a == "tf32":
                r, c = g + 8 * (i % 2), q + 4 * (i // 2)
            elif v.a == "b1":
                r, c = g + 8 * ((i // 32) % 2), 32 * q + i % 32 + 128 * (i // 64)
            else:
                r, c = g + 8 * ((i // 4) % 2), 4 * q + i % 4 + 16 * (i // 8)
            a_cells.append({"lane": t, "element": i, "row": 16 * w + r, "col": c})
        for i in range(128):  # stated for every N: the cells at N = 256
            d_cells.append({"lane": t, "element": i, "row": 16 * w + g + 8 * ((i // 2) % 2),
                            "col": 8 * (i // 4) + 2 * q + i % 2})
    return [{"instruction": "wgmma", "shape": f"m64nNk{v.k}", "operand": "A", "types": [v.a],
             "cells": a_cells},
            {"instruction": "wgmma", "shape": f"m64nNk{v.k}", "operand": "C/D", "types": [v.c],
             "n": list(wgmma_ns(v.a)), "cells": d_cells}]


RECORDS = ([_move_record(i, n, t) for i in ("ldmatrix", "stmatrix") for n in (1, 2, 4)
            for t in (False, True)] + _mov_records())


# ---- hand-computed cells ---------------------------------------------------------------------


def test_ldmatrix_x4_lane5_register2_is_matrix2_row1_cols_2_3() -> None:
    v = BY_KEY["ldmatrix.m8n8.x4.b16"]
    m = mx.maps_for(v, RECORDS)["r"]
    # register 2 = elements 4, 5; matrix 2 is tile rows 16..23
    assert (int(m.row[5, 4]), int(m.col[5, 4])) == (17, 2)
    assert (int(m.row[5, 5]), int(m.col[5, 5])) == (17, 3)
    t = BY_KEY["ldmatrix.m8n8.x4.trans.b16"]
    mt = mx.maps_for(t, RECORDS)["r"]
    assert (int(mt.row[5, 4]), int(mt.col[5, 4])) == (18, 1)
    assert (int(mt.row[5, 5]), int(mt.col[5, 5])) == (19, 1)


def test_ldmatrix_trial_reads_the_addressed_rows() -> None:
    v = BY_KEY["ldmatrix.m8n8.x2.b16"]
    maps = mx.maps_for(v, RECORDS)
    t = mx.move_trial(v, maps, np.random.default_rng(1), 3, 2048)
    halves = t.image.view(np.uint16).reshape(3, -1)
    # trial 1, lane 13, register 1, high half: matrix 1 row 3 (lane 11's address), col 3
    slot = t.addr[1, 11] // 16
    want = int(halves[1, slot * 8 + 3])
    assert int(t.expected[1, 13, 1]) >> 16 == want
    # lanes 16..31 point at rows no tile row uses (decoys)
    assert not set((t.addr[1, 16:] // 16).tolist()) & set(t.slots[1].tolist())


def test_smem_layout_offsets_and_descriptor() -> None:
    lay = mx.canonical(64)  # LBO 128, SBO 256
    assert (lay.lbo, lay.sbo) == (128, 256)
    # row 9, byte 20: core matrix (1, 1) at 256 + 128, row 1 of it (16), byte 4
    assert int(lay.offset(np.array(9), np.array(20))) == 256 + 128 + 16 + 4
    assert lay.descriptor_hi() == (8 << 16) | (16 << 32)
    sw = mx.canonical(64, swizzle=128)
    # row 3, 16-byte chunk 1 -> chunk 1 ^ 3 = 2
    assert int(sw.offset(np.array(3), np.array(16))) == 3 * 128 + 2 * 16
    assert sw.descriptor_hi() >> 62 == 1
    assert mx.SmemLayout(0, 128, 256, True).descriptor_hi() == (16 << 16) | (8 << 32)
    # M/N-major .f16, no swizzle, M/N stride 128 in SBO, K stride 1024 in LBO: element
    # (n 19, k 10) is in core matrix (n 16..23, k 8..15): 2 * 128 + 1024, K-row 2, byte 6
    mn = mx.SmemLayout(0, 1024, 128, major="MN", mn_field="sbo")
    assert int(mn.element_offset(np.array(19), np.array(10), 16)) == 256 + 1024 + 32 + 6
    assert mn.extent(64, 16, 16) == 2048


# ---- an emulator from the spec's sentences ---------------------------------------------------


class SpecDevice:
    """Executes the kernels as the spec's prose says, reading the launch data directly."""

    sm = 90

    def move(self, v: Variant, t: mx.MoveTrial) -> np.ndarray:
        count = t.addr.shape[0]
        if v.instruction == "movmatrix":
            el = cpu.unpack_elements(t.inputs, 16, 2)  # (T, 32, 2) of M's fragment
            m = np.zeros((count, 8, 8), np.uint64)
            for lane in range(32):
                for h in range(2):
                    m[:, lane // 4, 2 * (lane % 4) + h] = el[:, lane, h]
            out = np.zeros((count, 32, 2), np.uint64)
            for lane in range(32):
                for h in range(2):
                    out[:, lane, h] = m[:, 2 * (lane % 4) + h, lane // 4]
            return cpu.pack_elements(out, 16)
        halves = t.image.view(np.uint16).reshape(count, -1).copy()
        regs = cpu.unpack_elements(t.inputs, 16, 2 * v.num) if t.inputs.size else None
        out = np.zeros((count, 32, 2 * v.num), np.uint64)
        for lane in range(32):
            for j in range(v.num):
                for h in range(2):
                    r, c = ((2 * (lane % 4) + h, lane // 4) if v.trans
                            else (lane // 4, 2 * (lane % 4) + h))
                    idx = t.addr[:, 8 * j + r] // 2 + c
                    if v.instruction == "ldmatrix":
                        out[:, lane, 2 * j + h] = halves[np.arange(count), idx]
                    else:
                        assert regs is not None
                        halves[np.arange(count), idx] = regs[:, lane, 2 * j + h]
        if v.instruction == "stmatrix":
            return halves.view(np.uint32).reshape(count, -1)
        return cpu.pack_elements(out, 16)

    def wgmma(self, v: Variant, t: mx.WgmmaTrial, la: mx.SmemLayout,
              lb: mx.SmemLayout) -> np.ndarray:
        # not independent of the layouts: this checks packing and unpacking agree
        img = t.image.view(np.uint8)
        b = _read_k_major(img[:, t.b_off:], v.b, lb, v.n, v.k)
        a = t.a if v.a_source == "reg" else _read_k_major(img, v.a, la, 64, v.k)
        d = cpu.reference(v, a, np.swapaxes(b, 1, 2), t.c)
        recs = _wgmma_records(v)
        dm = operand_map(recs[1], lanes=128, tile=(64, v.n), n=v.elements("D"), shape=v.shape)
        return mx.regs_of(dm, v.c, d)


def _read_k_major(img: np.ndarray, t: str, lay: mx.SmemLayout, rows: int, k: int) -> np.ndarray:
    """The spec's core matrices, written out: row mn, byte kb of a no-swizzle K-major
    operand is at (mn % 8) * 16 + (kb % 16) + LBO * (kb // 16) + SBO * (mn // 8)."""
    bits = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
            "b1": 1}[t]
    out = np.zeros((img.shape[0], rows, k), np.uint64)
    for mn in range(rows):
        for kk in range(k):
            kb = kk * bits // 8
            if lay.swizzle:
                lin = (mn // 8) * lay.sbo + (mn % 8) * lay.swizzle + kb
                off = lin ^ (((lin >> 7) & (lay.swizzle // 16 - 1)) << 4)
            else:
                off = (mn % 8) * 16 + kb % 16 + lay.lbo * (kb // 16) + lay.sbo * (mn // 8)
            if bits == 1:
                out[:, mn, kk] = (img[:, off] >> (kk % 8)) & 1
                continue
            val = np.zeros(img.shape[0], np.uint64)
            for j in range(bits // 8):
                val |= img[:, off + j].astype(np.uint64) << np.uint64(8 * j)
            out[:, mn, kk] = cpu.from_container(t, bits, val)
    return out


@pytest.mark.parametrize("key", [v.key for v in MATRIX_VARIANTS
                                 if not v.wgmma and runs_on(v, 90)])
def test_moves_check_and_discover_on_the_spec_emulator(key: str) -> None:
    for mode in ("check", "discover"):
        run, kept = gpu_matrix.run_matrix_task(SpecDevice(), gpu_matrix.Task(key, mode),  # type: ignore[arg-type]
                                        RECORDS, 4)
        assert run.result == "match", run.detail
        assert not kept


def test_a_wrong_ldmatrix_layout_is_caught() -> None:
    recs = [dict(r) for r in RECORDS]
    rec = next(r for r in recs if r["instruction"] == "ldmatrix" and r["shape"] == "m8n8.x4")
    cells = [dict(c) for c in rec["cells"]]
    cells[10]["col"], cells[11]["col"] = cells[11]["col"], cells[10]["col"]  # lane 1, reg 1
    rec["cells"] = cells
    task = gpu_matrix.Task("ldmatrix.m8n8.x4.b16", "check")
    run, _ = gpu_matrix.run_matrix_task(SpecDevice(), task, recs, 2)  # type: ignore[arg-type]
    assert run.result == "mismatch" and "lane 1 element 2" in run.detail
    disc, kept = gpu_matrix.run_matrix_task(SpecDevice(),  # type: ignore[arg-type]
                                     gpu_matrix.Task("ldmatrix.m8n8.x4.b16", "discover"), recs, 1)
    assert disc.result == "mismatch" and kept


@pytest.mark.parametrize("key", ["wgmma.m64n8k16.f32.f16.f16.rs", "wgmma.m64n16k16.f16.f16.f16.ss",
                                 "wgmma.m64n8k8.f32.tf32.tf32.ss", "wgmma.m64n8k32.s32.s8.u8.rs",
                                 "wgmma.m64n8k32.f16.e4m3.e5m2.ss",
                                 "wgmma.m64n8k256.s32.b1.b1_and_popc.ss"])
def test_wgmma_packing_round_trips(key: str) -> None:
    v = variant(key)
    recs = _wgmma_records(v)
    for lay in (mx.canonical(v.n), mx.canonical(64, swizzle=64)):
        task = gpu_matrix.Task(key, "check", gpu_matrix._lay(lay))
        run, _ = gpu_matrix.run_matrix_task(SpecDevice(), task, recs, 2)  # type: ignore[arg-type]
        assert run.result == "match", run.detail


def test_wgmma_probe_expects_what_the_layout_says() -> None:
    v = variant("wgmma.m64n16k16.f32.f16.f16.rs")
    lay = gpu_matrix.probe_layout(16)
    want = mx.expected_probe(v, lay, "B")
    # slot 0: row 0, k 0; slot 8 (byte 16): row 1; slot 64 (byte 128): row 8; the second
    # column of core matrices starts at LBO = 16 * 16 + 256 = 512 bytes: slot 256 is k 8
    assert want[0] == {"slot": 0, "mn": 0, "k": 0}
    assert want[8] == {"slot": 8, "mn": 1, "k": 0}
    assert want[64] == {"slot": 64, "mn": 8, "k": 0}
    assert want[256] == {"slot": 256, "mn": 0, "k": 8}
    assert want[200] == {"slot": 200, "mn": -1, "k": -1}  # the gap is read by nobody
    run, kept = gpu_matrix.run_matrix_task(SpecDevice(),  # type: ignore[arg-type]
                                    gpu_matrix.Task(v.key, "discover", gpu_matrix._lay(lay), "B"),
                                    _wgmma_records(v), 1)
    assert run.result == "match", run.detail and kept


# ---- PTX ---------------------------------------------------------------------------------------


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not on PATH")
def test_every_matrix_kernel_assembles_for_its_target() -> None:
    picks = [v for v in MATRIX_VARIANTS if not v.wgmma or v.n in (8, 256)]
    res = ptx.check(picks, ["sm_90a", "sm_100a", "sm_120a"])
    failed = [(r.variant.key, r.arch, r.detail[:200]) for r in res if r.status == "failed"]
    assert not failed
    # what needs sm_100a is refused for sm_90a
    assert {r.variant.key for r in res if r.arch == "sm_90a" and r.status == "skipped"} == \
        {v.key for v in picks if v.min_sm == 100}
    # ... and assembles for sm_120a as well (the spec's Target ISA notes), wgmma does not
    sm100 = {v.key for v in picks if v.min_sm == 100}
    assert len(sm100) == 15 and sm100 <= {r.variant.key for r in res
                                          if r.arch == "sm_120a" and r.status == "ok"}
    assert all(r.status == "skipped" for r in res if r.arch == "sm_120a" and r.variant.wgmma)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not on PATH")
def test_ptxas_refuses_m16n16_on_sm90a() -> None:
    from formal.execute.ptx import assemble

    v = BY_KEY["ldmatrix.m16n16.x1.trans.b8"]
    ok, msg = assemble(ptx.module(v, "sm_90a").text, "sm_90a")
    assert not ok and "m16n16" in msg


# ---- the device --------------------------------------------------------------------------------


def _cuda() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return bool(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs CuPy and a CUDA device")
def test_on_the_device() -> None:
    dev = devices.CupyDevice()
    for key in ("ldmatrix.m8n8.x4.trans.b16", "stmatrix.m8n8.x2.b16", "movmatrix.m8n8.trans.b16"):
        run, _ = gpu_matrix.run_matrix_task(dev, gpu_matrix.Task(key, "check"), RECORDS, 4)
        assert run.result == "match", run.detail
    v = variant("wgmma.m64n64k16.f32.f16.f16.rs")
    run, _ = gpu_matrix.run_matrix_task(dev, gpu_matrix.Task(v.key, "check",
                                                      gpu_matrix._lay(mx.canonical(64))),
                                 _wgmma_records(v), 4)
    assert run.result == "match", run.detail


def test_the_h100_evidence_packed_with_these_tables() -> None:
    """Every run of the recorded matrix evidence names the hashes of the tables above."""
    import json
    from pathlib import Path

    files = sorted(Path(__file__).resolve().parents[1].glob(
        "proofs/evidence/*-matrix-*.json"))
    docs = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    # the last file with dense wgmma runs (a sparse-only run may come after it)
    dense = [d for d in docs if any(r["instruction"] == "wgmma" for r in d["runs"])]
    assert dense
    ev = dense[-1]
    compared = 0
    # the tables of one (A type, C type, K) are one set of records, each map of it made once
    tables: dict[tuple[str, str, int], tuple[list[dict[str, Any]], dict[Any, Any]]] = {}
    for r in ev["runs"]:
        if not r["layout_hashes"] or r["instruction"] == "wgmma.sp":
            continue  # packed with the catalog's sparse maps (tests/test_wgmma_sparse_run.py)
        v = variant(r["key"])
        if v.wgmma:
            recs, memo = tables.setdefault((v.a, v.c, v.k), (_wgmma_records(v), {}))
        else:
            recs, memo = RECORDS, {}
        assert mx.hashes(mx.maps_for(v, recs, memo)) == r["layout_hashes"], r["key"]
        compared += 1
    assert compared >= 280
    checks = [r for r in ev["runs"] if r["mode"] == "check" and r["instruction"] == "wgmma"]
    assert len(checks) == 160 and all(r["result"] == "match" for r in checks)


# ---- the sm_100a moves: memory geometry and the catalog's maps (compile-only) ---------------


@pytest.mark.parametrize("key,tile,lanes,words", [
    ("ldmatrix.m16n16.x1.trans.b8", (16, 16), 16, 2),
    ("ldmatrix.m16n16.x2.trans.b8x16.b4x16_p64", (32, 16), 32, 4),
    ("ldmatrix.m8n16.x1.b8x16.b6x16_p32", (8, 16), 8, 1),
    ("ldmatrix.m8n16.x4.b8x16.b4x16_p64", (32, 16), 32, 4),
    # a 16 x 8 matrix stored .trans lies as its 8 columns: 8 rows of 16 bytes a matrix
    ("stmatrix.m16n8.x1.trans.b8", (8, 16), 8, 1),
    ("stmatrix.m16n8.x4.trans.b8", (32, 16), 32, 4),
])
def test_sm100_move_geometry(key: str, tile: tuple[int, int], lanes: int, words: int) -> None:
    v = BY_KEY[key]
    assert v.tile == tile and mx.address_lanes(v) == lanes and v.registers == words
    assert v.target == "sm_100a" and not runs_on(v, 90) and runs_on(v, 100)


def test_sm100_moves_take_the_catalogs_maps() -> None:
    """Every sm_100a move finds its register map in the catalog's export (what a device run
    would pack with), while the H100's evidence check owes none of them a run."""
    from formal.api import model_of
    from formal.base.records import expand
    from formal.writers.export import layout_record

    lays = model_of([]).layouts
    by_id = {lay.id: lay for lay in lays}
    records = expand([layout_record(lay, by_id) for lay in lays])
    for v in (v for v in MATRIX_VARIANTS if not v.wgmma and v.min_sm == 100):
        m = mx.maps_for(v, records)["r"]
        assert m.tile == v.tile and m.n == 4 * v.registers, v.key
    # stmatrix .m16n8 .x1 .trans: lane 13 (g 3, t 1) byte 3 goes to memory row 2 + 1, byte 11
    m = mx.maps_for(BY_KEY["stmatrix.m16n8.x1.trans.b8"], records)["r"]
    assert (int(m.row[13, 3]), int(m.col[13, 3])) == (3, 11)
