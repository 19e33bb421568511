"""Block-scaled mma.sync as a family of ``ptxlayout gpu`` (one row of the supervisor's table):
on the lent sm_90 each form is assembled for sm_120a and counted not run (exit 2: nothing was
checked); on an sm_120 fake device every scale factor of every legal selector pair is checked
through the same kernels' words, and a device that reads one factor from another byte is
caught with the factor and the D cell it changed."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import BLOCK_SCALE_VARIANTS, variant
from formal.cli import main
from formal.execute import supervisor
from formal.execute.block_scale import SCALE_INSTRUCTION, scale_maps_in_records, scale_tasks
from formal.execute.devices import FakeDevice
from formal.execute.runs import Job

FORM = "mma.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue4m3"
HAS_PTXAS = __import__("shutil").which("ptxas") is not None


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    """The catalog as exported JSON records: the proved scale layouts among them as
    ``formal.writers.export_scale`` writes them (the format ``formal.execute.block_scale``
    reads)."""
    layouts, _errata = current_catalog()
    assert sum(r.get("instruction") == SCALE_INSTRUCTION for r in layouts) == 10
    return layouts


def test_the_family_is_one_row_with_a_task_per_legal_form() -> None:
    assert "block-scale" in [f.name for f in supervisor.FAMILIES]
    job = Job([], [], 1, None)
    assert [t.key for t in scale_tasks(job, 90)] == [v.key for v in BLOCK_SCALE_VARIANTS]
    assert {t.mode for t in scale_tasks(job, 90)} == {"compile"}  # sm_90: assembled only
    assert {t.mode for t in scale_tasks(job, 120)} == {"check"}
    assert variant(FORM).scale_vec == 4  # the evidence's key reads back to its row


def test_scale_maps_are_read_from_the_records(records: list[dict[str, Any]]) -> None:
    a, b = scale_maps_in_records(variant(FORM), records)
    assert (a.tile, b.tile) == ((16, 4), (4, 8))
    # every (byte-id, thread-id) pair the spec allows for .scale_vec::4X: byte-id 0 and
    # thread-id 0 (lanes % 4 in {0, 1}) or 1 ({2, 3}); each pair's 64 factors of scale_A once
    assert sorted(a.places) == [(0, 0), (0, 1)]
    assert all(len(set(p)) == 64 for p in a.places.values())
    with pytest.raises(Exception, match="no mma.block_scale map of scale_A or scale_B"):
        scale_maps_in_records(variant(FORM), [])


def test_an_sm_120_fake_device_checks_every_factor(records: list[dict[str, Any]]) -> None:
    dev = FakeDevice(records, sm=120)
    report = supervisor.run_all(dev, records, trials=1, only=FORM)
    runs = [r for r in report.runs if r.variant.key == FORM]
    assert [(r.result, r.detail) for r in runs] == [
        ("match", "384 scale factors, each at every legal selector pair, in the (lane, byte) "
                  "its map says")]  # (16 x 4 + 4 x 8) factors at each of 4 runs: B's four
    # selector pairs, A's two beside them in turn (block_scale.selector_pairs)


def test_a_device_that_reads_another_byte_is_caught(records: list[dict[str, Any]]) -> None:
    """The device's truth swaps bytes 0 and 1 of scale_A for lane 0: the factors (row 0,
    block 0) and (row 0, block 1) act on each other's K block.  Same row, so all-ones A and B
    could not tell; with A and B at 1, 2, 1/2, 4 by K block (v_j^2 = 1, 4, 1/4, 16; K = 64,
    blocks of 16) D is 16 * 21.25 = 340, marking (row 0, block 0) must give 340 + 16 * 1 = 356
    on row 0, and the swapped device gives 340 + 16 * 4 = 404: named with the factor and the
    D cell (4 faults: the two factors, at the two runs with thread-id-a 0)."""
    truth = [dict(r) for r in records]
    for r in truth:
        if r.get("instruction") == SCALE_INSTRUCTION and r["operand"] == "scale_A" \
                and r["scale_type"] == "ue4m3":
            r["places"] = [[bi, ti, ln, {0: 1, 1: 0}.get(by, by) if ln == 0 else by, row, col]
                           for bi, ti, ln, by, row, col in r["places"]]
    dev = FakeDevice(truth, sm=120)
    report = supervisor.run_all(dev, records, trials=1, only=FORM)
    (run,) = [r for r in report.runs if r.variant.key == FORM]
    assert run.result == "mismatch"
    assert run.detail == ("4 of 384 factors misplaced; first: {'selector': [0, 0, 0, 0], "
                          "'factor': {'operand': 'A', 'row': 0, 'col': 0}, 'lane': 0, "
                          "'element': 0, 'd': [0, 0], 'got': 404.0, 'want': 356.0}")


@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_on_sm_90_the_forms_are_assembled_and_not_run(capsys: pytest.CaptureFixture[str]) \
        -> None:
    code = main(["gpu", "--device", "fake", "--only", FORM])
    out, err = capsys.readouterr()
    assert code == 2  # the device ran none of the selected variants: nothing was checked
    assert ("check: compiled-only" in out and "block-scaled mma.sync needs sm_120a; the "
            "device is sm_90: assembled with ptxas, not run" in out)
    assert "checks: 1 compiled-only" in out
    assert "ran none of the selected variants" in out + err


def test_without_ptxas_the_forms_are_not_executed() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["gpu", "--device", "fake", "--no-ptxas", "--only", FORM])
    assert code == 2
    assert "not-executed" in out.getvalue() and "not assembled (--no-ptxas)" in out.getvalue()


@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_a_form_newer_than_this_ptxas_is_not_executed_rather_than_an_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``.scale_vec::4X .ue8m0`` mxf4nvf4 form needs PTX ISA 9.1: a ptxas that reads only
    9.0 (CUDA 13.0) cannot judge it, so the run says so (not-executed), never an error of
    the form -- the H100 run of 2026-11-26 reported it as one."""
    from formal.execute import ptx
    monkeypatch.setattr(ptx, "ptxas_isa", lambda exe: ((9, 0), "13.0"))
    form = "mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue8m0"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["gpu", "--device", "fake", "--only", form])
    text = out.getvalue()
    assert code == 2
    assert "not-executed" in text and "error" not in text.split("checks:")[-1].split("\n")[0]
    assert "not assembled: needs PTX ISA 9.1; ptxas 13.0 reads up to 9.0" in text
