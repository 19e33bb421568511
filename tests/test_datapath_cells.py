"""The data-path map enumerated over all blocks at once (``model.datapath.datapath_cells``)
is the block-by-block enumeration, cell for cell in the same order, for every catalog layout
at every N its mma takes; and a bound's value in integers is ``int(Fraction)``'s."""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import numpy as np
import pytest

from formal.api import datapath_catalog
from formal.model.datapath import DataPath, at, datapath_cells


def _block_by_block(dp: DataPath, n: int, align: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {k: [] for k in ("block", "cta", "lane", "tcol", "row", "dcol")}
    for k, b in enumerate(dp.blocks):
        t0, t1 = int(b.tcols[0][0] * n) + b.tcols[0][1], int(b.tcols[1][0] * n) + b.tcols[1][1]
        d0 = int(b.dcols[0][0] * n) + b.dcols[0][1]
        for li in range(b.lanes[1] - b.lanes[0] + 1):
            for ci in range(t1 - t0 + 1):
                for key, v in (("block", k), ("cta", b.cta), ("lane", b.lanes[0] + align + li),
                               ("tcol", t0 + ci), ("row", b.rows[0] + li),
                               ("dcol", d0 + ci)):
                    out[key].append(v)
    return out


def test_every_catalog_layout_at_every_n_is_the_block_by_block_map() -> None:
    dps = datapath_catalog()
    assert len(dps) >= 7
    checked = 0
    for dp in dps:
        for n in dp.ns:
            for align in (0, 32):
                got = datapath_cells(dp, n, align)
                want = _block_by_block(dp, n, align)
                assert {k: v.tolist() for k, v in got.items()} == want, (dp.layout, n, align)
                checked += 1
    assert checked > 100


def test_a_bound_truncates_as_int_of_a_fraction() -> None:
    for mult in (Fraction(1, 2), Fraction(-1, 2), Fraction(3, 4), Fraction(-3, 4), Fraction(0),
                 Fraction(1), Fraction(-5, 3)):
        for n in (0, 1, 2, 3, 8, 9, 256):
            for c in (-1, 0, 7):
                assert at((mult, c), n) == int(mult * n) + c, (mult, n, c)
    assert at((Fraction(-1, 2), 0), 3) == -1  # truncated toward zero, not floored (-2)


def test_an_empty_block_holds_no_cells() -> None:
    dp = datapath_catalog()[0]
    b = dp.blocks[0]
    empty = type(b)(b.cta, b.warp, (b.lanes[0], b.lanes[0] - 1), b.tcols, b.rows, b.dcols, b.src)
    odd = DataPath(dp.layout, dp.m, dp.title, (empty, *dp.blocks[1:]), dp.cta_group, dp.ns)
    got = datapath_cells(odd, dp.ns[0])
    assert 0 not in got["block"].tolist() and len(got["block"]) == len(
        _block_by_block(odd, dp.ns[0], 0)["block"]) > 0
    assert np.array_equal(got["lane"], np.array(_block_by_block(odd, dp.ns[0], 0)["lane"]))


def test_a_block_of_no_columns_and_a_layout_of_no_blocks_hold_no_cells() -> None:
    dp = datapath_catalog()[0]
    b = dp.blocks[-1]
    none = (b.tcols[0], (b.tcols[0][0], b.tcols[0][1] - 1))  # its last column before its first
    empty = type(b)(b.cta, b.warp, b.lanes, none, b.rows, b.dcols, b.src)
    odd = DataPath(dp.layout, dp.m, dp.title, (*dp.blocks[:-1], empty), dp.cta_group, dp.ns)
    got = datapath_cells(odd, dp.ns[-1], 32)
    want = _block_by_block(odd, dp.ns[-1], 32)
    assert {k: v.tolist() for k, v in got.items()} == want
    assert len(dp.blocks) - 1 not in got["block"].tolist() and len(got["block"]) > 0
    bare = datapath_cells(DataPath(dp.layout, dp.m, dp.title, (), dp.cta_group, dp.ns), 64)
    assert sorted(bare) == ["block", "cta", "dcol", "lane", "row", "tcol"]
    assert all(v.dtype == np.int64 and v.shape == (0,) for v in bare.values())


def test_every_n_at_once_is_each_n_one_after_another() -> None:
    """``datapath_runs`` of every N, laid out cell by cell (``run_cells``), is
    ``datapath_cells`` at each N, concatenated, each run's N named by its index; a bound too
    large for int64's products is evaluated in Python's integers, as ``at`` does, and gives
    the block-by-block map too."""
    from formal.model.datapath import datapath_runs, run_cells
    for dp in datapath_catalog():
        for align in (0, 16):
            runs = datapath_runs(dp, dp.ns, align)
            run, j = run_cells(runs)
            for key in ("block", "cta", "lane", "tcol", "row", "dcol"):
                want = np.concatenate([datapath_cells(dp, n, align)[key] for n in dp.ns])
                got = runs[key][run] + (j if key in ("tcol", "dcol") else 0)
                assert np.array_equal(got, want), (dp.layout, key)
            sizes = [len(datapath_cells(dp, n)["block"]) for n in dp.ns]
            assert runs["n"][run].tolist() == [k for k, s in enumerate(sizes) for _ in range(s)]
    dp = datapath_catalog()[0]
    b, n = dp.blocks[0], dp.ns[-1]
    big = 1 << 40  # (2**40 + 1) / 2**40 * N truncates to N below 2**40: column 0 at N - N
    assert b.tcols[0] == (Fraction(0), 0)
    wide = type(b)(b.cta, b.warp, b.lanes, ((Fraction(big + 1, big), -n), b.tcols[1]), b.rows,
                   b.dcols, b.src)
    odd = DataPath(dp.layout, dp.m, dp.title, (wide, *dp.blocks[1:]), dp.cta_group, dp.ns)
    got = datapath_cells(odd, n)
    assert {k: v.tolist() for k, v in got.items()} == _block_by_block(odd, n, 0) \
        == _block_by_block(dp, n, 0)


def _edits(dp: DataPath) -> list[DataPath]:
    """``dp`` and three edits of it: a block's rows moved onto another's (two blocks on cells
    of D, the rows it held uncovered), its TMEM columns shifted by one (two blocks on a TMEM
    cell where another block follows), and a block dropped (cells uncovered)."""
    b = dp.blocks[-1]
    other = dp.blocks[0]
    rows = type(b)(b.cta, b.warp, b.lanes, b.tcols, other.rows, b.dcols, b.src)
    shifted = type(b)(b.cta, b.warp, b.lanes, ((b.tcols[0][0], b.tcols[0][1] + 1),
                                               (b.tcols[1][0], b.tcols[1][1] + 1)),
                      b.rows, b.dcols, b.src)
    return [dp, *(DataPath(dp.layout, dp.m, dp.title, blocks, dp.cta_group, dp.ns)
                  for blocks in ((*dp.blocks[:-1], rows), (*dp.blocks[:-1], shifted),
                                 dp.blocks[:-1]))]


def test_every_n_at_once_decides_as_each_n_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """prove.datapath reads the map at every N at once (``datapath_runs``) and looks N by N
    only where that finds a fault: for every catalog layout and three edits of each, the
    three answers at once are the N-by-N answers at every alignment, and every verdict and
    finding of ``prove_datapath`` is the one the N-by-N search alone gives."""
    import formal.prove.datapath as P
    from formal.prove.datapath_keys import DataPathKeys
    faults = 0
    dps = datapath_catalog()
    for dp in dps:
        for x in _edits(dp):
            held = P.every_n_keys(x)
            each = [datapath_cells(x, n, a) for n in x.ns for a in P._alignments(x)]
            sound = P._first(x, partial(P._range_bad, x)) is None
            if not sound:
                continue
            assert held.d_distinct() == all(
                P._collision(c, x, ("row", "dcol")) is None for c in each), x.layout
            assert held.tmem_distinct() == all(
                P._collision(c, x, ("cta", "lane", "tcol")) is None for c in each), x.layout
            assert held.covers() == all(P._uncovered(datapath_cells(x, n), x, n) is None
                                        for n in x.ns), x.layout
            faults += not (held.d_distinct() and held.tmem_distinct() and held.covers())
            fast = P.prove_datapath(x)
            with monkeypatch.context() as m:
                m.setattr(DataPathKeys, "d_distinct", lambda self: False)
                m.setattr(DataPathKeys, "tmem_distinct", lambda self: False)
                m.setattr(DataPathKeys, "covers", lambda self: False)
                assert P.prove_datapath(x) == fast, x.layout
    assert faults >= len(dps)  # the edits do break layouts: faults found both ways


def test_the_reads_from_the_arrays_are_the_reads_from_the_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """prove.datapath reads each tcgen05.ld layout's offsets from its enumerated arrays; its
    table (a dict a point, as ``export`` writes it) is the reference: the same (thread,
    register, offset) triples for every ld layout of the read-back relations, and the same
    verdicts when the table is read instead (the catalog's, and Layout D with its two first
    blocks' rows exchanged, refuted by warp 0's thread 0)."""
    import formal.prove.datapath as P
    from formal.model.cells import cells
    from formal.model.resolve import catalog_model
    from formal.prove.relations import DATAPATH_READS
    by_id = {lay.short_id: lay for lay in catalog_model(False).layouts}
    lds = {p for p, _letter, _n in DATAPATH_READS if p in by_id}
    assert lds
    for p in lds:
        t, i, off = P._ld_offsets(by_id[p], lambda: pytest.fail("the table was read"))
        table = cells(by_id[p])
        assert len(t) == len(table) > 0
        got = sorted(zip(t.tolist(), i.tolist(), map(tuple, off.tolist())))
        assert got == sorted((k[1], k[2], tuple(v[:2])) for k, v in table.items()), p
    dps = datapath_catalog()
    d = next(x for x in dps if x.layout == "D")
    b0, b1 = d.blocks[0], d.blocks[1]
    swapped = DataPath(d.layout, d.m, d.title, (
        type(b0)(b0.cta, b0.warp, b0.lanes, b0.tcols, b1.rows, b0.dcols, b0.src),
        type(b1)(b1.cta, b1.warp, b1.lanes, b1.tcols, b0.rows, b1.dcols, b1.src),
        *d.blocks[2:]), d.cta_group, d.ns)
    for x in (*dps, swapped):
        fast = P.prove_reads(DATAPATH_READS, [x], by_id, cells)
        with monkeypatch.context() as m:
            m.setattr(P, "_ld_offsets", lambda _ld, ld_cells: P._table_offsets(ld_cells()))
            assert P.prove_reads(DATAPATH_READS, [x], by_id, cells) == fast, x.layout
    refuted = P.prove_reads(DATAPATH_READS, [swapped], by_id, cells)
    assert refuted and {r.status for r in refuted} == {"refuted"}
    assert refuted[0].counterexample["want"] == [0, 0]


def test_intervals_answer_as_every_number_marked() -> None:
    """``disjoint`` and ``union_is_all`` (a run as an interval of numbers) give what marking
    every number of every run gives, on random runs with overlaps, gaps and exact tilings."""
    import numpy as np

    from formal.prove.datapath_keys import disjoint, union_is_all
    rng = np.random.default_rng(28)
    seen = {True: 0, False: 0}
    for trial in range(400):
        size = int(rng.integers(1, 60))
        if trial % 3 == 0:  # an exact tiling of [0, size), shuffled
            cuts = np.unique(np.concatenate([[0, size], rng.integers(0, size, 4)]))
            first, count = cuts[:-1], np.diff(cuts)
            perm = rng.permutation(len(first))
            first, count = first[perm], count[perm]
        else:
            k = int(rng.integers(0, 8))
            first = rng.integers(0, size, k)
            count = np.minimum(rng.integers(1, 9, k), size - first)
        marks = np.zeros(size, dtype=np.int64)
        for f, c in zip(first.tolist(), count.tolist()):
            marks[f:f + c] += 1
        assert disjoint(first, count) == bool((marks <= 1).all())
        assert union_is_all(first, count, size) == bool((marks >= 1).all())
        seen[bool((marks == 1).all())] += 1
    assert seen[True] > 50 and seen[False] > 50
    # the module's example: Layout E's third block moved to rows 32-63 at N = 64
    assert not disjoint(np.array([8192, 8224, 8224]), np.array([32, 32, 32]))
