"""One ``ptxlayout gpu`` for every family, end to end on the fake device.

The command the GPU machine runs (numpy only here: the fake device emulates mma, the moves and
wgmma with the exported maps as the hardware's) checks mma, ldmatrix, stmatrix, movmatrix,
wgmma and wgmma.sp in ONE invocation and writes ONE evidence file, which the prover's
evidence reader then takes as it took the two files of the two runners before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.base.matrix_variants import variant
from formal.execute import devices, gpu_matrix, record
from formal.execute import matrix as mx
from formal.execute.matrix_fake import emulate_move

ROOT = Path(__file__).resolve().parents[1]

ONLY = ("mma.m16n8k8.f32.tf32,ldmatrix.m8n8.x4.b16,stmatrix.m8n8.x1.trans,movmatrix,"
        "wgmma.m64n8k8.f32.tf32.tf32.rs,wgmma.sp.m64n8k16.f32.tf32.tf32.ss.sel1")

# the GPU machine has neither the prover nor the parser: the command must not import them
BLOCKER = """
import sys
from formal.cli import main
code = main(['gpu', '--layouts', sys.argv[1], '--device', 'fake', '--only', sys.argv[3],
             '--record', sys.argv[2], '--no-ptxas', '--trials', '2', '--discover'])
assert not [m for m in sys.modules if m.split('.')[0] in ('z3', 'lark', 'sympy')]
sys.exit(code)
"""


@pytest.fixture(scope="module")
def records(exported_layouts: Path) -> list[dict[str, Any]]:
    return record.load_export(str(exported_layouts))[0]


def test_every_family_in_one_invocation_and_one_evidence_file(exported_layouts: Path,
                                                              tmp_path: Path) -> None:
    ev_dir = tmp_path / "ev"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", BLOCKER, str(exported_layouts), str(ev_dir), ONLY],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (path,) = ev_dir.glob("*.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["device"] == "fake device (emulated sm_90)" and doc["sm"] == 90
    got = {(r["instruction"], r["mode"], r["result"]) for r in doc["runs"]}
    assert got == {("mma", "check", "match"), ("mma", "discover", "match"),
                   ("ldmatrix", "check", "match"), ("ldmatrix", "discover", "match"),
                   ("stmatrix", "check", "match"), ("stmatrix", "discover", "match"),
                   ("movmatrix", "check", "match"), ("movmatrix", "discover", "match"),
                   ("wgmma", "check", "match"), ("wgmma.sp", "check", "match")}
    keys = {r["key"] for r in doc["runs"]}
    assert {"mma.m16n8k8.f32.tf32.tf32.f32", "ldmatrix.m8n8.x4.b16", "stmatrix.m8n8.x1.trans.b16",
            "movmatrix.m8n8.trans.b16", "wgmma.m64n8k8.f32.tf32.tf32.rs",
            "wgmma.sp.m64n8k16.f32.tf32.tf32.ss.sel1"} == keys
    lines = proc.stdout.strip().splitlines()
    assert lines[-2].startswith("device: fake device (emulated sm_90)")
    assert lines[-1].startswith("checks: 1 match; discoveries: 1 agree, 0 differ")
    assert lines[-1].endswith("moves and wgmma: 8 runs, 0 not as expected")
    assert any(x.startswith("ldmatrix  discover    1 match") for x in lines)
    # the prover's reader takes the one file: each family's runs, by key
    from formal.prove.evidence import Evidence

    ev = Evidence.load(path)
    assert {r.key for r in ev.runs} == keys and len(ev.files) == 1


def test_the_fake_move_follows_its_truth(records: list[dict[str, Any]]) -> None:
    """A move packed with a map that is not the fake device's truth mismatches: the emulation
    reads the truth, not the map the runner packed with."""
    v = variant("ldmatrix.m8n8.x2.b16")
    maps = mx.maps_for(v, records)
    r = maps["r"]
    swapped = {"r": replace(r, row=r.row[:, ::-1].copy(), col=r.col[:, ::-1].copy(),
                            map_hash="other")}
    t = mx.move_trial(v, swapped, np.random.default_rng(3), 2, gpu_matrix.MOVE_IMAGE)
    got = emulate_move(v, maps, t)
    diffs = mx.move_differences(v, swapped, t, got)
    assert diffs and diffs[0].startswith("trial 0: lane 0 element 0 (cell 8, 1): got 0x")
    assert not mx.move_differences(v, maps, mx.move_trial(
        v, maps, np.random.default_rng(3), 2, gpu_matrix.MOVE_IMAGE),
        emulate_move(v, maps, mx.move_trial(v, maps, np.random.default_rng(3), 2,
                                            gpu_matrix.MOVE_IMAGE)))
    # a form the device cannot run is assembled, or (--no-ptxas) not
    sm100 = gpu_matrix.Task("ldmatrix.m16n16.x1.trans.b8", "compile")
    run, _ = gpu_matrix.run_matrix_task(None, sm100, records, 1, use_ptxas=False)
    assert (run.result, run.detail) == ("not-executed",
                                        "needs sm_100a; not assembled (--no-ptxas)")
    dev = devices.FakeDevice(records, fault=[v.key])
    with pytest.raises(devices.DeviceError, match="launch failed"):
        dev.move(v, t)


# the files the two runners wrote before there was one (a later file is the one runner's own)
OLD_FILES = ("nvidia-h100-80gb-hbm3-20261122T090205Z.json",
             "nvidia-h100-80gb-hbm3-20261122T090215Z.json",
             "nvidia-h100-80gb-hbm3-20261122T094818Z.json",
             "nvidia-h100-80gb-hbm3-20261122T122444Z.json",
             "nvidia-h100-80gb-hbm3-matrix-20261123T192415Z.json",
             "nvidia-h100-80gb-hbm3-matrix-20261125T125136Z.json")


def test_every_old_evidence_run_reads_back_and_is_written_as_it_was() -> None:
    """The two runners' files keep counting: every run of every file in proofs/evidence (four
    of the mma runner, two of the move / wgmma runner) is a row of the one table, and the
    one Run writes it back field for field -- the same runs, the same verdicts."""
    from formal.base.matrix_variants import variant
    from formal.execute.runs import Run

    files = sorted((ROOT / "proofs" / "evidence").glob("*.json"))
    assert set(OLD_FILES) <= {p.name for p in files}
    seen: dict[str, int] = {}
    retired = []
    for path in files:
        for rec in json.loads(path.read_text(encoding="utf-8"))["runs"]:
            try:
                variant(rec["key"])
            except KeyError:  # a key no row has: it counts for nothing, now as before
                retired.append((path.name[-21:], rec["key"], rec["result"]))
                continue
            run = Run.from_record(rec)
            assert run.record() == rec, (path.name, rec["key"])
            if path.name in OLD_FILES:
                seen[run.variant.instruction] = seen.get(run.variant.instruction, 0) + 1
    # the m8n8k4 .f16 rows were one row before .alayout / .blayout were rows of their own; the
    # oldest file never ran them, and no verdict read them then or now
    assert retired == [("20261122T090205Z.json", "mma.m8n8k4.f16.f16.f16.f16", "not-executed"),
                       ("20261122T090205Z.json", "mma.m8n8k4.f32.f16.f16.f32", "not-executed")]
    assert seen == {"mma": 522, "mma.sp": 540, "ldmatrix": 24, "stmatrix": 15, "movmatrix": 2,
                    "wgmma": 260, "wgmma.sp": 143}


def test_a_family_is_one_row_and_its_failure_is_its_task_alone(
        records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """One task list from the rows of ``FAMILIES``, in table order; a row added to the table
    runs with the others, and a task of it that raises is an ``error`` run of that task
    alone while the tasks around it still run."""
    from formal.execute import supervisor
    from formal.execute.runs import Outcome, Task

    assert [f.name for f in supervisor.FAMILIES] == ["mma", "matrix", "tmem", "block-scale",
                                                    "tcgen05-mma"]

    def toy_tasks(job: Any, sm: int) -> list[Task]:
        return [Task("ldmatrix.m8n8.x1.b16", "check", plant="raise")] if sm else []

    def toy_run(device: Any, job: Any, task: Task, memo: dict[str, Any]) -> Outcome:
        raise RuntimeError("a planted fault")

    toy = supervisor.Family("toy", toy_tasks, toy_run)
    monkeypatch.setattr(supervisor, "FAMILIES", (*supervisor.FAMILIES, toy))
    only = "mma.m16n8k8.f32.tf32,ldmatrix.m8n8.x1.b16"
    job = supervisor.Job(records, (), 1, only)
    names = [(f.name, t.key, t.mode) for f, t in supervisor.all_tasks(job, 90)]
    assert names == [("mma", "mma.m16n8k8.f32.tf32.tf32.f32", ""),
                     ("matrix", "ldmatrix.m8n8.x1.b16", "check"),
                     ("matrix", "ldmatrix.m8n8.x1.b16", "discover"),
                     ("toy", "ldmatrix.m8n8.x1.b16", "check")]
    report = supervisor.run_all(devices.FakeDevice(records), records, trials=1, only=only,
                                use_ptxas=False)
    got = [(r.variant.key, r.mode, r.result) for r in report.runs]
    assert got == [("mma.m16n8k8.f32.tf32.tf32.f32", "check", "match"),
                   ("ldmatrix.m8n8.x1.b16", "check", "match"),
                   ("ldmatrix.m8n8.x1.b16", "discover", "match"),
                   ("ldmatrix.m8n8.x1.b16", "check", "error")]
    assert report.runs[-1].detail.startswith("RuntimeError: a planted fault")
