"""Placements checked all at once: a table of places as one array, and the first place that
repeats an earlier one, in the table's own order.

A placement table lists, for each thing placed, where it goes; the provers of the scale
factors, the sparse metadata and tcgen05.cp ask, in one pass over every row, which row first
lands on a place an earlier row holds (the counterexample a loop with a ``seen`` dictionary
gives).  Four factors placed on (lane, byte)::

    row  (lane, byte)   key = 4 * lane + byte
     0     (0, 0)          0
     1     (0, 1)          1
     2     (1, 0)          4
     3     (0, 1)          1   <- repeats row 1

``first_repeat([0, 1, 4, 1])`` is ``(3, 1)``: row 3 is the first to land where an earlier row
did, and row 1 is that earlier row (the first to hold the place).  Every row is compared; the
answer is the same as the loop's, from a sort instead of a dictionary.  The same arrays are
hashed as the runs' evidence names such a layout (``placements_hash``): the rows written by
numpy, never a dict a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base.memo import keep_bounded

# What a check found on one read-only placement table (a layout's ``table``: the model's
# array of its placements at every selector value) and the fields of the layout it reads,
# this process, by the table's identity: the models keep one table a program and its axes
# (``model.tc_scale._placements``: the catalog's 82 tcgen05 scale operands place by 30;
# ``model.tc_meta``: its 19 metadata layouts by 6), and a check of the same array with the
# same fields is the same computation.  The table is kept beside the answer, so that an id
# is never taken for another array's; a writable array (not the model's) is never looked up.
_ON_TABLE: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def on_table(lay: Any, what: str, facts: tuple[Any, ...], make: Any) -> Any:
    """``make()``, or what it gave for the same read-only ``lay.table`` and ``facts`` (every
    field of ``lay`` that ``make`` reads) earlier this process: keep only immutable values."""
    table = getattr(lay, "table", None)
    if table is None or getattr(getattr(table, "flags", None), "writeable", True):
        return make()
    key = (what, id(table), *facts)
    hit = _ON_TABLE.get(key)
    if hit is not None and hit[0] is table:
        return hit[1]
    got = make()
    keep_bounded(_ON_TABLE, key, (table, got), 4096)
    return got


def placement_array(placed: Sequence[tuple[int, ...]]) -> Any:
    """A table of places as a 2-D int64 array (a row a placement); an object array where a
    value lies past int64 (a program walked point by point with Python's integers), which
    compares and divides the same way, only slower."""
    try:
        return np.array(placed, dtype=np.int64)
    except OverflowError:
        return np.array(placed, dtype=object)


def placed_array(lay: Any, value: int) -> Any:
    """A scale-like layout's placements at selector ``value`` as one array: the model's own
    (``lay.table``, evaluated over arrays) where it kept one, else ``placement_array`` of its
    tuples.  Both hold the same rows in the same order."""
    table = getattr(lay, "table", None)
    if table is not None and 0 <= value < len(table):
        return table[value]
    return placement_array(lay.placed(value))


def distinct(values: Any) -> Any:
    """The distinct values of an integer array, ascending (``np.unique(values)``'s answer,
    from one sort).  ``np.unique`` without ``return_*`` asks ``np.ma`` whether the array is
    masked, which imports ``numpy.ma`` (some 15 ms) in a run that uses no masked array."""
    flat = np.sort(np.asarray(values).reshape(-1))
    if flat.size < 2:
        return flat
    keep = np.empty(flat.size, dtype=bool)
    keep[0] = True
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    return flat[keep]


def first_repeat(keys: Any) -> tuple[int, int] | None:
    """``(i, j)``: ``i`` the first index whose key an earlier index ``j`` (the first with that
    key) already had; None where every key is new."""
    keys = np.asarray(keys, dtype=np.int64)
    if len(keys) < 2:
        return None
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    owner = first[inverse.reshape(-1)]
    again = np.flatnonzero(owner != np.arange(len(keys)))
    if not len(again):
        return None
    i = int(again[0])
    return i, int(owner[i])


def placements_hash(label: tuple[str, str, str, str], names: Sequence[str], lay: Any,
                    values: Sequence[int], at: Sequence[int]) -> str | None:
    """``base.hashes.cell_table_hash`` (``label``: instruction, shape, operand, kind) of the
    rows ``dict(zip(names, (value, *place[at])))``, each value of ``values`` in turn and each
    of its placements (``placed_array``) in order, written by numpy from the arrays
    (``model.cells.RowTexts``) -- the same bytes as a dict a row; None where a placement table
    is not integers (a program walked point by point: the caller writes its rows)."""
    from ..base.hashes import cell_table_hash_of_bytes
    from ..model.cells import columns_row_texts
    tables = [(v, placed_array(lay, v)) for v in values]
    tables = [(v, t) for v, t in tables if len(t)]
    if not tables or not all(t.dtype.kind == "i" and t.ndim == 2 and t.shape[1] > max(at)
                             for _v, t in tables):
        return None
    both = np.concatenate([t for _v, t in tables])
    cols: dict[str, Any] = {names[0]: np.concatenate(
        [np.full(len(t), v, dtype=np.int64) for v, t in tables])}
    cols.update((n, both[:, k]) for n, k in zip(names[1:], at, strict=True))
    return cell_table_hash_of_bytes(*label, columns_row_texts(sorted(cols), cols).data())
