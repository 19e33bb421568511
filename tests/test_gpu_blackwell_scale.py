"""The block-scale family of ``ptxlayout gpu`` end to end from an export, as a Blackwell
machine would run it: ``ptxlayout export --format json --corrections`` writes the scale maps
(``scale``, ``formal.writers.export_scale``), ``ptxlayout gpu --layouts`` reads them back
(numpy only) and an sm_120 fake device checks every factor of every form at every legal
selector pair.  A device whose truth swaps two factors' places is caught with the factor and
the D cell it changed."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from formal.base.matrix_variants import BLOCK_SCALE_VARIANTS
from formal.cli import main
from formal.execute import supervisor
from formal.execute.block_scale import SCALE_INSTRUCTION, scale_maps_in_records
from formal.execute.devices import FakeDevice
from formal.execute.record import load_export


@pytest.fixture(scope="module")
def records(exported_layouts: Path) -> list[dict[str, Any]]:
    return load_export(str(exported_layouts))[0]


def test_the_export_carries_one_scale_record_per_operand_and_form_family(
        exported_layouts: Path) -> None:
    scale = json.loads(exported_layouts.read_text(encoding="utf-8"))["scale"]
    keys = sorted((r["kind"], r["shape"], r["scale_vec"], r["scale_type"], r["operand"])
                  for r in scale)
    assert len(keys) == 10 == len(set(keys))  # 5 (kind, shape, vec, type) x scale_A / scale_B
    assert ("mxf8f6f4", "m16n8k32", 1, "ue8m0", "scale_A") in keys
    assert ("mxf4nvf4", "m16n8k64", 4, "ue4m3", "scale_B") in keys
    a = next(r for r in scale if r["id"] == "mma.block_scale.m16n8k32.mxf8f6f4.1X.ue8m0.scale_A")
    assert a["tile"] == [16, 1] and len(a["map_hash"]) == 16
    # byte-id 0, thread-id 0: row 0 in lane 0 and row 8 in lane 1, byte 0 (block 0)
    assert [0, 0, 0, 0, 0, 0] in a["places"] and [0, 0, 1, 0, 8, 0] in a["places"]
    # every form of the variant table finds both of its maps in the export
    for v in BLOCK_SCALE_VARIANTS:
        sa, sb = scale_maps_in_records(v, scale)
        assert sa.map_hash and sb.map_hash and sa.tile[0] == 16 and sb.tile[1] == 8


def test_every_form_is_checked_on_an_sm_120_fake_from_the_export(exported_layouts: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["gpu", "--layouts", str(exported_layouts), "--device", "fake:sm=120",
                     "--only", "block_scale", "--no-errata", "--trials", "1"])
    text = out.getvalue()
    assert code == 0, text
    matched = [line for line in text.splitlines() if ": match (" in line
               and "scale factors, each at every legal selector pair" in line]
    assert len(matched) == len(BLOCK_SCALE_VARIANTS) == 29
    assert "mismatch" not in text and "no map" not in text


def test_a_planted_swap_in_the_truth_is_found_with_its_cell(records: list[dict[str, Any]]) \
        -> None:
    """The device's truth swaps bytes 0 and 1 of lane 0 in the m16n8k32 ``.scale_vec::1X``
    scale_B map: at byte-id-b 0 it reads column 0's factor from byte 1, which holds 1.0.  By
    hand: K = 32 is one block, A = B = 1, so D = 32 everywhere; marking SF_B[0, 0] = 2 must
    make column 0 64, and the swapped device leaves D[0, 0] at 32 (2 faults: B's factor at
    the two runs with byte-id-b 0)."""
    truth = json.loads(json.dumps(records))
    for r in truth:
        if r.get("instruction") == SCALE_INSTRUCTION and r["operand"] == "scale_B" \
                and r["shape"] == "m16n8k32":
            r["places"] = [[bi, ti, ln, {0: 1, 1: 0}.get(by, by) if ln == 0 else by, row, col]
                           for bi, ti, ln, by, row, col in r["places"]]
    forms = [v.key for v in BLOCK_SCALE_VARIANTS if v.shape == "m16n8k32"]
    report = supervisor.run_all(FakeDevice(truth, sm=120), records, trials=1,
                                only="scale_vec::1X")
    runs = {r.variant.key: r for r in report.runs if r.variant.key in forms}
    assert sorted(runs) == sorted(forms) and len(forms) == 25  # 5 x 5 element types
    first = runs["mma.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.f32.e4m3.e4m3.f32.ue8m0"]
    assert first.detail == ("2 of 384 factors misplaced; first: {'selector': [0, 0, 0, 0], "
                            "'factor': {'operand': 'B', 'row': 0, 'col': 0}, 'lane': 0, "
                            "'element': 0, 'd': [0, 0], 'got': 32.0, 'want': 64.0}")
    for r in runs.values():
        assert r.result == "mismatch", r.detail
        assert "'factor': {'operand': 'B', 'row': 0, 'col': 0}" in r.detail
        assert "'d': [" in r.detail and r.layout_hashes["scale_B"]
    # the other shape's forms, whose truth is untouched, still match on the same device
    other = supervisor.run_all(FakeDevice(truth, sm=120), records, trials=1,
                               only="scale_vec::2X.m16n8k64.f32.e2m1.e2m1.f32.ue8m0")
    assert {r.result for r in other.runs} == {"match"}
