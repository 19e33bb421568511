"""The catalog's tcgen05.mma data-path layouts (A-G) as export records, for the GPU runs of
``formal.execute.datapath`` (numpy only: it takes the layouts as data, never the prover).

One record per layout; its ``blocks`` are the layout at every N the mma takes, one flat row a
block: the CTA and warp, the TMEM lanes and columns it holds, and the first row and column of
D there (lane ``lane_lo + k``, column ``tcol_lo + j`` holds D[row_lo + k][dcol_lo + j]).  A
worked example, Layout D (M = 128) at N = 8, warp 1's block::

    {"n": 8, "cta": 0, "warp": 1, "lane_lo": 32, "lane_hi": 63, "tcol_lo": 0, "tcol_hi": 7,
     "row_lo": 32, "dcol_lo": 0}

so TMEM lane 40, column 3 holds D[40][3].  ``map_hash`` is ``base.hashes.cell_table_hash`` of the
rows (``prove.datapath.datapath_hash``), the name a run's evidence gives the layout it
checked, by which ``prove`` judges the layout's hardware obligation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..base.matrix_variants import DATAPATH_ROWS, TCGEN05_MMA_VARIANTS
from ..base.variants import runs_on
from ..execute.datapath import DATAPATH_INSTRUCTION
from ..model.datapath import DataPath
from ..prove.datapath import datapath_blocks, datapath_hash


def datapath_record(dp: DataPath) -> dict[str, Any]:
    """The record of one data-path layout at every N of its mma."""
    row = next(r for r in DATAPATH_ROWS if r[0] == dp.layout)
    return {"id": dp.id, "instruction": DATAPATH_INSTRUCTION, "layout": dp.layout, "m": dp.m,
            "cta_group": dp.cta_group, "sparsity": row[3], "ws": row[4], "n": list(dp.ns),
            "map_hash": datapath_hash(dp), "blocks": datapath_blocks(dp)}


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


def stale_tc_mma(evidence: Any, records: Sequence[Mapping[str, Any]], sm: int) -> list[str]:
    """The ``tcgen05-mma`` runs an sm_100 device owes (``ptxlayout evidence``), one line
    each: a row of ``TCGEN05_MMA_VARIANTS`` with no ``check`` that matched reading D back by
    its data path's current ``map_hash`` (no run, the last one's result, or the layout
    changed since), and each planted edit of a data path with no run that mismatched.
    Nothing is owed where the device does not run sm_100a, or for a data path ``records``
    lack."""
    from ..execute.tcgen05_mma import PLANTS
    hashes = {str(r.get("layout")): str(r.get("map_hash") or "") for r in records
              if r.get("instruction") == DATAPATH_INSTRUCTION}
    out: list[str] = []
    planted: dict[str, set[str]] = {}
    for v in TCGEN05_MMA_VARIANTS:
        h = hashes.get(v.datapath, "")
        if not runs_on(v, sm) or not h:
            continue
        runs = evidence.runs_of([v.key])
        checks = [r for r in runs if r.mode == "check" and r.result in ("match", "mismatch")]
        mine = [r for r in checks if r.layout_hashes.get("datapath") == h]
        if not any(r.result == "match" for r in mine):
            why = "no run" if not checks else (
                f"last run {mine[-1].result}" if mine
                else "the layouts changed since " + checks[-1].file.date[:10])
            out.append(f"{v.key}: no hardware match for the current data path ({why}; "
                       f"datapath {h})")
        planted.setdefault(v.datapath, set()).update(
            r.plant for r in runs if r.mode == "experiment" and r.result == "mismatch"
            and r.layout_hashes.get("datapath") == h)
    for letter, got in planted.items():
        out += [f"tcgen05.mma layout{letter} planted {p}: no run of the current data path "
                f"mismatched (datapath {hashes[letter]}; expected: mismatch)"
                for p in PLANTS if p not in got]
    return out
