"""The parses of a document's pseudocode lines and prose cells kept between runs, rebuilt
structurally, never by parsing or evaluating text.

The parse stage reads each distinct pseudocode line (``grammar/pseudocode.lark``) and each
title, table cell and sentence (``grammar/fragment.lark``) once a process (``PSEUDO_MEMO``,
``PROSE_MEMO``).  A run of the catalog spends about 0.27 s on them, a third of it loading the
fragment grammar's tables.  Their values are small frozen records of ``formal.parse.syntax``
(and the ids' ``MoveInstr`` / ``TmemInstr``) holding words, numbers and flags, so they are
kept as JSON, one file per document in ``<cache folder>/parses``.  The line ``groupID =
%laneid >> 2`` is kept as::

    ["groupID = %laneid >> 2",
     {"#c": "PseudoLine", "kind": "assign", "name": "groupID", "name_pos": 0,
      "expr": {"#c": "BinOp", "op": ">>", "left": {"#c": "Special", "name": "%laneid",
      "pos": 10}, "right": {"#c": "Num", "value": 2, "pos": 20, ...}}, ...}]

A record is rebuilt as ``cls(**fields)`` where ``cls`` is one of those classes, found by its
name (``#c``) in a fixed table (``_CLASSES``), and a field only by its declared name; a tuple
is ``{"#t": [...]}``, a JSON array a list.  The rebuilding is ``json.loads``'s
``object_hook`` (``_hook``): the parser hands it each object innermost first, so a warm run
reads a document's few thousand records in one pass of the C parser, without a walk of its
own (a field name cannot begin with ``#``, so a mark is never a field).  A pseudocode line's
``source`` is not kept: each use puts the line's own there, as
the in-process memo does; a tcgen05 fact's ``src`` neither, and each piece of text it holds is
a ``Slice`` of the text read (``formal.parse.tmem``).  A line or cell the grammar refuses is
kept as its one finding (``Unread``: kind, offset in the text, message), rebuilt on the text's
own place, so an unreadable sentence does not load the grammar again in every run.  A value
holding anything else is not kept (parsed again next time).  The entry's name and ``key`` are a
SHA-256 of the document's lines and of what a parse depends on (the two grammars, the parse
stage's modules, the versions); it holds what it keeps as one JSON text (``kept``) and that
text's SHA-256 (``content``), its depth checked before it is parsed (``text_too_deep``):
another key, a damaged or edited entry, an unknown class, field or mark is ignored with a
warning and written again from Lark's parse.  The records are the same either way, and every
later stage (the model, the enumeration of every map, Z3 or its kept answer) runs on them as
always.

The family readers (shared memory, block scale, sparse metadata, tcgen05.cp) read each line
through ``remembered_read`` and a document inside ``parses_remembered(lines, reader)``: the
same memo and the same entries, one file per (document, reader), ``(text, "smem:line")`` beside
``(text, "header")``; their values may also be lists and str-keyed maps (``{"#m": [[k, v]]}``).
A value is written only where its JSON reads back as the same value, types and all.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields, is_dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..base import ids
from ..base.files import MAX_DEPTH, text_too_deep
from ..base.source import SourceText
from . import smem_records as R
from . import syntax as S
from .grammars import PROSE_MEMO, PSEUDO_MEMO, remember

SCHEMA = "ptxlayout-parses/2"
SUBFOLDER = "parses"
# the most parses one entry keeps (the catalog's largest document has a few hundred): a bigger
# entry could pass the cache's 8 MiB limit on a file, and be refused every run
MAX_KEPT = 20000
_CLASSES: dict[str, type] = {
    **{name: c for name, c in vars(S).items()
       if isinstance(c, type) and is_dataclass(c) and c.__module__ == S.__name__},
    "MoveInstr": ids.MoveInstr, "TmemInstr": ids.TmemInstr,
    # the shared-memory reader's cells and line facts (``read_family``)
    "LineFacts": R.LineFacts, "SymEntry": R.SymEntry, "Value": R.Value}
_FIELDS = {name: frozenset(f.name for f in fields(c) if f.init) for name, c in _CLASSES.items()}
# a record's keys as written: its fields and the mark naming its class
_MARKED = {name: f | {"#c"} for name, f in _FIELDS.items()}
_NO_SOURCE = SourceText.at("", "", 0)  # a kept line's place: each use puts its own


class _NotKept(Exception):
    """A value this module does not write (or an entry it cannot read back)."""


@cache
def _code_key() -> str:
    from ..base.grammar_files import grammar_dir
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, list(sys.version_info[:3])]).encode())
    here = Path(__file__).resolve().parent
    for path in (*sorted(grammar_dir().glob("*.lark")), *sorted(here.glob("*.py")),
                 Path(ids.__file__), Path(disk.__file__).parent / "source.py",
                 # the text stage's line kinds, which ``starts_definition`` keeps
                 here.parent / "text" / "lines.py"):
        h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    import lark
    h.update(lark.__version__.encode())
    return h.hexdigest()


def parses_key(lines: tuple[str, ...], reader: str = "document") -> str:
    """The key of a document's entry: the parse stage's code, the reader (``document``:
    ``parse_document``; ``smem``, ``block_scale`` ...: a family's reader) and the document's
    lines."""
    h = hashlib.sha256(_code_key().encode() + b"\0" + reader.encode() + b"\0")
    for ln in lines:
        h.update(ln.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


# the field each use puts its own source in (not kept): a pseudocode line's, a tcgen05 fact's
_PLACED = {"PseudoLine": "source", "TmemFact": "src"}


def _write(v: Any) -> Any:
    if v is None or isinstance(v, (bool, str, int)):
        return v
    name = type(v).__name__
    written = _WRITTEN.get(name)
    if written is not None and _CLASSES[name] is type(v):
        return {"#c": name, **{f: _write(getattr(v, f)) for f in written}}
    if isinstance(v, tuple):
        return {"#t": [_write(x) for x in v]}
    if type(v) is Fraction:
        return {"#q": [v.numerator, v.denominator]}
    if isinstance(v, list):
        return [_write(x) for x in v]
    if isinstance(v, dict) and all(type(k) is str for k in v):
        return {"#m": [[k, _write(x)] for k, x in v.items()]}
    raise _NotKept(name)


# each record's fields as ``_write`` writes them: in name order, all but the one each use places
_WRITTEN = {name: tuple(f for f in sorted(fs) if f != _PLACED.get(name))
            for name, fs in _FIELDS.items()}


# the top of an entry's text: the one object without a mark
_TOP = frozenset({"pseudo", "prose"})


def _hook(d: dict[str, Any]) -> Any:
    """``json.loads``'s ``object_hook``: each object of the kept text, its insides already read
    (the parser calls it innermost first), as the value it marks -- a record (``#c``: a class
    of the fixed table, only its declared fields), a tuple (``#t``), a fraction (``#q``), a
    str-keyed map (``#m``) -- or ``_NotKept``.  A JSON array is a list."""
    name = d.get("#c")
    if name is not None:
        if type(name) is not str or not d.keys() <= _MARKED.get(name, frozenset()):
            raise _NotKept(str(name))
        del d["#c"]
        if name in _PLACED:
            d[_PLACED[name]] = _NO_SOURCE
        try:
            return _CLASSES[name](**d)
        except TypeError as exc:  # a required field missing
            raise _NotKept(name) from exc
    if len(d) == 1:
        ((mark, v),) = d.items()
        if mark == "#t" and type(v) is list:
            return tuple(v)
        if mark == "#q" and type(v) is list and len(v) == 2 \
                and all(type(x) is int for x in v) and v[1] > 0:
            return Fraction(v[0], v[1])
        if mark == "#m" and type(v) is list \
                and all(type(p) is list and len(p) == 2 and type(p[0]) is str for p in v):
            return dict(v)
    if d.keys() == _TOP:
        return d
    raise _NotKept("an unmarked object")


def _loads(text: str) -> Any:
    """The values of a kept text (``_NotKept`` where it holds anything unmarked or unknown,
    ``ValueError`` where it is not JSON or nested deeper than ``MAX_DEPTH``)."""
    if text_too_deep(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, object_hook=_hook)
    except RecursionError as exc:
        raise ValueError("nested too deep") from exc


def _same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value of the same types throughout (a Lark
    ``Token`` is not a ``str``, ``True`` not ``1``): only a value read back as it was is kept."""
    t = type(a)
    if t is not type(b):
        return False
    if t in _PLAIN:
        return bool(a == b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    compared = _COMPARED.get(t.__name__)
    if compared is not None:
        return all(_same(getattr(a, f), getattr(b, f)) for f in compared)
    return bool(a == b)


# the types ``_same`` compares with ``==`` at once (what it would reach last for them)
_PLAIN = frozenset({str, int, bool, type(None)})
# each record's fields ``_same`` compares: all but the one each use places
_COMPARED = {name: tuple(f for f in fs if f != _PLACED.get(name)) for name, fs in _FIELDS.items()}


def _kept(value: Any) -> Any:
    """``value`` as written, where it reads back as the same value (else ``_NotKept``)."""
    w = _write(value)
    if not _same(_loads(json.dumps([w]))[0], value):  # as the next run reads it
        raise _NotKept(type(value).__name__)
    return w


def _all_kept(values: list[Any]) -> list[Any]:
    """``_kept`` of each value (``_NOT`` where it is not kept), decided by the structure as it
    is written (``_exact``) instead of a second reading: a value is written only where each
    part is of exactly a type the reader rebuilds as that very type (a record of the fixed
    table, a ``tuple``, a ``list``, a ``dict`` of ``str`` keys, a ``Fraction``, a ``str``, an
    ``int``, a ``bool``, ``None``: a Lark ``Token`` or an ``IntEnum`` is not), so it reads
    back as the same value -- what ``_kept``'s reading back checks.  A value nested deeper
    than ``_kept``'s reading allows raises ``ValueError`` as ``_kept`` does.  The reading of
    an entry (``parses_of_entry``) keeps every one of its checks."""
    out: list[Any] = []
    for v in values:
        try:
            out.append(_exact(v, MAX_DEPTH - 1))  # inside the list ``_kept`` reads
        except _NotKept:
            out.append(_NOT)
    return out


def _exact(v: Any, room: int) -> Any:
    """``_write(v)`` where every part of ``v`` is of exactly a type ``_hook`` rebuilds as
    itself (else ``_NotKept``), nested in at most ``room`` JSON levels (else ``ValueError``,
    what ``_loads`` answers a deeper text)."""
    t = type(v)
    if t in _SCALARS:
        return v
    if room < 1:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    record = _RECORDS.get(t)
    if record is not None:
        name, written = record
        out = {"#c": name}
        for f in written:
            x = getattr(v, f)
            out[f] = x if type(x) in _SCALARS else _exact(x, room - 1)
        return out
    if t is list:
        return [x if type(x) in _SCALARS else _exact(x, room - 1) for x in v]
    if room < 2:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if t is tuple:
        return {"#t": [x if type(x) in _SCALARS else _exact(x, room - 2) for x in v]}
    if t is Fraction:
        return {"#q": [v.numerator, v.denominator]}
    if t is dict and all(type(k) is str for k in v):
        if room < 3:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return {"#m": [[k, _exact(x, room - 3)] for k, x in v.items()]}
    raise _NotKept(t.__name__)


# the types ``_exact`` writes as they are, and each record class with its name and the fields
# ``_write`` writes (a class of the fixed table, by type: a subclass is not one)
_SCALARS = frozenset({str, int, bool, type(None)})
_RECORDS = {c: (name, _WRITTEN[name]) for name, c in _CLASSES.items()}


_NOT = object()  # a value ``_all_kept`` does not keep


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def kept_text(kept: dict[str, Any]) -> str:
    """The text an entry keeps ``{"pseudo": [...], "prose": [...]}`` as (no walk for cycles:
    what ``_exact`` writes is a tree of fresh lists and dicts)."""
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), check_circular=False)


def entry_of_parses(pseudo: dict[str, S.PseudoLine | S.Unread], prose: dict[tuple[str, str], Any],
                    key: str) -> dict[str, Any]:
    """An entry: each pseudocode line's and prose piece's parse that can be written, as one
    JSON text (``kept``) with its SHA-256 (``content``); a value is written where it reads
    back as itself (``_all_kept``)."""
    kept = _all_kept([*pseudo.values(), *prose.values()])
    lines = [[text, w] for text, w in zip(pseudo, kept) if w is not _NOT]
    pieces = [[text, start, w] for (text, start), w in zip(prose, kept[len(pseudo):])
              if w is not _NOT]
    text = kept_text({"pseudo": lines, "prose": pieces})
    return {"schema": SCHEMA, "key": key, "content": _digest(text), "kept": text}


def parses_of_entry(entry: Any, key: str) \
        -> tuple[dict[str, Any], dict[tuple[str, str], Any]] | None:
    """(pseudocode lines, prose pieces) an entry holds, or None when it is not a whole,
    sound entry for ``key``."""
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key:
        return None
    text = entry.get("kept")
    if not isinstance(text, str) or entry.get("content") != _digest(text):
        return None
    try:
        kept = _loads(text)
        if not isinstance(kept, dict) or type(kept.get("pseudo")) is not list \
                or type(kept.get("prose")) is not list:
            return None
        pseudo = {}
        for item in kept["pseudo"]:
            text, line = item
            if not isinstance(text, str) or not isinstance(line, (S.PseudoLine, S.Unread)):
                return None
            pseudo[text] = line
        prose = {}
        for item in kept["prose"]:
            text, start, value = item
            if not isinstance(text, str) or not isinstance(start, str):
                return None
            prose[text, start] = value
    except (_NotKept, ValueError, TypeError):
        return None
    return pseudo, prose


# the parses asked for while a document is parsed inside ``parses_remembered`` (each parse adds its
# value here: ``noted``)
_ASKED: list[tuple[dict[str, Any], dict[tuple[str, str], Any]]] = []


def noted_pseudo(text: str, value: Any) -> None:
    for pseudo, _prose in _ASKED:
        pseudo[text] = value


def noted_prose(text: str, start: str, value: Any) -> None:
    for _pseudo, prose in _ASKED:
        prose[text, start] = value


def remembered_read(text: str, start: str, read: Callable[[], Any]) -> Any:
    """``read()`` -- a family reader's Lark parse of ``text`` by one start symbol and its
    Transformer, ``start`` naming both (``smem:line``, ``block_scale:tc_title``) -- or the
    value remembered for the same text and start (this process's, or a kept entry's), noted
    for the entry being written.  The value is shared: a caller never changes it."""
    key = (text, start)
    if key in PROSE_MEMO:
        value = PROSE_MEMO[key]
    else:
        value = read()
        remember(PROSE_MEMO, key, value)
    noted_prose(text, start, value)
    return value


@contextmanager
def parses_remembered(lines: tuple[str, ...], reader: str = "document") -> Iterator[None]:
    """Parsing the document of ``lines`` inside (by ``reader``: ``parse_document``, or a
    family's reader): its parses from its entry where one is kept (into the process's memos),
    and an entry written afterwards where none was (or one that was not sound)."""
    with disk.folder(SUBFOLDER) as fd:
        if fd is None:
            yield
            return
        key = parses_key(lines, reader)
        name, got = disk.kept_entry(fd, SUBFOLDER, key, parses_of_entry)
        if got is not None:
            for text, line in got[0].items():
                remember(PSEUDO_MEMO, text, line)
            for k, value in got[1].items():
                remember(PROSE_MEMO, k, value)
            yield
            return
        asked: tuple[dict[str, Any], dict[tuple[str, str], Any]] = ({}, {})
        _ASKED.append(asked)
        try:
            yield
        finally:
            _ASKED.remove(asked)
        if len(asked[0]) + len(asked[1]) <= MAX_KEPT:
            disk.write_json(fd, name, entry_of_parses(*asked, key))
