"""Block-scaled ``tcgen05.mma``: scale_A and scale_B placed in tensor memory by the catalog's
scale layouts (``writers.export_tc_scale`` records) at the instruction descriptor's scale
factor IDs, and the product a device computes from them, exact.

A worked example, ``.kind::mxf8f6f4 .scale_vec::1X .ue8m0`` at M = 128, N = 64, K = 32, scale
factor IDs 3 and 1: scale_A is 128 x 1 (one factor a row of A), scale_B 1 x N (one a column of
B).  The record ``...scale_vec::1X.ue8m0.scale_A`` puts row 33's factor at ``sf_id = 3`` in lane
1, column 1, byte 3, copied into lane 1 of each 32-lane partition (lanes 1, 33, 65, 97); the
kernel stores those words with ``tcgen05.st`` from column ``SCALE_A_COLUMN`` (scale_B's from
``SCALE_B_COLUMN``), the other bytes random.  A factor is a ue8m0 code ``e`` meaning
``2**(e - 127)`` (ue4m3: ``e = 8 * (x + 7)`` for ``2**x``, ``factor_values``), drawn within
``2**-3 .. 2**3``, so with small-integer A and B::

    D[m, n] = sum_k A[m, k] * f(sa[m, k // (K / vec)]) * B[k, n] * f(sb[k // (K / vec), n])

is exact in float64 and in the fp32 accumulator.  The device reads the factors by its truth's
record at the IDs its idesc names (``read_tmem_factors``); a kernel that placed them by another
layout would scale some row by the wrong power of two.

A planted edit must mismatch: ``factors-swapped``, the factors of scale_A's rows 0 and 1 (drawn
unequal) written into each other's (lane, byte): the marked-factor idea of
``execute.block_scale`` -- one factor at another's place -- as a run, not a proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

TC_SCALE_INSTRUCTION = "tcgen05.block_scale"
SCALE_PLANTS = ("factors-swapped",)
LANES = 128  # four 32-lane partitions: a factor without ``half`` sits in each
UE8M0_BIAS = 127
SPREAD = 3  # factors within 2**-3 .. 2**3


def find_tc_scale(records: Sequence[Mapping[str, Any]], kind: str, form: str, stype: str,
                  m: int, operand: str) -> Mapping[str, Any] | None:
    """The record of a one-CTA form's scale operand (``scale_A`` | ``scale_B``) at M = ``m``
    (the catalog states each at its widest N)."""
    return next((r for r in records if r.get("instruction") == TC_SCALE_INSTRUCTION
                 and (r.get("kind"), r.get("form"), r.get("scale_type"), r.get("m"),
                      r.get("operand")) == (kind, form, stype, m, operand)), None)


def _places(rec: Mapping[str, Any], sf_id: int) -> np.ndarray:
    """(rows, cols, 3): the (lane, column, byte) of each factor of ``rec``'s tile at ``sf_id``."""
    if sf_id not in rec["sf_ids"]:
        raise ValueError(f"{rec['id']} states no place at scale factor ID {sf_id}")
    rows, cols = rec["tile"]
    table = np.asarray(rec["places"][list(rec["sf_ids"]).index(sf_id)], dtype=np.int64)
    return table.reshape(rows, cols, 3)


def factor_values(stype: str, codes: np.ndarray) -> np.ndarray:
    """The values of scale-factor codes: ue8m0 ``2**(e - 127)``; ue4m3 (no sign, 4 exponent
    bits of bias 7, 3 mantissa bits) ``2**(e - 7) * (1 + m / 8)``, ``2**-6 * m / 8`` at e = 0."""
    c = np.asarray(codes, dtype=np.int64)
    if stype == "ue8m0":
        return np.exp2(c.astype(np.float64) - UE8M0_BIAS)
    e, m = (c >> 3) & 0xF, (c & 7).astype(np.float64)
    return np.where(e == 0, np.exp2(-6.0) * m / 8, np.exp2(e - 7.0) * (1 + m / 8))


def _power_code(stype: str, e: np.ndarray) -> np.ndarray:
    """The code of ``2**e``: ue8m0 ``e + 127``, ue4m3 ``(e + 7) << 3``."""
    return e + UE8M0_BIAS if stype == "ue8m0" else (e + 7) << 3


def draw_factors(rng: np.random.Generator, rec: Mapping[str, Any], rows: int, cols: int) \
        -> np.ndarray:
    """(rows, cols) codes of powers of two within ``2**-SPREAD .. 2**SPREAD`` in the record's
    scale type; scale_A's rows 0 and 1 unequal (the planted swap must change a product)."""
    e = rng.integers(-SPREAD, SPREAD + 1, size=(rows, cols))
    if rec["operand"] == "scale_A" and rows > 1 and (e[0] == e[1]).any():
        e[1] = np.where(e[0] == e[1], np.where(e[0] < 0, e[0] + 1, e[0] - 1), e[1])
    return _power_code(str(rec.get("scale_type", "ue8m0")), e).astype(np.uint8)


def tmem_scale_words(rec: Mapping[str, Any], sf_id: int, factors: np.ndarray,
                     rng: np.random.Generator, plant: str = "") -> np.ndarray:
    """(128 lanes, columns) words: each factor's byte where ``rec`` puts it at ``sf_id``, in
    every partition; other bytes random.  ``factors`` may be a leading block of the tile (a run
    at N < the record's).  ``plant`` factors-swapped: rows 0 and 1 in each other's places."""
    rows, cols = factors.shape
    p = _places(rec, sf_id)[:rows, :cols].copy()
    if plant == "factors-swapped":
        p[[0, 1]] = p[[1, 0]]
    words = rng.integers(0, 1 << 32, size=(LANES, int(rec["columns"])), dtype=np.uint64)
    p, f = p.reshape(-1, 3), factors.ravel().astype(np.uint64)
    # one byte of a word at a time: a word holds up to four factors, and numpy's fancy
    # assignment keeps only the last of repeated (lane, column) places
    for part in range(LANES // 32):
        for byte in np.unique(p[:, 2]):
            at = p[:, 2] == byte
            lane, col, shift = p[at, 0] + 32 * part, p[at, 1], np.uint64(8 * int(byte))
            keep = words[lane, col] & ~(np.uint64(0xFF) << shift)
            words[lane, col] = keep | (f[at] << shift)
    return words.astype(np.uint32)


def read_tmem_factors(rec: Mapping[str, Any], sf_id: int, words: np.ndarray, rows: int,
                      cols: int, partition: int = 0) -> np.ndarray:
    """The device's view: the (rows, cols) factor codes ``rec`` reads at ``sf_id`` from the
    lanes of ``partition``."""
    p = _places(rec, sf_id)[:rows, :cols]
    w = np.asarray(words, dtype=np.uint64)[p[..., 0] + 32 * partition, p[..., 1]]
    return ((w >> (8 * p[..., 2]).astype(np.uint64)) & np.uint64(0xFF)).astype(np.uint8)


def scaled_product(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray,
                   stype: str = "ue8m0") -> np.ndarray:
    """D = (A scaled by scale_A's row blocks) @ (B scaled by scale_B's column blocks): A is
    M x K, B K x N, scale_A M x vec, scale_B vec x N, each factor a code of ``stype``."""
    k, vec = a.shape[1], sa.shape[1]
    fa = np.repeat(factor_values(stype, sa), k // vec, axis=1)
    fb = np.repeat(factor_values(stype, sb), k // vec, axis=0)
    return (a.astype(np.float64) * fa) @ (b.astype(np.float64) * fb)


def device_product(recs: tuple[Mapping[str, Any], Mapping[str, Any]], ids: tuple[int, int],
                   a: np.ndarray, b: np.ndarray, words_a: np.ndarray, words_b: np.ndarray) \
        -> np.ndarray:
    """What a device whose scale layouts are ``recs`` computes: the factors read at the idesc's
    scale factor IDs ``ids`` (A's, B's), then the scaled product in their scale type."""
    vec = int(recs[0]["vec"])
    sa = read_tmem_factors(recs[0], ids[0], words_a, a.shape[0], vec)
    sb = read_tmem_factors(recs[1], ids[1], words_b, vec, b.shape[1])
    return scaled_product(a, b, sa, sb, str(recs[0].get("scale_type", "ue8m0")))


__all__ = ["SCALE_PLANTS", "TC_SCALE_INSTRUCTION", "device_product", "draw_factors",
           "factor_values",
           "find_tc_scale", "read_tmem_factors", "tmem_scale_words", "scaled_product"]
