"""The variants a layout of a move, tcgen05 or wgmma family serves (prove/hardware.py): the
index by type and spelled shape (``_pool_by_type``, ``_shapes``) asks ``matrix_layout_serves``
of only the rows that can accept the layout, and answers exactly what asking every row of the
pool answers."""

from __future__ import annotations

import pytest

from formal.base.matrix_variants import (
    CATALOG_OPERAND,
    MOVES,
    TMEM_FAMILIES,
    matrix_layout_serves,
    run_operand,
)
from formal.model.resolve import catalog_model
from formal.prove import hardware as H

FAMILIES = (*MOVES, *TMEM_FAMILIES, "wgmma", "wgmma.sp")


@pytest.mark.parametrize("instruction", FAMILIES)
def test_a_row_accepts_no_shape_but_its_own(instruction: str) -> None:
    """Whatever shape, operand and types a layout has, a row serves it only where the shape
    is one ``_shapes`` names for the row (so the index, keyed by those, loses none)."""
    pool = H._pool_of(instruction)
    shapes = {s for v in pool for s in (*H._shapes(v), v.shape, v.spelled_shape)}
    shapes |= {"", "m64nNk8", "m64nNk16", "m64nNk32", "m64nNk64"}
    asked = 0
    for v in pool:
        n = (v.n,) if v.wgmma and not v.tmem else ()  # (a move's shape has no N)
        for (ins, op), operand in CATALOG_OPERAND.items():
            if ins != v.instruction:
                continue
            for shape in shapes:
                for types, ns in (((v.a,), ()), ((v.c,), n), ((v.a, v.c), n)):
                    asked += 1
                    if matrix_layout_serves(v, op, instruction, shape, operand, types, ns):
                        assert shape in H._shapes(v), (v.key, shape)
    assert asked > len(pool)


def test_the_catalogs_layouts_serve_what_every_row_asked_says() -> None:
    model = catalog_model(False)
    seen = 0
    for lay in model.layouts:
        if lay.instruction not in FAMILIES:
            continue
        op = run_operand(lay.instruction, lay.operand)
        if op is None:
            continue
        every = tuple(v for v in H._pool_of(lay.instruction)
                      if matrix_layout_serves(v, op, lay.instruction, lay.shape_text,
                                              lay.operand, lay.types, lay.n_values))
        assert H._serving(op, lay.instruction, lay.shape_text, lay.operand, lay.types,
                          lay.n_values) == every
        seen += bool(every)
    assert seen > 100
