"""The enumeration's domain and its int64 choice, written faster, are what they were: each
catalog map's points are every holder's (selector, lane) in order with its n elements, and
``bounds`` with a memo (``fits_int64``'s walk) gives every subexpression's interval as
without one."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from formal.model.algebra import LANE, SEL, I, bounds, fits_int64
from formal.model.cells import map_of
from formal.model.resolve import catalog_model


def _maps() -> list[Any]:
    return [m for lay in catalog_model(False).layouts if not lay.incomplete
            for m in [map_of(lay)] if m is not None]


def test_every_maps_points_are_its_holders_elements_in_order() -> None:
    maps = _maps()
    assert len(maps) > 250 and any(m.holder is not sp.true for m in maps)
    for m in maps:
        held = [(s, t) for s in m.selectors for t in range(m.lanes) if m.holder_fn(t, 0, s)]
        want = np.array([(s, t, i) for s, t in held for i in range(m.n)],
                        dtype=np.int64).reshape(-1, 3)
        assert m.pts.dtype == np.int64 and np.array_equal(m.pts, want)


def test_bounds_with_a_memo_are_bounds_without() -> None:
    exprs: list[Any] = []
    for m in _maps():
        for f in m.formulas:
            for c in f.cases:
                exprs.extend(sp.preorder_traversal(c.value))
    exprs = [e for e in dict.fromkeys(exprs) if isinstance(e, sp.Expr)]
    assert len(exprs) > 100
    for box in ({LANE: (0, 31), I: (0, 63), SEL: (0, 3)}, {LANE: (0, 127), I: (0, 255)},
                {LANE: (-5, 40), I: (-3, 9), SEL: (0, 1 << 40)}):
        memo: dict[Any, tuple[int, int]] = {}
        for e in exprs:
            try:
                want = bounds(e, box)
            except ValueError:
                continue
            assert bounds(e, box, memo) == want, e
        assert fits_int64([LANE * 2**61], box) is False
        assert fits_int64([LANE + I], box) is True
