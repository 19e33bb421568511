"""Z3's answers kept on disk between runs: a hit skips Z3, never the enumeration.

The expensive part of a fresh ``ptxlayout prove`` is building Z3 terms and solving the one
combined query a map gets ("does any of cases / in-range / injective / sparse-chunks fail?").
Z3's answer is written down as one JSON file in ``<cache folder>/proofs`` (``base.cache``: the
user's own folder, checked before use), named by a key: a SHA-256 of this tool's version,
Z3's version, the obligation and the layout's normalized formulas (``base.hashes.formula_hash``)
with everything else the query depends on (elements, lanes, tile, operand, sparsity, the chunk
rule, Z3's time limit).  For the toy ``row = i``, ``col = lane`` the entry reads::

    {"schema": "ptxlayout-proof/1", "tool": "0.1.0", "z3": "4.13.0", "key": "9f2c...",
     "obligation": "cases+in-range+injective", "z3_answer": "unsat"}

and for ``col = lane >> 1``, whose lanes 0 and 1 collide, Z3's answer to each obligation::

    {..., "z3_answer": "sat", "answers": {"in-range": "proved", "injective": "refuted"}}

The same holds for ``surjective`` where Z3 decides it (no counting argument applies) and for the
``composes`` relations (``relation_key``: both layouts' formula hashes and the arrangement), and
for any other query a caller names in full (``z3_unsat``: the shared-memory descriptor relation,
whose enumeration visits the same tile).  On the next run the same map finds the entry and Z3 is
skipped -- but the enumeration still decides every obligation on its own and must agree, and
every witness reported is the enumeration's.  An entry that says "proved" for a map the
enumeration refutes (or "refuted" for one it proves) is a lie: it is ignored with a warning and
removed, and Z3 runs as if there were no cache, so a cache can never turn a refutation into a
proof.  Nothing is kept where Z3 gave up (``unknown``), and nothing is used or kept when the
cross-check is off.  An entry that is not valid JSON, has another schema, version or key, is
ignored with a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..model.layout import Layout, srepr

SCHEMA = "ptxlayout-proof/1"
SUBFOLDER = "proofs"


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
    what = [SCHEMA, __version__, _z3_version(), obligation, lay.formula_hash(), lay.elements,
            lay.lanes, list(lay.tile), lay.operand, bool(lay.sparse_a), memo[2],
            repr(lay.groups), timeout_ms]
    key = hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()
    if len(_KEYS) >= 4096:
        _KEYS.clear()
    _KEYS[memo] = (lay, key)  # the layout is kept: its id names no other while here
    return key


_KEYS: dict[tuple[Any, ...], tuple[Layout, str]] = {}


def relation_key(rel: Any, producer: Layout, consumer: Layout, timeout_ms: int) -> str:
    """The key of a ``composes`` relation (``formal.prove.composes``): both layouts'
    normalized formulas and domains, and the arrangement's expressions."""
    a = rel.arrangement
    what = [SCHEMA, __version__, _z3_version(), "composes",
            *[[lay.formula_hash(), lay.lanes, lay.elements] for lay in (producer, consumer)],
            [srepr(x) for x in (a.lane, a.element, a.row, a.col)], timeout_ms]
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
        entry = disk.read_json(self.fd, name, self.where)
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
        disk.warn(os.path.join(self.where, name),
                  "not an entry of this version for this key (ignored)")
        self.misses += 1
        return None

    def store_answers(self, key: str, obligation: str, answers: dict[str, str]) -> None:
        """Z3's proved / refuted of each obligation, where the combined query was *sat*."""
        if self.fd is not None:
            disk.write_json(self.fd, f"{key}.json", {**_head(key, obligation),
                                                     "z3_answer": "sat", "answers": answers})

    def store(self, key: str, obligation: str) -> None:
        if self.fd is not None:
            disk.write_json(self.fd, f"{key}.json",
                            {**_head(key, obligation), "z3_answer": "unsat"})

    def reject(self, key: str, why: str) -> None:
        """An entry the enumeration contradicts: warn, remove it, and never trust it again."""
        self.rejected.append(key)
        disk.warn(os.path.join(self.where, f"{key}.json"), why)
        if self.fd is not None:
            disk.remove(self.fd, f"{key}.json")


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
    run's entry, else ``solve()``'s answer (True: *unsat*), kept when it is.  The caller's
    enumeration runs whatever this answers; only Z3's half is skipped.  With the cache off
    (``--no-cache``, no folder) it is ``solve()``.  The folder ``held_open`` holds, where one
    is held, else its own."""
    key = hashlib.sha256(json.dumps([SCHEMA, __version__, _z3_version(), obligation, what])
                         .encode("utf-8")).hexdigest()
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
