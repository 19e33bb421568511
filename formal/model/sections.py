"""Parsed sections -> ``Layout`` values: the pseudocode's definitions substituted into SymPy.

``groupID = %laneid >> 2`` and ``row = groupID + 8 for ai where i >= 4`` give the case
``(floor(lane/4) + 8, i >= 4)``; a guard that lists elements (``i = {0,..,3}``), a range or a
parity becomes a SymPy condition, ``%warpid`` makes the layout span a warpgroup (128 threads),
and the fragment table's facts are attached unchanged for the prove stage to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from ..base.ids import LayoutId
from ..base.matrix_variants import move_tile
from ..base.source import Finding, SourceText, error, name_layout, warning
from ..base.variants import (
    ELEMENT_LETTER,
    MOVES,
    TMEM_FAMILIES,
    Shape,
    tmem_tile,
)
from ..parse import syntax as S
from ..parse.document import ParsedBlock, ParsedPart, ParsedSection
from ..text.blocks import Document, Section
from .algebra import LANE, SEL, BitAnd, BitOr, BitXor, I, c_divide
from .built import block_key, built_once, case_of
from .figure_names import check_figures
from .layout import LANES, MAX_TILE_CELLS, WARPGROUP, Case, Formula, Layout, MetadataFacts


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
            return c_divide(op, a, int(b))  # C's: truncated, the dividend's sign
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
        if n in self.active or len(self.active) >= 32:  # a loop; 'x1 = x0', 'x2 = x1', ...
            raise _Bad(e.pos, f"'{n}' is " + ("defined in terms of itself" if n in self.active
                                              else "reached through over 32 definitions"))
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
            cases.append(case_of(c, value, cond, other))
        return Formula(d.name, tuple(cases), d.source)


class _Bad(Exception):
    def __init__(self, pos: int, message: str, src: SourceText | None = None) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message
        self.src = src


def _pos(e: Any) -> int:
    return getattr(e, "pos", 0)


def element_letter(instruction: str, operand: str) -> str:
    """``a``, ``b``, ``c``, ``m``; wgmma's accumulator ``d0, ...``; tcgen05.ld/st ``r0, ...``."""
    moves = instruction.startswith("wgmma") or instruction in MOVES
    return "r" if instruction in TMEM_FAMILIES else \
        "d" if moves and operand == "C/D" else ELEMENT_LETTER[operand]


def types_of_title(title: S.SectionTitle) -> tuple[str, ...]:
    return tuple(t for t, _ in title.qualifier.types)


def layout_id(doc_label: str, instruction: str, shape: str, operand: str,
        types: Sequence[str], arrangement: str = "") -> str:
    """``catalog:mma.m16n8k16.A.f16-bf16``; ``catalog:mma.m8n8k4.A.f16.row``
    (``LayoutId.register``, printed)."""
    return str(LayoutId.register(doc_label, instruction, shape, operand, types, arrangement))


@dataclass
class SectionContext:
    doc: Document
    doc_label: str
    section: Section
    title: S.SectionTitle
    instruction: str
    shape: Shape
    findings: list[Finding] = field(default_factory=list)
    provenance: str = "text"
    shape_text: str = ""  # the id's shape where it is not str(shape): wgmma's m64nNk16 A


def _layouts_of_part(ctx: SectionContext, pb: ParsedBlock, pp: ParsedPart) -> list[Layout]:
    operand = pb.block.operand
    part = pp.part
    letter = element_letter(ctx.instruction, operand)
    label_types = pp.label.types if pp.label is not None else ()
    arrangement = pp.label.arrangement if pp.label is not None else ""
    program = pp.program
    formulas: list[Formula] = []
    warpgroup = _names_warpid(program) or ctx.instruction.startswith("wgmma")
    lanes = LANES * WARPGROUP if warpgroup else LANES
    targets = ("row", "col") if not (_sparse(ctx.instruction) and operand == "A") \
        else ("row", "firstcol", "lastcol")
    has_code = bool(program.definitions)
    helpers: tuple[Formula, ...] = ()
    if has_code:  # a block written as one built before: its values on this block's lines
        formulas, helpers = built_once(
            program, block_key(program, letter, lanes, targets, _sparse(ctx.instruction)),
            lambda: _built(ctx, program, letter, lanes, targets,
                           part.pseudo[0] if part.pseudo else part.label))
    source = ctx.provenance if has_code else "figure-only"
    figures = tuple(f.text for f in part.figures)
    title_types = types_of_title(ctx.title)
    part_types = {t for f in pp.rows for t in f.types} or set(label_types or title_types)
    check_figures(ctx, pp.figures, operand, part_types)
    out: list[Layout] = []
    groups: list[tuple[tuple[str, ...], S.TableFacts | None]] = \
        [(f.types, f) for f in pp.rows] or [(label_types or title_types, None)]
    for types, tf in groups:
        span = (tf.source if tf else (part.label or pb.block.heading)).span(0)
        out.append(Layout(
            id=layout_id(ctx.doc_label, ctx.instruction, ctx.shape_text or str(ctx.shape),
                         operand, types, arrangement),
            document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
            title=ctx.section.title.text.strip(), span=span, instruction=ctx.instruction,
            shape=ctx.shape, operand=operand, types=types, source=source,
            formulas=tuple(formulas), table=tf, figures=figures, label_types=label_types,
            title_types=title_types, arrangement=arrangement, lanes=lanes,
            shape_name=ctx.shape_text,
            helpers=helpers,
            # a formula that is no map (its error is the finding): never proved
            incomplete=bool(program.unparsed) or (has_code and len(formulas) < len(targets))))
    if out:  # a line that did not parse: its error names the first layout the block states
        name_layout(ctx.findings, program.unparsed, out[0].id)
    return out


def _built(ctx: SectionContext, program: S.Program, letter: str, lanes: int,
           targets: Sequence[str], where: SourceText | None,
           ) -> tuple[list[Formula], tuple[Formula, ...], bool]:
    """A block's formulas and helpers (the definitions substituted into them) built, and
    whether that gave no finding (``model.built`` keeps only such builds)."""
    builder = _Builder(program, letter, lanes)
    before = len(ctx.findings)
    formulas = _build_formulas(ctx, builder, program, targets, where)
    ctx.findings.extend(builder.findings)
    helpers = tuple(h for n, h in builder.helpers.items() if n not in targets)
    return formulas, helpers, len(ctx.findings) == before


def _build_formulas(ctx: SectionContext, builder: _Builder, program: S.Program,
                    targets: Sequence[str], where: SourceText | None) -> list[Formula]:
    out: list[Formula] = []
    if _sparse(ctx.instruction) and "firstcol" in targets:
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


def _sparse(instruction: str) -> bool:
    return instruction in ("mma.sp", "wgmma.sp")


def _metadata_layouts(ctx: SectionContext, pb: ParsedBlock,
                      types: tuple[str, ...] | None = None) -> list[Layout]:
    """The metadata operand: the prose sentence, plus formulas where the block has them.
    ``types``: the A types it serves where the title names none (a sparse wgmma section)."""
    block = pb.block
    desc, desc_src = pb.metadata, pb.metadata_src
    program = pb.parts[0].program if pb.parts else S.Program()
    part = pb.parts[0].part if pb.parts else None
    types = types if types is not None else types_of_title(ctx.title)
    lanes = LANES * WARPGROUP if ctx.instruction.startswith("wgmma") else LANES
    builder = _Builder(program, "m", lanes, sparse_meta=True)
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
        check_figures(ctx, pp.figures, "metadata", set(types))
    source = ctx.provenance if program.definitions else "figure-only"
    return [Layout(
        id=layout_id(ctx.doc_label, ctx.instruction, ctx.shape_text or str(ctx.shape),
                     "metadata", types),
        document=ctx.doc.name, section=ctx.title.number or ctx.section.number,
        title=ctx.section.title.text.strip(), span=block.heading.span(0),
        instruction=ctx.instruction, shape=ctx.shape, operand="metadata", types=types,
        source=source, formulas=tuple(formulas), metadata=md, lanes=lanes,
        shape_name=ctx.shape_text,
        incomplete=bool(program.definitions) and len(formulas) < 3,
        helpers=tuple(h for n, h in builder.helpers.items()
                      if n not in ("row", "chunk", "slot")),
        figures=tuple(f.text for p in block.parts for f in p.figures),
        title_types=types)]


def _first_line(part: Any, block: Any) -> SourceText:
    return part.pseudo[0] if part is not None and part.pseudo else block.heading


def section_layouts(doc: Document, doc_label: str, ps: ParsedSection, provenance: str,
                     findings: list[Finding]) -> tuple[list[Layout], list[tuple[Any, ...]]]:
    """Layouts written in a section, and the section's references still to resolve."""
    section, title = ps.section, ps.title
    if title is None:
        return [], []
    if title.instruction == "wgmma":
        return wgmma_layouts(doc, doc_label, ps, title, provenance, findings)
    if title.instruction in MOVES or title.instruction in TMEM_FAMILIES:
        return move_section_layouts(doc, doc_label, ps, title, provenance, findings), []
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
    ctx = SectionContext(doc, doc_label, section, title, "mma.sp" if title.sparse else "mma", shape,
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
            findings.append(error("model", block.heading, f"the {block.operand} block has no "
                                  "table and no formulas: nothing of it was checked"))
            continue
        for pp in pb.parts:
            out.extend(_layouts_of_part(ctx, pb, pp))
    out = with_section_context(out, out)
    refs = [(ctx, src, value) for src, value in ps.references]
    return out, refs


# ---- wgmma: warpgroup fragments, the accumulator once for every legal N ---------------------


def wgmma_layouts(doc: Document, doc_label: str, ps: ParsedSection, title: S.SectionTitle,
                  provenance: str, findings: list[Finding],
                  ) -> tuple[list[Layout], list[tuple[Any, ...]]]:
    """A wgmma section: A once (its tile, 64 x K, does not depend on N; its id keeps
    ``m64nNk16``), each accumulator row once for every N of its element list (``N = 8 * i
    where i = {1,..,32}``): ``wgmma.m64nNk16.D.f32`` has the shape at the largest N and
    ``n_values`` (8, 16, .., 256); ``Layout.at(64)`` is the layout at N = 64 (``N/2``
    registers and ``dX`` made concrete).  A row that names no N takes the row above's (the
    spec merges the cell).

    A sparse section (``wgmma.sp``) has A in registers (``row``, ``firstcol``, ``lastcol``
    over the warpgroup's 128 threads), a metadata operand (its layout for the A types of the
    section), and an accumulator D that "is the same as" a dense section's: the references
    are returned for the resolve stage, which copies the dense D, still stated once in N."""
    shape = Shape.parse(title.shape.replace("nN", "n8"))
    if shape is None or shape.m != 64 or shape.k < 1 or 64 * shape.k > MAX_TILE_CELLS:
        findings.append(error("limit", ps.section.title.strip(),
                              f"the wgmma shape {title.shape} is not m64nNk<K> with a tile "
                              f"of at most {MAX_TILE_CELLS} cells"))
        return [], []
    instruction = "wgmma.sp" if title.sparse else "wgmma"
    ctx = SectionContext(doc, doc_label, ps.section, title, instruction, shape, findings,
                         provenance, title.shape)
    referenced = {op for _src, r in ps.references for op in r.operands}
    out: list[Layout] = []
    metadata: list[ParsedBlock] = []
    for pb in ps.blocks:
        operand = pb.block.operand
        if operand == "metadata" and instruction == "wgmma.sp":
            metadata.append(pb)
            continue
        note = pb.shared_memory
        if note is not None:
            # "Multiplicand A, from shared memory is documented in ...": no registers.  A
            # note that sends the reader to this very section leads nowhere
            t = note.target
            if t is not None and t.sparse == title.sparse and t.shape == title.shape:
                src = pb.shared_memory_src or pb.block.heading
                findings.append(warning(
                    "reference", src.span(t.shape_pos),
                    f"the shared-memory layout of {operand} is 'documented in' this very "
                    f"section ('Matrix Fragments for {'sparse ' if t.sparse else ''}"
                    f"wgmma.mma_async.{t.shape}'), which states no shared-memory layout: "
                    "the shared-memory layout is not checked"))
            continue
        if operand not in ("A", "C/D"):
            findings.append(warning("model", pb.block.heading,
                                    f"a {operand} block in a wgmma section is not read "
                                    "(wgmma's B comes from shared memory, dense wgmma has no "
                                    "metadata)"))
            continue
        if not pb.parts and operand not in referenced:
            findings.append(warning("model", pb.block.heading,
                                    f"the {operand} block has no table and no formulas"))
        for pp in pb.parts:
            if operand == "A":
                out.extend(_layouts_of_part(ctx, pb, pp))
                continue
            legal: S.NSet | None = None
            for row in pp.rows:
                legal = row.legal_n or legal
                if legal is None or not legal.values:
                    findings.append(error("model", row.elements_src or row.source,
                                          "this wgmma accumulator row names no N "
                                          "(\"N = 8*i where i = {...}\")"))
                    continue
                bad = [n for n in legal.values if n < 1 or 64 * n > MAX_TILE_CELLS]
                if bad:
                    findings.append(error("limit", row.elements_src or row.source,
                                          f"N = {bad[0]} is outside 1..{MAX_TILE_CELLS // 64}"))
                    continue
                at = replace(ctx, shape=Shape(64, max(legal.values), shape.k))
                out.extend(replace(lay, n_values=tuple(sorted(legal.values)))
                           for lay in _layouts_of_part(at, pb, replace(pp, rows=(row,))))
    for pb in metadata:
        out.extend(_metadata_layouts(ctx, pb, section_a_types(out) or None))
    refs = [(ctx, src, value) for src, value in ps.references] if instruction == "wgmma.sp" \
        else []
    return out, refs


# ---- ldmatrix / stmatrix / movmatrix -----------------------------------------------------------


def move_section_layouts(doc: Document, doc_label: str, ps: ParsedSection,
                         title: S.SectionTitle, provenance: str,
                         findings: list[Finding]) -> list[Layout]:
    """A matrix move's fragment, ``ldmatrix.m8n8.x4.b16``: the ``.num`` matrices (here 4 of
    8 x 8) stacked one above the other make the tile (32 x 8); a cell is (the index of the
    row address the element comes from, its place in that row).  Source registers are
    operand A (``a0, a1, ...``), destination registers C/D (``d0, d1, ...``); movmatrix has
    both, the id ending in ``.a`` / ``.d``.  With ``.trans`` an m x n matrix lies in memory
    as its n columns, so n row addresses of m elements each: ``stmatrix.m16n8.x2.trans.b8``
    stores two 16 x 8 matrices as 2 x 8 rows of 16 bytes, a 16 x 16 tile."""
    move = title.move
    variant = title.shape  # m8n8.x4.trans: move.variant; a tcgen05.ld/st's 16x256b.x2.pack::16b
    if title.tmem is not None:
        rows, cols = tmem_tile(title.tmem.shape, title.tmem.num, title.tmem.pack)
    elif move is None or min(move.m, move.n) < 1 or \
            move.m * move.count * move.n > MAX_TILE_CELLS:
        findings.append(error("limit", ps.section.title.strip(),
                              f"the move {variant} is not m<rows>n<cols> with a small tile"))
        return []
    else:
        rows, cols = move_tile(move.m, move.n, move.count, move.trans)
    shape = Shape(rows, cols, cols)
    ctx = SectionContext(doc, doc_label, ps.section, title, title.instruction, shape, findings,
                         provenance, variant)
    out: list[Layout] = []
    for pb in ps.blocks:
        if pb.block.operand not in ("A", "C/D"):
            findings.append(warning("model", pb.block.heading, f"a {pb.block.operand} block "
                                    "of a matrix move is not read"))
            continue
        if not pb.parts:
            findings.append(warning("model", pb.block.heading,
                                    f"the {pb.block.operand} block has no table and no formulas"))
        tail = "" if title.instruction != "movmatrix" else \
            ("a" if pb.block.operand == "A" else "d")
        lid = LayoutId.move(doc_label, move, tail) if move is not None else \
            LayoutId(doc_label, title.instruction, variant, "", tuple(types_of_title(title)))
        for pp in pb.parts:
            out.extend(replace(lay, id=str(lid)) for lay in _layouts_of_part(ctx, pb, pp))
    return out


def section_a_types(layouts: Sequence[Layout]) -> tuple[str, ...]:
    seen: list[str] = []
    for lay in layouts:
        if lay.operand == "A":
            seen.extend(t for t in lay.types if t not in seen)
    return tuple(seen)


def with_section_context(layouts: list[Layout], section: Sequence[Layout]) -> list[Layout]:
    """C/D layouts are shared by every multiplicand type of a section: their id names them
    (``mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2``) so that ids stay unique across sections."""
    a_types = section_a_types(section)
    if not a_types:
        return layouts
    out = []
    for lay in layouts:
        lid = LayoutId.parse(lay.id)
        if lay.operand == "C/D" and not lid.for_types:
            lay = replace(lay, id=str(replace(lid, for_types=tuple(a_types))))
        out.append(lay)
    return out
