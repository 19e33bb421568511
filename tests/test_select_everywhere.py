"""``--select`` / ``--ignore`` on diff, evidence and audit, with prove's semantics from one
definition (``formal.base.options``): kinds picked by prefix, ignore wins, the report and the
exit status see only the findings kept, an unknown kind is exit 2 with the nearest kinds, and
``[tool.ptxlayout]``'s ``<command>-select`` / ``<command>-ignore`` give the defaults the command
line overrides.

The seeds 003 and 004 are two revisions in which 004 no longer states 34 of 003's layouts and
adds 7: diff's exit 1 comes from the removals alone.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from formal.cli import parser

from .conftest import ROOT
from .inproc import cwd, run


def kinds_in(diff_text: str) -> set[str]:
    """The first word of each change line of diff's text report."""
    return {ln.split()[0] for ln in diff_text.splitlines()
            if ln.split() and ln.split()[0] in ("added", "removed", "different-map",
                                                "not-comparable", "same-map", "same-text")}


def test_every_command_with_findings_has_select_and_ignore_with_defaults_said() -> None:
    from formal.base.options import SELECT, SELECT_KINDS
    assert set(SELECT) == {"prove", "diff", "evidence", "audit cute", "audit triton"}
    for argv in (["diff", "a", "b"], ["evidence", "d"], ["audit", "cute"],
                 ["audit", "triton"], ["prove"]):
        args = parser().parse_args([*argv, "--select", "x,y", "--ignore", "z"])
        assert (args.select, args.ignore) == (["x,y"], ["z"])
    for argv, word in ((["diff", "--help"], "removed"), (["evidence", "--help"], "wgmma.sp"),
                       (["audit", "cute", "--help"], "not-in-spec")):
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
            parser().parse_args(argv)
        flat = " ".join(text.getvalue().split())
        assert "default: every kind" in flat and "default: none" in flat and word in flat
    assert SELECT_KINDS["audit"] == ("differs", "not-in-spec", "unreadable")


def test_diff_select_and_ignore_pick_changes_and_the_exit_status(
        seeds: dict[str, Path]) -> None:
    old, new = str(seeds["003"]), str(seeds["004"])
    code, out, _ = run("diff", old, new)
    assert code == 1 and {"added", "removed"} <= kinds_in(out)
    code, out, _ = run("diff", old, new, "--select", "add")
    assert code == 0 and "added" in kinds_in(out) and "removed" not in kinds_in(out)
    code, out, _ = run("diff", old, new, "--ignore", "rem")
    assert code == 0 and "removed" not in kinds_in(out)
    # ignore wins over select
    code, out, _ = run("diff", old, new, "--select", "removed", "--ignore", "re")
    assert code == 0 and not kinds_in(out) & {"added", "removed"}


def test_an_unknown_kind_of_diff_evidence_or_audit_is_exit_2_with_the_nearest() -> None:
    code, out, err = run("diff", "a.txt", "b.txt", "--select", "remved")
    assert (code, out) == (2, "")
    assert err == "ptxlayout: unknown finding kind 'remved'; did you mean removed?\n"
    code, out, err = run("evidence", str(ROOT / "proofs" / "evidence"), "--ignore", "ldmatrx")
    assert (code, out) == (2, "")
    assert err == ("ptxlayout: unknown finding kind 'ldmatrx'; did you mean ldmatrix or "
                   "stmatrix or movmatrix?\n")
    code, _, err = run("audit", "cute", "--select", "injective")
    assert code == 2 and err == ("ptxlayout: unknown finding kind 'injective' (the kinds: "
                                 "differs, not-in-spec, unreadable)\n")


def test_the_configuration_table_of_a_command_is_honoured_and_the_command_line_wins(
        tmp_path: Path, seeds: dict[str, Path]) -> None:
    old, new = str(seeds["003"]), str(seeds["004"])
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.ptxlayout]\nselect = ['type']\n"
        "diff-ignore = ['removed']\n", encoding="utf-8")
    with cwd(tmp_path):
        code, out, _ = run("diff", old, new)
        assert code == 0 and "removed" not in kinds_in(out)
        code, out, _ = run("diff", old, new, "--ignore", "added")  # the command line wins
        assert code == 1 and "removed" in kinds_in(out) and "added" not in kinds_in(out)
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.ptxlayout]\naudit-select = ['diffs']\n",
        encoding="utf-8")
    with cwd(tmp_path):
        code, out, err = run("audit", "cute")
    assert (code, out) == (2, "")
    assert err == (f"ptxlayout: {tmp_path / 'pyproject.toml'}: unknown finding kind 'diffs'; "
                   "did you mean differs?\n")
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.ptxlayout]\nevidence-selct = ['mma']\n",
        encoding="utf-8")
    with cwd(tmp_path):
        code, out, err = run("evidence", "x")
    assert (code, out) == (2, "")
    assert err == (f"ptxlayout: {tmp_path / 'pyproject.toml'}:5: unknown key 'evidence-selct' "
                   "in [tool.ptxlayout]; did you mean 'evidence-select'?\n")


def test_evidence_select_picks_the_stale_variants_by_instruction(tmp_path: Path) -> None:
    # the first evidence file alone: every variant since (the moves, wgmma) is stale
    first = sorted((ROOT / "proofs" / "evidence").glob("*.json"))[0]
    shutil.copy(first, tmp_path / first.name)
    code, out, _ = run("evidence", str(tmp_path), "-q", "--select", "ldmatrix")
    assert code == 1 and out and all(ln.startswith("ldmatrix.") for ln in out.splitlines())
    code, out, _ = run("evidence", str(tmp_path), "--format", "json", "--ignore", "wgmma",
                       "--ignore", "ldmatrix,stmatrix,movmatrix")
    data = json.loads(out)
    assert not [s for s in data["stale"]
                if s["variant"].startswith(("wgmma", "ldmatrix", "stmatrix", "movmatrix"))]
    assert code == (1 if data["stale"] else 0) and data["summary"]["stale"] == len(data["stale"])


def test_audit_select_and_ignore_pick_verdicts(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from formal.audit import installed_include
    inc = installed_include()
    if inc is None:
        pytest.skip("nvidia-cutlass is not installed")
    for sub, name in (("atom", "mma_traits_sm80.hpp"), ("arch", "mma_sm80.hpp")):
        (tmp_path / "cute" / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(inc) / "cute" / sub / name, tmp_path / "cute" / sub / name)
    hdr = str(tmp_path / "cute" / "atom" / "mma_traits_sm80.hpp")
    code, out, _ = run("audit", "cute", hdr, "--format", "json")
    verdicts = {o["verdict"] for a in json.loads(out)["atoms"] for o in a["operands"]}
    assert code == 1 and "differs" in verdicts  # the XOR-POPC atoms' A and B
    code, out, _ = run("audit", "cute", hdr, "--format", "json", "--ignore", "diff")
    kept = {o["verdict"] for a in json.loads(out)["atoms"] for o in a["operands"]}
    assert code == 0 and "differs" not in kept and "equal" in kept
    code, out, _ = run("audit", "cute", hdr, "--format", "json", "--select", "not-in")
    kept = {o["verdict"] for a in json.loads(out)["atoms"] for o in a["operands"]}
    assert code == 0 and kept <= {"equal", "not-in-spec"}
