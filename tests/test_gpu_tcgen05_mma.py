"""The ``tcgen05-mma`` family of ``ptxlayout gpu`` (``formal.execute.tcgen05_mma``): its tasks,
a truthful fake Blackwell device passing every one, planted truths caught with their cell,
the kernels assembled for sm_100a, a device without sm_100a running none, and the evidence a
fake run writes read back (it confirms the data path's hardware obligation)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import TCGEN05_MMA_VARIANTS, variant
from formal.execute import supervisor
from formal.execute.datapath import datapath_map
from formal.execute.devices import FakeDevice
from formal.execute.ptx import assemble, ptxas_path
from formal.execute.ptx_tcgen05 import module_text
from formal.execute.record import gpu_command
from formal.execute.runs import Job, Run, Task
from formal.execute.tcgen05_mma import (
    FakeTcgen05Device,
    kernel_of,
    run_tc_task,
    tc_mma_tasks,
    tc_operands,
    tc_smem_record,
)

KEY_D = "tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


def test_the_rows_and_tasks(records: list[dict[str, Any]]) -> None:
    # six dense data paths (C is the sparse pair's) x N 64, 128 x four plain kinds
    assert len(TCGEN05_MMA_VARIANTS) == 6 * 2 * 4
    assert {v.datapath for v in TCGEN05_MMA_VARIANTS} == set("ABDEFG")
    assert variant(KEY_D).target == "sm_100a" and variant(KEY_D).dims.m == 128
    tasks = tc_mma_tasks(Job(records), 100)
    dense = [t for t in tasks if ".sp." not in t.key and ".block_scale." not in t.key]
    checks = [t for t in dense if t.mode == "check"]
    plants = [t for t in dense if t.mode == "experiment"]
    assert len(checks) == 48 and len(plants) == 6 * 2
    assert {t.plant for t in plants} == {"other-datapath", "lbo-sbo-swapped"}
    assert all(t.expect == "mismatch" for t in plants)
    # the swizzle mode rotates: each width's rows meet every mode
    for bits in (32, 16, 8):
        modes = {t.catalog.split(".")[3] for t in checks if t.catalog.endswith(f".b{bits}")}
        assert modes == {"none", "32B", "64B", "128B"}, bits
    # a device that is not sm_100a: one compile task a row, nothing else
    # (and the 24 .sp rows: tests/test_gpu_tcgen05_sp.py; the 45 block-scaled rows:
    # tests/test_gpu_tcgen05_scale_rows.py)
    assert [t.mode for t in tc_mma_tasks(Job(records), 90)] == ["compile"] * (48 + 24 + 45)
    assert len(tc_mma_tasks(Job(records, only="tcgen05.mma.m128n64k16,tcgen05.mma.m128n128k16"),
                            100)) == 2 * 2 + 2 * 2


def test_the_launch_of_one_row_by_hand(records: list[dict[str, Any]]) -> None:
    v = variant(KEY_D)
    m = datapath_map(records, "D", 64)
    rec = tc_smem_record(records, "tcgen05.smem.K-major.128B.b16")
    assert rec is not None and rec["choices"][0]["descriptor"] == "0x4000404000010000"
    ops = tc_operands(v, m, rec, np.random.default_rng(1))
    ln = ops.launch
    assert ln.idesc == 0x08100010  # kind::f16, F32 D, N 64, M 128, K-major
    # A: 128 rows x 32 bytes, eight rows a 1024-byte atom -> 16384 bytes; B from there
    assert ln.adesc == 0x4000404000010000 and ln.bdesc == 0x4000404000010000 | (16384 >> 4)
    assert ln.smem.shape == (1, 16384 + 8192)
    assert ln.kernel.smem_bytes == 24576 and ln.kernel.out_columns == 64
    assert [(r.warp, r.column, r.count) for r in ln.kernel.reads] == \
        [(w, 0, 64) for w in range(4)]
    a = ops.a.astype(np.int64)
    assert ops.a.shape == (128, 16) and ops.b.shape == (16, 64) and len(np.unique(a)) > 4
    # D's words are the f32 bits of A @ B
    from formal.execute.numbers import decode
    d = decode("f16", ops.a).astype(np.float64) @ decode("f16", ops.b).astype(np.float64)
    assert np.array_equal(ops.d_words.view(np.float32), d.astype(np.float32))


def test_a_truthful_fake_passes_every_task(records: list[dict[str, Any]]) -> None:
    fake = FakeTcgen05Device(records)
    for task in tc_mma_tasks(Job(records), 100):
        run = run_tc_task(fake, task, records, 1)
        assert run.result == task.expect, (task.label, run.detail)
        assert run.ok
        if task.mode == "check":
            cells = variant(task.key).dims.m * variant(task.key).n
            assert f"every one of the {cells} cells of D bit-exact" in run.detail
        else:
            assert "cells of D differ" in run.detail and run.d_cells
    assert fake.launches == 60 + 28 + 84  # the 24 .sp rows, 4 plants; 45 block-scaled, 39


def test_a_truth_with_warps_1_and_2_swapped_is_named_with_its_cell(
        records: list[dict[str, Any]]) -> None:
    task = Task(KEY_D, "check", catalog="tcgen05.smem.K-major.none.b16")
    run = run_tc_task(FakeTcgen05Device(records, warps=(1, 2)), task, records, 1)
    assert run.result == "mismatch" and not run.ok
    # Layout D puts row 32 at lane 32; this device puts warp 2's rows (64..95) there.  The
    # first cell named is lane 32's first column whose random values differ between rows 32
    # and 64 (column 0 but for a chance equality: 8 in 4096 cells coincided in one run)
    import re
    first = re.search(r"first: CTA 0 lane 32 column (\d+) holds \S+ where D\[32\]\[(\d+)\] is",
                      run.detail)
    assert first is not None and first[1] == first[2], run.detail
    assert " of 8192 cells of D differ read through Layout D" in run.detail
    # only warps 1 and 2's rows (32..95) can differ: at most half the cells, and every cell the
    # run names lies there (how many of them differ depends on the random data, not asserted)
    assert 0 < int(run.detail.split(" of ")[0]) <= 4096
    assert run.d_cells[0] == [32, 0]
    assert all(32 <= r < 96 for r, _ in run.d_cells)


def test_a_swizzle_read_the_other_way_is_caught_and_no_swizzle_is_not(
        records: list[dict[str, Any]]) -> None:
    fake = FakeTcgen05Device(records, swizzle_reversed=True)
    for mode in ("none", "32B", "64B", "128B"):
        run = run_tc_task(fake, Task(KEY_D, "check", catalog=f"tcgen05.smem.K-major.{mode}.b16"),
                          records, 1)
        assert run.result == ("match" if mode == "none" else "mismatch"), mode
    # the first cell: D[0][0] is read with A's and B's rows from elsewhere
    assert "CTA 0 lane 0 column 0" in run.detail


def test_the_kernels_assemble_for_sm_100a(records: list[dict[str, Any]]) -> None:
    if ptxas_path() is None:
        pytest.skip("no ptxas")
    kernels = [kernel_of(v, datapath_map(records, v.datapath, v.n), 24576)
               for v in TCGEN05_MMA_VARIANTS]
    assert len({k.name for k in kernels}) == 48
    text = module_text(kernels)
    assert text.count("tcgen05.mma.cta_group::2.kind::i8") == 4  # A and B at two N
    assert text.count("tcgen05.mma.ws.cta_group::1.kind::tf32") == 4  # E and G
    ok, msg = assemble(text, "sm_100a")
    assert ok, msg[:2000]
    ok, msg = assemble(text, "sm_90a")
    assert not ok  # tcgen05 is not sm_90's


def test_the_family_through_the_executor(records: list[dict[str, Any]]) -> None:
    # a fake sm_100 device: every task run, the plants mismatching as they must
    dev = FakeDevice(records, sm=100)
    report = supervisor.run_all(dev, records, trials=1, only="tcgen05.mma.m128n64k16")
    assert [(r.variant.key, r.mode, r.result) for r in report.runs] == \
        [(KEY_D, "check", "match"), ("tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutB",
                                     "check", "match"),
         (KEY_D, "experiment", "mismatch"), (KEY_D, "experiment", "mismatch"),
         ("tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutB", "experiment", "mismatch"),
         ("tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutB", "experiment", "mismatch")]
    assert all(r.ok for r in report.runs)
    # a record survives the evidence file: its plant, expectation and data path
    rec = report.runs[2].record()
    assert (rec["plant"], rec["expect"], rec["datapath"], rec["kind"]) == \
        ("other-datapath", "mismatch", "D", "f16")
    back = Run.from_record(json.loads(json.dumps(rec)))
    assert (back.variant.key, back.plant, back.expect, back.ok) == \
        (KEY_D, "other-datapath", "mismatch", True)
    # an sm_90 device runs none: each row says it needs sm_100a
    report = supervisor.run_all(FakeDevice(records, sm=90), records, trials=1,
                                only="tcgen05.mma", use_ptxas=False)
    assert len(report.runs) == 48 + 24 + 45 and {r.result for r in report.runs} == {"not-executed"}
    assert all(r.detail == "tcgen05.mma needs sm_100a; the device is sm_90; not assembled "
               "(--no-ptxas)" for r in report.runs)


def test_gpu_on_a_device_without_sm_100a_checks_nothing_and_says_so(
        records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(only="tcgen05.mma.m32n64", device="fake:sm=90", no_ptxas=True,
                              trials=1, record=None, timeout=60.0)
    assert gpu_command(args, current_catalog()) == 2
    out, err = capsys.readouterr()
    assert "ran none of the selected variants" in err and "nothing was checked" in err
    # each of the four rows (layout G at N = 64, four kinds) says why it was not run
    assert out.count("check: not-executed (0.00 s) tcgen05.mma needs sm_100a; the device is "
                     "sm_90; not assembled (--no-ptxas)") == 4
    assert out.splitlines()[-1] == "checks: none; moves and wgmma: 4 runs, 0 not as expected"


def test_a_fake_runs_evidence_is_read_and_confirms_the_data_path(
        records: list[dict[str, Any]], tmp_path: Path) -> None:
    from formal.execute.record import write_evidence
    from formal.prove.evidence import Evidence
    report = supervisor.run_all(FakeDevice(records, sm=100), records, trials=1,
                                only="tcgen05.mma.m32")
    path = write_evidence(report, str(tmp_path))
    ev = Evidence.load(tmp_path)
    assert Path(path).parent == tmp_path and ev.sm == 100
    keys = {r.key for r in ev.runs}
    assert keys == {v.key for v in TCGEN05_MMA_VARIANTS if v.datapath == "G"}
    assert {(r.mode, r.result) for r in ev.runs} == {("check", "match"),
                                                     ("experiment", "mismatch")}
    g = next(r for r in records if r.get("layout") == "G")
    assert {r.layout_hashes["datapath"] for r in ev.runs} == {g["map_hash"]}
    # the data path's hardware obligation: confirmed by these runs (the cases are
    # tests/test_gpu_tcgen05_evidence.py's)
    from formal import catalog
    from formal.model.datapath import datapaths
    from formal.parse.document import parse_document
    from formal.prove.datapath import prove_datapath
    doc = next(d for d in catalog.documents() if d.name.endswith("tcgen05-datapath.md"))
    dps = datapaths([ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None])
    result, _findings = prove_datapath(next(d for d in dps if d.layout == "G"), None, ev)
    hw = next(v for v in result.verdicts if v.name == "hardware")
    assert hw.status == "proved" and hw.message.startswith("confirmed on fake device")
    assert "8 of 8 tcgen05-mma tasks read D back by this map bit-exact" in hw.message


def test_a_wrong_instruction_descriptor_does_not_pass(records: list[dict[str, Any]]) -> None:
    """The fake executes what the idesc says: M 64 in place of 128 (Layout F's shape, half
    of D), or bf16 in place of f16 (the same bits read as other numbers), mismatches."""
    from dataclasses import replace

    from formal.execute.idesc import encode_idesc, idesc_for
    from formal.execute.tcgen05_mma import tc_differences
    v = variant(KEY_D)
    m = datapath_map(records, "D", 64)
    rec = tc_smem_record(records, "tcgen05.smem.K-major.64B.b16")
    assert rec is not None
    ops = tc_operands(v, m, rec, np.random.default_rng(7))
    fake = FakeTcgen05Device(records)
    assert tc_differences(m, ops.d_words, fake.launch(ops.launch)) == []
    for wrong in (idesc_for("f16", m=64, n=64, a="f16", b="f16", d="f32"),
                  idesc_for("f16", m=128, n=64, a="bf16", b="bf16", d="f32")):
        out = fake.launch(replace(ops.launch, idesc=encode_idesc(wrong)))
        bad = tc_differences(m, ops.d_words, out)
        assert len(bad) > 4000, wrong
    # M 64 in a one-CTA, not-.ws mma is Layout F's: the device wrote D[64:] nowhere and
    # Layout F's cells, so a cell Layout D reads for row 64 or later holds no row of that D
    out = fake.launch(replace(ops.launch, idesc=encode_idesc(
        idesc_for("f16", m=64, n=64, a="f16", b="f16", d="f32"))))
    bad = tc_differences(m, ops.d_words, out)
    assert any(b["d"][0] >= 64 for b in bad)
