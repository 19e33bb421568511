"""Issue 16: a revision that changes a map meets the hardware.

A seed's m16n8k32 section is edited into other valid bijections (each lane's elements in
reverse order, two rows swapped) and proved with the H100 evidence of ``proofs/evidence``: the
hardware obligation is refuted at the hand-computed (lane, element) with both cells and the
run it rests on; the same edit on a layout whose variants no device ran (``.e3m2`` /
``.e2m3``, sm_120a only) is the warning ``unconfirmed``; an edit of A and B together that only
renumbers k (which D = A x B + C cannot see) is ``unconfirmed`` too.  No GPU needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from formal.api import analyze, model_of
from formal.prove.evidence import Evidence, EvidenceFile
from formal.prove.verdicts import Options

from .conftest import seed_path

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "proofs" / "evidence"
H100 = "NVIDIA H100 80GB HBM3"
S4 = {f"mma.m16n8k32.s32.{a}.{b}.s32" for a in ("s4", "u4") for b in ("s4", "u4")}

# the m16n8k32 section of seed 000, as the seed writes its formulas
B_S4 = "row =    (threadID_in_group * 8) + (i & 0x7)      for bi where i = {0,..,7}"
A_S4_COL = "col =  (threadID_in_group * 8) + (i & 0x7)    for ai where i = {0,..,15}"
A_S4_ROW8 = "groupID + 8                         for ai where i >= 8"
FP_B_ROW = (".e4m3 / .e5m2 / .e3m2 / .e2m3 / .e2m1 A vector expression containing two .b32 "
            "registers")


@pytest.fixture(scope="module")
def section() -> str:
    text = seed_path("000").read_text(encoding="utf-8")
    a = text.index("9.7.14.5.10. Matrix Fragments for mma.m16n8k32")
    b = text.index("\n9.7.14.5.11", a)
    sec = text[a:b]
    for s in (B_S4, A_S4_COL, A_S4_ROW8, FP_B_ROW):
        assert s in sec, s
    return sec


@pytest.fixture(scope="module")
def evidence() -> Evidence:
    return Evidence.load(EVIDENCE)


def _hardware(text: str, ev: Evidence, tmp: Path) -> tuple[dict[str, Any], Any]:
    doc = tmp / "section.txt"
    doc.write_text(text, encoding="utf-8")
    run = analyze([doc], Options(evidence=ev))
    return {r.layout.short_id: r.verdict("hardware") for r in run.proof.results}, run.proof


def _run_of(cex: dict[str, Any]) -> None:
    """The run a verdict rests on: a bit-exact H100 run of an s4/u4 variant, in a real file."""
    held = json.loads((EVIDENCE / cex["file"]).read_text())
    assert cex["device"] == H100 == held["device"] and cex["date"] == held["date"]
    assert cex["variant"] in S4 and cex["trials"] > 0
    run = next(r for r in held["runs"]
               if r["key"] == cex["variant"] and r["mode"] == "check")
    assert run["result"] == "match"


def test_the_seed_section_as_written_is_confirmed(section: str, evidence: Evidence,
                                                  tmp_path: Path) -> None:
    hw, _ = _hardware(section, evidence, tmp_path)
    assert hw["mma.m16n8k32.B.s4-u4"].status == "proved"
    assert {v.status for v in hw.values()} == {"proved"}


def test_elements_of_a_lane_in_reverse_order_are_refuted(section: str, evidence: Evidence,
                                                         tmp_path: Path) -> None:
    # row = tig * 8 + (i ^ 0x7): lane 0 (tig 0, groupID 0) puts b0 at row 7; the H100, with
    # the A and C/D maps this section states, has it at row 0
    hw, proof = _hardware(section.replace(B_S4, B_S4.replace("(i & 0x7)", "(i ^ 0x7)")),
                          evidence, tmp_path)
    v = hw["mma.m16n8k32.B.s4-u4"]
    assert v.status == "refuted" and v.severity == "error", v.message
    cex = v.counterexample
    assert (cex["lane"], cex["element"]) == (0, 0)
    assert cex["layout"] == {"row": 7, "col": 0} and cex["hardware"] == {"row": 0, "col": 0}
    _run_of(cex)
    assert "lane 0 element 0 is at (row 0, col 0) on the hardware, this layout puts it at " \
        "(row 7, col 0)" in v.message and cex["file"] in v.message
    assert "only one B map fits" in v.message
    # the A and C/D layouts are untouched and still confirmed; the finding is an error
    assert hw["mma.m16n8k32.A.s4-u4"].status == "proved"
    (f,) = [f for f in proof.findings if f.kind == "hardware"]
    assert f.severity == "error" and f.layout.endswith("mma.m16n8k32.B.s4-u4")


def test_two_rows_swapped_are_refuted(section: str, evidence: Evidence,
                                      tmp_path: Path) -> None:
    # A's upper half on row (groupID ^ 1) + 8: rows 8 and 9 (10 and 11, ...) trade places;
    # lane 0's a8 is at row 9, col 0 -- the H100 has it at row 8
    swapped = A_S4_ROW8.replace("groupID + 8      ", "(groupID ^ 1) + 8")
    hw, _ = _hardware(section.replace(A_S4_ROW8, swapped), evidence, tmp_path)
    v = hw["mma.m16n8k32.A.s4-u4"]
    assert v.status == "refuted", v.message
    cex = v.counterexample
    assert (cex["lane"], cex["element"]) == (0, 8)
    assert cex["layout"] == {"row": 9, "col": 0} and cex["hardware"] == {"row": 8, "col": 0}
    _run_of(cex)
    assert hw["mma.m16n8k32.B.s4-u4"].status == "proved"


def test_the_same_edit_on_a_variant_no_device_ran_is_unconfirmed(
        section: str, evidence: Evidence, tmp_path: Path) -> None:
    # the floating-point B row narrowed to .e3m2 / .e2m3: only kind::f8f6f4 (sm_120a) uses it
    text = section.replace(FP_B_ROW, FP_B_ROW.replace(".e4m3 / .e5m2 / .e3m2 / .e2m3 / .e2m1",
                                                      ".e3m2 / .e2m3"))
    rows = "(threadID_in_group * 4) + (i & 0x3)           for bi where i < 4"
    assert rows in text
    hw, proof = _hardware(text.replace(rows, rows.replace("(i & 0x3)", "(i ^ 0x3)")),
                          evidence, tmp_path)
    v = hw["mma.m16n8k32.B.e3m2-e2m3"]
    assert v.status == "unconfirmed" and v.severity == "warning", v.message
    assert v.message.startswith("unconfirmed: no device of the evidence ran 20 variants")
    assert "sm_120a" in v.message and "sm_90" in v.message and "decides nothing" in v.message
    # the s8/u8 layout, with the same edit, ran on the H100: refuted at lane 0, b0
    s8 = hw["mma.m16n8k32.B.s8-u8"]
    assert s8.status == "refuted" and (s8.counterexample["lane"],
                                       s8.counterexample["element"]) == (0, 0)
    assert s8.counterexample["layout"] == {"row": 3, "col": 0}
    assert s8.counterexample["hardware"] == {"row": 0, "col": 0}
    warn = [f for f in proof.findings if f.kind == "hardware" and f.severity == "warning"]
    assert [f.layout for f in warn] == [next(r.layout.id for r in proof.results
                                             if r.layout.short_id.endswith("B.e3m2-e2m3"))]


def test_renumbering_k_in_a_and_b_together_is_unconfirmed(
        section: str, evidence: Evidence, tmp_path: Path) -> None:
    # A's columns and B's rows reversed within each group of eight, together: D = A x B + C
    # is the same sum, so no run can tell; the evidence confirms another combination
    a_col = A_S4_COL.replace("(i & 0x7)", "(7 - (i & 0x7))")
    text = section.replace(B_S4, B_S4.replace("(i & 0x7)", "(i ^ 0x7)")).replace(A_S4_COL,
                                                                                 a_col)
    hw, proof = _hardware(text, evidence, tmp_path)
    b, a = hw["mma.m16n8k32.B.s4-u4"], hw["mma.m16n8k32.A.s4-u4"]
    assert b.status == a.status == "unconfirmed", (b.message, a.message)
    assert "this document states A with another map" in b.message
    assert "only by renumbering its rows (k), which the A this document states could " \
           "absorb" in b.message
    assert "exactly, lane 0 element 0 is at (row 0, col 0) on the hardware, this layout puts " \
           "it at (row 7, col 0)" in b.message
    assert "renumbering its columns (k), which the B this document states" in a.message
    assert b.counterexample["variant"] in S4
    assert not [f for f in proof.findings if f.kind == "hardware" and f.severity == "error"]


def test_the_two_errata_are_still_refuted(evidence: Evidence) -> None:
    spec = model_of([])
    by_id = {lay.id: lay for lay in spec.layouts}
    f64 = evidence.verdict(by_id["catalog:mma.m16n8k16.A.f64"])
    assert f64.status == "refuted" and "D differs in D[8][0]" in f64.message
    assert (f64.counterexample["lane"], f64.counterexample["element"]) == (0, 1)
    assert f64.counterexample["layout"] is None
    assert f64.counterexample["hardware"] == {"row": 8, "col": 0}
    b1 = evidence.verdict(by_id["catalog:mma.m16n8k256.A.b1"])
    assert b1.status == "refuted"
    assert (b1.counterexample["lane"], b1.counterexample["element"]) == (0, 32)
    assert b1.counterexample["layout"] == {"row": 8, "col": 32}
    assert b1.counterexample["hardware"] == {"row": 8, "col": 0}


def test_the_index_gives_each_variant_its_runs_in_date_order(evidence: Evidence) -> None:
    keys = sorted(S4)
    for k in keys:
        assert evidence.runs_of([k]) == [r for r in evidence.runs if r.key == k]
    both = evidence.runs_of(keys[:2])
    assert both == [r for r in evidence.runs if r.key in keys[:2]] and len(both) > 2


def test_a_kept_table_is_used_only_if_it_hashes_to_its_key(evidence: Evidence) -> None:
    h = "8cc421c93def5845"  # the corrected m16n8k16 .f64 A, kept by the errata runs
    kept = evidence.kept_map(h)
    assert kept is not None and evidence.table(h) is not None
    forged = json.loads(json.dumps(kept))
    forged["rows"][0][2] += 1  # one cell moved: no longer the table the hash names
    f = EvidenceFile("forged.json", H100, 90, "?", "2026-11-23", maps={h: forged})
    assert Evidence([f]).table(h) is None


# ---- ptxlayout diff: what the hardware says of each changed map ---------------------------------


def _diff(tmp: Path, old: str, new: str, fmt: str = "json") -> tuple[int, str]:
    from formal.cli import main

    a, b, out = tmp / "old.txt", tmp / "new.txt", tmp / f"diff.{fmt}"
    a.write_text(old, encoding="utf-8")
    b.write_text(new, encoding="utf-8")
    code = main(["diff", str(a), str(b), "--format", fmt, "--evidence", str(EVIDENCE),
                 "-o", str(out)])
    return code, out.read_text(encoding="utf-8")


def test_diff_marks_each_changed_map_with_the_hardware(section: str,
                                                        tmp_path: Path) -> None:
    reversed_b = section.replace(B_S4, B_S4.replace("(i & 0x7)", "(i ^ 0x7)"))
    code, out = _diff(tmp_path, section, reversed_b)
    assert code == 1
    doc = json.loads(out)
    (c,) = [c for c in doc["changes"] if c["kind"] == "different-map"]
    assert c["key"] == "mma.m16n8k32.B.s4-u4" and c["hardware"] == "refuted"
    assert "lane 0 element 0 is at (row 0, col 0) on the hardware, this layout puts it at " \
           "(row 7, col 0)" in c["hardware_message"]
    assert doc["hardware"] == {"refuted": 1}
    assert all(x["hardware"] == "" for x in doc["changes"] if x["kind"] == "same-text")
    # the way back: the NEW map is the one the H100 confirmed
    code, out = _diff(tmp_path, reversed_b, section)
    (c,) = [c for c in json.loads(out)["changes"] if c["kind"] == "different-map"]
    assert c["hardware"] == "confirmed" and "bit-exact" in c["hardware_message"]
    # text: the verdict under the change, and a count
    code, text = _diff(tmp_path, section, reversed_b, "text")
    lines = text.splitlines()
    at = next(k for k, x in enumerate(lines) if x.startswith("different-map"))
    assert lines[at + 1].split()[:2] == ["hardware:", "refuted:"]
    assert lines[-1] == "changed maps on the hardware: 1 refuted"


def test_diff_marks_a_map_no_device_ran_unconfirmed(section: str, tmp_path: Path) -> None:
    fp = section.replace(FP_B_ROW, FP_B_ROW.replace(".e4m3 / .e5m2 / .e3m2 / .e2m3 / .e2m1",
                                                    ".e3m2 / .e2m3"))
    rows = "(threadID_in_group * 4) + (i & 0x3)           for bi where i < 4"
    edited = fp.replace(rows, rows.replace("(i & 0x3)", "(i ^ 0x3)"))
    code, out = _diff(tmp_path, fp, edited)
    hw = {c["key"]: c["hardware"] for c in json.loads(out)["changes"]
          if c["kind"] == "different-map"}
    assert hw == {"mma.m16n8k32.B.e2m3-e3m2": "unconfirmed", "mma.m16n8k32.B.s8-u8": "refuted"}


def _lone_b(section: str) -> str:
    """The section with only its .s4 / .u4 Multiplicand B block (no A, no C/D)."""
    head = section[:section.index("\n")]
    start = section.index("Multiplicand B:")
    end = section.index("col =     groupID", start) + len("col =     groupID")
    return head + "\n\n" + section[start:end] + "\n"


def test_a_lone_block_is_judged_up_to_what_its_missing_operands_could_absorb(
        section: str, evidence: Evidence, tmp_path: Path) -> None:
    lone = _lone_b(section)
    hw, _ = _hardware(lone, evidence, tmp_path)
    assert list(hw) == ["mma.m16n8k32.B.s4-u4"] and hw["mma.m16n8k32.B.s4-u4"].status == "proved"
    # reversed elements: only B's rows (k) renumbered -- an A the document does not state
    # could be renumbered the same way, so the evidence cannot decide
    hw, _ = _hardware(lone.replace(B_S4, B_S4.replace("(i & 0x7)", "(i ^ 0x7)")), evidence,
                      tmp_path)
    v = hw["mma.m16n8k32.B.s4-u4"]
    assert v.status == "unconfirmed", v.message
    assert "this document does not state A or C/D" in v.message
    assert "renumbering its rows (k) and its columns (n), which an A it does not state or a " \
           "C/D it does not state could absorb" in v.message
    # odd elements one column over: no renumbering of rows and columns gives this map, so it
    # is wrong whatever A and C/D are -- at lane 0's b1, (row 1, col 1) against (row 1, col 0)
    hw, _ = _hardware(lone.replace("col =     groupID", "col =     groupID ^ (i & 0x1)"),
                      evidence, tmp_path)
    v = hw["mma.m16n8k32.B.s4-u4"]
    assert v.status == "refuted", v.message
    cex = v.counterexample
    assert (cex["lane"], cex["element"]) == (0, 1)
    assert cex["layout"] == {"row": 1, "col": 1} and cex["hardware"] == {"row": 1, "col": 0}
    assert "even up to renumbering its rows (k) and its columns (n)" in v.message
    _run_of(cex)


def test_the_variants_a_layout_serves_are_every_row_the_rule_accepts() -> None:
    """``hardware.served`` asks ``matrix_layout_serves`` only of the pool's rows of the
    layout's types (``_pool_by_type``), once per kind of layout (``_serving``): over every
    catalog layout of the moves, wgmma and tcgen05 copies, those are exactly the rows the
    rule accepts of the whole pool, in its order."""
    from formal.base.matrix_variants import MOVES, TMEM_FAMILIES, matrix_layout_serves, run_operand
    from formal.model.resolve import catalog_model
    from formal.prove import hardware as H
    checked = served = 0
    for lay in catalog_model(False).layouts:
        if lay.instruction not in (*MOVES, *TMEM_FAMILIES, "wgmma", "wgmma.sp"):
            continue
        op = run_operand(lay.instruction, lay.operand)
        if op is None:
            continue
        want = [v for v in H._pool_of(lay.instruction)
                if matrix_layout_serves(v, op, lay.instruction, lay.shape_text, lay.operand,
                                        lay.types, lay.n_values)]
        got = list(H.served(Evidence(), lay).variants)
        assert got == want, lay.id
        checked += 1
        served += bool(got)
    assert checked > 150 and served > 100
