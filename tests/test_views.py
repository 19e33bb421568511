"""The catalog's views kept between runs (formal/writers/views.py): a named layout is printed
byte for byte as the model draws it, from a cache that models nothing, and a cache entry that
lies is caught and re-derived."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formal.base import cache, hashes
from formal.cli import main
from formal.writers import views

ROOT = Path(__file__).resolve().parents[1]
QUERY = "mma.m16n8k16.A.f16-bf16"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    cache.enable()
    return where


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_show_export_from_the_views_equal_the_model(cache_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    commands = [("show", QUERY), ("draw", "mma.sp.m16n8k16.meta.f16", "--ascii"),
                ("export", QUERY, "mma.m16n8k16.B.s8"), ("export", "--format", "c", QUERY),
                ("export", "--corrections", "mma.m16n8k8.CD.f32")]
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")  # no views: the model draws
    plain = [_run(capsys, *c) for c in commands]
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(cache_dir))
    first = [_run(capsys, *c) for c in commands]  # misses: drawn from the model and kept
    kept = sorted(p.name.split("-")[0] for p in (cache_dir / "views").iterdir())
    assert kept == ["export"] * 3 + ["figure"] * 2 + ["index"] * 2
    second = [_run(capsys, *c) for c in commands]  # hits
    assert plain == first == second
    assert plain[0][0] == 0 and "T0:a0" in plain[0][1] and plain[0][1].startswith(
        "catalog:mma.m16n8k16.A.f16-bf16")
    assert '"id": "catalog:mma.m16n8k8.CD.f32' in plain[4][1]


def test_a_name_that_matches_none_or_several_is_refused_from_the_index(
        cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):  # the index built, then read
        rc, _out, err = _run(capsys, "show", "mma.m99n8k16.A.f16")
        assert rc == 2 and "no layout matches 'mma.m99n8k16.A.f16'" in err
        rc, _out, err = _run(capsys, "show", "mma.m16n8k16.A")
        assert rc == 2 and "matches" in err and "catalog:mma.m16n8k16.A.f16-bf16" in err


def test_a_lying_figure_is_caught_and_redrawn(cache_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    rc, truth, _ = _run(capsys, "show", QUERY)
    assert rc == 0
    (fig,) = (cache_dir / "views").glob("figure-*.json")
    doc = json.loads(fig.read_text())
    cells = doc["payload"]["panels"][0]["cells"]
    cells[0][0], cells[0][1] = cells[0][1], cells[0][0]  # a swapped pair: a plausible lie
    fig.write_text(json.dumps(doc))
    cache._WARNED.clear()
    rc, out, err = _run(capsys, "show", QUERY)
    assert rc == 0 and out == truth
    assert "cache ignored" in err and fig.name in err and "digest" in err
    # the lie is replaced by the truth: the next run reads it without a warning
    rc, out, err = _run(capsys, "show", QUERY)
    assert (rc, out, err) == (0, truth, "")
    # a lie that also fixes its digest is the cache's owner lying: the key still names
    # the layout's formulas, so a figure under another layout's key is refused
    doc = json.loads(fig.read_text())
    doc["key"] = "another layout"
    fig.write_text(json.dumps(doc))
    cache._WARNED.clear()
    rc, out, err = _run(capsys, "show", QUERY)
    assert rc == 0 and out == truth and "key or digest" in err


def test_the_code_key_follows_every_file_of_the_package(tmp_path: Path) -> None:
    import shutil
    shutil.copytree(ROOT / "formal" / "catalog", tmp_path / "catalog",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = hashes.tree_hash([tmp_path])
    doc = tmp_path / "catalog" / "dense-float.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("%laneid % 4", "%laneid % 8", 1),
                   encoding="utf-8")
    after = hashes.tree_hash([tmp_path])
    (tmp_path / "catalog" / "__pycache__").mkdir(exist_ok=True)
    (tmp_path / "catalog" / "__pycache__" / "x.pyc").write_bytes(b"compiled")
    assert len(before) == 64 and before != after == hashes.tree_hash([tmp_path])
    assert len(views.code_key()) == 64 and views.code_key() == views.code_key()


def test_a_warm_show_imports_neither_sympy_nor_lark_nor_z3(cache_dir: Path) -> None:
    env = {**os.environ, "PTXLAYOUT_CACHE_DIR": str(cache_dir)}
    code = (f"import sys; from formal.cli import main; rc = main(['show', {QUERY!r}]); "
            "print(rc, sorted(m for m in ('sympy', 'lark', 'z3', 'numpy') if m in sys.modules))")
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    assert cold.stdout.splitlines()[-1] == "0 ['lark', 'numpy', 'sympy']"
    assert warm.stdout.splitlines()[-1] == "0 []"
    assert cold.stdout == warm.stdout.replace("0 []", "0 ['lark', 'numpy', 'sympy']")
