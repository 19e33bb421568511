"""Enumeration: the smallest witness of each violation in a layout's cell table, or None.

For ``col = lane >> 1`` in the toy 4-lane layout ``row = i``, ``witness_collision`` returns the
first pair of domain points on one cell: (lane 0, i 0) and (lane 1, i 0) on (0, 0).  These finders
decide every obligation a second time, independently of Z3, and give the witnesses reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.cells import CellMap


def output_ranges(m: CellMap) -> list[tuple[int, int]]:
    """The half-open range of each output: the tile (and chunk/slot counts for metadata)."""
    lay = m.lay
    r, c = lay.tile
    if lay.operand == "metadata":
        sparsity = lay.sparsity
        chunks = lay.shape.k // sparsity.chunk if sparsity else 0
        slots = sparsity.slots if sparsity else 0
        return [(0, r), (0, chunks), (0, slots)]
    if lay.sparse_a:
        return [(0, r), (0, c), (0, c)]
    return [(0, r), (0, c)]


# ---- enumeration: the smallest witness of each violation, or None --------------------------------


def witness_cases(m: CellMap, k: int) -> int | None:
    bad = np.nonzero(m.match[k].sum(axis=1) != 1)[0]
    return int(bad[0]) if len(bad) else None


def witness_range(m: CellMap) -> int | None:
    ok = m.all_defined()
    inside = np.ones(len(m), dtype=bool)
    for k, (lo, hi) in enumerate(output_ranges(m)):
        col = m.out[:, k]
        inside &= (col >= lo) & (col < hi)
    if m.lay.sparse_a:
        inside &= m.out[:, 1] <= m.out[:, 2]
    bad = np.nonzero(ok & ~inside)[0]
    return int(bad[0]) if len(bad) else None


def witness_collision(m: CellMap) -> tuple[int, int] | None:
    """The first pair (earlier, later) of domain points that violate injectivity."""
    ok = np.nonzero(m.all_defined())[0]
    if m.lay.sparse_a:
        return _w_overlap(m, ok)
    if not len(ok):
        return None
    if m.out.dtype != object:
        # the common case, an injective map: every (selector, group, cell) counted at once,
        # no sort; a collision is located below, as ever
        cols = [m.pts[:, 0], m.groups, *(m.out[:, k] for k in range(m.out.shape[1]))]
        if len(ok) < len(m):
            cols = [c[ok] for c in cols]
        flat, total = _flat_keys(cols)
        if flat is not None and total <= _COUNTED and int(np.bincount(flat).max()) <= 1:
            return None
    keys = np.column_stack([m.pts[ok, 0], m.groups[ok], m.out[ok].astype(np.int64)
                            if m.out.dtype != object else m.out[ok]])
    if keys.dtype == object:
        seen: dict[tuple[Any, ...], int] = {}
        for row, p in zip(keys, ok):
            key = tuple(row)
            if key in seen:
                return seen[key], int(p)
            seen[key] = int(p)
        return None
    flat = _row_keys(keys)
    if flat is not None:  # one int64 a row: a plain sort, not a sort of rows as bytes
        _u, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    else:
        _u, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    firsts = first[inv]
    dup = np.nonzero(firsts != np.arange(len(ok)))[0]
    if not len(dup):
        return None
    j = int(dup[0])
    return int(ok[firsts[j]]), int(ok[j])


_COUNTED = 1 << 24  # the most keys counted in one array (bincount), else sorted


def _row_keys(keys: Any) -> Any:
    """Each row of an int64 matrix as one int64 that two rows share exactly when they are
    equal (mixed radix over each column's span), or None when the spans do not fit."""
    if not len(keys):
        return None
    return _flat_keys([keys[:, k] for k in range(keys.shape[1])])[0]


def _flat_keys(cols: Any) -> tuple[Any, int]:
    """``_row_keys`` of the rows of these columns (int64 arrays of one length), and the
    number of keys possible (the product of the spans): (None, 0) where it is 2**62 or
    more.  A toy: columns [0, 1, 1] and [5, 5, 6] span 2 and 2, keys 0, 2, 3 of 4."""
    los = [int(c.min()) for c in cols]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(cols, los)]
    total = 1
    for span in spans:
        total *= span
    if total >= 1 << 62:
        return None, 0
    out = np.zeros(len(cols[0]), dtype=np.int64)
    for c, lo, span in zip(cols, los, spans):
        out = out * span + (c - lo)
    return out, total


def _w_overlap(m: CellMap, ok: Any) -> tuple[int, int] | None:
    """Sparse A: two different (lane, range) chunks of one row overlap.  Whether any do is
    asked of every span at once first (``_overlaps``); the pair is located by the walk
    (``_w_overlap_walked``) only where one does."""
    if m.out.dtype == np.int64 and not _overlaps(m, ok):
        return None
    return _w_overlap_walked(m, ok)


def _overlaps(m: CellMap, ok: Any) -> bool:
    """Whether two different spans (lane, firstcol, lastcol) of one (selector, row) overlap,
    as the walk finds them: sorted by (firstcol, lastcol), a later span starting at or
    before an earlier one's end.  The distinct spans sorted, each group's running maximum
    of lastcol is compared with the next firstcol, the groups kept apart by an offset a
    group larger than any span's reach.  True where the keys would not fit (walked then)."""
    if not len(ok):
        return False
    s, t = m.pts[ok, 0], m.pts[ok, 1]
    r, a, b = m.out[ok, 0], m.out[ok, 1], m.out[ok, 2]
    flat, _total = _flat_keys([s, r, t, a, b])
    if flat is None:
        return True
    _u, first = np.unique(flat, return_index=True)
    s, r, a, b = s[first], r[first], a[first], b[first]
    order = np.lexsort((b, a, r, s))
    s, r, a, b = s[order], r[order], a[order], b[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (r[1:] != r[:-1])
    gid = np.cumsum(new) - 1
    reach = int(b.max()) - int(a.min()) + 1
    if reach < 1:
        reach = 1
    if reach * (int(gid[-1]) + 2) + abs(int(b.max())) + abs(int(a.min())) >= 1 << 62:
        return True
    ends = np.maximum.accumulate(b + gid * reach)
    starts = a + gid * reach
    return bool((starts[1:] <= ends[:-1]).any())


def _w_overlap_walked(m: CellMap, ok: Any) -> tuple[int, int] | None:
    """``_w_overlap``'s pair: the one whose later point comes first."""
    best: tuple[int, int] | None = None
    by_row: dict[tuple[int, int], list[int]] = {}
    for p in ok:
        by_row.setdefault((int(m.pts[p, 0]), int(m.out[p, 0])), []).append(int(p))
    for plist in by_row.values():
        spans: dict[tuple[int, int, int], int] = {}
        for p in plist:
            key = (int(m.pts[p, 1]), int(m.out[p, 1]), int(m.out[p, 2]))
            spans.setdefault(key, p)
        items = sorted(spans.items(), key=lambda kv: (kv[0][1], kv[0][2]))
        for x in range(len(items)):
            (t1, a1, b1), p1 = items[x]
            for y in range(x + 1, len(items)):
                (t2, a2, b2), p2 = items[y]
                if a2 > b1:
                    break
                pair = (min(p1, p2), max(p1, p2))
                if best is None or pair[1] < best[1]:
                    best = pair
    return best


def witness_hole(m: CellMap) -> tuple[int, int, tuple[int, ...]] | None:
    """(selector, group, cell) of the first cell no point maps to."""
    lay = m.lay
    ranges = output_ranges(m)
    ok = m.all_defined()
    ngroups = lay.groups[1] if lay.groups else 1
    if not lay.sparse_a:
        return _dense_hole(m, ranges, ok, ngroups)
    rows, cols = lay.tile  # sparse A: each point marks its range of a row
    vector = m.out.dtype != object
    for s in m.selectors:
        for g in range(ngroups):
            sel = ok & (m.pts[:, 0] == s) & (m.groups == g)
            if vector:  # each range as +1 at its first column and -1 past its last
                r, fc, lc = (m.out[sel, k] for k in range(3))
                lo, hi = np.maximum(0, fc), np.maximum(0, np.minimum(cols, lc + 1))
                keep = (r >= 0) & (r < rows) & (lo < hi)
                edge = np.zeros((rows, cols + 1), dtype=np.int64)
                np.add.at(edge, (r[keep], lo[keep]), 1)
                np.add.at(edge, (r[keep], hi[keep]), -1)
                mark = np.cumsum(edge, axis=1)[:, :cols] > 0
            else:
                mark = np.zeros((rows, cols), dtype=bool)
                for p in np.nonzero(sel)[0]:
                    a, fa, la = (int(x) for x in m.out[p])
                    if 0 <= a < rows:
                        mark[a, max(0, fa):max(0, min(cols, la + 1))] = True
            if not mark.all():
                return s, g, tuple(int(x) for x in np.argwhere(~mark)[0])
    return None


def _dense_hole(m: CellMap, ranges: list[tuple[int, int]], ok: Any,
                ngroups: int) -> tuple[int, int, tuple[int, ...]] | None:
    """``witness_hole`` of a dense map: every (selector, group, cell) marked at once, the
    first unmarked one in the order of the selectors, the groups and the cells."""
    dims = tuple(hi for _lo, hi in ranges)
    mark = np.zeros((len(m.selectors), ngroups, *dims), dtype=bool)
    vals = m.out
    inside = ok & (m.groups >= 0) & (m.groups < ngroups)
    for k, (lo, hi) in enumerate(ranges):
        inside &= np.asarray((vals[:, k] >= lo) & (vals[:, k] < hi), dtype=bool)
    every = bool(inside.all())  # the common case: no point left out, no copy of the arrays
    if len(m.selectors) == 1:
        where: Any = 0
    else:
        order = np.argsort(m.selectors)  # each point's selector, as its place in the list
        where = order[np.searchsorted(np.asarray(m.selectors),
                                      m.pts[:, 0] if every else m.pts[inside, 0],
                                      sorter=order)]
    cells = (vals if every else vals[inside]).astype(np.int64, copy=False)  # in range: int64
    groups = m.groups if every else m.groups[inside]
    mark[(where, groups) + tuple(cells[:, k] for k in range(len(ranges)))] = True
    if mark.all():
        return None
    first = np.argwhere(~mark)[0]
    return m.selectors[int(first[0])], int(first[1]), tuple(int(x) for x in first[2:])


def witness_chunks(m: CellMap, width: int, chunk: int, nz: int) -> tuple[int, str] | None:
    """Sparse A: the first element whose chunk is wrong in width, alignment or count."""
    ok = m.all_defined()
    out = m.out
    fc, lc = out[:, 1], out[:, 2]
    # count, per (selector, lane, row, range), the points that have a value there: a point
    # where some formula has no case holds nothing (its 'cases' finding says so)
    if out.dtype == object:  # values past int64: count with Python ints
        tally: dict[tuple[Any, ...], int] = {}
        keys_py = [(int(m.pts[p, 0]), int(m.pts[p, 1]), *out[p]) for p in range(len(out))]
        for q, key in enumerate(keys_py):
            if ok[q]:
                tally[key] = tally.get(key, 0) + 1
        count = np.array([tally.get(key, 0) for key in keys_py], dtype=np.int64)
        points = np.nonzero(ok)[0]
    else:
        count = np.zeros(len(out), dtype=np.int64)
        if ok.any():
            cols = [m.pts[ok, 0], m.pts[ok, 1], *(out[ok, k] for k in range(out.shape[1]))]
            flat, _total = _flat_keys(cols)
            if flat is None:
                _u, inv, counts = np.unique(np.column_stack(cols), axis=0,
                                            return_inverse=True, return_counts=True)
            else:
                _u, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
            count[ok] = counts[inv.reshape(-1)]
        # the first point that breaks any of the three rules; its message below, as ever
        a, b = fc.astype(np.int64), lc.astype(np.int64)
        bad = ok & ((b - a + 1 != width) | (a % chunk != 0) | (count != nz))
        points = np.flatnonzero(bad)[:1]
    for p in points:
        a, b = int(fc[p]), int(lc[p])
        r = int(out[p, 0])
        if b - a + 1 != width:
            return int(p), f"cols {a}..{b} are {b - a + 1} wide, the table says {width} " \
                           "consecutive"
        if a % chunk:
            return int(p), f"cols {a}..{b} start inside a {chunk}-wide chunk"
        if count[p] != nz:
            return int(p), f"lane {int(m.pts[p, 1])} holds {int(count[p])} non-zeros of row " \
                           f"{r}, cols {a}..{b}; the table says {nz}"
    return None
