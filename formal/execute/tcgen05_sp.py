"""``tcgen05.mma.sp`` in the ``tcgen05-mma`` family: A compressed in shared memory, its
metadata placed in tensor memory by the catalog's metadata layout, the selector in the
instruction descriptor, D compared with the decompressed A @ B.

A worked example, ``tcgen05.mma.sp.m128n64k32.kind::f16.f32.f16.f16.layoutD.sel1``: A is
128 x 32 at 2:4, so each row's eight chunks of four keep two elements each, named by two
2-bit indices (``cpu.random_units``: 0 and 2, say); shared memory holds the compressed A
(128 x 16, the values in index order) and B (32 x 64, K-major) by a catalog canonical
layout; the 4-bit field (indices 0 | 2 << 2 = 0b1000) of row 8's chunk 0 goes where the
record ``tcgen05.sp_meta.m128.f16`` puts it at ``sel = 1``: lane 0, column 1, bits 16-19 of
the metadata (columns ``META_COLUMN`` on; the bits no field takes are random).  Each warp
stores its lanes' words with ``tcgen05.st`` before the mma (``ptx_tcgen05._store_meta``);
the instruction descriptor carries the sparse flag and selector 1; D, read back by Layout D,
must equal the dense A (the values put back where the indices say) times B, bit for bit.

A planted edit must mismatch: ``meta-chunks-swapped``, the fields of chunks 0 and 1 of
every row written into each other's places (the metadata of two chunks swapped).  The fake
device (``tcgen05_mma.FakeTcgen05Device``) reads the metadata by its truth's record at the
selector the idesc names (``read_indices``).  The rows are ``base.matrix_variants.
TCGEN05_MMA_SP_VARIANTS``: Layouts D, E and G, whose metadata the catalog places.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base.matrix_variants import META_INSTRUCTION, TCGEN05_SPARSITY, issued_ws, meta_id
from ..base.variants import SPARSITY, Sparsity, Variant
from . import cpu

META_COLUMNS = 2  # the metadata columns a kernel stores (the catalog's layouts take 1 or 2)
SP_PLANTS = ("meta-chunks-swapped",)


def sparse(v: Variant) -> bool:
    return v.instruction == "tcgen05.mma.sp"


def find_meta(records: Sequence[Mapping[str, Any]], kind: str, m: int, ws: bool) \
        -> Mapping[str, Any] | None:
    lid = meta_id(kind, m, ws)
    return next((r for r in records if r.get("instruction") == META_INSTRUCTION
                 and r.get("id") == lid), None)


def row_meta(records: Sequence[Mapping[str, Any]], v: Variant) -> Mapping[str, Any] | None:
    """The metadata record of sparse row ``v`` (None: the layouts lack it)."""
    return find_meta(records, v.kind, v.dims.m, issued_ws(v))


def _sparsity(kind: str) -> Sparsity:
    return SPARSITY[TCGEN05_SPARSITY[kind]]


def _places(rec: Mapping[str, Any], sel: int) -> np.ndarray:
    """(fields, 6) rows (row, chunk, lane, column, bit, copy) of ``rec`` at ``sel`` (none where
    the record states no place at ``sel``): its table at ``sel`` holds (lane, column, bit) of
    each (row, chunk, copy) in that row-major order (``writers.export_meta``)."""
    sels = list(rec["sels"])
    if sel not in sels:
        return np.zeros((0, 6), dtype=np.int64)
    rows, chunks, copies = int(rec["rows"]), int(rec["chunks"]), int(rec["copies"])
    table = np.asarray(rec["places"][sels.index(sel)], dtype=np.int64).reshape(-1, 3)
    r, c, k = np.meshgrid(np.arange(rows), np.arange(chunks), np.arange(copies), indexing="ij")
    return np.column_stack([r.ravel(), c.ravel(), table, k.ravel()])


def meta_words(rec: Mapping[str, Any], sel: int, units: np.ndarray, rng: np.random.Generator,
               plant: str = "") -> np.ndarray:
    """(128 lanes, META_COLUMNS) words: each (row, chunk)'s field (its two indices, the
    first in the low bits) where ``rec`` puts it at ``sel``, every copy; other bits random.
    ``plant`` meta-chunks-swapped: chunks 0 and 1 of each row in each other's places."""
    p = _places(rec, sel)
    width = int(rec["width"])
    words = rng.integers(0, 1 << 32, size=(128, META_COLUMNS), dtype=np.uint64)
    chunk = p[:, 1].copy()
    if plant == "meta-chunks-swapped":
        chunk = np.where(chunk == 0, 1, np.where(chunk == 1, 0, chunk))
    u = units[p[:, 0], chunk]
    value = (u[:, 0] | (u[:, 1] << 2)).astype(np.uint64)
    mask = np.uint64((1 << width) - 1)
    for lane, col, bit, val in zip(p[:, 2], p[:, 3], p[:, 4], value, strict=True):
        w = words[lane, col] & ~(mask << np.uint64(bit))
        words[lane, col] = w | (val << np.uint64(bit))
    return words.astype(np.uint32)


def read_indices(rec: Mapping[str, Any], sel: int, words: np.ndarray) -> np.ndarray:
    """The device's view: (M, chunks, 2) indices read from the fields of copy 0."""
    p = _places(rec, sel)
    p = p[p[:, 5] == 0]
    w = np.asarray(words, dtype=np.uint64)[p[:, 2], p[:, 3]]
    field = (w >> p[:, 4].astype(np.uint64)) & np.uint64((1 << int(rec["width"])) - 1)
    out = np.zeros((int(rec["m"]), int(rec["chunks"]), 2), dtype=np.int64)
    out[p[:, 0], p[:, 1], 0] = (field & np.uint64(3)).astype(np.int64)
    out[p[:, 0], p[:, 1], 1] = (field >> np.uint64(2)).astype(np.int64)
    return out


def dense_a(kind: str, compressed: np.ndarray, units: np.ndarray, k: int) -> np.ndarray:
    """(M, K/2) codes in index order and (M, chunks, 2) indices -> the dense (M, K) codes."""
    sp = _sparsity(kind)
    rows, chunks, _ = units.shape
    values = np.asarray(compressed).reshape(1, rows, chunks, -1)
    dense = cpu.dense_from_units(sp, units[None], values, k)[0]
    return dense.astype(compressed.dtype)


def draw_sparse(rng: np.random.Generator, v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """(compressed A, indices): M x K/2 random exact codes and a random legal pattern."""
    sp = _sparsity(v.kind)
    chunks = v.k // sp.chunk
    units = cpu.random_units(rng, sp, (v.dims.m, chunks))
    return cpu.draw(rng, v.a, "A", v, (v.dims.m, v.k // 2)), units


__all__ = ["META_COLUMNS", "META_INSTRUCTION", "SP_PLANTS", "dense_a", "draw_sparse",
           "meta_id", "find_meta", "meta_words", "read_indices", "row_meta", "sparse"]
