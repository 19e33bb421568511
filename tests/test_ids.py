"""A layout's id is a value (``formal.base.ids.LayoutId``): it prints itself exactly as the ids
have always been spelled, and ``parse`` reads every id back into its parts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from formal.base.ids import LayoutId, MoveInstr
from formal.model.resolve import catalog_model


def test_every_catalog_id_reads_back_into_its_parts() -> None:
    ids = [lay.id for lay in catalog_model().layouts]
    assert len(ids) > 100
    for text in ids:
        lid = LayoutId.parse(text)
        assert str(lid) == text
        assert lid.document == "catalog" and lid.instruction, text
    by = {lid.short: lid for lid in map(LayoutId.parse, ids)}
    cd = by["mma.m16n8k16.CD.f16@f16-bf16-f64"]
    assert (cd.instruction, cd.shape, cd.operand, cd.types, cd.for_types) == \
        ("mma", "m16n8k16", "CD", ("f16",), ("f16", "bf16", "f64"))
    mov = by["movmatrix.m8n8.trans.b16.a"]
    assert (mov.instruction, mov.shape, mov.operand, mov.types, mov.tail) == \
        ("movmatrix", "m8n8.trans", "", ("b16",), "a")
    packed = by["ldmatrix.m8n16.x2.b8x16.b6x16_p32"]
    assert packed.types == ("b8x16.b6x16_p32",) and packed.shape == "m8n16.x2"


@pytest.mark.parametrize(("lid", "text"), [
    (LayoutId.register("catalog", "mma", "m16n8k16", "A", ("f16", "bf16")),
     "catalog:mma.m16n8k16.A.f16-bf16"),
    (LayoutId.register("seed", "mma", "m8n8k4", "B", ("f16",), "row"),
     "seed:mma.m8n8k4.B.f16.row"),
    (LayoutId.register("catalog", "wgmma.sp", "m64nNk32", "C/D", ("f32",)),
     "catalog:wgmma.sp.m64nNk32.D.f32"),
    (LayoutId.register("doc", "mma.sp", "m16n8k32", "metadata", ()),
     "doc:mma.sp.m16n8k32.meta.any"),
    (replace(LayoutId.register("doc", "mma", "m16n8k64", "C/D", ("s32",)),
             for_types=("s4", "u4"), copy=2), "doc:mma.m16n8k64.CD.s32@s4-u4#2"),
    (LayoutId.move("catalog", MoveInstr("ldmatrix", 8, 8, 4, True, "b16")),
     "catalog:ldmatrix.m8n8.x4.trans.b16"),
])
def test_an_id_prints_as_it_always_did_and_parses_back(lid: LayoutId, text: str) -> None:
    assert str(lid) == text
    assert LayoutId.parse(text) == lid


def test_an_id_of_no_known_family_keeps_its_text() -> None:
    lid = LayoutId.parse("doc:cp.async.bulk.x2@a#3")
    assert (lid.document, lid.instruction, lid.shape, lid.for_types, lid.copy) == \
        ("doc", "", "cp.async.bulk.x2", ("a",), 3)
    assert str(lid) == "doc:cp.async.bulk.x2@a#3"
    assert LayoutId.parse("seed:mma.m8n8k4.A.f16.row").arrangement == "row"
    assert LayoutId.parse("seed:mma.m8n8k4.A.f16").arrangement == ""
