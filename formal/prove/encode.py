"""The Z3 encoding of a layout's formulas over bit-vectors.

``row = lane >> 2`` over 32 lanes needs 5 bits for ``lane`` and 3 for the result; ``width_of``
picks a width from sound interval bounds of every subexpression, so no intermediate value can
wrap, and ``Sym`` gives each formula as a Z3 term over symbolic (selector, lane, i).  ``check``
runs one query under a timeout: ``sat`` / ``unsat`` / ``unknown``.

The terms are made by one call of Z3's C API each (``ops``): ``ops.add(t, v4)`` is the very
term ``t + v4`` is, without the Python operator's coercion of its arguments (their sorts looked
up and compared, a number turned into a term), which was about half of the time taken to build
the catalog's queries; the constants of a width are made once (``bv_val``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import sympy as sp
import z3

from ..base.memo import keep_bounded
from ..model.algebra import (
    LANE,
    SEL,
    BitAnd,
    BitOr,
    BitXor,
    I,
    bounds,
    definedness,
)
from ..model.cells import CellMap
from .verdicts import TEST_HOOKS, InternalError
from .witness import output_ranges

# ---- Z3 encoding ---------------------------------------------------------------------------------


# Z3 terms are shared across layouts with the same map for the life of the process; a
# long-lived caller must not grow them without end, so they are dropped whole at the limit.
_SHARED_LIMIT = 20000
SHARED_TERMS: dict[int, dict[Any, Any]] = {}


_VALS: dict[tuple[Any, int], Any] = {}  # constants: (value or name, width) -> term


def bv_val(v: int, width: int) -> Any:
    """``z3.BitVecVal(v, width)``, made once a process (Z3 shares equal terms anyway)."""
    hit = _VALS.get((v, width))
    if hit is None:
        hit = keep_bounded(_VALS, (v, width), z3.BitVecVal(v, width), _SHARED_LIMIT)
    return hit


def bv_consts(names: str, width: int) -> list[Any]:
    """``z3.BitVecs(names, width)``, each constant made once a process."""
    out = []
    for n in names.split():
        hit = _VALS.get((n, width))
        if hit is None:
            hit = keep_bounded(_VALS, (n, width), z3.BitVec(n, width), _SHARED_LIMIT)
        out.append(hit)
    return out


class ops:
    """Bit-vector terms by one call of Z3's C API each, the very terms of z3's operators
    (``ops.add(a, b)`` is ``a + b``, ``ops.lt(a, b)`` is ``a < b``: signed), for terms of
    one sort and context; no Python number is coerced here."""

    @staticmethod
    def _bv(make: Any, a: Any, b: Any) -> Any:
        ctx = a.ctx
        return z3.BitVecRef(make(ctx.ref(), a.ast, b.ast), ctx)

    @staticmethod
    def _bool(make: Any, a: Any, b: Any) -> Any:
        ctx = a.ctx
        return z3.BoolRef(make(ctx.ref(), a.ast, b.ast), ctx)

    @staticmethod
    def add(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvadd, a, b)

    @staticmethod
    def sub(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvsub, a, b)

    @staticmethod
    def mul(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvmul, a, b)

    @staticmethod
    def smod(a: Any, b: Any) -> Any:
        """``a % b``: bvsmod, floor modulo."""
        return ops._bv(z3.Z3_mk_bvsmod, a, b)

    @staticmethod
    def sdiv(a: Any, b: Any) -> Any:
        """``a / b``: bvsdiv."""
        return ops._bv(z3.Z3_mk_bvsdiv, a, b)

    @staticmethod
    def ashr(a: Any, b: Any) -> Any:
        """``a >> b``: arithmetic shift."""
        return ops._bv(z3.Z3_mk_bvashr, a, b)

    @staticmethod
    def udiv(a: Any, b: Any) -> Any:
        """``z3.UDiv(a, b)``: unsigned division."""
        return ops._bv(z3.Z3_mk_bvudiv, a, b)

    @staticmethod
    def urem(a: Any, b: Any) -> Any:
        """``z3.URem(a, b)``: unsigned remainder."""
        return ops._bv(z3.Z3_mk_bvurem, a, b)

    @staticmethod
    def band(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvand, a, b)

    @staticmethod
    def bor(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvor, a, b)

    @staticmethod
    def bxor(a: Any, b: Any) -> Any:
        return ops._bv(z3.Z3_mk_bvxor, a, b)

    @staticmethod
    def lt(a: Any, b: Any) -> Any:
        return ops._bool(z3.Z3_mk_bvslt, a, b)

    @staticmethod
    def le(a: Any, b: Any) -> Any:
        return ops._bool(z3.Z3_mk_bvsle, a, b)

    @staticmethod
    def gt(a: Any, b: Any) -> Any:
        return ops._bool(z3.Z3_mk_bvsgt, a, b)

    @staticmethod
    def ge(a: Any, b: Any) -> Any:
        return ops._bool(z3.Z3_mk_bvsge, a, b)

    @staticmethod
    def eq(a: Any, b: Any) -> Any:
        return ops._bool(z3.Z3_mk_eq, a, b)

    @staticmethod
    def ne(a: Any, b: Any) -> Any:
        """``a != b``: Z3's distinct of the two."""
        ctx = a.ctx
        arr = (z3.Ast * 2)(a.ast, b.ast)
        return z3.BoolRef(z3.Z3_mk_distinct(ctx.ref(), 2, arr), ctx)

    @staticmethod
    def not_(a: Any) -> Any:
        ctx = a.ctx
        return z3.BoolRef(z3.Z3_mk_not(ctx.ref(), a.ast), ctx)

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        """``z3.If(c, a, b)`` of two terms of one sort."""
        ctx = c.ctx
        return _like(a)(z3.Z3_mk_ite(ctx.ref(), c.ast, a.ast, b.ast), ctx)

    @staticmethod
    def total(terms: Sequence[Any], width: int) -> Any:
        """``z3.Sum(*terms)`` of bit-vectors: ((0 + t0) + t1) + ..., as z3 makes it."""
        out = bv_val(0, width)
        for t in terms:
            out = ops.add(out, t)
        return out

    @staticmethod
    def rel(op: str, a: Any, b: Any) -> Any:
        """``a op b`` as Python writes it for a SymPy relation's ``rel_op``: where ``b`` is
        a number term and ``a`` is not, Python asks ``b``'s mirrored comparison first (its
        class is a subclass of ``a``'s): ``t < 32`` is the term ``32 > t``."""
        if type(b) is not type(a) and isinstance(b, type(a)):
            a, b, op = b, a, _MIRROR[op]
        return _RELS[op](a, b)


_RELS = {"<": ops.lt, "<=": ops.le, ">": ops.gt, ">=": ops.ge, "==": ops.eq, "!=": ops.ne}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def mod_const(a: Any, d: int, width: int) -> Any:
    """``a % d``, floor modulo, by a number ``d``.  For ``d = 2**k`` (positive and below the
    sign bit) the low ``k`` bits of ``a``: in two's complement ``a & (d - 1)`` equals the
    floor modulo for every ``a``, negative ones too (-3 % 4 = 1 = 0b...11101 & 0b11), and Z3
    builds an AND of ``k`` bits instead of a signed divider (the catalog's grouped map
    queries: about a fifth less CPU).  Any other ``d``: bvsmod."""
    if 0 < d < 1 << (width - 1) and d & (d - 1) == 0:
        return ops.band(a, bv_val(d - 1, width))
    return ops.smod(a, bv_val(d, width))


def substituted(terms: Sequence[Any], pairs: Sequence[tuple[Any, Any]]) -> list[Any]:
    """``z3.substitute(t, *pairs)`` of each term, the arrays made once."""
    n = len(pairs)
    frm = (z3.Ast * n)(*[a.ast for a, _b in pairs])
    to = (z3.Ast * n)(*[b.ast for _a, b in pairs])
    out = []
    for t in terms:
        ctx = t.ctx
        out.append(_like(t)(z3.Z3_substitute(ctx.ref(), t.ast, n, frm, to), ctx))
    return out


def _like(t: Any) -> Any:
    """The wrapper of a term of ``t``'s sort: Boolean or bit-vector (a number made by
    substitution or choice is wrapped as a plain bit-vector term)."""
    return z3.BoolRef if isinstance(t, z3.BoolRef) else z3.BitVecRef


def conj(*args: Any) -> Any:
    """``z3.And`` of Boolean terms, made by one call of Z3's C API: the same term, without
    the Python wrapper's coercion of each argument (its sorts compared pair by pair), which
    was a quarter of the time taken to encode the catalog's maps."""
    return _joined(z3.Z3_mk_and, z3.And, args)


def disj(*args: Any) -> Any:
    """``z3.Or`` of Boolean terms, as ``conj``."""
    return _joined(z3.Z3_mk_or, z3.Or, args)


def _joined(make: Any, slow: Any, args: tuple[Any, ...]) -> Any:
    if not args or not all(type(a) is z3.BoolRef for a in args):
        return slow(*args)  # Python values, probes, vectors: z3's own coercion
    ctx = args[0].ctx
    if any(a.ctx is not ctx for a in args):
        return slow(*args)
    arr, n = z3.z3._to_ast_array(args)
    return z3.BoolRef(make(ctx.ref(), n, arr), ctx)


class _Enc:
    """SymPy -> Z3 bit-vectors of one width, for one (selector, lane, element) triple."""

    def __init__(self, width: int, s: Any, t: Any, i: Any,
                 at_standard: bool | None = None) -> None:
        self.w = width
        self.env = {SEL: s, LANE: t, I: i}
        # terms over the standard point (s, t, i) are shared by every map of this width: a
        # SymPy expression such as floor(lane/4) is translated once per run, not per layout
        # (``at_standard``: the caller made the constants s, t, i itself; else each is asked
        # its sexpr, a constant's name: Z3's C printer, not z3's Python one)
        standard = at_standard if at_standard is not None else \
            all(v.sexpr() == n for v, n in ((s, "s"), (t, "t"), (i, "i")))
        if standard and sum(len(v) for v in SHARED_TERMS.values()) >= _SHARED_LIMIT:
            SHARED_TERMS.clear()
        self.memo: dict[Any, Any] = SHARED_TERMS.setdefault(width, {}) if standard else {}

    def val(self, v: int) -> Any:
        return bv_val(v, self.w)

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
                out = ops.add(out, self.expr(a))
            return out
        if isinstance(e, sp.Mul):
            out = self.expr(e.args[0])
            for a in e.args[1:]:
                out = ops.mul(out, self.expr(a))
            return out
        if isinstance(e, sp.Mod):  # floor modulo
            if e.args[1].is_Integer:
                return mod_const(self.expr(e.args[0]), int(e.args[1]), self.w)
            return ops.smod(self.expr(e.args[0]), self.expr(e.args[1]))
        if isinstance(e, sp.floor):
            num, den = sp.fraction(sp.together(e.args[0]))
            d = int(den)
            x = self.expr(num)
            if d & (d - 1) == 0:  # arithmetic shift = floor division
                return ops.ashr(x, self.val(d.bit_length() - 1))
            dv = self.val(d)
            return ops.sdiv(ops.sub(x, ops.smod(x, dv)), dv)
        if isinstance(e, BitAnd):
            return ops.band(self.expr(e.args[0]), self.expr(e.args[1]))
        if isinstance(e, BitOr):
            return ops.bor(self.expr(e.args[0]), self.expr(e.args[1]))
        if isinstance(e, BitXor):
            return ops.bxor(self.expr(e.args[0]), self.expr(e.args[1]))
        if isinstance(e, sp.Pow) and e.args[1].is_Integer:
            base = self.expr(e.args[0])
            out = self.val(1)
            for _ in range(int(e.args[1])):
                out = ops.mul(out, base)
            return out
        if isinstance(e, sp.Piecewise):
            out = self.val(0)
            for ex, c in reversed(e.args):
                out = ops.ite(self.pred(c), self.expr(ex), out)
            return out
        raise InternalError(f"no Z3 encoding for {type(e).__name__}")

    def pred(self, c: Any) -> Any:
        if c is sp.true or c is True:
            return z3.BoolVal(True)
        if c is sp.false or c is False:
            return z3.BoolVal(False)
        if isinstance(c, sp.And):
            return conj(*[self.pred(a) for a in c.args])
        if isinstance(c, sp.Or):
            return disj(*[self.pred(a) for a in c.args])
        if isinstance(c, sp.Not):
            return ops.not_(self.pred(c.args[0]))
        if isinstance(c, sp.core.relational.Relational):
            return ops.rel(c.rel_op, self.expr(c.lhs), self.expr(c.rhs))
        raise InternalError(f"no Z3 encoding for condition {type(c).__name__}")


def subexprs(e: Any) -> Iterator[Any]:
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, sp.core.relational.Relational):
            stack.extend((x.lhs, x.rhs))
        elif isinstance(x, sp.Basic):
            stack.extend(a for a in x.args if isinstance(a, sp.Basic))


def width_of(m: CellMap) -> int:
    """Bits that hold every intermediate value of every formula over the domain, signed.

    Bounds come from interval arithmetic over the domain box, so a wide literal widens the
    encoding instead of silently wrapping; the cross-check would catch a wrap anyway.
    """
    box = {LANE: (0, m.lanes - 1), I: (0, max(0, m.n - 1)),
           SEL: (min(m.selectors), max(m.selectors))}
    top = max([m.lanes, m.n + 1, max(m.selectors) + 1, *[hi for _lo, hi in output_ranges(m)]])
    roots = [c.value for f in m.formulas for c in f.cases] + \
            [c.cond for f in m.formulas for c in f.cases] + [m.holder]
    if m.group is not None:
        roots.append(m.group)
    top = magnitude(roots, box, top)
    # every subexpression lies in [-top, top]; the encodings add at most a difference of two
    # values plus one (a chunk's width), or count up to n: 2 * top + 2 with a sign bit
    return max(6, (2 * top + 2).bit_length() + 1)


def magnitude(roots: Iterable[Any], box: Any, top: int, skip: tuple[type, ...] = ()) -> int:
    """The largest absolute value ``top`` or any integer subexpression of ``roots`` can take
    over ``box`` (sound interval bounds); the bit-vector widths of every Z3 encoding are
    chosen from it.  Subexpressions of the ``skip`` types, and those without bounds, count
    only through their parts.  Each root's own largest value is worked out once a process
    for its box (the maps share many case values and conditions: ``lane % 4 == 0``)."""
    where = tuple(sorted((_name(k), v) for k, v in box.items()))
    for r in roots:
        key = (r, where, skip)
        hit = _ROOTS.get(key)
        if hit is None:
            hit = _root_magnitude(r, box, where, skip)
            keep_bounded(_ROOTS, key, hit, _SHARED_LIMIT)
        top = max(top, hit)
    return top


# each root's largest absolute value over a box (``magnitude``): a pure function of the three
_ROOTS: dict[tuple[Any, Any, tuple[type, ...]], int] = {}


def _root_magnitude(r: Any, box: Any, where: Any, skip: tuple[type, ...]) -> int:
    top = 0
    seen: set[Any] = set()
    for x in subexprs(r):
        if x in seen:
            continue
        seen.add(x)
        if isinstance(x, sp.Rational) and not x.is_Integer:
            # a divisor (``floor(e / d)`` holds 1/d): its encoding writes d itself
            top = max(top, abs(int(x.p)), int(x.q))
            continue
        if isinstance(x, sp.Expr) and not isinstance(x, sp.core.relational.Relational) \
                and not x.is_Boolean and not isinstance(x, skip):
            got = _bounds(x, box, where)
            if got is not None:
                top = max(top, abs(got[0]), abs(got[1]))
    return top


def _both(a: Any, b: Any) -> Any:
    """``sp.And(a, b)`` of two SymPy booleans: where one is ``true`` (a case with no nested
    Piecewise: nearly every case), the other, as ``sp.And`` gives it, without building it."""
    if a is sp.true:
        return b
    if b is sp.true:
        return a
    return sp.And(a, b)


_NAMES: dict[Any, str] = {}  # ``str`` of a box's symbols: SymPy's printer, once a symbol


def _name(k: Any) -> str:
    hit = _NAMES.get(k)
    if hit is None:
        hit = _NAMES[k] = str(k)
    return hit


# bounds of a subexpression over a box, kept for the process: the maps share many (lane / 4
# over 32 lanes, i % 2 ...); ``bounds`` is a pure function of the two
_BOUNDS: dict[tuple[Any, Any], tuple[int, int] | None] = {}


def _bounds(x: Any, box: Any, where: Any) -> tuple[int, int] | None:
    key = (x, where)
    if key in _BOUNDS:
        return _BOUNDS[key]
    try:
        got: tuple[int, int] | None = bounds(x, box)
    except (ValueError, TypeError):
        got = None
    keep_bounded(_BOUNDS, key, got, _SHARED_LIMIT)
    return got


class Sym:
    """The Z3 terms of a map at one symbolic point; further points by substitution."""

    def __init__(self, m: CellMap, width: int | None = None) -> None:
        self.m = m
        self.w = w = width or width_of(m)
        self.s, self.t, self.i = bv_consts("s t i", w)
        enc = _Enc(w, self.s, self.t, self.i, at_standard=True)  # bv_consts("s t i")
        self.enc = enc
        zero = enc.val(0)
        sel = disj(*[ops.rel("==", self.s, enc.val(v)) for v in m.selectors])
        self.dom = conj(sel, ops.ge(self.t, zero), ops.rel("<", self.t, enc.val(m.lanes)),
                        ops.ge(self.i, zero), ops.rel("<", self.i, enc.val(m.n)),
                        enc.pred(m.holder))
        self.conds: list[list[Any]] = []
        self.vals: list[Any] = []
        defs = []
        for k, f in enumerate(m.formulas):
            conds: list[Any] = []
            for c in f.cases:
                if c.otherwise:
                    conds.append(ops.not_(disj(*conds)) if conds else z3.BoolVal(True))
                else:
                    conds.append(enc.pred(c.cond))
            self.conds.append(conds)
            if k >= len(m.names):
                continue  # a helper: only its cases are checked
            out = enc.val(0)
            dfn = z3.BoolVal(False)
            for c, cond in reversed(list(zip(f.cases, conds))):
                out = ops.ite(cond, enc.expr(c.value), out)
                ok = enc.pred(_both(definedness(c.value), definedness(c.cond)))
                dfn = ops.ite(cond, ok, dfn)
            self.vals.append(out)
            defs.append(dfn)
        self.defined = conj(*defs)
        self.group = enc.expr(m.group) if m.group is not None else None

    def val(self, v: int) -> Any:
        return bv_val(v, self.w)

    def renamed(self, tag: str) -> tuple[Any, Any, Any, Any, list[Any], Any, Any]:
        """(s, t, i, dom, vals, defined, group) at a fresh point."""
        s2, t2, i2 = bv_consts(f"s{tag} t{tag} i{tag}", self.w)
        sub = [(self.s, s2), (self.t, t2), (self.i, i2)]
        extra = [self.group] if self.group is not None else []
        terms = substituted([self.dom, self.defined, *extra, *self.vals], sub)
        group = terms[2] if extra else None
        return (s2, t2, i2, terms[0], terms[2 + len(extra):], terms[1], group)

    def at_element(self, j: int) -> tuple[list[Any], Any]:
        """(vals, defined) at the same selector and lane, element j."""
        *vals, defined = substituted([*self.vals, self.defined], [(self.i, self.val(j))])
        return vals, defined

    def point(self, model: Any) -> tuple[int, int, int]:
        return (z3_int(model, self.s, self.w), z3_int(model, self.t, self.w),
                z3_int(model, self.i, self.w))


def solve(name: str, formula: Any, timeout_ms: int, quantified: bool = False,
          make: Any = None) -> tuple[str, Any]:
    """('sat', model) | ('unsat', None) | ('unknown', reason); ``make``: the solver (default:
    the bit-vector one, or Z3's general one where ``quantified``)."""
    hook = TEST_HOOKS.get("encoding")
    if hook is not None:
        formula = hook(name, formula)
    s = make() if make is not None else z3.Solver() if quantified else _qfbv_solver()
    s.set("timeout", max(1, int(timeout_ms)))
    s.add(formula)
    r = s.check()
    if r == z3.sat:
        return "sat", s.model()
    if r == z3.unsat:
        return "unsat", None
    return "unknown", s.reason_unknown()


# Queries asked of Z3 as one: each query costs a few ms of set-up however small (the SAT
# solver's), and a disjunction of 16 queries is decided about as fast as one.
TOGETHER = 16


def unsat_together(name: str, todo: Sequence[tuple[Any, Any]], timeout_ms: int,
                   general: bool = False, make: Any = None) -> set[Any]:
    """The keys of ``todo`` (key, violation formula) whose violation Z3 finds unsatisfiable,
    asked ``TOGETHER`` at a time as one disjunction: *unsat* to the group is *unsat* to each;
    a model names the members it satisfies, and the rest are asked again (a member left
    alone is not asked here: its caller asks it on its own).  With three keys a, b, c where
    only b's violation holds: the group {a, b, c} is sat with b true, then {a, c} is unsat,
    so {a, c} comes back.  ``general``: Z3's general solver (arithmetic over the integers),
    not the bit-vector one; ``make``: another solver (``address_solver``)."""
    out: set[Any] = set()
    for k in range(0, len(todo), TOGETHER):
        group = list(todo[k:k + TOGETHER])
        while len(group) > 1:
            r, model = solve(name, z3.Or(*(f for _key, f in group)), timeout_ms, general,
                             make)
            if r == "unsat":
                out.update(key for key, _f in group)
            if r != "sat":
                break
            held = [z3.is_true(model.evaluate(f, model_completion=True)) for _key, f in group]
            if not any(held):  # pragma: no cover - a model satisfies one of the disjuncts
                break
            group = [x for x, h in zip(group, held) if not h]
    return out


def _qfbv_solver() -> Any:
    """Bit-vector queries without quantifiers: simplify, solve equations, bit-blast, share
    the Boolean circuit's equal gates (``aig``), SAT.

    About twice as fast as the generic QF_BV solver on these small queries (measured over the
    catalog); ``aig`` takes another quarter off the catalog's grouped map queries (14 queries,
    CPU 220 -> 165 ms); the simplifier's ``mul2concat`` writes each product by a power of two
    as a shift before the circuit is built (the grouped map queries, CPU median 139 -> 124 ms
    over 7 rounds); a model comes back through the tactics' model converters.
    """
    return z3.Then(z3.With("simplify", mul2concat=True), "solve-eqs", "bit-blast", "aig",
                   "sat").solver()


def address_solver() -> Any:
    """The solver of shared-memory address queries, whose every product is by a power of two
    (a stride, 8 bits a byte): ``_qfbv_solver``'s pipeline, whose ``mul2concat`` writes each
    such product as a shift.  The catalog's 51 descriptor and TMA queries, CPU: 240-258 ms
    with z3.Solver() -> 130-171 ms; its 48 descriptor queries in three disjunctions, in a
    fresh process: 71-75 ms without ``aig`` -> 50-53 ms."""
    return _qfbv_solver()


def z3_int(model: Any, v: Any, w: int) -> int:
    x = model.evaluate(v, model_completion=True).as_long()
    return x - (1 << w) if x >= 1 << (w - 1) else x
