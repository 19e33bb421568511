"""The tcgen05 scale and metadata checks kept a process by placement table
(``prove.repeats.on_table``): what is read back equals what the check computes afresh, a
writable table is never looked up, and another table or another field of the layout is
computed again."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from formal.api import block_scale_catalog
from formal.model.tc_scale import tc_scale_layouts
from formal.prove import repeats as R
from formal.prove import tc_meta as TM
from formal.prove import tc_scale as T


def _fresh(lay: T.TcScaleLayout) -> T.TcScaleLayout:
    """The same layout over a writable copy of its table: never looked up, always computed."""
    return dataclasses.replace(lay, table=np.array(lay.table))


def _answers(lay: T.TcScaleLayout) -> tuple[object, ...]:
    return (T.placement_cores(lay), T.tc_fit_core(lay), T.tc_budget_core(lay),
            T.prove_tc_scale(lay)[0])


def test_every_catalog_layout_reads_back_what_it_computes() -> None:
    lays = tc_scale_layouts(block_scale_catalog("tcgen05"))
    assert len(lays) == 82 and len({id(lay.table) for lay in lays}) < len(lays)
    R._ON_TABLE.clear()
    first = [_answers(lay) for lay in lays]
    assert R._ON_TABLE  # kept by table
    again = [_answers(lay) for lay in lays]  # read back
    afresh = [_answers(_fresh(lay)) for lay in lays]
    assert first == again == afresh
    assert all(a[0] and all(c.status == "proved" for c in a[0].values()) for a in first)


def test_a_writable_table_is_never_looked_up() -> None:
    lay = _fresh(tc_scale_layouts(block_scale_catalog("tcgen05"))[0])
    R._ON_TABLE.clear()
    T.placement_cores(lay)
    T.tc_fit_core(lay)
    assert not R._ON_TABLE


def test_another_table_or_field_is_computed_again() -> None:
    lay = next(x for x in tc_scale_layouts(block_scale_catalog("tcgen05"))
               if x.operand == "A" and x.cta_group == 1)
    assert T.placement_cores(lay)[0].status == "proved"
    # the same table with fewer lanes: every factor of lanes 16-31 lands outside
    narrow = dataclasses.replace(lay, lanes=16)
    core = T.placement_cores(narrow)[lay.sf_ids[0]]
    assert core.status == "refuted" and core.cex["name"] == "lane"
    assert T.placement_cores(lay)[0].status == "proved"  # the first answer is still its own
    # another table (read-only, as the model's) whose column 3 is moved: another answer
    moved = np.array(lay.table)
    moved[:, :, 3] += lay.columns
    moved.setflags(write=False)
    shifted = dataclasses.replace(lay, table=moved)
    assert T.placement_cores(shifted)[lay.sf_ids[0]].cex["name"] == "column"
    assert T._columns(shifted, lay.sf_ids[0]) == {c + lay.columns
                                                 for c in T._columns(lay, lay.sf_ids[0])}


def _meta_layouts() -> Any:
    from formal import api, catalog
    from formal.model.tc_meta import meta_layouts
    from formal.parse.tc_meta import read_tc_meta
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text("utf-8")
    return meta_layouts(read_tc_meta(text, api.TC_META_CATALOG)[0])


def test_the_metadata_layouts_read_back_what_they_compute() -> None:
    lays = _meta_layouts()
    assert len(lays) == 19 and len({id(lay.table) for lay in lays}) == 6
    assert _meta_layouts()[0].table is lays[0].table
    R._ON_TABLE.clear()
    first = [TM.meta_placement_cores(lay) for lay in lays]
    assert any(k[0] == "meta-placed" for k in R._ON_TABLE)
    again = [TM.meta_placement_cores(lay) for lay in lays]
    afresh = [TM.meta_placement_cores(dataclasses.replace(lay, table=np.array(lay.table)))
              for lay in lays]
    assert first == again == afresh and all(c for c in first)
    # the same table with narrower lanes: refuted, not the first answer read back
    lay = lays[0]
    narrow = dataclasses.replace(lay, lanes=1)
    cores = TM.meta_placement_cores(narrow)
    assert any(c.status == "refuted" and c.cex["name"] == "lane" for c in cores.values())
    assert TM.meta_placement_cores(lay) == first[0]
