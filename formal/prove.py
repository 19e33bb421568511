"""Prove stage: obligations on each layout, decided by Z3 and re-checked by enumeration.

A layout is *correct* when its map from (lane, element) to tile cells is a bijection onto
the tile and its tables agree with its formulas.  Take a 4-lane, 2-element toy layout of a
2 x 4 tile, ``row = i``, ``col = lane``: eight (lane, i) pairs, eight cells, no two pairs
on one cell -- injective, and by counting (8 = 2 x 4) surjective.  Change it to
``col = lane >> 1`` and lanes 0 and 1 collide on (0, 0): the injectivity obligation is
refuted, and its counterexample names both pairs and the cell.

The obligations (DESIGN.md) are ``cases``, ``in-range``, ``injective``, ``surjective``,
``register-budget``, ``element-list``, ``reference``, ``type-names``, ``sparse-chunks``,
``metadata-coverage``, ``selector-range`` and ``hardware``.  For every formula obligation
Z3 decides over bit-vectors whose width is chosen from sound interval bounds (so nothing
overflows), under a timeout that yields ``unknown``; then the same obligation is decided
again by enumerating every (lane, element) with Python integers.  A disagreement -- or a Z3
counterexample that does not replay -- is an internal error, never a verdict.  Reported
witnesses are the smallest ones enumeration finds.

Surjectivity is quantified (every cell has a pre-image).  Where injectivity and in-range
are proved and the domain has exactly as many pairs as the tile has cells, it follows by
counting; where the domain is smaller it fails by counting and the uncovered cell is
confirmed by an unsatisfiable Z3 query; otherwise Z3 decides the quantified formula.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import sympy as sp
import z3

from .algebra import (
    LANE,
    SEL,
    BitAnd,
    BitOr,
    BitXor,
    I,
    bounds,
    compile_array,
    compile_array_pred,
    compile_expr,
    compile_pred,
    definedness,
    fits_int64,
)
from .model import Formula, Layout, Model
from .source import Finding, Span
from .syntax import ElementList
from .variants import (
    CONTAINER_BITS,
    ELEMENT_LETTER,
    FLOAT_TYPES,
    HEADER_NAMES,
    PTX_TYPES,
    REGISTER_BITS,
    SPARSITY,
    TYPE_BITS,
    closest,
    legal_types,
)

OBLIGATIONS = ("cases", "in-range", "injective", "surjective", "register-budget",
               "element-list", "reference", "type-names", "sparse-chunks",
               "metadata-coverage", "selector-range", "hardware")

# Test-only hook: a function (query name, z3 formula) -> z3 formula applied to every query,
# so the tests can plant a wrong encoding and watch the cross-check catch it.
TEST_HOOKS: dict[str, Callable[[str, Any], Any]] = {}


@dataclass(frozen=True)
class Options:
    timeout_ms: int = 5000
    cross_check: bool = True
    evidence: Any = None  # formal.evidence.Evidence | None


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # proved | refuted | unknown | error | not-applicable
    message: str = ""
    counterexample: Any = None
    span: Span | None = None
    severity: str = "error"
    method: str = ""


@dataclass(frozen=True)
class LayoutResult:
    layout: Layout
    verdicts: tuple[Verdict, ...]
    findings: tuple[Finding, ...]

    def verdict(self, name: str) -> Verdict:
        for v in self.verdicts:
            if v.name == name:
                return v
        return Verdict(name, "not-applicable")

    @property
    def ok(self) -> bool:
        return all(v.status in ("proved", "not-applicable") for v in self.verdicts)


@dataclass(frozen=True)
class Proof:
    results: tuple[LayoutResult, ...]
    findings: tuple[Finding, ...]
    internal_errors: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


class InternalError(Exception):
    """Z3 and enumeration disagree, or a Z3 witness does not replay."""


# ---- the domain of a map: every (selector, lane, element), evaluated at once ---------------------


@dataclass
class _Map:
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

    def __post_init__(self) -> None:
        self.holder_fn = compile_pred(self.holder)
        pts = [(s, t, i) for s in self.selectors for t in range(self.lanes)
               if self.holder_fn(t, 0, s) for i in range(self.n)]
        self.pts = np.array(pts, dtype=np.int64).reshape(-1, 3)
        S, T, I_ = self.pts[:, 0], self.pts[:, 1], self.pts[:, 2]
        box = {LANE: (0, self.lanes - 1), I: (0, max(0, self.n - 1)),
               SEL: (min(self.selectors), max(self.selectors))}
        exprs = [c.value for f in self.formulas for c in f.cases] + \
                [c.cond for f in self.formulas for c in f.cases] + \
                ([self.group] if self.group is not None else [])
        vector = fits_int64(exprs, box)
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
                ok = sp.And(definedness(c.value), definedness(c.cond))
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
            return compile_array(e, np)(T, I_, S)
        f = compile_expr(e)
        return np.array([f(int(t), int(i), int(s)) for t, i, s in zip(T, I_, S)], dtype=object)

    @staticmethod
    def _pred(c: Any, vector: bool, T: Any, I_: Any, S: Any) -> Any:
        if vector:
            return np.asarray(compile_array_pred(c, np)(T, I_, S), dtype=bool)
        f = compile_pred(c)
        return np.array([f(int(t), int(i), int(s)) for t, i, s in zip(T, I_, S)], dtype=bool)

    def __len__(self) -> int:
        return len(self.pts)

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


_MAP_ATTR = "_ptxlayout_enumerated_map"


def _map_of(lay: Layout) -> _Map | None:
    """The layout's enumerated map, built once per layout object (prove, the hardware check
    and the exports all ask for it).  Kept in the layout's own ``__dict__``, as
    ``functools.cached_property`` keeps its values: it lives exactly as long as the layout,
    and is not one of the dataclass's fields (equality and hashing ignore it)."""
    memo = lay.__dict__
    if _MAP_ATTR in memo:
        return memo[_MAP_ATTR]  # type: ignore[no-any-return]
    m = _build_map(lay)
    memo[_MAP_ATTR] = m
    return m


def _build_map(lay: Layout) -> _Map | None:
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
    return _Map(lay, names, tuple(fs) + lay.helpers, lay.lanes, lay.elements, selectors,
                holder, rep[2] if rep else None)


def _ranges(m: _Map) -> list[tuple[int, int]]:
    """The half-open range of each output: the tile (and chunk/slot counts for metadata)."""
    lay = m.lay
    r, c = lay.tile
    if lay.operand == "metadata":
        sparsity = lay.sparsity
        chunks = lay.shape.k // sparsity.chunk if sparsity else 0
        slots = sparsity.slots if sparsity else 0
        return [(0, r), (0, chunks), (0, slots)]
    if lay.sparse_a:
        return [(0, r), (0, c), (0, c)]
    return [(0, r), (0, c)]


# ---- enumeration: the smallest witness of each violation, or None --------------------------------


def _w_cases(m: _Map, k: int) -> int | None:
    bad = np.nonzero(m.match[k].sum(axis=1) != 1)[0]
    return int(bad[0]) if len(bad) else None


def _w_range(m: _Map) -> int | None:
    ok = m.defined.all(axis=1)
    inside = np.ones(len(m), dtype=bool)
    for k, (lo, hi) in enumerate(_ranges(m)):
        col = m.out[:, k]
        inside &= (col >= lo) & (col < hi)
    if m.lay.sparse_a:
        inside &= m.out[:, 1] <= m.out[:, 2]
    bad = np.nonzero(ok & ~inside)[0]
    return int(bad[0]) if len(bad) else None


def _w_collision(m: _Map) -> tuple[int, int] | None:
    """The first pair (earlier, later) of domain points that violate injectivity."""
    ok = np.nonzero(m.defined.all(axis=1))[0]
    if m.lay.sparse_a:
        return _w_overlap(m, ok)
    if not len(ok):
        return None
    keys = np.column_stack([m.pts[ok, 0], m.groups[ok], m.out[ok].astype(np.int64)
                            if m.out.dtype != object else m.out[ok]])
    if keys.dtype == object:
        seen: dict[tuple[Any, ...], int] = {}
        for row, p in zip(keys, ok):
            key = tuple(row)
            if key in seen:
                return seen[key], int(p)
            seen[key] = int(p)
        return None
    _u, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    firsts = first[inv]
    dup = np.nonzero(firsts != np.arange(len(ok)))[0]
    if not len(dup):
        return None
    j = int(dup[0])
    return int(ok[firsts[j]]), int(ok[j])


def _w_overlap(m: _Map, ok: Any) -> tuple[int, int] | None:
    """Sparse A: two different (lane, range) chunks of one row overlap."""
    best: tuple[int, int] | None = None
    by_row: dict[tuple[int, int], list[int]] = {}
    for p in ok:
        by_row.setdefault((int(m.pts[p, 0]), int(m.out[p, 0])), []).append(int(p))
    for plist in by_row.values():
        spans: dict[tuple[int, int, int], int] = {}
        for p in plist:
            key = (int(m.pts[p, 1]), int(m.out[p, 1]), int(m.out[p, 2]))
            spans.setdefault(key, p)
        items = sorted(spans.items(), key=lambda kv: (kv[0][1], kv[0][2]))
        for x in range(len(items)):
            (t1, a1, b1), p1 = items[x]
            for y in range(x + 1, len(items)):
                (t2, a2, b2), p2 = items[y]
                if a2 > b1:
                    break
                pair = (min(p1, p2), max(p1, p2))
                if best is None or pair[1] < best[1]:
                    best = pair
    return best


def _w_hole(m: _Map) -> tuple[int, int, tuple[int, ...]] | None:
    """(selector, group, cell) of the first cell no point maps to."""
    lay = m.lay
    ranges = _ranges(m)
    ok = m.defined.all(axis=1)
    ngroups = lay.groups[1] if lay.groups else 1
    for s in m.selectors:
        for g in range(ngroups):
            sel = ok & (m.pts[:, 0] == s) & (m.groups == g)
            if lay.sparse_a:
                rows, cols = lay.tile
                mark = np.zeros((rows, cols), dtype=bool)
                for p in np.nonzero(sel)[0]:
                    r, fc, lc = (int(x) for x in m.out[p])
                    if 0 <= r < rows:
                        mark[r, max(0, fc):max(0, min(cols, lc + 1))] = True
            else:
                dims = tuple(hi for _lo, hi in ranges)
                mark = np.zeros(dims, dtype=bool)
                vals = m.out[sel]
                inside = np.ones(len(vals), dtype=bool)
                for k, (lo, hi) in enumerate(ranges):
                    inside &= np.asarray((vals[:, k] >= lo) & (vals[:, k] < hi), dtype=bool)
                vals = vals[inside].astype(np.int64)  # in range: small enough for int64
                mark[tuple(vals[:, k] for k in range(len(ranges)))] = True
            holes = np.argwhere(~mark)
            if len(holes):
                return s, g, tuple(int(x) for x in holes[0])
    return None


def _w_chunks(m: _Map, width: int, chunk: int, nz: int) -> tuple[int, str] | None:
    """Sparse A: the first element whose chunk is wrong in width, alignment or count."""
    ok = m.defined.all(axis=1)
    out = m.out
    fc, lc = out[:, 1], out[:, 2]
    # count, per (selector, lane, row, range), the points that have a value there: a point
    # where some formula has no case holds nothing (its 'cases' finding says so)
    if out.dtype == object:  # values past int64: count with Python ints
        tally: dict[tuple[Any, ...], int] = {}
        keys_py = [(int(m.pts[p, 0]), int(m.pts[p, 1]), *out[p]) for p in range(len(out))]
        for q, key in enumerate(keys_py):
            if ok[q]:
                tally[key] = tally.get(key, 0) + 1
        count = np.array([tally.get(key, 0) for key in keys_py], dtype=np.int64)
    else:
        keys = np.column_stack([m.pts[:, 0], m.pts[:, 1], out])
        count = np.zeros(len(out), dtype=np.int64)
        if ok.any():
            _u, inv, counts = np.unique(keys[ok], axis=0, return_inverse=True,
                                        return_counts=True)
            count[ok] = counts[inv.reshape(-1)]
    for p in np.nonzero(ok)[0]:
        a, b = int(fc[p]), int(lc[p])
        r = int(out[p, 0])
        if b - a + 1 != width:
            return int(p), f"cols {a}..{b} are {b - a + 1} wide, the table says {width} " \
                           "consecutive"
        if a % chunk:
            return int(p), f"cols {a}..{b} start inside a {chunk}-wide chunk"
        if count[p] != nz:
            return int(p), f"lane {int(m.pts[p, 1])} holds {int(count[p])} non-zeros of row " \
                           f"{r}, cols {a}..{b}; the table says {nz}"
    return None


# ---- Z3 encoding ---------------------------------------------------------------------------------


_SHARED: dict[int, dict[Any, Any]] = {}


class _Enc:
    """SymPy -> Z3 bit-vectors of one width, for one (selector, lane, element) triple."""

    def __init__(self, width: int, s: Any, t: Any, i: Any) -> None:
        self.w = width
        self.env = {SEL: s, LANE: t, I: i}
        # terms over the standard point (s, t, i) are shared by every map of this width: a
        # SymPy expression such as floor(lane/4) is translated once per run, not per layout
        standard = all(str(v) == n for v, n in ((s, "s"), (t, "t"), (i, "i")))
        if standard and sum(len(v) for v in _SHARED.values()) >= _SHARED_LIMIT:
            _SHARED.clear()
        self.memo: dict[Any, Any] = _SHARED.setdefault(width, {}) if standard else {}

    def val(self, v: int) -> Any:
        return z3.BitVecVal(v, self.w)

    def expr(self, e: Any) -> Any:
        hit = self.memo.get(e)
        if hit is not None:
            return hit
        out = self._expr(e)
        self.memo[e] = out
        return out

    def _expr(self, e: Any) -> Any:
        if e.is_Integer:
            return self.val(int(e))
        if isinstance(e, sp.Symbol):
            return self.env[e]
        if isinstance(e, sp.Add):
            out = self.expr(e.args[0])
            for a in e.args[1:]:
                out = out + self.expr(a)
            return out
        if isinstance(e, sp.Mul):
            out = self.expr(e.args[0])
            for a in e.args[1:]:
                out = out * self.expr(a)
            return out
        if isinstance(e, sp.Mod):
            return self.expr(e.args[0]) % self.expr(e.args[1])  # bvsmod: floor modulo
        if isinstance(e, sp.floor):
            num, den = sp.fraction(sp.together(e.args[0]))
            d = int(den)
            x = self.expr(num)
            if d & (d - 1) == 0:
                return x >> (d.bit_length() - 1)  # arithmetic shift = floor division
            dv = self.val(d)
            return (x - (x % dv)) / dv
        if isinstance(e, BitAnd):
            return self.expr(e.args[0]) & self.expr(e.args[1])
        if isinstance(e, BitOr):
            return self.expr(e.args[0]) | self.expr(e.args[1])
        if isinstance(e, BitXor):
            return self.expr(e.args[0]) ^ self.expr(e.args[1])
        if isinstance(e, sp.Pow) and e.args[1].is_Integer:
            base = self.expr(e.args[0])
            out = self.val(1)
            for _ in range(int(e.args[1])):
                out = out * base
            return out
        if isinstance(e, sp.Piecewise):
            out = self.val(0)
            for ex, c in reversed(e.args):
                out = z3.If(self.pred(c), self.expr(ex), out)
            return out
        raise InternalError(f"no Z3 encoding for {type(e).__name__}")

    def pred(self, c: Any) -> Any:
        if c is sp.true or c is True:
            return z3.BoolVal(True)
        if c is sp.false or c is False:
            return z3.BoolVal(False)
        if isinstance(c, sp.And):
            return z3.And(*[self.pred(a) for a in c.args])
        if isinstance(c, sp.Or):
            return z3.Or(*[self.pred(a) for a in c.args])
        if isinstance(c, sp.Not):
            return z3.Not(self.pred(c.args[0]))
        if isinstance(c, sp.core.relational.Relational):
            a, b = self.expr(c.lhs), self.expr(c.rhs)
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
                    "!=": a != b}[c.rel_op]
        raise InternalError(f"no Z3 encoding for condition {type(c).__name__}")


def _subexprs(e: Any) -> Iterator[Any]:
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, sp.core.relational.Relational):
            stack.extend((x.lhs, x.rhs))
        elif isinstance(x, sp.Basic):
            stack.extend(a for a in x.args if isinstance(a, sp.Basic))


def _width(m: _Map) -> int:
    """Bits that hold every intermediate value of every formula over the domain, signed.

    Bounds come from interval arithmetic over the domain box, so a wide literal widens the
    encoding instead of silently wrapping; the cross-check would catch a wrap anyway.
    """
    box = {LANE: (0, m.lanes - 1), I: (0, max(0, m.n - 1)),
           SEL: (min(m.selectors), max(m.selectors))}
    top = max([m.lanes, m.n + 1, max(m.selectors) + 1, *[hi for _lo, hi in _ranges(m)]])
    roots = [c.value for f in m.formulas for c in f.cases] + \
            [c.cond for f in m.formulas for c in f.cases] + [m.holder]
    if m.group is not None:
        roots.append(m.group)
    for r in roots:
        for x in _subexprs(r):
            if isinstance(x, sp.Expr) and not isinstance(x, sp.core.relational.Relational) \
                    and not x.is_Boolean:
                try:
                    lo, hi = bounds(x, box)
                except (ValueError, TypeError):
                    continue
                top = max(top, abs(lo), abs(hi))
    # every subexpression lies in [-top, top]; the encodings add at most a difference of two
    # values plus one (a chunk's width), or count up to n: 2 * top + 2 with a sign bit
    return max(6, (2 * top + 2).bit_length() + 1)


class _Sym:
    """The Z3 terms of a map at one symbolic point; further points by substitution."""

    def __init__(self, m: _Map, width: int | None = None) -> None:
        self.m = m
        self.w = w = width or _width(m)
        self.s, self.t, self.i = z3.BitVecs("s t i", w)
        enc = _Enc(w, self.s, self.t, self.i)
        self.enc = enc
        sel = z3.Or(*[self.s == enc.val(v) for v in m.selectors])
        self.dom = z3.And(sel, self.t >= 0, self.t < enc.val(m.lanes), self.i >= 0,
                          self.i < enc.val(m.n), enc.pred(m.holder))
        self.conds: list[list[Any]] = []
        self.vals: list[Any] = []
        defs = []
        for k, f in enumerate(m.formulas):
            conds: list[Any] = []
            for c in f.cases:
                if c.otherwise:
                    conds.append(z3.Not(z3.Or(*conds)) if conds else z3.BoolVal(True))
                else:
                    conds.append(enc.pred(c.cond))
            self.conds.append(conds)
            if k >= len(m.names):
                continue  # a helper: only its cases are checked
            out = enc.val(0)
            dfn = z3.BoolVal(False)
            for c, cond in reversed(list(zip(f.cases, conds))):
                out = z3.If(cond, enc.expr(c.value), out)
                ok = enc.pred(sp.And(definedness(c.value), definedness(c.cond)))
                dfn = z3.If(cond, ok, dfn)
            self.vals.append(out)
            defs.append(dfn)
        self.defined = z3.And(*defs)
        self.group = enc.expr(m.group) if m.group is not None else None

    def val(self, v: int) -> Any:
        return z3.BitVecVal(v, self.w)

    def renamed(self, tag: str) -> tuple[Any, Any, Any, Any, list[Any], Any, Any]:
        """(s, t, i, dom, vals, defined, group) at a fresh point."""
        s2, t2, i2 = z3.BitVecs(f"s{tag} t{tag} i{tag}", self.w)
        sub = [(self.s, s2), (self.t, t2), (self.i, i2)]
        vals = [z3.substitute(v, *sub) for v in self.vals]
        group = z3.substitute(self.group, *sub) if self.group is not None else None
        return (s2, t2, i2, z3.substitute(self.dom, *sub), vals,
                z3.substitute(self.defined, *sub), group)

    def at_element(self, j: int) -> tuple[list[Any], Any]:
        """(vals, defined) at the same selector and lane, element j."""
        sub = (self.i, self.val(j))
        return [z3.substitute(v, sub) for v in self.vals], z3.substitute(self.defined, sub)

    def point(self, model: Any) -> tuple[int, int, int]:
        return (_int(model, self.s, self.w), _int(model, self.t, self.w),
                _int(model, self.i, self.w))


def _check(name: str, formula: Any, timeout_ms: int, quantified: bool = False,
           ) -> tuple[str, Any]:
    """('sat', model) | ('unsat', None) | ('unknown', reason)."""
    hook = TEST_HOOKS.get("encoding")
    if hook is not None:
        formula = hook(name, formula)
    s = z3.Solver() if quantified else _qfbv_solver()
    s.set("timeout", max(1, int(timeout_ms)))
    s.add(formula)
    r = s.check()
    if r == z3.sat:
        return "sat", s.model()
    if r == z3.unsat:
        return "unsat", None
    return "unknown", s.reason_unknown()


def _qfbv_solver() -> Any:
    """Bit-vector queries without quantifiers: simplify, solve equations, bit-blast, SAT.

    About twice as fast as the generic QF_BV solver on these small queries (measured over the
    catalog); a model comes back through the tactics' model converters.
    """
    return z3.Then("simplify", "solve-eqs", "bit-blast", "sat").solver()


def _int(model: Any, v: Any, w: int) -> int:
    x = model.evaluate(v, model_completion=True).as_long()
    return x - (1 << w) if x >= 1 << (w - 1) else x


# ---- core results (cacheable across layouts with the same map) -----------------------------------


@dataclass(frozen=True)
class _Core:
    status: str
    message: str = ""
    cex: Any = None
    where: tuple[str, int] | None = None  # (formula name, case index) the fault is in
    method: str = "z3+enumeration"
    cases: tuple[int, ...] = ()  # cases of where's formula to name by their source lines


def _elem(m: _Map, i: int) -> str:
    if m.lay.operand == "metadata":
        return f"field {i}"
    return f"{ELEMENT_LETTER[m.lay.operand]}{i}"


def _pt(m: _Map, s: int, t: int, i: int) -> dict[str, Any]:
    d: dict[str, Any] = {"lane": t, "element": _elem(m, i)}
    if m.lay.operand == "metadata":
        d = {"selector": s, **d}
    return d


def _agree(name: str, z3_status: str, enum_status: str) -> None:
    if z3_status in ("proved", "refuted") and enum_status != z3_status:
        raise InternalError(f"{name}: Z3 says {z3_status} but enumeration says {enum_status}")


def _settle(name: str, zs: str, replays: Callable[[], bool], find: Callable[[], Any],
            opts: Options) -> Any:
    """The cross-check of one obligation: a Z3 counterexample must replay in the enumeration
    table, and the enumeration, deciding on its own, must agree with Z3.  Returns the
    smallest witness enumeration finds (None when it finds none or was not asked)."""
    if zs == "refuted" and not replays():
        raise InternalError(f"{name}: the Z3 witness does not replay")
    witness = find() if opts.cross_check or zs == "refuted" else None
    if opts.cross_check:
        _agree(name, zs, "refuted" if witness is not None else "proved")
    return witness


@dataclass(frozen=True)
class _ChunkSpec:
    width: int
    chunk: int
    nonzeros: int


def _violations(sym: _Sym, chunks: _ChunkSpec | None) -> dict[str, Any]:
    """Obligation name -> a Z3 formula satisfiable exactly when the obligation fails."""
    m = sym.m
    out: dict[str, Any] = {}
    for k, f in enumerate(m.formulas):
        if len(f.cases) == 1 and f.cases[0].cond is sp.true:
            continue
        count = z3.Sum(*[z3.If(c, sym.val(1), sym.val(0)) for c in sym.conds[k]])
        out[f"cases:{k}"] = z3.And(sym.dom, count != 1)
    ok = [z3.And(v >= sym.val(lo), v < sym.val(hi)) for v, (lo, hi) in zip(sym.vals,
                                                                              _ranges(m))]
    if m.lay.sparse_a:
        ok.append(sym.vals[1] <= sym.vals[2])
    out["in-range"] = z3.And(sym.dom, sym.defined, z3.Not(z3.And(*ok)))
    s2, t2, i2, dom2, v2, d2, g2 = sym.renamed("2")
    v1 = sym.vals
    conds = [sym.dom, dom2, sym.defined, d2, sym.s == s2]
    if sym.group is not None:
        conds.append(sym.group == g2)
    if m.lay.sparse_a:
        same = z3.And(sym.t == t2, v1[1] == v2[1], v1[2] == v2[2])
        conds += [v1[0] == v2[0], z3.Not(same), v1[1] <= v2[2], v2[1] <= v1[2]]
    else:
        conds += [z3.Or(sym.t != t2, sym.i != i2)] + [a == b for a, b in zip(v1, v2)]
    out["injective"] = z3.And(*conds)
    out["_second"] = (s2, t2, i2)
    if chunks is not None:
        row, fc, lc = v1
        same_key = []
        for j in range(m.n):
            vj, dj = sym.at_element(j)
            same_key.append(z3.If(z3.And(dj, vj[0] == row, vj[1] == fc, vj[2] == lc),
                                  sym.val(1), sym.val(0)))
        bad = z3.Or(lc - fc + sym.val(1) != sym.val(chunks.width),
                    fc % sym.val(chunks.chunk) != sym.val(0),
                    z3.Sum(*same_key) != sym.val(chunks.nonzeros))
        out["sparse-chunks"] = z3.And(sym.dom, sym.defined, bad)
    return out


def _formula_cores(m: _Map, opts: Options, chunks: _ChunkSpec | None) -> dict[str, _Core]:
    """Decide cases, in-range, injective (and sparse-chunks) for a map.

    One Z3 query asks whether *any* of them fails; when it does not (the usual case) every
    obligation is proved by that one query.  Otherwise each is decided on its own.  Either
    way enumeration decides each again and must agree.
    """
    sym = _Sym(m)
    viol = _violations(sym, chunks)
    second = viol.pop("_second")
    z3_status: dict[str, str] = {}
    z3_models: dict[str, Any] = {}
    r, _model = _check("combined", z3.Or(*viol.values()), opts.timeout_ms)
    if r == "unsat":
        z3_status = {name: "proved" for name in viol}
        method = "z3 (one query) + enumeration"
    else:
        method = "z3+enumeration"
        for name, formula in viol.items():
            rr, model = _check(name, formula, opts.timeout_ms)
            z3_status[name] = {"unsat": "proved", "sat": "refuted"}.get(rr, "unknown")
            z3_models[name] = model
    cores: dict[str, _Core] = {}
    for k, f in enumerate(m.formulas):
        cores[f"cases:{k}"] = _cases_core(m, k, f, z3_status.get(f"cases:{k}"),
                                          z3_models.get(f"cases:{k}"), sym, opts, method)
    cores["in-range"] = _range_core(m, z3_status["in-range"], z3_models.get("in-range"), sym,
                                    opts, method)
    cores["injective"] = _injective_core(m, z3_status["injective"],
                                         z3_models.get("injective"), sym, second, opts, method)
    if chunks is not None:
        cores["sparse-chunks"] = _chunks_core(m, chunks, z3_status["sparse-chunks"],
                                              z3_models.get("sparse-chunks"), sym, opts,
                                              method)
    return cores


def _cases_core(m: _Map, k: int, f: Formula, zs: str | None, model: Any, sym: _Sym,
                opts: Options, method: str) -> _Core:
    for j, c in enumerate(f.cases):
        if c.max_listed >= m.n:
            return _Core("refuted", f"the condition '{c.guard_text}' of '{f.name}' lists "
                         f"{_elem(m, c.max_listed)}, but a lane holds only {m.n} elements "
                         f"({_elem(m, 0)}..{_elem(m, m.n - 1)})",
                         {"element": _elem(m, c.max_listed), "elements": m.n}, (f.name, j),
                         "syntax")
    if zs is None:
        return _Core("proved", method="trivial (one unconditional case)")
    def replays() -> bool:
        p = m.index(*sym.point(model))
        return p is not None and len(m.matches(k, p)) != 1

    witness = _settle(f"cases of '{f.name}'", zs, replays, lambda: _w_cases(m, k), opts)
    if zs == "unknown":
        return _Core("unknown", f"Z3 gave up on the cases of '{f.name}'")
    if zs == "proved":
        return _Core("proved", method=method)
    assert witness is not None
    s_, t_, i_ = m.point(witness)
    hits = m.matches(k, witness)
    cex = {**_pt(m, s_, t_, i_), "formula": f.name, "cases": [j + 1 for j in hits]}
    if not hits:
        return _Core("refuted", f"{_elem(m, i_)} of lane {t_} matches no case of "
                     f"'{f.name}'", cex, (f.name, len(f.cases) - 1), method)
    # the source lines are the layout's own: _verdict names them (a core is shared by every
    # layout with the same map, whatever document its text comes from)
    return _Core("refuted", f"{_elem(m, i_)} of lane {t_} matches {len(hits)} cases of "
                 f"'{f.name}'", cex, (f.name, hits[1]), method, tuple(hits))


def _range_core(m: _Map, zs: str, model: Any, sym: _Sym, opts: Options, method: str) -> _Core:
    def replays() -> bool:
        p = m.index(*sym.point(model))
        return p is not None and _w_range_at(m, p)

    witness = _settle("in-range", zs, replays, lambda: _w_range(m), opts)
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else "Z3 gave up on in-range", method=method)
    assert witness is not None
    out = m.values(witness)
    ranges = _ranges(m)
    s_, t_, i_ = m.point(witness)
    k = next((j for j, (v, (lo, hi)) in enumerate(zip(out, ranges)) if not lo <= v < hi), 1)
    case = (m.matches(k, witness) or [0])[0]
    cell = dict(zip(m.names, out))
    if m.lay.operand == "metadata":
        tail = ", out of range"
    else:
        tail = f", outside the {ranges[0][1]} x {ranges[1][1]} tile"
    msg = f"lane {t_}, {_elem(m, i_)} maps to " + \
          ", ".join(f"{n} {v}" for n, v in cell.items()) + tail
    if m.lay.sparse_a and all(lo <= v < hi for v, (lo, hi) in zip(out, ranges)):
        msg = f"lane {t_}, {_elem(m, i_)}: firstcol {out[1]} > lastcol {out[2]}"
    return _Core("refuted", msg, {**_pt(m, s_, t_, i_), **cell}, (m.names[k], case), method)


def _w_range_at(m: _Map, p: int) -> bool:
    """Is point p out of range (the Z3 witness replay)?"""
    out = m.values(p)
    if None in out:
        return False
    bad = any(not lo <= v < hi for v, (lo, hi) in zip(out, _ranges(m)))
    return bad or bool(m.lay.sparse_a and out[1] > out[2])


def _collide_at(m: _Map, pa: int, pb: int) -> bool:
    a, b = m.values(pa), m.values(pb)
    sa, sb = m.point(pa), m.point(pb)
    if None in a or None in b or pa == pb or sa[0] != sb[0]:
        return False
    if m.groups[pa] != m.groups[pb]:
        return False
    if m.lay.sparse_a:
        same = sa[1] == sb[1] and a[1] == b[1] and a[2] == b[2]
        return a[0] == b[0] and not same and a[1] <= b[2] and b[1] <= a[2]
    return a == b


def _injective_core(m: _Map, zs: str, model: Any, sym: _Sym, second: tuple[Any, Any, Any],
                    opts: Options, method: str) -> _Core:
    def replays() -> bool:
        pa = m.index(*sym.point(model))
        pb = m.index(*(_int(model, v, sym.w) for v in second))
        return pa is not None and pb is not None and _collide_at(m, pa, pb)

    witness = _settle("injective", zs, replays, lambda: _w_collision(m), opts)
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else "Z3 gave up on injectivity", method=method)
    assert witness is not None
    pa, pb = witness
    a, b = m.values(pa), m.values(pb)
    sa, sb = m.point(pa), m.point(pb)
    if m.lay.sparse_a:
        msg = (f"lane {sa[1]} ({_elem(m, sa[2])}: row {a[0]}, cols {a[1]}..{a[2]}) and lane "
               f"{sb[1]} ({_elem(m, sb[2])}: row {b[0]}, cols {b[1]}..{b[2]}) hold "
               "overlapping chunks")
        cex = {"first": {**_pt(m, *sa), "row": a[0], "firstcol": a[1], "lastcol": a[2]},
               "second": {**_pt(m, *sb), "row": b[0], "firstcol": b[1], "lastcol": b[2]}}
    else:
        cell = ", ".join(f"{n} {v}" for n, v in zip(m.names, a))
        sel = f"selector {sa[0]}: " if m.lay.operand == "metadata" else ""
        msg = f"{sel}lane {sa[1]} {_elem(m, sa[2])} and lane {sb[1]} {_elem(m, sb[2])} " \
              f"both map to {cell}"
        cex = {"first": _pt(m, *sa), "second": _pt(m, *sb), "cell": dict(zip(m.names, a))}
    return _Core("refuted", msg, cex, _culprit(m, pa, pb), method)


def _culprit(m: _Map, pa: int, pb: int) -> tuple[str, int]:
    """The formula and case to blame for a collision: the first formula whose case differs
    between the two points, else (one case maps both) the last formula."""
    for k, name in enumerate(m.names):
        ha, hb = m.matches(k, pa), m.matches(k, pb)
        if ha and hb and ha[0] != hb[0]:
            return name, hb[0]
    k = len(m.names) - 1
    hb = m.matches(k, pb)
    return m.names[k], hb[0] if hb else 0


def _chunks_core(m: _Map, spec: _ChunkSpec, zs: str, model: Any, sym: _Sym, opts: Options,
                 method: str) -> _Core:
    def replays() -> bool:
        p = m.index(*sym.point(model))
        return p is not None and _w_chunks_at(m, spec, p) is not None

    witness = _settle("sparse-chunks", zs, replays,
                      lambda: _w_chunks(m, spec.width, spec.chunk, spec.nonzeros), opts)
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else "Z3 gave up on the chunks", method=method)
    assert witness is not None
    p, why = witness
    out = m.values(p)
    s_, t_, i_ = m.point(p)
    return _Core("refuted", f"lane {t_}, {_elem(m, i_)}: {why}",
                 {**_pt(m, s_, t_, i_), "row": out[0], "firstcol": out[1], "lastcol": out[2]},
                 ("firstcol", 0), method)


def _w_chunks_at(m: _Map, spec: _ChunkSpec, p: int) -> str | None:
    out = m.values(p)
    if None in out:
        return None
    r, a, b = out
    if b - a + 1 != spec.width or a % spec.chunk:
        return "width or alignment"
    s, t, _i = m.point(p)
    same = sum(1 for q in range(len(m)) if m.point(q)[:2] == (s, t) and m.values(q) == out)
    return None if same == spec.nonzeros else "count"


def _chunk_spec(lay: Layout) -> tuple[_ChunkSpec | None, _Core | None]:
    """What the table says of the sparse chunks, or why sparse-chunks does not apply."""
    frag = lay.table.fragment if lay.table else None
    sparsity = lay.sparsity
    if frag is None or frag.per_register is None or frag.out_of is None:
        return None, _Core("not-applicable", "the table states no 'N non-zero out of M "
                           "consecutive'", method="table")
    nz, width = frag.per_register.value, frag.out_of.value
    if sparsity is not None and nz * sparsity.chunk != width * sparsity.nonzeros:
        return None, _Core(
            "refuted", f"the table says {nz} non-zero out of {width}, but "
            f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse",
            {"stated": [nz, width], "pattern": [sparsity.nonzeros, sparsity.chunk]}, None,
            "table")
    return _ChunkSpec(width, sparsity.chunk if sparsity else width, nz), None


def _surjective(m: _Map, opts: Options, inj: _Core, rng: _Core,
                chunks: _Core | None, spec: _ChunkSpec | None, cases_ok: bool) -> _Core:
    """Every cell held.  Counting where it applies, else a Z3-confirmed hole, else Z3.

    The counting argument needs every point of the domain to have a value: ``cases_ok``
    (every formula's cases exhaustive, as Z3 proved), besides injectivity and range.
    """
    lay = m.lay
    ngroups = lay.groups[1] if lay.groups else 1
    hole = _w_hole(m) if opts.cross_check else None
    per_sel = len(m) // max(1, len(m.selectors))
    ranges = _ranges(m)
    cells = 1
    for _lo, hi in ranges if not lay.sparse_a else ranges[:1]:
        cells *= hi
    if lay.sparse_a:
        counted = (cases_ok and inj.status == "proved" and rng.status == "proved"
                   and chunks is not None
                   and chunks.status == "proved" and spec is not None
                   and (len(m) // spec.nonzeros) * spec.width == lay.tile[0] * lay.tile[1])
        if counted:
            if hole is not None:
                raise InternalError(f"surjective: counting proves coverage, enumeration finds "
                                    f"{hole[2]} uncovered")
            return _Core("proved", method="counting (disjoint chunks x width = tile)")
    elif cases_ok and inj.status == "proved" and rng.status == "proved" and \
            per_sel == cells * ngroups:
        if hole is not None:
            raise InternalError(f"surjective: counting proves coverage, enumeration finds "
                                f"{hole[2]} uncovered")
        return _Core("proved", method="counting (injective, |domain| = |tile|)")
    if hole is None and not opts.cross_check:
        hole = _w_hole(m)
    sym = _Sym(m)
    if hole is not None:
        s_, g, cell = hole
        v = sym.vals
        if lay.sparse_a:
            hit = z3.And(v[0] == sym.val(cell[0]), v[1] <= sym.val(cell[1]),
                         sym.val(cell[1]) <= v[2])
        else:
            hit = z3.And(*[x == sym.val(c) for x, c in zip(v, cell)])
        dom = z3.And(sym.dom, sym.defined, sym.s == sym.val(s_))
        if sym.group is not None:
            dom = z3.And(dom, sym.group == sym.val(g))
        r, _model = _check("surjective", z3.And(dom, hit), opts.timeout_ms)
        if r == "sat":
            raise InternalError(f"surjective: enumeration finds {cell} uncovered, Z3 finds a "
                                "pre-image")
        if r == "unknown":
            return _Core("unknown", "Z3 gave up confirming the uncovered cell")
        names = ("row", "col") if lay.sparse_a else m.names
        where = ", ".join(f"{n} {v}" for n, v in zip(names, cell))
        prefix = f"selector {s_}: " if lay.operand == "metadata" else \
            (f"{lay.groups[0]} {g}: " if lay.groups else "")
        cex: dict[str, Any] = {"cell": dict(zip(names, cell))}
        if lay.operand == "metadata":
            cex["selector"] = s_
        return _Core("refuted", f"{prefix}no (lane, element) holds {where}", cex,
                     (m.names[-1], 0))
    # neither counting nor a hole: the quantified statement, for Z3 to decide
    cell_vars = [z3.BitVec(f"cell{k}", sym.w) for k in range(len(ranges))]
    v = sym.vals
    if lay.sparse_a:
        cv = cell_vars[:2]
        hit = z3.And(v[0] == cv[0], v[1] <= cv[1], cv[1] <= v[2])
        in_tile = z3.And(cv[0] >= 0, cv[0] < sym.val(lay.tile[0]), cv[1] >= 0,
                         cv[1] < sym.val(lay.tile[1]))
    else:
        hit = z3.And(*[x == c for x, c in zip(v, cell_vars)])
        in_tile = z3.And(*[z3.And(c >= sym.val(lo), c < sym.val(hi))
                           for c, (lo, hi) in zip(cell_vars, ranges)])
    sq = z3.BitVec("sq", sym.w)
    gq = z3.BitVec("gq", sym.w)
    scope = [sym.dom, sym.defined, sym.s == sq]
    if sym.group is not None:
        scope.append(sym.group == gq)
    body = z3.ForAll([sym.s, sym.t, sym.i], z3.Implies(z3.And(*scope), z3.Not(hit)))
    sel_ok = z3.Or(*[sq == sym.val(x) for x in m.selectors])
    g_ok = z3.And(gq >= 0, gq < sym.val(ngroups))
    r, model = _check("surjective", z3.And(sel_ok, g_ok, in_tile, body), opts.timeout_ms,
                      quantified=True)
    if r == "unknown":
        return _Core("unknown", "Z3 gave up on surjectivity")
    if r == "sat":
        raise InternalError("surjective: Z3 finds an uncovered cell that enumeration covers")
    return _Core("proved", method="z3 (quantified) + enumeration")


# ---- table obligations ---------------------------------------------------------------------------


def _register_budget(lay: Layout) -> _Core:
    if lay.operand == "metadata":
        md = lay.metadata
        if md is None or md.desc is None:
            return _Core("not-applicable", "no metadata sentence", method="table")
        d = md.desc
        bits = d.fields * d.field_bits
        width = REGISTER_BITS.get(d.register_kind, 32)
        if bits > width:
            return _Core("refuted", f"{d.fields} fields of {d.field_bits} bits need {bits} "
                         f"bits; a .{d.register_kind} register has {width}",
                         {"fields": d.fields, "field_bits": d.field_bits}, None, "table")
        return _Core("proved", method="table")
    tf = lay.table
    if tf is None or tf.fragment is None:
        return _Core("not-applicable", "no fragment description in the table", method="table")
    fr = tf.fragment
    n = lay.elements
    regs = fr.registers.value
    faults = []
    known = REGISTER_BITS.get(fr.register_kind)
    if known is None:
        faults.append(f"'.{fr.register_kind}' is not a register kind a fragment can use")
    width = known or 32
    if fr.per_register is not None:
        per = fr.per_register.value
        total = regs * per
        if total != n:
            faults.append(f"{fr.registers.text} register{'s' if regs > 1 else ''} x "
                          f"{fr.per_register.text} element{'s' if per > 1 else ''} = {total}, "
                          f"but the {lay.tile[0]} x {lay.tile[1]} tile"
                          f"{' (half of it non-zero)' if lay.sparse_a else ''} needs "
                          f"{n} per lane")
    elif fr.total is None:
        return _Core("not-applicable", "the fragment sentence does not say how many elements "
                     "a register holds", method="table")
    else:
        total = fr.total.value
        per = total // regs if regs else 0
        if total != n:
            faults.append(f"{fr.total.text} elements per lane, but the {lay.tile[0]} x "
                          f"{lay.tile[1]} tile needs {n} per lane")
        elif regs and total % regs:
            faults.append(f"{total} elements do not split evenly over {regs} registers")
    for t in fr.types or lay.types:
        conts = CONTAINER_BITS.get(t)
        if conts is None:
            continue
        if not any(per * c == width for c in conts) and not (per * TYPE_BITS[t] <= width
                                                             and t in ("b1",)):
            need = " or ".join(str(per * c) for c in conts)
            faults.append(f"{per} .{t} element{'s' if per > 1 else ''} per register take "
                          f"{need} bits; a .{fr.register_kind} register has {width}")
            break
    if faults:
        return _Core("refuted", "; ".join(faults),
                     {"registers": regs, "per_register": per, "register_kind": fr.register_kind,
                      "elements_needed": n}, None, "table")
    return _Core("proved", method="table")


def _element_list(lay: Layout) -> tuple[_Core, list[tuple[int, str]]]:
    """Check the names; return punctuation remarks (offset, message) separately."""
    tf = lay.table
    if tf is None or tf.elements is None:
        if lay.sparse_a or tf is None:
            return _Core("not-applicable", "no element list", method="table"), []
        return _Core("not-applicable", "this row gives no element list", method="table"), []
    return check_element_list(tf.elements, ELEMENT_LETTER.get(lay.operand, "a"), lay.elements)


def check_element_list(el: ElementList, letter: str, n: int,
                       ) -> tuple[_Core, list[tuple[int, str]]]:
    names = [it for it in el.items if it.kind == "name"]
    remarks: list[tuple[int, str]] = []
    # punctuation: name (sep name)* with ellipses standing between separators
    prev = None
    for it in el.items:
        if it.kind == "sep" and it.text != ",":
            remarks.append((it.pos, f"'{it.text}' separates elements where ',' is meant"))
        if it.kind == "ellipsis" and it.text == "..":
            remarks.append((it.pos, "the ellipsis is written '..' (two dots)"))
        if prev is not None and prev.kind != "sep" and it.kind != "sep":
            remarks.append((it.pos, f"no comma before '{it.text}'"))
        if prev is not None and prev.kind == "sep" and it.kind == "sep":
            remarks.append((it.pos, "two separators in a row"))
        prev = it
    if prev is not None and prev.kind == "sep":
        remarks.append((prev.pos, "the list ends with a separator"))
    letters = {it.text[0] for it in names}
    if letters - {letter}:
        bad = next(it for it in names if it.text[0] != letter)
        return _Core("refuted", f"'{bad.text}' in the element list of an operand whose "
                     f"elements are {letter}0, {letter}1, ...", {"name": bad.text},
                     ("elements", bad.pos), "table"), remarks
    # expand ellipses
    seq: list[int] = []
    items = [it for it in el.items if it.kind != "sep"]
    for k, it in enumerate(items):
        if it.kind == "name":
            seq.append(int(it.text[1:]))
        elif k > 0 and k + 1 < len(items) and items[k - 1].kind == "name" \
                and items[k + 1].kind == "name":
            lo, hi = int(items[k - 1].text[1:]), int(items[k + 1].text[1:])
            if hi - lo > 4096:
                return _Core("refuted", f"the ellipsis spans {hi - lo} elements",
                             None, None, "table"), remarks
            seq.extend(range(lo + 1, hi))
    expected = list(range(n))
    if seq == expected:
        return _Core("proved", method="table"), remarks
    shown = ", ".join(f"{letter}{v}" for v in seq[:12]) + (", ..." if len(seq) > 12 else "")
    dups = sorted({v for v in seq if seq.count(v) > 1})
    missing = sorted(set(expected) - set(seq))
    extra = sorted(set(seq) - set(expected))
    parts = []
    if dups:
        parts.append("repeats " + ", ".join(f"{letter}{v}" for v in dups))
    if missing:
        parts.append("lacks " + ", ".join(f"{letter}{v}" for v in missing[:8]) +
                     (", ..." if len(missing) > 8 else ""))
    if extra:
        parts.append("names " + ", ".join(f"{letter}{v}" for v in extra[:8]) +
                     (", ..." if len(extra) > 8 else "") + " beyond the fragment")
    if not parts:
        parts.append("is out of order")
    msg = f"the element list ({shown}) {' and '.join(parts)}; a lane holds {n} elements " \
          f"({letter}0..{letter}{n - 1})"
    first_bad = next((k for k, (a, b) in enumerate(zip(seq, expected)) if a != b),
                     min(len(seq), len(expected)))
    pos = 0
    explicit = [it for it in items if it.kind == "name"]
    for it in explicit:
        if int(it.text[1:]) == (seq[first_bad] if first_bad < len(seq) else -1):
            pos = it.pos
    if dups:
        dup_items = [it for it in explicit if int(it.text[1:]) == dups[0]]
        pos = dup_items[1].pos if len(dup_items) > 1 else pos
    return _Core("refuted", msg, {"listed": [f"{letter}{v}" for v in seq], "expected": n},
                 ("elements", pos), "table"), remarks


def _type_names(lay: Layout,
                ) -> tuple[_Core, list[tuple[Span, str]], list[tuple[Span | None, str]]]:
    """Header names, row types, sentence types and reference types against the table of
    legal types; returns (verdict, warnings)."""
    faults: list[tuple[Span | None, str, Any]] = []
    warns: list[tuple[Span, str]] = []
    legal = legal_types(lay.instruction, str(lay.shape),
                        "A" if lay.operand == "metadata" else lay.operand)
    tf = lay.table
    if tf is not None and tf.header is not None and tf.header_src is not None \
            and lay.operand in HEADER_NAMES:
        want = HEADER_NAMES[lay.operand]
        for tv in tf.header.type_vars:
            if tv not in want:
                faults.append((tf.header_src.span(tf.header.pos), f"the table header "
                               f"'.{tv}' stands over {_operand_name(lay.operand)}, whose "
                               f"types are " + " / ".join(f".{w}" for w in want),
                               {"header": f".{tv}", "expected": [f".{w}" for w in want]}))
    if tf is not None and legal:
        for t in tf.types:
            if t not in legal:
                faults.append((tf.source.span(0), _not_legal(t, lay, legal),
                               {"type": f".{t}"}))
        fr = tf.fragment
        if fr is not None and tf.fragment_src is not None:
            if fr.types and set(fr.types) != set(tf.types):
                faults.append((tf.fragment_src.span(fr.types_pos),
                               "the fragment sentence speaks of " +
                               " / ".join(f".{t}" for t in fr.types) + " elements in the row of "
                               + " / ".join(f".{t}" for t in tf.types),
                               {"row": list(tf.types), "sentence": list(fr.types)}))
            want_m = {"A": {"A"}, "B": {"B"}, "C/D": {"C", "D"}}.get(lay.operand, set())
            if fr.matrices and want_m and not set(fr.matrices) <= want_m:
                faults.append((tf.fragment_src.span(fr.matrix_pos),
                               f"the fragment sentence says 'matrix {fr.matrices[0]}' under "
                               f"{_operand_name(lay.operand)}", {"matrix": fr.matrices[0]}))
    if lay.label_types and tf is not None:
        stray = [t for t in tf.types if t not in lay.label_types]
        if stray and lay.operand == "C/D":
            # the spec labels an accumulator table by the multiplicand types it serves
            # (".tf32:" over .f32 rows): the label must name multiplicand types of the shape
            ab = legal_types(lay.instruction, str(lay.shape), "A") | \
                legal_types(lay.instruction, str(lay.shape), "B")
            stray = [t for t in lay.label_types if ab and t not in ab and t not in tf.types]
        if stray:
            faults.append((tf.source.span(0), "the row's " + " / ".join(f".{t}" for t in stray)
                           + " is not among the block's label types", {"types": stray}))
    if lay.reference_src is not None and lay.source == "reference":
        from .parse import parse_prose
        ref, _ = parse_prose(lay.reference_src, "reference", "the cross-reference")
        if ref is not None:
            instr = "mma.sp" if ref.target.sparse else "mma"
            # "for .f16/.bf16 formats" names the multiplicands' format
            cands = legal_types(instr, ref.target.shape, "A") | \
                legal_types(instr, ref.target.shape, "B")
            for t, pos in ref.target.format_types:
                if t not in cands:
                    faults.append((lay.reference_src.span(pos),
                                   _not_legal(t, lay, cands, ref.target.shape, "multiplicand"),
                                   {"type": f".{t}"}))
    # section-title words: warnings
    title = lay.title.lower()
    floats = bool(set(lay.types) & FLOAT_TYPES)
    if tf is not None and "integer type" in title and floats and lay.operand != "C/D":
        fl = [t for t in tf.types if t in FLOAT_TYPES]
        warns.append((tf.source.span(0), "the section is titled '... integer type' but this "
                      "row holds floating-point " + " / ".join(f".{t}" for t in fl)))
    if lay.title_types and tf is not None and lay.operand in ("A", "B"):
        missing = [t for t in tf.types if t not in lay.title_types]
        if missing:
            warns.append((tf.source.span(0), "the section title lists " + " / ".join(
                f".{t}" for t in lay.title_types) + " but not " + " / ".join(
                f".{t}" for t in missing)))
    if faults:
        span, msg, cex = faults[0]
        extra = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        core = _Core("refuted", msg + extra, {"faults": [m for _s, m, _c in faults], **cex},
                     None, "table")
        return core, warns, [(s, m) for s, m, _c in faults]
    return _Core("proved", method="table"), warns, []


def _not_legal(t: str, lay: Layout, legal: Iterable[str], shape: str | None = None,
               role: str = "") -> str:
    legal = sorted(legal)
    real = t in PTX_TYPES
    guess = closest(t, legal)
    where = f"mma.{shape or lay.shape}"
    msg = f"'.{t}' is {'not' if not real else 'a PTX type but not'} " \
          f"{'a ' + role + ' type' if role else 'an element type'} of " \
          f"{where}{'' if role else ' ' + _operand_name(lay.operand)}"
    if guess:
        msg += f" (did you mean '.{guess}'?)"
    return msg


def _operand_name(op: str) -> str:
    return {"A": "Multiplicand A", "B": "Multiplicand B", "C/D": "the accumulators C/D",
            "metadata": "the metadata"}.get(op, op)


def _reference(lay: Layout, by_id: dict[str, Layout]) -> _Core:
    if lay.source != "reference":
        return _Core("not-applicable", method="table")
    if not lay.reference_of:
        why = lay.notes[0] if lay.notes else "the reference resolves to no layout"
        return _Core("refuted", why,
                     {"sentence": lay.reference_src.text.strip() if lay.reference_src else ""},
                     None, "table")
    target = by_id.get(lay.reference_of)
    tile = lay.shape.tile(lay.operand)
    if target is not None:
        ttile = target.shape.tile(target.operand)
        if ttile != tile:
            return _Core("refuted", f"the referenced {target.operand} tile of "
                         f"{target.shape} is {ttile[0]} x {ttile[1]}, but this section's "
                         f"{lay.operand} is {tile[0]} x {tile[1]}",
                         {"target": lay.reference_of, "target_tile": list(ttile),
                          "tile": list(tile)}, None, "table")
    return _Core("proved", f"resolved to {lay.reference_of}", method="table")


# ---- metadata ------------------------------------------------------------------------------------


def _metadata(m: _Map, opts: Options, inj: _Core, sur: _Core) -> tuple[_Core, _Core]:
    """(metadata-coverage, selector-range)."""
    lay = m.lay
    md = lay.metadata
    assert md is not None
    sparsity = lay.sparsity
    faults = []
    if md.desc is not None and sparsity is not None:
        d = md.desc
        units = sparsity.units_per_chunk
        need = max(1, (units - 1).bit_length())  # bits of one index into a chunk
        if d.chunk != sparsity.chunk:
            faults.append(f"the sentence speaks of {d.chunk}-wide chunks; "
                          f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse")
        if need != sparsity.index_bits:
            faults.append(f"a {units}-unit chunk needs {need}-bit indices, not "
                          f"{sparsity.index_bits}")
        if d.field_bits % sparsity.index_bits or \
                d.field_bits // sparsity.index_bits not in (1, sparsity.slots):
            faults.append(f"{d.field_bits}-bit fields cannot hold whole {need}-bit indices of a "
                          f"{units}-unit chunk")
        else:
            per_field = d.field_bits // sparsity.index_bits
            stated = d.indices_per_group
            implied = d.fields_per_group * per_field * sparsity.unit_elements
            if stated == 0 and d.fields_per_group * per_field != sparsity.slots:
                faults.append(f"{d.fields_per_group} field{'s' if d.fields_per_group > 1 else ''}"
                              f" of {d.field_bits} bits per chunk hold "
                              f"{d.fields_per_group * per_field} indices; a "
                              f"{sparsity.nonzeros}:{sparsity.chunk} chunk needs "
                              f"{sparsity.slots}")
            elif stated and stated != implied:
                faults.append(f"{d.fields_per_group} field{'s' if d.fields_per_group > 1 else ''}"
                              f" of {d.field_bits} bits index {implied:g} non-zero element"
                              f"{'s' if implied != 1 else ''} of a {d.chunk}-wide chunk, not "
                              f"{stated}")
    if sparsity is not None:
        bad = ordered_encodings(sparsity)
        if bad:
            faults.append(bad)
    cover_ok = inj.status == "proved" and sur.status == "proved"
    if inj.status == "refuted":
        cov = _Core("refuted", inj.message, inj.cex, inj.where)
    elif sur.status == "refuted":
        cov = _Core("refuted", sur.message, sur.cex, sur.where)
    elif faults:
        cov = _Core("refuted", "; ".join(faults), {"faults": faults}, None, "table+enumeration")
    elif cover_ok:
        cov = _Core("proved", method="z3+enumeration")
    else:
        cov = _Core("unknown", "coverage undecided")
    # selector range: lanes per quad -> 4 / that many selectors
    per_quad = set()
    for s in m.selectors:
        for q in range(lay.lanes // 4):
            per_quad.add(sum(1 for t in range(4 * q, 4 * q + 4) if m.holder_fn(t, 0, s)))
    if len(per_quad) != 1 or 0 in per_quad:
        sel = _Core("refuted", f"the number of metadata lanes per group of four varies "
                    f"({sorted(per_quad)})", {"lanes_per_group": sorted(per_quad)},
                    None, "enumeration")
    else:
        k = per_quad.pop()
        implied = tuple(range(4 // k)) if 4 % k == 0 else ()
        if tuple(m.selectors) != implied:
            sel = _Core("refuted", f"{k} lane{'s' if k > 1 else ''} per group of four hold "
                        f"metadata, which allows selector {_fmt_range(implied)}; the layout "
                        f"states {_fmt_range(tuple(m.selectors))}",
                        {"lanes_per_group": k, "implied": list(implied),
                         "stated": list(m.selectors)}, None, "enumeration")
        else:
            sel = _Core("proved", method="enumeration")
    return cov, sel


def ordered_encodings(sparsity: Any) -> str:
    """'' when every placement of a chunk's non-zeros has a legal ``::ordered_metadata``
    encoding; else why not.

    A chunk of ``units`` index units with ``slots`` indices: each placement is a set of
    strictly increasing unit indices, written slot 0 in the low bits.  With 2-bit indices a
    4-bit nibble is legal unless both indices are equal (0b0000, 0b0101, 0b1010, 0b1111);
    ``.tf32`` may only use 0b0100 and 0b1110 (one element = two halves, indices (0,1) or
    (2,3)).  Decided by enumerating the placements: 6 for 2:4, 2 for 1:2, 6 for 4:8 in pairs.
    """
    from itertools import combinations
    units, bits = sparsity.units_per_chunk, sparsity.index_bits
    if sparsity.meaningful_fields:
        placements = [tuple(range(2 * k, 2 * k + 2)) for k in range(units // 2)]
    else:
        placements = list(combinations(range(units), sparsity.slots))
    for p in placements:
        if list(p) != sorted(set(p)):
            return f"placement {p} has no strictly increasing encoding"
        word = sum(idx << (bits * slot) for slot, idx in enumerate(p))
        nibbles = [(word >> (4 * k)) & 0xF for k in range((bits * len(p) + 3) // 4)]
        if any(n in sparsity.invalid_nibbles for n in nibbles):
            return f"placement {p} encodes as an invalid metadata nibble {word:#06b}"
        if sparsity.meaningful_fields and word not in sparsity.meaningful_fields:
            return f"placement {p} encodes as {word:#06b}, not one of the meaningful values"
    return ""


def _fmt_range(vals: tuple[int, ...]) -> str:
    if not vals:
        return "(none)"
    if len(vals) == 1:
        return str(vals[0])
    return f"{vals[0]}..{vals[-1]}"


# ---- per layout ----------------------------------------------------------------------------------


def _verdict(name: str, core: _Core, lay: Layout) -> Verdict:
    span = lay.span
    if core.where is not None:
        fname, j = core.where
        if fname == "elements" and lay.table and lay.table.elements_src is not None:
            span = lay.table.elements_src.span(j)
        else:
            f = lay.formula(fname)
            if f is not None and f.cases:
                span = f.cases[min(j, len(f.cases) - 1)].source.strip().span(0)
    elif name in ("register-budget", "sparse-chunks") and lay.table is not None:
        fr = lay.table.fragment
        src = lay.table.fragment_src
        if src is not None and fr is not None:
            span = src.span(fr.register_kind_pos if name == "register-budget" else 0)
    elif name == "reference" and lay.reference_src is not None:
        span = lay.reference_src.span(0)
    elif name in ("metadata-coverage", "selector-range") and lay.metadata is not None:
        src = lay.metadata.desc_src or lay.metadata.selectors_src
        if src is not None:
            span = src.span(0)
    message = core.message
    if core.cases and core.where is not None:
        f = lay.formula(core.where[0])
        if f is not None and max(core.cases) < len(f.cases):
            lines = ", ".join(str(f.cases[j].source.line) for j in core.cases)
            message += f" (lines {lines})"
    return Verdict(name, core.status, message, core.cex, span, "error", core.method)


_CACHE: dict[tuple[Any, ...], Any] = {}


# Results and Z3 terms are shared across layouts with the same map for the life of the
# process; a long-lived caller (a fuzz run, a service) must not grow them without end, so
# each is dropped whole when it reaches its limit.
_CACHE_LIMIT = 4096
_SHARED_LIMIT = 20000


_T = TypeVar("_T")


def _cached(key: tuple[Any, ...], fn: Callable[[], _T]) -> _T:
    hit = _CACHE.get(key)
    if hit is None:
        hit = fn()
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit  # type: ignore[no-any-return]


def clear_cache() -> None:
    _CACHE.clear()
    _SHARED.clear()


NOT_CHECKED = "not checked: a formula of this layout did not parse"


def prove_layout(lay: Layout, opts: Options, by_id: dict[str, Layout] | None = None,
                 a_layout: Layout | None = None) -> LayoutResult:
    by_id = by_id or {}
    verdicts: dict[str, Verdict] = {}
    findings: list[Finding] = []
    m = _map_of(lay) if not lay.incomplete else None
    key = (lay.map_key(), lay.elements, lay.lanes, lay.tile, lay.operand, lay.sparse_a,
           opts.cross_check, opts.timeout_ms,
           repr(lay.metadata.selectors if lay.metadata else ()))
    na = Verdict
    formula_names = ("cases", "in-range", "injective", "surjective")
    if lay.incomplete:
        for n in (*formula_names, "sparse-chunks", "metadata-coverage", "selector-range",
                  "hardware"):
            verdicts[n] = na(n, "error", NOT_CHECKED)
    elif m is None:
        why = "the document gives this layout only as a figure" \
            if lay.source == "figure-only" else "no formulas"
        for n in formula_names:
            verdicts[n] = na(n, "not-applicable", why)
    else:
        spec, spec_core = _chunk_spec(lay) if lay.sparse_a else (None, None)
        cores = _cached((*key, "formula", repr(spec)),
                             lambda: _formula_cores(m, opts, spec))
        case_cores = [cores[f"cases:{k}"] for k in range(len(m.formulas))]
        bad = next((c for c in case_cores if c.status != "proved"), None)
        verdicts["cases"] = _verdict("cases", bad or case_cores[0], lay)
        rng, inj = cores["in-range"], cores["injective"]
        verdicts["in-range"] = _verdict("in-range", rng, lay)
        verdicts["injective"] = _verdict("injective", inj, lay)
        chunks = None
        if lay.sparse_a:
            chunks = cores.get("sparse-chunks", spec_core)
            assert chunks is not None
            verdicts["sparse-chunks"] = _verdict("sparse-chunks", chunks, lay)
        cases_ok = all(c.status == "proved" for c in case_cores)
        sur = _cached((*key, "surjective", repr(spec)),
                      lambda: _surjective(m, opts, inj, rng, chunks, spec, cases_ok))
        verdicts["surjective"] = _verdict("surjective", sur, lay)
        if lay.operand == "metadata":
            cov, sel = _metadata(m, opts, inj, sur)
            if cov.status == "proved" and a_layout is not None:
                qf = quad_fault(m, a_layout)
                if qf is not None:
                    cov = _Core("refuted", qf[0], qf[1], None, "enumeration")
            verdicts["metadata-coverage"] = _verdict("metadata-coverage", cov, lay)
            verdicts["selector-range"] = _verdict("selector-range", sel, lay)
    if lay.operand == "metadata" and m is None and not lay.incomplete:
        verdicts["metadata-coverage"] = na("metadata-coverage", "not-applicable",
                                           "no metadata layout (the spec gives a figure)")
        verdicts["selector-range"] = na("selector-range", "not-applicable",
                                        "no metadata layout")
    verdicts["register-budget"] = _verdict("register-budget", _register_budget(lay), lay)
    el, remarks = _element_list(lay)
    verdicts["element-list"] = _verdict("element-list", el, lay)
    if lay.table is not None and lay.table.elements is None and lay.table.fragment is not None \
            and not lay.sparse_a:
        findings.append(Finding("warning", "element-list", lay.table.source.span(0),
                                "this row gives no element list (its register budget is "
                                "still checked from the fragment sentence)", lay.section,
                                None, lay.id))
    src = lay.table.elements_src if lay.table else None
    for pos, msg in remarks:
        if src is not None:
            findings.append(Finding("warning", "punctuation", src.span(pos),
                                    f"element list: {msg}", lay.section, None, lay.id))
    verdicts["reference"] = _verdict("reference", _reference(lay, by_id), lay)
    tcore, twarns, tspans = _type_names(lay)
    v = _verdict("type-names", tcore, lay)
    if tspans:
        first = tspans[0][0]
        v = replace(v, span=first or v.span)
        for s, msg in tspans[1:]:
            findings.append(Finding("error", "type-names", s or lay.span, msg, lay.section,
                                    None, lay.id))
    verdicts["type-names"] = v
    for s, msg in twarns:
        findings.append(Finding("warning", "type-names", s, msg, lay.section, None, lay.id))
    if not lay.sparse_a:
        verdicts["sparse-chunks"] = na("sparse-chunks", "not-applicable")
    for n in ("metadata-coverage", "selector-range"):
        verdicts.setdefault(n, na(n, "not-applicable"))
    verdicts.setdefault("hardware", _hardware(lay, opts))
    ordered = tuple(verdicts[n] for n in OBLIGATIONS if n in verdicts)
    for v in ordered:
        if v.status == "error" and v.message == NOT_CHECKED:
            continue  # the line that did not parse is the one finding
        if v.status in ("refuted", "error"):
            findings.append(Finding("error", v.name, v.span or lay.span, v.message, lay.section,
                                    v.counterexample, lay.id))
        elif v.status == "unknown":
            findings.append(Finding("error", "unknown", v.span or lay.span,
                                    f"{v.name}: {v.message or 'undecided'}", lay.section, None,
                                    lay.id))
    return LayoutResult(lay, ordered, tuple(findings))


def quad_fault(m: _Map, a_layout: Layout) -> tuple[str, Any] | None:
    """The metadata of (row, chunk) must come from the quad of the lane holding its values."""
    am = _map_of(a_layout)
    sparsity = m.lay.sparsity
    if am is None or sparsity is None or not bool(am.defined.all()):
        return None  # the A layout's own 'cases' finding says why
    owner: dict[tuple[int, int], int] = {}
    cols = a_layout.tile[1]
    for (_s, t, _i), out in am.table().items():
        r, fc, lc = out  # defined everywhere: checked above
        # only the tile's own columns: a range running off the tile is the A layout's
        # 'in-range' finding, and must not be walked (lastcol may be 2**64 away)
        for c in range(max(fc, 0), min(lc, cols - 1) + 1, sparsity.chunk):
            owner[(r, c // sparsity.chunk)] = t
    for (s, t, i), out in m.table().items():
        if None in out:
            continue
        r, ch, _slot = out
        holder = owner.get((r, ch))
        if holder is not None and holder // 4 != t // 4:
            return (f"selector {s}: lane {t} field {i} describes row {r}, chunk {ch}, whose "
                    f"values lane {holder} holds, in another group of four",
                    {"selector": s, "lane": t, "field": i, "row": r, "chunk": ch,
                     "value_lane": holder})
    return None


def _hardware(lay: Layout, opts: Options) -> Verdict:
    ev = opts.evidence
    if ev is None:
        return Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)")
    return ev.verdict(lay)


def prove(model: Model, opts: Options | None = None) -> Proof:
    opts = opts or Options()
    t0 = time.perf_counter()
    by_id = {lay.id: lay for lay in model.layouts}
    results = []
    findings = list(model.findings)
    internal = 0
    a_by_section: dict[tuple[str, str, str], Layout] = {}
    for lay in model.layouts:
        if lay.sparse_a and lay.formulas:
            a_by_section.setdefault((lay.document, lay.section, str(lay.shape)), lay)
    for lay in model.layouts:
        a_lay = a_by_section.get((lay.document, lay.section, str(lay.shape))) \
            if lay.operand == "metadata" else None
        try:
            res = prove_layout(lay, opts, by_id, a_lay)
        except InternalError as exc:
            internal += 1
            v = tuple(Verdict(n, "error", f"internal error: {exc}") for n in OBLIGATIONS)
            f = Finding("error", "internal", lay.span, f"internal error: {exc}", lay.section,
                        None, lay.id)
            res = LayoutResult(lay, v, (f,))
        results.append(res)
        findings.extend(res.findings)
    secs = {"prove": time.perf_counter() - t0}
    return Proof(tuple(results), tuple(_sorted(findings)), internal, secs)


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in sorted(findings, key=lambda f: (f.span.document, f.span.line, f.span.column,
                                             f.kind, f.message, f.layout)):
        key = (f.span, f.kind, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


def cells(lay: Layout) -> dict[tuple[int, int, int], tuple[Any, ...]]:
    """The layout's table: (selector, lane, element) -> outputs (public, for exports)."""
    m = _map_of(lay)
    return {} if m is None else dict(m.table())


def cells_and_names(lay: Layout) -> tuple[tuple[str, ...], dict[tuple[int, int, int],
                                                                  tuple[Any, ...]]]:
    m = _map_of(lay)
    if m is None:
        return (), {}
    return m.names, dict(m.table())


__all__ = ["Options", "Verdict", "LayoutResult", "Proof", "prove", "prove_layout", "cells",
           "OBLIGATIONS", "SPARSITY", "InternalError"]
