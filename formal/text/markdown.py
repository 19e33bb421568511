"""Markdown renderings -> blocks.

Headings (``#`` .. ``######``, with or without links), ``> `` quotes, fenced code, ``|`` tables
(with or without their outer pipes: ``.atype | Fragment`` over ``---|---`` is a table too; a raw
HTML ``<table>`` is read by the HTML reader, its merged cells as the page writes them) and
``+``/``*``/``-`` bullets.  A quoted table row ``> | .s8 | ... | a0, a1 |`` is the same row as
its unquoted form, at the column where its first cell starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from ..base.source import SourceText
from .blocks import Block, clean_text, line_text, strip_markup, trimmed
from .html import html_blocks
from .lines import head_of, kind_of
from .plain import cells_of, split_glued, text_prose

# ---- Markdown -----------------------------------------------------------------------------------


def unquote(raw: str) -> tuple[int, int]:
    """(offset where content starts, quote depth) for ``  > > text``."""
    if not raw.startswith((" ", ">")):
        return 0, 0  # no quote mark (most lines): nothing to skip
    k = 0
    depth = 0
    n = len(raw)
    while True:
        j = k
        while j < n and raw[j] == " ":
            j += 1
        if j < n and raw[j] == ">":
            depth += 1
            k = j + 1
            if k < n and raw[k] == " ":
                k += 1
            continue
        return k, depth


def markdown_blocks(raw_lines: list[str], doc: str) -> Iterator[Block]:
    in_fence = False
    para: list[SourceText] = []  # the lines of the open paragraph (joined when it closes)
    table_rows: list[SourceText] = []
    in_pseudo = False  # the line above was a formula line outside a fence

    def flush_para() -> Iterator[Block]:
        nonlocal para
        if para:
            cleaned = clean_text(strip_markup(_joined(para)))
            if cleaned.text and cleaned.text != "Copy to clipboard":
                yield from _md_prose(cleaned)
            para = []

    def flush_table() -> Iterator[Block]:
        if table_rows:
            yield from _md_table(table_rows)
            table_rows.clear()

    html_end = 0  # the last line of a raw HTML table being read
    for lineno, raw in enumerate(raw_lines, 1):
        if lineno <= html_end:
            continue
        raw = raw.rstrip("\n").rstrip()
        start, _depth = unquote(raw)
        body = raw[start:]
        src = line_text(raw, doc, lineno, start)
        stripped = body.strip()
        if not in_fence and start == 0 and stripped.startswith("<") \
                and stripped.lower().startswith("<table"):
            # raw HTML in Markdown (a converted mirror keeps each table with merged cells as
            # the page's <table>, rowspan and all): its rows, read by the HTML reader
            if para:
                yield from flush_para()
            if table_rows:
                yield from flush_table()
            html_end = _html_table_end(raw_lines, lineno)
            yield from _html_table(raw_lines, lineno, html_end, doc)
            continue
        if stripped.startswith("```"):
            if para:
                yield from flush_para()
            if table_rows:
                yield from flush_table()
            in_fence = not in_fence
            continue
        if in_fence:
            yield Block("pseudo" if stripped else "blank", src)
            continue
        if not stripped:
            if para:
                yield from flush_para()
            if table_rows:
                yield from flush_table()
            yield Block("blank", src)
            continue
        if stripped.startswith("|") or ("|" in stripped and (
                table_rows or _opens_table(raw_lines, lineno))):
            # a GFM table: rows open with '|', or -- a mirror that writes them without the
            # outer pipes (``.atype | Fragment | Elements``) -- a header over ``---|---``
            if para:
                yield from flush_para()
            table_rows.append(src.strip())
            continue
        if table_rows:
            yield from flush_table()
        if stripped.startswith("#"):
            if para:
                yield from flush_para()
            k = len(body) - len(body.lstrip())
            while k < len(body) and body[k] == "#":
                k += 1
            head = clean_text(strip_markup(src.slice(k)))
            if head.text:
                yield Block("heading", head)
            continue
        if stripped.startswith("!["):
            if para:
                yield from flush_para()
            close = stripped.find("](")
            alt_start = body.find("![") + 2
            yield Block("figure", trimmed(src, alt_start, alt_start + max(0, close - 2)))
            continue
        lead = len(body) - len(body.lstrip())
        if stripped[:2] in ("* ", "+ ", "- "):
            if para:
                yield from flush_para()
            para = [trimmed(src, lead + 2)]
            continue
        if stripped == "Copy to clipboard":
            if para:
                yield from flush_para()
            continue
        piece = trimmed(src, lead)
        line_kind = _plain_kind(piece, in_pseudo)
        in_pseudo = line_kind == "pseudo"
        if line_kind:
            # a formula or a flattened table row written as plain text (no fence, no '|'):
            # read as the plain-text reader reads it, never joined into a paragraph
            if para:
                yield from flush_para()
            if in_pseudo:
                pieces = split_glued(piece)
                yield Block("pseudo", pieces[0])
                if len(pieces) > 1:
                    in_pseudo = False
                    yield from text_prose(pieces[1])
            else:
                yield from text_prose(piece)
            continue
        para.append(piece)
    yield from flush_para()
    yield from flush_table()


def _html_table_end(raw_lines: list[str], lineno: int) -> int:
    """The line (1-based) of the ``</table>`` that closes the table opened at ``lineno``
    (the document's last line if none does)."""
    for k in range(lineno - 1, len(raw_lines)):
        if "</table>" in raw_lines[k].lower():
            return k + 1
    return len(raw_lines)


def _html_table(raw_lines: list[str], first: int, last: int, doc: str) -> Iterator[Block]:
    """The rows of a raw HTML table, each cell at its own line and column: the HTML reader
    is given the table's lines below as many empty lines as stand above it."""
    text = "\n" * (first - 1) + "\n".join(ln.rstrip("\n") for ln in raw_lines[first - 1:last])
    yield from (b for b in html_blocks(text, doc) if b.kind == "row")


_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?$|^\|\s*:?-+:?\s*\|$")


def _opens_table(raw_lines: list[str], lineno: int) -> bool:
    """The line ``lineno`` (1-based) is a table's header: the next line is a delimiter row
    with at least one ``|`` (``---|---|---``; a lone ``---`` is a rule, not a table)."""
    if lineno >= len(raw_lines):
        return False
    nxt = raw_lines[lineno].rstrip()
    start, _depth = unquote(nxt)
    return _DELIMITER.match(nxt[start:].strip()) is not None


def _plain_kind(piece: SourceText, in_pseudo: bool) -> str:
    """``pseudo`` for a formula line (``row = groupID``, or a case line such as
    ``groupID + 8  for ai where i >= 4`` below one), ``row`` for a flattened fragment-table
    row (``.f16 A vector expression containing ...``), else "": the lines whose reading must
    not depend on whether the document was taken for Markdown or for plain text.  Outside
    a formula the line's head answers (``head_of``: its first token) unless it opens as a
    flat row does; the line is read whole only then or below a formula line."""
    head = head_of(piece.text)
    if not in_pseudo and not head.row_head:
        return "pseudo" if head.assignment or head.head in ("where", "comment") else ""
    k = kind_of(piece.text)
    if k.assignment or k.head in ("where", "comment") or \
            (in_pseudo and not k.prose_opener and (k.case or k.continues_expression)):
        return "pseudo"
    if k.flat_row:
        return "row"
    return ""


def _joined(pieces: list[SourceText]) -> SourceText:
    """The lines of a paragraph joined by spaces in one pass (joining one line at a time is
    quadratic in the paragraph's length); each space sits just after its line's end."""
    parts: list[SourceText] = []
    for p in pieces:
        if not p.text:
            continue
        if parts:
            end = parts[-1].span(len(parts[-1].text) - 1)
            parts.append(SourceText(" ", p.document, ((0, end.line, end.column + 1),)))
        parts.append(p)
    return SourceText.concat(parts) if parts else pieces[0]


def _md_prose(src: SourceText) -> Iterator[Block]:
    if kind_of(src.text).figure_caption:
        yield Block("figure", src)
        return
    yield from text_prose(src)


def _md_table(lines: list[SourceText]) -> Iterator[Block]:
    header_done = False
    for k, ln in enumerate(lines):
        t = ln.text.strip()
        if set(t) <= set("|-: "):
            header_done = True
            continue
        # a cell's line breaks (``<br>``) are spaces: the same length keeps the columns
        cells = tuple(clean_text(strip_markup(
            replace(c, text=c.text.replace("<br>", "    ")) if "<br>" in c.text else c))
            for c in cells_of(ln))
        is_header = not header_done and k + 1 < len(lines) and \
            set(lines[k + 1].text.strip()) <= set("|-: ")
        yield Block("row", cells[0] if cells else ln, cells, header=is_header)
