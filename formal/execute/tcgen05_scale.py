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

Planted edits must mismatch: ``factors-swapped``, the factors of scale_A's rows 0 and 1 (drawn
unequal) written into each other's (lane, byte): the marked-factor idea of
``execute.block_scale`` -- one factor at another's place -- as a run, not a proof;
``factor-moved``, scale_A's factor of (row 0, block 0) written one byte up in its word and its
own byte given another power of two; ``scale-id-wrong``, the idesc naming another legal
scale_A ID than the one the factors were placed at (forms with one legal ID owe none);
``b-factors-swapped``, scale_B's columns 0 and 1 (drawn unequal) in each other's places.

A pair (``.cta_group::2``, Layouts A and B) gives each CTA its own tensor memory: the words
are (CTAs x 128 lanes, columns), CTA c's lanes after CTA 0's.  A pair's record states where a
factor lives past (lane, column, byte): ``cta`` (the M = 128 pair's scale_A: row 70 in CTA
70 / 64 = 1; without it, every CTA has it: scale_B) and ``half`` (Layout B's scale_B: column
c in the partitions 2 * (c / 128) and the next; without it, all four).  The device computes
CTA c's rows of D with scale_A's factors read where the record puts them and scale_B's read
from CTA c; ``factor-other-cta`` writes scale_A's factor of (row 0, block 0) at its place in
the other CTA and gives its own place another power of two.

The rows (``base.matrix_variants.TCGEN05_MMA_SCALE_VARIANTS``) name their IDs
(``Variant.scale_ids``); the export's records are read through ``scale_view`` alone, so a
change of the record's shape is a change here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.matrix_variants import datapath_row

TC_SCALE_INSTRUCTION = "tcgen05.block_scale"
SCALE_PLANTS = ("factors-swapped", "factor-moved", "scale-id-wrong", "b-factors-swapped")
PAIR_PLANTS = ("factor-other-cta",)  # a pair's own (scale_A's factor in the other CTA)
B_PLANTS = ("b-factors-swapped",)  # the plants that move scale_B's factors (the rest: scale_A's)
LANES = 128  # four 32-lane partitions: a factor without ``half`` sits in each
UE8M0_BIAS = 127
SPREAD = 3  # factors within 2**-3 .. 2**3


@dataclass(frozen=True)
class ScaleView:
    """What a run reads of an exported tcgen05 scale record (``writers.export_tc_scale``):
    its id, form, operand, tile, tensor-memory columns, legal IDs, map hash, the CTAs issuing
    the mma and the numbers a place has (lane, column, byte, then a pair's stated cta, half)."""

    id: str
    kind: str
    form: str
    stype: str
    m: int
    operand: str
    vec: int
    tile: tuple[int, int]
    columns: int
    sf_ids: tuple[int, ...]
    map_hash: str
    cta_group: int = 1
    fields: tuple[str, ...] = ("lane", "column", "byte")


def scale_view(rec: Mapping[str, Any]) -> ScaleView:
    """The one reader of a scale record's fields (the places are ``_places``')."""
    rows, cols = rec["tile"]
    return ScaleView(str(rec["id"]), str(rec["kind"]), str(rec["form"]),
                     str(rec.get("scale_type", "ue8m0")), int(rec["m"]), str(rec["operand"]),
                     int(rec["vec"]), (int(rows), int(cols)), int(rec["columns"]),
                     tuple(int(s) for s in rec["sf_ids"]), str(rec.get("map_hash") or ""),
                     int(rec.get("cta_group", 1)),
                     tuple(str(f) for f in rec.get("place_fields", ("lane", "column", "byte"))))


def find_tc_scale(records: Sequence[Mapping[str, Any]], kind: str, form: str, stype: str,
                  m: int, operand: str, cta_group: int = 1) -> Mapping[str, Any] | None:
    """The record of a form's scale operand (``scale_A`` | ``scale_B``) at M = ``m`` issued by
    ``cta_group`` CTAs (the catalog states each at its widest N)."""
    want = (kind, form, stype, m, operand, cta_group)
    for r in records:
        if r.get("instruction") == TC_SCALE_INSTRUCTION:
            x = scale_view(r)
            if (x.kind, x.form, x.stype, x.m, x.operand, x.cta_group) == want:
                return r
    return None


def row_scales(records: Sequence[Mapping[str, Any]], v: Any) \
        -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """The (scale_A, scale_B) records of block-scaled row ``v``, issued by its data path's CTAs
    (None: the layouts lack one)."""
    form, g = f"scale_vec::{v.scale_vec}X", datapath_row(v.datapath)[2]
    ra, rb = (find_tc_scale(records, v.kind, form, v.scale, v.dims.m, op, g)
              for op in ("scale_A", "scale_B"))
    return None if ra is None or rb is None else (ra, rb)


def wrong_id(view: ScaleView, sf_id: int) -> int | None:
    """The next legal scale factor ID after ``sf_id`` (None: the form has only one)."""
    ids = view.sf_ids
    return None if len(ids) < 2 else ids[(ids.index(sf_id) + 1) % len(ids)]


def _places(rec: Mapping[str, Any], sf_id: int) -> np.ndarray:
    """(rows, cols, 5): the (lane, column, byte, cta, half) of each factor of ``rec``'s tile
    at ``sf_id``; cta and half -1 where the record states none (every CTA, all partitions)."""
    view = scale_view(rec)
    if sf_id not in view.sf_ids:
        raise ValueError(f"{view.id} states no place at scale factor ID {sf_id}")
    table = np.asarray(rec["places"][view.sf_ids.index(sf_id)], dtype=np.int64)
    table = table.reshape(-1, len(view.fields))
    out = np.full((len(table), 5), -1, dtype=np.int64)
    for j, name in enumerate(view.fields):
        out[:, ("lane", "column", "byte", "cta", "half").index(name)] = table[:, j]
    return out.reshape(*view.tile, 5)


def _copies(p: np.ndarray, ctas: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(factor mask, word row) pairs: each place's lane in every CTA and partition that holds
    a copy (``p``: (factors, 5) of ``_places``)."""
    out = []
    for cta in range(ctas):
        for part in range(LANES // 32):
            on = ((p[:, 3] < 0) | (p[:, 3] == cta)) & ((p[:, 4] < 0) | (p[:, 4] == part // 2))
            out.append((on, p[:, 0] + 32 * part + LANES * cta))
    return out


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
    scale type; scale_A's rows 0 and 1 unequal, scale_B's columns 0 and 1 (the planted swaps
    must change a product)."""
    e = rng.integers(-SPREAD, SPREAD + 1, size=(rows, cols))
    view = scale_view(rec)
    t = e if view.operand == "scale_A" else e.T
    if t.shape[0] > 1 and (t[0] == t[1]).any():
        t[1] = np.where(t[0] == t[1], np.where(t[0] < 0, t[0] + 1, t[0] - 1), t[1])
    return _power_code(view.stype, e).astype(np.uint8)


def tmem_scale_words(rec: Mapping[str, Any], sf_id: int, factors: np.ndarray,
                     rng: np.random.Generator, plant: str = "") -> np.ndarray:
    """(CTAs x 128 lanes, columns) words: each factor's byte where ``rec`` puts it at
    ``sf_id``, in every CTA and partition that holds it; other bytes random.  ``factors`` may
    be a leading block of the tile (a run at N < the record's).  ``plant`` factors-swapped:
    rows 0 and 1 in each other's places; factor-moved: (row 0, block 0)'s factor one byte up,
    its own byte another power of two; factor-other-cta: that factor at its place in the other
    CTA, its own place another power of two; b-factors-swapped: columns 0 and 1 swapped."""
    rows, cols = factors.shape
    view = scale_view(rec)
    p = _places(rec, sf_id)[:rows, :cols].copy()
    if plant == "factors-swapped":
        p[[0, 1]] = p[[1, 0]]
    if plant == "b-factors-swapped":
        p[:, [0, 1]] = p[:, [1, 0]]
    words = rng.integers(0, 1 << 32, size=(LANES * view.cta_group, view.columns),
                         dtype=np.uint64)
    p, f = p.reshape(-1, 5), factors.ravel().astype(np.uint64)
    # one byte of a word at a time: a word holds up to four factors, and numpy's fancy
    # assignment keeps only the last of repeated (lane, column) places
    for on, lanes in _copies(p, view.cta_group):
        for byte in np.unique(p[on, 2]):
            at = on & (p[:, 2] == byte)
            lane, col, shift = lanes[at], p[at, 1], np.uint64(8 * int(byte))
            keep = words[lane, col] & ~(np.uint64(0xFF) << shift)
            words[lane, col] = keep | (f[at] << shift)
    code = int(f[0])
    other = code + (1 if view.stype == "ue8m0" else 8) * (
        -1 if factor_values(view.stype, np.array([code]))[0] > 1 else 1)
    moves = {"factor-moved": ((p[0, 2], other), ((p[0, 2] + 1) % 4, code)),
             "factor-other-cta": ((p[0, 2], other),)}.get(plant, ())
    for on, lanes in _copies(p[:1], view.cta_group):
        if on[0]:
            _put(words, int(lanes[0]), int(p[0, 1]), moves)
    if plant == "factor-other-cta":
        if view.cta_group < 2 or p[0, 3] < 0:
            raise ValueError(f"{view.id} states no CTA of a pair: no other CTA to place in")
        there = p[:1].copy()
        there[0, 3] = 1 - p[0, 3]
        for on, lanes in _copies(there, view.cta_group):
            if on[0]:
                _put(words, int(lanes[0]), int(p[0, 1]), ((p[0, 2], code),))
    return words.astype(np.uint32)


def _put(words: np.ndarray, row: int, col: int, moves: Sequence[tuple[Any, int]]) -> None:
    """Each (byte, code) of ``moves`` written into the word at (``row``, ``col``)."""
    w = int(words[row, col])
    for b, val in moves:
        w = (w & ~(0xFF << (8 * int(b)))) | (val << (8 * int(b)))
    words[row, col] = w


def read_tmem_factors(rec: Mapping[str, Any], sf_id: int, words: np.ndarray, rows: int,
                      cols: int, partition: int = 0, cta: int = 0) -> np.ndarray:
    """The device's view: the (rows, cols) factor codes ``rec`` reads at ``sf_id``: from the
    lanes of ``partition`` (or of the stated half's first) in the stated CTA, or ``cta``."""
    p = _places(rec, sf_id)[:rows, :cols]
    part = np.where(p[..., 4] < 0, partition, 2 * p[..., 4])
    c = np.where(p[..., 3] < 0, cta, p[..., 3])
    w = np.asarray(words, dtype=np.uint64)[p[..., 0] + 32 * part + LANES * c, p[..., 1]]
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
    scale factor IDs ``ids`` (A's, B's), then the scaled product in their scale type; a pair's
    CTA c computes its rows of D (rows c * M / 2 on) with scale_B read from its own lanes."""
    view = scale_view(recs[0])
    g, rows = view.cta_group, a.shape[0] // view.cta_group
    sa = read_tmem_factors(recs[0], ids[0], words_a, a.shape[0], view.vec)
    out = np.empty((a.shape[0], b.shape[1]))
    for c in range(g):
        sb = read_tmem_factors(recs[1], ids[1], words_b, view.vec, b.shape[1], cta=c)
        at = slice(c * rows, (c + 1) * rows)
        with np.errstate(over="ignore", invalid="ignore"):  # a random byte read as a factor
            out[at] = scaled_product(a[at], b, sa[at], sb, view.stype)
    return out


def pack_nibbles(codes: np.ndarray) -> np.ndarray:
    """(..., K) 4-bit codes -> (..., K / 2) bytes, element k at bit 4k of its byte (the
    catalog's packing of ``.kind::mxf4`` / ``mxf4nvf4`` in shared memory: two a byte)."""
    c = np.asarray(codes, dtype=np.uint64) & np.uint64(0xF)
    return (c[..., 0::2] | (c[..., 1::2] << np.uint64(4))).astype(np.uint64)


def unpack_nibbles(packed: np.ndarray) -> np.ndarray:
    """The inverse of ``pack_nibbles``."""
    b = np.asarray(packed, dtype=np.uint64)
    out = np.empty((*b.shape[:-1], 2 * b.shape[-1]), dtype=np.uint64)
    out[..., 0::2], out[..., 1::2] = b & np.uint64(0xF), (b >> np.uint64(4)) & np.uint64(0xF)
    return out


__all__ = ["B_PLANTS", "PAIR_PLANTS", "SCALE_PLANTS", "TC_SCALE_INSTRUCTION", "ScaleView",
           "device_product", "draw_factors", "factor_values", "find_tc_scale", "pack_nibbles",
           "read_tmem_factors", "row_scales", "scale_view", "scaled_product", "tmem_scale_words",
           "unpack_nibbles", "wrong_id"]
