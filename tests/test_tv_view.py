"""The (thread, value) view read from the map's arrays at once equals the view read cell by
cell from the layout's table (``model/tv``): on every catalog layout, and on made layouts
that have no view (a hole in a formula's cases, a cell outside the tile), with the same
first lane and element named."""

from __future__ import annotations

from functools import lru_cache

import pytest

from formal.api import model_of
from formal.model.layout import Layout
from formal.model.resolve import build
from formal.model.tv import TV, _dense_cells, _table_view, tv_view
from formal.text.read import read_text

from .sections import M8N8K4, a_section


@lru_cache(maxsize=1)
def catalog() -> tuple[Layout, ...]:
    return model_of([]).layouts


def _own(text: str) -> Layout:
    m = build([read_text(text, "own.txt")], [])
    assert len(m.layouts) == 1, m.findings
    return m.layouts[0]


def test_every_catalog_layout_reads_the_same_both_ways() -> None:
    """Every catalog layout up to 1,024 cells, and the first four larger ones (warpgroup
    accumulators: the cell-by-cell reading takes seconds over all of them)."""
    read_at_once, large = 0, 0
    for lay in catalog():
        if lay.operand == "metadata" or not lay.formulas:
            continue  # their own views (``_metadata_view``) or none
        if lay.lanes * lay.elements > 1024:
            large += 1
            if large > 4:
                continue
        assert tv_view(lay) == _table_view(lay), lay.id
        read_at_once += not lay.sparse_a and _dense_cells(lay) is not None
    assert large > 4 and read_at_once > 150  # the arrays, not the table, gave most views


def test_a_hole_in_the_cases_names_the_first_lane_and_element() -> None:
    lay = _own(a_section(col="col = (threadID_in_group * 4) + (i & 0x3) for ai where i < 7"))
    assert _dense_cells(lay) is not None  # read from the arrays
    want = "lane 0, element a7: no case of 'col' applies"
    assert tv_view(lay) == _table_view(lay) == want


def test_a_cell_outside_the_tile_names_it() -> None:
    # groupID + 16 for a4..a7: lane 0's a4 is at row 16, col 0, below the tile's 16 rows
    lay = _own(a_section(row="row = groupID for ai where i < 4\n"
                             "      groupID + 16 for ai where i >= 4"))
    got = tv_view(lay)
    assert got == _table_view(lay)
    assert got == "lane 0, element a4 maps to (row 16, col 0), outside the 16 x 16 tile"


def test_a_hand_checked_cell_and_a_replicated_layout() -> None:
    tv = tv_view(_own(a_section()))
    assert isinstance(tv, TV)
    assert tv(13, 5) == (11, 5)  # groupID 3 + 8; threadID_in_group 1 * 4 + (5 & 3)
    rep = _own(M8N8K4)
    view = tv_view(rep)
    assert view == _table_view(rep)
    assert isinstance(view, TV) and "stride 0" in view.note


@pytest.mark.parametrize("lay_id", ["catalog:mma.m16n8k16.A.f16-bf16"])
def test_the_view_of_a_named_layout(lay_id: str) -> None:
    [lay] = [x for x in catalog() if x.id == lay_id]
    tv = tv_view(lay)
    assert isinstance(tv, TV)
    assert tv.tile == (16, 16) and (tv.threads, tv.values) == (32, 8)
    assert tv(0, 0) == (0, 0) and tv(31, 7) == (15, 15)
