"""Triton's NVIDIA register layouts, read through its own installed package, against the spec.

Triton describes a distributed tensor layout as a *linear layout*: each set bit of the
register index, the lane and the warp adds (XOR) a basis vector of tensor coordinates.  Its
Gluon package computes them on the CPU (``GluonOpBuilder.to_linear_layout``; no GPU, no
kernel is compiled).  For the mma accumulator, ``NVMMADistributedLayout(version=[2,0])`` on a
16 x 8 tensor gives

    reg_bases  [[0,1],[8,0]]                      register bit 0 -> col 1, bit 1 -> row 8
    lane_bases [[0,2],[0,4],[1,0],[2,0],[4,0]]    lane bits -> col 2, col 4, row 1, 2, 4

so lane 5 (bits 0 and 2), register 3 (bits 0 and 1) is (0,2) ^ (1,0) ^ (0,1) ^ (8,0) =
(row 9, col 3): the spec's c3 of lane 5 in m16n8k16's C/D (row groupID + 8, col
2*threadID_in_group + 1).  Register r of thread ``32*warp + lane`` is compared with element r
of that thread in the catalog's layout, for every register and thread.

The layouts audited are the ones Triton's NVIDIA backend feeds to ``mma.sync`` and
``wgmma``: the MMAv2 accumulator and its dot operands A and B (``k_width`` 2 for 16-bit, 4 for
8-bit, 1 for tf32), and the MMAv3 (wgmma) accumulator at several N and its register A.  Each
becomes an ``AtomResult`` whose ``cute`` field holds Triton's bases, so the JSON is that of
``audit cute``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from .atoms import Atom, Operand
from .audit import AtomResult, Audit, Entry, spec_for
from .compare import Counterexample, first_difference, spec_cells, spec_table
from .project import spec_layouts
from .ptx import Instruction, match_variant, opcodes


class TritonMissing(Exception):
    """Triton is not installed (``pip install 'ptxlayout[triton]'``)."""


@dataclass(frozen=True)
class TritonCase:
    """One Triton layout and the spec operand it must equal."""

    name: str
    version: int  # MMA version of the parent layout: 2 (mma.sync) or 3 (wgmma)
    operand: str  # "A" | "B" | "C"
    shape: tuple[int, int]  # the tensor Triton lays out
    k_width: int  # dot operands: consecutive K elements a register holds
    opcode: str  # the PTX instruction whose fragment it is
    n: int = 0  # wgmma: the instruction's N


_MMA = "mma.sync.aligned.{s}.row.col.{d}.{a}.{a}.{d}"
_WGMMA = "wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{a}"

def _dot_operands(m: int, n: int, k: int, d: str, a: str, k_width: int) \
        -> tuple[TritonCase, ...]:
    """MMAv2's dot operands A (M x K) and B (K x N) of one mma.sync shape and type."""
    op = _MMA.format(s=f"m{m}n{n}k{k}", d=d, a=a)
    return tuple(TritonCase(f"MMAv2 dot operand {x}, k_width {k_width} ({a})", 2, x, dims,
                            k_width, op) for x, dims in (("A", (m, k)), ("B", (k, n))))


CASES: tuple[TritonCase, ...] = (
    TritonCase("MMAv2 accumulator (f32)", 2, "C", (16, 8), 0,
               _MMA.format(s="m16n8k16", d="f32", a="f16")),
    *_dot_operands(16, 8, 16, "f32", "f16", 2),
    *_dot_operands(16, 8, 8, "f32", "tf32", 1),
    *_dot_operands(16, 8, 32, "s32", "s8", 4),
    TritonCase("MMAv3 dot operand A, k_width 2 (f16)", 3, "A", (64, 16), 2,
               _WGMMA.format(n=64, k=16, d="f32", a="f16"), 64),
    *(TritonCase(f"MMAv3 accumulator, N = {n}", 3, "C", (64, n), 0,
                 _WGMMA.format(n=n, k=16, d="f32", a="f16"), n) for n in (8, 16, 64, 128, 256)),
)


def triton_version() -> str:
    try:
        import triton
    except ImportError as e:
        raise TritonMissing(str(e)) from e
    return str(getattr(triton, "__version__", "?"))


# The one MLIR context and builder of this process (``_builder``), never released before it
# ends: Triton's objects point into their context, and a context freed before them (a
# function's locals are cleared in no order we choose) made a later garbage collection crash
# in libtriton -- in whichever test ran next on that pytest worker.
_HELD: list[Any] = []


def _builder() -> tuple[Any, Any, Any]:
    """(context, builder, gluon.language), made once a process and kept until it ends, so the
    context outlives the builder and every attribute or layout made through it."""
    try:
        from triton._C.libtriton import gluon_ir, ir
        from triton.experimental.gluon import language as gl
    except ImportError as e:
        raise TritonMissing(str(e)) from e
    if not _HELD:
        ctx = ir.context()
        ir.load_dialects(ctx)
        _HELD.extend((ctx, gluon_ir.GluonOpBuilder(ctx)))
    return _HELD[0], _HELD[1], gl


def _layout(gl: Any, case: TritonCase) -> Any:
    if case.version == 2:
        parent = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1],
                                           instr_shape=[16, 8])
    else:
        parent = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                           instr_shape=[16, case.n, 16])
    if case.operand == "C":
        return parent
    return gl.DotOperandLayout(operand_index=0 if case.operand == "A" else 1, parent=parent,
                               k_width=case.k_width)


def linear_cells(bases: dict[str, list[list[int]]]) -> np.ndarray:
    """threads x registers x 2: the XOR of the bases of each set bit (thread = 32*warp +
    lane)."""
    regs, lanes, warps = bases["reg"], bases["lane"], bases["warp"]
    t_n, r_n = (1 << len(lanes)) * (1 << len(warps)), 1 << len(regs)
    out = np.zeros((t_n, r_n, 2), dtype=np.int64)

    def xor(bits: int, vectors: list[list[int]]) -> np.ndarray:
        v = np.zeros(2, dtype=np.int64)
        for j, b in enumerate(vectors):
            if bits >> j & 1:
                v ^= np.array(b[:2], dtype=np.int64)
        return v

    reg = np.stack([xor(r, regs) for r in range(r_n)])
    for t in range(t_n):
        lane, warp = t % (1 << len(lanes)), t >> len(lanes)
        out[t] = reg ^ (xor(lane, lanes) ^ xor(warp, warps))[None, :]
    return out


def _instruction(opcode: str) -> Instruction:
    got = opcodes((f'"{opcode};"',))
    assert not isinstance(got, str) and got, opcode
    return Instruction(got[-1], match_variant(got[-1]))


def audit_triton() -> Audit:
    """Every ``CASES`` layout, computed by the installed Triton, against the catalog."""
    version = triton_version()
    ctx, builder, gl = _builder()
    where = inspect.getsourcefile(gl.NVMMADistributedLayout) or "triton"
    results: list[AtomResult] = []
    spec = spec_layouts(False)
    for case in CASES:
        cls = gl.NVMMADistributedLayout if case.operand == "C" else gl.DotOperandLayout
        line = inspect.getsourcelines(cls)[1]
        ins = _instruction(case.opcode)
        lay = _layout(gl, case)
        ll = builder.to_linear_layout(lay._to_ir(builder), list(case.shape))
        bases = {"reg": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases}
        text = (f"triton {version} {type(lay).__name__}: reg {ll.reg_bases} lane "
                f"{ll.lane_bases} warp {ll.warp_bases} on {list(case.shape)}")
        atom = Atom(case.name, "triton", where, line, ins, (Operand(case.operand, None),))
        found = spec_for(spec, atom, case.operand)
        if found is None:
            entry = Entry(case.operand, "not-in-spec", "spec", None,
                          f"the catalog states no {case.operand} layout of {case.opcode}",
                          "", text)
        else:
            table = spec_table(found)
            if isinstance(table, str):
                entry = Entry(case.operand, "unreadable", "spec", None, table, found.short_id,
                              text)
            else:
                entry = _entry(case, linear_cells(bases), table, found.short_id, text)
        results.append(AtomResult(atom, (entry,)))
    del builder, ctx
    return Audit(tuple(results))


def _entry(case: TritonCase, got: np.ndarray, table: Any, lid: str, text: str) -> Entry:
    want = spec_cells(table, list(range(len(table.cells))))
    found = first_difference(got, want)
    if found is None:
        return Entry(case.operand, "equal", "spec", None,
                     f"every register of every thread is the spec's cell ({got.shape[0]} "
                     f"threads x {got.shape[1]} registers)", lid, text)
    t, r, g, w = found
    gs = f"(row {g[0]}, col {g[1]})" if g is not None else "no cell"
    ws = f"(row {w[0]}, col {w[1]})" if w is not None else "no cell"
    return Entry(case.operand, "differs", "spec", Counterexample(t, r, g, w),
                 f"thread {t}, register {r}: Triton says {gs}, the spec says {ws}", lid, text)
