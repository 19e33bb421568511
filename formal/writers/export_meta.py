"""The catalog's ``tcgen05.mma.sp`` metadata layouts as export records, for the GPU runs of
``formal.execute.tcgen05_sp`` (numpy only: it takes the layouts as data, never the prover).

One record per proved layout (``model.tc_meta.MetaLayout``), its ``places`` every field at
each stated selector value, one flat row a field: (sel, row, chunk, lane, column, bit, copy),
the column counted from the metadata address.  A worked example, ``.kind::f16`` at M = 128:
at ``sel = 1`` row 8's chunk 0 sits in lane 0, column 1, bits 16-19, so its places hold::

    {"id": "tcgen05.sp_meta.m128.f16", "instruction": "tcgen05.sp_meta",
     "form": "tcgen05.mma.sp", "kind": "f16", "m": 128, "k": 32, "chunks": 8, "width": 4,
     "copies": 1, "sels": [0, 1], "map_hash": "...", "places": [..., [1, 8, 0, 0, 1, 16, 0],
     ...]}

``map_hash`` is ``base.hashes.cell_table_hash`` of the places (each as a row object), the name
a run's evidence gives the metadata layout it placed the fields by (``layout_hashes["meta"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.hashes import cell_table_hash
from ..execute.tcgen05_sp import META_INSTRUCTION
from ..model.tc_meta import MetaLayout

PLACE_FIELDS = ("sel", "row", "chunk", "lane", "column", "bit", "copy")


def meta_record(lay: MetaLayout) -> dict[str, Any]:
    """The record of one metadata layout: its fields at each stated selector value."""
    places = [[s, *f] for s in lay.sels for f in lay.placed(s)]
    rows = [dict(zip(PLACE_FIELDS, p, strict=True)) for p in places]
    return {"id": lay.id, "instruction": META_INSTRUCTION, "form": lay.instruction,
            "kind": lay.kind, "m": lay.m, "k": lay.k, "chunks": lay.chunks,
            "width": lay.width, "copies": lay.copies, "sels": list(lay.sels),
            "map_hash": cell_table_hash(META_INSTRUCTION, f"m{lay.m}", lay.id, "fields", rows),
            "places": places}


def meta_records(layouts: Sequence[MetaLayout]) -> list[dict[str, Any]]:
    """``meta_record`` of each layout whose program read without a fault, in order."""
    return [meta_record(lay) for lay in layouts if not lay.faults]


def catalog_meta_records() -> list[dict[str, Any]]:
    """The embedded catalog's metadata layouts as export records."""
    from .. import catalog
    from ..model.tc_meta import meta_layouts
    from ..parse.tc_meta import read_tc_meta
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    return meta_records(meta_layouts(read_tc_meta(text, "catalog/sparse-metadata/tcgen05.md")[0]))
