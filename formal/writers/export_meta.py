"""The catalog's ``tcgen05.mma.sp`` metadata layouts as export records: ONE record shape, read
by the GPU runs of ``formal.execute.tcgen05_sp`` (the export's ``meta`` list, numpy only) and
answered by ``ptxlayout export <id>`` (``export_beyond``).

A record is one proved layout (``model.tc_meta.MetaLayout``) at its stated selector values
(``sels``), or -- for an id ``...sel1`` -- at that one value.  Its ``places`` are tables, one a
selector value in ``sels``' order, each a flat row-major list over (row, chunk, copy) of the
field's (lane, column, lowest bit): three numbers a field, its (row, chunk, copy) being its
position, ``3 * ((row * chunks + chunk) * copies + copy)``.  A worked example, ``.kind::f16``
at M = 128 (``lane = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)``, ``column = sel``, ``bit
= 4 * (chunk % 4) + 16 * ((row / 8) % 2)``): at ``sel = 1`` row 8's chunk 5 sits in lane
0 + 8 + 0 = 8, column 1, bits 20-23, at position (8 * 8 + 5) * 1 = 69::

    {"id": "tcgen05.sp_meta.m128.f16", "instruction": "tcgen05.sp_meta",
     "form": "tcgen05.mma.sp", "kind": "f16", "m": 128, "k": 32, "rows": 128, "chunks": 8,
     "width": 4, "copies": 1, "sels": [0, 1], "map_hash": "...",
     "place_fields": ["lane", "column", "bit"],
     "places": [[...], [0, 1, 0, ..., 8, 1, 20, ...]]}    (places[1][3 * 69:3 * 70])

``map_hash`` is ``base.hashes.cell_table_hash`` of the fields at the record's selectors, one
row object (sel, row, chunk, lane, column, bit, copy) a field: for a whole layout the name a
run's evidence gives the metadata layout it placed the fields by (``layout_hashes["meta"]``,
``prove.tc_meta.meta_hash``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..base.hashes import cell_table_hash
from ..execute.tcgen05_sp import META_INSTRUCTION
from ..model.tc_meta import MetaLayout

HASH_FIELDS = ("sel", "row", "chunk", "lane", "column", "bit", "copy")
META_PLACE_FIELDS = ("lane", "column", "bit")


def meta_table(lay: MetaLayout, sel: int) -> list[int]:
    """The fields of ``lay`` at ``sel``: (lane, column, bit) of each (row, chunk, copy), in that
    row-major order, flat."""
    order = sorted(lay.placed(sel), key=lambda f: (f[0], f[1], f[5]))
    return [v for f in order for v in f[2:5]]


def meta_record(lay: MetaLayout, sels: Iterable[int] | None = None) -> dict[str, Any]:
    """The record of one metadata layout at ``sels`` (default: every stated selector value;
    one value names the id ``lay.selector_id(sel)``)."""
    chosen = list(lay.sels) if sels is None else list(sels)
    rows = [dict(zip(HASH_FIELDS, (s, *f), strict=True)) for s in chosen for f in lay.placed(s)]
    one = sels is not None and len(chosen) == 1
    return {"id": lay.selector_id(chosen[0]) if one else lay.id,
            "instruction": META_INSTRUCTION, "form": lay.instruction, "kind": lay.kind,
            "m": lay.m, "k": lay.k, "rows": lay.rows, "chunks": lay.chunks, "width": lay.width,
            "copies": lay.copies, "sels": chosen,
            "map_hash": cell_table_hash(META_INSTRUCTION, f"m{lay.m}", lay.id, "fields", rows),
            "place_fields": list(META_PLACE_FIELDS),
            "places": [meta_table(lay, s) for s in chosen]}


def meta_records(layouts: Sequence[MetaLayout]) -> list[dict[str, Any]]:
    """``meta_record`` of each layout whose program read without a fault, in order."""
    return [meta_record(lay) for lay in layouts if not lay.faults]


def catalog_meta_layouts() -> tuple[MetaLayout, ...]:
    """The embedded catalog's metadata layouts, evaluated."""
    from .. import catalog
    from ..model.tc_meta import meta_layouts
    from ..parse.tc_meta import read_tc_meta
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    return meta_layouts(read_tc_meta(text, "catalog/sparse-metadata/tcgen05.md")[0])


def catalog_meta_records() -> list[dict[str, Any]]:
    """The embedded catalog's metadata layouts as export records."""
    return meta_records(catalog_meta_layouts())
