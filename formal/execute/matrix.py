"""What ldmatrix / stmatrix / movmatrix / wgmma must do, in numpy: registers from shared
memory and back, shared-memory images for wgmma's descriptors, and the exact product.

numpy only (it runs on the GPU machine beside CuPy, with no prover).  Layouts come as the
exported JSON records (``formal.export``) described in ``formal.execute.gpu_matrix``.

**Moves.**  A move's register fragment is a cell table over the variant's tile: the ``.num``
matrices stacked one above the other (matrix j's row r is tile row ``R * j + r``; a record
may name ``matrix`` in each cell instead).  A cell is in *memory* coordinates: ``row`` is the
row whose address a lane supplies (matrix j's row r: lane ``8 * j + r`` for .m8n8), ``col``
the element within that 16-byte row -- with ``.trans`` too.  Worked example, ldmatrix .x4
without .trans: lane 5's register 2 holds elements 4 and 5, matrix 2's row 1, columns 2 and
3, so its cells are (17, 2) and (17, 3); with ``.trans`` they are (18, 1) and (19, 1).
Register j holds elements 2j (bits 0-15) and 2j + 1 (bits 16-31).

movmatrix has two tables over its 8 x 8 matrix M: ``a`` (source) in M's coordinates, ``d``
(destination) in the coordinates of the transpose T = M^T (d is T's fragment): d's element
with cell (r, c) must receive ``M[c][r]``.

**wgmma.**  A (in registers) and C/D are cell tables over 128 threads (``lane`` is the
thread of the warpgroup, 0-127).  B, and A from shared memory, are images laid out K-major
by a ``SmemLayout``: byte ``k * bits / 8`` of row ``mn`` (``mn`` = n for B, m for A) lies in
core matrix (mn // 8, kbyte // 16) -- 8 rows of 16 bytes, 128 contiguous bytes -- at
``(mn % 8) * 16 + kbyte % 16``; core matrices adjacent in K are ``lbo`` bytes apart, in M/N
``sbo`` bytes (no swizzle).  With a 32/64/128-byte swizzle a row of the 8-row atom is that
many bytes, atoms are ``sbo`` apart, and address bits 4.. are XORed with bits 7.. (1, 2 or 3
bits).  Elements sit little-endian (a ``.tf32`` in the top 19 bits of its 32; ``.b1`` bit
k % 8 of its byte, an assumption the device checks).

**wgmma.sp.**  A is 2:4 sparse (1:2 for ``.tf32``): each chunk of 4 (2) elements of a row
holds 2 (1) non-zeros, and the metadata names where, as ``formal.execute.cpu`` describes
for ``mma.sp`` (whose packing this reuses over 128 threads).  From registers, A is packed
by the sparse A map: a thread's elements of (row, [firstcol .. lastcol]) are that range's
non-zeros in column order (``cpu.compress``).  From shared memory, A is the compressed
64 x K/2 matrix -- row r's non-zeros in column order, chunk after chunk -- laid out and
described like a dense A of K/2 columns.  Each thread supplies one metadata word: the
holders of the variant's selector put the index of each (row, chunk, slot) in the field the
metadata map names (``cpu.metadata_words``), every other bit of every thread is random.
Worked example (m64nNk32 ``.f16``, selector 0): thread 37 is warp 1, lane 5 (groupID 1,
threadID_in_group 1); its register 2 holds the two non-zeros of row 17, columns 20..23,
and bits 2i..2i+1 of its metadata word the index of slot i & 1 of chunk ((i & 7) >> 1) + 4
of row 17 (i < 8) or 25.  The run's maps are ``A`` (from registers), ``meta`` and ``C/D``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.hashes import row_texts
from ..base.matrix_variants import CATALOG_OPERAND, Variant, matrix_layout_serves
from ..base.variants import TYPE_BITS, sparsity_of
from . import cpu, numbers
from .maps import LayoutError, MetadataMap, OperandMap, metadata_map, operand_map
from .smem import SmemLayout, element_bytes_image
from .smem import canonical as canonical  # the layouts the checks use, for the runner

U64 = np.uint64


# ---- records ----------------------------------------------------------------------------------


def operands(v: Variant) -> tuple[str, ...]:
    """The register operands whose layouts a run of ``v`` needs (wgmma.sp: ``meta`` too,
    its metadata register)."""
    if v.wgmma:
        a = ("A",) if v.a_source == "reg" else ()
        return (*a, "meta", "C/D") if v.sparse else (*a, "C/D")
    if v.instruction == "movmatrix":
        return ("a", "d")
    return ("r",)


def matrix_record_serves(v: Variant, operand: str, rec: Mapping[str, Any]) -> bool:
    """Does the exported record describe ``operand`` (the executor's name) of ``v``?"""
    return matrix_layout_serves(v, operand, str(rec.get("instruction")), str(rec.get("shape")),
                         str(rec.get("operand")), tuple(rec.get("types") or ()),
                         tuple(int(n) for n in rec.get("n") or ()))


def records_for(v: Variant, records: Sequence[Mapping[str, Any]],
                index: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None = None) \
        -> dict[str, Mapping[str, Any]]:
    """The first record serving each operand of ``v``.  ``index``: ``records_index(records)``,
    for a caller asking of many variants."""
    out: dict[str, Mapping[str, Any]] = {}
    for op in operands(v):
        among = records if index is None else \
            index.get((v.instruction, str(CATALOG_OPERAND.get((v.instruction, op)))), ())
        hits = [r for r in among
                if (r.get("cells") or r.get("fields")) and matrix_record_serves(v, op, r)]
        if hits:
            out[op] = hits[0]
    return out


def records_index(records: Sequence[Mapping[str, Any]]) \
        -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """The records by (instruction, operand), in their order: the only records
    ``matrix_record_serves`` can accept for an operand of a variant."""
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        out.setdefault((str(r.get("instruction")), str(r.get("operand"))), []).append(r)
    return out


def maps_for(v: Variant, records: Sequence[Mapping[str, Any]],
             memo: dict[Any, Any] | None = None) -> dict[str, OperandMap]:
    """Every register map a run of ``v`` needs (``execute.maps.operand_map`` with what the
    variant fixes: its threads, tile and elements a thread), or ``LayoutError``.  ``memo``:
    a caller that asks for many variants of the same ``records`` (left unchanged while it
    lives) builds each (record, threads, tile, elements, shape) map once -- wgmma's
    accumulator at one N serves every type pair."""
    index = None
    if memo is not None:
        index = memo.get(("index",))
        if index is None:
            index = memo[("index",)] = records_index(records)
    recs = records_for(v, records, index)
    out: dict[str, OperandMap] = {}

    def built(rec: Mapping[str, Any], **kw: Any) -> OperandMap:
        if memo is None:
            return operand_map(rec, **kw)
        key = (id(rec), tuple(sorted(kw.items())))
        if key not in memo:
            texts = None
            if rec.get("n") and rec.get("cells"):  # taken at many N: its rows written once
                texts = memo.get(("texts", id(rec)))
                if texts is None:
                    texts = memo[("texts", id(rec))] = row_texts(rec["cells"])
            memo[key] = operand_map(rec, texts=texts, **kw)
        return memo[key]

    for op in operands(v):
        rec = recs.get(op)
        if rec is None:
            raise LayoutError(f"{v.key}: no layout with a cell table for operand {op}")
        if v.sparse and op in ("A", "meta"):
            out[op] = _sparse_map(v, op, rec)
        elif v.wgmma:
            tile = (64, v.k) if op == "A" else (64, v.n)
            out[op] = built(rec, lanes=128, tile=tile,
                            n=v.elements("A" if op == "A" else "D"), shape=v.shape)
        elif v.instruction == "movmatrix":
            out[op] = built(rec, tile=(8, 8), n=2)
        else:
            per = 32 // v.element_bits()
            out[op] = built(rec, tile=v.tile, n=v.registers * per, matrix_rows=v.matrix[0])
    return out


def _sparse_map(v: Variant, op: str, rec: Mapping[str, Any]) -> OperandMap:
    """wgmma.sp's sparse A over 128 threads (each element's row, chunk and rank among its
    chunk's non-zeros) or its metadata operand (no cells; its fields, ``meta``)."""
    if op == "meta":
        meta = metadata_map(rec)
        if v.selector not in meta.fields:
            raise LayoutError(f"{meta.layout_id}: no metadata fields for selector "
                              f"{v.selector}")
        return _metadata_operand(rec, meta, v.k)
    sp = sparsity_of(v.a)
    assert sp is not None
    m = operand_map(rec, TYPE_BITS[v.a], sp, lanes=128)
    if m.n != v.elements("A") or m.tile != (64, v.k):
        raise LayoutError(f"{m.layout_id}: {m.n} elements a thread over {m.tile}, but {v.key} "
                          f"takes {v.elements('A')} over (64, {v.k})")
    return m


def _metadata_operand(rec: Mapping[str, Any], meta: MetadataMap, k: int) -> OperandMap:
    empty = np.zeros((128, 0), dtype=np.int64)
    return OperandMap("metadata", str(rec["instruction"]), str(rec["shape"]), (64, k), 0,
                      empty, empty, meta.map_hash, meta.layout_id, meta=meta)


def planted(v: Variant, maps: Mapping[str, OperandMap], plant: str) -> dict[str, OperandMap]:
    """The maps with a deliberate error (a negative control that must mismatch):
    ``meta-chunks-swapped`` exchanges the metadata fields of chunks 2j and 2j + 1 of every
    row (each chunk's indices stay a legal pattern, they only describe the wrong chunk).
    ``a-smem-dense`` leaves the maps as they are (the trial lays A out otherwise:
    ``sparse_trial``'s ``dense_a``)."""
    if plant == "a-smem-dense" and v.sparse and v.a_source == "smem":
        return dict(maps)
    if plant != "meta-chunks-swapped" or "meta" not in maps:
        raise LayoutError(f"{v.key}: no such planted error: {plant}")
    old = maps["meta"].meta
    assert old is not None
    rows = [{**r, "chunk": int(r["chunk"]) ^ 1} for r in old.rows]
    rec = {"instruction": maps["meta"].instruction, "shape": maps["meta"].shape, "fields": rows,
           "id": f"{old.layout_id} (chunks 2j, 2j+1 swapped)"}
    out = dict(maps)
    out["meta"] = _metadata_operand(rec, metadata_map(rec), maps["meta"].tile[1])
    return out


def hashes(maps: Mapping[str, OperandMap]) -> dict[str, str]:
    return {op: m.map_hash for op, m in maps.items()}


# ---- moves ------------------------------------------------------------------------------------

SLOT = 16  # bytes of one shared-memory row of a move


@dataclass
class MoveTrial:
    inputs: np.ndarray  # (T, 32, R) register words in (stmatrix, movmatrix)
    image: np.ndarray  # (T, W) words of shared memory in
    addr: np.ndarray  # (T, 32) byte offsets each lane supplies
    expected: np.ndarray  # ldmatrix/movmatrix: (T, 32, R) words; stmatrix: (T, W) words
    slots: np.ndarray  # (T, rows) the slot each tile row sits in


def address_lanes(v: Variant) -> int:
    """Lanes whose addresses the instruction uses: 8 a matrix (16 for 16-row matrices)."""
    return v.matrix[0] * v.matrices


def _layout_rows(rng: np.random.Generator, v: Variant, count: int, slots_total: int) \
        -> tuple[np.ndarray, np.ndarray]:
    """Each trial's tile rows at random distinct 16-byte slots; the lanes that supply no
    address point at other random slots (decoys the hardware must ignore)."""
    rows = v.tile[0]
    perm = np.argsort(rng.random((count, slots_total)), axis=1)
    slots = perm[:, :rows]
    addr = np.empty((count, 32), dtype=np.int64)
    used = address_lanes(v)
    addr[:, :used] = slots[:, :used] * SLOT
    decoys = perm[:, rows:rows + 32 - used]
    addr[:, used:] = decoys * SLOT
    return slots, addr


def _halves(image_words: np.ndarray) -> np.ndarray:
    return image_words.view(np.uint16).reshape(image_words.shape[0], -1)


def move_trial(v: Variant, maps: Mapping[str, OperandMap], rng: np.random.Generator,
               count: int, image_bytes: int) -> MoveTrial:
    """Fresh random data for ``count`` trials of a 16-bit move, with the expected result."""
    if v.element_bits() != 16:
        raise LayoutError(f"{v.key}: only 16-bit moves run here")
    words = image_bytes // 4
    image = rng.integers(0, 1 << 32, size=(count, words), dtype=np.uint64).astype(np.uint32)
    t_idx = np.arange(count)[:, None, None]
    if v.instruction == "movmatrix":
        a, d = maps["a"], maps["d"]
        m = rng.integers(0, 1 << 16, size=(count, 8, 8), dtype=np.uint64)
        inputs = cpu.pack_elements(m[t_idx, a.row[None], a.col[None]], 16)
        expected = cpu.pack_elements(m[t_idx, d.col[None], d.row[None]], 16)
        return MoveTrial(inputs, image[:, :0], np.zeros((count, 32), np.int64), expected,
                         np.zeros((count, 0), np.int64))
    r = maps["r"]
    slots, addr = _layout_rows(rng, v, count, image_bytes // SLOT)
    halves = _halves(image)
    per_slot = SLOT // 2
    # the halfword index of each (trial, lane, element)'s cell
    where = slots[t_idx, r.row[None]] * per_slot + r.col[None]
    if v.instruction == "ldmatrix":
        codes = halves[t_idx, where].astype(np.uint64)
        return MoveTrial(np.zeros((count, 32, 0), np.uint32), image, addr,
                         cpu.pack_elements(codes, 16), slots)
    vals = rng.integers(0, 1 << 16, size=(count, 32, r.n), dtype=np.uint64)
    want = halves.copy()
    want[t_idx, where] = vals.astype(np.uint16)
    return MoveTrial(cpu.pack_elements(vals, 16), image, addr,
                     want.view(np.uint32).reshape(count, -1), slots)


def move_differences(v: Variant, maps: Mapping[str, OperandMap], trial: MoveTrial,
                     got: np.ndarray) -> list[str]:
    """Lines naming the first differing (lane, element)s or image halfwords."""
    out: list[str] = []
    if v.instruction == "stmatrix":
        g, w = _halves(np.asarray(got, np.uint32)), _halves(trial.expected)
        for t, h in zip(*np.nonzero(g != w), strict=True):
            slot, c = divmod(int(h), SLOT // 2)
            rows = np.nonzero(trial.slots[t] == slot)[0]
            where = f"tile row {int(rows[0])} col {c}" if len(rows) else f"byte {2 * int(h)}" \
                " (no tile row: written where nothing should be)"
            out.append(f"trial {t}: {where}: got 0x{int(g[t, h]):04x}, want 0x{int(w[t, h]):04x}")
            if len(out) >= 6:
                break
        return out
    g = cpu.unpack_elements(got, 16, 2 * got.shape[-1])
    w = cpu.unpack_elements(trial.expected, 16, 2 * got.shape[-1])
    m = maps["d" if v.instruction == "movmatrix" else "r"]
    for t, lane, i in zip(*np.nonzero(g != w), strict=True):
        out.append(f"trial {t}: lane {lane} element {i} (cell {int(m.row[lane, i])}, "
                   f"{int(m.col[lane, i])}): got 0x{int(g[t, lane, i]):04x}, want "
                   f"0x{int(w[t, lane, i]):04x}")
        if len(out) >= 6:
            break
    return out


# ---- discovery of a move's map ----------------------------------------------------------------


def discovery_trial(v: Variant, maps: Mapping[str, OperandMap], image_bytes: int) \
        -> MoveTrial:
    """One trial whose data name themselves: ldmatrix reads halfword ``tile_row * C + col
    + 1`` from each cell; stmatrix stores ``lane * n + element + 1``; movmatrix sends
    ``lane * 2 + element + 1``.  ``discovered`` reads the map back."""
    rng = np.random.default_rng(0)
    base = move_trial(v, maps, rng, 1, image_bytes)
    rows, cols = v.tile
    if v.instruction == "ldmatrix":
        halves = _halves(base.image)
        halves[:] = 0
        for j in range(rows):
            halves[0, base.slots[0, j] * 8: base.slots[0, j] * 8 + cols] = \
                np.arange(cols) + j * cols + 1
        return base
    if v.instruction == "stmatrix":
        n = maps["r"].n
        codes = np.arange(32 * n, dtype=np.uint64).reshape(1, 32, n) + 1
        base.inputs = cpu.pack_elements(codes, 16)
        base.image[:] = 0
        return base
    codes = np.arange(64, dtype=np.uint64).reshape(1, 32, 2) + 1
    base.inputs = cpu.pack_elements(codes, 16)
    return base


def discovered(v: Variant, maps: Mapping[str, OperandMap], trial: MoveTrial,
               got: np.ndarray) -> list[dict[str, int]]:
    """The cell table the hardware showed (-1 where nothing identifiable arrived)."""
    rows, cols = v.tile
    out: list[dict[str, int]] = []
    if v.instruction == "stmatrix":
        n = maps["r"].n
        cell: dict[int, tuple[int, int]] = {}
        halves = _halves(np.asarray(got, np.uint32))[0]
        for j in range(rows):
            s = int(trial.slots[0, j])
            for c in range(cols):
                code = int(halves[s * 8 + c])
                if code:
                    cell[code - 1] = (j, c)
        for lane in range(32):
            for i in range(n):
                r, c = cell.get(lane * n + i, (-1, -1))
                out.append({"lane": lane, "element": i, "row": r, "col": c})
        return out
    n = 2 * got.shape[-1]
    codes = cpu.unpack_elements(got, 16, n)[0].astype(np.int64) - 1
    a = maps.get("a")
    for lane in range(32):
        for i in range(n):
            code = int(codes[lane, i])
            if v.instruction == "ldmatrix":
                ok = 0 <= code < rows * cols
                r, c = divmod(code, cols) if ok else (-1, -1)
            else:  # movmatrix: source (lane, element) -> M cell -> T cell (transposed)
                ok = a is not None and 0 <= code < 64
                r, c = ((int(a.col[code // 2, code % 2]), int(a.row[code // 2, code % 2]))
                        if ok and a is not None else (-1, -1))
            out.append({"lane": lane, "element": i, "row": r, "col": c})
    return out


# ---- wgmma: trials ----------------------------------------------------------------------------


@dataclass
class WgmmaTrial:
    inputs: np.ndarray  # (T, 128, WA + WD) words
    image: np.ndarray  # (T, W) words
    a_off: int
    b_off: int
    expected: np.ndarray  # (T, 128, WD) words
    a: np.ndarray  # (T, 64, K) codes (wgmma.sp: the dense A the metadata describes)
    b: np.ndarray  # (T, K, N)
    c: np.ndarray  # (T, 64, N)
    units: np.ndarray | None = None  # wgmma.sp: (T, 64, chunks, 2) metadata indices


def _round(x: int, to: int) -> int:
    return (x + to - 1) // to * to


def regs_of(m: OperandMap, t: str, codes: np.ndarray) -> np.ndarray:
    bits = TYPE_BITS[t]
    el = np.asarray(codes, np.uint64)[:, m.row, m.col]
    return cpu.pack_elements(cpu.to_container(t, bits, el), bits)


def codes_of(m: OperandMap, t: str, words: np.ndarray) -> np.ndarray:
    """(T, 128, WD) words -> (T, 64, N) codes by the map."""
    bits = TYPE_BITS[t]
    el = cpu.from_container(t, bits, cpu.unpack_elements(words, bits, m.n))
    out = np.zeros((el.shape[0], *m.tile), dtype=np.uint64)
    out[:, m.row, m.col] = el
    return out


def wgmma_trial(v: Variant, maps: Mapping[str, OperandMap], a: np.ndarray, b: np.ndarray,
                c: np.ndarray, layout_a: SmemLayout, layout_b: SmemLayout) -> WgmmaTrial:
    """Pack given codes (A (T, 64, K), B (T, K, N), C (T, 64, N)) and the exact D."""
    parts = []
    if v.a_source == "reg":
        parts.append(regs_of(maps["A"], v.a, a))
    parts.append(regs_of(maps["C/D"], v.c, c))
    inputs = np.concatenate(parts, axis=-1)
    a_size = 0 if v.a_source == "reg" else _round(layout_a.extent(64, v.k, TYPE_BITS[v.a]), 16)
    b_off = _round(a_size, 1024)
    b_size = _round(layout_b.extent(v.n, v.k, TYPE_BITS[v.b]), 16)
    total = _round(b_off + b_size, 16)
    img = np.zeros((a.shape[0], total), dtype=np.uint8)
    if v.a_source != "reg":
        img[:, :a_size] = element_bytes_image(a, v.a, layout_a, a_size)
    img[:, b_off:b_off + b_size] = element_bytes_image(np.swapaxes(b, 1, 2), v.b, layout_b,
                                                       b_size)
    d = cpu.reference(v, a, b, c)
    return WgmmaTrial(inputs, img.view(np.uint32), 0, b_off, regs_of(maps["C/D"], v.c, d),
                      a, b, c)


def sparse_trial(v: Variant, maps: Mapping[str, OperandMap], rng: np.random.Generator,
                 count: int, layout_a: SmemLayout, layout_b: SmemLayout,
                 dense_a: bool = False) -> WgmmaTrial:
    """Fresh random wgmma.sp data: each chunk of A's rows gets random legal indices
    (``execute.cpu.random_units``) and non-zero values there; A is packed from the sparse A
    map (``cpu.compress``, from registers) or as the compressed 64 x K/2 matrix -- each
    row's non-zeros in column order -- laid out like a dense A of K/2 columns (from shared
    memory); every thread's metadata word from the metadata map at the variant's selector
    (``cpu.metadata_words``: the fields of the holders, random bits everywhere else); B
    dense through its descriptor; D = (A decompressed) x B + C, exact.  ``dense_a`` (the
    other reading of the spec, an experiment): shared memory holds the whole 64 x K A, zeros
    included."""
    sp = sparsity_of(v.a)
    meta = maps["meta"].meta
    assert sp is not None and meta is not None
    chunks = v.k // sp.chunk
    units = cpu.random_units(rng, sp, (count, 64, chunks))
    vals = cpu.draw(rng, v.a, "A", v, (count, 64, chunks, sp.nonzeros), nonzero=True)
    a = cpu.dense_from_units(sp, units, vals, v.k)
    b = cpu.draw(rng, v.b, "B", v, (count, v.k, v.n))
    c = cpu.draw(rng, v.c, "C", v, (count, 64, v.n))
    parts = []
    if v.a_source == "reg":
        parts.append(cpu.compress(maps["A"], v.a, a, units, sp))
    parts.append(regs_of(maps["C/D"], v.c, c))
    parts.append(cpu.metadata_words(meta, v.selector, units, rng, 128)[..., None])
    inputs = np.concatenate([np.asarray(x, np.uint32) for x in parts], axis=-1)
    half = v.k if dense_a else v.k // 2
    a_size = 0 if v.a_source == "reg" else _round(layout_a.extent(64, half, TYPE_BITS[v.a]), 16)
    b_off = _round(a_size, 1024)
    b_size = _round(layout_b.extent(v.n, v.k, TYPE_BITS[v.b]), 16)
    img = np.zeros((count, _round(b_off + b_size, 16)), dtype=np.uint8)
    if v.a_source != "reg":
        comp = a if dense_a else vals.reshape(count, 64, half)
        img[:, :a_size] = element_bytes_image(comp, v.a, layout_a, a_size)
    img[:, b_off:b_off + b_size] = element_bytes_image(np.swapaxes(b, 1, 2), v.b, layout_b,
                                                       b_size)
    d = cpu.reference(v, a, b, c)
    return WgmmaTrial(inputs, img.view(np.uint32), 0, b_off, regs_of(maps["C/D"], v.c, d),
                      a, b, c, units)


def random_trial(v: Variant, maps: Mapping[str, OperandMap], rng: np.random.Generator,
                 count: int, layout_a: SmemLayout, layout_b: SmemLayout) -> WgmmaTrial:
    if v.sparse:
        return sparse_trial(v, maps, rng, count, layout_a, layout_b)
    a = cpu.draw(rng, v.a, "A", v, (count, 64, v.k))
    b = cpu.draw(rng, v.b, "B", v, (count, v.k, v.n))
    c = cpu.draw(rng, v.c, "C", v, (count, 64, v.n))
    return wgmma_trial(v, maps, a, b, c, layout_a, layout_b)


def wgmma_differences(v: Variant, maps: Mapping[str, OperandMap], trial: WgmmaTrial,
                      got: np.ndarray) -> tuple[list[tuple[int, int]], str]:
    """(differing D cells, a line describing the first ones)."""
    m = maps["C/D"]
    g = codes_of(m, v.c, got)
    w = codes_of(m, v.c, trial.expected)
    bad = np.nonzero(g != w)
    cells = sorted({(int(r), int(c)) for r, c in zip(bad[1], bad[2], strict=True)})
    if not cells:
        return [], ""
    t0, r0, c0 = (int(x[0]) for x in bad)
    gv = numbers.decode(v.c, g[t0, r0, c0])
    wv = numbers.decode(v.c, w[t0, r0, c0])
    line = (f"{len(bad[0])} D elements differ in {len(set(bad[0].tolist()))} of "
            f"{got.shape[0]} trials, {len(cells)} cells, first D[{r0}][{c0}] got {gv} "
            f"want {wv}")
    return cells, line


# ---- wgmma: discovering a shared-memory layout ------------------------------------------------


def probe_trial(v: Variant, maps: Mapping[str, OperandMap], layout: SmemLayout,
                operand: str) -> tuple[WgmmaTrial, int]:
    """One trial per element slot of ``operand``'s image ("B", or "A" from shared memory):
    that slot holds 1, every other 0; the other operand holds k + 1 in every element of
    column / row k (so D's one non-zero column (B) or row (A) names n or m, its value k).
    Returns the trial and the number of slots; ``probe_map`` reads the answer."""
    kbytes = v.k * TYPE_BITS[v.a] // 8
    rows = v.n if operand == "B" else 64
    size = layout.extent(rows, v.k, TYPE_BITS[v.a])
    eb = TYPE_BITS[v.a] // 8
    slots = size // eb
    one = numbers.encode(v.a, [1])[0]
    ks = numbers.encode(v.a, np.arange(v.k) + 1)
    zero_c = np.zeros((slots, 64, v.n), dtype=np.uint64)
    if operand == "B":
        a = np.broadcast_to(ks[None, None, :], (slots, 64, v.k)).copy()
        b = np.zeros((slots, v.k, v.n), dtype=np.uint64)
        base = wgmma_trial(v, maps, a, b, zero_c, layout, layout)
        img = base.image.view(np.uint8)
        region = img[:, base.b_off:base.b_off + size]
    else:
        a = np.zeros((slots, 64, v.k), dtype=np.uint64)
        b = np.broadcast_to(ks[None, :, None], (slots, v.k, v.n)).copy()
        base = wgmma_trial(v, maps, a, b, zero_c, layout, canonical(v.n, kbytes))
        img = base.image.view(np.uint8)
        region = img[:, :size]
    cont = int(cpu.to_container(v.a, TYPE_BITS[v.a], np.array([one]))[0])
    region[:] = 0
    for j in range(eb):
        region[np.arange(slots), np.arange(slots) * eb + j] = (cont >> (8 * j)) & 0xFF
    base.expected = np.zeros_like(base.expected)
    return base, slots


def probe_map(v: Variant, maps: Mapping[str, OperandMap], operand: str,
              got: np.ndarray) -> list[dict[str, int]]:
    """Per slot: the (mn, k) the hardware read it as, or -1s where D stayed zero."""
    d = numbers.decode(v.c, codes_of(maps["C/D"], v.c, got))
    out = []
    for s in range(d.shape[0]):
        nz = np.argwhere(d[s] != 0)
        if len(nz) == 0:
            out.append({"slot": s, "mn": -1, "k": -1})
            continue
        if operand == "B":
            cols = sorted(set(nz[:, 1].tolist()))
            mn = cols[0] if len(cols) == 1 else -2
            k = int(round(float(d[s, 0, cols[0]]))) - 1
        else:
            rows = sorted(set(nz[:, 0].tolist()))
            mn = rows[0] if len(rows) == 1 else -2
            k = int(round(float(d[s, rows[0], 0]))) - 1
        out.append({"slot": s, "mn": int(mn), "k": k})
    return out


def expected_probe(v: Variant, layout: SmemLayout, operand: str) -> list[dict[str, int]]:
    """What ``probe_map`` must show if the hardware reads ``layout`` as we do."""
    eb = TYPE_BITS[v.a] // 8
    rows = v.n if operand == "B" else 64
    size = layout.extent(rows, v.k, TYPE_BITS[v.a])
    where: dict[int, tuple[int, int]] = {}
    for mn in range(rows):
        for k in range(v.k):
            where[int(layout.element_offset(np.array(mn), np.array(k), 8 * eb)) // eb] = (mn, k)
    return [{"slot": s, "mn": where.get(s, (-1, -1))[0], "k": where.get(s, (-1, -1))[1]}
            for s in range(size // eb)]
