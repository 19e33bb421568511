"""Block-scale factor layouts on a device: one trial per scale factor, every factor checked.

A run returns only D, so each trial marks one factor: A and B are all 1.0, C is 0, every
factor is 1.0 but the marked one, 2.0.  With K cut into blocks of ``blk`` columns,
``D[m, n] = sum_b blk * SF_A[m, b] * SF_B[b, n]`` is K everywhere except where the marked
factor acts: marking (row 3, block 1) of scale_A makes row 3 of D ``K + blk`` and nothing
else.  The trial packs the marked factor where the layout under test says (lane, byte of
``scale-a-data``) for its selector pair; a device that reads it from anywhere else returns a
different D, and the cell that differs names the factor.  For ``.scale_vec::2X`` that is
16 x 2 + 2 x 8 = 48 trials per selector pair.

With all-ones A and B a factor read for another K block *of the same row* (A) or column (B)
gives the same D: marking (row 3, block 0) or (row 3, block 1) both add ``blk`` to row 3.  So
the family's runs (given A's and B's maps) put ``BLOCK_VALUES`` v_j in K block j of A and B:
block j then adds ``blk * v_j^2`` (1, 4, 1/4, 16 apart), and the block shows in D too.

The maps come as data (``ScaleMap``: per selector pair, each (lane, byte, row, col)), never
from the prover; ``inputs`` are words in the kernel's memory layout (``formal.execute.ptx``:
A, B, C words, then scale-a-data, scale-b-data and the four selectors a byte each), so a
Blackwell device runs the same arrays through ``CupyDevice.launch``.  ``FakeScaleDevice``
computes D from the words with its own "truth" maps, so the harness is tested without one.

**The family of ``ptxlayout gpu``** (``formal.execute.supervisor.FAMILIES``, row
``block-scale``): one task per legal form (``BLOCK_SCALE_VARIANTS``).  On a device that runs
sm_120a it checks every factor at every legal selector pair (``check_scale_layouts``); on any
other (the lent sm_90) the form is assembled for sm_120a with ptxas (``compiled-only``: not
run, and the log says the forms need sm_120a).  The maps are records of the layouts JSON, one
per scale operand of a form::

    {"instruction": "mma.block_scale", "kind": "mxf4nvf4", "shape": "m16n8k64",
     "scale_vec": 4, "scale_type": "ue4m3", "operand": "scale_A", "tile": [16, 4],
     "map_hash": "...", "places": [[byte_id, thread_id, lane, byte, row, col], ...]}

(``formal.writers.export_scale`` writes them under the export's ``scale`` list; a run's
evidence names each scale map by its ``map_hash``, ``layout_hashes["scale_A"]``), and D's
cells are the C/D map of the form's shape (``cpu.plan``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..base.matrix_variants import BLOCK_SCALE_VARIANTS
from ..base.variants import Variant, runs_on, selects
from . import cpu, numbers
from .cpu import pack_elements, to_container
from .devices import DeviceError, FakeDevice
from .runs import Job, Outcome, Run, Task, short_text

Place = tuple[int, int, int, int]  # (lane, byte, row, col) of the scale matrix


@dataclass(frozen=True)
class ScaleMap:
    """One scale operand's places: per (byte_id, thread_id), every (lane, byte, row, col)."""

    operand: str  # "A" | "B"
    tile: tuple[int, int]
    places: Mapping[tuple[int, int], tuple[Place, ...]]
    map_hash: str = ""  # the record's (``writers.export_scale``), which runs' evidence names


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


# A's and B's elements of K block j (given their maps): v_j, so block j adds v_j^2 (1, 4, 1/4,
# 16) times its factors to D -- a factor read for another block of the same row (A) or column
# (B) changes D too.  Without the maps every element is 1.0 and only rows / columns show.
BLOCK_VALUES = (1.0, 2.0, 0.5, 4.0)


def block_weights(blocks: int, by_block: bool) -> np.ndarray:
    """Each K block's v_j^2 (all 1 without ``by_block``)."""
    if not by_block:
        return np.ones(blocks)
    return np.asarray(BLOCK_VALUES[:blocks]) ** 2


def _block_words(v: Variant, m: Any, operand: str, blocks: int) -> np.ndarray:
    """The (32, W) words of A (M x K) or B (K x N) by their map ``m``: v_j in K block j."""
    t = v.a if operand == "A" else v.b
    rows, cols = m.tile
    k_len = cols if operand == "A" else rows
    vals = np.asarray(BLOCK_VALUES)[np.arange(k_len) // (k_len // blocks)]
    mat = np.broadcast_to(vals[None, :] if operand == "A" else vals[:, None], (rows, cols))
    codes = np.asarray(numbers.encode(t, np.ascontiguousarray(mat).ravel())).reshape(rows, cols)
    return cpu.pack(m, t, codes[None])[0]


def one_hot_trials(v: Variant, a: ScaleMap, b: ScaleMap,
                   selector: tuple[int, int, int, int], p: Any = None) -> ScaleTrials:
    """A trial per factor of scale_A and of scale_B at ``selector`` (``p``, a ``cpu.Plan``:
    A and B take ``BLOCK_VALUES`` by K block through its maps)."""
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
    blocks = a.tile[1]
    inputs[:, :, :wa] = _ones(v, "A") if p is None else _block_words(v, p.a, "A", blocks)
    inputs[:, :, wa:wa + wb] = _ones(v, "B") if p is None else \
        _block_words(v, p.b, "B", blocks)
    s0 = wa + wb + wc
    inputs[:, :, s0] = scale_words(a, selector[:2], fa, unit)
    inputs[:, :, s0 + 1] = scale_words(b, selector[2:], fb, unit)
    inputs[:, :, s0 + 2] = sum(x << (8 * j) for j, x in enumerate(selector))
    expected = _product(v, factor_value(v.scale, fa), factor_value(v.scale, fb),
                        block_weights(blocks, p is not None))
    return ScaleTrials(selector, inputs, tuple(marks), expected)


def _product(v: Variant, sfa: np.ndarray, sfb: np.ndarray,
             weights: np.ndarray | None = None) -> np.ndarray:
    """D of A and B whose K block j holds v_j (``weights``: v_j^2; all ones without) under
    the factors: (T, M, N)."""
    blk = v.k // sfa.shape[2]
    w = np.ones(sfa.shape[2]) if weights is None else weights
    return blk * np.einsum("tmb,b,tbn->tmn", sfa, w, sfb)


class FakeScaleDevice:
    """A device that reads scale factors by its own ``truth`` maps (A and B) and returns D
    in the words of the C/D map ``d_cells`` ((32, E) rows and cols of D per lane, element)."""

    def __init__(self, v: Variant, truth_a: ScaleMap, truth_b: ScaleMap,
                 d_cells: np.ndarray, weights: np.ndarray | None = None) -> None:
        self.v, self.a, self.b, self.d_cells = v, truth_a, truth_b, d_cells
        self.weights = weights  # A and B by K block (``block_weights``): what it multiplies

    def launch(self, inputs: np.ndarray) -> np.ndarray:
        v = self.v
        s0 = v.words("A") + v.words("B") + v.words("C")
        sel = inputs[0, 0, s0 + 2]
        ba, ta, bb, tb = (int(sel >> (8 * j)) & 0xFF for j in range(4))
        fa = read_factors(self.a, (ba, ta), inputs[:, :, s0])
        fb = read_factors(self.b, (bb, tb), inputs[:, :, s0 + 1])
        sfa = np.where(fa < 0, 0.0, factor_value(v.scale, np.maximum(fa, 0)))
        sfb = np.where(fb < 0, 0.0, factor_value(v.scale, np.maximum(fb, 0)))
        d = _product(v, sfa, sfb, self.weights)
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


class Launcher(Protocol):
    """What runs a form's trials: (T, 32, words in) words -> (T, 32, words out)."""

    def launch(self, inputs: np.ndarray) -> np.ndarray: ...


def check_scale_layouts(v: Variant, a: ScaleMap, b: ScaleMap, d_cells: np.ndarray,
                        device: Launcher | None = None, p: Any = None,
                        ) -> tuple[int, list[dict[str, object]]]:
    """(factors checked, faults): every factor of both scale matrices at every legal
    selector value, on ``device`` (default: a fake whose truth is the maps themselves)."""
    dev = device or FakeScaleDevice(v, a, b, d_cells, block_weights(a.tile[1], p is not None))
    checked, faults = 0, []
    for sel in selector_pairs(a, b):
        trials = one_hot_trials(v, a, b, sel, p)
        faults += misplaced_factors(trials, dev.launch(trials.inputs), d_cells)
        checked += len(trials.marked)
    return checked, faults


# ---- the family of ptxlayout gpu ----------------------------------------------------------------

SCALE_INSTRUCTION = "mma.block_scale"


def scale_maps_in_records(v: Variant, records: Sequence[Mapping[str, Any]]) \
        -> tuple[ScaleMap, ScaleMap]:
    """The scale_A and scale_B maps of form ``v`` from the layouts JSON's records;
    ``cpu.LayoutError`` names what is missing."""
    found: dict[str, ScaleMap] = {}
    for r in records:
        if r.get("instruction") != SCALE_INSTRUCTION or r.get("shape") != v.shape \
                or r.get("kind") != v.kind or int(r.get("scale_vec") or 0) != v.scale_vec \
                or r.get("scale_type") != v.scale:
            continue
        op = str(r.get("operand", "")).removeprefix("scale_")
        places: dict[tuple[int, int], list[Place]] = {}
        for bid, tid, lane, byte, row, col in r.get("places") or ():
            places.setdefault((int(bid), int(tid)), []).append(
                (int(lane), int(byte), int(row), int(col)))
        tile = tuple(int(x) for x in r.get("tile") or (0, 0))
        found[op] = ScaleMap(op, (tile[0], tile[1]),
                             {k: tuple(p) for k, p in places.items()},
                             str(r.get("map_hash") or ""))
    missing = [op for op in ("A", "B") if op not in found]
    if missing:
        raise cpu.LayoutError(f"the layouts JSON has no {SCALE_INSTRUCTION} map of scale_"
                              f"{' or scale_'.join(missing)} for {v.key}")
    return found["A"], found["B"]


def scale_tasks(job: Job, sm: int) -> list[Task]:
    """The block-scaled forms ``job.only`` picks: checked factor by factor on an sm_120a
    device, assembled for sm_120a (``compile``) on any other."""
    return [Task(v.key, "check" if runs_on(v, sm) else "compile")
            for v in BLOCK_SCALE_VARIANTS if selects(job.only, v.key)]


class _DeviceLauncher:
    """A real device's kernel of one form, launched with the trials' words."""

    def __init__(self, device: Any, v: Variant) -> None:
        from .ptx import module
        self.device, self.module = device, module(v)
        self.handle = device.load(self.module)

    def launch(self, inputs: np.ndarray) -> np.ndarray:
        return np.asarray(self.device.launch(self.handle, self.module.entry(None), inputs,
                                             self.module.words_out))


def run_scale(device: Any, job: Job, task: Task, memo: dict[str, Any]) -> Outcome:
    """One block-scaled form: assembled for sm_120a where the device cannot run it, else
    every scale factor of scale_A and scale_B checked at every legal selector pair."""
    v = next(x for x in BLOCK_SCALE_VARIANTS if x.key == task.key)
    sm = int(getattr(device, "sm", 0) or 0)
    if task.mode == "compile":
        return Outcome([_assembled(v, sm, job.use_ptxas)])
    try:
        a, b = scale_maps_in_records(v, job.records)
        p = cpu.plan(v, job.records)
    except cpu.LayoutError as exc:
        return Outcome([Run(v, None, "not-executed", short_text(str(exc)))])
    d_cells = np.stack([p.cd.row, p.cd.col], axis=-1)
    hashes = {**p.hashes, **{f"scale_{m.operand}": m.map_hash for m in (a, b) if m.map_hash}}
    try:
        dev: Launcher = (FakeScaleDevice(v, *scale_maps_in_records(v, device.truth), d_cells,
                                         block_weights(a.tile[1], True))
                         if isinstance(device, FakeDevice) else _DeviceLauncher(device, v))
        checked, faults = check_scale_layouts(v, a, b, d_cells, dev, p)
    except (DeviceError, cpu.LayoutError) as exc:
        return Outcome([Run(v, None, "error", short_text(str(exc)), layout_hashes=hashes)])
    if faults:
        f = faults[0]
        return Outcome([Run(v, None, "mismatch", short_text(
            f"{len(faults)} of {checked} factors misplaced; first: {f}"), layout_hashes=hashes)])
    return Outcome([Run(v, None, "match", f"{checked} scale factors, each at every legal "
                        "selector pair, in the (lane, byte) its map says",
                        layout_hashes=hashes)])


def _assembled(v: Variant, sm: int, use_ptxas: bool) -> Run:
    from .ptx import assemble, module, ptxas_path, ptxas_too_old
    why = f"block-scaled mma.sync needs {v.target}; the device is " + \
        (f"sm_{sm}" if sm else "absent")
    if not use_ptxas:
        return Run(v, None, "not-executed", f"{why}; not assembled (--no-ptxas)")
    if ptxas_path() is None:
        return Run(v, None, "not-executed", f"{why}; no ptxas here")
    if (too_old := ptxas_too_old(v, v.target)) is not None:  # not the form's fault
        return Run(v, None, "not-executed", f"{why}; not assembled: {too_old}")
    ok, msg = assemble(module(v).text, v.target)
    return Run(v, None, "compiled-only" if ok else "error",
               f"{why}: assembled with ptxas, not run" if ok
               else f"{why}; ptxas failed: {short_text(msg, 300)}")


__all__: Sequence[str] = ("FakeScaleDevice", "ScaleMap", "check_scale_layouts",
                          "one_hot_trials", "run_scale", "scale_maps_in_records", "scale_tasks")
