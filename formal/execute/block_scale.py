"""Block-scale factor layouts on a device: one trial per scale factor, every factor checked.

A run returns only D, so each trial marks one factor: A and B are all 1.0, C is 0, every
factor is 1.0 but the marked one, 2.0.  With K cut into blocks of ``blk`` columns,
``D[m, n] = sum_b blk * SF_A[m, b] * SF_B[b, n]`` is K everywhere except where the marked
factor acts: marking (row 3, block 1) of scale_A makes row 3 of D ``K + blk`` and nothing
else.  The trial packs the marked factor where the layout under test says (lane, byte of
``scale-a-data``) for its selector pair; a device that reads it from anywhere else returns a
different D, and the cell that differs names the factor.  For ``.scale_vec::2X`` that is
16 x 2 + 2 x 8 = 48 trials per selector pair.

The maps come as data (``ScaleMap``: per selector pair, each (lane, byte, row, col)), never
from the prover; ``inputs`` are words in the kernel's memory layout (``formal.execute.ptx``:
A, B, C words, then scale-a-data, scale-b-data and the four selectors a byte each), so a
Blackwell device runs the same arrays through ``CupyDevice.launch``.  ``FakeScaleDevice``
computes D from the words with its own "truth" maps, so the harness is tested without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..base.variants import Variant
from . import numbers
from .cpu import pack_elements, to_container

Place = tuple[int, int, int, int]  # (lane, byte, row, col) of the scale matrix


@dataclass(frozen=True)
class ScaleMap:
    """One scale operand's places: per (byte_id, thread_id), every (lane, byte, row, col)."""

    operand: str  # "A" | "B"
    tile: tuple[int, int]
    places: Mapping[tuple[int, int], tuple[Place, ...]]


# the codes of 1.0 and 2.0 in each scale type
UNIT = {"ue8m0": 127, "ue4m3": 0x38}
DOUBLE = {"ue8m0": 128, "ue4m3": 0x40}


def factor_value(stype: str, codes: np.ndarray) -> np.ndarray:
    c = np.asarray(codes, dtype=np.int64)
    if stype == "ue8m0":
        return np.ldexp(1.0, (c - 127).astype(np.int32))
    return np.asarray(numbers.decode("e4m3", c & 0x7F), dtype=np.float64)


def scale_words(m: ScaleMap, sel: tuple[int, int], codes: np.ndarray, unit: int) -> np.ndarray:
    """(T, rows, cols) factor codes -> (T, 32) scale words: each factor in the (lane, byte)
    ``m`` names for ``sel``; every other byte holds ``unit``."""
    t = codes.shape[0]
    out = np.full((t, 32, 4), unit, dtype=np.uint64)
    for lane, byte, r, c in m.places[sel]:
        out[:, lane, byte] = codes[:, r, c]
    return pack_elements(out, 8).reshape(t, 32)


def read_factors(m: ScaleMap, sel: tuple[int, int], words: np.ndarray) -> np.ndarray:
    """(T, 32) scale words -> (T, rows, cols) codes, as a device with map ``m`` reads them
    (a factor no place names reads as -1)."""
    t = words.shape[0]
    out = np.full((t, *m.tile), -1, dtype=np.int64)
    w = np.asarray(words, dtype=np.uint64)
    for lane, byte, r, c in m.places.get(sel, ()):
        out[:, r, c] = ((w[:, lane] >> np.uint64(8 * byte)) & np.uint64(0xFF)).astype(np.int64)
    return out


def _ones(v: Variant, operand: str) -> np.ndarray:
    """The words of a lane whose every ``operand`` element is 1.0."""
    bits = v.element_bits(operand)
    t = v.a if operand == "A" else v.b
    one = to_container(t, bits, numbers.encode(t, np.array([1.0])))[0]
    n = v.words(operand) * 32 // bits
    return pack_elements(np.full((1, n), one, dtype=np.uint64), bits)[0]


@dataclass(frozen=True)
class ScaleTrials:
    """One selector pair's trials: the kernel's input words, and per trial the factor it
    marks (operand, row, col) and the D it must return (T, 16, 8)."""

    selector: tuple[int, int, int, int]  # byte-id-a, thread-id-a, byte-id-b, thread-id-b
    inputs: np.ndarray  # (T, 32, words_in)
    marked: tuple[tuple[str, int, int], ...]
    expected: np.ndarray


def one_hot_trials(v: Variant, a: ScaleMap, b: ScaleMap,
                   selector: tuple[int, int, int, int]) -> ScaleTrials:
    """A trial per factor of scale_A and of scale_B at ``selector``."""
    unit, double = UNIT[v.scale], DOUBLE[v.scale]
    marks = [("A", r, c) for r in range(a.tile[0]) for c in range(a.tile[1])]
    marks += [("B", r, c) for r in range(b.tile[0]) for c in range(b.tile[1])]
    t = len(marks)
    fa = np.full((t, *a.tile), unit, dtype=np.uint64)
    fb = np.full((t, *b.tile), unit, dtype=np.uint64)
    for k, (op, r, c) in enumerate(marks):
        (fa if op == "A" else fb)[k, r, c] = double
    wa, wb, wc = (v.words(o) for o in ("A", "B", "C"))
    win = wa + wb + wc + v.words("S")
    inputs = np.zeros((t, 32, win), dtype=np.uint32)
    inputs[:, :, :wa] = _ones(v, "A")
    inputs[:, :, wa:wa + wb] = _ones(v, "B")
    s0 = wa + wb + wc
    inputs[:, :, s0] = scale_words(a, selector[:2], fa, unit)
    inputs[:, :, s0 + 1] = scale_words(b, selector[2:], fb, unit)
    inputs[:, :, s0 + 2] = sum(x << (8 * j) for j, x in enumerate(selector))
    expected = _product(v, factor_value(v.scale, fa), factor_value(v.scale, fb))
    return ScaleTrials(selector, inputs, tuple(marks), expected)


def _product(v: Variant, sfa: np.ndarray, sfb: np.ndarray) -> np.ndarray:
    """D of all-ones A and B under the factors: (T, M, N)."""
    blk = v.k // sfa.shape[2]
    return blk * np.einsum("tmb,tbn->tmn", sfa, sfb)


class FakeScaleDevice:
    """A device that reads scale factors by its own ``truth`` maps (A and B) and returns D
    in the words of the C/D map ``d_cells`` ((32, E) rows and cols of D per lane, element)."""

    def __init__(self, v: Variant, truth_a: ScaleMap, truth_b: ScaleMap,
                 d_cells: np.ndarray) -> None:
        self.v, self.a, self.b, self.d_cells = v, truth_a, truth_b, d_cells

    def launch(self, inputs: np.ndarray) -> np.ndarray:
        v = self.v
        s0 = v.words("A") + v.words("B") + v.words("C")
        sel = inputs[0, 0, s0 + 2]
        ba, ta, bb, tb = (int(sel >> (8 * j)) & 0xFF for j in range(4))
        fa = read_factors(self.a, (ba, ta), inputs[:, :, s0])
        fb = read_factors(self.b, (bb, tb), inputs[:, :, s0 + 1])
        sfa = np.where(fa < 0, 0.0, factor_value(v.scale, np.maximum(fa, 0)))
        sfb = np.where(fb < 0, 0.0, factor_value(v.scale, np.maximum(fb, 0)))
        d = _product(v, sfa, sfb)
        rows, cols = self.d_cells[..., 0], self.d_cells[..., 1]
        return d[:, rows, cols].astype(np.float32).view(np.uint32)


def misplaced_factors(trials: ScaleTrials, outputs: np.ndarray,
                      d_cells: np.ndarray) -> list[dict[str, object]]:
    """Each marked factor whose trial's D differs from the expected one, with the first D
    cell that differs (lane, element, row, col, got, want)."""
    got = outputs.view(np.float32)
    rows, cols = d_cells[..., 0], d_cells[..., 1]
    want = trials.expected[:, rows, cols]
    bad = []
    for k, mark in enumerate(trials.marked):
        diff = np.argwhere(got[k] != want[k])
        if len(diff):
            lane, i = (int(x) for x in diff[0])
            bad.append({"selector": list(trials.selector), "factor": {"operand": mark[0],
                        "row": mark[1], "col": mark[2]}, "lane": lane, "element": i,
                        "d": [int(rows[lane, i]), int(cols[lane, i])],
                        "got": float(got[k, lane, i]), "want": float(want[k, lane, i])})
    return bad


def selector_pairs(a: ScaleMap, b: ScaleMap) -> list[tuple[int, int, int, int]]:
    """Every legal (byte-id-a, thread-id-a, byte-id-b, thread-id-b): each A pair with each
    B pair would be |A| x |B| runs; A's pairs beside B's in turn cover both (the first of
    the other's for the rest)."""
    pa, pb = sorted(a.places), sorted(b.places)
    n = max(len(pa), len(pb))
    return [(*pa[k % len(pa)], *pb[k % len(pb)]) for k in range(n)]


def check_scale_layouts(v: Variant, a: ScaleMap, b: ScaleMap, d_cells: np.ndarray,
                        device: FakeScaleDevice | None = None,
                        ) -> tuple[int, list[dict[str, object]]]:
    """(factors checked, faults): every factor of both scale matrices at every legal
    selector value, on ``device`` (default: a fake whose truth is the maps themselves)."""
    dev = device or FakeScaleDevice(v, a, b, d_cells)
    checked, faults = 0, []
    for sel in selector_pairs(a, b):
        trials = one_hot_trials(v, a, b, sel)
        faults += misplaced_factors(trials, dev.launch(trials.inputs), d_cells)
        checked += len(trials.marked)
    return checked, faults


__all__: Sequence[str] = ("FakeScaleDevice", "ScaleMap", "check_scale_layouts",
                          "one_hot_trials")
