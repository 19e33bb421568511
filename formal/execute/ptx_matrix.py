"""The kernel bodies of ldmatrix / stmatrix / movmatrix and wgmma.mma_async(.sp), one a variant.

``formal.execute.ptx.module`` makes the module of a variant of any family; for these families
it takes its text from here (``text``): every kernel is the same few lines around one
instruction, and the variant row says its opcode and register counts.
Nothing about a layout is compiled in: shared-memory images, per-lane addresses and the
wgmma descriptors' layout bits are launch data, so one module serves every layout experiment.

**Moves** (one warp a CTA, one trial a CTA; ``R`` = the variant's ``.b32`` registers):

- ``ldmatrix``: the warp copies trial t's shared-memory image (``img[t * W .. t * W + W)``,
  W words) into ``.shared``, lane l takes its row address ``smem + addr[t * 32 + l]`` (a byte
  offset the host chose: rows may sit anywhere, 16-byte aligned), runs the instruction and
  writes its registers to ``out[(t * 32 + l) * R + j]``.
- ``stmatrix``: lane l loads its registers from ``in[(t * 32 + l) * R + j]``, the warp copies
  the image (the initial contents, so an unexpected write shows), stores, and copies the
  whole image back to ``out[t * W ..]``.
- ``movmatrix``: lane l's one word in, one word out.

**wgmma** (one warpgroup, 128 threads, a CTA; one trial a CTA): thread x of trial t loads its
A words (A from registers) and its C words into the accumulator registers from
``in[(t * 128 + x) * (WA + WD) + j]``; the warpgroup copies the trial's shared-memory image
(A's, when A comes from shared memory, and B's, at byte offsets ``a_off`` / ``b_off`` of a
1024-byte aligned buffer), makes it visible to the async proxy (``fence.proxy.async``), and
builds each descriptor as ``desc_hi | ((address >> 4) & 0x3FFF)`` with ``desc_hi`` (LBO,
SBO, swizzle: ``formal.execute.matrix.SmemLayout``) from the host.  Then ``wgmma.fence``,
the instruction with scale-d true (D = A x B + D), ``commit_group``, ``wait_group 0`` and D
to ``out[(t * 128 + x) * WD + j]``.  ``wgmma.mma_async.sp`` reads one more input word a
thread, its metadata (``in[(t * 128 + x) * (WA + WD + 1) + WA + WD]``), and takes the
variant's sparsity selector as an immediate.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..base.variants import Variant, ptx_version

SMEM_BYTES = 40960  # wgmma: A (<= 8 KB with the 128-byte swizzle) + B (<= 32 KB)
MOVE_SMEM_BYTES = 2048


def _vec(names: Iterable[str]) -> str:
    return "{" + ", ".join(names) + "}"


def _copy_loop(label: str, threads: int, to_shared: bool) -> list[str]:
    """Copy %nw words between global (%rd_img) and shared (%r_sm), thread x taking words
    x, x + threads, ..."""
    ld, st = ("ld.global.u32 %r_w, [%rd_p];", "st.shared.u32 [%r_q], %r_w;") if to_shared \
        else ("ld.shared.u32 %r_w, [%r_q];", "st.global.u32 [%rd_p], %r_w;")
    return [
        "mov.u32 %r_i, %r_tid;",
        f"{label}:",
        "setp.ge.u32 %p_c, %r_i, %r_nw;",
        f"@%p_c bra.uni {label}_END;",
        "mul.wide.u32 %rd_t, %r_i, 4;",
        "add.s64 %rd_p, %rd_img, %rd_t;",
        "shl.b32 %r_q, %r_i, 2;",
        "add.u32 %r_q, %r_q, %r_sm;",
        ld,
        st,
        f"add.u32 %r_i, %r_i, {threads};",
        f"bra.uni {label};",
        f"{label}_END:",
    ]


_COMMON_REGS = [
    ".reg .pred %p_c;",
    ".reg .pred %p_d;",
    ".reg .b32 %r_tid, %r_cta, %r_i, %r_q, %r_w, %r_nw, %r_sm, %r_x, %r_a;",
    ".reg .b64 %rd_in, %rd_out, %rd_img, %rd_addr, %rd_p, %rd_t, %rd_x;",
]


def _head(v: Variant, arch: str | None) -> list[str]:
    target = arch or v.target
    major, minor = ptx_version(v, target)
    return [f"// ptxlayout kernel for {v.key} (formal/execute/ptx_matrix.py; generated)",
            f".version {major}.{minor}", f".target {target}", ".address_size 64", ""]


def _move_module(v: Variant, arch: str | None) -> str:
    r = v.registers
    regs = [f"%q{j}" for j in range(r)]
    body: list[str] = [
        "ld.param.u64 %rd_in, [p_in];",
        "ld.param.u64 %rd_out, [p_out];",
        "ld.param.u64 %rd_img, [p_img];",
        "ld.param.u64 %rd_addr, [p_addr];",
        "ld.param.u32 %r_nw, [p_words];",
        "cvta.to.global.u64 %rd_in, %rd_in;",
        "cvta.to.global.u64 %rd_out, %rd_out;",
        "cvta.to.global.u64 %rd_img, %rd_img;",
        "cvta.to.global.u64 %rd_addr, %rd_addr;",
        "mov.u32 %r_tid, %tid.x;",
        "mov.u32 %r_cta, %ctaid.x;",
        "mad.lo.u32 %r_x, %r_cta, 32, %r_tid;",  # the lane's index over all trials
    ]
    # in / out: R words a lane
    body += [f"mul.wide.u32 %rd_x, %r_x, {4 * max(r, 1)};",
             "add.s64 %rd_in, %rd_in, %rd_x;", "add.s64 %rd_out, %rd_out, %rd_x;"]
    if v.instruction == "movmatrix":
        body += ["ld.global.u32 %q0, [%rd_in];",
                 f"{v.opcode} %q1, %q0;",
                 "st.global.u32 [%rd_out], %q1;"]
        decl = [".reg .b32 %q<2>;"]
    else:
        body += [
            "mov.u32 %r_sm, smem;",
            "mul.lo.u32 %r_w, %r_cta, %r_nw;",  # this trial's image
            "mul.wide.u32 %rd_t, %r_w, 4;",
            "add.s64 %rd_img, %rd_img, %rd_t;",
            "mul.wide.u32 %rd_t, %r_x, 4;",
            "add.s64 %rd_addr, %rd_addr, %rd_t;",
            "ld.global.u32 %r_a, [%rd_addr];",
            "add.u32 %r_a, %r_a, %r_sm;",
        ]
        body += _copy_loop("COPY_IN", 32, True)
        body.append("bar.sync 0;")
        if v.instruction == "ldmatrix":
            body.append(f"{v.opcode} {_vec(regs)}, [%r_a];")
            body += [f"st.global.u32 [%rd_out+{4 * j}], %q{j};" for j in range(r)]
        else:  # stmatrix
            body += [f"ld.global.u32 %q{j}, [%rd_in+{4 * j}];" for j in range(r)]
            body.append(f"{v.opcode} [%r_a], {_vec(regs)};")
            body.append("bar.sync 0;")
            body += ["ld.param.u64 %rd_img, [p_out];", "cvta.to.global.u64 %rd_img, %rd_img;",
                     "mul.lo.u32 %r_w, %r_cta, %r_nw;", "mul.wide.u32 %rd_t, %r_w, 4;",
                     "add.s64 %rd_img, %rd_img, %rd_t;"]
            body += _copy_loop("COPY_OUT", 32, False)
        decl = [f".reg .b32 %q<{r}>;"]
    lines = _head(v, arch) + [
        f".shared .align 128 .b8 smem[{MOVE_SMEM_BYTES}];",
        "",
        ".visible .entry k(",
        "    .param .u64 p_in,",
        "    .param .u64 p_out,",
        "    .param .u64 p_img,",
        "    .param .u64 p_addr,",
        "    .param .u32 p_words",
        ")",
        "{",
        *("    " + x for x in _COMMON_REGS + decl),
        *("    " + x for x in body),
        "    ret;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _wgmma_module(v: Variant, arch: str | None, trans: bool = False) -> str:
    wa = v.words("A") if v.a_source == "reg" else 0
    wd = v.words("D")
    wm = 1 if v.sparse else 0  # wgmma.sp: the thread's metadata word, after A's and C's
    dkind = "f32" if v.c == "f32" else "b32"
    d = [f"%d{j}" for j in range(wd)]
    a = [f"%a{j}" for j in range(wa)]
    decl = [f".reg .{dkind} %d<{wd}>;", ".reg .b64 %desc_a, %desc_b, %rd_hi;"]
    if wa:
        decl.append(f".reg .b32 %a<{wa}>;")
    if wm:
        decl.append(".reg .b32 %meta;")
    body: list[str] = [
        "ld.param.u64 %rd_in, [p_in];",
        "ld.param.u64 %rd_out, [p_out];",
        "ld.param.u64 %rd_img, [p_img];",
        "ld.param.u32 %r_nw, [p_words];",
        "cvta.to.global.u64 %rd_in, %rd_in;",
        "cvta.to.global.u64 %rd_out, %rd_out;",
        "cvta.to.global.u64 %rd_img, %rd_img;",
        "mov.u32 %r_tid, %tid.x;",
        "mov.u32 %r_cta, %ctaid.x;",
        "mad.lo.u32 %r_x, %r_cta, 128, %r_tid;",
        f"mul.wide.u32 %rd_x, %r_x, {4 * (wa + wd + wm)};",
        "add.s64 %rd_in, %rd_in, %rd_x;",
        f"mul.wide.u32 %rd_x, %r_x, {4 * wd};",
        "add.s64 %rd_out, %rd_out, %rd_x;",
        "mul.lo.u32 %r_w, %r_cta, %r_nw;",
        "mul.wide.u32 %rd_t, %r_w, 4;",
        "add.s64 %rd_img, %rd_img, %rd_t;",
        "mov.u32 %r_sm, smem;",
    ]
    body += [f"ld.global.u32 {x}, [%rd_in+{4 * j}];" for j, x in enumerate(a)]
    body += [f"ld.global.{'f32' if dkind == 'f32' else 'u32'} {x}, [%rd_in+{4 * (wa + j)}];"
             for j, x in enumerate(d)]
    if wm:
        body.append(f"ld.global.u32 %meta, [%rd_in+{4 * (wa + wd)}];")
    body += _copy_loop("COPY_IN", 128, True)
    body += ["fence.proxy.async.shared::cta;", "bar.sync 0;"]
    for name, off, hi in (("b", "p_b_off", "p_desc_b"), ("a", "p_a_off", "p_desc_a")):
        if name == "a" and v.a_source == "reg":
            continue
        body += [f"ld.param.u32 %r_a, [{off}];",
                 "add.u32 %r_a, %r_a, %r_sm;",
                 "shr.u32 %r_a, %r_a, 4;",
                 "and.b32 %r_a, %r_a, 16383;",
                 "cvt.u64.u32 %rd_t, %r_a;",
                 f"ld.param.u64 %rd_hi, [{hi}];",
                 f"or.b64 %desc_{name}, %rd_hi, %rd_t;"]
    body.append("setp.ne.b32 %p_d, %r_nw, 0;")  # scale-d: true (D = A x B + D)
    a_op = _vec(a) if wa else "%desc_a"
    operands = [_vec(d), a_op, "%desc_b"]
    if wm:  # sp-meta, then sp-sel: an immediate, the variant's selector
        operands += ["%meta", str(v.selector)]
    operands.append("%p_d")
    if v.a in ("f16", "bf16"):  # scale a, b; imm-trans (a,) b: M/N-major operands
        t = "1" if trans else "0"
        operands += ["1", "1"] + ([t] if wa else [t, t])
    elif v.a in ("tf32", "e4m3", "e5m2"):
        operands += ["1", "1"]
    body += ["wgmma.fence.sync.aligned;",
             f"{v.opcode}",
             "    " + ", ".join(operands) + ";",
             "wgmma.commit_group.sync.aligned;",
             "wgmma.wait_group.sync.aligned 0;"]
    body += [f"st.global.{'f32' if dkind == 'f32' else 'u32'} [%rd_out+{4 * j}], {x};"
             for j, x in enumerate(d)]
    lines = _head(v, arch) + [
        f".shared .align 1024 .b8 smem[{SMEM_BYTES}];",
        "",
        ".visible .entry k(",
        "    .param .u64 p_in,",
        "    .param .u64 p_out,",
        "    .param .u64 p_img,",
        "    .param .u32 p_words,",
        "    .param .u32 p_a_off,",
        "    .param .u32 p_b_off,",
        "    .param .u64 p_desc_a,",
        "    .param .u64 p_desc_b",
        ")",
        "{",
        *("    " + x for x in _COMMON_REGS + decl),
        *("    " + x for x in body),
        "    ret;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def tmem_columns(v: Variant) -> int:
    """TMEM columns a tcgen05.ld/st kernel allocates: the fewest (a power of two, at least
    32, as tcgen05.alloc requires) that hold the form's tile (``16x256b.x2``: 16 -> 32)."""
    n = 32
    while n < v.tile[1]:
        n *= 2
    return n


def _tmem_module(v: Variant, arch: str | None) -> str:
    """tcgen05.ld / tcgen05.st, one warp a CTA, one trial a CTA, C = ``tmem_columns`` columns.
    The warp allocates C columns, thread t writes lane t of the trial's image (row t of
    ``img``, C words) with ``.32x32b`` -- the shape whose thread t is lane t -- 128 columns an
    instruction.  ld: the variant's load, registers to ``out[(t * 32 + l) * R + j]``.  st:
    registers from ``in[(t * 32 + l) * R + j]``, the variant's store, then the whole image
    read back with ``.32x32b`` to ``out[t * 32 * C ..]`` (a cell the form must not touch keeps
    its initial word).  ``.16x32bx2`` puts its second access ``immHalfSplitoff`` = half the
    tile's columns further on, where the catalog puts it."""
    r, ncols = v.registers, tmem_columns(v)
    regs = _vec(f"%q{j}" for j in range(r))
    split = f", {v.tile[1] // 2}" if v.shape == "16x32bx2" else ""

    def whole(store: bool, ptr: str) -> list[str]:
        out: list[str] = []
        for c0 in range(0, ncols, 128):
            n = min(128, ncols)
            fill = _vec(f"%f{j}" for j in range(n))
            out.append(f"add.u32 %r_a, %r_t, {c0};")
            if store:
                out += [f"ld.global.u32 %f{j}, [{ptr}+{4 * (c0 + j)}];" for j in range(n)]
                out += [f"tcgen05.st.sync.aligned.32x32b.x{n}.b32 [%r_a], {fill};",
                        "tcgen05.wait::st.sync.aligned;"]
            else:
                out += [f"tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {fill}, [%r_a];",
                        "tcgen05.wait::ld.sync.aligned;"]
                out += [f"st.global.u32 [{ptr}+{4 * (c0 + j)}], %f{j};" for j in range(n)]
        return out

    sync = ["tcgen05.fence::before_thread_sync;", "bar.sync 0;",
            "tcgen05.fence::after_thread_sync;"]
    body = [
        "ld.param.u64 %rd_in, [p_in];", "ld.param.u64 %rd_out, [p_out];",
        "ld.param.u64 %rd_img, [p_img];", "cvta.to.global.u64 %rd_in, %rd_in;",
        "cvta.to.global.u64 %rd_out, %rd_out;", "cvta.to.global.u64 %rd_img, %rd_img;",
        "mov.u32 %r_tid, %tid.x;", "mov.u32 %r_cta, %ctaid.x;",
        "mad.lo.u32 %r_x, %r_cta, 32, %r_tid;",
        f"mul.wide.u32 %rd_x, %r_x, {4 * r};",
        "add.s64 %rd_in, %rd_in, %rd_x;", "add.s64 %rd_out, %rd_out, %rd_x;",
        f"mul.wide.u32 %rd_t, %r_x, {4 * ncols};", "add.s64 %rd_img, %rd_img, %rd_t;",
        "mov.u32 %r_sm, smem;",
        f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r_sm], {ncols};",
        *sync, "ld.shared.u32 %r_t, [%r_sm];", *whole(True, "%rd_img"), *sync]
    if v.instruction == "tcgen05.ld":
        body += [f"{v.opcode} {regs}, [%r_t]{split};", "tcgen05.wait::ld.sync.aligned;"]
        body += [f"st.global.u32 [%rd_out+{4 * j}], %q{j};" for j in range(r)]
    else:
        body += [f"ld.global.u32 %q{j}, [%rd_in+{4 * j}];" for j in range(r)]
        body += [f"{v.opcode} [%r_t]{split}, {regs};", "tcgen05.wait::st.sync.aligned;",
                 *sync, "ld.param.u64 %rd_img, [p_out];",
                 "cvta.to.global.u64 %rd_img, %rd_img;", f"mul.wide.u32 %rd_t, %r_x, {4 * ncols};",
                 "add.s64 %rd_img, %rd_img, %rd_t;", *whole(False, "%rd_img")]
    body += [*sync, f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r_t, {ncols};",
             "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"]
    lines = _head(v, arch) + [
        ".shared .align 16 .b32 smem[1];", "",
        ".visible .entry k(", "    .param .u64 p_in,", "    .param .u64 p_out,",
        "    .param .u64 p_img,", "    .param .u64 p_addr,", "    .param .u32 p_words", ")", "{",
        *("    " + x for x in _COMMON_REGS),
        f"    .reg .b32 %r_t, %q<{r}>, %f<128>;",
        *("    " + x for x in body), "    ret;", "}"]
    return "\n".join(lines) + "\n"


def text(v: Variant, arch: str | None = None, trans: bool = False) -> str:
    """The PTX text of a move or wgmma ``v``'s module, entry ``k`` (``.target`` ``arch``,
    default the variant's own); ``trans``: wgmma .f16 / .bf16 with its shared-memory operands
    M/N-major.  ``formal.execute.ptx.module`` is the one way to a module of any family."""
    if v.tmem:
        return _tmem_module(v, arch)
    return _wgmma_module(v, arch, trans) if v.wgmma else _move_module(v, arch)


__all__ = ["text", "tmem_columns", "SMEM_BYTES", "MOVE_SMEM_BYTES"]
