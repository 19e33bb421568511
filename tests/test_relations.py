"""The relation table (formal/prove/relations.py), each row proved over stand-in layouts written in
the spec's pseudocode, and refuted with a counterexample when one side is edited."""

from __future__ import annotations

import dataclasses

import pytest

from formal import catalog
from formal.model import Formula, Layout, build
from formal.prove.composes import output_names, prove_relation
from formal.prove.relations import relation_table
from formal.text.read import read_text

# The moves' layouts as the catalog states them (cells: row address index, position in the
# row; .num matrices stacked), written as sections of a tile of the same size.
LD = ("8 * (i >> 1) + groupID", "2 * threadID_in_group + (i & 0x1)")
LD_T = ("8 * (i >> 1) + 2 * threadID_in_group + (i & 0x1)", "groupID")
# the sm_100a moves: ldmatrix .m16n16 .trans, .m8n16 and stmatrix .m16n8 .trans (8-bit)
LD16_T = ("16 * (i >> 3) + (threadID_in_group * 4) + (i & 0x3)",
          "groupID + 8 * ((i >> 2) & 0x1)")
LD816 = ("8 * (i >> 2) + groupID", "(threadID_in_group * 4) + (i & 0x3)")
ST168_T = ("8 * (i >> 2) + (threadID_in_group * 2) + (i & 0x1)",
           "groupID + 8 * ((i >> 1) & 0x1)")
WG = "(%warpid * 16) + groupID + "
STANDINS: dict[str, tuple[str, str, str, str, int]] = {
    "ldmatrix.m16n16.x2.trans.b8": ("m32n16k8", "C/D", *LD16_T, 16),
    "ldmatrix.m16n16.x2.trans.b8x16.b6x16_p32": ("m32n16k8", "C/D", *LD16_T, 16),
    "ldmatrix.m8n16.x4.b8x16.b6x16_p32": ("m32n16k8", "C/D", *LD816, 16),
    "ldmatrix.m8n16.x4.b8x16.b4x16_p64": ("m32n16k8", "C/D", *LD816, 16),
    "stmatrix.m16n8.x1.trans.b8": ("m8n16k8", "C/D", *ST168_T, 4),
    "ldmatrix.m8n8.x4.b16": ("m32n8k8", "C/D", *LD, 8),
    "ldmatrix.m8n8.x2.b16": ("m16n8k8", "C/D", *LD, 4),
    "ldmatrix.m8n8.x1.b16": ("m8n8k8", "C/D", *LD, 2),
    "ldmatrix.m8n8.x2.trans.b16": ("m16n8k8", "C/D", *LD_T, 4),
    "stmatrix.m8n8.x2.b16": ("m16n8k8", "C/D", *LD, 4),
    "movmatrix.m8n8.trans.b16.a": ("m8n8k8", "C/D", *LD, 2),
    "movmatrix.m8n8.trans.b16.d": ("m8n8k8", "C/D", *LD, 2),
    "wgmma.m64nNk16.A.f16-bf16": ("m64n8k16", "A", WG + "8 * ((i >> 1) & 0x1)",
                                  "(threadID_in_group * 2) + (i & 0x1) + 8 * (i >> 2)", 8),
    "wgmma.m64nNk8.A.tf32": ("m64n8k8", "A", WG + "8 * (i & 0x1)",
                             "threadID_in_group + 4 * (i >> 1)", 4),
    "wgmma.m64nNk32.A.s8-u8": ("m64n8k32", "A", WG + "8 * ((i >> 2) & 0x1)",
                               "(threadID_in_group * 4) + (i & 0x3) + 16 * (i >> 3)", 16),
    # stated for every N: the map at the largest, N = 256
    "wgmma.m64nNk16.D.f32": ("m64n256k16", "C/D", WG + "8 * ((i >> 1) & 0x1)",
                             "(threadID_in_group * 2) + (i & 0x1) + 8 * (i >> 2)", 128),
}


def standin(shape: str, operand: str, row: str, col: str, n: int) -> Layout:
    head = {"A": "Multiplicand A:", "C/D": "Accumulators (C or D):"}[operand]
    letter = {"A": "a", "C/D": "c"}[operand]
    text = (f"1.1. Matrix Fragments for mma.{shape}\n{head}\n"
            "groupID           = %laneid >> 2\nthreadID_in_group = %laneid % 4\n"
            f"row = {row}\ncol = {col}     for {letter}i where i = {{0,..,{n - 1}}}\n")
    model = build([read_text(text, "standin.txt")], [])
    assert not [f for f in model.findings if f.severity == "error"]
    (lay,) = model.layouts
    return lay


@pytest.fixture(scope="module")
def by_id() -> dict[str, Layout]:
    out = {lay.short_id: lay for lay in build(list(catalog.documents()), []).layouts}
    out.update({k: standin(*v) for k, v in STANDINS.items()})
    return out


@pytest.mark.parametrize("rel", relation_table(), ids=lambda r: f"{r.producer}->{r.consumer}")
def test_every_relation_is_proved(rel, by_id) -> None:  # type: ignore[no-untyped-def]
    v = prove_relation(rel, by_id)
    assert v.status == "proved", v.message


# Edit one side of each relation: (layout, formula, edited text) -> the counterexample's lane,
# element and consumer cell, computed by hand.
MUTATIONS = [
    # x4 .b16 A: the producer forgets the stacking (matrix q's rows all land on 0..7)
    ("ldmatrix.m8n8.x4.b16", "mma.m16n8k16.A.f16-bf16", "producer",
     ("groupID", LD[1]), {"lane": 0, "element": "a2", "consumer_cell": [8, 0]}),
    # .trans B: the producer's rows and columns swapped back (a non-transposed load)
    ("ldmatrix.m8n8.x2.trans.b16", "mma.m16n8k16.B.f16-bf16", "producer", LD,
     {"lane": 0, "element": "b1", "consumer_cell": [1, 0]}),
    # wgmma D: the consumer's warps 8 rows apart -> lane 32 d0 is row 8, not 16
    ("mma.m16n8k16.CD.f32@f16-bf16-f64", "wgmma.m64nNk16.D.f32", "consumer",
     ("(%warpid * 8) + groupID + 8 * ((i >> 1) & 0x1)",
      "(threadID_in_group * 2) + (i & 0x1) + 8 * (i >> 2)"),
     {"lane": 32, "element": "d0", "consumer_cell": [8, 0]}),
    # wgmma A: the consumer's columns of a4..a7 not shifted by 8
    ("mma.m16n8k16.A.f16-bf16", "wgmma.m64nNk16.A.f16-bf16", "consumer",
     (WG + "8 * ((i >> 1) & 0x1)", "(threadID_in_group * 2) + (i & 0x1)"),
     {"lane": 0, "element": "a4", "consumer_cell": [0, 0]}),
    # movmatrix: the result stated in the source's cells (transposed back): lane 0's d1 is
    # then (1, 0), where ldmatrix .x1 (the fragment the result must be) holds (0, 1)
    ("ldmatrix.m8n8.x1.b16", "movmatrix.m8n8.trans.b16.d", "consumer",
     ("2 * threadID_in_group + i", "groupID"),
     {"lane": 0, "element": "x1", "consumer_cell": [1, 0], "arranged_cell": [0, 1]}),
    # stmatrix of C: the source registers in the wrong order (matrix 1 first)
    ("mma.m16n8k16.CD.f16@f16-bf16-f64", "stmatrix.m8n8.x2.b16", "consumer",
     ("8 * (1 - (i >> 1)) + groupID", LD[1]), {"lane": 0, "element": "x0",
                                               "consumer_cell": [8, 0]}),
    # m16n16 .x2 .trans into the m16n8k32 B: the producer forgets its second matrix (rows
    # 16..31), so b4 of lane 0 -- B's (16, 0), d8 of the load -- is read from memory row 0
    ("ldmatrix.m16n16.x2.trans.b8", "mma.m16n8k32.B.s8-u8", "producer",
     ("(threadID_in_group * 4) + (i & 0x3)", LD16_T[1]),
     {"lane": 0, "element": "b4", "consumer_cell": [16, 0], "arranged_cell": [0, 0]}),
    # m8n16 .x4 into the f8f6f4 A: the consumer's a8..a15 not shifted by 16 columns: lane 0
    # a8 is then (0, 0), but the load's d8 is matrix 2's row 0, i.e. A's (0, 16)
    ("ldmatrix.m8n16.x4.b8x16.b6x16_p32", "mma.m16n8k32.A.e4m3-e5m2-e3m2-e2m3-e2m1",
     "consumer", ("groupID + 8 * ((i >> 2) & 0x1)", "(threadID_in_group * 4) + (i & 0x3)"),
     {"lane": 0, "element": "a8", "consumer_cell": [0, 0], "arranged_cell": [0, 16]}),
    # the accumulator stored column-major: a stmatrix whose e1 is the row 8 below (its
    # elements taken column-first): lane 0 a1 is then memory (0, 8), where D's c1 -- (0, 1)
    # -- belongs at memory (1, 0)
    ("mma.m16n8k32.CD.s32@s4-u4-s8-u8-e4m3-e5m2-e3m2-e2m3-e2m1", "stmatrix.m16n8.x1.trans.b8",
     "consumer", ("(threadID_in_group * 2) + ((i >> 1) & 0x1)", "groupID + 8 * (i & 0x1)"),
     {"lane": 0, "element": "a1", "consumer_cell": [0, 8], "arranged_cell": [1, 0]}),
]


@pytest.mark.parametrize("producer,consumer,side,edit,want", MUTATIONS,
                         ids=[f"{m[0]}->{m[1]}" for m in MUTATIONS])
def test_an_edit_gives_a_counterexample(producer, consumer, side, edit, want,  # type: ignore[no-untyped-def]
                                        by_id) -> None:
    rel = next(r for r in relation_table() if r.producer == producer and r.consumer == consumer)
    name = producer if side == "producer" else consumer
    shape, operand, _row, _col, n = STANDINS.get(name, ("", "", "", "", 0))
    if not shape:  # a catalog layout: edit through a stand-in of the same tile
        lay = by_id[name]
        shape, operand, n = str(lay.shape), lay.operand, lay.elements
    edited = dict(by_id)
    edited[name] = standin(shape, operand, edit[0], edit[1], n)
    v = prove_relation(rel, edited, letters={"mma.m16n8k16.A.f16-bf16": "a",
                                             "wgmma.m64nNk16.A.f16-bf16": "a",
                                             "mma.m16n8k16.B.f16-bf16": "b",
                                             "wgmma.m64nNk16.D.f32": "d",
                                             "mma.m16n8k32.B.s8-u8": "b",
                                             "mma.m16n8k32.A.e4m3-e5m2-e3m2-e2m3-e2m1": "a",
                                             "stmatrix.m16n8.x1.trans.b8": "a"})
    assert v.status == "refuted", v.message
    assert v.counterexample is not None
    got = {k: v.counterexample[k] for k in want}
    assert got == want, v.counterexample


def _shifted(lay: Layout) -> Layout:
    """The layout with every column one to the right (col + 1 in every case); a sparse A's
    first column (its lastcol stays), a metadata layout's chunk."""
    name = output_names(lay)[1]
    col = lay.formula(name)
    assert col is not None
    moved = Formula(name, tuple(dataclasses.replace(c, value=c.value + 1) for c in col.cases),
                    col.source)
    return dataclasses.replace(lay, formulas=tuple(moved if f.name == name else f
                                                   for f in lay.formulas))


@pytest.mark.parametrize("side", ["producer", "consumer"])
@pytest.mark.parametrize("rel", relation_table(), ids=lambda r: f"{r.producer}->{r.consumer}")
def test_every_relation_refuted_when_either_side_moves(rel, side, by_id) -> None:  # type: ignore[no-untyped-def]
    """Each side's columns moved by one: the relation fails at once, at lane 0 element 0,
    where the consumer's cell and the producer's arranged cell come one apart."""
    name = rel.producer if side == "producer" else rel.consumer
    edited = dict(by_id)
    edited[name] = _shifted(by_id[name])
    v = prove_relation(rel, edited)
    assert v.status == "refuted", v.message
    cex = v.counterexample
    assert cex is not None and cex["lane"] == 0 and cex["element"].endswith("0")
    before = prove_relation(rel, by_id)
    assert before.status == "proved"
    got, arranged = cex["consumer_cell"], cex["arranged_cell"]
    assert got != arranged
    if side == "consumer":  # the consumer moved: one column right of where it was
        assert got == [arranged[0], arranged[1] + 1, *arranged[2:]]
    else:  # the producer's cell moved one column right of the consumer's own
        assert cex["producer_cell"] is not None and got != arranged


def test_m16n16_x1_does_not_fill_the_m16n8k32_b_fragment(by_id) -> None:  # type: ignore[no-untyped-def]
    """Why the table loads B with .x2: one 16 x 16 matrix holds K rows 0..15 only, so the
    fragment's b4 (K row 16) would be the load's d8, which .x1 does not have."""
    from formal.prove.composes import Relation
    from formal.prove.relations import K_ROWS_BYTES

    edited = dict(by_id)
    edited["ldmatrix.m16n16.x1.trans.b8"] = standin("m16n16k8", "C/D", *LD16_T, 8)
    v = prove_relation(Relation("ldmatrix.m16n16.x1.trans.b8", "mma.m16n8k32.B.s8-u8",
                                K_ROWS_BYTES), edited)
    assert v.status == "refuted" and v.counterexample is not None
    assert (v.counterexample["lane"], v.counterexample["producer_element"]) == (0, "x8")
    assert v.counterexample["producer_cell"] is None  # outside the producer's elements
