"""Plain text scraped from the HTML page -> blocks.

A browser copy flattens tables into cells split over lines and glues a formula to the next
heading.  For example the three lines

    .f16 | A vector expression containing
    four .f16x2 registers | a0, a1,
    a2, a3 |

are one table row of three cells (``.f16``, the fragment sentence, the element list), and
``lastcol = firstcol + 3Matrix fragments for ...`` is cut into a pseudocode line and a heading.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..base.source import SourceText
from .blocks import Block, line_text, trimmed
from .lines import kind_of

# ---- plain text (scraped from the HTML page) ---------------------------------------------------


def text_blocks(raw_lines: list[str], doc: str,
                starts: list[int] | None = None) -> Iterator[Block]:
    """``starts``: where each line's text begins (a quoted document's ``> `` left out)."""
    in_pseudo = False
    table: list[SourceText] = []  # pending "cell |" lines of a split table

    def flush_table() -> Iterator[Block]:
        yield from _split_cell_table(table)
        table.clear()

    for lineno, raw in enumerate(raw_lines, 1):
        line = raw.rstrip()
        stripped = line[starts[lineno - 1]:].strip() if starts else line.strip()
        src = line_text(line, doc, lineno, starts[lineno - 1] if starts else 0)
        kind = kind_of(stripped)
        # split-cell tables: every cell line ends with "|"
        if kind.table_cell:
            in_pseudo = False
            table.append(src.strip())
            continue
        if table:
            yield from flush_table()
        if not stripped:
            yield Block("blank", src)
            continue
        if in_pseudo or kind.assignment or kind.head in ("where", "comment"):
            pieces = split_glued(src)
            head = pieces[0]
            hk = kind_of(head.text.strip())
            if hk.assignment or hk.head in ("where", "comment") \
                    or (in_pseudo and not hk.prose_opener
                        and (hk.case or hk.continues_expression)):
                in_pseudo = True
                yield Block("pseudo", head)
                if len(pieces) > 1:
                    in_pseudo = False
                    yield from text_prose(pieces[1])
                continue
            in_pseudo = False
        yield from text_prose(src)
    if table:
        yield from flush_table()


def split_glued(src: SourceText) -> list[SourceText]:
    """Cut ``lastcol = firstcol + 3Matrix fragments for ...`` (or ``... i >= 4.f64:``)
    before the glued opener."""
    at = kind_of(src.text).glued_at
    return [src] if at < 0 else [src.slice(0, at), src.slice(at)]


def text_prose(src: SourceText) -> Iterator[Block]:
    s = src.strip()
    kind = kind_of(s.text)
    if kind.heading:
        yield Block("heading", s)
    elif kind.figure:
        yield Block("figure", s.slice(1).strip())
    elif kind.header_row:
        yield Block("row", s, (s,), header=True, flat=True)
    elif kind.flat_row:
        yield Block("row", s, (s,), flat=True)
    else:
        yield Block("prose", s)


def _split_cell_table(lines: list[SourceText]) -> Iterator[Block]:
    """Rows of a table whose cells a scrape put on separate lines, each closed by ``|``."""
    header: list[SourceText] = []
    rows: list[list[SourceText]] = []
    seen_rule = False
    for ln in lines:
        t = ln.text.strip()
        if t.startswith("|") and set(t) <= set("|-: "):
            seen_rule = True
            continue
        cells = cells_of(ln)
        if not seen_rule:
            header.extend(cells)
            continue
        for cell in cells:
            ct = cell.text.strip()
            starts_row = kind_of(ct).head in ("dotted", "header_type") \
                and not rows_open_fragment(rows)
            if not rows or starts_row:
                rows.append([cell])
            else:
                rows[-1].append(cell)
    if header:
        yield Block("row", header[0], tuple(header), header=True)
    for r in rows:
        # a row that is only empty cells (the "|" between rows) is dropped
        real = [c for c in r if c.text.strip()]
        if real:
            yield Block("row", real[0], tuple(c for c in r))


def rows_open_fragment(rows: list[list[SourceText]]) -> bool:
    """True when the last row still waits for its fragment cell (a type cell alone)."""
    if not rows:
        return False
    texts = [c.text.strip() for c in rows[-1] if c.text.strip()]
    if len(texts) != 1:
        return False
    kind = kind_of(texts[0])
    return kind.head in ("dotted", "header_type") and not kind.vector


def cells_of(src: SourceText) -> list[SourceText]:
    """``a | b |`` -> [a, b]; a line that is only ``|`` is one empty cell."""
    text = src.text
    out: list[SourceText] = []
    start = 0
    if text.lstrip().startswith("|") and text.strip() != "|":
        start = text.index("|") + 1
    k = text.find("|", start)
    while k >= 0:  # each bar closes a cell (str.find: no Python step per character)
        out.append(trimmed(src, start, k))
        start = k + 1
        k = text.find("|", start)
    tail = trimmed(src, start)
    if tail.text:
        out.append(tail)
    if not out:
        out.append(src.slice(0, 0))
    return out
