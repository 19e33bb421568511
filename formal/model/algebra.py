"""The symbolic vocabulary of layouts: SymPy expressions over (lane, i, selector).

A layout maps a hardware location -- lane ``t`` of the warp and element index ``i`` of that
lane's fragment -- to a cell of a tile.  The spec's integer operators are modelled exactly:

    x / m     -> floor(x / m)         m a positive constant, x never negative
    x % m     -> Mod(x, m)            the same
    x >> k    -> floor(x / 2**k)      k a constant >= 0
    x << k    -> x * 2**k
    x & y     -> BitAnd(x, y)         two's complement, as in C on non-negative values
    x | y, x ^ y -> BitOr, BitXor

so that, e.g., ``groupID = %laneid >> 2`` is ``floor(lane/4)``, and lane 13 has groupID 3.
Integer ``/`` and ``%`` are C's (and PTX's ``div``/``rem``): the quotient truncates toward
zero and the remainder takes the dividend's sign, so ``(groupID - 8) % 8`` is -8 + groupID for
groupID 0..7 (-1 at groupID 7), not floor modulo's groupID.  Where the dividend may be
negative, the two readings are a Piecewise on its sign (``c_divide``).

This module also *compiles* an expression into a Python closure over ints, which the
enumeration cross-check, the exporters and the CPU executor use; the compiler walks the
SymPy tree itself (no text is ever evaluated), and the closure computes with
Python's unbounded ints, so it cannot overflow.  ``bounds`` gives a sound interval for an
expression over a box of inputs, which the Z3 encoder uses to choose bit-vector widths that
cannot overflow either.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import sympy as sp

LANE = sp.Symbol("lane", integer=True)
I = sp.Symbol("i", integer=True)  # noqa: E741 - the spec's element index
SEL = sp.Symbol("selector", integer=True)
ROW = sp.Symbol("r", integer=True)
COL = sp.Symbol("c", integer=True)


class _Bitwise(sp.Function):
    """Base of the bitwise functions: evaluates on integers, stays symbolic otherwise."""

    is_integer = True
    _op: Callable[[int, int], int] = staticmethod(lambda a, b: 0)

    @classmethod
    def eval(cls, a: Any, b: Any) -> Any:  # SymPy's folding hook for Function subclasses
        if a.is_Integer and b.is_Integer:
            return sp.Integer(cls._op(int(a), int(b)))
        return None


class BitAnd(_Bitwise):
    _op = staticmethod(lambda a, b: a & b)


class BitOr(_Bitwise):
    _op = staticmethod(lambda a, b: a | b)


class BitXor(_Bitwise):
    _op = staticmethod(lambda a, b: a ^ b)


def c_divide(op: str, a: Any, m: int) -> Any:
    """C's ``a / m`` (``op`` ``/``: truncated) or ``a % m`` (``%``: the dividend's sign),
    ``m`` a non-zero constant: floor and Mod where ``a`` is never negative (every lane,
    element and selector is not), a Piecewise on the sign of ``a`` elsewhere.

        c_divide("%", i - 8, 8)  -> -Mod(8 - i, 8) where i < 8: i = 7 gives -1
        c_divide("/", i, -2)     -> -floor(i / 2): i = 3 gives -1 (C: 3 / -2 == -1)
    """
    d = abs(m)
    lo, _hi = bounds(a, _NONNEGATIVE)
    if lo >= 0:
        q, r = sp.floor(a / d), sp.Mod(a, d)
    else:
        q = sp.Piecewise((sp.floor(a / d), a >= 0), (-sp.floor(-a / d), True))
        r = sp.Piecewise((sp.Mod(a, d), a >= 0), (-sp.Mod(-a, d), True))
    if op == "%":
        return r
    return q if m > 0 else -q


Env = dict[sp.Symbol, int]
Fn = Callable[[int, int, int], int]
Pred = Callable[[int, int, int], bool]


def _var(sym: sp.Symbol) -> Fn:
    if sym == LANE:
        return lambda t, i, s: t
    if sym == I:
        return lambda t, i, s: i
    if sym == SEL:
        return lambda t, i, s: s
    raise ValueError(f"free symbol {sym} in a layout expression")


def compile_expr(e: Any) -> Fn:
    """A closure ``f(lane, i, selector) -> int`` computing the SymPy integer expression ``e``."""
    if isinstance(e, sp.Integer) or e.is_Integer:
        v = int(e)
        return lambda t, i, s: v
    if isinstance(e, sp.Symbol):
        return _var(e)
    if isinstance(e, sp.Add):
        fs = [compile_expr(a) for a in e.args]
        return lambda t, i, s: sum(f(t, i, s) for f in fs)
    if isinstance(e, sp.Mul):
        rational = [a for a in e.args if a.is_Rational and not a.is_Integer]
        if rational:
            # floor(x / 4) appears as floor(Mul(1/4, x)); a bare rational coefficient on its
            # own is never produced by the model
            raise ValueError(f"non-integer product {e}")
        fs = [compile_expr(a) for a in e.args]

        def mul(t: int, i: int, s: int) -> int:
            out = 1
            for f in fs:
                out *= f(t, i, s)
            return out
        return mul
    if isinstance(e, sp.Mod):
        fa, fb = compile_expr(e.args[0]), compile_expr(e.args[1])
        return lambda t, i, s: fa(t, i, s) % fb(t, i, s)
    if isinstance(e, sp.floor):
        num, den = _floor_parts(e)
        fn = compile_expr(num)
        return lambda t, i, s: fn(t, i, s) // den
    if isinstance(e, BitAnd):
        fa, fb = compile_expr(e.args[0]), compile_expr(e.args[1])
        return lambda t, i, s: fa(t, i, s) & fb(t, i, s)
    if isinstance(e, BitOr):
        fa, fb = compile_expr(e.args[0]), compile_expr(e.args[1])
        return lambda t, i, s: fa(t, i, s) | fb(t, i, s)
    if isinstance(e, BitXor):
        fa, fb = compile_expr(e.args[0]), compile_expr(e.args[1])
        return lambda t, i, s: fa(t, i, s) ^ fb(t, i, s)
    if isinstance(e, sp.Piecewise):
        pairs = [(compile_expr(ex), compile_pred(c)) for ex, c in e.args]

        def pw(t: int, i: int, s: int) -> int:
            for f, p in pairs:
                if p(t, i, s):
                    return f(t, i, s)
            return 0  # undefined here; ``definedness`` says so (Z3 and numpy also give 0)
        return pw
    if isinstance(e, sp.Pow) and e.args[1].is_Integer and int(e.args[1]) >= 0:
        fb = compile_expr(e.args[0])
        k = int(e.args[1])
        return lambda t, i, s: fb(t, i, s) ** k
    raise ValueError(f"cannot compile {type(e).__name__}: {e}")


@lru_cache(maxsize=4096)
def _floor_parts(e: sp.floor) -> tuple[Any, int]:
    """``floor(x / d)`` -> (x, d) with d a positive integer (``together`` is slow, and the
    maps, their Z3 encoding and the relations ask for the same floors again and again)."""
    arg = e.args[0]
    num, den = sp.fraction(sp.together(arg))
    if not den.is_Integer or int(den) <= 0:
        raise ValueError(f"floor of a non-integer quotient {arg}")
    return num, int(den)


def compile_pred(c: Any) -> Pred:
    """A closure for a SymPy boolean over (lane, i, selector)."""
    if c is sp.true or c is True:
        return lambda t, i, s: True
    if c is sp.false or c is False:
        return lambda t, i, s: False
    if isinstance(c, sp.And):
        ps = [compile_pred(a) for a in c.args]
        return lambda t, i, s: all(p(t, i, s) for p in ps)
    if isinstance(c, sp.Or):
        ps = [compile_pred(a) for a in c.args]
        return lambda t, i, s: any(p(t, i, s) for p in ps)
    if isinstance(c, sp.Not):
        p = compile_pred(c.args[0])
        return lambda t, i, s: not p(t, i, s)
    if isinstance(c, sp.core.relational.Relational):
        fa, fb = compile_expr(c.lhs), compile_expr(c.rhs)
        op = c.rel_op
        if op == "<":
            return lambda t, i, s: fa(t, i, s) < fb(t, i, s)
        if op == "<=":
            return lambda t, i, s: fa(t, i, s) <= fb(t, i, s)
        if op == ">":
            return lambda t, i, s: fa(t, i, s) > fb(t, i, s)
        if op == ">=":
            return lambda t, i, s: fa(t, i, s) >= fb(t, i, s)
        if op == "==":
            return lambda t, i, s: fa(t, i, s) == fb(t, i, s)
        if op == "!=":
            return lambda t, i, s: fa(t, i, s) != fb(t, i, s)
    raise ValueError(f"cannot compile condition {type(c).__name__}: {c}")


def definedness(e: Any) -> Any:
    """A SymPy boolean: where every Piecewise nested in ``e`` has an applicable case.

    A helper such as ``firstcol`` with cases for ``i < 4`` and ``i >= 4`` is substituted into
    ``lastcol = firstcol + 3`` as a Piecewise; where none of its cases applies, ``lastcol`` has
    no value.  Both evaluators give 0 there and use this condition to know it.
    """
    if not isinstance(e, sp.Basic) or e.is_Atom:
        return sp.true
    if isinstance(e, sp.Piecewise):
        alts = []
        before: list[Any] = []
        for ex, c in e.args:
            alts.append(sp.And(*[sp.Not(b) for b in before], c, definedness(ex)))
            before.append(c)
        conds = [definedness(c) for _ex, c in e.args]
        return sp.And(sp.Or(*alts), *conds)
    parts = []
    for a in e.args:
        if isinstance(a, sp.Basic):
            d = definedness(a)
            if d is not sp.true:
                parts.append(d)
    return sp.And(*parts) if parts else sp.true


# ---- intervals --------------------------------------------------------------------------------

Box = dict[sp.Symbol, tuple[int, int]]
# every lane, element index and selector, whatever the layout: none is negative
_NONNEGATIVE: Box = {LANE: (0, 1 << 20), I: (0, 1 << 20), SEL: (0, 1 << 20)}


def bounds(e: Any, box: Box, memo: dict[Any, tuple[int, int]] | None = None) \
        -> tuple[int, int]:
    """A sound interval [lo, hi] containing every value of ``e`` over ``box``; ``memo``
    (for one box) keeps each subexpression's, so a walk that asks every node of a tree
    (``fits_int64``) works each out once."""
    if memo is None:
        return _bounds(e, box, None)
    hit = memo.get(e)
    if hit is None:
        hit = memo[e] = _bounds(e, box, memo)
    return hit


def _bounds(e: Any, box: Box, memo: dict[Any, tuple[int, int]] | None) -> tuple[int, int]:
    if e.is_Integer:
        v = int(e)
        return v, v
    if isinstance(e, sp.Symbol):
        return box.get(e, (0, 0))
    if isinstance(e, sp.Add):
        lo = hi = 0
        for a in e.args:
            a_lo, a_hi = bounds(a, box, memo)
            lo, hi = lo + a_lo, hi + a_hi
        return lo, hi
    if isinstance(e, sp.Mul):
        lo, hi = 1, 1
        for a in e.args:
            a_lo, a_hi = bounds(a, box, memo)
            cands = (lo * a_lo, lo * a_hi, hi * a_lo, hi * a_hi)
            lo, hi = min(cands), max(cands)
        return lo, hi
    if isinstance(e, sp.Mod):
        b_lo, b_hi = bounds(e.args[1], box, memo)
        m = max(abs(b_lo), abs(b_hi))
        a_lo, a_hi = bounds(e.args[0], box, memo)
        if b_lo > 0 and a_lo >= 0 and a_hi < b_lo:
            return a_lo, a_hi
        if b_lo > 0:
            return 0, max(0, m - 1)
        return -m, m
    if isinstance(e, sp.floor):
        num, den = _floor_parts(e)
        n_lo, n_hi = bounds(num, box, memo)
        return n_lo // den, n_hi // den
    if isinstance(e, BitAnd):
        (a_lo, a_hi), (b_lo, b_hi) = bounds(e.args[0], box, memo), bounds(e.args[1], box, memo)
        if a_lo >= 0 and b_lo >= 0:
            return 0, min(a_hi, b_hi)
        if a_lo >= 0:
            return 0, a_hi
        if b_lo >= 0:
            return 0, b_hi
        return _pow2_box(a_lo, a_hi, b_lo, b_hi)
    if isinstance(e, (BitOr, BitXor)):
        (a_lo, a_hi), (b_lo, b_hi) = bounds(e.args[0], box, memo), bounds(e.args[1], box, memo)
        if a_lo >= 0 and b_lo >= 0:
            top = max(a_hi, b_hi)
            return 0, (1 << top.bit_length()) - 1 if top else 0
        return _pow2_box(a_lo, a_hi, b_lo, b_hi)
    if isinstance(e, sp.Piecewise):
        parts = [bounds(ex, box, memo) for ex, _c in e.args]
        return min(p[0] for p in parts), max(p[1] for p in parts)
    if isinstance(e, sp.Pow) and e.args[1].is_Integer:
        b_lo, b_hi = bounds(e.args[0], box, memo)
        k = int(e.args[1])
        powers = (b_lo ** k, b_hi ** k)
        low = 0 if (k % 2 == 0 and b_lo <= 0 <= b_hi) else min(powers)
        return low, max(powers)
    raise ValueError(f"no bounds for {type(e).__name__}")


def _pow2_box(*vals: int) -> tuple[int, int]:
    m = max(abs(v) for v in vals)
    top = 1 << (m.bit_length() + 1)
    return -top, top


def width_for(lo: int, hi: int) -> int:
    """Bits of a signed bit-vector that holds every value in [lo, hi], with headroom."""
    m = max(abs(lo), abs(hi), 1)
    return m.bit_length() + 2


def show_expr(e: Any) -> str:
    """Print an expression in the spec's operator syntax (for reports and exports)."""
    return _show(e, 0)


_PREC = {"|": 1, "^": 2, "&": 3, "shift": 4, "+": 5, "*": 6, "atom": 9}


def _wrap(s: str, inner: int, outer: int) -> str:
    return f"({s})" if inner < outer else s


def _show(e: Any, outer: int) -> str:
    if e.is_Integer:
        return str(int(e)) if int(e) >= 0 or outer <= _PREC["+"] else f"({int(e)})"
    if isinstance(e, sp.Symbol):
        return {"lane": "%laneid", "i": "i", "selector": "selector"}.get(e.name, e.name)
    if isinstance(e, sp.Add):
        terms = sorted(e.args, key=lambda a: (a.is_Integer, sp.default_sort_key(a)))
        out = _show(terms[0], _PREC["+"])
        for a in terms[1:]:
            if a.could_extract_minus_sign():
                out += " - " + _show(-a, _PREC["+"] + 1)
            else:
                out += " + " + _show(a, _PREC["+"])
        return _wrap(out, _PREC["+"], outer)
    if isinstance(e, sp.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            return _wrap("-" + _show(rest, _PREC["*"] + 1), _PREC["*"], outer)
        # a right operand of equal precedence needs parentheses: 4 * (%laneid % 4)
        parts = [_show(a, _PREC["*"] + (k > 0)) for k, a in enumerate(e.args)]
        return _wrap(" * ".join(parts), _PREC["*"], outer)
    if isinstance(e, sp.Mod):
        s = f"{_show(e.args[0], _PREC['*'])} % {_show(e.args[1], _PREC['*'] + 1)}"
        return _wrap(s, _PREC["*"], outer)
    if isinstance(e, sp.floor):
        num, den = _floor_parts(e)
        if den & (den - 1) == 0:
            s = f"{_show(num, _PREC['shift'])} >> {den.bit_length() - 1}"
            return _wrap(s, _PREC["shift"], outer)
        return _wrap(f"{_show(num, _PREC['*'])} / {den}", _PREC["*"], outer)
    for cls, op in ((BitAnd, "&"), (BitOr, "|"), (BitXor, "^")):
        if isinstance(e, cls):
            s = f"{_show(e.args[0], _PREC[op])} {op} {_show(e.args[1], _PREC[op] + 1)}"
            if op == "&" and e.args[1].is_Integer:
                s = f"{_show(e.args[0], _PREC[op])} & {hex(int(e.args[1]))}"
            return _wrap(s, _PREC[op], outer)
    if isinstance(e, sp.Piecewise):  # a helper with cases, inside a larger expression
        s = "; ".join(f"{_show(x, 0)} if {show_cond(c)}" for x, c in e.args)
        return _wrap(s, 0, outer)
    return str(e)


def show_cond(c: Any) -> str:
    if c is sp.true or c is True:
        return "always"
    if isinstance(c, sp.And):
        return " && ".join(show_cond(a) for a in c.args)
    if isinstance(c, sp.Or):
        return " || ".join(f"({show_cond(a)})" if isinstance(a, sp.And) else show_cond(a)
                           for a in c.args)
    if isinstance(c, sp.Not):
        return f"!({show_cond(c.args[0])})"
    if isinstance(c, sp.core.relational.Relational):
        op = "==" if c.rel_op == "==" else c.rel_op
        return f"{_show(c.lhs, 0)} {op} {_show(c.rhs, 0)}"
    return str(c)


# ---- vectorised evaluation (the enumeration cross-check over a whole domain at once) -----------

ArrFn = Callable[[Any, Any, Any], Any]

_SAFE = 1 << 62


def fits_int64(exprs: list[Any], box: Box) -> bool:
    """Whether every intermediate value stays far from int64 overflow over ``box``."""
    memo: dict[Any, tuple[int, int]] = {}
    for e in exprs:
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, sp.core.relational.Relational):
                stack.extend((x.lhs, x.rhs))
                continue
            if isinstance(x, (sp.And, sp.Or, sp.Not)):
                stack.extend(x.args)
                continue
            if x is sp.true or x is sp.false or isinstance(x, bool):
                continue
            try:
                lo, hi = bounds(x, box, memo)
            except (ValueError, TypeError):
                return False
            if abs(lo) >= _SAFE or abs(hi) >= _SAFE:
                return False
            if isinstance(x, sp.floor):
                num, den = _floor_parts(x)
                if den >= _SAFE:  # x >> 64: numpy cannot even hold the divisor
                    return False
                stack.append(num)
            elif isinstance(x, sp.Piecewise):
                for ex, c in x.args:
                    stack.extend((ex, c))
            elif isinstance(x, sp.Basic):
                stack.extend(a for a in x.args if isinstance(a, sp.Basic)
                             and not (a.is_Rational and not a.is_Integer))
    return True


def compile_array(e: Any, np: Any) -> ArrFn:
    """Like ``compile_expr`` but over numpy int64 arrays (callers check ``fits_int64``)."""
    if e.is_Integer:
        v = int(e)
        return lambda t, i, s: np.full(t.shape, v, dtype=np.int64)
    if isinstance(e, sp.Symbol):
        return _var(e)  # the same selection, whether t, i, s are ints or arrays
    if isinstance(e, sp.Add):
        fs = [compile_array(a, np) for a in e.args]

        def add(t: Any, i: Any, s: Any) -> Any:
            out = fs[0](t, i, s).copy()
            for f in fs[1:]:
                out += f(t, i, s)
            return out
        return add
    if isinstance(e, sp.Mul):
        if any(a.is_Rational and not a.is_Integer for a in e.args):
            raise ValueError(f"non-integer product {e}")
        fs = [compile_array(a, np) for a in e.args]

        def mul(t: Any, i: Any, s: Any) -> Any:
            out = fs[0](t, i, s).copy()
            for f in fs[1:]:
                out *= f(t, i, s)
            return out
        return mul
    if isinstance(e, sp.Mod):
        fa, fb = compile_array(e.args[0], np), compile_array(e.args[1], np)
        return lambda t, i, s: np.mod(fa(t, i, s), fb(t, i, s))
    if isinstance(e, sp.floor):
        num, den = _floor_parts(e)
        fn = compile_array(num, np)
        return lambda t, i, s: np.floor_divide(fn(t, i, s), den)
    for cls, op in ((BitAnd, "bitwise_and"), (BitOr, "bitwise_or"), (BitXor, "bitwise_xor")):
        if isinstance(e, cls):
            fa, fb = compile_array(e.args[0], np), compile_array(e.args[1], np)
            ufunc = getattr(np, op)

            def bitwise(t: Any, i: Any, s: Any, ufunc: Any = ufunc, fa: ArrFn = fa,
                        fb: ArrFn = fb) -> Any:
                return ufunc(fa(t, i, s), fb(t, i, s))
            return bitwise
    if isinstance(e, sp.Piecewise):
        pairs = [(compile_array(ex, np), compile_array_pred(c, np)) for ex, c in e.args]

        def pw(t: Any, i: Any, s: Any) -> Any:
            out = np.zeros(t.shape, dtype=np.int64)
            done = np.zeros(t.shape, dtype=bool)
            for f, p in pairs:
                hit = p(t, i, s) & ~done
                out = np.where(hit, f(t, i, s), out)
                done |= hit
            return out
        return pw
    if isinstance(e, sp.Pow) and e.args[1].is_Integer and int(e.args[1]) >= 0:
        fb = compile_array(e.args[0], np)
        k = int(e.args[1])
        return lambda t, i, s: fb(t, i, s) ** k
    raise ValueError(f"cannot compile {type(e).__name__}: {e}")


def compile_array_pred(c: Any, np: Any) -> ArrFn:
    if c is sp.true or c is True:
        return lambda t, i, s: np.ones(t.shape, dtype=bool)
    if c is sp.false or c is False:
        return lambda t, i, s: np.zeros(t.shape, dtype=bool)
    if isinstance(c, (sp.And, sp.Or)):
        ps = [compile_array_pred(a, np) for a in c.args]
        both = isinstance(c, sp.And)

        def comb(t: Any, i: Any, s: Any) -> Any:
            out = ps[0](t, i, s).copy()
            for p in ps[1:]:
                if both:
                    out &= p(t, i, s)
                else:
                    out |= p(t, i, s)
            return out
        return comb
    if isinstance(c, sp.Not):
        p = compile_array_pred(c.args[0], np)
        return lambda t, i, s: ~p(t, i, s)
    if isinstance(c, sp.core.relational.Relational):
        fa, fb = compile_array(c.lhs, np), compile_array(c.rhs, np)
        op = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
              "==": np.equal, "!=": np.not_equal}[c.rel_op]
        return lambda t, i, s: op(fa(t, i, s), fb(t, i, s))
    raise ValueError(f"cannot compile condition {type(c).__name__}: {c}")
