"""The JSON outputs keep their contract: each validates against its JSON Schema in docs/schema/
(prove, diff and audit; ``evidence`` prints no JSON).

``docs/schema/prove.schema.json`` states what ``ptxlayout prove --format json`` prints (the
layouts with their twelve obligations, the relations, the findings with their places, the
counts).  The whole reports of the catalog and the seeds kept as goldens are validated, and the
``--verbose`` reports made now; a report with a status the contract does not know, a finding
without its line, or a refuted obligation without its counterexample must fail validation.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from formal.cli import main

from .conftest import ROOT, SEEDS

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = ROOT / "docs" / "schema"


def validator(name: str) -> Any:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(name: str, value: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(value)]


def run_json(*argv: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    assert code in (0, 1), argv
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def catalog() -> Any:
    return json.loads((ROOT / "tests" / "golden" / "prove-catalog.json").read_text("utf-8"))


def test_the_catalog_report_keeps_the_contract(catalog: Any) -> None:
    assert errors("prove", catalog) == []
    assert len(catalog["layouts"]) == catalog["summary"]["layouts"] > 100


def test_the_seeds_report_keeps_the_contract() -> None:
    seeds = json.loads((ROOT / "tests" / "golden" / "prove-seeds.json").read_text("utf-8"))
    assert errors("prove", seeds) == []
    assert seeds["summary"]["errors"] > 0  # the contract is checked on findings too


def test_the_verbose_reports_keep_the_contract() -> None:
    got = run_json("prove", "--format", "json", "--verbose")
    assert errors("prove", got) == []
    # the shared-memory, block-scale, tcgen05.mma(.ws).sp metadata and tcgen05.cp entries
    # (selector and placement programs, not fragment formulas) carry no formulas; every
    # fragment layout does (163 register fragments, 148 tcgen05.ld/st forms, the 7 data-path
    # layouts and 11 packing formats of tcgen05.mma)
    plain = [x for x in got["layouts"] if not x["instruction"].endswith(
        (".smem", ".block_scale", ".mma.sp", ".ws.sp", ".cp"))]
    assert len(plain) == 163 + 148 + 18 and all("formulas" in x for x in plain)
    if SEEDS.is_dir():
        seeds = sorted(map(str, SEEDS.glob("*.txt")))
        assert errors("prove", run_json("prove", *seeds, "--format", "json", "-v")) == []


def test_a_report_that_breaks_the_contract_fails(catalog: Any) -> None:
    bad = copy.deepcopy(catalog)
    bad["layouts"][0]["obligations"][0]["status"] = "maybe"
    assert any("'maybe' is not one of" in e for e in errors("prove", bad))
    bad = copy.deepcopy(catalog)
    del bad["findings"][0]["line"]
    assert any("'line' is a required property" in e for e in errors("prove", bad))
    bad = copy.deepcopy(catalog)
    refuted = next(o for x in bad["layouts"] for o in x["obligations"]
                   if o["status"] == "refuted")
    refuted["counterexample"] = None
    assert any("None is not of type 'object'" in e for e in errors("prove", bad))
    bad = copy.deepcopy(catalog)
    bad["layouts"][0]["tile"] = [16]
    assert errors("prove", bad)
    bad = copy.deepcopy(catalog)
    smem = next(x for x in bad["layouts"] if x["instruction"] == "wgmma.smem")
    smem["obligations"][0]["name"] = "cases"  # a register layout's obligation on an smem one
    assert any("'cases' is not one of" in e for e in errors("prove", bad))


def test_the_diff_report_keeps_the_contract(tmp_path: Path) -> None:
    old = ROOT / "formal" / "catalog" / "dense-integer.md"
    new = tmp_path / "dense-integer.md"
    text = old.read_text(encoding="utf-8")
    formula = "(threadID_in_group * 4) + (i & 0x3)"
    assert formula in text
    new.write_text(text.replace(formula, "(threadID_in_group * 4) + (i & 0x1)", 1),
                   encoding="utf-8")
    got = run_json("diff", str(old), str(new), "--format", "json")
    assert errors("diff", got) == []
    assert got["summary"]["different-map"] >= 1 and got["summary"]["same-text"] >= 1
    bad = copy.deepcopy(got)
    changed = next(c for c in bad["changes"] if c["kind"] == "different-map")
    changed["witness"] = None
    assert any("None is not of type 'object'" in e for e in errors("diff", bad))


@pytest.mark.slow
def test_the_audit_report_keeps_the_contract(whole_audit: dict[str, Any]) -> None:
    # the whole library's report, made once a session (conftest's whole_audit)
    got = whole_audit["report"]
    assert whole_audit["exit"] == 1  # CuTe differs from the spec somewhere: see below
    assert errors("audit", got) == []
    assert got["summary"]["operands"]["differs"] >= 1  # CuTe's s4/u4 B
    bad = copy.deepcopy(got)
    bad["atoms"][0]["operands"][0]["verdict"] = "similar"
    assert any("'similar' is not one of" in e for e in errors("audit", bad))


def test_every_schema_in_docs_is_a_valid_schema() -> None:
    names = sorted(p.name.split(".")[0] for p in SCHEMAS.glob("*.schema.json"))
    assert {"prove", "audit", "diff"} <= set(names)
    for name in names:
        validator(name)
