"""The shared-memory sections read into syntax: swizzle atoms, canonical layouts, worked
examples and descriptor bit fields, each with the place it was read from.

The sections are tables and a few labelled lines, in any rendering (Markdown ``|`` rows, plain
text with the cells run together, bullets and quotes, the Sphinx HTML page through
``formal.text.html``'s blocks).  What a line is about -- a heading and the table it opens, an
``Exact layout :`` label, the swizzle mode, majorness and type it names, each at its column --
is ``grammar/smem.lark``'s ``smem_line`` (``LineFacts``); the reader decides with those facts
and never tests a line's words itself.  A line is read as cells: a Markdown row
is split at its ``|``, a plain row at its blanks, and each cell is read by a grammar --
``grammar/cute.lark`` (start ``smem_layout``) for a CuTe layout, ``grammar/smem.lark`` for a
value, an encoding, a bit field, an atom shape.  For example the lines

    | LBO | 64\\*sizeof(tf32) |                   (Markdown)
    LBO 64*sizeof(tf32)                         (plain text)

are both ``Param("LBO", Value(((64, ""), (1, "tf32"))), span)`` -- 64 times sizeof(tf32), a byte
count -- and ``Exact layout : Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))`` is an
``Example.exact`` whose shape is ``((8,2),(4,4))`` and whose swizzle is ``(1, 4, 3)``.  The
reader keeps what it reads as it is written; the model evaluates it (``formal.model.smem``).
Markup is blanked, never removed, so every column is the column of the source line.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, Span, warning
from ..text.terminals import terminals_search
from .grammars import RuleTransformer, can_read, transformed
from .kept import parses_remembered, remembered_read
from .smem_records import (
    MODES,
    PARAMS,
    AtomRow,
    CanonicalRow,
    Encoding,
    Example,
    FieldRow,
    KSliceRow,
    LayoutText,
    LineFacts,
    OffsetDefinition,
    Param,
    SmemText,
    SymEntry,
    SymTuple,
    Value,
)

__all__ = ["MODES", "PARAMS", "AtomRow", "CanonicalRow", "Encoding", "Example", "FieldRow",
           "KSliceRow", "LayoutText", "OffsetDefinition", "Param", "SmemText", "SymEntry",
           "SymTuple", "Value", "line_facts", "read_cell", "read_layout", "read_smem"]

# ---- the grammars ----------------------------------------------------------------------------


@cache
def _layout_parser() -> Lark:
    return build_parser("cute", "smem_layout")


@cache
def _cell_parser() -> Lark:
    return build_parser("smem", ["smem_value", "smem_encoding", "smem_bits", "smem_dims",
                                 "smem_constant"])


class _Cells(RuleTransformer):
    def sym_int(self, c: list[Token]) -> SymEntry:
        return SymEntry(int(str(c[0]), 0))

    def sym_scaled(self, c: list[Token]) -> SymEntry:
        return SymEntry(int(str(c[0]), 0), str(c[1]), True)

    def sym_name(self, c: list[Token]) -> SymEntry:
        return SymEntry(1, str(c[0]))

    def sym_tuple(self, c: list[Any]) -> Any:
        return (*c,)

    def swizzle(self, c: list[Token]) -> tuple[int, int, int]:
        if str(c[0]) != "Swizzle":
            raise ValueError(f"{c[0]} is not Swizzle")
        return (int(str(c[1])), int(str(c[2])), int(str(c[3])))

    def sym_layout(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    def smem_layout(self, c: list[Any]) -> tuple[Any, Any]:
        if len(c) == 3 and str(c[1]) != "o":
            raise ValueError(f"'{c[1]}' is not the composition 'o'")
        return (c[0] if len(c) > 1 else None, c[-1])

    def swizzle_only(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], None)

    def number(self, c: list[Token]) -> tuple[int, str]:
        return (int(str(c[0]), 0), "")

    def sizeof(self, c: list[Token]) -> tuple[int, str]:
        return (1, str(c[0]))

    def product(self, c: list[Any]) -> Value:
        flat: list[tuple[int, str]] = []
        for x in c:
            flat.extend(x.factors or () if isinstance(x, Value) else (x,))
        return Value(tuple(flat))

    def na(self, c: list[Any]) -> Value:
        return Value(None)

    def shifted(self, c: list[Token]) -> tuple[str, str, int, int]:
        return ("shifted", str(c[0]), int(str(c[1]), 0), int(str(c[2]), 0))

    def assumed(self, c: list[Token]) -> tuple[str, str, int, int]:
        return ("assumed", "", 0, int(str(c[0]), 0))

    def bit_range(self, c: list[Token]) -> tuple[int, int]:
        a, b = int(str(c[0])), int(str(c[2]))
        return (min(a, b), max(a, b))

    def bit_one(self, c: list[Token]) -> tuple[int, int]:
        return (int(str(c[0])), int(str(c[0])))

    def smem_dims(self, c: list[Token]) -> tuple[int, int]:
        return (int(str(c[0])), int(str(c[1])))

    def smem_constant(self, c: list[Token]) -> str:
        return str(c[0])


def _or_none(parser: Lark, text: str, start: str) -> Any:
    """``text`` by ``start`` and ``_Cells``, or None where the grammar or ``_Cells`` refuse it
    (the caller's ValueError then depends on the text alone, so a refusal is remembered)."""
    if not can_read(parser, start)(text):
        return None  # a token the start symbol needs matches nowhere: Lark would refuse it
    try:
        return transformed(parser, start, _Cells, text)
    except (LarkError, ValueError):
        return None


def read_layout(text: str) -> tuple[tuple[int, int, int] | None, Any]:
    """``"Swizzle<1,4,3> o ((8,m),(T,2k)):((2T,SBO),(1,T))"`` -> (swizzle, (shape, stride));
    ValueError when it is not one.  Read once a text (``kept.remembered_read``)."""
    out = remembered_read(text, "smem:layout",
                          lambda: _or_none(_layout_parser(), text, "smem_layout"))
    if out is None:
        raise ValueError(f"not a CuTe layout: {text!r}")
    return out  # type: ignore[no-any-return]


def read_cell(text: str, start: str) -> Any:
    """One cell by one of ``grammar/smem.lark``'s start symbols; ValueError when it is not."""
    out = remembered_read(text, f"smem:{start}", lambda: _or_none(_cell_parser(), text, start))
    if out is None:
        raise ValueError(f"not a {start[5:]}: {text!r}")
    return out


# ---- lines and cells -------------------------------------------------------------------------

_BLANK = str.maketrans({"`": " ", "\\": " "})


def _blank_markup(line: str) -> str:
    """The line with its quote marks, bullets, backticks and escapes blanked (same length)."""
    i = 0
    lead = []
    while i < len(line) and line[i] in " >*+-":
        if line[i] in ">*+-" and (i + 1 == len(line) or line[i + 1] == " "):
            lead.append(" ")
        elif line[i] != " ":
            break
        else:
            lead.append(" ")
        i += 1
    return "".join(lead) + line[i:].translate(_BLANK)


def _cells(line: str) -> list[tuple[int, str]]:
    """(0-based column, text) of each cell: a ``|`` row's cells, else the blank-separated words."""
    blank = _blank_markup(line.rstrip("\n"))
    if blank.lstrip().startswith("|"):
        out, col = [], 0
        for part in blank.split("|"):
            if part.strip():
                out.append((col + len(part) - len(part.lstrip()), part.strip()))
            col += len(part) + 1
        return out
    out, i = [], 0
    for word in blank.split():
        j = blank.index(word, i)
        out.append((j, word))
        i = j + len(word)
    return out


class _LineFacts(RuleTransformer):
    """``smem_line``'s tree -> ``LineFacts``."""

    def table_atoms(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "atoms")

    def table_canonical(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "canonical")

    def table_fields_wgmma(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "fields-wgmma")

    def table_fields_tcgen05(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "fields-tcgen05")

    def table_lbo(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "LBO")

    def table_sbo(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "SBO")

    def table_kslice(self, c: list[Token]) -> tuple[str, Any]:
        return ("table", "kslice")

    def label_exact(self, c: list[Token]) -> tuple[str, Any]:
        return ("label", "exact")

    def label_canonical(self, c: list[Token]) -> tuple[str, Any]:
        return ("label", "canonical")

    def label_encoding(self, c: list[Token]) -> tuple[str, Any]:
        return ("encoding", (str(c[0]).split()[2], c[0].end_pos))

    def mode_bytes(self, c: list[Token]) -> tuple[str, Any]:
        return ("mode", (c[0].start_pos, str(c[0]).upper()))

    def mode_atom32(self, c: list[Token]) -> tuple[str, Any]:
        return ("mode", (c[0].start_pos, "128B-base32B"))

    def mode_none(self, c: list[Token]) -> tuple[str, Any]:
        return ("mode", (c[0].start_pos, "none"))

    def major_worded(self, c: list[Token]) -> tuple[str, Any]:
        return ("major", (c[0].start_pos, "K" if str(c[0])[0] in "kK" else "MN", True))

    def major_cell(self, c: list[Token]) -> tuple[str, Any]:
        return ("major", (c[0].start_pos, "K" if str(c[0]) == "K" else "MN", False))

    def example_type(self, c: list[Token]) -> tuple[str, Any]:
        return ("type", str(c[0]))

    def family(self, c: list[Token]) -> tuple[str, Any]:
        return ("family", str(c[0]))

    def comma(self, c: list[Token]) -> tuple[str, Any]:
        return ("comma", c[0].start_pos)

    def fill(self, c: list[Token]) -> tuple[str, Any]:
        return ("fill", None)

    def smem_mode(self, c: list[Any]) -> Any:
        return c[0]

    def smem_major(self, c: list[Any]) -> Any:
        return c[0]

    def smem_line(self, c: list[Any]) -> LineFacts:
        heading = bool(c) and isinstance(c[0], Token)
        items = c[1:] if heading else c
        got: dict[str, list[Any]] = {}
        for kind, val in items:
            got.setdefault(kind, []).append(val)
        return LineFacts(heading, tuple(got.get("table", ())), (got.get("label") or [""])[0],
                         tuple(got.get("mode", ())), tuple(got.get("major", ())),
                         (got.get("type") or [""])[0], (got.get("comma") or [-1])[0],
                         (got.get("encoding") or [None])[0], tuple(got.get("family", ())))


@cache
def _line_parser() -> Lark:
    return build_parser("smem", "smem_line")


def _line_facts(text: str) -> LineFacts:
    try:
        return transformed(_line_parser(), "smem_line", _LineFacts, text)  # type: ignore[no-any-return]
    except LarkError:
        return LineFacts()


@cache
def _may_open() -> Callable[[str], bool]:
    """Whether a line can hold a token that opens a table or an example (a table's phrase, a
    label, a majorness) or names a family: ``smem_line``'s terminals searched
    (``formal.text.terminals``)."""
    return terminals_search(_line_parser(), ("TABLE_", "LABEL_", "MAJOR_", "FAMILY"))


def line_facts(text: str) -> LineFacts:
    """The facts of one line (markup already blanked); a line the grammar cannot read (none:
    FILL takes any character) would have none.  Read once a text (``remembered_read``)."""
    return remembered_read(text, "smem:line", lambda: _line_facts(text))  # type: ignore[no-any-return]


class _Reader:
    def __init__(self, document: str) -> None:
        self.document = document
        self.family = ""
        self.atoms: list[AtomRow] = []
        self.canonical: list[CanonicalRow] = []
        self.examples: list[Example] = []
        self.fields: list[FieldRow] = []
        self.definitions: list[OffsetDefinition] = []
        self.k_slices: list[KSliceRow] = []
        self.findings: list[Finding] = []
        self.mentions: set[str] = set()  # the families the text names
        self.mode = ""
        self.major = ""
        self.table = ""  # atoms | canonical | params | fields
        self.in_example = False  # the lines after an example's title, up to the next heading
        self.src: SourceText | None = None  # where the line's characters come from (HTML)

    def span(self, line: int, col: int) -> Span:
        if self.src is not None:
            return self.src.span(col)
        return Span(self.document, line, col + 1)

    def line(self, n: int, raw: str, src: SourceText | None = None) -> None:
        blank = _blank_markup(raw.rstrip("\n"))
        if not self.table and not self.in_example and not _may_open()(blank):
            return  # outside, a heading only closes what is open, and nothing else counts
        facts = line_facts(blank)
        self.mentions.update(facts.families)
        if not self.table and not self.in_example and not facts.counts:
            return  # outside a table only a heading, a label or a majorness starts anything
        self.src = src
        cells = _cells(raw)
        if not cells:
            return
        if facts.heading:
            self.table, self.in_example = "", False  # a numbered heading ends every table
            if "LBO" in facts.tables:
                self.table = "LBO"
            elif "SBO" in facts.tables:
                self.table = "SBO"
        if self.table in ("LBO", "SBO") and self._definition(n, cells, facts):
            return
        if self._heading(facts):
            return
        if facts.label:
            self._layout_line(n, raw, cells, facts.label)
            return
        if self.table == "fields" and self._field(n, cells) or self._k_slice(n, cells):
            return
        if self._atom(n, cells, facts) or self._canonical(n, cells, facts) \
                or self._example_head(n, cells, facts):
            return
        if self.in_example:
            self._param(n, raw, cells, facts)

    def _heading(self, facts: LineFacts) -> bool:
        for t in facts.tables:
            if t.startswith("fields-"):
                self.family, self.table = t[len("fields-"):], "fields"
                return True
        if "atoms" in facts.tables:
            self.table = "atoms"
        elif "canonical" in facts.tables:
            self.table = "canonical"
            self.major = ""
        elif "kslice" in facts.tables:
            self.table = "kslice"
        return False

    def _k_slice(self, n: int, cells: list[tuple[int, str]]) -> bool:
        """``| wgmma.sp | f16 | 16 | 16 | 32 |``: family, type, bits, dense K, sparse K (a
        dash: no sparse form); the header and rule rows are not rows of numbers."""
        if self.table != "kslice" or len(cells) != 5:
            return False
        try:
            nums = [None if t in ("–", "-", "—") else read_cell(t, "smem_value").bytes({})
                    for _, t in cells[2:]]
        except (ValueError, KeyError):  # not numbers (a header), or a sizeof()
            return False
        if nums[0] is None or nums[1] is None:
            return False
        self.k_slices.append(KSliceRow(cells[0][1], cells[1][1], nums[0], nums[1], nums[2],
                                       self.span(n, cells[0][0])))
        return True

    def _definition(self, n: int, cells: list[tuple[int, str]], facts: LineFacts) -> bool:
        """``K-Major | * No-Swizzling: the offset from the first column to the second ... *
        Swizzled layouts: not used, assumed to be 1.``: one OffsetDefinition per clause."""
        first = cells[0][1].split()[0]
        major = facts.major_in(cells[0][0], cells[0][0] + len(first))
        worded = facts.major_in(cells[0][0], cells[0][0] + len(cells[0][1]), worded=True)
        if major is None or worded is None and len(cells) < 2:
            return False
        words: list[tuple[int, str]] = []
        for col, cell in cells:
            at = 0
            for w in cell.split():
                at = cell.index(w, at)
                words.append((col + at, w))
                at += len(w)
        words = words[1:] if first.lower().endswith("major") else words[2:]
        clauses: list[tuple[bool | None, list[tuple[int, str]]]] = []
        for col, w in words:
            low = w.lower().rstrip(":")
            if w.endswith(":") and low in ("no-swizzling", "interleave", "layouts", "layout"):
                clauses.append((low in ("layouts", "layout"), []))
                continue
            if low == "swizzled":
                continue
            if not clauses:
                clauses.append((None, []))
            clauses[-1][1].append((col, w))
        for swizzled, ws in clauses:
            if not ws:
                continue
            text = [w.lower().strip(".,()") for _, w in ws]
            span = self.span(n, ws[0][0])
            if "not" in text and "used" in text:
                self.definitions.append(OffsetDefinition(self.table, major, swizzled, 0, "unused",
                                                   span))
                continue
            if "first" not in text:
                continue
            i = text.index("first") + 1
            count: int | str = 1
            if text[i].isdigit():
                count, i = int(text[i]), i + 1
            elif "swizzle-byte-size/16" in text[i]:
                count, i = "c", i + 1
            unit = "row" if text[i].startswith("row") else \
                "column" if text[i].startswith("column") else ""
            if unit:
                self.definitions.append(OffsetDefinition(self.table, major, swizzled, count, unit,
                                                         span))
        return True

    def _field(self, n: int, cells: list[tuple[int, str]]) -> bool:
        if len(cells) < 3:
            return False
        try:
            lo, hi = read_cell(cells[0][1], "smem_bits")
            size = read_cell(cells[1][1], "smem_bits")[0]
        except ValueError:
            return False
        desc = " ".join(c for _, c in cells[2:])
        constant = ""
        words = desc.replace(":", " ").split()
        if "constant" in desc.lower():
            for w in words:
                try:
                    constant = read_cell(w.rstrip("."), "smem_constant")
                    if w.lower().startswith("0"):
                        break
                except ValueError:
                    continue
        self.fields.append(FieldRow(self.family or "wgmma", lo, hi, size, desc, constant,
                                    self.span(n, cells[0][0])))
        return True

    def _atom(self, n: int, cells: list[tuple[int, str]], facts: LineFacts) -> bool:
        if self.table != "atoms" or len(cells) < 2:
            return False
        try:
            dims = read_cell(cells[-1][1], "smem_dims")
        except ValueError:
            return False
        at = cells[-2][0]
        major = facts.major_in(at, at + len(cells[-2][1]))
        self.mode = facts.mode_in(0, at) or self.mode
        if major is None or not self.mode:
            return False
        self.atoms.append(AtomRow(self.mode, major, dims, self.span(n, cells[-1][0])))
        return True

    def _canonical(self, n: int, cells: list[tuple[int, str]], facts: LineFacts) -> bool:
        if self.table != "canonical":
            return False
        lay = [(c, t) for c, t in cells if t.startswith("((") and ":" in t]
        sw = [i for i, (_, t) in enumerate(cells) if t.startswith("Swizzle<")]
        if not lay or not sw:
            return False
        self.major = facts.major_in(0, lay[0][0]) or self.major
        mode = facts.mode_in(0, lay[0][0])
        if mode is None or not self.major:
            return False
        i = sw[0]
        sw_text = " ".join(t for _, t in cells[i:])
        try:
            swz, _ = read_layout(sw_text)
            lt = self._layout_text(n, lay[0][0], lay[0][1])
            if swz is None:
                raise ValueError(f"no swizzle in {sw_text!r}")
        except ValueError as e:
            self.findings.append(warning("smem-syntax", self.span(n, lay[0][0]), str(e)))
            return True
        self.canonical.append(CanonicalRow(self.major, mode, lt, swz, self.span(n, cells[i][0])))
        return True

    def _layout_text(self, n: int, col: int, text: str,
                     swizzle: tuple[int, int, int] | None = None) -> LayoutText:
        swz, body = read_layout(text)
        if body is None:
            raise ValueError(f"no shape:stride in {text!r}")
        return LayoutText(body[0], body[1], swz or swizzle, self.span(n, col), text)

    def _example_head(self, n: int, cells: list[tuple[int, str]], facts: LineFacts) -> bool:
        major = facts.major_in(0, 1 << 30, worded=True)
        if major is None or not facts.type or facts.comma < 0:
            return False
        mode = facts.mode_in(facts.comma, 1 << 30) or ""
        self.examples.append(Example(major, mode, facts.type, self.span(n, cells[0][0])))
        self.table, self.in_example = "params", True
        return True

    def _layout_line(self, n: int, raw: str, cells: list[tuple[int, str]], which: str) -> None:
        colon = raw.find(":")
        if not self.in_example or colon < 0:
            return
        body = raw[colon + 1:]
        col = colon + 1 + len(body) - len(body.lstrip())
        try:
            lt = self._layout_text(n, col, body.strip().strip("`|").strip())
        except ValueError as e:
            self.findings.append(warning("smem-syntax", self.span(n, col), str(e)))
            return
        ex = self.examples[-1]
        self.examples[-1] = _with(ex, **{which: lt})

    def _param(self, n: int, raw: str, cells: list[tuple[int, str]], facts: LineFacts) -> None:
        ex = self.examples[-1]
        cells, qualifier = _qualified(cells)
        name = cells[0][1]
        if name in PARAMS and len(cells) >= 2:
            if qualifier:  # tcgen05's "LBO (relative offset)" / "(absolute address)"
                ex = _with(ex, lbo_mode="absolute" if "absolute" in qualifier else "relative")
            rest = " ".join(t for _, t in cells[1:])
            try:
                v = read_cell(rest, "smem_value")
            except ValueError as e:
                self.findings.append(warning("smem-syntax", self.span(n, cells[1][0]), str(e)))
                return
            self.examples[-1] = _with(ex, params=(*ex.params, Param(name, v,
                                                                     self.span(n, cells[1][0]))))
            return
        if facts.encoding is not None:
            name, at = facts.encoding
            rest = raw[at:]
            col = at + len(rest) - len(rest.lstrip(" |"))
            try:
                kind, _, shift, stated = read_cell(rest.replace("|", " ").replace("\\", " "),
                                                   "smem_encoding")
            except ValueError as e:
                self.findings.append(warning("smem-syntax", self.span(n, col), str(e)))
                return
            enc = Encoding(name, kind, shift, stated, self.span(n, col))
            self.examples[-1] = _with(ex, encodings=(*ex.encodings, enc))


def _qualified(cells: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], str]:
    """A parameter's cells without the words in parentheses after its name, and those words:
    ``| LBO (relative offset) | 64 |`` and plain ``LBO (relative offset) 64`` -> ``LBO``,
    ``64`` and "relative offset"; any other row as it is."""
    head, paren, tail = " ".join(t for _, t in cells[:3]).partition("(")
    inside = tail.partition(")")[0]
    ends = [i for i, (_, t) in enumerate(cells[:3]) if t.endswith(")")]
    if not (paren and ends and head.strip().isalpha() and inside.replace(" ", "").isalpha()):
        return cells, ""
    return [(cells[0][0], head.strip()), *cells[ends[0] + 1:]], inside.strip()


def _with(ex: Example, **kw: Any) -> Example:
    from dataclasses import replace
    return replace(ex, **kw)


def _is_html(text: str) -> bool:
    head = text.lstrip()[:2000].lower()
    return head.startswith("<") and ("<html" in head or "<section" in head or "<div" in head)


def _html_lines(text: str, document: str) -> list[SourceText]:
    """The Sphinx page's blocks as lines: a table row as ``| cell | cell |`` (each separator
    placed at the cell after it), any other block as its text; every character keeps its place
    in the HTML source (``formal.text.html``)."""
    from ..text.html import html_blocks
    out = []
    for b in html_blocks(text, document):
        if b.kind == "row" and b.cells:
            parts: list[SourceText] = []
            for c in b.cells:
                at = c.span(0)
                parts += [SourceText.at("| ", document, at.line, at.column), c,
                          SourceText.at(" ", document, at.line, at.column)]
            end = b.cells[-1].span(len(b.cells[-1].text))
            parts.append(SourceText.at("|", document, end.line, end.column))
            out.append(SourceText.concat(parts, document))
        elif b.text.text.strip():
            out.append(b.text)
    return out


def read_smem(text: str, document: str) -> SmemText:
    """Every swizzle-atom row, canonical-layout row, worked example and descriptor field of a
    document (any rendering); what could not be read is a warning with its place.  Its lines'
    and cells' readings are kept between runs (``kept.parses_remembered``)."""
    r = _Reader(document)
    with parses_remembered(tuple(text.split("\n")), "smem"):
        if _is_html(text):
            for src in _html_lines(text, document):
                r.line(src.span(0).line, src.text, src)
        else:
            for n, raw in enumerate(text.splitlines(), start=1):
                r.line(n, raw)
    return SmemText(document, tuple(r.atoms), tuple(r.canonical), tuple(r.examples),
                    tuple(r.fields), tuple(r.findings), tuple(r.definitions),
                    tuple(sorted(r.mentions)), tuple(r.k_slices))
