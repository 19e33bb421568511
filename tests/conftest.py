"""Shared fixtures: the seed documents live in ../shared/seeds beside the repository.

Tests read the seeds from there (the project never copies their text).  When CI=true a
missing seeds folder is a failure, not a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"


def seed_path(prefix: str) -> Path:
    if not SEEDS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the seed folder {SEEDS} is missing (CI=true)")
        pytest.skip(f"the seed folder {SEEDS} is missing")
    hits = sorted(SEEDS.glob(f"{prefix}*"))
    if not hits:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"seed {prefix}* is missing from {SEEDS}")
        pytest.skip(f"seed {prefix}* is missing")
    return hits[0]


@pytest.fixture(scope="session")
def seeds() -> dict[str, Path]:
    return {p: seed_path(p) for p in ("000", "001", "002", "003", "004")}
