"""The (thread, value) view of a layout: what the CuTe and F2 exports factor.

CuTe and Triton both describe an MMA operand as a function from a hardware location -- a
thread (lane) and a value (element) of that thread's fragment -- to a coordinate of the
tile.  This module reduces a ``Layout`` to exactly that table, or says why it has none.

Take a toy 4-lane, 2-element layout of a 2 x 4 tile, ``row = i``, ``col = lane``:

    (lane, i) -> (row, col)     (0,0)->(0,0)  (1,0)->(0,1)  (2,0)->(0,2)  (3,0)->(0,3)
                                (0,1)->(1,0)  (1,1)->(1,1)  (2,1)->(1,2)  (3,1)->(1,3)

Its ``TV`` holds these eight pairs with ``dims = (("row", 2), ("col", 4))``.  The exports then
look for structure in it: CuTe for strides (lane +1 -> col +1, i +1 -> row +1, so
``(4,2):(2,1)`` with the index ``row + 2*col``), F2 for XOR bases.

Three operands need a choice of view:

* **B.**  CuTe states B as an N x K tensor, so its CuTe index is ``n + N*k`` =
  ``col + N*row`` (``cute_dims``); Triton keeps the PTX tile order (k, n) = (row, col).
* **Sparse A.**  A lane holds the non-zeros of whole chunks ``[firstcol .. lastcol]`` of a
  row, not single cells, so the view is the *compressed* A the hardware reads: an
  M x (K * nonzeros / chunk) tile whose column is ``firstcol * nonzeros / chunk`` plus the
  element's rank among the lane's elements of that row and range.  For ``.f16`` 2:4 that is
  ``2 * threadID_in_group + (i & 1)`` -- the dense m16n8k8 A map.
* **Metadata** maps a lane's index field to (row, chunk, slot); the view is the index tile
  M x (chunks * slots) with column ``chunk * slots + slot``.  It exists only where one
  selector is legal and every lane supplies metadata for it (the 8-bit k64 and 4-bit k128
  shapes); elsewhere a selector-dependent subset of the lanes supplies it, there is no
  (thread, value) view over all 32 lanes, and ``tv_view`` returns the reason (the C header
  carries those tables).

Replicated layouts (``Layout.groups``, m8n8k4 ``.f16``) keep every lane: the lanes of each
group map into the same tile, so the group's lane bits have stride 0 (CuTe) or image 0
(F2) -- a broadcast, which both formalisms express.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cells import cells_and_names, map_of
from .layout import Layout


@dataclass(frozen=True)
class TV:
    """(lane, value) -> (row, col) for every lane and value, in the tile's own order."""

    layout_id: str
    threads: int
    values: int
    dims: tuple[tuple[str, int], tuple[str, int]]  # ((name, extent), (name, extent))
    cells: tuple[tuple[tuple[int, int], ...], ...]  # cells[lane][value]
    letter: str = "a"
    note: str = ""  # how the view was derived (compressed A, replication)

    def __call__(self, t: int, v: int) -> tuple[int, int]:
        return self.cells[t][v]

    @property
    def tile(self) -> tuple[int, int]:
        return self.dims[0][1], self.dims[1][1]


def cute_dims(lay: Layout) -> tuple[str, str]:
    """CuTe's names of the two coordinates, first mode first: (M,K) for A, (N,K) for B,
    (M,N) for C/D.  ``swap`` (B) means CuTe's first coordinate is the tile's column."""
    return {"A": ("M", "K"), "B": ("N", "K"), "C/D": ("M", "N"),
            "metadata": ("M", "S")}.get(lay.operand, ("M", "K"))


def cute_swapped(lay: Layout) -> bool:
    return lay.operand == "B"


def tv_view(lay: Layout) -> TV | str:
    """The layout's (lane, value) -> (row, col) table, or the reason it has none."""
    if lay.operand == "metadata":
        return _metadata_view(lay)
    if not lay.formulas:
        return "the layout has no formulas (the document gives it only as a figure)"
    if not lay.sparse_a:
        dense = _dense_cells(lay)
        if dense is not None:
            if isinstance(dense, str):
                return dense
            return _view(lay, dense, "")
    return _table_view(lay)


def _table_view(lay: Layout) -> TV | str:
    """``tv_view`` read from the layout's cell table, one (lane, element) at a time: sparse
    A's compressed view, and any map ``_dense_cells`` does not read."""
    names, table = cells_and_names(lay)
    if not table:
        return "the layout's formulas do not define " + " and ".join(
            n for n in (("row", "firstcol", "lastcol") if lay.sparse_a else ("row", "col"))
            if lay.formula(n) is None)
    letter = lay.letter
    n = lay.elements
    rows, cols = lay.tile
    for t in range(lay.lanes):
        for i in range(n):
            out = table.get((0, t, i))
            if out is None or None in out:
                which = "a formula" if out is None else \
                    f"'{names[list(out).index(None)]}'"
                return f"lane {t}, element {letter}{i}: no case of {which} applies"
    note = ""
    if lay.sparse_a:
        got = _compressed(lay, table, letter)
        if isinstance(got, str):
            return got
        cells, cols = got
        nz, chunk = _ratio(lay)
        note = (f"compressed A: column = firstcol * {nz} / {chunk} + the element's rank "
                "among the lane's elements of that row and range")
    else:
        cells = tuple(tuple((table[(0, t, i)][0], table[(0, t, i)][1]) for i in range(n))
                      for t in range(lay.lanes))
    for t in range(lay.lanes):
        for i in range(n):
            r, c = cells[t][i]
            if not (0 <= r < rows and 0 <= c < cols):
                return (f"lane {t}, element {letter}{i} maps to (row {r}, col {c}), outside "
                        f"the {rows} x {cols} tile")
    return _view(lay, cells, note, cols)


def _view(lay: Layout, cells: tuple[tuple[tuple[int, int], ...], ...], note: str,
          cols: int | None = None) -> TV:
    """The view of ``cells`` (each in the tile: checked by the caller), with the note of a
    replicated layout added; ``cols``: the view's columns (the compressed A's), else the
    tile's."""
    rows, tile_cols = lay.tile
    if lay.groups is not None:
        what, k, _g = lay.groups
        extra = (f"{k} {what}s compute independent products in the same tile: the lane bits "
                 f"that choose the {what} map to nothing (stride 0)")
        note = f"{note}; {extra}" if note else extra
    return TV(lay.id, lay.lanes, lay.elements,
              (("row", rows), ("col", tile_cols if cols is None else cols)), cells,
              lay.letter, note)


def _dense_cells(lay: Layout) -> tuple[tuple[tuple[int, int], ...], ...] | str | None:
    """``tv_view``'s cells of a layout that is not sparse A, or the reason it has none (the
    same words, naming the same first lane and element), read from the enumerated map's
    arrays at once: selector 0, lane-major.  None where the map is not a plain integer one
    (no map, no point, fewer than two outputs, outputs beyond int64): the caller reads the
    cell table instead."""
    m = map_of(lay)
    if m is None or len(m.pts) == 0 or m.out.dtype == object or len(m.names) < 2:
        return None
    lanes, n, letter = lay.lanes, lay.elements, lay.letter
    rows, cols = lay.tile
    pts, k = m.pts, len(m.names)
    mine = (pts[:, 0] == 0) & (pts[:, 1] >= 0) & (pts[:, 1] < lanes) & (pts[:, 2] >= 0) \
        & (pts[:, 2] < n)
    at = np.full(lanes * n, -1, dtype=np.int64)  # each (lane, element)'s point, -1: none
    at[pts[mine, 1] * n + pts[mine, 2]] = np.flatnonzero(mine)
    missing = at < 0
    row_of = np.where(missing, 0, at)
    defined = m.defined[row_of, :k]
    bad = missing | ~defined.all(axis=1)
    if bad.any():
        j = int(np.argmax(bad))
        t, i = divmod(j, n)
        which = "a formula" if missing[j] else f"'{m.names[int(np.argmax(~defined[j]))]}'"
        return f"lane {t}, element {letter}{i}: no case of {which} applies"
    r, c = m.out[row_of, 0], m.out[row_of, 1]
    outside = (r < 0) | (r >= rows) | (c < 0) | (c >= cols)
    if outside.any():
        j = int(np.argmax(outside))
        t, i = divmod(j, n)
        return (f"lane {t}, element {letter}{i} maps to (row {int(r[j])}, col {int(c[j])}), "
                f"outside the {rows} x {cols} tile")
    return tuple(tuple(zip(a, b)) for a, b in zip(r.reshape(lanes, n).tolist(),
                                                  c.reshape(lanes, n).tolist()))


def _ratio(lay: Layout) -> tuple[int, int]:
    sp_ = lay.sparsity
    return (sp_.nonzeros, sp_.chunk) if sp_ is not None else (1, 2)


def _compressed(lay: Layout, table: dict[tuple[int, int, int], tuple[int, ...]],
                letter: str) -> tuple[tuple[tuple[tuple[int, int], ...], ...], int] | str:
    """Sparse A as the compressed M x (K * nonzeros / chunk) tile."""
    nz, chunk = _ratio(lay)
    rows, k = lay.tile
    n = lay.elements
    out: list[list[tuple[int, int]]] = []
    for t in range(lay.lanes):
        seen: dict[tuple[int, int, int], int] = {}
        lane: list[tuple[int, int]] = []
        for i in range(n):
            r, fc, lc = table[(0, t, i)]
            if fc % chunk or (lc + 1 - fc) % chunk or lc < fc:
                return (f"lane {t}, element {letter}{i}: columns [{fc} .. {lc}] are not whole "
                        f"chunks of {chunk}")
            rank = seen.get((r, fc, lc), 0)
            seen[(r, fc, lc)] = rank + 1
            capacity = (lc + 1 - fc) // chunk * nz
            if rank >= capacity:
                return (f"lane {t}: element {letter}{i} is non-zero number {rank + 1} of "
                        f"columns [{fc} .. {lc}], which hold only {capacity}")
            lane.append((r, fc * nz // chunk + rank))
        out.append(lane)
    return tuple(tuple(x) for x in out), k * nz // chunk


def _metadata_view(lay: Layout) -> TV | str:
    """Metadata as an index tile (row, chunk * slots + slot) -- only where one selector
    exists and every lane supplies metadata for it."""
    md = lay.metadata
    sparsity = lay.sparsity
    if md is None or not md.selectors or not lay.formulas or sparsity is None:
        return "the metadata layout has no formulas"
    _names, table = cells_and_names(lay)
    if not table:
        return "the metadata layout's formulas are incomplete"
    for s in md.selectors:
        lanes = sorted({t for (ss, t, _i) in table if ss == s})
        if len(lanes) < lay.lanes:
            shown = ", ".join(str(t) for t in lanes[:4]) + (", ..." if len(lanes) > 4 else "")
            return (f"for sparsity selector {s} metadata comes from {len(lanes)} of the "
                    f"{lay.lanes} lanes ({shown}), and other selectors use other lanes; a "
                    "(thread, value) layout needs every lane (the C header has its tables)")
    if len(md.selectors) > 1:
        return (f"every lane supplies metadata for each of {len(md.selectors)} selectors; a "
                "(thread, value) layout has no selector input (the C header has its tables)")
    s = md.selectors[0]
    b = sparsity.index_bits
    rows = lay.tile[0]
    chunks = lay.shape.k // sparsity.chunk
    slots = sparsity.slots
    cells = []
    for t in range(lay.lanes):
        lane = []
        for i in range(lay.elements):
            r, ch, slot = table[(s, t, i)]
            if r is None or ch is None or slot is None:
                return f"lane {t}, field m{i}: no case of a formula applies"
            if not (0 <= r < rows and 0 <= ch < chunks and 0 <= slot < slots):
                return (f"lane {t}, field m{i} maps to (row {r}, chunk {ch}, slot {slot}), "
                        f"outside the {rows} x {chunks} chunks of {slots} slots")
            lane.append((r, ch * slots + slot))
        cells.append(tuple(lane))
    return TV(lay.id, lay.lanes, lay.elements, (("row", rows), ("col", chunks * slots)),
              tuple(cells), "m", f"metadata index tile: column = chunk * {slots} + slot; field "
              f"m<i> is bits {b}*i+{b - 1}..{b}*i of the lane's metadata register")
