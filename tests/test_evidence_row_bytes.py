"""The map hash the hardware verdict matches (``Evidence.hash_at``) is written from the rows'
bytes where they lie (``evidence._row_bytes``): a whole table uncopied, a table's first
elements at one N as slices of it.  Either way the bytes are exactly those ``RowTexts.data``
joins, for every layout of the catalog and every N it is stated for."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from formal.base.hashes import cell_table_hash_of_bytes, cell_table_hash_of_chunks
from formal.model.resolve import catalog_model
from formal.prove.evidence import _row_bytes

cells = importlib.import_module("formal.model.cells")


def _joined(pieces: list[Any]) -> bytes:
    return b"".join(bytes(memoryview(p)) for p in pieces)


def test_the_rows_bytes_are_the_joined_rows_for_every_layout_and_n() -> None:
    asked = 0
    for lay in catalog_model(False).layouts:
        kind, texts, es = cells.cell_texts(lay)
        if not len(texts):
            continue
        assert _joined(_row_bytes(texts)) == texts.data()
        for n in lay.n_values:
            keep = es < lay.at(n).elements
            assert _joined(_row_bytes(texts, keep)) == texts.data(keep)
            asked += 1
        asked += 1
    assert asked > 300


def test_masks_of_every_kind_of_run() -> None:
    texts = cells.columns_row_texts(["a", "b"], {"a": np.arange(7), "b": np.arange(7) * 13})
    for keep in ([True] * 7, [False] * 7, [True, False] * 3 + [True], [False] + [True] * 6,
                 [True] * 6 + [False], [False, True, True, False, False, True, False]):
        mask = np.array(keep)
        assert _joined(_row_bytes(texts, mask)) == texts.data(mask)
        assert cell_table_hash_of_chunks("i", "s", "A", "cells", _row_bytes(texts, mask)) == \
            cell_table_hash_of_bytes("i", "s", "A", "cells", texts.data(mask))
    rows = cells.RowTexts(rows=['{"a": 1}', '{"a": 22}'])  # a table written row by row
    assert _joined(_row_bytes(rows, np.array([False, True]))) == b'{"a": 22}'
