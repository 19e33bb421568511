"""PTX kernels, one module per instruction variant, generated from ``formal.base.variants``.

Every kernel is the same few lines around one ``mma`` instruction, so no variant has code of
its own: the variant table says the shape, the types, the ``.kind``, the ``.popc`` operation
and the block-scale type, and this module turns a row into text.  A worked example: the row
``mma.sp m16n8k32 f16.f16 -> f32`` with selector 1 becomes the entry ``sel1`` of a module
whose body is

    ld.global.u32 %w0, [%rd5+0];        // A: words 0-3 of this lane
    ...                                  // B: words 4-7, C: words 8-11, metadata: word 12
    mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
        {%fd0, %fd1, %fd2, %fd3}, {%w0, ..., %w3}, {%w4, ..., %w7}, {%fc0, ..., %fc3}, %w12, 0x1;
    st.global.u32 [%rd7+0], %o0;        // D: words 0-3 of this lane

**Memory layout (lane-major).**  A launch runs ``warps`` independent trials, one per warp.
Trial ``t``'s lane ``l`` reads its words from ``in[(t * 32 + l) * W_in + j]``, ``j`` running
over the A words, then B, then C, then (``mma.sp``) the one metadata word; it writes D to
``out[(t * 32 + l) * W_out + j]``.  Word counts come from ``Variant.words``.  Within a word,
elements sit low to high (``formal.execute.cpu`` packs them); an ``.f64`` element is two
words, low word first.  The sparsity selector is an immediate, so ``mma.sp`` modules hold one
entry per legal selector, named ``sel<k>``; dense modules hold one entry, ``mma``.  Block-scale
variants get unit scale factors (``ue8m0`` 127 = 2^0 in every byte), so they compute A x B + C.

``ptxlayout ptx --check`` writes the modules of every family (``ALL_VARIANTS``: mma and
mma.sp, the moves, wgmma and wgmma.sp, tcgen05.ld / tcgen05.st) and assembles each with
``ptxas`` for every requested architecture that the variant supports
(``formal.base.variants.assembles_for``); a variant no requested architecture covers is
written and skipped.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.matrix_variants import (
    BLOCK_SCALE_VARIANTS,
    MATRIX_VARIANTS,
    TMEM_VARIANTS,
    WGMMA_SP_VARIANTS,
)
from ..base.variants import (
    VARIANTS,
    Variant,
    assembles_for,
    parse_arch,
    ptx_version,
    runs_on,
    selects,
)
from . import ptx_matrix
from .ptx_tcgen05 import TCGEN05_MODULES

# Every row the executor has a kernel for, family by family: what ``ptxlayout ptx`` writes.
ALL_VARIANTS: tuple[Variant, ...] = (*VARIANTS, *MATRIX_VARIANTS, *WGMMA_SP_VARIANTS,
                                     *BLOCK_SCALE_VARIANTS, *TMEM_VARIANTS)

# The lent device (an H100): a kernel it cannot run is assembled only ("compile-only").
LENT_SM = 90
# ue8m0 exponent 127 in each byte: a scale factor of exactly 1.
UNIT_UE8M0 = 0x7F7F7F7F
SCALE_VEC = {"mxf4": "2X", "mxf8f6f4": "1X"}


def module_filename(stem: str, text: str) -> str:
    """A file name unique to the module's text: CuPy caches loaded modules by path, so a
    reused path would silently run the previous kernel."""
    return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.ptx"


@dataclass(frozen=True)
class Module:
    """One variant's PTX module: its text and the entry point of each selector."""

    variant: Variant
    text: str
    entries: tuple[tuple[int | None, str], ...]  # (selector or None, entry name)
    words_in: int
    words_out: int

    @property
    def filename(self) -> str:
        return module_filename(safe_name(self.variant), self.text)

    def entry(self, selector: int | None) -> str:
        for s, name in self.entries:
            if s == selector:
                return name
        raise KeyError(f"{self.variant.key}: no entry for selector {selector}")


def safe_name(v: Variant) -> str:
    return v.key.replace("::", "_").replace(".", "_")


def opcode(v: Variant) -> str:
    """The instruction with every qualifier, e.g. ``mma.sync.aligned.m16n8k16.row.col...``."""
    head = "mma.sp::ordered_metadata" if v.sparse else "mma"
    kind = f".kind::{v.kind}" if v.kind else ""
    scale = ""
    if v.scale:
        vec = f"{v.scale_vec}X" if v.scale_vec else SCALE_VEC.get(v.kind, "1X")
        scale = f".block_scale.scale_vec::{vec}"
    types = f".{v.d}.{v.a}.{v.b}.{v.c}"
    tail = f".{v.scale}" if v.scale else ""
    al, bl = v.layouts
    return f"{head}.sync.aligned.{v.shape}.{al}.{bl}{kind}{scale}{types}{tail}{v.op}"


def _reg_kind(t: str) -> str:
    """PTX register type an accumulator element of type ``t`` lives in."""
    return {"f32": "f32", "f64": "f64", "s32": "b32", "f16": "b32"}[t]


def _vector(names: Iterable[str]) -> str:
    return "{" + ", ".join(names) + "}"


def _body(v: Variant, selector: int | None) -> tuple[list[str], list[str]]:
    """(register declarations, instructions) of one entry, after the address set-up."""
    wa, wb, wc, we, ws = (v.words(o) for o in ("A", "B", "C", "E", "S"))
    wd = v.words("D")
    win = wa + wb + wc + we + ws
    decl = [f".reg .b32 %w<{win}>;", f".reg .b32 %o<{wd}>;"]
    code = [f"ld.global.u32 %w{j}, [%rd5+{4 * j}];" for j in range(win)]
    a = [f"%w{j}" for j in range(wa)]
    b = [f"%w{wa + j}" for j in range(wb)]
    cw = [f"%w{wa + wb + j}" for j in range(wc)]
    if v.a == "f64":  # .f64 multiplicands: pairs of words, low word first
        decl.append(f".reg .f64 %fa<{wa // 2}>;")
        decl.append(f".reg .f64 %fb<{wb // 2}>;")
        code += [f"mov.b64 %fa{j}, {{{a[2 * j]}, {a[2 * j + 1]}}};" for j in range(wa // 2)]
        code += [f"mov.b64 %fb{j}, {{{b[2 * j]}, {b[2 * j + 1]}}};" for j in range(wb // 2)]
        a = [f"%fa{j}" for j in range(wa // 2)]
        b = [f"%fb{j}" for j in range(wb // 2)]
    # accumulators in their own register type
    ckind, dkind = _reg_kind(v.c), _reg_kind(v.d)
    if ckind == "f64":
        c = [f"%cc{j}" for j in range(wc // 2)]
        decl.append(f".reg .f64 %cc<{len(c)}>;")
        code += [f"mov.b64 %cc{j}, {{{cw[2 * j]}, {cw[2 * j + 1]}}};" for j in range(len(c))]
    elif ckind == "f32":
        c = [f"%cc{j}" for j in range(wc)]
        decl.append(f".reg .f32 %cc<{wc}>;")
        code += [f"mov.b32 %cc{j}, {cw[j]};" for j in range(wc)]
    else:
        c = cw
    if dkind == "f64":
        d = [f"%dd{j}" for j in range(wd // 2)]
        decl.append(f".reg .f64 %dd<{len(d)}>;")
    elif dkind == "f32":
        d = [f"%dd{j}" for j in range(wd)]
        decl.append(f".reg .f32 %dd<{wd}>;")
    else:
        d = [f"%o{j}" for j in range(wd)]
    operands = [_vector(d), _vector(a), _vector(b), _vector(c)]
    if v.sparse:
        operands += [f"%w{win - 1}", f"0x{selector or 0:x}"]
    if v.scale_vec:  # scale-a-data, scale-b-data, then byte-id-a, thread-id-a, byte-id-b,
        # thread-id-b a byte each of the third word: 16-bit selector registers
        s0 = wa + wb + wc + we
        decl.append(".reg .b32 %sel<4>;")
        decl.append(".reg .b16 %hs<4>;")
        for j in range(4):
            code.append(f"bfe.u32 %sel{j}, %w{s0 + 2}, {8 * j}, 8;")
            code.append(f"cvt.u16.u32 %hs{j}, %sel{j};")
        operands += [f"%w{s0}", "{%hs0, %hs1}", f"%w{s0 + 1}", "{%hs2, %hs3}"]
    elif v.scale:
        decl.append(".reg .b32 %scale;")
        code.append(f"mov.b32 %scale, 0x{UNIT_UE8M0:08X};")
        operands += ["%scale", "{0, 0}", "%scale", "{0, 0}"]
    code.append(f"{opcode(v)}")
    code.append("    " + ", ".join(operands) + ";")
    if dkind == "f64":
        code += [f"mov.b64 {{%o{2 * j}, %o{2 * j + 1}}}, {r};" for j, r in enumerate(d)]
    elif dkind == "f32":
        code += [f"mov.b32 %o{j}, {r};" for j, r in enumerate(d)]
    code += [f"st.global.u32 [%rd7+{4 * j}], %o{j};" for j in range(wd)]
    return decl, code


def _entry(v: Variant, selector: int | None, name: str) -> str:
    win = sum(v.words(o) for o in ("A", "B", "C", "E", "S"))
    wd = v.words("D")
    decl, code = _body(v, selector)
    lines = [
        f".visible .entry {name}(",
        "    .param .u64 p_in,",
        "    .param .u64 p_out,",
        "    .param .u32 p_warps",
        ")",
        "{",
        "    .reg .pred %p<2>;",
        "    .reg .b32 %r<8>;",
        "    .reg .b64 %rd<8>;",
        *("    " + x for x in decl),
        "    ld.param.u64 %rd1, [p_in];",
        "    ld.param.u64 %rd2, [p_out];",
        "    ld.param.u32 %r1, [p_warps];",
        "    mov.u32 %r2, %ctaid.x;",
        "    mov.u32 %r3, %ntid.x;",
        "    mov.u32 %r4, %tid.x;",
        "    mad.lo.u32 %r5, %r2, %r3, %r4;",
        "    shr.u32 %r6, %r5, 5;",
        "    setp.ge.u32 %p1, %r6, %r1;",  # warp-uniform: every lane of a warp agrees
        "    @%p1 bra.uni DONE;",
        "    cvta.to.global.u64 %rd3, %rd1;",
        "    cvta.to.global.u64 %rd4, %rd2;",
        f"    mul.wide.u32 %rd6, %r5, {4 * win};",
        "    add.s64 %rd5, %rd3, %rd6;",
        f"    mul.wide.u32 %rd6, %r5, {4 * wd};",
        "    add.s64 %rd7, %rd4, %rd6;",
        *("    " + x for x in code),
        "DONE:",
        "    ret;",
        "}",
    ]
    return "\n".join(lines)


def module(v: Variant, arch: str | None = None, trans: bool = False) -> Module:
    """The PTX module of ``v``, of any family (``.target`` ``arch``, default the variant's own
    target): mma's below, the moves' and wgmma's body from ``formal.execute.ptx_matrix``
    (one entry ``k``; ``trans``: wgmma's shared-memory operands M/N-major)."""
    if v.move or v.wgmma or v.tmem:
        return Module(v, ptx_matrix.text(v, arch, trans), ((None, "k"),), 0, 0)
    if v.datapath:  # tcgen05.mma (formal.execute.tcgen05_mma): the kernel without its layouts
        from .ptx_tcgen05 import module_text, row_kernel
        k = row_kernel(v)
        return Module(v, module_text([k], arch or v.target), ((None, k.name),), 0, 0)
    target = arch or v.target
    major, minor = ptx_version(v, target)
    entries = tuple((s, "mma" if s is None else f"sel{s}") for s in v.runs)
    head = [
        f"// ptxlayout kernel for {v.key} (formal/execute/ptx.py; generated, do not edit)",
        f".version {major}.{minor}",
        f".target {target}",
        ".address_size 64",
        "",
    ]
    body = [_entry(v, s, name) for s, name in entries]
    text = "\n".join(head) + "\n\n".join(body) + "\n"
    win = sum(v.words(o) for o in ("A", "B", "C", "E", "S"))
    return Module(v, text, entries, win, v.words("D"))


# ---- assembling ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Assembly:
    variant: Variant
    arch: str
    status: str  # ok | failed | skipped (not for this arch) | no-ptxas
    detail: str = ""


def ptxas_path() -> str | None:
    return shutil.which("ptxas")


@functools.cache
def ptxas_isa(exe: str) -> tuple[tuple[int, int], str] | None:
    """(the newest PTX ISA version ``exe`` reads, its CUDA release), from ``--version``
    ("release 13.0" reads PTX ISA 9.0; 12.8 reads 8.7, 12.9 8.8), or None if it does not say."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.replace(",", " ").split()
    if "release" not in words or words.index("release") + 1 >= len(words):
        return None
    release = words[words.index("release") + 1]
    major, _, minor = release.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    cuda = (int(major), int(minor))
    isa = {(12, 8): (8, 7), (12, 9): (8, 8)}.get(cuda, (9, cuda[1]) if cuda[0] == 13 else None)
    return (isa, release) if isa else None


def assemble(text: str, arch: str, ptxas: str | None = None, timeout: float = 60.0) \
        -> tuple[bool, str]:
    """(ok, ptxas messages) for assembling ``text`` for ``arch``."""
    exe = ptxas or ptxas_path()
    if exe is None:
        return False, "ptxas is not on PATH"
    with tempfile.TemporaryDirectory(prefix="ptxlayout-") as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(text, encoding="utf-8")
        try:
            proc = subprocess.run([exe, f"-arch={arch}", str(src), "-o", os.devnull],
                                  capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"{type(exc).__name__}: {exc}"
    msg = (proc.stderr + proc.stdout).strip()
    return proc.returncode == 0, msg


def ptxas_too_old(v: Variant, arch: str, exe: str | None = None) -> str | None:
    """Why ``exe`` (the ptxas on PATH) cannot read ``v``'s module for ``arch`` -- its PTX ISA
    is newer than the release knows -- or None (it can, or it does not say)."""
    exe = exe or ptxas_path()
    known = ptxas_isa(exe) if exe else None
    need = ptx_version(v, arch)
    if known is None or need <= known[0]:
        return None
    return (f"needs PTX ISA {need[0]}.{need[1]}; ptxas {known[1]} reads up to "
            f"{known[0][0]}.{known[0][1]}")


def check(variants: Iterable[Variant], archs: Sequence[str], jobs: int = 0) \
        -> list[Assembly]:
    """Assemble every variant for every architecture it supports (in parallel)."""
    from concurrent.futures import ThreadPoolExecutor

    exe = ptxas_path()
    tasks: list[tuple[Variant, str]] = []
    out: list[Assembly] = []
    for v in variants:
        for arch in archs:
            if not assembles_for(v, arch):
                out.append(Assembly(v, arch, "skipped", f"needs {v.target}"))
            elif exe is None:
                out.append(Assembly(v, arch, "no-ptxas", "ptxas is not on PATH"))
            elif (too_old := ptxas_too_old(v, arch, exe)) is not None:
                out.append(Assembly(v, arch, "skipped", too_old))
            else:
                tasks.append((v, arch))

    def one(task: tuple[Variant, str]) -> Assembly:
        v, arch = task
        ok, msg = assemble(module(v, arch if v.arch_suffix else None).text, arch, exe)
        return Assembly(v, arch, "ok" if ok else "failed", msg)

    with ThreadPoolExecutor(max_workers=jobs or min(8, (os.cpu_count() or 2))) as pool:
        out.extend(pool.map(one, tasks))
    order = {v.key: i for i, v in enumerate(ALL_VARIANTS)}
    return sorted(out, key=lambda a: (order.get(a.variant.key, 1 << 30), a.arch))


def write(variants: Iterable[Variant], out_dir: str | Path) -> list[Path]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for v in variants:
        m = module(v)
        p = d / f"{safe_name(v)}.ptx"
        p.write_text(m.text, encoding="utf-8")
        paths.append(p)
    return paths


def ptx_command(args: argparse.Namespace,
                records: Callable[[], Sequence[Mapping[str, Any]]] = tuple) -> int:
    """``ptxlayout ptx [--check] [--arch LIST] [--out DIR] [--only KEYS]``: 0 ok, 1 a kernel
    failed, 2 a usage error or nothing assembled.  With sm_100a among the targets, the
    tcgen05 modules the variant table has no row for (``ptx_tcgen05.catalog_modules``:
    the data paths, made from the layouts ``records()`` gives -- asked only then --, plain
    .sp, block scaling, tcgen05.cp) are written and assembled too."""
    try:
        archs = [a.strip() for a in str(args.arch).split(",") if a.strip()]
        for a in archs:
            parse_arch(a)
    except ValueError as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    variants = [v for v in ALL_VARIANTS if selects(getattr(args, "only", None), v.key)]
    tc05 = _tcgen05_modules(args, archs, records)
    if not variants and tc05:
        _write_modules(tc05, args.out)
        if not args.check:
            return 0
        if ptxas_path() is None:
            print("ptxlayout: ptxas is not on PATH; nothing assembled (--check)",
                  file=sys.stderr)
            return 2
        return _assemble_modules(tc05)
    if not variants:
        print(f"ptxlayout: no variant matches --only {args.only}", file=sys.stderr)
        return 2
    if not any(assembles_for(v, a) for v in variants for a in archs):  # with --check or not
        print(f"ptxlayout: no kernel is for {args.arch}: nothing to write", file=sys.stderr)
        return 2
    paths = write(variants, args.out)
    print(f"wrote {len(paths)} PTX modules to {args.out}")
    if tc05:
        _write_modules(tc05, args.out)
    if not args.check:
        return 0
    if ptxas_path() is None:
        print("ptxlayout: ptxas is not on PATH; nothing assembled (--check)", file=sys.stderr)
        return 2
    results = check(variants, archs)
    failed = [r for r in results if r.status == "failed"]
    width = max(len(v.key) for v in variants)
    print(f"{'variant':<{width}}  " + "  ".join(f"{a:<14}" for a in archs))
    by_key: dict[str, dict[str, Assembly]] = {}
    for r in results:
        by_key.setdefault(r.variant.key, {})[r.arch] = r
    for v in variants:
        cells = []
        for a in archs:
            r = by_key[v.key][a]
            label = {"ok": "ok", "failed": "FAILED", "skipped": "-", "no-ptxas": "?"}[r.status]
            if r.status == "skipped" and r.detail.startswith("needs PTX ISA"):
                label = f"needs-ptx-{r.detail.split()[3].rstrip(';')}"
            if r.status == "ok" and not runs_on(v, LENT_SM):
                label = "ok (compile-only)"
            cells.append(f"{label:<14}")
        print(f"{v.key:<{width}}  " + "  ".join(cells))
    for r in failed:
        first = r.detail.splitlines()[:3]
        print(f"FAILED {r.variant.key} for {r.arch}: " + " | ".join(first), file=sys.stderr)
    ok = sum(r.status == "ok" for r in results)
    newer = [r for r in results if r.status == "skipped" and r.detail.startswith("needs PTX")]
    print(f"{ok} assembled, {len(failed)} failed, "
          f"{sum(r.status == 'skipped' for r in results) - len(newer)} not for that architecture"
          + (f", {len(newer)} newer than this ptxas ({newer[0].detail})" if newer else ""))
    if not ok and not failed:
        print(f"ptxlayout: no kernel is for {args.arch}: nothing was assembled", file=sys.stderr)
        return 2
    return max(1 if failed else 0, _assemble_modules(tc05) if tc05 else 0)


def _tcgen05_modules(args: argparse.Namespace, archs: Sequence[str],
                     records: Callable[[], Sequence[Mapping[str, Any]]]) \
        -> list[tuple[str, str]]:
    """The tcgen05 modules ``--only`` picks, when sm_100a is a target."""
    only = getattr(args, "only", None)
    if "sm_100a" not in archs or not any(selects(only, n) for n in TCGEN05_MODULES):
        return []
    from .ptx_tcgen05 import RUNS_MODULE, catalog_modules, module_text
    from .tcgen05_mma import run_kernels
    recs = records() if any(selects(only, n) for n in TCGEN05_MODULES[:2]) else ()
    out = catalog_modules(recs)
    runs = run_kernels(recs) if recs else []  # the tcgen05-mma family's, beside the data paths
    if runs:
        out.insert(1 if out and out[0][0] == TCGEN05_MODULES[0] else 0,
                   (RUNS_MODULE, module_text(runs)))
    return [(n, t) for n, t in out if selects(only, n)]


def _write_modules(modules: Sequence[tuple[str, str]], out_dir: str) -> None:
    """Each (name, text) module as ``out_dir/name.ptx``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in modules:
        (out / f"{name}.ptx").write_text(text, encoding="utf-8")
    print(f"wrote {len(modules)} tcgen05 modules to {out_dir}")


def _assemble_modules(modules: Sequence[tuple[str, str]]) -> int:
    """Assemble each module for sm_100a, a line each: 0 all assembled, 1 one failed."""
    failed = 0
    for name, text in modules:
        ok, msg = assemble(text, "sm_100a")
        entries = text.count(".entry ")
        print(f"{name} ({entries} entries) for sm_100a: "
              + ("ok (compile-only)" if ok else "FAILED"))
        if not ok:
            failed += 1
            print(f"FAILED {name} for sm_100a: " + " | ".join(msg.splitlines()[:3]),
                  file=sys.stderr)
    return 1 if failed else 0


__all__ = ["ALL_VARIANTS", "Module", "module", "opcode", "assemble", "check", "write",
           "ptx_command",
           "UNIT_UE8M0"]
