"""The data-path statements as Z3 is asked them: each a formula over N (one of the mma's
values) and a cell, satisfiable exactly where its obligation fails (split out of
``formal.prove.datapath``, which decides each with the enumeration).

Layout E (M = 64, .ws) at N in {64, 128, 256}: its first block holds D[0-31][0 to N/2-1] in
lanes 0-31.  ``injective`` asks for N and a cell (row, col) of the 64 x N tile lying in two
blocks: ``Or(N == 64, N == 128, N == 256)`` and ``If(0 <= row <= 31 and 0 <= col <= N/2 - 1,
1, 0) + ... >= 2``, each bound ``a * N + c`` the integer term ``(a.numerator * N) /
a.denominator + c``.  Unsatisfiable: no cell lies in two blocks at any N.  Move the third
block's rows to 32-63 and row 32, column N/2 satisfies it.

Every term is made by one call of Z3's C API (``ints``): the very term z3's operators make
(``a < 0``, ``z3.Sum``, ``z3.If`` ...), without their coercion of each argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

import z3

from ..base.matrix_variants import TMEM_COLUMN_COUNT, TMEM_LANE_COUNT, TMEM_SUBPARTITION
from ..base.memo import keep_bounded
from ..model.datapath import Bound, DataPath, TmemBlock
from .verdicts import InternalError


def _alignments(dp: DataPath) -> tuple[int, ...]:
    """The lane shifts a data path is read at: 0, and half a subpartition where it holds
    half the lanes."""
    return (0, TMEM_SUBPARTITION // 2) if dp.half() else (0,)


class ints:
    """Integer terms by one call of Z3's C API each, the very terms z3's operators make
    (``ints.lt(a, ints.val(0))`` is ``a < 0``, ``ints.sum(x, y)`` is ``z3.Sum(x, y)``,
    ``ints.ite(c, a, b)`` is ``z3.If(c, a, b)``), as ``encode.ops`` for bit-vectors: no
    argument's sort looked up or Python number coerced, which was most of the time taken to
    state the catalog's 42 statements (CPU: about 37 -> 7 ms; tests/test_datapath.py holds
    each statement the very term the operators make)."""

    _VALS: dict[Any, Any] = {}  # numbers and truth values: made once a process

    @staticmethod
    def val(v: int) -> Any:
        """``z3.IntVal(v)``, made once a process."""
        hit = ints._VALS.get(v)
        if hit is None:
            hit = keep_bounded(ints._VALS, v, z3.IntVal(v), 4096)
        return hit

    @staticmethod
    def truth(b: bool) -> Any:
        """``z3.BoolVal(b)``."""
        key = ("bool", bool(b))
        hit = ints._VALS.get(key)
        if hit is None:
            hit = keep_bounded(ints._VALS, key, z3.BoolVal(bool(b)), 4096)
        return hit

    @staticmethod
    def _arith(a: Any) -> Any:
        return z3.ArithRef(a, z3.main_ctx())

    @staticmethod
    def _bool(a: Any) -> Any:
        return z3.BoolRef(a, z3.main_ctx())

    @staticmethod
    def _array(xs: Sequence[Any]) -> Any:
        arr = (z3.Ast * len(xs))()
        for k, x in enumerate(xs):
            arr[k] = x.ast
        return arr

    @staticmethod
    def _many(make: Any, xs: Sequence[Any]) -> Any:
        return make(z3.main_ctx().ref(), len(xs), ints._array(xs))

    @staticmethod
    def _rel(make: Any, a: Any, b: Any) -> Any:
        """``make``'s comparison of two terms (``Z3_mk_lt`` ...: ``a < b`` ...)."""
        return ints._bool(make(z3.main_ctx().ref(), a.ast, b.ast))

    @staticmethod
    def lt(a: Any, b: Any) -> Any:
        return ints._rel(z3.Z3_mk_lt, a, b)

    @staticmethod
    def le(a: Any, b: Any) -> Any:
        return ints._rel(z3.Z3_mk_le, a, b)

    @staticmethod
    def gt(a: Any, b: Any) -> Any:
        return ints._rel(z3.Z3_mk_gt, a, b)

    @staticmethod
    def ge(a: Any, b: Any) -> Any:
        return ints._rel(z3.Z3_mk_ge, a, b)

    @staticmethod
    def eq(a: Any, b: Any) -> Any:
        return ints._rel(z3.Z3_mk_eq, a, b)

    @staticmethod
    def ne(a: Any, b: Any) -> Any:
        """``a != b``: Z3's ``distinct`` of the two."""
        return ints._bool(ints._many(z3.Z3_mk_distinct, (a, b)))

    @staticmethod
    def sum(*xs: Any) -> Any:
        """``z3.Sum(*xs)``, and ``a + b`` for two."""
        return ints._arith(ints._many(z3.Z3_mk_add, xs))

    @staticmethod
    def sub(a: Any, b: Any) -> Any:
        return ints._arith(ints._many(z3.Z3_mk_sub, (a, b)))

    @staticmethod
    def mul(a: Any, b: Any) -> Any:
        return ints._arith(ints._many(z3.Z3_mk_mul, (a, b)))

    @staticmethod
    def div(a: Any, b: Any) -> Any:
        """``a / b`` of integer terms: Z3's ``div``."""
        return ints._arith(z3.Z3_mk_div(z3.main_ctx().ref(), a.ast, b.ast))

    @staticmethod
    def all(*xs: Any) -> Any:
        """``z3.And(*xs)``."""
        return ints._bool(ints._many(z3.Z3_mk_and, xs))

    @staticmethod
    def any(*xs: Any) -> Any:
        """``z3.Or(*xs)``."""
        return ints._bool(ints._many(z3.Z3_mk_or, xs))

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        """``z3.If(c, a, b)``."""
        return ints._arith(z3.Z3_mk_ite(z3.main_ctx().ref(), c.ast, a.ast, b.ast))


_i = ints


def _z(b: Bound, n: Any) -> Any:
    return _z_of_n(b) if n is _n() else (b[0].numerator * n) / b[0].denominator + b[1]


@lru_cache(maxsize=1)
def _n() -> Any:
    """N, the one Z3 constant every statement's N is."""
    return z3.Int("N")


@lru_cache(maxsize=4096)
def _z_of_n(b: Bound) -> Any:
    """A bound ``a * N + c`` over N as a Z3 term, made once a process (the statements of a
    data path read each bound several times): ``(a.numerator * N) / a.denominator + c``."""
    return _i.sum(_i.div(_i.mul(_i.val(b[0].numerator), _n()), _i.val(b[0].denominator)),
                  _i.val(b[1]))


def _ns(dp: DataPath) -> tuple[Any, Any]:
    """N, and that it is one of the mma's values."""
    return _ns_of(tuple(dp.ns))


@lru_cache(maxsize=256)
def _ns_of(ns: tuple[int, ...]) -> tuple[Any, Any]:
    """``_ns`` of these values, made once a process (each of a data path's six statements
    starts with it, and data paths share their Ns)."""
    n = _n()
    return n, _i.any(*[_i.eq(n, _i.val(v)) for v in ns])


def _sat(s: Any) -> bool:
    r = s.check()
    if r == z3.unknown:
        raise InternalError("Z3 gave no answer on a linear data-path statement")
    return bool(r == z3.sat)


def _holds(statement: Any) -> bool:  # is the violation satisfiable?
    s = z3.Solver()
    s.add(statement)
    return _sat(s)


def _shape_statement(dp: DataPath) -> Any:
    n, ns = _ns(dp)
    return _i.all(ns, _i.any(*[_i.any(_i.ne(_i.sub(_z(b.tcols[1], n), _z(b.tcols[0], n)),
                                            _i.sub(_z(b.dcols[1], n), _z(b.dcols[0], n))),
                                      _i.truth(b.lanes[1] - b.lanes[0]
                                               != b.rows[1] - b.rows[0]))
                               for b in dp.blocks]))


def _range_statement(dp: DataPath) -> Any:
    n, ns = _ns(dp)
    top = max(_alignments(dp))
    bad = []
    for b in dp.blocks:
        t0, t1, d0, d1 = (_z(x, n) for x in (*b.tcols, *b.dcols))
        bad.append(_i.any(_i.lt(t0, _i.val(0)), _i.ge(t1, _i.val(TMEM_COLUMN_COUNT)),
                          _i.gt(t0, t1), _i.lt(d0, _i.val(0)), _i.ge(d1, n), _i.gt(d0, d1),
                          _i.truth(b.lanes[0] < 0 or b.lanes[1] + top >= TMEM_LANE_COUNT
                                   or b.rows[0] < 0 or b.rows[1] >= dp.m
                                   or not 0 <= b.cta < dp.cta_group)))
    return _i.all(ns, _i.any(*bad))


def _inside(b: TmemBlock, r: Any, c: Any, n: Any) -> Any:
    return _i.all(_i.ge(r, _i.val(b.rows[0])), _i.le(r, _i.val(b.rows[1])),
                  _i.ge(c, _z(b.dcols[0], n)), _i.le(c, _z(b.dcols[1], n)))


def _cover_statement(dp: DataPath, twice: bool) -> Any:
    """Some cell of D is in two blocks (``twice``), or in none."""
    n, ns = _ns(dp)
    r, c = z3.Ints("row col")
    one, zero = _i.val(1), _i.val(0)
    count = _i.sum(*[_i.ite(_inside(b, r, c, n), one, zero) for b in dp.blocks])
    return _i.all(ns, _i.ge(r, zero), _i.lt(r, _i.val(dp.m)), _i.ge(c, zero), _i.lt(c, n),
                  _i.ge(count, _i.val(2)) if twice else _i.eq(count, zero))


def _tmem_statement(dp: DataPath) -> Any:
    n, ns = _ns(dp)
    cta, lane, col = z3.Ints("cta lane tcol")
    one, zero = _i.val(1), _i.val(0)
    held = [_i.ite(_i.all(_i.eq(cta, _i.val(b.cta)), _i.ge(lane, _i.val(b.lanes[0])),
                          _i.le(lane, _i.val(b.lanes[1])), _i.ge(col, _z(b.tcols[0], n)),
                          _i.le(col, _z(b.tcols[1], n))), one, zero)
            for b in dp.blocks]
    return _i.all(ns, _i.ge(_i.sum(*held), _i.val(2)))


def _quarter_statement(dp: DataPath) -> Any:
    # no N in it: the lanes and the warp are numbers; Z3 is asked over the alignment
    a = z3.Int("align")
    return _i.all(_i.any(*[_i.eq(a, _i.val(x)) for x in _alignments(dp)]),
                  _i.any(*[_i.any(_i.truth(b.warp < 0), _i.truth(b.warp > 3),
                                  _i.lt(_i.sum(_i.val(b.lanes[0]), a),
                                        _i.val(TMEM_SUBPARTITION * b.warp)),
                                  _i.gt(_i.sum(_i.val(b.lanes[1]), a),
                                        _i.val(TMEM_SUBPARTITION * b.warp
                                               + TMEM_SUBPARTITION - 1)))
                           for b in dp.blocks]))


# Each statement of a data path, as Z3 is asked it: a formula satisfiable exactly where the
# obligation fails.  Every variable is existential, so a disjunction of statements is
# satisfiable exactly when one of them is (a name such as N shared between two is harmless).
STATEMENTS: dict[str, Any] = {
    "block-shape": _shape_statement,
    "in-range": _range_statement,
    "injective": partial(_cover_statement, twice=True),
    "tmem-injective": _tmem_statement,
    "surjective": partial(_cover_statement, twice=False),
    "warp-quarter": _quarter_statement,
}


def linear_solver() -> Any:
    """The solver of a data path's statements asked together: simplify, solve the equations,
    then Z3's SMT core (their arithmetic is linear over the integers, N times a fraction).
    The catalog's seven groups, CPU: 34 -> 18 ms against ``z3.Solver()``, whose choice of
    tactic for the whole formula costs the difference; a model comes back through the
    tactics' model converters.  A group it leaves open is asked statement by statement with
    ``z3.Solver()`` (``_holds``), as ever."""
    return z3.Then("simplify", "solve-eqs", "smt").solver()
