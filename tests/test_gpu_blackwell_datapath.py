"""The tcgen05.mma data paths (Layouts A-G) as the GPU runner takes them: export records
(``formal.writers.export_datapath``), read at one N into a map of TMEM cells, and a fake
device whose truth is a record.  The harness reads D out of the TMEM image by the map and
compares it with A @ B: every cell of every layout at every N matches its own truth, and a
truth that moves one warp's rows is found with the cell and both values."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import DATAPATH_ROWS
from formal.execute.datapath import (
    DataPathError,
    FakeDataPathDevice,
    check_datapath,
    datapath_map,
    random_operands,
)


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


def test_every_layout_at_every_n_is_a_bijection_onto_d_and_matches_its_truth(
        records: list[dict[str, Any]]) -> None:
    checked = 0
    for letter, m_rows, cta, _sp, _ws, ns in DATAPATH_ROWS:
        for n in ns:
            m = datapath_map(records, letter, n)
            assert (m.m, m.cta_group) == (m_rows, cta)
            cells = m.cells()
            assert len({(r, c) for r, c in cells[:, 3:]}) == len(cells) == m_rows * n
            assert len({tuple(x) for x in cells[:, :3]}) == len(cells)  # one D element a cell
            seen, faults = check_datapath(m, FakeDataPathDevice(m), trials=1)
            assert faults == [] and seen == m_rows * n
            checked += seen
    assert checked == 1_968_128  # every D element of the seven layouts at all their N


def test_a_truth_that_moves_one_warps_rows_is_found_with_its_cell(
        records: list[dict[str, Any]]) -> None:
    """Layout D at N = 8: the truth swaps the rows of warps 1 and 2 (lanes 32-63 hold rows
    64-95).  TMEM lane 32, column 0 must hold D[32][0]; the device returns D[64][0]."""
    m = datapath_map(records, "D", 8)
    b1, b2 = m.blocks[1], m.blocks[2]
    truth = replace(m, blocks=(m.blocks[0], replace(b1, row_lo=b2.row_lo),
                               replace(b2, row_lo=b1.row_lo), m.blocks[3]))
    seen, faults = check_datapath(m, FakeDataPathDevice(truth), trials=1, seed=7)
    a, b = random_operands(m, np.random.default_rng(7))
    d = a @ b
    # every cell of the two blocks but those where the swapped rows happen to agree
    assert seen == 128 * 8 and len(faults) == 2 * (32 * 8 - (d[32:64] == d[64:96]).sum())
    first = faults[0]
    assert (first["cta"], first["lane"], first["column"], first["d"]) == (0, 32, 0, [32, 0])
    assert (first["got"], first["want"]) == (float(d[64, 0]), float(d[32, 0]))
    assert first["got"] != first["want"]


def test_a_missing_layout_or_n_is_named(records: list[dict[str, Any]]) -> None:
    with pytest.raises(DataPathError, match="not stated at N = 12"):
        datapath_map(records, "D", 12)
    with pytest.raises(DataPathError, match="no tcgen05.datapath record of Layout Z"):
        datapath_map(records, "Z", 8)
