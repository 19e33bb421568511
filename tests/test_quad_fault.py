"""The sparse metadata's quad locality (``prove/sparse.quad_fault``) with numpy over every
point equals the point-by-point walk (``quad_fault_walked``) on every catalog metadata layout
and on planted faults: a field moved to a lane of another quad, the A values of a chunk moved
to another quad, and a field whose (row, chunk) no lane holds."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from formal.model.cells import map_of
from formal.model.resolve import catalog_model
from formal.prove.sparse import quad_fault, quad_fault_walked


def _pairs() -> list[tuple[Any, Any]]:
    layouts = catalog_model(False).layouts
    a_of = {}
    for lay in layouts:
        if lay.sparse_a and lay.formulas:
            a_of.setdefault((lay.document, lay.section, str(lay.shape)), lay)
    out = []
    for lay in layouts:
        a = a_of.get((lay.document, lay.section, str(lay.shape)))
        if lay.operand == "metadata" and a is not None and map_of(lay) is not None:
            out.append((lay, a))
    return out


PAIRS = _pairs()


def _with_out(m: Any, out: Any) -> Any:
    moved = copy.copy(m)
    moved.out = out
    return moved


def test_every_catalog_metadata_layout_is_judged_alike() -> None:
    assert len(PAIRS) >= 8
    for lay, a in PAIRS:
        m = map_of(lay)
        assert quad_fault(m, a) == quad_fault_walked(m, a) is None, lay.id


@pytest.mark.parametrize("k", range(4))
def test_a_field_moved_to_another_quad_is_found_alike(k: int) -> None:
    lay, a = PAIRS[k]
    m = map_of(lay)
    out = m.out.copy()
    # the first holder's first field describes the (row, chunk) of a field of a lane 4 away
    lanes = m.pts[:, 1]
    p = 0
    q = int(np.argmax(lanes // 4 != lanes[p] // 4))
    out[p, :2] = out[q, :2]
    moved = _with_out(m, out)
    got = quad_fault(moved, a)
    assert got is not None and got == quad_fault_walked(moved, a)
    assert got[1]["lane"] == int(lanes[p]) and got[1]["value_lane"] // 4 != got[1]["lane"] // 4


def test_a_chunk_moved_in_the_a_layout_and_a_chunk_no_lane_holds() -> None:
    lay, a = PAIRS[0]
    m, am = map_of(lay), map_of(a)
    out = am.out.copy()
    lanes = am.pts[:, 1]
    p = int(np.argmax(lanes // 4 != lanes[0] // 4))
    out[0, :3] = out[p, :3]  # lane 0's first values now sit where another quad's do
    moved_a = copy.copy(a)
    moved_a.__dict__["_ptxlayout_enumerated_map"] = _with_out(am, out)
    assert quad_fault(m, moved_a) == quad_fault_walked(m, moved_a)
    far = m.out.copy()
    far[0, 0] = 10**6  # a row no A lane holds: no owner, no fault
    assert quad_fault(_with_out(m, far), a) == quad_fault_walked(_with_out(m, far), a)
