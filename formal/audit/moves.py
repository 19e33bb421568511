"""CuTe's copy atoms of the warp-level moves (LDSM, STSM, MOVM) against the spec's layouts.

A copy atom states two bit-level layouts, ``SrcLayout`` and ``DstLayout``: (thread, bit) ->
the index of a bit of the data moved.  One side lies in shared memory (ldmatrix's source,
stmatrix's destination), where thread s gives the address of row s of the stacked matrices
(rows of ``8*num`` matrices one above the other, as the catalog's tile stacks them), so its
bit b of that row is the cell (row s, col b / element bits).  The other side is registers:
element e of thread t is bits ``e*w .. e*w+w-1``; following each bit's index back to the
memory side gives its cell, and all w bits must name the same cell, in order.  Then
(thread t, element e) -> cell is compared with the catalog's layout of the registers.

Worked example, ``SM75_U32x1_LDSM_N`` (``ldmatrix...x1.m8n8.shared.b16``): the source
``((8,4),128):((128,0),1)`` gives thread s < 8 the bits ``128*s .. 128*s+127`` (row s; the
other threads repeat them, their addresses unused); the destination ``(32,32):(32,1)`` gives
thread 5 bits 160..191, i.e. row 1, bits 32..63: elements (row 1, col 2) and (row 1, col 3) --
the spec's lane 5 (row 5/4 = 1, cols 2*(5%4) + i).  ``equal``.

The memory side is checked on its own: each address thread names one whole row (128
consecutive bits at a multiple of 128), the address threads distinct rows.  movmatrix has
registers on both sides: its source's cells are the catalog's source layout, and the
destination's element (r, c) of the source is the destination matrix's (c, r) (``.trans``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model.cute import CuteLayout
from .compare import Counterexample, first_difference, index_array, spec_cells, spec_table
from .project import Layout

ROW_BITS = 128  # one row of a moved matrix: 16 bytes


def _inverse(idx: np.ndarray) -> dict[int, tuple[int, int]]:
    """index -> the first (thread, bit) holding it, thread first."""
    out: dict[int, tuple[int, int]] = {}
    for t in range(idx.shape[0]):
        for b in range(idx.shape[1]):
            out.setdefault(int(idx[t, b]), (t, b))
    return out


def memory_rows(mem: CuteLayout, rows: int) -> str:
    """'' when each of the first ``rows`` threads names one whole 128-bit row, distinct
    rows; else what is wrong (thread, bit)."""
    idx = index_array(mem)
    if idx.shape[1] != ROW_BITS:
        return f"each thread holds {idx.shape[1]} bits, not one 128-bit row"
    if idx.shape[0] < rows:
        return f"{idx.shape[0]} threads give addresses, the instruction reads {rows} rows"
    seen: dict[int, int] = {}
    for s in range(rows):
        base = int(idx[s, 0])
        off = np.nonzero(idx[s] != base + np.arange(ROW_BITS))[0]
        if base % ROW_BITS or len(off):
            b = int(off[0]) if len(off) else 0
            return f"thread {s}, bit {b}: index {int(idx[s, b])} is not bit {b} of one row"
        if base in seen:
            return f"threads {seen[base]} and {s} give the same row"
        seen[base] = s
    return ""


def register_cells(reg: CuteLayout, where: dict[int, tuple[int, int]], bits: int,
                   cell_of: dict[tuple[int, int], tuple[int, int]] | None = None) -> np.ndarray:
    """(thread, element) -> cell of a register side: each bit's index through ``where``
    (index -> (memory thread, bit)), the cell (thread, bit / bits), or ``cell_of`` of
    (thread, element) where the other side is registers too; -1 where the element's bits are
    not one element of one cell, in order."""
    idx = index_array(reg)
    t_n, v_n = idx.shape
    e_n = v_n // bits
    out = np.full((t_n, e_n, 2), -1, dtype=np.int64)
    for t in range(t_n):
        for e in range(e_n):
            first = where.get(int(idx[t, e * bits]))
            if first is None or first[1] % bits:
                continue
            if any(where.get(int(idx[t, e * bits + j])) != (first[0], first[1] + j)
                   for j in range(1, bits)):
                continue
            home = (first[0], first[1] // bits)
            cell = home if cell_of is None else cell_of.get(home)
            if cell is not None:
                out[t, e] = cell
    return out


def compare_move(kind: str, src: CuteLayout, dst: CuteLayout, bits: int, rows: int,
                 spec: Layout, source: Layout | None = None) \
        -> dict[str, tuple[str, Counterexample | None, str]]:
    """Verdicts ``{"src": (verdict, counterexample, message), "dst": ...}`` of one move atom:
    ``kind`` is ldmatrix | stmatrix | movmatrix; ``spec`` the catalog's register layout
    (movmatrix: of the destination, ``source`` of the source)."""
    out: dict[str, tuple[str, Counterexample | None, str]] = {}
    table = spec_table(spec)
    if isinstance(table, str):
        return {side: ("unreadable", None, table) for side in ("src", "dst")}
    want = spec_cells(table, list(range(len(table.cells))))
    if kind == "movmatrix":
        assert source is not None
        stable = spec_table(source)
        if isinstance(stable, str):
            return {side: ("unreadable", None, stable) for side in ("src", "dst")}
        # the source registers define the cells: (lane, element) -> the source matrix's cell,
        # which the transposing move puts at (col, row) of the destination
        own = {(t, e): c for t, row in enumerate(stable.cells)
               for e, c in enumerate(row) if c is not None}
        cells = {k: (c[1], c[0]) for k, c in own.items()}
        sidx = index_array(src)
        got_src = register_cells(src, _inverse(sidx), bits, own)
        out["src"] = _verdict(got_src, spec_cells(stable, list(range(len(stable.cells)))),
                              "the source registers")
        got = register_cells(dst, _inverse(sidx), bits, cells)
        out["dst"] = _verdict(got, want, "the destination registers")
        return out
    mem, reg, mem_side, reg_side = (src, dst, "src", "dst") if kind == "ldmatrix" \
        else (dst, src, "dst", "src")
    why = memory_rows(mem, rows)
    out[mem_side] = ("differs", None, f"shared memory: {why}") if why else \
        ("equal", None, f"shared memory: threads 0..{rows - 1} each give one row of 16 bytes")
    got = register_cells(reg, _inverse(index_array(mem)), bits)
    out[reg_side] = _verdict(got, want, "registers")
    return out


def _verdict(got: np.ndarray, want: np.ndarray, what: str) \
        -> tuple[str, Counterexample | None, str]:
    found = first_difference(got, want)
    if found is None:
        return "equal", None, f"{what}: every element's bits are the spec's cell"
    t, e, g, w = found
    gs = f"(row {g[0]}, col {g[1]})" if g is not None else "no whole element"
    ws = f"(row {w[0]}, col {w[1]})" if w is not None else "no cell"
    order = common_order(got, want)
    why = "" if order is None else (
        f"; CuTe's element e is the instruction's element {list(order)}[e] in every thread "
        "(the same cells, reordered: what an atom's copy() does to the registers after its "
        "asm, in C++ the audit does not read)")
    return "differs", Counterexample(t, e, g, w), \
        f"{what}: thread {t}, element {e}: CuTe says {gs}, the spec says {ws}{why}"


def common_order(got: np.ndarray, want: np.ndarray) -> tuple[int, ...] | None:
    """The one permutation p with ``got[t, e] == want[t, p[e]]`` for every thread t, where
    the two hold the same cells in another order, else None.  ``SM100_U8x8_LDSM_T``:
    (0, 1, 4, 5, 2, 3, 6, 7) -- its copy() swaps the middle bytes of its two registers."""
    if got.shape != want.shape or got.shape[0] == 0 or (got < 0).any():
        return None
    order = []
    for e in range(got.shape[1]):
        hit = np.nonzero((want[0] == got[0, e]).all(axis=1))[0]
        if len(hit) != 1:
            return None
        order.append(int(hit[0]))
    if sorted(order) == list(range(got.shape[1])) and (got == want[:, order]).all():
        return tuple(order)
    return None


def element_bits(type_name: str) -> int:
    return 8 if type_name.startswith("b8") else 16


__all__: Sequence[str] = ("common_order", "compare_move", "memory_rows", "register_cells",
                          "element_bits")
