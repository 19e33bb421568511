"""The audit: every atom, every operand, one verdict against the spec (and the correction).

For each atom read from the headers (``formal.audit.atoms``) the instruction named by its
asm selects the catalog layout of each operand (``layout_serves`` over the variants row);
``formal.audit.compare`` decides.  Verdicts:

    equal        CuTe's (thread, value) -> index map is the spec's
    differs      with the smallest counterexample (thread, value, CuTe's cell, the spec's)
    not-in-spec  the catalog has no layout for the instruction (its message names the
                 variant or operand missing)
    unreadable   the layout or the instruction could not be read (why)

Where the catalog's correction changes an operand's layout (the spec's errata), the operand
gets a second entry ``against = "correction"``, so the report says which one CuTe follows:
``SM80_16x8x256_S32U1U1S32_TN_XORPOPC`` A differs from the spec as written at thread 0,
value 32 and equals the correction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..base.options import picked
from .atoms import Atom, Env, Operand, read_atoms_env
from .compare import (
    Comparison,
    Counterexample,
    SpecTable,
    compare_with_spec,
    first_difference,
    index_array,
    same_table,
    spec_cells,
    spec_table,
)
from .moves import compare_move, element_bits
from .project import (
    VARIANTS,
    Finding,
    Layout,
    Variant,
    cells_and_names,
    layout_serves,
    matrix_layout_serves,
    scale_spec_layouts,
    spec_copies,
    spec_layouts,
    tc_meta_spec_layouts,
    tc_scale_spec_layouts,
)
from .scale import ScaleComparison, audit_scale_env
from .smem import smem_atoms
from .tc_meta import TcMetaComparison, audit_tc_meta_env
from .tc_scale import TcScaleComparison, audit_tc_scale_env
from .tmem import compare_tmem
from .tmem_copy import compare_copy
from .umma import compare_d
from .views import broadcast, metadata, sparse_a, whole_tile

SPEC_OPERAND = {"A": "A", "B": "B", "C": "C/D", "metadata": "metadata"}
# the executor's name of a wgmma operand (formal.base.matrix_variants.CATALOG_OPERAND)
WGMMA_OPERAND = {"A": "A", "C": "C/D", "metadata": "meta"}


@dataclass(frozen=True)
class Entry:
    operand: str
    verdict: str
    against: str = "spec"  # "spec" | "correction"
    counterexample: Counterexample | None = None
    message: str = ""
    spec_layout: str = ""
    cute: str = ""  # the CuTe layout as shape:stride
    line: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"operand": self.operand, "verdict": self.verdict, "against": self.against,
                "counterexample": self.counterexample.as_json()
                if self.counterexample is not None else None,
                "message": self.message, "spec_layout": self.spec_layout or None,
                "cute": self.cute or None}


@dataclass(frozen=True)
class AtomResult:
    atom: Atom
    entries: tuple[Entry, ...]

    @property
    def instruction(self) -> str:
        return str(self.atom.instruction.opcode) if self.atom.instruction is not None else ""

    def as_json(self) -> dict[str, Any]:
        return {"atom": self.atom.name, "file": self.atom.file, "line": self.atom.line,
                "instruction": self.instruction or None,
                "operands": [e.as_json() for e in self.entries]}


@dataclass(frozen=True)
class Audit:
    results: tuple[AtomResult, ...]
    findings: tuple[Finding, ...] = field(default=())
    # the block-scaled atoms' scale-factor layouts (SFALayout / SFBLayout, SM120) against the
    # catalog's block-scale layouts (``formal.audit.scale``), by (lane, byte)
    scales: tuple[ScaleComparison, ...] = field(default=())
    # the SM100 block-scaled UMMA atoms' scale factors in tensor memory (tmem_sf_frg) against
    # the catalog's tcgen05 block-scale layouts (``formal.audit.tc_scale``), factor by factor
    tc_scales: tuple[TcScaleComparison, ...] = field(default=())
    # the SM100 sparse UMMA atoms' metadata in tensor memory (tmem_e_frg) against the
    # catalog's tcgen05 sparse-metadata layouts (``formal.audit.tc_meta``), bit by bit
    tc_metas: tuple[TcMetaComparison, ...] = field(default=())

    def counts(self) -> dict[str, int]:
        c = Counter(e.verdict for r in self.results for e in r.entries)
        return {k: c.get(k, 0) for k in ("equal", "differs", "not-in-spec", "unreadable")}

    def scale_counts(self) -> dict[str, int]:
        c = Counter(s.verdict for s in self.scales)
        return {k: c.get(k, 0) for k in ("equal", "differs", "not-in-spec", "unreadable")}

    def tc_scale_counts(self) -> dict[str, int]:
        c = Counter(s.verdict for s in self.tc_scales)
        return {k: c.get(k, 0) for k in ("equal", "differs", "not-in-spec", "unreadable")}

    def tc_meta_counts(self) -> dict[str, int]:
        c = Counter(s.verdict for s in self.tc_metas)
        return {k: c.get(k, 0) for k in ("equal", "differs", "not-in-spec", "unreadable")}

    @property
    def compared(self) -> int:
        """Checks that compared something with the spec (equal or differs)."""
        n = self.counts()
        s, t, e = self.scale_counts(), self.tc_scale_counts(), self.tc_meta_counts()
        return sum(x["equal"] + x["differs"] for x in (n, s, t, e))

    @property
    def differs(self) -> bool:
        """Does an operand (or a scale-factor layout) differ from the spec where no correction
        says CuTe is right?"""
        if any(s.verdict == "differs" for s in self.scales) or \
                any(t.verdict == "differs" for t in self.tc_scales) or \
                any(t.verdict == "differs" for t in self.tc_metas):
            return True
        for r in self.results:
            ok = {e.operand for e in r.entries if e.against == "correction"
                  and e.verdict == "equal"}
            if any(e.verdict == "differs" and e.operand not in ok for e in r.entries):
                return True
        return False

    def kept(self, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> Audit:
        """``audit --select`` / ``--ignore``: the operands and scale layouts whose verdict
        they keep, and every equal one (not a finding: reported whatever is selected)."""
        def keep(verdict: str) -> bool:
            return verdict == "equal" or picked(verdict, select, ignore)
        return replace(self, results=tuple(
            replace(r, entries=tuple(e for e in r.entries if keep(e.verdict)))
            for r in self.results), scales=tuple(s for s in self.scales if keep(s.verdict)),
            tc_scales=tuple(s for s in self.tc_scales if keep(s.verdict)),
            tc_metas=tuple(s for s in self.tc_metas if keep(s.verdict)))

    def summary(self) -> dict[str, Any]:
        atoms_by: Counter[str] = Counter()
        for r in self.results:
            vs = {e.verdict for e in r.entries if e.against == "spec"}
            worst = next((v for v in ("differs", "unreadable", "not-in-spec", "equal")
                          if v in vs), "equal")
            atoms_by[worst] += 1
        return {"atoms": len(self.results), "operands": self.counts(),
                "atoms_by_worst_verdict": dict(sorted(atoms_by.items())),
                "scale_factors": self.scale_counts(),
                "tcgen05_scale_factors": self.tc_scale_counts(),
                "tcgen05_sparse_metadata": self.tc_meta_counts(),
                "warnings": len(self.findings)}


def spec_for(layouts: Sequence[Layout], atom: Atom, operand: str) -> Layout | None:
    """The first of ``layouts`` that states ``operand`` of the atom's variant, else None."""
    v = atom.instruction.variant if atom.instruction is not None else None
    if v is None:
        return None
    # both tests below hold only for a layout of the variant's own instruction
    layouts = of_instruction(layouts, v.instruction)
    if v.wgmma:
        name = WGMMA_OPERAND.get(operand, "")
        for lay in layouts if name else ():
            if matrix_layout_serves(v, name, lay.instruction, lay.shape_text, lay.operand,
                                    lay.types, lay.n_values):
                return _at_n(lay, v.n) if lay.n_values else lay
        return None
    op = SPEC_OPERAND.get(operand, "")
    for lay in layouts:
        if lay.operand == op and layout_serves(v, op, lay.instruction, str(lay.shape),
                                               lay.types, lay.id, lay.arrangement):
            return lay
    return None


# id of a tuple of layouts -> the tuple and its layouts by instruction, each group in order
_BY_INSTRUCTION: dict[int, tuple[Sequence[Layout], dict[str, tuple[Layout, ...]]]] = {}


def of_instruction(layouts: Sequence[Layout], instruction: str) -> Sequence[Layout]:
    """The layouts of ``instruction`` among ``layouts``, in their order (grouped once a
    process for a tuple: the catalog's are asked for every operand of every atom; a list,
    which may change, is filtered each time)."""
    if not isinstance(layouts, tuple):
        return [lay for lay in layouts if lay.instruction == instruction]
    hit = _BY_INSTRUCTION.get(id(layouts))
    if hit is None or hit[0] is not layouts:
        groups: dict[str, list[Layout]] = {}
        for lay in layouts:
            groups.setdefault(lay.instruction, []).append(lay)
        hit = _BY_INSTRUCTION[id(layouts)] = (
            layouts, {k: tuple(g) for k, g in groups.items()})
    return hit[1].get(instruction, ())


def _entry(op: Operand, against: str, lay: Layout, table: SpecTable | str,
           atom: Atom) -> Entry:
    cute = str(op.layout) if op.layout is not None else ""
    if isinstance(table, str):
        return Entry(op.operand, "unreadable", against, None,
                     f"the {against}'s layout {lay.short_id} has no (thread, value) map: "
                     f"{table}", lay.short_id, cute, op.line)
    assert op.layout is not None
    got: Comparison = compare_with_spec(op.layout, atom.thr_id, table)
    return Entry(op.operand, got.verdict, against, got.counterexample, got.message,
                 lay.short_id, cute, op.line)


def _at_n(lay: Layout, n: int) -> Layout:
    """``lay.at(n)``, its (thread, value) table cut from the largest N's: the layout at N is
    each thread's first elements (``Layout.at``), so the table is each row's first values on
    the 64 x N tile -- the same cells ``tv_view`` would enumerate afresh for every N."""
    at = lay.at(n)
    memo = at.__dict__.setdefault("_ptxlayout_audit_table", [])
    full = spec_table(lay)
    if not memo and not isinstance(full, str):
        memo.append(SpecTable(at.id, at.tile[0], at.tile[1], full.swapped,
                              tuple(row[:at.elements] for row in full.cells), full.note))
    return at


def _smem_entry(op: Operand, v: Variant, atom: Atom) -> Entry:
    """A GMMA operand the descriptor names in shared memory: the whole tile, every thread."""
    assert op.layout is not None
    m, n, k = v.dims.m, v.dims.n, v.dims.k
    rows, cols, swapped = (m, k, False) if op.operand == "A" else (k, n, True)
    what = f"descriptor:{v.instruction}.{v.shape}.{op.operand}"
    threads = op.layout.mode(0).size
    found = whole_tile(op.layout, rows, cols, swapped)
    cute = str(op.layout)
    if found is None:
        return Entry(op.operand, "equal", "spec", None,
                     f"shared memory: each of the {threads} threads names the whole {rows} x "
                     f"{cols} tile of the descriptor, each cell once", what, cute, op.line)
    t, val, got, want = found
    return Entry(op.operand, "differs", "spec", Counterexample(t, val, got, want),
                 "shared memory: " + _say(t, val, got, want), what, cute, op.line)


def _say(t: int, v: int, got: tuple[int, int] | None, want: tuple[int, int] | None,
         names: tuple[str, str] = ("row", "col")) -> str:
    def c(x: tuple[int, int] | None) -> str:
        return f"({names[0]} {x[0]}, {names[1]} {x[1]})" if x is not None else "no cell"
    return f"thread {t}, value {v}: CuTe says {c(got)}, the spec says {c(want)}"


def _sparse_per(atom: Atom) -> int:
    """Logical elements per stored one of sparse A (``sparse_elem<2, half_t>``: 2)."""
    for which, text in atom.value_types:
        if which == "A" and text.startswith("sparse_elem<"):
            head = text[len("sparse_elem<"):].split(",", 1)[0]
            if head.isdigit():
                return int(head)
    return 2


# (operand, CuTe layout, the spec layout's identity, logical elements a stored one) -> the
# layout and the entry: the GMMA atoms of one shape share their layouts
_VIEWED: dict[tuple[Any, ...], tuple[Layout, Entry]] = {}


def _view_entry(op: Operand, lay: Layout, atom: Atom) -> Entry:
    """wgmma.sp's register A (compressed) and metadata, through ``formal.audit.views``."""
    key = (op.operand, op.layout, id(lay), _sparse_per(atom))
    hit = _VIEWED.get(key)
    if hit is None or hit[0] is not lay:
        hit = _VIEWED[key] = (lay, _view(op, lay, atom))
    return replace(hit[1], line=op.line)


def _view(op: Operand, lay: Layout, atom: Atom) -> Entry:
    assert op.layout is not None and atom.instruction is not None
    v = atom.instruction.variant
    assert v is not None
    cute = str(op.layout)
    if op.layout.rank != 2:
        return Entry(op.operand, "unreadable", "spec", None,
                     f"{cute} is not a (thread, value) layout (rank 2)", lay.short_id, cute,
                     op.line)
    idx = index_array(op.layout)
    rows, k = v.dims.m, v.dims.k
    names = ("row", "col")
    if op.operand == "A":
        table = spec_table(lay)
        if isinstance(table, str):
            return Entry(op.operand, "unreadable", "spec", None, table, lay.short_id, cute,
                         op.line)
        got = sparse_a(idx, rows, _sparse_per(atom))
        want = spec_cells(table, list(range(len(table.cells))))
        note = "compressed A (two logical elements to a stored one)"
    else:
        _names, raw = cells_and_names(lay)
        got, want = metadata(idx, rows, k, raw)
        names = ("row", "chunk")
        note = "metadata fields (row, chunk) under the selector that has each lane supply them"
    found = first_difference(got, want)
    if found is None:
        return Entry(op.operand, "equal", "spec", None, note, lay.short_id, cute, op.line)
    t, val, g, w = found
    return Entry(op.operand, "differs", "spec", Counterexample(t, val, g, w),
                 f"{note}: " + _say(t, val, g, w, names), lay.short_id, cute, op.line)


MOVE_OPERANDS = {"ldmatrix": {"dst": "r"}, "stmatrix": {"src": "r"},
                 "movmatrix": {"src": "a", "dst": "d"}}


def _move_entries(atom: Atom, v: Variant) -> tuple[Entry, ...] | None:
    """LDSM / STSM / MOVM: both bit layouts read, then ``formal.audit.moves`` decides."""
    ops = {op.operand: op for op in atom.operands}
    src, dst = ops.get("src"), ops.get("dst")
    if src is None or dst is None or src.layout is None or dst.layout is None:
        return None
    found: dict[str, Layout] = {}
    for side, name in MOVE_OPERANDS[v.instruction].items():
        for lay in of_instruction(spec_layouts(False), v.instruction):
            if matrix_layout_serves(v, name, lay.instruction, lay.shape_text, lay.operand,
                                    lay.types, lay.n_values):
                found[side] = lay
                break
    spec = found.get("dst" if v.instruction != "stmatrix" else "src")
    if spec is None or (v.instruction == "movmatrix" and "src" not in found):
        return None
    rows = v.tile[0]
    got = compare_move(v.instruction, src.layout, dst.layout, element_bits(v.a), rows, spec,
                       found.get("src"))
    out = []
    for op in (src, dst):
        verdict, cx, msg = got[op.operand]
        mine = found.get(op.operand)
        out.append(Entry(op.operand, verdict, "spec", cx, msg,
                         mine.short_id if mine is not None else f"shared memory rows of "
                         f"{v.opcode}", str(op.layout), op.line))
    return tuple(out)


def _tmem_entries(atom: Atom, v: Variant) -> tuple[Entry, ...] | None:
    """SM100's TMEM load / store atoms: ``formal.audit.tmem`` decides, side by side."""
    ops = {op.operand: op for op in atom.operands}
    src, dst = ops.get("src"), ops.get("dst")
    if src is None or dst is None or src.layout is None or dst.layout is None:
        return None
    spec = next((lay for lay in spec_layouts(False) if lay.id.endswith(":" + v.key)), None)
    if spec is None:
        return None
    load = v.instruction == "tcgen05.ld"
    reg, mem = (dst, src) if load else (src, dst)
    assert atom.instruction is not None
    got = compare_tmem(v, reg.layout, mem.layout, atom.val_id, spec,  # type: ignore[arg-type]
                       atom.instruction.immediates)
    out = []
    for op, side in ((src, "tmem" if load else "reg"), (dst, "reg" if load else "tmem")):
        verdict, cx, msg = got[side]
        out.append(Entry(op.operand, verdict, "spec", cx, msg, spec.short_id, str(op.layout),
                         op.line))
    return tuple(out)


def _copy_entries(atom: Atom) -> tuple[Entry, ...] | None:
    """SM100's UTCCP atoms (tcgen05.cp): ``formal.audit.tmem_copy`` decides, source bit by
    source bit, against the catalog's form of the atom's own asm (None: no such form)."""
    ops = {op.operand: op for op in atom.operands}
    src, dst = ops.get("src"), ops.get("dst")
    if atom.instruction is None or src is None or dst is None or src.layout is None \
            or dst.layout is None:
        return None
    words = [w for w in str(atom.instruction.opcode).split(".")[2:]
             if not w.startswith(("cta_group", "b8x16", "b6x16", "b4x16"))]
    form = ".".join(["tcgen05.cp", *words])
    spec = next((c for c in spec_copies() if c.id == form), None)
    if spec is None:
        return None
    got = compare_copy(src.layout, dst.layout, atom.val_id, spec)
    return tuple(Entry(op.operand, got[op.operand][0], "spec", got[op.operand][1],
                       got[op.operand][2], spec.id, str(op.layout), op.line)
                 for op in (src, dst))


# what the catalog would need to compare an SM100 UMMA atom's operands with, by operand
UMMA_MISSING = {
    "A": "no tcgen05.mma (thread, value) row for A: CuTe's ALayout is one thread holding the "
         "whole M x K tile, whose cells are in shared memory (or TMEM for _TS) where the "
         "descriptor UMMA::make_umma_desc builds at run time puts them, from a swizzle atom "
         "(the smem-atom rows compare those atoms with the spec's canonical layouts)",
    "B": "no tcgen05.mma (thread, value) row for B: CuTe's BLayout is one thread holding the "
         "whole N x K tile of the shared-memory descriptor (the smem-atom rows compare its "
         "swizzle atoms)",
    "metadata": "no sparse tcgen05.mma metadata layout (PTX ISA 9.7.16.10.8)",
}


def _umma_entries(atom: Atom, env: Env | None) -> tuple[Entry, ...]:
    """An SM100 UMMA atom (``tcgen05.mma``): D's place in tensor memory against the catalog's
    data-path layouts (``formal.audit.umma``: CuTe's ``tmem_frg`` at every M and N); A and B
    not in the catalog, each saying what it lacks."""
    assert atom.instruction is not None
    op = atom.instruction.opcode
    cta = f"cta_group::{op.qualifier('cta_group') or '1'}"
    kind = op.qualifier("kind")
    out = []
    for o in atom.operands:
        if o.operand == "C" and env is not None:
            d = compare_d(env, atom, int(op.qualifier("cta_group") or 1),
                          "sp" in op.words, "ws" in op.words)
            out.append(Entry("C", d.verdict, "spec", d.counterexample,
                             f"{op} ({kind or '?'}, {cta}): {d.message}", d.spec_layout,
                             str(o.layout) if o.layout is not None else "", o.line))
            continue
        need = UMMA_MISSING.get(o.operand, "no layout of this operand").format(cta=cta)
        out.append(Entry(o.operand, "not-in-spec", "spec", None,
                         f"{op} ({kind or '?'}, {cta}): the catalog has {need}", "",
                         str(o.layout) if o.layout is not None else "", o.line))
    return tuple(out)


def audit_atom(atom: Atom, env: Env | None = None) -> AtomResult:
    out: list[Entry] = []
    mv = atom.instruction.variant if atom.instruction is not None else None
    if mv is not None and mv.move:
        moved = _move_entries(atom, mv)
        if moved is not None:
            return AtomResult(atom, moved)
    if mv is not None and mv.tmem:
        tm = _tmem_entries(atom, mv)
        if tm is not None:
            return AtomResult(atom, tm)
    if atom.instruction is not None and atom.instruction.head == "tcgen05.mma" and mv is None:
        return AtomResult(atom, _umma_entries(atom, env))
    if atom.instruction is not None and atom.instruction.head == "tcgen05.cp":
        copied = _copy_entries(atom)
        if copied is not None:
            return AtomResult(atom, copied)
    spec, fixed = spec_layouts(False), spec_layouts(True)
    fixed_by_id = {lay.id: lay for lay in fixed}
    for op in atom.operands:
        cute = str(op.layout) if op.layout is not None else ""
        if op.layout is None:
            out.append(Entry(op.operand, "unreadable", "spec", None, op.why, "", "", op.line))
            continue
        if atom.instruction is None:
            out.append(Entry(op.operand, "unreadable", "spec", None,
                             f"no instruction: {atom.why}", "", cute, op.line))
            continue
        v = atom.instruction.variant
        if v is not None and v.wgmma and op.operand in ("A", "B") and broadcast(op.layout):
            out.append(_smem_entry(op, v, atom))
            continue
        lay = spec_for(spec, atom, op.operand)
        if lay is not None and v is not None and v.sparse and v.wgmma \
                and op.operand in ("A", "metadata"):
            out.append(_view_entry(op, lay, atom))
            continue
        if lay is None:
            what = str(atom.instruction.opcode)
            if atom.instruction.variant is None and "block_scale" in \
                    atom.instruction.opcode.words:
                have = sorted(v.key for v in VARIANTS if v.scale)
                msg = (f"the catalog's variants table has no row for {what}: of the "
                       f"block-scaled mma forms it states only {', '.join(have)}; this "
                       "one's A/B/C are not compared (its scale factors are, under "
                       "scale_factors)")
            elif atom.instruction.head == "tcgen05.cp":
                msg = (f"the catalog's tcgen05.cp forms (catalog/tensor-copy/tcgen05.md) have "
                       f"no {what}, or its source and destination layouts are not (CTA, "
                       "value) layouts: CuTe's layout here is not compared")
            elif atom.instruction.variant is None:
                msg = (f"the catalog's variants table has no row for {what}: no "
                       f"{atom.instruction.head} layout of that shape and types is stated")
            else:
                msg = (f"the catalog states no {op.operand} layout of "
                       f"{atom.instruction.variant.key}")
            out.append(Entry(op.operand, "not-in-spec", "spec", None, msg, "", cute, op.line))
            continue
        table = spec_table(lay)
        out.append(_entry(op, "spec", lay, table, atom))
        corr = fixed_by_id.get(lay.id)
        if corr is None:
            continue
        ctable = spec_table(corr)
        if isinstance(table, str) != isinstance(ctable, str) or (
                not isinstance(table, str) and not isinstance(ctable, str)
                and not same_table(table, ctable)):
            out.append(_entry(op, "correction", corr, ctable, atom))
    return AtomResult(atom, tuple(out))


SCALE_HEADER = "mma_traits_sm120.hpp"
TC_SCALE_HEADER = "mma_traits_sm100.hpp"


def audit_cute(paths: Sequence[str | Path], include_dirs: Sequence[Path] = (),
               progress: Any = None) -> Audit:
    """Read the headers and audit every atom they define (``progress(done, total)``: told
    of each atom, as ``formal.base.progress`` bars are); where the SM120 block-scaled atoms
    are among them, their scale-factor layouts too (``formal.audit.scale``)."""
    atoms, findings, env = read_atoms_env(paths, include_dirs)
    results = []
    for k, a in enumerate(atoms):
        if progress is not None:
            progress(k, len(atoms))
        results.append(audit_atom(a, env))
    if progress is not None:
        progress(len(atoms), len(atoms))
    for atom, verdicts in smem_atoms(env):  # the UMMA/GMMA shared-memory swizzle atoms
        results.append(AtomResult(atom, tuple(
            Entry(f"b{v.bits}" if v.bits else "atom", v.verdict, "spec", None, v.message,
                  v.spec_layout, v.cute, atom.line) for v in verdicts)))
    scales: list[ScaleComparison] = []
    if any(Path(h.path).name == SCALE_HEADER for h in env.headers):
        scales = audit_scale_env(env, scale_spec_layouts())
    tc_scales: list[TcScaleComparison] = []
    tc_metas: list[TcMetaComparison] = []
    if any(Path(h.path).name == TC_SCALE_HEADER for h in env.headers):
        tc_scales = audit_tc_scale_env(env, atoms, tc_scale_spec_layouts())
        tc_metas = audit_tc_meta_env(env, atoms, tc_meta_spec_layouts())
    return Audit(tuple(results), tuple(findings), tuple(scales), tuple(tc_scales),
                 tuple(tc_metas))
