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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from . import syntax as S
from .algebra import I, LANE, SEL, BitAnd, BitOr, BitXor, show, show_cond
from .ingest import Document, OperandBlock, Section, TableRow, TypeBlock
from .parse import parse_program, parse_prose
from .source import Finding, SourceText, Span, error, warning
from .variants import (
    ELEMENT_LETTER,
    FLOAT_TYPES,
    INTEGER_TYPES,
    SPARSITY,
    VARIANTS,
    Shape,
)

LANES = 32
# The largest tile an operand may have (the PTX ISA's largest is 16 x 256, m16n8k256 A):
# every obligation enumerates it, so a typo such as m99999999n8k16 must not be taken as is.
MAX_TILE_CELLS = 16384
# Layouts whose warp computes several independent products at once: (name, groups, the
# group of a lane).  m8n8k4 with .f16 runs four 8x8x4 products, one per quad-pair
# (lanes 4q..4q+3 and 16+4q..16+4q+3).
REPLICATION: dict[tuple[str, str, str], tuple[str, int, Any]] = {
    ("mma", "m8n8k4", "f16"): ("quad-pair", 4, sp.Mod(sp.floor(LANE / 4), 4)),
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
class TableFacts:
    """What one fragment-table row says."""

    source: SourceText  # the row (its first cell)
    types: tuple[str, ...]
    fragment: S.FragmentDesc | None
    fragment_src: SourceText | None
    elements: S.ElementList | None
    elements_src: SourceText | None
    header: S.Header | None
    header_src: SourceText | None


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
    table: TableFacts | None = None
    metadata: MetadataFacts | None = None
    reference_of: str = ""  # id of the layout a "same as" sentence resolved to
    reference_src: SourceText | None = None
    figures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    label_types: tuple[str, ...] = ()
    title_types: tuple[str, ...] = ()
    lanes: int = LANES

    # -- shape facts
    @property
    def sparse_a(self) -> bool:
        return self.instruction == "mma.sp" and self.operand == "A"

    @property
    def tile(self) -> tuple[int, int]:
        return self.shape.tile("A" if self.operand == "metadata" else self.operand)

    @property
    def groups(self) -> tuple[str, int, Any] | None:
        for t in self.types:
            rep = REPLICATION.get((self.instruction, str(self.shape), t))
            if rep is not None:
                return rep
        return None

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
        for f in self.formulas:
            if f.name == name:
                return f
        return None

    @property
    def short_id(self) -> str:
        return self.id.split(":", 1)[-1]

    def map_digest(self) -> str:
        """A hash of the formulas' normalized form (changes when the text's math changes)."""
        h = hashlib.sha256()
        h.update(f"{self.instruction}|{self.shape}|{self.operand}|{self.lanes}".encode())
        for f in self.formulas:
            h.update(f.name.encode())
            for c in f.cases:
                h.update(sp.srepr(c.value).encode())
                h.update(b"otherwise" if c.otherwise else sp.srepr(c.cond).encode())
        if self.metadata is not None:
            h.update(repr(self.metadata.selectors).encode())
            h.update(sp.srepr(self.metadata.holder).encode())
        return h.hexdigest()[:16]


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

    def guard(self, g: S.Guard | None, src: SourceText) -> tuple[Any, bool]:
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
            return (alts[0] if len(alts) == 1 else sp.Or(*alts, evaluate=False)), False
        assert g.cond is not None
        return self.cond(g.cond, src), False

    def formula(self, d: S.Definition) -> Formula:
        cases = []
        for k, c in enumerate(d.cases):
            assert c.expr is not None
            value = self.expr(c.expr, c.source)
            cond, other = self.guard(c.guard, c.source)
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


def _row_facts(row: TableRow, header: TableRow | None,
               findings: list[Finding]) -> TableFacts | None:
    """Parse one table row (flat or split into cells)."""
    hdr, hdr_src = _header(header, findings)
    cells = [c for c in row.cells]
    if row.flat or len(cells) == 1:
        src = cells[0]
        value, errs = parse_prose(src, "flat_row", "this table row")
        if value is None:
            # a row with no fragment sentence: the types alone
            tvalue = parse_prose(src, "type_cell", "this table row")[0]
            if tvalue is None:
                findings.extend(errs)
                return None
            types, _ = tvalue
            findings.extend(errs)
            return TableFacts(src, types, None, None, None, None, hdr, hdr_src)
        fr: S.FlatRow = value
        esrc = src.slice(fr.elements_pos) if fr.elements is not None else None
        elements = fr.elements
        if elements is not None and esrc is not None:
            shift = fr.elements_pos
            elements = S.ElementList(tuple(replace(it, pos=it.pos - shift)
                                           for it in elements.items))
        return TableFacts(src, fr.types, fr.fragment, src, elements, esrc, hdr, hdr_src)
    tsrc = cells[0]
    tvalue, errs = parse_prose(tsrc, "type_cell", "the type cell")
    if tvalue is None:
        findings.extend(errs)
        return None
    types, _ = tvalue
    frag = fsrc = None
    if len(cells) > 1 and cells[1].text.strip():
        fsrc = cells[1]
        frag, errs = parse_prose(fsrc, "fragment_cell", "the fragment cell")
        findings.extend(errs)
    elements = esrc = None
    if len(cells) > 2 and cells[2].text.strip():
        esrc = cells[2]
        text = esrc.text.strip()
        if text.lower().startswith("mapping"):
            esrc = None  # the sparse tables put a sentence in the Elements column
        else:
            elements, errs = parse_prose(esrc, "element_list", "the element list")
            findings.extend(errs)
    return TableFacts(tsrc, types, frag, fsrc, elements, esrc, hdr, hdr_src)


def _header(header: TableRow | None,
            findings: list[Finding]) -> tuple[S.Header | None, SourceText | None]:
    if header is None or not header.cells:
        return None, None
    src = header.cells[0]
    value, errs = parse_prose(src, "header", "the table header")
    findings.extend(errs)
    return value, src


# ---- layouts of one section ----------------------------------------------------------------------


def _types_of_title(title: S.SectionTitle) -> tuple[str, ...]:
    return tuple(t for t, _ in title.qualifier.types)


def _id(doc_label: str, instruction: str, shape: str, operand: str,
        types: Sequence[str]) -> str:
    op = {"A": "A", "B": "B", "C/D": "CD", "metadata": "meta"}[operand]
    t = "-".join(types) if types else "any"
    return f"{doc_label}:{instruction}.{shape}.{op}.{t}"


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


def _layouts_of_part(ctx: _Ctx, block: OperandBlock, part: TypeBlock,
                     ) -> list[Layout]:
    operand = block.operand
    letter = ELEMENT_LETTER[operand]
    label_types: tuple[str, ...] = ()
    if part.label is not None:
        lab, errs = parse_prose(part.label, "type_label", "the type label")
        ctx.findings.extend(errs)
        if lab is not None:
            label_types = lab.types
    program, errs = parse_program(part.pseudo)
    ctx.findings.extend(errs)
    formulas: list[Formula] = []
    builder = _Builder(program, letter, LANES)
    targets = ("row", "col") if not (ctx.instruction == "mma.sp" and operand == "A") \
        else ("row", "firstcol", "lastcol")
    has_code = bool(program.definitions)
    if has_code:
        formulas = _build_formulas(ctx, builder, program, targets, part)
    ctx.findings.extend(builder.findings)
    rows = [(_row_facts(r, part.header, ctx.findings)) for r in part.rows]
    facts = [f for f in rows if f is not None]
    source = ctx.provenance if has_code else "figure-only"
    figures = tuple(f.text for f in part.figures)
    title_types = _types_of_title(ctx.title)
    out: list[Layout] = []
    groups: list[tuple[tuple[str, ...], TableFacts | None]] = \
        [(f.types, f) for f in facts] or [(label_types or title_types, None)]
    for types, tf in groups:
        span = (tf.source if tf else (part.label or block.heading)).span(0)
        out.append(Layout(
            id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand, types),
            document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
            title=ctx.section.title.text.strip(), span=span, instruction=ctx.instruction,
            shape=ctx.shape, operand=operand, types=types, source=source,
            formulas=tuple(formulas), table=tf, figures=figures, label_types=label_types,
            title_types=title_types))
    return out


def _build_formulas(ctx: _Ctx, builder: _Builder, program: S.Program,
                    targets: Sequence[str], part: TypeBlock) -> list[Formula]:
    out: list[Formula] = []
    where = part.pseudo[0] if part.pseudo else part.label
    if ctx.instruction == "mma.sp" and "firstcol" in targets:
        col = program.get("col")
        if col is None or col.kind != "range":
            ctx.findings.append(error(
                "model", (col.source if col else where) or SourceText.at("", ctx.doc.name, 1),
                "sparse A needs 'col = [firstcol ... lastcol]'"))
    for name in targets:
        d = program.get(name)
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


def _metadata_layouts(ctx: _Ctx, block: OperandBlock) -> list[Layout]:
    """The metadata operand: the prose sentence, plus formulas where the block has them."""
    desc = desc_src = None
    for pr in block.prose:
        value, errs = parse_prose(pr, "metadata_desc", "the metadata sentence")
        if value is None:
            alt, errs2 = parse_prose(pr, "metadata_decl", "the metadata declaration")
            if alt is not None:
                value, errs = alt, []
            elif pr.text.strip().lower().startswith("metadata"):
                ctx.findings.extend(errs)
        if value is not None:
            desc, desc_src = value, pr
            break
    part = block.parts[0] if block.parts else TypeBlock()
    program, errs = parse_program(part.pseudo)
    ctx.findings.extend(errs)
    types = _types_of_title(ctx.title)
    builder = _Builder(program, "m", LANES, sparse_meta=True)
    formulas: list[Formula] = []
    selectors: tuple[int, ...] = ()
    sel_src = holder_src = None
    holder: Any = sp.true
    if program.definitions:
        sel = program.get("selector")
        if sel is None or sel.kind != "set":
            ctx.findings.append(error("model", part.pseudo[0],
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
            ctx.findings.append(error("model", part.pseudo[0],
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
                ctx.findings.append(error("model", part.pseudo[0],
                                          f"a metadata layout needs '{name} = ...'"))
                continue
            try:
                formulas.append(builder.formula(d))
            except _Bad as exc:
                ctx.findings.append(error("model", _case_src(d, exc).span(exc.pos),
                                          exc.message))
    ctx.findings.extend(builder.findings)
    md = MetadataFacts(desc, desc_src, selectors, sel_src, holder, holder_src)
    source = ctx.provenance if program.definitions else "figure-only"
    return [Layout(
        id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), "metadata", types),
        document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
        title=ctx.section.title.text.strip(), span=block.heading.span(0),
        instruction=ctx.instruction, shape=ctx.shape, operand="metadata", types=types,
        source=source, formulas=tuple(formulas), metadata=md,
        figures=tuple(f.text for p in block.parts for f in p.figures),
        title_types=types)]


def _section_layouts(doc: Document, doc_label: str, section: Section, provenance: str,
                     findings: list[Finding]) -> tuple[list[Layout], list[tuple[Any, ...]]]:
    """Layouts written in a section, and the section's unresolved references."""
    if not section.operands and not section.references:
        return [], []
    title, errs = parse_prose(section.title.strip(), "section_title", "the section title")
    if title is None:
        text = section.title.text.strip().lower()
        if "fragment" in text and "mma" in text:
            findings.extend(errs)
        return [], []
    shape = Shape.parse(title.shape)
    if shape is None:  # pragma: no cover - the grammar only admits mNnNkN
        return [], []
    cells = max(r * c for r, c in (shape.tile(op) for op in ("A", "B", "C/D")))
    if min(shape.m, shape.n, shape.k) < 1 or cells > MAX_TILE_CELLS:
        # every obligation enumerates the tile: a shape such as m99999999n8k16 would hang
        findings.append(error("limit", section.title.strip(), f"the shape {shape} has a "
                              f"{cells}-cell tile; ptxlayout accepts shapes whose dimensions "
                              f"are at least 1 and whose tiles have at most {MAX_TILE_CELLS} "
                              "cells"))
        return [], []
    ctx = _Ctx(doc, doc_label, section, title, "mma.sp" if title.sparse else "mma", shape,
               findings, provenance)
    out: list[Layout] = []
    for block in section.operands:
        if block.operand == "metadata":
            if ctx.instruction != "mma.sp":
                findings.append(error("model", block.heading,
                                      "a metadata operand in a section that is not mma.sp"))
                continue
            out.extend(_metadata_layouts(ctx, block))
            continue
        if not block.parts:
            findings.append(warning("model", block.heading,
                                    f"the {block.operand} block has no table and no formulas"))
            continue
        for part in block.parts:
            out.extend(_layouts_of_part(ctx, block, part))
    out = _with_section_context(out, out)
    refs = []
    for r in section.references:
        value, errs = parse_prose(r, "reference", "the cross-reference")
        findings.extend(errs)
        if value is not None:
            refs.append((ctx, r, value))
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
    if lay.operand != operand or str(lay.shape) != target.shape:
        return False
    if lay.instruction != ("mma.sp" if target.sparse else "mma"):
        return False
    words = set(target.qualifier.words)
    title = lay.title.lower()
    if "integer" in words and "integer" not in title:
        return False
    if "floating" in words and "floating" not in title:
        return False
    return True


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
        seen: set[tuple[str, ...]] = set()
        for c in cands:
            if c.types in seen:
                continue
            seen.add(c.types)
            out.append(replace(
                c,
                id=_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand, c.types),
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


def layouts_of(doc: Document, provenance: str = "text", label: str | None = None,
               ) -> tuple[list[Layout], list[tuple[Any, ...]], list[Finding]]:
    findings: list[Finding] = []
    layouts: list[Layout] = []
    refs: list[tuple[Any, ...]] = []
    lab = label or document_label(doc.name)
    for section in doc.sections:
        lays, rs = _section_layouts(doc, lab, section, provenance, findings)
        layouts.extend(lays)
        refs.extend(rs)
    return layouts, refs, findings


def build(documents: Iterable[Document], catalog: Iterable[Document] = (),
          ) -> Model:
    """Every layout of ``documents``; references resolve against them and the catalog."""
    docs = list(documents)
    cat_docs = list(catalog)
    findings: list[Finding] = []
    written: list[Layout] = []
    pending: list[tuple[Any, ...]] = []
    for d in docs:
        findings.extend(d.findings)
        lays, refs, errs = layouts_of(d, "catalog" if _label_for(d) == "catalog" else "text",
                                      label=_label_for(d))
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
    return Model(tuple(_unique_ids(layouts)), tuple(findings), tuple(docs))


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
