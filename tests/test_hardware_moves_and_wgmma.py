"""The H100 evidence of the moves and wgmma read by ``ptxlayout prove``: every catalog layout
confirmed by the run that used its export, a wgmma accumulator at each N it ran, a move whose
map differs from the hardware's refuted by discovery with the differing cell, and the
staleness check naming a variant whose layouts changed."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from formal import catalog
from formal.api import model_of
from formal.model import build
from formal.model.algebra import I
from formal.prove.evidence import Evidence, default_dir
from formal.text.read import read_text
from formal.writers.evidence import stale
from formal.writers.export import layout_record


@pytest.fixture(scope="module")
def ev() -> Evidence:
    where = default_dir()
    assert where is not None
    e = Evidence.load(where)
    e.add_source("catalog", lambda: model_of([]).layouts)
    return e


@pytest.fixture(scope="module")
def layouts() -> dict[str, object]:
    return {lay.short_id: lay for lay in model_of([]).layouts}


def test_every_move_and_wgmma_layout_is_confirmed(ev, layouts) -> None:  # type: ignore[no-untyped-def]
    matrix = [x for k, x in layouts.items()
              if k.split(".")[0] in ("ldmatrix", "stmatrix", "movmatrix", "wgmma")
              and not k.startswith("wgmma.sp.")]
    assert len(matrix) == 41
    # wgmma.mma_async.sp ran on the H100 (last on 2026-11-26) (N = 8, 64, 256, every type pair and
    # selector, A from registers and from shared memory): its 13 layouts are confirmed
    sparse = {k: ev.verdict(x) for k, x in layouts.items()  # type: ignore[attr-defined]
              if k.startswith("wgmma.sp.")}
    assert len(sparse) == 13 and {v.status for v in sparse.values()} == {"proved"}
    assert sparse["wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8"].message.endswith(
        "2026-11-26: 72 of 656 runnable variants, 288 runs, 2304 trials bit-exact")
    verdicts = {x.short_id: ev.verdict(x) for x in matrix}  # type: ignore[attr-defined]
    # the 15 sm_100a moves (.m16n16, .m8n16, .m16n8) are only assembled: the H100 ran none
    sm100 = {k for k in verdicts if any(s in k for s in (".m16n16.", ".m8n16.", ".m16n8."))}
    assert len(sm100) == 15
    assert {k: v.status for k, v in verdicts.items() if v.status != "proved"} == \
        {k: "unconfirmed" for k in sm100}
    assert all("(it needs sm_100a; the evidence's devices: sm_90)" in verdicts[k].message
               for k in sm100)
    # the f16 -> f32 accumulator ran at every N; the .s32 one at 8, 64 and 256
    f32 = verdicts["wgmma.m64nNk16.D.f32"].message
    assert "at N = " + ", ".join(str(n) for n in range(8, 257, 8)) + "," in f32
    assert "at N = 8, 64, 256," in verdicts["wgmma.m64nNk32.D.s32"].message


def _moves_with(old: str, new: str) -> object:
    text = (catalog.CATALOG_DIR / "matrix-moves.md").read_text(encoding="utf-8")
    assert text.count(old) == 1
    doc = read_text(text.replace(old, new), "moves.md")
    return {x.short_id: x for x in build([doc], []).layouts}


MOV_D = ("  row =   groupID\n  col =   (threadID_in_group * 2) + (i & 0x1)\n")


def test_a_move_the_hardware_contradicts_is_refuted_with_the_cell(ev) -> None:  # type: ignore[no-untyped-def]
    """movmatrix's result stated in the source's cells: lane 0's d1 would be (1, 0); the
    discovery on the H100 found the result's fragment, where d1 of lane 0 is (0, 1)."""
    lays = _moves_with(MOV_D, "  row =   (threadID_in_group * 2) + i\n  col =   groupID\n")
    v = ev.verdict(lays["movmatrix.m8n8.trans.b16.d"])
    assert v.status == "refuted", v.message
    assert (v.counterexample["lane"], v.counterexample["element"]) == (0, 1)
    assert v.message.startswith("movmatrix.m8n8.trans.b16 on NVIDIA H100 80GB HBM3")
    assert v.message.endswith("lane 0 element 1 is at (row 1, col 0) in the layout but at "
                              "(row 0, col 1) on the hardware")


def test_a_wgmma_accumulator_confirmed_only_at_small_n_is_not_proved(ev, layouts) -> None:  # type: ignore[no-untyped-def]
    """Columns of d8.. moved by 8 (a map right at N <= 16, wrong beyond): the N = 8 runs
    packed this very map, the N = 64 and 256 runs another."""
    d = layouts["wgmma.m64nNk32.D.s32"]
    col = d.formula("col")  # type: ignore[attr-defined]
    moved = dataclasses.replace(col, cases=tuple(
        dataclasses.replace(c, value=c.value + 8 * sp.floor(I / 8)) for c in col.cases))
    wrong = dataclasses.replace(d, formulas=tuple(moved if f.name == "col" else f
                                                  for f in d.formulas))  # type: ignore[attr-defined]
    v = ev.verdict(wrong)
    assert v.status == "unconfirmed", v.message
    assert "(N = 64, 256)" in v.message


def test_staleness_names_a_move_whose_layout_changed(ev, layouts) -> None:  # type: ignore[no-untyped-def]
    # the moves' layouts only: a variant is judged by the layouts of its own operands
    # (records_for), so the lines of the moves are the whole catalog's move lines, and the
    # other variants (no layout here) are not judged at all
    lays = [x for k, x in layouts.items() if k.startswith(("ldmatrix.", "movmatrix."))]
    assert len(lays) >= 10
    assert stale(ev, lays) == []
    moved = _moves_with(MOV_D, "  row =   (threadID_in_group * 2) + i\n  col =   groupID\n")
    changed = [moved["movmatrix.m8n8.trans.b16.d"] if x.short_id == "movmatrix.m8n8.trans.b16.d"
               else x for x in lays]
    lines = stale(ev, [layout_record(x) for x in changed])
    assert len(lines) == 1 and lines[0].startswith("movmatrix.m8n8.trans.b16: no hardware "
                                                   "match for the current layouts (the "
                                                   "layouts changed since 2026-11-26")


def test_the_first_elements_rule_gives_one_hash_in_every_stage(layouts) -> None:  # type: ignore[no-untyped-def]
    """base.hashes.first_elements is the map at one N of a table stated for every N: the toy
    of its docstring, the export's reader, the executor and the model's own layout at N
    agree on wgmma's f32 accumulator at N = 64."""
    from formal.api import current_catalog
    from formal.base.hashes import cell_table_hash, cells_at, first_elements, row_text
    from formal.base.matrix_variants import variant
    from formal.base.records import expand
    from formal.execute import matrix as mx

    rows = [{"lane": 0, "element": 0, "row": 0, "col": 0},
            {"lane": 0, "element": 1, "row": 1, "col": 0}]
    kept, h = first_elements("mma", "m2n2k1", "C/D", rows, [0, 1], 1, row_text)
    assert kept == rows[:1]
    assert h == cell_table_hash("mma", "m2n2k1", "C/D", "cells", rows[:1]) != \
        cell_table_hash("mma", "m2n4k1", "C/D", "cells", rows[:1])

    lay = layouts["wgmma.m64nNk16.D.f32"]
    own = Evidence().table_of(lay.at(64))[2]  # type: ignore[attr-defined]
    records, _ = current_catalog()
    maps = mx.maps_for(variant("wgmma.m64n64k16.f32.f16.f16.rs"), records)
    assert maps["C/D"].map_hash == own
    full = next(r for r in records if r["id"] == "catalog:wgmma.m64nNk16.D.f32")
    cells, at64 = cells_at("wgmma", "m64n64k16", "C/D", full["cells"], 32)
    assert at64 == own and len(cells) == 128 * 32
    ref = {"id": "x", "instruction": "wgmma", "shape": "m64n64k16", "operand": "C/D",
           "map_hash": own, "cells_from": {"id": full["id"], "elements": 32}}
    assert expand([full, ref])[1]["cells"] == cells
    with pytest.raises(ValueError, match="hash to"):
        expand([full, {**ref, "cells_from": {"id": full["id"], "elements": 16}}])


def test_one_judge_names_what_each_familys_runs_can_say(ev, layouts) -> None:  # type: ignore[no-untyped-def]
    from formal.prove.hardware import served

    mma = served(ev, layouts["mma.m16n8k16.A.f16-bf16"])
    move = served(ev, layouts["ldmatrix.m8n8.x4.b16"])
    acc = served(ev, layouts["wgmma.m64nNk16.D.f32"])
    assert (mma.op, mma.relabel, mma.direct, mma.exact) == ("A", True, False, False)
    assert (move.op, move.relabel, move.exact) == ("r", False, True)
    assert (acc.op, acc.direct, acc.exact) == ("C/D", True, False)
    assert len(acc.variants) > len({v.key for v in acc.variants if v.n == 64})
