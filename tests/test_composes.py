"""composes: producer -> consumer relations, proved by Z3 and re-checked by enumeration."""

from __future__ import annotations

import sympy as sp

from formal import catalog
from formal.model import build
from formal.model.algebra import COL, LANE, ROW, BitAnd, I
from formal.prove.composes import Arrangement, Relation, prove_relations
from formal.text.read import read_text

# A warpgroup accumulator of a 64 x 16 tile, as wgmma's m64nNk16 D (our own words).
WG = ("1.1. Matrix Fragments for mma.m64n16k16\n"
      "Accumulators (C or D):\n"
      ".ctype / .dtype Fragment Elements (low to high)\n"
      ".f32 A vector expression containing 8 .f32 registers, containing 8 .f32 "
      "elements from the matrix C (or D). c0, c1, ..., c7\n"
      "groupID           = %laneid >> 2\n"
      "threadID_in_group = %laneid % 4\n"
      "row = (%warpid * 16) + groupID + (8 * ((i >> 1) & 0x1))\n"
      "col = ((i >> 2) * 8) + (threadID_in_group * 2) + (i & 0x1)\n")

C16 = "mma.m16n8k16.CD.f32@f16-bf16-f64"


def _layouts():  # type: ignore[no-untyped-def]
    return build([read_text(WG, "wg.txt"), *catalog.documents()], []).layouts


def _warp_tiles(row_offset: object) -> Arrangement:
    return Arrangement("warp w's tile at rows 16w, repeated every 8 columns",
                       lane=sp.Mod(LANE, 32), element=BitAnd(I, 3),
                       row=ROW + row_offset, col=COL + 8 * sp.floor(I / 4))


def test_warpgroup_accumulator_is_four_warp_tiles() -> None:
    rel = Relation(C16, "mma.m64n16k16.CD.f32", _warp_tiles(16 * sp.floor(LANE / 32)))
    (v,) = prove_relations([rel], _layouts())
    assert v.status == "proved" and v.method == "z3+enumeration"


def test_a_missing_warp_offset_is_refuted_at_the_first_lane_of_warp_1() -> None:
    rel = Relation(C16, "mma.m64n16k16.CD.f32", _warp_tiles(sp.Integer(0)))
    (v,) = prove_relations([rel], _layouts(), letters={C16: "c", "mma.m64n16k16.CD.f32": "d"})
    assert v.status == "refuted"
    # lane 32 (warp 1, lane 0) d0 -- its register 0, one .f32 each -- holds row 16, col 0;
    # warp 0's c0 is row 0, col 0
    assert v.counterexample == {"lane": 32, "element": "d0", "register": 0,
                                "producer_lane": 0, "producer_element": "c0",
                                "consumer_cell": [16, 0], "producer_cell": [0, 0],
                                "arranged_cell": [0, 0]}


def test_k8_a_is_the_first_half_of_k16_a_and_not_the_other_way() -> None:
    k8, k16 = "mma.m16n8k8.A.f16-bf16", "mma.m16n8k16.A.f16-bf16"
    ok, back = prove_relations([Relation(k16, k8, Arrangement("first half of K")),
                                Relation(k8, k16, Arrangement("first half of K"))],
                               _layouts(), letters={k8: "a", k16: "a"})
    assert ok.status == "proved"
    assert back.status == "refuted"
    # lane 0 a4 of k16 (row 0, col 8) asks for k8's a4, which does not exist
    assert back.counterexample is not None
    assert back.counterexample["element"] == "a4"
    assert back.counterexample["producer_cell"] is None
    assert back.counterexample["consumer_cell"] == [0, 8]


def test_an_unknown_layout_is_not_checked() -> None:
    (v,) = prove_relations([Relation("nope", C16, Arrangement("x"))], _layouts())
    assert v.status == "error" and "no layout nope" in v.message


def test_a_layout_with_findings_is_not_checked() -> None:
    rel = Relation(C16, "mma.m64n16k16.CD.f32", _warp_tiles(16 * sp.floor(LANE / 32)))
    (v,) = prove_relations([rel], _layouts(), healthy=[C16])
    assert v.status == "error" and "mma.m64n16k16.CD.f32" in v.message
