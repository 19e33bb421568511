"""The tcgen05.mma data-path layouts: where the accumulator D lies in tensor memory, as maps.

A layout is a few *blocks*, each a rectangle of D laid out in order in one 32-lane
sub-partition of a CTA's tensor memory (TMEM).  A worked example, Layout E (M = 64, .ws)
at N = 8, two of its four blocks:

    CTA  warp  TMEM lanes  TMEM columns  rows of D  columns of D
    0    0     0-31        0 to N/2-1    0-31       0 to N/2-1      lane 5, column 2 -> D[5][2]
    0    2     64-95       0 to N/2-1    0-31       N/2 to N-1      lane 69, column 2 -> D[5][6]

so the map is (cta, lane, column) -> (row, column of D), affine inside each block: lane
``lo + k`` holds row ``row_lo + k``, column ``c + k`` column ``dcol_lo + k``.  A bound
``N/2-1`` is (1/2, -1): a multiple of the mma's N plus a constant (``Bound``), so one table
states the layout for every N the mma takes.  ``datapath_cells(dp, n)`` enumerates the map at one N
(numpy arrays, one entry per TMEM cell a block holds); formal/prove/datapath.py proves it a
bijection onto D and each block inside the lanes its warp reaches.

The summary table of the section (M, cta_group, sparsity, .ws, the organization "R x C", the
layout's letter, the lane alignment) is read as ``SummaryRow``; ``check_summary`` checks each
row against the arithmetic of tensor memory (R x C groups are the four sub-partitions) and
the variant table (``base.matrix_variants.DATAPATH_ROWS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..base.matrix_variants import DATAPATH_ROWS, TMEM_LANE_COUNT, TMEM_SUBPARTITION
from ..base.source import Finding, SourceText, error
from ..parse.tmem import ParsedTmem

Bound = tuple[Fraction, int]  # (multiple of N, constant)
SUBPARTITIONS = TMEM_LANE_COUNT // TMEM_SUBPARTITION  # 4


def at(b: Bound, n: int) -> int:
    """A bound's value at N = ``n`` (``n`` a multiple of its denominator): ``int`` of the
    multiple, truncated toward zero as ``int(Fraction)`` is, in integers."""
    q = b[0].numerator * n
    d = b[0].denominator  # a Fraction's denominator is positive
    return (q // d if q >= 0 else -(-q // d)) + b[1]


@dataclass(frozen=True)
class TmemBlock:
    cta: int
    warp: int
    lanes: tuple[int, int]
    tcols: tuple[Bound, Bound]
    rows: tuple[int, int]
    dcols: tuple[Bound, Bound]
    src: SourceText

    def tcol_range(self, n: int) -> tuple[int, int]:
        return at(self.tcols[0], n), at(self.tcols[1], n)

    def dcol_range(self, n: int) -> tuple[int, int]:
        return at(self.dcols[0], n), at(self.dcols[1], n)


@dataclass(frozen=True)
class SummaryRow:
    m: int
    cta_group: int
    sparsity: str
    ws: str
    organization: tuple[int, int]
    half: bool
    layout: str
    alignments: tuple[int, ...]
    src: SourceText


@dataclass(frozen=True)
class DataPath:
    """One data-path layout as a document states it (its blocks), with its variant row."""

    layout: str  # A..G
    m: int
    title: SourceText
    blocks: tuple[TmemBlock, ...]
    cta_group: int
    ns: tuple[int, ...]  # the N values of the mma (DATAPATH_ROWS)

    @property
    def id(self) -> str:
        return f"tcgen05.datapath.{self.layout}"

    def organization(self, n: int = 256) -> tuple[int, int]:
        """(row groups, column groups) of CTA 0's blocks, as the summary table counts them."""
        mine = [b for b in self.blocks if b.cta == 0]
        return len({b.rows for b in mine}), len({b.dcol_range(n) for b in mine})

    def half(self) -> bool:
        return all(b.lanes[1] - b.lanes[0] + 1 == TMEM_SUBPARTITION // 2 for b in self.blocks)


def summary_rows(parsed: Sequence[ParsedTmem]) -> list[SummaryRow]:
    return [SummaryRow(*row) for p in parsed for f in p.facts_of("datapath_table")
            for row in f.get("rows", ())]


def datapaths(parsed: Sequence[ParsedTmem]) -> list[DataPath]:
    """Every layout section of a document that states its blocks."""
    rows = {r[0]: r for r in DATAPATH_ROWS}
    out = []
    for p in parsed:
        if p.heading is None or p.heading.kind != "layout_heading":
            continue
        letter = str(p.heading.get("layout"))
        blocks = tuple(TmemBlock(*row) for f in p.facts_of("block_table") for row in f.get("rows"))
        if not blocks or letter not in rows:
            continue
        _l, _m, cta, _s, _w, ns = rows[letter]
        out.append(DataPath(letter, int(p.heading.get("m")), p.title, blocks, cta, ns))
    return out


_EXACT = 1 << 31  # a bound's numbers up to this: its value at any such N fits int64


def datapath_cells(dp: DataPath, n: int, align: int = 0) -> dict[str, np.ndarray]:
    """The map at N = ``n``, one entry per TMEM cell a block holds: ``block`` (its index),
    ``cta``, ``lane`` (shifted by the lane alignment ``align``), ``tcol``, ``row``, ``dcol``."""
    runs = datapath_runs(dp, (n,), align)
    run, column = run_cells(runs)
    return {k: runs[k][run] + (column if k in ("tcol", "dcol") else 0)
            for k in ("block", "cta", "lane", "tcol", "row", "dcol")}


def datapath_runs(dp: DataPath, ns: Sequence[int], align: int = 0) -> dict[str, np.ndarray]:
    """The map at each N of ``ns`` as *runs*: one a (N, block, lane), N after N, each block's
    lanes in order; a run is ``count`` cells, the block's TMEM columns from ``tcol`` on
    holding D's columns from ``dcol`` on, all in TMEM lane ``lane`` (shifted by ``align``)
    and row ``row`` of D; ``n`` is the index in ``ns`` of the run's N.  Layout E at N = 8,
    its first block (lanes 0-31, TMEM columns 0-3, D[0-31][0-3]): 32 runs of 4 cells, run 5
    lane 5, row 5, columns 0-3 of both.  ``run_cells`` lays the runs out cell by cell."""
    nb = len(dp.blocks)
    nv = np.asarray(ns, dtype=np.int64).reshape(-1, 1)  # (N, 1) against (1, block)

    def value(k: int) -> np.ndarray:  # bound k (tcol lo, hi, dcol lo) of every block, each N
        bounds = [(b.tcols[0], b.tcols[1], b.dcols[0])[k] for b in dp.blocks]
        if max(abs(x) for f, c in bounds for x in (f.numerator, f.denominator, c, *ns)) \
                > _EXACT:  # past what int64 multiplies exactly: in Python's integers
            return np.array([[at(bd, n) for bd in bounds] for n in ns], dtype=np.int64)
        q = np.array([f.numerator for f, _c in bounds], dtype=np.int64) * nv
        d = np.array([f.denominator for f, _c in bounds], dtype=np.int64)
        c = np.array([c for _f, c in bounds], dtype=np.int64)
        return np.where(q >= 0, q // d, -(-q // d)) + c  # ``at``: truncated toward zero

    if nb:
        t0, t1, d0 = value(0), value(1), value(2)
    else:
        t0 = t1 = d0 = np.zeros((len(nv), 0), dtype=np.int64)
    lane0 = np.array([b.lanes[0] for b in dp.blocks], dtype=np.int64)
    lanes = np.maximum(0, np.array([b.lanes[1] for b in dp.blocks], dtype=np.int64) - lane0 + 1)
    per = np.broadcast_to(lanes, t0.shape).reshape(-1)  # runs of each (N, block)
    seg = np.repeat(np.arange(len(per)), per)  # the (N, block) of each run
    li = np.arange(len(seg)) - (np.cumsum(per) - per)[seg]
    block = seg % nb if nb else seg
    return {"n": seg // nb if nb else seg, "block": block,
            "cta": np.array([b.cta for b in dp.blocks], dtype=np.int64)[block],
            "lane": lane0[block] + align + li,
            "row": np.array([b.rows[0] for b in dp.blocks], dtype=np.int64)[block] + li,
            "tcol": t0.reshape(-1)[seg], "dcol": d0.reshape(-1)[seg],
            "count": np.maximum(0, t1 - t0 + 1).reshape(-1)[seg]}


def run_cells(runs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the run of each cell, its column within the run), the runs' cells one after another:
    cell j of a run lies in TMEM column ``tcol + j`` and holds column ``dcol + j`` of D."""
    count = runs["count"]
    run = np.repeat(np.arange(len(count)), count)
    return run, np.arange(len(run)) - (np.cumsum(count) - count)[run]


def check_summary(rows: Sequence[SummaryRow]) -> list[Finding]:
    """Each summary row against tensor memory's four sub-partitions and the variant table."""
    want = {r[0]: r for r in DATAPATH_ROWS}
    out: list[Finding] = []
    for r in rows:
        g, c = r.organization
        if g * c != SUBPARTITIONS:
            out.append(error(
                "datapath", r.src,
                f"Layout {r.layout}: the organization {g}x{c} is {g * c} groups, but tensor "
                f"memory has {SUBPARTITIONS} sub-partitions of {TMEM_SUBPARTITION} lanes "
                f"({TMEM_LANE_COUNT} lanes) for them",
                counterexample={"layout": r.layout, "organization": f"{g}x{c}",
                                "groups": g * c, "subpartitions": SUBPARTITIONS}))
        w = want.get(r.layout)
        stated = (r.m, r.cta_group, r.sparsity, r.ws)
        if w is not None and stated != w[1:5]:
            out.append(error("datapath", r.src, f"Layout {r.layout} is stated for M = {r.m}, "
                             f"cta_group::{r.cta_group}, {r.sparsity} A, .ws {r.ws}; the "
                             f"variant table has M = {w[1]}, cta_group::{w[2]}, {w[3]} A, "
                             f".ws {w[4]}", counterexample={"layout": r.layout,
                                                            "stated": list(stated),
                                                            "variant": list(w[1:5])}))
        aligned = (0, TMEM_SUBPARTITION // 2) if r.half else (0,)
        if tuple(sorted(r.alignments)) != aligned:
            out.append(error("datapath", r.src, f"Layout {r.layout} uses "
                             f"{'half' if r.half else 'all'} of each sub-partition's lanes, "
                             f"so it may start at lane {' or '.join(map(str, aligned))} of "
                             f"one; the table gives {' or '.join(map(str, r.alignments))}",
                             counterexample={"layout": r.layout,
                                             "alignments": list(r.alignments)}))
    return out


def block_place(b: TmemBlock) -> dict[str, Any]:
    """A block as a counterexample shows it (the line it is stated on)."""
    return {"cta": b.cta, "warp": b.warp, "lanes": list(b.lanes), "rows": list(b.rows),
            "line": b.src.span(0).line}


# ---- packing of elements (9.7.16.10.4) -----------------------------------------------------
# A format packs ``count`` elements of ``bits`` bits into a unit of ``unit`` bits (a TMEM
# word, a byte, a 16-byte smem row), element k from bit ``stride * k + offset``, each owning a
# slot of ``slot`` bits (its container, or its own width packed tight).  .kind::mxf8f6f4's
# .e2m1 in TMEM: slot 8, unit 32, 4 a word, element k at bit 8k + 2 (bits 8k+2..8k+5).


@dataclass(frozen=True)
class PackFormat:
    matrices: tuple[str, ...]
    kinds: tuple[str, ...]
    memory: str  # tensor | shared
    type: str
    bits: int
    slot: int
    unit: int
    count: int
    first: tuple[int, int]  # (stride, offset): element k's first bit
    src: SourceText
    title: SourceText

    @property
    def id(self) -> str:
        return f"tcgen05.packing.{self.memory}.{'-'.join(self.kinds) or 'D'}.{self.type}"

    def first_bit(self, k: int) -> int:
        return self.first[0] * k + self.first[1]

    @property
    def padding(self) -> int:
        return self.unit - self.count * self.slot

    def holds(self, matrices: Sequence[str], kinds: Sequence[str], memory: str) -> bool:
        return (tuple(matrices), tuple(kinds), memory) == (self.matrices, self.kinds,
                                                          self.memory)


def pack_formats(parsed: Sequence[ParsedTmem]) -> list[PackFormat]:
    out = []
    for p in parsed:
        if p.heading is None or p.heading.kind != "packing_heading":
            continue
        h = p.heading
        for f in p.facts_of("packing_table"):
            for t, bits, slot, unit, count, first, src in f.get("rows", ()):
                out.append(PackFormat(h.get("matrices"), h.get("kinds"), h.get("memory"), t,
                                      bits, slot, unit, count, first, src, p.title))
    return out


def check_pack_statements(parsed: Sequence[ParsedTmem],
                          formats: Sequence[PackFormat]) -> tuple[int, list[Finding]]:
    """Each sentence of a packing section that states a number (a D element alone in its
    word; n elements a word; n elements a container, with no padding) against the formats
    (the catalog's) of the same matrices, kinds and memory: (statements checked, findings)."""
    checked, out = 0, []
    for p in parsed:
        if p.heading is None or p.heading.kind != "packing_heading":
            continue
        h = p.heading
        mine = [f for f in formats if f.holds(h.get("matrices"), h.get("kinds"), h.get("memory"))]
        for s in p.facts_of("word_single", "per_word", "per_container"):
            bits = int(s.get("bits"))
            rows = [f for f in mine if f.bits == bits]
            checked += 1
            if not rows:
                out.append(error("packing", s.src, f"the section states {bits}-bit elements; "
                                 "no packing format of these matrices, kinds and memory has "
                                 "them", counterexample={"bits": bits}))
                continue
            bad = [(f, _stated_bad(s.kind, s, f)) for f in rows]
            bad = [(f, why) for f, why in bad if why]
            if bad:  # one sentence, one error, however many formats it contradicts
                out.append(error("packing", s.src, f"{bad[0][0].id}: {bad[0][1]}"
                                 + (f" (and {len(bad) - 1} more formats)" if len(bad) > 1
                                    else ""),
                                 counterexample={"formats": [f.id for f, _w in bad],
                                                 "lines": [f.src.span(0).line for f, _w in bad]}))
    return checked, out


def _stated_bad(kind: str, s: Any, f: PackFormat) -> str:
    if kind == "word_single":
        low = int(s.get("low"))
        if (f.count, f.unit, f.first_bit(0), low) != (1, 32, 0, f.bits):
            return (f"the text puts one {f.bits}-bit element in the low {low} bits of a 32-bit "
                    f"word; the format packs {f.count} in {f.unit} bits from bit "
                    f"{f.first_bit(0)}")
    elif kind == "per_word":
        if (f.count, f.unit) != (int(s.get("count")), int(s.get("word"))):
            return (f"the text packs {s.get('count')} elements in a {s.get('word')}-bit word; "
                    f"the format {f.count} in {f.unit} bits")
    elif kind == "per_container":
        n, c = int(s.get("count")), int(s.get("container"))
        if n * f.slot != c or (s.get("no_padding") and f.padding != 0):
            return (f"the text packs {n} elements in a {c}-bit container"
                    f"{' with no padding' if s.get('no_padding') else ''}; the format gives "
                    f"each a {f.slot}-bit slot and {f.padding} bits of padding a unit")
    return ""
