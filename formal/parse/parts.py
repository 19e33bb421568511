"""A catalog document cut at its headings: each part's title, lines and fenced programs.

The catalog's tensor-memory files (the sparse metadata, tcgen05.cp) state a form as a heading,
a declaration line and a fenced placement program::

    ## Copy tcgen05.cp.128x256b       -> Part(title="Copy tcgen05.cp.128x256b",
    * Copy: 128 rows x 8 pieces ...                items=(Line("Copy: 128 rows ...", ...),
    ```                                                   Fenced(("lane = row", ...))))
    lane = row
    ```

``parts`` yields one ``Part`` a heading, with the lines after it in order: a text line with its
list mark stripped, or a fenced block's lines (each at its own column); text before the first
heading belongs to no part.  A reader keeps the parts whose title its grammar reads and takes
the declaration line and the fenced block that follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lark import Lark, Transformer
from lark.exceptions import LarkError

from ..base.source import Finding, SourceText, error
from .grammars import ASK_LARK, can_read, lean_read
from .kept import remembered_read


@dataclass(frozen=True)
class Line:
    """A text line of a part, its list mark stripped, and where it is."""

    text: str
    source: SourceText


@dataclass(frozen=True)
class Fenced:
    """A fenced block of a part: its lines, each at its own column."""

    lines: tuple[SourceText, ...]


@dataclass(frozen=True)
class Part:
    """One heading and what follows it up to the next, in order."""

    title: str
    source: SourceText
    items: tuple[Line | Fenced, ...]


def parts(text: str, name: str) -> Iterator[Part]:
    """Every heading's part of ``text`` (document ``name``)."""
    title: tuple[str, SourceText] | None = None
    items: list[Line | Fenced] = []
    block: list[SourceText] | None = None
    for no, raw in enumerate(text.split("\n"), start=1):
        s = raw.strip()
        if block is not None:
            if s.startswith("```"):
                items.append(Fenced(tuple(block)))
                block = None
            else:
                block.append(SourceText.at(s, name, no, len(raw) - len(raw.lstrip()) + 1))
        elif s.startswith("```"):
            block = []
        elif s.startswith("#"):
            if title is not None:
                yield Part(title[0], title[1], tuple(items))
            title, items = (s.lstrip("#").strip(), SourceText.at(raw, name, no)), []
        elif title is not None:
            items.append(Line(s.lstrip("*+-> ").strip(), SourceText.at(raw, name, no)))
    if title is not None:
        yield Part(title[0], title[1], tuple(items))


@dataclass(frozen=True)
class Declared:
    """What a part declares: the last line opening with the reader's word that its grammar
    reads (``value``, ``source``; None when none does), the fenced block after that line
    (``lines``), and a finding for each such line the grammar does not read."""

    value: Any
    source: SourceText | None
    lines: tuple[SourceText, ...] | None
    findings: tuple[Finding, ...]


def declared(part: Part, word: str, read: Callable[[str], Any], what: str) -> Declared:
    """``part``'s declaration: lines opening with ``word`` (any case) read by ``read`` (None:
    not read, an error finding ``a <word> line that does not read as <what>``)."""
    value: Any = None
    source: SourceText | None = None
    lines: tuple[SourceText, ...] | None = None
    findings: list[Finding] = []
    for item in part.items:
        if isinstance(item, Fenced):
            lines = item.lines if source is not None else lines
        elif item.text.lower().startswith(word.lower()):
            got = read(item.text)
            if got is None:
                findings.append(error("parse", item.source,
                                      f"a {word.rstrip(':').lower()} line that does not read "
                                      f"as {what}"))
            else:
                value, source = got, item.source
    return Declared(value, source, lines, tuple(findings))


def read_by_grammar(parser: Callable[[], Lark], transformer: Transformer[Any, Any], text: str,
                    start: str, reader: str) -> Any | None:
    """One line (code marks dropped) read by one start symbol of a catalog grammar (``parser()``
    builds it) and its transformer, or None when the grammar does not read it; read once a
    text and ``reader``'s start (``kept.remembered_read``)."""
    def now() -> Any | None:
        clean = text.replace("`", " ").strip()
        if not can_read(parser(), start)(clean):
            return None  # a token the start symbol needs matches nowhere: Lark would refuse it
        got = lean_read(parser(), start, transformer, clean)
        if got is not ASK_LARK:
            return got
        try:
            tree = parser().parse(clean, start=start)
        except LarkError:
            return None
        return transformer.transform(tree)
    return remembered_read(text, f"{reader}:{start}", now)
