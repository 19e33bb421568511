"""Hardware verdicts kept by everything they read: ``verdicts/hardware.json`` of the cache folder.

The ``hardware`` obligation (``prove/hardware.py``) is a pure comparison: the runs of the GPU
evidence against the map hash of a layout's enumerated cell table, for the variants the layout
serves.  What it reads is (1) the evidence files' bytes, (2) the code (the variant table, the
judge, the hash writer, the catalog a confirmed table may come from), (3) the layout's facts
that pick its variants and name its hashes (id, document, instruction, operand, shape, types,
arrangement, lanes, elements, and the shape and element count at each N of ``n_values``), and
(4) its enumerated map (``model/cells.table_digest``: a SHA-256 of the arrays as bytes).  A
kept verdict is keyed by a SHA-256 of all four, so it is the verdict the judge would give again.

A toy: ``mma.m16n8k16.A.f16-bf16`` enumerates arrays whose digest is ``5e0a...``; with the
shipped evidence (two files, their SHA-256s ``91c4...`` and ``0b7e...``) and this package's
files (``base.hashes.code_key``: ``c2d1...``) its key is ``sha256(["ptxlayout-hardware/1",
"c2d1...", "<evidence digest>", id, ..., "cells", 512, "5e0a..."])`` and its entry the verdict
as JSON text -- ``{"status": "proved", "message": "confirmed on NVIDIA H100 ...", ...}`` --
with the map hash it matched (null where the verdict read none: the judge writes a map's
hash only where a run can speak to it, ``hardware._Own``).  Edit the formula (other
arrays), re-record a run (other bytes) or any file of the package (another code key):
another key, judged afresh.

What is never kept: a verdict that read the layouts the same document states for the other
operands (``confirm.stated_in``: the model, not the layout, decides those), one of a layout
whose map has no int64 digest or no map, and one whose JSON text does not read back as the
very same value (tuples, say).  Every map is still enumerated and every formula obligation
decided by enumeration each run; only the comparison with the runs is skipped.  One file:
``{"schema", "code", "verdicts": {key: [verdict JSON text, map hash or null]}, "digest"}``,
with a SHA-256 of the verdicts; a file whose schema or digest does not check is ignored with a
warning and written again, an entry whose text is not a verdict is judged afresh and
replaced, and a file written by other code is replaced silently.  Bounded: past ``LIMIT``
keys it keeps the newest half.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..base import cache as disk
from ..base.hashes import code_key
from .verdicts import Verdict

FOLDER = "verdicts"
NAME = "hardware.json"
SCHEMA = "ptxlayout-hardware/1"
LIMIT = 4096
STATUSES = ("proved", "refuted", "unknown", "error", "not-applicable", "unconfirmed")


def verdict_key(source: str, lay: Any, table: tuple[str, int, str | None]) -> str | None:
    """The key of ``lay``'s hardware verdict against the evidence whose files' digest is
    ``source`` (``Evidence.source_digest``), its map's ``table_digest`` being ``table``; None
    where the map has no digest (nothing kept)."""
    kind, count, digest = table
    if digest is None:
        return None
    at = [[n, lay.at(n).shape_text, lay.at(n).elements] for n in lay.n_values]
    what = [SCHEMA, code_key(), source, lay.id, lay.document, lay.instruction, lay.operand,
            str(lay.shape), lay.shape_text, list(lay.types), lay.arrangement, lay.lanes,
            lay.elements, at, kind, count, digest]
    return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()


def verdict_text(v: Verdict) -> str | None:
    """The verdict as JSON text, where it reads back as the very same value (else None)."""
    if v.span is not None or v.name != "hardware":
        return None
    value = [v.status, v.message, v.counterexample, v.severity, v.method, v.note]
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return None
    if v.counterexample is None and {*map(type, value)} == _TEXT_OR_NONE:
        return text  # texts (and null) read back as themselves: nothing to compare
    return text if _same(json.loads(text), value) else None


_TEXT_OR_NONE = {str, type(None)}


def _same(a: Any, b: Any) -> bool:
    """Equal, types included (a tuple is not a list, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _verdict(text: Any) -> Verdict | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    if not (isinstance(value, list) and len(value) == 6 and value[0] in STATUSES
            and all(isinstance(x, str) for x in (value[1], *value[3:]))):
        return None
    return Verdict("hardware", value[0], value[1], value[2], None, value[3], value[4], value[5])


def _is_kept(hit: Any) -> bool:
    return isinstance(hit, list) and len(hit) == 2 and isinstance(hit[0], str) \
        and (hit[1] is None or isinstance(hit[1], str))


STORE = disk.KeptFile(FOLDER, NAME, SCHEMA, "verdicts", code_key, _is_kept, LIMIT)


def _digest(verdicts: dict[str, Any]) -> str:
    return STORE.digest(verdicts)


class KeptVerdicts(disk.Kept):
    """The kept hardware verdicts of one run: read once (``open``), added to as verdicts are
    judged (``put``), written back once (``close``) where anything was added
    (``base.cache.Kept``; ``open``: none kept is empty, None where no cache folder is in
    use)."""

    SPEC = STORE

    def __init__(self, spec: disk.KeptFile, verdicts: dict[str, Any] | None = None) -> None:
        super().__init__(spec, verdicts)
        self.hits = 0

    @property
    def verdicts(self) -> dict[str, Any]:
        return self.values

    def get(self, key: str) -> tuple[Verdict, str | None] | None:
        """The verdict kept under ``key`` and the map hash it matched (None: none kept, or
        an entry that is not a verdict: judged afresh and written again)."""
        hit = self.values.get(key)
        if hit is None:
            return None
        v = _verdict(hit[0])
        if v is None:
            return None
        self.hits += 1
        return v, hit[1]

    def put(self, key: str, v: Verdict, h: str | None) -> None:  # type: ignore[override]
        text = verdict_text(v)
        if text is not None:
            super().put(key, [text, h])


def _valid(entry: Any) -> dict[str, Any] | None:
    return STORE.valid(entry)


def judged(ev: Any, lay: Any, stated: Any, kept: KeptVerdicts) -> Verdict:
    """``ev.verdict(lay, stated)``, kept in ``kept`` by what it reads (the module's
    docstring): a kept verdict under this key is the judge's answer; a new one is kept unless
    it read ``stated`` or the evidence was not loaded from files (``source_digest`` None)."""
    from ..model.cells import table_digest
    source = ev.source_digest()
    key = verdict_key(source, lay, table_digest(lay)) if source is not None else None
    if key is not None:
        hit = kept.get(key)
        if hit is not None:
            ev.remember(lay, hit[1])  # as judging it would: its table found by its hash
            return hit[0]
    read: list[bool] = []

    def asked(*args: Any) -> Any:
        read.append(True)
        return stated(*args)

    v: Verdict = ev.verdict(lay, asked if stated is not None else None)
    if key is not None and not read:
        kept.put(key, v, ev.hashed(lay))
    return v
