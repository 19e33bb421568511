"""Issue 'Concrete executor': packing, exact reference semantics, PTX text, ptxas, the GPU
harness on a fake device (match / mismatch tracing / discovery), and evidence.

Everything here runs without a GPU; tests that need ptxas are marked ``ptxas`` and skip when
it is not on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.base.hashes import cell_table_hash
from formal.base.variants import VARIANTS, assembles_for, container_bits, runs_on, selector_count
from formal.execute import compare, cpu, devices, discover, numbers, ptx, record, supervisor

ROOT = Path(__file__).resolve().parents[1]
HAS_PTXAS = ptx.ptxas_path() is not None


# ---- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog() -> dict[str, Any]:
    from formal.api import model_of
    from formal.base.records import expand
    from formal.writers.export import to_json

    # the catalog with the corrections of the spec's errata: what the hardware computes
    model = model_of([], corrections=True)
    return {"model": model, "records": expand(json.loads(to_json(model.layouts))["layouts"])}


@pytest.fixture(scope="module")
def records(catalog: dict[str, Any]) -> list[dict[str, Any]]:
    return catalog["records"]


def variant(key: str):
    return next(v for v in VARIANTS if v.key == key)


def swap_cells(records: list[dict[str, Any]], layout_id: str, a: int, b: int) \
        -> list[dict[str, Any]]:
    """A copy of the records with two cells of one layout exchanged (a corrupted layout)."""
    out = json.loads(json.dumps(records))
    rec = next(r for r in out if r["id"] == layout_id)
    ca, cb = rec["cells"][a], rec["cells"][b]
    for k in ("row", "col"):
        ca[k], cb[k] = cb[k], ca[k]
    rec["map_hash"] = cell_table_hash(rec["instruction"], rec["shape"], rec["operand"], "cells",
                                    rec["cells"])
    return out


def synthetic(operand: str, tile: tuple[int, int], per_register: int, kind: str = "b32",
              seed: int = 0) -> dict[str, Any]:
    """A layout record with a random bijection of the tile onto 32 lanes."""
    rows, cols = tile
    n = rows * cols // 32
    rng = np.random.default_rng(seed)
    perm = rng.permutation(rows * cols)
    cells = [{"lane": int(t), "element": int(i), "row": int(perm[t * n + i] // cols),
              "col": int(perm[t * n + i] % cols)} for t in range(32) for i in range(n)]
    return {"id": f"synthetic:{operand}", "instruction": "mma", "shape": "m16n8k16",
            "operand": operand, "types": [], "tile": list(tile), "elements_per_thread": n,
            "register": {"kind": kind, "count": 0, "per_register": per_register},
            "cells": cells}


# ---- number formats ---------------------------------------------------------------------------


KNOWN_CODES = {
    ("e4m3", 1.0): 0x38, ("e4m3", -2.0): 0xC0, ("e4m3", 448.0): 0x7E, ("e4m3", 0.5): 0x30,
    ("e5m2", 1.0): 0x3C, ("e5m2", 57344.0): 0x7B, ("e5m2", -0.5): 0xB8,
    ("e3m2", 1.0): 0x0C, ("e3m2", 28.0): 0x1F, ("e3m2", 0.0625): 0x01,
    ("e2m3", 1.0): 0x08, ("e2m3", 7.5): 0x1F, ("e2m3", 0.125): 0x01,
    ("e2m1", 1.0): 0x2, ("e2m1", 6.0): 0x7, ("e2m1", 0.5): 0x1, ("e2m1", -3.0): 0xD,
    ("bf16", 1.0): 0x3F80, ("bf16", -2.5): 0xC020,
    ("tf32", 1.0): 0x1FC00, ("f16", 1.0): 0x3C00, ("f16", -0.5): 0xB800,
}


@pytest.mark.parametrize("t,value", sorted(KNOWN_CODES))
def test_float_codes_match_the_formats(t: str, value: float) -> None:
    code = int(numbers.encode(t, [value])[0])
    assert code == KNOWN_CODES[(t, value)]
    assert numbers.decode(t, [code])[0] == value


@pytest.mark.parametrize("t", sorted(numbers.FLOATS))
def test_every_float_format_round_trips_small_integers_and_halves(t: str) -> None:
    grid = np.arange(-8, 8.5, 0.5)
    ok = np.array(numbers.representable(t, grid))
    assert {-4.0, -1.0, 0.0, 1.0, 2.0, 4.0} <= set(ok.tolist())
    codes = numbers.encode(t, ok)
    assert np.array_equal(numbers.decode(t, codes), ok)
    assert len(set(codes.tolist())) == len(ok)  # injective (and -0 is not +0)


@pytest.mark.parametrize("t,np_type", [("f16", np.float16), ("f32", np.float32),
                                       ("f64", np.float64)])
def test_ieee_formats_agree_with_numpy(t: str, np_type: Any) -> None:
    vals = np.array([0.0, -0.0, 1.0, -1.5, 2.0 ** -14, 65504.0, 3.25, -1024.0])
    raw = vals.astype(np_type).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[
        np.dtype(np_type).itemsize])
    assert np.array_equal(numbers.encode(t, vals), raw.astype(np.uint64))
    assert np.array_equal(numbers.decode(t, raw), vals)


def test_bf16_and_tf32_are_truncated_f32() -> None:
    vals = np.array([1.0, -3.5, 0.375, 96.0], dtype=np.float32)
    f32 = vals.view(np.uint32).astype(np.uint64)
    assert np.array_equal(numbers.encode("bf16", vals), f32 >> np.uint64(16))
    tf = cpu.to_container("tf32", 32, numbers.encode("tf32", vals))
    assert np.array_equal(tf, f32)


@pytest.mark.parametrize("t,value", [("e4m3", 0.3), ("e2m1", 5.0), ("e2m1", 2.5), ("f16", 1e-9),
                                     ("e4m3", 480.0), ("e5m2", 1.125), ("bf16", 257.0),
                                     ("tf32", 1.0 + 2.0 ** -11), ("s8", 128), ("u4", -1),
                                     ("s4", 0.5), ("f32", float("nan"))])
def test_inexact_values_are_refused(t: str, value: float) -> None:
    with pytest.raises(numbers.NotExact):
        numbers.encode(t, [value])


def test_integer_codes_are_twos_complement() -> None:
    assert numbers.encode("s4", [-8, -1, 7]).tolist() == [8, 15, 7]
    assert numbers.encode("s8", [-1, -128]).tolist() == [255, 128]
    assert numbers.decode("s8", [255, 128, 127]).tolist() == [-1, -128, 127]
    assert numbers.decode("s32", [0xFFFFFFFF]).tolist() == [-1]
    assert numbers.encode("b1", [0, 1]).tolist() == [0, 1]


# ---- packing ----------------------------------------------------------------------------------


def test_the_worked_example_of_the_docstring() -> None:
    words = cpu.pack_elements(np.array([[1, 2, 3, 250]], dtype=np.uint64), 8)
    assert words.tolist() == [[0xFA030201]]
    assert cpu.unpack_elements(words, 8, 4).tolist() == [[1, 2, 3, 250]]


@pytest.mark.parametrize("t,kind,per,tile", [
    ("b1", "b32", 32, (8, 128)), ("u4", "b32", 8, (16, 32)), ("s4", "b32", 8, (16, 64)),
    ("e2m1", "b32", 8, (16, 64)), ("e2m1", "b32", 4, (16, 32)), ("e3m2", "b32", 4, (16, 32)),
    ("e2m3", "b32", 4, (16, 32)), ("u8", "b32", 4, (16, 32)), ("s8", "b32", 4, (16, 16)),
    ("e4m3", "b32", 4, (16, 32)), ("e5m2", "b32", 4, (16, 16)), ("f16", "f16x2", 2, (16, 16)),
    ("bf16", "b32", 2, (16, 8)), ("tf32", "b32", 1, (16, 8)), ("f32", "f32", 1, (16, 8)),
    ("s32", "s32", 1, (16, 8)), ("f64", "f64", 1, (16, 8)),
])
def test_pack_unpack_round_trip_every_type(t: str, kind: str, per: int,
                                           tile: tuple[int, int]) -> None:
    rec = synthetic("A", tile, per, kind, seed=len(t) + per)
    bits = 64 if kind == "f64" else 32 // per
    m = cpu.operand_map(rec, bits)
    rng = np.random.default_rng(7)
    pool = cpu.values_for(t, "A", VARIANTS[0]) if t in numbers.INTEGERS else \
        np.array(numbers.representable(t, np.arange(-4, 4.5, 0.5)))
    codes = numbers.encode(t, pool[rng.integers(0, len(pool), size=(3, *tile))])
    words = cpu.pack(m, t, codes)
    assert words.dtype == np.uint32 and words.shape == (3, 32, m.n * bits // 32)
    assert np.array_equal(cpu.unpack(m, t, words), codes)
    # element e of a lane sits at bits e * width of its words (low to high)
    lane, e = 5, m.n - 1
    code = int(cpu.to_container(t, bits, codes[0:1, m.row[lane, e], m.col[lane, e]])[0])
    bit = e * bits
    value = int(words[0, lane, bit // 32]) >> (bit % 32)
    if bits == 64:
        value |= int(words[0, lane, bit // 32 + 1]) << 32
    assert value & ((1 << bits) - 1) == code


def test_sub_byte_floats_sit_in_their_containers() -> None:
    assert container_bits("e2m1", "f8f6f4") == 8 and container_bits("e2m1", "mxf4") == 4
    one = numbers.encode("e2m1", [1.0])
    assert cpu.to_container("e2m1", 8, one).tolist() == [0x2 << 2]
    assert cpu.to_container("e2m1", 4, one).tolist() == [0x2]
    assert cpu.to_container("e3m2", 8, numbers.encode("e3m2", [1.0])).tolist() == [0x0C]


def test_packing_every_variant_round_trips(records: list[dict[str, Any]]) -> None:
    # (its speed is bench/'s business: no timed tests)
    plans = [p for p in cpu.plans(records).values() if isinstance(p, cpu.Plan)]
    assert len(plans) > 100
    rng = np.random.default_rng(0)
    for p in plans:
        v = p.variant
        m_, n_, k_ = p.dims
        a = cpu.draw(rng, v.b, "B", v, (4, k_, n_))
        mask = cpu.block_mask(p.b)  # m8n8k4 .f16: four products, block-diagonal
        if mask is not None:
            a[:, ~mask] = 0
        w = cpu.pack(p.b, v.b, a)
        back = cpu.unpack(p.b, v.b, w)
        assert np.array_equal(back, a)


# ---- reference semantics ----------------------------------------------------------------------


def test_b1_and_popc_and_xor_popc() -> None:
    a = np.array([[[1, 0, 1, 1], [0, 0, 0, 0]]], dtype=np.uint64)  # 2 x 4
    b = np.array([[[1], [1], [0], [1]]], dtype=np.uint64)  # 4 x 1
    c = numbers.encode("s32", np.array([[[10], [20]]]))
    and_v = variant("mma.m8n8k128.s32.b1.b1.s32_and_popc")
    xor_v = variant("mma.m8n8k128.s32.b1.b1.s32_xor_popc")
    assert numbers.decode("s32", cpu.reference(and_v, a, b, c)).ravel().tolist() == [12, 20]
    # xor: row 0 = 1011 ^ 1101 = 0110 -> 2; row 1 = 0000 ^ 1101 -> 3
    assert numbers.decode("s32", cpu.reference(xor_v, a, b, c)).ravel().tolist() == [12, 23]


def test_integer_and_float_references_are_exact() -> None:
    v = variant("mma.m16n8k32.s32.s8.u8.s32")
    a = numbers.encode("s8", np.full((1, 16, 32), -128))
    b = numbers.encode("u8", np.full((1, 32, 8), 255))
    c = numbers.encode("s32", np.zeros((1, 16, 8), dtype=int))
    assert (numbers.decode("s32", cpu.reference(v, a, b, c)) == -128 * 255 * 32).all()
    f = variant("mma.m16n8k16.f16.f16.f16.f16")
    a = numbers.encode("f16", np.full((1, 16, 16), 0.5))
    b = numbers.encode("f16", np.full((1, 16, 8), -1.5))
    c = numbers.encode("f16", np.full((1, 16, 8), 0.25))
    assert (numbers.decode("f16", cpu.reference(f, a, b, c)) == 16 * -0.75 + 0.25).all()


@pytest.mark.parametrize("key", [
    "mma.sp.m16n8k16.f32.f16.f16.f32", "mma.sp.m16n8k8.f32.tf32.tf32.f32",
    "mma.sp.m16n8k32.s32.u8.s8.s32", "mma.sp.m16n8k64.s32.u4.u4.s32",
    "mma.sp.m16n8k128.s32.s4.s4.s32"])
def test_sparse_compression_and_metadata(records: list[dict[str, Any]], key: str) -> None:
    p = cpu.plan(variant(key), records)
    sp = p.sparsity
    assert sp is not None and p.meta is not None
    m_, n_, k_ = p.dims
    rng = np.random.default_rng(3)
    units = cpu.random_units(rng, sp, (5, m_, k_ // sp.chunk))
    vals = cpu.draw(rng, p.variant.a, "A", p.variant, (5, m_, k_ // sp.chunk, sp.nonzeros),
                    nonzero=True)
    dense = cpu.dense_from_units(sp, units, vals, k_)
    # the sparsity pattern: exactly `nonzeros` of each chunk
    per_chunk = (dense.reshape(5, m_, -1, sp.chunk) != 0).sum(axis=-1)
    assert (per_chunk == sp.nonzeros).all()
    words = cpu.compress(p.a, p.variant.a, dense, units, sp)
    for sel in p.variant.selectors:
        meta = cpu.metadata_words(p.meta, sel, units, rng)
        got_units = cpu.read_units(p.meta, sel, meta, m_, k_ // sp.chunk)
        assert np.array_equal(got_units, units)
        assert np.array_equal(cpu.decompress(p.a, p.variant.a, words, got_units, sp, k_), dense)
        holders = p.meta.holders(sel)
        nib = (meta[:, holders, None].astype(np.uint64) >> (4 * np.arange(8, dtype=np.uint64))) \
            & np.uint64(0xF)
        assert not np.isin(nib, (0b0000, 0b0101, 0b1010, 0b1111)).any()  # ordered metadata
        if sp.meaningful_fields:
            assert np.isin(nib, sp.meaningful_fields).all()
        lo, hi = nib & np.uint64(3), nib >> np.uint64(2)
        assert (lo < hi).all()
        others = np.setdiff1d(np.arange(32), holders)
        if len(others):  # non-holders carry garbage, different on another draw
            again = cpu.metadata_words(p.meta, sel, units, np.random.default_rng(99))
            assert not np.array_equal(meta[:, others], again[:, others])


def test_every_plannable_variant_matches_its_own_emulation(records: list[dict[str, Any]]) \
        -> None:
    rng = np.random.default_rng(11)
    plans = cpu.plans(records)
    done = 0
    for p in plans.values():
        if not isinstance(p, cpu.Plan):
            continue
        for sel in p.variant.selectors or (None,):
            trial = cpu.make_trials(p, rng, 2, sel)
            assert not compare.compare(p, cpu.emulate(p, trial.inputs, sel), trial.expected)
            done += 1
    assert done >= 150


def test_the_spec_erratum_fails_its_own_emulation() -> None:
    """9.7.14.5.13 as the spec writes it (not a bijection) loses A values: packing random
    data by its map and multiplying does not give A x B + C -- as on the H100."""
    from formal.api import model_of
    from formal.base.records import expand
    from formal.writers.export import to_json
    records = expand(json.loads(to_json(model_of([]).layouts))["layouts"])
    p = cpu.plans(records)["mma.m16n8k256.s32.b1.b1.s32_and_popc"]
    assert isinstance(p, cpu.Plan)
    trial = cpu.make_trials(p, np.random.default_rng(5), 2, None)
    assert compare.compare(p, cpu.emulate(p, trial.inputs, None), trial.expected)


def test_every_variant_has_a_plan_and_missing_layouts_are_named(
        records: list[dict[str, Any]]) -> None:
    plans = cpu.plans(records)
    assert all(isinstance(p, cpu.Plan) for p in plans.values()), \
        [str(p) for p in plans.values() if not isinstance(p, cpu.Plan)]
    partial = [r for r in records if r["id"] != "catalog:mma.m16n8k8.CD.f32@f16-bf16-tf32-f64"]
    err = cpu.plans(partial)["mma.m16n8k8.f32.tf32.tf32.f32"]
    assert isinstance(err, cpu.LayoutError) and "no layout for C/D" in str(err)


# ---- the variant table ------------------------------------------------------------------------


def test_table_predicates() -> None:
    fp8 = variant("mma.m16n8k16.f32.e4m3.e4m3.f32")
    assert runs_on(fp8, 90) and runs_on(fp8, 89) and not runs_on(fp8, 80)
    f6 = variant("mma.kind::f8f6f4.m16n8k32.f32.e3m2.e2m1.f32")
    assert not runs_on(f6, 90) and runs_on(f6, 120) and not runs_on(f6, 100)
    assert assembles_for(f6, "sm_120a") and not assembles_for(f6, "sm_90")
    sp_fp8_f16 = variant("mma.sp.m16n8k64.f16.e4m3.e4m3.f16")
    assert sp_fp8_f16.target == "sm_120a"
    assert variant("mma.sp.m16n8k64.f32.e4m3.e4m3.f32").target == "sm_89"
    # kind::f8f6f4 e2m1 sits in bytes: compressed 2:4, one selector
    assert variant("mma.sp.kind::f8f6f4.m16n8k64.f32.e2m1.e2m1.f32").selectors == (0,)
    assert selector_count("m16n8k16", "f16") == 4 and selector_count("m16n8k128", "u4") == 1
    for v in VARIANTS:
        assert v.words("A") >= 1 and v.words("D") == v.words("C")


# ---- PTX --------------------------------------------------------------------------------------


def test_ptx_text_golden_substrings() -> None:
    m = ptx.module(variant("mma.sp.m16n8k32.f32.f16.f16.f32"))
    assert [e for _s, e in m.entries] == ["sel0", "sel1"]
    assert "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32" in m.text
    assert ", %w12, 0x1;" in m.text and ".version 8.5" in m.text and ".target sm_80" in m.text
    b1 = ptx.module(variant("mma.m8n8k128.s32.b1.b1.s32_xor_popc")).text
    assert "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc" in b1
    mx = ptx.module(variant("mma.kind::mxf4.block_scale.m16n8k64.f32.e2m1.e2m1.f32")).text
    assert ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X"
            ".f32.e2m1.e2m1.f32.ue8m0") in mx
    assert "mov.b32 %scale, 0x7F7F7F7F;" in mx and "%scale, {0, 0}, %scale, {0, 0};" in mx
    f6 = ptx.module(variant("mma.kind::f8f6f4.m16n8k32.f16.e3m2.e2m1.f16")).text
    assert "row.col.kind::f8f6f4.f16.e3m2.e2m1.f16" in f6 and ".target sm_120a" in f6
    f64 = ptx.module(variant("mma.m16n8k16.f64.f64.f64.f64")).text
    assert "mov.b64 %fa0, {%w0, %w1};" in f64 and "mov.b64 {%o0, %o1}, %dd0;" in f64
    # one text, one file name: CuPy cannot confuse two kernels
    names = {ptx.module(v).filename for v in VARIANTS}
    assert len(names) == len(VARIANTS)


def test_ptx_cli_writes_kernels(tmp_path: Path) -> None:
    from formal.cli import main
    from formal.execute.ptx_tcgen05 import TCGEN05_MODULES

    assert main(["ptx", "--out", str(tmp_path)]) == 0
    files = {p.name for p in tmp_path.glob("*.ptx")}
    # every family's kernel, one file a row: mma and mma.sp, the moves, wgmma and wgmma.sp;
    # and (sm_100a is a default target) the five tcgen05 modules no row has (.mma, .cp)
    tc05 = {f"{n}.ptx" for n in TCGEN05_MODULES}
    assert tc05 <= files and len(files - tc05) == len(ptx.ALL_VARIANTS) > len(VARIANTS)
    for key in ("mma.sp.m16n8k32.f32.f16.f16.f32",
                "ldmatrix.m16n16.x2.trans.b8", "movmatrix.m8n8.trans.b16",
                "wgmma.m64n64k16.f32.f16.f16.rs", "wgmma.sp.m64n8k32.f32.f16.f16.ss.sel1"):
        v = next(v for v in ptx.ALL_VARIANTS if v.key == key)
        name = f"{ptx.safe_name(v)}.ptx"
        assert name in files, name
        assert (tmp_path / name).read_text() == ptx.module(v).text


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
@pytest.mark.skipif(os.environ.get("PTXLAYOUT_CI_ASSEMBLES_EVERY_KERNEL") == "1",
                    reason=".ci/run's PTX step assembles every kernel for these architectures "
                           "and fails on any failure (test_every_variant_is_for_one_of_the_"
                           "architectures_ci_assembles: each variant's own target is among them)")
def test_every_variant_assembles_for_its_target() -> None:
    """Every family's kernels, for the architectures CI names (.ci/run); at the slow set's
    scale an evenly spaced share of them (.ci/run's own step, ``ptxlayout ptx --check``,
    then assembles every one).  What ``ptx.check`` finds, with several kernels of one header
    to a ptxas call (``_assemble_together``)."""
    from .conftest import budget
    every = list(ptx.ALL_VARIANTS)
    step = max(1, round(len(every) / budget(len(every))))
    results = _assemble_together(every[::step], ["sm_90", "sm_90a", "sm_100a", "sm_120a"])
    failed = [f"{key} {arch}: {detail[:200]}" for key, arch, status, detail in results
              if status == "failed"]
    assert not failed, "\n".join(failed)
    ok = {(key, arch) for key, arch, status, _detail in results if status == "ok"}
    newer = {key for key, _arch, _status, detail in results if "needs PTX ISA" in detail}
    for v in every[::step]:  # each variant assembles at least for its own target
        own = "sm_100a" if v.tmem else \
            {"sm_90a": "sm_90a", "sm_100a": "sm_120a"}.get(v.target, "sm_120a") \
            if v.arch_suffix else "sm_90"
        assert (v.key, own) in ok or v.key in newer, v.key


def _split_module(text: str) -> tuple[str, str] | None:
    """(what precedes the first entry less its comments: the header and the module's
    declarations; the entries) of a kernel module, or None where something other than an
    entry lies at the module's level after the first one."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.startswith(".visible .entry ")), None)
    if first is None:
        return None
    depth = 0
    for ln in lines[first:]:
        if depth == 0 and ln.strip() and not ln.startswith(
                (".visible .entry ", "    .param ", ")", "{", "}", "//")):
            return None
        depth += ln.count("{") - ln.count("}")
    head = "\n".join(ln for ln in lines[:first] if not ln.startswith("//"))
    return head, "\n".join(lines[first:])


def _assemble_together(variants: list[Any], archs: list[str], per_call: int = 24) \
        -> list[tuple[str, str, str, str]]:
    """``ptx.check(variants, archs)`` as (key, arch, status, detail), each module's text
    ``ptx.module(v, arch)`` as check makes it, but up to ``per_call`` modules of the same
    header and module declarations (.version, .target, .shared ...) given to one ptxas as
    one module, each entry renamed k<i>_<name> (an entry is called by no other, and labels
    and registers are the entry's own); a call that fails assembles each of its modules
    alone, so a failure and its messages are that kernel's own, as check reports them."""
    exe = ptx.ptxas_path()
    out: list[tuple[str, str, str, str]] = []
    groups: dict[tuple[str, str], list[tuple[Any, str, str, str]]] = {}
    alone: list[tuple[Any, str, str]] = []
    for v in variants:
        for arch in archs:
            if not ptx.assembles_for(v, arch):
                out.append((v.key, arch, "skipped", f"needs {v.target}"))
                continue
            too_old = ptx.ptxas_too_old(v, arch, exe)
            if too_old is not None:
                out.append((v.key, arch, "skipped", too_old))
                continue
            text = ptx.module(v, arch if v.arch_suffix else None).text
            split = _split_module(text)
            if split is None:
                alone.append((v, arch, text))
            else:
                groups.setdefault((arch, split[0]), []).append((v, arch, text, split[1]))
    calls: list[tuple[str, str, list[tuple[Any, str, str]]]] = \
        [(text, arch, [(v, arch, text)]) for v, arch, text in alone]
    for (arch, head), members in groups.items():
        for at in range(0, len(members), per_call):
            part = members[at:at + per_call]
            body = [entries.replace(".visible .entry ", f".visible .entry k{i}_")
                    for i, (_v, _a, _t, entries) in enumerate(part)]
            calls.append(("\n".join([head, *body]), arch,
                          [(v, a, t) for v, a, t, _e in part]))

    def one(call: tuple[str, str, list[tuple[Any, str, str]]]) \
            -> list[tuple[str, str, str, str]]:
        text, arch, members = call
        ok, msg = ptx.assemble(text, arch, exe)
        if ok:
            return [(v.key, a, "ok", msg) for v, a, _t in members]
        if len(members) == 1:
            v, a, _t = members[0]
            return [(v.key, a, "failed", msg)]
        got = []
        for v, a, t in members:
            ok1, msg1 = ptx.assemble(t, a, exe)
            got.append((v.key, a, "ok" if ok1 else "failed", msg1))
        return got

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        for got in pool.map(one, calls):
            out.extend(got)
    return out


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_kernels_assembled_together_are_what_check_finds() -> None:
    """``_assemble_together`` gives ``ptx.check``'s statuses on a sample of every family and
    module kind (with and without module declarations), and a kernel ptxas refuses is still
    named alone among others that assemble."""
    pick = list(ptx.ALL_VARIANTS)[::23]
    archs = ["sm_90", "sm_90a", "sm_100a", "sm_120a"]
    want = {(r.variant.key, r.arch): r.status for r in ptx.check(pick, archs)}
    got = {(key, arch): status for key, arch, status, _d in _assemble_together(pick, archs)}
    assert got == want and "ok" in got.values()
    heads = {(_split_module(ptx.module(v).text) or ("", ""))[0] for v in pick}
    assert any(".shared" in h for h in heads) and any(".shared" not in h for h in heads)
    # a refused kernel among those that assemble: its group is assembled one by one
    bad = ptx.ALL_VARIANTS[0]
    real = ptx.module

    def broken(v: Any, arch: str | None = None) -> Any:
        m = real(v, arch)
        if v.key != bad.key:
            return m
        from dataclasses import replace
        return replace(m, text=m.text.replace("mma.sync", "mma.syncc", 1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ptx, "module", broken)
        res = _assemble_together(list(ptx.ALL_VARIANTS[:6]), ["sm_90"])
    failed = [(key, arch) for key, arch, status, _d in res if status == "failed"]
    assert failed == [(bad.key, "sm_90")]
    assert sum(status == "ok" for _k, _a, status, _d in res) >= 1


def test_every_variant_is_for_one_of_the_architectures_ci_assembles() -> None:
    """Without ptxas: each variant's own target is among .ci/run's, so its step (which
    fails on any failed assembly) assembles every kernel at least once."""
    for v in ptx.ALL_VARIANTS:
        own = "sm_100a" if v.tmem else \
            {"sm_90a": "sm_90a", "sm_100a": "sm_120a"}.get(v.target, "sm_120a") \
            if v.arch_suffix else "sm_90"
        assert ptx.assembles_for(v, own), v.key


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_table_rows_are_tight_for_ptxas() -> None:
    """ptxas refuses what the table says a variant needs: an older PTX version, or (for
    arch-specific rows) sm_90."""
    from concurrent.futures import ThreadPoolExecutor

    older = {(7, 1): (7, 0), (7, 0): (6, 5), (8, 7): (8, 6), (8, 5): (8, 4), (8, 4): (8, 3)}

    def one(v: Any) -> str | None:
        text = ptx.module(v).text
        if v.ptx in older:
            lower = older[v.ptx]
            t = text.replace(f".version {v.ptx[0]}.{v.ptx[1]}",
                             f".version {lower[0]}.{lower[1]}")
            if ptx.assemble(t, v.target)[0]:
                return f"{v.key} assembles with PTX {lower}: the row's {v.ptx} is not minimal"
        if v.arch_suffix and ptx.assemble(text.replace(f".target {v.target}", ".target sm_90"),
                                          "sm_90")[0]:
            return f"{v.key} assembles for sm_90"
        return None

    sample = [v for v in VARIANTS if v.c == "f32" or v.c == "s32" or v.sparse][::3]
    with ThreadPoolExecutor(8) as pool:
        problems = [x for x in pool.map(one, sample) if x]
    assert not problems, "\n".join(problems)


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_ptx_check_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main

    assert main(["ptx", "--check", "--arch", "sm_90", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:] if line}
    assert rows["ldmatrix.m8n8.x4.b16"] == ["ok"]  # sm_75: assembles for sm_90
    assert rows["wgmma.m64n64k16.f32.f16.f16.rs"] == ["-"]  # sm_90a: not for sm_90


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_ptx_check_cli_assembles_every_family(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The moves' sm_100a forms and wgmma / wgmma.sp are assembled like the mma rows."""
    from formal.cli import main

    only = ("ldmatrix.m16n16.x1.trans.b8,stmatrix.m16n8.x4.trans.b8,"
            "wgmma.m64n8k32.s32.s8.u8.ss,wgmma.sp.m64n8k16.f32.tf32.tf32.rs.sel1")
    assert main(["ptx", "--check", "--arch", "sm_90a,sm_100a", "--only", only,
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in out.splitlines()[2:]
            if line and not line[0].isdigit()}
    assert rows == {
        "ldmatrix.m16n16.x1.trans.b8": "- ok (compile-only)",  # and its two packed forms:
        "ldmatrix.m16n16.x1.trans.b8x16.b6x16_p32": "- ok (compile-only)",
        "ldmatrix.m16n16.x1.trans.b8x16.b4x16_p64": "- ok (compile-only)",
        "stmatrix.m16n8.x4.trans.b8": "- ok (compile-only)",
        "wgmma.m64n8k32.s32.s8.u8.ss": "ok -",
        "wgmma.sp.m64n8k16.f32.tf32.tf32.rs.sel1": "ok -",
    }, out
    assert "6 assembled, 0 failed, 6 not for that architecture" in out
    assert main(["ptx", "--only", "no-such-row", "--out", str(tmp_path)]) == 2


# ---- the harness on a fake device -------------------------------------------------------------


SUBSET = "m16n8k16"  # dense f16/bf16/int/fp8 and sparse f16/bf16/tf32 of one shape


def test_fake_device_reports_match(records: list[dict[str, Any]]) -> None:
    dev = devices.FakeDevice(records)
    report = supervisor.run_all(dev, records, trials=3, only=SUBSET)
    results = {r.result for r in report.runs}
    assert "match" in results and "mismatch" not in results and "error" not in results
    checked = [r for r in report.runs if r.result == "match"]
    assert len(checked) >= 20 and all(r.seed is not None and r.trials == 3 for r in checked)
    assert "checks:" in record.table(report)


def test_corrupted_layout_reports_mismatch_naming_the_cells(records: list[dict[str, Any]]) \
        -> None:
    cd_id = "catalog:mma.m16n8k16.CD.s32@u8-s8-e4m3-e5m2"
    rec = next(r for r in records if r["id"] == cd_id)
    a, b = 5, 70
    cells = {(rec["cells"][a]["row"], rec["cells"][a]["col"]),
             (rec["cells"][b]["row"], rec["cells"][b]["col"])}
    bad = swap_cells(records, cd_id, a, b)
    report = supervisor.run_all(devices.FakeDevice(records), bad, trials=4,
                                only="mma.m16n8k16.s32.s8.s8.s32")
    (run,) = report.runs
    assert run.result == "mismatch"
    named = {f"D[{r}][{c}]" for r, c in cells}
    for name in named:
        assert name in run.detail
    assert run.detail.count("D[") >= 2
    # the trace names the D register and the C, A and B lanes that feed the cell
    lane_a = rec["cells"][a]["lane"]
    assert f"(lane {lane_a} d" in run.detail or f"(lane {rec['cells'][b]['lane']} d" in run.detail
    assert "reads C[" in run.detail and "A row" in run.detail and "B column" in run.detail


def test_faulting_kernel_is_an_error_and_the_run_goes_on(records: list[dict[str, Any]]) -> None:
    dev = devices.FakeDevice(records, fault=["mma.m16n8k16.s32.s8.s8.s32"])
    report = supervisor.run_all(dev, records, trials=2, only="mma.m16n8k16.s32")
    by = {r.variant.key: r.result for r in report.runs}
    assert by["mma.m16n8k16.s32.s8.s8.s32"] == "error"
    assert by["mma.m16n8k16.s32.u8.u8.s32"] == "match"


def test_device_without_the_architecture(records: list[dict[str, Any]]) -> None:
    dev = devices.FakeDevice(records, sm=80)
    report = supervisor.run_all(dev, records, trials=1, only="mma.m16n8k32.f32.e4m3.e4m3",
                                use_ptxas=False)
    assert {r.result for r in report.runs} == {"not-executed"}
    assert "needs sm_89" in report.runs[0].detail


@pytest.mark.parametrize("key", [
    "mma.m16n8k16.s32.u8.s8.s32", "mma.m8n8k128.s32.b1.b1.s32_xor_popc",
    "mma.m16n8k8.f32.tf32.tf32.f32", "mma.sp.m16n8k16.f16.f16.f16.f16",
    "mma.sp.m16n8k8.f32.tf32.tf32.f32", "mma.sp.m16n8k32.s32.s8.s8.s32",
    "mma.sp.m16n8k64.s32.u4.u4.s32"])
def test_discovery_recovers_the_catalog(records: list[dict[str, Any]], key: str) -> None:
    p = cpu.plan(variant(key), records)

    def run(sel: int | None, inputs: np.ndarray) -> np.ndarray:
        return cpu.emulate(p, inputs, sel)

    d = discover.discover_dense(p, run)
    assert d.agrees, (d.anomalies, d.differences)
    assert d.hashes == {"A": p.a.map_hash, "B": p.b.map_hash, "C/D": p.cd.map_hash}
    if p.variant.sparse:
        md = discover.discover_metadata(p, run)
        assert md.agrees, discover.describe(md)
        assert md.map_hash == p.meta.map_hash  # type: ignore[union-attr]
        for s in p.variant.selectors:
            assert md.holders[s] == sorted(p.meta.holders(s).tolist())  # type: ignore[union-attr]


def test_discovery_sees_a_wrong_map_up_to_relabeling(records: list[dict[str, Any]]) -> None:
    key = "mma.m16n8k16.s32.u8.u8.s32"
    truth = cpu.plan(variant(key), records)
    bad = cpu.plan(variant(key), swap_cells(records, "catalog:mma.m16n8k16.A.u8-s8", 0, 33))

    def run(sel: int | None, inputs: np.ndarray) -> np.ndarray:
        return cpu.emulate(truth, inputs, sel)

    d = discover.discover_dense(bad, run)
    assert not d.agrees and d.differences["A"] and not d.differences["B"]
    assert "lane 0 a0" in " ".join(d.differences["A"])
    assert d.hashes["A"] == truth.a.map_hash  # named in the given labels, it is the truth
    # relabeling the rows of every operand at once is invisible
    perm = np.random.default_rng(1).permutation(16)
    moved = json.loads(json.dumps(records))
    for r in moved:
        if r["shape"] == "m16n8k16" and r["instruction"] == "mma" and r["operand"] in \
                ("A", "C/D") and r.get("cells"):
            for c in r["cells"]:
                c["row"] = int(perm[c["row"]])
    relabelled = cpu.plan(variant(key), moved)
    assert discover.discover_dense(relabelled, run).agrees


def test_metadata_discovery_finds_the_hardware_fields(records: list[dict[str, Any]]) -> None:
    """The catalog's 8-bit metadata (one row per lane, as the H100 showed) is the 'hardware';
    a layout stating the 16-bit pattern instead is what discovery must refute and correct."""
    key = "mma.sp.m16n8k32.s32.s8.s8.s32"
    truth = cpu.plan(variant(key), records)
    wrong_records = json.loads(json.dumps(records))
    meta = next(r for r in wrong_records if r["id"] == "catalog:mma.sp.m16n8k32.meta.u8-s8")
    truth_hash = meta["map_hash"]
    fields = []
    for s in (0, 1):
        for lane in range(32):
            g, tig = lane >> 2, lane & 3
            if tig >> 1 != s:
                continue
            for i in range(16):
                fields.append({"selector": s, "lane": lane, "bit_lo": 2 * i,
                               "bit_hi": 2 * i + 1, "row": g + 8 * (i >> 3),
                               "chunk": ((i & 7) >> 1) + 4 * (tig & 1), "slot": i & 1})
    meta["fields"] = fields
    meta["map_hash"] = cell_table_hash("mma.sp", "m16n8k32", "metadata", "fields", fields)
    given = cpu.plan(variant(key), wrong_records)

    def run(sel: int | None, inputs: np.ndarray) -> np.ndarray:
        return cpu.emulate(truth, inputs, sel)

    md = discover.discover_metadata(given, run)
    assert not md.agrees and md.missing and md.extra
    assert md.map_hash == truth_hash
    assert any("lane 0 bits 16..17 as row 0 chunk 4 slot 0" in x for x in discover.describe(md))
    # and the check itself fails with the catalog's metadata, passes with the truth's
    trial = cpu.make_trials(given, np.random.default_rng(2), 3, 0)
    assert compare.compare(given, cpu.emulate(truth, trial.inputs, 0), trial.expected)
    trial = cpu.make_trials(truth, np.random.default_rng(2), 3, 1)
    assert not compare.compare(truth, cpu.emulate(truth, trial.inputs, 1), trial.expected)


# ---- supervision, isolation, the command line -------------------------------------------------


@pytest.mark.slow
def test_supervisor_survives_a_crash_a_hang_and_its_deadline(records: list[dict[str, Any]]) \
        -> None:
    # two supervised runs at once, each waiting on its own clock while a fake launch sleeps:
    # one has a crash and a hang (the watchdog's 3 s), the other a hang that its 8 s deadline
    # stops (the watchdog's 60 s would come later).  A fake task takes about 10 ms and a
    # child's start (spawn, imports, the device) 1.3-1.5 s at a load of 3 on 2 cores; the hang
    # is the deadline run's first task, so its 8 s leave that start five times over
    crash, hang = "mma.m16n8k16.s32.s8.u8.s32", "mma.m16n8k16.s32.u8.s8.s32"
    stuck = "mma.m16n8k16.s32.s8.s8.s32"
    with ThreadPoolExecutor(2) as pool:
        watched = pool.submit(supervisor.run_supervised, f"fake:crash={crash},hang={hang}",
                              records, trials=1, only="mma.m16n8k16.s32", timeout=3.0,
                              use_ptxas=False)
        stopped = pool.submit(supervisor.run_supervised, f"fake:hang={stuck}", records,
                              trials=1, only="mma.m16n8k16.s32", timeout=60.0, deadline=8.0)
        report, late = watched.result(), stopped.result()
    # the run's deadline stopped the hang, not the task's own watchdog (no wall-clock
    # assertion: the detail names which limit fired, whatever the machine's load)
    cut = {r.variant.key: r for r in late.runs}
    assert cut[stuck].result == "error" and "overall time limit" in cut[stuck].detail
    assert "watchdog" not in cut[stuck].detail
    assert {r.result for k, r in cut.items() if k != stuck} <= {"not-executed", "match"}
    assert any(r.result == "not-executed" for r in cut.values())
    by = {r.variant.key: r for r in report.runs}
    assert by[crash].result == "error" and "died" in by[crash].detail
    assert by[hang].result == "error" and "watchdog" in by[hang].detail
    plain = by["mma.m16n8k16.s32.s8.s8.s32"]
    assert plain.result == "match", plain.detail
    assert by["mma.m16n8k16.s32.u8.u8.s32"].result == "match"
    assert report.info["device"].startswith("fake device")


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('z3', 'lark', 'sympy'):
            raise ImportError('blocked: ' + name)
        return None
sys.meta_path.insert(0, Block())
for m in [m for m in sys.modules if m.split('.')[0] in ('z3', 'lark', 'sympy')]:
    del sys.modules[m]
from formal.cli import main
assert not [m for m in sys.modules if m.split('.')[0] in ('z3', 'lark', 'sympy')]
code = main(['gpu', '--layouts', sys.argv[1], '--device', 'fake', '--only', 'm16n8k8.f32',
             '--record', sys.argv[2], '--no-ptxas', '--trials', '2'])
assert not [m for m in sys.modules if m.split('.')[0] in ('z3', 'lark', 'sympy')]
sys.exit(code)
"""


def test_gpu_module_runs_without_z3_lark_sympy(records: list[dict[str, Any]],
                                               tmp_path: Path) -> None:
    layouts = tmp_path / "layouts.json"
    layouts.write_text(json.dumps({"layouts": records}), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", BLOCKER, str(layouts), str(tmp_path / "ev")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks:" in proc.stdout.splitlines()[-1]
    assert list((tmp_path / "ev").glob("*.json"))


def test_gpu_cli_usage_error_without_layouts_file(tmp_path: Path) -> None:
    from formal.cli import main

    assert main(["gpu", "--layouts", str(tmp_path / "missing.json")]) == 2


# ---- evidence ---------------------------------------------------------------------------------


def _layout(catalog: dict[str, Any], layout_id: str) -> Any:
    return next(x for x in catalog["model"].layouts if x.id == layout_id)


def test_evidence_proves_refutes_and_finds_stale(catalog: dict[str, Any],
                                                 tmp_path: Path) -> None:
    from formal.prove.evidence import Evidence
    from formal.writers.evidence import stale

    records = catalog["records"]
    ev_dir = tmp_path / "evidence"
    report = supervisor.run_all(devices.FakeDevice(records), records, trials=2,
                                only="mma.m16n8k16.s32", do_discover=True, use_ptxas=False)
    path = record.write_evidence(report, ev_dir)
    assert json.loads(path.read_text())["runs"]
    ev = Evidence.load(ev_dir)
    lay = _layout(catalog, "catalog:mma.m16n8k16.A.u8-s8")
    v = ev.verdict(lay)
    assert v.name == "hardware" and v.status == "proved"
    assert "fake device" in v.message and "4 of 4" in v.message
    other = _layout(catalog, "catalog:mma.m16n8k32.A.s8-u8")
    ov = ev.verdict(other)  # a variant this evidence never ran: a warning, not silence
    assert ov.status == "unconfirmed" and ov.severity == "warning"
    assert "no run of them" in ov.message and "mma.m16n8k32.s32.s8.s8.s32" in ov.message
    # a device whose truth differs: discovery refutes the catalog's metadata layout
    key = "mma.sp.m16n8k32.s32.s8.s8.s32"
    truth = json.loads(json.dumps(records))
    meta = next(r for r in truth if r["id"] == "catalog:mma.sp.m16n8k32.meta.u8-s8")
    for f in meta["fields"]:
        f["row"] = (f["row"] + 1) % 16  # a different (still valid) assignment of rows
    meta["map_hash"] = cell_table_hash("mma.sp", "m16n8k32", "metadata", "fields",
                                     meta["fields"])
    bad = supervisor.run_all(devices.FakeDevice(truth), records, trials=2, only=key,
                             do_discover=True, use_ptxas=False)
    assert {r.result for r in bad.runs} == {"mismatch"}
    record.write_evidence(bad, tmp_path / "ev2")
    ev2 = Evidence.load(tmp_path / "ev2")
    mv = ev2.verdict(_layout(catalog, "catalog:mma.sp.m16n8k32.meta.u8-s8"))
    assert mv.status == "refuted", mv.message
    assert "the hardware reads" in mv.message and mv.counterexample["lane"] == 0
    av = ev2.verdict(_layout(catalog, "catalog:mma.sp.m16n8k32.A.u8-s8"))
    assert av.status == "proved" and "recovered" in av.message  # discovery confirmed A
    # stale: every sm_90 variant of the catalog is missing from the small first run
    lines = stale(ev, records)
    assert lines and not any(x.startswith("mma.m16n8k16.s32.s8.s8.s32:") for x in lines)
    assert any(x.startswith("mma.m16n8k16.f32.f16.f16.f32") for x in lines)
    # changing a layout makes its evidence stale
    moved = swap_cells(records, "catalog:mma.m16n8k16.A.u8-s8", 0, 1)
    assert any(x.startswith("mma.m16n8k16.s32.s8.s8.s32") and "changed" in x
               for x in stale(ev, moved))


def test_evidence_compiled_only_is_unconfirmed(catalog: dict[str, Any],
                                                  tmp_path: Path) -> None:
    from formal.prove.evidence import Evidence

    records = catalog["records"]
    report = supervisor.run_all(devices.FakeDevice(records), records, trials=1,
                                only="mma.kind::mxf4.block_scale.m16n8k64", use_ptxas=HAS_PTXAS)
    record.write_evidence(report, tmp_path)
    ev = Evidence.load(tmp_path)
    v = ev.verdict(_layout(catalog, "catalog:mma.m16n8k64.A.e2m1"))
    assert v.status == "unconfirmed" and v.severity == "warning"
    assert "it needs sm_120a" in v.message and "decides nothing" in v.message


def test_prove_cli_takes_evidence(catalog: dict[str, Any], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main

    records = catalog["records"]
    report = supervisor.run_all(devices.FakeDevice(records), records, trials=1, only="mma.m16n8k8",
                                use_ptxas=False)
    record.write_evidence(report, tmp_path)
    main(["prove", "--evidence", str(tmp_path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    hw = {lay["id"]: next(o for o in lay["obligations"] if o["name"] == "hardware")
          for lay in doc["layouts"]}
    assert hw["catalog:mma.m16n8k8.A.tf32"]["status"] == "proved"
    assert hw["catalog:mma.m16n8k32.A.s8-u8"]["status"] == "unconfirmed"


def test_a_repeated_sections_accumulator_serves_what_the_first_copy_serves() -> None:
    """A document that repeats a section names the copies ``...CD.s32@s8-u8#2``: the copy's
    number is not one of the A types (it read as type ``u8#2``, so copy 2 served nothing)."""
    from formal.base.variants import VARIANTS, layout_serves

    v = next(v for v in VARIANTS if v.key == "mma.m16n8k32.s32.s8.s8.s32")
    for suffix in ("", "#2", "#400"):
        assert layout_serves(v, "C/D", "mma", "m16n8k32", ["s32"],
                             f"doc:mma.m16n8k32.CD.s32@u8-s8{suffix}")
        assert not layout_serves(v, "C/D", "mma", "m16n8k32", ["s32"],
                                 f"doc:mma.m16n8k32.CD.s32@s4-u4{suffix}")


def test_a_product_past_f16s_range_is_inf_as_a_device_rounds_it() -> None:
    """``reference_any`` (the planted-wrong-layout runs' reference): 256 * 256 + 0 is past
    f16's 65504, an inexact D: it reads as +inf (code 0x7C00), and numpy's overflow warning
    is not raised for it."""
    import warnings
    v = variant("mma.m16n8k8.f16.f16.f16.f16")
    a = numbers.encode("f16", np.array([[[256.0]]]))
    b = numbers.encode("f16", np.array([[[256.0]]]))
    c = numbers.encode("f16", np.array([[[0.0]]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = numbers.reference_any(v, a, b, c)
    assert d.shape == (1, 1, 1) and int(d[0, 0, 0]) == 0x7C00
