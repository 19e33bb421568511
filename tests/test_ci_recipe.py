"""Issue 29, class 10: the GitHub Actions job of docs/cli.md runs as written.

The test takes the job's ``run: ptxlayout ...`` lines from docs/cli.md, word for word, and
runs them in a folder laid out as the job expects: ``spec/ptx-isa.html`` (the catalog's
integer chapter rendered as the Sphinx page, tests/sphinx.py), ``proofs/`` written by
``prove --ledger`` with the chapter's known erratum accepted (each entry with a reason).
The ledger check must pass, and the SARIF step must write a SARIF log whose accepted
findings are suppressed and whose URIs are relative to the checkout, as code scanning needs.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from formal.cli import main

from .conftest import ROOT
from .sphinx import markdown_to_sphinx_html


def recipe_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    job = text.split("# .github/workflows/ptx-layouts.yml", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("run:", 1)[1]) for line in job.splitlines()
            if line.strip().startswith("- run: ptxlayout ")]


def test_the_recipe_names_the_ledger_check_and_the_sarif_upload() -> None:
    cmds = recipe_commands()
    assert [c[:3] for c in cmds] == [["ptxlayout", "prove", "spec/ptx-isa.html"]] * 2
    assert "--check-ledger" in cmds[0] and "sarif" in cmds[1]
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "github/codeql-action/upload-sarif@v3" in text


@pytest.mark.slow
def test_the_recipe_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec").mkdir()
    md = (ROOT / "formal" / "catalog" / "dense-integer.md").read_text(encoding="utf-8")
    (tmp_path / "spec" / "ptx-isa.html").write_text(markdown_to_sphinx_html(md),
                                                     encoding="utf-8")
    assert main(["prove", "spec/ptx-isa.html", "--ledger", "proofs/", "-o", "/dev/null"]) == 1
    (tmp_path / "proofs" / "accepted.json").write_text(json.dumps([
        {"kind": k, "document": "spec/ptx-isa.html", "reason": "the spec's b1 erratum"}
        for k in ("hardware", "injective", "surjective")]), encoding="utf-8")
    capsys.readouterr()
    check, sarif = recipe_commands()
    assert main(check[1:]) == 0, capsys.readouterr().err
    assert main(sarif[1:]) == 0, capsys.readouterr().err
    log = json.loads((tmp_path / "layouts.sarif").read_text(encoding="utf-8"))
    results = log["runs"][0]["results"]
    errors = [r for r in results if r["level"] == "error"]
    assert errors and all(r.get("suppressions") for r in errors)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in results} == {"spec/ptx-isa.html"}
