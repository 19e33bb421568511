"""The model stage's values: ``Layout`` (one operand, one shape, one type group) and ``Model``.

A ``Layout``'s formulas are SymPy expressions over ``lane`` and ``i`` (and ``selector`` for sparse
metadata).  For the spec's m16n8k16 ``.f16`` A, ``row`` is two cases, ``floor(lane/4)`` if ``i < 4``
and ``floor(lane/4) + 8`` if ``i >= 4``; lane 13, element a5 is then row 11 -- the cell the
spec's figure labels ``T13:a5``.  Besides the formulas a layout carries the fragment table's
facts, where it came from (``text``, ``reference``, ``catalog``, ``figure-only``) and the source
line of everything, so the prove stage can place any disagreement.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from functools import cached_property, lru_cache
from typing import Any

import sympy as sp

from ..base.hashes import formula_hash
from ..base.ids import LayoutId
from ..base.source import Finding, SourceText, Span
from ..base.variants import (
    ELEMENT_LETTER,
    MOVES,
    REGISTER_BITS,
    REPLICATED,
    SPARSITY,
    TMEM_FAMILIES,
    VARIANTS,
    Shape,
)
from ..parse import syntax as S
from ..text.blocks import Document
from .algebra import LANE, compile_expr, show_cond, show_expr
from .sreprs import srepr_of, tree

LANES = 32
WARPGROUP = 4  # warps of a warpgroup: a block that names %warpid spans 4 x 32 threads




# The largest tile an operand may have (the PTX ISA's largest is 16 x 256, m16n8k256 A;
# a warpgroup accumulator is 64 x 256): every obligation enumerates it, so a typo such as
# m99999999n8k16 must not be taken as is.
MAX_TILE_CELLS = 16384
# Instruction variants whose warp computes several independent products at once, keyed by
# (instruction, shape, A type): (name, groups, the group of a lane).  m8n8k4 with .f16 runs
# four 8x8x4 products, one per quad-pair: lanes 4q..4q+3 and 16+4q..16+4q+3 form product q,
# so the group of a lane is (lane >> 2) mod 4 (lanes 0 and 16 -> 0, lanes 13 and 29 -> 3).
# Every operand of such a variant (A, B and both accumulator types) is replicated: each
# lane holds 8x4x4 / 32 = 4 elements of A, and injectivity and coverage hold per group.
REPLICATION: dict[tuple[str, str, str], tuple[str, int, Any]] = {
    ("mma", "m8n8k4", "f16"): ("quad-pair", REPLICATED[("mma", "m8n8k4", "f16")],
                               sp.Mod(sp.floor(LANE / 4), 4)),
}


# ---- values ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    value: Any  # SymPy integer expression
    cond: Any  # SymPy boolean; sp.true when the case has no condition
    otherwise: bool
    source: SourceText
    guard_text: str = ""
    # every element index a bound of the condition names, with its place in ``source`` and
    # the bound as written: ``i < 8`` names 7, ``i <= 4`` 4, ``i > 3`` 4, ``i = {0,..,4}`` 4
    named: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Formula:
    name: str
    cases: tuple[Case, ...]
    source: SourceText

    def piecewise(self) -> Any:
        """First-match reading of the cases; ``otherwise`` is the remaining elements."""
        if len(self.cases) == 1 and self.cases[0].cond is sp.true:
            return self.cases[0].value
        args = []
        for c in self.cases:
            args.append((c.value, sp.true if c.otherwise else c.cond))
        return sp.Piecewise(*args, evaluate=False)

    def text(self) -> str:
        if len(self.cases) == 1 and self.cases[0].cond is sp.true:
            return f"{self.name} = {show_expr(self.cases[0].value)}"
        parts = []
        for c in self.cases:
            cond = "otherwise" if c.otherwise else show_cond(c.cond)
            parts.append(f"{show_expr(c.value)} if {cond}")
        return f"{self.name} = " + "; ".join(parts)


@dataclass(frozen=True)
class MetadataFacts:
    """The metadata operand: what the prose says, and the layout the catalog states."""

    desc: S.MetadataDesc | None
    desc_src: SourceText | None
    selectors: tuple[int, ...]
    selectors_src: SourceText | None
    holder: Any  # SymPy boolean over (lane, selector)
    holder_src: SourceText | None


@dataclass(frozen=True)
class Layout:
    id: str
    document: str
    section: str  # section number, e.g. "9.7.14.5.9"
    title: str
    span: Span
    instruction: str  # "mma" | "mma.sp" | "wgmma" | "wgmma.sp" | a matrix move
    shape: Shape
    operand: str  # "A" | "B" | "C/D" | "metadata"
    types: tuple[str, ...]
    source: str  # "text" | "reference" | "catalog" | "figure-only"
    formulas: tuple[Formula, ...] = ()
    table: S.TableFacts | None = None
    metadata: MetadataFacts | None = None
    reference_of: str = ""  # id of the layout a "same as" sentence resolved to
    reference_src: SourceText | None = None
    # the "same as" sentence as written, read once by the parse stage (its target's format types
    # are checked by the prove stage)
    reference: S.ReferenceSentence | None = None
    figures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    label_types: tuple[str, ...] = ()
    title_types: tuple[str, ...] = ()
    lanes: int = LANES
    helpers: tuple[Formula, ...] = ()  # conditional definitions the formulas use
    # "row" | "col" where the layout depends on the instruction's .row / .col qualifier for
    # this operand (m8n8k4 with .f16: A and B), "" elsewhere.  The id ends in it.
    arrangement: str = ""
    # a formula line of the block did not parse (reported once, as that line's error): the
    # map is partial, so no formula obligation is decided and no hardware verdict is drawn
    incomplete: bool = False
    # the shape as the instruction spells it where that is not str(shape): a move's variant
    # (m8n8.x4.trans, whose tile is the stacked matrices) or wgmma A's m64nNk16
    shape_name: str = ""
    # the legal N of a layout stated once for every N (wgmma's accumulator D, ``m64nNk16``):
    # the shape is at the largest; the layout at N holds the first N * 64 / 128 elements
    # of each thread (``at``)
    n_values: tuple[int, ...] = ()

    @property
    def shape_text(self) -> str:
        return self.shape_name or str(self.shape)

    def at(self, n: int) -> Layout:
        """The layout at one N of ``n_values``: the shape at N, the table row at N (``N/2``
        registers made 32 at N = 64); its map is the first ``elements`` of each thread's.
        Made once per layout object and N (the obligations and the hardware verdict each
        ask for every N), kept in the object's ``__dict__`` as ``map_of`` keeps its map."""
        memo = self.__dict__.setdefault("_ptxlayout_at", {})
        hit = memo.get(n)
        if hit is None:
            table = self.table.at(n) if self.table is not None else None
            shape = replace(self.shape, n=n)
            lid = memo.get("id")
            if lid is None:
                lid = memo["id"] = LayoutId.parse(self.id)  # parsed once, not once an N
            hit = memo[n] = self._with(
                shape=shape, table=table, n_values=(), shape_name="",
                id=str(replace(lid, shape=str(shape))) if lid.shape == self.shape_text
                else self.id)
        return hit  # type: ignore[no-any-return]

    def _with(self, **changes: Any) -> Layout:
        """``dataclasses.replace(self, **changes)`` without its keyword call through
        ``__init__`` and a frozen ``__setattr__`` per field (``at`` makes some 1,100 a catalog
        run): the same fields, none of the memos this object keeps in its ``__dict__``.  The
        class has no ``__post_init__`` and every field is an ``__init__`` argument, so the
        object is the one ``replace`` makes (tests/test_model_layout_at.py)."""
        new = object.__new__(Layout)
        mine = self.__dict__
        new.__dict__.update({name: mine[name] for name in _LAYOUT_FIELDS}, **changes)
        return new

    # -- shape facts
    @property
    def sparse(self) -> bool:
        """A structured-sparse instruction: ``mma.sp`` or the warpgroup's ``wgmma.sp``."""
        return self.instruction in ("mma.sp", "wgmma.sp")

    @property
    def sparse_a(self) -> bool:
        return self.sparse and self.operand == "A"

    @property
    def tile(self) -> tuple[int, int]:
        return self.shape.tile("A" if self.operand == "metadata" else self.operand)

    @property
    def groups(self) -> tuple[str, int, Any] | None:
        """The replication (REPLICATION) of the instruction variants this layout serves.

        A B or C/D layout is named by its own types; the variants table says which A types
        they go with (m8n8k4 .f32 accumulators belong to the .f16 variant).  Once per layout
        object, kept in its ``__dict__`` as ``formula_hash`` is (the prover asks it some
        4,800 times a catalog run, ``elements`` most)."""
        memo = self.__dict__
        if "_ptxlayout_groups" not in memo:
            memo["_ptxlayout_groups"] = self._groups()
        return memo["_ptxlayout_groups"]  # type: ignore[no-any-return]

    def _groups(self) -> tuple[str, int, Any] | None:
        shape = str(self.shape)
        for t in _variant_a_types(self.instruction, shape, self.operand, self.types):
            rep = REPLICATION.get((self.instruction, shape, t))
            if rep is not None:
                return rep
        return None

    def lane_group(self) -> Callable[[int], int] | None:
        """lane -> the number of its product, for a replicated layout (else None)."""
        rep = self.groups
        if rep is None:
            return None
        f = compile_expr(rep[2])
        return lambda t: int(f(t, 0, 0))

    @property
    def elements(self) -> int:
        """Elements each lane holds, as the tile demands."""
        r, c = self.tile
        rep = self.groups
        cells = r * c * (rep[1] if rep else 1)
        if self.sparse_a:
            cells //= 2
        if self.operand == "metadata":
            return self.metadata_fields
        return max(1, cells // self.lanes)

    @property
    def metadata_fields(self) -> int:
        md = self.metadata
        if md is None or md.desc is None:
            return 0
        sparsity = self.sparsity
        if sparsity is None:
            return md.desc.fields
        # fields in hardware index units: a tf32 "4-bit vector" is two 2-bit indices.  A
        # register holds no more than its width: "16 4-bit vectors" in a .b32 is the register
        # budget's one finding, and the map has the 32 bits' 16 indices
        bits = min(md.desc.fields * md.desc.field_bits,
                   REGISTER_BITS.get(md.desc.register_kind, 32))
        return bits // sparsity.index_bits

    @property
    def sparsity(self) -> Any:
        if not self.sparse:
            return None
        for t in self.types:
            if t in SPARSITY:
                return SPARSITY[t]
        return None

    def formula(self, name: str) -> Formula | None:
        for f in self.formulas + self.helpers:
            if f.name == name:
                return f
        return None

    @property
    def letter(self) -> str:
        """The elements' letter: ``a0``, ``b0``, ``c0``, ``m0``; ``d0`` for wgmma's D;
        ``r0`` for tcgen05.ld/st's registers."""
        if self.instruction in TMEM_FAMILIES:
            return "r"
        if self.operand == "C/D" and (self.instruction.startswith("wgmma")
                                      or self.instruction in MOVES):
            return "d"
        return ELEMENT_LETTER.get(self.operand, "a")

    @cached_property
    def short_id(self) -> str:
        """The id without its document (``LayoutId.short``): ``mma.m16n8k16.A.f16-bf16``; once
        a layout object (a function of its ``id``; ``replace`` makes a new object)."""
        return LayoutId.parse(self.id).short

    def map_key(self) -> tuple[Any, ...]:
        """An in-process key of the formulas (SymPy values hash fast; not stable across
        processes -- use ``formula_hash`` for anything written down)."""
        return (self.instruction, str(self.shape), self.operand, self.lanes,
                tuple((f.name, tuple((c.value, c.cond, c.otherwise) for c in f.cases))
                      for f in self.formulas + self.helpers),
                (self.metadata.selectors, self.metadata.holder)
                if self.metadata is not None else None)

    def formula_hash(self) -> str:
        """``base.hashes.formula_hash`` of the formulas' normalized form (changes when the
        text's math changes; the ledger's ``"formula"``); once per layout object."""
        hit = self.__dict__.get("_ptxlayout_formula_hash")
        if hit is None:
            hit = self.__dict__["_ptxlayout_formula_hash"] = self._formula_hash()
        return hit  # type: ignore[no-any-return]

    def proof_key(self) -> str:
        """A SHA-256 of what ``formula_hash`` hashes, each expression written as its tree
        (``expression_key``) rather than by SymPy's printer: the proof cache's keys
        (``prove/cache.entry_key``), which a first run writes some 200 of, without printing a
        formula; once per layout object.  The same expression is the same tree (a SymPy
        expression is its class and its arguments), and two formulas that differ in any
        class, argument, symbol or assumption differ in it."""
        hit = self.__dict__.get("_ptxlayout_proof_key")
        if hit is None:
            what = [f"{self.instruction}|{self.shape}|{self.operand}|{self.lanes}",
                    [[f.name, [[expression_key(c.value),
                                None if c.otherwise else expression_key(c.cond)]
                               for c in f.cases]] for f in self.formulas + self.helpers],
                    [repr(self.metadata.selectors), expression_key(self.metadata.holder)]
                    if self.metadata is not None else None]
            hit = self.__dict__["_ptxlayout_proof_key"] = hashlib.sha256(
                json.dumps(what).encode("utf-8")).hexdigest()
        return hit  # type: ignore[no-any-return]

    def _formula_hash(self) -> str:
        return formula_hash(
            f"{self.instruction}|{self.shape}|{self.operand}|{self.lanes}",
            ((f.name, ((srepr(c.value), "otherwise" if c.otherwise else srepr(c.cond))
                       for c in f.cases)) for f in self.formulas + self.helpers),
            (repr(self.metadata.selectors), srepr(self.metadata.holder))
            if self.metadata is not None else None)


_LAYOUT_FIELDS = tuple(f.name for f in fields(Layout))


@lru_cache(maxsize=8192)
def srepr(e: Any) -> str:
    """SymPy's ``srepr``, once per distinct expression (equal SymPy expressions print alike;
    the catalog's 135 layouts state 94 distinct case values and conditions 764 times); the
    prover's run takes it from the kept texts (``model/sreprs.py``)."""
    return srepr_of(e)


@lru_cache(maxsize=8192, typed=True)  # (typed: ``True == Integer(1)``, not the same key)
def expression_key(e: Any) -> str | tuple[str, str]:
    """An expression as a key: a SHA-256 of its tree (``sreprs.tree``: each node its class
    and its arguments' trees, each atom its ``srepr``), or -- where it is no SymPy value --
    ``("srepr", srepr(e))``; once per distinct expression (the catalog's layouts state some
    hundred distinct case values and conditions, each many times)."""
    t = tree(e)
    if t is None:
        return "srepr", srepr(e)
    return hashlib.sha256(t.encode("utf-8")).hexdigest()


def _variant_a_types(instruction: str, shape: str, operand: str,
                     types: Iterable[str]) -> tuple[str, ...]:
    """The A types of the variants in which an operand of these types takes part."""
    return _variant_a_types_of(instruction, shape, operand, tuple(types))


@lru_cache(maxsize=4096)
def _variant_a_types_of(instruction: str, shape: str, operand: str,
                        ts: tuple[str, ...]) -> tuple[str, ...]:
    if operand in ("A", "metadata"):
        return ts
    out: list[str] = []
    for v in VARIANTS:
        if v.instruction != instruction or v.shape != shape:
            continue
        mine = (v.b,) if operand == "B" else (v.c, v.d)
        if set(mine) & set(ts) and v.a not in out:
            out.append(v.a)
    return tuple(out) or ts


@dataclass(frozen=True)
class Model:
    layouts: tuple[Layout, ...]
    findings: tuple[Finding, ...]
    documents: tuple[Document, ...] = ()
