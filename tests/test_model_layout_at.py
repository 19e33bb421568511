"""``Layout.at(n)`` (a layout stated for every N, at one N) is the very layout
``dataclasses.replace`` makes: every field equal, none of the memos of the layout it came
from, and its id, table and shape those of that N."""

from __future__ import annotations

from dataclasses import fields, replace

from formal.base.ids import LayoutId
from formal.model.cells import map_of
from formal.model.layout import Layout
from formal.model.resolve import catalog_model


def test_every_layout_at_every_n_is_replaces() -> None:
    assert all(f.init for f in fields(Layout)) and not hasattr(Layout, "__post_init__")
    layouts = [lay for lay in catalog_model(False).layouts if lay.n_values]
    assert len(layouts) >= 13
    checked = 0
    for lay in layouts:
        map_of(lay)
        lay.formula_hash()  # memos in the layout's __dict__: never copied
        lid = LayoutId.parse(lay.id)
        for n in lay.n_values:
            shape = replace(lay.shape, n=n)
            want = replace(lay, shape=shape, n_values=(), shape_name="",
                           table=lay.table.at(n) if lay.table is not None else None,
                           id=str(replace(lid, shape=str(shape)))
                           if lid.shape == lay.shape_text else lay.id)
            got = lay.at(n)
            assert type(got) is Layout and got == want and hash(got) == hash(want)
            assert {f.name: getattr(got, f.name) for f in fields(Layout)} == \
                {f.name: getattr(want, f.name) for f in fields(Layout)}
            assert {f.name for f in fields(Layout)} <= set(got.__dict__)
            assert got.elements == want.elements and got.short_id == want.short_id
            assert lay.at(n) is got  # once per layout object and N
            checked += 1
        # made from the fields alone: none of the memos the layout keeps (its map, its
        # formula hash, its layouts at each N) comes with it
        fresh = lay._with(n_values=())
        assert set(fresh.__dict__) == {f.name for f in fields(Layout)}
        assert fresh == replace(lay, n_values=()) and "_ptxlayout_at" in lay.__dict__
    assert checked > 300
