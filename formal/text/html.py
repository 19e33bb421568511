"""The Sphinx HTML page of the PTX ISA -> blocks.

Nested ``section`` elements with ``h1``..``h6`` give headings, ``table`` rows give rows, ``pre``
inside ``div.highlight`` gives pseudocode lines, ``figure``/``img alt`` give figures; entities are
decoded (``&gt;&gt;`` reads ``>>``) and every character keeps the line and column of the HTML
source it came from, so a finding points into the page itself.
"""

from __future__ import annotations

import html as htmlmod
import re
from functools import lru_cache
from html.parser import HTMLParser

from ..base.source import SourceText
from .blocks import Block, blank_glyphs, select_chars
from .lines import MAX_LINE
from .plain import text_prose

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
        self.buf_len = 0  # its characters, as read (a run past MAX_LINE stops growing)
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
        room = MAX_LINE + 1 - self.buf_len
        if room <= 0:
            return  # a run already over MAX_LINE is not read (read_text names it)
        text = text[:room]  # a 4 MB <p> is never held, or mapped character by character
        piece = _multi_line(text, self.doc, line, col)
        if self.mode != "pre":
            piece = _squash(piece)
        self.buf.append(piece)
        self.buf_len += len(text)

    def _flush(self) -> None:
        pieces, self.buf, self.buf_len = self.buf, [], 0
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
            self.blocks.extend(text_prose(s))

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
                alt = blank_glyphs(htmlmod.unescape(alt))
                self.blocks.append(Block("figure", SourceText.at(alt, self.doc, line, col)))
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
        text = blank_glyphs(htmlmod.unescape(f"&{name};"))  # &#xf0c1; as the character
        self.buf.append(SourceText.at(text, self.doc, line, col))
        self.buf_len += len(text)

    def handle_charref(self, name: str) -> None:
        self.handle_entityref("#" + name)

    def close(self) -> None:
        super().close()
        self._flush()


def _multi_line(text: str, doc: str, line: int, col: int) -> SourceText:
    """A text run that may cross newlines, starting at (line, col)."""
    segs: list[tuple[int, int, int]] = [(0, line, col)]
    k = text.find("\n")
    while k != -1 and k + 1 < len(text):
        line += 1
        segs.append((k + 1, line, 1))
        k = text.find("\n", k + 1)
    return SourceText(text, doc, tuple(segs))


# white space as str.isspace() says (``\s`` of a str pattern is the same test), two or more
_SPACE_RUN = re.compile(r"\s{2,}")


def _squash(src: SourceText) -> SourceText:
    """Outside ``pre``, runs of white space (newlines too) read as one space."""
    text = src.text
    keep: list[int] = []
    at = 0
    for run in _SPACE_RUN.finditer(text):  # a run's first character stays, the rest goes
        keep.extend(range(at, run.start() + 1))
        at = run.end()
    keep.extend(range(at, len(text)))
    out = select_chars(src, keep)
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


def html_blocks(text: str, doc: str) -> list[Block]:
    """The page's blocks.  The text stage and the family readers (shared memory, block scale)
    each ask for the same page: it is read once a process (the blocks are frozen values)."""
    return list(_blocks(text, doc))


@lru_cache(maxsize=2)
def _blocks(text: str, doc: str) -> tuple[Block, ...]:
    reader = _HTMLReader(doc, text)
    reader.feed(text)
    reader.close()
    return tuple(reader.blocks)
