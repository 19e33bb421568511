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
     {"c": "PseudoLine", "f": {"kind": "assign", "name": "groupID", "name_pos": 0,
      "expr": {"c": "BinOp", "f": {"op": ">>", "left": {"c": "Special", "f": {"name":
      "%laneid", "pos": 10}}, "right": {"c": "Num", "f": {"value": 2, "pos": 20, ...}}}},
      ...}}]

A record is rebuilt as ``cls(**fields)`` where ``cls`` is one of those classes, found by its
name in a fixed table (``_CLASSES``), and a field only by its declared name; a tuple is ``{"t":
[...]}``.  A pseudocode line's ``source`` is not kept: each use puts the line's own there, as
the in-process memo does; a tcgen05 fact's ``src`` neither, and each piece of text it holds is
a ``Slice`` of the text read (``formal.parse.tmem``).  A line or cell the grammar refuses is
kept as its one finding (``Unread``: kind, offset in the text, message), rebuilt on the text's
own place, so an unreadable sentence does not load the grammar again in every run.  A value
holding anything else is not kept (parsed again next time).  The entry's name and ``key`` are a
SHA-256 of the document's lines and of what a parse depends on (the two grammars, the parse
stage's modules, the versions), and its ``content`` a SHA-256 of what it holds: another key, a
damaged or edited entry, an unknown class or field is ignored with a warning and written again
from Lark's parse.  The records are the same either way, and every later stage (the model, the
enumeration of every map, Z3 or its kept answer) runs on them as always.

The family readers (shared memory, block scale, sparse metadata, tcgen05.cp) read each line
through ``remembered_read`` and a document inside ``parses_remembered(lines, reader)``: the
same memo and the same entries, one file per (document, reader), ``(text, "smem:line")`` beside
``(text, "header")``; their values may also be lists and str-keyed maps (``{"m": [[k, v]]}``).
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
from ..base.source import SourceText
from . import smem_records as R
from . import syntax as S
from .grammars import PROSE_MEMO, PSEUDO_MEMO, remember

SCHEMA = "ptxlayout-parses/1"
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
_NO_SOURCE = SourceText.at("", "", 0)  # a kept line's place: each use puts its own


class _NotKept(Exception):
    """A value this module does not write (or an entry it cannot read back)."""


@cache
def _code_key() -> str:
    from ..base.grammar_files import grammar_dir
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, list(sys.version_info[:3])]).encode())
    here = Path(__file__).resolve().parent
    for path in (*sorted(grammar_dir().glob("*.lark")), *sorted(here.glob("*.py")),
                 Path(ids.__file__), Path(disk.__file__).parent / "source.py"):
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
    if isinstance(v, tuple):
        return {"t": [_write(x) for x in v]}
    if type(v) is Fraction:
        return {"q": [v.numerator, v.denominator]}
    if isinstance(v, list):
        return {"l": [_write(x) for x in v]}
    if isinstance(v, dict) and all(type(k) is str for k in v):
        return {"m": [[k, _write(x)] for k, x in v.items()]}
    name = type(v).__name__
    if _CLASSES.get(name) is type(v):
        return {"c": name, "f": {f: _write(getattr(v, f)) for f in sorted(_FIELDS[name])
                                 if f != _PLACED.get(name)}}
    raise _NotKept(name)


def _read(v: Any) -> Any:
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, dict) and set(v) == {"t"} and isinstance(v["t"], list):
        return tuple(_read(x) for x in v["t"])
    if isinstance(v, dict) and set(v) == {"q"} and isinstance(v["q"], list) \
            and len(v["q"]) == 2 and all(type(x) is int for x in v["q"]) and v["q"][1] > 0:
        return Fraction(v["q"][0], v["q"][1])
    if isinstance(v, dict) and set(v) == {"l"} and isinstance(v["l"], list):
        return [_read(x) for x in v["l"]]
    if isinstance(v, dict) and set(v) == {"m"} and isinstance(v["m"], list):
        pairs = [(k, _read(x)) for k, x in v["m"]]
        if not all(type(k) is str for k, _ in pairs):
            raise _NotKept("a key")
        return dict(pairs)
    if isinstance(v, dict) and set(v) == {"c", "f"} and isinstance(v["f"], dict):
        name = v["c"]
        if not isinstance(name, str) or name not in _CLASSES or not set(v["f"]) <= _FIELDS[name]:
            raise _NotKept(str(name))
        got = {k: _read(x) for k, x in v["f"].items()}
        if name in _PLACED:
            got[_PLACED[name]] = _NO_SOURCE
        try:
            return _CLASSES[name](**got)
        except TypeError as exc:  # a required field missing
            raise _NotKept(name) from exc
    raise _NotKept(type(v).__name__)


def _same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value of the same types throughout (a Lark
    ``Token`` is not a ``str``, ``True`` not ``1``): only a value read back as it was is kept."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a).__name__ in _CLASSES:
        return all(_same(getattr(a, f), getattr(b, f)) for f in _FIELDS[type(a).__name__]
                   if f != _PLACED.get(type(a).__name__))
    return bool(a == b)


def _kept(value: Any) -> Any:
    """``value`` as written, where it reads back as the same value (else ``_NotKept``)."""
    w = _write(value)
    if not _same(_read(json.loads(json.dumps(w))), value):  # as the next run reads it
        raise _NotKept(type(value).__name__)
    return w


def _digest(kept: Any) -> str:
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8")).hexdigest()


def entry_of_parses(pseudo: dict[str, S.PseudoLine | S.Unread], prose: dict[tuple[str, str], Any],
                    key: str) -> dict[str, Any]:
    """An entry: each pseudocode line's and prose piece's parse that can be written."""
    lines, pieces = [], []
    for text, value in pseudo.items():
        try:
            lines.append([text, _kept(value)])
        except _NotKept:
            pass
    for (text, start), value in prose.items():
        try:
            pieces.append([text, start, _kept(value)])
        except _NotKept:
            pass
    kept = {"pseudo": lines, "prose": pieces}
    return {"schema": SCHEMA, "key": key, "content": _digest(kept), "kept": kept}


def parses_of_entry(entry: Any, key: str) \
        -> tuple[dict[str, Any], dict[tuple[str, str], Any]] | None:
    """(pseudocode lines, prose pieces) an entry holds, or None when it is not a whole,
    sound entry for ``key``."""
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key:
        return None
    kept = entry.get("kept")
    if not isinstance(kept, dict) or entry.get("content") != _digest(kept) \
            or not isinstance(kept.get("pseudo"), list) or not isinstance(kept.get("prose"), list):
        return None
    try:
        pseudo = {}
        for item in kept["pseudo"]:
            text, value = item
            line = _read(value)
            if not isinstance(text, str) or not isinstance(line, (S.PseudoLine, S.Unread)):
                return None
            pseudo[text] = line
        prose = {}
        for item in kept["prose"]:
            text, start, value = item
            if not isinstance(text, str) or not isinstance(start, str):
                return None
            prose[text, start] = _read(value)
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
