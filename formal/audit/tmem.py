"""CuTe's SM100 TMEM copy atoms (tcgen05.ld / tcgen05.st) against the catalog's TMEM maps.

A TMEM atom of ``cute/atom/copy_traits_sm100.hpp`` states three layouts.  ``ValID`` sends a
*logical* bit of the block the warp moves to the bit's TMEM address, lane * 2^21 + column *
32 + bit (``TMEM::DP_b``, the lane stride in bits, is read from ``tmem_allocator_sm100.hpp``:
the address is (lane << 16) + column, in 32-bit columns).  The register side (a load's
``DstLayout``, a store's ``SrcLayout``) sends (thread, bit of its registers) to a logical bit;
the TMEM side is the address every thread passes (stride 0 over threads).  So the element e of
thread t -- register bits ``w*e .. w*e + w-1``, w = 32 (16 with ``.pack::16b`` /
``.unpack::16b``) -- is, through both, w bits of TMEM that must be bits 0 .. w-1 of one
(lane, column): the cell the catalog gives (lane t, element e).

A tiny worked example, ``SM100_TMEM_LOAD_16dp256b1x`` (``tcgen05.ld.16x256b.x1.b32``):
``ValID = (256,16):(1,DP_b)`` makes logical bit x the bit x % 32 of lane x / 256, column
(x % 256) / 32; ``DstLayout = ((4,8),(64,2)):((64,256),(1,2048))`` gives thread 5 (digits
1, 1: 64 + 256) and register 2 (bits 64..95, digits (0, 1): 2048) the logical bits 2368 + j,
j < 32: lane 2368 / 256 = 9, column (2368 % 256) / 32 = 2, bits 0..31 -- the catalog's
(row 9, col 2) of lane 5, element 2.  And so for every thread and register: ``equal``.

``.16x32bx2`` is two accesses: threads 16..31 read at ``taddr + immHalfSplitoff``, the
instruction's immediate, which the catalog draws as the columns after the first access's.  So
the spec's TMEM column of a catalog column c >= half (half: the first access's columns) is
``imm + c - half``; CuTe's ValID must name that column, with the immediate its own asm passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model.cute import CuteLayout
from .compare import Counterexample, first_difference, index_array, spec_cells, spec_table
from .project import Layout, Variant
from .views import axis_index

LANE_BITS = 21  # a TMEM bit address: (lane << 16 | column) * 32 + bit
COLUMN_BITS = 32


def split_address(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lane, column, bit) of TMEM bit addresses."""
    return p >> LANE_BITS, (p & ((1 << LANE_BITS) - 1)) // COLUMN_BITS, p % COLUMN_BITS


def spec_columns(v: Variant, immediates: Sequence[int]) -> tuple[int, int]:
    """(half, imm): the catalog's columns of the first access and the column the second one
    starts at in TMEM; (0, 0) where the shape is one access."""
    if v.shape != "16x32bx2":
        return 0, 0
    half = v.tile[1] // 2
    return half, (immediates[-1] if immediates else half)


def tmem_cells(reg: CuteLayout, val_id: CuteLayout, width: int) -> np.ndarray:
    """(thread, element) -> the (lane, column) its ``width`` register bits name through the
    logical bits, or -1 where they are not bits 0 .. width-1 of one cell, in order."""
    idx = index_array(reg)
    t_n, v_n = idx.shape
    e_n = v_n // width
    addr = axis_index(val_id)
    ok_idx = (idx >= 0) & (idx < len(addr))
    phys = np.where(ok_idx, addr[np.clip(idx, 0, len(addr) - 1)], -1)
    lane, col, bit = split_address(np.maximum(phys, 0))
    lane3 = lane[:, :e_n * width].reshape(t_n, e_n, width)
    col3 = col[:, :e_n * width].reshape(t_n, e_n, width)
    bit3 = bit[:, :e_n * width].reshape(t_n, e_n, width)
    good = ok_idx[:, :e_n * width].reshape(t_n, e_n, width).all(axis=2)
    good &= (lane3 == lane3[:, :, :1]).all(axis=2) & (col3 == col3[:, :, :1]).all(axis=2)
    good &= (bit3 == np.arange(width)).all(axis=2)
    out = np.stack([lane3[:, :, 0], col3[:, :, 0]], axis=-1)
    out[~good] = -1
    return out


def _physical(want: np.ndarray, half: int, imm: int) -> np.ndarray:
    """The catalog's cells as TMEM (lane, column): column c >= half is ``imm + c - half``."""
    out = want.copy()
    if half:
        second = out[..., 1] >= half
        out[..., 1] = np.where(second, out[..., 1] - half + imm, out[..., 1])
    return out


def _cell(x: tuple[int, int] | None) -> str:
    return f"(lane {x[0]}, col {x[1]})" if x is not None else "no whole element"


def compare_tmem(v: Variant, reg: CuteLayout, mem: CuteLayout, val_id: CuteLayout | None,
                 spec: Layout, immediates: Sequence[int] = ()) \
        -> dict[str, tuple[str, Counterexample | None, str]]:
    """Verdicts ``{"reg": ..., "tmem": ...}`` (verdict, counterexample, message) of one TMEM
    atom against ``spec``, the catalog's layout of its form."""
    if val_id is None:
        why = "the atom's ValID (logical bit -> TMEM address) could not be read"
        return {"reg": ("unreadable", None, why), "tmem": ("unreadable", None, why)}
    table = spec_table(spec)
    if isinstance(table, str):
        return {"reg": ("unreadable", None, table), "tmem": ("unreadable", None, table)}
    width = 16 if v.pack else 32
    half, imm = spec_columns(v, immediates)
    want = _physical(spec_cells(table, list(range(len(table.cells)))), half, imm)
    out: dict[str, tuple[str, Counterexample | None, str]] = {}
    out["tmem"] = tmem_side(mem, val_id, want, width)
    got = tmem_cells(reg, val_id, width)
    found = first_difference(got, want)
    where = f"; the second access at column {imm} (its asm's immHalfSplitoff)" if half else ""
    if found is None:
        out["reg"] = ("equal", None, f"registers: each {width}-bit element is bits 0..{width - 1}"
                      f" of the spec's TMEM (lane, column){where}")
    else:
        t, e, g, w = found
        out["reg"] = ("differs", Counterexample(t, e, g, w),
                      f"registers: thread {t}, element {e}: CuTe says {_cell(g)}, the spec "
                      f"says {_cell(w)}{where}")
    return out


# (the TMEM-side layout, ValID, the element width, the spec's cells' type, shape and digest)
# -> its verdict: the load and store atoms of one shape, and the .x1 .. .x128 repetitions
# that share a ValID, ask the same question (half of the 148 of the CUTLASS wheel)
_SIDES: dict[tuple[Any, ...], tuple[str, Counterexample | None, str]] = {}


def tmem_side(mem: CuteLayout, val_id: CuteLayout, want: np.ndarray, width: int) \
        -> tuple[str, Counterexample | None, str]:
    """``_tmem_side``, once a process for each of its inputs (the spec's cells by value: the
    SHA-256 of their bytes, not the bytes, is kept)."""
    key = (mem, val_id, width, want.dtype.str, want.shape,
           hashlib.sha256(np.ascontiguousarray(want).tobytes()).digest())
    hit = _SIDES.get(key)
    if hit is None:
        hit = _SIDES[key] = _tmem_side(mem, val_id, want, width)
    return hit


def _tmem_side(mem: CuteLayout, val_id: CuteLayout, want: np.ndarray, width: int) \
        -> tuple[str, Counterexample | None, str]:
    """Every thread passes the whole block (stride 0 over threads, logical bit v at value v),
    and ValID sends the logical bits onto exactly the bits 0..width-1 of the spec's cells."""
    if mem.rank != 2:
        return "unreadable", None, f"{mem} is not a (thread, value) layout (rank 2)"
    t_idx, v_idx = axis_index(mem.mode(0)), axis_index(mem.mode(1))
    addr = axis_index(val_id)
    moved = np.nonzero(t_idx != 0)[0]
    if len(moved):
        t = int(moved[0])
        return "differs", Counterexample(t, 0, None, None), \
            f"TMEM: thread {t} passes another address than thread 0 (the warp's one taddr)"
    if len(v_idx) != len(addr) or (v_idx != np.arange(len(addr))).any():
        bad = next((i for i in range(min(len(v_idx), len(addr))) if v_idx[i] != i),
                   min(len(v_idx), len(addr)))
        return "differs", Counterexample(0, bad, None, None), \
            f"TMEM: value {bad} is not logical bit {bad} ({len(v_idx)} values, ValID " \
            f"{len(addr)} bits)"
    return named_bits(addr, want, width)


def named_bits(addr: np.ndarray, want: np.ndarray, width: int) \
        -> tuple[str, Counterexample | None, str]:
    """ValID's TMEM bit address of each logical bit, in order (``addr``), against the spec's
    cells (``want``: (lane, column) pairs, -1 for none): each logical bit names one of bits
    0..width-1 of a cell, no two the same, and every such bit is named.  The first logical
    bit that is not, or else the smallest bit no logical bit names, is the difference (as
    ``named_bits_plain`` finds it one bit at a time)."""
    flat = want.reshape(-1, 2)
    flat = flat[flat[:, 0] >= 0]
    if len(flat) and (flat[:, 1].min() < 0 or flat[:, 1].max() >= 1 << (LANE_BITS - 5)):
        return named_bits_plain(addr, want, width)  # a column the address cannot hold
    # each (lane, column, bit) as its TMEM bit address: the same order as the tuples, and
    # strictly increasing (a cell's address is a multiple of 32, its bits below the next's)
    need = np.unique((flat[:, 0] << LANE_BITS) + flat[:, 1] * COLUMN_BITS)[:, None] \
        + np.arange(width)
    need = need.reshape(-1)
    # one stable sort of the addresses answers all three questions: the first logical bit of
    # each address (the first of its run of equals), whether each is needed and which needed
    # bit none names (both by binary search in a sorted array of distinct values)
    order = np.argsort(addr, kind="stable")
    ranked = addr[order]
    again = ranked[1:] == ranked[:-1]
    first = np.ones(len(addr), dtype=bool)
    first[order[1:][again]] = False
    bad = np.nonzero(~first | ~_within(addr, need))[0]
    if len(bad):
        x = int(bad[0])
        lane, col, bit = (int(a) for a in split_address(addr[x]))
        return "differs", Counterexample(0, x, (lane, col), None), \
            f"TMEM: logical bit {x} is bit {bit} of (lane {lane}, col {col}), " \
            + ("which another logical bit names too" if not first[x] else
               "outside the spec's cells and bits")
    named = ranked[np.concatenate(([True], ~again))] if len(ranked) else ranked
    missing = need[~_within(need, named)]  # sorted: (lane, column, bit) in order
    if len(missing):
        r, c, b = (int(a) for a in split_address(missing[0]))
        return "differs", Counterexample(0, len(addr), None, (r, c)), \
            f"TMEM: bit {b} of the spec's (lane {r}, col {c}) is named by no logical bit"
    lanes = 1 + int(flat[:, 0].max())
    cols = len(np.unique(flat[:, 1]))
    return "equal", None, f"TMEM: one taddr for the warp; ValID names bits 0..{width - 1} " \
        f"of each of the {lanes} lanes x {cols} columns once"


def _within(x: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Whether each of ``x`` is in ``sorted_set`` (strictly increasing): ``np.isin``, by
    binary search."""
    if not len(sorted_set):
        return np.zeros(len(x), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, x), len(sorted_set) - 1)
    return sorted_set[at] == x


def named_bits_plain(addr: np.ndarray, want: np.ndarray, width: int) \
        -> tuple[str, Counterexample | None, str]:
    """``named_bits`` one logical bit at a time, with (lane, column, bit) tuples: taken where a
    column is past what a TMEM address holds (tests/test_tmem_named_bits.py holds the two
    equal)."""
    cells = {(int(r), int(c)) for r, c in want.reshape(-1, 2) if r >= 0}
    need = {(r, c, b) for r, c in cells for b in range(width)}
    lane, col, bit = split_address(addr)
    have: dict[tuple[int, int, int], int] = {}
    for x, key in enumerate(zip(lane.tolist(), col.tolist(), bit.tolist())):
        if key in have or key not in need:
            return "differs", Counterexample(0, x, (key[0], key[1]), None), \
                f"TMEM: logical bit {x} is bit {key[2]} of (lane {key[0]}, col {key[1]}), " \
                + ("which another logical bit names too" if key in have else
                   "outside the spec's cells and bits")
        have[key] = x
    missing = sorted(need - set(have))
    if missing:
        r, c, b = missing[0]
        return "differs", Counterexample(0, len(addr), None, (r, c)), \
            f"TMEM: bit {b} of the spec's (lane {r}, col {c}) is named by no logical bit"
    lanes = 1 + max(r for r, _ in cells)
    cols = len({c for _, c in cells})
    return "equal", None, f"TMEM: one taddr for the warp; ValID names bits 0..{width - 1} " \
        f"of each of the {lanes} lanes x {cols} columns once"


__all__: Sequence[str] = ("compare_tmem", "spec_columns", "split_address", "tmem_cells")
