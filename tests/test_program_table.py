"""The catalog's programs evaluated over whole arrays (``program_array``, ``holds_array``,
``program_table``) say exactly what the point-by-point walk (``program_value``, ``_holds``)
says: on every definition of every catalog program at points with negative operands too, and
on hand-made edge cases of C's arithmetic (division and remainder truncating toward zero,
shifts past the word, a division by zero at one point, a value past 2**31)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest

from formal import api, catalog
from formal.model.block_scale import (
    TooWide,
    Undefined,
    _holds,
    holds_array,
    program_array,
    program_table,
    program_value,
)
from formal.parse import syntax as S
from formal.parse.tc_copy import read_tc_copy
from formal.parse.tc_meta import read_tc_meta


def _programs() -> Iterator[tuple[str, S.Program]]:
    mma, tc = api.block_scale_catalog(), api.block_scale_catalog("tcgen05")
    for sec in mma.sections:
        for op in sec.operands:
            yield f"{sec.shape}.{sec.vec}X.{op.operand}", op.program
    for tsec in tc.tc_sections:
        for top in tsec.operands:
            yield f"tc.m{tsec.m}n{tsec.n}.{tsec.form}.{top.operand}", top.program
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    for msec in read_tc_meta(text, "meta.md")[0]:
        yield f"meta.m{msec.m}.{msec.kind}", msec.program
    text = (catalog.CATALOG_DIR / "tensor-copy" / "tcgen05.md").read_text(encoding="utf-8")
    for csec in read_tc_copy(text, "copy.md")[0]:
        yield f"copy.{csec.shape}", csec.program


def _free(e: S.Expr | S.Cond, defs: dict[str, S.Definition], seen: set[str]) -> set[str]:
    """The names ``e`` reads that no definition of its program binds (through definitions)."""
    if isinstance(e, S.Num):
        return set()
    if isinstance(e, S.Special):
        return {"%laneid"}
    if isinstance(e, S.Name):
        d = defs.get(e.name)
        if d is None or d.kind != "expr" or d.cases[0].expr is None:
            return {e.name}
        if e.name in seen:
            return set()
        return _free(d.cases[0].expr, defs, seen | {e.name})
    if isinstance(e, S.Neg):
        return _free(e.operand, defs, seen)
    if isinstance(e, S.BinOp):
        return _free(e.left, defs, seen) | _free(e.right, defs, seen)
    if isinstance(e, S.Compare):
        return set().union(*(_free(x, defs, seen) for x in e.operands))
    if isinstance(e, S.InSet):
        return _free(e.expr, defs, seen)
    return set().union(*(_free(p, defs, seen) for p in e.parts))


PROGRAMS = list(_programs())


def test_every_kind_of_catalog_program_is_here() -> None:
    kinds = {name.split(".")[0] for name, _p in PROGRAMS}
    assert {"meta", "copy", "tc"} <= kinds and len(PROGRAMS) > 100
    assert sum(len(p.definitions) for _n, p in PROGRAMS) > 500


@pytest.mark.parametrize("name,prog", PROGRAMS, ids=[n for n, _p in PROGRAMS])
def test_each_catalog_definition_says_the_same_over_arrays(name: str, prog: S.Program) -> None:
    defs = {d.name: d for d in prog.definitions}
    rng = np.random.default_rng(sum(map(ord, name)))
    checked = 0
    for d in prog.definitions:
        c = d.cases[0]
        tree: S.Expr | S.Cond | None = c.expr if d.kind == "expr" else \
            c.cond if d.kind == "predicate" else None
        if tree is None:
            continue
        free = sorted(_free(tree, defs, {d.name}))
        # every free name at 300 points, negative ones among them, elementwise
        points = {n: rng.integers(-70, 300, size=300, dtype=np.int64) for n in free}
        array = program_array if isinstance(tree, S.Num | S.Name | S.Special | S.Neg |
                                            S.BinOp) else holds_array
        scalar = program_value if array is program_array else _holds
        try:
            got = np.broadcast_to(array(tree, points, defs), (300,))  # type: ignore[arg-type]
        except (Undefined, TooWide):
            continue
        for k in range(300):
            env = {n: int(v[k]) for n, v in points.items()}
            assert scalar(tree, env, defs) == got[k], (name, d.name, env)  # type: ignore[arg-type]
        checked += 1
    assert checked > 0


def _e(text: str) -> S.Expr:
    """A tiny expression reader for the edge cases: ``(a / 4)`` and friends, fully
    parenthesised, names and non-negative numbers."""
    toks = text.replace("(", " ( ").replace(")", " ) ").split()

    def walk(i: int) -> tuple[S.Expr, int]:
        if toks[i] == "(":
            if toks[i + 1] == "-":
                inner, j = walk(i + 2)
                return S.Neg(inner), j + 1
            left, j = walk(i + 1)
            right, k = walk(j + 1)
            return S.BinOp(toks[j], left, right), k + 1
        t = toks[i]
        return (S.Num(int(t)) if t.isdigit() else S.Name(t)), i + 1
    return walk(0)[0]


EDGES = ["(a / b)", "(a % b)", "((- a) / 4)", "((- a) % 4)", "(a / (- b))", "(a >> 3)",
         "((- a) >> 2)", "(a << 5)", "(a << b)", "(a >> b)", "((a & 7) | (b ^ 5))",
         "((a * b) - ((a / 8) * 8))", "(((a / 2) % 3) + ((- b) % (a + 100)))"]


@pytest.mark.parametrize("text", EDGES)
def test_c_arithmetic_is_the_same_over_arrays(text: str) -> None:
    e = _e(text)
    a = np.arange(-40, 41, dtype=np.int64)[:, None]
    b = np.array([-9, -8, -3, -1, 1, 2, 3, 4, 8, 31, 70], dtype=np.int64)[None, :]
    want = [program_value(e, {"a": x, "b": y}, {})
            for x, y in itertools.product(a[:, 0].tolist(), b[0].tolist())]
    try:
        got = np.broadcast_to(program_array(e, {"a": a, "b": b}, {}), (a.size, b.size))
    except TooWide:  # only where a value really leaves int64's exact range
        assert max(abs(v) for v in want) >= 2 ** 31 and text == "(a << b)"
        return
    assert got.reshape(-1).tolist() == want


def test_truncation_not_floor_on_negative_operands() -> None:
    env = {"a": np.array([-7, 7, -7], dtype=np.int64), "b": np.array([2, -2, -2], dtype=np.int64)}
    assert program_array(_e("(a / b)"), env, {}).tolist() == [-3, -3, 3]
    assert program_array(_e("(a % b)"), env, {}).tolist() == [-1, 1, -1]
    assert [program_value(_e("(a % b)"), {"a": x, "b": y}, {}) for x, y in
            [(-7, 2), (7, -2), (-7, -2)]] == [-1, 1, -1]


def test_conditions_and_chains_are_the_same_over_arrays() -> None:
    a = np.arange(-10, 30, dtype=np.int64)
    conds: list[S.Cond] = [
        S.Compare((S.Num(0), _e("(a % 4)"), S.Num(2)), ("<=", "<")),
        S.InSet(_e("(a / 3)"), ((0, 1), (5, 6))),
        S.BoolOp("or", (S.Compare((_e("(a / 8)"), S.Num(1)), ("==",)),
                        S.BoolOp("and", (S.Compare((S.Name("a"), S.Num(-3)), ("<",)),
                                         S.InSet(_e("(- a)"), ((4, 9),)))))),
    ]
    for c in conds:
        got = holds_array(c, {"a": a}, {})
        assert [bool(x) for x in got] == [_holds(c, {"a": int(x)}, {}) for x in a]
    assert int(np.sum(holds_array(conds[2], {"a": a}, {}))) == 8 + 6  # 8..15 and -9..-4


def test_table_falls_back_to_points_where_arrays_cannot_say_the_same() -> None:
    defs = {"wide": S.Definition("wide", "expr", (S.WrittenCase(None, _e("(row << 40)")),),
                                 None)}  # type: ignore[arg-type]
    # 3 << 40 is past 2**31: the array walk stops, the point walk gives Python's integers
    wide = program_table([S.Name("wide")], (("row", 4),), {}, defs)
    assert wide == [(r, r << 40) for r in range(4)]
    # a zero divisor at one point: the point walk raises where the program would
    with pytest.raises(Undefined):
        program_table([_e("(8 / (row - 2))")], (("row", 4),), {}, {})
    got = program_table([_e("((row * 4) + col)"), _e("(sel - col)")],
                        (("row", 2), ("col", 3)), {"sel": 1}, {})
    assert got == [(0, 0, 0, 1), (0, 1, 1, 0), (0, 2, 2, -1),
                   (1, 0, 4, 1), (1, 1, 5, 0), (1, 2, 6, -1)]


def test_every_catalog_layout_is_the_same_walked_point_by_point(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The tcgen05 scale factors' and sparse metadata's layouts built over arrays equal the
    same layouts built with every array walk refused (each point walked by program_value)."""
    import formal.model.block_scale as B
    import formal.model.tc_meta as M
    import formal.model.tc_scale as T

    def build() -> tuple:
        text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(
            encoding="utf-8")
        return (T.tc_scale_layouts(api.block_scale_catalog("tcgen05")),
                M.meta_layouts(read_tc_meta(text, "meta.md")[0]))
    fast = build()

    def refuse(*_a: object) -> None:
        raise TooWide("refused")
    for mod in (B, M, T):
        monkeypatch.setattr(mod, "program_grid", refuse)
    monkeypatch.setattr(T, "_TABLES", {})  # the tables evaluated once a process: none kept
    monkeypatch.setattr(M, "_TABLES", {})
    walked = build()
    assert fast == walked
    assert len(fast[0]) == 82 and len(fast[1]) == 19
    assert all(len(lay.every) == 4 and lay.placed(3) for lay in (*fast[0], *fast[1]))
    # the array each fast layout keeps for its prover holds its placements, row for row; a
    # walked one keeps none, and the prover reads its tuples to the same verdicts
    for lay in (*fast[0], *fast[1]):
        assert all(list(map(tuple, lay.table[s].tolist())) == list(lay.placed(s))
                   for s in range(4))
    assert all(lay.table is None for lay in (*walked[0], *walked[1]))
    from formal.prove.tc_meta import prove_meta
    from formal.prove.tc_scale import prove_tc_scale
    assert [prove_tc_scale(x) for x in fast[0]] == [prove_tc_scale(x) for x in walked[0]]
    assert [prove_meta(x) for x in fast[1]] == [prove_meta(x) for x in walked[1]]
