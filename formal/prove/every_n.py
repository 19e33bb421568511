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
    for n in lay.n_values:
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
    ns = lay.n_values
    return Core("proved", f"each of the {len(ns)} N ({ns[0]}..{ns[-1]}) fills its tile",
                method="enumeration (every N)")
