"""tcgen05.mma data paths on a device: where D lands in tensor memory, checked cell by cell.

The kernel (``formal.execute.ptx_tcgen05.datapath_map_kernel``) runs the mma and has each warp
read its block back with ``tcgen05.ld.32x32b`` at the catalog's address, storing the words as
tensor memory is laid out: an image ``(CTAs, 128 lanes, columns)``.  The layout (an export
record, ``formal.writers.export_datapath``) says which cell of the image holds which element of
D; this module reads D out of an image by it and compares with ``A @ B`` (small integers, so
the f32 products are exact).

A worked example, Layout D (M = 128) at N = 8: warp 1's block is TMEM lanes 32-63, columns
0-7, rows 32-63 of D from column 0, so ``image[0, 40, 3]`` must be ``D[40][3]``.  A device
whose truth puts warp 1's rows at lanes 64-95 leaves lane 40 holding something else:
``datapath_differences`` names the first cell, (CTA 0, lane 40, column 3) -> D[40][3], with
both values.  ``FakeDataPathDevice`` computes the image from its own "truth" record, so the
harness is tested without a Blackwell GPU (no lent machine runs sm_100a).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.matrix_variants import DATAPATH_INSTRUCTION

LANES = 128
K = 16  # kind::f16's K
EMPTY = np.float32(np.nan)  # an image cell no block of the truth writes


@dataclass(frozen=True)
class DataPathBlock:
    """One warp's rectangle of D at one N: lane ``lane_lo + k``, column ``tcol_lo + j`` holds
    D[row_lo + k][dcol_lo + j]."""

    cta: int
    warp: int
    lane_lo: int
    lane_hi: int
    tcol_lo: int
    tcol_hi: int
    row_lo: int
    dcol_lo: int


@dataclass(frozen=True)
class DataPathMap:
    """A data-path layout at one N, from its export record."""

    layout: str
    m: int
    n: int
    cta_group: int
    sparse: bool
    ws: bool
    blocks: tuple[DataPathBlock, ...]
    map_hash: str = ""

    @property
    def columns(self) -> int:
        return max(b.tcol_hi + 1 for b in self.blocks)

    def cells(self) -> np.ndarray:
        """(cells, 5): every (cta, lane, column, row, col of D) the blocks hold."""
        out = []
        for b in self.blocks:
            grid = np.meshgrid(np.arange(b.lane_lo, b.lane_hi + 1),
                               np.arange(b.tcol_lo, b.tcol_hi + 1), indexing="ij")
            ln, tc = grid[0].ravel(), grid[1].ravel()
            out.append(np.stack([np.full_like(ln, b.cta), ln, tc, b.row_lo + ln - b.lane_lo,
                                 b.dcol_lo + tc - b.tcol_lo], axis=1))
        return np.concatenate(out)


class DataPathError(ValueError):
    """The records hold no data-path layout of that letter or N."""


def datapath_map(records: Sequence[Mapping[str, Any]], layout: str, n: int) -> DataPathMap:
    """Layout ``layout`` at N = ``n`` from the layouts JSON's records."""
    rec = next((r for r in records if r.get("instruction") == DATAPATH_INSTRUCTION
                and r.get("layout") == layout), None)
    if rec is None:
        raise DataPathError(f"the layouts JSON has no {DATAPATH_INSTRUCTION} record of "
                            f"Layout {layout}")
    fields = ("cta", "warp", "lane_lo", "lane_hi", "tcol_lo", "tcol_hi", "row_lo", "dcol_lo")
    blocks = tuple(DataPathBlock(*(int(b[f]) for f in fields))
                   for b in rec.get("blocks") or () if int(b.get("n", -1)) == n)
    if not blocks:
        raise DataPathError(f"Layout {layout} is not stated at N = {n} (N in {rec.get('n')})")
    return DataPathMap(layout, int(rec["m"]), n, int(rec.get("cta_group", 1)),
                       rec.get("sparsity") == "sparse", rec.get("ws") == "yes", blocks,
                       str(rec.get("map_hash") or ""))


def random_operands(m: DataPathMap, rng: np.random.Generator) \
        -> tuple[np.ndarray, np.ndarray]:
    """Random A (M x K) and B (K x N) of small integers: D = A @ B exact in f32."""
    a = rng.integers(-3, 4, (m.m, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, m.n)).astype(np.float32)
    return a, b


def image_of(m: DataPathMap, d: np.ndarray) -> np.ndarray:
    """The TMEM image (CTAs, 128, columns) where ``m`` puts each element of ``d`` (a cell no
    block holds is NaN)."""
    img = np.full((m.cta_group, LANES, m.columns), EMPTY, dtype=np.float32)
    c = m.cells()
    img[c[:, 0], c[:, 1], c[:, 2]] = d[c[:, 3], c[:, 4]]
    return img


class FakeDataPathDevice:
    """A device whose data path is ``truth`` (a ``DataPathMap``): it computes D = A @ B and
    returns the image its own map writes."""

    def __init__(self, truth: DataPathMap) -> None:
        self.truth = truth

    def launch(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return image_of(self.truth, a @ b)


def datapath_differences(m: DataPathMap, d: np.ndarray, image: np.ndarray) \
        -> list[dict[str, Any]]:
    """Each cell of ``m`` whose image word is not the element of ``d`` it should hold:
    the cell (cta, lane, column), D's (row, col), what the image holds and what D is."""
    c = m.cells()
    got = image[c[:, 0], c[:, 1], c[:, 2]] if image.shape[2] >= m.columns else \
        np.full(len(c), EMPTY, dtype=np.float32)
    want = d[c[:, 3], c[:, 4]]
    bad = np.flatnonzero(~(got == want))
    return [{"cta": int(c[k, 0]), "lane": int(c[k, 1]), "column": int(c[k, 2]),
             "d": [int(c[k, 3]), int(c[k, 4])], "got": float(got[k]), "want": float(want[k])}
            for k in bad]


def check_datapath(m: DataPathMap, device: Any, trials: int = 2, seed: int = 0) \
        -> tuple[int, list[dict[str, Any]]]:
    """(cells checked, faults of the first trial that has any): ``trials`` random A and B on
    ``device`` (``launch(a, b)`` -> the image), every cell of ``m`` compared."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(trials):
        a, b = random_operands(m, rng)
        bad = datapath_differences(m, a @ b, np.asarray(device.launch(a, b)))
        checked += len(m.cells())
        if bad:
            return checked, bad
    return checked, []


__all__ = ["DataPathBlock", "DataPathError", "DataPathMap", "FakeDataPathDevice",
           "check_datapath", "datapath_differences", "datapath_map", "image_of",
           "random_operands"]
