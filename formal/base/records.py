"""The JSON export's layout records as a reader needs them: every cell table spelled out.

The export states a table once: a record whose cells are the first E elements of another
record's carries ``"cells_from": {"id": that record's id, "elements": E}`` instead of
``cells``.  wgmma's accumulator ``m64n8k16`` D (4 elements a thread) points at the
``m64n256k16`` D (128 elements a thread): its cells are those of elements 0..3.

``expand(records)`` returns the records with ``cells`` filled in, each expanded table checked
against the record's own ``map_hash`` (``hashes.first_elements``: the hash of those cells
under the record's instruction, shape and operand): a reference to a missing record, to a
record without cells, to fewer elements than asked, or whose cells hash to another
``map_hash``, is a ``ValueError`` naming the record.  Standard library only: the GPU
runner reads the export with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .hashes import cells_at, row_texts


def expand(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    by_id = {str(r.get("id")): r for r in records if r.get("cells")}
    texts: dict[str, list[str]] = {}  # each base table's rows written once, for every N
    out: list[dict[str, Any]] = []
    for rec in records:
        ref = rec.get("cells_from")
        if not ref:
            out.append(dict(rec))
            continue
        lid = str(rec.get("id", ""))
        if not isinstance(ref, Mapping):
            raise ValueError(f"{lid}: 'cells_from' is not an object")
        base = by_id.get(str(ref.get("id")))
        if base is None:
            raise ValueError(f"{lid}: 'cells_from' names {ref.get('id')!r}, which is not a "
                             "record with cells in this export")
        try:
            n = int(ref.get("elements"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"{lid}: 'cells_from' has no element count") from None
        bid = str(ref.get("id"))
        if bid not in texts:
            texts[bid] = row_texts(base["cells"])
        cells, got = cells_at(str(rec.get("instruction")), str(rec.get("shape")),
                              str(rec.get("operand")), base["cells"], n, texts[bid])
        if not cells or 1 + max(int(c["element"]) for c in cells) < n:
            raise ValueError(f"{lid}: {base.get('id')} has fewer than {n} elements a thread")
        if rec.get("map_hash") and got != rec.get("map_hash"):
            raise ValueError(f"{lid}: the first {n} elements of {base.get('id')} hash to "
                             f"{got}, the record says {rec.get('map_hash')}")
        new = {k: v for k, v in rec.items() if k != "cells_from"}
        new["cells"] = cells
        out.append(new)
    return out
