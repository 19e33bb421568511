"""The text stage's reading of a document kept between runs, rebuilt structurally, never by
reading the text again: ``<cache folder>/documents``.

Reading the catalog's nine documents -- Markdown split into blocks, tables into cells, each
line's kind, the sections and operand blocks, every character's (line, column) -- costs about
80 ms of CPU a run, and gives the same ``Document`` for the same text every time.  That value
is a tree of small frozen records (``formal.text.blocks``, ``formal.base.source``) holding
words, numbers, flags and places, so it is kept as JSON.  A document whose one heading is
``# 9.7 Title`` on line 1 is kept as::

    {"#c": "Document", "name": "a.md", "format": "markdown", "digest": "5e1c...",
     "sections": {"#t": [{"#c": "Section", "number": "9.7",
                          "title": {"#s": ["Title", "a.md", 0, 1, 7]}, ...}]}, ...}

A record is ``{"#c": class, field: value, ...}`` with its class found by name in a fixed table
(``_CLASSES``) and only its declared fields; a tuple ``{"#t": [...]}``; a ``SourceText``
``{"#s": [text, document, offset, line, column, ...]}``, its segments flat (the text ``Title``
starts at line 1, column 7).  Reading back is ``json.loads``'s ``object_hook``, which the C
parser calls innermost first: the 15,000 values of the catalog are built again in about 15 ms
without a walk of our own.  Only values of exactly these types are written (a ``str``
subclass, a list, a float or any other value makes the document not kept: it is read from
its text every run), so what is read back is the value that was written, type for type.

The entry's name and ``key`` are a SHA-256 of the document's text, its name and the SHA-256
of its bytes, and of everything the reading depends on: every module of ``formal/text/``,
``base/source.py``, ``grammar/lines.lark`` and the versions of ptxlayout, Lark and Python; it
holds the JSON text and that text's SHA-256, and the text's nesting is checked before it is
parsed.  Another key, a damaged or edited entry, an unknown class, field or mark, a document
of another name is ignored with a warning and the document is read from its text again (and
the entry written again).  Documents over 1 MiB are not kept (the text stage reads them as
always).  The parse stage, the model, the enumeration of every map and the proofs run on the
same ``Document`` either way.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import fields
from functools import cache
from itertools import chain
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..base import source
from ..base.files import text_too_deep
from ..base.source import Finding, SourceText, Span
from . import blocks as B

SCHEMA = "ptxlayout-document/1"
SUBFOLDER = "documents"
_CLASSES: dict[str, type] = {c.__name__: c for c in (
    B.Block, B.TableRow, B.TypeBlock, B.OperandBlock, B.Section, B.Document, Finding, Span)}
_FIELDS = {name: tuple(f.name for f in fields(c)) for name, c in _CLASSES.items()}
# a record's keys as written: its fields and the mark naming its class
_MARKED = {name: frozenset(f) | {"#c"} for name, f in _FIELDS.items()}
# a kept text over this many characters would pass the cache's limit on a file
_MOST = disk.MAX_ENTRY // 2


_INT = {int}


class _NotWritten(Exception):
    """A value this module does not write (or an entry it cannot read back)."""


@cache
def _code_key() -> bytes:
    import lark

    from ..base.grammar_files import grammar_dir
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, lark.__version__,
                                   list(sys.version_info[:3])]).encode())
    here = Path(__file__).resolve().parent
    for path in (*sorted(here.glob("*.py")), Path(source.__file__), grammar_dir() / "lines.lark"):
        h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.digest()


def reading_key(text: str, name: str, digest: str) -> str:
    """The key of a document's entry: the text stage's code, the document's name, the SHA-256
    of its bytes and its text."""
    h = hashlib.sha256(_code_key())
    h.update(json.dumps([name, digest]).encode() + b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


_PLAIN = frozenset({type(None), str, int, bool})


def _write(v: Any) -> Any:
    """``v`` as the JSON value that marks it (a leaf -- None, a ``str``, an ``int``, a
    ``bool`` -- is written as itself where it stands, without a call of its own: most
    values are leaves)."""
    t = type(v)
    if t in _PLAIN:
        return v
    if t is SourceText:
        segs = v.segments
        if len(segs) == 1:  # one line (most places): its one segment's three numbers
            return {"#s": [v.text, v.document, *segs[0]]}
        return {"#s": [v.text, v.document, *chain.from_iterable(segs)]}
    if t is tuple:
        return {"#t": [x if type(x) in _PLAIN else _write(x) for x in v]}
    name = t.__name__
    if _CLASSES.get(name) is not t:
        raise _NotWritten(name)
    out = {"#c": name}
    for f in _FIELDS[name]:
        x = getattr(v, f)
        out[f] = x if type(x) in _PLAIN else _write(x)
    return out


def _hook(d: dict[str, Any]) -> Any:
    """``json.loads``'s ``object_hook``: each object of a kept text as the value it marks
    (the commonest marks asked first: a document has about as many places as values)."""
    v = d.get("#s")
    if v is not None:
        if len(d) == 1 and type(v) is list and len(v) % 3 == 2 and type(v[0]) is str \
                and type(v[1]) is str and set(map(type, v[2:])) <= _INT:
            it = iter(v)
            text, document = next(it), next(it)
            return SourceText(text, document, tuple(zip(it, it, it)))
        raise _NotWritten("a place")
    v = d.get("#t")
    if v is not None:
        if len(d) == 1 and type(v) is list:
            return tuple(v)
        raise _NotWritten("a tuple")
    name = d.get("#c")
    if name is None:
        raise _NotWritten("an unmarked object")
    if type(name) is not str or not d.keys() <= _MARKED.get(name, frozenset()):
        raise _NotWritten(str(name))
    del d["#c"]
    try:
        return _CLASSES[name](**d)
    except TypeError as exc:  # a required field missing
        raise _NotWritten(name) from exc


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_of_reading(doc: B.Document, key: str) -> dict[str, Any] | None:
    """The entry of a document's reading, or None where it holds a value this module does
    not write (or is too big to keep)."""
    try:
        # no cycle can be written (_write makes a fresh tree): json's check for one is skipped
        text = json.dumps(_write(doc), separators=(",", ":"), check_circular=False)
    except _NotWritten:
        return None
    if len(text) > _MOST:
        return None
    return {"schema": SCHEMA, "key": key, "content": _digest(text), "kept": text}


def reading_of_entry(entry: Any, key: str, name: str, digest: str) -> B.Document | None:
    """The ``Document`` an entry holds, or None when it is not a whole, sound entry for
    ``key`` (and the document ``name`` with ``digest``)."""
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key:
        return None
    text = entry.get("kept")
    if not isinstance(text, str) or entry.get("content") != _digest(text) \
            or text_too_deep(text):
        return None
    try:
        doc = json.loads(text, object_hook=_hook)
    except (_NotWritten, ValueError, TypeError, RecursionError):
        return None
    if type(doc) is not B.Document or doc.name != name or doc.digest != digest:
        return None
    return doc


def kept_reading(text: str, name: str, digest: str,
                 read: Callable[[], B.Document]) -> B.Document:
    """``read()`` -- the text stage's reading of ``text`` -- or the reading kept for the same
    text, name, bytes and code; a reading made here is kept for the next run."""
    with disk.folder(SUBFOLDER) as fd:
        if fd is None:
            return read()
        key = reading_key(text, name, digest)
        entry_name, got = disk.kept_entry(
            fd, SUBFOLDER, key, lambda e, k: reading_of_entry(e, k, name, digest))
        if got is not None:
            return got  # type: ignore[no-any-return]
        doc = read()
        entry = entry_of_reading(doc, key)
        if entry is not None:
            disk.write_json(fd, entry_name, entry)
        return doc
