"""What the CuTe audit keeps within a process gives what a fresh computation gives, and a
changed input is a new question: the TMEM side of a TMEM atom (``tmem.tmem_side``), the
spec's data-path cells (``umma.datapath_spec_cells``) and the catalog's layouts by
instruction (``audit.of_instruction``).  (Z3's answers: tests/test_audit_z3_memo.py.)"""

from __future__ import annotations

import numpy as np

from formal.audit import tmem as T
from formal.audit.audit import of_instruction, spec_for
from formal.audit.project import spec_datapaths, spec_layouts
from formal.audit.umma import DP_LANES, datapath_spec_cells
from formal.model.cute import CuteLayout


def _want(lanes: int, cols: int) -> np.ndarray:
    return np.array([[[t, c] for c in range(cols)] for t in range(lanes)], dtype=np.int64)


def test_the_tmem_side_kept_is_the_fresh_one_and_its_inputs_are_its_key() -> None:
    # 4 lanes x 2 columns of 32 bits: ValID (32, 2, 4):(1, 32, 2^21), every thread at 0
    val_id = CuteLayout((32, 2, 4), (1, 32, 1 << T.LANE_BITS))
    mem = CuteLayout((32, 256), (0, 1))
    want = _want(4, 2)
    fresh = T._tmem_side(mem, val_id, want, 32)
    assert fresh[0] == "equal"
    assert T.tmem_side(mem, val_id, want, 32) == fresh
    assert T.tmem_side(mem, val_id, want.copy(), 32) == fresh  # by value, not identity
    # each input changed is asked again, and answered as fresh
    other = want.copy()
    other[3, 1] = [3, 2]
    for args in ((mem, val_id, other, 32), (mem, val_id, want, 16),
                 (mem, CuteLayout((32, 2, 4), (1, 64, 1 << T.LANE_BITS)), want, 32),
                 (CuteLayout((32, 256), (1, 1)), val_id, want, 32)):
        got = T.tmem_side(*args)
        assert got == T._tmem_side(*args) and got[0] == "differs"


def test_the_data_path_cells_kept_are_the_fresh_ones() -> None:
    from formal.model.datapath import datapath_cells
    assert spec_datapaths() is spec_datapaths()
    from formal.audit.project import DATAPATH_ROWS
    letter, m, _group, _sparsity, _ws, ns = DATAPATH_ROWS[0]
    dp = next(d for d in spec_datapaths() if d.layout == letter)
    n = ns[0]
    got = datapath_spec_cells(dp.layout, m, n)
    assert got is not None and got is datapath_spec_cells(dp.layout, m, n)
    assert not got.flags.writeable
    c = datapath_cells(dp, n)
    assert (got[c["row"], c["dcol"], 0] == DP_LANES * c["cta"] + c["lane"]).all()
    assert (got[c["row"], c["dcol"], 1] == c["tcol"]).all()
    assert datapath_spec_cells(dp.layout, m, ns[-1]).shape == (m, ns[-1], 2)
    assert datapath_spec_cells("no such layout", m, n) is None


def test_the_layouts_of_an_instruction_are_the_filtered_ones_in_order() -> None:
    layouts = spec_layouts(False)
    for ins in sorted({lay.instruction for lay in layouts}) + ["no such instruction"]:
        want = [lay for lay in layouts if lay.instruction == ins]
        assert list(of_instruction(layouts, ins)) == want
        assert list(of_instruction(list(layouts), ins)) == want  # a list: filtered afresh
    assert spec_for is not None
