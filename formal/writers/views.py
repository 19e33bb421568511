"""Views of the catalog's layouts kept between runs: one layout drawn without the catalog's model.

``ptxlayout show mma.m16n8k16.A.f16-bf16`` prints one 16 x 16 grid, but the long way to it
reads, parses and models the whole catalog (Lark, SymPy: about a second) to look at one
layout.  Here two kinds of entry, kept in the cache folder (``formal.base.cache``, subfolder
``views/``), make the second and every later run cheap:

* the **index** of the catalog (as written, and as ``corrections.md`` fixes it): for every
  layout the fields ``api.find`` matches a name on (id, short id, instruction, shape, operand,
  types) and the key of its figure.  It is keyed by ``code_key()``, a SHA-256 of every file of
  the package (the catalog's documents, the grammars and the code that reads them), so a
  changed catalog or a changed writer is a new index, never a stale one;
* the **figure** of a layout (``figures.Figure``: its panels of cells, each cell's holders
  and state) keyed by the layout's ``formula_hash`` and id under the same code key; and the
  **export** text of a set of layouts in one format.

A toy: with an index ``[{"id": "catalog:mma.m16n8k16.A.f16-bf16", ..., "figure": "3f0c.."}]``
the query ``mma.m16n8k16.A.f16`` matches that entry by its fields, and ``figure-3f0c...json``
holds its grid: the grid is printed with neither Lark nor SymPy imported.

Every entry is content-hashed: it holds its key and a SHA-256 of its payload, both checked on
load.  An entry that fails a check (edited, truncated, another key) is ignored with one
warning line and re-derived from the model, as is a missing one; a cache never changes what is
printed, only how soon (the goldens are printed both ways by the tests).  Nothing is read or
written with ``--no-cache``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..base import cache
from ..base.hashes import code_key
from .figures import Cell, Figure, Holder, Panel

if TYPE_CHECKING:

    from ..model.layout import Layout

SUB = "views"


@dataclass(frozen=True)
class IndexEntry:
    """A layout of the catalog as the index names it: what ``api.find`` matches on, and the
    key of its figure."""

    id: str
    short_id: str
    instruction: str
    shape: str
    operand: str
    types: tuple[str, ...]
    figure: str


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8")).hexdigest()


def _load(name: str, key: str) -> Any:
    """The payload of entry ``name`` when it carries ``key`` and its digest matches; None
    otherwise (with a warning where it was there but wrong)."""
    with cache.folder(SUB) as fd:
        if fd is None:
            return None
        where = os.path.join(cache.root() or "", SUB)
        doc = cache.read_json(fd, name, where)
    if doc is None:
        return None
    if not (isinstance(doc, dict) and doc.get("key") == key and "payload" in doc
            and doc.get("digest") == _digest(doc["payload"])):
        cache.warn(os.path.join(where, name), "its key or digest does not match its content "
                   "(re-derived)")
        return None
    return doc["payload"]


def _store(name: str, key: str, payload: Any) -> None:
    with cache.folder(SUB) as fd:
        if fd is not None:
            cache.write_json(fd, name, {"key": key, "digest": _digest(payload),
                                        "payload": payload})


def _name(kind: str, key: str) -> str:
    return f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:40]}.json"


def enabled() -> bool:
    """Whether the views can be kept (a cache folder is configured and on)."""
    return cache.root() is not None


# ---- the index --------------------------------------------------------------------------------


def figure_key(lay: Layout) -> str:
    return f"{code_key()}:{lay.id}:{lay.formula_hash()}"


def catalog_index(corrections: bool = False) -> list[IndexEntry]:
    """The index of the catalog (``corrections``: as corrected), from the cache or built from
    the catalog's model (and kept)."""
    key = f"{code_key()}:index:{int(corrections)}"
    name = _name("index", key)
    rows = _load(name, key)
    if isinstance(rows, list):
        try:
            return [IndexEntry(r[0], r[1], r[2], r[3], r[4], tuple(r[5]), r[6]) for r in rows]
        except (IndexError, TypeError):
            pass
    from ..model.resolve import catalog_model
    entries = [IndexEntry(lay.id, lay.short_id, lay.instruction, str(lay.shape), lay.operand,
                     tuple(lay.types), figure_key(lay))
               for lay in catalog_model(corrections).layouts]
    _store(name, key, [[e.id, e.short_id, e.instruction, e.shape, e.operand, list(e.types),
                        e.figure] for e in entries])
    return entries


def _layouts(entries: Sequence[IndexEntry], corrections: bool) -> list[Layout]:
    from ..model.resolve import catalog_model
    by_id = {lay.id: lay for lay in catalog_model(corrections).layouts}
    return [by_id[e.id] for e in entries]


# ---- figures ----------------------------------------------------------------------------------


def figure_record(fig: Figure) -> dict[str, Any]:
    """A figure as plain JSON (no marks: a named layout is drawn unmarked)."""
    return {"id": fig.layout_id, "title": fig.title, "subtitle": fig.subtitle, "kind": fig.kind,
            "unmapped": list(fig.unmapped), "message": fig.message,
            "panels": [{"title": p.title, "rows": p.rows, "cols": p.cols,
                        "col_labels": list(p.col_labels), "outside": list(p.outside),
                        "col_name": p.col_name,
                        "cells": [[[c.state, c.note, [[h.lane, h.text] for h in c.holders]]
                                   for c in row] for row in p.cells]}
                       for p in fig.panels]}


def figure_of_record(r: dict[str, Any]) -> Figure:
    panels = tuple(Panel(p["title"], p["rows"], p["cols"], tuple(p["col_labels"]),
                         tuple(tuple(Cell(tuple(Holder(lane, text) for lane, text in hs),
                                          state, note) for state, note, hs in row)
                               for row in p["cells"]),
                         tuple(p["outside"]), p["col_name"])
                   for p in r["panels"])
    return Figure(r["id"], r["title"], r["subtitle"], r["kind"], panels, tuple(r["unmapped"]),
                  r["message"])


def catalog_figure(entry: IndexEntry) -> Figure:
    """The figure of a layout of the catalog as written, from the cache or drawn (and kept)."""
    name = _name("figure", entry.figure)
    rec = _load(name, entry.figure)
    if isinstance(rec, dict):
        try:
            return figure_of_record(rec)
        except (KeyError, TypeError, ValueError):
            pass
    from .figures import figure
    fig = figure(_layouts([entry], False)[0])
    _store(name, entry.figure, figure_record(fig))
    return fig


# ---- exports ----------------------------------------------------------------------------------


def catalog_export(entries: Sequence[IndexEntry] | None, fmt: str,
                   corrections: bool) -> tuple[str, list[str]]:
    """``export.export`` of the named layouts of the catalog (None: every layout), with the
    spec's own layouts as errata where ``corrections`` and JSON ask for them."""
    named = "*" if entries is None else ",".join(e.figure for e in entries)
    key = f"{code_key()}:export:{fmt}:{int(corrections)}:{named}"
    name = _name("export", key)
    rec = _load(name, key)
    if isinstance(rec, dict) and isinstance(rec.get("text"), str) \
            and isinstance(rec.get("problems"), list):
        return rec["text"], [str(p) for p in rec["problems"]]
    from ..model.resolve import catalog_model
    from .export import export
    layouts = list(catalog_model(corrections).layouts) if entries is None \
        else _layouts(entries, corrections)
    errata = list(catalog_model(False).layouts) if corrections and fmt == "json" else None
    smem = device = None
    if fmt == "json" and entries is None:  # the shared-memory (and other) layouts GPU runs read
        from .export import catalog_device_records
        from .export_smem import catalog_smem_records
        smem, device = catalog_smem_records(), catalog_device_records()
    text, problems = export(layouts, fmt, errata, smem, device)
    if 3 * len(text) < 2 * cache.MAX_ENTRY:  # quoted (about 1.2 x), it is read back; a
        _store(name, key, {"text": text, "problems": list(problems)})  # larger one is remade
    return text, list(problems)
