"""Matrix move sections -> the layouts they admit, resolved by name in the catalog, and the
prose's facts checked against those layouts' cells.

A move section (ldmatrix, stmatrix, movmatrix) draws its layouts; its syntax block and prose
say which variants exist and what every thread holds.  From

    ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p];   .shape = {.m8n8, .m16n16};
    .m8n8 | 8x8 | 16-bit      (the element size of each shape)

the section admits ``ldmatrix.m8n8.x1.b16`` (and .x2, .x4, each with and without .trans), each
resolved to the catalog's "Matrix Fragments for ldmatrix.m8n8.x1.b16"; a variant the catalog
lacks is a warning naming it.  Then each fact is checked on the resolved cells: "A group of
four threads loads an entire row of the matrix" holds for ``x1`` when threads 4g..4g+3 hold
exactly the eight cells of row g (in the catalog, thread 5 holds (1, 2) and (1, 3); threads
4..7 hold row 1, columns 0..7).  A fact the cells contradict is an error at its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..base.ids import LayoutId
from ..base.source import Finding, SourceText, error, warning
from ..base.variants import Variant
from ..parse.moves import MoveFact, MoveForm, ParsedMoves
from ..text.blocks import Document
from .cells import cells
from .layout import Layout

_BITS = {"b16": 16, "b8": 8}


def _type_names(v: Variant) -> tuple[str, ...]:
    """The catalog names to look for: the type, then its container (``b8`` for a 6- or 4-bit
    format loaded into 8-bit elements)."""
    return (v.a,) if v.a in _BITS else (v.a, "b8")


def _num(v: Variant) -> str:
    """The ``.num`` qualifier as the prose spells it (``x2``; "" for movmatrix)."""
    return f"x{v.num}" if v.num else ""


def _variant(instruction: str, shape: str, num: str, trans: bool, typ: str) -> Variant:
    """A variant the section admits, as a row of the one table (``x2`` -> num 2)."""
    return Variant(instruction, shape, typ, num=int(num[1:]) if num else 0, trans=trans)


# ---- the variants a section admits ----------------------------------------------------------


def _shape_of(size: str) -> str:
    r, c = size.split("x")
    return f"m{r}n{c}"


def admitted(pm: ParsedMoves) -> dict[Variant, MoveForm]:
    """Every variant the templates and the prose's restrictions admit, with the template."""
    restrict_num = {f.get("shape_v", "")[1:]: f.get("nums") for f in pm.facts_of("num_only")}
    type_only = {f.get("shape_v", "")[1:]: f.get("type_v", "")[1:]
                 for f in pm.facts_of("shape_type_only")}
    sizes: dict[str, tuple[int, ...]] = {}
    for t in pm.facts_of("shape_table"):
        for shape, _size, bits, _pos in t.get("rows", ()):
            sizes[shape] = bits
    fmt_shapes: set[tuple[str, str]] = set()
    for t in pm.facts_of("fmt_table"):
        fmt_shapes |= {(row[0], row[1]) for row in t.get("rows", ())}
    mandatory = {_shape_of(f.get("size", "0x0")) for f in pm.facts_of("trans_mandatory")}
    out: dict[Variant, MoveForm] = {}
    for form in pm.forms:
        if not form.template:
            continue
        names = [p for p, _ in form.parts]
        shapes = pm.values_of("shape") if "shape" in names else \
            tuple(p for p in names if p.startswith("m") and "n" in p and p[1].isdigit())
        nums = pm.values_of("num") if "num" in names else ("",)
        trans_opts = [(p, o) for p, o in form.parts if p == "trans"]
        transes = (False, True) if trans_opts and trans_opts[0][1] else \
            ((True,) if trans_opts else (False,))
        # (the type, its packed source format or ""): b16, or b8x16.b6x16_p32 from the
        # destination and source formats the syntax names
        types: tuple[tuple[str, str], ...]
        if "type" in names:
            types = tuple((t, "" if t in _BITS else t) for t in pm.values_of("type"))
        else:
            types = tuple((f"{d}.{s}", s) for d in pm.values_of("dst_fmt")
                          for s in pm.values_of("src_fmt"))
        for shape in shapes:
            for num in nums:
                if shape in restrict_num and num not in restrict_num[shape]:
                    continue
                for trans in transes:
                    if shape in mandatory and not trans:
                        continue
                    for typ, src in types:
                        v = _variant(pm.instruction, shape, num, trans, typ)
                        if shape in type_only and typ != type_only[shape]:
                            continue
                        if shape in sizes and v.source_bits not in sizes[shape]:
                            continue
                        if src and fmt_shapes and (src, shape) not in fmt_shapes:
                            continue
                        out.setdefault(v, form)
    return out


def _why_not(pm: ParsedMoves, v: Variant) -> str:
    """Which statement of the section excludes ``v`` (for an example that uses it)."""
    for f in pm.facts_of("trans_mandatory"):
        if _shape_of(f.get("size", "0x0")) == v.shape and not v.trans:
            return f"'.trans is mandatory' for {f.get('size')} matrices (line {f.src.span(0).line})"
    for f in pm.facts_of("num_only"):
        if f.get("shape_v", "")[1:] == v.shape and _num(v) not in f.get("nums", ()):
            return f"only {', '.join('.' + n for n in f.get('nums'))} are valid for {v.shape}"
    for f in pm.facts_of("shape_type_only"):
        if f.get("shape_v", "")[1:] == v.shape and v.a != f.get("type_v", "")[1:]:
            return f"{f.get('shape_v')} is valid only for {f.get('type_v')}"
    return "no syntax form and shape of the section admits it"


def _example(form: MoveForm) -> Variant | None:
    names = [p for p, _ in form.parts]
    shape = next((p for p in names if p.startswith("m") and "n" in p and p[1:2].isdigit()), "")
    num = next((p for p in names if p.startswith("x") and p[1:].isdigit()), "")
    types = [p for p in names if p.startswith("b") and p[1:2].isdigit()]
    if not shape or not types:
        return None
    return _variant(form.instruction, shape, num, "trans" in names, ".".join(types))


# ---- layouts, resolved by name --------------------------------------------------------------


def _operands(instruction: str) -> tuple[tuple[str, str], ...]:
    """(operand, id tail): ldmatrix fills destination registers, stmatrix reads source
    registers, movmatrix has both (the catalog ids end in ``.a`` / ``.d``)."""
    if instruction == "ldmatrix":
        return (("C/D", ""),)
    if instruction == "stmatrix":
        return (("A", ""),)
    return (("A", "a"), ("C/D", "d"))


def _catalog_match(v: Variant, operand: str, catalog: Sequence[Layout]) -> Layout | None:
    for name in _type_names(v):
        for c in catalog:
            if c.instruction == v.instruction and c.shape_text == v.spelled_shape and \
                    c.operand == operand and name in c.types and c.formulas:
                return c
    return None


def move_layouts(doc: Document, label: str, pm: ParsedMoves, catalog: Sequence[Layout],
                 findings: list[Finding]) -> list[Layout]:
    """The section's variants as layouts: each the catalog's, by its name ("Matrix Fragments
    for ldmatrix.m8n8.x4.b16"); a variant the catalog lacks is a warning naming it; then the
    prose's facts checked on their cells."""
    section = pm.heading.strip()
    number = section.text.split(" ", 1)[0].rstrip(".")
    variants = admitted(pm)
    out: list[tuple[Variant, Layout]] = []
    missing: list[str] = []
    for v in variants:
        for operand, tail in _operands(v.instruction):
            c = _catalog_match(v, operand, catalog)
            if c is None:
                missing.append(f"'Matrix Fragments for {v.key}'"
                               + (f" ({'source' if operand == 'A' else 'destination'})"
                                  if tail else ""))
                continue
            out.append((v, replace(
                c, id=str(LayoutId(label, v.instruction, v.spelled_shape, "", (v.a,), tail)),
                document=doc.name, section=number,
                title=section.text, span=section.span(0), source="catalog", reference_of=c.id,
                notes=c.notes + (f"the section gives this layout only as a figure; its cells "
                                 f"are {c.id}'s",))))
    if missing:
        findings.append(warning(
            "catalog", section, f"the section admits {len(missing)} variant(s) the catalog "
            f"does not state, so their layouts are not checked: {', '.join(missing)}"))
    findings.extend(check_facts(pm, out))
    return [lay for _v, lay in out]


# ---- the facts, checked ----------------------------------------------------------------------


def _cells_by(lay: Layout) -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, element) -> (row, col) of a move layout."""
    return {(lane, i): (int(rc[0]), int(rc[1])) for (_s, lane, i), rc in cells(lay).items()}


def _scopes(pm: ParsedMoves) -> list[tuple[MoveFact, str | None]]:
    """Each fact with the shape the sentences before it narrowed the talk to ("When reading
    8x8 matrices", "For matrix shape 16x16", "For 16x8 matrix shape"), or None (every shape)."""
    scope: str | None = None
    out = []
    for f in pm.facts:
        if f.kind in ("group_bytes", "shape_registers", "per_matrix"):
            scope = _shape_of(f.get("size", "0x0"))
        out.append((f, scope))
    return out


def _swap(v: Variant) -> bool:
    """Whether a sentence about rows speaks of the catalog's columns for ``v``.  The catalog
    states a cell as (row address, place in that row): the matrix as it lies in memory.  The
    prose speaks of the matrix the threads hold; .trans moves it "in column-major format", so
    under .trans (optional for .m8n8, mandatory for .m16n16) a row of the prose is a column
    of the catalog.  movmatrix's catalog states the destination in the transpose's own cells."""
    return v.trans and v.instruction != "movmatrix"


def _which_operand(f: MoveFact) -> str | None:
    which = f.get("which") or ""
    if which in ("input", "source"):
        return "A"
    if which in ("result", "resulting", "destination"):
        return "C/D"
    return None


def check_facts(pm: ParsedMoves, layouts: Sequence[tuple[Variant, Layout]]) -> list[Finding]:
    out: list[Finding] = []
    out.extend(_check_counts(pm))
    regs_by_shape = {_shape_of(f.get("size", "0x0")) for f in pm.facts_of("shape_registers",
                                                                          "per_matrix")}
    # One root cause, one error: sentences that call what a thread (or a group of threads)
    # holds of the same operand by the same wrong word -- "a fragment of a column" and then
    # "an entire column" -- are one error at the first, naming the others.
    found: list[tuple[SourceText, str, list[SourceText]]] = []
    orientation: dict[tuple[str, str], int] = {}
    for f, scope in _scopes(pm):
        for v, lay in layouts:
            if scope is not None and v.shape != scope:
                continue
            op = _which_operand(f)
            if op is not None and lay.operand != op:
                continue
            problem = _check_one(pm, f, v, lay, regs_by_shape)
            if problem is not None:
                where, message = problem
                key = (lay.id, str(f.get("line", "row"))[:3]) \
                    if f.kind in _ORIENTATION else None
                if key is not None and key in orientation:
                    found[orientation[key]][2].append(where)
                else:
                    if key is not None:
                        orientation[key] = len(found)
                    found.append((where, message, []))
                break  # one finding per statement
    for where, message, also in found:
        if also:
            message += "; " + ", ".join(f"{a.span(0).line}:{a.span(0).column} says the same"
                                        for a in also)
        out.append(error("move-prose", where, message))
    out.extend(_check_examples(pm, layouts))
    return out


# the statements of which way a thread's or a group's elements run (row or column)
_ORIENTATION = ("thread_fragment", "group_whole", "group_whole_passive")


def _check_counts(pm: ParsedMoves) -> list[Finding]:
    """The section against itself: ``.xN`` names N matrices, the thread-address table gives
    matrix q's rows to threads 8q..8q+7, addresses addr8q..addr8q+7 are matrix q's."""
    out: list[Finding] = []
    for f in pm.facts_of("num_values"):
        for num, count in zip(f.get("nums", ()), f.get("counts", ())):
            if int(num[1:]) != count:
                out.append(error("move-prose", f.at("counts"), f"'.{num}' is said to indicate "
                                 f"{count} matrices; .{num} moves {int(num[1:])}"))
    per = next((f.get("count2") for f in pm.facts_of("addresses_each")), 8) or 8
    for f in pm.facts_of("num_table"):
        heads = f.get("threads", ())
        for num, cells_, pos in f.get("rows", ()):
            n = int(num[1:]) if num[1:].isdigit() else 0
            for (lo, hi), cell in zip(heads, cells_):
                want = (lo, hi) if hi < n * per else None
                if cell != want:
                    said = f"addr{cell[0]}–addr{cell[1]}" if cell else "no address"
                    should = f"addr{lo}–addr{hi}" if want else "no address (–)"
                    out.append(error(
                        "move-prose", f.src.slice(pos),
                        f"the .{num} row gives {said} to threads {lo}–{hi}; .{num} moves {n} "
                        f"matri{'x' if n == 1 else 'ces'} of {per} rows, whose row addresses "
                        f"addr0–addr{n * per - 1} come from threads 0–{n * per - 1}: threads "
                        f"{lo}–{hi} give {should}"))
                    break
    for g in pm.facts_of("operand_registers"):
        for f in pm.facts_of("shape_registers"):
            regs = f.get("count", 1)
            if regs != 1:
                said = ", ".join(str(n) for n in g.get("ints", ()))
                out.append(warning(
                    "move-prose", g.at("ints"),
                    f"the operand is said to be {said} 32-bit registers as per .num, but for "
                    f"{f.get('size')} matrices the section says {regs} registers per matrix "
                    f"(line {f.src.span(0).line}): this sentence is read for the other shapes"))
    for f in pm.facts_of("shape_table"):
        for shape, size, _bits, pos in f.get("rows", ()):
            if _shape_of(size) != shape:
                out.append(error("move-prose", f.src.slice(pos),
                                 f"the .{shape} row gives the matrix shape {size}; .{shape} is "
                                 f"{shape[1:].split('n')[0]}x{shape.split('n')[1]}"))
    for f in pm.facts_of("address_ranges"):
        for a, b, q, pos in f.get("ranges", ()):
            if (a, b) != (per * q, per * q + per - 1):
                out.append(error("move-prose", f.src.slice(pos),
                                 f"addr{a}–addr{b} are said to be the rows of matrix {q + 1}; "
                                 f"its rows are addr{per * q}–addr{per * q + per - 1}"))
    return out


def _check_one(pm: ParsedMoves, f: MoveFact, v: Variant, lay: Layout,
               regs_by_shape: set[str]) -> tuple[SourceText, str] | None:
    cm = _cells_by(lay)
    lanes = sorted({t for t, _ in cm})
    mem_rows = lay.tile[0] // max(1, v.matrices)  # one matrix's rows in memory
    per_reg = 32 // v.element_bits()
    n_elems = len({i for _, i in cm})
    swap = _swap(v)
    # one matrix as the prose speaks of it: (rows, columns), a row holding ``line_len["row"]``
    frame_rows, frame_cols = (lay.tile[1], mem_rows) if swap else (mem_rows, lay.tile[1])
    line_len = {"row": frame_cols, "column": frame_rows}

    def frame(rc: tuple[int, int]) -> tuple[int, int]:
        """A catalog cell in the prose's matrix: (row, column) within its matrix."""
        r, c = rc[0] % mem_rows, rc[1]
        return (c, r) if swap else (r, c)

    def line_of(rc: tuple[int, int], word: str) -> int:
        """The row (or column) of a cell within its matrix, by the sentence's word."""
        return frame(rc)[1 if word.startswith("column") else 0]

    def matrix_of(rc: tuple[int, int]) -> int:
        return rc[0] // mem_rows

    name = v.key
    note = ""
    if v.instruction == "movmatrix":
        name += " (source)" if lay.operand == "A" else " (destination)"
        if lay.operand == "C/D":
            # the source holds a row of the input; a column of the transpose is that same row
            note = ("; were it so, each thread would hold in d exactly what it holds in a "
                    "(a column of the transpose is a row of the input) and nothing would move")
    kind = f.kind
    if kind == "thread_fragment":
        word = f.get("line", "row")
        for t in lanes:
            for q in range(v.matrices):
                held = [cm[(t, i)] for i in range(n_elems) if matrix_of(cm[(t, i)]) == q]
                if len({line_of(rc, word) for rc in held}) > 1:
                    held = [frame(rc) for rc in held]
                    return f.at("line"), (
                        f"each thread is said to hold a fragment of a {word}"
                        f"{' (read as column under .trans)' if swap else ''}, but in "
                        f"{name} thread {t} holds {', '.join(f'({r}, {c})' for r, c in held)}: "
                        f"{_shape_words(held)}{note}")
        first = frame(cm[(0, 0)]) if (0, 0) in cm else None
        if first is not None and first != (0, 0):
            return f.at("int"), (f"thread 0 is said to receive the first fragment, but in {name} "
                                 f"its first element is ({first[0]}, {first[1]})")
        return None
    if kind in ("group_whole", "group_whole_passive"):
        word = "column" if f.get("line", "row").startswith("column") else "row"
        size = f.get("count", 4)
        for g in range(len(lanes) // size):
            for q in range(v.matrices):
                group = {cm[(t, i)] for t in range(g * size, g * size + size)
                         for i in range(n_elems) if matrix_of(cm[(t, i)]) == q}
                by_line: dict[int, int] = {}
                for rc in group:
                    by_line[line_of(rc, word)] = by_line.get(line_of(rc, word), 0) + 1
                part = next(((k, n) for k, n in sorted(by_line.items())
                             if n != line_len[word]), None)
                if part is not None:
                    return f.at("line"), (
                        f"a group of {size} threads is said to hold an entire {word}, but in "
                        f"{name} threads {g * size}–{g * size + size - 1} hold {part[1]} of the "
                        f"{line_len[word]} cells of {word} {part[0]} of matrix {q}"
                        f"{' (a column of the catalog under .trans)' if swap else ''}{note}")
        return None
    if kind == "thread_columns":
        ncols, nrows = f.get("count", 1), f.get("count2", 1)
        for t in lanes:
            for q in range(v.matrices):
                held = [frame(cm[(t, i)]) for i in range(n_elems)
                        if matrix_of(cm[(t, i)]) == q]
                cs = sorted({c for _, c in held})
                rs = {r for r, _ in held}
                if len(cs) != ncols or cs[-1] - cs[0] != ncols - 1 or len(rs) != nrows:
                    return f.at("count"), (
                        f"each thread is said to hold {ncols} consecutive columns across "
                        f"{nrows} row(s), but in {name} thread {t} holds columns {cs} of "
                        f"{len(rs)} row(s) of matrix {q}"
                        f"{' (the catalog transposed, as .trans moves it)' if swap else ''}")
        return None
    if kind == "group_bytes":
        size, nbytes = f.get("count", 4), int(f.get("int", "0"))
        quad = {cm[(t, i)] for t in range(size) for i in range(n_elems)
                 if matrix_of(cm[(t, i)]) == 0}
        got = len(quad) * v.element_bits() // 8
        if got != nbytes:
            return f.at("int"), (f"a group of {size} consecutive threads is said to move "
                                 f"{nbytes} bytes, but in {name} threads 0–{size - 1} hold "
                                 f"{len(quad)} {v.element_bits()}-bit elements of a matrix "
                                 f"({got} bytes)")
        return None
    if kind == "next_register":
        if f.get("num_v", "")[1:] != _num(v):
            return None
        for q in f.get("ordinals", ()):
            reg = q - 1
            for t in lanes:
                for i in range(reg * per_reg, reg * per_reg + per_reg):
                    if (t, i) in cm and matrix_of(cm[(t, i)]) != reg:
                        return f.at("ordinals"), (
                            f"matrix {q} is said to be in register {reg} of each thread, but "
                            f"in {name} thread {t}'s element {i} (register {reg}) is in matrix "
                            f"{matrix_of(cm[(t, i)])}")
        return None
    if kind in ("shape_registers", "per_matrix"):
        if kind == "shape_registers":
            regs, per, bits = f.get("count", 0), f.get("count2", 0), _bits_of(f.get("bits"))
            said = regs * per
        else:
            said, bits, regs = f.get("count", 0), v.element_bits(), 0
        each = n_elems // max(1, v.matrices)
        if said != each or (bits and bits != v.element_bits()):
            return f.at("count"), (
                f"each thread is said to hold {said} {bits}-bit elements of each matrix"
                f"{f' ({regs} registers)' if regs else ''}, but {name} gives each thread "
                f"{each} {v.element_bits()}-bit elements of each of its {v.matrices} matrices")
        return None
    if kind == "operand_registers":
        if v.shape in regs_by_shape:
            return None  # the shape's own sentence says its count (m16n16: two per matrix)
        counts = dict(zip(pm.values_of("num"), f.get("ints", ())))
        want = counts.get(_num(v))
        have = n_elems // per_reg
        if want is not None and want != have:
            return f.at("ints"), (f"the operand is said to be {want} 32-bit register(s) for "
                                  f".{_num(v)}, but {name} gives each thread {n_elems} "
                                  f"{v.element_bits()}-bit elements ({have} registers)")
        return None
    return None


def _shape_words(held: Sequence[tuple[int, int]]) -> str:
    if len({r for r, _ in held}) == 1:
        return "one row, several columns"
    if len({c for _, c in held}) == 1:
        return "one column, several rows"
    return "several rows and columns"


def _bits_of(text: Any) -> int:
    return int(str(text).replace("-", " ").split()[0]) if text else 0


def _check_examples(pm: ParsedMoves, layouts: Sequence[tuple[Variant, Layout]],
                    ) -> list[Finding]:
    """Each example instruction is a variant the section admits, with as many registers as
    its layout fills (the catalog's, where the variant resolved; else the prose's count, one
    register a matrix unless a sentence of its shape says more)."""
    out: list[Finding] = []
    ok = admitted(pm)
    per_matrix: dict[str, int] = {}
    for f in pm.facts_of("shape_registers"):
        per_matrix[_shape_of(f.get("size", "0x0"))] = f.get("count", 1)
    registers: dict[Variant, int] = {}
    for v, lay in layouts:
        n = len({i for (_s, _lane, i) in cells(lay)})
        registers[v] = n * v.element_bits() // 32
    for form in pm.forms:
        ex = _example(form) if not form.template else None
        if ex is None:
            continue
        v = ex
        if v not in ok:
            out.append(error("move-prose", form.src, f"the example {v.key} is not a variant "
                             f"this section admits: {_why_not(pm, v)}"))
            continue
        want = registers.get(v, per_matrix.get(v.shape, 1) * v.matrices)
        vec = max(form.operands, default=0)
        if vec and vec != want:
            whose = "its layout fills" if v in registers else \
                f"its {v.matrices} matri{'x' if v.matrices == 1 else 'ces'} need"
            out.append(error("move-prose", form.src,
                             f"the example {v.key} names {vec} register(s); {whose} {want}"))
    return out
