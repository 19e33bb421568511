"""Exports: layouts as JSON cell tables, a C++ header, CuTe layouts and F2 bases.

Every export is a view of one table, (lane, element) -> cell, read off the formulas: lane 13,
element a5 of the m16n8k16 ``.s8`` A operand is row 11, column 5 in all of them --
``cells[...]`` in JSON, ``row[13][5] == 11`` in the C header, the CuTe index
``11 + 16*5`` and the XOR of the F2 bases of lane 13 and element 5.

``export(layouts, fmt) -> (text, problems)`` is the entry for ``json``, ``c``, ``cute`` and
``f2``; problems name the layouts a format cannot express, with the reason.

The JSON export is the contract between the prover and everything that runs without it --
the GPU executor needs only numpy and CuPy, so it reads layouts from this JSON:

    {"layouts": [{"id", "instruction", "shape", "operand", "types", "tile",
                  "elements_per_thread", "map_hash", "register": {"kind", "count",
                  "per_register"},
                  "arrangement": "row" | "col" | "",
                  "groups": {"name", "count"}                          replicated only
                  "cells":  [{"lane", "element", "row", "col"}]                   dense
                  "cells":  [{"lane", "element", "row", "firstcol", "lastcol"}]   sparse A
                  "fields": [{"selector", "lane", "bit_lo", "bit_hi", "row",
                              "chunk", "slot"}]                                  metadata
                 }],
     "errata": [ ...the same records... ],                          --corrections only
     "smem":   [ ...shared-memory layouts (export_smem)... ],       whole catalog only
     "scale":  [ ...block-scale factor maps (export_scale)... ],    whole catalog only
     "datapath": [ ...tcgen05.mma data paths (export_datapath)... ],  whole catalog only
     "meta":   [ ...tcgen05.mma.sp metadata layouts (export_meta)... ],  whole catalog only
     "tc_scale": [ ...tcgen05 scale-factor layouts (export_tc_scale)... ]} whole catalog only

A table is stated once: a record whose cells are the first E elements of each thread of an
earlier or later record's (``model.cells.prefix_sources``, decided by comparing the tables)
carries ``"cells_from": {"id", "elements": E}`` instead of ``cells``; ``base.records.expand``
spells them out again and checks each against its ``map_hash``.  A layout stated for every N
(wgmma's accumulator ``wgmma.m64nNk16.D.f32``) has its cells at the largest N and ``"n"``,
the legal N: its layout at N is each thread's first N * 64 / 128 elements.  Cells are written
one object a line.

``map_hash`` is a hash of the cell table itself, so two layouts with different formulas but
the same map share it; GPU evidence records it, and CI compares it with the current
layouts to find stale evidence.

**Replicated operands** (m8n8k4 with .f16: four 8x8x4 products, one per quad-pair) carry
``groups`` and, in every cell, the ``group`` of its lane (``(lane >> 2) % 4``, from
``formal.model.layout.REPLICATION``); ``row`` and ``col`` stay within the lane's own product, as the
spec states them.  ``arrangement`` is the ``.row`` / ``.col`` qualifier an A or B layout was
written for ("" where the layout does not depend on one).

**Errata.**  ``export --corrections`` exports the catalog as ``corrections.md`` fixes it --
the maps a GPU must confirm -- and, under ``errata``, the catalog's layouts as the spec
writes them wherever a correction changes the map (same id, the spec's ``map_hash``, and
``corrected_hash`` naming the map that replaces it), so that the GPU can show the spec's
formula failing on the same run (``erratum_records``).

The C header (``to_c``) gives each layout a namespace of ``constexpr`` tables indexed
``[lane][element]`` (sparse A: ``row``/``firstcol``/``lastcol``; metadata:
``[selector][lane][field]`` with ``row``/``chunk``/``slot`` and the field's ``bit_lo`` /
``bit_hi``), -1 where a lane holds nothing or no case applies.  The CuTe and F2 forms live
in ``export_cute`` and ``export_f2``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from ..base.hashes import int_rows_written, object_format
from ..model.cells import cell_rows, cell_texts, cells_and_names, map_hash, prefix_sources
from ..model.layout import Layout


def register_facts(lay: Layout, by_id: dict[str, Layout] | None = None) -> dict[str, Any] | None:
    tf = lay.table
    if tf is None and lay.reference_of and by_id:
        target = by_id.get(lay.reference_of)
        tf = target.table if target is not None else None
    if tf is None or tf.fragment is None:
        return None
    fr = tf.fragment
    per = fr.per_register.value if fr.per_register else (
        fr.total.value // max(1, fr.registers.value) if fr.total else None)
    return {"kind": fr.register_kind, "count": fr.registers.value, "per_register": per}


def layout_record(lay: Layout, by_id: dict[str, Layout] | None = None,
                  table: tuple[str, list[dict[str, Any]]] | None = None,
                  cells_from: tuple[str, int] | None = None) -> dict[str, Any]:
    """The record of one layout; with ``cells_from`` (its table is the first E elements of
    that layout's, ``prefix_sources``) the record points there instead of listing cells."""
    if cells_from is not None:  # its rows are another's: only its hash is written
        kind, texts, _e = cell_texts(lay)
        rows: list[dict[str, Any]] = []
        held = texts.count > 0
    else:
        kind, rows = table if table is not None else cell_rows(lay)
        held = bool(rows)
    rec: dict[str, Any] = {
        "id": lay.id, "instruction": lay.instruction, "shape": lay.shape_text,
        "operand": lay.operand, "types": list(lay.types), "tile": list(lay.tile),
        "elements_per_thread": lay.elements, "source": lay.source,
        "map_hash": map_hash(lay) if held else None,
        "register": register_facts(lay, by_id),
    }
    if lay.n_values:
        rec["n"] = list(lay.n_values)
    if lay.arrangement:
        rec["arrangement"] = lay.arrangement
    rep = lay.groups
    if rep is not None and lay.operand != "metadata":
        rec["groups"] = {"name": rep[0], "count": rep[1]}
    if lay.operand == "metadata" and lay.metadata is not None:
        rec["selectors"] = list(lay.metadata.selectors)
    if cells_from is not None:
        rec["cells_from"] = {"id": cells_from[0], "elements": cells_from[1]}
    else:
        rec[kind] = rows
    return rec


def erratum_records(as_written: Sequence[Layout], corrected: Sequence[Layout]) \
        -> list[dict[str, Any]]:
    """The layouts of ``as_written`` (the spec's text) whose map a correction changes: same
    id in ``corrected``, another ``map_hash``.  Each record names the map replacing it as
    ``corrected_hash``."""
    fixed = {lay.id: lay for lay in corrected}
    by_id = {lay.id: lay for lay in as_written}
    out = []
    for lay in as_written:
        other = fixed.get(lay.id)
        if other is None:
            continue
        mine, theirs = map_hash(lay), map_hash(other)
        if mine != theirs:
            rec = layout_record(lay, by_id)
            rec["corrected_hash"] = theirs
            out.append(rec)
    return out


def export_records(layouts: Sequence[Layout], errata: Sequence[Layout] | None = None,
                   smem: Sequence[dict[str, Any]] | None = None,
                   device: Mapping[str, Sequence[dict[str, Any]]] | None = None) \
        -> dict[str, Any]:
    """The layouts as the JSON export's values (plain dicts, lists, strings and numbers), each
    table stated once (``cells_from``); with ``errata`` (the spec's layouts that ``layouts``
    correct), also the ``errata`` list of ``erratum_records`` (whole tables); with ``smem``,
    the ``smem`` list of the shared-memory layouts' records (``export_smem``); with ``device``,
    its further lists for the GPU runner (``catalog_device_records``: ``scale``, ``datapath``)."""
    layouts = list(layouts)
    by_id = {lay.id: lay for lay in layouts}
    refs = prefix_sources(layouts)
    doc: dict[str, Any] = {"layouts": [layout_record(lay, by_id, None, refs.get(lay.id))
                                       for lay in layouts]}
    if errata is not None:
        doc["errata"] = erratum_records(errata, layouts)
    if smem:
        doc["smem"] = list(smem)
    for name, recs in (device or {}).items():
        doc[name] = list(recs)
    return doc


def catalog_device_records() -> dict[str, list[dict[str, Any]]]:
    """The catalog's layouts that the GPU runner reads beside the cell tables and the
    shared-memory layouts: the block-scale factor maps (``scale``, ``export_scale``) and the
    tcgen05.mma data paths (``datapath``, ``export_datapath``), the tcgen05.mma.sp metadata
    layouts (``meta``, ``export_meta``), the one-CTA tcgen05 scale-factor layouts
    (``tc_scale``, ``export_tc_scale``)."""
    from .export_datapath import catalog_datapath_records
    from .export_meta import catalog_meta_records
    from .export_scale import catalog_scale_records
    from .export_tc_scale import catalog_tc_scale_records
    return {"scale": catalog_scale_records(), "datapath": catalog_datapath_records(),
            "meta": catalog_meta_records(), "tc_scale": catalog_tc_scale_records()}


def to_json(layouts: Sequence[Layout], errata: Sequence[Layout] | None = None,
            smem: Sequence[dict[str, Any]] | None = None,
            device: Mapping[str, Sequence[dict[str, Any]]] | None = None) -> str:
    """``export_records`` as JSON text."""
    return _dump(export_records(layouts, errata, smem, device)) + "\n"


def _dump(value: Any, indent: str = "") -> str:
    """JSON as ``json.dumps(indent=1)`` writes it, except that a list of flat objects or flat
    lists (a cell table, a scale map's places) has one row a line."""
    inner = indent + " "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        rows = _int_rows(value)
        if rows is not None:
            return "[\n" + ",\n".join(inner + r for r in rows) + f"\n{indent}]"
        if all(isinstance(x, (dict, list)) and x and not any(
                isinstance(y, (dict, list)) for y in (x.values() if isinstance(x, dict) else x))
               for x in value):
            return "[\n" + ",\n".join(inner + json.dumps(x) for x in value) + f"\n{indent}]"
        return "[\n" + ",\n".join(inner + _dump(x, inner) for x in value) + f"\n{indent}]"
    return json.dumps(value)


def _int_rows(value: list[Any]) -> list[str] | None:
    """``json.dumps`` of each row of a table whose rows are all objects with the same keys in
    the same order, or all lists of one length, holding integers only (a cell table, a
    scale map's places): one %-format mapped over the rows.  None for any other list."""
    first = value[0]
    if type(first) is dict:
        keys = tuple(first)
        if len(keys) < 2 or not all(type(k) is str for k in keys) \
                or not all(type(x) is dict for x in value) or set(map(tuple, value)) != {keys}:
            return None
        values = list(map(itemgetter(*keys), value))
        fmt = object_format(keys)
    elif type(first) is list:
        if len(first) < 2 or not all(type(x) is list for x in value) \
                or set(map(len, value)) != {len(first)}:
            return None
        values = list(map(tuple, value))
        fmt = "[" + ", ".join(["%d"] * len(first)) + "]"
    else:
        return None
    return int_rows_written(fmt, values)


# ---- C++ header ----------------------------------------------------------------------------------


def c_name(lay: Layout) -> str:
    """A C identifier from the id: ``mma.m16n8k16.CD.f32@u8-s8`` ->
    ``mma_m16n8k16_CD_f32_at_u8_s8``."""
    text = lay.short_id.replace("@", "_at_").replace("#", "_v")
    name = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")
    return name if name and not name[0].isdigit() else f"l_{name}"


def _c_array(name: str, dims: Sequence[str], values: Any, ctype: str = "std::int16_t",
             ) -> list[str]:
    """``PTXLAYOUT_DEVICE constexpr <ctype> name[d0][d1] = {...};``, innermost rows a line."""
    head = f"PTXLAYOUT_DEVICE constexpr {ctype} {name}" + "".join(f"[{d}]" for d in dims) + \
        " = "

    def flat(v: Any) -> str:
        return "{" + ", ".join(str(x) for x in v) + "}"

    def nest(v: Any, depth: int, indent: str, last: bool) -> list[str]:
        comma = "" if last else ","
        if depth == 1:
            return [f"{indent}{flat(v)}{comma}"]
        lines = [f"{indent}{{"]
        for k, x in enumerate(v):
            lines += nest(x, depth - 1, indent + "    ", k + 1 == len(v))
        lines.append(f"{indent}}}{comma}")
        return lines

    if len(dims) == 1:
        return [head + flat(values) + ";"]
    body = nest(values, len(dims), "", True)
    return [head + body[0]] + body[1:-1] + [body[-1] + ";"]


def _c_dense(lay: Layout, names: tuple[str, ...],
             table: dict[tuple[int, int, int], tuple[Any, ...]]) -> tuple[list[str], list[str]]:
    n = lay.elements
    lines = [f"constexpr int kLanes = {lay.lanes};", f"constexpr int kElements = {n};",
             f"constexpr int kRows = {lay.tile[0]};", f"constexpr int kCols = {lay.tile[1]};"]
    problems: list[str] = []
    for k, field_name in enumerate(names):
        vals = []
        for t in range(lay.lanes):
            lane = []
            for i in range(n):
                out = table.get((0, t, i))
                v = out[k] if out is not None else None
                if v is None:
                    problems.append(f"{lay.id}: lane {t}, element {i}: no case of "
                                    f"'{field_name}' applies (-1 in the table)")
                    v = -1
                lane.append(v)
            vals.append(lane)
        lines += _c_array(field_name, ("kLanes", "kElements"), vals)
    return lines, problems


def _c_metadata(lay: Layout, table: dict[tuple[int, int, int], tuple[Any, ...]]
                ) -> tuple[list[str], list[str]]:
    md = lay.metadata
    assert md is not None
    sels = list(md.selectors)
    n = lay.elements
    sparsity = lay.sparsity
    bits = sparsity.index_bits if sparsity else 2
    lines = [f"constexpr int kLanes = {lay.lanes};", f"constexpr int kSelectors = {len(sels)};",
             f"constexpr int kFields = {n};  // {bits}-bit index fields per lane",
             f"constexpr int kRows = {lay.tile[0]};",
             f"constexpr int kChunks = {lay.shape.k // sparsity.chunk if sparsity else 0};"]
    lines += _c_array("selector_value", ("kSelectors",), sels, "int")
    lines += _c_array("bit_lo", ("kFields",), [i * bits for i in range(n)])
    lines += _c_array("bit_hi", ("kFields",), [i * bits + bits - 1 for i in range(n)])
    holds = [[int(any((s, t, i) in table for i in range(n))) for t in range(lay.lanes)]
             for s in sels]
    lines.append("// holds[s][lane]: 1 when the lane supplies metadata for selector_value[s]")
    lines += _c_array("holds", ("kSelectors", "kLanes"), holds, "std::uint8_t")
    problems: list[str] = []
    for k, field_name in enumerate(("row", "chunk", "slot")):
        vals = []
        for s in sels:
            per_sel = []
            for t in range(lay.lanes):
                lane = []
                for i in range(n):
                    out = table.get((s, t, i))
                    v = out[k] if out is not None else -1
                    if v is None:
                        problems.append(f"{lay.id}: selector {s}, lane {t}, field {i}: no "
                                        f"case of '{field_name}' applies (-1 in the table)")
                        v = -1
                    lane.append(v)
                per_sel.append(lane)
            vals.append(per_sel)
        lines += _c_array(field_name, ("kSelectors", "kLanes", "kFields"), vals)
    return lines, problems


def to_c(layouts: Sequence[Layout]) -> tuple[str, list[str]]:
    """A C++17 / CUDA header of constexpr lookup tables, one namespace per layout."""
    ids = "\n".join(lay.id for lay in layouts)
    guard = "PTXLAYOUT_" + hashlib.sha256(ids.encode()).hexdigest()[:12].upper() + "_H"
    out = [
        "// Generated by ptxlayout (export --format c): fragment layouts as lookup tables.",
        "// Dense:     row[lane][element], col[lane][element]",
        "// Sparse A:  row / firstcol / lastcol [lane][element] (the lane's non-zeros of",
        "//            columns firstcol..lastcol of that row)",
        "// Metadata:  row / chunk / slot [selector][lane][field]; field f is bits",
        "//            bit_hi[f]..bit_lo[f] of the lane's metadata register",
        "// -1 marks a lane that holds nothing there, or an element no formula case covers.",
        "// Under nvcc the tables are __device__ (for kernels; host code can still use them in",
        "// constant expressions); define PTXLAYOUT_DEVICE as empty first for host-side tables.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <cstdint>",
        "",
        "#ifndef PTXLAYOUT_DEVICE",
        "#if defined(__CUDACC__)",
        "#define PTXLAYOUT_DEVICE __device__",
        "#else",
        "#define PTXLAYOUT_DEVICE",
        "#endif",
        "#endif",
        "",
        "namespace ptxlayout {",
        "",
    ]
    problems: list[str] = []
    used: dict[str, int] = {}
    names_of: dict[str, str] = {}
    layouts = list(layouts)
    refs = prefix_sources(layouts)
    for lay in layouts:
        if cell_texts(lay)[1].count:
            name = c_name(lay)
            used[name] = used.get(name, 0) + 1
            names_of[lay.id] = name if used[name] == 1 else f"{name}_{used[name]}"
    later: list[str] = []
    for lay in layouts:
        names, table = cells_and_names(lay)
        if not table or lay.id not in names_of:
            problems.append(f"{lay.id}: no formulas (the document gives this layout only as a "
                            "figure); not in the header")
            continue
        name = names_of[lay.id]
        types = "/".join("." + t for t in lay.types)
        head = [f"// {lay.id}: {lay.instruction}.{lay.shape_text} {lay.operand} {types}, "
                f"tile {lay.tile[0]} x {lay.tile[1]}",
                f"// {lay.document}:{lay.span.line} ({lay.source}); map hash {map_hash(lay)}",
                f"namespace {name} {{"]
        ref = refs.get(lay.id)
        if ref is not None:
            base = names_of.get(ref[0], "")
            body = [f"constexpr int kLanes = {lay.lanes};",
                    f"constexpr int kElements = {lay.elements};",
                    f"constexpr int kRows = {lay.tile[0]};",
                    f"constexpr int kCols = {lay.tile[1]};",
                    f"// elements 0..{lay.elements - 1} of {ref[0]}: index [lane][element] "
                    "with element < kElements"]
            body += [f"using {base}::{f};" for f in names]
            later += head + body + [f"}}  // namespace {name}", ""]
            continue
        out += head
        if lay.operand == "metadata":
            body, probs = _c_metadata(lay, table)
        else:
            body, probs = _c_dense(lay, names, table)
        out += body
        problems += probs
        out.append(f"}}  // namespace {name}")
        out.append("")
    out += later
    out += ["}  // namespace ptxlayout", "", f"#endif  // {guard}", ""]
    return "\n".join(out), problems


# ---- entry ------------------------------------------------------------------------------------


FORMATS = ("json", "c", "cute", "f2")


def export(layouts: Iterable[Layout], fmt: str, errata: Sequence[Layout] | None = None,
           smem: Sequence[dict[str, Any]] | None = None,
           device: Mapping[str, Sequence[dict[str, Any]]] | None = None) \
        -> tuple[str, list[str]]:
    """(text, problems): problems are layouts a format cannot express, with the reason.
    ``errata`` (json only): the spec's layouts the given ones correct (``to_json``)."""
    lays = list(layouts)
    if fmt == "json":
        return to_json(lays, errata, smem, device), []
    if fmt == "c":
        return to_c(lays)
    if fmt == "cute":
        from . import export_cute
        cres = [export_cute.to_cute(lay) for lay in lays]
        return export_cute.cute_text(cres), [f"{r.layout_id}: not expressible in CuTe, because "
                                           f"{r.reason}" for r in cres if not r.ok]
    if fmt == "f2":
        from . import export_f2
        fres = [export_f2.to_f2(lay) for lay in lays]
        return export_f2.f2_text(fres), [f"{r.layout_id}: not F2-linear, because {r.reason}"
                                         for r in fres if not r.ok]
    raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
