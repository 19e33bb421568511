"""Z3's answers kept as one batch file a run (formal/prove/cache.py): read back per key,
merged from the ninth batch on, a rejected entry removed with its batch and the others kept,
a run's answers written only into the folder they were asked under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formal.base import cache as disk
from formal.prove import cache as pc


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    monkeypatch.setattr(disk, "_WARNED", set())
    return tmp_path / "c" / "proofs"


def _store(*keys: str) -> None:
    store = pc.ProofCache.open()
    assert store is not None
    for k in keys:
        store.store(k, "injective")
    store.close()


def _answers(key: str) -> dict[str, str] | None:
    store = pc.ProofCache.open()
    assert store is not None
    try:
        return store.answers(key, "injective", ["injective"])
    finally:
        store.close()


def _batches(folder: Path) -> dict[str, dict[str, object]]:
    return {p.name: json.loads(p.read_text())["entries"] for p in folder.glob("batch-*.json")}


def test_a_runs_answers_are_one_file_read_back_key_by_key(folder: Path) -> None:
    _store("a" * 64, "b" * 64, "c" * 64)
    assert _answers("a" * 64) == {"injective": "proved"}  # this run's, not yet written
    assert list(folder.iterdir()) == []
    pc.flush()
    [(name, entries)] = _batches(folder).items()
    assert sorted(entries) == [f"{k * 64}.json" for k in "abc"]
    assert entries[f"{'b' * 64}.json"] == {"schema": pc.SCHEMA, "tool": pc.__version__,
                                            "z3": pc._z3_version(), "key": "b" * 64,
                                            "obligation": "injective", "z3_answer": "unsat"}
    assert name == "batch-" + pc.hashlib.sha256(json.dumps(entries, sort_keys=True)
                                                .encode()).hexdigest()[:40] + ".json"
    assert _answers("b" * 64) == {"injective": "proved"}  # read back from the batch
    assert _answers("d" * 64) is None
    assert _answers("b" * 64) == {"injective": "proved"}
    pc.flush()  # nothing new: nothing written
    assert len(list(folder.iterdir())) == 1


def test_the_ninth_batch_holds_them_all_and_drops_other_versions(folder: Path) -> None:
    for k in range(8):
        _store(f"{k:064x}")
        pc.flush()
    assert len(_batches(folder)) == 8
    # an old version's entry in one of them
    first = sorted(folder.glob("batch-*.json"))[0]
    batch = json.loads(first.read_text())
    [(name, entry)] = batch["entries"].items()
    batch["entries"]["f" * 64 + ".json"] = {**entry, "tool": "0.0.1", "key": "f" * 64}
    first.write_text(json.dumps(batch))
    _store(f"{8:064x}")
    pc.flush()
    [(_name, entries)] = _batches(folder).items()
    assert sorted(entries) == [f"{k:064x}.json" for k in range(9)]
    assert all(_answers(f"{k:064x}") == {"injective": "proved"} for k in range(9))


def test_a_rejected_entry_goes_with_its_batch_and_the_others_stay(folder: Path,
                                                                  capsys: pytest.CaptureFixture[str]
                                                                  ) -> None:
    _store("a" * 64, "b" * 64)
    pc.flush()
    [batch] = folder.glob("batch-*.json")
    store = pc.ProofCache.open()
    assert store is not None
    store.reject("a" * 64, "the enumeration finds otherwise; removed")
    store.close()
    assert capsys.readouterr().err == f"ptxlayout: warning: cache ignored: {batch}:" \
        f"{'a' * 64}.json: the enumeration finds otherwise; removed\n"
    assert not batch.exists()
    assert _answers("a" * 64) is None and _answers("b" * 64) == {"injective": "proved"}
    pc.flush()
    assert [sorted(e) for e in _batches(folder).values()] == [[f"{'b' * 64}.json"]]


def test_answers_are_written_only_into_the_folder_they_were_asked_under(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store("a" * 64)
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "other"))
    assert _answers("a" * 64) is None  # another folder: not this run's answer there
    pc.flush()
    assert not (tmp_path / "other" / "proofs").exists() or \
        list((tmp_path / "other" / "proofs").iterdir()) == []
    assert not folder.exists() or list(folder.iterdir()) == []


def test_a_batch_of_another_schema_is_ignored_with_a_warning(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store("a" * 64)
    pc.flush()
    [batch] = folder.glob("batch-*.json")
    batch.write_text(json.dumps({"schema": "ptxlayout-proof-batch/0",
                                 "entries": json.loads(batch.read_text())["entries"]}))
    assert _answers("a" * 64) is None
    assert capsys.readouterr().err == f"ptxlayout: warning: cache ignored: {batch}: not a " \
        "batch of this version (ignored)\n"
