"""Issue 29, what ruff, mypy and pytest users expect: -q, colour, --select / --ignore,
``[tool.ptxlayout]``, help on every option, the JSON contract's version / layout / accepted,
SARIF of the audit, progress on evidence, one line per group of identical warnings.

The seed 003 (mma.sp) carries errors of three kinds (type-names, element-list,
register-budget) and warnings: the selection and configuration tests pick among them and
check both the report and the exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from formal.base.source import Finding, Span
from formal.cli import parser

from .conftest import ROOT
from .inproc import cwd, run


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def kinds_of(report: str) -> set[str]:
    return {f["kind"] for f in json.loads(report)["findings"]}


# ---- -q ------------------------------------------------------------------------------------


def test_quiet_prove_prints_the_problems_only() -> None:
    code, full, _ = run("prove")
    qcode, quiet, _ = run("prove", "-q")
    assert code == qcode == 0
    assert "\u2713" in full and "\u2713" not in quiet  # no check mark, no proved relation
    assert "relations (composes):" in full and "relations (composes):" not in quiet
    assert "accepted: injective: lane 0 a96 and lane 3 a32" in quiet  # the errata stay
    assert re.match(r"\d+ layouts: \d+ proved", quiet.splitlines()[-2])  # and the counts
    assert len(quiet.splitlines()) < 25 < len(full.splitlines())


def test_quiet_diff_leaves_out_what_did_not_change(tmp_path: Path) -> None:
    old = ROOT / "formal" / "catalog" / "dense-integer.md"
    new = tmp_path / "dense-integer.md"
    formula = "(threadID_in_group * 4) + (i & 0x3)"
    new.write_text(old.read_text("utf-8").replace(formula, "(threadID_in_group * 4) + "
                                                           "(i & 0x1)", 1), "utf-8")
    code, full, _ = run("diff", str(old), str(new))
    qcode, quiet, _ = run("diff", str(old), str(new), "-q")
    assert code == qcode == 1
    assert re.search(r"^same-text ", full, re.M) and not re.search(r"^same-text ", quiet, re.M)
    assert re.search(r"^different-map ", quiet, re.M)
    assert quiet.splitlines()[-1] == full.splitlines()[-1]  # the counts


def test_quiet_audit_text_drops_the_table_and_what_was_equal() -> None:
    from formal.writers.sarif import audit_output
    text = ("family      atoms       equal     differs not-in-spec  unreadable\n"
            "mma          1290        5120          12           0           0\n"
            "\n"
            "h.hpp:623: SM80_X  mma.sync.aligned.m16n8k256\n"
            "  A    differs vs spec (mma.m16n8k256.A.b1): thread 0 ...\n"
            "(1289 atoms with every operand equal to the spec not shown; -v shows them)\n"
            "1290 atoms, 5132 operand checks: 5120 equal, 12 differs\n")
    assert audit_output(text, "text", "1", quiet=True) == (
        "h.hpp:623: SM80_X  mma.sync.aligned.m16n8k256\n"
        "  A    differs vs spec (mma.m16n8k256.A.b1): thread 0 ...\n"
        "1290 atoms, 5132 operand checks: 5120 equal, 12 differs\n")
    assert audit_output(text, "text", "1") == text


# ---- colour --------------------------------------------------------------------------------


@pytest.mark.parametrize("env, coloured", [({}, True), ({"NO_COLOR": "1"}, False),
                                           ({"TERM": "dumb"}, False)])
def test_colour_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch,
                                              env: dict[str, str], coloured: bool) -> None:
    for k in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _, out, _ = run("prove", "-q", stdout=Tty())
    assert ("\x1b[" in out) is coloured
    if coloured:
        assert "\x1b[36maccepted\x1b[0m: injective" in out


def test_no_colour_in_a_pipe_or_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    _, out, _ = run("prove", "-q")
    assert "\x1b[" not in out
    run("prove", "-q", "-o", str(tmp_path / "r.txt"), stdout=Tty())
    assert "\x1b[" not in (tmp_path / "r.txt").read_text("utf-8")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run("prove", "-q")[1]


# ---- --select / --ignore -------------------------------------------------------------------


def test_select_and_ignore_pick_findings_by_kind_prefix(seeds: dict[str, Path]) -> None:
    doc = str(seeds["003"])
    code, out, _ = run("prove", doc, "--format", "json")
    assert code == 1
    assert {"type-names", "element-list", "register-budget"} <= kinds_of(out)
    code, out, _ = run("prove", doc, "--format", "json", "--select", "type")
    assert (code, kinds_of(out)) == (1, {"type-names"})
    code, out, _ = run("prove", doc, "--format", "json", "--select", "elem,reg")
    assert (code, kinds_of(out)) == (1, {"element-list", "register-budget"})
    # ignore wins over select; with every error kind ignored the run passes
    code, out, _ = run("prove", doc, "--format", "json", "--ignore", "type",
                       "--ignore", "element-list,register")
    assert code == 0 and not kinds_of(out) & {"type-names", "element-list", "register-budget"}
    assert json.loads(out)["summary"]["errors"] == 0


def test_an_unknown_kind_is_a_usage_error_with_a_suggestion() -> None:
    code, out, err = run("prove", "--select", "injectve")
    assert (code, out) == (2, "")
    assert err == "ptxlayout: unknown finding kind 'injectve'; did you mean injective or " \
                  "surjective or internal?\n"
    code, _, err = run("prove", "--ignore", "zzzz")
    assert code == 2 and "unknown finding kind 'zzzz'" in err and "Traceback" not in err


def test_the_kinds_registry_knows_every_kind_the_code_reports() -> None:
    from formal.writers.kinds import KINDS
    pattern = re.compile(r"""\b(?:error|warning)\(\s*"([a-z][a-z0-9-]*)"|"""
                         r"""Finding\(\s*"(?:error|warning)",\s*"([a-z][a-z0-9-]*)"|"""
                         r'\breplace\(f,[^()]*\bkind="([a-z][a-z0-9-]*)"')
    found = set()
    for p in (ROOT / "formal").rglob("*.py"):
        for m in pattern.finditer(p.read_text("utf-8")):
            found.add(next(g for g in m.groups() if g))
    assert len(found) > 20
    assert found - set(KINDS) == set()


# ---- [tool.ptxlayout] ----------------------------------------------------------------------


def pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n\n" + body, encoding="utf-8")
    return path


def test_the_configuration_is_found_upwards_and_the_command_line_wins(
        tmp_path: Path, seeds: dict[str, Path]) -> None:
    pyproject(tmp_path, '[tool.ptxlayout]\nselect = ["type"]\n')
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    doc = str(seeds["003"])
    with cwd(tmp_path / "sub" / "deeper"):
        code, out, _ = run("prove", doc, "--format", "json")
        assert (code, kinds_of(out)) == (1, {"type-names"})
        code, out, _ = run("prove", doc, "--format", "json", "--select", "register")
        assert (code, kinds_of(out)) == (1, {"register-budget"})


def test_accepted_errata_in_the_configuration(tmp_path: Path, seeds: dict[str, Path]) -> None:
    doc = str(seeds["003"])
    pyproject(tmp_path, '[tool.ptxlayout]\nselect = ["register"]\n\n'
                        '[[tool.ptxlayout.accept]]\nkind = "register-budget"\n'
                        'reason = "known: four registers of four elements"\n')
    with cwd(tmp_path):
        code, out, err = run("prove", doc, "--format", "json")
        assert code == 0, err
        (f,) = json.loads(out)["findings"]
        assert f["accepted"] == "known: four registers of four elements"
        assert run("prove", doc, "--format", "json", "--strict")[0] == 1


@pytest.mark.parametrize("body, message", [
    ('[tool.ptxlayout]\nselect = ["type"]\nselct = ["x"]\n',
     ":6: unknown key 'selct' in [tool.ptxlayout]; did you mean 'select'?"),
    ('[tool.ptxlayout]\ntimeout = "soon"\n',
     ":5: 'timeout' must be Z3's limit per query in seconds, as --timeout, not 'soon'"),
    ('[tool.ptxlayout]\ntimeout = -1\n', ":5: 'timeout' must be a positive number of seconds"),
    ('[tool.ptxlayout]\nselect = ["injectve"]\n',
     ": unknown finding kind 'injectve'; did you mean injective"),
    ('[[tool.ptxlayout.accept]]\nkind = "type-names"\n',
     ":4: entry 1 {\"kind\": \"type-names\"} "),
])
def test_a_configuration_that_cannot_be_used_is_exit_2_naming_file_and_line(
        tmp_path: Path, body: str, message: str) -> None:
    path = pyproject(tmp_path, body)
    with cwd(tmp_path):
        code, out, err = run("prove", "--format", "json")
    assert (code, out) == (2, "")
    assert err.startswith(f"ptxlayout: {path}") and message in err, err
    assert len(err.splitlines()) == 1


def test_the_configuration_gives_the_timeout_and_the_evidence(tmp_path: Path) -> None:
    from formal.writers.config import configure
    pyproject(tmp_path, '[tool.ptxlayout]\ntimeout = 12\nevidence = "ev"\n')
    args = argparse.Namespace(command="diff", timeout=None, evidence="auto")
    cfg = configure(args, tmp_path)
    assert cfg.path == tmp_path / "pyproject.toml"
    assert (args.timeout, args.evidence) == (12.0, str(tmp_path / "ev"))
    args = argparse.Namespace(command="diff", timeout=3.0, evidence="none")
    configure(args, tmp_path)
    assert (args.timeout, args.evidence) == (3.0, "none")  # the command line wins


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    from formal.writers.config import find_pyproject
    pyproject(tmp_path, "[tool.ptxlayout]\n")
    (tmp_path / "inner").mkdir()
    pyproject(tmp_path / "inner", "[tool.ruff]\nline-length = 99\n")
    assert find_pyproject(tmp_path / "inner") == tmp_path / "pyproject.toml"


# ---- --help --------------------------------------------------------------------------------


def test_every_option_has_help_with_its_default_and_every_command_its_exit_codes() -> None:
    from formal.base.options import undocumented
    assert undocumented(parser()) == []
    text = io.StringIO()
    with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
        parser().parse_args(["prove", "--help"])
    assert "(default: text)" in " ".join(text.getvalue().split())
    assert "1 a map changed, was removed or could not be compared" not in text.getvalue()
    flat = " ".join(text.getvalue().split())
    assert "exit status: 0" in flat and "(unless --allow-unknown), or drift from" in flat
    from formal.base.options import _walk
    for _prog, p in _walk(parser()):  # every page formats (no stray '%' in a help)
        assert "exit status: 0" in " ".join(p.format_help().split())


def test_the_help_walk_fails_on_an_option_without_help() -> None:
    from formal.base.options import undocumented
    ap = parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices["list"].add_argument("--planted")
    sub.choices["show"].add_argument("--level", default=3, help="how deep")
    assert sorted(undocumented(ap)) == [
        "ptxlayout list --planted: no help",
        "ptxlayout show --level: the default 3 is not said"]


# ---- JSON ----------------------------------------------------------------------------------


def test_every_json_output_has_a_version_and_findings_name_their_layout(
        seeds: dict[str, Path]) -> None:
    from formal import __version__
    code, out, _ = run("prove", str(seeds["000"]), str(seeds["003"]), "--format", "json")
    data = json.loads(out)
    assert data["version"] == __version__
    ids = {x["id"] for x in data["layouts"]}
    assert data["findings"]
    for f in data["findings"]:
        assert "accepted" in f and "layout" in f
        assert f["layout"] in ids, f
    code, out, _ = run("prove", "--format", "json")
    data = json.loads(out)
    accepted = [f for f in data["findings"] if f["accepted"]]
    assert len(accepted) >= 3 and all(f["layout"] for f in accepted)
    # every finding of the catalog concerns a layout and names it: the formula line the parse
    # stage cannot read (dense-float.md:314, before the model stage makes the id) and the
    # data-path and packing layouts' hardware warnings too
    ids = {x["id"] for x in data["layouts"]}
    assert [f for f in data["findings"] if f["layout"] not in ids] == []
    (f314,) = [f for f in data["findings"] if f["kind"] == "parse"]
    assert (f314["document"], f314["line"], f314["layout"]) == \
        ("catalog/dense-float.md", 314, "catalog:mma.m16n8k16.A.f64")
    assert {f["layout"] for f in data["findings"] if f["kind"] == "hardware"} >= \
        {"tcgen05.datapath.E", "tcgen05.packing.tensor.D.f16"}


def test_the_evidence_json_keeps_its_contract() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from formal import __version__
    from formal.prove.evidence import Evidence
    from formal.writers.evidence import evidence_json
    schema = json.loads((ROOT / "docs" / "schema" / "evidence.schema.json").read_text("utf-8"))
    ev = Evidence.load(ROOT / "proofs" / "evidence")
    data = json.loads(evidence_json(ev, 90, ["mma.m16n8k16.f16: no hardware match (no run)"],
                                    2))
    jsonschema.validate(data, schema)
    assert data["version"] == __version__
    assert data["stale"] == [{"variant": "mma.m16n8k16.f16",
                              "message": "no hardware match (no run)"}]
    assert data["summary"] == {"stale": 1, "files": len(ev.files), "erratum_layouts": 2,
                               "current": False}
    data["stale"][0]["why"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


@pytest.mark.slow
def test_evidence_json_and_quiet_on_the_shipped_evidence() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schema" / "evidence.schema.json").read_text("utf-8"))
    code, out, _ = run("evidence", str(ROOT / "proofs" / "evidence"), "--format", "json")
    jsonschema.validate(json.loads(out), schema)
    assert code == 0 and json.loads(out)["summary"]["current"] is True
    assert run("evidence", str(ROOT / "proofs" / "evidence"), "-q")[:2] == (0, "")


# ---- SARIF of the audit --------------------------------------------------------------------

AUDIT = {"atoms": [
    {"atom": "SM80_X", "file": "/inc/cute/atom/mma_traits_sm80.hpp", "line": 623,
     "instruction": "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc",
     "operands": [
         {"operand": "A", "verdict": "differs", "against": "spec", "message": "thread 0 ...",
          "counterexample": {"thread": 0}, "spec_layout": "mma.m16n8k256.A.b1", "cute": None},
         {"operand": "A", "verdict": "equal", "against": "correction", "message": "",
          "counterexample": None, "spec_layout": "mma.m16n8k256.A.b1", "cute": None},
         {"operand": "B", "verdict": "differs", "against": "spec", "message": "thread 1 ...",
          "counterexample": None, "spec_layout": "mma.m16n8k256.B.b1", "cute": None},
         {"operand": "C", "verdict": "equal", "against": "spec", "message": "",
          "counterexample": None, "spec_layout": "", "cute": None}]}],
    "summary": {}, "warnings": [
        {"file": "/elsewhere/x.hpp", "line": 3, "column": 7, "kind": "cute-syntax",
         "message": "cannot read"}]}


def test_the_audit_sarif_is_fit_for_code_scanning() -> None:
    from formal.writers.sarif import audit_output
    doc = json.loads(audit_output(json.dumps(AUDIT), "sarif", "9.9", include="/inc"))
    (run_,) = doc["runs"]
    assert run_["originalUriBaseIds"] == {"CUTLASS_INCLUDE": {"uri": "file:///inc/"}}
    a, b, w = run_["results"]
    assert a["ruleId"] == b["ruleId"] == "audit-differs" and w["ruleId"] == "cute-syntax"
    assert a["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "cute/atom/mma_traits_sm80.hpp", "uriBaseId": "CUTLASS_INCLUDE"}
    assert w["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///elsewhere/x.hpp"}
    # A follows the correction of a known erratum: suppressed; B differs outright
    assert a["suppressions"][0]["kind"] == "external" and "suppressions" not in b
    assert a["level"] == b["level"] == "error"
    assert len({r["partialFingerprints"]["ptxlayout/v1"] for r in (a, b, w)}) == 3
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["audit-differs", "cute-syntax"]
    assert all(r["fullDescription"]["text"] and r["helpUri"] for r in rules)
    assert [r["ruleIndex"] for r in (a, b, w)] == [0, 0, 1]
    assert json.loads(audit_output(json.dumps(AUDIT), "json", "9.9"))["version"] == "9.9"


def _anchors(page: Path) -> set[str]:
    text = page.read_text("utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    for head in re.findall(r"^#+ (.+)$", text, re.M):
        ids.add(re.sub(r"[^\w\- ]", "", head.lower()).replace(" ", "-"))
    return ids


def test_every_rule_help_uri_points_at_an_anchor_that_exists() -> None:
    from formal.writers.kinds import AUDIT_RULES, KINDS, help_uri
    assert _anchors(ROOT / "docs" / "obligations.md")  # the walk reads anchors at all
    missing = []
    for kind in (*KINDS, *AUDIT_RULES):
        page, _, anchor = help_uri(kind).rpartition("/")[2].partition("#")
        if anchor not in _anchors(ROOT / "docs" / page):
            missing.append(f"{kind}: docs/{page}#{anchor}")
    assert missing == []
    assert "kind-nothing" not in _anchors(ROOT / "docs" / "obligations.md")


# ---- progress ------------------------------------------------------------------------------


def test_evidence_tells_its_bar_of_every_variant() -> None:
    from formal.base.variants import VARIANTS
    from formal.prove.evidence import Evidence
    from formal.writers.evidence import stale
    calls: list[tuple[Any, ...]] = []

    class Bar:
        def phase(self, what: str, unit: str) -> Any:
            return lambda done, total, part=0.0: calls.append((what, unit, done, total))

        def clear(self) -> None:
            calls.append(("clear",))

    assert stale(Evidence(), [], 90, (), Bar()) == []
    assert calls[0] == ("checking", "variants", 0, len(VARIANTS))
    assert len(calls) == len(VARIANTS) + 1 and calls[-1] == ("clear",)


def test_a_quiet_run_leaves_the_bar_on_for_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    from formal.base import progress
    assert run("evidence", "/nonexistent", "-q")[0] == 2  # -q, then a bar again
    monkeypatch.setattr("sys.stderr", Tty())
    assert progress.progress() is not None


def test_quiet_silences_the_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    from formal.base import progress
    monkeypatch.setattr("sys.stderr", Tty())
    assert progress.progress() is not None
    progress.silence(True)
    try:
        assert progress.progress() is None
    finally:
        progress.silence(False)


# ---- identical warnings --------------------------------------------------------------------


def _warn(line: int, layout: str, variant: str) -> Finding:
    return Finding("warning", "hardware", Span("cat.md", line, 5),
                   f"unconfirmed: no sm_100a device: the executor assembles the 1 variants of "
                   f"this layout ({variant}, ...; ptxas -arch=sm_100a)", layout=layout)


def test_identical_warnings_are_one_line_with_their_count() -> None:
    from formal.writers.report import finding_lines
    fs = [_warn(10, "tcgen05.ld.a", "tcgen05.ld.sync.aligned.16x64b.x1.b32"),
          Finding("error", "injective", Span("cat.md", 20, 3), "lane 0 a1 and lane 1 a0"),
          _warn(30, "tcgen05.ld.b", "tcgen05.ld.sync.aligned.16x64b.x2.b32"),
          Finding("warning", "punctuation", Span("cat.md", 40, 1), "no comma before 'a30'"),
          _warn(50, "tcgen05.st.c", "tcgen05.st.sync.aligned.16x64b.x4.b32")]
    lines = finding_lines(fs)
    assert lines == [
        "warning: hardware: unconfirmed: no sm_100a device: the executor assembles the "
        "\u2026 variants of this layout (\u2026, ...; ptxas -arch=sm_100a) (3 findings, the "
        "first at cat.md:10:5; -v lists them)",
        "cat.md:20:3: error: injective: lane 0 a1 and lane 1 a0",
        "cat.md:40:1: warning: punctuation: no comma before 'a30'"]
    verbose = finding_lines(fs, verbose=True)
    assert verbose[1:4] == ["    cat.md:10:5 tcgen05.ld.a", "    cat.md:30:5 tcgen05.ld.b",
                            "    cat.md:50:5 tcgen05.st.c"]
    assert finding_lines(fs[:1]) == [fs[0].format()]  # one alone keeps its own line


def test_the_catalog_report_groups_its_hardware_warnings() -> None:
    _, out, _ = run("prove")
    assert re.search(r"\(\d{3} findings, the first at catalog/tcgen05-tmem\.md:", out)
    assert out.count("no sm_100a device") == 1


def _sm70_header() -> Path:
    from formal.audit import installed_include
    inc = installed_include()
    if inc is None:
        pytest.skip("nvidia-cutlass is not installed")
    return Path(inc) / "cute" / "atom" / "mma_traits_sm70.hpp"


def test_the_audit_tells_its_bar_of_every_atom() -> None:
    from formal.audit import audit_cute
    calls: list[tuple[int, int]] = []
    audit = audit_cute([_sm70_header()], (), lambda done, total: calls.append((done, total)))
    n = len(audit.results)
    assert n > 0 and calls == [(k, n) for k in range(n + 1)]


def test_the_audit_json_and_sarif_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from formal import __version__
    header = str(_sm70_header())
    code, out, err = run("audit", "cute", header, "--format", "json")
    data = json.loads(out)
    schema = json.loads((ROOT / "docs" / "schema" / "audit.schema.json").read_text("utf-8"))
    jsonschema.validate(data, schema)
    assert data["version"] == __version__ and code in (0, 1)
    code2, out, _ = run("audit", "cute", header, "--format", "sarif")
    (sarif_run,) = json.loads(out)["runs"]
    assert code2 == code
    for r in sarif_run["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert loc["uriBaseId"] == "CUTLASS_INCLUDE" and not loc["uri"].startswith("/")
    # -q on a terminal: no progress bar, and no family table
    monkeypatch.setattr("formal.base.progress.AFTER", 0.0)
    tty = Tty()
    code3, quiet, _ = run("audit", "cute", header, "-q", stderr=tty)
    assert code3 == code and tty.getvalue() == ""
    assert not quiet.startswith("family")
