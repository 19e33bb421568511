"""``ptxlayout export`` of the catalog's ids that are not register fragments: block-scale
factors, tcgen05 data paths, sparse metadata, packing formats and tcgen05.cp.

Each family exports as JSON, one record an id, a list of records in all.  Where the GPU side
reads the family (the mma.sync scale maps, ``execute.block_scale.scale_maps_in_records``; the
data paths, ``execute.datapath.datapath_map``) the record is the very one it reads
(``export_scale``, ``export_datapath``); the others are their model's table, one row a place,
its columns named by ``place_fields``.  For the metadata of ``.kind::f16`` at M = 128,
selector 1 (``lane = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)``, ``column = sel``,
``bit = 4 * (chunk % 4) + 16 * ((row / 8) % 2)``)::

    {"id": "tcgen05.sp_meta.m128.f16.sel1", "instruction": "tcgen05.mma.sp", "kind": "f16",
     "m": 128, "k": 32, "selector": 1, "width": 4, ...,
     "place_fields": ["row", "chunk", "lane", "column", "bit", "copy"],
     "places": [[0, 0, 0, 1, 0, 0], ..., [8, 5, 8, 1, 20, 0], ...]}

(row 8's chunk 5: lane 0 + 8 * 1 + 0 = 8, column 1, bits 20-23).  None of these is a CuTe
layout, a C fragment table or an F2 basis, so ``--format cute``, ``c`` and ``f2`` have no
meaning for them: ``FormatError`` says so, and the command exits 2.  A query names an id
exactly (case and a ``catalog:`` prefix aside) or every id it begins with a dot after it
(``tcgen05.sp_meta.m128.f16`` names both selectors).
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


def scale_id_record(lay: Any) -> dict[str, Any]:
    """One tcgen05 scale operand at every legal scale factor ID: each factor's (row, col) of
    the scale matrix and its (lane of a partition, column, byte), the CTA and half of the
    tensor memory where the program states them (else 0)."""
    return {"id": lay.id, "instruction": lay.instruction, "kind": lay.kind, "form": lay.form,
            "scale_type": lay.stype, "shape": lay.shape, "m": lay.m, "n": lay.n, "k": lay.k,
            "cta_group": lay.cta_group, "sparse": lay.sparse,
            "operand": f"scale_{lay.operand}", "tile": list(lay.tile),
            "sf_ids": list(lay.sf_ids),
            "place_fields": ["sf_id", "row", "col", "lane", "column", "byte", "cta", "half"],
            "places": [[s, *p] for s in lay.sf_ids for p in lay.placed(s)]}


def meta_selector_record(lay: Any, sel: int) -> dict[str, Any]:
    """One sparse-metadata form at one selector value: each field's (row, chunk) and its
    (lane, column, lowest bit, copy)."""
    return {"id": lay.selector_id(sel), "instruction": lay.instruction, "kind": lay.kind,
            "m": lay.m, "k": lay.k, "selector": sel, "rows": lay.rows, "chunks": lay.chunks,
            "width": lay.width, "copies": lay.copies,
            "place_fields": ["row", "chunk", "lane", "column", "bit", "copy"],
            "places": [list(p) for p in lay.placed(sel)]}


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
    from ..model.tc_scale import tc_scale_layouts
    from ..parse.block_scale import read_block_scale
    name = "block-scale/tcgen05.md"
    return [scale_id_record(x) for x in
            tc_scale_layouts(read_block_scale(_read(name), f"catalog/{name}"))]


def _datapath() -> list[dict[str, Any]]:
    from .export_datapath import catalog_datapath_records
    return catalog_datapath_records()


def _meta() -> list[dict[str, Any]]:
    from ..model.tc_meta import meta_layouts
    from ..parse.tc_meta import read_tc_meta
    name = "sparse-metadata/tcgen05.md"
    sections = read_tc_meta(_read(name), f"catalog/{name}")[0]
    return [meta_selector_record(lay, s) for lay in meta_layouts(sections) for s in lay.sels]


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


@cache
def family_records(fam: str) -> tuple[dict[str, Any], ...]:
    """The catalog's records of one family (built once a process; callers copy)."""
    return tuple(BUILDERS[fam]())


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
    got = [r for r in recs if r["id"].lower() == q] or \
        [r for r in recs if r["id"].lower().startswith(q + ".")]
    if not got:
        raise FormatError(f"no {FAMILIES[fam]} id matches '{query}' (see 'ptxlayout list "
                          f"--family {fam}')")
    return [json.loads(json.dumps(r)) for r in got]


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
    return json.dumps(out, indent=1) + "\n"


def export_command(args: Any, write: Callable[[str, str | None], None]) -> int | None:
    """``ptxlayout export ID ...`` where every id is one of these families' (None for any
    other command or id, which ``export`` itself answers; the catalog's only, so None with
    ``--doc`` or ``--no-catalog``): the records written by ``write(text, output)``, exit 0; a
    format they lack or an id that names none is one line on stderr, exit 2."""
    ids = list(getattr(args, "ids", None) or [])
    if getattr(args, "docs", None) or getattr(args, "no_catalog", False) or not ids \
            or not all(map(export_family, ids)):
        return None
    try:
        text = export_beyond(ids, args.format)
    except FormatError as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    write(text, getattr(args, "output", None))
    return 0

