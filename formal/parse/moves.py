"""Matrix move sections -> facts (a Lark Transformer over ``grammar/moves.lark``).

The ldmatrix, stmatrix and movmatrix sections give their layouts as figures; what their words
state is read here, once, into values the model stage checks against the catalog's layouts:

    "The values .x1, .x2 and .x4 for .num indicate one, two or four matrices respectively."
        -> MoveFact("num_values", nums=("x1", "x2", "x4"), counts=(1, 2, 4))
    ".x2 | addr0-addr7 | addr8-addr15 | - | -"   (under ".num | Threads 0-7 | Threads 8-15 ...")
        -> MoveFact("num_table", rows=(("x2", ((0, 7, 0, 7), (8, 15, 8, 15))), ...))
           (threads 0-7 give addresses 0-7, threads 8-15 addresses 8-15)
    "ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p];"
        -> MoveForm("ldmatrix", parts=(("sync", False), ..., ("trans", True), ...))

A sentence that opens the way a layout sentence does ("Each thread in a warp ...") and that the
grammar cannot read is a warning naming what goes unchecked; other sentences (memory model,
sync semantics) are not the layout's and pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from lark import Lark, Token, UnexpectedInput, v_args
from lark.exceptions import VisitError

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, warning
from ..base.variants import COUNT_WORDS
from ..text.blocks import Block, Section
from ..text.lines import kind_of
from .grammars import ASK_LARK, MAX_LINE, RuleTransformer, lean_read, read_with, transformed

MOVE_STARTS = ("move_heading", "paragraph", "topic", "move_sentence", "syntax_line",
               "move_table", "figure_caption")


@cache
def moves_parser() -> Lark:
    return build_parser("moves", list(MOVE_STARTS))


@dataclass(frozen=True)
class MoveFact:
    """One statement of a move section: its kind (the grammar rule that read it), where it is,
    and its values by name (``get``)."""

    kind: str
    src: SourceText
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self.values if k == key), default)

    def at(self, key: str) -> SourceText:
        """The place of a value (``<key>_pos``) in its sentence, else the sentence."""
        pos = self.get(f"{key}_pos")
        return self.src.slice(pos) if isinstance(pos, int) else self.src


@dataclass(frozen=True)
class MoveForm:
    """A syntax line: the instruction, its dotted parts ``(name, optional)`` (a placeholder
    such as ``shape`` or a value such as ``m8n8``) and its operands' vector sizes (an address
    ``[p]`` is 0, a plain register 1, ``{d0, d1}`` 2)."""

    instruction: str
    parts: tuple[tuple[str, bool], ...]
    operands: tuple[int, ...]
    src: SourceText

    @property
    def template(self) -> bool:
        return any(p in PLACEHOLDERS for p, _ in self.parts)


PLACEHOLDERS = frozenset({"shape", "num", "type", "ss", "dst_fmt", "src_fmt"})


@dataclass(frozen=True)
class ParsedMoves:
    """A move section read: the instruction of its heading, the syntax block's forms and
    qualifier values (``shape`` -> (``m8n8``, ``m16n16``)), the examples, and the facts."""

    instruction: str
    heading: SourceText
    forms: tuple[MoveForm, ...] = ()
    qualifiers: tuple[tuple[str, tuple[str, ...], SourceText], ...] = ()
    facts: tuple[MoveFact, ...] = ()

    def values_of(self, name: str) -> tuple[str, ...]:
        return next((v for n, v, _ in self.qualifiers if n == name), ())

    def facts_of(self, *kinds: str) -> tuple[MoveFact, ...]:
        return tuple(f for f in self.facts if f.kind in kinds)


def _pos(t: Any) -> int:
    return (t.start_pos or 0) if isinstance(t, Token) else 0


def _toks(c: list[Any], *types: str) -> list[Token]:
    return [t for t in c if isinstance(t, Token) and t.type in types]


def _bits(t: Token) -> int:
    return int(str(t).replace("-", " ").split()[0])


_SENTENCES = ("num_values", "num_only", "shape_type_only", "operand_registers", "components",
              "addresses_each", "address_start", "address_ranges", "group_bytes",
              "thread_fragment", "group_whole", "group_whole_passive", "next_register",
              "shape_registers", "padding", "thread_columns", "per_matrix", "packing",
              "trans_optional", "trans_mandatory", "trans_result", "element_sizes",
              "source_format", "operand_pair")


@v_args(inline=False)
class MovesTransformer(RuleTransformer):
    """Lark tree of a move section's heading, sentence, syntax line or table -> values."""

    def __init__(self, src: SourceText) -> None:
        super().__init__()
        self.src = src

    # -- small values
    def count_number(self, c: list[Token]) -> tuple[str, int, int]:
        return ("count", int(str(c[0])), _pos(c[0]))

    def count_word(self, c: list[Token]) -> tuple[str, int, int]:
        return ("count", COUNT_WORDS.get(str(c[0]).lower(), 0), _pos(c[0]))

    def count_one(self, c: list[Token]) -> tuple[str, int, int]:
        return ("count", 1, 0)

    def count_list(self, c: list[Any]) -> tuple[str, tuple[int, ...], int]:
        counts = [x for x in c if isinstance(x, tuple)]
        return ("counts", tuple(x[1] for x in counts), counts[0][2])

    def int_list(self, c: list[Token]) -> tuple[str, tuple[int, ...], int]:
        ints = _toks(c, "INT")
        return ("ints", tuple(int(str(t)) for t in ints), _pos(ints[0]))

    def num_list(self, c: list[Token]) -> tuple[str, tuple[str, ...], int]:
        nums = _toks(c, "NUM_V")
        return ("nums", tuple(str(t)[1:] for t in nums), _pos(nums[0]))

    def ordinals(self, c: list[Token]) -> tuple[str, tuple[int, ...], int]:
        words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
        return ("ordinals", tuple(words.index(str(t).lower()) + 1 for t in c), _pos(c[0]))

    def reg_names(self, c: list[Token]) -> tuple[str, tuple[str, ...], int]:
        return ("names", tuple(str(t) for t in c), _pos(c[0]))

    def reg_list(self, c: list[Token]) -> tuple[str, tuple[str, ...], int]:
        return self.reg_names(c)

    def thread_words(self, c: list[Token]) -> tuple[str, tuple[str, ...], int]:
        return ("adjectives", tuple(str(t).lower() for t in c), 0)

    def shown(self, c: list[Token]) -> tuple[str, int, int]:
        fig = _toks(c, "INT")[0]
        return ("figure", int(str(fig)), _pos(fig))

    def matrix_of(self, c: list[Token]) -> tuple[str, str, int]:
        which = _toks(c, "WHICH")[0]
        return ("which", str(which).lower(), _pos(which))

    def address_range(self, c: list[Token]) -> tuple[int, int, int, int]:
        a, b = _toks(c, "ADDR")
        ordinal = _toks(c, "ORDINAL")[0]
        words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
        return (int(str(a)[4:]), int(str(b)[4:]), words.index(str(ordinal).lower()),
                _pos(a))

    # -- sentences: every token and every small value, by name
    def _fact(self, kind: str, c: list[Any]) -> MoveFact:
        values: list[tuple[str, Any]] = []
        seen: dict[str, int] = {}
        for x in c:
            if isinstance(x, Token):
                name = x.type.lower()
                if name.startswith("__") or name.startswith("anon"):
                    continue
                k = seen.get(name, 0)
                seen[name] = k + 1
                key = name if k == 0 else f"{name}{k + 1}"
                values.append((key, str(x)))
                values.append((f"{key}_pos", _pos(x)))
            elif isinstance(x, tuple) and len(x) == 3 and isinstance(x[0], str):
                k = seen.get(x[0], 0)
                seen[x[0]] = k + 1
                key = x[0] if k == 0 else f"{x[0]}{k + 1}"
                values.append((key, x[1]))
                values.append((f"{key}_pos", x[2]))
            elif isinstance(x, tuple) and len(x) == 4:
                values.append(("range", x))
        ranges = tuple(v for k, v in values if k == "range")
        values = [kv for kv in values if kv[0] != "range"]
        if ranges:
            values.append(("ranges", ranges))
        return MoveFact(kind, self.src, tuple(values))

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        name = str(data)
        if name in _SENTENCES or name == "figure_caption":
            return self._fact(name, children)
        return children

    # -- headings
    def move_heading(self, c: list[Token]) -> tuple[str, str]:
        return ("heading", str(_toks(c, "MOVE_NAME")[0]))

    # -- the syntax block
    def part(self, c: list[Token]) -> tuple[str, bool]:
        return (str(c[0])[1:], False)

    def optional_part(self, c: list[Token]) -> tuple[str, bool]:
        return (str(c[0])[1:], True)

    def op_plain(self, c: list[Token]) -> int:
        return 1

    def op_address(self, c: list[Token]) -> int:
        return 0

    def op_vector(self, c: list[Token]) -> int:
        return len(c)

    def operand_list(self, c: list[int]) -> tuple[int, ...]:
        return tuple(c)

    def instr_stmt(self, c: list[Any]) -> MoveForm:
        parts = tuple(x for x in c if isinstance(x, tuple) and len(x) == 2
                      and isinstance(x[1], bool))
        ops = next(x for x in c if isinstance(x, tuple) and all(isinstance(v, int) for v in x))
        return MoveForm(str(c[0]), parts, ops, self.src.slice(_pos(c[0])))

    def qual_value(self, c: list[Token]) -> str:
        return str(c[0])[1:]

    def qual_set(self, c: list[Any]) -> tuple[str, tuple[str, ...], SourceText]:
        return (str(c[0])[1:], tuple(x for x in c[1:] if isinstance(x, str)
                                     and not isinstance(x, Token)), self.src)

    def syntax_line(self, c: list[Any]) -> list[Any]:
        return list(c)

    # -- tables
    def thread_head(self, c: list[Token]) -> tuple[int, int]:
        a, b = _toks(c, "INT")
        return (int(str(a)), int(str(b)))

    def addr_span(self, c: list[Token]) -> tuple[int, int] | None:
        a, b = _toks(c, "ADDR")
        return (int(str(a)[4:]), int(str(b)[4:]))

    def addr_none(self, c: list[Token]) -> None:
        return None

    def num_row(self, c: list[Any]) -> tuple[str, tuple[tuple[int, int] | None, ...], int]:
        return (str(c[0])[1:], tuple(c[1:]), _pos(c[0]))

    def num_table(self, c: list[Any]) -> MoveFact:
        heads = tuple(x for x in c if isinstance(x, tuple) and len(x) == 2)
        rows = tuple(x for x in c if isinstance(x, tuple) and len(x) == 3)
        return MoveFact("num_table", self.src, (("threads", heads), ("rows", rows)))

    def shape_row(self, c: list[Token]) -> tuple[str, str, tuple[int, ...], int]:
        return (str(c[0])[1:], str(c[1]), tuple(_bits(t) for t in _toks(c, "BITS")), _pos(c[0]))

    def shape_table(self, c: list[Any]) -> MoveFact:
        return MoveFact("shape_table", self.src,
                        (("rows", tuple(x for x in c if isinstance(x, tuple))),))

    def fmt_first(self, c: list[Token]) -> tuple[str, str, int, int, int, str, int]:
        fmts = _toks(c, "FMT_V")
        ints = _toks(c, "INT")
        bits = _toks(c, "BITS")
        return (str(fmts[0])[1:], str(_toks(c, "SHAPE_V")[0])[1:], int(str(ints[0])),
                _bits(bits[0]), int(str(ints[1])), str(fmts[1])[1:] if len(fmts) > 1 else "",
                _pos(c[0]))

    def fmt_more(self, c: list[Token]) -> tuple[str, str, int]:
        return ("", str(c[0])[1:], _pos(c[0]))

    def fmt_table(self, c: list[Any]) -> MoveFact:
        rows: list[tuple[Any, ...]] = []
        for x in c:
            if isinstance(x, tuple) and len(x) == 7:
                rows.append(x)
            elif isinstance(x, tuple) and len(x) == 3 and rows:  # a shape of the row above
                rows.append((rows[-1][0], x[1], *rows[-1][2:6], x[2]))
        return MoveFact("fmt_table", self.src, (("rows", tuple(rows)),))


# ---- reading one section ---------------------------------------------------------------------


def _try(src: SourceText, start: str) -> Any:
    if len(src.text) > MAX_LINE or not src.text.strip():
        return None
    try:
        return transformed(moves_parser(), start, MovesTransformer, src.text, src)
    except (UnexpectedInput, VisitError, RecursionError):
        return None


def move_instruction(title: SourceText) -> str | None:
    """``ldmatrix`` for ``9.7.14.5.15. Warp-level matrix load instruction: ldmatrix``."""
    value = _try(title.strip(), "move_heading")
    return value[1] if value else None


_UNCHECKED = "what it states about the {ins} layouts is not checked"


def sentences(src: SourceText, parser: Lark | None = None) -> list[SourceText]:
    """The sentences of a paragraph, as the ``paragraph`` rule of ``parser`` (the moves'
    grammar unless given; tcgen05's has the same rule) splits them, each keeping its span."""
    parser = parser or moves_parser()
    tree = lean_read(parser, "paragraph", None, src.text)
    if tree is ASK_LARK:  # the loop declined it (or does not run ``parser``)
        tree = parser.parse(src.text, start="paragraph")
    out = []
    for tok in tree.children:
        if isinstance(tok, Token):
            start = tok.start_pos or 0
            out.append(src.slice(start, start + len(str(tok))).strip())
    return out


def _read_sentence(src: SourceText, instruction: str, facts: list[MoveFact],
                   findings: list[Finding]) -> None:
    if _try(src, "topic") is None:
        return  # not a sentence about the layout
    value, errs = read_with(src, "this sentence", lambda: transformed(
        moves_parser(), "move_sentence", MovesTransformer, src.text, src))
    if isinstance(value, MoveFact):
        facts.append(value)
        return
    for f in errs:
        findings.append(replace(f, severity="warning", kind="unreadable",
                                message=f"{f.message}; {_UNCHECKED.format(ins=instruction)}"))


def body_parts(body: Sequence[Block]) -> Iterator[tuple[Block, SourceText | None]]:
    """A section body's blocks in order, a table's consecutive rows (a header row opens a
    new table) given once: (its first row, the rows joined by ``table_text``); any other
    block as (the block, None).  The one row-grouping loop of the move and tcgen05 readers."""
    k = 0
    while k < len(body):
        b = body[k]
        if b.kind != "row":
            yield b, None
            k += 1
            continue
        j = k + 1
        while j < len(body) and body[j].kind == "row" and not body[j].header:
            j += 1
        yield b, table_text(list(body[k:j]))
        k = j


def table_text(rows: list[Block]) -> SourceText:
    """Consecutive table rows as one text: cells joined by ' | ', each keeping its place."""
    parts: list[SourceText] = []
    for r in rows:
        for cell in (r.cells or (r.text,)):
            if parts:
                end = parts[-1].span(max(0, len(parts[-1].text) - 1))
                parts.append(SourceText(" | ", cell.document, ((0, end.line, end.column + 1),)))
            parts.append(cell)
    return SourceText.concat(parts)


def parse_moves(section: Section, findings: list[Finding]) -> ParsedMoves | None:
    """A move section's heading, syntax block, tables, figures and sentences, read."""
    instruction = move_instruction(section.title)
    if instruction is None:
        findings.append(warning("unreadable", section.title.strip(),
                                "a warp-level matrix move heading that names no ldmatrix, "
                                "stmatrix or movmatrix: the section is not checked"))
        return None
    forms: list[MoveForm] = []
    quals: list[tuple[str, tuple[str, ...], SourceText]] = []
    facts: list[MoveFact] = []
    for b, table in body_parts(section.body):
        if table is not None:
            value = _try(table, "move_table")
            if isinstance(value, MoveFact):
                facts.append(value)
            elif b.header and _try(b.cells[0] if b.cells else b.text, "topic") is None \
                    and any(c.text.strip().startswith((".num", ".shape", ".src")) for c in
                            b.cells[:1]):
                findings.append(warning("unreadable", table, "cannot read this table; "
                                        + _UNCHECKED.format(ins=instruction)))
            continue
        src = b.text
        if b.kind == "figure":
            value = _try(src, "figure_caption")
            if isinstance(value, MoveFact):
                facts.append(value)
            continue
        # which start symbol can read a block is told by its first words (grammar/lines.lark):
        # a syntax line opens with the instruction or a dotted qualifier, a table with a
        # dotted header, a caption with "Figure"
        head = kind_of(src.text.strip()[:80])
        dotted = head.head in ("dotted", "header_type")
        syntax = _try(src, "syntax_line") if dotted or \
            src.text.lstrip().startswith(instruction) else None
        if syntax is not None:
            for x in syntax:
                if isinstance(x, MoveForm):
                    forms.append(x)
                elif isinstance(x, tuple):
                    quals.append(x)
            continue
        if b.kind != "prose":
            continue
        flat = _try(src, "move_table") if dotted else None  # a browser's flattened table
        if isinstance(flat, MoveFact):
            facts.append(flat)
            continue
        caption = _try(src, "figure_caption") if head.phrase == "Figure" else None
        if isinstance(caption, MoveFact):
            facts.append(caption)
            continue
        for sentence in sentences(src):
            _read_sentence(sentence, instruction, facts, findings)
    findings.extend(_slips(facts))
    return ParsedMoves(instruction, section.title, tuple(forms), tuple(quals), tuple(facts))


# the forms of the verbs a fact is stated with; another spelling is read, and reported
_VERBS = frozenset(f"{stem}{end}" for stem, ends in (
    ("load", ("", "s", "ed", "ing")), ("store", ("", "s", "d")), ("storing", ("",)),
    ("hold", ("", "s", "ing")), ("held", ("",)), ("receiv", ("e", "es", "ed", "ing")),
    ("provid", ("e", "es", "ed", "ing")), ("read", ("", "s", "ing")),
    ("writ", ("e", "es", "ing", "ten")), ("contain", ("", "s", "ed", "ing"))) for end in ends)


def _slips(facts: list[MoveFact]) -> list[Finding]:
    """A misspelt verb (``storedd``): the meaning is clear, the word is not."""
    out = []
    for f in facts:
        for key, value in f.values:
            if key.startswith("verb") and not key.endswith("_pos") \
                    and str(value).lower() not in _VERBS:
                out.append(warning("wording", f.at(key), f"'{value}' reads as a slip of a "
                                   "verb (the fact is read as if it were spelt right)"))
    return out
