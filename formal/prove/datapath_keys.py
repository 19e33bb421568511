"""A data-path map at every N of its mma at once, each cell written as one number and each
run of cells as one interval of numbers, so that "no two cells on one place" and "every place
held" are one pass over the runs.

Layout E (M = 64, .ws) at N in {64, 128, 256}: its first block holds D[0-31][0 to N/2-1] in
lanes 0-31, TMEM columns 0 to N/2-1.  The map comes as *runs* (``model.datapath.
datapath_runs``): one a (N, block, lane), its cells consecutive columns.  A cell of D
``(N, row, column)`` is the number ``(n * M + row) * 256 + column`` (``n`` the index of N,
256 the widest N), so lane 5's run at N = 64 (row 5, columns 0-31) is the 32 consecutive
numbers from ``(0 * 64 + 5) * 256 = 1280`` on, the interval [1280, 1312): a run is its first
number plus each cell's column in it.  Likewise the TMEM cell ``(N, CTA, lane, column)`` in
mixed radix, and the cell's place in the M x N tiles of every N laid one after another.  Two
cells share a cell of D exactly where two numbers are equal, that is where two runs'
intervals overlap (``disjoint``: the intervals sorted by their first number, each must start
at or after the end of every earlier one); every cell of D is held exactly where the
intervals' union is every place of the tiles (``union_is_all``: sorted, no gap between the
furthest end so far and the next start, from 0 to the last place).  Edit the third block's
rows to 32-63 and its lane-0 run at N = 64, D[32][32-63], is [8224, 8256) (``(0 * 64 + 32) *
256 + 32`` on), the very interval of the fourth block's lane-0 run: they overlap, the answer
is no.
The numbers are exact only where each digit is below its radix: ``fits`` says so from each
run's first and last number, and where it does not, the prover looks N by N
(``prove.datapath``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.matrix_variants import TMEM_COLUMN_COUNT, TMEM_LANE_COUNT
from ..model.datapath import DataPath, datapath_runs


@dataclass(frozen=True)
class DataPathKeys:
    """The map at every N of its mma at once, each run of cells written as an interval of
    numbers: D's cell ``(N, row, column)`` in mixed radix, its TMEM cell ``(N, CTA, lane,
    TMEM column)``, and its place in the M x N tiles of every N laid one after another
    (``first``, a row each, a column a run; ``count``, each run's cells).  ``fits``: whether
    each row's numbers lie in [0, its size), where the three answers can be read from them (a
    block outside D's tile or tensor memory: the caller looks cell by cell)."""

    first: np.ndarray  # (3, runs): each run's first number in each of the three
    count: np.ndarray  # (runs,): its cells, the numbers first .. first + count - 1
    sizes: tuple[int, int, int]  # how many numbers each of the three can be
    fits: tuple[bool, bool, bool]

    @property
    def cells(self) -> int:
        """How many cells the runs hold (every N's)."""
        return int(self.count.sum())

    def d_distinct(self) -> bool:
        return self.fits[0] and disjoint(self.first[0], self.count)

    def tmem_distinct(self) -> bool:
        return self.fits[1] and disjoint(self.first[1], self.count)

    def covers(self) -> bool:
        """Is every cell of every N's tile held?"""
        return self.fits[2] and union_is_all(self.first[2], self.count, self.sizes[2])


def every_n_keys(dp: DataPath) -> DataPathKeys:
    """Every cell of ``dp`` at every N (``model.datapath.datapath_runs``), as ``DataPathKeys``:
    a run's cells are consecutive numbers, its first number plus the cell's column in it; a
    run whose first and last numbers fit, fits."""
    runs = datapath_runs(dp, dp.ns)
    count = runs["count"]
    ns = np.asarray(dp.ns, dtype=np.int64)
    n, wide = ns[runs["n"]], int(ns.max()) if len(ns) else 0
    tiles = dp.m * ns
    first = np.stack([(runs["n"] * dp.m + runs["row"]) * wide + runs["dcol"],
                      ((runs["n"] * dp.cta_group + runs["cta"]) * TMEM_LANE_COUNT
                       + runs["lane"]) * TMEM_COLUMN_COUNT + runs["tcol"],
                      (np.cumsum(tiles) - tiles)[runs["n"]] + runs["row"] * n + runs["dcol"]])
    sizes = (len(ns) * dp.m * wide, len(ns) * dp.cta_group * TMEM_LANE_COUNT * TMEM_COLUMN_COUNT,
             int(tiles.sum()))
    some = count > 0

    def fit(k: int) -> bool:
        return bool(((first[k] >= 0) & (first[k] + count - 1 < sizes[k]))[some].all())
    return DataPathKeys(first[:, some], count[some], sizes, (fit(0), fit(1), fit(2)))


def disjoint(first: np.ndarray, count: np.ndarray) -> bool:
    """No number in two of the intervals [first, first + count) (each count > 0): sorted by
    first number, each starts at or after the furthest end of the ones before it."""
    if len(first) < 2:
        return True
    order = np.argsort(first, kind="stable")
    lo, hi = first[order], first[order] + count[order]
    return bool((lo[1:] >= np.maximum.accumulate(hi)[:-1]).all())


def union_is_all(first: np.ndarray, count: np.ndarray, size: int) -> bool:
    """Do the intervals [first, first + count) (each count > 0, inside [0, size)) hold every
    number of [0, size)?  Sorted by first number, the first starts at 0, none starts past the
    furthest end of the ones before it, and the furthest end is ``size``."""
    if size == 0:
        return True
    if not len(first):
        return False
    order = np.argsort(first, kind="stable")
    lo, hi = first[order], np.maximum.accumulate(first[order] + count[order])
    return bool(lo[0] == 0 and (lo[1:] <= hi[:-1]).all() and hi[-1] == size)
