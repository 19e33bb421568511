"""composes' enumeration evaluates a relation in the steps it states (the producer's point,
its outputs there, those moved by the arrangement: ``composes._enumerate``); ``composes._composed``
writes the same steps as one SymPy expression per output (the enumeration's way for an
arrangement that reads four symbols at once), and Z3's statement composes them in Z3
(``composes._violation``).  Here they are evaluated over every (selector, lane, element) of
every relation of the catalog, of wrong arrangements (a warp offset dropped, lanes shifted,
elements swapped) and of an arrangement that reads four symbols at once, and must agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sympy as sp

from formal.model.algebra import COL, LANE, ROW, I, compile_array
from formal.model.resolve import catalog_model
from formal.prove import composes as C
from formal.prove.relations import relation_table

# 0 at every cell of the catalog (its numbers are far below 10**6), yet it reads four symbols
FOUR = sp.floor((ROW + COL + LANE + I) / 10**6)


def _composed_arrays(st: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    per = st.lanes * st.n
    s = np.repeat(np.asarray(st.selectors, dtype=np.int64), per)
    t = np.tile(np.repeat(np.arange(st.lanes, dtype=np.int64), st.n), len(st.selectors))
    j = np.tile(np.arange(st.n, dtype=np.int64), st.lanes * len(st.selectors))

    def ev(e: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(compile_array(e, np)(t, j, s), dtype=np.int64),
                               t.shape)
    want, p_cell = C._composed(st)
    return [ev(x) for x in want], [ev(x) for x in p_cell]


def _statements(mutate: Any = None) -> list[Any]:
    by = {lay.short_id: lay for lay in catalog_model(False).layouts}
    out = []
    for rel in relation_table():
        if rel.producer not in by or rel.consumer not in by:
            continue
        if mutate is not None:
            rel = C.Relation(rel.producer, rel.consumer, mutate(rel.arrangement))
        st = C.statement(rel, by[rel.producer], by[rel.consumer])
        if st is not None:
            out.append(st)
    return out


MUTANTS = {
    "as stated": None,
    "lanes shifted": lambda a: C.Arrangement(a.text, sp.Mod(a.lane + 1, 32), a.element,
                                             a.row, a.col),
    "elements swapped": lambda a: C.Arrangement(a.text, a.lane, a.element + 1 - 2 * sp.Mod(
        a.element, 2), a.row, a.col),
    "row offset dropped": lambda a: C.Arrangement(a.text, a.lane, a.element, ROW, a.col),
    "four symbols": lambda a: C.Arrangement(a.text, a.lane, a.element, a.row + FOUR, a.col),
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_the_steps_give_the_composed_values(name: str) -> None:
    sts = _statements(MUTANTS[name])
    assert len(sts) >= 30
    refuted = 0
    for st in sts:
        bad, vals = C._enumerate(st)
        want, p_cell = _composed_arrays(st)
        assert len(want) == len(vals["want"]) and len(p_cell) == len(vals["p"])
        for x, y in zip(want, vals["want"], strict=True):
            assert np.array_equal(x, y)
        for x, y in zip(p_cell, vals["p"], strict=True):
            assert np.array_equal(x, y)
        refuted += bool(bad.any())
    if name == "as stated":
        assert refuted == 0
    elif name != "four symbols":
        assert refuted >= len(sts) // 2, (name, refuted, len(sts))


def test_an_arrangement_of_four_symbols_is_evaluated_composed() -> None:
    assert C._compiled(ROW + FOUR) is None
    assert C._compiled(ROW + sp.floor((ROW + COL + LANE) / 10**6)) is not None


@pytest.mark.parametrize("name", list(MUTANTS))
def test_the_maps_read_give_the_steps_values(name: str) -> None:
    """Where both layouts' enumerated maps can be read (``_readable``), the enumeration that
    reads them finds the same bad points, and the same consumer cells, producer cells and
    arranged cells wherever the producer's point is in its domain."""
    by = {lay.short_id: lay for lay in catalog_model(False).layouts}
    read = refuted = 0
    for rel in relation_table():
        if rel.producer not in by or rel.consumer not in by:
            continue
        mutate = MUTANTS[name]
        if mutate is not None:
            rel = C.Relation(rel.producer, rel.consumer, mutate(rel.arrangement))
        st = C.statement(rel, by[rel.producer], by[rel.consumer])
        if st is None:
            continue
        maps = C._readable(st, by[rel.consumer], by[rel.producer])
        if maps is None:
            continue
        read += 1
        bad, vals = C._enumerate(st)
        bad_maps, from_maps = C._enumerate(st, maps)
        assert np.array_equal(bad, bad_maps)
        inside = (vals["pt"] >= 0) & (vals["pt"] < st.p_lanes) & (vals["pj"] >= 0) & \
            (vals["pj"] < st.p_n)
        for k in ("got", "want", "p"):
            for x, y in zip(vals[k], from_maps[k], strict=True):
                assert np.array_equal(x if k == "got" else x[inside],
                                      y if k == "got" else y[inside])
        refuted += bool(bad.any())
    assert read >= 30
    if name == "as stated":
        assert refuted == 0
    elif name != "four symbols":
        assert refuted >= read // 2, (name, refuted, read)


@pytest.mark.parametrize("name", list(MUTANTS))
def test_z3s_statement_composed_in_z3_agrees_with_the_steps(name: str) -> None:
    """``_violation`` composes in Z3 (the producer's formulas at the arrangement's point,
    then the arrangement's row and col at those outputs): over every relation of the catalog
    and its wrong arrangements, Z3 proves exactly the statements the enumeration finds no
    bad point of, and each point Z3 gives for the others is one the enumeration finds bad."""
    sts = _statements(MUTANTS[name])
    refuted = 0
    for st in sts:
        bad, _vals = C._enumerate(st)
        said, point = C._z3_decide(st, 60_000)
        assert said == ("refuted" if bad.any() else "proved"), (name, st.arrangement.text)
        if point is not None:
            k = C._index(st, point)
            assert 0 <= k < len(bad) and bad[k], (name, point)
            refuted += 1
    if name == "as stated":
        assert refuted == 0
    elif name != "four symbols":
        assert refuted >= len(sts) // 2, (name, refuted, len(sts))
