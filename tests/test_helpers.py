"""The shared test helpers of tests/conftest.py do what they say: ``cli`` runs the command in
this process and returns what it printed; ``proven_catalog`` is one proof a process; the
modules of the long tests are run first, each whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from formal import __version__

from .conftest import LONG_FIRST, ROOT, CliRun, long_first_rank, proven_catalog


def test_cli_runs_the_command_in_this_process(cli: Any) -> None:
    got = cli("--version")
    assert got == CliRun(0, f"ptxlayout {__version__}\n", "")


def test_cli_gives_the_exit_status_and_stderr_of_a_usage_error(cli: Any, tmp_path: Path) -> None:
    got = cli("prove", "--no-catalog", tmp_path / "missing.txt")
    assert got.code == 2 and got.out == ""
    assert "missing.txt" in got.err and "Traceback" not in got.err


def test_the_catalog_is_proven_once_a_process(catalog_run: Any) -> None:
    assert proven_catalog() is catalog_run
    assert catalog_run.proof.internal_errors == 0
    assert len(catalog_run.model.layouts) == len(catalog_run.proof.results) > 300


def test_the_long_modules_run_first_in_their_order_and_whole(request: Any) -> None:
    assert all((ROOT / "tests" / m).is_file() for m in LONG_FIRST)  # no stale name
    assert long_first_rank("tests/test_audit_gmma.py::test_x[a]") == 0
    assert long_first_rank("tests/test_golden.py::test_x") == LONG_FIRST.index("test_golden.py")
    assert long_first_rank("tests/test_helpers.py::test_x") == len(LONG_FIRST)
    # this session's order (whatever was selected): ranks never go down, and a module's
    # tests stay together, so that its module fixtures are built once
    if request.config.pluginmanager.hasplugin("randomly"):
        pytest.skip("pytest-randomly shuffles the order after this hook")
    ids = [item.nodeid for item in request.session.items]
    ranks = [long_first_rank(i) for i in ids]
    assert ranks == sorted(ranks)
    modules = [i.split("::", 1)[0] for i in ids]
    runs = [m for k, m in enumerate(modules) if k == 0 or modules[k - 1] != m]
    assert len(runs) == len(set(runs))
