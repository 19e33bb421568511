"""Determinism: two runs of ``ptxlayout prove`` in separate processes, with different hash
seeds, write byte-identical JSON, SARIF, JUnit and Markdown -- on the seeds and on the
embedded catalog -- so that CI can diff reports and the ledger can hash them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

FORMATS = ("json", "sarif", "junit", "markdown")

# one process writes every format (and both inputs), so that the test costs two processes
DRIVER = """
import sys
from formal.cli import main
out, docs = sys.argv[1], sys.argv[2:]
for name, args in (("seeds", docs), ("catalog", [])):
    for fmt in {formats!r}:
        code = main(["prove", *args, "--format", fmt, "-o", f"{{out}}/{{name}}.{{fmt}}"])
        print(name, fmt, code)
"""


def reports(out: Path, hash_seed: str, docs: list[str]) -> dict[str, bytes]:
    out.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    env.pop("PTXLAYOUT_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", DRIVER.format(formats=FORMATS), str(out),
                           *docs], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # the seeds hold real errata (exit 1); the catalog proves (exit 0)
    assert sorted(done.stdout.split("\n")) == sorted(
        [f"seeds {f} 1" for f in FORMATS] + [f"catalog {f} 0" for f in FORMATS] + [""])
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.slow
def test_reports_are_byte_identical_across_processes(seeds: dict[str, Path],
                                                     tmp_path: Path) -> None:
    docs = [str(p) for p in seeds.values()]
    first = reports(tmp_path / "a", "1", docs)
    second = reports(tmp_path / "b", "4242", docs)
    assert sorted(first) == sorted(f"{n}.{f}" for n in ("seeds", "catalog") for f in FORMATS)
    for name in first:
        assert first[name], name
        if first[name] != second[name]:
            a, b = first[name].split(b"\n"), second[name].split(b"\n")
            k = next((j for j, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                     min(len(a), len(b)))
            pytest.fail(f"{name} differs between runs at line {k + 1}:\n"
                        f"  {a[k][:200]!r}\n  {b[k][:200]!r}" if k < min(len(a), len(b))
                        else f"{name}: one run wrote more lines")
