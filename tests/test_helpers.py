"""The shared test helpers of tests/conftest.py do what they say: ``cli`` runs the command in
this process and returns what it printed; ``proven_catalog`` is one proof a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formal import __version__

from .conftest import CliRun, proven_catalog


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
