"""The runs a ``hardware`` verdict reads (``Evidence.runs_judged``): exactly ``runs_of``'s
discoveries and its checks that matched or mismatched, in the same order; the others (a
check only compiled or not executed, an experiment) are not made from a kept entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.base import cache
from formal.prove import evidence as E


def _keys(ev: E.Evidence) -> list[list[str]]:
    every = sorted({k for f in ev.files for k in f.run_keys()})
    return [[k] for k in every] + [every[::7], every[3::11], every]


def test_the_judged_runs_are_runs_of_filtered() -> None:
    folder = E.default_dir()
    assert folder is not None
    ev = E.Evidence.load(folder)
    for keys in _keys(ev):
        want = [r for r in ev.runs_of(keys) if r.mode == "discover"
                or (r.mode == "check" and r.result in ("match", "mismatch"))]
        assert ev.runs_judged(keys) == want
    modes = {(r.mode, r.result) for r in ev.runs}
    assert {("experiment", "mismatch"), ("check", "compiled-only")} <= modes


def test_a_kept_file_makes_no_run_a_verdict_does_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    cache.enable()
    folder = E.default_dir()
    assert folder is not None
    E._READ.clear()
    E.Evidence.load(folder)  # writes the entries
    E._READ.clear()
    ev = E.Evidence.load(folder)  # the runs by column, each made when first read
    E._READ.clear()
    every = sorted({k for f in ev.files for k in f.run_keys()})
    got = ev.runs_judged(every)
    made = [r for f in ev.files for r in f.kept._made if r is not None]
    assert got and sorted(map(id, made)) == sorted(map(id, got))
    assert all(r.mode == "discover" or r.result in ("match", "mismatch") for r in made)
