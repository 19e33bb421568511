"""The one map type of the executor (``formal.execute.maps``): the module docstring's worked
example, and one constructor serving every family's record (mma over 32 lanes, a move's
stacked matrices, wgmma's D stated for every N over 128 threads)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from formal.base.hashes import cell_table_hash
from formal.execute.maps import LayoutError, OperandMap, operand_map


def _toy(cells: list[tuple[int, int, int, int]], **extra: Any) -> dict[str, Any]:
    return {"id": "toy", "instruction": "toy", "shape": "m2n2", "operand": "C/D",
            "tile": [2, 2], **extra,
            "cells": [{"lane": t, "element": i, "row": r, "col": c} for t, i, r, c in cells]}


def test_the_worked_example() -> None:
    m = operand_map(_toy([(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 1, 0), (1, 1, 1, 1)]), lanes=2)
    assert isinstance(m, OperandMap) and (m.threads, m.n, m.tile) == (2, 2, (2, 2))
    assert m.row.tolist() == [[0, 0], [1, 1]] and m.col.tolist() == [[0, 1], [0, 1]]
    assert m.label == ("toy", "m2n2", "C/D") and m.layout_id == "toy"
    assert m.map_hash == cell_table_hash("toy", "m2n2", "C/D", "cells", _toy(
        [(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 1, 0), (1, 1, 1, 1)])["cells"])
    codes = np.arange(4).reshape(1, 2, 2)
    assert codes[:, m.row, m.col].tolist() == [[[0, 1], [2, 3]]]
    with pytest.raises(LayoutError, match=r"toy: lane 1 element 1 maps outside the \(2, 2\)"):
        operand_map(_toy([(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 1, 0), (1, 1, 2, 0)]), lanes=2)
    with pytest.raises(LayoutError, match="toy: no cell for lane 1 element 1"):
        operand_map(_toy([(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 1, 0)]), lanes=2, n=2)


def test_matrices_stack_and_every_n_records_take_the_concrete_shape() -> None:
    # a move's matrix j sits matrix_rows rows down: matrix 1's row 1 is tile row 9
    rec = _toy([(t, i, t // 4 % 8, 2 * (t % 4) + i) for t in range(32) for i in range(2)])
    for c in rec["cells"]:
        c["matrix"] = c["lane"] // 32
    rec["cells"].append({"lane": 5, "element": 2, "row": 1, "col": 3, "matrix": 1})
    m = operand_map(rec, tile=(16, 8), n=3, matrix_rows=8, partial=True)
    assert (int(m.row[5, 2]), int(m.col[5, 2])) == (9, 3) and m.tile == (16, 8)
    # wgmma's D, stated for every N: at N = 8 each thread keeps its first 4 elements, and the
    # map is hashed as the layout at that shape, not as the record's table
    cells = [(t, i, 16 * (t // 32) + t % 32 // 4 + 8 * (i // 2 % 2),
              8 * (i // 4) + 2 * (t % 4) + i % 2) for t in range(128) for i in range(8)]
    d = _toy(cells, n=[8, 16], shape="m64nNk16", map_hash="of-the-record")
    d["shape"] = "m64nNk16"
    at8 = operand_map(d, lanes=128, tile=(64, 8), n=4, shape="m64n8k16")
    assert (at8.threads, at8.n, at8.tile, at8.shape) == (128, 4, (64, 8), "m64n8k16")
    kept = [c for c in d["cells"] if c["element"] < 4]
    assert at8.map_hash == cell_table_hash("toy", "m64n8k16", "C/D", "cells", kept)
    whole = operand_map(d, lanes=128, tile=(64, 16))
    assert (whole.n, whole.shape, whole.map_hash) == (8, "m64nNk16", "of-the-record")


def test_a_row_is_written_as_json_writes_it() -> None:
    """base.hashes writes a row of names and integers without json (the format kept per kind
    of row); every other row, and every row of an expanded table, is exactly json's."""
    import json

    from formal.base.hashes import cells_at, row_text, row_texts

    rows = [{"lane": 3, "element": 1, "row": -2, "col": 10}, {"col": 1, "row": 0},
            {"flag": True, "n": 1}, {"x": 1.5}, {"name": "a%d\"b"}, {'k"%': 7}, {}]
    assert [row_text(r) for r in rows] == [json.dumps(r, sort_keys=True) for r in rows]
    assert row_text(rows[0]) == '{"col": 10, "element": 1, "lane": 3, "row": -2}'
    cells = _toy([(t, i, t, i) for t in range(2) for i in range(4)])["cells"]
    for e in (1, 2, 4):  # the texts given or not, the same rows and the same hash
        kept, h = cells_at("toy", "m2n2", "C/D", cells, e)
        assert (kept, h) == cells_at("toy", "m2n2", "C/D", cells, e, row_texts(cells))
        assert len(kept) == 2 * e
        assert h == cell_table_hash("toy", "m2n2", "C/D", "cells", kept)


def _both(rec: dict[str, Any], monkeypatch: pytest.MonkeyPatch, **kw: Any) -> list[Any]:
    """operand_map of ``rec`` placed column by column, then cell by cell (``_place`` off):
    each as its arrays and hash, or the LayoutError's words."""
    import formal.execute.maps as maps
    out = []
    for off in (False, True):
        with monkeypatch.context() as mp:
            if off:
                mp.setattr(maps, "_place", lambda *a: None)
            try:
                m = operand_map(rec, **kw)
            except (LayoutError, KeyError, ValueError) as e:
                out.append(f"{type(e).__name__}: {e}")
                continue
            out.append((m.row.tolist(), m.col.tolist(), None if m.last is None
                        else m.last.tolist(), None if m.held is None else m.held.tolist(),
                        m.map_hash, m.n, m.tile, m.groups))
    return out


def test_column_placement_is_the_cell_by_cell_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    import formal.execute.maps as maps
    good = [(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 1, 0), (1, 1, 1, 1)]
    # a plain table is placed by columns, and gives what the cells one by one give
    assert maps._place(_toy(good)["cells"], 2, 2, 1, (2, 2), 0, False) is not None
    a, b = _both(_toy(good), monkeypatch, lanes=2)
    assert a == b and a[0] == [[0, 0], [1, 1]] and a[1] == [[0, 1], [0, 1]]
    # tables the columns decline: each is read cell by cell, to the same map or error
    dup = _toy([*good, (1, 0, 0, 0)])  # lane 1 element 0 twice: the later cell stands
    odd = _toy(good)
    odd["cells"][2]["row"] = True  # a bool is json's, not an int
    far = _toy([*good[:3], (1, 5, 1, 1)])  # element 5 of 2
    lost = _toy(good)
    del lost["cells"][1]["col"]
    group = _toy(good, groups={"name": "g", "count": 2})
    for c, g in zip(group["cells"], (0, 1, 0, 1), strict=True):
        c["group"] = g
    stacked = _toy(good)
    for c in stacked["cells"]:
        c["matrix"] = c["lane"]
    cases = [(dup, {}), (odd, {}), (far, {"n": 2}), (lost, {}), (group, {}),
             (stacked, {"matrix_rows": 8, "tile": (16, 2)}), (_toy(good[:3]), {"n": 2}),
             (_toy(good[:3]), {"n": 2, "partial": True})]
    for rec, kw in cases:
        a, b = _both(rec, monkeypatch, lanes=2, **kw)
        assert a == b, (rec["cells"], kw)
    assert _both(dup, monkeypatch, lanes=2)[0][0] == [[0, 0], [0, 1]]
    assert "element 5 is outside 2 x 2" in _both(far, monkeypatch, lanes=2, n=2)[0]
    assert _both(stacked, monkeypatch, lanes=2, matrix_rows=8, tile=(16, 2))[0][0] == \
        [[0, 0], [9, 9]]


def test_a_table_is_written_as_json_writes_each_row() -> None:
    """``row_texts`` writes a table of one kind of row of integers with one format mapped over
    it; any other table row by row: always what json writes, row by row."""
    import json

    from formal.base.hashes import row_texts
    plain = [{"lane": t, "element": i, "row": -t, "col": 10 * i} for t in range(3)
             for i in range(2)]
    tables = [plain, [dict(reversed(list(r.items()))) for r in plain],  # keys in any order
              [*plain, {"lane": 0, "element": 0, "row": 0, "flag": 1}],  # as many, not the same
              [*plain, {"lane": 0, "element": 0, "row": 0}],  # fewer
              [*plain, {**plain[0], "group": 1}],  # more
              [*plain, {**plain[0], "row": True}], [*plain, {**plain[0], "row": 1.5}],
              [*plain, {**plain[0], "row": "r%d"}], [{"n": 1}, {"n": 2}], plain[:1], []]
    for rows in tables:
        assert row_texts(rows) == [json.dumps(r, sort_keys=True) for r in rows], rows
    assert row_texts(plain)[1] == '{"col": 10, "element": 1, "lane": 0, "row": 0}'
