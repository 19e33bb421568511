"""``tcgen05.cp``: which (TMEM lane, column) each 32-bit piece of the shared-memory source
lands on, for every place the copy multicasts it to.

The source is ``rows`` rows of 32-bit *pieces* (the matrix the descriptor addresses); a form's
program says where copy ``copy`` of piece ``piece`` of row ``row`` lands.  For
``.64x128b.warpx2::01_23`` (``lane = row % 32 + 64 * (row / 32) + 32 * copy``, ``column =
piece``)::

    (row, piece, copy)  ->  (lane, column)      warp (lane / 32)
      (5, 2, 0)              (5, 2)              0
      (5, 2, 1)              (37, 2)             1   -- warps 0 and 1, the pair 01_23 names
      (40, 0, 0)             (72, 0)             2
      (40, 0, 1)             (104, 0)            3

so the 64 rows x 4 pieces fill 128 lanes x 4 columns, each word once.  A ``CopyLayout`` keeps
every such landing, for each copy the program states; the prove stage checks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..base.source import Finding, Span
from ..parse import syntax as S
from ..parse.tc_copy import CopySection, FormatSection
from .block_scale import (
    ProgramLines,
    TooWide,
    Undefined,
    at_each_value,
    definition_expr,
    program_faults,
    program_grid,
    program_value,
    set_values,
)

PLACE_NAMES = ("lane", "column")
REQUIRED = ("copy", "lane", "column")

Landing = tuple[int, int, int, int, int]  # (row, piece, copy) -> (lane, column)


@dataclass(frozen=True)
class CopyLayout(ProgramLines):
    """One tcgen05.cp form, evaluated at every piece and every stated copy."""

    id: str  # tcgen05.cp.64x128b.warpx2::02_13
    shape: str
    multicast: str
    rows: int  # stated
    pieces: int  # 32-bit pieces a row (stated)
    width: int  # bits a piece (stated)
    places: int  # places a piece is multicast to (stated)
    columns: int  # columns the copy fills (stated)
    lanes: int  # lanes it fills (stated)
    copies: tuple[int, ...]  # the program's copy values
    landings: tuple[Landing, ...]
    span: Span
    lines: tuple[tuple[str, Span], ...]
    faults: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class CopyFormat:
    """One decompressing source format of tcgen05.cp (``FormatSection``), as a value."""

    id: str  # tcgen05.cp.b8x16.b6x16_p32
    dst: str
    src: str
    count: int
    bits: int
    padding: int
    unit: int
    out_count: int
    out_bits: int
    span: Span


def copy_layout(sec: CopySection) -> CopyLayout:
    """One section's program evaluated at every (row, piece) and every stated copy."""
    prog = sec.program
    defs = {d.name: d for d in prog.definitions}
    lines = tuple((d.name, d.source.span(0)) for d in prog.definitions)
    lid = ".".join(p for p in ("tcgen05.cp", sec.shape, sec.multicast) if p)
    faults = program_faults(sec.decl, prog, lid, REQUIRED)
    copies = set_values(defs.get("copy"))
    every = at_each_value(lid, "tensor-copy", sec.decl, faults,
                          lambda _v: _landed(defs, sec, copies), 1)
    landings = every[0][1] if every else ()
    return CopyLayout(lid, sec.shape, sec.multicast, sec.rows, sec.pieces, sec.width,
                      sec.places, sec.columns, sec.lanes, copies, landings,
                      sec.decl.span(0), lines, tuple(faults))


def _landed(defs: Mapping[str, S.Definition], sec: CopySection,
            copies: tuple[int, ...]) -> tuple[Landing, ...]:
    """Every (row, piece, copy, lane, column), row by row: the program evaluated once over
    every point (numpy, ``program_grid``) where the copies are 0, 1, ..., else, or where
    arrays cannot say what the point-by-point walk says, walked point by point."""
    lane_e, col_e = (definition_expr(defs[n]) for n in PLACE_NAMES)
    if copies == tuple(range(len(copies))):
        try:
            grid = program_grid([lane_e, col_e], (("row", sec.rows), ("piece", sec.pieces),
                                                  ("copy", len(copies))), {}, defs)
            return tuple(map(tuple, grid.tolist()))
        except (Undefined, TooWide):
            pass
    out: list[Landing] = []
    for r in range(sec.rows):
        for p in range(sec.pieces):
            for c in copies:
                env = {"row": r, "piece": p, "copy": c}
                out.append((r, p, c, program_value(lane_e, env, defs),
                            program_value(col_e, env, defs)))
    return tuple(out)


def copy_layouts(sections: tuple[CopySection, ...]) -> tuple[CopyLayout, ...]:
    return tuple(copy_layout(s) for s in sections)


def copy_format(sec: FormatSection) -> CopyFormat:
    return CopyFormat(f"tcgen05.cp.{sec.dst}.{sec.src}", sec.dst, sec.src, sec.count, sec.bits,
                      sec.padding, sec.unit, sec.out_count, sec.out_bits, sec.decl.span(0))
