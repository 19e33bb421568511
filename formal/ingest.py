"""Ingest stage: a document (plain text, Markdown or HTML) -> sections and operand blocks.

The PTX ISA reaches users in three renderings of the same page.  Each reader below turns its
rendering into one stream of *blocks* -- heading, pseudocode line, table row, prose paragraph,
figure -- whose text is what a reader sees, with the markup stripped, and whose ``SourceText``
remembers where every character stood.  One structural pass then groups the stream:

    9.7.14.5.9. Matrix Fragments for mma.m16n8k16 ...   -> Section
      Multiplicand A:                                    -> OperandBlock("A")
        .s4 or .u4:                                      -> TypeBlock(label)
        .atype | Fragment | Elements                     -> header row
        .s4 / .u4 | A vector expression ... | a0, ...    -> rows
        groupID = %laneid >> 2                           -> pseudocode lines
      Matrix fragments for ... are the same as ...       -> Section.references
      Metadata: A .b32 register containing ...           -> OperandBlock("metadata")

Scraped text has its own damage, handled here because it is layout, not language: table
cells split over lines and closed by `` |``, and a formula glued to the next heading
(``lastcol = firstcol + 3Matrix fragments for ...``), which is cut where the heading starts.
Nothing here interprets formulas or table cells: that is formal/parse.py's job.
"""

from __future__ import annotations

import html as htmlmod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .source import Finding, SourceText, error, warning

MAX_BYTES = 16 * 1024 * 1024

# Phrases that open a new block of prose; in scraped text they may be glued to the end of a
# formula line.
OPENERS = ("Matrix fragments", "Matrix Fragments", "Multiplicand A", "Multiplicand B",
           "Accumulators", "Metadata:", "The layout of", "The row and column",
           "Same as Matrix", "Fragment layout for")
OPERAND_OPENERS = (("Multiplicand A", "A"), ("Multiplicand B", "B"), ("Accumulators", "C/D"),
                   ("Metadata", "metadata"))


# ---- blocks (format readers' output) -------------------------------------------------------


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "pseudo" | "row" | "prose" | "figure" | "blank"
    text: SourceText
    cells: tuple[SourceText, ...] = ()
    header: bool = False  # a table's header row
    flat: bool = False  # a table row flattened into one line by a text scrape


# ---- structure (this stage's output) -------------------------------------------------------


@dataclass(frozen=True)
class TableRow:
    cells: tuple[SourceText, ...]
    flat: bool = False

    @property
    def source(self) -> SourceText:
        return self.cells[0] if self.cells else SourceText("", "", ())


@dataclass(frozen=True)
class TypeBlock:
    """The part of an operand block for one group of types (``.s4 or .u4:``), or all of it."""

    label: SourceText | None = None
    header: TableRow | None = None
    rows: tuple[TableRow, ...] = ()
    pseudo: tuple[SourceText, ...] = ()
    figures: tuple[SourceText, ...] = ()


@dataclass(frozen=True)
class OperandBlock:
    operand: str  # "A" | "B" | "C/D" | "metadata"
    heading: SourceText
    parts: tuple[TypeBlock, ...] = ()
    prose: tuple[SourceText, ...] = ()


@dataclass(frozen=True)
class Section:
    number: str
    title: SourceText
    operands: tuple[OperandBlock, ...] = ()
    references: tuple[SourceText, ...] = ()
    prose: tuple[SourceText, ...] = ()


@dataclass(frozen=True)
class Document:
    name: str
    format: str  # "text" | "markdown" | "html"
    sections: tuple[Section, ...] = ()
    findings: tuple[Finding, ...] = ()
    digest: str = ""


# ---- helpers ----------------------------------------------------------------------------------


def _line_text(raw: str, doc: str, lineno: int, start: int = 0) -> SourceText:
    return SourceText(raw[start:], doc, ((0, lineno, start + 1),))


def _starts_with_section_number(text: str) -> bool:
    """``9.7.14.5.9. Title`` or ``9.7.14.5.9 Title``: digits and dots, then a space."""
    k = 0
    dots = 0
    while k < len(text) and (text[k].isdigit() or text[k] == "."):
        dots += text[k] == "."
        k += 1
    return k > 0 and dots >= 1 and text[0].isdigit() and k < len(text) and text[k] == " " \
        and k + 1 < len(text) and text[k + 1].isalpha()


def _section_number(text: str) -> str:
    k = 0
    while k < len(text) and (text[k].isdigit() or text[k] == "."):
        k += 1
    return text[:k].rstrip(".")


def _is_identifier_start(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_")


def _looks_like_assignment(text: str) -> bool:
    """``name = ...`` at the start of a line (``==`` does not count)."""
    t = text.lstrip()
    k = 0
    while k < len(t) and (t[k].isalnum() or t[k] == "_"):
        k += 1
    if k == 0 or not _is_identifier_start(t):
        return False
    rest = t[k:].lstrip()
    return rest.startswith("=") and not rest.startswith("==")


_CASE_WORDS = (" for ", " For ", " otherwise", " Otherwise", "\tfor ", " if ")


def _looks_like_case(text: str) -> bool:
    t = " " + text.strip() + " "
    first = text.strip()[:1]
    return (first.isalnum() or first in "(%_-") and any(w in t for w in _CASE_WORDS)


def _is_prose_opener(text: str) -> bool:
    t = text.strip()
    return t.startswith(OPENERS) or t.startswith(("Figure ", "!", "A warp", "Elements of",
                                                   "In this section", "Tk:", "For matrix")) \
        or _starts_with_section_number(t)


def _split_glued(src: SourceText) -> list[SourceText]:
    """Cut ``lastcol = firstcol + 3Matrix fragments for ...`` before the glued opener."""
    text = src.text
    best = -1
    for opener in OPENERS:
        k = text.find(opener, 1)
        while k > 0:
            if not text[k - 1].isspace():
                if best < 0 or k < best:
                    best = k
                break
            k = text.find(opener, k + 1)
    if best < 0:
        return [src]
    return [src.slice(0, best), src.slice(best)]


def _strip_markup(src: SourceText) -> SourceText:
    """Remove Markdown inline markup, keeping each kept character's position.

    Backticks go; ``[text](url)`` keeps ``text``; ``[](url "Permalink ...")`` and
    ``![alt](url)`` vanish entirely (a figure line is handled before this is called).
    """
    text = src.text
    if not any(ch in text for ch in "`[*\\") and not any("\ue000" <= ch <= "\uf8ff"
                                                          for ch in text):
        return src
    keep: list[int] = []
    k = 0
    n = len(text)
    brackets, parens = _pairs(text, "[", "]"), _pairs(text, "(", ")")
    while k < n:
        ch = text[k]
        if ch == "\\" and k + 1 < n and text[k + 1] in "*_[]()#|`\\":
            keep.append(k + 1)
            k += 2
            continue
        if ch == "[":
            close = brackets.get(k, -1)
            if close > 0 and close + 1 < n and text[close + 1] == "(":
                end = parens.get(close + 1, -1)
                if end > 0:
                    keep.extend(range(k + 1, close))
                    k = end + 1
                    continue
        keep.append(k)
        k += 1
    # backticks and icon-font glyphs (the permalink mark U+F0C1) carry no text
    keep = [k for k in keep if text[k] != "`" and not "\ue000" <= text[k] <= "\uf8ff"]
    return _select(src, keep)


def _pairs(text: str, open_: str, close: str, reach: int = 4000) -> dict[int, int]:
    """Offset of each opening bracket -> offset of its closing one, if within ``reach``.

    One pass with a stack: scanning forward from every opening bracket instead is quadratic
    on a line of thousands of unmatched ``[``.
    """
    out: dict[int, int] = {}
    stack: list[int] = []
    for k, ch in enumerate(text):
        if ch == open_:
            stack.append(k)
        elif ch == close and stack:
            start = stack.pop()
            if k - start < reach:
                out[start] = k
    return out


def _select(src: SourceText, keep: list[int]) -> SourceText:
    """The characters of ``src`` at offsets ``keep`` (ascending), with their positions."""
    if len(keep) == len(src.text):
        return src
    out = "".join(src.text[k] for k in keep)
    segs: list[tuple[int, int, int]] = []
    prev = -2
    bounds = src.segments
    idx = 0  # the segment of ``src`` that holds offset k (keep is ascending: one pass)
    for j, k in enumerate(keep):
        crossed = False
        while idx + 1 < len(bounds) and bounds[idx + 1][0] <= k:
            idx += 1
            crossed = True
        # a new segment where a character was dropped, and also where ``src`` itself starts
        # a new one: two adjacent offsets may stand on different lines (a wrapped paragraph)
        if k != prev + 1 or crossed:
            off, line, col = bounds[idx]
            segs.append((j, line, col + (k - off)))
        prev = k
    if not segs:
        sp = src.span(0)
        segs = [(0, sp.line, sp.column)]
    return SourceText(out, src.document, tuple(segs))


def _clean_text(src: SourceText) -> SourceText:
    """Collapse doubled spaces that markup removal leaves and strip the ends."""
    return src.strip()


# ---- plain text (scraped from the HTML page) ---------------------------------------------------


def _text_blocks(raw_lines: list[str], doc: str) -> Iterator[Block]:
    in_pseudo = False
    table: list[SourceText] = []  # pending "cell |" lines of a split table

    def flush_table() -> Iterator[Block]:
        yield from _split_cell_table(table)
        table.clear()

    for lineno, raw in enumerate(raw_lines, 1):
        line = raw.rstrip()
        stripped = line.strip()
        src = _line_text(line, doc, lineno)
        # split-cell tables: every cell line ends with "|"
        if stripped.endswith("|") and not _looks_like_assignment(stripped):
            in_pseudo = False
            table.append(src.strip())
            continue
        if table:
            yield from flush_table()
        if not stripped:
            yield Block("blank", src)
            continue
        if in_pseudo or _looks_like_assignment(stripped) or stripped == "Where" \
                or stripped.startswith("//"):
            pieces = _split_glued(src)
            head = pieces[0]
            ht = head.text.strip()
            if _looks_like_assignment(ht) or ht in ("Where", "where") or ht.startswith("//") \
                    or (in_pseudo and not _is_prose_opener(ht)
                        and (_looks_like_case(ht) or _continues_expression(ht))):
                in_pseudo = True
                yield Block("pseudo", head)
                if len(pieces) > 1:
                    in_pseudo = False
                    yield from _text_prose(pieces[1])
                continue
            in_pseudo = False
        yield from _text_prose(src)
    if table:
        yield from flush_table()


def _continues_expression(text: str) -> bool:
    """A bare continuation such as ``groupID + 8`` with its guard on the next line."""
    return bool(text) and (text[0].isalnum() or text[0] in "(%") and not any(
        w in text for w in (". ", ": ")) and len(text) < 200


def _text_prose(src: SourceText) -> Iterator[Block]:
    t = src.text.strip()
    s = src.strip()
    if _starts_with_section_number(t):
        yield Block("heading", s)
    elif t.startswith("!"):
        yield Block("figure", s.slice(1).strip())
    elif t.startswith("."):
        lower = t.lower()
        if lower.startswith((".atype", ".btype", ".ctype", ".dtype")):
            yield Block("row", s, (s,), header=True, flat=True)
        elif "vector expression" in lower:
            yield Block("row", s, (s,), flat=True)
        else:
            yield Block("prose", s)
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
        cells = _cells_of(ln)
        if not seen_rule:
            header.extend(cells)
            continue
        for cell in cells:
            ct = cell.text.strip()
            starts_row = ct.startswith(".") and not rows_open_fragment(rows)
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
    return len(texts) == 1 and texts[0].startswith(".") and "vector" not in texts[0]


def _cells_of(src: SourceText) -> list[SourceText]:
    """``a | b |`` -> [a, b]; a line that is only ``|`` is one empty cell."""
    text = src.text
    out: list[SourceText] = []
    start = 0
    if text.lstrip().startswith("|") and text.strip() != "|":
        start = text.index("|") + 1
    for k in range(start, len(text)):
        if text[k] == "|":
            out.append(src.slice(start, k).strip())
            start = k + 1
    tail = src.slice(start).strip()
    if tail.text:
        out.append(tail)
    if not out:
        out.append(src.slice(0, 0))
    return out


# ---- Markdown -----------------------------------------------------------------------------------


def _unquote(raw: str) -> tuple[int, int]:
    """(offset where content starts, quote depth) for ``  > > text``."""
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


def _markdown_blocks(raw_lines: list[str], doc: str) -> Iterator[Block]:
    in_fence = False
    para: list[SourceText] = []  # the lines of the open paragraph (joined when it closes)
    table_rows: list[SourceText] = []

    def flush_para() -> Iterator[Block]:
        nonlocal para
        if para:
            cleaned = _clean_text(_strip_markup(_joined(para)))
            if cleaned.text and cleaned.text != "Copy to clipboard":
                yield from _md_prose(cleaned)
            para = []

    def flush_table() -> Iterator[Block]:
        if table_rows:
            yield from _md_table(table_rows)
            table_rows.clear()

    for lineno, raw in enumerate(raw_lines, 1):
        raw = raw.rstrip("\n").rstrip()
        start, _depth = _unquote(raw)
        body = raw[start:]
        src = _line_text(raw, doc, lineno, start)
        stripped = body.strip()
        if stripped.startswith("```"):
            yield from flush_para()
            yield from flush_table()
            in_fence = not in_fence
            continue
        if in_fence:
            yield Block("pseudo" if stripped else "blank", src)
            continue
        if not stripped:
            yield from flush_para()
            yield from flush_table()
            yield Block("blank", src)
            continue
        if stripped.startswith("|"):
            yield from flush_para()
            table_rows.append(src.strip())
            continue
        yield from flush_table()
        if stripped.startswith("#"):
            yield from flush_para()
            k = len(body) - len(body.lstrip())
            while k < len(body) and body[k] == "#":
                k += 1
            head = _clean_text(_strip_markup(src.slice(k)))
            if head.text:
                yield Block("heading", head)
            continue
        if stripped.startswith("!["):
            yield from flush_para()
            close = stripped.find("](")
            alt_start = body.find("![") + 2
            alt = src.slice(alt_start, alt_start + max(0, close - 2))
            yield Block("figure", alt.strip())
            continue
        lead = len(body) - len(body.lstrip())
        if stripped[:2] in ("* ", "+ ", "- "):
            yield from flush_para()
            para = [src.slice(lead + 2).strip()]
            continue
        if stripped == "Copy to clipboard":
            yield from flush_para()
            continue
        piece = src.slice(lead).strip()
        para.append(piece)
    yield from flush_para()
    yield from flush_table()


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
    t = src.text
    if t.startswith("Figure ") and "fragment layout" in t or t.startswith("Figure ") \
            and "metadata layout" in t:
        yield Block("figure", src)
        return
    yield from _text_prose(src)


def _md_table(lines: list[SourceText]) -> Iterator[Block]:
    header_done = False
    for k, ln in enumerate(lines):
        t = ln.text.strip()
        if set(t) <= set("|-: "):
            header_done = True
            continue
        cells = tuple(_clean_text(_strip_markup(c)) for c in _cells_of(ln))
        is_header = not header_done and k + 1 < len(lines) and \
            set(lines[k + 1].text.strip()) <= set("|-: ")
        yield Block("row", cells[0] if cells else ln, cells, header=is_header)


# ---- HTML (the Sphinx page of the PTX ISA) -----------------------------------------------------


class _HTMLReader(HTMLParser):
    """Collect headings, ``pre`` lines, table rows, paragraphs and figures with positions."""

    BLOCK_TAGS = {"p", "li", "dd", "dt", "figcaption", "caption", "div", "section", "td",
                  "th", "tr", "table", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol",
                  "figure", "blockquote", "br", "img"}

    def __init__(self, doc: str, text: str) -> None:
        super().__init__(convert_charrefs=False)
        self.doc = doc
        self.lines = text.split("\n")
        self.blocks: list[Block] = []
        self.buf: list[SourceText] = []  # the open text run, joined when it is flushed
        self.mode = "prose"  # "prose" | "heading" | "pre" | "cell" | "caption"
        self.skip = 0  # inside script/style/headerlink
        self.row: list[SourceText] | None = None
        self.row_header = False
        self.in_table_head = False

    # positions
    def _here(self) -> tuple[int, int]:
        line, col = self.getpos()
        return line, col + 1

    def _append(self, text: str, line: int, col: int) -> None:
        if not text:
            return
        piece = _multi_line(text, self.doc, line, col)
        if self.mode != "pre":
            piece = _squash(piece)
        self.buf.append(piece)

    def _flush(self) -> None:
        pieces, self.buf = self.buf, []
        if not pieces:
            return
        buf = SourceText.concat(pieces)
        if self.mode == "pre":
            for ln in _split_lines(buf):
                self.blocks.append(Block("pseudo" if ln.text.strip() else "blank", ln))
            return
        s = buf.strip()
        if not s.text:
            return
        if self.mode == "cell":
            if self.row is not None:
                self.row.append(s)
            return
        if self.mode == "heading":
            self.blocks.append(Block("heading", s))
        elif self.mode == "caption":
            self.blocks.append(Block("figure", s))
        elif s.text == "Copy to clipboard":
            return
        else:
            self.blocks.extend(_text_prose(s))

    # HTMLParser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag in ("script", "style") or (tag == "a" and "headerlink" in cls) \
                or (tag == "button"):
            self.skip += 1
            return
        if self.skip:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._flush()
            self.mode = "heading"
        elif tag == "pre":
            self._flush()
            self.mode = "pre"
        elif tag == "thead":
            self.in_table_head = True
        elif tag == "tr":
            self._flush()
            self.row = []
            self.row_header = self.in_table_head
        elif tag in ("td", "th") and self.row is not None:
            self._flush()
            self.mode = "cell"
            if tag == "th":
                self.row_header = True
        elif tag == "figcaption" or tag == "caption":
            self._flush()
            self.mode = "caption"
        elif tag == "img":
            alt = a.get("alt")
            if alt:
                self._flush()
                line, col = self._here()
                self.blocks.append(Block("figure", SourceText.at(htmlmod.unescape(alt),
                                                                   self.doc, line, col)))
        elif tag == "br":
            if self.mode == "pre":
                line, col = self._here()
                self._append("\n", line, col)
        elif tag in self.BLOCK_TAGS and self.mode not in ("pre", "cell"):
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "button") or (tag == "a" and self.skip):
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._flush()
            self.mode = "prose"
        elif tag == "pre":
            self._flush()
            self.mode = "prose"
        elif tag in ("td", "th"):
            self._flush()
            self.mode = "prose"
        elif tag == "thead":
            self.in_table_head = False
        elif tag == "tr":
            self._flush()
            if self.row:
                self.blocks.append(Block("row", self.row[0], tuple(self.row),
                                         header=self.row_header))
            self.row = None
        elif tag in ("figcaption", "caption"):
            self._flush()
            self.mode = "prose"
        elif tag in self.BLOCK_TAGS and self.mode not in ("pre", "cell"):
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        line, col = self._here()
        self._append(data, line, col)

    def handle_entityref(self, name: str) -> None:
        if self.skip:
            return
        line, col = self._here()
        text = htmlmod.unescape(f"&{name};")
        self.buf.append(SourceText.at(text, self.doc, line, col))

    def handle_charref(self, name: str) -> None:
        self.handle_entityref("#" + name)

    def close(self) -> None:
        super().close()
        self._flush()


def _multi_line(text: str, doc: str, line: int, col: int) -> SourceText:
    """A text run that may cross newlines, starting at (line, col)."""
    segs: list[tuple[int, int, int]] = [(0, line, col)]
    for k, ch in enumerate(text):
        if ch == "\n" and k + 1 < len(text):
            line += 1
            segs.append((k + 1, line, 1))
    return SourceText(text, doc, tuple(segs))


def _squash(src: SourceText) -> SourceText:
    """Outside ``pre``, runs of white space (newlines too) read as one space."""
    text = src.text
    keep: list[int] = []
    prev_space = False
    for k, ch in enumerate(text):
        space = ch.isspace()
        if space and prev_space:
            continue
        keep.append(k)
        prev_space = space
    out = _select(src, keep)
    if "\n" in out.text or "\t" in out.text:
        out = SourceText(out.text.replace("\n", " ").replace("\t", " "), out.document,
                         out.segments)
    return out


def _split_lines(src: SourceText) -> list[SourceText]:
    out = []
    start = 0
    for k, ch in enumerate(src.text):
        if ch == "\n":
            out.append(src.slice(start, k))
            start = k + 1
    if start < len(src.text):
        out.append(src.slice(start))
    return out


def _html_blocks(text: str, doc: str) -> list[Block]:
    reader = _HTMLReader(doc, text)
    reader.feed(text)
    reader.close()
    return reader.blocks


# ---- structure -----------------------------------------------------------------------------------


def _operand_of(text: str) -> str | None:
    t = text.strip()
    for opener, operand in OPERAND_OPENERS:
        if t.startswith(opener):
            return operand
    return None


def _is_reference(text: str) -> bool:
    t = text.strip().lower()
    return (t.startswith("matrix fragments for") and "same as" in t) or \
        t.startswith("same as matrix fragments for")


def _is_type_label(text: str) -> bool:
    t = text.strip()
    return t.startswith(".") and t.endswith(":") and "vector" not in t


def _is_major_label(text: str) -> bool:
    """``Fragment layout for Row Major matrix A is shown in ...``: a second block of formulas
    under the same table (m8n8k4), one per arrangement."""
    t = text.strip().lower()
    return t.startswith("fragment layout for ") and " major matrix " in t


@dataclass
class _OpenBlock:
    operand: str
    heading: SourceText
    parts: list[TypeBlock] = field(default_factory=list)
    prose: list[SourceText] = field(default_factory=list)
    label: SourceText | None = None
    header: TableRow | None = None
    rows: list[TableRow] = field(default_factory=list)
    pseudo: list[SourceText] = field(default_factory=list)
    figures: list[SourceText] = field(default_factory=list)

    def close_part(self) -> None:
        if self.label is not None or self.rows or self.pseudo or self.header or self.figures:
            self.parts.append(TypeBlock(self.label, self.header, tuple(self.rows),
                                        tuple(self.pseudo), tuple(self.figures)))
        self.label, self.header = None, None
        self.rows, self.pseudo, self.figures = [], [], []

    def freeze(self) -> OperandBlock:
        self.close_part()
        return OperandBlock(self.operand, self.heading, tuple(self.parts), tuple(self.prose))


def structure(blocks: Iterable[Block], doc: str) -> list[Section]:
    sections: list[Section] = []
    title: SourceText | None = None
    operands: list[OperandBlock] = []
    refs: list[SourceText] = []
    prose: list[SourceText] = []
    current: _OpenBlock | None = None

    def close_section() -> None:
        nonlocal current, title
        if current is not None:
            operands.append(current.freeze())
            current = None
        if title is not None:
            t = title.text.strip()
            sections.append(Section(_section_number(t), title, tuple(operands), tuple(refs),
                                    tuple(prose)))
        operands.clear()
        refs.clear()
        prose.clear()
        title = None

    for b in blocks:
        if b.kind == "blank":
            continue
        if b.kind == "heading":
            t = b.text.text.strip()
            # a Markdown page repeats its title as the first heading: merge the two
            if title is not None and not operands and current is None and not refs \
                    and _section_number(t) and _section_number(t) == \
                    _section_number(title.text.strip()):
                title = b.text
                continue
            close_section()
            title = b.text
            continue
        if title is None:
            title = SourceText.at("", doc, 1)  # content before any heading
        if b.kind == "prose":
            t = b.text.text
            if _is_reference(t):
                refs.append(b.text)
                continue
            operand = _operand_of(t)
            if operand is not None:
                if current is not None:
                    operands.append(current.freeze())
                current = _OpenBlock(operand, b.text)
                if operand == "metadata":
                    current.prose.append(b.text)
                continue
            if current is not None and _is_type_label(t):
                current.close_part()
                current.label = b.text
                continue
            if current is not None and _is_major_label(t):
                # the table above applies to every arrangement: each part keeps it
                header, rows = current.header, list(current.rows)
                if current.label is not None or current.pseudo:
                    current.close_part()
                    current.header, current.rows = header, rows
                current.label = b.text
                continue
            if current is not None:
                current.prose.append(b.text)
            else:
                prose.append(b.text)
            continue
        if current is None:
            if b.kind == "row" or b.kind == "pseudo":
                # fragments with no operand heading: kept as section prose so the model can
                # report them
                prose.append(b.text)
            continue
        if b.kind == "figure":
            current.figures.append(b.text)
        elif b.kind == "pseudo":
            current.pseudo.append(b.text)
        elif b.kind == "row":
            row = TableRow(b.cells, b.flat)
            if b.header:
                if current.rows or current.pseudo:
                    current.close_part()
                current.header = row
            else:
                if current.pseudo:
                    # a new table after formulas opens a new part
                    current.close_part()
                current.rows.append(row)
    close_section()
    return sections


# ---- entry points --------------------------------------------------------------------------------


def detect_format(text: str, name: str = "") -> str:
    """``html`` | ``markdown`` | ``text``, from the content (the name only breaks ties)."""
    head = text[:20000].lstrip().lower()
    if head.startswith(("<!doctype html", "<html")) or ("<section" in head and "</" in head) \
            or ("<h1" in head and "</h1>" in head):
        return "html"
    md = 0
    text_lines = text[:200000].split("\n")
    for ln in text_lines:
        s = ln.lstrip()
        if s.startswith("#") and s.lstrip("#").startswith(" "):
            md += 3
        elif s.startswith("```"):
            md += 3
        elif s.startswith("> "):
            md += 1
        elif s.startswith("| ---") or s.startswith("|---") and "| " in s:
            md += 1
        elif s.startswith(("* ", "+ ")):
            md += 1
        if "](" in s and "[" in s:
            md += 1
    if md >= 4:
        return "markdown"
    if name.endswith((".html", ".htm")):
        return "html"
    if name.endswith((".md", ".markdown")) and md > 0:
        return "markdown"
    return "text"


def read_bytes(data: bytes, name: str, max_bytes: int = MAX_BYTES) -> Document:
    """Ingest one document given as bytes; every problem is a finding, never an exception."""
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    here = SourceText.at("", name, 1)
    if len(data) > max_bytes:
        return Document(name, "unknown", (), (error(
            "input", here, f"the document is {len(data)} bytes; the limit is {max_bytes} "
            "(raise it with --max-size)"),), digest)
    if not data.strip():
        return Document(name, "unknown", (), (error("input", here, "the document is empty"),),
                        digest)
    if b"\x00" in data[:65536]:
        return Document(name, "unknown", (), (error(
            "input", here, "the document holds NUL bytes: binary data, not a spec text"),),
            digest)
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > max(16, len(text) // 100):
        return Document(name, "unknown", (), (error(
            "input", here, f"the document is not UTF-8 text ({bad} undecodable bytes)"),), digest)
    if text.startswith("\ufeff"):
        text = text[1:]
    return read_text(text, name, digest)


def read_text(text: str, name: str, digest: str = "") -> Document:
    fmt = detect_format(text, name)
    findings: list[Finding] = []
    if fmt == "html":
        blocks = _html_blocks(text, name)
    else:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        blocks = list(_markdown_blocks(lines, name) if fmt == "markdown"
                      else _text_blocks(lines, name))
    sections = structure(blocks, name)
    if not any(s.operands or s.references for s in sections):
        findings.append(warning("input", SourceText.at("", name, 1),
                                f"no operand blocks (Multiplicand A/B, Accumulators, Metadata) "
                                f"found in this {fmt} document"))
    return Document(name, fmt, tuple(sections), tuple(findings), digest)


def read_path(path: str | Path, max_bytes: int = MAX_BYTES, name: str | None = None) -> Document:
    p = Path(path)
    label = name or str(path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            return Document(label, "unknown", (), (error(
                "input", SourceText.at("", label, 1),
                f"the document is {size} bytes; the limit is {max_bytes} (raise it with "
                "--max-size)"),))
        data = p.read_bytes()
    except OSError as exc:
        return Document(label, "unknown", (), (error(
            "input", SourceText.at("", label, 1), f"cannot read the document: {exc.strerror}"),))
    return read_bytes(data, label, max_bytes)
