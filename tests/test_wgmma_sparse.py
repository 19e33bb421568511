"""Sparse wgmma (``wgmma.mma_async.sp``): the sections read in three renderings (sections
written here in our own words, in the spec's Markdown form, and turned into the Sphinx HTML
page and a browser's plain text by tests/renderings.py), A and the metadata taken from the
catalog (the spec draws them only as figures), D by reference to the dense section, stated
once for every N, hand-computed cells, the k64 metadata sentence's one error, the relations
to the warp-level mma.sp fragments with a counterexample for an edit of either side, and the
variant table's PTX assembled by ptxas."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal import catalog
from formal.api import analyze
from formal.base.matrix_variants import (
    WGMMA_SP_VARIANTS,
    executed,
    variant,
    wgmma_sp_dtypes,
    wgmma_sp_variants,
)
from formal.execute import ptx
from formal.execute.ptx import ptxas_path
from formal.model import Layout, build
from formal.model.cells import map_of
from formal.prove.composes import prove_relation
from formal.prove.relations import WGMMA_SP_A, WGMMA_SP_D, relation_table
from formal.text.read import read_text

from . import renderings

LINK = "(#sparse-storage)"
NOTE = f"Mapping of the non-zero elements is as described in [Sparse matrix storage]{LINK}"


def _section(number: str, k: int, rows: list[tuple[str, str, str]], dense_k: int,
             metadata: str, figure: str, self_smem: bool = False) -> str:
    smem = (f"[Matrix Fragments for sparse wgmma.mma_async.m64nNk{k}](#here)" if self_smem
            else "[Shared Memory Matrix Layout](#smem)")
    table_rows = "\n".join(f"  > | `{t}` | {frag} | {els} |" for t, frag, els in rows)
    return f"""###### {number}. [Matrix Fragments for sparse `wgmma.mma_async.m64nNk{k}`](#x{k})

A warpgroup running sparse `wgmma.mma_async.m64nNk{k}` computes a product of shape
`.m64nNk{k}`, N being one of the legal n dimensions.

Each of the 128 threads of the warpgroup keeps a part of every matrix.

* Multiplicand A, from shared memory is documented in {smem}.
* Multiplicand A, from registers:

  > | .atype | Fragments | Elements |
  > | --- | --- | --- |
{table_rows}
  >
  > ![_images/sparse-wgmma-64N{k}-A.png](_images/sparse-wgmma-64N{k}-A.png)
* Accumulator D:

  Matrix fragments for accumulator D are the same as in case of
  [Matrix Fragments for wgmma.mma_async.m64nNk{dense_k}](#dense{dense_k})
  for the same `.dtype` format.
* Multiplicand B:

  Shared memory layout for Matrix B is documented in {smem}.
* {metadata}

  [Figure 9](#meta{k}) draws which metadata bits index which elements of A for one warp.

  > ![_images/{figure}](_images/{figure})
"""


def _frag(regs: str, per: str, types: str, out_of: str) -> str:
    return (f"A vector expression of {regs} `.b32` registers, each register holding {per} "
            f"non-zero {types} elements out of {out_of} consecutive elements from matrix A.")


K32 = _section("7.6.1", 32, [(
    ".f16` / `.bf16", _frag("four", "two", "`.f16` /`.bf16`", "4"),
    f"Non-zero elements: a0, a1, a2, a3, a4, a5, a6, a7 {NOTE}")], 32,
    "Metadata operand is a `.b32` register containing 16 2-bit vectors each storing the "
    "index of a non-zero element of a 4-wide chunk of matrix A.",
    "sparse-mma-metadata-16832-f16bf16.png")
K16 = _section("7.6.2", 16, [(
    ".tf32", "A vector expression of four `.b32` registers, holding four non-zero `.tf32` "
    "elements out of eight consecutive elements from matrix A.",
    f"Non-zero elements: a0, a1, a2, a3 {NOTE}")], 8,
    "Metadata operand is a `.b32` register containing eight 4-bit vectors each storing the "
    "index of a non-zero element of a 2-wide chunk of matrix A.",
    "sparse-mma-metadata-16816-tf32.png")
# the k64 sentence as the spec words it: 16 vectors of 4 bits (64 bits) in one .b32
K64_META = ("Metadata operand is a `.b32` register containing 16 4-bit vectors each storing "
            "the indices of two non-zero elements of a 4-wide chunk of matrix A.")
K64 = _section("7.6.3", 64, [
    (".e4m3` / `.e5m2", _frag("four", "four", "`.e4m3` /`.e5m2`", "eight"),
     f"Non-zero elements: a0, a1, a2, … , a15 {NOTE}"),
    (".s8` / `.u8", _frag("four", "four", "`.s8` /`.u8`", "eight"), "")], 32, K64_META,
    "sparse-mma-metadata-16864-u8s8-first32col.png", self_smem=True)
DOC = "# 7.6. Sparse warpgroup fragments\n\n" + K32 + "\n" + K16 + "\n" + K64


def _run(text: str, suffix: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    p = tmp_path / f"sparse{suffix}"
    p.write_text(text, encoding="utf-8")
    return analyze([p])


def _renderings() -> list[tuple[str, str, str]]:
    return [("markdown", DOC, ".md"), ("sphinx", renderings.sphinx(DOC).text, ".html"),
            ("browser", renderings.browser(DOC).text, ".txt")]


@pytest.mark.parametrize("name,text,suffix", _renderings(), ids=lambda x: str(x)[:8])
def test_every_rendering_reads_to_the_same_layouts_and_the_one_error(
        name: str, text: str, suffix: str, tmp_path: Path) -> None:
    run = _run(text, suffix, tmp_path)
    lays = {x.short_id: x for x in run.model.layouts}
    assert sorted(lays) == [
        "wgmma.sp.m64nNk16.A.tf32", "wgmma.sp.m64nNk16.D.f32", "wgmma.sp.m64nNk16.meta.tf32",
        "wgmma.sp.m64nNk32.A.f16-bf16", "wgmma.sp.m64nNk32.D.f16", "wgmma.sp.m64nNk32.D.f32",
        "wgmma.sp.m64nNk32.meta.f16-bf16", "wgmma.sp.m64nNk64.A.e4m3-e5m2",
        "wgmma.sp.m64nNk64.A.s8-u8", "wgmma.sp.m64nNk64.D.f16", "wgmma.sp.m64nNk64.D.f32",
        "wgmma.sp.m64nNk64.D.s32", "wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8"]
    # A and the metadata are figures: the catalog's formulas, over 128 threads
    a = lays["wgmma.sp.m64nNk32.A.f16-bf16"]
    assert (a.source, a.reference_of, a.lanes, a.elements) == \
        ("catalog", "catalog:wgmma.sp.m64nNk32.A.f16-bf16", 128, 8)
    meta = lays["wgmma.sp.m64nNk16.meta.tf32"]
    assert meta.source == "catalog" and meta.metadata is not None
    assert meta.metadata.selectors == (0, 1) and meta.elements == 16  # 8 x 4 bits = 16 x 2
    # D: the dense section's, still once for every N; .s32 only where the A types allow it
    d = lays["wgmma.sp.m64nNk32.D.f32"]
    assert (d.source, d.reference_of) == ("reference", "catalog:wgmma.m64nNk32.D.f32")
    assert d.n_values == tuple(range(8, 257, 8)) and d.shape_text == "m64nNk32"
    at = d.at(24)
    assert (at.short_id, at.elements, at.tile) == ("wgmma.sp.m64n24k32.D.f32", 12, (64, 24))
    assert lays["wgmma.sp.m64nNk64.D.s32"].n_values == (8, 16, 24) + tuple(range(32, 257, 16))
    errors = [f for f in run.proof.findings if f.severity == "error"]
    # exactly one error: the k64 metadata sentence's 16 vectors of 4 bits in one .b32
    assert [(f.kind, f.layout.split(":")[1], f.message) for f in errors] == [
        ("register-budget", "wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8",
         "16 fields of 4 bits need 64 bits; a .b32 register has 32")]
    assert errors[0].counterexample == {"fields": 16, "field_bits": 4}
    res = {r.layout.short_id: r for r in run.proof.results}
    k64 = {v.name: v.status for v in res["wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8"].verdicts}
    # the map (the catalog's: 16 two-bit indices) is proved; only the sentence is wrong
    assert k64["metadata-coverage"] == k64["selector-range"] == k64["injective"] == "proved"
    # the k64 section sends A's and B's shared-memory layout to itself: a warning each
    selfref = [f for f in run.proof.findings if f.kind == "reference"]
    assert [f.message.split(" is ")[0] for f in selfref] == [
        "the shared-memory layout of A", "the shared-memory layout of B"]
    assert all(f.severity == "warning" for f in selfref)


# ---- cells, computed by hand -----------------------------------------------------------------


@pytest.fixture(scope="module")
def cat() -> dict[str, Layout]:
    return {x.short_id: x for x in build(list(catalog.documents()), []).layouts}


def _cells(lay: Layout) -> dict[tuple[int, int, int], tuple[int, ...]]:
    m = map_of(lay)
    assert m is not None
    return m.table()


def test_sparse_a_cells(cat: dict[str, Layout]) -> None:
    k32 = _cells(cat["wgmma.sp.m64nNk32.A.f16-bf16"])
    # thread 37: warp 1, lane 5 -> groupID 1, threadID_in_group 1
    assert k32[(0, 37, 0)] == (17, 4, 7)  # a0: row 16 + 1, chunk [4..7]
    assert k32[(0, 37, 2)] == (25, 4, 7)  # a2: row 16 + 1 + 8
    assert k32[(0, 37, 5)] == (17, 20, 23)  # a5: the second 16 columns
    tf32 = _cells(cat["wgmma.sp.m64nNk16.A.tf32"])
    # thread 100: warp 3, lane 4 -> groupID 1, threadID_in_group 0; a3: row 48 + 1 + 8
    assert tf32[(0, 100, 3)] == (57, 8, 9)
    k64 = _cells(cat["wgmma.sp.m64nNk64.A.s8-u8"])
    # thread 127: warp 3, lane 31 -> groupID 7, threadID_in_group 3; a15: row 63, cols 56..63
    assert k64[(0, 127, 15)] == (63, 56, 63)


def test_metadata_cells_and_holders(cat: dict[str, Layout]) -> None:
    lay = cat["wgmma.sp.m64nNk32.meta.f16-bf16"]
    m = map_of(lay)
    assert m is not None
    t = m.table()
    # selector 1, thread 34 (warp 1, lane 2: groupID 0, threadID_in_group 2) holds
    # metadata; its field 9 (bits 19..18) is row 16 + 8, chunk 0, slot 1
    assert t[(1, 34, 9)] == (24, 0, 1)
    assert m.holder_fn(34, 0, 1) and not m.holder_fn(34, 0, 0)
    # thread 35 (threadID_in_group 3): field 2 is row 16, chunk 1 + 4
    assert t[(1, 35, 2)] == (16, 5, 0)
    k64 = map_of(cat["wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8"])
    assert k64 is not None
    # thread 67 (warp 2, lane 3: groupID 0, threadID_in_group 3), field 5: row 32 + 8,
    # chunk 2 + 8, slot 1; every thread holds metadata (selector 0 only)
    assert k64.table()[(0, 67, 5)] == (40, 10, 1)
    assert all(k64.holder_fn(x, 0, 0) for x in range(128)) and k64.selectors == (0,)


# ---- relations: proved, and an edit of either side refuted ----------------------------------


def test_the_sparse_relations_are_in_the_table_and_proved(cat: dict[str, Layout]) -> None:
    rows = [r for r in relation_table() if ".sp." in r.consumer and r.consumer.startswith("wgmma")]
    assert len(rows) == len(WGMMA_SP_A) + len(WGMMA_SP_D) == 13
    for r in rows:
        v = prove_relation(r, cat)
        assert v.status == "proved", (r.consumer, v.message)


def _edited(doc: str, old: str, new: str, nth: int = 1) -> dict[str, Layout]:
    """The catalog with one formula of ``doc`` edited (its ``nth`` occurrence)."""
    docs = []
    for d in catalog.documents():
        if d.name == f"catalog/{doc}":
            text = (catalog.CATALOG_DIR / doc).read_text(encoding="utf-8")
            at = -1
            for _ in range(nth):
                at = text.index(old, at + 1)
            d = read_text(text[:at] + new + text[at + len(old):], f"catalog/{doc}")
        docs.append(d)
    return {x.short_id: x for x in build(docs, []).layouts}


LETTERS = {"mma.sp.m16n8k32.A.f16-bf16": "a", "wgmma.sp.m64nNk32.A.f16-bf16": "a",
           "mma.sp.m16n8k32.meta.f16-bf16": "m", "wgmma.sp.m64nNk32.meta.f16-bf16": "m",
           "mma.sp.m16n8k16.meta.tf32": "m", "wgmma.sp.m64nNk16.meta.tf32": "m",
           "mma.sp.m16n8k64.meta.u8-s8-e4m3-e5m2-e3m2-e2m3-e2m1": "m",
           "wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8": "m"}
W = "(%warpid * 16) + groupID"

# (consumer, file, old text, new text, occurrence) -> the counterexample, by hand
EDITS = [
    # k32 A: a4..a7 16 -> 20 columns on: lane 0 a4 (register 2) is [0, 20, 23]; the
    # mma.sp m16n8k32 a4 of lane 0 is [0, 16, 19]
    ("wgmma.sp.m64nNk32.A.f16-bf16", "wgmma-sparse.md", "(threadID_in_group * 4) + 16",
     "(threadID_in_group * 4) + 20", 1,
     {"lane": 0, "element": "a4", "register": 2, "consumer_cell": [0, 20, 23],
      "arranged_cell": [0, 16, 19]}),
    # k16 .tf32 A: the rows of a0/a2 and a1/a3 swapped: lane 0 a0 is row 8
    ("wgmma.sp.m64nNk16.A.tf32", "wgmma-sparse.md",
     f"{W}        for a0 and a2\n          {W} + 8    for a1 and a3",
     f"{W} + 8    for a0 and a2\n          {W}        for a1 and a3", 1,
     {"lane": 0, "element": "a0", "register": 0, "consumer_cell": [8, 0, 1],
      "arranged_cell": [0, 0, 1]}),
    # k64 A (both type rows): a8..a15 40 columns on: lane 0 a8, register 2 (four a register)
    ("wgmma.sp.m64nNk64.A.s8-u8", "wgmma-sparse.md", "(threadID_in_group * 8) + 32",
     "(threadID_in_group * 8) + 40", 1,
     {"lane": 0, "element": "a8", "register": 2, "consumer_cell": [0, 40, 47],
      "arranged_cell": [0, 32, 39]}),
    ("wgmma.sp.m64nNk64.A.e4m3-e5m2", "wgmma-sparse.md", "(threadID_in_group * 8) + 32",
     "(threadID_in_group * 8) + 40", 1,
     {"lane": 0, "element": "a8", "register": 2, "consumer_cell": [0, 40, 47],
      "arranged_cell": [0, 32, 39]}),
    # k32 metadata: the holders inverted: for selector 0 lane 0 no longer supplies field 0
    # (bits 1..0); mma.sp's lane 0 does (the last output: holder 0 vs 1)
    ("wgmma.sp.m64nNk32.meta.f16-bf16", "wgmma-sparse.md",
     "holder = threadID_in_group >> 1 == selector",
     "holder = threadID_in_group >> 1 != selector", 1,
     {"selector": 0, "lane": 0, "element": "m0", "register": 0, "bits": [1, 0],
      "consumer_cell": [0, 0, 0, 0], "arranged_cell": [0, 0, 0, 1]}),
    # k16 metadata: the second four chunks by threadID_in_group >> 1: lane 1's field 0
    # describes chunk 0, mma.sp's lane 1 chunk 4
    ("wgmma.sp.m64nNk16.meta.tf32", "wgmma-sparse.md", "4 * (threadID_in_group & 0x1)",
     "4 * (threadID_in_group >> 1)", 2,
     {"selector": 0, "lane": 1, "element": "m0", "register": 0, "bits": [1, 0],
      "consumer_cell": [0, 0, 0, 1], "arranged_cell": [0, 4, 0, 1]}),
    # k64 metadata: chunks 4 (not 8) on for threadID_in_group 2, 3: lane 2 field 0
    ("wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8", "wgmma-sparse.md",
     "(i >> 1) + 8 * (threadID_in_group >> 1)", "(i >> 1) + 4 * (threadID_in_group >> 1)", 1,
     {"selector": 0, "lane": 2, "element": "m0", "register": 0, "bits": [1, 0],
      "consumer_cell": [0, 4, 0, 1], "arranged_cell": [0, 8, 0, 1]}),
] + [
    # every sparse D is the dense D: warps 8 rows apart there -> thread 32's d0 (warp 1,
    # lane 0, register 0) is row 8; mma.sp's c0 of lane 0 lands at row 16 in warp 1's tile
    (f"wgmma.sp.m64nN{k}.D.{t}", "wgmma.md",
     "(%warpid * 16) + groupID + 8 * ((i >> 1) & 0x1)\n  col =   (threadID_in_group * 2)",
     "(%warpid * 8) + groupID + 8 * ((i >> 1) & 0x1)\n  col =   (threadID_in_group * 2)", n,
     {"lane": 32, "element": "d0", "register": 0, "consumer_cell": [8, 0],
      "arranged_cell": [16, 0]})
    # the n-th block of wgmma.md with this text: k16's A is the 1st, its D the 2nd, k8's D
    # the 3rd, k32's D the 4th
    for k, t, n in (("k32", "f32", 4), ("k32", "f16", 4), ("k16", "f32", 3), ("k64", "s32", 4),
                    ("k64", "f32", 4), ("k64", "f16", 4))
]


@pytest.mark.parametrize("consumer,doc,old,new,nth,want", EDITS,
                         ids=[f"{e[0]}" for e in EDITS])
def test_an_edit_of_the_consumer_gives_a_counterexample(consumer, doc, old, new, nth, want,  # type: ignore[no-untyped-def]
                                                        cat) -> None:
    rel = next(r for r in relation_table() if r.consumer == consumer)
    edited = _edited(doc, old, new, nth)
    assert prove_relation(rel, cat).status == "proved"
    v = prove_relation(rel, edited, letters={**LETTERS, rel.consumer: LETTERS.get(
        rel.consumer, "a" if ".A." in rel.consumer else "d")})
    assert v.status == "refuted", v.message
    assert v.counterexample is not None
    assert {k: v.counterexample[k] for k in want} == want, v.counterexample


@pytest.mark.parametrize("producer,doc,old,new,want", [
    # the mma.sp m16n8k32 A with a4..a7 at + 8: wgmma's thread 0 a4 reads lane 0 a4 at
    # [0, 8, 11]; the warpgroup's formulas give [0, 16, 19]
    ("mma.sp.m16n8k32.A.f16-bf16", "sparse.md", "(threadID_in_group * 4) + 16",
     "(threadID_in_group * 4) + 8", {"lane": 0, "element": "a4", "consumer_cell": [0, 16, 19],
                                     "arranged_cell": [0, 8, 11]}),
    # the mma.sp m16n8k64 metadata's slot flipped: field 0 of lane 0 is slot 1 there
    ("mma.sp.m16n8k64.meta.u8-s8-e4m3-e5m2-e3m2-e2m3-e2m1", "sparse.md",
     "(i >> 1) + 8 * (threadID_in_group >> 1)\n  slot  =   i & 0x1",
     "(i >> 1) + 8 * (threadID_in_group >> 1)\n  slot  =   1 - (i & 0x1)",
     {"selector": 0, "lane": 0, "element": "m0", "bits": [1, 0],
      "consumer_cell": [0, 0, 0, 1], "arranged_cell": [0, 0, 1, 1]}),
])
def test_an_edit_of_the_producer_gives_a_counterexample(producer, doc, old, new, want,  # type: ignore[no-untyped-def]
                                                        cat) -> None:
    rel = next(r for r in relation_table() if r.producer == producer)
    v = prove_relation(rel, _edited(doc, old, new), letters=LETTERS)
    assert v.status == "refuted", v.message
    assert v.counterexample is not None
    assert {k: v.counterexample[k] for k in want} == want, v.counterexample


# ---- variants and PTX ------------------------------------------------------------------------


def test_the_variant_table() -> None:
    v = variant("wgmma.sp.m64n64k32.f32.bf16.bf16.rs.sel1")
    assert v.opcode == "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16"
    # A: 64 x 32 of which half is stored, 16 .bf16 a thread in 4 words; D 64 x 64 / 128
    assert (v.elements("A"), v.words("A"), v.words("D"), v.selector) == (8, 4, 32, 1)
    assert not executed(v) and v.target == "sm_90a" and v.ptx == (8, 2)
    every = wgmma_sp_variants()
    # selectors: 0 and 1 for .f16 / .bf16 / .tf32, 0 for the 8-bit types
    assert {x.selector for x in every if x.a == "tf32"} == {0, 1}
    assert {x.selector for x in every if x.a == "s8"} == {0}
    assert {x.k for x in every} == {16, 32, 64}
    assert wgmma_sp_dtypes(32, ("f16",)) == ("f16", "f32")
    assert wgmma_sp_dtypes(64, ()) == ("f16", "f32", "s32")
    assert len(WGMMA_SP_VARIANTS) == 120


@pytest.mark.ptxas
@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not on PATH")
def test_every_sparse_wgmma_kernel_assembles_for_sm_90a() -> None:
    picks = [v for v in WGMMA_SP_VARIANTS if v.n in (8, 256)]
    res = ptx.check(picks, ["sm_90a"])
    assert [(r.variant.key, r.detail[:200]) for r in res if r.status != "ok"] == []
    text = ptx.module(variant("wgmma.sp.m64n8k16.f32.tf32.tf32.rs.sel1")).text
    # the metadata register and the selector as an immediate, after the B descriptor
    assert "%desc_b, %meta, 1, %p_d, 1, 1;" in text


def test_an_escaped_underscore_in_a_link_is_the_underscore(tmp_path: Path) -> None:
    """Markdown mirrors escape the name inside the link (``wgmma.mma\\_async``): the link
    text is read with the escape undone, so the reference resolves."""
    run = _run(K32.replace("[Matrix Fragments for wgmma.mma_async",
                           "[Matrix Fragments for wgmma.mma\\_async"), ".md", tmp_path)
    assert [f.message for f in run.proof.findings if f.severity == "error"] == []
    d = next(x for x in run.model.layouts if x.short_id == "wgmma.sp.m64nNk32.D.f32")
    assert d.reference_of == "catalog:wgmma.m64nNk32.D.f32"
