"""The tcgen05 tensor-memory sections, read: their headings, sentences and tables as facts.

The spec draws the tcgen05.ld / tcgen05.st fragments as figures; around them it states
numbers a layout must agree with, and ``grammar/tmem.lark`` reads them.  From

    9.7.16.2.3.1.2. Matrix fragments for shape .16x64b
    A warp executing tcgen05{.ld,.st}.16x64b will access 16 lanes of the Tensor Memory.
    It loads from or stores to each of the lane (64 * .num)-bits of data ...

the section gives ``TmemFact("lanes", shape=".16x64b", lanes=16)`` and ``TmemFact("bits",
bits=64)``: 16 lanes x 64 bits = 1024 bits a ``.num``, 32 threads x one ``.b32`` register --
which formal/model/tmem.py checks against Table 47's register counts (``num_table``), the
access table (warp w -> lanes) against the 4 equal chunks, and each against the variant
table.  A sentence no rule reads is skipped (these sections say much that is not about the
layout); a shape section whose lanes or bits sentence cannot be read is a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from typing import Any

from lark import Lark, Token, v_args
from lark.exceptions import UnexpectedInput, VisitError

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, warning
from ..text.blocks import Section
from .grammars import MAX_LINE, PROSE_MEMO, RuleTransformer, can_read, remember, transformed
from .kept import noted_prose
from .moves import body_parts, sentences
from .syntax import Slice, TmemFact

TMEM_STARTS = ("tmem_heading", "paragraph", "tmem_sentence", "tmem_table")


@cache
def tmem_parser() -> Lark:
    # the one parser that keeps its rules' positions: a table row's text ends where its
    # last token, kept or not, does (``meta.end_pos``: dp_row, block_row, pack_row)
    return build_parser("tmem", list(TMEM_STARTS), positions=True)


@dataclass(frozen=True)
class ParsedTmem:
    title: SourceText
    heading: TmemFact | None  # shape_heading | access_heading | instruction_heading
    facts: tuple[TmemFact, ...]

    def facts_of(self, *kinds: str) -> tuple[TmemFact, ...]:
        return tuple(f for f in self.facts if f.kind in kinds)


def _width(tok: Token) -> int:
    """``16-bit`` -> 16."""
    return int(str(tok).split("-")[0])


def _count(tok: Token) -> int:
    words = {"one": 1, "two": 2, "three": 3, "four": 4}
    return words.get(str(tok).lower()) or int(str(tok))


def _npart(text: str) -> Fraction:
    """``N`` -> 1, ``N/4`` -> 1/4, ``3N/4`` -> 3/4 (a bound's multiple of the mma's N)."""
    head, _n, tail = text.replace(" ", "").replace("*", "").partition("N")
    return Fraction(int(head or 1), int(tail.lstrip("/") or 1))


def _shape(tok: Token) -> str:
    """``tcgen05{.ld,.st}.16x64b`` or ``.16x64b`` -> ``16x64b``."""
    return str(tok).rsplit(".", 1)[-1] if "x" in str(tok).rsplit(".", 1)[-1] else ""


class TmemTransformer(RuleTransformer):
    def __init__(self, src: SourceText) -> None:
        super().__init__()
        self.src = src

    def _fact(self, kind: str, **values: Any) -> TmemFact:
        return TmemFact(kind, self.src, tuple(values.items()))

    def shape_heading(self, c: list[Token]) -> TmemFact:
        return self._fact("shape_heading", shape=_shape(c[-1]))

    def access_heading(self, c: list[Token]) -> TmemFact:
        return self._fact("access_heading")

    def instruction_heading(self, c: list[Token]) -> TmemFact:
        return self._fact("instruction_heading", opcode=str(c[-1]))

    def datapath_heading(self, c: list[Token]) -> TmemFact:
        return self._fact("datapath_heading")

    def layout_heading(self, c: list[Token]) -> TmemFact:
        ints = [t for t in c if t.type == "INT"]
        return self._fact("layout_heading", layout=str(next(t for t in c
                                                            if t.type == "LAYOUT_ID")),
                          m=int(ints[0]))

    @v_args(meta=True)
    def dp_row(self, meta: Any, c: list[Token]) -> tuple[Any, ...]:
        """(M, cta_group, sparsity, .ws, (row groups, column groups), half the lanes,
        layout letter, lane alignments, the row's text)."""
        ints = [t for t in c if t.type == "INT"]
        of = {t.type: str(t) for t in c}
        rows, cols = (int(x) for x in of["ORG"].lower().split("x"))
        return (int(ints[0]), int(ints[1]), of["SPARSITY"].lower(), of["WS_MODE"].lower(),
                (rows, cols), "HALF" in of, of["LAYOUT_ID"],
                tuple(int(t) for t in ints[2:]),
                self.src.slice(c[0].start_pos or 0, meta.end_pos))

    def datapath_table(self, c: list[Any]) -> TmemFact:
        return self._fact("datapath_table", rows=tuple(c[1:]))

    def span(self, c: list[Token]) -> tuple[int, int]:
        return int(c[0]), int(c[2])

    def bound_int(self, c: list[Token]) -> tuple[Fraction, int]:
        return Fraction(0), int(c[0])

    def bound_n(self, c: list[Token]) -> tuple[Fraction, int]:
        return _npart(str(c[0])), 0

    def bound_below(self, c: list[Token]) -> tuple[Fraction, int]:
        return _npart(str(c[0])), -int(c[2])

    def bound_above(self, c: list[Token]) -> tuple[Fraction, int]:
        return _npart(str(c[0])), int(c[1])

    def cspan(self, c: list[Any]) -> tuple[tuple[Fraction, int], tuple[Fraction, int]]:
        return c[0], c[1]

    @v_args(meta=True)
    def block_row(self, meta: Any, c: list[Any]) -> tuple[Any, ...]:
        """(cta, warp, lanes, TMEM columns, rows, columns of D, the row's text)."""
        return (int(c[0]), int(c[1]), c[2], c[3], c[4], c[5],
                self.src.slice(c[0].start_pos or 0, meta.end_pos))

    def block_table(self, c: list[Any]) -> TmemFact:
        return self._fact("block_table", rows=tuple(c[1:]))

    def packing_heading(self, c: list[Token]) -> TmemFact:
        return self._fact("packing_heading",
                          matrices=tuple(str(t) for t in c if t.type == "MATRIX_V"),
                          kinds=tuple(str(t).split("::")[1] for t in c if t.type == "KIND_V"),
                          memory=next(str(t).lower() for t in c if t.type == "MEM_V"))

    def word_single(self, c: list[Token]) -> TmemFact:
        ints = [int(t) for t in c if t.type == "INT"]
        return self._fact("word_single", bits=ints[0], width=_width(c[-2]), low=ints[1])

    def per_word(self, c: list[Token]) -> TmemFact:
        ints = [int(t) for t in c if t.type == "INT"]
        return self._fact("per_word", bits=ints[0], count=_count(next(
            t for t in c if t.type == "COUNT")), word=_width(next(
                t for t in c if t.type == "WIDTH")))

    def per_container(self, c: list[Any]) -> TmemFact:
        c = [t for t in c if isinstance(t, Token)]
        widths = [_width(t) for t in c if t.type == "WIDTH"]
        return self._fact("per_container", count=_count(next(
            t for t in c if t.type == "COUNT")), bits=widths[0], container=widths[-1],
            no_padding=any(t.type == "NO_PADDING" for t in c))

    def bit_linear(self, c: list[Token]) -> tuple[int, int]:
        head = str(c[0])[:-1]
        return int(head or 1), int(c[1]) if len(c) > 1 else 0

    def bit_const(self, c: list[Token]) -> tuple[int, int]:
        return 0, int(c[0])

    @v_args(meta=True)
    def pack_row(self, meta: Any, c: list[Any]) -> tuple[Any, ...]:
        """(type, element bits, slot bits, unit bits, elements a unit, (stride, offset) of
        element k's first bit, the row's text)."""
        return (str(c[0])[1:], int(c[1]), int(c[2]), int(c[3]), int(c[4]), c[5],
                self.src.slice(c[0].start_pos or 0, meta.end_pos))

    def packing_table(self, c: list[Any]) -> TmemFact:
        return self._fact("packing_table", rows=tuple(c[1:]))

    def lanes(self, c: list[Token]) -> TmemFact:
        return self._fact("lanes", shape=_shape(c[0]), lanes=int(c[1]))

    def bits(self, c: list[Any]) -> TmemFact:
        return self._fact("bits", bits=int(c[0]))

    def split(self, c: list[Token]) -> TmemFact:
        return self._fact("split", shape=_shape(c[0]), accesses=_count(c[1]),
                          part=_shape(c[2]))

    def chunks(self, c: list[Token]) -> TmemFact:
        return self._fact("chunks", chunks=int(next(t for t in c if t.type == "INT")))

    def register_table(self, c: list[Token]) -> TmemFact:
        kind = next(str(t)[1:] for t in c if t.type == "TYPE_V")
        return self._fact("register_table", register=kind,
                          table=int(next(t for t in c if t.type == "INT")))

    def shape_group(self, c: list[Token]) -> tuple[str, ...]:
        return tuple(_shape(t) for t in c)

    def count_int(self, c: list[Token]) -> int | None:
        return int(c[0])

    def count_na(self, c: list[Token]) -> int | None:
        return None

    def num_row(self, c: list[Any]) -> tuple[int, tuple[int | None, ...]]:
        return int(str(c[0])[2:]), tuple(c[1:])

    def num_table(self, c: list[Any]) -> TmemFact:
        groups = [x for x in c if isinstance(x, tuple) and x and isinstance(x[0], str)]
        rows = [x for x in c if isinstance(x, tuple) and x and isinstance(x[0], int)]
        return self._fact("num_table", groups=tuple(groups), rows=tuple(rows))

    def access_row(self, c: list[Token]) -> tuple[int, int, int]:
        return int(c[0]), int(c[1]), int(c[3])

    def access_table(self, c: list[Any]) -> TmemFact:
        return self._fact("access_table", rows=tuple(c))


# A reading is remembered (and kept between runs, ``formal.parse.kept``) by its text, as the
# prose's are: a fact with its source and every piece of text it holds written as ``Slice``s of
# the text read, placed back on the text of each later use; a text that is no fact as None.
_NOWHERE = SourceText.at("", "", 0)


class _Unplaced(Exception):
    """A value holding text that is not a piece of the text read (not remembered)."""


def _relative(value: Any, src: SourceText) -> Any:
    if isinstance(value, TmemFact):
        if value.src != src:
            raise _Unplaced(value.kind)
        return replace(value, src=_NOWHERE, values=_relative(value.values, src))
    if isinstance(value, tuple):
        return tuple(_relative(x, src) for x in value)
    if isinstance(value, list):
        return [_relative(x, src) for x in value]
    if isinstance(value, SourceText):
        at = src.text.find(value.text)
        while at >= 0:
            if src.slice(at, at + len(value.text)) == value:
                return Slice(at, at + len(value.text))
            at = src.text.find(value.text, at + 1)
        raise _Unplaced(value.text)
    return value


def _placed(value: Any, src: SourceText) -> Any:
    if isinstance(value, TmemFact):
        return replace(value, src=src, values=_placed(value.values, src))
    if isinstance(value, tuple):
        return tuple(_placed(x, src) for x in value)
    if isinstance(value, list):
        return [_placed(x, src) for x in value]
    if isinstance(value, Slice):
        return src.slice(value.start, value.end)
    return value


def _remembered(src: SourceText, start: str, read: Callable[[], Any]) -> Any:
    """``read()`` of ``src`` as ``start``, or its value remembered for the same text."""
    key = (src.text, f"tmem:{start}")
    if key in PROSE_MEMO:
        kept = PROSE_MEMO[key]
        noted_prose(src.text, key[1], kept)
        return _placed(kept, src)
    value = read()
    try:
        kept = _relative(value, src)
    except _Unplaced:
        return value
    remember(PROSE_MEMO, key, kept)
    noted_prose(src.text, key[1], kept)
    return value


def _try(src: SourceText, start: str) -> Any:
    if len(src.text) > MAX_LINE or not src.text.strip():
        return None

    def read() -> Any:
        if not can_read(tmem_parser(), start)(src.text):
            return None  # a token the start symbol needs matches nowhere: Lark would refuse it
        try:
            return transformed(tmem_parser(), start, TmemTransformer, src.text, src)
        except (UnexpectedInput, VisitError, RecursionError):
            return None

    return _remembered(src, start, read)


def _sentences(src: SourceText) -> list[SourceText]:
    """``moves.sentences`` of a paragraph by the tcgen05 grammar, remembered."""
    return list(_remembered(src, "paragraph", lambda: tuple(sentences(src, tmem_parser()))))


def parse_tmem(section: Section, findings: list[Finding]) -> ParsedTmem:
    """A tcgen05 tensor-memory section's heading, tables and sentences, read."""
    heading = _try(section.title.strip(), "tmem_heading")
    facts: list[TmemFact] = []
    for b, table in body_parts(section.body):
        if table is not None:
            value = _try(table, "tmem_table")
            if isinstance(value, TmemFact):
                facts.append(value)
            elif isinstance(heading, TmemFact) and heading.kind == "layout_heading" \
                    and b.header:
                findings.append(warning("unreadable", table, "cannot read this table as the "
                                        "blocks of a data-path layout: the layout is not "
                                        "checked"))
            continue
        if b.kind == "prose":
            flat = _try(b.text, "tmem_table")  # a browser's flattened table
            if isinstance(flat, TmemFact):
                facts.append(flat)
                continue
            for sentence in _sentences(b.text):
                value = _try(sentence, "tmem_sentence")
                if isinstance(value, TmemFact):
                    facts.append(value)
    if isinstance(heading, TmemFact) and heading.kind == "shape_heading":
        for kind in ("lanes", "bits"):
            if not any(f.kind == kind for f in facts):
                findings.append(warning("unreadable", section.title.strip(),
                                        f"no sentence of this section states the {kind} a warp "
                                        f"accesses as ptxlayout reads them: the shape "
                                        f".{heading.get('shape')} is not checked against Table 47"))
    return ParsedTmem(section.title, heading if isinstance(heading, TmemFact) else None,
                      tuple(facts))
