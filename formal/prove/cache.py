"""Z3's answers kept on disk between runs: a hit skips Z3, never the enumeration.

The expensive part of a fresh ``ptxlayout prove`` is building Z3 terms and solving the one
combined query a map gets ("does any of cases / in-range / injective / sparse-chunks fail?").
Z3's answer is written down as one JSON file in ``<cache folder>/proofs`` (``base.cache``: the
user's own folder, checked before use), named by a key: a SHA-256 of this tool's version,
Z3's version, the obligation and the layout's formulas (``Layout.proof_key``: each expression
as its tree, ``model/sreprs.tree``, never printed) with everything else the query depends on
(elements, lanes, tile, operand, sparsity, the chunk rule, Z3's time limit).  For the toy
``row = i``, ``col = lane`` the entry reads::

    {"schema": "ptxlayout-proof/1", "tool": "0.1.0", "z3": "4.13.0", "key": "9f2c...",
     "obligation": "cases+in-range+injective", "z3_answer": "unsat"}

and for ``col = lane >> 1``, whose lanes 0 and 1 collide, Z3's answer to each obligation::

    {..., "z3_answer": "sat", "answers": {"in-range": "proved", "injective": "refuted"}}

The same holds for ``surjective`` where Z3 decides it (no counting argument applies) and for the
``composes`` relations (``relation_key``: both layouts' formula keys and the arrangement), and
for any other query a caller names in full (``z3_unsat``: the shared-memory descriptor relation,
whose enumeration visits the same tile).  On the next run the same map finds the entry and Z3 is
skipped -- but the enumeration still decides every obligation on its own and must agree, and
every witness reported is the enumeration's.  An entry that says "proved" for a map the
enumeration refutes (or "refuted" for one it proves) is a lie: it is ignored with a warning and
removed, and Z3 runs as if there were no cache, so a cache can never turn a refutation into a
proof.  Nothing is kept where Z3 gave up (``unknown``), and nothing is used or kept when the
cross-check is off.  An entry that is not valid JSON, has another schema, version or key, is
ignored with a warning.

A run writes its new answers at its end as ONE file, ``proofs/batch-<hash>.json``::

    {"schema": "ptxlayout-proof-batch/1", "entries": {"9f2c....json": {...}, ...}}

each entry the very one a file of its own would hold, under the name that file would have
(``flush``; atomic, as every cache write).  The reader looks a key up in this run's answers,
then in the batches (read once, and again only when one of them changed), then in a file of
its own (as earlier versions wrote them); the checks on an entry are the same wherever it
was found.  A cold catalog run kept 357 files, each a create and a rename in the folder
(190-370 ms of CPU on the shared 2-core machine); a warm one read about 240.  From the
ninth batch on, a run merges them all into its own (old versions' entries, which no key of
this version names, are dropped then; past 20,000 entries they are all dropped), so a folder
holds at most nine, each well under the reader's 8 MiB.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..base.memo import keep_bounded
from ..model.layout import Layout, expression_key

SCHEMA = "ptxlayout-proof/1"
BATCH_SCHEMA = "ptxlayout-proof-batch/1"
SUBFOLDER = "proofs"
MERGE_AT = 9  # batches in the folder: the next flush writes one with all their entries
MERGE_MOST = 20_000  # entries (about 5 MB): more, and the old batches are dropped instead


@cache
def _z3_version() -> str:
    import z3
    return str(z3.get_version_string())


def entry_key(lay: Layout, obligation: str, spec: Any, timeout_ms: int) -> str:
    """The key of an obligation of a layout's map (stable across processes and machines).
    The time limit is part of it: a run with another limit asks Z3 again, so its report is
    the one it would give without a cache.  Worked out once per layout object and question
    (a run asks it when it reads an entry and again when it writes one)."""
    memo = (id(lay), obligation, repr(spec), timeout_ms)
    hit = _KEYS.get(memo)
    if hit is not None and hit[0] is lay:
        return hit[1]
    what = [SCHEMA, __version__, _z3_version(), obligation, lay.proof_key(), lay.elements,
            lay.lanes, list(lay.tile), lay.operand, bool(lay.sparse_a), memo[2],
            _text(lay.groups), timeout_ms]
    key = hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()
    # the layout is kept: its id names no other while here
    keep_bounded(_KEYS, memo, (lay, key), 4096)
    return key


_KEYS: dict[tuple[Any, ...], tuple[Layout, str]] = {}


@lru_cache(maxsize=256)
def _text(groups: Any) -> str:
    """``repr`` of a replication (a SymPy expression prints slowly), once per distinct one:
    the catalog's 196 keys name two."""
    return repr(groups)


def relation_key(rel: Any, producer: Layout, consumer: Layout, timeout_ms: int) -> str:
    """The key of a ``composes`` relation (``formal.prove.composes``): both layouts'
    normalized formulas and domains, and the arrangement's expressions."""
    a = rel.arrangement
    what = [SCHEMA, __version__, _z3_version(), "composes",
            *[[lay.proof_key(), lay.lanes, lay.elements] for lay in (producer, consumer)],
            [expression_key(x) for x in (a.lane, a.element, a.row, a.col)], timeout_ms]
    return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()


@dataclass
class ProofCache:
    """The proof cache of one run: the checked folder is opened once (``open``) and each
    entry read or written through it."""

    fd: int | None
    where: str
    hits: int = 0
    misses: int = 0
    rejected: list[str] = field(default_factory=list)
    folder: Any = None  # the batches' entries and whether files of their own are here

    @classmethod
    def open(cls) -> ProofCache | None:
        top = disk.root()
        if top is None:
            return None
        where = os.path.join(top, SUBFOLDER)
        with disk.folder(SUBFOLDER) as fd:
            if fd is None:
                return None
            return cls(os.dup(fd), where)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def proved(self, key: str, obligation: str) -> bool:
        """Did Z3 answer *unsat* for this key in an earlier run (a valid entry says so)?"""
        return self.answers(key, obligation, []) is not None

    def answers(self, key: str, obligation: str, names: list[str]) -> dict[str, str] | None:
        """Z3's answer to each of ``names`` in an earlier run: all ``proved`` for an *unsat*
        entry, else the proved / refuted of each from an entry written where the combined
        query was *sat* (``store_answers``); None when there is no valid entry."""
        if self.fd is None:
            return None
        name = f"{key}.json"
        entry, where = self._entry(name)
        if entry is None:
            self.misses += 1
            return None
        want = _head(key, obligation)
        if entry == {**want, "z3_answer": "unsat"}:
            self.hits += 1
            return {n: "proved" for n in names}
        got = entry.get("answers") if isinstance(entry, dict) else None
        if entry == {**want, "z3_answer": "sat", "answers": got} and isinstance(got, dict) \
                and sorted(got) == sorted(names) \
                and all(v in ("proved", "refuted") for v in got.values()) \
                and "refuted" in got.values():
            self.hits += 1
            return dict(got)
        disk.warn(where, "not an entry of this version for this key (ignored)")
        self.misses += 1
        return None

    def _entry(self, name: str) -> tuple[Any, str]:
        """The entry named ``name`` (this run's, a batch's or a file's of its own) and the
        place a warning names: the file, or ``batch-...json:name``."""
        assert self.fd is not None
        mine = _PENDING.get(self.where, {})
        if name in mine:
            return mine[name], os.path.join(self.where, name)
        if self.folder is None or self.folder[0] != _WRITTEN[0]:
            # the folder listed once a ProofCache, and again after a batch was written
            self.folder = (_WRITTEN[0], *_batches(self.fd, self.where))
        _at, index, loose = self.folder
        batched = index.get(name)
        if batched is not None:
            return batched[1], os.path.join(self.where, f"{batched[0]}:{name}")
        got = disk.read_json(self.fd, name, self.where) if loose else None
        return got, os.path.join(self.where, name)

    def store_answers(self, key: str, obligation: str, answers: dict[str, str]) -> None:
        """Z3's proved / refuted of each obligation, where the combined query was *sat*."""
        if self.fd is not None:
            _keep(self.where, f"{key}.json", {**_head(key, obligation), "z3_answer": "sat",
                                  "answers": answers})

    def store(self, key: str, obligation: str) -> None:
        if self.fd is not None:
            _keep(self.where, f"{key}.json", {**_head(key, obligation), "z3_answer": "unsat"})

    def reject(self, key: str, why: str) -> None:
        """An entry the enumeration contradicts: warn, remove it, and never trust it again
        (a batch holding it is removed, its other entries kept in this run's)."""
        self.rejected.append(key)
        name = f"{key}.json"
        if self.fd is None:
            disk.warn(os.path.join(self.where, name), why)
            return
        _PENDING.get(self.where, {}).pop(name, None)
        index, _loose = _batches(self.fd, self.where)
        batched = index.get(name)
        if batched is None:
            disk.warn(os.path.join(self.where, name), why)
            disk.remove(self.fd, name)
            return
        disk.warn(os.path.join(self.where, f"{batched[0]}:{name}"), why)
        for other, (batch, entry) in list(index.items()):
            if batch == batched[0]:
                del index[other]
                if other != name:
                    _keep(self.where, other, entry)
        disk.remove(self.fd, batched[0])
        disk.remove(self.fd, name)
        _WRITTEN[0] += 1


# This run's answers not yet written (file name -> entry), and each folder's batches as read
# (folder -> (the batches' names, sizes and times), {entry name: (batch, entry)}).
_PENDING: dict[str, dict[str, dict[str, Any]]] = {}  # folder -> its entries
_READ: dict[str, tuple[Any, dict[str, tuple[str, Any]]]] = {}
_Index = dict[str, tuple[str, Any]]
_AT_EXIT: list[bool] = []
_WRITTEN = [0]  # batches written or removed by this process


def _keep(where: str, name: str, entry: dict[str, Any]) -> None:
    _PENDING.setdefault(where, {})[name] = entry
    if not _AT_EXIT:  # written at the latest when the process ends
        import atexit
        atexit.register(flush)
        _AT_EXIT.append(True)


def _batches(fd: int, where: str) -> tuple[_Index, bool]:
    """Every entry of the folder's batches (name -> (batch, entry)), read again only when a
    batch file was added, removed or changed since the last reading; and whether any other
    ``.json`` file is there (an entry in a file of its own)."""
    try:
        listed = os.listdir(fd)
        names = sorted(n for n in listed if n.startswith("batch-") and n.endswith(".json"))
        seen = [(n, st.st_size, st.st_mtime_ns, st.st_ino) for n in names
                for st in [os.stat(n, dir_fd=fd, follow_symlinks=False)]]
    except OSError:
        return {}, True
    loose = len(names) < sum(n.endswith(".json") for n in listed)
    hit = _READ.get(where)
    if hit is not None and hit[0] == seen:
        return hit[1], loose
    index: dict[str, tuple[str, Any]] = {}
    for n in names:
        batch = disk.read_json(fd, n, where)
        if batch is None:
            continue
        entries = batch.get("entries") if isinstance(batch, dict) else None
        if not isinstance(entries, dict) or batch.get("schema") != BATCH_SCHEMA:
            disk.warn(os.path.join(where, n), "not a batch of this version (ignored)")
            continue
        for name, entry in entries.items():
            index.setdefault(name, (n, entry))
    _READ[where] = (seen, index)
    return index, loose


def flush() -> None:
    """Write this run's new answers as one batch file (nothing when there are none); from
    ``MERGE_AT`` batches on, the new one holds every entry of this version that they hold,
    and they are removed."""
    where = os.path.join(disk.root() or "", SUBFOLDER)
    entries = dict(sorted(_PENDING.get(where, {}).items()))
    _PENDING.clear()  # another folder's (the configuration changed meanwhile) are dropped
    if not entries:
        return
    with disk.folder(SUBFOLDER) as fd:
        if fd is None:
            return
        index, _loose = _batches(fd, where)
        old = sorted({batch for batch, _e in index.values()})
        if len(old) + 1 < MERGE_AT:
            old = []
        elif len(index) < MERGE_MOST:
            mine = {"tool": __version__, "z3": _z3_version()}
            entries = dict(sorted({**{n: e for n, (_b, e) in index.items()
                                      if isinstance(e, dict) and
                                      {k: e.get(k) for k in mine} == mine},
                                   **entries}.items()))
        text = json.dumps(entries, sort_keys=True)
        name = f"batch-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:40]}.json"
        if disk.write_json(fd, name, {"schema": BATCH_SCHEMA, "entries": entries}):
            for batch in old:
                if batch != name:
                    disk.remove(fd, batch)
        _WRITTEN[0] += 1


def query_key(what: list[Any], obligation: str) -> str:
    """The key of the query that ``what`` (JSON values) names in full (``z3_unsat``'s)."""
    return hashlib.sha256(json.dumps([SCHEMA, __version__, _z3_version(), obligation, what])
                          .encode("utf-8")).hexdigest()


_HELD: list[ProofCache | None] = []  # the folder ``held_open`` opened, innermost last


@contextmanager
def held_open() -> Iterator[None]:
    """Inside, every ``z3_unsat`` reads and writes through one open proof cache, its folder
    opened and checked once (a family asks some fifty times; each call opened, checked and
    closed the folder again).  Entries are read and written as each call always did."""
    store = ProofCache.open()
    _HELD.append(store)
    try:
        yield
    finally:
        _HELD.pop()
        if store is not None:
            store.close()


def z3_unsat(what: list[Any], obligation: str, solve: Callable[[], bool]) -> bool:
    """Z3's *unsat* to the query that ``what`` (JSON values) names in full, from an earlier
    run's entry, else ``solve()``'s answer (True: *unsat*; the caller's ``solve`` may take it
    from a disjunction of this run that holds the query: ``datapath``'s, the packing's and
    the descriptors' groups), kept when it is.  The caller's enumeration runs whatever this
    answers; only Z3's half is skipped.  With the cache off (``--no-cache``, no folder) it is
    ``solve()``.  The folder ``held_open`` holds, where one is held, else its own."""
    key = query_key(what, obligation)
    held = bool(_HELD)
    store = _HELD[-1] if held else ProofCache.open()
    try:
        if store is not None and store.proved(key, obligation):
            return True
        unsat = solve()
        if unsat and store is not None:
            store.store(key, obligation)
        return unsat
    finally:
        if store is not None and not held:
            store.close()


def _head(key: str, obligation: str) -> dict[str, Any]:
    """What every entry of this version for ``key`` starts with."""
    return {"schema": SCHEMA, "tool": __version__, "z3": _z3_version(), "key": key,
            "obligation": obligation}
