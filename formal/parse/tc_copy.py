"""``tcgen05.cp`` (shared memory -> tensor memory) as the catalog states it, read into syntax.

A copy section names one form (shape, multicast), the source matrix (rows x 32-bit pieces a
row), the places each piece is multicast to, the TMEM columns and lanes the copy fills, and a
placement program (pseudocode, ``grammar/pseudocode.lark``)::

    ## Copy tcgen05.cp.32x128b.warpx4
    * Copy: 32 rows x 4 pieces of 32 bits, to 4 places each, in 4 columns of 128 lanes.
      copy   = {0, 1, 2, 3}
      lane   = row + 32 * copy
      column = piece

becomes ``CopySection(shape="32x128b", multicast="warpx4", rows=32, pieces=4, width=32,
places=4, columns=4, lanes=128, program=Program(...))``: row 5's piece 2 lands, at ``copy =
3``, on lane 101, column 2.  A decompression section states one source format::

    ## Decompression tcgen05.cp .b8x16.b6x16_p32
    * Decompress: 16 elements of 6 bits and 32 bits of padding, in 128 bits, to 16 elements
      of 8 bits.

-> ``FormatSection(src="b6x16_p32", count=16, bits=6, padding=32, unit=128, out_count=16,
out_bits=8)``.  The lines are read by ``grammar/tc_copy.lark``; nothing is evaluated here
(``formal.model.tc_copy`` gives the program meaning).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from lark import Lark, Token

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, error
from . import syntax as S
from .grammars import RuleTransformer
from .kept import parses_remembered
from .parts import declared, parts, read_by_grammar
from .pseudocode import parse_program

STARTS = ("copy_title", "copy_decl", "format_title", "format_decl")


@cache
def _parser() -> Lark:
    return build_parser("tc_copy", list(STARTS))


@dataclass(frozen=True)
class CopySection:
    """One tcgen05.cp form as the catalog states it (see the module docstring)."""

    shape: str  # 64x128b
    multicast: str  # "" | warpx2::02_13 | warpx2::01_23 | warpx4
    rows: int
    pieces: int
    width: int
    places: int
    columns: int
    lanes: int
    program: S.Program
    title: str
    source: SourceText
    decl: SourceText


@dataclass(frozen=True)
class FormatSection:
    """One decompressing source format: ``count`` elements of ``bits`` bits and ``padding``
    bits in a ``unit``-bit group, written as ``out_count`` elements of ``out_bits`` bits."""

    dst: str  # b8x16
    src: str  # b6x16_p32
    count: int
    bits: int
    padding: int
    unit: int
    out_count: int
    out_bits: int
    title: str
    source: SourceText
    decl: SourceText


class _ToCopy(RuleTransformer):
    def copy_title(self, items: list[Token]) -> tuple[str, str]:
        toks = {t.type: str(t) for t in items}
        return toks["CP_SHAPE"].rsplit(".", 1)[1], toks.get("MULTICAST", "").lstrip(".")

    def format_title(self, items: list[Token]) -> tuple[str, str]:
        toks = {t.type: str(t) for t in items}
        return toks["DST_FMT"].lstrip("."), toks["SRC_FMT"].lstrip(".")

    def copy_decl(self, items: list[Token]) -> tuple[int, ...]:
        return tuple(int(t) for t in items if t.type == "INT")

    format_decl = copy_decl


def read_copy_line(text: str, start: str) -> Any | None:
    """One line read by one start symbol of ``grammar/tc_copy.lark``, or None."""
    return read_by_grammar(_parser, _ToCopy(), text, start, "tc_copy")


_DECL = {"copy_title": ("copy", "copy_decl", "'Copy: R rows x P pieces of W bits, to N places "
                        "each, in C columns of L lanes'"),
         "format_title": ("decompress", "format_decl", "'Decompress: N elements of B bits and "
                          "P bits of padding, in U bits, to N elements of B bits'")}


def read_tc_copy(text: str, name: str) \
        -> tuple[tuple[CopySection, ...], tuple[FormatSection, ...], tuple[Finding, ...]]:
    """Every copy and decompression section of one document: a heading that reads as
    ``copy_title`` / ``format_title`` opens one; its declaration line (and, for a copy, the
    fenced program after it) completes it.  A section missing either is an error finding on
    its title.  Its lines' readings are kept between runs (``kept.parses_remembered``)."""
    with parses_remembered(tuple(text.split("\n")), "tc_copy"):
        return _read_tc_copy(text, name)


def _read_tc_copy(text: str, name: str) \
        -> tuple[tuple[CopySection, ...], tuple[FormatSection, ...], tuple[Finding, ...]]:
    copies: list[CopySection] = []
    formats: list[FormatSection] = []
    findings: list[Finding] = []
    for part in parts(text, name):
        found: tuple[str, Any] | None = next(
            ((k, h) for k in _DECL if (h := read_copy_line(part.title, k)) is not None), None)
        if found is None:
            continue
        kind, head = found
        word, start, form = _DECL[kind]
        d = declared(part, word + ":", partial(read_copy_line, start=start), form)
        findings.extend(d.findings)
        decl, decl_src, lines = d.value, d.source, d.lines
        needs_program = kind == "copy_title"
        if decl is None or decl_src is None or (needs_program and lines is None):
            findings.append(error("tensor-copy", part.source, f"{part.title}: no {form} "
                                  "line" + (" with its program" if needs_program else "")))
        elif needs_program and lines is not None:
            program, errs = parse_program(lines)
            findings.extend(errs)
            shape, multicast = head
            rows, pieces, width, places, columns, lanes = decl
            copies.append(CopySection(shape, multicast, rows, pieces, width, places, columns,
                                      lanes, program, part.title, part.source, decl_src))
        else:
            dst, srcf = head
            count, bits, padding, unit, out_count, out_bits = decl
            formats.append(FormatSection(dst, srcf, count, bits, padding, unit, out_count,
                                         out_bits, part.title, part.source, decl_src))
    return tuple(copies), tuple(formats), tuple(findings)
