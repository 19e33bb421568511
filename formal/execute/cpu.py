"""Registers from matrices and back, and the exact product a tensor core must return.

Everything here is numpy only: it runs on the GPU machine, where neither SymPy nor Z3 is
installed, and it reads layouts as the JSON cell tables of ``formal.writers.export``.

**A worked example.**  Take a toy operand of 2 x 4 ``.u8`` cells held by 2 lanes, four
elements each, with the map ``row = lane, col = i``.  Lane 1's four elements are cells
(1,0) .. (1,3); packing puts element i at bits 8i..8i+7 of one ``.b32`` word ("low to
high"), so the row ``[1, 2, 3, 250]`` becomes the word ``0xFA030201``.  Unpacking runs the
same index arrays backwards.  For every real operand the index arrays (``OperandMap.row``
and ``.col``, one entry per (lane, element); ``formal.execute.maps``, the one map type of
every family) are built once from the cell table, so packing
a batch of trials is a single gather and a shift-and-sum, well under a millisecond.

**Number formats.**  Every element type has an exact encoder and decoder (``encode`` /
``decode``): integers in two's complement at their width, and the floating-point formats
f16, bf16, tf32, f32, f64, e4m3, e5m2, e3m2, e2m3 and e2m1 by sign / exponent / mantissa
fields.  ``encode`` refuses a value the format cannot hold exactly, so a test datum can never
be rounded behind our back.  The trial data are small multiples of 1/2 (or integers for the
8-bit and narrower floats), chosen so that every product and every partial sum is exact in
every format and accumulator involved: the reference ``D = A x B + C`` is then computed in
float64 / int64 and compared with the device's D bit for bit.

**Containers.**  A ``.tf32`` element occupies the upper 19 bits of its ``.b32``; the 4- and
6-bit floats of ``kind::f8f6f4`` sit in 8-bit containers (``.e3m2`` / ``.e2m3`` in bits 5..0,
``.e2m1`` in bits 5..2 -- an assumption of ours: these variants need sm_120a and are only
assembled here, never run); ``.e2m1`` of ``kind::mxf4`` is packed at 4 bits.

**Replication.**  ``mma.m8n8k4`` with ``.f16`` computes four independent 8x8x4 products
in one warp, one per quad-pair (the export gives each cell the ``group`` of its lane).  The
executor views them as one block-diagonal product: product g's cell (r, c) of any operand is
cell (8g + r, 4g + c) of a 32 x 16 A, (4g + r, 8g + c) of a 16 x 32 B and (8g + r, 8g + c) of
a 32 x 32 C / D -- every index (m, n and k) carries its product.  The off-diagonal blocks are
zero and held by nobody, so ``A_big x B_big + C_big`` is the four products side by side,
and packing, emulation, comparison and discovery need nothing else: discovery sees 32 m,
32 n and 16 k classes, which is just what four independent products show (nothing links
product 0's column 3 to product 1's).  Messages name such a cell ``D[r][c] of product g``.

**Maps with holes.**  The spec's erratum layouts are run too, to show them failing; one of
them (m16n8k16 A ``.f64``) gives no cell for some elements.  ``operand_map(...,
partial=True)`` accepts that for A and B: such an element is loaded as zero, what a kernel
following the formula would have to do.

**Sparse A.**  ``mma.sp`` holds only the non-zeros of A: per chunk of 4 (16/8-bit), of 2
(``.tf32``) or of 8 (4-bit, by pairs), and the metadata names where they sit, as 2-bit
indices into four index units of the chunk (elements; ``.tf32`` 16-bit halves; 4-bit pairs).
A lane's elements for one (row, [firstcol .. lastcol]) are that range's non-zeros in column
order.  ``metadata_words`` writes the indices of each (row, chunk, slot) into the fields the
metadata table names for a selector, in strictly increasing order within a chunk (so never the
nibbles 0b0000, 0b0101, 0b1010, 0b1111: ``::ordered_metadata``), and fills every lane the table
does not name for that selector with random garbage the hardware must ignore.
``decompress`` is the inverse, the hardware model the fake device uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.variants import (
    VARIANTS,
    Sparsity,
    Variant,
    operands_of,
    records_by_operand,
)
from .maps import LANES as LANES  # the one map type of every family (execute.maps)
from .maps import LayoutError as LayoutError
from .maps import MetadataMap as MetadataMap
from .maps import OperandMap as OperandMap
from .maps import cell_records as cell_records
from .maps import metadata_map as metadata_map
from .maps import operand_map as operand_map
from .numbers import (
    INTEGERS,
    U64,
    code_width,
    container_shift,
    encode,
    reference,
    reference_any,
    representable,
)

# ---- packing ----------------------------------------------------------------------------------


def pack_elements(codes: np.ndarray, bits: int) -> np.ndarray:
    """(..., n) element codes (already in their container) -> (..., n * bits / 32) words."""
    c = np.asarray(codes, dtype=U64)
    if bits == 64:
        lo = c & U64(0xFFFFFFFF)
        hi = c >> U64(32)
        return np.stack([lo, hi], axis=-1).reshape(*c.shape[:-1], -1).astype(np.uint32)
    if bits == 32:
        return c.astype(np.uint32)
    per = 32 // bits
    n = c.shape[-1]
    if n % per:
        raise LayoutError(f"{n} elements of {bits} bits do not fill whole .b32 registers")
    shifts = (np.arange(per, dtype=U64) * U64(bits))
    grouped = c.reshape(*c.shape[:-1], n // per, per) << shifts
    return grouped.sum(axis=-1, dtype=U64).astype(np.uint32)


def unpack_elements(words: np.ndarray, bits: int, n: int) -> np.ndarray:
    """Inverse of ``pack_elements``: (..., W) words -> (..., n) element codes."""
    w = np.asarray(words, dtype=U64)
    if bits == 64:
        pairs = w.reshape(*w.shape[:-1], n, 2)
        return pairs[..., 0] | (pairs[..., 1] << U64(32))
    if bits == 32:
        return w[..., :n]
    per = 32 // bits
    shifts = (np.arange(per, dtype=U64) * U64(bits))
    parts = (w[..., :, None] >> shifts) & U64((1 << bits) - 1)
    return parts.reshape(*w.shape[:-1], -1)[..., :n]


def to_container(t: str, bits: int, codes: np.ndarray) -> np.ndarray:
    return np.asarray(codes, dtype=U64) << U64(container_shift(t, bits))


def from_container(t: str, bits: int, codes: np.ndarray) -> np.ndarray:
    return (np.asarray(codes, dtype=U64) >> U64(container_shift(t, bits))) \
        & U64((1 << code_width(t)) - 1)


def pack(m: OperandMap, t: str, codes: np.ndarray) -> np.ndarray:
    """(T, rows, cols) codes of a dense operand -> (T, 32, W) register words."""
    el = np.asarray(codes, dtype=U64)[:, m.row, m.col]
    if m.held is not None:  # an element without a cell is loaded as zero
        el = np.where(m.held, el, U64(0))
    return pack_elements(to_container(t, m.bits, el), m.bits)


def unpack(m: OperandMap, t: str, words: np.ndarray) -> np.ndarray:
    """(T, 32, W) register words of a dense operand -> (T, rows, cols) codes."""
    el = from_container(t, m.bits, unpack_elements(words, m.bits, m.n))
    out = np.zeros((el.shape[0], *m.tile), dtype=U64)
    if m.held is not None:
        out[:, m.row[m.held], m.col[m.held]] = el[:, m.held]
    else:
        out[:, m.row, m.col] = el
    return out


def block_mask(m: OperandMap) -> np.ndarray | None:
    """(rows, cols) True on the diagonal blocks of a replicated operand (None: no blocks)."""
    if m.groups == 1:
        return None
    return np.kron(np.eye(m.groups, dtype=bool), np.ones(m.block, dtype=bool))


# ---- sparse A ---------------------------------------------------------------------------------

# the index pairs a chunk may use: any two of four units, or for tf32 the two halves of one
# element
def valid_units(sp: Sparsity) -> np.ndarray:
    if sp.meaningful_fields:
        return np.array([[n & 3, n >> 2] for n in sp.meaningful_fields], dtype=np.int64)
    return np.array([[i, j] for i in range(4) for j in range(i + 1, 4)], dtype=np.int64)


def nonzero_positions(sp: Sparsity, units: np.ndarray) -> np.ndarray:
    """(..., 2) index units -> (..., nonzeros) element positions within the chunk."""
    u = np.asarray(units, dtype=np.int64)
    if sp.unit_elements < 1:  # tf32: a unit is half an element; the pair names one element
        return u[..., :1] // round(1 / sp.unit_elements)
    per = round(sp.unit_elements)
    pos = u[..., :, None] * per + np.arange(per)
    return pos.reshape(*u.shape[:-1], -1)


def random_units(rng: np.random.Generator, sp: Sparsity, shape: tuple[int, ...]) -> np.ndarray:
    choices = valid_units(sp)
    return choices[rng.integers(0, len(choices), size=shape)]


def dense_from_units(sp: Sparsity, units: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """(T, M, chunks, 2) units and (T, M, chunks, nonzeros) codes -> (T, M, K) codes."""
    t_, m_, ch, _ = units.shape
    pos = nonzero_positions(sp, units) + (np.arange(ch) * sp.chunk)[None, None, :, None]
    out = np.zeros((t_, m_, k), dtype=U64)
    ti = np.arange(t_)[:, None, None, None]
    mi = np.arange(m_)[None, :, None, None]
    out[ti, mi, pos] = values
    return out


def element_columns(m: OperandMap, sp: Sparsity, units: np.ndarray) -> np.ndarray:
    """(T, 32, n) dense column of each sparse-A element, given (T, M, chunks, 2) indices."""
    assert m.chunk is not None and m.q is not None
    t_, _, chunks, _ = units.shape
    per = round(sp.unit_elements) if sp.unit_elements >= 1 else 0
    slot = m.q // per if per else np.zeros_like(m.q)  # which index of its chunk names it
    flat = ((m.row * chunks + m.chunk) * 2 + slot).ravel()
    u = np.asarray(units).reshape(t_, -1)[:, flat].reshape(t_, *m.row.shape)
    # a 4-bit index names a pair; a tf32 pair of indices names one element by its halves
    pos = u * per + m.q % per if per else u // round(1 / sp.unit_elements)
    return m.chunk * sp.chunk + pos


def compress(m: OperandMap, t: str, dense: np.ndarray, units: np.ndarray,
             sp: Sparsity) -> np.ndarray:
    """Sparse A registers: each element is the q-th non-zero of its (row, chunk)."""
    d = np.asarray(dense, dtype=U64)
    t_, _, k = d.shape
    idx = (m.row * k + element_columns(m, sp, units)).reshape(t_, -1)
    el = np.take_along_axis(d.reshape(t_, -1), idx, axis=1).reshape(t_, *m.row.shape)
    return pack_elements(to_container(t, m.bits, el), m.bits)


def _field_order(meta: MetadataMap, selector: int) -> dict[str, np.ndarray]:
    """The selector's fields sorted by lane, with where each holder's run of fields starts."""
    cache = meta.__dict__.setdefault("_order", {})
    if selector not in cache:
        f = meta.fields[selector]
        order = np.argsort(f["lane"], kind="stable")
        lanes = f["lane"][order]
        width = (f["bit_hi"][order] - f["bit_lo"][order] + 1).astype(U64)
        starts = np.flatnonzero(np.r_[True, lanes[1:] != lanes[:-1]])
        ones = (U64(1) << width) - U64(1)
        lo = f["bit_lo"][order].astype(U64)
        cache[selector] = {
            "row": f["row"][order], "chunk": f["chunk"][order], "slot": f["slot"][order],
            "lo": lo, "ones": ones, "starts": starts, "holders": lanes[starts],
            "covered": np.add.reduceat(ones << lo, starts, dtype=U64)}
    return cache[selector]


def metadata_words(meta: MetadataMap, selector: int, units: np.ndarray,
                   rng: np.random.Generator, lanes: int = LANES) -> np.ndarray:
    """(T, lanes) metadata words: the holders' fields hold ``units``; the rest is garbage."""
    f = _field_order(meta, selector)
    vals = units[:, f["row"], f["chunk"], f["slot"]].astype(U64) & f["ones"]
    # a lane's fields are disjoint bit ranges, so their sum is their OR
    acc = np.add.reduceat(vals << f["lo"], f["starts"], axis=1, dtype=U64)  # (T, holders)
    words = rng.integers(0, 1 << 32, size=(units.shape[0], lanes), dtype=np.uint64)
    h = f["holders"]
    words[:, h] = (words[:, h] & ~f["covered"][None, :]) | acc
    return words.astype(np.uint32)


def read_units(meta: MetadataMap, selector: int, words: np.ndarray, m_rows: int,
               chunks: int) -> np.ndarray:
    """The hardware's view: (T, M, chunks, 2) indices read from the holders' fields."""
    f = meta.fields[selector]
    w = np.asarray(words, dtype=U64)[:, f["lane"]]  # (T, F)
    width = (f["bit_hi"] - f["bit_lo"] + 1).astype(U64)
    vals = (w >> f["bit_lo"].astype(U64)) & ((U64(1) << width) - U64(1))
    out = np.zeros((w.shape[0], m_rows, chunks, 2), dtype=np.int64)
    out[:, f["row"], f["chunk"], f["slot"]] = vals.astype(np.int64)
    return out


def decompress(m: OperandMap, t: str, words: np.ndarray, units: np.ndarray, sp: Sparsity,
               k: int) -> np.ndarray:
    """The dense A the hardware sees: the compressed values put where the indices say."""
    el = from_container(t, m.bits, unpack_elements(words, m.bits, m.n))  # (T, 32, n)
    t_ = el.shape[0]
    idx = (m.row * k + element_columns(m, sp, units)).reshape(t_, -1)
    out = np.zeros((t_, m.tile[0] * k), dtype=U64)
    np.put_along_axis(out, idx, el.reshape(t_, -1), axis=1)
    return out.reshape(t_, m.tile[0], k)


def values_for(t: str, role: str, v: Variant) -> np.ndarray:
    """The pool trial values are drawn from: exact in ``t`` and small enough that every
    product and sum stays exact in the accumulator (see the module docstring)."""
    if t in INTEGERS:
        width, signed = INTEGERS[t]
        if t == "s32":
            return np.arange(-(1 << 20), (1 << 20) + 1, 997, dtype=np.int64)
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        return np.arange(lo, hi + 1, dtype=np.int64)
    narrow = max(code_width(v.a), code_width(v.b)) <= 8
    step, top = (1.0, 4.0) if narrow else (0.5, 4.0)
    if role == "C":
        top *= 2
    grid = np.arange(-top, top + step, step)
    return np.array(representable(t, grid), dtype=np.float64)


def draw(rng: np.random.Generator, t: str, role: str, v: Variant, shape: tuple[int, ...],
         nonzero: bool = False) -> np.ndarray:
    pool = values_for(t, role, v)
    if nonzero:
        pool = pool[pool != 0]
    return encode(t, pool[rng.integers(0, len(pool), size=shape)])


# ---- a variant with its layouts ---------------------------------------------------------------


@dataclass
class Plan:
    """A variant and the four maps its kernel is packed and read with."""

    variant: Variant
    a: OperandMap
    b: OperandMap
    cd: OperandMap
    meta: MetadataMap | None = None

    @property
    def hashes(self) -> dict[str, str]:
        out = {"A": self.a.map_hash, "B": self.b.map_hash, "C/D": self.cd.map_hash}
        if self.meta is not None:
            out["metadata"] = self.meta.map_hash
        return out

    @property
    def sparsity(self) -> Sparsity | None:
        return self.variant.sparsity

    @property
    def groups(self) -> int:
        return self.cd.groups

    @property
    def dims(self) -> tuple[int, int, int]:
        """(M, N, K) of the product the maps pack: the variant's, times the number of
        products for a replicated variant (the block-diagonal view)."""
        s = self.variant.dims
        g = self.groups
        return s.m * g, s.n * g, s.k * g


def plan(v: Variant, records: Sequence[Mapping[str, Any]],
         override: Mapping[str, Mapping[str, Any]] | None = None) -> Plan:
    """Maps for every operand of ``v``; ``LayoutError`` names what is missing.

    ``override`` replaces the layouts of some operands (the spec's erratum layouts, run to
    show them failing); an A or B given so may leave elements without a cell."""
    recs = dict(records_by_operand(v, records))
    recs.update(override or {})
    missing = [op for op in operands_of(v) if op not in recs]
    if missing:
        raise LayoutError(f"no layout for {', '.join(missing)} of {v.instruction} {v.shape} "
                          f"({v.a}.{v.b} -> {v.d})")
    over = set(override or ())
    a = operand_map(recs["A"], v.element_bits("A"), v.sparsity, partial="A" in over)
    b = operand_map(recs["B"], v.element_bits("B"), partial="B" in over)
    cd = operand_map(recs["C/D"], v.element_bits("C"))
    meta = metadata_map(recs["metadata"]) if v.sparse else None
    for m, op in ((a, "A"), (b, "B"), (cd, "C")):
        if m.n * m.bits != 32 * v.words(op):
            raise LayoutError(f"{m.layout_id}: {m.n} elements of {m.bits} bits per lane, but "
                              f"{v.key} takes {v.words(op)} words")
        if m.groups != v.replication:
            raise LayoutError(f"{m.layout_id}: the layout describes {m.groups} product(s) a "
                              f"warp, but {v.key} computes {v.replication}")
    return Plan(v, a, b, cd, meta)


def plans(records: Sequence[Mapping[str, Any]], variants: Iterable[Variant] = VARIANTS) \
        -> dict[str, Plan | LayoutError]:
    out: dict[str, Plan | LayoutError] = {}
    for v in variants:
        try:
            out[v.key] = plan(v, records)
        except LayoutError as exc:
            out[v.key] = exc
    return out


# ---- trials -----------------------------------------------------------------------------------


@dataclass
class Trial:
    """A batch of T trials: the matrices (codes) and the words each lane loads."""

    a: np.ndarray  # (T, M, K) dense codes (sparse: the decompressed matrix)
    b: np.ndarray  # (T, K, N)
    c: np.ndarray  # (T, M, N)
    inputs: np.ndarray  # (T, 32, W_in) uint32
    expected: np.ndarray  # (T, 32, W_out) uint32
    selector: int | None = None
    units: np.ndarray | None = None  # sparse: (T, M, chunks, 2)


def input_words(p: Plan, a_words: np.ndarray, b_words: np.ndarray, c_words: np.ndarray,
                e_words: np.ndarray | None = None) -> np.ndarray:
    parts = [a_words, b_words, c_words]
    if p.variant.sparse:
        assert e_words is not None
        parts.append(np.asarray(e_words, dtype=np.uint32)[..., None])
    return np.concatenate([np.asarray(x, dtype=np.uint32) for x in parts], axis=-1)


def _blocks(m: OperandMap, codes: np.ndarray) -> np.ndarray:
    """A replicated operand's codes with the off-diagonal blocks (held by nobody) zero."""
    mask = block_mask(m)
    if mask is not None:
        codes[:, ~mask] = 0
    return codes


def make_trials(p: Plan, rng: np.random.Generator, count: int,
                selector: int | None = None) -> Trial:
    """``count`` random trials (one per warp) of ``p`` and their exact expected D words."""
    v = p.variant
    m_, n_, k_ = p.dims
    b = _blocks(p.b, draw(rng, v.b, "B", v, (count, k_, n_)))
    c = _blocks(p.cd, draw(rng, v.c, "C", v, (count, m_, n_)))
    units = None
    if v.sparse:
        sp = p.sparsity
        assert sp is not None and p.meta is not None and selector is not None
        chunks = k_ // sp.chunk
        units = random_units(rng, sp, (count, m_, chunks))
        vals = draw(rng, v.a, "A", v, (count, m_, chunks, sp.nonzeros), nonzero=True)
        a = dense_from_units(sp, units, vals, k_)
        a_words = compress(p.a, v.a, a, units, sp)
        e_words = metadata_words(p.meta, selector, units, rng)
    else:
        a = _blocks(p.a, draw(rng, v.a, "A", v, (count, m_, k_)))
        a_words = pack(p.a, v.a, a)
        e_words = None
    inputs = input_words(p, a_words, pack(p.b, v.b, b), pack(p.cd, v.c, c), e_words)
    expected = pack(p.cd, v.d, reference(v, a, b, c))
    return Trial(a, b, c, inputs, expected, selector, units)


def emulate(p: Plan, inputs: np.ndarray, selector: int | None = None) -> np.ndarray:
    """What a tensor core does with ``inputs`` if ``p``'s maps are the hardware's truth."""
    v = p.variant
    m_, n_, k_ = p.dims
    wa, wb, wc = v.words("A"), v.words("B"), v.words("C")
    x = np.asarray(inputs, dtype=np.uint32)
    aw, bw, cw = x[..., :wa], x[..., wa:wa + wb], x[..., wa + wb:wa + wb + wc]
    if v.sparse:
        sp = p.sparsity
        assert sp is not None and p.meta is not None
        units = read_units(p.meta, selector or 0, x[..., wa + wb + wc], m_, k_ // sp.chunk)
        a = decompress(p.a, v.a, aw, units, sp, k_)
    else:
        a = unpack(p.a, v.a, aw)
    b = unpack(p.b, v.b, bw)
    c = unpack(p.cd, v.c, cw)
    return pack(p.cd, v.d, reference_any(v, a, b, c))
