"""The tcgen05 scale-factor layouts' ``hardware`` obligation judged from the block-scaled rows'
runs (``formal.prove.tc_scale.scale_hardware``, sorted by ``formal.prove.run_judge``): a fake
sm_100 run's evidence, written to a tmp folder (never to proofs/evidence/), confirms
``.kind::mxf4 .scale_vec::2X`` at M = 64 at both its IDs; a device whose scale_A layout holds
rows 0 and 5 in each other's places refutes it with a cell of D; a layout changed since is
stale; an ID without a run, and evidence without a block-scaled run, leave it unconfirmed with
the reason."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from formal.api import current_catalog
from formal.execute import supervisor
from formal.execute.devices import FakeDevice
from formal.execute.record import write_evidence
from formal.model.tc_scale import TcScaleLayout
from formal.prove.evidence import Evidence
from formal.prove.tc_scale import TC_NO_DEVICE, prove_tc_scale, scale_hardware, tc_scale_hash

ROWS = "kind::mxf4.block_scale.scale_vec::2X.ue8m0.f32.e2m1.e2m1.layoutF"  # IDs (0, 0), (2, 2)
SFA = "tcgen05.block_scale.m64n256k64.mxf4.scale_vec::2X.ue8m0.scale_A"
SFB = SFA.replace("scale_A", "scale_B")


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


@pytest.fixture(scope="module")
def layouts() -> dict[str, TcScaleLayout]:
    from formal import catalog
    from formal.model.tc_scale import tc_scale_layouts
    from formal.parse.block_scale import read_block_scale
    text = (catalog.CATALOG_DIR / "block-scale" / "tcgen05.md").read_text(encoding="utf-8")
    return {lay.id: lay for lay in tc_scale_layouts(read_block_scale(text, "t"))}


def _run(truth: list[dict[str, Any]], records: list[dict[str, Any]], folder: Path,
         only: str = ROWS) -> Evidence:
    report = supervisor.run_all(FakeDevice(truth, sm=100), records, trials=1, only=only)
    write_evidence(report, folder)
    return Evidence.load(folder)


def test_the_hash_prove_judges_by_is_the_records(records: list[dict[str, Any]],
                                                 layouts: dict[str, TcScaleLayout]) -> None:
    scales = {r["id"]: r["map_hash"] for r in records
              if r.get("instruction") == "tcgen05.block_scale"}
    assert len(scales) == 72  # one CTA's 36 and a pair's (M = 256, M = 128)
    for lid, h in scales.items():
        assert tc_scale_hash(layouts[lid]) == h, lid


def test_a_matching_sm_100_run_confirms_the_layout(records: list[dict[str, Any]],
                                                   layouts: dict[str, TcScaleLayout],
                                                   tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    # two checks (IDs 0 and 2) and the four plants of the form's first row
    assert sorted((r.key.rpartition(".")[2], r.mode, r.plant, r.result) for r in ev.runs) == [
        ("sf0_0", "check", "", "match"),
        ("sf0_0", "experiment", "b-factors-swapped", "mismatch"),
        ("sf0_0", "experiment", "factor-moved", "mismatch"),
        ("sf0_0", "experiment", "factors-swapped", "mismatch"),
        ("sf0_0", "experiment", "scale-id-wrong", "mismatch"), ("sf2_2", "check", "", "match")]
    a = scale_hardware(layouts[SFA], ev)
    assert a.status == "proved", a.message
    assert a.message.startswith("confirmed on fake device (emulated sm_100)")
    assert ": at each of the scale factor IDs {0, 2} every block-scaled row placing scale_A by " \
           "this layout bit-exact" in a.message
    assert a.message.endswith("(2 checks, 2 trials); the planted edits factor-moved, "
                              "factors-swapped, scale-id-wrong mismatched")
    b = scale_hardware(layouts[SFB], ev)
    assert b.status == "proved" and b.message.endswith("the planted edits b-factors-swapped "
                                                       "mismatched")
    # M = 128's layout of the same form had no run here: unconfirmed for want of a device
    other = scale_hardware(layouts[SFA.replace("m64n", "m128n")], ev)
    assert other.status == "unconfirmed" and other.message == TC_NO_DEVICE
    # through prove_tc_scale: no warning for a proved layout
    result, findings = prove_tc_scale(layouts[SFA], None, ev)
    assert next(v for v in result.verdicts if v.name == "hardware").status == "proved"
    assert not [f for f in findings if f.kind == "hardware"]


PAIR_ROWS = "kind::mxf8f6f4.block_scale.scale_vec::1X.ue8m0.f32.e4m3.e4m3.layoutB"
PAIR_SFA = "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.cta_group::2.scale_A"


def test_a_pairs_scale_layouts_judged_by_the_layout_b_rows(
        records: list[dict[str, Any]], layouts: dict[str, TcScaleLayout],
        tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path, PAIR_ROWS)
    # four checks (IDs 0-3 on the diagonal) and the five plants of the form's first row
    assert sorted((r.key.rpartition(".")[2], r.plant, r.result) for r in ev.runs
                  if r.mode == "experiment") == [
        ("sf0_0", p, "mismatch") for p in ("b-factors-swapped", "factor-moved",
                                           "factor-other-cta", "factors-swapped",
                                           "scale-id-wrong")]
    a = scale_hardware(layouts[PAIR_SFA], ev)
    assert a.status == "proved", a.message
    assert a.message.endswith("(4 checks, 4 trials); the planted edits factor-moved, "
                              "factor-other-cta, factors-swapped, scale-id-wrong mismatched")
    b = scale_hardware(layouts[PAIR_SFA.replace("scale_A", "scale_B")], ev)
    assert b.status == "proved" and b.message.endswith("the planted edits b-factors-swapped "
                                                       "mismatched")
    # one CTA's M = 128 layout and the M = 256 pair's had no run here
    for lid in (PAIR_SFA.replace(".cta_group::2", ""), PAIR_SFA.replace("m128n", "m256n")):
        v = scale_hardware(layouts[lid], ev)
        assert v.status == "unconfirmed" and v.message == TC_NO_DEVICE, lid


def _rows_swapped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` whose SFA layout holds rows 0 and 1 in each other's places, at every ID
    (the runs draw those two rows' factors unequal, ``tcgen05_scale.draw_factors``: rows 0 and
    5 were equal about once in 49 runs, and then nothing differed)."""
    out = copy.deepcopy(records)
    rec = next(r for r in out if r.get("id") == SFA)
    for p in rec["places"]:  # two factors a row: row r's at 6r .. 6r + 5
        p[0:6], p[6:12] = p[6:12], p[0:6]
    return out


def test_a_device_whose_layout_differs_refutes_it_with_a_cell(
        records: list[dict[str, Any]], layouts: dict[str, TcScaleLayout],
        tmp_path: Path) -> None:
    ev = _run(_rows_swapped(records), records, tmp_path)
    assert {r.result for r in ev.runs if r.mode == "check"} == {"mismatch"}
    v = scale_hardware(layouts[SFA], ev)
    assert v.status == "refuted" and v.severity == "error"
    cex = v.counterexample
    assert cex["variant"].endswith(f"{ROWS}.sf0_0") and cex["sf_id"] == 0
    assert cex["hash"] == tc_scale_hash(layouts[SFA])
    assert cex["d_cell"][0] in (0, 1) and 0 <= cex["d_cell"][1] < 64
    assert "at scale factor ID 0: " in v.message and "cells of D differ" in v.message
    _result, findings = prove_tc_scale(layouts[SFA], None, ev)
    assert [f.kind for f in findings if f.severity == "error"] == ["block-scale-hardware"]
    # scale_B's layout was read by the same runs: their mismatch refutes it too -- the run
    # cannot say which of the two placed a factor wrong (its cells are scale_A's rows)
    assert scale_hardware(layouts[SFB], ev).status == "refuted"


def test_a_layout_changed_since_the_run_is_stale(records: list[dict[str, Any]],
                                                 layouts: dict[str, TcScaleLayout],
                                                 tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    lay = layouts[SFA]
    # the placements changed, and with them the array the prover reads (none: read from them)
    moved = replace(lay, every=tuple((s, ((0, 0, 5, 0, s, 0, 0), *ps[1:]))
                                     for s, ps in lay.every), table=None)
    v = scale_hardware(moved, ev)
    assert v.status == "unconfirmed" and v.message.startswith(
        "at scale factor ID 0: stale: the evidence's 5 runs of its rows (the last on fake device")
    assert f"now {tc_scale_hash(moved)[:12]}...): the layout changed since" in v.message


def test_an_id_without_a_run_and_evidence_without_one(records: list[dict[str, Any]],
                                                      layouts: dict[str, TcScaleLayout],
                                                      tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path / "one", only=f"{ROWS}.sf0_0")
    v = scale_hardware(layouts[SFA], ev)
    assert v.status == "unconfirmed"
    assert v.message == "at scale factor ID 2: no sm_100a run of its 1 rows"
    ev = _run(records, records, tmp_path / "none", only="tcgen05.mma.m32n64k8.kind::tf32")
    assert ev.runs and not any("block_scale" in r.key for r in ev.runs)
    v = scale_hardware(layouts[SFA], ev)
    assert v.status == "unconfirmed" and v.message == TC_NO_DEVICE


def test_ptxlayout_evidence_owes_an_sm_100_device_the_block_scaled_rows(
        records: list[dict[str, Any]], tmp_path: Path) -> None:
    from formal.execute.tcgen05_run import stale_tc_scale
    ev = _run(records, records, tmp_path)
    lines = stale_tc_scale(ev, records, 100)
    # 45 rows and 39 plants, less the 2 rows and 4 plants this run did
    assert len(lines) == 45 + 39 - 2 - 4 and not any(ROWS in x for x in lines)
    one = next(x for x in lines if x.startswith(
        "tcgen05.mma.m128n64k32.kind::mxf8f6f4.block_scale.scale_vec::1X.ue8m0.f32.e4m3.e4m3."
        "layoutD.sf3_1: "))
    assert "no hardware match for the current scale layouts (no run; scale_A " in one
    assert stale_tc_scale(ev, records, 90) == []  # an sm_90 device owes none
    # scale_A's layout edited since the run: its rows and plants are owed again, with the date
    moved = [{**r, "map_hash": "0" * 16} if r.get("id") == SFA else r for r in records]
    again = [x for x in stale_tc_scale(ev, moved, 100) if ROWS in x]
    assert len(again) == 2 + 4
    assert all("the layouts changed since 20" in x for x in again)
    assert any(" planted factor-moved: no run of the current scale layouts mismatched" in x
               for x in again)


def test_prove_judges_the_catalogs_scale_layouts_by_the_evidence(
        records: list[dict[str, Any]], tmp_path: Path) -> None:
    # the api's path (prove --evidence DIR): the evidence read reaches prove_tc_scale
    from formal.api import prove_block_scale
    ev = _run(records, records, tmp_path)
    m128 = SFA.replace("m64n", "m128n")
    hw = {r.id: next(v for v in r.verdicts if v.name == "hardware")
          for r in prove_block_scale(evidence=ev).results if r.id in (SFA, SFB, m128)}
    assert (hw[SFA].status, hw[SFB].status, hw[m128].status) == \
        ("proved", "proved", "unconfirmed")
    assert hw[m128].message == TC_NO_DEVICE


def test_a_map_hash_is_written_only_where_a_run_can_use_it() -> None:
    """judge_runs takes the hash as a function and calls it only where an sm_100 run of the
    rows is there to compare (a catalog run with the shipped evidence has none: no hash of a
    tcgen05 layout is written); with a run, the same verdict as with the hash given."""
    from types import SimpleNamespace

    from formal.prove.run_judge import judge_runs
    asked: list[int] = []

    def h() -> str:
        asked.append(1)
        return "0123456789abcdef"
    run = SimpleNamespace(key="row1", file=SimpleNamespace(sm=100), result="match",
                          mode="check", plant="", trials=3,
                          layout_hashes={"meta": "0123456789abcdef"})
    none = SimpleNamespace(runs_of=lambda keys: [])
    one = SimpleNamespace(runs_of=lambda keys: [run])
    j = judge_runs(none, ["row1"], "meta", h, [])
    assert (j.status, j.hash, asked) == ("none", "", [])
    j = judge_runs(one, ["row1"], "meta", h, [])
    assert (j.status, j.hash, asked) == ("proved", "0123456789abcdef", [1])
    assert judge_runs(one, ["row1"], "meta", "0123456789abcdef", []) == j
    assert judge_runs(one, ["row1"], "meta", "fedcba9876543210", []).status == "none"
