"""Other renderings of the seed sections, and paraphrases of their fragment sentences (test helper).

The PTX ISA reaches users as the HTML page, Markdown mirrors and text copied from a browser,
and each mirror has its own habits.  This module takes a seed (read from ../shared/seeds at
test time; nothing of the spec is stored here) and writes the same sections the ways the real
mirrors do, keeping, for every line it writes, the seed line it came from (``origin``), so a
finding can be traced back:

    seed (Markdown)                         double_spaced(seed)
      ```                                     ```
      row =      groupID       for a0         row = groupID for a0
                 groupID + 8   for a1                                  <- a blank line after
      ```                                      groupID + 8 for a1         each code line; a
                                              ```                         continuation keeps
                                                                          one space

The renderings (each must read to the same findings as the seed):

* ``double_spaced``   code blocks double-spaced, continuation lines indented by one space
* ``quoted``          list items whose body is a ``> `` block quote (fences and tables inside)
* ``sphinx``          the Sphinx HTML page (tests/sphinx.py)
* ``browser``         text copied from a browser: no markup, tables flattened to one line a
                      row, figure alt text as ``!...``
* ``glued``           browser text where a formula's last line runs into the next opener
                      (``col = groupIDAccumulators (C or D):``, ``... i >= 4.f64:``)
* ``empty_cells`` / ``missing_cells``   table rows whose element list is empty or missing
* ``bulleted``        bullet lines and a ``# Notes`` heading added above the document
* ``quoted_whole``    every line quoted with ``> ``
* ``titles_without_numbers``  section titles without their numbers (headings known by their
                      words: ``Matrix Fragments for mma.m16n8k32``)
* ``glyph_headings``  the permalink glyph U+F0C1 as heading text, outside any link (a saved
                      page), in Markdown, plain text and the Sphinx HTML made from it
* ``bare_tables``     table rows without their outer pipes over a ``---|---`` delimiter row
                      (a converted mirror's GFM tables: the PTX ISA 9.4 Markdown mirror)
* ``html_tables``     every table as the page's raw HTML ``<table>`` inside the Markdown (the
                      9.4 mirror keeps the tables with merged cells so)
* ``sub_bulleted``    an operand's per-type parts (``+ .s4 or .u4:`` each over its own
                      table) as one table of every type, then one sub-bullet per type that
                      names it (``+ Fragment layout for matrix A when .atype is .s4 or .u4
                      is shown below:``) over its figure and formulas, as the spec's
                      m8n8k4 ``.f16`` accumulators are written

``headings_damaged`` (titles removed) changes what can be read: there the property is that
no formula line is dropped without a finding naming it.

Then every fragment sentence is rewritten from its facts -- register count, register kind,
elements per register, element types, non-zero/out-of, matrix -- through the grammatical
forms a writer might use (``paraphrases``), and meaning-changing edits of the same facts are
planted (``errata``): a register count doubled, a register kind of another width, an element
type the row does not hold.  A paraphrase must read to the same facts; an erratum must be
found on its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from .sphinx import markdown_to_sphinx_html

Line = tuple[str, int]  # (text, 1-based line of the seed it came from; 0 for an added line)


@dataclass(frozen=True)
class Rendering:
    name: str
    text: str
    suffix: str  # ".md" | ".txt" | ".html"
    origin: tuple[int, ...] = ()  # origin[k] = the seed line of line k + 1 (empty: not kept)
    planted: tuple[int, ...] = ()  # lines (of this text) where an erratum was planted
    missing_lists: tuple[int, ...] = ()  # lines of rows whose element list was taken out

    def seed_line(self, line: int) -> int:
        return self.origin[line - 1] if 0 < line <= len(self.origin) else 0


def _lines(text: str) -> list[Line]:
    return [(t, k) for k, t in enumerate(text.split("\n"), 1)]


def _render(name: str, lines: list[Line], suffix: str, **kw: tuple[int, ...]) -> Rendering:
    return Rendering(name, "\n".join(t for t, _ in lines), suffix,
                     tuple(o for _, o in lines), **kw)


# ---- Markdown structure --------------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<pre>(?:\s*>)*\s*)```")
_QUOTE = re.compile(r"^(?P<pre>\s*(?:>\s?)*)")


def _prefix(text: str) -> str:
    """The indentation and quote marks before a line's content."""
    m = _QUOTE.match(text)
    return m.group("pre") if m else ""


def double_spaced(md: str) -> Rendering:
    out: list[Line] = []
    fence: str | None = None
    for text, k in _lines(md):
        m = _FENCE.match(text)
        if m:
            fence = None if fence is not None else m.group("pre")
            out.append((text, k))
            continue
        if fence is None:
            out.append((text, k))
            continue
        body = text[len(fence):] if text.startswith(fence) else text.lstrip(" >")
        if not body.strip():
            continue
        lead = " " if body[:1].isspace() else ""
        out.append((fence + lead + " ".join(body.split()), k))
        out.append((fence.rstrip(), 0))
    return _render("double_spaced", out, ".md")


def quoted(md: str) -> Rendering:
    """Every list item's body (the lines indented under ``* ``) as a ``> `` block quote."""
    out: list[Line] = []
    in_item = False
    for text, k in _lines(md):
        if text.startswith(("* ", "- ", "+ ")):
            in_item = True
            out.append((text, k))
            continue
        if in_item and text.startswith("  "):
            out.append(("  > " + text[2:], k))
            continue
        if in_item and not text.strip():
            out.append(("  >", k))
            continue
        in_item = False
        out.append((text, k))
    return _render("quoted", out, ".md")


def sphinx(md: str) -> Rendering:
    return Rendering("sphinx", markdown_to_sphinx_html(md), ".html")


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HEAD = re.compile(r"^#+\s*")
_ESCAPE_OR_CODE = re.compile(r"\\([!-/:-@\[-`{-~])|`([^`]+)`")


def _plain(text: str) -> str:
    """Inline Markdown as a browser shows it: link text, no glyphs, no backticks, and every
    backslash escape outside code undone (``mma\\_async`` is ``mma_async``)."""
    text = _LINK.sub(lambda m: m.group(1), text)
    text = "".join(ch for ch in text if not "\ue000" <= ch <= "\uf8ff")  # icon glyphs
    return _ESCAPE_OR_CODE.sub(lambda m: m.group(1) if m.group(1) is not None
                               else m.group(2), text).replace("`", "")


def browser(md: str) -> Rendering:
    """The page as a browser copies it: headings and paragraphs as lines, a table row as
    one line of its cells, a figure as ``!alt``, code as its lines.  A paragraph the
    Markdown wraps over lines (soft line breaks) is one line, as a browser shows it: a line
    continues the one above when both are prose of the same paragraph -- no blank line,
    block quote depth, list item, heading, table, fence or figure between them."""
    out: list[Line] = []
    fence: str | None = None
    para = False  # the line above is prose that a next prose line continues
    depth = -1  # its block-quote depth
    for text, k in _lines(md):
        m = _FENCE.match(text)
        if m:
            fence = None if fence is not None else m.group("pre")
            para = False
            continue
        if fence is not None:
            body = text[len(fence):] if text.startswith(fence) else text.lstrip(" >")
            out.append((body.rstrip(), k))
            continue
        pre = _prefix(text)
        s = text[len(pre):].strip()
        quotes = pre.count(">")
        item = s.startswith(("* ", "- ", "+ "))
        if item:
            s = s[2:].strip()
        if s == "Copy to clipboard":
            para = False
            continue
        if s.startswith("!["):
            alt = s[2:s.find("]")]
            out.append(("!" + _plain(alt), k))
            para = False
            continue
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            para = False
            if all(set(c) <= set("-: ") for c in cells):
                continue
            out.append((" ".join(_plain(c) for c in cells if c), k))
            continue
        heading = s.startswith("#")
        if heading:
            s = _HEAD.sub("", s)
        line = _plain(s).strip()
        if para and line and not item and not heading and quotes == depth and out:
            out[-1] = (out[-1][0] + " " + line, out[-1][1])
            continue
        out.append((line, k))
        para, depth = bool(line) and not heading, quotes
    return _render("browser", out, ".txt")


_OPENER = re.compile(r"^(Multiplicand [AB]|Accumulators|Matrix fragments for|Metadata:|"
                     r"Fragment layout for|\.[a-z0-9]+.*:$)")


def glued(text: str, name: str = "glued") -> Rendering:
    """The last line of each formula runs into the opener that follows it."""
    src = _lines(text)
    out: list[Line] = []
    k = 0
    while k < len(src):
        line, origin = src[k]
        j = k + 1
        while j < len(src) and not src[j][0].strip():
            j += 1
        nxt = src[j][0].strip() if j < len(src) else ""
        if "=" in line and j < len(src) and _OPENER.match(nxt) and not line.strip().endswith(":") \
                and not _OPENER_IN.search(line):
            out.append((line.rstrip() + nxt, origin))
            k = j + 1
            continue
        out.append((line, origin))
        k += 1
    return _render(name, out, ".txt")


_OPENER_IN = re.compile(r"Multiplicand [AB]|Accumulators|Matrix fragments for|Metadata:")
_ROW = re.compile(r"^(?P<pre>\s*(?:>\s*)*)\|(?P<cells>.*)\|\s*$")


def element_cells(md: str, how: str) -> Rendering:
    """Each data row with an element list loses it: ``empty`` leaves the cell, ``missing``
    drops it (the row then has one cell fewer than its header)."""
    out: list[Line] = []
    rows: list[int] = []
    for text, k in _lines(md):
        m = _ROW.match(text)
        cells = m.group("cells").split("|") if m else []
        if m and len(cells) == 3 and re.search(r"\b[abc]\d+\b", cells[2]) \
                and "vector expression" in cells[1]:
            kept = cells[:2] + ([" "] if how == "empty" else [])
            out.append((m.group("pre") + "|" + "|".join(kept) + "|", k))
            rows.append(len(out))
            continue
        out.append((text, k))
    return _render(f"{how}_cells", out, ".md", missing_lists=tuple(rows))


def text_missing_lists(txt: str) -> Rendering:
    """A browser-text row without its element list (the cell was empty on the page)."""
    out: list[Line] = []
    rows: list[int] = []
    for text, k in _lines(txt):
        m = re.match(r"^(\..*vector expression.*?\.)\s+([abc]\d+(?:\W+[abc]\d+|\W+\u2026|\W+\.\.)*"
                     r"\s*)$", text)
        if m:
            out.append((m.group(1), k))
            rows.append(len(out))
            continue
        out.append((text, k))
    return _render("missing_lists", out, ".txt", missing_lists=tuple(rows))


# ---- damage around the text: bullets, quotes, headings -------------------------------------------


def bulleted(text: str, suffix: str) -> Rendering:
    """Four bullet lines, then a ``# Notes`` heading and one list item, above the document:
    a file that now looks like Markdown, whose content is unchanged."""
    head = [("* a", 0), ("* b", 0), ("* c", 0), ("* d", 0), ("", 0), ("# Notes", 0), ("", 0),
            ("* item", 0), ("", 0)]
    return _render("bulleted", head + _lines(text), suffix)


def quoted_whole(text: str, suffix: str) -> Rendering:
    """Every line quoted (``> ``), as a mail or a forum post quotes a page."""
    return _render("quoted_whole", [(f"> {t}" if t.strip() else t, k)
                                    for t, k in _lines(text)], suffix)


_NUMBERED = re.compile(r"^(?P<pre>#*\s*)(?:\[)?\d+(?:\.\d+)+\.?\s+")


def titles_without_numbers(text: str, suffix: str) -> Rendering:
    """Section titles without their numbers, as some mirrors render them: each heading is
    still known by its words, so the same layouts and findings are read."""
    return _render("titles_without_numbers",
                   [(_NUMBERED.sub(lambda m: m.group("pre"), t), k) for t, k in _lines(text)],
                   suffix)


GLYPH = "\uf0c1"  # Font Awesome's link icon: the permalink mark of Sphinx themes


def glyph_headings(text: str, suffix: str) -> Rendering:
    """The permalink glyph written after each numbered heading as its text (a saved page
    that kept the icon outside its ``headerlink`` anchor)."""
    return _render("glyph_headings", [(t.rstrip() + GLYPH if _NUMBERED.match(t) else t, k)
                                      for t, k in _lines(text)], suffix)


def headings_damaged(text: str, suffix: str) -> list[Rendering]:
    """Section titles removed: the sections no longer open, so their formulas cannot be
    checked -- each must then be named by a finding, never dropped in silence."""
    no_title = [(t, k) for t, k in _lines(text) if not _NUMBERED.match(t)]
    return [_render("titles_removed", no_title, suffix)]


_OPERAND_LINE = re.compile(r"^\s*[*+-] (?P<what>Multiplicand (?P<ab>[AB])|Accumulators[^:]*):\s*$")
_LABEL_LINE = re.compile(r"^(?P<ind>\s+)\+ (?P<types>`?\.[a-z0-9]+`?(?:\s*(?:or|/|,)\s*"
                         r"`?\.[a-z0-9]+`?)*)\s*:\s*$")
_TABLE_LINE = re.compile(r"^\s*(?:>\s*)*\|")


def sub_bulleted(md: str) -> Rendering:
    """Each operand whose parts are labelled by type (``+ .s4 or .u4:``, each over its own
    table) as one table of all its rows right under the operand's line, and each label as
    a sub-bullet that names its type (``+ Fragment layout for matrix A when .atype is .s4
    or .u4 is shown below:``) over the same figure and formulas.  Blocks labelled by
    arrangement (``.f16 with .row:``) are left as they are."""
    lines = _lines(md)
    out: list[Line] = []
    k = 0
    while k < len(lines):
        m = _OPERAND_LINE.match(lines[k][0])
        if m is None:
            out.append(lines[k])
            k += 1
            continue
        end = k + 1
        while end < len(lines) and not re.match(r"^(?:[*#]|\S)", lines[end][0]):
            end += 1
        block = lines[k + 1:end]
        labels = [j for j, (t, _o) in enumerate(block) if _LABEL_LINE.match(t)]
        if not labels or any(re.match(r"^\s+\+ .*\bwith\b", t) for t, _o in block):
            out.extend(lines[k:end])
            k = end
            continue
        var, noun = (f".{m.group('ab').lower()}type", f"matrix {m.group('ab')}") \
            if m.group("ab") else (".ctype", "accumulator matrix")
        table: list[Line] = []
        rest: list[Line] = []
        for t, o in block:
            if _TABLE_LINE.match(t):
                table.append(("  " + t[t.index("|"):], o))
                continue
            lm = _LABEL_LINE.match(t)
            if lm:
                t = f"{lm.group('ind')}+ Fragment layout for {noun} when `{var}` is " \
                    f"{lm.group('types')} is shown below:"
            rest.append((t, o))
        heads = [ln for ln in table if "type" in ln[0].split("|")[1]]
        rules = [ln for ln in table if set(ln[0].strip()) <= set("|-: ")]
        rows = [ln for ln in table if ln not in heads and ln not in rules]
        header, rule = heads[:1], rules[:1]
        out.extend([lines[k], ("", 0), *header, *rule, *rows, ("", 0), *rest])
        k = end
    return _render("sub_bulleted", out, ".md")


def bare_tables(md: str) -> Rendering:
    """Every table row without its outer pipes and the delimiter row as ``---|---|---``,
    as a converted mirror writes GFM tables (``.atype | Fragment | Elements``)."""
    out: list[Line] = []
    for text, k in _lines(md):
        m = _ROW.match(text)
        if m is None:
            out.append((text, k))
            continue
        cells = [c.strip() for c in m.group("cells").split("|")]
        if cells and all(c and set(c) <= set("-: ") for c in cells):
            out.append((m.group("pre") + "|".join("---" for _ in cells), k))
            continue
        out.append((m.group("pre") + " | ".join(cells), k))
    return _render("bare_tables", out, ".md")


def html_tables(md: str) -> Rendering:
    """Every unquoted table as the page's raw HTML ``<table>`` at the line's start (one tag a
    line, a cell's ``code`` as ``<code><span>``), as a converted mirror keeps the tables
    whose cells the page merges (the PTX ISA 9.4 Markdown mirror)."""
    out: list[Line] = []
    rows: list[Line] = []

    def close() -> None:
        if not rows:
            return
        out.append(("<table>", 0))
        head = True
        for text, k in rows:
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if all(c and set(c) <= set("-: ") for c in cells):
                out.append(("</thead>", 0))
                out.append(("<tbody>", 0))
                head = False
                continue
            if head:
                out.append(("<thead>", 0))
            tag = "th" if head else "td"
            out.append(("<tr>", k))
            for c in cells:
                body = re.sub(r"`([^`]+)`", r"<code><span>\1</span></code>", c)
                out.append((f"<{tag}><p>{body}</p></{tag}>", k))
            out.append(("</tr>", k))
        out.append(("</tbody>", 0))
        out.append(("</table>", 0))
        rows.clear()

    for text, k in _lines(md):
        if _ROW.match(text) and not _prefix(text).strip():
            rows.append((text, k))
            continue
        close()
        out.append((text, k))
    close()
    return _render("html_tables", out, ".md")


def renderings(seed: str, markdown: bool) -> list[Rendering]:
    """Every rendering of one seed that must read to the seed's own findings."""
    suffix = ".md" if markdown else ".txt"
    damage = [bulleted(seed, suffix), quoted_whole(seed, suffix),
              titles_without_numbers(seed, suffix), glyph_headings(seed, suffix)]
    if markdown:
        text = browser(seed)
        spaced = double_spaced(seed)
        both = _chain(spaced, quoted(spaced.text))
        glyphs = glyph_headings(seed, suffix)
        return [spaced, quoted(seed), replace(both, name="quoted_double_spaced"),
                sphinx(seed), text, _chain(text, glued(text.text)),
                element_cells(seed, "empty"), element_cells(seed, "missing"), *damage,
                _chain(text, bulleted(text.text, ".txt")),
                _chain(text, titles_without_numbers(text.text, ".txt")),
                replace(sphinx(glyphs.text), name="glyph_headings_html"),
                sub_bulleted(seed), bare_tables(seed), html_tables(seed)]
    return [glued(seed), text_missing_lists(seed), *damage]


def _chain(first: Rendering, second: Rendering) -> Rendering:
    """``second`` made from ``first.text``: its origins mapped back to the seed."""
    origin = tuple(first.seed_line(o) for o in second.origin)
    return Rendering(second.name, second.text, second.suffix, origin, second.planted,
                     second.missing_lists)


# ---- fragment sentences -------------------------------------------------------------------

_TY = r"`?\.[a-z][a-z0-9]*`?"
_TYS = rf"{_TY}(?:\s*(?:/|or)\s*{_TY})*"
_N = r"(?:a single|single|thirty two|sixty four|\d+|[a-z]+)"
SENTENCE = re.compile(
    rf"A vector expression (?P<intro>containing|of) (?P<R>{_N}) (?P<K>{_TY}) registers?"
    rf"(?P<rest>[^|]*?)\.(?=\s|\||$)")
_REST = re.compile(
    rf"^,?\s*(?:(?P<each>(?:with )?each(?: register)? )?containing (?P<E>{_N}) "
    rf"(?P<nz>non-zero )?(?P<T>{_TYS}) elements?"
    r"(?: out of (?P<O>\d+) consecutive elements)?)?"
    r"(?: from (?:the )?matrix (?P<M>[A-D])(?: \(or D\))?)?$")

WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 8: "eight", 16: "sixteen",
         32: "thirty two", 64: "sixty four"}
_VALUES = {w: n for n, w in WORDS.items()} | {"a single": 1, "single": 1}
WIDTH = {"b32": 32, "f16x2": 32, "f32": 32, "s32": 32, "f64": 64, "b64": 64}
ELEMENT_BITS = {"b1": 1, "u4": 4, "s4": 4, "e2m1": 4, "e3m2": 8, "e2m3": 8, "u8": 8, "s8": 8,
                "e4m3": 8, "e5m2": 8, "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32,
                "f64": 64}


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _VALUES[word]


@dataclass(frozen=True)
class Facts:
    """What a fragment sentence says, whatever its words."""

    registers: int
    kind: str  # register kind, without the dot
    per_register: int
    types: tuple[str, ...]
    nonzero: bool = False
    out_of: int = 0
    matrix: str = ""
    ticked: bool = False  # the types are written as `code`

    @property
    def packed(self) -> bool:
        """Elements fill their register: the count may be left out."""
        bits = ELEMENT_BITS.get(self.types[0], 0)
        return not self.nonzero and self.per_register * bits == WIDTH.get(self.kind, 0)


def facts_of(sentence: str) -> Facts:
    m = SENTENCE.fullmatch(sentence.strip())
    if m is None:
        raise ValueError(f"not a fragment sentence the generator knows: {sentence!r}")
    rest = _REST.match(m.group("rest"))
    if rest is None:
        raise ValueError(f"an element clause the generator does not know: {m.group('rest')!r}")
    regs = _count(m.group("R"))
    kind = m.group("K").strip("`")[1:]
    ticked = "`" in sentence
    if rest.group("E") is None:
        return Facts(regs, kind, 1, (kind,), matrix=rest.group("M") or "", ticked=ticked)
    types = tuple(t.strip("`")[1:] for t in re.findall(_TY, rest.group("T")))
    n = _count(rest.group("E"))
    per = n if rest.group("each") else n // regs
    return Facts(regs, kind, per, types, bool(rest.group("nz")), int(rest.group("O") or 0),
                 rest.group("M") or "", ticked)


# Each dimension of the sentence: the ways a writer says the same fact.
def _num(n: int, style: int) -> str:
    if n == 1:
        return ("a single", "one", "a", "1", "single")[style % 5]
    return (WORDS.get(n, str(n)), str(n))[style % 2]


_INTROS = ("containing", "of", "containing of")  # the last is a slip: a warning
_EACH = (", with each register containing", ", each containing", " with each register containing",
         ", with each register holding", ", each of them containing")
_JOIN = (" / ", "/", " or ")
_FROM = (" from the matrix {m}", " from matrix {m}", "")


@dataclass(frozen=True)
class Form:
    """One choice per dimension (indices into the tables above)."""

    intro: int = 0
    reg_num: int = 0
    clause: str = "per"  # "per" | "total" | "bare" (count left out) | "none" (no clause)
    each: int = 0
    elem_num: int = 0
    join: int = 0
    frm: int = 0


def say(f: Facts, form: Form) -> str:
    """The sentence that states ``f`` in ``form``."""
    def ty(t: str) -> str:
        return f"`.{t}`" if f.ticked else f".{t}"

    regs = _num(f.registers, form.reg_num)
    reg_word = "register" if f.registers == 1 else "registers"
    head = f"A vector expression {_INTROS[form.intro]} {regs} {ty(f.kind)} {reg_word}"
    types = _JOIN[form.join].join(ty(t) for t in f.types)
    nz = "non-zero " if f.nonzero else ""
    out_of = f" out of {f.out_of} consecutive elements" if f.out_of else ""
    frm = _FROM[form.frm].format(m=f.matrix) if f.matrix else ""
    if f.matrix == "C" and form.frm == 0:
        frm += " (or D)"
    if form.clause == "none":
        return f"{head}{frm}."
    if form.clause == "total":
        n = f.registers * f.per_register
        return f"{head}, containing {_num(n, form.elem_num)} {nz}{types} " \
               f"element{'s' if n > 1 else ''}{out_of}{frm}."
    if form.clause == "bare":
        return f"{head} containing {types} elements{frm}."
    per = f.per_register
    return f"{head}{_EACH[form.each]} {_num(per, form.elem_num)} {nz}{types} " \
           f"element{'s' if per > 1 else ''}{out_of}{frm}."


def forms_for(f: Facts, k: int) -> Form:
    """The k-th form for a sentence: every value of every dimension is reached as k runs
    over ``FORMS`` values (k is offset per sentence by the caller)."""
    clauses = ["per", "total"]
    if f.packed:
        clauses.append("bare")
    if f.per_register == 1 and f.types == (f.kind,):
        clauses.append("none")
    if f.nonzero:
        clauses = ["per"]
    return Form(intro=k % 2, reg_num=k % 5, clause=clauses[k % len(clauses)],
                each=k % len(_EACH), elem_num=k % 5, join=k % len(_JOIN),
                frm=k % len(_FROM))


FORMS = 10  # documents per seed; enough for every value of every dimension


def _sentences(lines: list[Line]) -> Iterator[tuple[int, re.Match[str]]]:
    for idx, (text, _k) in enumerate(lines):
        for m in SENTENCE.finditer(text):
            yield idx, m


def rewrite(seed: str, suffix: str, edit: Callable[[int, Facts], str | None],
            name: str) -> Rendering:
    """Each fragment sentence of ``seed`` replaced by ``edit(j, facts)`` (None: kept)."""
    lines = _lines(seed)
    planted: list[int] = []
    j = 0
    for idx, m in reversed(list(_sentences(lines))):
        text, k = lines[idx]
        new = edit(j, facts_of(m.group(0)))
        j += 1
        if new is None:
            continue
        lines[idx] = (text[:m.start()] + new + text[m.end():], k)
        planted.append(idx + 1)
    return _render(name, lines, suffix, planted=tuple(sorted(set(planted))))


def paraphrases(seed: str, suffix: str) -> list[Rendering]:
    """``FORMS`` documents, each with every sentence said another way (no erratum)."""
    out = []
    for k in range(FORMS):
        r = rewrite(seed, suffix, lambda j, f, k=k: say(f, forms_for(f, k + j)),
                    f"paraphrase{k}")
        out.append(Rendering(r.name, r.text, r.suffix, r.origin))
    return out


# ---- meaning-changing edits: each must be caught on its line -----------------------------------

_OTHER_KIND = {"b32": "b16", "f16x2": "b64", "f32": "f64", "s32": "b64", "f64": "b32"}


def _double_registers(f: Facts) -> Facts:
    return Facts(f.registers * 2, f.kind, f.per_register, f.types, f.nonzero, f.out_of,
                 f.matrix, f.ticked)


def _other_kind(f: Facts) -> Facts:
    return Facts(f.registers, _OTHER_KIND[f.kind], f.per_register, f.types, f.nonzero,
                 f.out_of, f.matrix, f.ticked)


def _other_type(f: Facts) -> Facts:
    t = "f64" if "f64" not in f.types else "f16"
    return Facts(f.registers, f.kind, f.per_register, (t,), f.nonzero, f.out_of, f.matrix,
                 f.ticked)


EDITS: dict[str, Callable[[Facts], Facts]] = {
    "count": _double_registers, "register-kind": _other_kind, "type": _other_type}


def errata(seed: str, suffix: str) -> list[Rendering]:
    """One document per edit, every sentence edited (in a rotating form)."""
    return [rewrite(seed, suffix, lambda j, f, e=e: say(e(f), forms_for(e(f), j)
                                                        if not f.nonzero else Form()),
                    f"erratum-{name}")
            for name, e in EDITS.items()]
