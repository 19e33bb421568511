"""The lines of a document that look like part of a fragment section, found line by line and
whatever the structure makes of them, so that none can be dropped without a word.

    > * Multiplicand A:                                   -> ("operand", "Multiplicand A:")
    | .s8 | A vector expression containing two .b32 registers ... |
                                                          -> ("table", ...)
    ## row =      groupID >> 1      for ai where i < 4    -> ("formula", "row = ...")

Quote marks, bullets, heading marks, table bars and back ticks are taken off first, so the
same line is found in plain text, in Markdown and quoted.  Three shapes count: an operand
heading (``Multiplicand A:``, ``Accumulators (C or D):``: the opener alone, ending in a
colon), a fragment-table row (a type and "vector expression"; or a cell
that opens with "A vector expression"), and a formula for
a fragment's ``row`` or ``col``.  The model stage (``formal.model.coverage``) checks that each
one is part of a layout or named by an error finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..base.source import SourceText
from .blocks import Block, line_text
from .lines import head_of, kind_of
from .markdown import unquote

_MARKS = "*+-#|`"


def looks_of_lines(lines: list[str], doc: str) -> Iterator[tuple[str, SourceText]]:
    """Each line that looks like part of a fragment section, as (what, its text after the
    markup); a text that repeats (blank lines, a generated section's fixed lines) is looked at
    once."""
    seen: dict[str, tuple[str, int, int]] = {}
    for lineno, raw in enumerate(lines, 1):
        got = seen.get(raw)
        if got is None:
            got = seen[raw] = look_of_raw(raw)
        what, start, end = got
        if what:
            yield what, line_text(raw[:end], doc, lineno, start)


def look_of_raw(raw: str) -> tuple[str, int, int]:
    """(``look`` of a raw line with its markup taken off, where that text starts, where it
    ends): ``("formula", 2, 9)`` for ``"> row = x |"``."""
    start, _depth = unquote(raw)
    k = start
    while k < len(raw) and (raw[k] in _MARKS or raw[k].isspace()):
        k += 1
    text = raw[k:].rstrip().rstrip("|`").rstrip()
    return look(text), k, k + len(text)


def looks_of_blocks(blocks: Iterable[Block]) -> Iterator[tuple[str, SourceText]]:
    """The same, for a document whose lines are not its text (HTML): one per block."""
    for b in blocks:
        what = look(b.text.text.strip())
        if what:
            yield what, b.text.strip()


def look(text: str) -> str:
    """``operand`` | ``table`` | ``formula`` | "" for one line with its markup taken off.
    A line's head decides the first two (``head_of``: its first token); only a line that
    opens as a flat row does (a type) is read whole."""
    if not text:
        return ""
    head = head_of(text)
    if head.assignment and text.split("=", 1)[0].strip() in ("row", "col"):
        return "formula"
    if head.operand in ("A", "B", "C/D") and text.endswith(":") and len(text) < 60:
        return "operand"
    if (head.row_head and kind_of(text).flat_row) \
            or text.lower().startswith("a vector expression"):
        return "table"
    return ""
