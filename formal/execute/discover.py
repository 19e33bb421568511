"""Recover fragment layouts from a tensor core's answers alone (``gpu --discover``).

**What hardware can tell, and what it cannot.**  A run shows only registers: the words each
lane put in and the words of D it got back.  ``D = A x B + C`` is unchanged when the m index
is relabelled in A and D together, the n index in B and D together, or the k index in A and B
together, so no experiment can tell a layout from one with its rows (or columns, or k) renamed
consistently across the operands.  What *is* observable is which register elements share an m,
an n or a k -- the product's structure.  Discovery therefore recovers each map up to those
three relabelings, then names the hardware's m, n and k classes by the given labels they agree
with most (one to one): a layout that is right up to a relabeling nothing can observe is then
reported as exactly itself, with the same ``map_hash``, and a wrong one shows the (lane,
element) pairs whose cells still differ -- in the operand that is wrong, not smeared over the
others.

**A worked example.**  With one lane element of A set to 1 (``α``), C = 0, and B holding, as
its values, bit j of (index + 1) of each B element, D is non-zero exactly in row m(α), and there
D[m(α)][n] = bit j of (index + 1) of the B element at (k(α), n).  Over the planes j = 0, 1, ...
every lit D element δ names one B element β: then m(α) = m(δ), n(δ) = n(β) and k(α) = k(β).
Union-find over those three relations across all α gives the m, n and k classes, hence all
three maps.  Only 0 and 1 are used, so this is exact in every type, ``.b1`` included; for
``.xor.popc`` the product is read as the change from a run with A = 0 (1 - 2b for bit b).
A warp that computes several products (m8n8k4 ``.f16``: four, one per quad-pair) is the
block-diagonal product of ``formal.execute.cpu``: its m, n and k classes come out per product
(32, 32 and 16), since nothing links one product's indices to another's, and the recovered
cells are reported per product (``group``), as the export states them.
For ``mma.sp`` the one-hot A element is a compressed value and every lane's metadata is the
same valid nibble -- indices (0, 3), then (1, 2) -- so each compressed element is probed at two
known positions and every k is reached.

**Metadata** (``discover_metadata``) assumes the given A, B and C/D maps (confirm them first):
the compressed values of each chunk are 1, 2, ... in non-zero order, every lane's nibbles are the
base (0, 3) = 0b1100, and one nibble of one lane is changed to (1, 3), (2, 3), (0, 1) or (0, 2)
-- each a valid ordered nibble that moves exactly one index.  B is a selection matrix (B[k][n] =
1 iff k = o + n), run for o = 0, N, 2N, ... so D's rows are A's decompressed rows.  The one
chunk that changes names the (row, chunk) the field controls, the value that moved names its
slot, and lanes whose nibbles change nothing are not holders for that selector.  ``.tf32``
accepts only 0b0100 and 0b1110, which move both indices of a nibble at once, so its two fields
are told apart by their order in the nibble (low field = slot 0), not by experiment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base.hashes import cell_table_hash
from ..base.variants import ELEMENT_LETTER, Sparsity
from . import cpu, numbers

Runner = Callable[[int | None, np.ndarray], np.ndarray]  # (selector, inputs) -> D words

LANES = 32
BASES = ((0, 3), (1, 2))  # two valid index pairs that together reach all four units
PROBES = ((1, 3), (2, 3), (0, 1), (0, 2))  # (new index pair) from the base (0, 3)
TF32_BASE, TF32_PROBE = 0b0100, 0b1110


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _nibble(pair: tuple[int, int]) -> int:
    return pair[0] | (pair[1] << 2)


def _word_of(nibble: int) -> int:
    return sum(nibble << (4 * j) for j in range(8))


def _one_hot_words(p: cpu.Plan, operand: str, t: str, value_code: int, elements: np.ndarray,
                   count: int) -> np.ndarray:
    """(count, 32, W): element ``elements[i]`` (a flat lane * n + e index) set in row i.

    Only the register order is used (element e of a lane at bits e * width of its words),
    never a layout's cells."""
    m = {"A": p.a, "B": p.b, "C": p.cd}[operand]
    words = np.zeros((count, LANES, max(1, m.n * m.bits // 32)), dtype=np.uint64)
    lane, e = np.divmod(np.asarray(elements, dtype=np.int64), m.n)
    bit = e * m.bits
    code = int(cpu.to_container(t, m.bits, np.array([value_code]))[0])
    if m.bits == 64:
        words[np.arange(len(lane)), lane, 2 * e] = code & 0xFFFFFFFF
        words[np.arange(len(lane)), lane, 2 * e + 1] = code >> 32
    else:
        words[np.arange(len(lane)), lane, bit // 32] = np.uint64(code) << (bit % 32).astype(
            np.uint64)
    return words.astype(np.uint32)


def _element_codes(p: cpu.Plan, operand: str, t: str, values: np.ndarray) -> np.ndarray:
    """(T, 32, n) element codes -> (T, 32, W) words (no map involved: register order only)."""
    m = {"A": p.a, "B": p.b, "C": p.cd}[operand]
    return cpu.pack_elements(cpu.to_container(t, m.bits, values), m.bits)


def _d_values(p: cpu.Plan, out: np.ndarray) -> np.ndarray:
    """(T, 32, W) D words -> (T, 32 * n) values, register order."""
    el = cpu.from_container(p.variant.d, p.cd.bits,
                            cpu.unpack_elements(out, p.cd.bits, p.cd.n))
    return numbers.decode(p.variant.d, el).reshape(el.shape[0], -1)


# ---- structures --------------------------------------------------------------------------------


@dataclass
class Structure:
    """Which register elements share an m, an n, a k: labels per element, any naming.

    ``a`` maps (lane, element, base) -> (m, k) (base 0 for dense A), ``b`` (lane, element)
    -> (k, n), ``d`` (lane, element) -> (m, n)."""

    a: dict[tuple[int, ...], tuple[Any, Any]]
    b: dict[tuple[int, ...], tuple[Any, Any]]
    d: dict[tuple[int, ...], tuple[Any, Any]]


def given_structure(p: cpu.Plan) -> Structure:
    """The given layouts' structure (sparse A: the column each element takes under each base
    of ``BASES``)."""
    a: dict[tuple[int, ...], tuple[Any, Any]] = {}
    if p.a.sparse:
        sp = p.sparsity
        assert sp is not None and p.a.chunk is not None and p.a.q is not None
        for bi, base in enumerate(_bases(sp)):
            pos = cpu.nonzero_positions(sp, np.array(base))
            for t in range(LANES):
                for i in range(p.a.n):
                    col = int(p.a.chunk[t, i]) * sp.chunk + int(pos[int(p.a.q[t, i])])
                    a[(t, i, bi)] = (int(p.a.row[t, i]), col)
    else:
        for t in range(LANES):
            for i in range(p.a.n):
                a[(t, i, 0)] = (int(p.a.row[t, i]), int(p.a.col[t, i]))
    b: dict[tuple[int, ...], tuple[Any, Any]] = {
        (t, i): (int(p.b.row[t, i]), int(p.b.col[t, i]))
        for t in range(LANES) for i in range(p.b.n)}
    d: dict[tuple[int, ...], tuple[Any, Any]] = {
        (t, i): (int(p.cd.row[t, i]), int(p.cd.col[t, i]))
        for t in range(LANES) for i in range(p.cd.n)}
    return Structure(a, b, d)


def _bases(sp: Sparsity) -> tuple[tuple[int, int], ...]:
    if sp.meaningful_fields:  # tf32: the two halves of element 0, then of element 1
        return ((0, 1), (2, 3))
    return BASES


# ---- dense discovery ----------------------------------------------------------------------------


@dataclass
class Discovery:
    """What the hardware showed about one variant's A, B and C/D maps."""

    key: str
    maps: dict[str, list[dict[str, int]]] = field(default_factory=dict)  # in given labels
    hashes: dict[str, str] = field(default_factory=dict)
    differences: dict[str, list[str]] = field(default_factory=dict)
    anomalies: list[str] = field(default_factory=list)
    warps: int = 0

    @property
    def agrees(self) -> bool:
        return not self.anomalies and not any(self.differences.values())


def dense_probes(p: cpu.Plan) -> tuple[np.ndarray, int, int, int]:
    """(inputs, A probe count, planes, baseline count) of the one-hot experiment."""
    v = p.variant
    na = LANES * p.a.n
    nb = LANES * p.b.n
    planes = int(nb).bit_length()  # index + 1 <= nb needs this many bits
    bases = _bases(p.sparsity) if p.sparsity is not None else ((0, 0),)
    one_a = int(numbers.encode(v.a, [1])[0])
    one_b = int(numbers.encode(v.b, [1])[0])
    count = na * len(bases) * planes
    # A: one-hot, the same for every plane of one probe
    probe_a = np.repeat(np.tile(np.arange(na), len(bases)), planes)
    a_words = _one_hot_words(p, "A", v.a, one_a, probe_a, count)
    # B: plane j holds bit j of (index + 1)
    idx = np.arange(nb) + 1
    bits = ((idx[None, :] >> np.arange(planes)[:, None]) & 1).astype(np.uint64) * np.uint64(one_b)
    b_planes = _element_codes(p, "B", v.b, bits.reshape(planes, LANES, p.b.n))
    b_words = np.tile(b_planes, (na * len(bases), 1, 1))
    c_words = np.zeros((count, LANES, v.words("C")), dtype=np.uint32)
    e_words = None
    if v.sparse:
        sp = p.sparsity
        assert sp is not None
        nib = [_nibble(b) for b in bases]
        e_words = np.repeat(np.array([_word_of(n) for n in nib], dtype=np.uint32),
                            na * planes)[:, None] * np.ones((1, LANES), dtype=np.uint32)
    inputs = cpu.input_words(p, a_words, b_words, c_words, e_words)
    # baselines: A = 0 under each plane (needed by .xor.popc, cheap for the rest)
    base_in = cpu.input_words(
        p, np.zeros((planes, LANES, v.words("A")), dtype=np.uint32), b_planes,
        np.zeros((planes, LANES, v.words("C")), dtype=np.uint32),
        None if e_words is None else e_words[:planes])
    return np.concatenate([inputs, base_in]), count, planes, planes


def discover_dense(p: cpu.Plan, run: Runner) -> Discovery:
    """Recover A, B and C/D of ``p.variant`` from ``run`` and compare with ``p``'s maps."""
    v = p.variant
    out = Discovery(v.key)
    inputs, count, planes, _ = dense_probes(p)
    out.warps = len(inputs)
    sel = 0 if v.sparse else None
    got = np.asarray(run(sel, inputs))
    vals = _d_values(p, got)  # (T, 32 * nD)
    probe, base = vals[:count], vals[count:]
    nvirt = count // planes
    resp = probe.reshape(nvirt, planes, -1) - base[None, :, :]
    if v.op.startswith(".xor"):
        lit_plane = resp != 0
        bit = resp == -1
        odd = ~np.isin(resp, (0, 1, -1))
    else:
        lit_plane = resp != 0
        bit = resp == 1
        odd = ~np.isin(resp, (0, 1))
    if odd.any():
        i, j, e = (int(x[0]) for x in np.nonzero(odd))
        out.anomalies.append(f"probe {i} plane {j}: D element {e} changed by {resp[i, j, e]!r}, "
                             "not by 0 or 1 (a one-hot product cannot do that)")
        return out
    lit = lit_plane.any(axis=1)  # (virtual A, D element)
    beta = (bit.astype(np.int64) << np.arange(planes)[None, :, None]).sum(axis=1) - 1
    na = LANES * p.a.n
    nb = LANES * p.b.n
    uf = _UnionFind()
    for va, de in zip(*np.nonzero(lit), strict=True):
        bidx = int(beta[va, de])
        if not 0 <= bidx < nb:
            out.anomalies.append(f"A probe {int(va)}: D element {int(de)} named no B element")
            continue
        alpha = ("A", int(va) % na, int(va) // na)
        uf.union(("m",) + alpha, ("m", "D", int(de)))
        uf.union(("n", "D", int(de)), ("n", "B", bidx))
        uf.union(("k",) + alpha, ("k", "B", bidx))
    if out.anomalies:
        return out
    nbases = nvirt // na
    a_map: dict[tuple[int, ...], tuple[Any, Any]] = {}
    for va in range(nvirt):
        idx, b_ = va % na, va // na
        key = (idx // p.a.n, idx % p.a.n, b_)
        a_map[key] = (uf.find(("m", "A", idx, b_)), uf.find(("k", "A", idx, b_)))
    b_map: dict[tuple[int, ...], tuple[Any, Any]] = {
        (i // p.b.n, i % p.b.n): (uf.find(("k", "B", i)), uf.find(("n", "B", i)))
        for i in range(nb)}
    nd = LANES * p.cd.n
    d_map: dict[tuple[int, ...], tuple[Any, Any]] = {
        (i // p.cd.n, i % p.cd.n): (uf.find(("m", "D", i)), uf.find(("n", "D", i)))
        for i in range(nd)}
    found = Structure(a_map, b_map, d_map)
    _compare(p, found, out, nbases)
    return out


def _assign(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A one-to-one naming of hardware labels by given labels, most agreement first."""
    counts: dict[tuple[Any, Any], int] = {}
    for pr in pairs:
        counts[pr] = counts.get(pr, 0) + 1
    out: dict[Any, Any] = {}
    used: set[Any] = set()
    for (hw, given), _n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        if hw not in out and given not in used:
            out[hw] = given
            used.add(given)
    return out


def _compare(p: cpu.Plan, found: Structure, out: Discovery, nbases: int) -> None:
    """Name the hardware's classes by the given labels they agree with most (the relabeling
    no experiment can see), then report every element whose cell still differs."""
    m_, n_, k_ = p.dims
    given = given_structure(p)
    pairs: dict[str, list[tuple[Any, Any]]] = {"m": [], "n": [], "k": []}
    for key, (gm, gk) in given.a.items():
        hm, hk = found.a[key]
        pairs["m"].append((hm, gm))
        pairs["k"].append((hk, gk))
    for key, (gk, gn) in given.b.items():
        hk, hn = found.b[key]
        pairs["k"].append((hk, gk))
        pairs["n"].append((hn, gn))
    for key, (gm, gn) in given.d.items():
        hm, hn = found.d[key]
        pairs["m"].append((hm, gm))
        pairs["n"].append((hn, gn))
    names = {u: _assign(pr) for u, pr in pairs.items()}
    counts = {u: len({h for h, _g in pr}) for u, pr in pairs.items()}
    for u, want in (("m", m_), ("n", n_), ("k", k_)):
        if counts[u] != want:
            out.anomalies.append(f"the hardware's answers show {counts[u]} distinct {u} "
                                 f"values, not {want}")

    def back(u: str, label: Any) -> int:
        return int(names[u].get(label, -1))

    hw_a = {k: (back("m", v[0]), back("k", v[1])) for k, v in found.a.items()}
    hw_b = {k: (back("k", v[0]), back("n", v[1])) for k, v in found.b.items()}
    hw_d = {k: (back("m", v[0]), back("n", v[1])) for k, v in found.d.items()}
    for op, g, h in (("A", given.a, hw_a), ("B", given.b, hw_b), ("C/D", given.d, hw_d)):
        out.differences[op] = [_difference_line(op, key, g[key], h.get(key), p)
                               for key in sorted(g) if g[key] != h.get(key)]
    d_cells = cpu.cell_records(p.cd, [(t, i, *hw_d[(t, i)]) for (t, i) in sorted(hw_d)])
    b_cells = cpu.cell_records(p.b, [(t, i, *hw_b[(t, i)]) for (t, i) in sorted(hw_b)])
    if p.a.sparse:
        a_cells = _sparse_cells(p, hw_a)
    else:
        a_cells = cpu.cell_records(p.a, [(t, i, *hw_a[(t, i, 0)]) for (t, i, _b) in
                                         sorted(hw_a)])
    v = p.variant
    for op, cells in (("A", a_cells), ("B", b_cells), ("C/D", d_cells)):
        out.maps[op] = cells
        out.hashes[op] = cell_table_hash(v.instruction, v.shape, op, "cells", cells)


def _sparse_cells(p: cpu.Plan, a: dict[tuple[int, ...], tuple[int, int]]) \
        -> list[dict[str, int]]:
    """Sparse A as the export states it: each element's row and the range of whole chunks
    its group covers, a group being a lane's consecutive elements in one row whose chunks
    follow on (the only grouping the hardware's answers can show)."""
    sp = p.sparsity
    assert sp is not None
    cells: list[dict[str, int]] = []
    for t in range(LANES):
        groups: list[list[tuple[int, int, int]]] = []  # (element, row, chunk)
        for i in range(p.a.n):
            row, col = a[(t, i, 0)]
            ch = col // sp.chunk
            g = groups[-1] if groups else None
            if g is None or g[-1][1] != row or ch not in (g[-1][2], g[-1][2] + 1):
                groups.append([(i, row, ch)])
            else:
                g.append((i, row, ch))
        for g in groups:
            lo, hi = min(x[2] for x in g), max(x[2] for x in g)
            for i, row, _ch in g:
                cells.append({"lane": t, "element": i, "row": row, "firstcol": lo * sp.chunk,
                              "lastcol": (hi + 1) * sp.chunk - 1})
    return cells


def _difference_line(op: str, key: tuple[int, ...], want: tuple[int, int],
                     got: tuple[int, int] | None, p: cpu.Plan) -> str:
    names = {"A": ("m", "k"), "B": ("k", "n"), "C/D": ("m", "n")}[op]
    letter = ELEMENT_LETTER[op]
    where = f"lane {key[0]} {letter}{key[1]}"
    if op == "A" and p.a.sparse and p.sparsity is not None:
        where += f" (indices {_bases(p.sparsity)[key[2]]})"

    def show(cell: tuple[int, int] | None) -> str:
        if cell is None:
            return "nothing"
        return ", ".join(f"{u} {x}" if x >= 0 else f"{u} <unnamed>"
                         for u, x in zip(names, cell, strict=True))

    return f"{op}: {where} is at {show(want)} in the layout, but the hardware puts it at " \
           f"{show(got)} (rows, columns and k named as the layouts name them)"


# ---- metadata discovery -------------------------------------------------------------------------


@dataclass
class MetadataDiscovery:
    key: str
    fields: list[dict[str, int]] = field(default_factory=list)
    holders: dict[int, list[int]] = field(default_factory=dict)
    map_hash: str = ""
    missing: list[dict[str, int]] = field(default_factory=list)  # in the layout, not seen
    extra: list[dict[str, int]] = field(default_factory=list)  # seen, not in the layout
    anomalies: list[str] = field(default_factory=list)
    warps: int = 0

    @property
    def agrees(self) -> bool:
        return not (self.missing or self.extra or self.anomalies)


def _probe_nibbles(sp: Sparsity) -> tuple[int, list[int]]:
    if sp.meaningful_fields:
        return TF32_BASE, [TF32_PROBE]
    return _nibble(BASES[0]), [_nibble(x) for x in PROBES]


def discover_metadata(p: cpu.Plan, run: Runner,
                      selectors: Sequence[int] | None = None) -> MetadataDiscovery:
    """Which (row, chunk, slot) each metadata field of each lane controls, per selector."""
    v = p.variant
    sp = p.sparsity
    assert v.sparse and sp is not None and p.a.chunk is not None and p.a.q is not None
    m_, n_, k_ = p.dims
    out = MetadataDiscovery(v.key)
    base_nib, probe_nibs = _probe_nibbles(sp)
    base_word = _word_of(base_nib)
    # configuration 0 is the base; then one (lane, nibble, new nibble) per configuration
    configs = [(-1, -1, -1)] + [(lane, j, nib) for lane in range(LANES) for j in range(8)
                                for nib in probe_nibs]
    meta = np.full((len(configs), LANES), base_word, dtype=np.uint64)
    for c, (lane, j, nib) in enumerate(configs[1:], start=1):
        meta[c, lane] = (base_word & ~(0xF << (4 * j))) | (nib << (4 * j))
    # A: the q-th non-zero of every chunk holds q + 1
    a_codes = numbers.encode(v.a, p.a.q + 1)
    a_words = cpu.pack_elements(cpu.to_container(v.a, p.a.bits, a_codes[None]), p.a.bits)
    offsets = list(range(0, k_, n_))
    one = numbers.encode(v.b, [1])[0]
    b_sel = np.zeros((len(offsets), k_, n_), dtype=np.uint64)
    for r, o in enumerate(offsets):
        b_sel[r, o + np.arange(n_), np.arange(n_)] = one
    b_words = cpu.pack(p.b, v.b, b_sel)  # (runs, 32, WB)
    runs = len(offsets)
    total = len(configs) * runs
    a_all = np.broadcast_to(a_words, (total, LANES, a_words.shape[-1]))
    b_all = np.tile(b_words, (len(configs), 1, 1))
    c_all = np.zeros((total, LANES, v.words("C")), dtype=np.uint32)
    e_all = np.repeat(meta, runs, axis=0)
    inputs = cpu.input_words(p, a_all, b_all, c_all, e_all)
    out.warps = total * len(selectors if selectors is not None else v.selectors)
    chunk_w = sp.chunk
    per_slot = sp.nonzeros / sp.slots
    for s in (selectors if selectors is not None else v.selectors):
        got = np.asarray(run(s, inputs))
        dcodes = cpu.unpack(p.cd, v.d, got)  # (total, M, N)
        dvals = numbers.decode(v.d, dcodes).reshape(len(configs), runs, m_, n_)
        dense = np.concatenate([dvals[:, r] for r in range(runs)], axis=-1)  # (configs, M, K)
        base = dense[0]
        seen: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        holders: set[int] = set()
        for c in range(1, len(configs)):
            lane, j, nib = configs[c]
            changed = np.argwhere(dense[c] != base)
            if not len(changed):
                continue
            holders.add(lane)
            rows = set(changed[:, 0].tolist())
            chunks = set((changed[:, 1] // chunk_w).tolist())
            if len(rows) != 1 or len(chunks) != 1:
                out.anomalies.append(
                    f"selector {s}: lane {lane} nibble {j} -> {nib:04b} changed cells "
                    f"{changed[:4].tolist()}..., not one chunk of one row")
                continue
            r, ch = rows.pop(), chunks.pop()
            span = slice(ch * chunk_w, (ch + 1) * chunk_w)
            before, after = base[r, span], dense[c, r, span]
            if per_slot < 1:  # tf32: one element, both fields move together
                for f_lo, slot in ((4 * j, 0), (4 * j + 2, 1)):
                    _note(out, seen, s, lane, f_lo, (r, ch, slot))
                continue
            moved = sorted({int(x) for x in before[before != 0]
                            if list(np.flatnonzero(after == x)) != list(np.flatnonzero(
                                before == x))})
            slots = {int((x - 1) // per_slot) for x in moved}
            if len(slots) != 1:
                out.anomalies.append(f"selector {s}: lane {lane} nibble {j} -> {nib:04b} moved "
                                     f"values {moved} of row {r} chunk {ch}")
                continue
            low = (nib & 3) != (base_nib & 3)
            slot = slots.pop()
            unit = (nib >> (0 if low else 2)) & 3
            want = cpu.nonzero_positions(sp, np.array([unit, unit]))[:round(per_slot)]
            at = [int(np.flatnonzero(after == x)[0]) if (after == x).any() else -1
                  for x in moved]
            if at != [int(w) for w in want]:
                out.anomalies.append(f"selector {s}: lane {lane} nibble {j} -> {nib:04b}: index "
                                     f"{unit} put values {moved} of row {r} chunk {ch} at "
                                     f"positions {at}, not {[int(w) for w in want]}")
            _note(out, seen, s, lane, 4 * j + (0 if low else 2), (r, ch, slot))
        out.holders[s] = sorted(holders)
        for (sel, lane, lo), (r, ch, slot) in sorted(seen.items()):
            if sel == s:
                out.fields.append({"selector": s, "lane": lane, "bit_lo": lo, "bit_hi": lo + 1,
                                   "row": r, "chunk": ch, "slot": slot})
    out.fields.sort(key=lambda f: (f["selector"], f["lane"], f["bit_lo"]))
    out.map_hash = cell_table_hash(v.instruction, v.shape, "metadata", "fields", out.fields)
    given = {_field_key(f) for f in (p.meta.rows if p.meta else [])
             if selectors is None or f["selector"] in selectors}
    found = {_field_key(f) for f in out.fields}
    out.missing = [dict(x) for x in sorted(given - found)]
    out.extra = [dict(x) for x in sorted(found - given)]
    return out


def _field_key(f: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((k, int(f[k])) for k in ("selector", "lane", "bit_lo", "bit_hi", "row",
                                            "chunk", "slot"))


def _note(out: MetadataDiscovery, seen: dict[tuple[int, int, int], tuple[int, int, int]],
          s: int, lane: int, lo: int, cell: tuple[int, int, int]) -> None:
    key = (s, lane, lo)
    if key in seen and seen[key] != cell:
        out.anomalies.append(f"selector {s}: lane {lane} bits {lo}..{lo + 1}: two probes "
                             f"disagree ({seen[key]} vs {cell})")
        return
    seen[key] = cell


def describe(md: MetadataDiscovery, limit: int = 6) -> list[str]:
    """Human lines for the differences of a metadata discovery."""
    lines = list(md.anomalies[:limit])
    for f in md.missing[:limit]:
        lines.append(f"selector {f['selector']}: lane {f['lane']} bits {f['bit_lo']}..."
                     f"{f['bit_hi']} should index row {f['row']} chunk {f['chunk']} slot "
                     f"{f['slot']}, but the hardware does not read it so")
    for f in md.extra[:limit]:
        lines.append(f"selector {f['selector']}: the hardware reads lane {f['lane']} bits "
                     f"{f['bit_lo']}..{f['bit_hi']} as row {f['row']} chunk {f['chunk']} slot "
                     f"{f['slot']}")
    return lines


__all__ = ["Discovery", "MetadataDiscovery", "discover_dense", "discover_metadata",
           "dense_probes", "Structure", "given_structure", "describe", "Runner"]
