"""GPU evidence files kept as they were read, keyed by their bytes: ``evidence/`` of the cache.

An evidence file (``formal.prove.evidence``) is a JSON object of a device and its runs, each run
a small object::

    {"device": "NVIDIA H100 80GB HBM3", "sm": 90, ..., "runs": [
       {"key": "mma.m16n8k16.f32.f16.f16.f32", "mode": "check", "result": "match",
        "layout_hashes": {"A": "8148...", "B": "...", "C/D": "..."}, "trials": 64, ...}, ...],
     "discovered": {"9f2e...": {"columns": [...], "rows": [[0, 0, 3, 1], ...]}}}

Reading the shipped folder (4,444 runs, 3 MB) costs more than proving half the catalog:
``json.loads``, the depth check of every nested value (``base.files.parse_json``: a cell
table is thousands of small lists) and an ``EvidenceRun`` per run.  The entry kept here holds
what that reading produced, written to be read back cheaply: the runs as columns (one list per
field; each run's operand hashes as one text, names and hashes one a line, so the depth check
walks no list a run), and each kept cell table as its own JSON text, parsed (and
depth-checked) only when a verdict reads that table -- for the catalog, the two errata's
confirmed maps.  The runs themselves are made from the columns one by one, where a verdict
reads them (``KeptRuns``): every column is checked when the entry is read.  For the run above
the entry's runs read::

    {"key": ["mma.m16n8k16.f32.f16.f16.f32"], "mode": ["check"], "result": ["match"],
     "trials": [64], "layout_hashes": ["A\\n8148...\\nB\\n...\\nC/D\\n..."], ...}

Key: a SHA-256 of the file's bytes (of their SHA-256), of this module and ``evidence.py``
(the reader), and of ptxlayout's and Python's versions; the entry is one JSON object,
``{"schema":3,"key":...,"digest":...,"content":{...}}``, written as bytes (``entry_bytes``)
with the content's JSON text where it lies -- not a JSON text inside a JSON text, which
was escaped and parsed twice -- and the SHA-256 of those bytes as its digest: the reader
checks the head (schema and key), hashes the content's bytes as they lie in the file and
parses them once (``content_text``), so a truncated or edited entry is refused with a
warning and the file is read again (and the entry written again).  The verdicts are not kept here:
a ``hardware`` verdict is kept only by a key that holds every evidence file's bytes, the
package's code and the layout's enumerated map (``formal.prove.kept_verdicts``).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import sys
from functools import cache
from itertools import chain
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..base.files import FileProblem, parse_json
from ..base.memo import keep_bounded

KEPT_FOLDER = "evidence"
SCHEMA = 3
_TEXT_FIELDS = ("key", "mode", "result", "detail", "erratum", "plant")


@cache
def _code_key() -> bytes:
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, list(sys.version_info[:3])]).encode())
    here = Path(__file__).resolve().parent
    for name in ("kept_evidence.py", "evidence.py"):
        h.update(name.encode() + b"\0" + hashlib.sha256((here / name).read_bytes()).digest())
    return h.digest()


def evidence_key(digest: str) -> str:
    """The key of an evidence file's entry: the reader's code and the file's bytes (their
    SHA-256 ``digest``, which the reader computes once for both)."""
    h = hashlib.sha256(_code_key())
    h.update(bytes.fromhex(digest))
    return h.hexdigest()


def _flat(d: dict[str, Any]) -> list[Any]:
    return [*chain.from_iterable(d.items())]


_SEP = "\n"


def _pairs_text(d: dict[str, Any]) -> str | list[Any]:
    """A run's operand hashes as one text, ``"A\\n8148...\\nB\\n..."`` (one JSON string a
    run: reading them back walks no list), or as the flat list of pairs where a name or a
    hash is not a string free of newlines (the joined text then holds more newlines than
    the ones that join them)."""
    flat = _flat(d)
    if not flat:
        return ""
    if {*map(type, flat)} == _STR:
        text = _SEP.join(flat)
        if text.count(_SEP) == len(flat) - 1:
            return text
    return flat


_STR = {str}


def _content(f: Any) -> dict[str, Any]:
    kept = f._columns()
    cols: dict[str, Any]
    if kept is not None:  # the columns as read (``columns_of``) or kept: written as they are
        at = dict(zip(_COLUMNS, kept._columns))
        cols = {k: at[k] for k in (*_TEXT_FIELDS, "selector", "trials", "layout_hashes",
                                   "discovered_hashes")}  # (the order written below)
        cols["d_cells"] = {str(n): flat for n, flat in kept._cells.items()}
    else:
        runs = f.runs
        cols = {k: [getattr(r, k) for r in runs] for k in _TEXT_FIELDS}
        cols["selector"] = [r.selector for r in runs]
        cols["trials"] = [r.trials for r in runs]
        cols["layout_hashes"] = [_pairs_text(r.layout_hashes) for r in runs]
        cols["discovered_hashes"] = [_pairs_text(r.discovered_hashes) for r in runs]
        cols["d_cells"] = {str(n): _cells_flat(r.d_cells) for n, r in enumerate(runs)
                           if r.d_cells}
    tables = {part: {h: _table_text(h, t) for h, t in getattr(f, part).items()}
              for part in ("discovered", "maps")}
    return {"device": f.device, "sm": f.sm, "driver": f.driver, "date": f.date,
            "runs": cols, "tables": tables}


# ``json.dumps(t, separators=(",", ":"))`` of a table read from a file's JSON (which holds no
# cycle, so the check for one is left out: the same text)
_TABLE_TEXT = json.JSONEncoder(separators=(",", ":"), check_circular=False)

# The text of each table written in this process, by its hash, with ``marshal``'s bytes of
# the value it was written from: the shipped files repeat a dozen tables 38 times, and a
# table whose value has the same bytes is the same value -- the same types (``1``, ``1.0``
# and ``True`` are three), the same order of keys -- so it has the same text.  The bytes
# are only compared here, never kept nor read back; a value they do not match is written.
_WRITTEN: dict[str, tuple[bytes, str]] = {}


def _table_text(h: str, t: Any) -> str:
    """``_TABLE_TEXT.encode(t)``, the table ``t`` kept under the hash ``h``."""
    try:
        same = marshal.dumps(t)
    except ValueError:  # (not a value of JSON: no file's table)
        return _TABLE_TEXT.encode(t)
    hit = _WRITTEN.get(h)
    if hit is not None and hit[0] == same:
        return hit[1]
    text = _TABLE_TEXT.encode(t)
    keep_bounded(_WRITTEN, h, (same, text), 64)
    return text


def _scalar(x: Any) -> bool:
    return x is None or type(x) in (str, int, float, bool)


def _flat_pairs(x: Any) -> bool:
    """A run's operand hashes as kept: one text, or a flat list of scalars."""
    return type(x) is str or (type(x) is list and all(map(_scalar, x)))


def keep_file(fd: int, digest: str, f: Any) -> None:
    """Write the entry of the evidence file ``f`` read from bytes of SHA-256 ``digest`` (a
    cache is never an
    error: nothing is said when it cannot be written, nor where a run's selector or an
    operand's hash is not a number or a text: such a file is read from its bytes every
    time, so that every value an entry holds sits at a fixed depth)."""
    if f._columns() is None and not all(  # (``columns_of`` took only such values)
            _scalar(r.selector) and all(map(_scalar, r.layout_hashes.values()))
            and all(map(_scalar, r.discovered_hashes.values())) for r in f.runs):
        return
    key = evidence_key(digest)
    text = json.dumps(_content(f), separators=(",", ":")).encode("utf-8")
    disk.write_bytes(fd, f"{key[:40]}.json", entry_bytes(key, text))


def _head(key: str) -> bytes:
    return f'{{"schema":{SCHEMA},"key":"{key}","digest":"'.encode()


_CONTENT = b'","content":'


def entry_bytes(key: str, text: bytes) -> bytes:
    """An entry as its bytes: ``{"schema":3,"key":KEY,"digest":SHA,"content":TEXT}``, the
    content's JSON text ``TEXT`` written where it lies (one JSON object; never a JSON text
    of a JSON text), ``SHA`` the SHA-256 of its bytes."""
    return b"".join((_head(key), hashlib.sha256(text).hexdigest().encode(), _CONTENT, text,
                     b"}"))


def content_text(data: bytes, key: str) -> str | None:
    """The content's JSON text of an entry's bytes (``entry_bytes``) whose schema and key
    are these and whose content hashes to its digest; else None."""
    head = _head(key)
    start = len(head) + 64 + len(_CONTENT)
    if not (data.startswith(head) and data.endswith(b"}")
            and data[len(head) + 64:start] == _CONTENT):
        return None
    text = data[start:-1]
    if hashlib.sha256(text).hexdigest().encode() != data[len(head):len(head) + 64]:
        return None
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _pairs(flat: Any) -> dict[str, Any]:
    if not flat:
        return {}
    if isinstance(flat, str):
        flat = flat.split(_SEP)
    if len(flat) % 2:
        raise ValueError("not a list of operand, hash pairs")
    it = iter(flat)
    return dict(zip(it, it))


def _pairs_ok(x: Any) -> bool:
    """Whether ``_pairs`` reads ``x`` (a kept run's operand hashes, ``_flat_pairs``) as pairs:
    an even count of names and hashes."""
    if type(x) is str:
        return not x or x.count(_SEP) % 2 == 1
    return len(x) % 2 == 0


# the columns of ``KeptRuns``, in the order of ``EvidenceRun``'s fields
_COLUMNS = ("key", "selector", "mode", "result", "layout_hashes", "discovered_hashes", "trials",
            "detail", "erratum", "plant")


def columns_of(runs: list[Any]) \
        -> tuple[tuple[list[Any], ...], dict[int, list[int]], list[dict[str, Any]]] | None:
    """The runs of a file's JSON (its ``runs``) as ``KeptRuns`` holds them, in one pass per
    column, each value exactly as ``EvidenceRun.of`` reads it -- a text field a ``str``
    (missing: its default), a trial count an ``int`` (``0`` where missing or false), the
    operand hashes an object of scalars (``{}`` where false), the D cells lists of ``int`` --
    or None where a run holds a value of any other type (not an object, a number as a text,
    a selector that is a list): such a file's runs are made one by one by ``EvidenceRun.of``,
    which converts or refuses each value as it always did.  A run's operand hashes become
    their text (``_pairs_text``), its D cells one list (``_cells_flat``): what the file's
    entry keeps, so a first reading and a kept one hold the same columns; and each run's
    operand hashes as read (``KeptRuns`` need not split their texts again)."""
    if not all(type(d) is dict for d in runs):
        return None
    texts = ([d.get("key", "") for d in runs], [d.get("mode", "check") for d in runs],
             [d.get("result", "") for d in runs], [d.get("detail", "") for d in runs],
             [d.get("erratum") or "" for d in runs], [d.get("plant") or "" for d in runs])
    selector = [d.get("selector") for d in runs]
    trials = [d.get("trials") or 0 for d in runs]
    if not all({*map(type, c)} <= _STR for c in texts) or {*map(type, trials)} - _INT \
            or not all(map(_scalar, selector)):
        return None
    hashes, read = [], []
    for name in ("layout_hashes", "discovered_hashes"):
        got = [d.get(name) or _EMPTY for d in runs]
        if {*map(type, got)} - _DICT:
            return None
        read.append(got)
        joined: list[Any]
        try:  # names and hashes all texts, free of newlines: ``_pairs_text``'s one text
            joined = [_SEP.join(chain.from_iterable(x.items())) for x in got]
        except TypeError:  # a hash that is not a text: each run's as ``_pairs_text`` has it
            joined = []
        if len(joined) != len(got) or any(t.count(_SEP) != 2 * len(x) - 1
                                          for t, x in zip(joined, got) if x):
            if not all(all(map(_scalar, x.values())) for x in got):
                return None
            joined = [_pairs_text(x) for x in got]
        hashes.append(joined)
    cells: dict[int, list[int]] = {}
    for n, d in enumerate(runs):
        x = d.get("d_cells")
        if not x:
            continue
        if type(x) is not list or {*map(type, x)} - _LIST:
            return None
        w = len(x[0])
        flat = [w, *chain.from_iterable(x)] if w and {*map(len, x)} == {w} \
            else _cells_flat(tuple(map(tuple, x)))  # (``_cells_flat``'s two forms)
        if {*map(type, flat)} - _INT:
            return None
        cells[n] = flat
    key, mode, result, detail, erratum, plant = texts
    return ((key, selector, mode, result, *hashes, trials, detail, erratum, plant), cells,
            [x if x else {} for x in read[0]])


_EMPTY: dict[str, Any] = {}
_INT, _DICT, _LIST = {int}, {dict}, {list}


class KeptRuns:
    """An evidence file's runs as its entry keeps them, by column, each made into a run (an
    ``evidence.EvidenceRun``) when first read, and the same run ever after: a warm ``prove``
    of the catalog reads the runs of the few variants and shared-memory layouts its verdicts
    ask for (``Evidence.runs_of``, ``runs_with``), not the 4,444 of the shipped evidence.
    Every column was checked when the entry was read (``_file_of``): making a run cannot
    fail."""

    def __init__(self, run: Any, f: Any, columns: tuple[list[Any], ...],
                 cells: dict[int, list[int]],
                 hashes: list[dict[str, Any]] | None = None) -> None:
        self._run, self._file, self._columns, self._cells = run, f, columns, cells
        self.keys: list[str] = columns[0]
        self._made: list[Any] = [None] * len(self.keys)
        # each run's operand hashes, split once (for ``hashes_of`` or its run) or as the
        # file's JSON gave them (``columns_of``: each a dict of its own), read-only
        self._hashes: list[dict[str, Any] | None] = \
            list(hashes) if hashes is not None else [None] * len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def _layout_hashes(self, i: int) -> dict[str, Any]:
        got = self._hashes[i]
        if got is None:
            got = self._hashes[i] = _pairs(self._columns[4][i])
        return got

    def at(self, i: int) -> Any:
        got = self._made[i]
        if got is None:
            k, sel, mode, res, _lh, dh, trials, detail, err, plant = self._columns
            cells = self._cells.get(i)
            got = self._made[i] = self._run(
                k[i], sel[i], mode[i], res[i], self._layout_hashes(i), _pairs(dh[i]),
                trials[i], detail[i], self._file, err[i],
                () if cells is None else _cells(cells, True), plant[i])
        return got

    def mode_result(self, i: int) -> tuple[str, str]:
        """Run ``i``'s mode and result, without making it."""
        return self._columns[2][i], self._columns[3][i]

    def every(self) -> list[Any]:
        return [self.at(i) for i in range(len(self.keys))]

    def hashes_of(self, operand: str) -> list[tuple[int, str]]:
        """(index, hash) of each run whose operand hashes name ``operand`` (a value other
        than None), in order; a run's text is split only where it holds the name."""
        out = []
        for i in [i for i, x in enumerate(self._columns[4])
                  if x and (type(x) is not str or operand in x)]:
            h = self._layout_hashes(i).get(operand)
            if h is not None:
                out.append((i, h))
        return out


def _cells_flat(cells: tuple[tuple[int, ...], ...]) -> list[int]:
    """A run's d_cells as one list: ``[w, ...]`` when every cell has ``w`` numbers (a
    mismatch's cells are all [row, col] or all [row, col, product]), else ``[-1, ...]`` with
    each cell's length before it."""
    widths = {*map(len, cells)}
    if len(widths) == 1 and min(widths) > 0:
        return [len(cells[0]), *chain.from_iterable(cells)]
    return [-1, *(x for c in cells for x in (len(c), *c))]


def _cells_ok(flat: Any) -> bool:
    """Whether ``_cells`` reads ``flat`` (checked when the entry is read; the cells are made
    when their run is)."""
    if type(flat) is not list or not flat or set(map(type, flat)) != {int}:
        return False
    if flat[0] > 0:
        return (len(flat) - 1) % flat[0] == 0
    try:
        _cells(flat)
    except ValueError:
        return False
    return True


def _cells(flat: list[Any], checked: bool = False) -> tuple[tuple[int, ...], ...]:
    """``_cells_flat`` read back (``checked``: its numbers were, ``_cells_ok``)."""
    if not flat or (not checked and set(map(type, flat)) != _INT):
        raise ValueError("not a list of cells")
    w, rest = flat[0], flat[1:]
    if w > 0:
        if len(rest) % w:
            raise ValueError("not a list of cells")
        it = iter(rest)
        return tuple(zip(*[it] * w))
    out, k = [], 0
    while k < len(rest):
        n = rest[k]
        if n < 0 or k + 1 + n > len(rest):
            raise ValueError("not a list of cells")
        out.append(tuple(rest[k + 1:k + 1 + n]))
        k += 1 + n
    return tuple(out)


def _file_of(entry: Any, key: str, path: str, classes: tuple[Any, Any]) -> Any:
    """The evidence file an entry holds (its bytes; ``classes``: ``evidence.EvidenceFile``
    and ``EvidenceRun``, whose module reads the files), or None where it is not one of this
    key."""
    EvidenceFile, EvidenceRun = classes
    text = content_text(entry, key) if isinstance(entry, bytes) else None
    if text is None:
        return None
    try:
        # every value is checked to sit where it belongs (a column of texts, numbers or
        # scalars, a table's text), so the value is at most four levels deep: json.loads,
        # without parse_json's walk of every list to measure it (9 ms of the 57 a load took)
        c = json.loads(text)
        runs = c["runs"]
        n = len(runs["key"])
        for k in (*_TEXT_FIELDS, "selector", "trials", "layout_hashes", "discovered_hashes"):
            if not isinstance(runs[k], list) or len(runs[k]) != n:
                return None
        if not all(type(x) is str for k in _TEXT_FIELDS for x in runs[k]) \
                or not all(type(x) is int for x in runs["trials"]) \
                or not all(map(_scalar, runs["selector"])) \
                or not all(map(_flat_pairs, runs["layout_hashes"])) \
                or not all(map(_flat_pairs, runs["discovered_hashes"])) \
                or not all(map(_pairs_ok, runs["layout_hashes"])) \
                or not all(map(_pairs_ok, runs["discovered_hashes"])):
            return None
        tables = {part: dict(c["tables"][part]) for part in ("discovered", "maps")}
        if not all(isinstance(t, str) for part in tables.values() for t in part.values()):
            return None
        cells = {int(k): v for k, v in dict(runs["d_cells"]).items()}
        if not all(map(_cells_ok, cells.values())):
            return None
        device, sm, driver, date = c["device"], c["sm"], c["driver"], c["date"]
        if not (type(device) is str and type(sm) is int and type(driver) is str
                and type(date) is str):
            return None
        f = EvidenceFile(path, device, sm, driver, date,
                         discovered=tables["discovered"], maps=tables["maps"])
        f.kept = KeptRuns(EvidenceRun, f, tuple(runs[k] for k in _COLUMNS), cells)
    except (FileProblem, KeyError, TypeError, ValueError, RecursionError):
        return None
    return f


def kept_file(fd: int, path: str, digest: str, classes: tuple[Any, Any]) -> Any:
    """The evidence file whose bytes have the SHA-256 ``digest`` as kept in the cache folder
    ``fd`` (``classes``: as ``_file_of``); None when none is kept (or the one kept is
    refused, with a warning: it is written again)."""
    key = evidence_key(digest)
    _name, got = disk.kept_entry(fd, KEPT_FOLDER, key,
                                 lambda e, k: _file_of(e, k, path, classes), raw=True)
    return got


def table_value(tables: dict[str, Any], h: str) -> dict[str, Any] | None:
    """``tables[h]``: a kept cell table, parsed from its text on first use (``parse_json``:
    depth-checked) and replaced by the value; None when missing or not a JSON object."""
    t = tables.get(h)
    if isinstance(t, str):
        try:
            t = parse_json(t)
        except FileProblem:
            t = None
        if not isinstance(t, dict):
            t = None
        tables[h] = t
    return t
