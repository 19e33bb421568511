"""The rows of the move families and of ``wgmma.mma_async`` (dense and sparse) in the one table.

``formal.base.variants`` holds the vocabulary (the one ``Variant`` class, one predicate per
support rule -- ``runs_on``, ``assembles_for``, ``ptx_version`` -- and the mma / mma.sp rows);
this module adds the other families' rows from data tables and generator functions, nothing
hand-written per variant.  It lists what the executor runs or assembles:

- ``ldmatrix``  ``.m8n8 .x1/.x2/.x4 [.trans] .b16`` (sm_75), ``.m16n16 .x1/.x2 .trans`` with
  ``.b8`` or ``.b8x16.b6x16_p32`` / ``.b8x16.b4x16_p64``, ``.m8n16 .x1/.x2/.x4`` with the two
  packed forms (sm_100a, and sm_120a as the spec says: ``ptxas`` assembles them for both and
  refuses them for sm_90a, "Feature '.m16n16' not supported");
- ``stmatrix``  ``.m8n8 .x1/.x2/.x4 [.trans] .b16`` (sm_90) and ``.m16n8 .x1/.x2/.x4 .trans
  .b8`` (sm_100a, sm_120a);
- ``movmatrix`` ``.m8n8.trans.b16`` (sm_75);
- ``wgmma.mma_async`` dense, sm_90a: m64nNk16 ``.f16`` (``.f16`` / ``.f32`` accumulator) and
  ``.bf16`` (``.f32``), m64nNk8 ``.tf32``, m64nNk32 ``.e4m3`` / ``.e5m2`` (all four pairs, both
  accumulators), m64nNk32 ``.s8`` / ``.u8`` (all four pairs, ``.s32``), m64nNk256 ``.b1``
  (``.and.popc``, ``.s32``); A from registers (``a_source="reg"``) or from shared memory
  (``"smem"``), B always from shared memory through a matrix descriptor.

A worked example: ``Variant("ldmatrix", "m8n8", "b16", num=4, trans=True)`` is
``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``: four 8 x 8 matrices of 16-bit elements,
each lane receiving one ``.b32`` register (two elements) of each -- 8 elements a lane, the
``tile`` (32, 8) when the four matrices are stacked one above the other.
``Variant("wgmma", "m64n64k16", "f16", "f16", "f32", "f32", a_source="reg")`` is
``wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`` with A in four ``.b32`` registers a
thread and D in 32 ``.f32`` registers a thread (64 x 64 / 128 threads).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from .variants import (
    F8F6F4_TYPES,
    MOVE_SHAPES,
    MOVES,
    PACKED_FORMATS,
    TMEM_FAMILIES,
    TMEM_NUMS,
    TMEM_SHAPES,
    TYPE_BITS,
    VARIANTS,
    Variant,
    assembles_for,
    move_tile,
    ptx_version,
    runs_on,
)

# wgmma: K of each A type, and the legal N (PTX ISA: multiples of 8 up to 256; the integer
# and .b1 forms skip the odd multiples of 8 above 32).
WGMMA_K: dict[str, int] = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32,
                           "s8": 32, "u8": 32, "b1": 256}
N_ALL = tuple(range(8, 257, 8))
N_INT = (8, 16, 24) + tuple(range(32, 257, 16))


# wgmma.mma_async.sp: A is 2:4 (1:2 for .tf32) sparse, so its K is twice the dense one's;
# the sparsity selector picks the threads of each quad that hold the metadata (PTX ISA,
# wgmma.mma_async.sp: 0 or 1 -- T0,T1 or T2,T3 -- for .f16/.bf16/.tf32, 0 -- all four
# threads -- for the 8-bit types).
WGMMA_SP_K: dict[str, int] = {"f16": 32, "bf16": 32, "tf32": 16, "e4m3": 64, "e5m2": 64,
                              "s8": 64, "u8": 64}
WGMMA_SP_SELECTORS: dict[str, tuple[int, ...]] = {
    "f16": (0, 1), "bf16": (0, 1), "tf32": (0, 1), "e4m3": (0,), "e5m2": (0,), "s8": (0,),
    "u8": (0,)}


def wgmma_ns(a: str) -> tuple[int, ...]:
    return N_INT if a in ("s8", "u8", "b1") else N_ALL


# ---- the table --------------------------------------------------------------------------------

_PACKED = ("b8x16.b6x16_p32", "b8x16.b4x16_p64")


def _moves() -> list[Variant]:
    out: list[Variant] = []
    for num in (1, 2, 4):
        for trans in (False, True):
            out.append(Variant("ldmatrix", "m8n8", "b16", num=num, trans=trans, min_sm=75,
                               ptx=(6, 5)))
    for num in (1, 2):
        for t in ("b8", *_PACKED):
            out.append(Variant("ldmatrix", "m16n16", t, num=num, trans=True, min_sm=100,
                               ptx=(8, 6), arch_suffix="a", families=(12,)))
    for num in (1, 2, 4):
        for t in _PACKED:
            out.append(Variant("ldmatrix", "m8n16", t, num=num, min_sm=100,
                               ptx=(8, 6), arch_suffix="a", families=(12,)))
    for num in (1, 2, 4):
        for trans in (False, True):
            out.append(Variant("stmatrix", "m8n8", "b16", num=num, trans=trans, min_sm=90,
                               ptx=(7, 8)))
    for num in (1, 2, 4):
        out.append(Variant("stmatrix", "m16n8", "b8", num=num, trans=True, min_sm=100,
                           ptx=(8, 6), arch_suffix="a", families=(12,)))
    out.append(Variant("movmatrix", "m8n8", "b16", trans=True, min_sm=75, ptx=(7, 8)))
    return out


# (A types, B types paired with them: "same" or "any" of the A list, accumulators, op)
_WGMMA_TYPES: tuple[tuple[tuple[str, ...], str, tuple[str, ...], str], ...] = (
    (("f16",), "same", ("f16", "f32"), ""),
    (("bf16",), "same", ("f32",), ""),
    (("tf32",), "same", ("f32",), ""),
    (("e4m3", "e5m2"), "any", ("f16", "f32"), ""),
    (("s8", "u8"), "any", ("s32",), ""),
    (("b1",), "same", ("s32",), ".and.popc"),
)


def _wgmma_rows(types: tuple[tuple[Any, ...], ...], ns: tuple[int, ...] | None,
                a_types: tuple[str, ...]) -> Iterator[tuple[str, str, str, str, int, str]]:
    """(a, b, accumulator, op, N, A's source) of each row of a wgmma type table."""
    for atypes, pairing, accs, op in types:
        for a in atypes:
            if a_types and a not in a_types:
                continue
            for b in (atypes if pairing == "any" else (a,)):
                for c in accs:
                    for n in wgmma_ns(a):
                        if ns is None or n in ns:
                            for src in ("reg", "smem"):
                                yield a, b, c, op, n, src


def _ptx_of(a: str, b: str, sparse: bool) -> tuple[int, int]:
    """Mixed s8/u8 needs PTX 8.4; wgmma.sp 8.2, wgmma 8.0."""
    return (8, 4) if a in ("s8", "u8") and a != b else ((8, 2) if sparse else (8, 0))


def wgmma_variants(ns: tuple[int, ...] | None = None, a_types: tuple[str, ...] = ()) \
        -> list[Variant]:
    """Every dense wgmma row for the given N (default: every legal N of each type)."""
    return [Variant("wgmma", f"m64n{n}k{WGMMA_K[a]}", a, b, c, c, op=op, a_source=src,
                    min_sm=90, ptx=_ptx_of(a, b, False), arch_suffix="a")
            for a, b, c, op, n, src in _wgmma_rows(_WGMMA_TYPES, ns, a_types)]


_WGMMA_SP_TYPES = tuple(row for row in _WGMMA_TYPES if row[0] != ("b1",))


def wgmma_sp_variants(ns: tuple[int, ...] | None = None, a_types: tuple[str, ...] = ()) \
        -> list[Variant]:
    """Every wgmma.mma_async.sp row for the given N: each A/B/D type pairing of the dense
    table but .b1, A from registers or shared memory, each legal sparsity selector."""
    return [Variant("wgmma.sp", f"m64n{n}k{WGMMA_SP_K[a]}", a, b, c, c, op=op,
                    a_source=src, min_sm=90, ptx=_ptx_of(a, b, True), arch_suffix="a",
                    selector=sel)
            for a, b, c, op, n, src in _wgmma_rows(_WGMMA_SP_TYPES, ns, a_types)
            for sel in WGMMA_SP_SELECTORS[a]]


def wgmma_sp_dtypes(k: int, a_types: Sequence[str]) -> tuple[str, ...]:
    """The accumulator types of the wgmma.sp rows of K ``k`` whose A is one of ``a_types``
    (all A types of that K when none is given)."""
    out: list[str] = []
    for atypes, _pairing, accs, _op in _WGMMA_SP_TYPES:
        for a in atypes:
            if WGMMA_SP_K[a] == k and (not a_types or a in a_types):
                out.extend(c for c in accs if c not in out)
    return tuple(out)


def wgmma_sp_atypes(k: int) -> tuple[str, ...]:
    return tuple(a for a, kk in WGMMA_SP_K.items() if kk == k)


# What the device evidence covers: every move; every wgmma type at N = 8, 64, 256; and
# every N of one type (f16 -> f32).
WGMMA_NS_EVERY_TYPE = (8, 64, 256)


def _wgmma_selected() -> list[Variant]:
    seen: dict[str, Variant] = {}
    for v in wgmma_variants(WGMMA_NS_EVERY_TYPE) + [
            v for v in wgmma_variants(None, ("f16",)) if v.c == "f32"]:
        seen.setdefault(v.key, v)
    return sorted(seen.values(), key=lambda v: (v.a, v.b, v.c, v.n, v.a_source))


MATRIX_VARIANTS: tuple[Variant, ...] = tuple(_moves() + _wgmma_selected())
BY_KEY: dict[str, Variant] = {v.key: v for v in MATRIX_VARIANTS}
_MMA_BY_KEY: dict[str, Variant] = {v.key: v for v in VARIANTS}

# wgmma.mma_async.sp: every type pairing and selector at N = 8, 64, 256, A from registers
# and from shared memory.  The GPU runner (``formal.execute.gpu_matrix``) runs them
# (``--only wgmma.sp.``); until the evidence holds a run of one (``sparse_owed``), the
# evidence owes none (``formal.writers.evidence``) and their layouts' ``hardware`` obligation
# says they were assembled, not run (``executed``).
WGMMA_SP_VARIANTS: tuple[Variant, ...] = tuple(wgmma_sp_variants(WGMMA_NS_EVERY_TYPE))


def sparse_owed(run_keys: Iterable[str]) -> bool:
    """Does the evidence owe runs of every wgmma.sp variant the device can run?  Yes once
    any of its runs (``run_keys``) is of wgmma.sp: the first device run switches it on."""
    return any(k.startswith("wgmma.sp.") for k in run_keys)


def executed(v: Variant) -> bool:
    """Whether the recorded evidence has always been owed runs of ``v`` (the moves and dense
    wgmma); wgmma.sp only once it holds one (``sparse_owed``)."""
    return not v.sparse and not v.tmem


def tmem_variants() -> list[Variant]:
    """Every ``tcgen05.ld`` / ``tcgen05.st`` form (sm_100a, PTX ISA 8.6): each shape with
    each ``.num`` whose register count is at most 128 (PTX ISA Table 47), with and without
    ``.pack::16b`` (ld) / ``.unpack::16b`` (st).  A register holds one 32-bit column (``b32``
    elements) or, packed, two 16-bit halves (``b16`` elements)."""
    return [Variant(fam, shape, "b16" if pack else "b32", min_sm=100, ptx=(8, 6),
                    arch_suffix="a", num=num, pack=pack)
            for fam in TMEM_FAMILIES for shape, (_l, _b, most) in TMEM_SHAPES.items()
            for num in TMEM_NUMS if num <= most for pack in (False, True)]


# tcgen05.ld / tcgen05.st: assembled for sm_100a, never run (no lent device is sm_100a).
TMEM_VARIANTS: tuple[Variant, ...] = tuple(tmem_variants())


# The executor's name of each register operand of a run (``formal.execute.matrix.operands``)
# and the operand a layout of the catalog gives it: ldmatrix's ``r`` are its destination
# registers (C/D), stmatrix's its source (A), movmatrix's ``a`` / ``d`` its source and
# destination.
CATALOG_OPERAND: dict[tuple[str, str], str] = {
    ("ldmatrix", "r"): "C/D", ("stmatrix", "r"): "A", ("movmatrix", "a"): "A",
    ("movmatrix", "d"): "C/D", ("wgmma", "A"): "A", ("wgmma", "C/D"): "C/D",
    ("wgmma.sp", "A"): "A", ("wgmma.sp", "C/D"): "C/D", ("wgmma.sp", "meta"): "metadata",
    ("tcgen05.ld", "r"): "C/D", ("tcgen05.st", "r"): "A",
}


def run_operand(instruction: str, operand: str) -> str | None:
    """The executor's name (``r``, ``a``, ``d``, ``A``, ``C/D``) of a layout's operand."""
    for (ins, op), cat in CATALOG_OPERAND.items():
        if ins == instruction and cat == operand:
            return op
    return None


def matrix_layout_serves(v: Variant, op: str, instruction: str, shape: str, operand: str,
           types: Sequence[str], n_values: Sequence[int] = ()) -> bool:
    """Does a layout (its instruction, shape as spelled -- ``m8n8.x4.trans``,
    ``m64nNk16`` --, operand, types, and the N it is stated for) give operand ``op`` of a
    run of ``v``?  ``catalog:ldmatrix.m8n8.x4.trans.b16`` gives ``r`` of
    ``ldmatrix.m8n8.x4.trans.b16``; ``catalog:wgmma.m64nNk16.D.f32`` (N = 8..256) gives
    ``C/D`` of ``wgmma.m64n64k16.f32.f16.f16.rs``."""
    if instruction != v.instruction or operand != CATALOG_OPERAND.get((v.instruction, op)):
        return False
    if v.tmem:
        return shape == v.spelled_shape and v.a in types
    if v.wgmma:
        family = f"m64nNk{v.k}"
        if operand in ("A", "metadata"):
            return shape in (v.shape, family) and v.a in types
        return v.c in types and (shape == v.shape or (shape == family and v.n in n_values))
    # a move's layout is filed under the title's spelled shape (``MoveInstr.variant``); a
    # title without .xN moves one matrix
    spelled = (v.spelled_shape, replace(v, num=0).spelled_shape if v.num == 1 else "")
    return shape in spelled and v.a in types


def variant(key: str) -> Variant:
    """The row of ``key``, of any family (an evidence file's ``key``), also for a wgmma N
    outside the evidence selection; ``KeyError`` when no row has it."""
    if key in BY_KEY:
        return BY_KEY[key]
    if key in _MMA_BY_KEY:
        return _MMA_BY_KEY[key]
    return _other_rows()[key]


@lru_cache(maxsize=1)
def _other_rows() -> dict[str, Variant]:
    """Every wgmma, wgmma.sp (each N), tcgen05 and block-scale row by key, built on the
    first lookup: ``variant`` reads thousands of evidence runs, each one a dict lookup."""
    rows: dict[str, Variant] = {}
    for v in wgmma_variants() + wgmma_sp_variants() + list(TMEM_VARIANTS) \
            + list(BLOCK_SCALE_VARIANTS) + list(TCGEN05_MMA_VARIANTS) \
            + list(TCGEN05_MMA_SP_VARIANTS) + list(TCGEN05_MMA_SCALE_VARIANTS):
        rows.setdefault(v.key, v)
    return rows


__all__ = ["Variant", "move_tile", "TMEM_FAMILIES",
           "MOVE_SHAPES", "PACKED_FORMATS", "MATRIX_VARIANTS", "BY_KEY",
           "variant", "wgmma_variants",
           "CATALOG_OPERAND", "run_operand", "matrix_layout_serves",
           "runs_on", "assembles_for", "ptx_version", "WGMMA_K", "wgmma_ns", "MOVES",
           "WGMMA_SP_K", "WGMMA_SP_SELECTORS", "wgmma_sp_variants", "wgmma_sp_dtypes",
           "wgmma_sp_atypes", "WGMMA_SP_VARIANTS",
           "TMEM_VARIANTS", "tmem_variants", "executed", "sparse_owed"]


# ---- block-scaled mma.sync (PTX ISA "Block Scaling for mma.sync"): every legal form ---------
# (kind, shape, element types, scale type, .scale_vec::NX, PTX ISA version).  Their scale-factor
# layouts are proved in formal.prove.block_scale; their kernels pass scale-a-data, scale-b-data
# and the byte-id / thread-id selectors per run (formal.execute.ptx).  sm_120a only: assembled,
# never run.  .kind::mxf4nvf4 with .scale_vec::4X and .ue8m0 came with PTX ISA 9.1: ptxas 13.0
# (PTX ISA 9.0) refuses it ("Illegal modifier '.scale_vec::4X' ... with type '.ue8m0'").
BLOCK_SCALE_FORMS: tuple[tuple[str, str, tuple[str, ...], str, int, tuple[int, int]], ...] = (
    ("mxf8f6f4", "m16n8k32", F8F6F4_TYPES, "ue8m0", 1, (8, 7)),
    ("mxf4", "m16n8k64", ("e2m1",), "ue8m0", 2, (8, 7)),
    ("mxf4nvf4", "m16n8k64", ("e2m1",), "ue8m0", 2, (8, 7)),
    ("mxf4nvf4", "m16n8k64", ("e2m1",), "ue8m0", 4, (9, 1)),
    ("mxf4nvf4", "m16n8k64", ("e2m1",), "ue4m3", 4, (8, 7)),
)
BLOCK_SCALE_VARIANTS: tuple[Variant, ...] = tuple(
    Variant("mma", shape, a, b, "f32", "f32", 120, ptx, kind, "", "a", stype, scale_vec=vec)
    for kind, shape, types, stype, vec, ptx in BLOCK_SCALE_FORMS for a in types for b in types)


# ---- block-scaled tcgen05.mma (PTX ISA "Block Scaling" of tcgen05.mma): every legal form ------
# (kind, .scale_vectorsize as written, scale type, K, block size: the K elements one factor
# scales).  A row of A has K / block factors: 1X, 2X and 4X at their K, three (block32) or six
# (block16) at K = 96.  Their tensor-memory layouts are proved in formal.prove.tc_scale; sm_100a
# only: assembled, never run.
TCGEN05_SCALE_FORMS: tuple[tuple[str, str, str, int, int], ...] = (
    ("mxf8f6f4", "scale_vec::1X", "ue8m0", 32, 32),
    ("mxf4", "scale_vec::2X", "ue8m0", 64, 32),
    ("mxf4nvf4", "scale_vec::2X", "ue8m0", 64, 32),
    ("mxf4nvf4", "scale_vec::4X", "ue8m0", 64, 16),
    ("mxf4nvf4", "scale_vec::4X", "ue4m3", 64, 16),
    ("mxf4", "block32", "ue8m0", 96, 32),
    ("mxf4nvf4", "block32", "ue8m0", 96, 32),
    ("mxf4nvf4", "block16", "ue8m0", 96, 16),
    ("mxf4nvf4", "block16", "ue4m3", 96, 16),
)
# ---- tcgen05.mma data-path layouts (PTX ISA 9.7.16.10.5, the N values of Table 39) ---------
# (layout, M, cta_group, A sparsity, .ws, the mma's legal N).  A row's layout keeps D in tensor
# memory as formal/catalog/tcgen05-datapath.md states; formal.prove.datapath proves each for
# every N here.  M = 128 with cta_group::1 is Layout D with and without .ws (.ws: N 64 / 128 /
# 256, within the steps of 8).
DATAPATH_N_STEP8 = tuple(range(8, 257, 8))
DATAPATH_N_STEP16 = tuple(range(16, 257, 16))
DATAPATH_N_WS = (64, 128, 256)
DATAPATH_ROWS: tuple[tuple[str, int, int, str, str, tuple[int, ...]], ...] = (
    ("G", 32, 1, "either", "yes", DATAPATH_N_WS),
    ("E", 64, 1, "either", "yes", DATAPATH_N_WS),
    ("F", 64, 1, "either", "no", DATAPATH_N_STEP8),
    ("D", 128, 1, "either", "either", DATAPATH_N_STEP8),
    ("B", 128, 2, "dense", "n/a", DATAPATH_N_STEP16),
    ("C", 128, 2, "sparse", "n/a", DATAPATH_N_STEP16),
    ("A", 256, 2, "either", "n/a", DATAPATH_N_STEP16),
)
TMEM_LANE_COUNT, TMEM_COLUMN_COUNT, TMEM_SUBPARTITION = 128, 512, 32
# Sparse tcgen05.mma.sp: the sparsity row (formal.base.variants.SPARSITY, the ones mma.sp uses)
# that each .kind compresses A by: 1:2 tf32, 2:4 16- and 8-bit, 4:8 in pairs for 4-bit.
TCGEN05_SPARSITY: dict[str, str] = {
    "tf32": "tf32", "f16": "f16", "f8f6f4": "u8", "mxf8f6f4": "u8", "i8": "u8",
    "mxf4": "e2m1", "mxf4nvf4": "e2m1"}

# ---- tcgen05.cp: shared memory -> tensor memory (PTX ISA 9.7.16.9.2) ------------------------
# Each shape ``lanes x size``: (source rows, bits a row, the multicasts it takes: "" none).
# .64x128b requires one of the two .warpx2 pairings, .32x128b requires .warpx4.
TCGEN05_CP_SHAPES: dict[str, tuple[int, int, tuple[str, ...]]] = {
    "128x256b": (128, 256, ("",)), "4x256b": (4, 256, ("",)), "128x128b": (128, 128, ("",)),
    "64x128b": (64, 128, ("warpx2::02_13", "warpx2::01_23")), "32x128b": (32, 128, ("warpx4",))}
# The warps of the warpgroup that receive the same data under each multicast (warp w owns
# lanes 32w..32w+31); without one, each warp's lanes receive their own rows.
TCGEN05_CP_WARPS: dict[str, tuple[tuple[int, ...], ...]] = {
    "": ((0,), (1,), (2,), (3,)), "warpx2::02_13": ((0, 2), (1, 3)),
    "warpx2::01_23": ((0, 1), (2, 3)), "warpx4": ((0, 1, 2, 3),)}
# The optional decompression: .dst_fmt.src_fmt ("" none); each src_fmt is PACKED_FORMATS'.
TCGEN05_CP_FORMATS = ("", "b8x16.b6x16_p32", "b8x16.b4x16_p64")


def tcgen05_cp_forms() -> list[tuple[str, str, str]]:
    """Every (shape, multicast, format) of tcgen05.cp the syntax admits, for each cta_group."""
    return [(shape, mc, fmt) for shape, (_r, _b, mcs) in TCGEN05_CP_SHAPES.items()
            for mc in mcs for fmt in TCGEN05_CP_FORMATS]


def tcgen05_cp_opcode(shape: str, multicast: str = "", fmt: str = "",
                      cta_group: int = 1) -> str:
    """``tcgen05.cp.cta_group::1.64x128b.warpx2::02_13.b8x16.b6x16_p32``."""
    return ".".join(p for p in ("tcgen05.cp", f"cta_group::{cta_group}", shape, multicast, fmt)
                    if p)


# ---- tcgen05.mma run on a device (``ptxlayout gpu``, family ``tcgen05-mma``) -----------------
# Each plain kind's types (A, B, D) and K (32 bytes of A's row: one instruction's K slice).
TCGEN05_MMA_KINDS: dict[str, tuple[str, str, str, int]] = {
    "tf32": ("tf32", "tf32", "f32", 8), "f16": ("f16", "f16", "f32", 16),
    "f8f6f4": ("e4m3", "e4m3", "f32", 32), "i8": ("s8", "s8", "s32", 32)}
# The N each data path runs at (every layout states both).
TCGEN05_MMA_NS = (64, 128)


def tcgen05_mma_variants() -> list[Variant]:
    """A row per dense data-path layout (A, B, D, E, F, G; Layout C is the sparse pair's),
    N of ``TCGEN05_MMA_NS`` and plain kind: ``tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.
    layoutD`` is a one-CTA M = 128 mma whose D is read back by Layout D.  sm_100a only: no
    lent device runs them (``ptxlayout gpu`` assembles them there)."""
    return [Variant("tcgen05.mma", f"m{m}n{n}k{k}", a, b, d, d, min_sm=100, ptx=(8, 6),
                    kind=kind, arch_suffix="a", datapath=letter)
            for letter, m, _g, sparsity, _ws, ns in DATAPATH_ROWS if sparsity != "sparse"
            for n in TCGEN05_MMA_NS if n in ns
            for kind, (a, b, d, k) in TCGEN05_MMA_KINDS.items()]


TCGEN05_MMA_VARIANTS: tuple[Variant, ...] = tuple(tcgen05_mma_variants())
# tcgen05.mma.sp run on a device: the one-CTA data paths whose metadata the catalog places
# (D at M = 128, also as .ws; the .ws E and G at M = 64 and 32), A compressed to K/2, each kind at
# every selector its metadata admits (tf32 and f16: 0 and 1; 8-bit: 0), N = 64.  F (M = 64
# without .ws) and C (the pair) have no metadata layout in the catalog.
TCGEN05_MMA_SP_SELECTORS: dict[str, tuple[int, ...]] = {
    "tf32": (0, 1), "f16": (0, 1), "f8f6f4": (0,), "i8": (0,)}
# The sparse rows' data paths, and ".ws" where the path holds D with and without it: Layout D
# issued by one CTA and as .ws (M = 128, its own metadata layout ``tcgen05.sp_meta.ws.m128``);
# E and G are .ws by the layout.
TCGEN05_MMA_SP_PATHS: tuple[tuple[str, str], ...] = (("G", ""), ("E", ""), ("D", ""),
                                                     ("D", ".ws"))


def tcgen05_mma_sp_variants() -> list[Variant]:
    """``tcgen05.mma.sp.m128n64k32.kind::f16.f32.f16.f16.layoutD.sel1``: a row per sparse
    data path (``TCGEN05_MMA_SP_SELECTORS``' comment), kind and selector; K is twice the
    dense row's."""
    return [Variant("tcgen05.mma.sp", f"m{datapath_row(letter)[1]}n64k{2 * k}", a, b, d, d,
                    min_sm=100, ptx=(8, 6), kind=kind, arch_suffix="a", datapath=letter,
                    selector=sel, ws=ws == ".ws")
            for letter, ws in TCGEN05_MMA_SP_PATHS
            for kind, (a, b, d, k) in TCGEN05_MMA_KINDS.items()
            for sel in TCGEN05_MMA_SP_SELECTORS[kind]]



# Block-scaled tcgen05.mma run on a device: (data path, kind, .scale_vec::NX, scale type, A, B,
# which (scale_A ID, scale_B ID) pairs: "all" the legal ones, "diagonal" (i, i)).  The legal IDs
# by .scale_vec (9.7.16.10.7): 1X any byte of the word, 2X the two 16-bit halves, 4X the whole
# word.  One CTA, M = 128 (Layout D) and M = 64 (Layout F; .ws has no block-scaled kind), and a
# pair (.cta_group::2: M = 256, Layout A, and M = 128, Layout B; each CTA's factors in its own
# tensor memory), N = 64; the mxf4 kinds read A and B packed two 4-bit elements a byte.
TCGEN05_SCALE_IDS: dict[int, tuple[int, ...]] = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}
TCGEN05_MMA_SCALE_ROWS: tuple[tuple[str, str, int, str, str, str, str], ...] = (
    ("D", "mxf8f6f4", 1, "ue8m0", "e4m3", "e4m3", "all"),
    ("D", "mxf8f6f4", 1, "ue8m0", "e5m2", "e4m3", "diagonal"),
    ("D", "mxf4", 2, "ue8m0", "e2m1", "e2m1", "all"),
    ("D", "mxf4nvf4", 2, "ue8m0", "e2m1", "e2m1", "all"),
    ("D", "mxf4nvf4", 4, "ue8m0", "e2m1", "e2m1", "all"),
    ("D", "mxf4nvf4", 4, "ue4m3", "e2m1", "e2m1", "all"),
    ("F", "mxf8f6f4", 1, "ue8m0", "e4m3", "e4m3", "diagonal"),
    ("F", "mxf4", 2, "ue8m0", "e2m1", "e2m1", "diagonal"),
    ("F", "mxf4nvf4", 4, "ue4m3", "e2m1", "e2m1", "all"),
    ("A", "mxf8f6f4", 1, "ue8m0", "e4m3", "e4m3", "diagonal"),
    ("B", "mxf8f6f4", 1, "ue8m0", "e4m3", "e4m3", "diagonal"),
)


def tcgen05_mma_scale_variants() -> list[Variant]:
    """``tcgen05.mma.m128n64k32.kind::mxf8f6f4.block_scale.scale_vec::1X.ue8m0.f32.e4m3.e4m3.
    layoutD.sf3_1``: a row per ``TCGEN05_MMA_SCALE_ROWS`` entry and (scale_A ID, scale_B ID);
    K is 32 bytes of A's row (32 8-bit elements, 64 packed 4-bit ones)."""
    out = []
    for letter, kind, vec, stype, a, b, pairs in TCGEN05_MMA_SCALE_ROWS:
        m = datapath_row(letter)[1]
        ids = TCGEN05_SCALE_IDS[vec]
        for sa, sb in ([(i, i) for i in ids] if pairs == "diagonal"
                       else [(i, j) for i in ids for j in ids]):
            out.append(Variant("tcgen05.mma", f"m{m}n64k{256 // TYPE_BITS[a]}", a, b, "f32",
                               "f32", min_sm=100, ptx=(8, 6), kind=kind, arch_suffix="a",
                               scale=stype, scale_vec=vec, datapath=letter,
                               scale_ids=(sa, sb)))
    return out


def datapath_row(letter: str) -> tuple[str, int, int, str, str, tuple[int, ...]]:
    """The ``DATAPATH_ROWS`` row of a layout letter."""
    return next(r for r in DATAPATH_ROWS if r[0] == letter)


# the names the tcgen05 metadata layouts and data paths go by in runs and hashes (the executor
# writes them, the prover reads them: here, so that neither imports the other's modules)
META_INSTRUCTION = "tcgen05.sp_meta"
DATAPATH_INSTRUCTION = "tcgen05.datapath"


def meta_id(kind: str, m: int, ws: bool) -> str:
    """The catalog's metadata layout of a form: ``tcgen05.sp_meta.ws.m64.f16``."""
    return f"{META_INSTRUCTION}{'.ws' if ws else ''}.m{m}.{kind}"


def issued_ws(v: Variant) -> bool:
    """Is tcgen05.mma row ``v`` issued as ``.ws`` (its data path's, or the row's own flag)?"""
    return v.ws or datapath_row(v.datapath)[4] == "yes"


TCGEN05_MMA_SP_VARIANTS: tuple[Variant, ...] = tuple(tcgen05_mma_sp_variants())
TCGEN05_MMA_SCALE_VARIANTS: tuple[Variant, ...] = tuple(tcgen05_mma_scale_variants())
