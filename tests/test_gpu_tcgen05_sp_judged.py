"""The ``tcgen05.mma.sp`` metadata layouts' ``hardware`` obligation judged from the runs
(``formal.prove.tc_meta.meta_hardware``): a fake sm_100 run's evidence, written to a tmp folder
(never to proofs/evidence/), confirms ``tcgen05.sp_meta.m128.f16`` at both selectors; a run
whose truth places chunks 0 and 1 the other way refutes it with a cell of D; the layout changed
since the run is stale; evidence without such a run leaves it unconfirmed for want of a
device."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.execute import supervisor
from formal.execute.devices import FakeDevice
from formal.execute.record import write_evidence
from formal.model.tc_meta import MetaLayout
from formal.prove.evidence import Evidence
from formal.prove.tc_meta import META_NO_DEVICE, meta_hardware, meta_hash, prove_meta
from formal.prove.verdicts import Verdict

KIND = "tcgen05.mma.sp.m128n64k32.kind::f16"
ONLY = f"{KIND}.f32.f16.f16.layoutD.sel"  # Layout D's f16 rows at selectors 0 and 1 (not .ws)
LID = "tcgen05.sp_meta.m128.f16"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


@pytest.fixture(scope="module")
def layouts() -> dict[str, MetaLayout]:
    from formal import catalog
    from formal.model.tc_meta import meta_layouts
    from formal.parse.tc_meta import read_tc_meta
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    return {lay.id: lay for lay in meta_layouts(read_tc_meta(text, "t")[0])}


def _run(truth: list[dict[str, Any]], records: list[dict[str, Any]], folder: Path,
         only: str = ONLY) -> Evidence:
    report = supervisor.run_all(FakeDevice(truth, sm=100), records, trials=1, only=only)
    write_evidence(report, folder)
    return Evidence.load(folder)


def _hardware(lay: MetaLayout, ev: Any) -> dict[int, Verdict]:
    results, _findings = prove_meta(lay, ev)
    return {int(r.id.rpartition(".sel")[2]): next(v for v in r.verdicts if v.name == "hardware")
            for r in results}


def test_the_hash_prove_judges_by_is_the_records(records: list[dict[str, Any]],
                                                 layouts: dict[str, MetaLayout]) -> None:
    metas = {r["id"]: r["map_hash"] for r in records if r.get("instruction") == "tcgen05.sp_meta"}
    assert len(metas) == 19
    for lid, h in metas.items():
        assert meta_hash(layouts[lid]) == h, lid


def test_a_matching_sm_100_run_confirms_the_layout(records: list[dict[str, Any]],
                                                   layouts: dict[str, MetaLayout],
                                                   tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    assert sorted({(r.key, r.mode, r.result) for r in ev.runs}) == [
        (f"{ONLY}0", "check", "match"), (f"{ONLY}0", "experiment", "mismatch"),
        (f"{ONLY}1", "check", "match")]
    hw = _hardware(layouts[LID], ev)
    assert hw[0].status == "proved" and hw[1].status == "proved", (hw[0].message, hw[1].message)
    assert hw[0].message.startswith("confirmed on fake device (emulated sm_100)")
    assert "1 of 1 tcgen05.mma.sp rows with the metadata placed by this layout at selector 0 " \
           "bit-exact (1 trials); the planted edit meta-chunks-swapped mismatched" \
           in hw[0].message
    assert hw[1].message.endswith("; no planted edit is owed on these rows")
    # the .ws layout of M = 64 had no run here: unconfirmed for want of a device
    ws = _hardware(layouts["tcgen05.sp_meta.ws.m64.f16"], ev)
    assert ws[0].status == "unconfirmed" and ws[0].message == META_NO_DEVICE
    # the block-scaled kinds' metadata: no row of the family places it (yet)
    mx = _hardware(layouts["tcgen05.sp_meta.m128.mxf8f6f4"], ev)
    assert mx[0].status == "unconfirmed" and mx[0].message == META_NO_DEVICE


def _chunks_swapped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` whose m128.f16 metadata layout holds chunks 0 and 1 of every row in each
    other's place: each selector's table lists (lane, column, bit) for every (row, chunk,
    copy) in that row-major order, and the places of chunks 0 and 1 trade.  (Only the first
    field's bit moved once: a run then mismatched only where the random A of row 0 did not
    hide it, and a chunk of zeros did, now and then.)"""
    out = copy.deepcopy(records)
    rec = next(r for r in out if r.get("id") == LID)
    shape = (int(rec["rows"]), int(rec["chunks"]), int(rec["copies"]), 3)
    swapped = []
    for table in rec["places"]:
        t = np.asarray(table, dtype=np.int64).reshape(shape)
        t[:, [0, 1]] = t[:, [1, 0]]
        swapped.append(t.ravel().tolist())
    assert all(a != b for a, b in zip(swapped, rec["places"], strict=True))
    rec["places"] = swapped
    return out


def test_a_run_whose_truth_differs_refutes_it_with_a_cell(records: list[dict[str, Any]],
                                                          layouts: dict[str, MetaLayout],
                                                          tmp_path: Path) -> None:
    ev = _run(_chunks_swapped(records), records, tmp_path)
    assert {r.result for r in ev.runs if r.mode == "check"} == {"mismatch"}
    hw = _hardware(layouts[LID], ev)
    for s in (0, 1):
        assert hw[s].status == "refuted" and hw[s].severity == "error"
        cex = hw[s].counterexample
        assert cex["variant"] == f"{ONLY}{s}" and cex["selector"] == s
        assert len(cex["d_cell"]) == 2 and 0 <= cex["d_cell"][0] < 128
        assert cex["hash"] == meta_hash(layouts[LID])
    _results, findings = prove_meta(layouts[LID], ev)
    assert sum(f.severity == "error" and f.kind == "hardware" for f in findings) == 2


def test_a_layout_changed_since_the_run_is_stale(records: list[dict[str, Any]],
                                                 layouts: dict[str, MetaLayout],
                                                 tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path)
    v = meta_hardware(layouts[LID], 0, ev, "0123456789abcdef")
    assert v.status == "unconfirmed" and v.message.startswith(
        "stale: the evidence's 2 runs of its rows (the last on fake device")
    assert "now 0123456789ab...): the layout changed since" in v.message


def test_evidence_without_an_sp_run_leaves_it_unconfirmed(records: list[dict[str, Any]],
                                                          layouts: dict[str, MetaLayout],
                                                          tmp_path: Path) -> None:
    ev = _run(records, records, tmp_path, only="tcgen05.mma.m32n64k8.kind::tf32")
    assert ev.runs and not any(".sp." in r.key for r in ev.runs)
    hw = _hardware(layouts[LID], ev)
    assert {v.status for v in hw.values()} == {"unconfirmed"}
    assert hw[0].message == META_NO_DEVICE


def test_layout_d_issued_as_ws_reads_the_ws_m128_metadata(records: list[dict[str, Any]],
                                                          layouts: dict[str, MetaLayout],
                                                          tmp_path: Path) -> None:
    # the .ws rows of Layout D (M = 128): their metadata by tcgen05.sp_meta.ws.m128.<kind>
    ev = _run(records, records, tmp_path, only="layoutD.ws.sel")
    from formal.base.matrix_variants import TCGEN05_MMA_SP_VARIANTS
    assert sorted(r.key for r in ev.runs if r.mode == "check") == \
        sorted(v.key for v in TCGEN05_MMA_SP_VARIANTS if v.ws)
    assert len([r for r in ev.runs if r.mode == "check"]) == 6
    hw = _hardware(layouts["tcgen05.sp_meta.ws.m128.f16"], ev)
    assert hw[0].status == "proved" and hw[1].status == "proved", (hw[0].message, hw[1].message)
    assert "the planted edit meta-chunks-swapped mismatched" in hw[0].message
    i8 = _hardware(layouts["tcgen05.sp_meta.ws.m128.i8"], ev)
    assert i8[0].status == "proved" and i8[0].message.endswith("no planted edit is owed on "
                                                               "these rows")
    # the one-CTA M = 128 layout without .ws was not run here
    assert _hardware(layouts[LID], ev)[0].message == META_NO_DEVICE
