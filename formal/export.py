"""Exports: layouts as JSON cell tables (and, with the figures issue, C, CuTe and F2 forms).

The JSON export is the contract between the prover and everything that runs without it --
the GPU executor needs only numpy and CuPy, so it reads layouts from this JSON:

    {"layouts": [{"id", "instruction", "shape", "operand", "types", "tile",
                  "elements_per_thread", "map_hash", "register": {"kind", "count",
                  "per_register"},
                  "cells":  [{"lane", "element", "row", "col"}]                   dense
                  "cells":  [{"lane", "element", "row", "firstcol", "lastcol"}]   sparse A
                  "fields": [{"selector", "lane", "bit_lo", "bit_hi", "row",
                              "chunk", "slot"}]                                  metadata
                 }]}

``map_hash`` is a hash of the cell table itself, so two layouts with different formulas but
the same map share it; GPU evidence records it, and CI compares it with the current
layouts to find stale evidence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from .model import Layout
from .prove import cells_and_names


def cell_rows(lay: Layout) -> tuple[str, list[dict[str, Any]]]:
    """('cells' | 'fields', rows) in (selector, lane, element) order."""
    names, table = cells_and_names(lay)
    rows: list[dict[str, Any]] = []
    if lay.operand == "metadata":
        sparsity = lay.sparsity
        bits = sparsity.index_bits if sparsity else 2
        for (s, t, i), out in sorted(table.items()):
            if None in out:
                continue
            rows.append({"selector": s, "lane": t, "bit_lo": i * bits,
                         "bit_hi": i * bits + bits - 1, "row": out[0], "chunk": out[1],
                         "slot": out[2]})
        return "fields", rows
    for (_s, t, i), out in sorted(table.items()):
        if None in out:
            continue
        row = {"lane": t, "element": i}
        row.update(dict(zip(names, out)))
        rows.append(row)
    return "cells", rows


def map_hash(lay: Layout) -> str:
    """A hash of the (lane, element) -> cell table: what the GPU confirms."""
    kind, rows = cell_rows(lay)
    h = hashlib.sha256()
    h.update(f"{lay.instruction}|{lay.shape}|{lay.operand}|{kind}|".encode())
    for r in rows:
        h.update(json.dumps(r, sort_keys=True).encode())
    return h.hexdigest()[:16]


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


def layout_record(lay: Layout, by_id: dict[str, Layout] | None = None) -> dict[str, Any]:
    kind, rows = cell_rows(lay)
    rec: dict[str, Any] = {
        "id": lay.id, "instruction": lay.instruction, "shape": str(lay.shape),
        "operand": lay.operand, "types": list(lay.types), "tile": list(lay.tile),
        "elements_per_thread": lay.elements, "source": lay.source,
        "map_hash": map_hash(lay) if rows else None,
        "register": register_facts(lay, by_id),
    }
    if lay.operand == "metadata" and lay.metadata is not None:
        rec["selectors"] = list(lay.metadata.selectors)
    rec[kind] = rows
    return rec


def to_json(layouts: Sequence[Layout]) -> str:
    by_id = {lay.id: lay for lay in layouts}
    recs = [layout_record(lay, by_id) for lay in layouts]
    return json.dumps({"layouts": recs}, indent=1, sort_keys=False) + "\n"


def export(layouts: Iterable[Layout], fmt: str) -> tuple[str, list[str]]:
    """(text, problems): problems are layouts a format cannot express, with the reason."""
    lays = list(layouts)
    if fmt == "json":
        return to_json(lays), []
    raise NotImplementedError(f"export format {fmt!r} is not implemented yet")
