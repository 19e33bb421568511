"""Issue 29, class 9: ``ptxlayout`` is the public import name, from a clone and from the wheel.

The code lives in ``formal/`` (the design fixes the tree); ``import ptxlayout`` and
``python -m ptxlayout`` are the names users type, and the wheel carries both packages.  The
``test`` extra pulls no CUDA bindings: nvidia-cutlass (whose dependencies bring cuda-python)
is installed by CI with ``--no-deps``, and ``test-cutlass`` is the extra with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


def _py(*argv: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **env}, timeout=600)


def test_import_ptxlayout_and_python_m_ptxlayout(tmp_path: Path) -> None:
    p = _py("-c", "import sys, ptxlayout; print(ptxlayout.__version__, 'z3' in sys.modules); "
            "print(ptxlayout.find.__module__)", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0.1.0", "False", "formal.writers.cards"]
    p = _py("-m", "ptxlayout", "--version", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (0, "ptxlayout 0.1.0\n")
    p = _py("-c", "import ptxlayout; ptxlayout.nothing", cwd=tmp_path)
    assert p.returncode == 1 and "module 'ptxlayout' has no attribute 'nothing'" in p.stderr


def test_the_test_extra_pulls_no_cuda_bindings() -> None:
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    test = meta["project"]["optional-dependencies"]["test"]
    assert not [r for r in test if any(w in r.lower() for w in ("cutlass", "cupy", "cuda"))]
    assert "ptxlayout" in meta["tool"]["setuptools"]["packages"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -q --no-deps nvidia-cutlass" in ci


def _wheel(tmp_path: Path) -> Path:
    """This tree's wheel: the one .ci/run built from it before the tests started (it names
    its folder in PTXLAYOUT_CI_WHEEL_DIR, and builds it with the same command), else built
    here."""
    ci = os.environ.get("PTXLAYOUT_CI_WHEEL_DIR")
    if ci:
        (wheel,) = Path(ci).glob("ptxlayout-*.whl")
        return wheel
    built = _py("-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp_path / "w"),
                cwd=tmp_path)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-200:]}")
    (wheel,) = (tmp_path / "w").glob("ptxlayout-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_installs_both_names(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    site = tmp_path / "site"
    got = _py("-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel),
              cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    # the wheel's packages first on the path; z3, sympy and lark from this environment
    p = _py("-c", "import ptxlayout, formal; print(ptxlayout.__file__); print(formal.__file__)",
            cwd=tmp_path, PYTHONPATH=str(site))
    assert p.stdout.splitlines() == [str(site / "ptxlayout" / "__init__.py"),
                                     str(site / "formal" / "__init__.py")], p.stderr
    p = _py("-m", "ptxlayout", "list", "mma.m16n8k16.A.s8", cwd=tmp_path, PYTHONPATH=str(site))
    assert (p.returncode, p.stdout) == (0, "catalog:mma.m16n8k16.A.u8-s8\n"), p.stderr
