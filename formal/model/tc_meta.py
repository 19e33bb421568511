"""The sparsity metadata of ``tcgen05.mma.sp`` in tensor memory: which (lane, column, bits)
holds the metadata field of which (row, chunk) of A, for every value of the selector.

A chunk is the run of K that one field describes (four elements at 2:4, so a 4-bit field of
two 2-bit indices).  For ``.kind::f16`` at M = 128, K = 32 (``lane = row % 8 + 8 * (chunk /
4) + 16 * (row / 16)``, ``column = sel``, ``bit = 4 * (chunk % 4) + 16 * ((row / 8) % 2)``)
and ``sel = 1``::

    (row, chunk)  ->  (lane, column, bits)
      (0, 0)            (0, 1, 0-3)
      (0, 5)            (8, 1, 4-7)
      (8, 0)            (0, 1, 16-19)

so rows 0 and 8 share lane 0 (each half word one row) and the second half of a row's chunks
goes eight lanes down.  A ``.ws`` form of M < 128 holds each field ``copies`` times (128 / M:
one for each group of lanes its accumulator takes); its program places each ``copy``, and a
placed field is ``(row, chunk, lane, column, bit, copy)``.  A ``MetaLayout`` keeps such a
table for each of the four values the instruction descriptor's two-bit selector field can take,
stated legal or not, so that the prove stage can say which values the layout admits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.memo import keep_bounded
from ..base.source import Finding, Span
from ..parse import syntax as S
from ..parse.tc_meta import MetaSection
from .block_scale import (
    Placements,
    ProgramLines,
    TooWide,
    Undefined,
    at_each_value,
    definition_expr,
    program_faults,
    program_grid,
    program_table,
    set_values,
)

SELECTOR_VALUES = 4  # the instruction descriptor's sparsity selector is a two-bit field
WORD_BITS = 32  # a tensor-memory column is one 32-bit word a lane
TMEM_LANES = 128
PLACE_NAMES = ("lane", "column", "bit")
REQUIRED = ("sel", "lane", "column", "bit")

Field = tuple[int, int, int, int, int, int]  # (row, chunk) -> lane, column, bit; the copy


@dataclass(frozen=True)
class MetaLayout(ProgramLines):
    """The metadata of one sparse ``tcgen05.mma.sp`` form, evaluated."""

    id: str  # tcgen05.sp_meta.m128.f16, tcgen05.sp_meta.ws.m64.f16
    instruction: str  # tcgen05.mma.sp | tcgen05.mma.ws.sp
    kind: str
    m: int
    k: int
    rows: int  # stated
    chunks: int  # fields a row (stated)
    width: int  # bits a field (stated)
    columns: int  # columns the stated selector values take
    lanes: int  # lanes they take
    copies: int  # times each field is held (stated)
    sels: tuple[int, ...]  # the stated selector values
    # per selector value 0..3 (``Placements``: tuples only when read, equal to the tuple)
    every: tuple[tuple[int, Sequence[Field]], ...]
    span: Span
    lines: tuple[tuple[str, Span], ...]
    faults: tuple[Finding, ...] = ()
    # ``every``'s fields as one read-only int64 array (selector, field, 6), where the program
    # was evaluated over arrays (None where it was walked point by point): what the prover reads
    table: Any = field(default=None, compare=False, repr=False)

    def placed(self, sel: int) -> Sequence[Field]:
        for s, fs in self.every:
            if s == sel:
                return fs
        return ()

    def selector_id(self, sel: int) -> str:
        return f"{self.id}.sel{sel}"


def meta_layout(sec: MetaSection) -> MetaLayout:
    """One section's program evaluated at every field and every two-bit selector value."""
    prog = sec.program
    defs = {d.name: d for d in prog.definitions}
    lines = tuple((d.name, d.source.span(0)) for d in prog.definitions)
    lid = f"tcgen05.sp_meta.{'ws.' if sec.ws else ''}m{sec.m}.{sec.kind}"
    faults = program_faults(sec.decl, prog, lid, REQUIRED)
    every = at_each_value(lid, "sparse-metadata", sec.decl, faults,
                          lambda _v: _placements(defs, sec), 1)
    return MetaLayout(lid, "tcgen05.mma.ws.sp" if sec.ws else "tcgen05.mma.sp", sec.kind,
                      sec.m, sec.k, sec.rows, sec.chunks, sec.width, sec.columns, sec.lanes,
                      sec.copies, set_values(defs.get("sel")),
                      tuple(enumerate(every[0][1][0])) if every else (),
                      sec.decl.span(0), lines, tuple(faults), every[0][1][1] if every else None)


def _placements(defs: Mapping[str, S.Definition], sec: MetaSection) \
        -> tuple[list[Sequence[Field]], Any]:
    """Every field's (row, chunk, lane, column, bit, copy), row by row, at each selector
    value: the program evaluated once over every value and field (numpy), or value by value
    where arrays cannot say what the point-by-point walk says; and the same as one read-only
    array (None where walked)."""
    # the same program over the same fields places the same way: the catalog's 19 sections
    # state 6 programs, each evaluated once a process; the key is every definition as written
    # and the axes (as ``model.tc_scale._placements`` keys its tables)
    key = (tuple((d.name, d.kind, tuple(c.source.text for c in d.cases))
                 for d in defs.values()), sec.rows, sec.chunks, sec.copies)
    table = _TABLES.get(key)
    if table is None:
        try:
            grid = program_grid([definition_expr(defs[n]) for n in PLACE_NAMES],
                                (("sel", SELECTOR_VALUES), ("row", sec.rows),
                                 ("chunk", sec.chunks), ("copy", sec.copies)), {}, defs)
        except (Undefined, TooWide):
            return [_placed(defs, sec, s) for s in range(SELECTOR_VALUES)], None
        table = grid[:, [1, 2, 4, 5, 6, 3]].reshape(SELECTOR_VALUES, -1, 6)
        table.setflags(write=False)
        keep_bounded(_TABLES, key, table, 256)
    return [Placements[Field](t) for t in table], table


# (definitions as written, rows, chunks, copies) -> the read-only placement table
# ``_placements`` made of them
_TABLES: dict[Any, Any] = {}


def _placed(defs: Mapping[str, S.Definition], sec: MetaSection, s: int) -> tuple[Field, ...]:
    """Every field's (row, chunk, lane, column, bit, copy) at selector ``s``, row by row."""
    table = program_table([definition_expr(defs[n]) for n in PLACE_NAMES],
                          (("row", sec.rows), ("chunk", sec.chunks), ("copy", sec.copies)),
                          {"sel": s}, defs)
    return tuple((r, c, lane, col, bit, copy) for r, c, copy, lane, col, bit in table)


def meta_layouts(sections: tuple[MetaSection, ...]) -> tuple[MetaLayout, ...]:
    return tuple(meta_layout(s) for s in sections)
