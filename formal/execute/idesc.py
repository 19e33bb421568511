"""tcgen05.mma's instruction descriptor: one table of bit fields, and the word built from it.

The 32-bit ``idesc`` operand of ``tcgen05.mma`` says what the tensor core multiplies: the
element formats of A, B and D, M and N, which operand is transposed (M/N-major), the
sparsity selector, and -- for the block-scaled kinds -- which bytes of the scale-factor
words to read.  Its layout depends on the kind, so ``FIELDS`` lists every field once with the
layouts (``plain``: tf32, f16, f8f6f4, i8; ``scaled``: mxf8f6f4, mxf4, mxf4nvf4) that have it.
A worked example, ``kind::f16``, f16 x f16 -> f32, M = 128, N = 64, both K-major::

    d_format  bits  4-5   F32 = 1            1 << 4   = 0x00000010
    n_dim     bits 17-22  N >> 3 = 8         8 << 17  = 0x00100000
    m_dim     bits 24-28  M >> 4 = 8         8 << 24  = 0x08000000
                                             word       0x08100010

Every other field is 0 (dense, formats F16 = 0, no negation, K-major).  ``encode_idesc``
builds the word from an ``Idesc`` (a record of field values) and refuses a value a field
cannot hold or the kind does not admit; ``decode_idesc`` reads the record back:
``decode_idesc(x.kind, encode_idesc(x)) == x``.

Sources (facts only, the bits and values; no text copied): the plain layout is the PTX ISA's
instruction-descriptor table for ``.kind::tf32/f16/f8f6f4/i8`` (9.7.16.4.2), read this stop.
The block-scaled layout's fields are as CuTe's ``UMMA::InstrDescriptorBlockScaled`` states
them (CUTLASS 4.2, ``cute/arch/mma_sm100_desc.hpp``): scale factor IDs (A: bits 29-30, B:
4-5), the scale type (bit 23) and CuTe's bit 31 (``k_size_``: K = 96 of the mxf4 kinds); the
PTX ISA's block-scaled table was not read beside it, so those rows rest on CuTe alone.
``tests/test_gpu_tcgen05_idesc.py`` reads the wheel's bitfields and compares their order and
widths with this table.  The scale vector size is not a field: it is the opcode's
``.scale_vec::NX`` / ``.block16`` / ``.block32`` qualifier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

PLAIN_KINDS = ("tf32", "f16", "f8f6f4", "i8")
SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
SOURCE_PLAIN = "PTX ISA 9.7.16.4.2, instruction descriptor of .kind::tf32/f16/f8f6f4/i8"
SOURCE_SCALED = ("CuTe UMMA::InstrDescriptorBlockScaled (CUTLASS 4.2 cute/arch/"
                 "mma_sm100_desc.hpp); not checked against the PTX ISA's block-scaled table")
SOURCES = {"plain": SOURCE_PLAIN, "scaled": SOURCE_SCALED}

# element format codes of A and B, by kind (the tables' value columns)
F8F6F4_CODES = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}
AB_CODES: dict[str, dict[str, int]] = {
    "tf32": {"tf32": 2}, "f16": {"f16": 0, "bf16": 1}, "f8f6f4": F8F6F4_CODES,
    "i8": {"u8": 0, "s8": 1}, "mxf8f6f4": F8F6F4_CODES, "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1}}
D_CODES: dict[str, dict[str, int]] = {
    "tf32": {"f32": 1}, "f16": {"f16": 0, "f32": 1}, "f8f6f4": {"f16": 0, "f32": 1},
    "i8": {"s32": 2}}
SCALE_CODES = {"ue4m3": 0, "ue8m0": 1}
MAX_SHIFT_CODES = {0: 0, 8: 1, 16: 2, 32: 3}


@dataclass(frozen=True)
class IdescField:
    """One bit field: bits ``lo`` .. ``lo + width - 1``, what it holds, the layouts that
    have it, and the values it may take (None: any that fits)."""

    name: str
    lo: int
    width: int
    meaning: str
    layouts: tuple[str, ...]  # "plain" and / or "scaled"
    legal: tuple[int, ...] | None = None

    @property
    def hi(self) -> int:
        return self.lo + self.width - 1

    @property
    def source(self) -> str:
        """Where the field's facts come from: each of its layouts' source."""
        return "; ".join(SOURCES[lay] for lay in self.layouts)


BOTH = ("plain", "scaled")
FIELDS: tuple[IdescField, ...] = (
    IdescField("sparse_selector", 0, 2, "sparsity selector (metadata id2), sparse only", BOTH,
          (0, 1, 2, 3)),
    IdescField("sparse", 2, 1, "0 dense, 1 sparse", BOTH, (0, 1)),
    IdescField("saturate", 3, 1, "saturate the integer result (kind::i8 only)", ("plain",), (0, 1)),
    IdescField("d_format", 4, 2, "D's format: F16 0, F32 1, S32 2", ("plain",), (0, 1, 2)),
    IdescField("b_scale_id", 4, 2, "which byte of scale_B's words (scale factor B ID)",
          ("scaled",), (0, 1, 2, 3)),
    IdescField("a_format", 7, 3, "A's element format (AB_CODES)", BOTH),
    IdescField("b_format", 10, 3, "B's element format (AB_CODES)", BOTH),
    IdescField("negate_a", 13, 1, "negate A", BOTH, (0, 1)),
    IdescField("negate_b", 14, 1, "negate B", BOTH, (0, 1)),
    IdescField("a_major", 15, 1, "A transposed: 0 K-major, 1 M-major", BOTH, (0, 1)),
    IdescField("b_major", 16, 1, "B transposed: 0 K-major, 1 N-major", BOTH, (0, 1)),
    IdescField("n_dim", 17, 6, "N >> 3", BOTH, tuple(range(1, 33))),
    IdescField("scale_format", 23, 1, "scale factors' format: UE4M3 0, UE8M0 1", ("scaled",),
          (0, 1)),
    IdescField("m_dim", 24, 5, "M >> 4", BOTH, (2, 4, 8, 16)),
    IdescField("max_shift", 30, 2, ".ws B reuse: no shift 0, at most 8 / 16 / 32 1 / 2 / 3",
          ("plain",), (0, 1, 2, 3)),
    IdescField("a_scale_id", 29, 2, "which byte of scale_A's words (scale factor A ID)",
          ("scaled",), (0, 1, 2, 3)),
    IdescField("k96", 31, 1, "K = 96 (the mxf4 kinds' dense K = 96 forms; CuTe's k_size_)",
          ("scaled",), (0, 1)),
)


def idesc_layout(kind: str) -> str:
    """``plain`` or ``scaled``; ValueError for a kind neither table has."""
    if kind in PLAIN_KINDS:
        return "plain"
    if kind in SCALED_KINDS:
        return "scaled"
    raise ValueError(f"no instruction descriptor layout for kind::{kind}")


def idesc_fields(kind: str) -> tuple[IdescField, ...]:
    """The fields of ``kind``'s layout, lowest bit first."""
    lay = idesc_layout(kind)
    return tuple(sorted((f for f in FIELDS if lay in f.layouts), key=lambda f: f.lo))


@dataclass(frozen=True)
class Idesc:
    """What an instruction descriptor says, as field values (see ``FIELDS``) and the kind."""

    kind: str
    m_dim: int = 0
    n_dim: int = 0
    a_format: int = 0
    b_format: int = 0
    d_format: int = 0
    sparse: int = 0
    sparse_selector: int = 0
    saturate: int = 0
    negate_a: int = 0
    negate_b: int = 0
    a_major: int = 0
    b_major: int = 0
    max_shift: int = 0
    scale_format: int = 0
    a_scale_id: int = 0
    b_scale_id: int = 0
    k96: int = 0

    @property
    def m(self) -> int:
        return self.m_dim << 4

    @property
    def n(self) -> int:
        return self.n_dim << 3


class IdescError(ValueError):
    """A value the descriptor cannot hold, or that its kind does not admit."""


def encode_idesc(x: Idesc) -> int:
    """The 32-bit word of ``x``; IdescError names the first field that cannot hold its value,
    and a field the kind's layout lacks that is not 0."""
    mine = idesc_fields(x.kind)
    names = {f.name for f in mine}
    for name in (g.name for g in fields(Idesc)):
        if name != "kind" and name not in names and getattr(x, name):
            raise IdescError(f"kind::{x.kind}'s descriptor has no field {name}")
    word = 0
    for f in mine:
        v = int(getattr(x, f.name))
        if not 0 <= v < 1 << f.width or (f.legal is not None and v not in f.legal):
            raise IdescError(f"{f.name} = {v} is not legal in bits {f.lo}-{f.hi} ({f.meaning})")
        word |= v << f.lo
    return word


def decode_idesc(kind: str, word: int) -> Idesc:
    """The record a word of ``kind``'s layout holds (bits no field names are ignored)."""
    vals = {f.name: (word >> f.lo) & ((1 << f.width) - 1) for f in idesc_fields(kind)}
    return Idesc(kind, **vals)


def idesc_for(kind: str, *, m: int, n: int, a: str, b: str, d: str = "", a_major: str = "K",
             b_major: str = "K", sparse: bool = False, selector: int = 0, scale: str = "",
             a_scale_id: int = 0, b_scale_id: int = 0, max_shift: int = 0,
             k96: bool = False) -> Idesc:
    """The record of a tcgen05.mma of ``kind``: M x N, A and B (and, plain kinds, D) by
    type name, majorness "K" | "MN", the sparsity selector, and (block-scaled kinds) the
    scale type and the scale factor IDs; IdescError names a type the kind has no code for."""
    codes = AB_CODES[kind]
    for t in (a, b):
        if t not in codes:
            raise IdescError(f"kind::{kind} has no format code for {t}")
    scaled = idesc_layout(kind) == "scaled"
    if not scaled and d not in D_CODES[kind]:
        raise IdescError(f"kind::{kind} has no D format code for {d!r}")
    if scaled and scale not in SCALE_CODES:
        raise IdescError(f"kind::{kind} needs a scale type of {sorted(SCALE_CODES)}")
    if m % 16 or n % 8:
        raise IdescError(f"M = {m} and N = {n} must be multiples of 16 and 8")
    return Idesc(kind, m_dim=m >> 4, n_dim=n >> 3, a_format=codes[a], b_format=codes[b],
                 d_format=0 if scaled else D_CODES[kind][d], sparse=int(sparse),
                 sparse_selector=selector if sparse else 0,
                 a_major=int(a_major == "MN"), b_major=int(b_major == "MN"),
                 max_shift=MAX_SHIFT_CODES[max_shift],
                 scale_format=SCALE_CODES[scale] if scaled else 0,
                 a_scale_id=a_scale_id, b_scale_id=b_scale_id, k96=int(k96))


def idesc_types(x: Idesc) -> Mapping[str, str]:
    """A's, B's and (plain kinds) D's type names as ``x``'s codes say (``?`` for a code the
    kind has no name for)."""
    inv = {c: t for t, c in AB_CODES[x.kind].items()}
    out = {"a": inv.get(x.a_format, "?"), "b": inv.get(x.b_format, "?")}
    if idesc_layout(x.kind) == "plain":
        out["d"] = {c: t for t, c in D_CODES[x.kind].items()}.get(x.d_format, "?")
    return out


__all__ = ["FIELDS", "Idesc", "IdescError", "IdescField", "decode_idesc", "encode_idesc",
           "idesc_fields", "idesc_for", "idesc_layout", "idesc_types"]
