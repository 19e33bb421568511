"""Blocks -> sections, operand blocks and type blocks.

    9.7.14.5.9. Matrix Fragments for mma.m16n8k16 ...   -> Section
      Multiplicand A:                                    -> OperandBlock("A")
        .s4 or .u4:                                      -> TypeBlock(label)
        .atype | Fragment | Elements                     -> header row
        groupID = %laneid >> 2                           -> pseudocode lines
      Matrix fragments for ... are the same as ...       -> Section.references
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..base.source import SourceText
from .blocks import (
    Block,
    OperandBlock,
    Section,
    TableRow,
    TypeBlock,
    section_number,
)
from .lines import heading_kinds, kind_of

# ---- structure -----------------------------------------------------------------------------------


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
    move = False  # the open section is a matrix move section
    tmem = False  # ... or a tcgen05 tensor-memory section (both keep their body blocks)
    wmma = False  # the open section is the wmma fragment section
    body: list[Block] = []
    after_blank = True

    def close_section() -> None:
        nonlocal current, title, move, tmem, wmma
        if current is not None:
            operands.append(current.freeze())
            current = None
        if title is not None:
            t = title.text.strip()
            sections.append(Section(section_number(t), title, tuple(operands), tuple(refs),
                                    tuple(prose), move, tuple(body), tmem, wmma))
        operands.clear()
        refs.clear()
        prose.clear()
        body.clear()
        title = None
        move = tmem = wmma = False

    for b in blocks:
        if b.kind == "blank":
            after_blank = True
            continue
        joins = not after_blank
        after_blank = False
        if b.kind == "heading":
            t = b.text.text.strip()
            # a Markdown page repeats its title as the first heading: merge the two
            if title is not None and not operands and current is None and not refs \
                    and section_number(t) and section_number(t) == \
                    section_number(title.text.strip()):
                title = b.text
                continue
            close_section()
            title = b.text
            move, tmem, wmma = heading_kinds(t)
            continue
        if title is None:
            title = SourceText.at("", doc, 1)  # content before any heading
        if move or tmem or wmma:
            body.append(_joined(body, b) if joins else b)
            if joins and body[-1] is not b:
                body.pop(-2)
            continue
        if b.kind == "prose":
            kind = kind_of(b.text.text.strip())
            if kind.reference:
                refs.append(b.text)
                continue
            operand = kind.operand
            if operand is not None:
                if current is not None:
                    operands.append(current.freeze())
                current = _OpenBlock(operand, b.text)
                if kind.same_as:
                    # "Accumulator D: Matrix fragments for accumulator D are the same as ..."
                    # on one line (a scrape joined the heading and its sentence)
                    k = b.text.text.find(": ")
                    rest = b.text.slice(k + 2).strip() if k > 0 else None
                    if rest is not None and kind_of(rest.text).reference:
                        refs.append(rest)
                        continue
                if operand == "metadata":
                    current.prose.append(b.text)
                continue
            if current is not None and kind.type_label:
                current.close_part()
                current.label = b.text
                continue
            if current is not None and (kind.major_label or kind.type_select):
                # the table above applies to every arrangement (each part keeps it), or
                # holds a row for each type a sub-bullet names (each part keeps it too; the
                # model takes the rows of the part's types)
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


def _joined(body: list[Block], b: Block) -> Block:
    """``b`` added to the prose block before it when that block is the same paragraph: the
    line just above, not closing a sentence or a statement (a browser's copy keeps the line
    breaks of a paragraph; a table row or a code line ends a paragraph of its own)."""
    if not body or b.kind != "prose" or body[-1].kind != "prose":
        return b
    prev = body[-1].text
    end = prev.span(max(0, len(prev.text) - 1))
    if b.text.span(0).line != end.line + 1 or prev.text.rstrip()[-1:] in (".", ":", ";"):
        return b
    space = SourceText(" ", prev.document, ((0, end.line, end.column + 1),))
    return Block("prose", SourceText.concat([prev, space, b.text]))
