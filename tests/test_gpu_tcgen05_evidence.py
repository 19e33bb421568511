"""The data paths' ``hardware`` obligation from ``tcgen05-mma`` runs (``formal.prove.datapath.
hardware``) and what ``ptxlayout evidence`` owes an sm_100 device for them: a fake sm_100 run's
evidence, written to a tmp folder (never to proofs/evidence/), confirms Layout G; a run whose
truth holds warps 1 and 2 exchanged refutes it with the first differing cell; a layout edited
after the run is stale; evidence without an sm_100 run leaves it unconfirmed."""

from __future__ import annotations

import argparse
import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import TCGEN05_MMA_VARIANTS
from formal.execute import supervisor
from formal.execute.devices import FakeDevice
from formal.execute.record import write_evidence
from formal.model.datapath import DataPath
from formal.prove.datapath import datapath_hash, prove_datapath
from formal.prove.evidence import Evidence
from formal.prove.verdicts import Verdict

G_KEYS = sorted(v.key for v in TCGEN05_MMA_VARIANTS if v.datapath == "G")


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


@pytest.fixture(scope="module")
def dps() -> dict[str, DataPath]:
    from formal import catalog
    from formal.model.datapath import datapaths
    from formal.parse.document import parse_document
    doc = next(d for d in catalog.documents() if d.name.endswith("tcgen05-datapath.md"))
    return {dp.layout: dp for dp in
            datapaths([ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None])}


def _run(truth: list[dict[str, Any]], records: list[dict[str, Any]], folder: Path,
         only: str = "tcgen05.mma.m32") -> Evidence:
    """A fake sm_100 device whose truth is ``truth`` runs ``only``'s tasks (checks and planted
    edits; by default Layout G's dense rows, M = 32) with ``records`` as the layouts; its
    evidence is written to ``folder``."""
    report = supervisor.run_all(FakeDevice(truth, sm=100), records, trials=1, only=only)
    write_evidence(report, folder)
    return Evidence.load(folder)


def _hardware(dp: DataPath, ev: Any) -> Verdict:
    result, _findings = prove_datapath(dp, None, ev)
    return next(v for v in result.verdicts if v.name == "hardware")


def _warps_swapped(records: list[dict[str, Any]], layout: str) -> list[dict[str, Any]]:
    """``records`` with ``layout``'s blocks of warps 1 and 2 holding each other's lanes."""
    out = copy.deepcopy(records)
    rec = next(r for r in out if r.get("instruction") == "tcgen05.datapath"
               and r.get("layout") == layout)
    for b in rec["blocks"]:
        if b["warp"] % 4 in (1, 2):
            shift = 32 if b["warp"] % 4 == 1 else -32
            b["lane_lo"] += shift
            b["lane_hi"] += shift
    return out


def test_the_hash_prove_judges_by_is_the_one_a_run_records(
        records: list[dict[str, Any]], dps: dict[str, DataPath]) -> None:
    for letter, dp in dps.items():
        rec = next(r for r in records if r.get("instruction") == "tcgen05.datapath"
                   and r.get("layout") == letter)
        assert datapath_hash(dp) == rec["map_hash"], letter


def test_a_matching_sm_100_run_confirms_the_data_path(
        records: list[dict[str, Any]], dps: dict[str, DataPath], tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    assert sorted({r.key for r in ev.runs}) == G_KEYS and len(G_KEYS) == 8
    hw = _hardware(dps["G"], ev)
    assert hw.status == "proved", hw.message
    assert hw.message.startswith("confirmed on fake device (emulated sm_100) (sm_100, driver "
                                 "none)")
    assert "8 of 8 tcgen05-mma tasks read D back by this map bit-exact (8 trials)" in hw.message
    assert "the planted edits other-datapath, lbo-sbo-swapped mismatched" in hw.message
    # Layout D had no run in this evidence: unconfirmed, saying so
    hd = _hardware(dps["D"], ev)
    assert hd.status == "unconfirmed" and hd.severity == "warning"
    assert hd.message.startswith("unconfirmed: no sm_100a run of its 8 tasks in the evidence")
    # Layout C (the sparse pair's) is read by no task of the family yet
    hc = _hardware(dps["C"], ev)
    assert hc.status == "unconfirmed" and "reads D by Layout C" in hc.message


def test_a_run_whose_truth_differs_refutes_it_with_the_first_cell(
        records: list[dict[str, Any]], dps: dict[str, DataPath], tmp_path: Path) -> None:
    ev = _run(_warps_swapped(records, "G"), records, tmp_path)
    assert {r.result for r in ev.runs if r.mode == "check"} == {"mismatch"}
    hw = _hardware(dps["G"], ev)
    assert hw.status == "refuted" and hw.severity == "error"
    # Layout G at N = 64: warp 1 holds D[0-31][16-31] in lanes 32-63; the truth wrote warp
    # 2's cells there, so lane 32's column 0 holds another word than D[0][16]
    cex = hw.counterexample
    assert cex["variant"] == "tcgen05.mma.m32n64k8.kind::tf32.f32.tf32.tf32.layoutG"
    assert cex["d_cells"][0] == [0, 16] and cex["hash"] == datapath_hash(dps["G"])
    assert "first: CTA 0 lane 32 column 0 holds 0x" in hw.message
    assert " where D[0][16] is 0x" in hw.message
    result, findings = prove_datapath(dps["G"], None, ev)
    assert not result.ok and any(f.severity == "error" and "lane 32" in f.message
                                 for f in findings)


def test_a_layout_edited_after_the_run_is_stale(
        records: list[dict[str, Any]], dps: dict[str, DataPath], tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    g = dps["G"]
    blocks = list(g.blocks)
    w1 = next(i for i, b in enumerate(blocks) if b.warp == 1)
    w2 = next(i for i, b in enumerate(blocks) if b.warp == 2)
    blocks[w1], blocks[w2] = (replace(blocks[w1], rows=blocks[w2].rows, dcols=blocks[w2].dcols),
                              replace(blocks[w2], rows=blocks[w1].rows, dcols=blocks[w1].dcols))
    edited = replace(g, blocks=tuple(blocks))
    assert datapath_hash(edited) != datapath_hash(g)
    hw = _hardware(edited, ev)
    assert hw.status == "unconfirmed" and hw.message.startswith("unconfirmed: stale: the "
                                                                "evidence's 10 runs")
    assert f"now {datapath_hash(edited)[:12]}..." in hw.message
    assert "run 'ptxlayout gpu --only layoutG' on an sm_100a device again" in hw.message


def test_no_sm_100_evidence_leaves_it_unconfirmed(
        records: list[dict[str, Any]], dps: dict[str, DataPath], tmp_path: Path) -> None:
    # an sm_90 device assembles the rows and runs none: nothing it holds speaks for G
    report = supervisor.run_all(FakeDevice(records, sm=90), records, trials=1,
                                only="tcgen05.mma.m32", use_ptxas=False)
    write_evidence(report, tmp_path)
    ev = Evidence.load(tmp_path)
    hw = _hardware(dps["G"], ev)
    assert hw.status == "unconfirmed"
    assert hw.message.startswith("unconfirmed: no sm_100a run of its 8 tasks in the evidence; "
                                 "no lent machine runs sm_100a")
    # no evidence at all: not applicable, as for every layout
    assert _hardware(dps["G"], None).status == "not-applicable"


def test_only_some_tasks_or_a_planted_edit_that_matched_leave_it_unconfirmed(
        records: list[dict[str, Any]], dps: dict[str, DataPath], tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path, only="tcgen05.mma.m32n64k8.kind::tf32")
    hw = _hardware(dps["G"], ev)
    assert hw.status == "unconfirmed"
    assert "1 of its 8 tasks matched" in hw.message
    # the evidence of a run whose plants matched (a harness that cannot tell maps apart)
    full = tmp_path / "full"
    _run(records, records, full)
    f = next(full.glob("*.json"))
    doc = json.loads(f.read_text())
    for r in doc["runs"]:
        if r.get("plant") == "lbo-sbo-swapped":
            r["result"] = "match"
    f.write_text(json.dumps(doc))
    hw = _hardware(dps["G"], Evidence.load(full))
    assert hw.status == "unconfirmed"
    assert "the planted edit lbo-sbo-swapped matched too" in hw.message


def test_ptxlayout_evidence_owes_an_sm_100_device_the_family(
        records: list[dict[str, Any]], tmp_path: Path) -> None:
    from formal.writers.evidence import owed, stale_kinds
    assert owed(100) >= 48
    ev = _run(records, records, tmp_path)
    lines = [line for kind, line in stale_kinds(ev, records, 100) if kind == "tcgen05.mma"]
    owes = {line.partition(": ")[0] for line in lines}
    # the 40 rows of the other data paths and their 2 x 5 planted edits; G's are current; the
    # 45 block-scaled rows and their 39 planted edits (tests/test_gpu_tcgen05_scale_judged.py)
    assert len(lines) == 40 + 10 + 45 + 39
    assert not any("layoutG" in x for x in owes)
    assert all(v.key in owes for v in TCGEN05_MMA_VARIANTS if v.datapath != "G")
    d = next(line for line in lines if line.startswith(
        "tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD:"))
    assert "no hardware match for the current data path (no run; datapath " in d
    assert "tcgen05.mma layoutD planted other-datapath: no run of the current data path " \
        "mismatched" in "\n".join(lines)
    # G edited since the run: its rows are owed again, named with the run's date
    g = next(r for r in records if r.get("layout") == "G")
    moved = [{**r, "map_hash": "0" * 64} if r is g else r for r in records]
    lines = [line for kind, line in stale_kinds(ev, moved, 100) if kind == "tcgen05.mma"]
    assert sum("layoutG" in x for x in lines) == 8 + 2
    assert any("layoutG: no hardware match for the current data path (the layouts changed "
               "since 20" in x for x in lines)


def test_the_evidence_command_on_the_folder(
        records: list[dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from formal.writers.evidence import evidence_command
    _run(records, records, tmp_path)
    args = argparse.Namespace(evidence=str(tmp_path), layouts=None, sm=None, format="text",
                              quiet=False, select=["tcgen05.mma"], ignore=None)
    assert evidence_command(args, current_catalog) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 134 + 1 and not any("layoutG" in x for x in out)
    assert out[-1].startswith("134 stale of the variants sm_100 runs (1 evidence files")


def test_the_evidence_command_line_selects_the_family(
        records: list[dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    _run(records, records, tmp_path)
    capsys.readouterr()
    assert main(["evidence", str(tmp_path), "--select", "tcgen05.mma", "-q"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 134 and all(x.startswith("tcgen05.mma") for x in out)
