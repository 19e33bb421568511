"""The sparsity metadata of ``tcgen05.mma.sp`` as the catalog states it, read into syntax.

A section names one form (kind, M, K), the metadata matrix's fields and the tensor memory its
selector values take, and a placement program (pseudocode, ``grammar/pseudocode.lark``)::

    ## Sparse metadata for tcgen05.mma.sp .kind::f16 with M=128, K=32
    * Metadata: 128 x 8 fields of 4 bits, in 2 columns of 128 lanes.
      sel    = {0, 1}                   the selector values
      lane   = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)
      column = sel
      bit    = 4 * (chunk % 4) + 16 * ((row / 8) % 2)

becomes ``MetaSection(kind="f16", m=128, k=32, rows=128, chunks=8, width=4, columns=2,
lanes=128, program=Program(...))``: row 0's chunk 5 reads, at ``sel = 1``, lane 8, column 1,
bits 4-7.  A title naming ``tcgen05.mma.ws.sp`` reads as ``ws=True``; a line ``Metadata: 64 x
8 fields of 4 bits, each held 2 times, in 2 columns of 128 lanes`` as ``copies=2`` (its
program places each ``copy``).  The lines are read by ``grammar/tc_meta.lark``; nothing is
evaluated here (``formal.model.tc_meta`` gives the program meaning).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, Span, error
from . import syntax as S
from .grammars import RuleTransformer
from .kept import parses_remembered
from .parts import declared, parts, read_by_grammar
from .pseudocode import parse_program

STARTS = ("meta_title", "meta_decl")


@cache
def _parser() -> Lark:
    return build_parser("tc_meta", list(STARTS))


@dataclass(frozen=True)
class MetaSection:
    """One sparse form's metadata as the catalog states it: the matrix (rows x chunks of a
    row, ``width`` bits a chunk's field), the columns and lanes its selector values take,
    and its placement program (``sel``, ``lane``, ``column``, ``bit``)."""

    kind: str
    m: int
    k: int
    rows: int
    chunks: int
    width: int
    columns: int
    lanes: int
    program: S.Program
    title: str
    source: SourceText
    decl: SourceText
    ws: bool = False  # tcgen05.mma.ws.sp
    copies: int = 1  # times each field is held (a .ws form of M < 128: 128 / M)


class _ToMeta(RuleTransformer):
    def meta_title(self, items: list[Token]) -> tuple[Any, ...]:
        toks = {t.type: str(t) for t in items}
        return (toks["KIND"].partition("::")[2], int(toks["M_EQ"][2:]), int(toks["K_EQ"][2:]),
                ".ws." in toks["TC_SP"])

    def copies(self, items: list[Token]) -> int:
        return next(int(t) for t in items if t.type == "INT")

    def meta_decl(self, items: list[Any]) -> tuple[int, ...]:
        ints = [int(t) for t in items if isinstance(t, Token) and t.type == "INT"]
        copies = next((c for c in items if isinstance(c, int)), 1)
        return (*ints, copies)


def read_meta_line(text: str, start: str) -> Any | None:
    """One line read by one start symbol of ``grammar/tc_meta.lark``, or None."""
    return read_by_grammar(_parser, _ToMeta(), text, start, "tc_meta")


def read_tc_meta(text: str, name: str) -> tuple[tuple[MetaSection, ...], tuple[Finding, ...]]:
    """Every metadata section of one document: a heading that reads as ``meta_title`` opens
    one; its ``Metadata:`` line (``meta_decl``) and the fenced block after it complete it.
    A section missing either is an error finding on its title.  Its lines' readings are
    kept between runs (``kept.parses_remembered``)."""
    with parses_remembered(tuple(text.split("\n")), "tc_meta"):
        return _read_tc_meta(text, name)


def _read_tc_meta(text: str, name: str) -> tuple[tuple[MetaSection, ...], tuple[Finding, ...]]:
    out: list[MetaSection] = []
    findings: list[Finding] = []
    for part in parts(text, name):
        head = read_meta_line(part.title, "meta_title")
        if head is None:
            continue
        d = declared(part, "metadata", lambda t: read_meta_line(t, "meta_decl"),
                     "'Metadata: R x C fields of W bits, in N columns of L lanes'")
        findings.extend(d.findings)
        decl, decl_src, lines = d.value, d.source, d.lines
        if decl is None or lines is None or decl_src is None:
            findings.append(error("sparse-metadata", part.source, f"{part.title}: no "
                                  "'Metadata: R x C fields of W bits, in N columns of L "
                                  "lanes' line with its program"))
            continue
        program, errs = parse_program(lines)
        findings.extend(errs)
        rows, chunks, width, cols, lanes, copies = decl
        kind, m, k, ws = head
        out.append(MetaSection(kind, m, k, rows, chunks, width, cols, lanes, program,
                               part.title, part.source, decl_src, ws, copies))
    return tuple(out), tuple(findings)


# the kinds of tcgen05.mma.sp: the plain ones (which .ws takes too), then the block-scaled ones
PLAIN_KINDS = ("tf32", "f16", "f8f6f4", "i8")
SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")


def figure_only(sections: tuple[MetaSection, ...], name: str) -> tuple[Finding, ...]:
    """One warning naming each data path of ``tcgen05.mma.sp`` (``base.matrix_variants.
    DATAPATH_ROWS``: M, CTAs, ``.ws``) whose kinds ``sections`` place no metadata for, and what
    therefore goes unchecked (none when every path is placed).  A section is one CTA's (the
    catalog states no pair's), so Layout C (a pair's M = 128, sparse only) and A (M = 256) lack
    every kind; Layout F (M = 64, one CTA, without ``.ws``) each kind the catalog has no
    ``M=64`` section without ``.ws`` for."""
    from ..base.matrix_variants import DATAPATH_ROWS
    have = {(s.kind, s.m, s.ws) for s in sections}
    paths = []
    for letter, m, ctas, sparsity, ws, _ns in DATAPATH_ROWS:
        if sparsity == "dense":
            continue
        for w in {"yes": (True,), "no": (False,), "either": (False, True)}.get(ws, (False,)):
            kinds = PLAIN_KINDS if w else PLAIN_KINDS + SCALED_KINDS
            lack = [k for k in kinds if ctas > 1 or (k, m, w) not in have]
            if lack:
                form = "a CTA pair" if ctas > 1 else \
                    f"one CTA, {'.ws' if w else 'without .ws'}"
                paths.append((letter, f"Layout {letter} (M = {m}, {form}; "
                                      f".kind::{', '.join(lack)})"))
    if not paths:
        return ()  # the finding names the first path's layout: a report's findings name one
    return (Finding(
        "warning", "figure-only", Span(name, 1, 1),
        "tcgen05.mma.sp: the catalog places no metadata for "
        + "; ".join(p for _l, p in paths) + " -- the "
        "text gives the placement as figures only.  Not checked for these forms: which (lane, "
        "column, bit) holds each (row, chunk)'s field, that the fields cover every (row, "
        "chunk) once within the selector's columns, and on hardware (no .sp run reads D by "
        "these data paths)", layout=f"tcgen05.datapath.{paths[0][0]}"),)
