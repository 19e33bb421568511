"""A layout's own map hash is written out only where a verdict reads it (prove/hardware.py's
``_Own``, ``Evidence.cells_of``): every catalog verdict is the same whether its hash was
written first or not; a layout whose variants' runs cannot speak to its map (tcgen05.ld/st:
only compiled-only runs; wgmma's D, judged at each run's N) is judged without it; and a
layout seen without its hash is still found by its hash when a verdict looks a table up."""

from __future__ import annotations

from formal.model.cells import cell_rows
from formal.model.resolve import catalog_model
from formal.prove.evidence import Evidence, default_dir


def _evidence() -> Evidence:
    folder = default_dir()
    assert folder is not None
    return Evidence.load(folder)


def test_every_catalog_verdict_is_the_same_with_its_hash_written_first_or_not() -> None:
    layouts = catalog_model(False).layouts
    lazy, eager = _evidence(), _evidence()
    for lay in layouts:
        eager.table_of(lay)  # every hash written before any verdict, as the judge once did
    assert [lazy.verdict(lay) for lay in layouts] == [eager.verdict(lay) for lay in layouts]
    unread = {lay.instruction for lay in layouts if lazy.hashed(lay) is None}
    assert {"tcgen05.ld", "tcgen05.st"} <= unread
    # every map a run packed or a discovery recovered is hashed: mma's, the moves' ...
    assert all(lazy.hashed(lay) == eager.hashed(lay) for lay in layouts
               if lay.instruction == "mma" and lazy.verdict(lay).status != "unconfirmed")
    stored = [lay for lay in layouts if lay.instruction == "tcgen05.ld"]
    assert stored and all(lazy.verdict(lay).status == "unconfirmed" for lay in stored)


def test_a_layout_seen_without_its_hash_is_found_by_it() -> None:
    lay = next(x for x in catalog_model(False).layouts if x.instruction == "tcgen05.ld")
    h = Evidence().table_of(lay)[2]
    ev = Evidence()
    kind, rows = ev.cells_of(lay)
    assert ev.hashed(lay) is None and len(rows) > 0
    assert ev.table(h) == cell_rows(lay) and ev.hashed(lay) == h
    assert kind == cell_rows(lay)[0]
    again = Evidence()
    again.remember(lay, None)  # a kept verdict that did not read the hash
    assert again.hashed(lay) is None and again.table(h) == cell_rows(lay)
    assert Evidence().table(h) is None  # (no layout seen, no source: none)
