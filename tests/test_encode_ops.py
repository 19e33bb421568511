"""encode.ops makes the very terms z3's operators make (so the queries asked are unchanged),
and the terms it makes stay alive and correct over many queries (reference counts)."""

from __future__ import annotations

import sympy as sp
import z3

from formal.model.algebra import LANE, I
from formal.model.cells import map_of
from formal.model.resolve import catalog_model
from formal.prove import encode
from formal.prove.encode import bv_val, mod_const, ops, solve, substituted
from formal.prove.formula import _violations, chunk_spec, combined_violation


def _same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    return bool(a.eq(b)) and a.sexpr() == b.sexpr()


def test_each_op_is_the_operators_term() -> None:
    x, y = z3.BitVecs("x y", 8)
    c = z3.Bool("c")
    pairs = [
        (ops.add(x, y), x + y), (ops.sub(x, y), x - y), (ops.mul(x, y), x * y),
        (ops.smod(x, y), x % y), (ops.sdiv(x, y), x / y), (ops.ashr(x, y), x >> y),
        (ops.band(x, y), x & y), (ops.bor(x, y), x | y), (ops.bxor(x, y), x ^ y),
        (ops.lt(x, y), x < y), (ops.le(x, y), x <= y), (ops.gt(x, y), x > y),
        (ops.ge(x, y), x >= y), (ops.eq(x, y), x == y), (ops.ne(x, y), x != y),
        (ops.not_(c), z3.Not(c)), (ops.ite(c, x, y), z3.If(c, x, y)),
        (ops.ite(c, c, z3.BoolVal(False)), z3.If(c, c, False)),
        (ops.total([x, y, x], 8), z3.Sum(x, y, x)),
    ]
    for got, want in pairs:
        assert _same(got, want), (got.sexpr(), want.sexpr())
    assert isinstance(ops.ite(c, c, c), z3.BoolRef)
    assert isinstance(ops.ite(c, x, y), z3.BitVecRef)


def test_rel_mirrors_a_number_on_the_right_as_python_does() -> None:
    t = z3.BitVec("t", 8)
    n = bv_val(32, 8)
    for op, want in (("<", t < n), ("<=", t <= n), (">", t > n), (">=", t >= n),
                     ("==", t == n), ("!=", t != n)):
        got = ops.rel(op, t, n)
        assert _same(got, want), (op, got.sexpr(), want.sexpr())
    assert ops.rel("<", t, n).sexpr() == "(bvsgt #x20 t)"  # the number's own comparison
    assert ops.rel("<", n, t).sexpr() == "(bvslt #x20 t)"  # a number on the left: as written


def test_bv_val_is_made_once_and_is_the_value() -> None:
    assert bv_val(5, 7) is bv_val(5, 7)
    assert _same(bv_val(5, 7), z3.BitVecVal(5, 7))
    assert bv_val(-1, 4).as_long() == 15


def test_substituted_is_z3_substitute() -> None:
    x, y, z = z3.BitVecs("x y z", 8)
    terms = [x + y, z3.If(x < y, x, y), x == y, bv_val(3, 8)]
    pairs = [(x, z), (y, bv_val(1, 8))]
    for got, want in zip(substituted(terms, pairs), [z3.substitute(t, *pairs) for t in terms]):
        assert _same(got, want)


def test_the_catalogs_queries_are_the_operators_terms() -> None:
    """Forty catalog maps: the cases and in-range violations built by ops equal those built
    through z3's operators (as the former code wrote them), term for term."""
    model = catalog_model()
    seen = 0
    for lay in model.layouts:
        m = map_of(lay) if not lay.incomplete else None
        if m is None or seen >= 40:
            continue
        spec = chunk_spec(lay)[0] if lay.sparse_a else None
        encode.SHARED_TERMS.clear()
        got = combined_violation(m, spec)
        encode.SHARED_TERMS.clear()
        sym = encode.Sym(m)
        want = _reference_violation(sym, spec)
        assert _same(got, want), lay.id
        seen += 1
    assert seen == 40


def _reference_violation(sym: encode.Sym, chunks: object) -> z3.ExprRef:
    """The map's violations, its cases and in-range ones compared with z3's operators'."""
    from formal.prove.witness import output_ranges
    m = sym.m
    viol = _violations(sym, chunks)  # type: ignore[arg-type]
    viol.pop("_second")
    ok = [z3.And(v >= sym.val(lo), v < sym.val(hi))
          for v, (lo, hi) in zip(sym.vals, output_ranges(m))]
    if m.lay.sparse_a:
        ok.append(sym.vals[1] <= sym.vals[2])
    assert _same(viol["in-range"], z3.And(sym.dom, sym.defined, z3.Not(z3.And(*ok))))
    for k in range(len(m.formulas)):
        if f"cases:{k}" in viol:
            count = z3.Sum(*[z3.If(c, sym.val(1), sym.val(0)) for c in sym.conds[k]])
            assert _same(viol[f"cases:{k}"], z3.And(sym.dom, count != 1))
    return z3.Or(*viol.values())


def test_terms_stay_alive_over_many_queries() -> None:
    """Reference counts: terms made by ops, kept in the shared memo and dropped with it, give
    the same answers query after query (a freed term would crash or answer wrongly)."""
    for round_ in range(300):
        if round_ % 50 == 0:
            encode.SHARED_TERMS.clear()
            encode._VALS.clear()
        w = 8 + round_ % 3
        s, t, i = z3.BitVecs("s t i", w)
        enc = encode._Enc(w, s, t, i)
        row = enc.expr(sp.floor(LANE / 4) + 8 * sp.Mod(I, 2))
        col = enc.expr(2 * sp.Mod(LANE, 4) + sp.floor(I / 2))
        # two (lane, i) on one cell: lane 0 i 0 vs none other -> unsat within the 16 x 8 tile
        t2, i2 = z3.BitVecs(f"t2_{round_} i2_{round_}", w)
        row2, col2 = substituted([row, col], [(t, t2), (i, i2)])
        dom = z3.And(t >= 0, t < 32, i >= 0, i < 4, t2 >= 0, t2 < 32, i2 >= 0, i2 < 4)
        query = z3.And(dom, z3.Or(t != t2, i != i2), ops.eq(row, row2), ops.eq(col, col2))
        assert solve("injective", query, 10_000)[0] == "unsat"
        hole = z3.And(dom, ops.eq(row, bv_val(3, w)), ops.eq(col, bv_val(5, w)))
        r, model = solve("hit", hole, 10_000)
        assert r == "sat"
        assert (model.evaluate(t).as_long(), model.evaluate(i).as_long()) == (14, 2)


def test_the_address_solver_answers_and_gives_models() -> None:
    """address_solver (products by powers of two as shifts) decides as Z3's default solver
    does, and a sat answer's model is the point (through the tactics' model converters)."""
    from formal.prove.encode import address_solver
    x = z3.BitVec("x", 32)
    s = address_solver()
    s.add(x * 8 + 4 == 28, z3.ULT(x, 16))
    assert s.check() == z3.sat and s.model()[x].as_long() == 3
    s = address_solver()
    s.add(z3.ULT(x, 1 << 20), (x * 16) / 16 != x)  # no wrap below 2**28: unsat
    assert s.check() == z3.unsat
    s = address_solver()
    s.add(z3.ULT(x, 1 << 30), z3.UDiv(x * 16, 16) != x)  # wraps from 2**28 on
    assert s.check() == z3.sat and s.model()[x].as_long() >= 1 << 28


def test_both_is_sympy_and_of_two_definedness_conditions() -> None:
    """``encode._both`` gives what ``sp.And`` gives, the same expression, for the
    definedness conditions of every case of the catalog's maps and for hand-made ones
    (nested cases: neither side ``true``; ``false``)."""
    from formal.model.algebra import definedness
    from formal.prove.encode import _both
    firstcol = sp.Piecewise((LANE % 4, I < 4), (LANE % 4 + 8, I >= 4))
    made = [sp.true, sp.false, definedness(firstcol + 3), definedness(sp.Piecewise((I, LANE < 8)))]
    conds = list(made)
    for lay in catalog_model(False).layouts[:120]:
        m = map_of(lay)
        if m is not None:
            conds += [definedness(x) for f in m.formulas for c in f.cases
                      for x in (c.value, c.cond)]
    assert any(c is not sp.true for c in conds)
    for a in made:
        for b in conds:
            assert _both(a, b) == sp.And(a, b) and _both(b, a) == sp.And(b, a)


def test_the_names_of_a_box_are_its_symbols_printed() -> None:
    from formal.model.algebra import SEL
    from formal.prove.encode import _name
    for k in (LANE, I, SEL, sp.Symbol("x_1"), sp.Dummy("d")):
        assert _name(k) == str(k)


def test_unsigned_division_of_an_address_is_z3s_term() -> None:
    """``smem_descriptor._udiv`` / ``_urem``: the terms ``z3.UDiv`` / ``z3.URem`` make (a
    number made a term of the other's width), for terms of the main context and of another,
    and Python's ``//`` / ``%`` for numbers."""
    from formal.prove.smem_descriptor import _udiv, _urem
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 16)
    other = z3.BitVec("x", 32, z3.Context())
    for a in (x, y, x + 3, z3.Extract(15, 0, x), other):
        for b in (1, 16, 128, 5, 0, -1, 1 << 40):
            assert _udiv(a, b).eq(z3.UDiv(a, b)) and _urem(a, b).eq(z3.URem(a, b))
            assert type(_udiv(a, b)) is type(z3.UDiv(a, b))
    assert (_udiv(37, 8), _urem(37, 8)) == (4, 5)


def test_a_modulo_by_a_power_of_two_is_its_low_bits_for_every_value() -> None:
    """``mod_const``: for d = 2**k below the sign bit, the AND of the low bits, equal to
    Z3's floor modulo (bvsmod) at every value of the width, negative ones too; any other d
    (3, 6, the sign bit itself, which reads as negative) is bvsmod's own term."""
    for w in (6, 8, 11):
        x = z3.BitVec("x", w)
        for k in range(w - 1):
            d = 1 << k
            got = mod_const(x, d, w)
            assert got.decl().kind() == z3.Z3_OP_BAND
            r, model = solve("mod", got != x % bv_val(d, w), 10_000)
            assert r == "unsat", (w, d, model)
        for d in (3, 6, 1 << (w - 1)):
            assert _same(mod_const(x, d, w), x % bv_val(d, w))
    x8 = z3.BitVec("x", 8)
    at = {x8: bv_val(-3 & 0xFF, 8)}
    assert z3.simplify(z3.substitute(mod_const(x8, 4, 8), *at.items())).as_long() == 1
    assert z3.simplify(z3.substitute(mod_const(x8, 8, 8), *at.items())).as_long() == 5


def test_a_divisor_widens_the_encoding_to_hold_itself() -> None:
    """``floor(e / d)`` is encoded with d itself as a bit-vector: the magnitude counts d
    (10**6 here, where e stays below 40), and a relation whose arrangement divides by it is
    then decided alike by Z3 and the enumeration (tests/test_composes_steps, four symbols)."""
    box = {LANE: (0, 31), I: (0, 3)}
    assert encode.magnitude([sp.floor((LANE + I) / 10**6)], box, 0) == 10**6
    # SymPy writes floor(i/4 + lane/4): lane's 31 is the largest bound, 4 lies below it
    assert encode.magnitude([sp.floor((LANE + I) / 4)], box, 0) == 31
