"""A data-path map at every N of its mma at once, each cell written as one number, so that
"no two cells on one place" and "every place held" are one pass over arrays.

Layout E (M = 64, .ws) at N in {64, 128, 256}: its first block holds D[0-31][0 to N/2-1] in
lanes 0-31, TMEM columns 0 to N/2-1.  The map comes as *runs* (``model.datapath.
datapath_runs``): one a (N, block, lane), its cells consecutive columns.  A cell of D
``(N, row, column)`` is the number ``(n * M + row) * 256 + column`` (``n`` the index of N,
256 the widest N), so lane 5's run at N = 64 (row 5, columns 0-31) is the 32 consecutive
numbers from ``(0 * 64 + 5) * 256 = 1280`` on: a run is its first number plus each cell's
column in it.  Likewise the TMEM cell ``(N, CTA, lane, column)`` in mixed radix, and the cell's
place in the M x N tiles of every N laid one after another.  Two cells share a cell of D
exactly where two numbers are equal (``all_distinct``: marked in a boolean array, counted);
every cell of D is held exactly where every place of the tiles is marked (``covers``).  The
numbers are exact only where each digit is below its radix: ``fits`` says so from each run's
first and last number, and where it does not, the prover looks N by N
(``prove.datapath``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.matrix_variants import TMEM_COLUMN_COUNT, TMEM_LANE_COUNT
from ..model.datapath import DataPath, datapath_runs


@dataclass(frozen=True)
class DataPathKeys:
    """The map at every N of its mma at once, each cell written as one number: D's cell
    ``(N, row, column)`` in mixed radix, its TMEM cell ``(N, CTA, lane, TMEM column)``, and
    its place in the M x N tiles of every N laid one after another (``keys``, a row
    each).  ``fits``: whether each column's numbers lie in [0, its size), where the three
    answers can be read from them (a block outside D's tile or tensor memory: the caller
    looks cell by cell)."""

    keys: np.ndarray  # (3, cells)
    sizes: tuple[int, int, int]  # how many numbers each of the three can be
    fits: tuple[bool, bool, bool]

    def d_distinct(self) -> bool:
        return self.fits[0] and all_distinct(self.keys[0], self.sizes[0])

    def tmem_distinct(self) -> bool:
        return self.fits[1] and all_distinct(self.keys[1], self.sizes[1])

    def covers(self) -> bool:
        """Is every cell of every N's tile held?"""
        if not self.fits[2]:
            return False
        held = np.zeros(self.sizes[2], dtype=bool)
        held[self.keys[2]] = True
        return bool(held.all())


_NARROW = 1 << 31  # keys below this are held as int32 (half the bytes to write and read)


def every_n_keys(dp: DataPath) -> DataPathKeys:
    """Every cell of ``dp`` at every N (``model.datapath.datapath_runs``), as ``DataPathKeys``: a
    run's cells are consecutive numbers, its first number plus the cell's column in it; a
    run whose first and last numbers fit, fits."""
    runs = datapath_runs(dp, dp.ns)
    count = runs["count"]
    ns = np.asarray(dp.ns, dtype=np.int64)
    n, wide = ns[runs["n"]], int(ns.max()) if len(ns) else 0
    tiles = dp.m * ns
    first = np.stack([(runs["n"] * dp.m + runs["row"]) * wide + runs["dcol"],
                      ((runs["n"] * dp.cta_group + runs["cta"]) * TMEM_LANE_COUNT
                       + runs["lane"]) * TMEM_COLUMN_COUNT + runs["tcol"],
                      (np.cumsum(tiles) - tiles)[runs["n"]] + runs["row"] * n + runs["dcol"]],
                     axis=1)
    sizes = (len(ns) * dp.m * wide, len(ns) * dp.cta_group * TMEM_LANE_COUNT * TMEM_COLUMN_COUNT,
             int(tiles.sum()))
    some = count > 0

    def fit(k: int) -> bool:
        return bool(((first[:, k] >= 0) & (first[:, k] + count - 1 < sizes[k]))[some].all())
    narrow = max(sizes) < _NARROW
    kind = np.int32 if narrow else np.int64
    cells = np.repeat(first.T.astype(kind), count, axis=1)
    start = np.cumsum(count) - count
    j = np.arange(cells.shape[1], dtype=kind) - np.repeat(start.astype(kind), count)
    return DataPathKeys(cells + j, sizes, (fit(0), fit(1), fit(2)))


def all_distinct(key: np.ndarray, size: int) -> bool:
    """No two numbers of ``key`` (each in [0, size)) equal: as many numbers marked as there
    are keys, or, past 2**26 numbers, sorted."""
    if size <= 1 << 26:
        held = np.zeros(size, dtype=bool)
        held[key] = True
        return int(np.count_nonzero(held)) == len(key)
    key = np.sort(key)
    return not bool((key[1:] == key[:-1]).any())
