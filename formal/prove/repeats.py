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
answer is the same as the loop's, from a sort instead of a dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


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
