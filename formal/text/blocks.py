"""The text stage's vocabulary: blocks, the structure they are grouped into, line helpers.

Every reader (plain text, Markdown, HTML) turns its rendering into a stream of ``Block`` values --
``heading``, ``pseudo``, ``row``, ``prose``, ``figure`` -- and ``text.structure`` groups them:

    Block("heading", "9.7.14.5.9. Matrix Fragments for mma.m16n8k16")  -> a Section
    Block("prose", "Multiplicand A:")                                   -> an OperandBlock("A")
    Block("row", ".s8 | A vector expression ... | a0, a1, a2, a3")      -> a TableRow
    Block("pseudo", "groupID = %laneid >> 2")                           -> a pseudocode line

Each text is a ``SourceText``: the characters a reader sees, each with its (line, column).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..base.source import Finding, SourceText

MAX_BYTES = 16 * 1024 * 1024

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
    # a warp-level matrix move section (ldmatrix, stmatrix, movmatrix: layouts given as
    # figures and prose): its blocks in order, a paragraph that a text scrape split over
    # consecutive lines joined into one prose block
    move: bool = False
    body: tuple[Block, ...] = ()
    tmem: bool = False  # a tcgen05 tensor-memory section (its body read by formal/parse/tmem)
    # the wmma fragment section (register counts per shape and type, no layout): its blocks
    # in order, as a move section's
    wmma: bool = False


@dataclass(frozen=True)
class Document:
    name: str
    format: str  # "text" | "markdown" | "html"
    sections: tuple[Section, ...] = ()
    findings: tuple[Finding, ...] = ()
    digest: str = ""
    # the text as read, one entry a line (the lines a finding's line number counts): reports
    # quote from here, never from a second read of the file
    lines: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # every line that looks like part of a fragment section, whatever the structure made of
    # it: (what it looks like -- "operand" | "table" | "formula" --, the line), each of which
    # the model stage must find in a checked layout or name in a finding
    looks: tuple[tuple[str, SourceText], ...] = ()


# ---- helpers ----------------------------------------------------------------------------------


# Icon-font glyphs: Sphinx themes draw the permalink mark and other icons with characters of
# Unicode's private-use areas (U+F0C1 is the link icon of Font Awesome), or with a pilcrow; a
# saved page may keep one as heading text, outside any ``headerlink`` anchor.  They carry no
# text in any rendering, so every reader sees each as a space: one character for one, and
# every other character keeps its line and column.
_GLYPHS = re.compile("[\u00b6\ue000-\uf8ff\U000f0000-\U0010ffff]")


def blank_glyphs(text: str) -> str:
    """``'Title\uf0c1'`` -> ``'Title '``: icon glyphs read as spaces, in every format."""
    return _GLYPHS.sub(" ", text) if _GLYPHS.search(text) else text


def line_text(raw: str, doc: str, lineno: int, start: int = 0) -> SourceText:
    return SourceText(raw[start:], doc, ((0, lineno, start + 1),))


def trimmed(src: SourceText, start: int, end: int | None = None) -> SourceText:
    """``src.slice(start, end).strip()`` -- the very same value -- made in one step where
    ``src`` is one line (one segment at offset 0, as every line the readers cut is): the
    characters kept and the column of the first, without the slice in between.

        trimmed(SourceText("| .s8  |", doc, ((0, 3, 1),)), 1, 7)  # ".s8" at line 3, column 3
    """
    segs = src.segments
    if len(segs) != 1 or segs[0][0] != 0:
        return src.slice(start, end).strip()
    text = src.text
    n = len(text)
    end = n if end is None else end
    start = max(0, min(start, n))
    end = max(start, min(end, n))
    piece = text[start:end]
    left = len(piece) - len(piece.lstrip())
    right = max(left, len(piece.rstrip()))
    _off, line, col = segs[0]
    return SourceText(text[start + left:start + right], src.document,
                      ((0, line, col + start + left),))


def section_number(text: str) -> str:
    """The digits and dots that open a title: ``9.7.14.5.9`` of ``9.7.14.5.9. Matrix ...``
    (whether a line is a heading at all is grammar/lines.lark's to say)."""
    k = 0
    while k < len(text) and (text[k].isdigit() or text[k] == "."):
        k += 1
    return text[:k].rstrip(".")


# the characters a Markdown backslash escapes: every ASCII punctuation mark (CommonMark), so
# ``mma\\_async``, ``\\*`` and ``\\.`` read as ``mma_async``, ``*`` and ``.`` in every place
ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


_MARKUP = re.compile(r"[`\[*\\]")


def strip_markup(src: SourceText) -> SourceText:
    """Remove Markdown inline markup, keeping each kept character's position.

    Backticks and ``**`` (bold) go; ``[text](url)`` keeps ``text``; ``[](url "Permalink ...")`` and
    ``![alt](url)`` vanish entirely (a figure line is handled before this is called).
    """
    text = src.text
    if _MARKUP.search(text) is None:  # no backtick, bracket, star or backslash: no markup
        return src
    keep: list[int] = []
    k = 0
    n = len(text)
    brackets, parens = _pairs(text, "[", "]"), _pairs(text, "(", ")")
    code = False  # inside a code span: a backslash is itself (CommonMark)
    while k < n:
        ch = text[k]
        if ch not in "`\\*[":  # a run of plain characters, each kept: up to the next mark
            m = _MARKUP.search(text, k)
            run_end = n if m is None else m.start()
            keep.extend(range(k, run_end))
            k = run_end
            continue
        if ch == "`":
            code = not code
        elif ch == "\\" and not code and k + 1 < n and text[k + 1] in ESCAPABLE:
            keep.append(k + 1)
            k += 2
            continue
        if ch == "*" and k + 1 < n and text[k + 1] == "*":  # **bold**
            k += 2
            continue
        if ch == "[":
            close = brackets.get(k, -1)
            if close > 0 and close + 1 < n and text[close + 1] == "(":
                end = parens.get(close + 1, -1)
                if end > 0:
                    if not text[k + 1:close].strip():  # a permalink: [](url) or [ ](url)
                        k = end + 1
                        continue
                    j = k + 1
                    in_code = False
                    while j < close:  # the link text, its escapes (mma\_async) undone
                        if text[j] == "`":
                            in_code = not in_code
                        elif text[j] == "\\" and not in_code and j + 1 < close \
                                and text[j + 1] in ESCAPABLE:
                            j += 1
                        keep.append(j)
                        j += 1
                    k = end + 1
                    continue
        keep.append(k)
        k += 1
    # backticks carry no text (icon glyphs were made spaces when the document was read)
    keep = [k for k in keep if text[k] != "`"]
    return select_chars(src, keep)


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


def select_chars(src: SourceText, keep: list[int]) -> SourceText:
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


def clean_text(src: SourceText) -> SourceText:
    """Collapse doubled spaces that markup removal leaves and strip the ends."""
    return src.strip()
