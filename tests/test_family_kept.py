"""The family readers' parses kept between runs (formal/parse/kept.py, ``parses_remembered``
with a reader): the shared-memory, block-scale, sparse-metadata, tcgen05.cp and sparse
tcgen05.mma.sp readers each give, from a kept entry, what Lark's reading gave -- findings
included -- without any Lark parse; an entry that is damaged, foreign, edited or names a class
or field outside the fixed table is ignored with a warning and written again; a value that
would not read back as the same value (a Lark ``Token``, not a ``str``) is not kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lark
import pytest

from formal import catalog
from formal.parse import kept
from formal.parse.block_scale import read_block_scale
from formal.parse.grammars import clear_memo
from formal.parse.smem import read_layout, read_smem
from formal.parse.tc_copy import read_tc_copy
from formal.parse.tc_meta import read_tc_meta
from formal.parse.tc_sparse import read_tc_sparse

SPARSE = """# 9.7.16.10.8.2. Sparse tcgen05.mma.sp with .kind::f16, .kind::f8f6f4

For .kind::f16, matrix A is structured sparse at a granularity of 2:4. In other words, ...

* 0b0100
* 0b1000
"""


def _sparse(text: str, name: str) -> Any:
    return read_tc_sparse(text, name)


# (reader, its name in the key, the document read, what the entry must hold)
READERS: list[tuple[Callable[[str, str], Any], str, str, str]] = [
    (read_smem, "smem", "smem/layouts.md", '"#c":"LineFacts"'),
    (read_smem, "smem", "smem/k-slices.md", '"#c":"Value"'),
    (read_block_scale, "block_scale", "block-scale/mma-sync.md", '"block_scale:scale_decl"'),
    (read_block_scale, "block_scale", "block-scale/tcgen05.md", '"block_scale:tc_decl"'),
    (read_tc_meta, "tc_meta", "sparse-metadata/tcgen05.md", '"tc_meta:meta_decl"'),
    (read_tc_copy, "tc_copy", "tensor-copy/tcgen05.md", '"tc_copy:copy_decl"'),
    (_sparse, "tc_sparse", "", '"tc_sparse:line"'),
]
IDS = ["smem", "k-slices", "block-scale", "block-scale-tcgen05", "tc-meta", "tc-copy",
       "tc-sparse"]


def _text(doc: str) -> str:
    return (catalog.CATALOG_DIR / doc).read_text(encoding="utf-8") if doc else SPARSE


def _entry(where: Path, text: str, reader: str) -> Path:
    key = kept.parses_key(tuple(text.split("\n")), reader)
    path = where / "parses" / f"{key[:40]}.json"
    assert path.is_file()
    return path


def _no_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: object, text: str, *args: object, **kw: object) -> None:
        raise AssertionError(f"parsed with Lark: {text!r}")
    monkeypatch.setattr(lark.Lark, "parse", refuse)


def _findings(got: Any) -> Any:
    """Every finding a reading gives (a ScaleDocument's do not take part in its ==)."""
    if hasattr(got, "findings"):
        return got.findings
    return [x for part in got if isinstance(part, tuple) for x in part
            if type(x).__name__ == "Finding"]


@pytest.mark.parametrize(("read", "reader", "doc", "holds"), READERS, ids=IDS)
def test_a_kept_reading_is_lark_s_reading_without_lark(
        parse_cache_dir: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[[str, str], Any],
        reader: str, doc: str, holds: str) -> None:
    text = _text(doc)
    first = read(text, doc or "sparse.md")
    assert first  # the reader found something in it
    entry = json.loads(_entry(parse_cache_dir, text, reader).read_text(encoding="utf-8"))
    assert entry["schema"] == kept.SCHEMA
    assert holds in entry["kept"]
    clear_memo()
    _no_lark(monkeypatch)
    again = read(text, doc or "sparse.md")
    assert again == first
    assert _findings(again) == _findings(first)


@pytest.mark.parametrize("damage", [
    lambda e: "[1, 2",
    lambda e: json.dumps({**e, "key": "0" * 64}),
    lambda e: json.dumps({**e, "content": "0" * 64}),  # an edited entry: the hash differs
    lambda e: json.dumps(_edited(e, {"#c": "Path"})),
    lambda e: json.dumps(_edited(e, {"#c": "LineFacts", "__class__": 1})),
    lambda e: json.dumps(_edited(e, {"#m": [[1, 2]]})),
    lambda e: json.dumps(_edited(e, {"c": "LineFacts", "f": {}})),  # schema 1's record
    lambda e: json.dumps(_edited(e, {"#t": json.loads("[" * 70 + "]" * 70)})),
], ids=["not-json", "foreign-key", "edited", "unknown-class", "unknown-field", "not-a-key",
        "unmarked", "too-deep"])
@pytest.mark.parametrize(("read", "reader", "doc"),
                         [(r[0], r[1], r[2]) for r in READERS], ids=IDS)
def test_an_unsound_entry_is_ignored_and_written_again(
        parse_cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: Any,
        read: Callable[[str, str], Any], reader: str, doc: str) -> None:
    text = _text(doc)
    want = read(text, doc or "sparse.md")
    path = _entry(parse_cache_dir, text, reader)
    good = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(damage(good), encoding="utf-8")
    path.chmod(0o600)
    clear_memo()
    got = read(text, doc or "sparse.md")
    assert got == want and _findings(got) == _findings(want)
    assert "cache ignored" in capsys.readouterr().err
    assert json.loads(path.read_text(encoding="utf-8")) == good


def _edited(e: dict[str, Any], value: Any) -> dict[str, Any]:
    """The entry with its first prose piece's value replaced, its content hash written
    again (so only the value is wrong)."""
    kept_ = json.loads(e["kept"])
    kept_["prose"][0][2] = value
    text = kept.kept_text(kept_)
    return {**e, "kept": text, "content": kept._digest(text)}


@pytest.mark.parametrize("grammar", ["smem.lark", "cute.lark", "block_scale.lark",
                                     "tc_meta.lark", "tc_copy.lark", "tc_sparse.lark",
                                     "tmem.lark"])
def test_a_stale_entry_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      grammar: str) -> None:
    """An entry is keyed by the reader and by every grammar: the same lines read by another
    reader are another entry, and an edited grammar makes every key another."""
    import shutil

    from formal.base import grammar_files
    lines = ("| LBO | 64 |",)
    keys = {kept.parses_key(lines, r) for r in ("document", "smem", "block_scale", "tc_meta")}
    assert len(keys) == 4
    edited = tmp_path / "grammar"
    shutil.copytree(grammar_files.grammar_dir(), edited)
    with open(edited / grammar, "a", encoding="utf-8") as fh:
        fh.write("\n// edited\n")
    kept._code_key.cache_clear()
    try:
        monkeypatch.setattr(grammar_files, "grammar_dir", lambda: edited)
        assert kept.parses_key(lines, "smem") not in keys
    finally:
        monkeypatch.undo()
        kept._code_key.cache_clear()
    assert kept.parses_key(lines, "smem") in keys


def test_a_refused_cell_is_kept_as_its_refusal(
        parse_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout cell the grammar refuses is remembered as refused: the same ValueError again,
    without Lark."""
    text = "Swizzle<1,4,3> o ((8,2):(1"
    with pytest.raises(ValueError, match="not a CuTe layout") as first:
        read_layout(text)
    _no_lark(monkeypatch)
    with pytest.raises(ValueError) as again:
        read_layout(text)
    assert str(again.value) == str(first.value)


def test_a_token_is_not_kept_as_a_string() -> None:
    """A value holding a Lark Token would read back as a plain str: it is not kept (parsed
    again next run), and a plain value beside it is."""
    tok = lark.Token("INT", "4")
    entry = kept.entry_of_parses({}, {("4", "block_scale:x"): ("n", tok),
                                      ("5", "block_scale:x"): ("n", "5", {"a": [1, True]})},
                                 "k")
    assert [p[0] for p in json.loads(entry["kept"])["prose"]] == ["5"]
    _pseudo, prose = kept.parses_of_entry(entry, "k")  # type: ignore[misc]
    assert prose == {("5", "block_scale:x"): ("n", "5", {"a": [1, True]})}
