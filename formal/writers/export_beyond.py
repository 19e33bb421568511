"""``ptxlayout export`` of the catalog's ids that are not register fragments: block-scale
factors, tcgen05 data paths, sparse metadata, packing formats and tcgen05.cp.

Each family exports as JSON, one record an id, a list of records in all, and each record is
the very one the GPU side reads where it reads the family: the mma.sync scale maps
(``export_scale``, ``execute.block_scale.scale_maps_in_records``), the data paths
(``export_datapath``, ``execute.datapath.datapath_map``), the tcgen05 scale factors
(``export_tc_scale``, ``execute.tcgen05_scale``) and the sparse metadata (``export_meta``,
``execute.tcgen05_sp``); one record function a family serves both.  The others are their
model's table, one row a place, its columns named by ``place_fields``.  An id that names a
slice of a record is answered by the same function on the slice: the metadata of ``.kind::f16``
at M = 128 at selector 1 (``lane = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)``, ``column =
sel``, ``bit = 4 * (chunk % 4) + 16 * ((row / 8) % 2)``)::

    {"id": "tcgen05.sp_meta.m128.f16.sel1", "instruction": "tcgen05.sp_meta",
     "form": "tcgen05.mma.sp", "kind": "f16", "m": 128, "k": 32, "rows": 128, "chunks": 8,
     "width": 4, "copies": 1, "sels": [1], ..., "place_fields": ["lane", "column", "bit"],
     "places": [[0, 1, 0, ..., 8, 1, 20, ...]]}

(row 8's chunk 5, position 8 * 8 + 5 = 69 of the (row, chunk) table: lane 0 + 8 * 1 + 0 = 8,
column 1, bits 20-23).  None of these is a CuTe layout, a C fragment table or an F2 basis, so
``--format cute``, ``c`` and ``f2`` have no meaning for them: ``FormatError`` says so, and the
command exits 2.  A query names an id exactly (case and a ``catalog:`` prefix aside) or every
record whose id it begins with a dot after it (``tcgen05.sp_meta.m128`` names every kind's
layout at M = 128, each at both selectors).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from .cards import bare

FAMILIES = {
    "mma.block_scale": "mma.sync block-scale factors",
    "tcgen05.block_scale": "tcgen05.mma block-scale factors",
    "tcgen05.datapath": "tcgen05.mma data paths",
    "tcgen05.sp_meta": "tcgen05.mma.sp sparse metadata",
    "tcgen05.packing": "tcgen05 packing formats",
    "tcgen05.cp": "tcgen05.cp copies and decompression formats",
}


class FormatError(ValueError):
    """A (family, format) pair with no meaning, or a query that names no exportable id."""


def _read(name: str) -> str:
    from .. import catalog
    return (catalog.CATALOG_DIR / name).read_text(encoding="utf-8")


def pack_record(f: Any) -> dict[str, Any]:
    """One packing format: the unit, its slots, and the first bit of each element."""
    return {"id": f.id, "memory": f.memory, "matrices": list(f.matrices),
            "kinds": list(f.kinds), "type": f.type, "bits": f.bits, "slot": f.slot,
            "unit": f.unit, "count": f.count, "padding": f.padding,
            "first_bits": [f.first_bit(k) for k in range(f.count)]}


def copy_record(lay: Any) -> dict[str, Any]:
    """One tcgen05.cp shape and multicast: each (row, piece, copy) of the source and the
    (lane, column) it lands in."""
    return {"id": lay.id, "instruction": "tcgen05.cp", "shape": lay.shape,
            "multicast": lay.multicast, "rows": lay.rows, "pieces": lay.pieces,
            "width": lay.width, "columns": lay.columns, "lanes": lay.lanes,
            "place_fields": ["row", "piece", "copy", "lane", "column"],
            "places": [list(p) for p in lay.landings]}


def copy_format_record(f: Any) -> dict[str, Any]:
    """One tcgen05.cp decompression format: what a unit holds before and after."""
    return {"id": f.id, "instruction": "tcgen05.cp", "dst": f.dst, "src": f.src,
            "count": f.count, "bits": f.bits, "padding": f.padding, "unit": f.unit,
            "out_count": f.out_count, "out_bits": f.out_bits}


def _scale_mma() -> list[dict[str, Any]]:
    from .export_scale import catalog_scale_records
    return catalog_scale_records()


def _scale_tc() -> list[dict[str, Any]]:
    from .export_tc_scale import catalog_tc_scale_layouts, tc_scale_record
    return [tc_scale_record(x) for x in catalog_tc_scale_layouts()]


def _datapath() -> list[dict[str, Any]]:
    from .export_datapath import catalog_datapath_records
    return catalog_datapath_records()


def _meta() -> list[dict[str, Any]]:
    from .export_meta import catalog_meta_layouts, meta_record
    return [meta_record(lay) for lay in catalog_meta_layouts()]


def _meta_selectors() -> list[dict[str, Any]]:
    from .export_meta import catalog_meta_layouts, meta_record
    return [meta_record(lay, [s]) for lay in catalog_meta_layouts() for s in lay.sels]


def _packing() -> list[dict[str, Any]]:
    from .. import catalog
    from ..model.datapath import pack_formats
    from ..parse.document import parse_document
    from ..text.read import read_path
    name = "tcgen05-packing.md"
    doc = read_path(catalog.CATALOG_DIR / name, name=f"catalog/{name}")
    parsed = [ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None]
    return [pack_record(f) for f in pack_formats(parsed)]


def _copy() -> list[dict[str, Any]]:
    from ..model.tc_copy import copy_format, copy_layouts
    from ..parse.tc_copy import read_tc_copy
    name = "tensor-copy/tcgen05.md"
    sections, formats, _found = read_tc_copy(_read(name), f"catalog/{name}")
    return [*(copy_record(x) for x in copy_layouts(sections)),
            *(copy_format_record(copy_format(f)) for f in formats)]


BUILDERS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "mma.block_scale": _scale_mma, "tcgen05.block_scale": _scale_tc,
    "tcgen05.datapath": _datapath, "tcgen05.sp_meta": _meta, "tcgen05.packing": _packing,
    "tcgen05.cp": _copy}


# ids answered by a slice of a family's record: a metadata layout at one selector value
SLICES: dict[str, Callable[[], list[dict[str, Any]]]] = {"tcgen05.sp_meta": _meta_selectors}


@cache
def family_records(fam: str) -> tuple[dict[str, Any], ...]:
    """The catalog's records of one family (built once a process; callers copy)."""
    return tuple(BUILDERS[fam]())


@cache
def slice_records(fam: str) -> tuple[dict[str, Any], ...]:
    """The records of the ids that name a slice of a family's record (none for most)."""
    return tuple(SLICES[fam]()) if fam in SLICES else ()


def family_ids(fam: str) -> set[str]:
    """Every id of ``fam`` that ``export`` answers with a record of its own."""
    return {r["id"] for r in (*family_records(fam), *slice_records(fam))}


def export_family(query: str) -> str | None:
    """The exportable family a query's id begins with, or None."""
    q = bare(query).lower()
    return next((f for f in FAMILIES if q == f or q.startswith(f.lower() + ".")), None)


def export_records_for(query: str) -> list[dict[str, Any]]:
    """The records ``query`` names: the one whose id it is, else every one it begins (a
    ``FormatError`` when none)."""
    fam = export_family(query)
    if fam is None:
        raise FormatError(f"'{query}' names no exportable id of "
                          + ", ".join(FAMILIES))
    q = bare(query).lower()
    recs = family_records(fam)
    got = [r for r in (*recs, *slice_records(fam)) if r["id"].lower() == q] or \
        [r for r in recs if r["id"].lower().startswith(q + ".")]
    if not got:
        raise FormatError(f"no {FAMILIES[fam]} id matches '{query}' (see 'ptxlayout list "
                          f"--family {fam}')")
    return [json.loads(json.dumps(r)) for r in got]


def records_text(value: Any, indent: str = "") -> str:
    """JSON as ``json.dumps(indent=1)`` writes it, except that a list of numbers (a table) or
    of flat lists is one line a list: a record's tables stay a line each, not a number a
    line."""
    inner = indent + " "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {records_text(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        if not any(isinstance(x, (dict, list)) for x in value):
            return json.dumps(value)
        if all(isinstance(x, list) and not any(isinstance(y, (dict, list)) for y in x)
               for x in value):
            return "[\n" + ",\n".join(inner + json.dumps(x) for x in value) + f"\n{indent}]"
        return "[\n" + ",\n".join(inner + records_text(x, inner) for x in value) + \
            f"\n{indent}]"
    return json.dumps(value)


def export_beyond(queries: Sequence[str], fmt: str) -> str:
    """The JSON records the queries name (a list), in order and each once; a
    ``FormatError`` for a format other than json or a query that names nothing."""
    if fmt != "json":
        fams = sorted({export_family(q) or "?" for q in queries})
        raise FormatError(f"export --format {fmt} has no meaning for "
                          + ", ".join(FAMILIES.get(f, f) for f in fams)
                          + ": not a register fragment, a CuTe layout or an F2 basis; "
                            "--format json exports its records")
    out: list[dict[str, Any]] = []
    for q in queries:
        out.extend(r for r in export_records_for(q) if r not in out)
    return records_text(out) + "\n"


def ids_export_command(args: Any, write: Callable[[str, str | None], None],
                       belongs: Callable[[str], Any],
                       render: Callable[[list[str], str], str],
                       refused: type[ValueError] = ValueError) -> int | None:
    """``ptxlayout export ID ...`` where every id ``belongs`` to one family of the catalog
    (None for any other command or id, and with ``--doc`` or ``--no-catalog``):
    ``render(ids, format)`` written by ``write(text, output)``, exit 0; a ``refused`` error (a
    format without meaning, an id that names none) is one line on stderr, exit 2."""
    ids = list(getattr(args, "ids", None) or [])
    if getattr(args, "command", None) != "export" or not ids or getattr(args, "docs", None) \
            or getattr(args, "no_catalog", False) or not all(map(belongs, ids)):
        return None
    try:
        text = render(ids, args.format)
    except refused as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    write(text, getattr(args, "output", None))
    return 0


def export_command(args: Any, write: Callable[[str, str | None], None]) -> int | None:
    """``ptxlayout export ID ...`` where every id is one of these families'
    (``ids_export_command`` with ``export_family`` and ``export_beyond``; a format they lack
    raises ``FormatError``)."""
    return ids_export_command(args, write, export_family, export_beyond, FormatError)

