"""The catalog's tcgen05.mma data-path layouts (A-G) as export records, for the GPU runs of
``formal.execute.datapath`` (numpy only: it takes the layouts as data, never the prover).

One record per layout; its ``blocks`` are the layout at every N the mma takes, one flat row a
block: the CTA and warp, the TMEM lanes and columns it holds, and the first row and column of
D there (lane ``lane_lo + k``, column ``tcol_lo + j`` holds D[row_lo + k][dcol_lo + j]).  A
worked example, Layout D (M = 128) at N = 8, warp 1's block::

    {"n": 8, "cta": 0, "warp": 1, "lane_lo": 32, "lane_hi": 63, "tcol_lo": 0, "tcol_hi": 7,
     "row_lo": 32, "dcol_lo": 0}

so TMEM lane 40, column 3 holds D[40][3].  ``map_hash`` is ``base.hashes.cell_table_hash`` of the
rows, the name a run's evidence gives the layout it checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.hashes import cell_table_hash
from ..base.matrix_variants import DATAPATH_ROWS
from ..execute.datapath import DATAPATH_INSTRUCTION
from ..model.datapath import DataPath


def datapath_record(dp: DataPath) -> dict[str, Any]:
    """The record of one data-path layout at every N of its mma."""
    row = next(r for r in DATAPATH_ROWS if r[0] == dp.layout)
    blocks = []
    for n in dp.ns:
        for b in dp.blocks:
            t0, t1 = b.tcol_range(n)
            blocks.append({"n": n, "cta": b.cta, "warp": b.warp, "lane_lo": b.lanes[0],
                           "lane_hi": b.lanes[1], "tcol_lo": t0, "tcol_hi": t1,
                           "row_lo": b.rows[0], "dcol_lo": b.dcol_range(n)[0]})
    return {"id": dp.id, "instruction": DATAPATH_INSTRUCTION, "layout": dp.layout, "m": dp.m,
            "cta_group": dp.cta_group, "sparsity": row[3], "ws": row[4], "n": list(dp.ns),
            "map_hash": cell_table_hash(DATAPATH_INSTRUCTION, f"m{dp.m}", dp.layout, "blocks",
                                        blocks),
            "blocks": blocks}


def datapath_records(layouts: Sequence[DataPath]) -> list[dict[str, Any]]:
    """``datapath_record`` of each layout, in order."""
    return [datapath_record(dp) for dp in layouts]


def catalog_datapath_records() -> list[dict[str, Any]]:
    """The embedded catalog's data-path layouts as export records."""
    from .. import catalog
    from ..model.datapath import datapaths
    from ..parse.document import parse_document
    doc = next(d for d in catalog.documents() if d.name.endswith("tcgen05-datapath.md"))
    parsed = [ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None]
    return datapath_records(datapaths(parsed))
