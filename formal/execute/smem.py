"""wgmma's shared-memory operands: a ``SmemLayout`` is a layout and its matrix descriptor
(swizzle, leading and stride byte offsets, K- or MN-major), ``element_bytes_image`` lays a
(T, MN, K) operand's codes out as bytes by it and ``image_codes`` reads them back.

numpy only.  K-major without swizzle: byte ``kbyte`` of row ``mn`` lies in core matrix
(mn // 8, kbyte // 16) -- 8 rows of 16 bytes, 128 contiguous bytes -- at
``(mn % 8) * 16 + kbyte % 16``, core matrices adjacent in K ``lbo`` bytes apart and in M/N
``sbo``.  Worked example: LBO 128, SBO 256, a .f16 B with N = 16: element (n 9, k 10) is
byte 20 of row 9, core matrix (1, 1), at 256 + 128 + 1 * 16 + 4 = 404.  The H100 runs pinned
down what each field means (``proofs/evidence/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..base.variants import TYPE_BITS
from . import cpu

U64 = np.uint64


SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}  # descriptor bits 62-63


@dataclass(frozen=True)
class SmemLayout:
    """A shared-memory layout and its descriptor: ``swizzle`` 0 (none) or the row width in
    bytes (32, 64, 128); ``lbo`` / ``sbo`` the two descriptor fields in bytes.

    ``major`` "K" (K contiguous, the default of wgmma) or "MN" (M / N contiguous: the
    ``imm-trans`` forms of .f16 / .bf16).  K-major: core matrices adjacent in K are ``lbo``
    apart, in M/N ``sbo``.  MN-major: a core matrix is 8 K-rows of 16 bytes along M/N (a
    swizzle atom 8 K-rows of ``swizzle`` bytes); ``mn_field`` names the field that holds the
    stride between core matrices (atoms) adjacent in M/N, the other field the stride along K
    (which is which is what the device decides).  ``swap_fields`` writes lbo in the SBO field
    and sbo in the LBO field (a negative control)."""

    swizzle: int = 0
    lbo: int = 128
    sbo: int = 256
    swap_fields: bool = False
    major: str = "K"
    mn_field: str = "sbo"

    @property
    def name(self) -> str:
        s = "none" if not self.swizzle else f"{self.swizzle}B"
        swap = ", fields swapped" if self.swap_fields else ""
        mn = f", M/N stride in {self.mn_field.upper()}" if self.major == "MN" else ""
        return f"{self.major}-major, swizzle {s}, LBO {self.lbo}, SBO {self.sbo}{mn}{swap}"

    def _swizzled(self, lin: np.ndarray) -> np.ndarray:
        if not self.swizzle:
            return lin
        mask = self.swizzle // 16 - 1
        return lin ^ (((lin >> 7) & mask) << 4)

    def offset(self, mn: np.ndarray, kbyte: np.ndarray) -> np.ndarray:
        """Byte offset of byte ``kbyte`` of row ``mn`` (K-major)."""
        mn, kbyte = np.asarray(mn, np.int64), np.asarray(kbyte, np.int64)
        if not self.swizzle:
            return ((mn % 8) * 16 + (mn // 8) * self.sbo + (kbyte // 16) * self.lbo
                    + kbyte % 16)
        return self._swizzled((mn // 8) * self.sbo + (mn % 8) * self.swizzle + kbyte)

    def element_offset(self, mn: np.ndarray, k: np.ndarray, bits: int) -> np.ndarray:
        """Byte offset of element (mn, k) of ``bits``-bit elements (``.b1``: of its byte)."""
        mn, k = np.asarray(mn, np.int64), np.asarray(k, np.int64)
        if self.major == "K":
            return self.offset(mn, k * bits // 8)
        mnb = mn * bits // 8
        s_mn, s_k = (self.sbo, self.lbo) if self.mn_field == "sbo" else (self.lbo, self.sbo)
        width = self.swizzle or 16
        return self._swizzled(mnb % width + (k % 8) * width + (mnb // width) * s_mn
                              + (k // 8) * s_k)

    def descriptor_hi(self) -> int:
        """Every descriptor bit but the start address (bits 0-13)."""
        lbo, sbo = (self.sbo, self.lbo) if self.swap_fields else (self.lbo, self.sbo)
        return ((((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32)
                | (SWIZZLE_MODE[self.swizzle] << 62))

    def size(self, rows: int, kbytes: int) -> int:
        """Bytes spanned by ``rows`` K-major rows of ``kbytes`` bytes."""
        mn, kb = np.meshgrid(np.arange(rows), np.arange(kbytes), indexing="ij")
        return int(self.offset(mn, kb).max()) + 1

    def extent(self, rows: int, k: int, bits: int) -> int:
        """Bytes spanned by a rows x k operand of ``bits``-bit elements."""
        if self.major == "K":
            return self.size(rows, max(1, k * bits // 8))
        mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
        return int(self.element_offset(mn, kk, bits).max()) + max(1, bits // 8)


def canonical(rows: int, kbytes: int = 32, swizzle: int = 0, mn_inner: bool = False) \
        -> SmemLayout:
    """The layouts the checks use: no swizzle with core matrices adjacent along K (LBO 128,
    SBO 128 * kbytes / 16) or, ``mn_inner``, along M/N (SBO 128, LBO 16 * rows); swizzled:
    atoms of 8 rows x ``swizzle`` bytes one after another (SBO 8 * swizzle)."""
    if swizzle:
        return SmemLayout(swizzle, 16, 8 * swizzle)
    if mn_inner:
        return SmemLayout(0, 16 * rows, 128)
    return SmemLayout(0, 128, 128 * (kbytes // 16))


class ElementLayout(Protocol):
    """What lays an operand out: the byte of element (mn, k) (``SmemLayout``, or a catalog
    layout of ``formal.execute.smem_runs``)."""

    def element_offset(self, mn: np.ndarray, k: np.ndarray, bits: int) -> np.ndarray: ...


def element_bytes_image(codes: np.ndarray, t: str, layout: ElementLayout, size: int) \
        -> np.ndarray:
    """(T, MN, K) codes of a K-major operand -> (T, size) bytes by ``layout``."""
    count, rows, k = codes.shape
    bits = TYPE_BITS[t]
    img = np.zeros((count, size), dtype=np.uint8)
    mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    if bits == 1:
        off = layout.element_offset(mn, kk, 1)
        bit = (kk % 8).astype(np.uint64)
        vals = (np.asarray(codes, np.uint64) & U64(1)) << bit[None]
        for j in range(8):  # OR the eight bits of each byte (np.add.at on distinct bits)
            sel = (kk % 8) == j
            img[:, off[sel]] |= vals[:, sel].astype(np.uint8)
        return img
    eb = bits // 8
    cont = cpu.to_container(t, bits, codes)
    off = layout.element_offset(mn, kk, bits)
    for j in range(eb):
        img[:, off + j] = ((cont >> U64(8 * j)) & U64(0xFF)).astype(np.uint8)
    return img


def image_codes(img: np.ndarray, t: str, layout: SmemLayout, rows: int, k: int) -> np.ndarray:
    """(T, bytes) image -> (T, rows, k) codes: the inverse of ``element_bytes_image``."""
    bits = TYPE_BITS[t]
    mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    off = layout.element_offset(mn, kk, bits)
    b = np.asarray(img, np.uint8)
    if bits == 1:
        return ((b[:, off] >> (kk % 8).astype(np.uint8)[None]) & 1).astype(U64)
    cont = np.zeros((b.shape[0], rows, k), dtype=U64)
    for j in range(bits // 8):
        cont |= b[:, off + j].astype(U64) << U64(8 * j)
    return cpu.from_container(t, bits, cont)
