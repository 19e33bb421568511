"""The one place a layout becomes cells: its formulas evaluated over the whole domain.

A toy 4-lane, 2-element layout of a 2 x 4 tile, ``row = i``, ``col = lane``, has the domain
{(selector 0, lane t, element i)} and the table

    (0,0,0)->(0,0)  (0,1,0)->(0,1)  (0,2,0)->(0,2)  (0,3,0)->(0,3)
    (0,0,1)->(1,0)  (0,1,1)->(1,1)  (0,2,1)->(1,2)  (0,3,1)->(1,3)

``map_of(layout)`` builds this once per layout object (numpy arrays, one row per point; where
a case applies and which) and every consumer -- the prover's enumeration, the exports, the
figures, the hardware check -- asks it; ``cell_rows`` and ``map_hash`` give the table and its
hash as the exports and the GPU evidence write them.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
import sympy as sp

from ..base.hashes import cell_table_hash, cell_table_hash_of_bytes
from ..base.memo import keep_bounded
from .algebra import (
    LANE,
    SEL,
    I,
    compile_array,
    compile_array_pred,
    compile_expr,
    compile_pred,
    definedness,
    fits_int64,
)
from .layout import Formula, Layout, srepr

# ---- the domain of a map: every (selector, lane, element), evaluated at once ---------------------


@dataclass
class CellMap:
    """A layout's formulas over its whole domain, for enumeration; encodable for Z3.

    ``out[p, k]`` is formula k at domain point p (``pts[p] = (selector, lane, element)``),
    ``defined[p, k]`` whether some case of formula k applies there, ``match[k][p, j]`` whether
    case j applies (``otherwise`` = no earlier case).  Values are computed with numpy int64
    when interval bounds show no intermediate value can come near overflow, else with
    Python's unbounded ints.
    """

    lay: Layout
    names: tuple[str, ...]
    formulas: tuple[Formula, ...]
    lanes: int
    n: int
    selectors: tuple[int, ...] = (0,)
    holder: Any = sp.true
    group: Any = None  # SymPy expression of a lane's replication group, or None
    holder_fn: Callable[..., bool] = field(default=lambda t, i, s: True)
    pts: Any = None
    out: Any = None
    defined: Any = None
    match: list[Any] = field(default_factory=list)
    groups: Any = None
    _index: dict[tuple[int, int, int], int] | None = None
    _table: dict[tuple[int, int, int], tuple[Any, ...]] | None = None
    _ok: Any = None

    def __post_init__(self) -> None:
        self.holder_fn = compile_pred(self.holder)
        # the holders, one (selector, lane) at a time; each holder's n elements in order
        if self.holder is sp.true:  # every (selector, lane): no list of pairs to convert
            held = np.empty((len(self.selectors) * self.lanes, 2), dtype=np.int64)
            held[:, 0] = np.repeat(np.asarray(self.selectors, dtype=np.int64), self.lanes)
            held[:, 1] = np.tile(np.arange(self.lanes, dtype=np.int64), len(self.selectors))
        else:
            held = np.array([(s, t) for s in self.selectors for t in range(self.lanes)
                             if self.holder_fn(t, 0, s)], dtype=np.int64).reshape(-1, 2)
        pts = np.empty((len(held) * self.n, 3), dtype=np.int64)
        pts[:, :2] = np.repeat(held, self.n, axis=0)
        pts[:, 2] = np.tile(np.arange(self.n, dtype=np.int64), len(held))
        self.pts = pts
        S, T, I_ = self.pts[:, 0], self.pts[:, 1], self.pts[:, 2]
        exprs = [c.value for f in self.formulas for c in f.cases] + \
                [c.cond for f in self.formulas for c in f.cases] + \
                ([self.group] if self.group is not None else [])
        span = (self.lanes - 1, max(0, self.n - 1), min(self.selectors), max(self.selectors))
        vector = all(_fits_int64(e, span) for e in exprs)
        N, K = len(pts), len(self.names)
        self.out = np.zeros((N, K), dtype=np.int64 if vector else object)
        self.defined = np.zeros((N, K), dtype=bool)
        for k, f in enumerate(self.formulas):
            cols, vals, defs = [], [], []
            before = np.zeros(N, dtype=bool)
            for c in f.cases:
                hit = ~before if c.otherwise else self._pred(c.cond, vector, T, I_, S)
                cols.append(hit)
                before = before | hit
                vals.append(self._expr(c.value, vector, T, I_, S))
                ok = _defined_where(c.value, c.cond)
                defs.append(self._pred(ok, vector, T, I_, S) if ok is not sp.true
                            else np.ones(N, dtype=bool))
            M = np.stack(cols, axis=1) if cols else np.zeros((N, 0), dtype=bool)
            self.match.append(M)
            if k >= K:
                continue  # a helper: only its cases are checked
            has = M.any(axis=1) if cols else np.zeros(N, dtype=bool)
            first = np.argmax(M, axis=1) if cols else np.zeros(N, dtype=np.int64)
            col = self.out[:, k]
            dcol = np.zeros(N, dtype=bool)
            for j, v in enumerate(vals):
                sel = has & (first == j)
                col[sel] = v[sel]
                dcol |= sel & defs[j]
            self.defined[:, k] = dcol
        if self.group is not None:
            self.groups = np.asarray(self._expr(self.group, vector, T, I_, S), dtype=np.int64)
        else:
            self.groups = np.zeros(N, dtype=np.int64)

    @staticmethod
    def _expr(e: Any, vector: bool, T: Any, I_: Any, S: Any) -> Any:
        if vector:
            return _array_fn(e)(T, I_, S)
        f = compile_expr(e)
        return np.array([f(int(t), int(i), int(s)) for t, i, s in zip(T, I_, S)], dtype=object)

    @staticmethod
    def _pred(c: Any, vector: bool, T: Any, I_: Any, S: Any) -> Any:
        if vector:
            return np.asarray(_array_pred(c)(T, I_, S), dtype=bool)
        f = compile_pred(c)
        return np.array([f(int(t), int(i), int(s)) for t, i, s in zip(T, I_, S)], dtype=bool)

    def __len__(self) -> int:
        return len(self.pts)

    def all_defined(self) -> Any:
        """Whether every output is defined, a boolean per point (worked out once; every
        finder of ``prove/witness.py`` asks)."""
        if self._ok is None:
            self._ok = self.defined.all(axis=1)
        return self._ok

    def point(self, p: int) -> tuple[int, int, int]:
        s, t, i = self.pts[p]
        return int(s), int(t), int(i)

    def index(self, s: int, t: int, i: int) -> int | None:
        if self._index is None:
            self._index = {self.point(p): p for p in range(len(self.pts))}
        return self._index.get((s, t, i))

    def values(self, p: int) -> tuple[Any, ...]:
        return tuple(int(self.out[p, k]) if self.defined[p, k] else None
                     for k in range(len(self.names)))

    def matches(self, k: int, p: int) -> list[int]:
        return [int(j) for j in np.nonzero(self.match[k][p])[0]]

    def table(self) -> dict[tuple[int, int, int], tuple[Any, ...]]:
        """(selector, lane, element) -> outputs (None where no case applies)."""
        if self._table is None:
            K = len(self.names)
            outs = self.out[:, :K].tolist()
            defs = self.defined[:, :K].tolist()
            self._table = {
                (s, t, i): tuple(int(v) if d else None for v, d in zip(o, ok))
                for (s, t, i), o, ok in zip(self.pts.tolist(), outs, defs)}
        return self._table


@lru_cache(maxsize=8192)
def _array_fn(e: Any) -> Any:
    """``compile_array(e, np)``, once per expression (a closure of numpy calls: pure)."""
    return compile_array(e, np)


@lru_cache(maxsize=8192)
def _array_pred(c: Any) -> Any:
    """``compile_array_pred(c, np)``, once per condition."""
    return compile_array_pred(c, np)


@lru_cache(maxsize=8192)
def _fits_int64(e: Any, span: tuple[int, int, int, int]) -> bool:
    """``algebra.fits_int64`` of one expression over the box (lanes 0..span[0], elements
    0..span[1], selectors span[2]..span[3]): it decides each expression alone, and the
    catalog's maps state some 115 distinct expressions some 1,500 times."""
    return fits_int64([e], {LANE: (0, span[0]), I: (0, span[1]), SEL: (span[2], span[3])})


@lru_cache(maxsize=8192)
def _defined_where(value: Any, cond: Any) -> Any:
    """Where a case's value and condition are both defined (SymPy), once per pair."""
    return sp.And(definedness(value), definedness(cond))


_MAP_ATTR = "_ptxlayout_enumerated_map"


def map_of(lay: Layout) -> CellMap | None:
    """The layout's enumerated map, built once per layout object (prove, the hardware check
    and the exports all ask for it).  Kept in the layout's own ``__dict__``, as
    ``functools.cached_property`` keeps its values: it lives exactly as long as the layout,
    and is not one of the dataclass's fields (equality and hashing ignore it)."""
    memo = lay.__dict__
    if _MAP_ATTR in memo:
        return memo[_MAP_ATTR]  # type: ignore[no-any-return]
    m = build_map(lay)
    memo[_MAP_ATTR] = m
    return m


def build_map(lay: Layout) -> CellMap | None:
    if not lay.formulas:
        return None
    names: tuple[str, ...]
    if lay.operand == "metadata":
        names = ("row", "chunk", "slot")
    elif lay.sparse_a:
        names = ("row", "firstcol", "lastcol")
    else:
        names = ("row", "col")
    fs = []
    for n in names:
        f = lay.formula(n)
        if f is None:
            return None
        fs.append(f)
    md = lay.metadata
    selectors = md.selectors if md is not None and md.selectors else (0,)
    holder = md.holder if md is not None else sp.true
    rep = lay.groups
    formulas = tuple(fs) + lay.helpers
    group = rep[2] if rep else None
    key = (names, tuple((f.name, tuple((c.value, c.cond, c.otherwise) for c in f.cases))
                        for f in formulas), lay.lanes, lay.elements, selectors, holder, group)
    known = _ENUMERATED.get(key)
    if known is not None:
        # the same formulas over the same domain (a section stated again, another type
        # group): the enumerated arrays are shared, only the layout differs
        m = copy.copy(known)
        m.lay = lay
        m.formulas = formulas
        return m
    m = CellMap(lay, names, formulas, lay.lanes, lay.elements, selectors, holder, group)
    if len(_ENUMERATED) >= _ENUMERATED_LIMIT:
        _ENUMERATED.clear()
    template = copy.copy(m)
    template.lay = None  # type: ignore[assignment]  # the memo keeps no layout alive
    template.formulas = ()
    _ENUMERATED[key] = template
    return m


# Enumerated maps by their formulas and domain, for the life of the process (bounded): a
# document that states one map many times enumerates it once.
_ENUMERATED: dict[Any, CellMap] = {}
_ENUMERATED_LIMIT = 1024


def clear_enumerated() -> None:
    """Forget every enumerated map (benchmarks measure cold runs)."""
    _ENUMERATED.clear()
    _TEXTS.clear()
    _DIGESTS.clear()



def cells(lay: Layout) -> dict[tuple[int, int, int], tuple[Any, ...]]:
    """The layout's table: (selector, lane, element) -> outputs (public, for exports)."""
    m = map_of(lay)
    return {} if m is None else dict(m.table())


def cells_and_names(lay: Layout) -> tuple[tuple[str, ...], dict[tuple[int, int, int],
                                                                  tuple[Any, ...]]]:
    m = map_of(lay)
    if m is None:
        return (), {}
    return m.names, dict(m.table())


def _row_order(m: CellMap, outputs: int) -> Any:
    """The indices of ``m``'s points in (selector, lane, element) order, each point whose
    first ``outputs`` outputs are all defined: the rows of its cell table, in order."""
    pts = m.pts
    order = np.lexsort((pts[:, 2], pts[:, 1], pts[:, 0]))
    return order[m.defined[order, :outputs].all(axis=1)]


def cell_rows(lay: Layout) -> tuple[str, list[dict[str, Any]]]:
    """('cells' | 'fields', rows) in (selector, lane, element) order; a replicated layout's
    cells also name the ``group`` (the product) of their lane.  Rows are built from the
    enumerated arrays, column by column (a point with an output no case defines has no row)."""
    m = map_of(lay)
    meta = lay.operand == "metadata"
    if m is None:
        return ("fields" if meta else "cells"), []
    K = len(m.names)
    pts = m.pts
    order = _row_order(m, K)
    s, t, i = (pts[order, k].tolist() for k in range(3))
    outs = [[int(v) for v in m.out[order, k].tolist()] for k in range(K)]
    if meta:
        sparsity = lay.sparsity
        bits = sparsity.index_bits if sparsity else 2
        fields = ("selector", "lane", "bit_lo", "bit_hi", "row", "chunk", "slot")
        return "fields", [dict(zip(fields, values)) for values in zip(
            s, t, [c * bits for c in i], [c * bits + bits - 1 for c in i], *outs, strict=True)]
    keys = ("lane", "element", *m.names)
    rows = [dict(zip(keys, values)) for values in zip(t, i, *outs, strict=True)]
    group_of = lay.lane_group()
    if group_of is not None:
        groups = {x: group_of(x) for x in set(t)}
        for row in rows:
            row["group"] = groups[row["lane"]]
    return "cells", rows


class RowTexts:
    """The rows of a cell table as ``base.hashes.row_text`` writes them, held as one byte
    matrix: row r is ``matrix[r]`` with its NUL padding dropped.  The toy table of the module
    docstring is two rows of the pieces ``{"col": `` ``0`` ``, "element": `` ``0`` ... ``}``,
    each piece a column of fixed width (``0`` padded to the widest number of its column), so
    ``b"".join(rows)`` is ``matrix.tobytes()`` without its NULs -- written by numpy, never a
    string per row (a wgmma accumulator has 16,384 rows, and the hardware verdict hashes
    every layout of a run).  A table whose numbers are too far apart to look up (a refuted
    map's cell 2**40 away) is written row by row."""

    def __init__(self, matrix: Any = None, rows: list[str] | None = None) -> None:
        self.rows = rows
        self.count = len(rows) if rows is not None else len(matrix)
        if matrix is not None:  # the bytes without their padding, and each row's length
            flat = matrix.reshape(-1)
            filled = flat != 0
            self.packed = flat[filled]
            self.lengths = filled.reshape(matrix.shape).sum(axis=1)

    def __len__(self) -> int:
        return self.count

    def data(self, keep: Any = None) -> bytes:
        """The rows joined, as ASCII (``keep``: a boolean mask of the rows to join)."""
        if self.rows is not None:
            rows = self.rows if keep is None else [r for r, k in zip(self.rows, keep) if k]
            return "".join(rows).encode("ascii")
        if keep is None:
            return bytes(self.packed.tobytes())
        return bytes(self.packed[np.repeat(np.asarray(keep, dtype=bool), self.lengths)]
                     .tobytes())

    def text(self, keep: Any = None) -> str:
        return self.data(keep).decode("ascii")


_SPREAD = 1 << 16  # the widest range of one column's numbers written by lookup


def columns_row_texts(keys: Sequence[str], cols: dict[str, Any]) -> RowTexts:
    n = len(cols[keys[0]]) if keys else 0
    pieces = []
    for j, k in enumerate(keys):
        v = np.asarray(cols[k])
        if v.dtype == object or (n and int(v.max()) - int(v.min()) > _SPREAD):
            fmt = "{" + ", ".join(f'"{k}": %d' for k in keys) + "}"
            return RowTexts(rows=[fmt % tuple(int(x) for x in row)
                                  for row in zip(*(cols[k] for k in keys))])
        head = (("{" if j == 0 else ", ") + f'"{k}": ').encode()
        pieces.append(np.broadcast_to(np.frombuffer(head, dtype=np.uint8), (n, len(head))))
        lo = int(v.min()) if n else 0
        hi = int(v.max()) if n else 0
        words = _words(lo, hi)
        pieces.append(words[v - lo].view(np.uint8).reshape(n, words.itemsize))
    pieces.append(np.broadcast_to(np.frombuffer(b"}", dtype=np.uint8), (n, 1)))
    return RowTexts(np.concatenate(pieces, axis=1))


@lru_cache(maxsize=512)
def _words(lo: int, hi: int) -> Any:
    """The numbers lo..hi written out, NUL-padded to the widest (one array per range: the
    catalog's columns share a few dozen ranges)."""
    words = np.array([str(x).encode() for x in range(lo, hi + 1)])
    words.flags.writeable = False
    return words


def cell_texts(lay: Layout) -> tuple[str, RowTexts, Any]:
    """(kind, texts, elements): the rows of ``cell_rows(lay)`` as ``cell_table_hash`` writes
    them (``base.hashes.row_text``), in the same order (``RowTexts``), and each row's element
    -- written straight from the enumerated arrays, without a dict per row."""
    return _by_map(_TEXTS, lay, lambda kind: (kind, RowTexts(rows=[]),
                                              np.zeros(0, dtype=np.int64)),
                   lambda m, meta, kind, _key: _cell_texts(lay, m, meta, kind))


_TEXTS: dict[tuple[Any, ...], tuple[Any, tuple[str, RowTexts, Any]]] = {}


def table_digest(lay: Layout) -> tuple[str, int, str | None]:
    """(kind, rows, digest) of the layout's cell table (``cell_rows``) without writing it:
    ``digest`` is a SHA-256 of everything ``cell_texts`` writes the rows from -- the
    enumerated points, outputs and where they are defined (the arrays themselves, as
    bytes), the outputs' names, the kind, the metadata's bit width and the replication
    group's expression -- or None where the outputs are not int64 (a map evaluated with
    Python's unbounded ints).  Two layouts with one digest and one header have one map hash
    (``prove/kept_hashes.py`` keeps it by this digest).  Once per enumerated map."""
    return _by_map(_DIGESTS, lay, lambda kind: (kind, 0, None), _digest)


_DIGESTS: dict[tuple[Any, ...], tuple[Any, tuple[str, int, str | None]]] = {}


def _digest(m: CellMap, _meta: bool, kind: str, key: tuple[Any, ...]) \
        -> tuple[str, int, str | None]:
    K = len(m.names)
    defined = np.ascontiguousarray(m.defined[:, :K])
    rows = int(defined.all(axis=1).sum()) if K else len(m.pts)
    digest: str | None = None
    if m.out.dtype == np.int64 and m.pts.dtype == np.int64:
        h = hashlib.sha256(repr((m.names, kind, key[3], srepr(key[4]) if key[4] is not None
                                 else None, m.pts.shape, m.out.shape)).encode())
        for a in (m.pts, m.out[:, :K], defined):
            h.update(np.ascontiguousarray(a).tobytes())
        digest = h.hexdigest()
    return kind, rows, digest


_Out = TypeVar("_Out")


def _by_map(store: dict[tuple[Any, ...], tuple[Any, _Out]], lay: Layout,
            empty: Callable[[str], _Out],
            build: Callable[[CellMap, bool, str, tuple[Any, ...]], _Out]) -> _Out:
    """``build(map, meta, kind, key)`` once per enumerated map: the same enumerated arrays (a
    map stated again: ``build_map`` shares them) give the same rows wherever what a row also
    names is the same -- the metadata's bits, the replication group's expression (``key``:
    the arrays' id, the outputs' names, the kind, those two).  ``empty(kind)`` where the
    layout has no map."""
    m = map_of(lay)
    meta = lay.operand == "metadata"
    kind = "fields" if meta else "cells"
    if m is None:
        return empty(kind)
    sparsity = lay.sparsity if meta else None
    rep = lay.groups if not meta else None
    key = (id(m.out), m.names, kind, sparsity.index_bits if sparsity else None,
           rep[2] if rep else None)
    hit = store.get(key)
    if hit is not None and hit[0] is m.out:
        return hit[1]
    out = build(m, meta, kind, key)
    # the array is kept: its id names no other while here
    keep_bounded(store, key, (m.out, out), _ENUMERATED_LIMIT)
    return out


def _cell_texts(lay: Layout, m: CellMap, meta: bool, kind: str) -> tuple[str, RowTexts, Any]:
    K = len(m.names)
    pts = m.pts
    order = _row_order(m, K)
    s, t, i = (pts[order, k] for k in range(3))
    outs = [m.out[order, k] for k in range(K)]
    cols: dict[str, Any]
    if meta:
        sparsity = lay.sparsity
        bits = sparsity.index_bits if sparsity else 2
        cols = {"selector": s, "lane": t, "bit_lo": i * bits, "bit_hi": i * bits + bits - 1,
                "row": outs[0], "chunk": outs[1], "slot": outs[2]}
    else:
        cols = {"lane": t, "element": i, **dict(zip(m.names, outs, strict=True))}
        group_of = lay.lane_group()
        if group_of is not None:
            # each lane's group worked out once (asked with its inverse, NumPy's ``unique``
            # does not import ``numpy.ma``, 10 ms, to ask whether ``t`` is masked)
            lanes, where = np.unique(t, return_inverse=True)
            cols["group"] = np.array([group_of(int(x)) for x in lanes],
                                     dtype=np.int64)[where.reshape(-1)]
    return kind, columns_row_texts(sorted(cols), cols), pts[order, 2]


def _cell_array(lay: Layout) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(the keys, the rows as an int64 array) of ``cell_rows(lay)`` for a table of cells whose
    rows are (lane, element) and two outputs, no replication group; None for any other (a
    metadata table, an empty one, a group's, one of more outputs).  Taken from the enumerated
    arrays in ``cell_rows``' order, without a dict a row."""
    m = map_of(lay)
    if m is None or lay.operand == "metadata" or len(m.names) != 2 \
            or lay.lane_group() is not None:
        return None
    if m.out.dtype != np.int64 or m.pts.dtype != np.int64:  # Python's ints: as the rows say
        kind, rows = cell_rows(lay)
        if not rows:
            return None
        return tuple(rows[0]), np.array([list(r.values()) for r in rows], dtype=np.int64)
    pts = m.pts
    order = _row_order(m, 2)
    if not len(order):
        return None
    arr = np.stack([pts[order, 1], pts[order, 2], m.out[order, 0], m.out[order, 1]], axis=1)
    return ("lane", "element", *m.names), np.ascontiguousarray(arr, dtype=np.int64)


def map_hash(lay: Layout, table: tuple[str, list[dict[str, Any]]] | None = None) -> str:
    """A hash of the (lane, element) -> cell table: what the GPU confirms.  ``table`` is
    ``cell_rows(lay)`` when the caller has it already."""
    if table is None:
        kind, texts, _e = cell_texts(lay)
        return cell_table_hash_of_bytes(lay.instruction, lay.shape_text, lay.operand, kind,
                                        texts.data())
    kind, rows = table
    return cell_table_hash(lay.instruction, lay.shape_text, lay.operand, kind, rows)


def prefix_sources(layouts: Sequence[Layout]) -> dict[str, tuple[str, int]]:
    """Layouts whose cell table is the first E elements of another's: ``{id: (that id, E)}``.

    wgmma's accumulator at N holds elements d0..d(N/2 - 1), and each is where the same
    element of the N = 256 accumulator is: ``wgmma.m64n8k16.D.f32`` -> ``(the m64n256k16
    D id, 4)``.  The exports state such a table once and point the others at it; the base
    is the layout with the most elements (first in order among equals), never itself a
    reference.  Decided by comparing the tables (``cell_rows``' rows of (lane, element, two
    outputs), as arrays: ``_cell_array``), never by the names."""
    arrays: list[tuple[Layout, np.ndarray, tuple[str, ...]]] = []
    for lay in layouts:
        got = _cell_array(lay)
        if got is not None:
            arrays.append((lay, got[1], got[0]))
    buckets: dict[tuple[Any, ...], list[tuple[Layout, np.ndarray]]] = {}
    order = sorted(range(len(arrays)), key=lambda n: (-arrays[n][0].elements, n))
    out: dict[str, tuple[str, int]] = {}
    for n in order:
        lay, arr, names = arrays[n]
        first = arr[arr[:, 1] == 0]
        key = (lay.lanes, names, first.tobytes())
        bases = buckets.setdefault(key, [])
        for base, barr in bases:
            sub = barr[barr[:, 1] < lay.elements]
            if sub.shape == arr.shape and (sub == arr).all():
                out[lay.id] = (base.id, lay.elements)
                break
        else:
            bases.append((lay, arr))
    return out
