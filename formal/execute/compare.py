"""A device's D against the exact product: every differing cell, and what feeds it.

``compare(plan, got, want)`` lists each D cell whose bits differ (trial, row, col, both values);
``trace`` names the (lane, element) pairs of A, B and C that feed such a cell, e.g. "D[3][5]: got
2.5, want 3.0; row 3 of A is a0..a1 of lanes 12..15, column 5 of B is b0..b1 of lane 22", which
is where a wrong layout shows itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..base.variants import (
    SPARSITY,
    sparsity_of,
)
from .cpu import (
    LANES,
    LayoutError,
    MetadataMap,
    OperandMap,
    Plan,
    Trial,
    block_mask,
    cell_records,
    compress,
    decompress,
    emulate,
    make_trials,
    metadata_map,
    metadata_words,
    operand_map,
    pack,
    pack_elements,
    plan,
    plans,
    read_units,
    reference,
    unpack,
    unpack_elements,
)
from .numbers import FLOATS, INTEGERS, U64, NotExact, code_width, decode, encode

# ---- comparing and tracing --------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    trial: int
    lane: int
    element: int
    row: int
    col: int
    got: float
    want: float


def compare(p: Plan, got: np.ndarray, want: np.ndarray) -> list[Difference]:
    """Every D element whose bits differ (a float zero compares equal to minus zero)."""
    v = p.variant
    g = unpack_elements(np.asarray(got, dtype=np.uint32), p.cd.bits, p.cd.n)
    w = unpack_elements(np.asarray(want, dtype=np.uint32), p.cd.bits, p.cd.n)
    if v.d in FLOATS:
        zero_mask = U64((1 << (code_width(v.d) - 1)) - 1)
        g = np.where((g & zero_mask) == 0, U64(0), g)
        w = np.where((w & zero_mask) == 0, U64(0), w)
    bad = np.nonzero(g != w)
    gv, wv = decode(v.d, g), decode(v.d, w)
    out = []
    for t, lane, i in zip(*bad, strict=True):
        out.append(Difference(int(t), int(lane), int(i), int(p.cd.row[lane, i]),
                              int(p.cd.col[lane, i]), float(gv[t, lane, i]),
                              float(wv[t, lane, i])))
    return out


def _lanes(pairs: Iterable[tuple[int, int]], letter: str) -> str:
    by_lane: dict[int, list[int]] = {}
    for t, i in pairs:
        by_lane.setdefault(t, []).append(i)
    return ", ".join(f"lane {t} " + "/".join(f"{letter}{i}" for i in sorted(es))
                     for t, es in sorted(by_lane.items()))


def trace(p: Plan, diff: Difference, trial: Trial | None = None) -> str:
    """One differing D cell and the (lane, element) pairs of A, B and C that feed it."""
    r, c = diff.row, diff.col
    held_a = p.a.held if p.a.held is not None else np.ones_like(p.a.row, dtype=bool)
    held_b = p.b.held if p.b.held is not None else np.ones_like(p.b.row, dtype=bool)
    a_pairs = [(t, i) for t in range(LANES) for i in range(p.a.n)
               if p.a.row[t, i] == r and held_a[t, i]]
    b_pairs = [(t, i) for t in range(LANES) for i in range(p.b.n)
               if p.b.col[t, i] == c and held_b[t, i]]
    c_pairs = [(t, i) for t in range(LANES) for i in range(p.cd.n)
               if p.cd.row[t, i] == r and p.cd.col[t, i] == c]
    g, lr, lc = p.cd.local(r, c)
    of = f" of product {g}" if p.groups > 1 else ""
    msg = (f"{p.cd.cell_name('D', r, c)} (lane {diff.lane} d{diff.element}) is "
           f"{_fmt(diff.got)}, expected {_fmt(diff.want)}; it reads C[{lr}][{lc}]{of} from "
           f"{_lanes(c_pairs, 'c')}, A row {lr}{of} from {_lanes(a_pairs, 'a')}, B column "
           f"{lc}{of} from {_lanes(b_pairs, 'b')}")
    if trial is not None:
        hint = _looks_like(p, diff, trial)
        if hint:
            msg += f"; the value is what D{hint} should hold"
    return msg


def _looks_like(p: Plan, diff: Difference, trial: Trial) -> str:
    want = decode(p.variant.d, reference(p.variant, trial.a, trial.b, trial.c))[diff.trial]
    mask = block_mask(p.cd)
    hits = np.argwhere((want == diff.got) & (True if mask is None else mask))
    if 0 < len(hits) <= 2:
        return " or ".join(p.cd.cell_name("", int(a), int(b)) for a, b in hits)
    return ""


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


__all__ = ["FLOATS", "INTEGERS", "encode", "decode", "NotExact", "OperandMap", "MetadataMap",
           "operand_map", "metadata_map", "pack", "unpack", "pack_elements", "unpack_elements",
           "compress", "decompress", "metadata_words", "read_units", "reference", "Plan",
           "plan", "plans", "make_trials", "emulate", "compare", "trace",
           "LayoutError", "SPARSITY", "sparsity_of", "cell_records", "block_mask"]
