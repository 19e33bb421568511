"""``prove.cache.held_open``: the z3_unsat calls inside share one open proof-cache folder (one
open and check, not one a call), and read and write the same entries as calls outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import formal.prove.cache as C


def test_held_open_opens_the_folder_once_and_keeps_the_same_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(C, "_PENDING", {})
    opened: list[int] = []
    real = C.ProofCache.open.__func__  # type: ignore[attr-defined]

    def counting(cls: type) -> object:
        opened.append(1)
        return real(cls)
    monkeypatch.setattr(C.ProofCache, "open", classmethod(counting))
    asked: list[str] = []

    def solve(name: str) -> bool:
        asked.append(name)
        return name != "sat"
    with C.held_open():  # cold: each query solved, the unsat ones kept
        got = [C.z3_unsat([n], "test-held", lambda n=n: solve(n)) for n in ("a", "b", "sat")]
    assert got == [True, True, False] and asked == ["a", "b", "sat"] and len(opened) == 1
    C.flush()  # the run's answers: one batch holding the two unsat ones
    kept = sorted(p.name for p in (tmp_path / "c" / "proofs").iterdir())
    [batch] = kept
    entries = json.loads((tmp_path / "c" / "proofs" / batch).read_text())["entries"]
    assert sorted(entries) == sorted(f"{C.query_key([n], 'test-held')}.json" for n in "ab")
    asked.clear()
    opened.clear()
    again = [C.z3_unsat([n], "test-held", lambda n=n: solve(n)) for n in ("a", "b", "sat")]
    assert again == got and asked == ["sat"] and len(opened) == 3  # outside: one a call
    asked.clear()
    with C.held_open():  # warm, held: the same entries answer
        assert [C.z3_unsat([n], "test-held", lambda n=n: solve(n))
                for n in ("a", "b", "sat")] == got
    C.flush()  # nothing new was kept: no second batch
    assert asked == ["sat"] and sorted(p.name for p in (tmp_path / "c" / "proofs").iterdir()) \
        == kept
    assert not C._HELD  # closed and let go


def test_held_open_with_no_cache_folder_asks_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")  # set and empty: no cache
    asked: list[int] = []
    with C.held_open():
        assert C.z3_unsat(["x"], "test-held", lambda: asked.append(1) is None) is True
        assert C.z3_unsat(["x"], "test-held", lambda: asked.append(1) is None) is True
    assert asked == [1, 1]
