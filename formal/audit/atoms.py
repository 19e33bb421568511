"""From header syntax to atoms: every ``MMA_Traits`` / ``Copy_Traits`` with its layouts
evaluated to ``shape:stride`` and its PTX instruction read from the atom's own asm.

Given the traits header and the arch header it includes,

    using SM80_8x8_Row = Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_16,_1>,_8>>;
    template <> struct MMA_Traits<SM80_8x8x4_F64F64F64F64_TN> { using CLayout = SM80_8x8_Row; };
    struct SM80_8x8x4_F64F64F64F64_TN { ... asm volatile("mma.sync.aligned.m8n8k4.row.col"
                                                        ".f64.f64.f64.f64 ..." ...) };

``read_atoms([traits])`` gives ``Atom(name="SM80_8x8x4_F64F64F64F64_TN", instruction=
"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", operands=(..., Operand("C",
CuteLayout(((4,8),2), ((16,1),8)))))``.  Inheritance (``: MMA_Traits<BASE>``), aliases
(also templated ones such as ``CLayout_64xN<N>`` with ``Int<N/8>``, and
``Copy_Traits<X>::DstLayout``) are followed; a trait templated on parameters its layouts do
not use (GMMA's major-ness and scale arguments) is one atom for the whole family.  An
operand whose type cannot be evaluated keeps ``layout = None`` and the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.cute import CuteLayout, IntTuple, compact_left, congruent, show_tuple
from .header import (
    Alias,
    CppBinOp,
    CppBraced,
    CppChoice,
    CppHeader,
    CppNeg,
    CppParen,
    Opaque,
    Pack,
    Struct,
    TName,
    Type,
)
from .project import Finding, Span, warning
from .ptx import Instruction, instruction_of
from .store import cached_header

TRAITS = {"MMA_Traits": ("mma", (("A", "ALayout"), ("B", "BLayout"), ("C", "CLayout"),
                                 ("metadata", "ELayout"))),
          "Copy_Traits": ("copy", (("src", "SrcLayout"), ("dst", "DstLayout")))}


@dataclass(frozen=True)
class Operand:
    operand: str  # "A" | "B" | "C" | "metadata" | "src" | "dst"
    layout: CuteLayout | None
    line: int = 0  # where its alias is written
    why: str = ""  # why layout is None


@dataclass(frozen=True)
class Atom:
    name: str
    kind: str  # "mma" | "copy" | "smem" (a swizzle atom, formal.audit.smem)
    file: str
    line: int
    instruction: Instruction | None
    operands: tuple[Operand, ...]
    thr_id: CuteLayout | None = None
    shape_mnk: tuple[int, ...] | None = None
    # a copy atom's ValID: logical bit -> the bit's address (SM100's TMEM atoms: lane * 2^21
    # + column * 32 + bit), None where it has none or it cannot be read
    val_id: CuteLayout | None = None
    value_types: tuple[tuple[str, str], ...] = ()
    params: tuple[str, ...] = ()  # template parameters the family ranges over
    why: str = ""  # why instruction is None


class _Unreadable(Exception):
    pass


def include_root(header: Path) -> Path | None:
    """The directory that holds ``cute/`` above a header (``.../include``)."""
    for parent in header.resolve().parents:
        if parent.name == "cute":
            return parent.parent
    return None


def _follow(inc: str) -> bool:
    """An include that can define atoms: a CuTe arch or atom header (``<cute/arch/...>``) or a
    file beside the includer (``"mma_traits_sm90_gmma_ext.hpp"``, the continuation files)."""
    base = inc.rsplit("/", 1)[-1]
    return (inc.startswith(("cute/arch/", "cute/atom/")) or "/" not in inc) and \
        base.startswith(("mma_sm", "copy_sm", "mma_traits_sm", "copy_traits_sm",
                         "tmem_allocator_sm"))


class Env:
    """Every alias, trait and arch struct of a set of headers and what they include.

    ``continued`` maps a header to the headers it includes by a bare file name (CUTLASS's
    ``#include "mma_traits_sm90_gmma_ext.hpp"`` at the end of ``mma_traits_sm90_gmma.hpp``):
    their atoms are the includer's, reported with it."""

    def __init__(self, headers: Sequence[Path], include_dirs: Sequence[Path] = ()) -> None:
        self.headers: list[CppHeader] = []
        self.findings: list[Finding] = []
        self.aliases: dict[str, Alias] = {}
        self.traits: dict[tuple[str, str], tuple[Struct, str]] = {}
        self.arch: dict[str, Struct] = {}
        # explicit specializations with an asm of their own (``template <> struct
        # SM120_16x8x32_TN<float_e2m1_t, float_e2m1_t, float> { asm(...) }``), by name
        self.special: dict[str, list[Struct]] = {}
        self.continued: dict[str, list[str]] = {}
        seen: set[Path] = set()
        todo = [Path(h) for h in headers]
        while todo:
            p = todo.pop(0)
            rp = p.resolve()
            if rp in seen:
                continue
            seen.add(rp)
            h = cached_header(p)  # once a process, and between runs by its text's hash
            self.headers.append(h)
            self.findings.extend(h.findings)
            roots = [r for r in (include_root(p), *include_dirs) if r is not None]
            for inc in h.includes:
                # an arch header's includes are followed only to its continuation files
                if not _follow(inc) or (rp.parent.name == "arch" and "/" in inc):
                    continue
                if "/" not in inc:
                    near = p.parent / inc
                    if near.is_file():
                        todo.append(near)
                        self.continued.setdefault(str(p), []).append(str(near))
                    continue
                hit = next((r / inc for r in roots if (r / inc).is_file()), None)
                if hit is not None:
                    todo.append(hit)
            for a in h.aliases:
                self.aliases.setdefault(a.name, a)
            for s in h.structs:
                if s.type is None:
                    continue
                last = s.type.last
                if last.name in TRAITS and last.args:
                    atom = last.args[0]
                    if isinstance(atom, Type):
                        self.traits.setdefault((last.name, atom.last.name), (s, h.path))
                elif last.args is None and (s.asm or s.calls):
                    self.arch.setdefault(last.name, s)
                elif last.args is not None and s.asm:
                    self.special.setdefault(last.name, []).append(s)

    # ---- evaluation ----------------------------------------------------------------------
    def int_tuple(self, e: Any, env: dict[str, int], depth: int = 0) -> IntTuple:
        if depth > 40:
            raise _Unreadable("aliases nest too deeply")
        if isinstance(e, int):
            return e
        if isinstance(e, CppNeg):
            return -self.scalar(e.a, env, depth)
        if isinstance(e, (CppParen, CppBraced)):
            return self.int_tuple(e.a, env, depth + 1)
        if isinstance(e, CppChoice):
            pick = e.a if self.scalar(e.cond, env, depth) else e.b
            return self.int_tuple(pick, env, depth + 1)
        if isinstance(e, CppBinOp):
            a, b = self.scalar(e.a, env, depth), self.scalar(e.b, env, depth)
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            if e.op in ("/", "%") and b == 0:
                raise _Unreadable(f"division by zero in {e.op}")
            if e.op == "/":
                return int(a / b)
            if e.op == "%":
                return a % b
            if e.op == "<<" and 0 <= b < 64:
                return a << b
            if e.op in (">", "<=", ">=", "==", "!="):
                return int({">": a > b, "<=": a <= b, ">=": a >= b, "==": a == b,
                            "!=": a != b}[e.op])
            raise _Unreadable(f"operator {e.op} in a shape")
        if isinstance(e, (Opaque, Pack)):
            raise _Unreadable(f"'{e}' is not a constant the reader evaluates")
        assert isinstance(e, Type)
        t = e.last
        if len(e.parts) == 1 and t.args is None:
            if t.name in env:
                return env[t.name]
            if t.name.startswith("_") and t.name[1:].isdigit():
                return int(t.name[1:])
        if t.name in ("Int", "C", "integral_constant", "constant") and t.args:
            return self.scalar(t.args[-1], env, depth)
        if t.name in ("Shape", "Stride", "tuple", "Coord", "Step") and t.args is not None:
            return tuple(self.int_tuple(a, env, depth + 1) for a in t.args)
        alias, bound = self._alias(e, env, depth)
        return self.int_tuple(alias.type, bound, depth + 1)

    def scalar(self, e: Any, env: dict[str, int], depth: int = 0) -> int:
        v = self.int_tuple(e, env, depth + 1)
        if not isinstance(v, int):
            raise _Unreadable(f"'{show_tuple(v)}' where a number is needed")
        return v

    def _alias(self, e: Type, env: dict[str, int], depth: int) -> tuple[Alias, dict[str, int]]:
        t = e.last
        alias = self.aliases.get(t.name)
        if alias is None:
            raise _Unreadable(f"'{e}' is not a layout, shape or alias the reader knows")
        args = t.args or ()
        if len(args) != len(alias.params) and not (alias.templated and not args):
            raise _Unreadable(f"'{e}' gives {len(args)} arguments to an alias of "
                              f"{len(alias.params)} parameters")
        bound = {p: self.scalar(a, env, depth + 1) for p, a in zip(alias.params, args)}
        return alias, bound

    def layout(self, e: Any, env: dict[str, int], depth: int = 0) -> CuteLayout:
        if depth > 40:
            raise _Unreadable("aliases nest too deeply")
        if isinstance(e, Opaque):
            raise _Unreadable(f"'{e}' is computed by C++ code, not written as a layout")
        if not isinstance(e, Type):
            raise _Unreadable(f"'{e}' is not a layout")
        t = e.last
        if t.name == "Layout" and t.args:
            shape = self.int_tuple(t.args[0], env, depth + 1)
            if len(t.args) > 1:
                stride = self.int_tuple(t.args[1], env, depth + 1)
            else:
                stride = compact_left(shape)
            if not congruent(shape, stride):
                raise _Unreadable(f"shape {show_tuple(shape)} and stride {show_tuple(stride)} "
                                  "are not congruent (CuTe's crd2idx rejects such a layout)")
            return CuteLayout(shape, stride)
        if len(e.parts) >= 2 and e.parts[-2].name in TRAITS and e.parts[-2].args:
            atom = e.parts[-2].args[0]
            if isinstance(atom, Type):
                member = self.member(e.parts[-2].name, atom.last.name, t.name)
                if member is None:
                    raise _Unreadable(f"'{e}': no such trait member")
                return self.layout(member.type, {}, depth + 1)
        alias, bound = self._alias(e, env, depth)
        return self.layout(alias.type, bound, depth + 1)

    def member(self, trait: str, atom: str, name: str, depth: int = 0) -> Alias | None:
        hit = self.traits.get((trait, atom))
        if hit is None or depth > 20:
            return None
        s = hit[0]
        m = s.member(name)
        if m is not None:
            return m
        for b in s.bases:
            if b.last.name == trait and b.last.args and isinstance(b.last.args[0], Type):
                got = self.member(trait, b.last.args[0].last.name, name, depth + 1)
                if got is not None:
                    return got
        return None

    def instruction(self, atom: str, depth: int = 0) -> Instruction | str:
        s = self.arch.get(atom)
        if s is None:
            alias = self.aliases.get(atom)
            if alias is not None and isinstance(alias.type, Type) and depth < 8:
                return self.instruction(alias.type.last.name, depth + 1)
            return f"no struct {atom} with an asm statement in the arch headers read"
        if s.asm:
            return instruction_of(s.asm)
        inner = [self.instruction(c, depth + 1) for c in s.calls if c != atom and depth < 8]
        ok = {i.opcode: i for i in inner if isinstance(i, Instruction)}
        if len(ok) == 1:
            return next(iter(ok.values()))
        if not ok and s.calls and set(s.calls) == {"cute"}:
            return (f"{atom} has no asm: its fma calls cute::fma, CuTe's element-wise fused "
                    "multiply-add in one thread (FFMA2 on float2), no matrix-fragment "
                    "instruction the spec states a layout for")
        if not ok:
            return f"{atom} has no asm statement and calls no atom that has one"
        return f"{atom} calls several instructions: {', '.join(sorted(map(str, ok)))}"


def _names(e: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(e, Type):
        for p in e.parts:
            out.add(p.name)
            for a in p.args or ():
                out |= _names(a)
    elif isinstance(e, CppBinOp):
        out |= _names(e.a) | _names(e.b)
    elif isinstance(e, (CppNeg, CppParen, CppBraced, Pack)):
        out |= _names(e.a)
    elif isinstance(e, CppChoice):
        out |= _names(e.cond) | _names(e.a) | _names(e.b)
    return out


def atoms_of(env: Env, header: CppHeader) -> list[Atom]:
    """The atoms a header defines, evaluated in ``env``."""
    out: list[Atom] = []
    for s in header.structs:
        if s.type is None or s.type.last.name not in TRAITS or not s.type.last.args:
            continue
        arg = s.type.last.args[0]
        if not isinstance(arg, Type):
            continue
        trait = s.type.last.name
        kind, names = TRAITS[trait]
        atom = arg.last.name
        ops: list[Operand] = []
        for op, member in names:
            m = env.member(trait, atom, member)
            if m is None:
                if op == "metadata":
                    continue
                ops.append(Operand(op, None, 0, f"the trait has no {member}"))
                continue
            used = _names(m.type) & set(s.params)
            if used:
                ops.append(Operand(op, None, m.line, f"{member} depends on the template "
                                   f"parameter(s) {', '.join(sorted(used))}"))
                continue
            try:
                ops.append(Operand(op, env.layout(_in_scope(env, trait, atom, m.type), {}),
                                   m.line))
            except _Unreadable as e:
                ops.append(Operand(op, None, m.line, f"{member} = {m.type}: {e}"))
        thr = None
        shape_mnk = None
        tm = env.member(trait, atom, "ThrID")
        if tm is not None:
            try:
                thr = env.layout(tm.type, {})
            except _Unreadable:
                thr = None
        val_id = None
        vm = env.member(trait, atom, "ValID") if kind == "copy" else None
        if vm is not None:
            try:
                val_id = env.layout(_members(env, trait, atom, vm.type), {})
            except _Unreadable:
                val_id = None
        sm = env.member(trait, atom, "Shape_MNK")
        if sm is not None:
            try:
                got = env.int_tuple(sm.type, {})
                shape_mnk = got if isinstance(got, tuple) else None
            except _Unreadable:
                shape_mnk = None
        vals = []
        for v in ("ValTypeD", "ValTypeA", "ValTypeB", "ValTypeC"):
            vm = env.member(trait, atom, v)
            if vm is not None:
                vals.append((v[-1], str(vm.type)))
        ins = env.instruction(atom)
        specs = env.special.get(atom, []) if isinstance(ins, str) else []
        for sp in specs:  # one atom per explicit specialization: each has its own asm
            assert sp.type is not None
            got = instruction_of(sp.asm)
            out.append(Atom(str(sp.type.last), kind, header.path, s.line,
                            got if isinstance(got, Instruction) else None, tuple(ops), thr,
                            shape_mnk, val_id, tuple(vals), s.params,
                            got if isinstance(got, str) else ""))
        if not specs:
            out.append(Atom(atom, kind, header.path, s.line,
                            ins if isinstance(ins, Instruction) else None, tuple(ops), thr,
                            shape_mnk, val_id, tuple(vals), s.params,
                            ins if isinstance(ins, str) else ""))
    return out


def _members(env: Env, trait: str, atom: str, e: Any, depth: int = 0) -> Any:
    """``e`` with the trait's own member aliases put in place of their names: the UTCCP
    atoms write ``using _DP = TMEM::DP_b; using _DPx32 = Int<_DP{}*32>;`` inside the trait and
    their ValID's strides as ``_DP`` and ``_DPx32``, so ``Stride<_DP,_1,_DPx32>`` becomes
    ``Stride<TMEM::DP_b,_1,Int<TMEM::DP_b{}*32>>``, which the evaluator reads."""
    if depth > 20:
        return e
    if isinstance(e, Type):
        if len(e.parts) == 1 and e.last.args is None:
            m = env.member(trait, atom, e.last.name)
            if m is not None and m.type != e:
                return _members(env, trait, atom, m.type, depth + 1)
            return e
        outer = e.parts[-2] if len(e.parts) >= 2 else None
        if outer is not None and outer.name in TRAITS and outer.args \
                and isinstance(outer.args[0], Type):  # Copy_Traits<X_1cta>::ValID: X's scope
            other = outer.args[0].last.name
            m = env.member(outer.name, other, e.last.name)
            if m is not None:
                return _members(env, outer.name, other, m.type, depth + 1)
        return Type(tuple(TName(p.name, None if p.args is None else tuple(
            _members(env, trait, atom, a, depth + 1) for a in p.args)) for p in e.parts))
    if isinstance(e, (CppBraced, CppParen, CppNeg)):
        return type(e)(_members(env, trait, atom, e.a, depth + 1))
    if isinstance(e, CppBinOp):
        return CppBinOp(e.op, _members(env, trait, atom, e.a, depth + 1),
                        _members(env, trait, atom, e.b, depth + 1))
    return e


def _in_scope(env: Env, trait: str, atom: str, t: Any) -> Any:
    """``UnderlyingTraits::ALayout`` where the trait says ``using UnderlyingTraits =
    MMA_Traits<X<...>>``: the member's type with that alias put in its place (so that
    ``MMA_Traits<X>::ALayout`` is looked up), else ``t`` itself."""
    if not isinstance(t, Type) or len(t.parts) < 2 or t.parts[0].args is not None:
        return t
    inner = env.member(trait, atom, t.parts[0].name)
    if inner is None or not isinstance(inner.type, Type) or inner.type.last.name != trait:
        return t
    return Type(inner.type.parts + t.parts[1:])


def read_atoms(paths: Sequence[str | Path], include_dirs: Sequence[Path] = ()) \
        -> tuple[list[Atom], list[Finding]]:
    """Atoms of the given headers (directories: their ``cute/atom/*_traits_sm*.hpp``)."""
    atoms, findings, _env = read_atoms_env(paths, include_dirs)
    return atoms, findings


def read_atoms_env(paths: Sequence[str | Path], include_dirs: Sequence[Path] = ()) \
        -> tuple[list[Atom], list[Finding], Env]:
    """``read_atoms``, and the ``Env`` of every header read (the scale-factor audit asks it
    for the traits members no operand names)."""
    files: list[Path] = []
    findings: list[Finding] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            atom_dir = path / "cute" / "atom" if (path / "cute" / "atom").is_dir() else path
            got = sorted(atom_dir.glob("*_traits_sm*.hpp"))
            if not got:
                findings.append(warning("cute-input", Span(str(path), 0, 0),
                                        "no *_traits_sm*.hpp header in this directory"))
            files.extend(got)
        elif path.is_file():
            files.append(path)
        else:
            findings.append(warning("cute-input", Span(str(path), 0, 0),
                                    "not a plain file" if path.exists() else "no such file"))
    env = Env(files, include_dirs)
    findings.extend(env.findings)
    by_path = {h.path: h for h in env.headers}
    atoms: list[Atom] = []
    done: set[str] = set()
    todo = [str(f) for f in files]
    while todo:
        name = todo.pop(0)
        h = by_path.get(name)
        if h is None or name in done:
            continue
        done.add(name)
        atoms.extend(atoms_of(env, h))
        todo[:0] = env.continued.get(name, [])
    return atoms, findings, env
