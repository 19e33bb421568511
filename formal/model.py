"""Model stage: sections -> ``Layout`` values (SymPy maps from (lane, element) to a tile cell).

A ``Layout`` is one operand of one instruction shape for one group of element types, as one
document states it.  Its formulas are SymPy expressions over the symbols ``lane`` and ``i``
(and ``selector`` for sparse metadata), built from the parse tree -- never from text.  For
the spec's

    groupID = %laneid >> 2            row = groupID        for ai where i < 4
    threadID_in_group = %laneid % 4         groupID + 8    for ai where i >= 4
                                      col = (threadID_in_group * 4) + (i & 0x3)

the model holds ``row`` as two cases, ``floor(lane/4)`` if ``i < 4`` and ``floor(lane/4) + 8``
if ``i >= 4``, and ``col = 4*Mod(lane, 4) + BitAnd(i, 3)``.  Lane 13, element a5 is then
row 11, column 5 -- the cell the spec's figure shows as ``T13:a5``.

Besides the formulas a layout carries what the fragment table says (register count and
kind, elements per register, the element list), where it came from (``text``, ``reference``
to another section, ``catalog`` or ``figure-only``) and the source line of everything, so
the prove stage can turn any disagreement into a finding at the right place.

``build`` takes every document given and the embedded catalog together, because a section
may say "the same as in case of Matrix Fragments for mma.m16n8k16 with floating point type"
about a section of another document.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from . import syntax as S
from .algebra import LANE, SEL, BitAnd, BitOr, BitXor, I, compile_expr, show, show_cond
from .ingest import Document, Section
from .parse import ParsedBlock, ParsedDocument, ParsedPart, ParsedSection, parse_document
from .source import Finding, SourceText, Span, error, warning
from .variants import (
    ELEMENT_LETTER,
    FLOAT_TYPES,
    INTEGER_TYPES,
    REPLICATED,
    SPARSITY,
    VARIANTS,
    Shape,
    legal_types,
)

LANES = 32
WARPGROUP = 4  # warps of a warpgroup: a block that names %warpid spans 4 x 32 threads


def _names_warpid(program: S.Program) -> bool:
    """Whether any formula of the block uses ``%warpid`` (a warpgroup-wide layout)."""
    stack: list[Any] = []
    for d in program.definitions:
        for c in d.cases:
            stack.extend(x for x in (c.expr, c.cond, c.low, c.high) if x is not None)
            if c.guard is not None and c.guard.cond is not None:
                stack.append(c.guard.cond)
    while stack:
        x = stack.pop()
        if isinstance(x, S.Special) and x.name == "%warpid":
            return True
        if isinstance(x, S.BinOp):
            stack.extend((x.left, x.right))
        elif isinstance(x, S.Neg):
            stack.append(x.operand)
        elif isinstance(x, S.Compare):
            stack.extend(x.operands)
        elif isinstance(x, S.InSet):
            stack.append(x.expr)
        elif isinstance(x, S.BoolOp):
            stack.extend(x.parts)
    return False


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
    max_listed: int = -1  # the largest element index the condition lists explicitly


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
            return f"{self.name} = {show(self.cases[0].value)}"
        parts = []
        for c in self.cases:
            cond = "otherwise" if c.otherwise else show_cond(c.cond)
            parts.append(f"{show(c.value)} if {cond}")
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
    instruction: str  # "mma" | "mma.sp"
    shape: Shape
    operand: str  # "A" | "B" | "C/D" | "metadata"
    types: tuple[str, ...]
    source: str  # "text" | "reference" | "catalog" | "figure-only"
    formulas: tuple[Formula, ...] = ()
    table: S.TableFacts | None = None
    metadata: MetadataFacts | None = None
    reference_of: str = ""  # id of the layout a "same as" sentence resolved to
    reference_src: SourceText | None = None
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

    # -- shape facts
    @property
    def sparse_a(self) -> bool:
        return self.instruction == "mma.sp" and self.operand == "A"

    @property
    def tile(self) -> tuple[int, int]:
        return self.shape.tile("A" if self.operand == "metadata" else self.operand)

    @property
    def groups(self) -> tuple[str, int, Any] | None:
        """The replication (REPLICATION) of the instruction variants this layout serves.

        A B or C/D layout is named by its own types; the variants table says which A types
        they go with (m8n8k4 .f32 accumulators belong to the .f16 variant)."""
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
        cells = r * c * (self.groups[1] if self.groups else 1)
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
        # fields in hardware index units: a tf32 "4-bit vector" is two 2-bit indices
        return md.desc.fields * md.desc.field_bits // sparsity.index_bits

    @property
    def sparsity(self) -> Any:
        if self.instruction != "mma.sp":
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
    def short_id(self) -> str:
        return self.id.split(":", 1)[-1]

    def map_key(self) -> tuple[Any, ...]:
        """An in-process key of the formulas (SymPy values hash fast; not stable across
        processes -- use ``map_digest`` for anything written down)."""
        return (self.instruction, str(self.shape), self.operand, self.lanes,
                tuple((f.name, tuple((c.value, c.cond, c.otherwise) for c in f.cases))
                      for f in self.formulas + self.helpers),
                (self.metadata.selectors, self.metadata.holder)
                if self.metadata is not None else None)

    def map_digest(self) -> str:
        """A hash of the formulas' normalized form (changes when the text's math changes)."""
        h = hashlib.sha256()
        h.update(f"{self.instruction}|{self.shape}|{self.operand}|{self.lanes}".encode())
        for f in self.formulas + self.helpers:
            h.update(f.name.encode())
            for c in f.cases:
                h.update(sp.srepr(c.value).encode())
                h.update(b"otherwise" if c.otherwise else sp.srepr(c.cond).encode())
        if self.metadata is not None:
            h.update(repr(self.metadata.selectors).encode())
            h.update(sp.srepr(self.metadata.holder).encode())
        return h.hexdigest()[:16]


def _variant_a_types(instruction: str, shape: str, operand: str,
                     types: Iterable[str]) -> tuple[str, ...]:
    """The A types of the variants in which an operand of these types takes part."""
    ts = tuple(types)
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


# ---- expressions from the parse tree ------------------------------------------------------------


class _Builder:
    """AST expressions -> SymPy, with the block's definitions substituted."""

    def __init__(self, program: S.Program, letter: str, lanes: int, sparse_meta: bool = False):
        self.program = program
        self.letter = letter
        self.lanes = lanes
        self.findings: list[Finding] = []
        self.cache: dict[str, Any] = {}
        self.active: set[str] = set()
        self.allow = {"i"} | ({"selector"} if sparse_meta else set())
        self.helpers: dict[str, Formula] = {}  # definitions substituted into the targets

    def expr(self, e: S.Expr, src: SourceText) -> Any:
        try:
            return self._expr(e, src)
        except _Bad as exc:
            if exc.src is None:
                exc.src = src
            raise

    def _expr(self, e: S.Expr, src: SourceText) -> Any:
        if isinstance(e, S.Num):
            return sp.Integer(e.value)
        if isinstance(e, S.Special):
            if e.name == "%laneid":
                return LANE if self.lanes == LANES else sp.Mod(LANE, LANES)
            if e.name == "%warpid":
                return sp.floor(LANE / LANES)
            raise _Bad(e.pos, f"unknown special register {e.name}")
        if isinstance(e, S.Name):
            return self.name(e, src)
        if isinstance(e, S.Neg):
            return -self.expr(e.operand, src)
        if isinstance(e, S.BinOp):
            a = self.expr(e.left, src)
            b = self.expr(e.right, src)
            return self.binop(e, a, b)
        raise _Bad(0, f"unsupported expression {type(e).__name__}")

    def binop(self, e: S.BinOp, a: Any, b: Any) -> Any:
        op = e.op
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("%", "/"):
            if not b.is_Integer:
                raise _Bad(_pos(e.right), f"'{op}' needs a constant right operand")
            if int(b) == 0:
                raise _Bad(_pos(e.right), f"'{op} 0': division by zero")
            if op == "%":
                return sp.Mod(a, b) if int(b) > 0 else -sp.Mod(-a, -b)
            return sp.floor(a / b)
        if op in (">>", "<<"):
            if not b.is_Integer:
                raise _Bad(_pos(e.right), f"'{op}' needs a constant shift amount")
            k = int(b)
            if k < 0:
                raise _Bad(_pos(e.right), f"a negative shift amount ({op} {k})")
            if k > 64:
                raise _Bad(_pos(e.right), f"a shift by {k} bits; at most 64 are accepted")
            return sp.floor(a / 2**k) if op == ">>" else a * 2**k
        if op == "&":
            return BitAnd(a, b)
        if op == "|":
            return BitOr(a, b)
        if op == "^":
            return BitXor(a, b)
        raise _Bad(e.pos, f"unknown operator {op}")

    def name(self, e: S.Name, src: SourceText) -> Any:
        n = e.name
        if n in self.allow:
            return {"i": I, "selector": SEL}[n]
        if n in self.cache:
            return self.cache[n]
        d = self.program.get(n)
        if d is None or d.kind not in ("expr",):
            known = ", ".join(x for x in self.program.names() if x not in ("row", "col"))
            hint = f" (defined here: {known})" if known else ""
            raise _Bad(e.pos, f"'{n}' is not defined{hint}")
        if n in self.active:
            raise _Bad(e.pos, f"'{n}' is defined in terms of itself")
        self.active.add(n)
        try:
            f = self.formula(d)
        finally:
            self.active.discard(n)
        value = f.piecewise()
        self.cache[n] = value
        if len(f.cases) > 1 or f.cases[0].cond is not sp.true:
            self.helpers[n] = f
        return value

    def cond(self, c: S.Cond, src: SourceText) -> Any:
        if isinstance(c, S.Compare):
            vals = [self.expr(x, src) for x in c.operands]
            parts = []
            for k, op in enumerate(c.ops):
                a, b = vals[k], vals[k + 1]
                rel = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq,
                       "!=": sp.Ne}[op]
                parts.append(rel(a, b, evaluate=False))
            return parts[0] if len(parts) == 1 else sp.And(*parts, evaluate=False)
        if isinstance(c, S.InSet):
            x = self.expr(c.expr, src)
            alts = []
            for lo, hi in c.ranges:
                if lo == hi:
                    alts.append(sp.Eq(x, lo, evaluate=False))
                else:
                    alts.append(sp.And(sp.Le(lo, x, evaluate=False),
                                       sp.Le(x, hi, evaluate=False), evaluate=False))
            return alts[0] if len(alts) == 1 else sp.Or(*alts, evaluate=False)
        if isinstance(c, S.BoolOp):
            parts = [self.cond(p, src) for p in c.parts]
            op = sp.Or if c.op == "or" else sp.And
            return op(*parts, evaluate=False)
        raise _Bad(0, "unsupported condition")

    def guard(self, g: S.Guard | None, src: SourceText, earlier: Sequence[Any] = (),
              ) -> tuple[Any, bool]:
        """(condition, is 'otherwise'); ``earlier`` are the conditions of the cases above.

        An element condition followed by a lane condition is their conjunction; followed by
        ``otherwise`` it is "these elements, on the lanes no earlier case took", written out
        as ``elements & ~(earlier cases)`` so that the prove stage sees it like any other."""
        if g is None:
            return sp.true, False
        if g.kind == "otherwise":
            return sp.true, True
        if g.kind in ("where", "elems") and g.letter and g.letter != self.letter:
            self.findings.append(error(
                "element-name", src.span(g.pos),
                f"the condition names '{g.letter}i' elements, but this operand's elements are "
                f"'{self.letter}0, {self.letter}1, ...'"))
        if g.kind == "elems":
            alts = [sp.Eq(I, k, evaluate=False) for _l, k in g.elems]
            cond = alts[0] if len(alts) == 1 else sp.Or(*alts, evaluate=False)
        else:
            assert g.cond is not None
            cond = self.cond(g.cond, src)
        if g.lane is None:
            return cond, False
        if g.lane.kind == "if":
            assert g.lane.cond is not None
            return sp.And(cond, self.cond(g.lane.cond, src), evaluate=False), False
        taken = sp.Or(*earlier, evaluate=False) if len(earlier) > 1 else \
            (earlier[0] if earlier else sp.false)
        return sp.And(cond, sp.Not(taken, evaluate=False), evaluate=False), False

    def formula(self, d: S.Definition) -> Formula:
        cases: list[Case] = []
        for k, c in enumerate(d.cases):
            assert c.expr is not None
            value = self.expr(c.expr, c.source)
            cond, other = self.guard(c.guard, c.source, [x.cond for x in cases])
            if other and k != len(d.cases) - 1:
                self.findings.append(error(
                    "cases", c.source.span(c.guard.pos if c.guard else 0),
                    f"'otherwise' is not the last case of '{d.name}'"))
            text = c.source.text[c.guard.pos:].strip() if c.guard else ""
            cases.append(Case(value, cond, other, c.source, text, _max_listed(c.guard)))
        return Formula(d.name, tuple(cases), d.source)


def _max_listed(g: S.Guard | None) -> int:
    """The largest element index a guard names explicitly (``a7``, ``i = {0,..,7}``)."""
    if g is None:
        return -1
    if g.kind == "elems":
        return max((k for _l, k in g.elems), default=-1)
    best = -1
    stack = [g.cond] if g.cond is not None else []
    while stack:
        c = stack.pop()
        if isinstance(c, S.BoolOp):
            stack.extend(c.parts)
        elif isinstance(c, S.InSet) and isinstance(c.expr, S.Name) and c.expr.name == "i":
            best = max(best, max(hi for _lo, hi in c.ranges))
    return best


class _Bad(Exception):
    def __init__(self, pos: int, message: str, src: SourceText | None = None) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message
        self.src = src


def _pos(e: Any) -> int:
    return getattr(e, "pos", 0)


# ---- tables ------------------------------------------------------------------------------------


# ---- layouts of one section ----------------------------------------------------------------------


def _types_of_title(title: S.SectionTitle) -> tuple[str, ...]:
    return tuple(t for t, _ in title.qualifier.types)


def _id(doc_label: str, instruction: str, shape: str, operand: str,
        types: Sequence[str], arrangement: str = "") -> str:
    """``catalog:mma.m16n8k16.A.f16-bf16``; ``catalog:mma.m8n8k4.A.f16.row``."""
    op = {"A": "A", "B": "B", "C/D": "CD", "metadata": "meta"}[operand]
    t = "-".join(types) if types else "any"
    tail = f".{arrangement}" if arrangement else ""
    return f"{doc_label}:{instruction}.{shape}.{op}.{t}{tail}"


@dataclass
class _Ctx:
    doc: Document
    doc_label: str
    section: Section
    title: S.SectionTitle
    instruction: str
    shape: Shape
    findings: list[Finding] = field(default_factory=list)
    provenance: str = "text"


def _layouts_of_part(ctx: _Ctx, pb: ParsedBlock, pp: ParsedPart) -> list[Layout]:
    operand = pb.block.operand
    part = pp.part
    letter = ELEMENT_LETTER[operand]
    label_types = pp.label.types if pp.label is not None else ()
    arrangement = pp.label.arrangement if pp.label is not None else ""
    program = pp.program
    formulas: list[Formula] = []
    lanes = LANES * WARPGROUP if _names_warpid(program) else LANES
    builder = _Builder(program, letter, lanes)
    targets = ("row", "col") if not (ctx.instruction == "mma.sp" and operand == "A") \
        else ("row", "firstcol", "lastcol")
    has_code = bool(program.definitions)
    if has_code:
        formulas = _build_formulas(ctx, builder, program, targets, part.pseudo[0]
                                   if part.pseudo else part.label)
    ctx.findings.extend(builder.findings)
    source = ctx.provenance if has_code else "figure-only"
    figures = tuple(f.text for f in part.figures)
    title_types = _types_of_title(ctx.title)
    part_types = {t for f in pp.rows for t in f.types} or set(label_types or title_types)
    _check_figures(ctx, pp.figures, operand, part_types)
    out: list[Layout] = []
    groups: list[tuple[tuple[str, ...], S.TableFacts | None]] = \
        [(f.types, f) for f in pp.rows] or [(label_types or title_types, None)]
    for types, tf in groups:
        span = (tf.source if tf else (part.label or pb.block.heading)).span(0)
        out.append(Layout(
            id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand, types,
                   arrangement),
            document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
            title=ctx.section.title.text.strip(), span=span, instruction=ctx.instruction,
            shape=ctx.shape, operand=operand, types=types, source=source,
            formulas=tuple(formulas), table=tf, figures=figures, label_types=label_types,
            title_types=title_types, arrangement=arrangement, lanes=lanes,
            helpers=tuple(h for n, h in builder.helpers.items() if n not in targets),
            incomplete=bool(program.unparsed)))
    return out


def _build_formulas(ctx: _Ctx, builder: _Builder, program: S.Program,
                    targets: Sequence[str], where: SourceText | None) -> list[Formula]:
    out: list[Formula] = []
    if ctx.instruction == "mma.sp" and "firstcol" in targets:
        col = program.get("col")
        if col is None or col.kind != "range":
            ctx.findings.append(error(
                "model", (col.source if col else where) or SourceText.at("", ctx.doc.name, 1),
                "sparse A needs 'col = [firstcol ... lastcol]'"))
    for name in targets:
        d = program.get(name)
        if d is None and program.unparsed:
            continue  # its line did not parse: that line's error is the one finding
        if d is None:
            ctx.findings.append(error(
                "model", where or SourceText.at("", ctx.doc.name, 1),
                f"no formula for '{name}' in this block"))
            continue
        if d.kind != "expr":
            ctx.findings.append(error("model", d.source, f"'{name}' must be an integer formula"))
            continue
        try:
            out.append(builder.formula(d))
        except _Bad as exc:
            src = _case_src(d, exc)
            ctx.findings.append(error("model", src.span(exc.pos), exc.message))
    return out


def _case_src(d: S.Definition, exc: _Bad) -> SourceText:
    """The line the failing node was written on."""
    return exc.src if exc.src is not None else d.cases[0].source


def _metadata_layouts(ctx: _Ctx, pb: ParsedBlock) -> list[Layout]:
    """The metadata operand: the prose sentence, plus formulas where the block has them."""
    block = pb.block
    desc, desc_src = pb.metadata, pb.metadata_src
    program = pb.parts[0].program if pb.parts else S.Program()
    part = pb.parts[0].part if pb.parts else None
    types = _types_of_title(ctx.title)
    builder = _Builder(program, "m", LANES, sparse_meta=True)
    formulas: list[Formula] = []
    selectors: tuple[int, ...] = ()
    sel_src = holder_src = None
    holder: Any = sp.true
    if program.definitions:
        sel = program.get("selector")
        if sel is None or sel.kind != "set":
            ctx.findings.append(error("model", _first_line(part, block),
                                      "a metadata layout needs 'selector = {...}'"))
        else:
            sel_src = sel.source
            items = sel.cases[0].items
            if sum(hi - lo + 1 for lo, hi in items) > 64:
                ctx.findings.append(error("limit", sel.source, "more than 64 selector values"))
            else:
                selectors = tuple(v for lo, hi in items for v in range(lo, hi + 1))
        hd = program.get("holder")
        if hd is None or hd.kind != "predicate":
            ctx.findings.append(error("model", _first_line(part, block),
                                      "a metadata layout needs 'holder = <condition>'"))
        else:
            holder_src = hd.source
            try:
                cond = hd.cases[0].cond
                assert cond is not None
                holder = builder.cond(cond, hd.source)
            except _Bad as exc:
                ctx.findings.append(error("model", (exc.src or hd.source).span(exc.pos),
                                          exc.message))
        for name in ("row", "chunk", "slot"):
            d = program.get(name)
            if d is None or d.kind != "expr":
                ctx.findings.append(error("model", _first_line(part, block),
                                          f"a metadata layout needs '{name} = ...'"))
                continue
            try:
                formulas.append(builder.formula(d))
            except _Bad as exc:
                ctx.findings.append(error("model", _case_src(d, exc).span(exc.pos),
                                          exc.message))
    ctx.findings.extend(builder.findings)
    md = MetadataFacts(desc, desc_src, selectors, sel_src, holder, holder_src)
    for pp in pb.parts:
        _check_figures(ctx, pp.figures, "metadata", set(types))
    source = ctx.provenance if program.definitions else "figure-only"
    return [Layout(
        id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), "metadata", types),
        document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
        title=ctx.section.title.text.strip(), span=block.heading.span(0),
        instruction=ctx.instruction, shape=ctx.shape, operand="metadata", types=types,
        source=source, formulas=tuple(formulas), metadata=md,
        helpers=tuple(h for n, h in builder.helpers.items()
                      if n not in ("row", "chunk", "slot")),
        figures=tuple(f.text for p in block.parts for f in p.figures),
        title_types=types)]


def _check_figures(ctx: _Ctx, figures: Sequence[tuple[SourceText, S.FigureFacts]],
                   operand: str, types: set[str]) -> None:
    """A figure whose caption or image name names another instruction, shape, operand or
    type than the block it stands in (the spec reuses images): a warning each."""
    for src, ff in figures:
        said = []
        if ff.sparse and ctx.instruction == "mma":
            said.append("sparse mma")
        if ff.shapes and str(ctx.shape) not in ff.shapes:
            said.append("." + " / .".join(ff.shapes))
        if ff.operands and operand not in ff.operands:
            said.append(" / ".join(_OPERAND_WORDS.get(o, o) for o in ff.operands))
        known = set(types)
        if operand == "C/D":  # accumulator figures go by the multiplicand types, as labels do
            known |= legal_types(ctx.instruction, str(ctx.shape), "A") | \
                legal_types(ctx.instruction, str(ctx.shape), "B")
        if ff.types and types and not set(ff.types) & known:
            said.append(" / ".join(f".{t}" for t in ff.types))
        if said:
            what = "image" if ff.image else "caption"
            ctx.findings.append(warning(
                "figure", src, f"the figure's {what} names {', '.join(said)}, but it stands "
                f"under the {ctx.instruction} .{ctx.shape} {_OPERAND_WORDS.get(operand, operand)}"
                f" block of " + " / ".join(f".{t}" for t in sorted(types))))


_OPERAND_WORDS = {"A": "matrix A", "B": "matrix B", "C/D": "accumulators C/D",
                  "metadata": "metadata"}


def _first_line(part: Any, block: Any) -> SourceText:
    return part.pseudo[0] if part is not None and part.pseudo else block.heading


def _section_layouts(doc: Document, doc_label: str, ps: ParsedSection, provenance: str,
                     findings: list[Finding]) -> tuple[list[Layout], list[tuple[Any, ...]]]:
    """Layouts written in a section, and the section's references still to resolve."""
    section, title = ps.section, ps.title
    if title is None:
        return [], []
    shape = Shape.parse(title.shape)
    if shape is None:  # pragma: no cover - the grammar only admits mNnNkN
        return [], []
    cells = max(r * c for r, c in (shape.tile(op) for op in ("A", "B", "C/D")))
    if min(shape.m, shape.n, shape.k) < 1 or cells > MAX_TILE_CELLS:
        # every obligation enumerates the tile: a shape such as m99999999n8k16 would hang
        findings.append(error("limit", section.title.strip(), f"the shape {shape} has a "
                              f"{cells}-cell tile; ptxlayout accepts shapes whose dimensions "
                              f"are at least 1 and whose tiles have at most "
                              f"{MAX_TILE_CELLS} cells"))
        return [], []
    ctx = _Ctx(doc, doc_label, section, title, "mma.sp" if title.sparse else "mma", shape,
               findings, provenance)
    out: list[Layout] = []
    for pb in ps.blocks:
        block = pb.block
        if block.operand == "metadata":
            if ctx.instruction != "mma.sp":
                findings.append(error("model", block.heading,
                                      "a metadata operand in a section that is not mma.sp"))
                continue
            out.extend(_metadata_layouts(ctx, pb))
            continue
        if not pb.parts:
            findings.append(warning("model", block.heading,
                                    f"the {block.operand} block has no table and no formulas"))
            continue
        for pp in pb.parts:
            out.extend(_layouts_of_part(ctx, pb, pp))
    out = _with_section_context(out, out)
    refs = [(ctx, src, value) for src, value in ps.references]
    return out, refs


def _section_a_types(layouts: Sequence[Layout]) -> tuple[str, ...]:
    seen: list[str] = []
    for lay in layouts:
        if lay.operand == "A":
            seen.extend(t for t in lay.types if t not in seen)
    return tuple(seen)


def _with_section_context(layouts: list[Layout], section: Sequence[Layout]) -> list[Layout]:
    """C/D layouts are shared by every multiplicand type of a section: their id names them
    (``mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2``) so that ids stay unique across sections."""
    a_types = _section_a_types(section)
    if not a_types:
        return layouts
    out = []
    for lay in layouts:
        if lay.operand == "C/D" and "@" not in lay.id:
            lay = replace(lay, id=f"{lay.id}@{'-'.join(a_types)}")
        out.append(lay)
    return out


# ---- references ----------------------------------------------------------------------------------


def _target_matches(lay: Layout, target: S.Target, operand: str) -> bool:
    return lay.operand == operand and \
        _names_section(target, lay.instruction, str(lay.shape), lay.title)


def _partner_types(instruction: str, shape: str, operand: str,
                   a_types: Iterable[str]) -> set[str]:
    """The B or C/D types the variant table pairs with these A types."""
    a = set(a_types)
    out: set[str] = set()
    for v in VARIANTS:
        if v.instruction == instruction and v.shape == shape and v.a in a:
            if operand == "B":
                out.add(v.b)
            elif operand == "C/D":
                out.update((v.c, v.d))
    return out


def _resolve(ctx: _Ctx, src: SourceText, ref: S.ReferenceSentence, own: list[Layout],
             pool: Sequence[Layout], findings: list[Finding], circular: str = ""
             ) -> list[Layout]:
    """Layouts for each operand a "same as" sentence names, copied from its target.

    ``circular`` is set when the sentence leads back to its own section (see ``_follow``):
    the operand then resolves to nothing, whatever the catalog holds.
    """
    out: list[Layout] = []
    a_types = _section_a_types(own)
    own_types = set(a_types) | set(_types_of_title(ctx.title))
    for operand in ref.operands:
        if any(lay.operand == operand and lay.source != "figure-only" for lay in own):
            findings.append(warning(
                "reference", src, f"the {operand} operand is given both in this section and by "
                f"reference to 'Matrix Fragments for {ref.target.shape}'"))
            continue
        cands = [lay for lay in pool if _target_matches(lay, ref.target, operand)
                 and lay.source in ("text", "catalog")]
        # prefer the same document, then any document, then the catalog
        same_doc = [c for c in cands if c.document == ctx.doc.name]
        cands = same_doc or [c for c in cands if c.source == "text"] or cands
        fmt = {t for t, _ in ref.target.format_types}
        wanted = (fmt & own_types) or own_types
        partner = _partner_types(ctx.instruction, str(ctx.shape), operand, a_types or
                                 tuple(wanted))
        if partner:
            typed = [c for c in cands if set(c.types) & partner]
            cands = typed or cands
        target_desc = f"Matrix Fragments for {'sparse ' if ref.target.sparse else ''}" \
                      f"mma.{ref.target.shape}"
        if ref.target.qualifier.words:
            target_desc += " with " + " ".join(ref.target.qualifier.words)
        if not cands or circular:
            why = circular or f"'{target_desc}' names no {operand} layout in the documents " \
                  "given or the embedded catalog"
            out.append(Layout(
                id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand,
                       tuple(sorted(own_types))),
                document=ctx.doc.name, section=ctx.title.number, title=ctx.section.title.text,
                span=src.span(0), instruction=ctx.instruction, shape=ctx.shape,
                operand=operand, types=tuple(sorted(own_types)), source="reference",
                reference_src=src, notes=(why,),
                title_types=_types_of_title(ctx.title)))
            continue
        seen: set[tuple[tuple[str, ...], str]] = set()
        for c in cands:
            if (c.types, c.arrangement) in seen:
                continue
            seen.add((c.types, c.arrangement))
            out.append(replace(
                c,
                id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand, c.types,
                       c.arrangement),
                document=ctx.doc.name, section=ctx.title.number,
                title=ctx.section.title.text.strip(), span=src.span(0),
                instruction=ctx.instruction, shape=ctx.shape, source="reference",
                reference_of=c.id, reference_src=src, table=None, label_types=(),
                notes=(f"resolved to {c.id} ({c.document}:{c.span.line})",),
                title_types=_types_of_title(ctx.title)))
    return out


# ---- entry point ---------------------------------------------------------------------------------


def _label_for(doc: Document) -> str:
    return "catalog" if doc.name.startswith("catalog/") else document_label(doc.name)


def document_label(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def layouts_of(doc: Document | ParsedDocument, provenance: str = "text",
               label: str | None = None,
               ) -> tuple[list[Layout], list[tuple[Any, ...]], list[Finding]]:
    parsed = doc if isinstance(doc, ParsedDocument) else parse_document(doc)
    findings: list[Finding] = list(parsed.findings)
    layouts: list[Layout] = []
    refs: list[tuple[Any, ...]] = []
    lab = label or document_label(parsed.document.name)
    for ps in parsed.sections:
        lays, rs = _section_layouts(parsed.document, lab, ps, provenance, findings)
        layouts.extend(lays)
        refs.extend(rs)
    return layouts, refs, findings


def build(documents: Iterable[Document | ParsedDocument],
          catalog: Iterable[Document | ParsedDocument] = ()) -> Model:
    """Every layout of ``documents``; references resolve against them and the catalog.

    Takes ingested documents (parsed here) or parsed ones (``formal.parse.parse_document``).
    """
    docs = [d if isinstance(d, ParsedDocument) else parse_document(d) for d in documents]
    cat_docs = [d if isinstance(d, ParsedDocument) else parse_document(d) for d in catalog]
    findings: list[Finding] = []
    written: list[Layout] = []
    pending: list[tuple[Any, ...]] = []
    for d in docs:
        findings.extend(d.document.findings)
        lab = _label_for(d.document)
        lays, refs, errs = layouts_of(d, "catalog" if lab == "catalog" else "text", label=lab)
        written.extend(lays)
        pending.extend(refs)
        findings.extend(errs)
    cat_layouts: list[Layout] = []
    for d in cat_docs:
        lays, _refs, _errs = layouts_of(d, "catalog", "catalog")
        cat_layouts.extend(lays)
    pool = written + cat_layouts
    resolved: list[Layout] = []
    stated: dict[tuple[str, str], list[Layout]] = {}  # (document, operand) -> its layouts
    for lay in written:
        if lay.source in ("text", "catalog"):
            stated.setdefault((lay.document, lay.operand), []).append(lay)
    for ctx, src, ref in pending:
        own = [lay for lay in written if lay.document == ctx.doc.name
               and lay.section == (ctx.title.number or ctx.section.number)
               and lay.shape == ctx.shape]
        for operand in ref.operands:
            target, circular = _follow(ctx, ref.target, operand,
                                       stated.get((ctx.doc.name, operand), []), pending)
            one = replace(ref, operands=(operand,), target=target)
            resolved.extend(_with_section_context(
                _resolve(ctx, src, one, own, pool, findings, circular), own))
    layouts = _fill_from_catalog(written + resolved, cat_layouts)
    return Model(tuple(_unique_ids(layouts)), tuple(findings),
                 tuple(d.document for d in docs))


def _section_key(ctx: _Ctx) -> tuple[str, str, str]:
    return ctx.doc.name, ctx.title.number or ctx.section.number, str(ctx.shape)


def _names_section(target: S.Target, instruction: str, shape: str, title: str) -> bool:
    if instruction != ("mma.sp" if target.sparse else "mma") or shape != target.shape:
        return False
    words, title = set(target.qualifier.words), title.lower()
    return not ("integer" in words and "integer" not in title) and \
        not ("floating" in words and "floating" not in title)


def _follow(ctx: _Ctx, target: S.Target, operand: str, stated: Sequence[Layout],
            pending: Sequence[tuple[Any, ...]]) -> tuple[S.Target, str]:
    """Where a "same as" sentence leads within its own document: (final target, "") when it
    ends at a section that states the operand (or leaves the document), ("", why) when it
    comes back to a section already visited -- the sentence's own section included.

    Section 9.2 saying "B is the same as in 9.3" while 9.3 says "B is the same as in 9.4"
    resolves to 9.4's B; a section naming itself, or 9.2 and 9.3 naming each other, is a
    circular reference, which resolves to nothing (not to the catalog's layout).
    """
    doc = ctx.doc.name
    seen = [_section_key(ctx)]
    titles = [ctx.section.title.text.strip()]
    while True:
        # ``stated``: the document's layouts of this operand that the text itself states
        if any(_names_section(target, lay.instruction, str(lay.shape), lay.title)
               for lay in stated):
            return target, ""
        hops = [(c, r) for c, _src, r in pending if c.doc.name == doc and operand in r.operands
                and _names_section(target, c.instruction, str(c.shape),
                                   c.section.title.text)]
        if not hops:
            return target, ""
        c, r = hops[0]
        if _section_key(c) in seen:
            loop = " -> ".join(f"'{t}'" for t in titles + [c.section.title.text.strip()])
            return target, f"the reference for {operand} is circular: {loop}"
        seen.append(_section_key(c))
        titles.append(c.section.title.text.strip())
        target = r.target


def _fill_from_catalog(layouts: list[Layout], catalog: list[Layout]) -> list[Layout]:
    """A layout the document shows only as a figure takes the catalog's formulas."""
    out = []
    for lay in layouts:
        if lay.source != "figure-only" or not catalog:
            out.append(lay)
            continue
        match = next((c for c in catalog if c.instruction == lay.instruction
                      and c.shape == lay.shape and c.operand == lay.operand
                      and set(c.types) & set(lay.types) and c.formulas), None)
        if match is None:
            out.append(lay)
            continue
        md = lay.metadata
        if md is not None and match.metadata is not None:
            md = replace(match.metadata, desc=md.desc or match.metadata.desc,
                         desc_src=md.desc_src or match.metadata.desc_src)
        out.append(replace(
            lay, formulas=match.formulas, metadata=md if md is not None else match.metadata,
            source="catalog", reference_of=match.id,
            notes=lay.notes + (f"the document gives this layout only as a figure; formulas "
                               f"from {match.id}",)))
    return out


def _unique_ids(layouts: list[Layout]) -> list[Layout]:
    seen: dict[str, int] = {}
    out = []
    for lay in layouts:
        n = seen.get(lay.id, 0)
        seen[lay.id] = n + 1
        out.append(lay if n == 0 else replace(lay, id=f"{lay.id}#{n + 1}"))
    return out


def type_category_words(types: Iterable[str]) -> tuple[bool, bool]:
    ts = set(types)
    return bool(ts & INTEGER_TYPES), bool(ts & FLOAT_TYPES)
