"""The kinds of a document's lines kept between runs (formal/text/line_memo.py): a document read
from a kept entry is the document Lark's reading gives, no line is tokenized again, and an
entry that is damaged, foreign or lying about a field's type is ignored and written again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formal import catalog
from formal.base import cache
from formal.text import line_memo, lines, read
from formal.text.read import read_text

DOC = "dense-float.md"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    cache.enable()
    monkeypatch.setattr(lines, "_KNOWN", {})
    # the line memo alone: the whole reading's cache (formal/text/kept.py) would answer first
    monkeypatch.setattr(read, "kept_reading", lambda text, name, digest, read_it: read_it())
    return where


def _text() -> str:
    return (catalog.CATALOG_DIR / DOC).read_text(encoding="utf-8")


def _entry(where: Path) -> Path:
    files = list((where / "lines").glob("*.json"))
    assert len(files) == 1
    return files[0]


def _no_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> lines.LineKind:
        raise AssertionError(f"read with Lark: {text!r}")
    monkeypatch.setattr(lines, "_read_kind", refuse)


def test_a_kept_reading_gives_the_same_document_without_lark(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = read_text(_text(), f"catalog/{DOC}")
    entry = json.loads(_entry(cache_dir).read_text(encoding="utf-8"))
    assert entry["schema"] == line_memo.SCHEMA
    assert entry["kinds"]["Multiplicand A:"]["last"] == "colon"
    # every distinct line the reading read whole (one whose head alone answers is not read,
    # nor a title in which no move or tensor-memory title token can stand: lines.heading_kinds)
    assert len(entry["kinds"]) > 30
    assert "9.7.14.5.7. Matrix Fragments for mma.m16n8k8" not in entry["kinds"]
    lines._KNOWN.clear()
    _no_lark(monkeypatch)
    again = read_text(_text(), f"catalog/{DOC}")
    assert again == first
    assert len(again.sections) == len(first.sections) > 3


def test_another_text_is_another_entry(cache_dir: Path) -> None:
    read_text(_text(), "a.md")
    read_text(_text() + "\nA closing line.\n", "b.md")
    assert len(list((cache_dir / "lines").glob("*.json"))) == 2


@pytest.mark.parametrize("damage", [
    lambda e: "{not json",
    lambda e: json.dumps({**e, "key": "0" * 64}),  # another document's or version's
    lambda e: json.dumps({**e, "kinds": {**e["kinds"], "Multiplicand A:": {"length": "15"}}}),
    lambda e: json.dumps({**e, "kinds": {**e["kinds"], "Multiplicand A:": {"eval": True}}}),
    # a lie with a sound shape: the content hash no longer matches
    lambda e: json.dumps({**e, "kinds": {**e["kinds"], "Multiplicand A:": {"head": "bang"}}}),
], ids=["not-json", "foreign-key", "wrong-type", "unknown-field", "edited"])
def test_an_unsound_entry_is_ignored_and_written_again(
        cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: object) -> None:
    want = read_text(_text(), f"catalog/{DOC}")
    path = _entry(cache_dir)
    good = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(damage(good), encoding="utf-8")  # type: ignore[operator]
    path.chmod(0o600)
    lines._KNOWN.clear()
    assert read_text(_text(), f"catalog/{DOC}") == want
    assert "cache ignored" in capsys.readouterr().err
    assert json.loads(path.read_text(encoding="utf-8")) == good  # written again, whole


def test_no_cache_reads_and_writes_nothing(cache_dir: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    read_text(_text(), f"catalog/{DOC}")
    assert not cache_dir.exists()


def test_the_key_follows_the_text_and_the_reader() -> None:
    a, b = line_memo.document_key("x"), line_memo.document_key("y")
    assert a != b and len(a) == 64
    assert line_memo.document_key("x") == a
