"""``model.block_scale.Placements``: a selector value's placements held as array rows and read
as the tuple of tuples they are -- equal to it both ways, hashing as it does, indexed and sliced
as it is -- so that a layout holding them is the layout holding the tuples; and a catalog proof
reads the arrays only (no placement turned into tuples)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from formal.model.block_scale import Placements
from formal.model.tc_meta import meta_layouts

ROWS = ((0, 1, 2), (3, 4, 5), (6, 7, 8))


def _p() -> Placements[tuple[int, int, int]]:
    a = np.array(ROWS, dtype=np.int64)
    a.setflags(write=False)
    return Placements(a)


def test_it_is_the_tuple_of_its_rows() -> None:
    p = _p()
    assert len(p) == 3 and bool(p) and not Placements(np.zeros((0, 3), dtype=np.int64))
    assert p[1] == (4 - 1, 4, 5) and p[-1] == (6, 7, 8) and type(p[0][0]) is int
    assert p == ROWS and ROWS == p and p == _p() and p != ROWS[:2] and ROWS[:2] != p
    assert p[1:] == ROWS[1:] and (*p[1:],) == ROWS[1:]
    assert hash(p) == hash(ROWS) and {p: 1}[ROWS] == 1
    assert list(p) == list(ROWS) and repr(p) == repr(ROWS)
    assert p != [list(r) for r in ROWS]  # a list of lists is not the tuple
    with pytest.raises(IndexError):
        p[3]  # noqa: B018


def test_a_layout_holding_them_is_the_layout_holding_tuples() -> None:
    from formal import catalog
    from formal.parse.tc_meta import read_tc_meta
    secs = read_tc_meta((catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md")
                        .read_text(encoding="utf-8"), "m.md")[0]
    lay = meta_layouts(secs)[0]
    assert isinstance(lay.placed(0), Placements)
    plain = dataclasses.replace(lay, every=tuple((s, tuple(ps)) for s, ps in lay.every))
    assert plain == lay and lay == plain and hash(plain) == hash(lay)
    moved = dataclasses.replace(lay, every=((0, ((9, 9, 9, 9, 9, 9), *lay.placed(0)[1:])),
                                            *lay.every[1:]))
    assert moved != lay


def test_a_catalog_proof_builds_no_tuples(monkeypatch: pytest.MonkeyPatch) -> None:
    from formal import api
    built: list[int] = []
    real = Placements._all

    def counted(self: Placements) -> tuple:  # type: ignore[type-arg]
        if self._tuples is None:
            built.append(len(self))
        return real(self)
    monkeypatch.setattr(Placements, "_all", counted)
    proof = api.prove_block_scale()
    assert len(proof.results) > 80 and not built


def _widest_by_dict(p: np.ndarray, by: int) -> tuple[int, list[int]]:
    words: dict[int, set[int]] = {}
    for row in p.tolist():
        words.setdefault(row[by], set()).add(row[3])
    who, cols = min(words.items(), key=lambda kv: (-len(kv[1]), kv[0]), default=(0, set()))
    return who, sorted(cols)


def test_the_widest_row_is_the_dict_walk_s() -> None:
    """``prove.tc_scale._widest`` over whole arrays answers as the walk with a dict of sets
    did: random places (ties among rows included), int64 and object arrays, no places."""
    from formal.prove.tc_scale import _widest
    rng = np.random.default_rng(5)
    for trial in range(300):
        p = rng.integers(-3, 6, size=(int(rng.integers(1, 40)), 7))
        for by in (0, 1):
            assert _widest(p, by) == _widest_by_dict(p, by), (trial, by)
            assert _widest(p.astype(object), by) == _widest_by_dict(p, by)
    assert _widest(np.zeros((0, 7), dtype=np.int64), 0) == (0, [])
    assert _widest(np.array([[0, 9, 0, 5], [0, 9, 0, 6], [1, 9, 0, 5]]), 0) == (0, [5, 6])
    big = np.array([[2**40, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 3], [-(2**40), 0, 0, 7]])
    assert _widest(big, 0) == _widest_by_dict(big, 0) == (0, [2, 3])
    wide = np.array([[0, 0, 0, 0], [0, 0, 0, 5000], [3000, 0, 0, 1], [3000, 0, 0, 2],
                     [3000, 0, 0, 4999]])  # a grid past 2**22 flags: by sorted numbers
    assert _widest(wide, 0) == _widest_by_dict(wide, 0) == (3000, [1, 2, 4999])
