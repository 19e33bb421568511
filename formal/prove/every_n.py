"""The layouts stated once for every N: each N's layout, decided by enumeration.

wgmma's accumulator is one layout, ``wgmma.m64nNk16.D.f32``, for N = 8, 16, .., 256: its
map is built at the largest N, and the layout at N is the first N * 64 / 128 = N / 2
elements of each thread (``Layout.at``).  The formula obligations (in range, injective,
surjective) are proved at the largest N; what they do not give is that each smaller
layout also fills exactly its own 64 x N tile.  This module checks that over the whole
domain, N by N: at N = 8 every thread's elements 0..3 must lie in columns 0..7 and the
512 of them must be the 512 cells of the 64 x 8 tile.  (Injectivity at the largest N
covers every prefix; the count then makes in-range the whole question, but the cells are
compared anyway.)  The domain is finite and checked exhaustively, so a pass is a proof.
The table obligations (register budget, element list) are checked at each N on
``Layout.at(n)`` by the driver.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.cells import CellMap
from .verdicts import Core


def every_n_core(m: CellMap) -> Core:
    """``proved`` when the layout at every N of ``n_values`` fills its tile exactly, else
    ``refuted`` with the first N and (lane, element) or cell that shows it does not."""
    lay = m.lay
    if m.out.dtype == object or not m.defined[:, :2].all() or m.names[:2] != ("row", "col"):
        return Core("unknown", "the map is not a total (row, col) table: each N's layout "
                    "is not decided", method="enumeration (every N)")
    elem = m.pts[:, 2]
    rows, cols = m.out[:, 0], m.out[:, 1]
    ns = lay.n_values
    for n in ns[_first_fault(lay, elem, rows, cols):]:
        at = lay.at(n)
        rmax, cmax = at.tile
        keep = elem < at.elements
        r, c = rows[keep], cols[keep]
        outside = np.nonzero((r < 0) | (r >= rmax) | (c < 0) | (c >= cmax))[0]
        if len(outside):
            p = int(np.nonzero(keep)[0][outside[0]])
            _, t, i = m.point(p)
            cell = (int(rows[p]), int(cols[p]))
            return Core("refuted", f"at N = {n}: lane {t} element {i} is at (row {cell[0]}, "
                        f"col {cell[1]}), outside the {rmax} x {cmax} tile",
                        {"n": n, "lane": t, "element": i, "cell": list(cell)}, None,
                        "enumeration (every N)")
        held = np.zeros((rmax, cmax), dtype=bool)
        held[r, c] = True
        if not held.all():
            hr, hc = (int(x[0]) for x in np.nonzero(~held))
            return Core("refuted", f"at N = {n}: no thread holds cell (row {hr}, col {hc}) of "
                        f"the {rmax} x {cmax} tile", {"n": n, "cell": [hr, hc]}, None,
                        "enumeration (every N)")
        if len(r) != rmax * cmax:
            return Core("refuted", f"at N = {n}: {len(r)} elements for {rmax * cmax} cells",
                        {"n": n}, None, "enumeration (every N)")
    return Core("proved", f"each of the {len(ns)} N ({ns[0]}..{ns[-1]}) fills its tile",
                method="enumeration (every N)")


def _first_fault(lay: Any, elem: Any, rows: Any, cols: Any) -> int:
    """The index in ``n_values`` of the first N at which the loop of ``every_n_core`` finds a
    fault (``len(n_values)`` where none does), every N at once: an element is in the layout
    at N where its index is below N's element count, so the points in the layout at N are a
    prefix of the points sorted by element index (its rows' and columns' running least and
    greatest say whether one leaves N's tile); a cell of N's tile is held at N where the
    least element index holding it is below N's count; and the count is the prefix's length.
    The loop then starts at that N and names the fault.  0 (the loop checks every N) where
    the tiles are too big to take at once."""
    ats = [lay.at(n) for n in lay.n_values]
    if not ats:
        return 0
    counts = np.array([at.elements for at in ats], dtype=np.int64)
    tiles = np.array([at.tile for at in ats], dtype=np.int64).reshape(-1, 2)
    rmax, cmax = int(tiles[:, 0].max()), int(tiles[:, 1].max())
    if rmax * cmax > 1 << 24:
        return 0
    # the points by element index: those in the layout at N are a prefix, of ``kept`` points
    order = np.argsort(elem, kind="stable")
    kept = np.searchsorted(elem[order], counts)
    r, c = rows[order], cols[order]
    last = np.maximum(kept - 1, 0)
    outside = (kept > 0) & ((np.minimum.accumulate(r)[last] < 0)
                            | (np.maximum.accumulate(r)[last] >= tiles[:, 0])
                            | (np.minimum.accumulate(c)[last] < 0)
                            | (np.maximum.accumulate(c)[last] >= tiles[:, 1]))
    inside = (rows >= 0) & (rows < rmax) & (cols >= 0) & (cols < cmax)
    flat = np.full(rmax * cmax, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(flat, rows[inside] * cmax + cols[inside], elem[inside])
    least = flat.reshape(rmax, cmax)  # each cell's least element index (held from there on)
    hole = np.array([bool((least[:t[0], :t[1]] >= k).any()) for k, t in zip(counts, tiles)])
    bad = np.flatnonzero(outside | hole | (kept != tiles[:, 0] * tiles[:, 1]))
    return int(bad[0]) if len(bad) else len(ats)
