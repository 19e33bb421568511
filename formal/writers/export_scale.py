"""The catalog's block-scale factor layouts as export records, for the GPU runs of
``formal.execute.block_scale`` (numpy only: it takes the layouts as data, never the prover).

One record per scale operand of each legal (kind, shape, ``.scale_vec``, scale type), its
``places`` every (byte-id, thread-id, lane, byte, row, col) the proved layout holds at each
legal selector pair.  A worked example, ``.kind::mxf8f6f4 .scale_vec::1X .ue8m0`` of
m16n8k32, scale_A (16 x 1): byte-id 0 and thread-id 0 give lanes 0, 1, 4, 5, ... byte 0, and
row 8 sits in lane 1, so its places begin::

    {"id": "mma.block_scale.m16n8k32.mxf8f6f4.1X.ue8m0.scale_A",
     "instruction": "mma.block_scale", "kind": "mxf8f6f4", "shape": "m16n8k32",
     "scale_vec": 1, "scale_type": "ue8m0", "operand": "scale_A", "tile": [16, 1],
     "map_hash": "...", "places": [[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 8, 0], ...]}

``map_hash`` is ``base.hashes.cell_table_hash`` of the places (each as a row object), the name a
run's evidence gives the scale map it checked (``layout_hashes["scale_A"]``).  The forms share
a record by (kind, shape, ``.scale_vec``, scale type): every element type of a kind reads its
factors the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.hashes import cell_table_hash
from ..execute.block_scale import SCALE_INSTRUCTION
from ..model.block_scale import ScaleLayout

PLACE_FIELDS = ("byte_id", "thread_id", "lane", "byte", "row", "col")


def scale_record(lay: ScaleLayout) -> dict[str, Any]:
    """The record of one proved scale operand: its places at every legal selector pair."""
    places = [[b, t, lane, byte, r, c] for (b, t), held in lay.holdings
              for lane, byte, r, c in held]
    rows = [dict(zip(PLACE_FIELDS, p, strict=True)) for p in places]
    op = f"scale_{lay.operand}"
    return {"id": lay.id, "instruction": SCALE_INSTRUCTION, "kind": lay.kind,
            "shape": lay.shape, "scale_vec": lay.vec, "scale_type": lay.stype,
            "operand": op, "tile": list(lay.tile),
            "map_hash": cell_table_hash(SCALE_INSTRUCTION, lay.shape,
                                        f"{op}.{lay.kind}.{lay.vec}X.{lay.stype}", "places",
                                        rows),
            "places": places}


def scale_records(layouts: Sequence[ScaleLayout]) -> list[dict[str, Any]]:
    """``scale_record`` of each layout, in order."""
    return [scale_record(lay) for lay in layouts]


def catalog_scale_records() -> list[dict[str, Any]]:
    """The embedded catalog's mma.sync block-scale layouts as export records: what
    ``formal.execute.block_scale.scale_maps_in_records`` reads."""
    from .. import catalog
    from ..model.block_scale import scale_layouts
    from ..parse.block_scale import read_block_scale
    name = "block-scale/mma-sync.md"
    text = (catalog.CATALOG_DIR / name).read_text(encoding="utf-8")
    return scale_records(scale_layouts(read_block_scale(text, f"catalog/{name}")))
