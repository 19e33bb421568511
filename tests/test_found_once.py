"""The enumeration's finders asked once a process for each map's arrays
(``prove.formula.found``): for every catalog layout each answer is the finder's own on that
layout's map, and a map with other arrays or other layout facts is searched afresh."""

from __future__ import annotations

import copy

import numpy as np

from formal.model.cells import map_of
from formal.model.resolve import catalog_model
from formal.prove import formula as F
from formal.prove import witness as W


def test_every_answer_is_the_finders_own() -> None:
    F.clear_found()
    layouts = [lay for lay in catalog_model(False).layouts if not lay.incomplete]
    maps = [m for lay in layouts for m in [map_of(lay)] if m is not None]
    assert len(maps) > 250
    for m in maps:
        assert F.found(m, W.witness_range) == W.witness_range(m)
        assert F.found(m, W.witness_collision) == W.witness_collision(m)
        assert F.found(m, W.witness_hole) == W.witness_hole(m)
        for k in range(len(m.formulas)):
            assert F.found(m, W.witness_cases, k) == W.witness_cases(m, k)
    assert len(F._FOUND) < 5 * len(maps)  # maps stated again share their answers


def test_other_arrays_are_searched_afresh() -> None:
    F.clear_found()
    lay = next(lay for lay in catalog_model(False).layouts
               if not lay.incomplete and not lay.sparse_a and lay.operand == "A"
               and map_of(lay) is not None)
    m = map_of(lay)
    assert m is not None and F.found(m, W.witness_collision) is None
    twin = copy.copy(m)  # the same arrays: the same answer, not searched again
    assert F.found(twin, W.witness_collision) is None and len(F._FOUND) == 1
    bad = copy.copy(m)
    bad.out = m.out.copy()
    bad.out[1] = bad.out[0]  # a collision planted in arrays of its own
    bad._ok = None
    assert F.found(bad, W.witness_collision) == (0, 1) == W.witness_collision(bad)
    assert F.found(m, W.witness_collision) is None
    assert np.array_equal(m.out[0], bad.out[0])
    F.clear_found()
    assert not F._FOUND
