"""Block-scale factors of ``tcgen05.mma`` in tensor memory: which (lane, column, byte) holds
which scale factor, for every value of the scale factor ID.

A catalog program (``formal.parse.block_scale.TcScaleOperand``) says, for a factor of scale_A
at (row, block) and a selector ``sf_id``, the lane of a 32-lane partition, the column counted
from the operand's address and the byte of that column's 32-bit word.  For
``.scale_vec::2X`` (scale_A is 128 x 2: ``lane = row % 32``, ``column = row / 32``,
``byte = sf_id + block``) and ``sf_id = 2``::

    (row, block)  ->  (lane, column, byte)
      (0, 0)             (0, 0, 2)
      (0, 1)             (0, 0, 3)
      (33, 1)            (1, 1, 3)

so the factors of rows 0, 32, 64 and 96 share lane 0, one column each, and ``sf_id`` picks
the half word.  A form issued by a pair of CTAs (``.cta_group::2``) states ``cta`` too, the
CTA of the pair whose tensor memory holds the factor (M = 256: ``cta = row / 128``, and row
160 sits in CTA 1, lane 0, column 1); a single CTA's placements are in CTA 0.  A program may
state ``half`` too, the 64-lane half of the tensor memory (partitions 0-1 or 2-3) whose two
partitions hold the factor, where the data path splits D's columns between the halves (M =
128 with a pair, Layout B: ``half = col / 128`` at N = 256, so column 200 of scale_B sits in
lane 8 of partitions 2 and 3 only); without it a factor is copied into all four partitions.

A ``TcScaleLayout`` keeps such a table for each of the four values a two-bit
ID can take, stated legal or not, so that the prove stage can say which values the layout
admits.  Cells are (row, column) of the scale matrix as the spec states it: scale_A is
M x SFA_N (row, block), scale_B is SFB_M x N (block, col).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.memo import keep_bounded
from ..base.source import Finding, Span
from ..parse import syntax as S
from ..parse.block_scale import ScaleDocument, TcScaleOperand, TcScaleSection
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

SF_ID_VALUES = 4  # the scale factor ID is a two-bit field of the instruction descriptor
WORD_BYTES = 4  # a tensor-memory column is one 32-bit word a lane
PLACE_NAMES = ("lane", "column", "byte")

# (row, col) of the scale matrix -> lane, column, byte; then the CTA of the pair holding it
# and the half of the tensor memory (0 where the program states none), appended by
# tc_scale_layout
Placement = tuple[int, ...]


@dataclass(frozen=True)
class TcScaleLayout(ProgramLines):
    """One scale operand of one legal block-scaled ``tcgen05.mma`` form, evaluated."""

    id: str  # tcgen05.block_scale.m128n256k64.mxf4.scale_vec::2X.ue8m0.scale_A
    kind: str
    form: str  # scale_vec::2X | block32 | block16 (as the catalog writes it)
    vec: int  # factors a row of A (a column of B) has
    stype: str
    m: int
    n: int
    k: int
    operand: str  # "A" | "B"
    tile: tuple[int, int]  # as stated: (M, SFA_N) or (SFB_M, N)
    columns: int  # tensor-memory columns the operand takes (stated)
    lanes: int  # lanes of a partition (stated)
    aligned: int  # bytes a selector's byte offset is aligned to (stated)
    sf_ids: tuple[int, ...]  # the stated legal values
    # per ID value 0..3 (``Placements``: tuples only when read, equal to the tuple)
    every: tuple[tuple[int, Sequence[Placement]], ...]
    span: Span
    lines: tuple[tuple[str, Span], ...]
    faults: tuple[Finding, ...] = ()
    cta_group: int = 1  # CTAs issuing the mma (.cta_group::2: a pair, each with its own TMEM)
    sparse: bool = False  # a form of tcgen05.mma.sp (its own data path at M = 128 with a pair)
    # ``every``'s placements as one read-only int64 array (ID, factor, 7), where the program
    # was evaluated over arrays (None where it was walked point by point): what the prover reads
    table: Any = field(default=None, compare=False, repr=False)

    def states(self, name: str) -> bool:
        """Does the program define ``name`` (``cta``, ``half``)?"""
        return any(n == name for n, _sp in self.lines)

    def placed(self, sf_id: int) -> Sequence[Placement]:
        for s, ps in self.every:
            if s == sf_id:
                return ps
        return ()

    @property
    def shape(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"

    @property
    def instruction(self) -> str:
        sp = ".sp" if self.sparse else ""
        return (f"tcgen05.mma{sp}.cta_group::{self.cta_group}.kind::{self.kind}.block_scale"
                f".{self.form}")


TC_REQUIRED = {"A": ("sf_id", "lane", "column", "byte"), "B": ("sf_id", "lane", "column", "byte")}


def tc_scale_layout(sec: TcScaleSection, op: TcScaleOperand) -> TcScaleLayout:
    """One operand's program evaluated at every factor and every two-bit ID value."""
    prog = op.program
    defs = {d.name: d for d in prog.definitions}
    lines = tuple((d.name, d.source.span(0)) for d in prog.definitions)
    pair = f".cta_group::{sec.cta_group}" if sec.cta_group > 1 else ""
    pair += ".sp" if sec.sparse else ""
    lid = (f"tcgen05.block_scale.m{sec.m}n{sec.n}k{sec.k}.{sec.kind}.{sec.form}.{sec.stype}"
           f"{pair}.scale_{op.operand}")
    # a pair splits A's rows between the CTAs (each holds the rows of D it computes), while
    # each CTA holds all of scale_B: a pair's scale_A states its CTA
    needed = TC_REQUIRED[op.operand] + (("cta",) if sec.cta_group > 1 and op.operand == "A"
                                        else ())
    faults = program_faults(op.source, prog, lid, needed)
    every = at_each_value(lid, "block-scale", op.source, faults,
                          lambda _v: _placements(defs, op), 1)
    return TcScaleLayout(lid, sec.kind, sec.form, sec.vec, sec.stype, sec.m, sec.n, sec.k,
                         op.operand, (op.rows, op.cols), op.columns, op.lanes, op.aligned,
                         set_values(defs.get("sf_id")),
                         tuple(enumerate(every[0][1][0])) if every else (), op.source.span(0),
                         lines, tuple(faults), sec.cta_group, sec.sparse,
                         every[0][1][1] if every else None)


def _placements(defs: Mapping[str, S.Definition], op: TcScaleOperand) \
        -> tuple[list[Sequence[Placement]], Any]:
    """Every factor's (row, col, lane, column, byte, cta, half), row by row, at each ID value:
    each place's program evaluated once over every ID and the whole matrix (numpy), or ID by
    ID, place by place, where arrays cannot say what the point-by-point walk says; and the
    same as one read-only array (None where walked)."""
    import numpy as np
    # the same program over the same matrix places the same way: the catalog's 82 operands
    # state 30 programs (the forms of a data path at every K share theirs), each evaluated once
    # a process; the key is every definition as written and the axes
    key = (tuple((d.name, d.kind, tuple(c.source.text for c in d.cases))
                 for d in defs.values()), _axes(op))
    table = _TABLES.get(key)
    if table is None:
        stated = [n for n in ("cta", "half") if n in defs]
        try:
            exprs = [definition_expr(defs[n]) for n in (*PLACE_NAMES, *stated)]
            grid = program_grid(exprs, (("sf_id", SF_ID_VALUES), *_axes(op)), {}, defs)
        except (Undefined, TooWide):
            return [_in_cta(defs, op, s, _placed(defs, op, s))
                    for s in range(SF_ID_VALUES)], None
        zero = np.zeros(len(grid), dtype=np.int64)
        extra = {n: grid[:, 6 + k] for k, n in enumerate(stated)}
        table = np.stack([*(grid[:, k] for k in range(1, 6)), extra.get("cta", zero),
                          extra.get("half", zero)], axis=-1).reshape(SF_ID_VALUES, -1, 7)
        table.setflags(write=False)
        keep_bounded(_TABLES, key, table, 256)
    return [Placements[Placement](t) for t in table], table


# (definitions as written, axes) -> the read-only placement table ``_placements`` made of them
_TABLES: dict[Any, Any] = {}


def _in_cta(defs: Mapping[str, S.Definition], op: TcScaleOperand, s: int,
            placed: tuple[Placement, ...]) -> tuple[Placement, ...]:
    """Each placement with the CTA of the pair and the half of the tensor memory that hold
    it: the program's ``cta`` and ``half`` where it states them, else 0 (both evaluated over
    the whole matrix, as ``_placed`` does)."""
    stated = [n for n in ("cta", "half") if n in defs]
    if not stated:
        return tuple((*p, 0, 0) for p in placed)
    table = program_table([definition_expr(defs[n]) for n in stated], _axes(op),
                          {"sf_id": s}, defs)
    if len(stated) == 2:
        return tuple((*p, t[2], t[3]) for p, t in zip(placed, table, strict=True))
    if stated == ["cta"]:
        return tuple((*p, t[2], 0) for p, t in zip(placed, table, strict=True))
    return tuple((*p, 0, t[2]) for p, t in zip(placed, table, strict=True))


def _axes(op: TcScaleOperand) -> tuple[tuple[str, int], tuple[str, int]]:
    """The matrix's rows and columns, named as the program names them: (row, block) of
    scale_A, (block, col) of scale_B."""
    if op.operand == "A":
        return (("row", op.rows), ("block", op.cols))
    return (("block", op.rows), ("col", op.cols))


def _placed(defs: Mapping[str, S.Definition], op: TcScaleOperand, s: int) \
        -> tuple[Placement, ...]:
    """Every factor's (row, col, lane, column, byte) at ID ``s``, row by row: each place's
    program evaluated once over the whole matrix (``program_table``)."""
    return tuple(program_table([definition_expr(defs[n]) for n in PLACE_NAMES], _axes(op),
                               {"sf_id": s}, defs))


def tc_scale_layouts(doc: ScaleDocument) -> tuple[TcScaleLayout, ...]:
    """Every tcgen05 scale operand of every tcgen05 section of a document."""
    return tuple(tc_scale_layout(sec, op) for sec in doc.tc_sections for op in sec.operands)
