"""Issue 'Prove every layout': the seed report, counterexamples, report formats, ledger, diff."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from formal.api import analyze
from formal.cli import main
from formal.prove.verdicts import Options

from .sections import S8_A

EXPECTED_ERRORS = {
    # (seed, line, kind): what a careful reader finds in the five seeds
    ("000", 55, "element-list"),     # .f16 accumulators listed as c0, c1, c1, c2
    ("003", 29, "type-names"),       # ".f16/.b16 formats": .b16 where .bf16 is meant
    ("003", 56, "type-names"),       # .atype header over Multiplicand B (sparse m16n8k32)
    ("003", 61, "element-list"),     # b0..b3 for four .b32 registers of two .f16 each
    ("003", 65, "type-names"),       # ".f16/.b16" again
    ("003", 92, "type-names"),       # .atype header over Multiplicand B (sparse tf32)
    ("003", 96, "register-budget"),  # four .b32 registers each of four .tf32 elements
    ("004", 51, "type-names"),       # .atype header over Multiplicand B (sparse m16n8k128)
}
EXPECTED_WARNINGS = {
    ("000", 33, "punctuation"),      # b0, b1. b2. b3
    ("000", 105, "punctuation"),     # a0, a1, .., a14, a15
    ("001", 42, "punctuation"),      # the same '..' in the Markdown rendering
    ("002", 14, "punctuation"),      # a0, a1, ... a30, a31 (no comma after the ellipsis)
    ("000", 11, "type-names"),       # 'integer type' section with an .e4m3 row
    ("003", 164, "type-names"),      # the title omits .e3m2/.e2m3/.e2m1
    ("004", 16, "type-names"),       # .e2m1 in an 'integer type' section
}


@pytest.fixture(scope="module")
def seed_report(seeds: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("r") / "r.json"
    code = main(["prove", *[str(seeds[k]) for k in sorted(seeds)], "--format", "json",
                 "-o", str(out)])
    assert code == 1
    return json.loads(out.read_text())


def _where(f: dict) -> tuple[str, int, str]:
    return (Path(f["document"]).name[:3], f["line"], f["kind"])


def test_every_seed_error_and_nothing_else(seed_report: dict) -> None:
    errors = {_where(f) for f in seed_report["findings"] if f["severity"] == "error"}
    assert errors == EXPECTED_ERRORS


def test_seed_warnings(seed_report: dict) -> None:
    warnings = {_where(f) for f in seed_report["findings"] if f["severity"] == "warning"}
    assert EXPECTED_WARNINGS <= warnings


def test_every_correct_formula_is_proved(seed_report: dict) -> None:
    """No false alarm: every formula obligation of every seed layout with formulas is proved."""
    formula_obligations = ("cases", "in-range", "injective", "surjective", "sparse-chunks",
                           "metadata-coverage", "selector-range")
    for lay in seed_report["layouts"]:
        for ob in lay["obligations"]:
            if ob["name"] in formula_obligations:
                assert ob["status"] in ("proved", "not-applicable"), (lay["id"], ob)


def test_json_contract(seed_report: dict) -> None:
    lay = seed_report["layouts"][0]
    assert set(lay) == {"id", "section", "title", "document", "line", "instruction", "shape",
                        "operand", "types", "tile", "elements_per_thread", "source",
                        "obligations"}
    assert all(set(o) == {"name", "status", "counterexample"} for o in lay["obligations"])
    assert all(set(f) == {"severity", "kind", "document", "line", "column", "section",
                          "message", "counterexample", "layout", "accepted"}
               for f in seed_report["findings"])
    assert {o["name"] for o in lay["obligations"]} == {
        "cases", "in-range", "injective", "surjective", "register-budget", "element-list",
        "reference", "type-names", "sparse-chunks", "metadata-coverage", "selector-range",
        "hardware"}
    statuses = {o["status"] for la in seed_report["layouts"] for o in la["obligations"]}
    # "unconfirmed": the hardware obligation's warning (issue 16)
    assert statuses <= {"proved", "refuted", "unknown", "error", "not-applicable", "unconfirmed"}
    assert {la["operand"] for la in seed_report["layouts"]} == {"A", "B", "C/D", "metadata"}
    assert {la["source"] for la in seed_report["layouts"]} == {"text", "reference", "catalog"}
    f = seed_report["findings"][0]
    for key in ("severity", "kind", "document", "line", "column", "section", "message",
                "counterexample"):
        assert key in f
    s = seed_report["summary"]
    assert s["errors"] == len(EXPECTED_ERRORS)


def test_counterexample_of_the_duplicate_element(seed_report: dict) -> None:
    f = next(f for f in seed_report["findings"] if _where(f) == ("000", 55, "element-list"))
    assert f["counterexample"] == {"listed": ["c0", "c1", "c1", "c2"], "expected": 4}
    assert f["column"] == 141  # the second c1
    assert "repeats c1 and lacks c3" in f["message"]


def test_register_budget_counterexample(seed_report: dict) -> None:
    f = next(f for f in seed_report["findings"] if _where(f) == ("003", 96, "register-budget"))
    assert f["counterexample"]["registers"] == 4
    assert f["counterexample"]["per_register"] == 4
    assert f["counterexample"]["elements_needed"] == 4
    assert "128 bits" in f["message"]


def test_b16_points_at_the_type(seeds: dict[str, Path], seed_report: dict) -> None:
    f = next(f for f in seed_report["findings"] if _where(f) == ("003", 29, "type-names"))
    line = seeds["003"].read_text(encoding="utf-8").split("\n")[28]
    assert line[f["column"] - 1:].startswith(".b16")
    assert "did you mean '.bf16'" in f["message"]


# ---- formula counterexamples -------------------------------------------------------------------

SECTION = S8_A


def prove_text(tmp_path: Path, text: str) -> dict:
    p = tmp_path / "doc.txt"
    p.write_text(text, encoding="utf-8")
    out = tmp_path / "out.json"
    main(["prove", str(p), "--format", "json", "-o", str(out), "--no-catalog"])
    return json.loads(out.read_text())


def obligation(report: dict, name: str) -> dict:
    return next(o for o in report["layouts"][0]["obligations"] if o["name"] == name)


def test_collision_counterexample(tmp_path: Path) -> None:
    rep = prove_text(tmp_path, SECTION.replace("(i & 0x3)", "(i & 0x1)"))
    inj = obligation(rep, "injective")
    assert inj["status"] == "refuted"
    # lane 0: a0 -> (0, 0) and a2 -> (0, 0 & 1 = 0): the smallest collision
    assert inj["counterexample"] == {"first": {"lane": 0, "element": "a0"},
                                     "second": {"lane": 0, "element": "a2"},
                                     "cell": {"row": 0, "col": 0}}
    sur = obligation(rep, "surjective")
    assert sur["status"] == "refuted"
    assert sur["counterexample"] == {"cell": {"row": 0, "col": 2}}
    f = next(f for f in rep["findings"] if f["kind"] == "injective")
    assert f["line"] == 9


def test_out_of_range_counterexample(tmp_path: Path) -> None:
    rep = prove_text(tmp_path, SECTION.replace("groupID + 8 for", "groupID + 9 for"))
    rng = obligation(rep, "in-range")
    assert rng["status"] == "refuted"
    assert rng["counterexample"] == {"lane": 28, "element": "a4", "row": 16, "col": 0}
    f = next(f for f in rep["findings"] if f["kind"] == "in-range")
    assert f["line"] == 8


def test_cases_counterexamples(tmp_path: Path) -> None:
    rep = prove_text(tmp_path, SECTION.replace("i >= 4", "i >= 3"))
    c = obligation(rep, "cases")
    assert c["status"] == "refuted"
    assert c["counterexample"] == {"lane": 0, "element": "a3", "formula": "row",
                                   "cases": [1, 2]}
    rep = prove_text(tmp_path, SECTION.replace("i >= 4", "i >= 5"))
    c = obligation(rep, "cases")
    assert c["counterexample"] == {"lane": 0, "element": "a4", "formula": "row", "cases": []}


def test_overlapping_cases_name_each_documents_own_lines(tmp_path: Path) -> None:
    # the same faulty map in two documents at different lines: the proof of the map is shared,
    # the lines in each finding are its own document's
    bad = SECTION.replace("i >= 4", "i >= 3")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(bad, encoding="utf-8")
    b.write_text("\n\n\n" + bad, encoding="utf-8")
    out = tmp_path / "out.json"
    main(["prove", str(a), str(b), "--format", "json", "-o", str(out), "--no-catalog"])
    found = {(f["document"].rsplit("/", 1)[-1], f["line"], f["message"].rsplit("(", 1)[-1])
             for f in json.loads(out.read_text())["findings"] if f["kind"] == "cases"}
    assert found == {("a.txt", 8, "lines 7, 8)"), ("b.txt", 11, "lines 10, 11)")}


def test_equivalent_rewrites_prove(tmp_path: Path) -> None:
    for old, new in [("(i & 0x3)", "(i % 4)"),
                     ("(threadID_in_group * 4)", "(4 * threadID_in_group)"),
                     ("groupID + 8 for", "(8 + (groupID)) for"), ("i >= 4", "i >= 0x4"),
                     ("groupID + 8 for ai where i >= 4", "groupID + 8 otherwise"),
                     ("i = {0,..,7}", "i < 8")]:
        rep = prove_text(tmp_path, SECTION.replace(old, new))
        bad = [o for o in rep["layouts"][0]["obligations"]
               if o["status"] not in ("proved", "not-applicable")]
        assert not bad, (old, new, bad)


# ---- formats -------------------------------------------------------------------------------------


def test_sarif(seeds: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    assert main(["prove", str(seeds["003"]), "--format", "sarif", "-o", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "ptxlayout"
    results = run["results"]
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
               for r in results)
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rule_ids
    errs = [r for r in results if r["level"] == "error"]
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in errs} == \
        {29, 56, 61, 65, 92, 96}


def test_junit(seeds: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.xml"
    main(["prove", str(seeds["000"]), "--format", "junit", "-o", str(out)])
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "0")) == len(cases) == 22 * 12
    failures = [c for c in cases if c.find("failure") is not None]
    assert len(failures) == 1
    assert failures[0].get("name", "").endswith("::element-list")


def test_markdown_erratum(tmp_path: Path) -> None:
    p = tmp_path / "doc.txt"
    p.write_text(SECTION.replace("(i & 0x3)", "(i & 0x1)"), encoding="utf-8")
    out = tmp_path / "r.md"
    assert main(["prove", str(p), "--format", "markdown", "-o", str(out),
                 "--no-catalog"]) == 1
    md = out.read_text()
    assert "### 1." in md and "injective" in md
    assert "    9 | col = (threadID_in_group * 4) + (i & 0x1)" in md  # the quoted source line
    assert '"first": {"element": "a0", "lane": 0}' in md
    assert "*T0:a0" in md or "*!!" in md  # the grid marks the colliding cell


def test_text_report_marks(seeds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    main(["prove", str(seeds["002"])])
    out = capsys.readouterr().out
    assert "\u2713 A" in out and "element-list" not in out
    assert "3 layouts: 3 proved" in out


def test_exit_status_for_unknown(tmp_path: Path) -> None:
    from formal import prove as pv
    p = tmp_path / "doc.txt"
    p.write_text(SECTION, encoding="utf-8")
    pv.TEST_HOOKS["encoding"] = lambda name, f: f
    try:
        run = analyze([p], Options(timeout_ms=1), use_catalog=False)
    finally:
        pv.TEST_HOOKS.clear()
    statuses = {v.status for r in run.proof.results for v in r.verdicts}
    assert statuses <= {"proved", "unknown", "not-applicable"}


# ---- ledger and diff -----------------------------------------------------------------------------


def test_ledger_round_trip_and_drift(seeds: dict[str, Path], tmp_path: Path) -> None:
    doc = tmp_path / "spec.txt"
    doc.write_text(seeds["002"].read_text(encoding="utf-8"), encoding="utf-8")
    led = tmp_path / "proofs"
    assert main(["prove", str(doc), "--ledger", str(led), "-o", str(tmp_path / "o")]) == 0
    assert main(["prove", str(doc), "--check-ledger", str(led), "-o", str(tmp_path / "o")]) == 0
    # change a formula into an equivalent one: the formula drifted, the map did not
    text = doc.read_text().replace("(threadID_in_group * 32) + i       for ai",
                                   "(threadID_in_group * 32) + (i & 0x1f)       for ai")
    doc.write_text(text)
    assert main(["prove", str(doc), "--check-ledger", str(led), "-o", str(tmp_path / "o")]) == 1


def test_ledger_needs_accepted_errata(seeds: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    led = tmp_path / "proofs"
    main(["prove", str(seeds["000"]), "--ledger", str(led), "-o", str(tmp_path / "o")])
    capsys.readouterr()
    assert main(["prove", str(seeds["000"]), "--check-ledger", str(led),
                 "-o", str(tmp_path / "o")]) == 1
    assert "unaccepted" in capsys.readouterr().err
    (led / "accepted.json").write_text(json.dumps([
        {"kind": "element-list", "line": 55, "reason": "spec lists c0, c1, c1, c2 (typo)"}]))
    assert main(["prove", str(seeds["000"]), "--check-ledger", str(led),
                 "-o", str(tmp_path / "o")]) == 0


def test_diff(seeds: dict[str, Path], tmp_path: Path) -> None:
    old = seeds["000"]
    text = old.read_text(encoding="utf-8")
    new = tmp_path / "new.txt"
    new.write_text(text.replace("(threadID_in_group * 4) + (i & 0x3)           for ai where i < 8",
                                "(threadID_in_group * 4) + (i % 4)           for ai where i < 8")
                   .replace("(threadID_in_group * 8) + (i & 0x7)        for ai where i < 16",
                            "(threadID_in_group * 8) + (i & 0x6)        for ai where i < 16"))
    out = tmp_path / "d.json"
    assert main(["diff", str(old), str(new), "--format", "json", "-o", str(out)]) == 1
    changes = json.loads(out.read_text())["changes"]
    kinds = {c["key"]: c["kind"] for c in changes}
    assert kinds["mma.m16n8k32.A.s8-u8"] == "same-map"
    assert kinds["mma.m16n8k64.A.s4-u4"] == "different-map"
    assert kinds["mma.m16n8k16.A.s8-u8"] == "same-text"
    w = next(c for c in changes if c["key"] == "mma.m16n8k64.A.s4-u4")["witness"]
    assert w == {"lane": 0, "element": "a1", "old": {"row": 0, "col": 1},
                 "new": {"row": 0, "col": 0}}
    assert main(["diff", str(old), str(old), "-o", str(out)]) == 0


def test_the_catalog_reports_its_errata_as_accepted(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    assert main(["prove", "--format", "json", "--verbose", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    accepted = [f for f in data["findings"] if f["accepted"]]
    assert {(f["layout"] or "").split(":")[-1] for f in accepted} == \
        {"mma.m16n8k16.A.f64", "mma.m16n8k256.A.b1"}  # the unreadable line names its layout
    assert [f["document"] for f in accepted if f["kind"] == "parse"] == ["catalog/dense-float.md"]
    assert all(f["severity"] == "error" for f in accepted)
    # m16n8k16 .f64 A: its unreadable line is the one finding (the partial map is not
    # judged); m16n8k256 .b1 A: injective, surjective and the H100's refutation
    assert data["summary"]["errors"] == 0 and data["summary"]["accepted"] == len(accepted) == 4
    assert {f["kind"] for f in accepted} == {"parse", "injective", "surjective", "hardware"}
    assert main(["prove", "--strict", "-o", str(tmp_path / "t")]) == 1
    assert main(["prove", "--corrections", "--strict", "-o", str(tmp_path / "t")]) == 0
    sarif = tmp_path / "c.sarif"
    main(["prove", "--format", "sarif", "-o", str(sarif)])
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert sum(1 for r in results if r.get("suppressions")) == 4


def test_accept_file_for_documents(seeds: dict[str, Path], tmp_path: Path) -> None:
    acc = tmp_path / "acc.json"
    acc.write_text(json.dumps([{"kind": "element-list", "line": 55, "reason": "typo in the spec"}]))
    out = tmp_path / "r.json"
    assert main(["prove", str(seeds["000"]), "--accept", str(acc), "--format", "json",
                 "-o", str(out)]) == 0
    f = next(f for f in json.loads(out.read_text())["findings"] if f["line"] == 55)
    assert f["message"].endswith("[accepted: typo in the spec]")  # the contract's keys only
    acc.write_text("{}")
    assert main(["prove", str(seeds["000"]), "--accept", str(acc), "-o", str(out)]) == 2


def test_nothing_keeps_proven_layouts_alive(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # a long-lived caller (the fuzz run proves thousands of documents in one process) must not
    # accumulate maps, results or terms: a layout dies with its model, the shared caches are
    # capped
    import gc
    import weakref

    from formal import prove as pv
    from formal.model import cells
    from formal.model.resolve import build
    from formal.prove import driver
    from formal.text.read import read_text

    pv.clear_cache()
    monkeypatch.setattr(driver, "_CACHE_LIMIT", 5)
    model = build([read_text(SECTION, "a.txt")], [])
    proof = pv.prove(model, Options())
    assert proof.results[0].layout.id == model.layouts[0].id
    assert cells(model.layouts[0])[(0, 13, 5)] == (11, 5)  # the map, from its memo
    gone = weakref.ref(model.layouts[0])
    del model, proof
    gc.collect()
    assert gone() is None
    for k in range(12):
        pv.prove(build([read_text(SECTION.replace("0x3", f"{3 + 4 * k:#x}"), "b.txt")], []),
                 Options())
        assert len(driver._CACHE) <= 5
