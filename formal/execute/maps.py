"""One map type for every family: a layout record's (thread, element) -> cell table as numpy
index arrays, and the one constructor that reads it from the exported JSON.

numpy only (it runs on the GPU machine, where neither SymPy, Z3 nor Lark is installed).  Every
family's run asks the same two functions: ``operand_map`` for a register fragment (mma and
mma.sp over 32 lanes, the moves over 32, wgmma and wgmma.sp over a warpgroup's 128 threads)
and ``metadata_map`` for a sparse instruction's metadata fields.

**A worked example.**  A toy record of 2 threads holding a 2 x 2 tile, two elements each::

    {"instruction": "toy", "shape": "m2n2", "operand": "C/D", "tile": [2, 2],
     "cells": [{"lane": 0, "element": 0, "row": 0, "col": 0},
               {"lane": 0, "element": 1, "row": 0, "col": 1},
               {"lane": 1, "element": 0, "row": 1, "col": 0},
               {"lane": 1, "element": 1, "row": 1, "col": 1}]}

becomes ``row = [[0, 0], [1, 1]]`` and ``col = [[0, 1], [0, 1]]`` (shape (threads, n)), so
``codes[:, row, col]`` gathers every thread's elements from a batch of matrices at once and
``out[:, row, col] = elements`` scatters them back.  Had lane 1's element 1 named cell (0, 1)
too, the map would still be built (the prover, not the executor, judges injectivity); had it
named (2, 0), ``operand_map`` would refuse it with a ``LayoutError`` naming lane 1 element 1
and the (2, 2) tile.  The map keeps the record's id and hash: a run's evidence names them.

**What the record may say.**  ``tile`` (or the caller's, for a variant whose tile the record
leaves open: the moves' stacked matrices, wgmma's D at one N); ``group`` per cell (mma
.m8n8k4's four products: a block-diagonal view, ``formal.execute.cpu``); ``matrix`` per cell
(a move's matrix j, ``matrix_rows`` below it); ``firstcol``/``lastcol`` instead of ``col``
(sparse A: each element also gets its chunk and its rank among the chunk's non-zeros); ``n``
(a record stated for every N: at a concrete shape each thread keeps its first elements and
the map is hashed as the layout at that shape).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np

from ..base.hashes import cell_table_hash, cells_at
from ..base.variants import REGISTER_BITS, Sparsity

LANES = 32


class LayoutError(ValueError):
    """A layout record the executor cannot use (missing, incomplete or inconsistent)."""


def _register_bits(rec: Mapping[str, Any]) -> int | None:
    reg = rec.get("register") or None
    if not reg or not reg.get("per_register"):
        return None
    width = REGISTER_BITS.get(str(reg.get("kind")), 32)
    return width // int(reg["per_register"])


@dataclass
class OperandMap:
    """One operand's (thread, element) -> cell table as index arrays of shape (threads, n):
    32 lanes for mma, mma.sp and the moves, 128 threads for wgmma and wgmma.sp.

    Dense: ``row`` and ``col``.  Sparse A: ``row``, ``col`` = firstcol and ``last`` = lastcol,
    plus ``chunk`` and ``q`` (the element is the q-th non-zero of chunk ``chunk`` of its row).
    The metadata operand of a wgmma.sp run holds no cells (n = 0) but its fields, ``meta``."""

    operand: str
    instruction: str
    shape: str
    tile: tuple[int, int]  # replicated: the block-diagonal tile (groups x the spec's tile)
    n: int
    row: np.ndarray
    col: np.ndarray
    map_hash: str
    layout_id: str = ""
    bits: int = 0
    last: np.ndarray | None = None
    chunk: np.ndarray | None = None
    q: np.ndarray | None = None
    groups: int = 1  # independent products the warp computes (4 for m8n8k4 .f16)
    held: np.ndarray | None = None  # partial maps: (32, n) True where the element has a cell
    meta: MetadataMap | None = None  # wgmma.sp's metadata operand: its fields

    @property
    def sparse(self) -> bool:
        return self.last is not None

    @property
    def threads(self) -> int:
        return int(self.row.shape[0])

    @property
    def label(self) -> tuple[str, str, str]:
        """(instruction, shape, operand) the cell table is hashed under: a table the hardware
        shows is hashed under the same, so that it equals the record's when the cells do."""
        return (self.instruction, self.shape, self.operand)

    @property
    def block(self) -> tuple[int, int]:
        """The tile of one product (the spec's tile)."""
        return (self.tile[0] // self.groups, self.tile[1] // self.groups)

    def local(self, row: int, col: int) -> tuple[int, int, int]:
        """(product, row, col) of a block-diagonal cell."""
        br, bc = self.block
        return row // br, row % br, col % bc

    def cell_name(self, letter: str, row: int, col: int) -> str:
        """``D[3][5]``, or ``D[3][5] of product 2`` where the warp computes several."""
        if self.groups == 1:
            return f"{letter}[{row}][{col}]"
        g, r, c = self.local(row, col)
        return f"{letter}[{r}][{c}] of product {g}"

    def cells(self) -> list[dict[str, int]]:
        """The cell table in ``formal.writers.export``'s form (local cells and ``group``)."""
        return cell_records(self, [(t, i, int(self.row[t, i]), int(self.col[t, i]))
                                   for t in range(self.row.shape[0]) for i in range(self.n)
                                   if self.held is None or self.held[t, i]])


def cell_records(m: OperandMap, cells: Iterable[tuple[int, int, int, int]]) \
        -> list[dict[str, int]]:
    """(lane, element, row, col) of ``m``'s (block-diagonal) tile -> export rows: dense
    ``row``/``col`` (plus ``group`` when replicated) or sparse ``firstcol``/``lastcol``."""
    out = []
    for t, i, row, col in cells:
        r = {"lane": int(t), "element": int(i)}
        if m.last is not None:
            r.update(row=int(row), firstcol=int(col), lastcol=int(m.last[t, i]))
        elif m.groups > 1:
            g, lr, lc = m.local(int(row), int(col))
            if row < 0 or col < 0:  # a label discovery could not name
                g = row // m.block[0] if row >= 0 else col // m.block[1] if col >= 0 else -1
                lr, lc = (lr if row >= 0 else -1), (lc if col >= 0 else -1)
            r.update(row=lr, col=lc, group=g)
        else:
            r.update(row=int(row), col=int(col))
        out.append(r)
    return out


def _groups_of(rec: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> int:
    """Products of a replicated record (1 when the cells name no ``group``)."""
    if "group" not in cells[0]:
        return 1
    count = int((rec.get("groups") or {}).get("count") or 0)
    return count or 1 + max(int(c["group"]) for c in cells)


def operand_map(rec: Mapping[str, Any], bits: int | None = None,
                sparsity: Sparsity | None = None, partial: bool = False,
                lanes: int = LANES, *, tile: tuple[int, int] | None = None,
                n: int | None = None, shape: str = "", matrix_rows: int = 0,
                texts: Sequence[str] | None = None) -> OperandMap:
    """Index arrays of one layout record (``formal.writers.export`` format), of any family.

    ``lanes``: the threads the fragment spans (128 for a wgmma warpgroup).  A replicated record
    becomes its block-diagonal view (``formal.execute.cpu``); ``partial`` lets elements without
    a cell through (loaded as zero; for running the spec's erratum layouts of A and B).  The
    variant may fix what the record leaves open: ``tile`` and ``n`` (elements a thread), the
    concrete ``shape`` of a record stated for every N (its cells with element < ``n``, hashed
    as the layout at that shape) and ``matrix_rows`` (a cell's ``matrix`` j sits that many rows
    down per j: the moves' stacked matrices); ``texts``, the ``row_texts`` of its cells, spare
    a caller that takes one record at many N writing its rows again each time."""
    cells = rec.get("cells")
    lid = str(rec.get("id", ""))
    if not cells:
        raise LayoutError(f"{lid}: the layout has no cell table")
    at_n, h = False, ""
    if rec.get("n") and n is not None:  # stated for every N: the layout at this N
        at_n = True
        cells, h = cells_at(str(rec["instruction"]), shape or str(rec["shape"]),
                            str(rec["operand"]), cells, n, texts)
    if n is None:
        n = int(rec.get("elements_per_thread") or 0) or 1 + max(int(c["element"]) for c in cells)
    groups = _groups_of(rec, cells)
    base = tile or (int(rec["tile"][0]), int(rec["tile"][1]))
    if tile is not None and groups > 1:
        raise LayoutError(f"{lid}: a replicated layout's tile is its own, not {tile}")
    tile = (base[0] * groups, base[1] * groups)
    sparse = "firstcol" in cells[0]
    row = np.full((lanes, n), -1, dtype=np.int64)
    col = np.full((lanes, n), -1, dtype=np.int64)
    last = np.full((lanes, n), -1, dtype=np.int64) if sparse else None
    placed = _place(cells, lanes, n, groups, base, matrix_rows, sparse)
    if placed is not None:
        t, i, r, c = placed[:4]
        row[t, i], col[t, i] = r, c
        if last is not None:
            last[t, i] = placed[4]
    # placed: the loop below is the cell-by-cell reading of any other table
    for c in (() if placed is not None else cells):
        t, i = int(c["lane"]), int(c["element"])
        if not (0 <= t < lanes and 0 <= i < n):
            raise LayoutError(f"{lid}: cell of lane {t} element {i} is outside {lanes} x {n}")
        g = int(c.get("group", 0))
        if not 0 <= g < groups:
            raise LayoutError(f"{lid}: lane {t} element {i} is in product {g} of {groups}")
        if groups > 1 and not (0 <= int(c["row"]) < base[0] and 0 <= int(c["col"]) < base[1]):
            raise LayoutError(f"{lid}: lane {t} element {i} maps outside the {base} tile")
        row[t, i] = int(c["row"]) + g * base[0] + matrix_rows * int(c.get("matrix", 0))
        if last is not None:
            col[t, i] = int(c["firstcol"])
            last[t, i] = int(c["lastcol"])
        else:
            col[t, i] = int(c["col"]) + g * base[1]
    held = None
    if (row < 0).any():
        t, i = (int(x[0]) for x in np.nonzero(row < 0))
        if not partial or sparse:
            raise LayoutError(f"{lid}: no cell for lane {t} element {i}")
        held = row >= 0
        row = np.where(held, row, 0)
        col = np.where(held, col, 0)
    rbits = _register_bits(rec)
    if bits is not None and rbits is not None and rbits != bits:
        raise LayoutError(f"{lid}: the fragment packs {32 // rbits if rbits < 32 else 1} "
                          f"elements per register ({rbits} bits each) but the variant needs "
                          f"{bits}-bit elements")
    m = OperandMap(str(rec["operand"]), str(rec["instruction"]),
                   (shape if at_n else "") or str(rec["shape"]), tile, n, row, col,
                   h if at_n else str(rec.get("map_hash") or ""), lid,
                   bits or rbits or 0, last, groups=groups, held=held)
    if not m.map_hash:
        m.map_hash = cell_table_hash(m.instruction, m.shape, m.operand, "cells", cells)
    if sparse:
        if sparsity is None:
            raise LayoutError(f"{lid}: a sparse A layout needs the variant's sparsity")
        _sparse_positions(m, sparsity)
    else:
        inside = (row < tile[0]) & (col >= 0) & (col < tile[1])
        if not inside.all():
            t, i = (int(x[0]) for x in np.nonzero(~inside))
            raise LayoutError(f"{lid}: lane {t} element {i} maps outside the {tile} tile")
    return m


def _place(cells: Sequence[Mapping[str, Any]], lanes: int, n: int, groups: int,
           base: tuple[int, int], matrix_rows: int, sparse: bool) -> tuple[Any, ...] | None:
    """``operand_map``'s cell-by-cell placement done column by column: (lanes, elements,
    rows, cols[, last cols]) as arrays, for a table of plain ints whose every cell is in
    range and whose (lane, element) pairs are distinct; None for any other table (then the
    cell-by-cell reading places it, or names its first bad cell, as it always has)."""
    if len(cells) < 2 or (sparse and groups > 1) or not all(type(c) is dict for c in cells):
        return None
    keys = ("lane", "element", "row", *(("firstcol", "lastcol") if sparse else ("col",)))
    try:
        got = [list(map(itemgetter(k), cells)) for k in keys]
    except KeyError:
        return None
    got.append(list(map(methodcaller("get", "group", 0), cells)))
    got.append(list(map(methodcaller("get", "matrix", 0), cells)))
    if not set(map(type, chain.from_iterable(got))) <= {int}:
        return None
    try:
        cols = [np.array(v, dtype=np.int64) for v in got]
    except OverflowError:
        return None
    t, i, r = cols[0], cols[1], cols[2]
    g = cols[-2]
    ok = (t >= 0) & (t < lanes) & (i >= 0) & (i < n) & (g >= 0) & (g < groups)
    if groups > 1:
        ok &= (r >= 0) & (r < base[0]) & (cols[3] >= 0) & (cols[3] < base[1])
    if not ok.all() or len(np.unique(t * n + i)) != len(t):
        return None
    rows = r + g * base[0] + matrix_rows * cols[-1]
    if sparse:
        return t, i, rows, cols[3], cols[4]
    return t, i, rows, cols[3] + g * base[1]


def _sparse_positions(m: OperandMap, sp: Sparsity) -> None:
    """For each sparse-A element: its chunk and its rank among that chunk's non-zeros."""
    assert m.last is not None
    chunk = np.zeros_like(m.row)
    q = np.zeros_like(m.row)
    for t in range(m.row.shape[0]):
        seen: dict[tuple[int, int, int], int] = {}
        for i in range(m.n):
            key = (int(m.row[t, i]), int(m.col[t, i]), int(m.last[t, i]))
            j = seen.get(key, 0)
            seen[key] = j + 1
            width = key[2] - key[1] + 1
            if key[1] % sp.chunk or width % sp.chunk:
                raise LayoutError(f"{m.layout_id}: lane {t} a{i} range [{key[1]}..{key[2]}] "
                                  f"is not whole chunks of {sp.chunk}")
            chunk[t, i] = key[1] // sp.chunk + j // sp.nonzeros
            q[t, i] = j % sp.nonzeros
        for key, count in seen.items():
            want = (key[2] - key[1] + 1) // sp.chunk * sp.nonzeros
            if count != want:
                raise LayoutError(f"{m.layout_id}: lane {t} holds {count} non-zeros of row "
                                  f"{key[0]} [{key[1]}..{key[2]}], not {want}")
    m.chunk, m.q = chunk, q


@dataclass
class MetadataMap:
    """The metadata fields of each selector: lane, low bit, width, and the (row, chunk, slot)
    whose index the field holds."""

    map_hash: str
    layout_id: str
    fields: dict[int, dict[str, np.ndarray]]  # selector -> arrays
    rows: list[dict[str, int]] = field(default_factory=list)

    def holders(self, selector: int) -> np.ndarray:
        return np.unique(self.fields[selector]["lane"])


def metadata_map(rec: Mapping[str, Any]) -> MetadataMap:
    rows = rec.get("fields")
    lid = str(rec.get("id", ""))
    if not rows:
        raise LayoutError(f"{lid}: the metadata layout has no field table")
    by_sel: dict[int, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_sel.setdefault(int(r["selector"]), []).append(r)
    fields = {}
    for s, rs in by_sel.items():
        fields[s] = {k: np.array([int(r[k]) for r in rs], dtype=np.int64)
                     for k in ("lane", "bit_lo", "bit_hi", "row", "chunk", "slot")}
    h = str(rec.get("map_hash") or "") or cell_table_hash(
        str(rec["instruction"]), str(rec["shape"]), "metadata", "fields", rows)
    return MetadataMap(h, lid, fields, [dict(r) for r in rows])


__all__ = ["LANES", "LayoutError", "OperandMap", "MetadataMap", "operand_map", "metadata_map",
           "cell_records"]
