"""tcgen05.mma kernels, one template for every form: the catalog's shared-memory descriptors,
block scaling, sparsity, and the data paths read back with tcgen05.ld (compile-only here: no
lent device runs sm_100a, so ``ptxas -arch=sm_100a`` assembling them is what is checked).

Every entry (``Tc05Kernel``) allocates tensor memory (warp 0; with ``cta_group::2`` each CTA of
a 2-CTA cluster), issues one ``tcgen05.mma`` from one thread, commits to an mbarrier, and frees
the tensor memory.  What differs is data:

* the descriptors: immediates (a catalog layout's, ``formal.model.smem.descriptor_of``: LBO
  and SBO >> 4, the fixed constant 0b001 in bits 46-48, the swizzle code in bits 61-63) or
  parameters ``adesc`` / ``bdesc``.  A worked example, the K-major 128B layout of 16-bit
  elements (SBO 1024 bytes): ``mov.b64 %rd1, 0x4000404000010000;`` (SBO field 64 in bits
  32-45, the constant 1 at bit 46, code 2 in bits 61-63, LBO field 1);
* the operands after the descriptors: ``.sp``'s metadata address and ``.block_scale``'s two
  scale-factor addresses, all in tensor memory (columns 256, 272 and 288 of the allocation);
* the read-back (``reads``): after the mma completes (the mbarrier's phase 0), warp ``w``
  loads its block of D with ``tcgen05.ld.sync.aligned.32x32b.x<n>.b32`` at the catalog's
  address -- lane ``32 * (w % 4)`` in bits 16-31, the block's first column in bits 0-15 --
  and stores the words to ``out`` as TMEM is laid out: word ``(cta * 128 + lane) * cols +
  column``.  Layout D at N = 64: warp 1 reads ``[taddr + (32 << 16) + 0]`` with ``.x64``.

The instruction descriptor (M, N, types: fields this catalog does not state) is always the
parameter ``idesc``.  ``KINDS`` names the kind that reads each element width from shared
memory: 32 bits ``kind::tf32``, 16 ``kind::f16``, 8 ``kind::f8f6f4`` (e4m3 ...) and
``kind::i8``; packed 4-bit operands are read by the block-scaled kinds only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .datapath import DATAPATH_INSTRUCTION, DataPathMap, datapath_map

KINDS = {32: ("tf32",), 16: ("f16",), 8: ("f8f6f4", "i8")}
# the columns of the allocation the metadata and the scale factors live in
META_COLUMN, SCALE_A_COLUMN, SCALE_B_COLUMN = 288, 256, 272
MAX_X = 128  # the widest tcgen05.ld .32x32b: .x128


@dataclass(frozen=True)
class Read:
    """One warp's tcgen05.ld of a data-path block: the sub-partition's lanes from ``column``
    on, ``count`` columns, in CTA ``cta``."""

    cta: int
    warp: int
    column: int
    count: int


@dataclass(frozen=True)
class Tc05Kernel:
    """One entry of a tcgen05.mma module (see the module docstring)."""

    name: str
    opcode: str  # tcgen05.mma{.ws}{.sp}.cta_group::G.kind::K{.block_scale.F}
    columns: int = 64  # tensor memory allocated (a power of 2, 32 .. 512)
    descriptors: tuple[int, int] | None = None  # immediates; None: parameters
    reads: tuple[Read, ...] = ()
    out_columns: int = 0  # columns of ``out`` a TMEM lane has (the read-back's image)
    # bytes of shared memory each CTA copies from the parameter ``smem`` (CTA c's from byte
    # c * smem_bytes on) before the mma; the descriptors' start address fields are then
    # offsets into that image (the kernel adds its shared address).  0: no image
    smem_bytes: int = 0
    # .sp: columns of metadata each lane's warp stores from the parameter ``meta`` (lane
    # l's words at ``meta + 4 * (l * meta_columns + j)``, CTA c's lanes after the first
    # CTA's 128) into tensor memory from column META_COLUMN, before the mma.  0: none
    meta_columns: int = 0
    # .block_scale: columns of scale_A and of scale_B each lane's warp stores from the
    # parameter ``scales`` (lane l's words at ``scales + 4 * (l * (a + b) + j)``, A's first)
    # into tensor memory from SCALE_A_COLUMN and SCALE_B_COLUMN, before the mma.  (0, 0): none
    scale_columns: tuple[int, int] = (0, 0)

    @property
    def cta_group(self) -> int:
        return 2 if ".cta_group::2" in self.opcode else 1


def mma_opcode(kind: str, cta_group: int = 1, sparse: bool = False, ws: bool = False,
               scale: str = "") -> str:
    """``tcgen05.mma{.ws}{.sp}.cta_group::G.kind::<kind>{.block_scale.<scale>}`` (``scale``
    as the catalog writes it: ``scale_vec::2X``, ``block32``; ptxas knows ``.ws.sp``, not
    ``.sp.ws``)."""
    return ("tcgen05.mma" + (".ws" if ws else "") + (".sp" if sparse else "")
            + f".cta_group::{cta_group}.kind::{kind}"
            + (f".block_scale.{scale}" if scale else ""))


def _x_counts(count: int) -> list[int]:
    """``count`` columns as tcgen05.ld widths (powers of 2, at most .x128), widest first."""
    out, left = [], count
    while left:
        x = min(MAX_X, 1 << (left.bit_length() - 1))
        out.append(x)
        left -= x
    return out


def _read_back(k: Tc05Kernel) -> list[str]:
    """Wait for the mma, then each warp's loads and stores (``out``: the TMEM image)."""
    lines = ["WAIT:", "    mbarrier.try_wait.parity.shared::cta.b64 %p4, [mbar], 0;",
             "    @!%p4 bra WAIT;", "    tcgen05.fence::after_thread_sync;",
             "    ld.param.u64 %rd3, [out];", "    cvta.to.global.u64 %rd3, %rd3;",
             "    and.b32 %r10, %r5, 127;"]  # the TMEM lane this thread reads (32w + lane)
    if k.cta_group == 2:
        lines += ["    mov.u32 %r11, %cluster_ctarank;", "    mad.lo.u32 %r10, %r11, 128, %r10;"]
    lines += [f"    mul.lo.u32 %r10, %r10, {4 * k.out_columns};",
              "    cvt.u64.u32 %rd4, %r10;", "    add.u64 %rd3, %rd3, %rd4;"]
    for j, r in enumerate(k.reads):
        skip = f"SKIP{j}"
        lines += [f"    setp.ne.u32 %p5, %r6, {r.warp};"]
        if k.cta_group == 2:
            lines += [f"    setp.ne.or.u32 %p5, %r11, {r.cta}, %p5;"]
        lines += [f"    @%p5 bra {skip};"]
        col = r.column
        for x in _x_counts(r.count):
            regs = ", ".join(f"%v{i}" for i in range(x))
            lines += [f"    add.u32 %r12, %r1, {((32 * (r.warp % 4)) << 16) + col};",
                      f"    tcgen05.ld.sync.aligned.32x32b.x{x}.b32 {{{regs}}}, [%r12];",
                      "    tcgen05.wait::ld.sync.aligned;"]
            lines += [f"    st.global.b32 [%rd3+{4 * (col + i)}], %v{i};" for i in range(x)]
            col += x
        lines.append(f"{skip}:")
    return lines


def _store_meta(k: Tc05Kernel) -> list[str]:
    """Each warp stores its 32 lanes' metadata words from ``meta`` into tensor memory
    (``tcgen05.st.32x32b``), then every thread syncs so the mma sees them."""
    if not k.meta_columns:
        return []
    return _store_words(k, "meta", [(0, k.meta_columns, META_COLUMN)], k.meta_columns)


def _store_scales(k: Tc05Kernel) -> list[str]:
    """Each warp stores its lanes' scale_A and scale_B words from ``scales`` (A's columns
    first) at SCALE_A_COLUMN and SCALE_B_COLUMN, then every thread syncs."""
    ca, cb = k.scale_columns
    if not ca + cb:
        return []
    return _store_words(k, "scales", [(0, ca, SCALE_A_COLUMN), (ca, cb, SCALE_B_COLUMN)],
                        ca + cb)


def _store_words(k: Tc05Kernel, param: str, parts: Sequence[tuple[int, int, int]],
                 width: int) -> list[str]:
    """Lane l's ``width`` words from ``param`` (``+ 4 * l * width``); each part (first word,
    count, tensor-memory column) stored with one ``tcgen05.st.32x32b``, then a sync."""
    lines = [f"    ld.param.u64 %rd5, [{param}];", "    cvta.to.global.u64 %rd5, %rd5;",
             "    and.b32 %r14, %r5, 127;"]
    if k.cta_group == 2:
        lines += ["    mov.u32 %r15, %cluster_ctarank;", "    mad.lo.u32 %r14, %r15, 128, %r14;"]
    lines += [f"    mul.lo.u32 %r14, %r14, {4 * width};", "    cvt.u64.u32 %rd6, %r14;",
              "    add.u64 %rd5, %rd5, %rd6;"]
    for first, count, column in parts:
        lines += [f"    ld.global.b32 %v{j}, [%rd5+{4 * (first + j)}];" for j in range(count)]
        regs = ", ".join(f"%v{j}" for j in range(count))
        lines += ["    shl.b32 %r15, %r6, 21;", "    add.u32 %r15, %r15, %r1;",
                  f"    add.u32 %r15, %r15, {column};",
                  f"    tcgen05.st.sync.aligned.32x32b.x{count}.b32 [%r15], {{{regs}}};"]
    lines += ["    tcgen05.wait::st.sync.aligned;", "    tcgen05.fence::before_thread_sync;",
              "    barrier.cluster.arrive.aligned;\n    barrier.cluster.wait.aligned;"
              if k.cta_group == 2 else "    bar.sync 0;",
              "    tcgen05.fence::after_thread_sync;"]
    return lines


def _copy_image(k: Tc05Kernel) -> list[str]:
    """Every thread copies words of this CTA's image (``smem`` + rank * bytes) into ``img``,
    then makes them visible to the tensor core (the async proxy)."""
    if not k.smem_bytes:
        return []
    lines = ["    ld.param.u64 %rd9, [smem];", "    cvta.to.global.u64 %rd9, %rd9;"]
    if k.cta_group == 2:
        lines += ["    mov.u32 %r17, %cluster_ctarank;",
                  f"    mul.wide.u32 %rd10, %r17, {k.smem_bytes};",
                  "    add.u64 %rd9, %rd9, %rd10;"]
    lines += ["    mov.u32 %r18, img;", "    shl.b32 %r19, %r5, 2;", "COPY:",
              f"    setp.ge.u32 %p8, %r19, {k.smem_bytes};", "    @%p8 bra COPIED;",
              "    cvt.u64.u32 %rd10, %r19;", "    add.u64 %rd11, %rd9, %rd10;",
              "    ld.global.b32 %r20, [%rd11];", "    add.u32 %r21, %r18, %r19;",
              "    st.shared.b32 [%r21], %r20;", f"    add.u32 %r19, %r19, {4 * THREADS};",
              "    bra COPY;", "COPIED:", "    fence.proxy.async.shared::cta;"]
    return lines


THREADS = 128  # a CTA: one warpgroup, each warp reading its sub-partition's lanes


def kernel_text(k: Tc05Kernel) -> str:
    """The PTX of one entry."""
    g, cols = k.cta_group, k.columns
    params = [".param .u32 idesc"]
    if k.descriptors is None:
        params += [".param .u64 adesc", ".param .u64 bdesc"]
    if k.reads:
        params.append(".param .u64 out")
    if k.smem_bytes:
        params.append(".param .u64 smem")
    if k.meta_columns:
        params.append(".param .u64 meta")
    if sum(k.scale_columns):
        params.append(".param .u64 scales")
    sparse, scaled = ".sp." in k.opcode, ".block_scale" in k.opcode
    head = [f".visible .entry {k.name}({', '.join(params)})"]
    if g == 2:
        head.append(".explicitcluster .reqnctapercluster 2, 1, 1")
    body = ["    .shared .align 16 .b32 taddr;", "    .shared .align 8 .b64 mbar;",
            "    .reg .b32 %r<24>;", "    .reg .b64 %rd<12>;", "    .reg .pred %p<10>;"]
    if k.smem_bytes:
        body.insert(0, f"    .shared .align 1024 .b8 img[{k.smem_bytes}];")
    if k.reads or k.meta_columns or sum(k.scale_columns):
        body.append(f"    .reg .b32 %v<{MAX_X}>;")
    body += ["    mov.u32 %r5, %tid.x;", "    shr.u32 %r6, %r5, 5;",
             "    setp.eq.u32 %p1, %r6, 0;", "    setp.eq.u32 %p3, %r5, 0;"]
    if g == 2:  # one thread of the cluster's first CTA issues the pair's mma
        body += ["    mov.u32 %r13, %cluster_ctarank;",
                 "    setp.eq.and.u32 %p3, %r13, 0, %p3;"]
    body += ["    @!%p1 bra ALLOCATED;",
             f"    tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32 [taddr], {cols};",
             f"    tcgen05.relinquish_alloc_permit.cta_group::{g}.sync.aligned;",
             "ALLOCATED:",
             *_copy_image(k),
             "    setp.eq.u32 %p6, %r5, 0;",
             "    @%p6 mbarrier.init.shared::cta.b64 [mbar], 1;",
             "    fence.mbarrier_init.release.cluster;" if g == 2 else "",
             "    tcgen05.fence::before_thread_sync;",
             "    barrier.cluster.arrive.aligned;\n    barrier.cluster.wait.aligned;" if g == 2
             else "    bar.sync 0;",
             "    tcgen05.fence::after_thread_sync;",
             "    ld.shared.b32 %r1, [taddr];",
             *_store_meta(k), *_store_scales(k)]
    if k.descriptors is None:
        body += ["    ld.param.u64 %rd1, [adesc];", "    ld.param.u64 %rd2, [bdesc];"]
    else:
        body += [f"    mov.b64 %rd1, 0x{k.descriptors[0]:016x};",
                 f"    mov.b64 %rd2, 0x{k.descriptors[1]:016x};"]
    if k.smem_bytes:  # the start address fields (bits 0-13, address >> 4) + the image's
        body += ["    mov.u32 %r16, img;", "    shr.u32 %r16, %r16, 4;",
                 "    cvt.u64.u32 %rd8, %r16;", "    add.u64 %rd1, %rd1, %rd8;",
                 "    add.u64 %rd2, %rd2, %rd8;"]
    body += ["    ld.param.u32 %r2, [idesc];",
             "    setp.ne.u32 %p2, %r5, %r5;"]  # enable-input-d false: D = A x B
    extra = ""
    if sparse:
        body.append(f"    add.u32 %r9, %r1, {META_COLUMN};")
        extra += "[%r9], "
    scales = ""
    if scaled:
        body += [f"    add.u32 %r7, %r1, {SCALE_A_COLUMN};",
                 f"    add.u32 %r8, %r1, {SCALE_B_COLUMN};"]
        scales = "[%r7], [%r8], "
    if k.opcode.startswith("tcgen05.cp."):  # a copy: the source's descriptor, into taddr
        body.append(f"    @%p3 {k.opcode} [%r1], %rd1;")
    else:
        body.append(f"    @%p3 {k.opcode} [%r1], %rd1, %rd2, {extra}%r2, {scales}%p2;")
    if g == 2:  # both CTAs' mbarriers hear the pair's completion
        body += ["    mov.b16 %rs1, 3;",
                 "    @%p3 tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster"
                 ".multicast::cluster.b64 [mbar], %rs1;"]
        body.insert(4, "    .reg .b16 %rs<2>;")
    else:
        body.append("    @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster"
                    ".b64 [mbar];")
    if k.reads:
        body += _read_back(k)
    body += ["    tcgen05.fence::before_thread_sync;",
             "    barrier.cluster.arrive.aligned;\n    barrier.cluster.wait.aligned;" if g == 2
             else "    bar.sync 0;",
             "    @!%p1 bra DONE;",
             f"    tcgen05.dealloc.cta_group::{g}.sync.aligned.b32 %r1, {cols};",
             "DONE:", "    ret;"]
    return "\n".join([*head, "{", *(x for x in body if x), "}", ""])


def module_text(kernels: Sequence[Tc05Kernel], target: str = "sm_100a") -> str:
    """One PTX module of the given entries."""
    return "".join([f".version 9.0\n.target {target}\n.address_size 64\n",
                    *("\n" + kernel_text(k) for k in kernels)])


# ---- the catalog's forms as entries ------------------------------------------------------------


def tcgen05_module(entries: Sequence[tuple[str, int, int, int]]) -> str:
    """An entry per (name, bits, A descriptor, B descriptor), one for each kind that reads
    that width; ValueError: a width no kind here reads."""
    kernels = []
    for name, bits, a, b in entries:
        if bits not in KINDS:
            raise ValueError(f"{name}: no tcgen05.mma kind here reads {bits}-bit elements")
        kernels += [Tc05Kernel(f"{name}_{kind}", mma_opcode(kind), 64, (a, b))
                    for kind in KINDS[bits]]
    return module_text(kernels)


def scale_opcode(kind: str, form: str, sparse: bool = False, cta_group: int = 1) -> str:
    """``tcgen05.mma{.sp}.cta_group::G.kind::<kind>.block_scale.<form>``."""
    return mma_opcode(kind, cta_group, sparse, scale=form)


def tcgen05_scale_module(forms: Sequence[tuple[str, str]], sparse: bool = False,
                         groups: Sequence[int] = (1, 2)) -> str:
    """An entry per (kind, form) of a block-scaled tcgen05.mma and CTA group (one CTA, and a
    pair for M = 256 and a pair's M = 128), A and B from shared-memory descriptors, the scale
    factors (and, ``sparse``, the metadata) from tensor memory."""
    return module_text([Tc05Kernel(f"scale{'_sp' if sparse else ''}_{k}_{kind}_g{g}",
                                   scale_opcode(kind, form, sparse, g), 512)
                        for g in groups for k, (kind, form) in enumerate(forms)])


PLAIN_KINDS = ("tf32", "f16", "f8f6f4", "i8")  # the kinds without block scaling
# the issue forms of a plain kind: (CTA group, .ws) -- .ws is one CTA's only
ISSUES = ((1, False), (2, False), (1, True))


def tcgen05_kinds_module(kinds: Sequence[str] = PLAIN_KINDS) -> str:
    """An entry per plain kind, dense and ``.sp`` (its metadata in tensor memory), each issued
    by one CTA, by a pair and as ``.ws``: every opcode a layout of the catalog is read from."""
    return module_text([Tc05Kernel(f"{'sparse' if sp else 'dense'}_{kind}_g{g}"
                                   f"{'_ws' if ws else ''}",
                                   mma_opcode(kind, g, sp, ws), 512 if sp else 64)
                        for sp in (False, True) for g, ws in ISSUES for kind in kinds])


def datapath_kernel(name: str, layout: str, cta_group: int, sparse: bool, ws: bool,
                    n: int, blocks: Sequence[tuple[int, int, int, int]], kind: str = "f16",
                    smem_bytes: int = 0, meta_columns: int = 0) -> Tc05Kernel:
    """The mma of a data-path layout at N = ``n`` (``kind``, default ``kind::f16``; ``.sp``
    for Layout C, ``.ws`` for E and G) and its read-back: per block (cta, warp, first column,
    columns) one warp's loads.  The allocation covers every block's columns.  ``smem_bytes``:
    A and B come from an image of that many bytes a CTA (``Tc05Kernel.smem_bytes``)."""
    reads = tuple(Read(c, w, t0, count) for c, w, t0, count in blocks)
    last = max((r.column + r.count for r in reads), default=32)
    cols = max(32, 1 << (last - 1).bit_length())
    if sparse:
        cols = 512  # the metadata sits at column META_COLUMN
    suffix = "" if kind == "f16" else f"_{kind}"
    return Tc05Kernel(f"{name}_{layout}_n{n}{suffix}",
                      mma_opcode(kind, cta_group, sparse, ws), cols, None, reads, last,
                      smem_bytes, meta_columns)


def scale_kernel(m: DataPathMap, kind: str, form: str, scale_columns: tuple[int, int],
                 smem_bytes: int = 0) -> Tc05Kernel:
    """A block-scaled mma (``.kind::<kind>.block_scale.<form>``) read back by the data path
    ``m``, scale_A's and scale_B's words stored from ``scales`` first (512 columns: the factors
    sit at SCALE_A_COLUMN and SCALE_B_COLUMN)."""
    k = datapath_kernel("scaled", m.layout, m.cta_group, False, m.ws, m.n,
                        [(b.cta, b.warp, b.tcol_lo, b.tcol_hi - b.tcol_lo + 1)
                         for b in m.blocks], kind, smem_bytes)
    tag = form.replace("scale_vec::", "v")
    return replace(k, name=f"{k.name}_{tag}", opcode=scale_opcode(kind, form, False,
                                                                  m.cta_group),
                   columns=512, scale_columns=scale_columns)


def tcgen05_cp_module() -> str:
    """An entry per tcgen05.cp form of the variant table (``base.matrix_variants.
    tcgen05_cp_forms``: shape, multicast, decompression) and cta_group, the source from the
    descriptor parameter ``adesc``: ``tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r1],
    %rd1;``."""
    from ..base.matrix_variants import tcgen05_cp_forms, tcgen05_cp_opcode
    return module_text([Tc05Kernel(f"cp_{k}_g{g}", tcgen05_cp_opcode(shape, mc, fmt, g), 32)
                        for k, (shape, mc, fmt) in enumerate(tcgen05_cp_forms())
                        for g in (1, 2)])


# the names of catalog_modules' modules, in its order
# (``tcgen05.mma.runs``, the tcgen05-mma family's kernels, is ``ptx._tcgen05_modules``'s:
# ``formal.execute.tcgen05_mma.run_kernels`` makes them from the records)
RUNS_MODULE = "tcgen05.mma.runs"
TCGEN05_MODULES = ("tcgen05.mma.datapath", RUNS_MODULE, "tcgen05.mma.kinds",
                   "tcgen05.mma.block_scale", "tcgen05.mma.sp.block_scale", "tcgen05.cp")


def catalog_modules(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(name, PTX) of the tcgen05 modules the variant table has no row for: the data
    paths at each layout's smallest and largest N (from the records' ``tcgen05.datapath``;
    none without them), every plain
    kind dense and ``.sp`` by one CTA, a pair and ``.ws``, every legal block-scaled form,
    dense and ``.sp``, by one CTA and a pair (``base.matrix_variants.TCGEN05_SCALE_FORMS``),
    and every tcgen05.cp form."""
    from ..base.matrix_variants import DATAPATH_ROWS, TCGEN05_SCALE_FORMS
    forms = sorted({(f[0], f[1]) for f in TCGEN05_SCALE_FORMS})
    out = []
    if any(r.get("instruction") == DATAPATH_INSTRUCTION for r in records):
        out.append(module_text([datapath_map_kernel(datapath_map(records, letter, n))
                                for letter, *_r, ns in DATAPATH_ROWS for n in (ns[0], ns[-1])]))
    out += [tcgen05_kinds_module(), tcgen05_scale_module(forms),
            tcgen05_scale_module(forms, True), tcgen05_cp_module()]
    mine = [n for n in TCGEN05_MODULES if n != RUNS_MODULE]
    return list(zip(mine[len(mine) - len(out):], out, strict=True))


def row_kernel(v: Any) -> Tc05Kernel:
    """The kernel of a ``tcgen05-mma`` row (``base.matrix_variants.TCGEN05_MMA_VARIANTS``)
    without the records (what ``ptx.module`` assembles where no layouts are at hand): its mma
    as the row issues it (``.sp``, ``.ws``, ``.block_scale`` with its ``.scale_vec``), an
    image, and every warp of each CTA reading the first N / CTAs columns back -- the run's
    kernel (``tcgen05_mma.kernel_of``) reads its data path's blocks and stores the metadata
    or the scale factors by the layouts instead."""
    from ..base.matrix_variants import datapath_row, issued_ws
    g = datapath_row(v.datapath)[2]
    sp = v.instruction == "tcgen05.mma.sp"
    k = datapath_kernel("row", v.datapath, g, sp, issued_ws(v), v.n,
                        [(c, w, 0, v.n // g) for c in range(g) for w in range(4)], v.kind,
                        4096)
    if not v.scale:
        return k
    form = f"scale_vec::{v.scale_vec}X"
    return replace(k, name=f"{k.name}_v{v.scale_vec}X", columns=512,
                   opcode=scale_opcode(v.kind, form, sp, g))


def datapath_map_kernel(m: DataPathMap) -> Tc05Kernel:
    """The kernel of a data-path layout read from the records (``execute.datapath``): its
    mma and each block's read-back at the record's lane and column."""
    return datapath_kernel("datapath", m.layout, m.cta_group, m.sparse, m.ws, m.n,
                           [(b.cta, b.warp, b.tcol_lo, b.tcol_hi - b.tcol_lo + 1)
                            for b in m.blocks])
