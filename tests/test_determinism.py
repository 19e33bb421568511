"""Determinism: ``ptxlayout prove`` in separate processes, with different hash seeds, writes
byte-identical JSON, SARIF, JUnit and Markdown -- on the seeds and on the embedded catalog --
so that CI can diff reports and the ledger can hash them.

Two processes prove the seeds (a few small documents: cheap); the catalog is proved across
processes once: one process with its own hash seed writes its reports, and each must be the
very bytes ``tests/golden/outputs.json`` hashes, which ``python -m tests.test_golden --update``
wrote in another process (another hash seed) and test_golden's in-process run reproduces.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_golden import GOLDEN, _seed_args

FORMATS = ("json", "sarif", "junit", "markdown")

# one process writes every format of its inputs (the seeds, and the catalog when asked)
DRIVER = """
import sys
from formal.cli import main
out, catalog, docs = sys.argv[1], sys.argv[2] == "catalog", sys.argv[3:]
for name, args in (("seeds", docs), ("catalog", [])):
    if name == "catalog" and not catalog:
        continue
    for fmt in {formats!r}:
        code = main(["prove", *args, "--format", fmt, "-o", f"{{out}}/{{name}}.{{fmt}}"])
        print(name, fmt, code)
"""


def reports(out: Path, hash_seed: str, catalog: bool) -> dict[str, bytes]:
    out.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    env.pop("PTXLAYOUT_DEBUG", None)
    # from the repository root with the seeds' relative paths, as the goldens were written
    done = subprocess.run([sys.executable, "-c", DRIVER.format(formats=FORMATS), str(out),
                           "catalog" if catalog else "seeds", *_seed_args()], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # the seeds hold real errata (exit 1); the catalog proves (exit 0)
    assert sorted(done.stdout.split("\n")) == sorted(
        [f"seeds {f} 1" for f in FORMATS] + [""]
        + ([f"catalog {f} 0" for f in FORMATS] if catalog else []))
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _first_difference(name: str, first: bytes, second: bytes) -> str:
    a, b = first.split(b"\n"), second.split(b"\n")
    k = next((j for j, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
             min(len(a), len(b)))
    return (f"{name} differs between runs at line {k + 1}:\n  {a[k][:200]!r}\n"
            f"  {b[k][:200]!r}" if k < min(len(a), len(b)) else
            f"{name}: one run wrote more lines")


@pytest.mark.slow
def test_reports_are_byte_identical_across_processes(seeds: dict[str, Path],
                                                     tmp_path: Path) -> None:
    first = reports(tmp_path / "a", "1", catalog=True)
    second = reports(tmp_path / "b", "4242", catalog=False)
    assert sorted(first) == sorted(f"{n}.{f}" for n in ("seeds", "catalog") for f in FORMATS)
    assert sorted(second) == sorted(f"seeds.{f}" for f in FORMATS)
    for name in second:  # the seeds: two processes, two hash seeds
        assert first[name], name
        if first[name] != second[name]:
            pytest.fail(_first_difference(name, first[name], second[name]))
    # the catalog (and the seeds again): this process against the one that wrote the goldens
    golden = json.loads((GOLDEN / "outputs.json").read_text(encoding="utf-8"))
    for name, data in first.items():
        want = golden[f"prove-{name}"]
        assert data, name
        if hashlib.sha256(data).hexdigest() != want["sha256"]:
            whole = GOLDEN / f"prove-{name}"
            pytest.fail(_first_difference(name, data, whole.read_bytes()) if whole.is_file()
                        else f"{name}: not the bytes tests/golden/outputs.json hashes "
                             f"({len(data)} bytes, the golden {want['bytes']}); if "
                             "test_golden fails too, the goldens are out of date")
