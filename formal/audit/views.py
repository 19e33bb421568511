"""What a CuTe operand's (thread, value) means where it is not one register cell: the views
that turn GMMA's shared-memory operands, its sparse A and metadata, and the copy atoms' bit
layouts into (thread, value) -> cell arrays the spec's can be compared with.

Every view ends in the same two arrays, ``got`` (CuTe's) and ``want`` (the spec's), threads x
values x 2 (a cell; -1 where there is none), and ``compare.first_difference`` decides on every
(thread, value): the domain is finite, so the enumeration is the proof.

* **Shared-memory operand** (GMMA's ``ABLayout<M,K>`` = ``(128,(M,K)):(0,(1,M))``): the
  descriptor names the whole M x K (B: N x K) matrix, so every thread's value v must be CuTe's
  index v itself -- the tile of the instruction's shape, each cell once.  With the thread
  digits' index ``t(t)`` and the value digits' ``w(v)``, ``t(t) + w(v) == v`` for all t, v
  exactly when ``w(v) == v`` and ``t(t) == 0`` (``t(0) = 0``): checked on the two axes.
  A tiny case: ``(2,(2,2)):(0,(1,2))`` on a 2 x 2 tile is equal; stride ``(0,(2,1))`` sends
  value 1 to index 2, (row 0, col 1), where the descriptor's matrix has (row 1, col 0).
* **Sparse A in registers**: CuTe's ``sparse_elem<2, T>`` counts logical elements, two to a
  stored one, over the M x K tile; values 2j and 2j+1 must be columns 2c and 2c+1 of one row,
  and the stored element j is then (row, c) of the compressed M x K/2 tile the spec states.
* **Metadata** (``ELayout``, ``sparse_elem<8, uint8_t>``: a byte describes 8 logical
  elements): a lane's 2-bit field i covers CuTe values ``R*i .. R*i+R-1`` (R = values /
  fields); they must lie in the row and chunk the spec gives that field, for the sparsity
  selector under which the lane supplies metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model.cute import CuteLayout, flat_modes

Cells = np.ndarray  # threads x values x 2


def axis_index(mode: CuteLayout) -> np.ndarray:
    """CuTe's index of every coordinate of one mode: each flat digit times its stride."""
    n = mode.size
    x = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    place = 1
    for s, d in flat_modes(mode.shape, mode.stride):
        out += ((x // place) % s) * d
        place *= s
    return out


def broadcast(cute: CuteLayout) -> bool:
    """Does every thread name the same values (all thread strides 0, more than one thread)?
    GMMA's shared-memory operands do: the descriptor, not a register, holds the matrix."""
    if cute.rank != 2 or cute.mode(0).size < 2:
        return False
    return all(d == 0 for _, d in flat_modes(cute.mode(0).shape, cute.mode(0).stride))


def whole_tile(cute: CuteLayout, rows: int, cols: int, swapped: bool) \
        -> tuple[int, int, tuple[int, int] | None, tuple[int, int] | None] | None:
    """The first (thread, value) whose index is not the value itself on a rows x cols tile
    (``swapped``: CuTe's first coordinate is the tile's column, B), else None."""
    t_idx, v_idx = axis_index(cute.mode(0)), axis_index(cute.mode(1))
    cells = rows * cols

    def cell(i: int) -> tuple[int, int]:
        return (i // cols, i % cols) if swapped else (i % rows, i // rows)

    n = min(len(v_idx), cells)
    bad = np.nonzero(v_idx[:n] != np.arange(n))[0]
    if len(bad):
        v = int(bad[0])
        return 0, v, cell(int(v_idx[v])), cell(v)
    if len(v_idx) < cells:
        return 0, len(v_idx), None, cell(len(v_idx))
    if len(v_idx) > cells:
        return 0, cells, cell(int(v_idx[cells])), None
    moved = np.nonzero(t_idx != 0)[0]
    if len(moved):
        t = int(moved[0])
        return t, 0, cell(int(t_idx[t] + v_idx[0])), cell(0)
    return None


def sparse_a(idx: np.ndarray, rows: int, per: int) -> Cells:
    """CuTe's sparse A (logical indices ``m + rows*k``, ``per`` logical elements to a stored
    one) as the compressed tile's cells: stored element j is values per*j .. per*j+per-1,
    which must be columns per*c .. per*c+per-1 of one row; else it has no cell."""
    t_n, v_n = idx.shape
    j_n = v_n // per
    m, k = idx % rows, idx // rows
    m3 = m[:, :j_n * per].reshape(t_n, j_n, per)
    k3 = k[:, :j_n * per].reshape(t_n, j_n, per)
    c = k3[:, :, 0] // per
    ok = (m3 == m3[:, :, :1]).all(axis=2) & (k3 == c[:, :, None] * per
                                             + np.arange(per)).all(axis=2) & (idx[:, :1] >= 0)
    out = np.stack([m3[:, :, 0], c], axis=-1)
    out[~ok] = -1
    return out


def metadata(idx: np.ndarray, rows: int, k: int,
             table: Mapping[tuple[int, int, int], tuple[Any, ...]]) -> tuple[Cells, Cells]:
    """(CuTe's, the spec's) (row, chunk) of each lane's metadata field.  ``table`` is the
    catalog's (selector, lane, field) -> (row, chunk, slot); a lane is read under the first
    selector that has it supply metadata."""
    fields = 1 + max(key[2] for key in table)
    chunks = 1 + max(cell[1] for cell in table.values())
    width = k // chunks
    t_n, v_n = idx.shape
    per = v_n // fields
    want = np.full((t_n, fields, 2), -1, dtype=np.int64)
    first: dict[int, int] = {}
    for sel, lane, _field in table:
        first[lane] = min(first.get(lane, sel), sel)
    for (sel, lane, field), cell in table.items():
        if lane < t_n and sel == first[lane]:
            want[lane, field] = (cell[0], cell[1])
    m, kk = idx % rows, idx // rows
    m3 = m[:, :fields * per].reshape(t_n, fields, per)
    c3 = (kk[:, :fields * per] // width).reshape(t_n, fields, per)
    ok = (m3 == m3[:, :, :1]).all(axis=2) & (c3 == c3[:, :, :1]).all(axis=2)
    got = np.stack([m3[:, :, 0], c3[:, :, 0]], axis=-1)
    got[~ok] = -1
    return got, want
