"""Running wgmma.mma_async.sp without a GPU: the runner packs sparse A (registers: the
catalog's sparse A map; shared memory: the compressed 64 x K/2 matrix) and the metadata word
(the metadata map at the selector), the fake device emulates the tensor core with the
catalog's maps as the hardware's, and the check compares D bit for bit.  Hand-computed
words of one thread, a planted metadata error caught at the D row it corrupts (and the D the
corrupt metadata must give, computed here by hand), and the evidence side: a check run
confirms the 13 sparse layouts, and once the evidence holds any sparse run, every sparse
variant sm_90 runs is owed one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.api import model_of
from formal.base.matrix_variants import WGMMA_SP_VARIANTS, sparse_owed, variant
from formal.base.records import expand
from formal.cli import main
from formal.execute import cpu, devices, gpu_matrix, matrix_fake, record, smem
from formal.execute import matrix as mx
from formal.execute.runs import Report
from formal.prove.evidence import Evidence, default_dir
from formal.writers.evidence import stale
from formal.writers.export import layout_record


@pytest.fixture(scope="module")
def layouts() -> list[Any]:
    return list(model_of([]).layouts)


@pytest.fixture(scope="module")
def records(layouts: list[Any]) -> list[dict[str, Any]]:
    by_id = {x.id: x for x in layouts}
    return expand([layout_record(x, by_id) for x in layouts
                   if x.instruction in ("wgmma", "wgmma.sp")])


def _fields(word: int, n: int, bits: int) -> list[int]:
    return [(word >> (bits * i)) & ((1 << bits) - 1) for i in range(n)]


# ---- packing, by hand ------------------------------------------------------------------------


def test_thread_37_a_registers_and_metadata_f16(records: list[dict[str, Any]]) -> None:
    """m64nNk32 .f16, A from registers.  Thread 37 is warp 1, lane 5: groupID 1,
    threadID_in_group 1.  Its a4, a5 (register 2) are the two non-zeros of row 16 + 1 = 17,
    columns 4 * 1 + 16 = 20 .. 23 (chunk 5); with selector 0 it holds metadata (1 >> 1 ==
    0): field i is row 17 (i < 8) or 25, chunk (i & 7) >> 1 plus 4, slot i & 1.  With
    selector 1 thread 39 (threadID_in_group 3) holds the same fields."""
    for key, holder in (("wgmma.sp.m64n8k32.f32.f16.f16.rs.sel0", 37),
                        ("wgmma.sp.m64n8k32.f32.f16.f16.rs.sel1", 39)):
        v = variant(key)
        maps = mx.maps_for(v, records)
        assert set(maps) == {"A", "meta", "C/D"}
        lay = gpu_matrix.check_layout(v)
        t = mx.random_trial(v, maps, np.random.default_rng(11), 1, lay, lay)
        assert t.units is not None and t.inputs.shape == (1, 128, 4 + 4 + 1)
        u = t.units[0]
        word = int(t.inputs[0, 37, 2])
        assert word & 0xFFFF == int(t.a[0, 17, 20 + u[17, 5, 0]])
        assert word >> 16 == int(t.a[0, 17, 20 + u[17, 5, 1]])
        meta = int(t.inputs[0, holder, 8])
        want = [int(u[17 if i < 8 else 25, ((i & 7) >> 1) + 4, i & 1]) for i in range(16)]
        assert _fields(meta, 16, 2) == want
        # every 2:4 chunk names two distinct positions in increasing order
        assert all(a < b for a, b in zip(want[::2], want[1::2], strict=True))


def test_thread_37_metadata_k64_s8(records: list[dict[str, Any]]) -> None:
    """m64nNk64 8-bit: every thread holds metadata; thread 37 (groupID 1,
    threadID_in_group 1): row 16 + 1 + 8 * (1 & 1) = 25, chunk (i >> 1) + 8 * (1 >> 1) =
    i >> 1, slot i & 1."""
    v = variant("wgmma.sp.m64n8k64.s32.s8.s8.rs.sel0")
    maps = mx.maps_for(v, records)
    lay = gpu_matrix.check_layout(v)
    t = mx.random_trial(v, maps, np.random.default_rng(5), 1, lay, lay)
    assert t.units is not None
    meta = int(t.inputs[0, 37, v.words("A") + v.words("D")])
    assert _fields(meta, 16, 2) == [int(t.units[0, 25, i >> 1, i & 1]) for i in range(16)]


def test_shared_memory_a_is_the_compressed_matrix(records: list[dict[str, Any]]) -> None:
    """A from shared memory: each row's non-zeros in column order, 64 x K/2, laid out like a
    dense A of K/2 columns (tf32: one of each pair, 8 a row)."""
    for key in ("wgmma.sp.m64n8k32.f32.bf16.bf16.ss.sel1",
                "wgmma.sp.m64n8k16.f32.tf32.tf32.ss.sel0"):
        v = variant(key)
        maps = mx.maps_for(v, records)
        assert set(maps) == {"meta", "C/D"}
        lay = gpu_matrix.check_layout(v)
        t = mx.random_trial(v, maps, np.random.default_rng(2), 2, lay, lay)
        comp = smem.image_codes(t.image.view(np.uint8), v.a, lay, 64, v.k // 2)
        for tr in range(2):
            for r in (0, 17, 63):
                row = t.a[tr, r]
                assert comp[tr, r].tolist() == row[row != 0].tolist()


# ---- the fake device ---------------------------------------------------------------------------


RUNS = ["wgmma.sp.m64n8k32.f32.f16.f16.rs.sel1", "wgmma.sp.m64n64k32.f16.f16.f16.ss.sel0",
        "wgmma.sp.m64n8k32.f32.bf16.bf16.ss.sel1", "wgmma.sp.m64n8k16.f32.tf32.tf32.rs.sel1",
        "wgmma.sp.m64n8k16.f32.tf32.tf32.ss.sel0", "wgmma.sp.m64n8k64.f16.e4m3.e5m2.rs.sel0",
        "wgmma.sp.m64n8k64.s32.s8.u8.ss.sel0", "wgmma.sp.m64n256k64.s32.u8.u8.rs.sel0"]


@pytest.mark.parametrize("key", RUNS)
def test_fake_device_runs_match(records: list[dict[str, Any]], key: str) -> None:
    v = variant(key)
    dev = devices.FakeDevice(records)
    run, _ = gpu_matrix.run_matrix_task(dev, gpu_matrix.Task(key, "check",
                                                      gpu_matrix._lay(gpu_matrix.check_layout(v))),
                                 records, 3)
    assert (run.result, run.detail) == ("match", "3 trials bit-exact")
    assert dev.launches == 1 and run.seed is not None
    rec = run.record()
    assert rec["selector"] == v.selector and rec["instruction"] == "wgmma.sp"
    assert set(rec["layout_hashes"]) == ({"A", "meta", "C/D"} if v.a_source == "reg"
                                         else {"meta", "C/D"})


def test_the_planted_experiment_mismatches(records: list[dict[str, Any]]) -> None:
    key = "wgmma.sp.m64n8k64.f32.e5m2.e4m3.rs.sel0"
    tasks = [t for t in gpu_matrix.tasks(90, "wgmma.sp.m64n64k32.f32.f16.f16.rs.sel0")
             if t.mode == "experiment"]
    assert [(t.plant, t.expect) for t in tasks] == [("meta-chunks-swapped", "mismatch")]
    v = variant(key)
    run, _ = gpu_matrix.run_matrix_task(devices.FakeDevice(records), gpu_matrix.Task(
        key, "experiment", gpu_matrix._lay(gpu_matrix.check_layout(v)), expect="mismatch",
        plant="meta-chunks-swapped"), records, 2)
    assert run.result == "mismatch" and run.ok
    assert run.layout_hashes["meta"] != mx.maps_for(v, records)["meta"].map_hash


def test_a_wrong_metadata_map_mismatches_at_its_row(records: list[dict[str, Any]]) -> None:
    """The metadata map with row 5's chunks 0 and 1 exchanged: the runner writes chunk 0's
    indices where the hardware (the catalog's map) reads chunk 1's, so the hardware puts
    chunk 0's two values at chunk 1's positions within chunk 0, and the other way round.
    Only D row 5 differs, and it is exactly that A's product."""
    v = variant("wgmma.sp.m64n8k32.f32.f16.f16.rs.sel0")
    wrong = []
    for r in records:
        if r["instruction"] == "wgmma.sp" and r["operand"] == "metadata" and "f16" in r["types"]:
            rows = [{**f, "chunk": f["chunk"] ^ 1} if f["row"] == 5 and f["chunk"] < 2 else f
                    for f in r["fields"]]
            r = {**r, "fields": rows, "map_hash": ""}
        wrong.append(r)
    truth, bad = mx.maps_for(v, records), mx.maps_for(v, wrong)
    assert truth["meta"].map_hash != bad["meta"].map_hash
    lay = gpu_matrix.check_layout(v)
    t = mx.random_trial(v, bad, np.random.default_rng(7), 4, lay, lay)
    got = matrix_fake.emulate_wgmma(v, truth, t.inputs, t.image, t.a_off, t.b_off, lay, lay)
    cells, line = mx.wgmma_differences(v, truth, t, got)
    assert cells == [(5, c) for c in range(8)]
    assert line == ("32 D elements differ in 4 of 4 trials, 8 cells, first D[5][0] got -36.0 "
                    "want -39.0")
    # by hand: chunk 0's values at chunk 1's indices, chunk 1's at chunk 0's
    assert t.units is not None
    a = t.a.copy()
    for tr in range(4):
        p, q = t.units[tr, 5, 0], t.units[tr, 5, 1]
        v0, v1 = t.a[tr, 5, p], t.a[tr, 5, 4 + q]
        a[tr, 5, :8] = 0
        a[tr, 5, q] = v0
        a[tr, 5, 4 + p] = v1
    d = cpu.reference(v, a, t.b, t.c)
    assert (mx.codes_of(truth["C/D"], v.c, got) == d).all()


def test_the_runner_end_to_end_on_the_fake_device(records: list[dict[str, Any]],
                                                  tmp_path: Path) -> None:
    """``ptxlayout gpu --device fake``: the supervisor, its worker process and the evidence
    file, for the four .tf32 rows at N = 64 and their two experiments."""
    import json

    lay = tmp_path / "layouts.json"
    lay.write_text(json.dumps({"layouts": records}), encoding="utf-8")
    code = main(["gpu", "--layouts", str(lay), "--only", "wgmma.sp.m64n64k16", "--device",
                 "fake", "--trials", "2", "--record", str(tmp_path / "ev")])
    assert code == 0
    (path,) = (tmp_path / "ev").glob("*.json")
    ev = json.loads(path.read_text(encoding="utf-8"))
    got = sorted((r["key"], r["mode"], r["result"], r["selector"]) for r in ev["runs"])
    assert got == [("wgmma.sp.m64n64k16.f32.tf32.tf32.rs.sel0", "check", "match", 0),
                   ("wgmma.sp.m64n64k16.f32.tf32.tf32.rs.sel0", "experiment", "mismatch", 0),
                   ("wgmma.sp.m64n64k16.f32.tf32.tf32.rs.sel1", "check", "match", 1),
                   ("wgmma.sp.m64n64k16.f32.tf32.tf32.ss.sel0", "check", "match", 0),
                   # A in shared memory uncompressed: not what the fake device reads
                   ("wgmma.sp.m64n64k16.f32.tf32.tf32.ss.sel0", "experiment", "mismatch", 0),
                   ("wgmma.sp.m64n64k16.f32.tf32.tf32.ss.sel1", "check", "match", 1)]


def test_the_runner_refuses_an_only_that_names_no_variant(
        records: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing checked is not a success: an --only that matches no key exits 2 and says so."""
    import json

    lay = tmp_path / "layouts.json"
    lay.write_text(json.dumps({"layouts": records}), encoding="utf-8")
    code = main(["gpu", "--layouts", str(lay), "--only", "wgmma.sp.m64n64k99", "--device",
                 "fake", "--record", str(tmp_path / "ev")])
    assert code == 2 and not (tmp_path / "ev").exists()
    assert "no variant matches 'wgmma.sp.m64n64k99'" in capsys.readouterr().err


# ---- the evidence ---------------------------------------------------------------------------


def test_sparse_runs_confirm_the_layouts_and_are_then_owed(
        records: list[dict[str, Any]], layouts: list[Any], tmp_path: Path) -> None:
    """Fake-device checks of six variants (one per accumulator layout, every A and metadata
    layout among them) confirm all 13 sparse layouts; the evidence then owes a match of
    every other sparse variant sm_90 runs, with the current hashes."""
    keys = ["wgmma.sp.m64n8k32.f16.f16.f16.rs.sel0", "wgmma.sp.m64n8k32.f32.f16.f16.rs.sel0",
            "wgmma.sp.m64n8k16.f32.tf32.tf32.rs.sel0", "wgmma.sp.m64n8k64.f16.e4m3.e4m3.rs.sel0",
            "wgmma.sp.m64n8k64.f32.e4m3.e4m3.rs.sel0", "wgmma.sp.m64n8k64.s32.s8.s8.rs.sel0"]
    dev = devices.FakeDevice(records)
    runs = []
    for k in keys:
        run, _ = gpu_matrix.run_matrix_task(dev, gpu_matrix.Task(
            k, "check", gpu_matrix._lay(gpu_matrix.check_layout(variant(k)))), records, 2)
        assert run.result == "match"
        runs.append(run)
    record.write_evidence(Report(dev.info(), runs=runs), tmp_path)
    ev = Evidence.load(tmp_path)
    sparse = [x for x in layouts if x.instruction == "wgmma.sp"]
    assert len(sparse) == 13
    verdicts = {x.short_id: ev.verdict(x) for x in sparse}  # type: ignore[attr-defined]
    assert {k: v.status for k, v in verdicts.items()} == {k: "proved" for k in verdicts}
    assert "at N = 8," in verdicts["wgmma.sp.m64nNk64.D.s32"].message
    assert sparse_owed(r.key for r in ev.runs)
    lines = [x for x in stale(ev, layouts, 90) if x.startswith("wgmma.sp.")]
    assert len(lines) == len(WGMMA_SP_VARIANTS) - len(keys) == 114
    assert not any(x.split(":")[0] in keys for x in lines)
    assert "wgmma.sp.m64n8k32.f16.f16.f16.rs.sel1: no hardware match for the current " \
        "layouts (no run;" in "\n".join(lines)


def test_the_recorded_evidence_owes_every_sparse_run_and_has_it(layouts: list[Any]) -> None:
    """Since the H100 ran wgmma.sp (2026-11-25), every sparse variant sm_90 runs is owed a
    match with today's maps -- and the evidence has each one."""
    where = default_dir()
    assert where is not None
    ev = Evidence.load(where)
    assert sparse_owed(r.key for r in ev.runs)
    assert len({r.key for r in ev.runs if r.key.startswith("wgmma.sp.")
                and r.mode == "check" and r.result == "match"}) == 120
    assert not [x for x in stale(ev, layouts) if x.startswith("wgmma.sp.")]
