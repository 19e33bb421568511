"""The catalog's ``tcgen05.mma`` block-scale factor layouts as export records: ONE record shape,
read by the GPU runs of ``formal.execute.tcgen05_scale`` (the export's ``tc_scale`` list, numpy
only: it takes the layouts as data, never the prover) and answered by ``ptxlayout export <id>``
(``export_beyond``, every form: a pair's, the sparse ones).

One record per scale operand of each proved layout (``model.tc_scale.TcScaleLayout``), its
``places`` a table a legal scale factor ID: every factor of the operand's tile in row-major order
as (lane, column, byte) -- the (row, col) of a place is its position, so the table holds three
numbers a factor -- and, where the program states them, the CTA of the pair and the half of the
tensor memory (``place_fields`` names the columns).  A worked example, ``.kind::mxf8f6f4
.scale_vec::1X`` at M = 128, scale_A (128 x 1): ``lane = row % 32``, ``column = row / 32``,
``byte = sf_id``, so at ``sf_id = 3`` row 33 sits in lane 1, column 1, byte 3::

    {"id": "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A",
     "instruction": "tcgen05.block_scale", "opcode": "tcgen05.mma.cta_group::1.kind::...",
     "kind": "mxf8f6f4", "form": "scale_vec::1X", "scale_type": "ue8m0", "operand": "scale_A",
     "shape": "m128n256k32", "m": 128, "n": 256, "k": 32, "vec": 1, "cta_group": 1,
     "sparse": false, "tile": [128, 1], "columns": 4, "sf_ids": [0, 1, 2, 3], "map_hash": "...",
     "place_fields": ["lane", "column", "byte"],
     "places": [[...], [...], [...], [..., 1, 1, 3, ...]]}  (places[3][3 * 33:3 * 34])

A factor without ``half`` is copied into the lane of all four 32-lane partitions (with
``half``: partitions 2h and 2h + 1), and one without ``cta`` into each CTA of a pair.  The
export's ``tc_scale`` list holds the dense layouts (``catalog_tc_scale_records``): one CTA's at
M = 128 and 64, and a pair's (``.cta_group::2``, M = 256 and M = 128) -- the pair's M = 128
scale_A has ``place_fields`` ``["lane", "column", "byte", "cta"]``, four numbers a factor.
``map_hash`` is ``base.hashes.cell_table_hash`` of the places (a row object a factor at each
ID: sf_id, row, col, lane, column, byte, and cta / half where stated), the name a run's
evidence gives the scale layout it placed the factors by.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.hashes import cell_table_hash_of_tuples
from ..execute.tcgen05_scale import TC_SCALE_INSTRUCTION
from ..model.tc_scale import TcScaleLayout

TC_PLACE_FIELDS = ("sf_id", "row", "col", "lane", "column", "byte")
STATED = ("cta", "half")  # placed only where the program states them


def tc_place_fields(lay: TcScaleLayout) -> list[str]:
    """The columns of ``lay``'s tables: lane, column, byte, then cta and half where stated."""
    return ["lane", "column", "byte", *(n for n in STATED if lay.states(n))]


def tc_scale_record(lay: TcScaleLayout) -> dict[str, Any]:
    """The record of one tcgen05 scale operand: (lane, column, byte[, cta, half]) of every
    factor, row-major, at each legal scale factor ID."""
    fields = tc_place_fields(lay)
    cols = [2, 3, 4, *(5 + STATED.index(n) for n in fields[3:])]
    names = [*TC_PLACE_FIELDS, *fields[3:]]
    places = [[p[c] for p in lay.placed(s) for c in cols] for s in lay.sf_ids]
    rows = [(s, *p[:2], *(p[c] for c in cols)) for s in lay.sf_ids for p in lay.placed(s)]
    op = f"scale_{lay.operand}"
    return {"id": lay.id, "instruction": TC_SCALE_INSTRUCTION, "opcode": lay.instruction,
            "kind": lay.kind, "form": lay.form, "scale_type": lay.stype, "operand": op,
            "shape": lay.shape, "m": lay.m, "n": lay.n, "k": lay.k, "vec": lay.vec,
            "cta_group": lay.cta_group, "sparse": lay.sparse, "tile": list(lay.tile),
            "columns": lay.columns, "sf_ids": list(lay.sf_ids),
            "map_hash": cell_table_hash_of_tuples(TC_SCALE_INSTRUCTION, lay.shape, lay.id, "places",
                                               names, rows),
            "place_fields": fields, "places": places}


def tc_scale_records(layouts: Sequence[TcScaleLayout]) -> list[dict[str, Any]]:
    """``tc_scale_record`` of each dense layout (one CTA's and a pair's) read without a fault,
    in order."""
    return [tc_scale_record(lay) for lay in layouts if not lay.faults and not lay.sparse]


def catalog_tc_scale_layouts() -> tuple[TcScaleLayout, ...]:
    """The embedded catalog's tcgen05 scale layouts, evaluated (every form)."""
    from .. import catalog
    from ..model.tc_scale import tc_scale_layouts
    from ..parse.block_scale import read_block_scale
    name = "block-scale/tcgen05.md"
    text = (catalog.CATALOG_DIR / name).read_text(encoding="utf-8")
    return tuple(tc_scale_layouts(read_block_scale(text, f"catalog/{name}")))


def catalog_tc_scale_records() -> list[dict[str, Any]]:
    """The embedded catalog's dense tcgen05 scale layouts as export records."""
    return tc_scale_records(catalog_tc_scale_layouts())


__all__ = ["TC_PLACE_FIELDS", "catalog_tc_scale_layouts", "catalog_tc_scale_records",
           "tc_place_fields", "tc_scale_record", "tc_scale_records"]
