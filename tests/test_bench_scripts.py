"""The bench scripts reach into the package's memos to start each round cold
(``bench/run.py``'s ``cold``): a memo renamed or turned into another kind of object must fail
here, not in the next ``bench/run.py --write-docs``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_run_cold_forgets_the_tensor_memory_files() -> None:
    from formal import api
    api.packing_catalog()  # fills the memo of the two tensor-memory files
    assert api._TMEM
    _load("run").cold()
    assert not api._TMEM


def test_stages_names_its_stages() -> None:
    assert callable(_load("stages").one_round)
