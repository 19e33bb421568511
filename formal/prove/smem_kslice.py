"""The K slice one instruction reads from each row of its shared-memory operands, by element
type, dense and sparse: every row of the K-slice table is checked against the element width
and the 32 bytes a dense instruction reads.

A worked example: ``| wgmma | f16 | 16 | 16 | 32 |`` says wgmma reads K = 16 elements of 16
bits dense -- 16 * 16 = 256 bits, the 32 bytes of each row that the canonical layouts'
``(T,2k)`` K mode holds at k = 1 -- and K = 32 sparse, twice as many: A holds them compressed
(its row is still 32 bytes, the non-zero half), B holds all 64 bytes, which is one row of a
64B or 128B atom but two of a 32B atom.  A row ``| wgmma | f16 | 16 | 16 | 48 |`` is refuted:
48 is not twice 16 (``k-slice``, counterexample ``{"sparse_k": 48, "twice_k": 32}``).
"""

from __future__ import annotations

from ..model.smem import CHUNKS, ELEMENT_BITS, K_SLICE_BYTES, KSliceRow
from .verdicts import Verdict


def k_slice_verdict(row: KSliceRow) -> Verdict:
    """The row's width, its K's 32 bytes, and its sparse K twice its K."""
    def refuted(msg: str, cex: dict[str, object]) -> Verdict:
        return Verdict("k-slice", "refuted", msg, cex, row.span, "error", "arithmetic")

    width = ELEMENT_BITS.get(row.type)
    if width is not None and width != row.bits:
        return refuted(f"{row.type} is {width} bits, the table says {row.bits}",
                       {"type": row.type, "bits": row.bits, "width": width})
    if row.k * row.bits != K_SLICE_BYTES * 8:
        return refuted(f"K = {row.k} of {row.bits} bits is {row.k * row.bits // 8} bytes of each "
                       f"row, not the {K_SLICE_BYTES} one instruction reads",
                       {"k": row.k, "bits": row.bits, "bytes": row.k * row.bits // 8})
    if row.sparse_k is not None and row.sparse_k != 2 * row.k:
        return refuted(f"sparse K = {row.sparse_k} is not twice K = {row.k}",
                       {"sparse_k": row.sparse_k, "twice_k": 2 * row.k})
    msg = f"K = {row.k} x {row.bits} bits = {K_SLICE_BYTES} bytes of each row"
    if row.sparse_k is not None:
        b_bytes = row.sparse_k * row.bits // 8
        rows = ", ".join(f"{-(-b_bytes // (16 * c))} of {m}" for m, c in CHUNKS.items()
                         if m != "none")
        msg += (f"; sparse K = {row.sparse_k}: A's compressed row {K_SLICE_BYTES} bytes, "
                f"B's {b_bytes} bytes (atom rows: {rows})")
    return Verdict("k-slice", "proved", msg, None, row.span, "error", "arithmetic")
