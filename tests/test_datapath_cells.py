"""The data-path map enumerated over all blocks at once (``model.datapath.datapath_cells``)
is the block-by-block enumeration, cell for cell in the same order, for every catalog layout
at every N its mma takes; and a bound's value in integers is ``int(Fraction)``'s."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from formal.api import datapath_catalog
from formal.model.datapath import DataPath, at, datapath_cells


def _block_by_block(dp: DataPath, n: int, align: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {k: [] for k in ("block", "cta", "lane", "tcol", "row", "dcol")}
    for k, b in enumerate(dp.blocks):
        t0, t1 = int(b.tcols[0][0] * n) + b.tcols[0][1], int(b.tcols[1][0] * n) + b.tcols[1][1]
        d0 = int(b.dcols[0][0] * n) + b.dcols[0][1]
        for li in range(b.lanes[1] - b.lanes[0] + 1):
            for ci in range(t1 - t0 + 1):
                for key, v in (("block", k), ("cta", b.cta), ("lane", b.lanes[0] + align + li),
                               ("tcol", t0 + ci), ("row", b.rows[0] + li),
                               ("dcol", d0 + ci)):
                    out[key].append(v)
    return out


def test_every_catalog_layout_at_every_n_is_the_block_by_block_map() -> None:
    dps = datapath_catalog()
    assert len(dps) >= 7
    checked = 0
    for dp in dps:
        for n in dp.ns:
            for align in (0, 32):
                got = datapath_cells(dp, n, align)
                want = _block_by_block(dp, n, align)
                assert {k: v.tolist() for k, v in got.items()} == want, (dp.layout, n, align)
                checked += 1
    assert checked > 100


def test_a_bound_truncates_as_int_of_a_fraction() -> None:
    for mult in (Fraction(1, 2), Fraction(-1, 2), Fraction(3, 4), Fraction(-3, 4), Fraction(0),
                 Fraction(1), Fraction(-5, 3)):
        for n in (0, 1, 2, 3, 8, 9, 256):
            for c in (-1, 0, 7):
                assert at((mult, c), n) == int(mult * n) + c, (mult, n, c)
    assert at((Fraction(-1, 2), 0), 3) == -1  # truncated toward zero, not floored (-2)


def test_an_empty_block_holds_no_cells() -> None:
    dp = datapath_catalog()[0]
    b = dp.blocks[0]
    empty = type(b)(b.cta, b.warp, (b.lanes[0], b.lanes[0] - 1), b.tcols, b.rows, b.dcols, b.src)
    odd = DataPath(dp.layout, dp.m, dp.title, (empty, *dp.blocks[1:]), dp.cta_group, dp.ns)
    got = datapath_cells(odd, dp.ns[0])
    assert 0 not in got["block"].tolist() and len(got["block"]) == len(
        _block_by_block(odd, dp.ns[0], 0)["block"]) > 0
    assert np.array_equal(got["lane"], np.array(_block_by_block(odd, dp.ns[0], 0)["lane"]))


def test_a_block_of_no_columns_and_a_layout_of_no_blocks_hold_no_cells() -> None:
    dp = datapath_catalog()[0]
    b = dp.blocks[-1]
    none = (b.tcols[0], (b.tcols[0][0], b.tcols[0][1] - 1))  # its last column before its first
    empty = type(b)(b.cta, b.warp, b.lanes, none, b.rows, b.dcols, b.src)
    odd = DataPath(dp.layout, dp.m, dp.title, (*dp.blocks[:-1], empty), dp.cta_group, dp.ns)
    got = datapath_cells(odd, dp.ns[-1], 32)
    want = _block_by_block(odd, dp.ns[-1], 32)
    assert {k: v.tolist() for k, v in got.items()} == want
    assert len(dp.blocks) - 1 not in got["block"].tolist() and len(got["block"]) > 0
    bare = datapath_cells(DataPath(dp.layout, dp.m, dp.title, (), dp.cta_group, dp.ns), 64)
    assert sorted(bare) == ["block", "cta", "dcol", "lane", "row", "tcol"]
    assert all(v.dtype == np.int64 and v.shape == (0,) for v in bare.values())
