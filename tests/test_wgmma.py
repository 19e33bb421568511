"""wgmma register fragments: the warpgroup sections read in the spec's renderings (synthetic
sections in our own words, built the way the spec's Markdown and plain text are), each
figure-only layout taken from the catalog, and the ``composes`` relations reported in every
format -- a refuted one as an error finding with its hand-computed counterexample."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from formal.api import analyze, model_of
from formal.model import build
from formal.prove import Options, prove
from formal.text.read import read_text
from formal.writers.report import render

D_LIST = ("d0, d1, d2, d3, …, dX, dY, dZ, dW<br>where X = N/2 - 4<br>Y = N/2 - 3<br>"
          "Z = N/2 - 2<br>W = N/2 - 1<br>")
ALL_N = "N = 8\\*i where i = {1, 2, ... , 32}"
VEC = "A vector expression containing"
A_CELL = (f"{VEC} four `.f16x2` registers, with each register containing two `.f16`/ `.bf16` "
          "elements from matrix A.")
F16_CELL = (f"{VEC} N/4 number of `.f16x2` registers, with each register containing two "
            "`.f16` elements from matrix D.")
S32_N = "N = 8\\*i where i = {1, 2, 3, 4}<br>= 16\\*i where i = {3, 4, ..., 15, 16}"
S32_LIST = f"{D_LIST}N depends on `.dtype`, as the next column says."
ONE_N = ("d0, d1, d2, d3, ..., dX, dY, dZ, dW where X = N/2 - 4, Y = N/2 - 3, Z = N/2 - 2, "
         "W = N/2 - 1, N = 8 * i where i = {1}")

# Markdown as the spec renders it: bold operand headings, tables, figures and no pseudocode.
MARKDOWN = f"""# 1.2.3. Warpgroup register fragments

### 1.2.3.1. Matrix Fragments for wgmma.mma_async.m64nNk16

Here a warpgroup of 128 threads shares the fragment.

**Multiplicand A in registers:**

| `.atype` | Fragment | Elements (low to high) |
|----------|----------|------------------------|
| `.f16`/`.bf16` | {A_CELL} | a0, a1, a2, a3, a4, a5, a6, a7 |

![the A fragment](a.png)

**Accumulator D:**

| `.dtype` | Fragment | Elements (low to high) |
|----------|----------|------------------------|
| `.f16` | {F16_CELL} | {D_LIST}{ALL_N} |
| `.f32` | A vector expression containing N/2 number of `.f32` registers. | |

### 1.2.3.2. Matrix Fragments for wgmma.mma_async.m64nNk32

**Accumulator D:**

| `.dtype` | Fragment | Elements (low to high) | Legal N |
|----------|----------|------------------------|---------|
| `.s32` | {VEC} N/2 number of `.s32` registers. | {S32_LIST} | {S32_N} |
| `.f32` | A vector expression containing N/2 number of `.f32` registers. | | {ALL_N} |
"""


def test_markdown_sections_read_with_no_error(tmp_path: Path) -> None:
    p = tmp_path / "wgmma.md"
    p.write_text(MARKDOWN, encoding="utf-8")
    run = analyze([p])
    assert [f.message for f in run.proof.findings if f.fails] == []
    # the two .f32 rows leave the element list empty (the spec's HTML spans one cell over
    # both rows; this Markdown does not): a warning each, their budget checked anyway
    assert sorted((f.kind, f.layout.split(":")[1]) for f in run.proof.findings) == [
        ("element-list", "wgmma.m64nNk16.D.f32"), ("element-list", "wgmma.m64nNk32.D.f32")]
    lays = run.model.layouts
    # A once, each accumulator row once for all its N: k16 .f16 and .f32, k32 .s32 and .f32
    assert sorted(x.short_id for x in lays) == [
        "wgmma.m64nNk16.A.f16-bf16", "wgmma.m64nNk16.D.f16", "wgmma.m64nNk16.D.f32",
        "wgmma.m64nNk32.D.f32", "wgmma.m64nNk32.D.s32"]
    assert all(r.ok for r in run.proof.results)
    a = next(x for x in lays if x.operand == "A")
    assert a.short_id == "wgmma.m64nNk16.A.f16-bf16" and a.source == "catalog"
    assert a.reference_of == "catalog:wgmma.m64nNk16.A.f16-bf16" and a.lanes == 128
    s32 = next(x for x in lays if x.types == ("s32",))
    assert s32.n_values == (8, 16, 24, 32) + tuple(range(48, 257, 16))
    assert s32.shape.n == 256 and s32.elements == 128 and s32.shape_text == "m64nNk32"
    d = s32.at(24)
    assert d.short_id == "wgmma.m64n24k32.D.s32" and d.elements == 12 and d.tile == (64, 24)
    assert d.table is not None and d.table.fragment is not None
    assert d.table.fragment.registers.value == 12  # N/2 at N = 24
    assert d.table.elements is not None
    names = [it.text for it in d.table.elements.items if it.kind == "name"]
    assert names == ["d0", "d1", "d2", "d3", "d8", "d9", "d10", "d11"]


def test_a_wrong_register_count_in_n_is_refuted(tmp_path: Path) -> None:
    p = tmp_path / "wgmma.md"
    p.write_text(MARKDOWN.replace("N/4 number of", "N/8 number of"), encoding="utf-8")
    run = analyze([p])
    errs = [f for f in run.proof.findings if f.fails]
    # one error, on the .f16 row stated for every N, naming the first N it fails at:
    # N/8 = 1 register of two elements at N = 8, which needs 4 a thread
    assert [(f.kind, f.layout) for f in errs] == [("register-budget",
                                                   "wgmma:wgmma.m64nNk16.D.f16")]
    assert errs[0].message == ("at N = 8: N/8 register x two elements = 2, but the 64 x 8 "
                               "tile needs 4 per lane")


def test_a_map_that_fits_only_the_largest_n_is_refuted_at_the_first_n(tmp_path: Path) -> None:
    """At N = 256 the columns 8 * (i >> 2) reversed still tile 64 x 256, but at N = 8
    thread 0's d0 lands in column 248: outside the 64 x 8 tile."""
    p = tmp_path / "wgmma.md"
    p.write_text(SWAPPED.replace("+ 8 * (i >> 2)", "+ 8 * (31 - (i >> 2))").replace(
        "8 * (i & 0x1)", "8 * ((i >> 1) & 0x1)").replace(
        "((i >> 1) & 0x1) + 8", "(i & 0x1) + 8").replace("where i = {1}",
                                                         "where i = {1, 2, ..., 32}"),
        encoding="utf-8")
    run = analyze([p])
    errs = [f for f in run.proof.findings if f.fails and f.kind != "composes"]
    assert [f.kind for f in errs] == ["surjective"]
    assert errs[0].message.startswith("at N = 8: lane 0 element 0 is at (row 0, col 248)")


def test_plain_title_of_a_sparse_section_reads() -> None:
    doc = read_text("1.2.4. Matrix Fragments for sparse wgmma.mma_async.m64nNk32\n"
                    "Accumulator D:\n.f32 A vector expression containing N/2 number of .f32 "
                    "registers. d0, d1, d2, d3, ..., dX, dY, dZ, dW where X = N/2 - 4 "
                    "Y = N/2 - 3 Z = N/2 - 2 W = N/2 - 1 N = 8*i where i = {1, 2}\n",
                    "sparse.txt")
    m = build([doc], [])
    assert [f.message for f in m.findings if f.severity == "error"] == []
    assert [(x.short_id, x.n_values) for x in m.layouts] == [("wgmma.sp.m64nNk32.D.f32",
                                                               (8, 16))]


# ---- relations in the reports ----------------------------------------------------------------

# The m64n8k16 .f32 accumulator with d1 and d2 trading places (rows by i & 1, columns by
# (i >> 1) & 1): still one cell per thread and element, but not the mma tile's layout.
SWAPPED = f"""## 1.2.5. Matrix Fragments for wgmma.mma_async.m64nNk16

* Accumulator D:

  | .dtype | Fragment | Elements |
  | --- | --- | --- |
  | .f32 | N/2 .f32 registers of one .f32 element each | {ONE_N} |

  ```
  groupID           = %laneid >> 2
  threadID_in_group = %laneid % 4

  row =   (%warpid * 16) + groupID + 8 * (i & 0x1)
  col =   (threadID_in_group * 2) + ((i >> 1) & 0x1) + 8 * (i >> 2)
  ```
"""


def _refuted_proof():  # type: ignore[no-untyped-def]
    cat = model_of([])
    mma = next(x for x in cat.layouts if x.short_id == "mma.m16n8k16.CD.f32@f16-bf16-f64")
    (swapped,) = build([read_text(SWAPPED, "swapped.md")], []).layouts
    model = dataclasses.replace(cat, layouts=(mma, swapped), findings=())
    return prove(model, Options())


def test_a_refuted_relation_is_an_error_in_every_format() -> None:
    proof = _refuted_proof()
    assert all(r.ok for r in proof.results)  # both layouts are layouts
    (rel,) = proof.relations
    assert rel.relation.consumer == "wgmma.m64nNk16.D.f32" and rel.status == "refuted"
    # lane 0 d1: the swapped layout puts it at row 8, col 0; the mma's c1 of lane 0 is
    # (0, 1), which the warp-tile arrangement leaves at (0, 1)
    cex = rel.counterexample
    assert (cex["lane"], cex["element"], cex["consumer_cell"], cex["arranged_cell"]) == \
        (0, "d1", [8, 0], [0, 1])
    assert (cex["producer_lane"], cex["producer_element"]) == (0, "c1")
    data = json.loads(render(proof, "json"))
    assert data["relations"][0]["status"] == "refuted"
    assert data["summary"]["relations"] == 1 and data["summary"]["relations_proved"] == 0
    (f,) = [x for x in data["findings"] if x["kind"] == "composes"]
    assert f["severity"] == "error" and f["counterexample"]["lane"] == 0
    text = render(proof, "text")
    assert "\u2717 mma.m16n8k16.CD.f32@f16-bf16-f64 -> wgmma.m64nNk16.D.f32  refuted" in text
    assert "1 relations: 0 proved, 1 not" in text
    md = render(proof, "markdown")
    assert "| `mma.m16n8k16.CD.f32@f16-bf16-f64` | `wgmma.m64nNk16.D.f32` | refuted |" in md
    sarif = json.loads(render(proof, "sarif"))
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["composes"]
    junit = ET.fromstring(render(proof, "junit"))
    case = next(c for c in junit.iter("testcase") if c.get("classname") == "relations")
    assert case.find("failure") is not None


def test_the_catalog_proves_every_relation(catalog_run: Any) -> None:
    run = catalog_run
    assert len(run.model.layouts) == 163 + 148  # the fragments and the tcgen05.ld/st forms
    assert [(v.relation.producer, v.relation.consumer) for v in run.proof.relations
            if v.status != "proved"] == []
    assert len(run.proof.relations) == 39 + 5  # and Layout D read back with tcgen05.ld.32x32b
    data = json.loads(render(run.proof, "json"))
    assert data["summary"]["relations_proved"] == 39 + 5
    junit = ET.fromstring(render(run.proof, "junit"))
    assert sum(1 for c in junit.iter("testcase") if c.get("classname") == "relations") == 39 + 5


def test_a_row_whose_n_column_stands_in_the_element_column(tmp_path: Path) -> None:
    """Below a merged element cell a Markdown mirror shifts the row's N column one left:
    ``| .f32 | ... registers. | N = 8*i where i = {1, ..., 32} |``.  The cell is read as that
    row's N (all 32 of them), not as an unreadable element list, and not the .s32 row's 18."""
    text = MARKDOWN.replace(
        f"| `.f32` | A vector expression containing N/2 number of `.f32` registers. | | {ALL_N} |",
        f"| `.f32` | A vector expression containing N/2 number of `.f32` registers. | {ALL_N} |")
    assert text != MARKDOWN
    p = tmp_path / "shifted.md"
    p.write_text(text, encoding="utf-8")
    run = analyze([p])
    assert [f.message for f in run.proof.findings if f.kind == "unreadable"] == []
    f32 = next(x for x in run.model.layouts if x.short_id == "wgmma.m64nNk32.D.f32")
    assert f32.n_values == tuple(range(8, 257, 8))
