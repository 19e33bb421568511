"""The bench scripts reach into the package's memos to start each round cold
(``bench/run.py``'s ``cold``): a memo renamed or turned into another kind of object must fail
here, not in the next ``bench/run.py --write-docs``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # a dataclass of the script looks its module up there
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


def test_fresh_empties_what_each_cold_row_says(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/fresh.py's default-run rows, with every process faked (no timing): before each
    run of "Z3's answers cold" the cache's ``proofs/`` is empty and its other folders are as
    the last run left them; before each run of "every cache folder emptied" the cache
    folder is gone."""
    monkeypatch.setenv("PTXLAYOUT_SEEDS", str(tmp_path))
    fresh = _load("fresh")
    seen: list[tuple[list[str], list[str]]] = []

    def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
        cache = Path(env["PTXLAYOUT_CACHE_DIR"])
        if "prove" in args:
            seen.append((args, sorted(str(p.relative_to(cache)) for p in cache.rglob("*.json"))))
            for sub in ("proofs", "tables", "documents"):  # what a run keeps
                (cache / sub).mkdir(parents=True, exist_ok=True)
                (cache / sub / "kept.json").write_text("{}")
        return 0.5, 0.5, 1024

    monkeypatch.setattr(fresh, "run_once", run_once)
    monkeypatch.setattr(fresh, "catalog_summary", lambda py, env: "the catalog")
    lines = fresh.table(2, None, docs_repeat=0)
    rows = [line.split("|")[1].strip() for line in lines[2:]]
    assert rows[-2:] == ["the same, Z3's answers cold (proofs/ emptied), beyond imports",
                         "the same, every cache folder emptied, beyond imports"]
    assert all("<= 1500 ms" in line for line in lines[-2:])
    default = [kept for args, kept in seen if "--evidence" not in args
               and "--no-cache" not in args and "show" not in args]
    assert default[-4:] == [["documents/kept.json", "tables/kept.json"]] * 2 + [[]] * 2
