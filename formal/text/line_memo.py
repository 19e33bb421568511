"""The kinds of a document's lines kept between runs, so that a document read again is not
tokenized line by line again.

``kind_of`` (``formal.text.lines``) reads each distinct line its reader needs whole (most
lines are placed by their first token alone: ``head_of``) off Lark's tables; the catalog's
documents have a few hundred such lines, a good part of reading them.  The
facts of a line are a handful of words, numbers and flags, so they are kept as JSON, one file
per document in ``<cache folder>/lines`` (``formal.base.cache``: the user's own folder,
checked before use).  For a document holding the one line ``Multiplicand A:`` the entry is::

    {"schema": "ptxlayout-line-kinds/1", "key": "5e1c...", "content": "a90b...",
     "kinds": {"Multiplicand A:": {"head": "phrase", "phrase": "Multiplicand A", "first": "M",
                                   "length": 15, "last": "colon"}}}

Its name and its ``key`` are a SHA-256 of what a line's kind depends on -- the text of
``grammar/lines.lark`` and of ``formal/text/lines.py``, the versions of ptxlayout, Lark and
Python -- and of the document's text: an edited document, grammar or reader is another key,
and a file under another key is never read; ``content`` is a SHA-256 of the kinds as
written, so a damaged or edited entry is not read either.  Only a field of ``LineKind`` with a
value of its own type is taken (``LineKind(**facts)``, nothing evaluated); an entry with
anything else is ignored with a warning and written again from Lark's reading.  What the text
stage builds from these facts is the same either way, and every later stage (the parse, the
model, the enumeration of every map) runs on it as always: the cache saves the tokenizing,
nothing else.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk
from . import lines
from .lines import LineKind

SCHEMA = "ptxlayout-line-kinds/1"
SUBFOLDER = "lines"
_FIELDS = {f.name: type(f.default) for f in fields(LineKind)}


@cache
def _code_key() -> str:
    """What every line's kind depends on besides its text: the grammar, the reader, the
    versions."""
    import lark

    from ..base.grammar_files import grammar_dir
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, lark.__version__,
                                   list(sys.version_info[:3])]).encode())
    for path in (grammar_dir() / "lines.lark", Path(lines.__file__)):
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def document_key(text: str) -> str:
    """The key of a document's entry: the code's key and the document's text."""
    return hashlib.sha256(_code_key().encode() + text.encode("utf-8", "surrogatepass")) \
        .hexdigest()


def kinds_of_entry(entry: Any, key: str) -> dict[str, LineKind] | None:
    """The kinds an entry holds, or None when it is not a whole, sound entry for ``key``."""
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key \
            or not isinstance(entry.get("kinds"), dict) \
            or entry.get("content") != _digest(entry["kinds"]):
        return None
    out: dict[str, LineKind] = {}
    for text, facts in entry["kinds"].items():
        if not isinstance(facts, dict) or any(
                _FIELDS.get(k) is not type(v) for k, v in facts.items()):
            return None
        out[text] = LineKind(**facts)
    return out


def entry_of_kinds(kinds: dict[str, LineKind], key: str) -> dict[str, Any]:
    """An entry: each line's facts that differ from a blank line's."""
    blank = LineKind()
    facts = {text: {f: getattr(k, f) for f in _FIELDS if getattr(k, f) != getattr(blank, f)}
             for text, k in kinds.items()}
    return {"schema": SCHEMA, "key": key, "content": _digest(facts), "kinds": facts}


def _digest(kinds: Any) -> str:
    """A SHA-256 of the kinds as written: an entry damaged or edited since is not read."""
    return hashlib.sha256(json.dumps(kinds, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8", "surrogatepass")).hexdigest()


@contextmanager
def remembered(text: str) -> Iterator[None]:
    """Reading the document ``text`` inside: its lines' kinds from its entry where one is
    kept (``lines.known_kinds``), and an entry written afterwards where none was (or one
    that was not sound)."""
    with disk.folder(SUBFOLDER) as fd:
        if fd is None:
            yield
            return
        key = document_key(text)
        name, kinds = disk.kept_entry(fd, SUBFOLDER, key, kinds_of_entry)
        if kinds is not None:
            lines.known_kinds(kinds)
            yield
            return
        asked: dict[str, LineKind] = {}
        with lines.recording(asked):
            yield
        disk.write_json(fd, name, entry_of_kinds(asked, key))
