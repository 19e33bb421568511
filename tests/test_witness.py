"""The enumeration's finders (formal/prove/witness.py) against plain loops over the points:
on catalog maps as they are and with a collision, a hole or a bad sparse chunk planted at
random places, each finder names the same first witness (or None) as the loop."""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import numpy as np
import pytest

from formal.model.cells import CellMap, map_of
from formal.model.resolve import catalog_model
from formal.prove.formula import chunk_spec
from formal.prove.witness import (
    output_ranges,
    witness_chunks,
    witness_collision,
    witness_hole,
)


def _maps(sparse: bool) -> list[CellMap]:
    out, seen = [], set()
    for lay in catalog_model(False).layouts:
        m = map_of(lay) if not lay.incomplete else None
        if m is None or lay.sparse_a != sparse or id(m.out) in seen:
            continue
        seen.add(id(m.out))
        out.append(m)
    return out


def _planted(m: CellMap, rng: random.Random, what: str) -> CellMap:
    """A copy of ``m`` with one point's outputs changed."""
    p = copy.copy(m)
    p.out = m.out.copy()
    p._ok = None
    i, j = sorted(rng.sample(range(len(m)), 2))
    if what == "collision":  # j lands on i's cell (and j's own cell may be left empty)
        p.out[j] = m.out[i]
        p.pts = m.pts.copy()
        p.pts[j, 0] = m.pts[i, 0]
        p.groups = m.groups.copy()
        p.groups[j] = m.groups[i]
    elif what == "vanished":  # a lane's ranges of one row moved off the tile: a hole
        same = (m.pts[:, 0] == m.pts[j, 0]) & (m.pts[:, 1] == m.pts[j, 1]) & \
            (m.out[:, 0] == m.out[j, 0])
        p.out[same, 0] = m.lay.tile[0] + 7
    else:  # a sparse chunk one column wider, or moved by one
        p.out[j, 2 if what == "wider" else 1] += 1
    return p


def _loop_collision(m: CellMap) -> tuple[int, int] | None:
    seen: dict[tuple[int, ...], int] = {}
    for q in range(len(m)):
        if not m.defined[q].all():
            continue
        key = (int(m.pts[q, 0]), int(m.groups[q]), *(int(x) for x in m.out[q]))
        if key in seen:
            return seen[key], q
        seen[key] = q
    return None


def _loop_hole(m: CellMap) -> tuple[int, int, tuple[int, ...]] | None:
    lay = m.lay
    ngroups = lay.groups[1] if lay.groups else 1
    held = {(int(m.pts[q, 0]), int(m.groups[q]), *(int(x) for x in m.out[q]))
            for q in range(len(m)) if m.defined[q].all()}
    for s in m.selectors:
        for g in range(ngroups):
            for cell in itertools.product(*(range(lo, hi) for lo, hi in output_ranges(m))):
                if (s, g, *cell) not in held:
                    return s, g, cell
    return None


def _loop_sparse_hole(m: CellMap) -> tuple[int, int, tuple[int, ...]] | None:
    rows, cols = m.lay.tile
    ngroups = m.lay.groups[1] if m.lay.groups else 1
    for s in m.selectors:
        for g in range(ngroups):
            held = set()
            for q in range(len(m)):
                if m.defined[q].all() and m.pts[q, 0] == s and m.groups[q] == g:
                    r, a, b = (int(x) for x in m.out[q])
                    held |= {(r, c) for c in range(a, b + 1)}
            for cell in itertools.product(range(rows), range(cols)):
                if cell not in held:
                    return s, g, cell
    return None


def _loop_chunks(m: CellMap, width: int, chunk: int, nz: int) -> tuple[int, str] | None:
    tally: dict[tuple[int, ...], int] = {}
    keys = [(int(m.pts[q, 0]), int(m.pts[q, 1]), *(int(x) for x in m.out[q]))
            for q in range(len(m))]
    for q, key in enumerate(keys):
        if m.defined[q].all():
            tally[key] = tally.get(key, 0) + 1
    for q, key in enumerate(keys):
        if not m.defined[q].all():
            continue
        a, b = key[3], key[4]
        if b - a + 1 != width or a % chunk or tally[key] != nz:
            return q, ""
    return None


def test_collisions_and_holes_as_the_loop_finds_them() -> None:
    rng = random.Random(11)
    maps = [m for m in _maps(False) if len(m) <= 4096]
    assert len(maps) > 40
    found = 0
    for m in maps:
        assert witness_collision(m) == _loop_collision(m), m.lay.id
        for _ in range(2):
            p = _planted(m, rng, "collision")
            got = witness_collision(p)
            assert got == _loop_collision(p), m.lay.id
            found += got is not None
    for m in maps[::5]:
        assert witness_hole(m) == _loop_hole(m), m.lay.id
        p = _planted(m, rng, "collision")
        assert witness_hole(p) == _loop_hole(p), m.lay.id
    assert found > 40  # the plants did collide


@pytest.mark.parametrize("what", ["wider", "moved", "vanished"])
def test_sparse_chunks_as_the_loop_finds_them(what: str) -> None:
    rng = random.Random(5)
    checked = holes = 0
    for m in _maps(True):
        spec = chunk_spec(m.lay)[0]
        if spec is None:
            continue
        args = (spec.width, spec.chunk, spec.nonzeros)
        for p in (m, _planted(m, rng, what)):
            got: Any = witness_chunks(p, *args)
            want = _loop_chunks(p, *args)
            assert (got and got[0]) == (want and want[0]), m.lay.id
            hole = witness_hole(p)
            assert hole == _loop_sparse_hole(p), m.lay.id
            checked += got is not None
            holes += hole is not None
    assert (holes if what == "vanished" else checked) > 3  # the plants did break the maps
    assert np.int64(-3) % 4 == -3 % 4  # numpy's remainder is Python's: the rule is the same


@pytest.mark.parametrize("what", ["wider", "moved"])
def test_sparse_overlaps_as_the_walk_finds_them(what: str) -> None:
    """Sparse A's injectivity (two spans of one row overlap): the check of every span at once
    (``_overlaps``) says a pair exists exactly where the walk finds one."""
    from formal.prove.witness import _w_overlap_walked
    rng = random.Random(7)
    checked = found = 0
    for m in _maps(True):
        for p in (m, *(_planted(m, rng, what) for _ in range(3))):
            ok = np.nonzero(p.all_defined())[0]
            walked = _w_overlap_walked(p, ok)
            assert witness_collision(p) == walked, m.lay.id
            checked += 1
            found += walked is not None
    assert checked >= 20 and found >= 10
