"""Golden outputs: what the command line prints for the catalog and the seeds, byte for byte.

A change of structure must not change behaviour.  This test runs the console's entry point
in-process on the embedded catalog (as written and corrected) and on the five seeds, in every
report and export format plus the ledger, and compares a SHA-256 of each output with
``tests/golden/outputs.json``.  The two proof reports that matter most (the JSON contract on the
catalog and on the seeds) are kept whole under ``tests/golden/`` so a failure shows the first
differing line, not only a hash.

A deliberate change of behaviour regenerates the goldens and says why in its commit:

    python -m tests.test_golden --update
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from .inproc import cwd
from .kept import analyses_kept

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SEEDS = ROOT.parent / "shared" / "seeds"
KEPT_WHOLE = ("prove-catalog.json", "prove-seeds.json")


def _seed_args() -> list[str]:
    # relative paths, as a user in the repository root types them: the reports name them
    return [os.path.relpath(p, ROOT) for p in sorted(SEEDS.glob("*.txt"))]


def _runs() -> list[tuple[str, list[str]]]:
    seeds = _seed_args()
    runs: list[tuple[str, list[str]]] = []
    for fmt in ("json", "text", "markdown", "sarif", "junit"):
        runs.append((f"prove-catalog.{fmt}", ["prove", "--format", fmt]))
        runs.append((f"prove-seeds.{fmt}", ["prove", *seeds, "--format", fmt]))
    runs.append(("prove-corrections.json", ["prove", "--corrections", "--format", "json"]))
    runs.append(("prove-catalog-verbose.json", ["prove", "--format", "json", "-v"]))
    for fmt in ("json", "c", "cute", "f2"):
        runs.append((f"export.{fmt}", ["export", "--format", fmt]))
    runs.append(("export-corrections.json", ["export", "--format", "json", "--corrections"]))
    runs.append(("extract-catalog.json", ["extract", "--format", "json"]))
    runs.append(("extract-seeds.json", ["extract", *seeds, "--format", "json"]))
    return runs


def _run(argv: list[str]) -> tuple[int, bytes, str]:
    from formal.cli import main
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main([*argv, "--output", str(out)])
        return code, out.read_bytes() if out.exists() else b"", err.getvalue()


def outputs() -> dict[str, tuple[int, bytes, str]]:
    got: dict[str, tuple[int, bytes, str]] = {}
    # the five formats, -v and the ledger of one input read one analysis of it (tests/kept.py):
    # each output is still written by its own command, byte for byte
    with cwd(ROOT), analyses_kept():
        for name, argv in _runs():
            got[name] = _run(argv)
        with tempfile.TemporaryDirectory() as tmp:
            from formal.cli import main
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = main(["prove", "--ledger", tmp, "--output", os.devnull])
            ledger = Path(tmp) / "ledger.json"
            if code != 0 or not ledger.is_file():  # the run's own words, not a missing file
                raise AssertionError(f"prove --ledger: exit {code}, ledger.json "
                                     f"{'written' if ledger.is_file() else 'missing'}; "
                                     f"stderr: {err.getvalue()[-2000:]}")
            got["ledger.json"] = (0, ledger.read_bytes(), "")
    return got


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest(got: dict[str, tuple[int, bytes, str]]) -> dict[str, dict[str, object]]:
    return {name: {"exit": code, "sha256": _digest(data), "bytes": len(data),
                   "stderr_sha256": _digest(err.encode())}
            for name, (code, data, err) in sorted(got.items())}


def update() -> None:
    got = outputs()
    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / "outputs.json").write_text(json.dumps(manifest(got), indent=1, sort_keys=True)
                                         + "\n", encoding="utf-8")
    for name in KEPT_WHOLE:
        (GOLDEN / name).write_bytes(got[name][1])


@pytest.fixture(scope="module")
def produced() -> dict[str, tuple[int, bytes, str]]:
    if not SEEDS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the seed folder {SEEDS} is missing (CI=true)")
        pytest.skip(f"the seed folder {SEEDS} is missing")
    return outputs()


def test_whole_reports_are_unchanged(produced: dict[str, tuple[int, bytes, str]]) -> None:
    for name in KEPT_WHOLE:
        want = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
        have = produced[name][1].decode().splitlines()
        if want != have:
            delta = "\n".join(list(difflib.unified_diff(want, have, "golden", "now",
                                                        lineterm=""))[:40])
            pytest.fail(f"{name} changed:\n{delta}")


def test_every_output_is_byte_identical(produced: dict[str, tuple[int, bytes, str]]) -> None:
    want = json.loads((GOLDEN / "outputs.json").read_text(encoding="utf-8"))
    have = manifest(produced)
    assert sorted(have) == sorted(want)
    changed = [f"{k}: exit {want[k]['exit']} -> {have[k]['exit']}, {want[k]['bytes']} -> "
               f"{have[k]['bytes']} bytes; stderr now: {produced[k][2][-500:]!r}"
               for k in want if have[k] != want[k]]
    assert not changed, "outputs changed:\n" + "\n".join(changed)


def test_the_golden_runs_exercise_findings_and_both_exits(
        produced: dict[str, tuple[int, bytes, str]]) -> None:
    # the seeds carry eight error findings (exit 1); the catalog accepts its errata (exit 0)
    assert produced["prove-seeds.json"][0] == 1
    assert produced["prove-catalog.json"][0] == 0
    seeds = json.loads(produced["prove-seeds.json"][1])
    assert seeds["summary"]["errors"] == 8


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--update"]:
        update()
        print(f"wrote {GOLDEN}")
    else:
        sys.exit("usage: python -m tests.test_golden --update")
