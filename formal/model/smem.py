"""Shared-memory matrix layouts of wgmma and tcgen05 as values: a swizzle, a canonical layout at
its parameters, the swizzle atom it is made of, and the matrix descriptor that names it.

**Units.**  A canonical layout counts *elements*: ``((8,m),(T,2k)):((1T,SBO),(1,LBO))`` maps a
coordinate (row, column) of the M x K (or K x N) tile to an element offset, with
``T = 128 / bits`` elements in one 16-byte unit and LBO, SBO in elements too (the PTX ISA's
tables state them in bytes, ``64*sizeof(tf32)``; divided by the element size here).  The swizzle
acts on the *byte* address ``offset * bits / 8`` (CuTe's ``Swizzle<B,M,S> o smem_ptr o layout``):

    Swizzle<3,4,3>  (128-byte mode)      byte address bits
         9 8 7 | 6 5 4 | 3 2 1 0
         y y y | z z z | . . . .          zzz ^= yyy:  the 16-byte chunk (bits 4-6) of a
           row     chunk   byte           128-byte row is XORed with the row (bits 7-9)
                                          within each 1024-byte atom

``B`` bits at ``M + S`` are XORed into the ``B`` bits at ``M``; with ``M = 4`` the low four
bits, the byte within a 16-byte chunk, never move, so a chunk stays whole.  The modes are
``Swizzle<0,4,3>`` (none), ``<1,4,3>`` (32B), ``<2,4,3>`` (64B), ``<3,4,3>`` (128B); the atom of
mode ``c = 2^B`` chunks is 8 rows of ``16c`` bytes.

A worked example, K-major, no swizzle, tf32 (T = 4), m = k = 2, SBO = 32 and LBO = 64 elements:
``((8,2),(4,4)):((4,32),(1,64))``; element (row 9, column 5) -> row digits (1, 1), column digits
(1, 1) -> 1*4 + 1*32 + 1*1 + 1*64 = 101, byte 404.  Its descriptor holds ``LBO bytes >> 4 =
256 >> 4 = 16`` in bits 16-29 and ``128 >> 4 = 8`` in bits 32-45 (``DescriptorField``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..parse.smem import (
    CanonicalRow,
    Example,
    KSliceRow,
    LayoutText,
    SmemText,
    SymEntry,
    read_smem,
)
from .cute import CuteLayout, flat_modes, size

# the reader's records are the model's values here (frozen, evaluated by this module); the
# prove stage takes them from the model, never from the parser
__all__ = ["CanonicalRow", "Example", "KSliceRow", "LayoutText", "SmemText", "SymEntry",
           "read_smem"]

# bits of one element in shared memory, by the type names the sections use
ELEMENT_BITS = {
    "tf32": 32, "f32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
    "e2m1": 4, "b1": 1,
}

CHUNKS = {"none": 1, "32B": 2, "64B": 4, "128B": 8}  # 16-byte chunks in one row of an atom


@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B,M,S>`` on byte addresses (see the module's drawing)."""

    bits: int
    base: int
    shift: int

    def __call__(self, addr: Any) -> Any:
        """The swizzled address of ``addr``: an int, or an int64 array of them (each at once)."""
        mask = ((1 << self.bits) - 1) << (self.base + self.shift)
        return addr ^ ((addr & mask) >> self.shift)

    @property
    def period(self) -> int:
        """Bytes of one repeating pattern: the swizzle is a permutation of each aligned block."""
        return 1 << (self.bits + self.base + self.shift)

    def __str__(self) -> str:
        return f"Swizzle<{self.bits},{self.base},{self.shift}>"


def substitute(t: Any, params: dict[str, int]) -> Any:
    """A layout as written, its names replaced by their values: ``(2T, SBO)`` -> ``(8, 64)``;
    KeyError names a parameter the layout uses and ``params`` lacks."""
    if isinstance(t, SymEntry):
        return t.scale * (params[t.name] if t.name else 1)
    return tuple(substitute(x, params) for x in t)


def names_in(t: Any) -> set[str]:
    if isinstance(t, SymEntry):
        return {t.name} if t.name else set()
    out: set[str] = set()
    for x in t:
        out |= names_in(x)
    return out


@dataclass(frozen=True)
class SwizzledLayout:
    """A tile of ``bits``-bit elements in shared memory: (row, column) -> byte address.  Mode 0
    of ``layout`` runs along M or N, mode 1 along K, for either majorness."""

    layout: CuteLayout
    swizzle: Swizzle
    bits: int

    @cached_property
    def extent(self) -> tuple[int, int]:
        return (size(self.layout.shape[0]), size(self.layout.shape[1]))

    @cached_property
    def offset_array(self) -> Any:
        """Every coordinate's element offset, (mn, k) at ``mn + rows * k`` (CuTe's order), as
        one read-only int64 array: each mode's digit ``i`` adds ``i * stride``, the earlier
        modes varying fastest."""
        import numpy as np
        out = np.zeros(1, dtype=np.int64)
        for extent, stride in flat_modes(self.layout.shape, self.layout.stride):
            out = (np.arange(extent, dtype=np.int64)[:, None] * stride + out[None, :]).ravel()
        out.setflags(write=False)
        return out

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        """``offset_array`` as Python integers."""
        return tuple(self.offset_array.tolist())

    def offset(self, coord: tuple[int, int]) -> int:
        """The element offset (before the swizzle): ``evaluate(shape, stride, coord)``."""
        return self.offsets[coord[0] + self.extent[0] * coord[1]]

    def bit_address(self, coord: tuple[int, int]) -> int:
        """The swizzled address in bits (byte * 8 + the bit within it, for sub-byte types)."""
        b = self.offset(coord) * self.bits
        return self.swizzle(b // 8) * 8 + b % 8

    @cached_property
    def bit_address_array(self) -> Any:
        """``bit_address`` of every coordinate, in the order of ``offsets``, as one read-only
        int64 array (every element at once)."""
        b: Any = self.offset_array * self.bits
        out = self.swizzle(b // 8) * 8 + b % 8
        out.setflags(write=False)
        return out

    @cached_property
    def bit_addresses(self) -> tuple[int, ...]:
        """``bit_address_array`` as Python integers."""
        return tuple(self.bit_address_array.tolist())

    @cached_property
    def addresses_text(self) -> str:
        """``addresses_text`` of the bit addresses (what the layout's hash is of), once."""
        return addresses_text(self.bit_address_array)

    def address(self, coord: tuple[int, int]) -> int:
        return self.bit_address(coord) // 8

    def coords(self) -> Iterator[tuple[int, int]]:
        rows, cols = self.extent
        for c in range(cols):
            for r in range(rows):
                yield (r, c)

    def __str__(self) -> str:
        return f"{self.swizzle} o {self.layout}"


def at_params(text: LayoutText, params: dict[str, int], bits: int,
              swizzle: tuple[int, int, int] | None = None) -> SwizzledLayout:
    """A layout as written evaluated at its parameters (elements); KeyError: a missing name."""
    sw = text.swizzle or swizzle or (0, 4, 3)
    lay = CuteLayout(substitute(text.shape, params), substitute(text.stride, params))
    return SwizzledLayout(lay, Swizzle(*sw), bits)


def atom_of(row: CanonicalRow) -> tuple[int, int]:
    """The swizzle atom a canonical layout is made of, MN x K with the leading dimension in
    16-byte units (the atom table's form): K-major ``((8,m),(T,2k)):((cT,SBO),(1,T))`` rows
    ``cT`` elements apart -> 8 x c; MN-major ``((T,c,m),(8,k))`` -> c x 8."""
    shape, stride = row.layout.shape, row.layout.stride
    if row.major == "K":
        first = stride[0][0]
        c = first.scale if isinstance(first, SymEntry) and first.name == "T" else 0
        rows = shape[0][0].scale if isinstance(shape[0][0], SymEntry) else 0
        return (rows, c)
    inner = shape[0][1]
    c = inner.scale if isinstance(inner, SymEntry) and not inner.name else 0
    k_rows = shape[1][0].scale if isinstance(shape[1][0], SymEntry) else 0
    return (c, k_rows)


# ---- matrix descriptors ----------------------------------------------------------------------


@dataclass(frozen=True)
class DescriptorField:
    """One bit field of a 64-bit matrix descriptor, named as the spec names it."""

    name: str
    lo: int
    hi: int
    encoded: bool = False  # holds matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
    constant: int | None = None

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1


WGMMA_DESCRIPTOR = (
    DescriptorField("matrix start address", 0, 13, True),
    DescriptorField("leading dimension byte offset", 16, 29, True),
    DescriptorField("stride dimension byte offset", 32, 45, True),
    DescriptorField("matrix base offset", 49, 51),
    DescriptorField("swizzling mode", 62, 63),
)
TCGEN05_DESCRIPTOR = (
    DescriptorField("matrix start address", 0, 13, True),
    DescriptorField("leading dimension byte offset or absolute address", 16, 29, True),
    DescriptorField("stride dimension byte offset", 32, 45, True),
    DescriptorField("fixed constant", 46, 48, constant=0b001),
    DescriptorField("matrix base offset", 49, 51),
    DescriptorField("leading dimension stride mode", 52, 52),  # 0 relative, 1 absolute
    DescriptorField("fixed constant", 53, 60, constant=0),
    DescriptorField("swizzling mode", 61, 63),
)
DESCRIPTORS = {"wgmma": WGMMA_DESCRIPTOR, "tcgen05": TCGEN05_DESCRIPTOR}
SWIZZLE_CODES = {
    "wgmma": {"none": 0, "128B": 1, "64B": 2, "32B": 3},
    "tcgen05": {"none": 0, "128B-base32B": 1, "128B": 2, "64B": 4, "32B": 6},
}


def descriptor_encode(x: int) -> int:
    """The spec's matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4."""
    return (x & 0x3FFFF) >> 4


def pack_descriptor(family: str, values: dict[str, int]) -> int:
    """The 64-bit descriptor with each named field set (encoded where the field says so);
    ValueError names a field whose value does not fit."""
    out = 0
    for f in DESCRIPTORS[family]:
        v = f.constant if f.constant is not None else values.get(f.name, 0)
        if f.encoded:
            v = descriptor_encode(v)
        if not 0 <= v < 1 << f.width:
            raise ValueError(f"{f.name} = {v} does not fit bits {f.lo}-{f.hi}")
        out |= v << f.lo
    return out


# ---- the catalog: every majorness x swizzle mode x element width -----------------------------

# K bytes one instruction reads from each row (dense: k16 of f16, k8 of tf32, k32 of 8-bit, k256
# of b1, k64 of packed e2m1 are all 32 bytes); MN-major (transposed) operands by family
K_SLICE_BYTES = 32
WIDTHS = {
    ("wgmma", "K"): (32, 16, 8, 1),
    ("wgmma", "MN"): (16,),  # wgmma transposes .f16 / .bf16 only
    ("tcgen05", "K"): (32, 16, 8, 4),
    ("tcgen05", "MN"): (32, 16, 8),
}


# the operand types each width serves (tcgen05's 6- and 4-bit kinds unpacked sit in 8-bit
# containers; packed e2m1 is the 4-bit width)
TYPES_OF_WIDTH = {
    ("wgmma", 32): ("tf32",), ("wgmma", 16): ("f16", "bf16"),
    ("wgmma", 8): ("e4m3", "e5m2", "s8", "u8"), ("wgmma", 1): ("b1",),
    ("tcgen05", 32): ("tf32",), ("tcgen05", 16): ("f16", "bf16"),
    ("tcgen05", 8): ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "s8", "u8"),
    ("tcgen05", 4): ("e2m1",),
}


@dataclass(frozen=True)
class SmemInstance:
    """One catalog layout: a canonical row at the parameters of one instruction's tile."""

    family: str
    major: str
    mode: str
    bits: int
    params: dict[str, int]
    layout: SwizzledLayout
    row: CanonicalRow

    @property
    def id(self) -> str:
        return f"{self.family}.smem.{self.major}-major.{self.mode}.b{self.bits}"

    @property
    def types(self) -> tuple[str, ...]:
        return TYPES_OF_WIDTH.get((self.family, self.bits), (f"b{self.bits}",))


def tile_params(major: str, mode: str, bits: int, m: int = 2) -> dict[str, int]:
    """T, m, k, LBO, SBO (elements) of a tile of ``m`` atoms (core matrices without swizzle)
    along M or N and one instruction's K slice, packed densely: atoms one after the other."""
    t = 128 // bits
    c = CHUNKS[mode]
    k_elems = K_SLICE_BYTES * 8 // bits  # = 2T
    if major == "K":
        p = {"T": t, "m": m, "k": k_elems // (2 * t)}
        if mode == "none":
            p.update(LBO=8 * t, SBO=16 * t)
        else:
            p.update(SBO=8 * c * t, LBO=1)
        return p
    p = {"T": t, "m": m, "k": max(1, k_elems // 8)}
    if mode == "none":
        p.update(SBO=8 * t, LBO=8 * t * m)
    else:
        p.update(LBO=8 * c * t, SBO=8 * c * t * m)
    return p


def instances(family: str, rows: tuple[CanonicalRow, ...]) -> list[SmemInstance]:
    """The family's layouts: every canonical row at every element width it takes."""
    out = []
    for row in rows:
        for bits in WIDTHS.get((family, row.major), ()):
            p = tile_params(row.major, row.mode, bits)
            out.append(SmemInstance(family, row.major, row.mode, bits, p,
                                    at_params(row.layout, p, bits, row.swizzle), row))
    return out


# ---- what a descriptor makes the instruction read --------------------------------------------


def _floordiv(a: Any, b: int) -> Any:
    return a // b


def _mod(a: Any, b: int) -> Any:
    return a % b


@dataclass(frozen=True)
class DescriptorRead:
    """A descriptor as the instruction decodes it: LBO and SBO in bytes (the fields << 4) and
    the swizzle mode its code names.  ``bit_address`` is where element (mn, k) of a
    ``bits``-bit operand is read, by the spec's definitions of LBO and SBO (not by the
    canonical layouts, which ``formal.prove.smem_descriptor`` proves equal to it):

        K-major, no swizzle   core matrices of 8 rows x 16 bytes: (mn % 8) * 16 + kbyte % 16,
                              + SBO per 8 rows, + LBO per 16 bytes of K
        K-major, c chunks     Swizzle o ((mn % 8) * 16c + kbyte + SBO per 8 rows); LBO unused
        MN-major, no swizzle  mnbyte % 16 + (k % 8) * 16 + SBO per 16 bytes of M/N
                              + LBO per 8 of K
        MN-major, c chunks    Swizzle o (mnbyte % 16c + (k % 8) * 16c + LBO per 16c bytes of
                              M/N + SBO per 8 of K)

    ``div`` / ``mod`` let the same rule run on ints and on Z3 bit-vectors."""

    family: str
    lbo: int
    sbo: int
    mode: str

    @staticmethod
    def of(family: str, value: int) -> DescriptorRead:
        """The fields of a 64-bit descriptor; ValueError: a swizzle code the family lacks."""
        fields = {f.name: (value >> f.lo) & ((1 << f.width) - 1) for f in DESCRIPTORS[family]}
        code = fields["swizzling mode"]
        modes = {v: k for k, v in SWIZZLE_CODES[family].items()}
        if code not in modes:
            raise ValueError(f"swizzling mode {code} is not one of {family}'s")
        lbo = next(v for n, v in fields.items() if n.startswith("leading dimension byte"))
        return DescriptorRead(family, lbo << 4, fields["stride dimension byte offset"] << 4,
                              modes[code])

    def bit_address(self, major: str, bits: int, mn: Any, k: Any,
                    div: Any = _floordiv, mod: Any = _mod) -> Any:
        c = CHUNKS.get(self.mode, 8)  # 128B-base32B reads 128-byte rows
        w = 16 * c
        sw = Swizzle(2, 5, 2) if self.mode == "128B-base32B" else \
            Swizzle({1: 0, 2: 1, 4: 2, 8: 3}[c], 4, 3)
        if major == "K":
            kbits = k * bits
            kb, bit = div(kbits, 8), mod(kbits, 8)
            if self.mode == "none":
                byte = (mod(mn, 8) * 16 + div(mn, 8) * self.sbo + div(kb, 16) * self.lbo
                        + mod(kb, 16))
            else:
                byte = sw(div(mn, 8) * self.sbo + mod(mn, 8) * w + kb)
            return byte * 8 + bit
        mbits = mn * bits
        mb, bit = div(mbits, 8), mod(mbits, 8)
        if self.mode == "none":
            byte = mod(mb, 16) + mod(k, 8) * 16 + div(mb, 16) * self.sbo + div(k, 8) * self.lbo
        else:
            byte = sw(mod(mb, w) + mod(k, 8) * w + div(mb, w) * self.lbo + div(k, 8) * self.sbo)
        return byte * 8 + bit


def layout_bit_address(lay: SwizzledLayout, mn: Any, k: Any, div: Any = _floordiv,
                       mod: Any = _mod) -> Any:
    """``lay.bit_address((mn, k))`` as an expression: each mode's coordinate split into its
    digits (first fastest) and weighted by its strides, the swizzle on the byte."""
    off: Any = 0
    for coord, shape, stride in ((mn, lay.layout.shape[0], lay.layout.stride[0]),
                                 (k, lay.layout.shape[1], lay.layout.stride[1])):
        rest = coord
        for extent, st in flat_modes(shape, stride):
            off = off + mod(rest, extent) * st
            rest = div(rest, extent)
    b = off * lay.bits
    return lay.swizzle(div(b, 8)) * 8 + mod(b, 8)


def smem_hash(inst: SmemInstance) -> str:
    """The hash of a catalog layout: its bit address of every (mn, k), in CuTe's order (the
    name GPU evidence gives the layout a run was built from)."""
    from ..base.hashes import cell_table_hash_of_texts
    return cell_table_hash_of_texts(f"{inst.family}.smem", inst.id, inst.major, "addresses",
                                    [inst.layout.addresses_text])


def addresses_text(addresses: Sequence[int] | Any) -> str:
    """Bit addresses as their hash writes them, each followed by a semicolon: ``0;16;8;``
    (the same text as writing ``f"{a};"`` for each), written by numpy: each number's decimal
    digits as a row of bytes (``16`` in three columns: ``0``, ``1``, ``6``), its leading
    zeros dropped (a lone ``0`` kept), a ``;`` after each row."""
    import numpy as np
    if not len(addresses):
        return ""
    a = np.asarray(addresses).reshape(-1)
    if a.dtype.kind not in "iu" or int(a.min()) < 0 or int(a.max()) >= 10 ** 18:
        return ";".join(map(str, a.tolist())) + ";"
    a = a.astype(np.int64)
    width = len(str(int(a.max())))
    tens = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    rows = np.empty((a.size, width + 1), dtype=np.uint8)
    rows[:, :width] = a[:, None] // tens % 10 + ord("0")
    rows[:, width] = ord(";")
    keep = np.ones(rows.shape, dtype=bool)
    keep[:, :width - 1] = a[:, None] >= tens[None, :-1]  # no leading zero (the last digit stays)
    return rows[keep].tobytes().decode("ascii")


def descriptor_values(inst: SmemInstance) -> dict[str, int]:
    """The fields of the descriptor that names ``inst``: LBO and SBO in bytes (a field the
    layout does not use holds 16, the spec's "assumed 1"), and the swizzle code."""
    names = names_in(inst.row.layout.stride)
    nbytes = {n: inst.params[n] * inst.bits // 8 if n in names else 16 for n in ("LBO", "SBO")}
    fam = inst.family
    return {"leading dimension byte offset" if fam == "wgmma" else
            "leading dimension byte offset or absolute address": nbytes["LBO"],
            "stride dimension byte offset": nbytes["SBO"],
            "swizzling mode": SWIZZLE_CODES[fam][inst.mode]}


def descriptor_of(inst: SmemInstance) -> int:
    """The 64-bit descriptor (start address 0) that names ``inst``."""
    return pack_descriptor(inst.family, descriptor_values(inst))
