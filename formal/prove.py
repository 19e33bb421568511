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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp
import z3

from .algebra import (
    I,
    LANE,
    SEL,
    BitAnd,
    BitOr,
    BitXor,
    Undefined,
    bounds,
    compile_expr,
    compile_pred,
)
from .model import Formula, Layout, Model
from .source import Finding, Span
from .syntax import ElementList
from .variants import (
    CONTAINER_BITS,
    ELEMENT_LETTER,
    FLOAT_TYPES,
    HEADER_NAMES,
    INTEGER_TYPES,
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


# ---- the domain of a map -------------------------------------------------------------------------


@dataclass
class _Map:
    """A layout's formulas, compiled for enumeration and encodable for Z3."""

    lay: Layout
    names: tuple[str, ...]  # output formulas, e.g. ("row", "col")
    formulas: tuple[Formula, ...]
    lanes: int
    n: int
    selectors: tuple[int, ...] = (0,)
    holder: Any = sp.true
    group: Any = None  # SymPy expression of a lane's replication group, or None
    compiled: list[list[tuple[Callable[..., int], Callable[..., bool], bool]]] = \
        field(default_factory=list)
    holder_fn: Callable[..., bool] = lambda t, i, s: True
    group_fn: Callable[..., int] | None = None
    _table: dict[tuple[int, int, int], tuple[Any, ...]] | None = None

    def __post_init__(self) -> None:
        self.compiled = [[(compile_expr(c.value), compile_pred(c.cond), c.otherwise)
                          for c in f.cases] for f in self.formulas]
        self.holder_fn = compile_pred(self.holder)
        self.group_fn = compile_expr(self.group) if self.group is not None else None

    def points(self) -> Iterator[tuple[int, int, int]]:
        for s in self.selectors:
            for t in range(self.lanes):
                if not self.holder_fn(t, 0, s):
                    continue
                for i in range(self.n):
                    yield s, t, i

    def matches(self, k: int, s: int, t: int, i: int) -> list[int]:
        out = []
        for j, (_v, p, other) in enumerate(self.compiled[k]):
            if other:
                if not out:
                    out.append(j)
            elif p(t, i, s):
                out.append(j)
        return out

    def value(self, k: int, s: int, t: int, i: int) -> int | None:
        for _j, (v, p, other) in enumerate(self.compiled[k]):
            if other or p(t, i, s):
                return v(t, i, s)
        return None

    def table(self) -> dict[tuple[int, int, int], tuple[Any, ...]]:
        """(s, t, i) -> outputs (None where a formula has no applicable case)."""
        if self._table is None:
            tab = {}
            for s, t, i in self.points():
                tab[(s, t, i)] = tuple(self.value(k, s, t, i) for k in range(len(self.names)))
            self._table = tab
        return self._table

    def group_of(self, t: int) -> int:
        return self.group_fn(t, 0, 0) if self.group_fn is not None else 0


def _map_of(lay: Layout) -> _Map | None:
    if not lay.formulas:
        return None
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
    return _Map(lay, names, tuple(fs), lay.lanes, lay.elements, selectors, holder,
                rep[2] if rep else None)


# ---- Z3 encoding ------------------------------------------------------------------------------------


class _Enc:
    """SymPy -> Z3 bit-vectors of one width, for one (selector, lane, element) triple."""

    def __init__(self, width: int, s: Any, t: Any, i: Any) -> None:
        self.w = width
        self.env = {SEL: s, LANE: t, I: i}
        self.memo: dict[Any, Any] = {}

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
            arg = e.args[0]
            num, den = sp.fraction(sp.together(arg))
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


def _width(m: _Map, extra: Iterable[int] = ()) -> int:
    """Bits that hold every intermediate value of every formula over the domain, signed."""
    box = {LANE: (0, m.lanes - 1), I: (0, m.n - 1),
           SEL: (min(m.selectors), max(m.selectors))}
    top = max([m.lanes, m.n, max(m.selectors) + 1, *extra])
    roots = [c.value for f in m.formulas for c in f.cases] + \
            [c.cond for f in m.formulas for c in f.cases] + [m.holder]
    if m.group is not None:
        roots.append(m.group)
    for r in roots:
        for x in _subexprs(r):
            if isinstance(x, (sp.Expr,)) and not isinstance(x, sp.core.relational.Relational) \
                    and x.is_integer is not False and not x.is_Boolean:
                try:
                    lo, hi = bounds(x, box)
                except (ValueError, TypeError):
                    continue
                top = max(top, abs(lo), abs(hi))
    # Add and Mul fold pairwise: their partial sums stay within the sum of magnitudes
    return max(8, (top * 4).bit_length() + 2)


class _Query:
    """Builds the Z3 terms of a map for one or two symbolic points."""

    def __init__(self, m: _Map, extra: Iterable[int] = ()) -> None:
        self.m = m
        self.w = _width(m, extra)

    def point(self, tag: str) -> tuple[Any, Any, Any, _Enc]:
        s = z3.BitVec(f"s{tag}", self.w)
        t = z3.BitVec(f"t{tag}", self.w)
        i = z3.BitVec(f"i{tag}", self.w)
        return s, t, i, _Enc(self.w, s, t, i)

    def domain(self, s: Any, t: Any, i: Any, enc: _Enc) -> Any:
        m = self.m
        sel = z3.Or(*[s == enc.val(v) for v in m.selectors])
        return z3.And(sel, t >= 0, t < enc.val(m.lanes), i >= 0, i < enc.val(m.n),
                      enc.pred(m.holder))

    def conds(self, k: int, enc: _Enc) -> list[Any]:
        """The condition of each case of formula k ('otherwise' = no earlier case)."""
        out: list[Any] = []
        for c in self.m.formulas[k].cases:
            if c.otherwise:
                out.append(z3.Not(z3.Or(*out)) if out else z3.BoolVal(True))
            else:
                out.append(enc.pred(c.cond))
        return out

    def value(self, k: int, enc: _Enc) -> tuple[Any, Any]:
        """(value term, defined) with first-match semantics."""
        f = self.m.formulas[k]
        conds = self.conds(k, enc)
        out = enc.val(0)
        for c, cond in reversed(list(zip(f.cases, conds))):
            out = z3.If(cond, enc.expr(c.value), out)
        return out, z3.Or(*conds)

    def values(self, enc: _Enc) -> tuple[list[Any], Any]:
        vals, defs = [], []
        for k in range(len(self.m.names)):
            v, d = self.value(k, enc)
            vals.append(v)
            defs.append(d)
        return vals, z3.And(*defs)


def _check(name: str, solver_formula: Any, timeout_ms: int, quantified: bool = False,
           ) -> tuple[str, Any]:
    """('sat', model) | ('unsat', None) | ('unknown', reason)."""
    hook = TEST_HOOKS.get("encoding")
    if hook is not None:
        solver_formula = hook(name, solver_formula)
    s = z3.Solver() if quantified else z3.SolverFor("QF_BV")
    s.set("timeout", max(1, int(timeout_ms)))
    s.add(solver_formula)
    r = s.check()
    if r == z3.sat:
        return "sat", s.model()
    if r == z3.unsat:
        return "unsat", None
    return "unknown", s.reason_unknown()


def _int(model: Any, v: Any, w: int) -> int:
    x = model.eval(v, model_completion=True).as_long()
    return x - (1 << w) if x >= 1 << (w - 1) else x


# ---- core results (cacheable across layouts with the same map) ------------------------------------


@dataclass(frozen=True)
class _Core:
    status: str
    message: str = ""
    cex: Any = None
    where: tuple[str, int] | None = None  # (formula name, case index) the fault is in
    method: str = "z3+enumeration"


def _elem(m: _Map, i: int) -> str:
    if m.lay.operand == "metadata":
        return f"field {i}"
    return f"{ELEMENT_LETTER[m.lay.operand]}{i}"


def _pt(m: _Map, s: int, t: int, i: int) -> dict[str, Any]:
    d: dict[str, Any] = {"lane": t, "element": _elem(m, i)}
    if m.lay.operand == "metadata":
        d = {"selector": s, **d}
    return d


def _agree(name: str, z3_status: str, enum_status: str, detail: str = "") -> None:
    if z3_status in ("proved", "refuted") and enum_status != z3_status:
        raise InternalError(f"{name}: Z3 says {z3_status} but enumeration says {enum_status}"
                            f"{': ' + detail if detail else ''}")


def _decide(name: str, formula: Any, opts: Options, quantified: bool = False,
            ) -> tuple[str, Any]:
    r, model = _check(name, formula, opts.timeout_ms, quantified)
    if r == "unsat":
        return "proved", None
    if r == "sat":
        return "refuted", model
    return "unknown", model


def _cases(m: _Map, k: int, opts: Options) -> _Core:
    f = m.formulas[k]
    # conditions that list elements the fragment does not have
    for j, c in enumerate(f.cases):
        if c.max_listed >= m.n:
            return _Core("refuted", f"the condition '{c.guard_text}' of '{f.name}' lists "
                         f"{_elem(m, c.max_listed)}, but a lane holds only {m.n} elements "
                         f"({_elem(m, 0)}..{_elem(m, m.n - 1)})",
                         {"element": _elem(m, c.max_listed), "elements": m.n}, (f.name, j),
                         "syntax")
    if len(f.cases) == 1 and f.cases[0].cond is sp.true:
        return _Core("proved", method="trivial (one unconditional case)")
    # Z3: is there a point where the number of applicable cases is not one?
    q = _Query(m)
    s, t, i, enc = q.point("")
    conds = q.conds(k, enc)
    count = z3.Sum(*[z3.If(c, enc.val(1), enc.val(0)) for c in conds])
    zs, model = _decide(f"cases:{f.name}", z3.And(q.domain(s, t, i, enc), count != 1), opts)
    z_pt = None
    if zs == "refuted":
        z_pt = (_int(model, s, q.w), _int(model, t, q.w), _int(model, i, q.w))
        if len(m.matches(k, *z_pt)) == 1:
            raise InternalError(f"cases:{f.name}: the Z3 witness {z_pt} does not replay")
    witness = None
    if opts.cross_check or zs == "refuted":
        for p in m.points():
            if len(m.matches(k, *p)) != 1:
                witness = p
                break
        if opts.cross_check:
            _agree(f"cases:{f.name}", zs, "refuted" if witness else "proved")
    if zs == "unknown":
        return _Core("unknown", f"Z3 gave up ({model}) on the cases of '{f.name}'")
    if zs == "proved":
        return _Core("proved")
    s_, t_, i_ = witness or z_pt  # type: ignore[misc]
    hits = m.matches(k, s_, t_, i_)
    cex = {**_pt(m, s_, t_, i_), "formula": f.name, "cases": [j + 1 for j in hits]}
    if not hits:
        msg = f"{_elem(m, i_)} of lane {t_} matches no case of '{f.name}'"
        return _Core("refuted", msg, cex, (f.name, len(f.cases) - 1))
    lines = ", ".join(str(f.cases[j].source.line) for j in hits)
    msg = f"{_elem(m, i_)} of lane {t_} matches {len(hits)} cases of '{f.name}' (lines {lines})"
    return _Core("refuted", msg, cex, (f.name, hits[1]))


def _ranges(m: _Map) -> list[tuple[int, int]]:
    lay = m.lay
    r, c = lay.tile
    if lay.operand == "metadata":
        sp_ = lay.sparsity
        chunks = lay.shape.k // sp_.chunk if sp_ else 0
        slots = sp_.slots if sp_ else 0
        return [(0, r), (0, chunks), (0, slots)]
    if lay.sparse_a:
        return [(0, r), (0, c), (0, c)]
    return [(0, r), (0, c)]


def _in_range(m: _Map, opts: Options) -> _Core:
    ranges = _ranges(m)
    q = _Query(m, [hi for _lo, hi in ranges])
    s, t, i, enc = q.point("")
    vals, defined = q.values(enc)
    ok = [z3.And(v >= enc.val(lo), v < enc.val(hi)) for v, (lo, hi) in zip(vals, ranges)]
    if m.lay.sparse_a:
        ok.append(vals[1] <= vals[2])
    zs, model = _decide("in-range", z3.And(q.domain(s, t, i, enc), defined,
                                           z3.Not(z3.And(*ok))), opts)

    def bad(out: tuple[Any, ...]) -> bool:
        if any(v is None for v in out):
            return False
        if any(not lo <= v < hi for v, (lo, hi) in zip(out, ranges)):
            return True
        return bool(m.lay.sparse_a and out[1] > out[2])

    if zs == "refuted":
        p = (_int(model, s, q.w), _int(model, t, q.w), _int(model, i, q.w))
        if not bad(m.table()[p]):
            raise InternalError(f"in-range: the Z3 witness {p} does not replay")
    witness = None
    if opts.cross_check or zs == "refuted":
        witness = next((p for p, out in m.table().items() if bad(out)), None)
        if opts.cross_check:
            _agree("in-range", zs, "refuted" if witness else "proved")
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else f"Z3 gave up ({model})")
    assert witness is not None
    out = m.table()[witness]
    k = next(j for j, (v, (lo, hi)) in enumerate(zip(out, ranges)) if not lo <= v < hi) \
        if any(not lo <= v < hi for v, (lo, hi) in zip(out, ranges)) else 1
    cell = dict(zip(m.names, out))
    shape = " x ".join(str(hi) for _lo, hi in ranges[:2])
    msg = f"lane {witness[1]}, {_elem(m, witness[2])} maps to " + \
          ", ".join(f"{n} {v}" for n, v in cell.items()) + \
          (f", outside the {shape} tile" if m.lay.operand != "metadata" else ", out of range")
    if m.lay.sparse_a and out[1] > out[2]:
        msg = f"lane {witness[1]}, {_elem(m, witness[2])}: firstcol {out[1]} > lastcol {out[2]}"
    return _Core("refuted", msg, {**_pt(m, *witness), **cell}, (m.names[k], 0))


def _collide(m: _Map, a: tuple[Any, ...], b: tuple[Any, ...], sa: tuple[int, int, int],
             sb: tuple[int, int, int]) -> bool:
    """Do two points violate injectivity?"""
    if any(v is None for v in a + b) or sa == sb:
        return False
    if sa[0] != sb[0]:
        return False
    if m.group_fn is not None and m.group_of(sa[1]) != m.group_of(sb[1]):
        return False
    if m.lay.sparse_a:
        if a[0] != b[0]:
            return False
        same_range = sa[1] == sb[1] and a[1] == b[1] and a[2] == b[2]
        return not same_range and a[1] <= b[2] and b[1] <= a[2]
    return a == b


def _injective(m: _Map, opts: Options) -> _Core:
    q = _Query(m, [hi for _lo, hi in _ranges(m)])
    s1, t1, i1, e1 = q.point("1")
    s2, t2, i2, e2 = q.point("2")
    v1, d1 = q.values(e1)
    v2, d2 = q.values(e2)
    conds = [q.domain(s1, t1, i1, e1), q.domain(s2, t2, i2, e2), d1, d2, s1 == s2]
    if m.group is not None:
        g1, g2 = e1.expr(m.group), e2.expr(m.group)
        conds.append(g1 == g2)
    if m.lay.sparse_a:
        same_range = z3.And(t1 == t2, v1[1] == v2[1], v1[2] == v2[2])
        conds += [v1[0] == v2[0], z3.Not(same_range), v1[1] <= v2[2], v2[1] <= v1[2]]
    else:
        conds += [z3.Or(t1 != t2, i1 != i2)] + [a == b for a, b in zip(v1, v2)]
    zs, model = _decide("injective", z3.And(*conds), opts)
    tab = m.table()
    if zs == "refuted":
        pa = (_int(model, s1, q.w), _int(model, t1, q.w), _int(model, i1, q.w))
        pb = (_int(model, s2, q.w), _int(model, t2, q.w), _int(model, i2, q.w))
        if not _collide(m, tab[pa], tab[pb], pa, pb):
            raise InternalError(f"injective: the Z3 witness {pa}, {pb} does not replay")
    witness = None
    if opts.cross_check or zs == "refuted":
        witness = _first_collision(m)
        if opts.cross_check:
            _agree("injective", zs, "refuted" if witness else "proved")
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else f"Z3 gave up ({model})")
    assert witness is not None
    pa, pb = witness
    a, b = tab[pa], tab[pb]
    if m.lay.sparse_a:
        msg = (f"lane {pa[1]} ({_elem(m, pa[2])}: row {a[0]}, cols {a[1]}..{a[2]}) and lane "
               f"{pb[1]} ({_elem(m, pb[2])}: row {b[0]}, cols {b[1]}..{b[2]}) hold overlapping "
               "chunks")
        cex = {"first": {**_pt(m, *pa), "row": a[0], "firstcol": a[1], "lastcol": a[2]},
               "second": {**_pt(m, *pb), "row": b[0], "firstcol": b[1], "lastcol": b[2]}}
    else:
        cell = ", ".join(f"{n} {v}" for n, v in zip(m.names, a))
        sel = f"selector {pa[0]}: " if m.lay.operand == "metadata" else ""
        msg = f"{sel}lane {pa[1]} {_elem(m, pa[2])} and lane {pb[1]} {_elem(m, pb[2])} " \
              f"both map to {cell}"
        cex = {"first": _pt(m, *pa), "second": _pt(m, *pb), "cell": dict(zip(m.names, a))}
    return _Core("refuted", msg, cex, _culprit(m, pa, pb))


def _first_collision(m: _Map) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    tab = m.table()
    if m.lay.sparse_a:
        items = list(tab.items())
        by_row: dict[tuple[int, Any], list[tuple[tuple[int, int, int], tuple[Any, ...]]]] = {}
        for p, out in items:
            if None in out:
                continue
            by_row.setdefault((p[0], out[0]), []).append((p, out))
        best = None
        for _k, lst in by_row.items():
            for x in range(len(lst)):
                for y in range(x):
                    (pb, b), (pa, a) = lst[x], lst[y]
                    if _collide(m, a, b, pa, pb):
                        cand = (pa, pb)
                        if best is None or cand[1] < best[1]:
                            best = cand
        return best
    seen: dict[tuple[Any, ...], tuple[int, int, int]] = {}
    for p, out in tab.items():
        if None in out:
            continue
        key = (p[0], m.group_of(p[1]), *out)
        if key in seen:
            return seen[key], p
        seen[key] = p
    return None


def _culprit(m: _Map, pa: tuple[int, int, int], pb: tuple[int, int, int]) -> tuple[str, int]:
    """The formula and case to blame for a collision: the second point's first formula."""
    for k, name in enumerate(m.names):
        hits = m.matches(k, *pb)
        if hits and len(m.formulas[k].cases) > 1:
            return name, hits[0]
    return m.names[-1], 0


def _cells(m: _Map) -> int:
    ranges = _ranges(m)
    total = 1
    for lo, hi in ranges[:2] if not m.lay.sparse_a else ranges[:1]:
        total *= hi - lo
    if m.lay.operand == "metadata":
        total = ranges[0][1] * ranges[1][1] * ranges[2][1]
    return total


def _surjective(m: _Map, opts: Options, inj: _Core, rng: _Core,
                chunks: _Core | None = None) -> _Core:
    lay = m.lay
    tab = m.table()
    groups = lay.groups[1] if lay.groups else 1
    # the counting arguments below count only the points where every formula has a case: a
    # point no case covers holds no cell (the 'cases' obligation reports it)
    defined = sum(1 for out in tab.values() if None not in out)
    per_sel = defined // max(1, len(m.selectors))
    target = _cells(m)

    def uncovered() -> tuple[int, tuple[int, ...]] | None:
        for s in m.selectors:
            if lay.sparse_a:
                covered = [[False] * lay.tile[1] for _ in range(lay.tile[0])]
                for (ps, _t, _i), out in tab.items():
                    if ps != s or None in out:
                        continue
                    r, fc, lc = out
                    if 0 <= r < lay.tile[0]:
                        for c in range(max(0, fc), min(lay.tile[1], lc + 1)):
                            covered[r][c] = True
                for r in range(lay.tile[0]):
                    for c in range(lay.tile[1]):
                        if not covered[r][c]:
                            return s, (r, c)
                continue
            for g in range(groups):
                have = {out for (ps, pt, _i), out in tab.items()
                        if ps == s and m.group_of(pt) == g and None not in out}
                for cell in _all_cells(_ranges(m)):
                    if cell not in have:
                        return s, cell
        return None

    hole = uncovered() if opts.cross_check else None
    # counting argument
    if lay.sparse_a:
        need = lay.tile[0] * lay.tile[1]
        width = _const_width(m)
        nz = lay.table.fragment.per_register.value if (
            lay.table and lay.table.fragment and lay.table.fragment.per_register) else None
        counted = (inj.status == "proved" and rng.status == "proved" and chunks is not None
                   and chunks.status == "proved" and width is not None and nz)
        if counted and width and nz and (defined // nz) * width == need:
            if hole is not None:
                raise InternalError(f"surjective: counting proves coverage, enumeration "
                                    f"finds {hole}")
            return _Core("proved", method="counting (disjoint chunks x width = tile)")
    elif inj.status == "proved" and rng.status == "proved" and per_sel == target * groups:
        if hole is not None:
            raise InternalError(f"surjective: counting proves coverage, enumeration finds "
                                f"{hole}")
        return _Core("proved", method="counting (injective, |domain| = |tile|)")
    if hole is None and not opts.cross_check:
        hole = uncovered()
    if hole is not None:
        # confirm with Z3: no point of the domain maps to the hole
        s_, cell = hole
        q = _Query(m, [*cell, *[hi for _lo, hi in _ranges(m)]])
        ps, t, i, enc = q.point("")
        vals, defined = q.values(enc)
        if lay.sparse_a:
            hit = z3.And(vals[0] == enc.val(cell[0]), vals[1] <= enc.val(cell[1]),
                         enc.val(cell[1]) <= vals[2])
        else:
            hit = z3.And(*[v == enc.val(c) for v, c in zip(vals, cell)])
        dom = q.domain(ps, t, i, enc)
        if m.group is not None:
            g = 0
            if groups > 1:
                # the hole was found for some group: search that group only
                g = next(gg for gg in range(groups) if cell not in {
                    out for (pps, pt, _i), out in tab.items()
                    if pps == s_ and m.group_of(pt) == gg})
            dom = z3.And(dom, enc.expr(m.group) == enc.val(g))
        zs, _model = _decide("surjective", z3.And(dom, defined, ps == enc.val(s_), hit), opts)
        if zs == "refuted":
            raise InternalError(f"surjective: enumeration finds {cell} uncovered, Z3 finds a "
                                "pre-image")
        if zs == "unknown":
            return _Core("unknown", "Z3 gave up confirming the uncovered cell")
        names = ("row", "col") if lay.sparse_a else m.names
        where = ", ".join(f"{n} {v}" for n, v in zip(names, cell))
        sel = f"selector {s_}: " if lay.operand == "metadata" else ""
        return _Core("refuted", f"{sel}no (lane, element) holds {where}",
                     {"cell": dict(zip(names, cell)), **({"selector": s_}
                                                         if lay.operand == "metadata" else {})},
                     (m.names[-1], 0))
    # the general case: a quantified query
    q = _Query(m, [hi for _lo, hi in _ranges(m)])
    ps, t, i, enc = q.point("")
    cell_vars = [z3.BitVec(f"cell{k}", q.w) for k in range(len(_ranges(m)))]
    vals, defined = q.values(enc)
    in_tile = z3.And(*[z3.And(cv >= enc.val(lo), cv < enc.val(hi))
                       for cv, (lo, hi) in zip(cell_vars, _ranges(m))])
    if lay.sparse_a:
        cv = cell_vars[:2]
        hit = z3.And(vals[0] == cv[0], vals[1] <= cv[1], cv[1] <= vals[2])
        in_tile = z3.And(cv[0] >= 0, cv[0] < enc.val(lay.tile[0]), cv[1] >= 0,
                         cv[1] < enc.val(lay.tile[1]))
    else:
        hit = z3.And(*[v == c for v, c in zip(vals, cell_vars)])
    sv = z3.BitVec("sq", q.w)
    # the point (selector, lane, element) is bound: only its selector is tied to the cell
    body = z3.ForAll([ps, t, i], z3.Implies(z3.And(q.domain(sv, t, i, enc), defined,
                                                 ps == sv), z3.Not(hit)))
    zs, model = _decide("surjective", z3.And(z3.Or(*[sv == enc.val(v) for v in m.selectors]),
                                              in_tile, body), opts, quantified=True)
    if zs == "unknown":
        return _Core("unknown", f"Z3 gave up ({model}) on surjectivity")
    if zs == "refuted":
        raise InternalError("surjective: Z3 finds an uncovered cell that enumeration covers")
    return _Core("proved", method="z3 (quantified) + enumeration")


def _all_cells(ranges: Sequence[tuple[int, int]]) -> Iterator[tuple[int, ...]]:
    if not ranges:
        yield ()
        return
    lo, hi = ranges[0]
    for v in range(lo, hi):
        for rest in _all_cells(ranges[1:]):
            yield (v, *rest)


def _const_width(m: _Map) -> int | None:
    widths = {out[2] - out[1] + 1 for out in m.table().values() if None not in out}
    return widths.pop() if len(widths) == 1 else None


# ---- sparse A ----------------------------------------------------------------------------------------


def _sparse_chunks(m: _Map, opts: Options) -> _Core:
    lay = m.lay
    frag = lay.table.fragment if lay.table else None
    sparsity = lay.sparsity
    if frag is None or frag.per_register is None or frag.out_of is None:
        return _Core("not-applicable", "the table states no 'N non-zero out of M consecutive'",
                     method="table")
    nz, width = frag.per_register.value, frag.out_of.value
    if sparsity is not None and nz * sparsity.chunk != width * sparsity.nonzeros:
        return _Core("refuted", f"the table says {nz} non-zero out of {width}, but "
                     f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse",
                     {"stated": [nz, width], "pattern": [sparsity.nonzeros, sparsity.chunk]},
                     None, "table")
    chunk = sparsity.chunk if sparsity else width
    q = _Query(m, [width, chunk, m.n + 1])
    s, t, i, enc = q.point("")
    vals, defined = q.values(enc)
    row, fc, lc = vals
    wrong_width = lc - fc + enc.val(1) != enc.val(width)
    misaligned = fc % enc.val(chunk) != enc.val(0)
    # how many of the lane's elements share this element's (row, range)
    others = []
    for j in range(m.n):
        ej = _Enc(q.w, s, t, enc.val(j))
        qq = _Query.__new__(_Query)
        qq.m, qq.w = m, q.w
        vj, dj = qq.values(ej)
        others.append(z3.If(z3.And(dj, vj[0] == row, vj[1] == fc, vj[2] == lc),
                            enc.val(1), enc.val(0)))
    count = z3.Sum(*others)
    bad = z3.Or(wrong_width, misaligned, count != enc.val(nz))
    zs, model = _decide("sparse-chunks", z3.And(q.domain(s, t, i, enc), defined, bad), opts)
    tab = m.table()

    def fault(p: tuple[int, int, int]) -> str | None:
        out = tab[p]
        if None in out:
            return None
        r, a, b = out
        if b - a + 1 != width:
            return f"cols {a}..{b} are {b - a + 1} wide, the table says {width} consecutive"
        if a % chunk:
            return f"cols {a}..{b} start inside a {chunk}-wide chunk"
        same = sum(1 for j in range(m.n) if tab.get((p[0], p[1], j)) == out)
        if same != nz:
            return f"lane {p[1]} holds {same} non-zeros of row {r}, cols {a}..{b}; the table " \
                   f"says {nz}"
        return None

    if zs == "refuted":
        p = (_int(model, s, q.w), _int(model, t, q.w), _int(model, i, q.w))
        if fault(p) is None:
            raise InternalError(f"sparse-chunks: the Z3 witness {p} does not replay")
    witness = None
    if opts.cross_check or zs == "refuted":
        witness = next((p for p in tab if fault(p) is not None), None)
        if opts.cross_check:
            _agree("sparse-chunks", zs, "refuted" if witness else "proved")
    if zs != "refuted":
        return _Core(zs, "" if zs == "proved" else f"Z3 gave up ({model})")
    assert witness is not None
    out = tab[witness]
    return _Core("refuted", f"lane {witness[1]}, {_elem(m, witness[2])}: {fault(witness)}",
                 {**_pt(m, *witness), "row": out[0], "firstcol": out[1], "lastcol": out[2]},
                 ("firstcol", 0))


# ---- table obligations -------------------------------------------------------------------------------


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
    width = REGISTER_BITS.get(fr.register_kind)
    if width is None:
        faults.append(f"'.{fr.register_kind}' is not a register kind a fragment can use")
        width = 32
    if fr.per_register is not None:
        per = fr.per_register.value
        total = regs * per
        if total != n:
            faults.append(f"{fr.registers.text} register{'s' if regs > 1 else ''} x "
                          f"{fr.per_register.text} element{'s' if per > 1 else ''} = {total}, "
                          f"but the {lay.tile[0]} x {lay.tile[1]} tile"
                          f"{' (half of it non-zero)' if lay.sparse_a else ''} needs "
                          f"{n} per lane")
    else:
        assert fr.total is not None
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
            if set(fr.types) != set(tf.types):
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


# ---- metadata --------------------------------------------------------------------------------------


def _metadata(m: _Map, opts: Options, inj: _Core, sur: _Core) -> tuple[_Core, _Core]:
    """(metadata-coverage, selector-range)."""
    lay = m.lay
    md = lay.metadata
    assert md is not None
    sparsity = lay.sparsity
    faults = []
    if md.desc is not None and sparsity is not None:
        d = md.desc
        chunk_units = sparsity.units_per_chunk
        need_bits = max(1, (chunk_units - 1).bit_length())
        hw_bits = d.field_bits * d.fields_per_group // max(1, sparsity.slots) \
            if d.field_bits * d.fields_per_group > sparsity.index_bits * sparsity.slots \
            else d.field_bits
        if d.chunk != sparsity.chunk:
            faults.append(f"the sentence speaks of {d.chunk}-wide chunks; "
                          f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse")
        if hw_bits != need_bits and d.field_bits != need_bits * sparsity.slots:
            faults.append(f"{d.field_bits}-bit fields cannot index a {chunk_units}-unit chunk "
                          f"({need_bits} bits per index)")
        stated_nz = d.indices_per_group * (1 if d.fields_per_group == 1 else 1)
        per_chunk = sparsity.nonzeros
        if d.fields_per_group == 2 and d.indices_per_group != per_chunk:
            faults.append(f"a pair of fields is said to index {d.indices_per_group} non-zeros; "
                          f"a chunk holds {per_chunk}")
        _ = stated_nz
        if d.fields * d.field_bits != lay.metadata_fields * sparsity.index_bits:
            faults.append("the field count does not match the layout's fields")
    # contributing lanes must sit in the quad of the lanes holding the values
    quad_fault = _quad_check(m)
    if quad_fault:
        faults.append(quad_fault)
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


def _fmt_range(vals: tuple[int, ...]) -> str:
    if not vals:
        return "(none)"
    if len(vals) == 1:
        return str(vals[0])
    return f"{vals[0]}..{vals[-1]}"


def _quad_check(m: _Map) -> str | None:
    """Each metadata field's (row, chunk) must be held, in A, by a lane of the same quad."""
    return None  # decided in prove_layout where the A layout of the section is known


# ---- per layout ------------------------------------------------------------------------------------------


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
    return Verdict(name, core.status, core.message, core.cex, span, "error", core.method)


_CACHE: dict[tuple[Any, ...], _Core] = {}


def _cached(key: tuple[Any, ...], fn: Callable[[], _Core]) -> _Core:
    hit = _CACHE.get(key)
    if hit is None:
        hit = fn()
        _CACHE[key] = hit
    return hit


def clear_cache() -> None:
    _CACHE.clear()


def prove_layout(lay: Layout, opts: Options, by_id: dict[str, Layout] | None = None,
                 a_layout: Layout | None = None) -> LayoutResult:
    by_id = by_id or {}
    verdicts: dict[str, Verdict] = {}
    findings: list[Finding] = []
    m = _map_of(lay)
    key = (lay.map_digest(), lay.elements, lay.lanes, lay.tile, lay.operand, lay.sparse_a,
           opts.cross_check, opts.timeout_ms,
           repr(lay.metadata.selectors if lay.metadata else ()))
    partial = None
    if m is not None:
        whole: _Map = m

        def undefined() -> _Core:
            return _undefined_point(whole) or _Core("proved")
        defined = _cached((*key, "defined"), undefined)
        partial = defined if defined.status == "refuted" else None
    if partial is not None:
        # Z3 and the enumeration would give such a point different meanings: decide nothing
        # on the map, report the point
        verdicts["cases"] = _verdict("cases", partial, lay)
        for n in ("in-range", "injective", "surjective"):
            verdicts[n] = Verdict(n, "not-applicable", "the formulas are undefined at "
                                  "some (lane, element); see 'cases'")
        m = None
    na = Verdict
    formula_names = ("cases", "in-range", "injective", "surjective")
    if partial is not None:
        pass
    elif m is None:
        why = "the document gives this layout only as a figure" \
            if lay.source == "figure-only" else "no formulas"
        for n in formula_names:
            verdicts[n] = na(n, "not-applicable", why)
    else:
        cores = [_cached((*key, "cases", k), lambda k=k: _cases(m, k, opts))
                 for k in range(len(m.names))]
        bad = next((c for c in cores if c.status != "proved"), None)
        verdicts["cases"] = _verdict("cases", bad or cores[0], lay)
        rng = _cached((*key, "in-range"), lambda: _in_range(m, opts))
        verdicts["in-range"] = _verdict("in-range", rng, lay)
        inj = _cached((*key, "injective"), lambda: _injective(m, opts))
        verdicts["injective"] = _verdict("injective", inj, lay)
        chunks = None
        if lay.sparse_a:
            chunks = _cached((*key, "sparse-chunks", _table_key(lay)),
                             lambda: _sparse_chunks(m, opts))
            verdicts["sparse-chunks"] = _verdict("sparse-chunks", chunks, lay)
        sur = _cached((*key, "surjective", _table_key(lay)),
                      lambda: _surjective(m, opts, inj, rng, chunks))
        verdicts["surjective"] = _verdict("surjective", sur, lay)
        if lay.operand == "metadata":
            cov, sel = _metadata(m, opts, inj, sur)
            if cov.status == "proved" and a_layout is not None:
                qf = quad_fault(m, a_layout)
                if qf is not None:
                    cov = _Core("refuted", qf[0], qf[1], None, "enumeration")
            verdicts["metadata-coverage"] = _verdict("metadata-coverage", cov, lay)
            verdicts["selector-range"] = _verdict("selector-range", sel, lay)
    if lay.operand == "metadata" and m is None:
        rb = _register_budget(lay)
        verdicts["metadata-coverage"] = na("metadata-coverage", "not-applicable",
                                           "no metadata layout (the spec gives a figure)")
        verdicts["selector-range"] = na("selector-range", "not-applicable",
                                        "no metadata layout")
    verdicts["register-budget"] = _verdict("register-budget", _register_budget(lay), lay)
    el, remarks = _element_list(lay)
    verdicts["element-list"] = _verdict("element-list", el, lay)
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
    verdicts["hardware"] = _hardware(lay, m, opts)
    ordered = tuple(verdicts[n] for n in OBLIGATIONS if n in verdicts)
    for v in ordered:
        if v.status in ("refuted", "error"):
            findings.append(Finding("error", v.name, v.span or lay.span, v.message, lay.section,
                                    v.counterexample, lay.id))
        elif v.status == "unknown":
            findings.append(Finding("error", "unknown", v.span or lay.span,
                                    f"{v.name}: {v.message or 'undecided'}", lay.section, None,
                                    lay.id))
    return LayoutResult(lay, ordered, tuple(findings))


def _undefined_point(m: _Map) -> _Core | None:
    """A (lane, element) where the chosen case of a formula uses a definition none of whose
    cases applies there (``groupID = ... for ai where i < 4`` used for a4): the formula has no
    value there, which is a fault of the 'cases' kind."""
    k, p = 0, (m.selectors[0], 0, 0)
    try:
        for p in m.points():
            for k in range(len(m.names)):
                m.matches(k, *p)
                m.value(k, *p)
    except Undefined:
        f = m.formulas[k]
        cex = {**_pt(m, *p), "formula": f.name}
        return _Core("refuted", f"'{f.name}' has no value for {_elem(m, p[2])} of lane {p[1]}: "
                     "it uses a definition none of whose cases applies there", cex,
                     (f.name, 0), "enumeration")
    return None


def _table_key(lay: Layout) -> tuple[Any, ...]:
    fr = lay.table.fragment if lay.table else None
    if fr is None:
        return ()
    return (fr.per_register.value if fr.per_register else None,
            fr.out_of.value if fr.out_of else None)


def quad_fault(m: _Map, a_layout: Layout) -> tuple[str, Any] | None:
    """The metadata of (row, chunk) must come from the quad of the lane holding its values."""
    am = _map_of(a_layout)
    sparsity = m.lay.sparsity
    if am is None or sparsity is None or _undefined_point(am) is not None:
        return None  # the A layout's own 'cases' finding says why
    owner: dict[tuple[int, int], int] = {}
    for (_s, t, _i), out in am.table().items():
        if None in out:
            continue
        r, fc, lc = out
        for c in range(fc, lc + 1, sparsity.chunk):
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


def _hardware(lay: Layout, m: _Map | None, opts: Options) -> Verdict:
    ev = opts.evidence
    if ev is None:
        return Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)")
    return ev.verdict(lay, m)


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
