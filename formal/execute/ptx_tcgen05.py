"""tcgen05.mma kernels whose shared-memory descriptors are the catalog's (compile-only: no lent
device runs sm_100a, so ``ptxas -arch=sm_100a`` assembling them is all that is checked).

One module holds one entry per layout.  Each entry allocates tensor memory (warp 0), moves the
two 64-bit descriptors in as immediates -- the values ``formal.model.smem.descriptor_of``
packs for a catalog layout: LBO and SBO >> 4, the fixed constant 0b001 in bits 46-48, the
swizzle code in bits 61-63 -- takes the 32-bit instruction descriptor as a parameter (its
fields are not this catalog's), issues ``tcgen05.mma.cta_group::1.kind::<kind>`` from one
thread, commits to an mbarrier and frees the tensor memory.  A worked example, the K-major
128B layout of 16-bit elements (SBO 1024 bytes): descriptor ``0x4000404000010000`` (SBO
field 64 in bits 32-45, the constant 1 at bit 46, code 2 in bits 61-63, LBO field 1), in
``mov.b64 %rd1, 0x4000404000010000;``.

``KINDS`` names the kind that reads each element width from shared memory: 32 bits
``kind::tf32``, 16 ``kind::f16``, 8 ``kind::f8f6f4`` (e4m3 ...) and ``kind::i8``; packed
4-bit operands are read by the block-scaled kinds only, whose scale operands this module does
not write (those layouts are not assembled here).
"""

from __future__ import annotations

from collections.abc import Sequence

KINDS = {32: ("tf32",), 16: ("f16",), 8: ("f8f6f4", "i8")}


def _entry(name: str, kind: str, a_desc: int, b_desc: int) -> str:
    return f"""
.visible .entry {name}(.param .u32 idesc)
{{
    .shared .align 16 .b32 taddr;
    .shared .align 8 .b64 mbar;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    mov.u32 %r5, %tid.x;
    shr.u32 %r6, %r5, 5;
    setp.eq.u32 %p1, %r6, 0;
    @!%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 64;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    bar.sync 0;
    ld.shared.b32 %r1, [taddr];
    mov.b64 %rd1, 0x{a_desc:016x};
    mov.b64 %rd2, 0x{b_desc:016x};
    ld.param.u32 %r2, [idesc];
    setp.ne.u32 %p2, %r5, %r5;
    setp.eq.u32 %p3, %r5, 0;
    @%p3 tcgen05.mma.cta_group::1.kind::{kind} [%r1], %rd1, %rd2, %r2, %p2;
    @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];
    bar.sync 0;
    @!%p1 bra DONE;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 64;
DONE:
    ret;
}}
"""


def tcgen05_module(entries: Sequence[tuple[str, int, int, int]]) -> str:
    """One PTX module for sm_100a: an entry per (name, bits, A descriptor, B descriptor), one
    for each kind that reads that width; ValueError: a width no kind here reads."""
    out = [".version 9.0\n.target sm_100a\n.address_size 64\n"]
    for name, bits, a, b in entries:
        if bits not in KINDS:
            raise ValueError(f"{name}: no tcgen05.mma kind here reads {bits}-bit elements")
        out += [_entry(f"{name}_{kind}", kind, a, b) for kind in KINDS[bits]]
    return "".join(out)


_SCALE_BODY = """
.visible .entry {name}(.param .u32 idesc, .param .u64 adesc, .param .u64 bdesc)
{{
    .shared .align 16 .b32 taddr;
    .shared .align 8 .b64 mbar;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    mov.u32 %r5, %tid.x;
    shr.u32 %r6, %r5, 5;
    setp.eq.u32 %p1, %r6, 0;
    @!%p1 bra ALLOCATED;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 512;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
    bar.sync 0;
    ld.shared.b32 %r1, [taddr];
    add.u32 %r7, %r1, 256;
    add.u32 %r8, %r1, 272;
    add.u32 %r9, %r1, 288;
    ld.param.u64 %rd1, [adesc];
    ld.param.u64 %rd2, [bdesc];
    ld.param.u32 %r2, [idesc];
    setp.ne.u32 %p2, %r5, %r5;
    setp.eq.u32 %p3, %r5, 0;
    @%p3 {opcode} [%r1], %rd1, %rd2, {meta}%r2, [%r7], [%r8], %p2;
    @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];
    bar.sync 0;
    @!%p1 bra DONE;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 512;
DONE:
    ret;
}}
"""


def scale_opcode(kind: str, form: str, sparse: bool = False) -> str:
    """``tcgen05.mma{.sp}.cta_group::1.kind::<kind>.block_scale.<form>`` (``form`` as the
    catalog writes it: ``scale_vec::2X``, ``block32``)."""
    sp = ".sp" if sparse else ""
    return f"tcgen05.mma{sp}.cta_group::1.kind::{kind}.block_scale.{form}"


def tcgen05_scale_module(forms: Sequence[tuple[str, str]], sparse: bool = False) -> str:
    """One PTX module for sm_100a: an entry per (kind, form) of a block-scaled tcgen05.mma,
    A and B from shared-memory descriptors, the scale factors (and, ``sparse``, the metadata)
    from tensor memory."""
    out = [".version 9.0\n.target sm_100a\n.address_size 64\n"]
    for k, (kind, form) in enumerate(forms):
        name = f"scale{'_sp' if sparse else ''}_{k}_{kind}"
        out.append(_SCALE_BODY.format(name=name, opcode=scale_opcode(kind, form, sparse),
                                      meta="[%r9], " if sparse else ""))
    return "".join(out)
