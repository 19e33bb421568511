"""Issue 15, no silent success: every command tells the truth about its input and its result.

Each case runs the console's entry point (``formal.cli.main``, and ``python -m formal`` as a
user's shell would) and asserts the exit status and the message: an unreadable input, a short
id that names several layouts, a missing GPU or CuPy, an unwritable output and a bad option
value are usage errors (exit 2, one line that says what is wrong, never "internal error");
an accepted erratum is never printed as ``error:``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from formal.cli import main
from formal.execute import devices

from .conftest import ROOT

CATALOG = ROOT / "formal" / "catalog"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# ---- diff ---------------------------------------------------------------------------------------


def test_diff_of_two_missing_documents_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "nonexist1", tmp_path / "nonexist2"
    code, out, err = run(capsys, "diff", str(a), str(b))
    assert code == 2 and out == ""
    assert f"{a}:1:1: error: input: cannot read the document: No such file" in err
    assert f"{b}:1:1: error: input: cannot read the document: No such file" in err


def test_diff_against_a_missing_or_empty_document_removes_nothing(
        seeds: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", str(seeds["000"]), str(tmp_path / "nonexist"))
    assert code == 2 and "removed" not in out + err
    assert "cannot read the document" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    code, out, err = run(capsys, "diff", str(seeds["000"]), str(empty))
    assert code == 2 and "removed" not in out
    assert f"{empty}:1:1: error: input: the document is empty" in err


def test_diff_reports_the_reading_findings(capsys: pytest.CaptureFixture[str]) -> None:
    # the catalog's m16n8k16 .f64 A erratum: an unbalanced parenthesis the parser reports
    doc = str(CATALOG / "dense-float.md")
    code, out, err = run(capsys, "diff", doc, doc)
    assert code == 0
    assert f"{doc}:314:57: error: parse: cannot read this formula: unexpected 'otherwise'" \
        in err
    assert "same-text" in out and "removed" not in out


# ---- ids that name several layouts --------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["show", "mma.m16n8k16.A"],
    ["draw", "mma.sp.m16n8k16.meta", "--ascii"],
    ["export", "--format", "cute", "mma.m16n8k16.CD.f32"],
])
def test_an_ambiguous_short_id_lists_the_candidates(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    candidates = {
        "show": ["catalog:mma.m16n8k16.A.f16-bf16", "catalog:mma.m16n8k16.A.f64",
                 "catalog:mma.m16n8k16.A.u8-s8", "catalog:mma.m16n8k16.A.e4m3-e5m2"],
        "draw": ["catalog:mma.sp.m16n8k16.meta.f16-bf16", "catalog:mma.sp.m16n8k16.meta.tf32"],
        "export": ["catalog:mma.m16n8k16.CD.f32@f16-bf16-f64",
                   "catalog:mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2"],
    }[argv[0]]
    assert f"matches {len(candidates)} layouts; name one of them:" in err
    assert [line.strip() for line in err.splitlines()[1:]] == candidates


def test_the_tf32_metadata_is_drawn_not_the_f16_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "show", "mma.sp.m16n8k16.meta.tf32")
    assert code == 0
    assert out.startswith("catalog:mma.sp.m16n8k16.meta.tf32")


# ---- ptxlayout gpu without a device -------------------------------------------------------------


def test_gpu_without_cupy_names_the_extra(exported_layouts: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(devices, "has_cupy", lambda: False)
    ev = tmp_path / "ev"
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--record", str(ev))
    assert code == 2 and out == ""
    assert err.startswith("ptxlayout gpu: CuPy missing: install the GPU extra")
    assert "ptxlayout[gpu-cuda13]" in err and "ptxlayout[gpu-cuda12]" in err
    assert "--allow-no-device" in err
    assert not ev.exists()


def test_gpu_without_a_device_exits_2_and_writes_no_evidence(
        exported_layouts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = tmp_path / "ev"
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--device",
                         "fake:absent", "--record", str(ev), "--only", "m16n8k8.f32")
    assert code == 2
    assert "not-executed" not in out and "unknown" not in out
    assert err.startswith("ptxlayout gpu: no CUDA device")
    assert not ev.exists() or not list(ev.iterdir())


def test_gpu_allow_no_device_is_the_compile_only_run(
        exported_layouts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = tmp_path / "ev"
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--device",
                         "fake:absent", "--record", str(ev), "--only", "m16n8k8.f32",
                         "--allow-no-device", "--no-ptxas")
    assert code == 0
    assert "compile-only run: no device (--allow-no-device); nothing was checked" in out
    assert "device: none" in out and "sm_0" not in out
    assert "no evidence written: no device ran anything" in err
    assert not ev.exists() or not list(ev.iterdir())  # never unknown-<date>.json


def test_gpu_only_that_matches_no_variant_is_a_usage_error(
        exported_layouts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--device", "fake",
                         "--only", "m99n8k1")
    assert code == 2 and out == ""
    assert err.startswith("ptxlayout gpu: no variant matches 'm99n8k1'")


def test_gpu_record_under_a_file_fails_before_the_run(
        exported_layouts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--device", "fake",
                         "--only", "m16n8k8.f32", "--record", f"{blocker}/ev")
    assert code == 2 and out == ""
    assert err.startswith(f"ptxlayout gpu: cannot write evidence to {blocker}/ev: ")


@pytest.mark.ptxas
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
def test_ptx_check_for_an_architecture_no_kernel_targets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "ptx", "--check", "--arch", "sm_1", "--out", str(tmp_path))
    assert code == 2
    assert "no kernel is for sm_1: nothing to write" in err  # found before writing any


@pytest.mark.gpu
def test_gpu_on_a_real_device_names_it_in_the_evidence(
        exported_layouts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = tmp_path / "ev"
    code, out, err = run(capsys, "gpu", "--layouts", str(exported_layouts), "--only",
                         "mma.m16n8k8.f32.tf32", "--trials", "2", "--record", str(ev))
    assert code == 0, out + err
    files = list(ev.glob("*.json"))
    assert len(files) == 1 and not files[0].name.startswith("unknown")
    doc = json.loads(files[0].read_text(encoding="utf-8"))
    assert doc["device"] != "unknown" and doc["sm"] >= 80
    assert {r["result"] for r in doc["runs"]} == {"match"}


@pytest.mark.parametrize("flag,value", [("--trials", "0"), ("--timeout", "-1"),
                                        ("--deadline", "0")])
def test_gpu_rejects_values_that_are_not_positive(
        flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "gpu", flag, value)
    assert code == 2
    assert f"argument {flag}: must be a positive finite number: '{value}'" in err


# ---- accepted errata are not errors -------------------------------------------------------------


def test_accepted_errata_are_never_printed_as_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "prove")
    assert code == 0
    assert ": error:" not in out
    assert out.count(": accepted: ") == 4
    # the warnings: 22 layouts no device of the evidence ran, 'unconfirmed' (7 sm_120a mma
    # forms, 15 sm_100a moves), the 148 tcgen05.ld/st forms and the 28 tcgen05 shared-memory
    # layouts (no sm_100a device), the 7 tcgen05.mma data-path layouts and its 11 packing
    # formats (no sm_100a device), the spec's two wordings (integer type over .e4m3 / .e5m2),
    # the 92 block-scale factor layouts (10 mma.sync, sm_120a; 82 tcgen05.mma at M = 128, 64
    # and a pair's 256 and 128, dense and sparse, sm_100a) and the 16 K = 96 block32 tcgen05
    # ones whose factors run past their word (the figures say);
    # the 5 relations of Layout D read back with tcgen05.ld.32x32b; the sparse tcgen05.mma.sp
    # metadata layouts, one a selector value (27: 9 tcgen05.mma.sp, 18 .ws; sm_100a); the 6
    # tcgen05.cp forms and its 2 decompression formats (sm_100a)
    assert out.rstrip().endswith("0 errors, 4 accepted errata, 362 warnings\n"
                                 "44 relations: 44 proved, 0 not")
    code, out, _err = run(capsys, "prove", "--format", "markdown")
    assert code == 0
    assert "## Errors" not in out and "## Accepted errata" in out
    assert "0 errors, 4 accepted errata, 362 warnings." in out


def test_extract_and_prove_agree_on_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "extract")
    assert code == 0
    assert ": error:" not in err
    assert "dense-float.md:314:57: accepted: parse: cannot read this formula" in err
    code, _out, err = run(capsys, "extract", "--no-catalog", str(CATALOG / "dense-float.md"))
    assert code == 1  # a document of one's own: the same parse error is an error
    assert "dense-float.md:314:57: error: parse:" in err


def test_strict_still_fails_on_the_errata(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "prove", "--strict")
    assert code == 1
    assert out.count(": error: ") == 4 and ": accepted: " not in out


# ---- outputs and option values ------------------------------------------------------------------


def test_an_output_under_a_file_is_a_usage_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    for argv in (["prove", "-o", f"{blocker}/x.json"],
                 ["draw", "mma.sp.m16n8k16.meta.tf32", "--svg", f"{blocker}/x.svg"],
                 ["export", "-o", f"{blocker}/sub/x.json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert err == f"ptxlayout: cannot write {argv[-1]}: {blocker} is a file, not a " \
                      "folder\n"


def test_a_missing_output_folder_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # 'export -o build/x.json' without build/
    code, _out, err = run(capsys, "export", "mma.m16n8k8.A.tf32", "-o", "build/x.json")
    assert code == 0, err
    doc = json.loads((tmp_path / "build" / "x.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in doc["layouts"]] == ["catalog:mma.m16n8k8.A.tf32"]
    code, _out, err = run(capsys, "draw", "mma.m16n8k8.A.tf32", "--svg", "figs/a/x.svg")
    assert code == 0, err
    assert (tmp_path / "figs" / "a" / "x.svg").read_text(encoding="utf-8").startswith("<svg")


def test_an_output_that_is_a_folder_is_a_usage_error(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "prove", "-o", str(tmp_path))
    assert code == 2 and err == f"ptxlayout: cannot write {tmp_path}: it is a folder\n"


@pytest.mark.parametrize("argv", [["prove", "--timeout", "-1"], ["prove", "--timeout", "0"],
                                  ["diff", "a", "b", "--timeout", "nan"],
                                  ["extract", "--max-size", "-5"]])
def test_values_that_are_not_positive_are_rejected(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert "must be a positive finite number" in err


def test_nothing_to_read_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("prove", "extract"):
        code, _out, err = run(capsys, command, "--no-catalog")
        assert code == 2
        assert err.startswith("ptxlayout: nothing to read: no documents given")


# ---- what the reports say -----------------------------------------------------------------------


def test_no_counterexample_says_at_none(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "prove", "--format", "json", "-v")
    assert code == 0
    assert "None" not in out
    # m16n8k256 .b1 A as the spec writes it: a32 of lane 0 overruns into col 32; the H100
    # holds it at col 0
    assert "lane 0 element 32 is at (row 8, col 32) in the layout but at (row 8, col 0) on " \
           "the hardware" in out


def test_markdown_report_of_the_catalog_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "prove", "--format", "markdown")
    assert code == 0
    assert "<svg" not in out
    # about a line a layout and relation (467 + 44) and a few a finding (298, most of them
    # the tcgen05 forms no sm_100a device ran), plus headings: no dumps (3113 lines, 240 kB)
    assert len(out) < 280_000 and out.count("\n") < 3_500
    assert "Figure: `ptxlayout draw catalog:mma.m16n8k256.A.b1 --svg figure.svg`" in out
    code, out, _err = run(capsys, "prove", "--format", "markdown", "--figures")
    # the refuted .b1 layout, inlined when asked for (the .f64 erratum is a parse error)
    assert out.count("<svg ") == 1


def test_every_skipped_junit_case_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    import xml.etree.ElementTree as ET
    code, out, _err = run(capsys, "prove", "--format", "junit")
    assert code == 0
    skipped = list(ET.fromstring(out).iter("skipped"))
    assert len(skipped) > 400  # most obligations do not apply to most layouts
    assert all(s.get("message") for s in skipped)


# ---- the console script, as a shell runs it ------------------------------------------------------


def _shell(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[Any]:
    return subprocess.run([sys.executable, "-m", "formal", *argv], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


def test_the_console_script_exits_2_without_a_traceback(tmp_path: Path) -> None:
    proc = _shell("diff", str(tmp_path / "old.txt"), str(tmp_path / "new.txt"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "cannot read the document" in proc.stderr and "Traceback" not in proc.stderr
    proc = _shell("show", "mma.m16n8k16.A")
    assert proc.returncode == 2 and "matches 4 layouts" in proc.stderr
    proc = _shell("prove", "--timeout", "-1")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


# README's and docs/' commands and the files they name: tests/test_docs.py


def test_a_cell_the_layout_leaves_out_is_at_no_cell() -> None:
    from formal.prove.evidence import distinguish
    rows = [{"lane": 0, "element": 0, "row": 0, "col": 0}]  # element 1 holds no cell
    found = {"columns": ["lane", "element", "row", "col"], "rows": [[0, 0, 0, 0], [0, 1, 8, 0]]}
    got = distinguish("cells", rows, found, relabel=False)
    assert got is not None
    assert got["message"] == ("lane 0 element 1 is at no cell in the layout but at "
                              "(row 8, col 0) on the hardware")


def test_a_document_with_nothing_to_check_is_not_a_pass(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    # a typo'd path in CI that names some other page: no fragment section, nothing checked
    other = tmp_path / "notes.md"
    other.write_text("# Release notes\n\nNothing about matrix fragments here.\n",
                     encoding="utf-8")
    code, out, _err = run(capsys, "prove", str(other), "--format", "json")
    assert code == 1
    (f,) = json.loads(out)["findings"]
    assert (f["severity"], f["kind"], f["line"]) == ("error", "input", 1)
    assert "nothing in it was checked" in f["message"]
    for argv in (("diff", str(other), str(other)), ("extract", str(other))):
        code, _out, err = run(capsys, *argv)
        assert code == 2 and "nothing in it was checked" in err, argv


def test_evidence_that_is_not_there_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    empty = tmp_path / "evidence"
    empty.mkdir()
    code, _out, err = run(capsys, "evidence", str(empty))
    assert code == 2 and f"no evidence files (*.json) in {empty}" in err
    for where in (str(empty), str(tmp_path / "missing")):
        code, _out, err = run(capsys, "prove", "--evidence", where)
        assert code == 2 and err.startswith("ptxlayout: --evidence: no evidence"), err
        assert "internal error" not in err


def test_evidence_for_a_device_no_variant_runs_on_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--sm 5`` selects no run of any family: nothing would be checked, so not 0."""
    code, out, err = run(capsys, "evidence", str(ROOT / "proofs" / "evidence"), "--sm", "5")
    assert (code, out) == (2, "")
    assert err == "ptxlayout evidence: no variant of the table runs on sm_5: nothing would be " \
        "checked\n"


def test_show_finds_the_chapters_layouts_by_their_leading_parts(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "show", "wgmma.sp.m64nNk32.A")
    assert code == 0 and out.startswith("catalog:wgmma.sp.m64nNk32.A.f16-bf16  (")
    # thread 1 holds row 0's second chunk of four columns, elements a0 and a1
    assert "T1:a0,a1" in out.splitlines()[3]
    code, _out, err = run(capsys, "show", "ldmatrix.m8n8.x4")
    assert code == 2 and "matches 2 layouts" in err
    assert "catalog:ldmatrix.m8n8.x4.b16" in err and "catalog:ldmatrix.m8n8.x4.trans.b16" in err
    code, _out, err = run(capsys, "show", "ldmatrix.m8n8.x9")
    assert code == 2 and "no layout matches 'ldmatrix.m8n8.x9'" in err
