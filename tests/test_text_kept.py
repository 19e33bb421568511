"""The text stage's reading kept between runs (formal/text/kept.py): a document read from its
kept entry is the document read from its text, field by field and type by type, with no
reading at all; another text, name or code is another entry; an entry that is damaged,
foreign, edited, or names a class, field or mark outside the fixed table is ignored with a
warning and written again; a reading holding a value outside those types is not kept."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from formal import catalog
from formal.base import cache
from formal.base.source import Finding, SourceText, Span
from formal.text import kept, read
from formal.text.blocks import Document
from formal.text.lines import MAX_LINE

from .conftest import seed_path

HTML = """<html><body><section><h1>9.7.14.5.8. Matrix Fragments for mma.m16n8k8</h1>
<p>Multiplicand A:</p>
<pre>row =      groupID            for a0 and a1
col =  (threadID_in_group * 2) + (i &amp; 0x1)</pre>
</section></body></html>
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    cache.enable()
    return where


def _entries(where: Path) -> list[Path]:
    return sorted((where / kept.SUBFOLDER).glob("*.json"))


def _same(a: Any, b: Any) -> bool:
    """The same value of the same types throughout (``lines`` too, which == leaves out)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a))
    return bool(a == b)


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, name: str, digest: str) -> Document:
        raise AssertionError(f"read from its text: {name}")
    monkeypatch.setattr(read, "_read_text", refuse)


def _sources() -> list[tuple[str, bytes]]:
    docs = [(f"catalog/{p.name}", p.read_bytes()) for p in catalog.paths(True)]
    docs.append(("seed.txt", seed_path("000").read_bytes()))
    docs.append(("page.html", HTML.encode()))
    docs.append(("long.txt", b"Multiplicand A:\n" + b"x" * (MAX_LINE + 1) + b"\n"))
    return docs


def test_a_kept_reading_is_the_reading_of_the_text(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = _sources()
    first = [read.read_bytes(data, name) for name, data in sources]
    assert {d.format for d in first} == {"markdown", "text", "html"}
    assert len(_entries(cache_dir)) == len(sources)
    _no_reading(monkeypatch)
    again = [read.read_bytes(data, name) for name, data in sources]
    assert all(_same(a, b) for a, b in zip(again, first))
    assert sum(len(d.sections) for d in again) > 100
    # findings kept in their places too: the long line's warning, line 2, column 1
    assert [(f.kind, f.span.line, f.span.column) for f in again[-1].findings] == [("limit", 2, 1)]


def test_another_text_name_or_code_is_another_entry(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (catalog.CATALOG_DIR / "dense-float.md").read_text(encoding="utf-8")
    a = read.read_text(text, "a.md", "1")
    read.read_text(text, "b.md", "1")  # a finding names its document: another entry
    read.read_text(text, "a.md", "2")
    edited = read.read_text(text + "\nA closing line.\n", "a.md", "1")
    assert len(_entries(cache_dir)) == 4
    assert edited.lines[-2] == "A closing line." and a.lines[-2] != edited.lines[-2]
    key = kept.reading_key(text, "a.md", "1")
    monkeypatch.setattr(kept, "_code_key", lambda: b"another reader")
    assert kept.reading_key(text, "a.md", "1") != key


def test_the_key_holds_every_module_of_the_stage_and_the_line_grammar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from formal.base import grammar_files
    key = kept.reading_key("x", "a.md", "")
    edited = tmp_path / "grammar"
    shutil.copytree(grammar_files.grammar_dir(), edited)
    with open(edited / "lines.lark", "a", encoding="utf-8") as fh:
        fh.write("\n// edited\n")
    kept._code_key.cache_clear()
    try:
        monkeypatch.setattr(grammar_files, "grammar_dir", lambda: edited)
        assert kept.reading_key("x", "a.md", "") != key
    finally:
        monkeypatch.undo()
        kept._code_key.cache_clear()
    assert kept.reading_key("x", "a.md", "") == key
    named = {p.name for p in Path(kept.__file__).parent.glob("*.py")}
    assert {"markdown.py", "plain.py", "html.py", "structure.py", "kept.py"} <= named


def _edited(e: dict[str, Any], change: Any) -> dict[str, Any]:
    """The entry with its kept value changed by ``change`` (on the JSON), its content hash
    written again, so that only the value is wrong."""
    value = json.loads(e["kept"])
    change(value)
    text = json.dumps(value, separators=(",", ":"))
    return {**e, "kept": text, "content": kept._digest(text)}


def _title(v: dict[str, Any]) -> dict[str, Any]:
    return v["sections"]["#t"][0]["title"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("damage", [
    lambda e: "{not json",
    lambda e: json.dumps({**e, "key": "0" * 64}),
    lambda e: json.dumps({**e, "kept": e["kept"].replace("Multiplicand", "Multiplicant", 1)}),
    lambda e: json.dumps(_edited(e, lambda v: v["sections"]["#t"][0].update({"#c": "Path"}))),
    lambda e: json.dumps(_edited(e, lambda v: v.update({"__class__": 1}))),
    lambda e: json.dumps(_edited(e, lambda v: v.update({"digest": {"d": 1}}))),
    lambda e: json.dumps(_edited(e, lambda v: v.update({"name": "other.md"}))),
    lambda e: json.dumps(_edited(e, lambda v: _title(v)["#s"].__setitem__(2, "0"))),
    lambda e: json.dumps(_edited(e, lambda v: _title(v)["#s"].append(1))),
    lambda e: json.dumps(_edited(e, lambda v: v.update(
        {"findings": {"#t": json.loads("[" * 70 + "]" * 70)}}))),
], ids=["not-json", "foreign-key", "edited", "unknown-class", "unknown-field", "unmarked",
        "another-document", "a-place-not-a-number", "a-place-cut-short", "too-deep"])
def test_an_unsound_entry_is_ignored_and_written_again(
        cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: Any) -> None:
    path = catalog.CATALOG_DIR / "dense-float.md"
    want = read.read_path(path, name="catalog/dense-float.md")
    [entry] = _entries(cache_dir)
    good = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(damage(good), encoding="utf-8")
    entry.chmod(0o600)
    capsys.readouterr()
    got = read.read_path(path, name="catalog/dense-float.md")
    assert _same(got, want)
    assert "cache ignored" in capsys.readouterr().err
    assert json.loads(entry.read_text(encoding="utf-8")) == good  # written again, whole


def test_a_reading_holding_another_value_is_not_kept() -> None:
    here = SourceText.at("x", "a.md", 3, 2)
    plain = Document("a.md", "text", (), (Finding("error", "input", Span("a.md", 3, 2), "m"),),
                     "d", ("x",), (("formula", here),))
    entry = kept.entry_of_reading(plain, "k")
    assert entry is not None
    assert _same(kept.reading_of_entry(entry, "k", "a.md", "d"), plain)
    assert kept.reading_of_entry(entry, "k", "b.md", "d") is None
    assert kept.reading_of_entry(entry, "another", "a.md", "d") is None
    odd = dataclasses.replace(plain, findings=(dataclasses.replace(
        plain.findings[0], counterexample={"cell": [1, 2]}),))
    assert kept.entry_of_reading(odd, "k") is None  # a dict: read from the text every run

    class Text(str):
        pass
    assert kept.entry_of_reading(dataclasses.replace(plain, lines=(Text("x"),)), "k") is None


def test_no_cache_reads_and_writes_nothing(cache_dir: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    read.read_path(catalog.CATALOG_DIR / "dense-float.md")
    assert not cache_dir.exists()
