"""Issue 'Errata and the hardware obligation': the export with ``--corrections`` carries the
spec's erratum layouts; the GPU harness runs them and must see them fail; evidence refutes
them with a (lane, element) and both cells, proves the corrected maps (and any document's
layout with the same map), and judges freshness against the corrected catalog; the one GPU
command (``tools/gpu_check.sh``) on an emulated device.  No GPU needed."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.base.matrix_variants import MATRIX_VARIANTS
from formal.base.records import expand
from formal.base.variants import (
    VARIANTS,
    layout_serves,
    record_arrangement,
    records_by_operand,
    runs_on,
)
from formal.execute import cpu, devices, matrix, record, supervisor
from formal.execute.runs import Report

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
F64_A = "catalog:mma.m16n8k16.A.f64"
B1_A = "catalog:mma.m16n8k256.A.b1"


@pytest.fixture(scope="module")
def export(exported_layouts: Path) -> dict[str, Any]:
    """``ptxlayout export --format json --corrections``, as the lead runs it (the session's
    file: tests/conftest.py), read with each record's cells expanded."""
    out = exported_layouts
    doc = json.loads(out.read_text())
    doc["path"] = out
    # the runner takes each record's own cells (a 'cells_from' names the record it shares them with)
    doc["layouts"] = expand(doc["layouts"])
    return doc


@pytest.fixture(scope="module")
def models() -> dict[str, Any]:
    from formal.api import model_of

    return {"spec": model_of([]), "fixed": model_of([], corrections=True)}


def _layout(model: Any, layout_id: str) -> Any:
    return next(x for x in model.layouts if x.id == layout_id)


def _errata_run(export: dict[str, Any], only: str) -> Report:
    recs, errata = export["layouts"], export["errata"]
    return supervisor.run_all(devices.FakeDevice(recs), recs, trials=4, only=only, use_ptxas=False,
                              errata=errata)


# ---- the export ---------------------------------------------------------------------------------


def test_export_with_corrections_lists_the_errata(export: dict[str, Any],
                                                  tmp_path: Path) -> None:
    from formal.cli import main

    by_id = {r["id"]: r for r in export["layouts"]}
    errata = {e["id"]: e for e in export["errata"]}
    assert set(errata) == {F64_A, B1_A}
    for lid, e in errata.items():
        assert e["corrected_hash"] == by_id[lid]["map_hash"] != e["map_hash"]
    # the f64 erratum leaves the odd elements without a cell; the b1 one doubles cells up
    assert len(errata[F64_A]["cells"]) == 128 < 32 * 8
    b1 = {(c["row"], c["col"]) for c in errata[B1_A]["cells"]}
    assert len(b1) < len(errata[B1_A]["cells"]) == 32 * 128
    # without --corrections: the spec's maps, and no errata list
    plain = tmp_path / "plain.json"
    assert main(["export", "--format", "json", "-o", str(plain)]) == 0
    doc = json.loads(plain.read_text())
    assert "errata" not in doc
    assert {r["id"]: r["map_hash"] for r in doc["layouts"]}[B1_A] == errata[B1_A]["map_hash"]
    # the GPU side reads both lists from the file or its folder, and after the layouts the
    # shared-memory layouts the catalog runs are built from (20 wgmma ones, 12 K-major tcgen05
    # ones), the block-scale factor maps (10) and the tcgen05.mma data paths (7)
    recs, errs = record.load_export(str(export["path"].parent))
    assert (len(export["smem"]), len(export["scale"]), len(export["datapath"]),
            len(export["meta"]), len(export["tc_scale"])) == (32, 10, 7, 19, 72)
    assert len(recs) == len(export["layouts"]) + 140 and len(errs) == 2
    assert [r["instruction"] for r in recs[-140:]] == ["wgmma.smem"] * 20 + \
        ["tcgen05.smem"] * 12 + ["mma.block_scale"] * 10 + ["tcgen05.datapath"] * 7 + \
        ["tcgen05.sp_meta"] * 19 + ["tcgen05.block_scale"] * 72


def test_a_partial_map_is_refused_unless_asked_for(export: dict[str, Any]) -> None:
    e = next(e for e in export["errata"] if e["id"] == F64_A)
    with pytest.raises(cpu.LayoutError, match="no cell for lane 0 element 1"):
        cpu.operand_map(e, 64)
    m = cpu.operand_map(e, 64, partial=True)
    assert m.held is not None and not m.held[:, 1::2].any() and m.held[:, ::2].all()
    codes = np.arange(1, 16 * 16 + 1, dtype=np.uint64).reshape(1, 16, 16)
    words = cpu.pack(m, "f64", codes).astype(np.uint64)
    assert (words[:, :, 2::4] == 0).all() and (words[:, :, 3::4] == 0).all()  # a1, a3, ...


# ---- the harness --------------------------------------------------------------------------------


def test_the_errata_fail_on_the_device_and_their_corrections_match(
        export: dict[str, Any]) -> None:
    report = _errata_run(export, "m16n8k256")
    checks = [r for r in report.runs if not r.erratum]
    errata = [r for r in report.runs if r.erratum]
    assert {r.result for r in checks} == {"match"} and len(checks) == 2
    assert {(r.variant.key, r.erratum, r.result) for r in errata} == {
        ("mma.m16n8k256.s32.b1.b1.s32_and_popc", B1_A, "mismatch"),
        ("mma.m16n8k256.s32.b1.b1.s32_xor_popc", B1_A, "mismatch")}
    for r in errata:
        assert r.ok and r.d_cells and all(8 <= c[0] < 16 for c in r.d_cells)  # rows 8..15
        assert r.layout_hashes["A"] == next(e["map_hash"] for e in export["errata"]
                                            if e["id"] == B1_A)
        assert {k: h for k, h in r.layout_hashes.items() if k != "A"} == \
            {k: h for k, h in checks[0].layout_hashes.items() if k != "A"}
        assert r.record()["erratum"] == B1_A and r.record()["d_cells"] == r.d_cells
    # the corrected map is kept in the evidence, by hash, for the verdict to show
    fixed = checks[0].layout_hashes["A"]
    assert fixed in report.maps and len(report.maps[fixed]["rows"]) == 32 * 128
    table = record.table(report)
    assert "errata: 2 of 2 refuted by the hardware" in table.splitlines()[-1]
    assert "(as it should)" in table and not record.failed(report)


def test_an_erratum_the_hardware_accepts_fails_the_run(export: dict[str, Any]) -> None:
    """If the spec's layout matched, the correction would be wrong: that is a failure."""
    recs = json.loads(json.dumps(export["layouts"]))
    fake_erratum = dict(next(r for r in recs if r["id"] == "catalog:mma.m16n8k8.A.tf32"))
    report = supervisor.run_all(devices.FakeDevice(recs), recs, trials=2,
                                only="mma.m16n8k8.f32.tf32", use_ptxas=False, errata=[fake_erratum])
    (bad,) = [r for r in report.runs if r.erratum]
    assert bad.result == "match" and not bad.ok and record.failed(report) == [bad]
    assert "UNEXPECTED" in record.table(report)


# ---- evidence -----------------------------------------------------------------------------------


def test_evidence_refutes_the_errata_and_proves_the_corrections(
        export: dict[str, Any], models: dict[str, Any], tmp_path: Path) -> None:
    from formal.prove.evidence import Evidence

    report = _errata_run(export, "m16n8k256")
    report.runs += _errata_run(export, "mma.m16n8k16.f64").runs
    report.maps.update(_errata_run(export, "mma.m16n8k16.f64").maps)
    record.write_evidence(report, tmp_path)
    ev = Evidence.load(tmp_path)
    spec, fixed = models["spec"], models["fixed"]
    b1 = ev.verdict(_layout(spec, B1_A))
    assert b1.status == "refuted", b1.message
    cex = b1.counterexample
    assert (cex["lane"], cex["element"]) == (0, 32)
    assert cex["layout"] == {"row": 8, "col": 32} and cex["hardware"] == {"row": 8, "col": 0}
    assert cex["d_cells"] and "fake device" in b1.message and "D[8][" in b1.message
    f64 = ev.verdict(_layout(spec, F64_A))
    assert f64.status == "refuted", f64.message
    assert (f64.counterexample["lane"], f64.counterexample["element"]) == (0, 1)
    assert f64.counterexample["layout"] is None
    assert f64.counterexample["hardware"] == {"row": 8, "col": 0}
    assert "no cell" in f64.message
    for lid in (B1_A, F64_A, "catalog:mma.m16n8k256.B.b1"):
        v = ev.verdict(_layout(fixed, lid))
        assert v.status == "proved", (lid, v.message)
    # the spec's B (the same map in both) is proved too: the hash is of the map
    assert ev.verdict(_layout(spec, "catalog:mma.m16n8k256.B.b1")).status == "proved"


def test_prove_with_evidence_reports_the_hardware_refutation(
        export: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main

    record.write_evidence(_errata_run(export, "m16n8k256"), tmp_path)
    main(["prove", "--evidence", str(tmp_path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    hw = {lay["id"]: next(o for o in lay["obligations"] if o["name"] == "hardware")
          for lay in doc["layouts"]}
    assert hw[B1_A]["status"] == "refuted"
    assert hw["catalog:mma.m16n8k256.CD.s32@b1"]["status"] == "proved"
    # the layouts this small evidence never ran are warnings ("unconfirmed"), not errors
    (finding,) = [f for f in doc["findings"] if f["kind"] == "hardware"
                  and f["severity"] == "error"]
    assert finding["severity"] == "error" and "lane 0 element 32" in finding["message"]


@pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not beside the checkout")
def test_a_documents_layout_with_a_confirmed_map_is_proved(
        export: dict[str, Any], tmp_path: Path) -> None:
    from formal.api import model_of
    from formal.prove.evidence import Evidence

    recs = export["layouts"]
    report = supervisor.run_all(devices.FakeDevice(recs), recs, trials=2, only="mma.sp.m16n8k16",
                                use_ptxas=False)
    record.write_evidence(report, tmp_path)
    ev = Evidence.load(tmp_path)
    seeds = sorted(str(p) for p in SEEDS.iterdir() if p.suffix in (".txt", ".md"))
    lays = [x for x in model_of(seeds).layouts if not x.id.startswith("catalog:")
            and x.instruction == "mma.sp" and str(x.shape) == "m16n8k16" and x.formulas]
    assert lays
    for lay in lays:
        v = ev.verdict(lay)
        assert v.status == "proved", (lay.id, v.message)
        assert "fake device" in v.message and report.info["device"] in v.message
        assert time.strftime("%Y-") in v.message  # the date


def _move_runs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A match of every move and wgmma variant sm_90 runs, with the maps the executor takes
    (built once for all: ``maps_for``'s memo, over one expansion of the records)."""
    full = expand(records)
    memo: dict[Any, Any] = {}
    return [{"key": mv.key, "selector": None, "mode": "check", "result": "match",
             "layout_hashes": matrix.hashes(matrix.maps_for(mv, full, memo)), "trials": 8}
            for mv in MATRIX_VARIANTS if runs_on(mv, 90)]


def _synthetic_evidence(records: list[dict[str, Any]], errata: list[dict[str, Any]],
                        drop: str = "", moves: list[dict[str, Any]] | None = None
                        ) -> dict[str, Any]:
    """Evidence with a match of every variant sm_90 runs and a mismatch of every erratum
    (``moves``: ``_move_runs(records)`` made already)."""
    runs = []
    for v in VARIANTS:
        if not runs_on(v, 90) or v.key == drop:
            continue
        recs = records_by_operand(v, records)
        hashes = {op: r["map_hash"] for op, r in recs.items()}
        for s in v.selectors or (None,):
            runs.append({"key": v.key, "selector": s, "mode": "check", "result": "match",
                         "layout_hashes": hashes, "trials": 8})
            for e in errata:
                if layout_serves(v, e["operand"], e["instruction"], e["shape"], e["types"],
                                 e["id"], record_arrangement(e)):
                    runs.append({"key": v.key, "selector": s, "mode": "check",
                                 "result": "mismatch", "trials": 8, "erratum": e["id"],
                                 "layout_hashes": {**hashes, e["operand"]: e["map_hash"]}})
    runs += copy.deepcopy(moves if moves is not None else _move_runs(records))
    return {"schema": 1, "device": "NVIDIA H100 80GB HBM3", "sm": 90, "driver": "x",
            "date": "2026-11-22T10:00:00Z", "runs": runs, "discovered": {}, "maps": {}}


def test_staleness_is_judged_against_the_corrected_catalog(export: dict[str, Any],
                                                           tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from formal.api import current_catalog
    from formal.cli import main as cli

    def main(argv: list[str]) -> int:
        return cli(["evidence", *argv])

    records, errata = current_catalog()
    assert [e["id"] for e in errata] == [e["id"] for e in export["errata"]]
    assert {r["id"]: r["map_hash"] for r in records} == \
        {r["id"]: r["map_hash"] for r in export["layouts"] + export["smem"] + export["scale"]
         + export["datapath"] + export["meta"] + export["tc_scale"]}
    full = tmp_path / "full"
    full.mkdir()
    moves = _move_runs(records)
    (full / "h100.json").write_text(json.dumps(_synthetic_evidence(records, errata,
                                                                   moves=moves)))
    assert main([str(full)]) == 0
    assert capsys.readouterr().out.startswith("0 stale")
    # a missing variant, a missing erratum run, an erratum that 'matched'
    holes = tmp_path / "holes"
    holes.mkdir()
    doc = _synthetic_evidence(records, errata, drop="mma.m8n8k4.col.row.f32.f16.f16.f32",
                              moves=moves)
    doc["runs"] = [r for r in doc["runs"] if not (r.get("erratum") == F64_A)]
    for r in doc["runs"]:
        if r.get("erratum") == B1_A and r["key"].endswith("xor_popc"):
            r["result"] = "match"
    (holes / "h100.json").write_text(json.dumps(doc))
    assert main([str(holes)]) == 1
    out = capsys.readouterr().out
    assert "mma.m8n8k4.col.row.f32.f16.f16.f32: no hardware match" in out
    assert f"no hardware run of the spec's erratum layout {F64_A}" in out
    assert f"{B1_A} as written gave 'match'" in out
    assert out.splitlines()[-1].startswith("3 stale")
    # (that the evidence in the repository covers the current catalog is
    # test_conventions.test_evidence_json_and_quiet_on_the_shipped_evidence, and CI's check)


# ---- robustness and the one command -------------------------------------------------------------


def test_a_sticky_fault_gets_a_fresh_process(export: dict[str, Any]) -> None:
    recs = export["layouts"]
    faulty = "mma.m16n8k16.s32.s8.u8.s32"
    report = supervisor.run_supervised(f"fake:fault={faulty},sticky=1", recs, trials=1,
                                       only="mma.m16n8k16.s32", timeout=30.0)
    by = {r.variant.key: r.result for r in report.runs}
    assert by[faulty] == "error"
    # the variants after it ran in a fresh process (the faulted one would fail them all)
    assert [k for k, res in by.items() if res != "match"] == [faulty]
    assert len(by) == 4


# (the run's deadline: test_execute.test_supervisor_survives_a_crash_a_hang_and_its_deadline)


def test_gpu_check_sh_is_one_command(export: dict[str, Any], tmp_path: Path) -> None:
    build = export["path"].parent
    env = dict(os.environ, DEVICE="fake", ONLY="mma.m16n8k16.f64", TRIALS="8")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_check.sh"), str(build),
                           str(tmp_path / "evidence")], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    files = list((tmp_path / "evidence").glob("*.json"))
    assert len(files) == 1
    ev = json.loads(files[0].read_text())
    modes = {(r["mode"], r.get("erratum", ""), r["result"]) for r in ev["runs"]}
    assert modes == {("check", "", "match"), ("discover", "", "match"),
                     ("check", F64_A, "mismatch")}
    assert all(r["trials"] >= 8 for r in ev["runs"] if r["mode"] == "check")
    last = proc.stdout.strip().splitlines()
    assert last[-1].startswith("checks:") and "errata: 1 of 1 refuted" in last[-1]
    assert last[-2].startswith("device: fake device")
    # usage: no layouts
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_check.sh"), str(tmp_path / "no"),
                           str(tmp_path / "ev2")], capture_output=True, text=True, env=env,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "--corrections" in proc.stderr
