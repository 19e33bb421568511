"""The catalog's ``tcgen05.mma`` block-scale factor layouts as export records, for the GPU runs
of ``formal.execute.tcgen05_scale`` (numpy only: it takes the layouts as data, never the prover).

One record per scale operand of each proved layout (``model.tc_scale.TcScaleLayout``), its
``places`` a table: at each legal scale factor ID, every factor of the operand's tile in row-major
order as (lane, column, byte) -- the (row, col) of a place is its position, so the table holds
three numbers a factor, not seven.  A worked example, ``.kind::mxf8f6f4 .scale_vec::1X`` at M =
128, scale_A (128 x 1): ``lane = row % 32``, ``column = row / 32``, ``byte = sf_id``, so at
``sf_id = 3`` row 33 sits in lane 1, column 1, byte 3::

    {"id": "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A",
     "instruction": "tcgen05.block_scale", "kind": "mxf8f6f4", "form": "scale_vec::1X",
     "scale_type": "ue8m0", "operand": "scale_A", "m": 128, "n": 256, "k": 32, "vec": 1,
     "tile": [128, 1], "columns": 4, "sf_ids": [0, 1, 2, 3], "map_hash": "...",
     "places": [[...], [...], [...], [..., 1, 1, 3, ...]]}  (places[3][3 * 33:3 * 34])

A factor without ``half`` is copied into the lane of all four 32-lane partitions.  The dense
layouts are exported (``catalog_tc_scale_records``): one CTA's, and a pair's (``.cta_group::2``,
M = 256 and M = 128), which carry ``"cta_group": 2`` and ``place_fields``: the place's numbers
a factor, the stated ``cta`` (the CTA of the pair whose tensor memory holds it; without it,
each CTA) and ``half`` (partitions 2h and 2h + 1; without it, all four) after (lane, column,
byte) -- the pair's M = 128 scale_A ``["lane", "column", "byte", "cta"]``, four numbers a
factor.  ``map_hash`` is ``base.hashes.cell_table_hash`` of the places (a row object a factor
at each ID, with the stated ``cta`` / ``half``), the name a run's evidence gives the scale
layout it placed the factors by (``prove.tc_scale.tc_scale_hash``, equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.hashes import cell_table_hash
from ..execute.tcgen05_scale import TC_SCALE_INSTRUCTION
from ..model.tc_scale import TcScaleLayout

TC_PLACE_FIELDS = ("sf_id", "row", "col", "lane", "column", "byte")
TC_PAIR_FIELDS = ("cta", "half")  # stated by a pair's program, placement items 5 and 6


def tc_scale_record(lay: TcScaleLayout) -> dict[str, Any]:
    """The record of one tcgen05 scale operand: (lane, column, byte) of every factor, row-major,
    at each legal scale factor ID."""
    more = stated_fields(lay)
    at = [5 + TC_PAIR_FIELDS.index(f) for f in more]
    places = [[v for p in lay.placed(s) for v in (*p[2:5], *(p[i] for i in at))]
              for s in lay.sf_ids]
    rows = [dict(zip(TC_PLACE_FIELDS + more, (s, *p[:5], *(p[i] for i in at)), strict=True))
            for s in lay.sf_ids for p in lay.placed(s)]
    op = f"scale_{lay.operand}"
    pair = {"cta_group": lay.cta_group, "place_fields": ["lane", "column", "byte", *more]} \
        if lay.cta_group > 1 else {}
    return {"id": lay.id, "instruction": TC_SCALE_INSTRUCTION, "kind": lay.kind,
            "form": lay.form, "scale_type": lay.stype, "operand": op, "m": lay.m, "n": lay.n,
            "k": lay.k, "vec": lay.vec, "tile": list(lay.tile), "columns": lay.columns,
            "sf_ids": list(lay.sf_ids), **pair,
            "map_hash": cell_table_hash(TC_SCALE_INSTRUCTION, lay.shape, lay.id, "places", rows),
            "places": places}


def stated_fields(lay: TcScaleLayout) -> tuple[str, ...]:
    """The pair fields (``cta``, ``half``) a pair's program states, in that order (none for
    one CTA's)."""
    return tuple(f for f in TC_PAIR_FIELDS if lay.cta_group > 1 and lay.states(f))


def tc_scale_records(layouts: Sequence[TcScaleLayout]) -> list[dict[str, Any]]:
    """``tc_scale_record`` of each dense layout (one CTA's and a pair's) read without a fault,
    in order."""
    return [tc_scale_record(lay) for lay in layouts if not lay.faults and not lay.sparse]


def catalog_tc_scale_records() -> list[dict[str, Any]]:
    """The embedded catalog's dense tcgen05 scale layouts as export records."""
    from .. import catalog
    from ..model.tc_scale import tc_scale_layouts
    from ..parse.block_scale import read_block_scale
    name = "block-scale/tcgen05.md"
    text = (catalog.CATALOG_DIR / name).read_text(encoding="utf-8")
    return tc_scale_records(tc_scale_layouts(read_block_scale(text, f"catalog/{name}")))


__all__ = ["TC_PAIR_FIELDS", "TC_PLACE_FIELDS", "catalog_tc_scale_records", "stated_fields",
           "tc_scale_record", "tc_scale_records"]
