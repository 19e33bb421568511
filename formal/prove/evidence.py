"""GPU evidence: what a real device showed, kept as JSON under ``proofs/evidence/``.

``python -m formal.execute.gpu --record proofs/evidence`` writes one file per run::

    {"schema": 1, "device": "NVIDIA H100 80GB HBM3", "sm": 90, "driver": "580.159.04",
     "cuda": "...", "date": "2026-11-22T09:00:00Z", "seconds": 9.1,
     "runs": [{"key", "instruction", "shape", "types": {a, b, c, d}, "selector", "mode":
               "check" | "discover", "layout_hashes": {A, B, C/D, metadata}, "trials",
               "seed", "result": match | mismatch | not-executed | compiled-only | error,
               "detail", "discovered_hashes" (discover runs), "erratum" (the id of the
               spec's layout the run packed with, where it ran an erratum), "d_cells"
               (mismatch: the differing D cells, [row, col] or [row, col, product])}],
     "discovered": {map_hash: {"instruction", "shape", "operand", "kind", "columns",
                               "rows"}},
     "maps": {map_hash: {...the same...}}}

``layout_hashes`` are ``formal.model.cells.map_hash`` of the maps the run packed with; a discover
run's ``discovered_hashes`` are the same hash of the maps the hardware showed (named as the
given layouts name them, see ``formal.execute.discover``), and ``discovered`` keeps the cell
tables of those that differ from every given one -- a map equal to a given layout is its hash.

``maps`` keeps the cell tables of the corrected maps that erratum runs replaced, so a verdict
can show the spec's cell beside the cell the hardware confirmed.

``Evidence.verdict(layout)`` is the ``hardware`` obligation of ``formal.prove``, judged for
every family by ``formal.prove.hardware`` (this module loads and indexes).  A worked example:
the layout ``mma.m16n8k16.A.u8-s8`` (hash ``8148...``) serves four variants (s8/u8 x
s8/u8); a ``match`` run of any of them that packed A with ``8148...`` proves it ("confirmed
on NVIDIA H100 80GB HBM3, 2026-11-22: 4 of 4 variants"); a discover run whose A differs
refutes it with the first (lane, element) whose cell differs (compared up to renaming rows and
columns, which no experiment can observe); no bit-exact run of its variants (none, or only
``compiled-only`` ones) is the warning ``unconfirmed``; ``not-applicable`` is left for layouts
no variant uses.  A layout whose map a run showed wrong -- a ``mismatch`` packed with
it, and a ``match`` of the same variant and selector that differs only in this operand's map
-- is refuted by the first (lane, element) whose cell differs from the confirmed map, both
cells shown, with the D cells that differed: so the spec's erratum layouts
(``catalog:mma.m16n8k16.A.f64``, ``catalog:mma.m16n8k256.A.b1``) are refuted by the same run
that proves their corrections.  A document's layout (a seed's, say) with the same map as a
confirmed one is proved by that evidence: the hash is of the map, not of the text.

A map no run confirmed, of a variant a run confirmed with another map for the same operand, is
judged against that run by ``formal.prove.confirm.judge``: refuted when the document states
the other operands with the run's maps (``stated_in``), else ``unconfirmed`` unless it
differs even up to renumbering what the other operands leave free.  The confirmed map's cell
table comes from ``table(hash)``: kept in the evidence, or any layout with that hash (the
catalog, a lazy ``add_source`` of ``formal.api``).  Runs are indexed by variant key and kept
tables by hash once, at load (``runs_of``), so a verdict never scans the whole evidence.

Whether the evidence still covers the current layouts (for CI) is ``formal.writers.evidence.stale``,
run as ``ptxlayout evidence proofs/evidence``.

This module imports neither numpy nor the prover at import time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..base import cache as disk
from ..base.collector import few_collections
from ..base.files import MAX_JSON, FileProblem, parse_json, read_limited
from ..base.hashes import cell_table_hash, cell_table_hash_of_chunks
from ..base.ids import LayoutId
from ..base.memo import keep_bounded
from ..base.variants import VARIANTS, layout_serves
from .confirm import Stated, distinguish, stated_in
from .kept_evidence import KEPT_FOLDER, KeptRuns, columns_of, keep_file, kept_file, table_value


@dataclass(frozen=True)
class EvidenceRun:
    key: str
    selector: int | None
    mode: str
    result: str
    layout_hashes: dict[str, str]
    discovered_hashes: dict[str, str]
    trials: int
    detail: str
    file: EvidenceFile
    erratum: str = ""
    d_cells: tuple[tuple[int, ...], ...] = ()
    plant: str = ""  # the deliberate error an experiment ran with (wgmma, tcgen05.mma)

    @staticmethod
    def of(d: Mapping[str, Any], f: EvidenceFile) -> EvidenceRun:
        return EvidenceRun(str(d.get("key", "")), d.get("selector"), str(d.get("mode", "check")),
                           str(d.get("result", "")), dict(d.get("layout_hashes") or {}),
                           dict(d.get("discovered_hashes") or {}), int(d.get("trials") or 0),
                           str(d.get("detail", "")), f, str(d.get("erratum") or ""),
                           tuple(tuple(map(int, c)) for c in d.get("d_cells") or ()),
                           str(d.get("plant") or ""))


@dataclass
class EvidenceFile:
    path: str
    device: str
    sm: int
    driver: str
    date: str
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)
    sha: str = field(default="", compare=False)  # its bytes' SHA-256, where read from a file
    # the runs by column, as the file's JSON gives them or the cache folder keeps them
    # (``kept_evidence.KeptRuns``: each run made when first read), until ``runs`` is read
    # or set; None: ``runs`` holds them
    kept: Any = field(default=None, repr=False, compare=False)

    @property
    def runs(self) -> list[EvidenceRun]:
        """Every run, in the file's order: one list, made from ``kept`` on first use."""
        got: list[EvidenceRun] | None = self.__dict__.get("_runs")
        if got is None:
            got = self.__dict__["_runs"] = [] if self.kept is None else self.kept.every()
        return got

    @runs.setter
    def runs(self, runs: list[EvidenceRun]) -> None:
        self.__dict__["_runs"] = runs

    def _columns(self) -> Any:
        """``kept`` while no list of the runs was made (then the list is what counts)."""
        return self.kept if "_runs" not in self.__dict__ else None

    def run_keys(self) -> Sequence[str]:
        """Each run's variant key, in order, without making the runs."""
        kept = self._columns()
        return kept.keys if kept is not None else [r.key for r in self.runs]

    def judged_at(self, i: int) -> bool:
        """Whether run ``i`` is one a ``hardware`` verdict reads (``Evidence.runs_judged``),
        asked of its columns without making it."""
        kept = self._columns()
        mode, result = (kept.mode_result(i) if kept is not None
                        else (self.runs[i].mode, self.runs[i].result))
        return mode == "discover" or (mode == "check" and result in _DECIDED)

    def run_at(self, i: int) -> EvidenceRun:
        kept = self.kept
        return kept.at(i) if kept is not None and "_runs" not in self.__dict__ \
            else self.runs[i]

    def hashes_of(self, operand: str) -> Iterator[tuple[int, str]]:
        """(index, hash) of every run whose ``layout_hashes`` name ``operand`` (with a value
        other than None), in order, without making the runs."""
        kept = self._columns()
        if kept is not None:
            return iter(kept.hashes_of(operand))
        return ((i, x) for i, r in enumerate(self.runs)
                if (x := r.layout_hashes.get(operand)) is not None)

    @property
    def where(self) -> str:
        return f"{self.device} (sm_{self.sm}, driver {self.driver}), {self.date[:10]}"


def default_dir() -> Path | None:
    """The evidence shipped with ptxlayout: inside the installed package, or the repository's
    ``proofs/evidence`` in a source checkout (None when neither exists)."""
    package = Path(__file__).resolve().parents[1]  # formal/
    for candidate in (package / "evidence_data", package.parent / "proofs" / "evidence"):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    return None


_A_TYPES = frozenset(v.a for v in VARIANTS)
_DECIDED = ("match", "mismatch")  # a check's results that speak to the maps it packed


@cache
def _variants_at(instruction: str, shape: str) -> tuple[Any, ...]:
    """The rows of the variant table of this instruction and shape, in the table's order:
    the only ones ``layout_serves`` can accept."""
    return tuple(v for v in VARIANTS if v.instruction == instruction and v.shape == shape)


class LazyRows(Sequence[dict[str, Any]]):
    """A layout's ``cell_rows``, built on first use: most verdicts need only the count and
    the hash, and a refutation or a judgement reads the rows."""

    def __init__(self, lay: Any, count: int) -> None:
        self._lay, self._count = lay, count
        self._rows: list[dict[str, Any]] | None = None

    def _all(self) -> list[dict[str, Any]]:
        if self._rows is None:
            from ..model.cells import cell_rows
            self._rows = cell_rows(self._lay)[1]
            assert len(self._rows) == self._count
        return self._rows

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, k: Any) -> Any:
        return self._all()[k]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._all())


# The files read in this process, by path and the SHA-256 of their bytes: a process that
# proves many times (the tests, an editor's server) reads the shipped evidence once; a file
# whose bytes changed is read again.  The runs are read-only once made.
_READ: dict[tuple[str, str], EvidenceFile] = {}


def _read_file(q: Path, fd: int | None = None) -> EvidenceFile:
    """The file at ``q``; ``fd``: the cache folder ``evidence/`` (``kept_file``), if any."""
    try:
        data = read_limited(q, MAX_JSON)
        digest = hashlib.sha256(data).hexdigest()
        key = (str(q), digest)
        if key in _READ:
            return _READ[key]
        f = kept_file(fd, str(q), digest, (EvidenceFile, EvidenceRun)) if fd is not None \
            else None
        if f is None:
            doc = parse_json(data)
    except FileProblem as exc:  # an OSError (missing, no permission) goes up as it is
        raise FileProblem(f"{q}: {exc}") from None
    if f is None:
        if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) \
                or not isinstance(doc.get("device"), str):
            raise FileProblem(f"{q}: not an evidence file (a JSON object with a "
                              "'device' and a list of 'runs')")
        f = EvidenceFile(str(q), str(doc.get("device", "?")), int(doc.get("sm") or 0),
                         str(doc.get("driver", "?")), str(doc.get("date", "")),
                         discovered=dict(doc.get("discovered") or {}),
                         maps=dict(doc.get("maps") or {}))
        runs = doc["runs"]
        columns = columns_of(runs)  # the runs by column, as an entry keeps them
        if columns is not None:
            f.kept = KeptRuns(EvidenceRun, f, *columns)
        else:  # a value of another type: each run read by ``EvidenceRun.of``, as it is
            f.runs = [EvidenceRun.of(r, f) for r in runs]
        if fd is not None:
            keep_file(fd, digest, f)
    f.sha = digest
    keep_bounded(_READ, key, f, 256)
    return f


def _row_bytes(texts: Any, keep: Any = None) -> list[Any]:
    """The bytes of the rows of ``texts`` (``model.cells.RowTexts``) that ``keep`` (a boolean
    mask of the rows; None: all) keeps, as ``texts.data(keep)`` joins them, in pieces that
    lie in its array: a whole table is its bytes, uncopied; a table's first elements at
    one N (wgmma's accumulator) is each run of consecutive kept rows' bytes, a slice of
    them (``lengths``: each row's bytes), never a mask of every byte nor a copy."""
    if texts.rows is not None:  # (a table written row by row: its text)
        return [texts.data(keep)]
    packed = texts.packed
    if keep is None:
        return [packed]
    import numpy as np
    k = np.asarray(keep, dtype=np.int8)
    ends = np.cumsum(texts.lengths)
    edges = np.flatnonzero(np.diff(k, prepend=0, append=0))  # where a run starts or ends
    first, last = edges[0::2], edges[1::2]  # each run of kept rows: [first, last)
    lo = (ends[first] - texts.lengths[first]).tolist()
    return [packed[a:b] for a, b in zip(lo, ends[last - 1].tolist(), strict=True)]


class Evidence:
    """Every evidence file of a folder (or one file)."""

    def __init__(self, files: Sequence[EvidenceFile] = ()) -> None:
        self.files = sorted(files, key=lambda f: f.date)
        # the index, built once: runs by variant key (in date order), the tables the files
        # keep by hash, and the cell tables of layouts already hashed (by object)
        # (a run by its place: the file's index here and its own in the file, so that the
        # places sort in date order; a file's runs are made only where a verdict reads them)
        self._by_key: dict[str, list[tuple[int, int]]] = {}
        for n, f in enumerate(self.files):
            for i, k in enumerate(f.run_keys()):
                self._by_key.setdefault(k, []).append((n, i))
        # a cell table by hash: its value, or its JSON text where it came from the cache
        # folder (``kept_evidence``: parsed when first read, ``table_value``)
        self._discovered: dict[str, Any] = {}
        self._kept: dict[str, Any] = {}
        for f in self.files:
            self._discovered.update(f.discovered)
        self._kept.update(self._discovered)
        for f in self.files:
            self._kept.update(f.maps)
        self._tables: dict[str, tuple[str, list[dict[str, Any]]] | None] = {}
        self._hashed: dict[int, tuple[Any, str]] = {}
        # layouts whose rows a verdict read without their hash (``cells_of``), by object,
        # hashed only where ``table`` looks a hash up that no hashed layout has
        self._unhashed: dict[int, Any] = {}
        self._memo: dict[str, str] = {}  # map hashes by kept_hashes.hash_key, this process
        self._kept_hashes: Any = None
        self._serves: dict[tuple[Any, ...], list[Any]] = {}
        self._runs_of: dict[frozenset[str], list[EvidenceRun]] = {}
        self._judged: dict[frozenset[str], list[EvidenceRun]] = {}
        self._by_hash: dict[str, Any] = {}
        self._by_layout: dict[str, dict[str, list[tuple[int, int]]]] = {}
        self._sources: dict[str, Callable[[], Iterable[Any]]] = {}
        self._source: str | None = None  # ``source_digest``, once ("": none)

    @classmethod
    def load(cls, path: str | Path) -> Evidence:
        p = Path(path)
        if p.is_dir():
            paths = sorted(p.glob("*.json"))
            if not paths:
                raise FileNotFoundError(f"no evidence files (*.json) in {p}")
        elif p.is_file():
            paths = [p]
        else:
            raise FileNotFoundError(f"no evidence at {p}")
        with few_collections(), disk.folder(KEPT_FOLDER) as fd:  # (base/collector.py)
            return cls([_read_file(q, fd) for q in paths])

    def source_digest(self) -> str | None:
        """A SHA-256 of every file's path and bytes (``prove/kept_verdicts.py`` keys the
        hardware verdicts by it); None where a file was not read from bytes (made in memory,
        as tests do: nothing is kept for such evidence)."""
        if self._source is None:
            self._source = "" if any(not f.sha for f in self.files) else hashlib.sha256(
                json.dumps([[f.path, f.sha] for f in self.files]).encode("utf-8")).hexdigest()
        return self._source or None

    @property
    def runs(self) -> list[EvidenceRun]:
        return [r for f in self.files for r in f.runs]

    def runs_of(self, keys: Iterable[str]) -> list[EvidenceRun]:
        """The runs of these variants, in date order (an index lookup, no scan)."""
        keys = frozenset(keys)
        hit = self._runs_of.get(keys)
        if hit is None:
            hit = self._runs_of[keys] = [
                self.files[n].run_at(i)
                for n, i in sorted(at for k in keys for at in self._by_key.get(k, ()))]
        return list(hit)

    def runs_judged(self, keys: Iterable[str]) -> list[EvidenceRun]:
        """``runs_of``'s runs that a ``hardware`` verdict reads (``prove/hardware.py``): the
        discoveries, and the checks that matched or mismatched -- not a check only compiled
        or not executed, nor an experiment (wgmma's, tcgen05's planted errors), which are
        not made here."""
        keys = frozenset(keys)
        hit = self._judged.get(keys)
        if hit is None:
            hit = self._judged[keys] = [
                self.files[n].run_at(i)
                for n, i in sorted(at for k in keys for at in self._by_key.get(k, ()))
                if self.files[n].judged_at(i)]
        return list(hit)

    def runs_with(self, operand: str, h: str) -> list[EvidenceRun]:
        """The runs that packed ``operand`` (``smem``: the shared-memory layout) with the hash
        ``h``, in date order: an index of every run by that operand's hash, built once."""
        index = self._by_layout.get(operand)
        if index is None:  # (a run by its place, as ``_by_key``: made only where asked)
            index = self._by_layout[operand] = {}
            for n, f in enumerate(self.files):
                for i, x in f.hashes_of(operand):
                    index.setdefault(x, []).append((n, i))
        return [self.files[n].run_at(i) for n, i in index.get(h, ())]

    @property
    def sm(self) -> int:
        return max((f.sm for f in self.files), default=0)

    def discovered_map(self, h: str) -> dict[str, Any] | None:
        return table_value(self._discovered, h)

    def kept_map(self, h: str) -> dict[str, Any] | None:
        """A cell table the evidence keeps by hash (``maps``, else ``discovered``)."""
        return table_value(self._kept, h)

    def shown_wrong(self, op: str, h: str, keys: Iterable[str]) \
            -> tuple[EvidenceRun, EvidenceRun, dict[str, Any]] | None:
        """(mismatch, match, confirmed table): a run of one of ``keys`` packed with map ``h``
        for ``op`` that mismatched, and a match of the same variant and selector, with a
        kept table, whose maps differ from it only in ``op``."""
        checks = [r for r in self.runs_of(keys) if r.mode == "check"]
        for bad in reversed([r for r in checks if r.result == "mismatch"
                             and r.layout_hashes.get(op) == h]):
            for good in reversed(checks):
                if good.result != "match" or good.key != bad.key \
                        or good.selector != bad.selector:
                    continue
                gh = good.layout_hashes.get(op)
                if gh in (None, h) or any(good.layout_hashes.get(o) != x
                                          for o, x in bad.layout_hashes.items() if o != op):
                    continue
                table = self.kept_map(str(gh))
                if table is not None:
                    return bad, good, table
        return None

    # -- cell tables by hash
    def add_source(self, name: str, layouts: Callable[[], Iterable[Any]]) -> None:
        """A lazy source of layouts whose cell tables a verdict may need by hash (the
        catalog, given by ``formal.api``); called at most once, and only when a confirmed
        map's table is neither kept in the evidence nor the map of a layout already seen."""
        self._sources.setdefault(name, layouts)

    def table_of(self, lay: Any) -> tuple[str, Sequence[dict[str, Any]], str]:
        """(kind, rows, map hash) of a layout.  The hash is remembered per layout object, and
        the layout by its hash, so that its table can be rebuilt if a verdict needs it; the
        rows themselves are not kept (a run proves hundreds of layouts), and are built only
        when a verdict reads them (``LazyRows``): the hash is written from the enumerated
        arrays (``cell_texts``), or read from the kept hashes by their digest
        (``keep_hashes``)."""
        from ..model.cells import table_digest
        kind, count, digest = table_digest(lay)
        h = self.hash_at(lay, None, (kind, count, digest)) if count else ""
        self._hashed[id(lay)] = (lay, h)
        self._unhashed.pop(id(lay), None)
        if count:
            self._by_hash.setdefault(h, lay)
        return kind, LazyRows(lay, count), h

    def cells_of(self, lay: Any) -> tuple[str, Sequence[dict[str, Any]]]:
        """(kind, rows) of a layout, as ``table_of`` gives them, without its map hash: a
        verdict asks the hash (``hash_of``) only where a run can speak to the map.  The
        layout is remembered all the same, so that ``table`` finds it by its hash (hashed
        then, where no layout already hashed has that hash)."""
        from ..model.cells import table_digest
        kind, count, _digest = table_digest(lay)
        if count and id(lay) not in self._hashed:
            self._unhashed[id(lay)] = lay
        return kind, LazyRows(lay, count)

    def remember(self, lay: Any, h: str | None) -> None:
        """``lay``'s map hash ``h``, as ``table_of`` remembers it (a kept verdict's; None: a
        verdict that did not read it, as ``cells_of`` remembers the layout)."""
        if h is None:
            self.cells_of(lay)
            return
        self._hashed[id(lay)] = (lay, h)
        self._unhashed.pop(id(lay), None)
        self._by_hash.setdefault(h, lay)

    def hashed(self, lay: Any) -> str | None:
        """The map hash ``table_of`` found for ``lay`` (None: not asked, or no table)."""
        hit = self._hashed.get(id(lay))
        return str(hit[1]) if hit is not None and hit[0] is lay and hit[1] else None

    def keep_hashes(self, kept: Any) -> None:
        """Read and keep map hashes in ``kept`` (``prove.kept_hashes.KeptHashes``; None: not)."""
        self._kept_hashes = kept

    def hash_at(self, lay: Any, n: int | None,
                table: tuple[str, int, str | None] | None = None) -> str:
        """The map hash of ``lay``'s table (``n`` None), or -- ``lay`` stated for every N --
        of the map at N: each thread's first ``lay.at(n).elements`` elements hashed under
        that layout's shape (``base.hashes.first_elements``).  Kept by the table's digest
        (``kept_hashes``), else written from the enumerated arrays (``cell_texts``)."""
        from ..model.cells import cell_texts, table_digest
        kind, _count, digest = table if table is not None else table_digest(lay)
        at = lay if n is None else lay.at(n)
        elements = None if n is None else at.elements
        header = f"{lay.instruction}|{at.shape_text}|{lay.operand}|{kind}"
        kept = self._kept_hashes
        key = None
        if digest is not None:
            from .kept_hashes import hash_key
            key = hash_key(digest, header, elements)
            hit = self._memo.get(key) or (kept.get(key) if kept is not None else None)
            if hit is not None:
                self._memo[key] = hit
                return hit
        _kind, texts, es = cell_texts(lay)
        h = cell_table_hash_of_chunks(lay.instruction, at.shape_text, lay.operand, kind,
                                      _row_bytes(texts, None if elements is None
                                                 else es < elements))
        if key is not None:
            self._memo[key] = h
            if kept is not None:
                kept.put(key, h)
        return h

    def hash_of(self, lay: Any) -> str:
        """The map hash of a layout, computed once per layout object."""
        hit = self._hashed.get(id(lay))
        if hit is not None and hit[0] is lay:
            return str(hit[1])
        return self.table_of(lay)[2]

    def table(self, h: str) -> tuple[str, list[dict[str, Any]]] | None:
        """The cell table whose hash is ``h``: kept in the evidence (``maps``,
        ``discovered``), or the map of a layout seen or given by a source.  A kept table is
        used only if it hashes to its key (a hash names one table, so any source will do)."""
        if h in self._tables:
            return self._tables[h]
        kept = self.kept_map(h)
        if kept is not None:
            cols = list(kept.get("columns") or ())
            rows = [dict(zip(cols, r, strict=True)) for r in kept.get("rows") or ()]
            kind = str(kept.get("kind", "cells"))
            if cell_table_hash(str(kept.get("instruction", "")), str(kept.get("shape", "")),
                               str(kept.get("operand", "")), kind, rows) == h:
                self._tables[h] = (kind, rows)
                return self._tables[h]
        while h not in self._by_hash and self._unhashed:
            self.hash_of(self._unhashed.popitem()[1])
        while h not in self._by_hash and self._sources:
            name = next(iter(self._sources))
            for lay in self._sources.pop(name)():
                self.hash_of(lay)
        lay = self._by_hash.get(h)
        if lay is None:
            self._tables[h] = None
            return None
        from ..model.cells import cell_rows
        self._tables[h] = cell_rows(lay)
        return self._tables[h]

    def variants_of(self, lay: Any) -> list[Any]:
        """The rows of the variant table a layout serves (``layout_serves``), looked up once
        per kind of layout: a document states the same operand of a shape many times."""
        # the id counts only through the A types it names after '@' (``layout_serves``),
        # and only those some variant has (a copy's '#2' is read as part of the last name)
        for_types = LayoutId.parse(lay.id).for_types
        named = frozenset(for_types) & _A_TYPES if for_types else None
        key = (lay.operand, lay.instruction, str(lay.shape), tuple(lay.types), named,
               lay.arrangement)
        hit = self._serves.get(key)
        if hit is None:
            shape = str(lay.shape)
            hit = self._serves[key] = [v for v in _variants_at(lay.instruction, shape)
                                       if layout_serves(v, lay.operand, lay.instruction,
                                                        shape, lay.types, lay.id,
                                                        lay.arrangement)]
        return hit

    # -- the 'hardware' obligation
    def verdict(self, lay: Any, stated: Stated | None = None) -> Any:
        """The ``hardware`` obligation of ``lay`` (``formal.prove.hardware``, the one judge
        of every family); ``stated`` names the layout the same document states for another
        operand of a variant (``stated_in``), so that a map that differs from a confirmed
        one can be judged against the run that confirmed it."""
        from .hardware import verdict
        return verdict(self, lay, stated)


__all__ = ["Evidence", "EvidenceFile", "EvidenceRun", "Stated", "default_dir", "distinguish",
           "stated_in"]
