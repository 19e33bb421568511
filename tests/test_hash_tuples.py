"""``cell_table_hash_of_tuples`` (formal/base/hashes.py) is ``cell_table_hash`` of the same rows
as dicts, to the bit: rows of integers by the one %-format, and a row holding a bool, a name or
a name as ``json.dumps`` writes it (a numpy integer refused, as there)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from formal.base.hashes import cell_table_hash, cell_table_hash_of_tuples

NAMES = ("sel", "row", "chunk", "lane", "column", "bit", "copy")


def _both(rows: list[tuple[object, ...]], names: tuple[str, ...] = NAMES) -> tuple[str, str]:
    dicts = [dict(zip(names, r, strict=True)) for r in rows]
    return (cell_table_hash("tcgen05.sp_meta", "m128", "x", "fields", dicts),
            cell_table_hash_of_tuples("tcgen05.sp_meta", "m128", "x", "fields", names, rows))


def test_rows_of_integers_hash_as_their_dicts() -> None:
    rng = random.Random(7)
    rows = [tuple(rng.randrange(-5, 300) for _ in NAMES) for _ in range(500)]
    want, got = _both(rows)
    assert got == want
    assert _both(rows[1:])[1] != got  # a row less is another table
    assert _both([(5,)], ("lane",)) == _both([(5,)], ("lane",))[:1] * 2  # one key


def test_a_row_of_other_values_is_written_as_json_writes_it() -> None:
    rows: list[tuple[object, ...]] = [(0, 1, 2, 3, 4, 5, 6), (0, True, 2, 3, 4, 5, 6),
                                      (0, 1, "b", 3, 4, 5, 6), (0, 1, 2, 3, 4, 5, 6.0)]
    want, got = _both(rows)
    assert got == want
    with pytest.raises(TypeError):  # as json.dumps refuses it in cell_table_hash
        cell_table_hash_of_tuples("i", "s", "o", "fields", NAMES, [(np.int64(3), 1, 2, 3, 4, 5, 6)])
    want, got = _both([(0, 1), (2, 3)], ("z\"%", "a"))  # keys json must quote, a % in one
    assert got == want


def test_addresses_are_written_as_each_with_its_semicolon() -> None:
    from formal.model.smem import addresses_text
    for addrs in ((), (0,), (0, 16, 8, -1, 1 << 40), (9, 10, 99, 100, 0, 1000, 7),
                  (10 ** 18 - 1, 3), (1 << 70, 5)):
        assert addresses_text(addrs) == "".join(f"{a};" for a in addrs)
        assert addresses_text(np.array(addrs, dtype=object if addrs and max(addrs) >> 62
                                       else np.int64)) == "".join(f"{a};" for a in addrs)
    rng = np.random.default_rng(28)
    for hi in (1, 10, 1000, 1 << 20, 1 << 40):
        a = rng.integers(0, hi, 500)
        assert addresses_text(a) == "".join(f"{x};" for x in a.tolist())


def test_every_catalog_smem_layouts_addresses_as_each_with_its_semicolon() -> None:
    """The shared-memory layouts' offsets and bit addresses, as numpy writes them, against
    the walk of each mode (the earlier modes fastest) and the text a join writes."""
    from formal import catalog
    from formal.model.cute import flat_modes
    from formal.model.smem import instances
    from formal.parse.smem import read_smem
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    sm = read_smem(text, "t")
    insts = [i for f in ("wgmma", "tcgen05") for i in instances(f, sm.canonical)]
    assert len(insts) == 48
    for inst in insts:
        lay = inst.layout
        out = [0]
        for extent, stride in flat_modes(lay.layout.shape, lay.layout.stride):
            out = [o + i * stride for i in range(extent) for o in out]
        assert lay.offsets == tuple(out)
        assert lay.bit_addresses == tuple(lay.bit_address(c) for c in
                                          ((j % lay.extent[0], j // lay.extent[0])
                                           for j in range(len(out))))
        assert lay.addresses_text == "".join(f"{a};" for a in lay.bit_addresses)


def test_each_catalog_scale_layout_hashes_as_its_rows() -> None:
    """A dict a row, hashed by ``cell_table_hash`` (the definition), against the hash the
    evidence and the exports name each tcgen05 scale
    layout by (``prove.tc_scale.tc_scale_hash``), for every such layout of the catalog."""
    from formal import catalog
    from formal.model.tc_scale import tc_scale_layouts
    from formal.parse.block_scale import read_block_scale
    from formal.prove.tc_scale import tc_scale_hash
    text = (catalog.CATALOG_DIR / "block-scale" / "tcgen05.md").read_text(encoding="utf-8")
    lays = tc_scale_layouts(read_block_scale(text, "t"))
    assert len(lays) == 82  # the 72 dense ones the runs place and 10 sparse
    for lay in lays:
        more = [(f, i) for f, i in (("cta", 5), ("half", 6))
                if lay.cta_group > 1 and lay.states(f)]
        names = ("sf_id", "row", "col", "lane", "column", "byte", *(f for f, _i in more))
        rows = [(s, *p[:5], *(p[i] for _f, i in more)) for s in lay.sf_ids for p in lay.placed(s)]
        dicts = [dict(zip(names, r, strict=True)) for r in rows]
        assert cell_table_hash("tcgen05.block_scale", lay.shape, lay.id, "places",
                               dicts) == tc_scale_hash(lay)
