"""The parses of a document kept between runs (formal/parse/kept.py): a document parsed from a
kept entry is the document Lark's parse gives, none of its lines or cells is parsed again, and
an entry that is damaged, foreign, edited or names a class outside the syntax is ignored and
written again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from formal import catalog
from formal.base import cache
from formal.base.source import SourceText
from formal.parse import document, kept, prose, pseudocode
from formal.parse.grammars import clear_memo
from formal.text.read import read_path

DOC = "dense-integer.md"


def _doc() -> document.Document:
    cache.disable()  # the text stage's own kept kinds play no part here
    try:
        return read_path(catalog.CATALOG_DIR / DOC, name=f"catalog/{DOC}")
    finally:
        cache.enable()


def _entry(where: Path) -> Path:
    files = list((where / "parses").glob("*.json"))
    assert len(files) == 1
    return files[0]


def _no_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError(f"parsed with Lark: {args[0]!r}")
    monkeypatch.setattr(prose, "_parse_prose", refuse)
    monkeypatch.setattr(pseudocode, "_parse_pseudo_line", refuse)


def test_a_kept_parse_gives_the_same_document_without_lark(
        parse_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _doc()
    first = document.parse_document(doc)
    assert not first.findings  # every line and cell of this document parses
    entry = json.loads(_entry(parse_cache_dir).read_text(encoding="utf-8"))
    assert entry["schema"] == kept.SCHEMA
    held = json.loads(entry["kept"])
    assert entry["content"] == hashlib.sha256(entry["kept"].encode()).hexdigest()
    lines = {" ".join(t.split()): v for t, v in held["pseudo"]}
    line = lines["groupID = %laneid >> 2"]
    assert line["#c"] == "PseudoLine" and line["expr"]["#c"] == "BinOp"
    assert line["expr"]["op"] == ">>" and line["expr"]["right"]["value"] == 2
    assert "source" not in line
    assert len(held["prose"]) > 10
    clear_memo()
    _no_lark(monkeypatch)
    again = document.parse_document(doc)
    assert again == first
    assert any(ps.blocks for ps in again.sections)


def _edited(e: dict[str, object], key: str, value: object, rehash: bool = True) \
        -> dict[str, object]:
    """The entry with a field of its first pseudocode line set, its content hash written again
    (``rehash``: so only the field is wrong) or left."""
    kept_ = json.loads(e["kept"])  # type: ignore[arg-type]
    text, line = kept_["pseudo"][0]
    line[key] = value
    got = kept.kept_text(kept_)
    return {**e, "kept": got, **({"content": kept._digest(got)} if rehash else {})}


@pytest.mark.parametrize("damage", [
    lambda e: "[1, 2",
    lambda e: json.dumps({**e, "key": "0" * 64}),
    # the content hash no longer matches
    lambda e: json.dumps(_edited(e, "kind", "range", rehash=False)),
    lambda e: json.dumps(_edited(e, "expr", {"#c": "Path"})),
    lambda e: json.dumps(_edited(e, "__class__", 1)),
    lambda e: json.dumps(_edited(e, "expr", {"#q": [1, 0]})),  # a fraction over zero
], ids=["not-json", "foreign-key", "edited", "unknown-class", "unknown-field", "zero-denominator"])
def test_an_unsound_entry_is_ignored_and_written_again(
        parse_cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: object) -> None:
    doc = _doc()
    want = document.parse_document(doc)
    path = _entry(parse_cache_dir)
    good = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(damage(good), encoding="utf-8")  # type: ignore[operator]
    path.chmod(0o600)
    clear_memo()
    assert document.parse_document(doc) == want
    assert "cache ignored" in capsys.readouterr().err
    assert json.loads(path.read_text(encoding="utf-8")) == good


def test_a_value_outside_the_syntax_is_not_kept() -> None:
    entry = kept.entry_of_parses({}, {("x", "header"): Path("/etc")}, "k")
    assert json.loads(entry["kept"])["prose"] == []
    assert kept.parses_of_entry(entry, "k") == ({}, {})
    assert kept.parses_of_entry(entry, "another") is None


def test_an_entry_keeps_what_each_value_read_back_alone_keeps() -> None:
    """``entry_of_parses`` reads every value back in one pass (``_all_kept``); it keeps
    exactly the values that ``_kept`` keeps one at a time, written the same: a record, a
    Lark ``Token`` (a ``str`` that reads back as a ``str``: not kept), a path (not written),
    a tuple too deep to read back (the whole list then asked value by value), ``True`` and
    ``1``."""
    from lark import Token

    from formal.base.files import MAX_DEPTH
    from formal.parse import syntax as S
    deep: object = 1
    for _ in range(MAX_DEPTH):
        deep = (deep,)
    values = [S.Unread("parse", 3, "cannot read", "a title"), Token("NAME", "x"), Path("/etc"),
              (1, True, "a"), ["x", (2,)], {"a": (1,)}, True, 1, None]
    for extra in ([], [deep]):
        one_by_one = []
        for v in values + extra:
            try:
                one_by_one.append(kept._kept(v))
            except kept._NotKept:
                one_by_one.append(kept._NOT)
            except ValueError:  # too deep: ``_kept`` says so, and the list is asked again
                one_by_one.append(kept._NOT)
        if extra:
            with pytest.raises(ValueError):
                kept._all_kept(values + extra)
            assert kept._all_kept(values) == one_by_one[:-1]
        else:
            assert kept._all_kept(values) == one_by_one
            assert [w is kept._NOT for w in one_by_one] == \
                [False, True, True, False, False, False, False, False, False]
    prose_values = {(f"t{k}", "header"): v for k, v in enumerate(values)}
    entry = json.loads(kept.entry_of_parses({}, prose_values, "k")["kept"])
    assert [p[0] for p in entry["prose"]] == ["t0", "t3", "t4", "t5", "t6", "t7", "t8"]


def test_no_cache_writes_nothing(parse_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    document.parse_document(_doc())
    assert not parse_cache_dir.exists()


def test_a_line_that_does_not_parse_is_kept_with_its_finding(
        parse_cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused line or cell is kept as its one finding (``syntax.Unread``): the next run
    reports the same finding, at the same line and column, without asking Lark."""
    text = (catalog.CATALOG_DIR / DOC).read_text(encoding="utf-8")
    assert "  row =   groupID\n" in text
    bad = tmp_path / "bad.md"
    bad.write_text(text.replace("  row =   groupID\n", "  row =   (groupID\n", 1),
                   encoding="utf-8")
    cache.disable()
    try:
        doc = read_path(bad)
    finally:
        cache.enable()
    first = document.parse_document(doc)
    refused = [f for f in first.findings if f.kind == "parse"]
    assert len(refused) == 1 and "expected" in refused[0].message
    assert refused[0].span.line == 18 and "expected ')'" in refused[0].message
    entry = json.loads(_entry(parse_cache_dir).read_text(encoding="utf-8"))
    held = json.loads(entry["kept"])
    kinds = [v["#c"] for _t, v in held["pseudo"]]
    assert kinds.count("Unread") == 1
    # whether the refused line opens a definition: the line grammar's answer, kept too
    assert ["row =   (groupID", "lines:assignment", True] in held["prose"]
    clear_memo()
    _no_lark(monkeypatch)
    from formal.text import lines

    def no_line_grammar(text: str) -> None:
        raise AssertionError(f"read with the line grammar: {text!r}")
    monkeypatch.setattr(lines, "_KNOWN", {})
    monkeypatch.setattr(lines, "_read_kind", no_line_grammar)
    again = document.parse_document(doc)
    assert again == first


def test_a_tensor_memory_section_is_kept_with_its_places(
        parse_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tcgen05's sections (formal/parse/tmem.py): each fact kept with the pieces of text it
    holds as slices of the text it was read from, placed back on the same places."""
    from formal.parse import tmem
    cache.disable()
    try:
        doc = read_path(catalog.CATALOG_DIR / "tcgen05-datapath.md",
                        name="catalog/tcgen05-datapath.md")
    finally:
        cache.enable()
    first = document.parse_document(doc)
    facts = [f for ps in first.sections if ps.tmem is not None for f in ps.tmem.facts]
    assert any(isinstance(x, SourceText) for f in facts for _k, v in f.values
               for row in (v if isinstance(v, tuple) else ()) if isinstance(row, tuple)
               for x in row)  # rows that carry their own text: kept as slices
    entry = json.loads(_entry(parse_cache_dir).read_text(encoding="utf-8"))
    kept_facts = [v for _t, start, v in json.loads(entry["kept"])["prose"]
                  if start.startswith("tmem:") and v is not None and v.get("#c") == "TmemFact"]
    assert kept_facts and all("src" not in v for v in kept_facts)
    assert '"#c":"Slice"' in json.dumps(kept_facts, separators=(",", ":"))
    clear_memo()
    _no_lark(monkeypatch)

    def refuse() -> None:
        raise AssertionError("parsed with Lark")
    monkeypatch.setattr(tmem, "tmem_parser", refuse)
    again = document.parse_document(doc)
    assert again == first


def test_what_an_entry_keeps_is_what_reads_back_as_itself() -> None:
    """``_all_kept`` decides by the structure it writes (exact types, depth), not by reading
    back: on every parse of a catalog document, on subclasses of each plain type (a ``str``,
    ``int``, ``tuple``, ``list``, ``dict``) and at the deepest nesting, it keeps exactly what
    ``_kept``'s reading back keeps, written the same, and refuses a deeper value as it does."""
    import enum
    from collections import namedtuple

    from formal.base.files import MAX_DEPTH
    from formal.parse import syntax as S

    class Small(enum.IntEnum):
        ONE = 1

    class Items(list):  # type: ignore[type-arg]
        pass

    class Map(dict):  # type: ignore[type-arg]
        pass

    Pair = namedtuple("Pair", "a b")

    def one_by_one(values: list[object]) -> list[object]:
        out = []
        for v in values:
            try:
                out.append(kept._kept(v))
            except kept._NotKept:
                out.append(kept._NOT)
        return out

    clear_memo()
    document.parse_document(_doc())
    from formal.parse.grammars import PROSE_MEMO, PSEUDO_MEMO
    parses = [*PSEUDO_MEMO.values(), *PROSE_MEMO.values()]
    assert len(parses) > 20
    assert kept._all_kept(parses) == one_by_one(parses)
    assert all(w is not kept._NOT for w in kept._all_kept(parses))

    odd = [Small.ONE, Items([1]), Map(a=1), Pair(1, 2), [Small.ONE], {"a": (Items(),)},
           S.Unread("parse", Small.ONE, "m", "t"), {1: "x"}, 1.5]
    assert kept._all_kept(odd) == one_by_one(odd) == [kept._NOT] * len(odd)

    def nested(levels: int) -> object:  # ``levels`` JSON levels as written: lists, then a tuple
        v: object = (1,) if levels % 2 == 0 else [1]
        for _ in range((levels - 1) // 2 if levels % 2 else (levels - 2) // 2):
            v = [[v]]
        return v
    deepest = nested(MAX_DEPTH - 1)
    assert kept._all_kept([deepest]) == one_by_one([deepest]) == [kept._write(deepest)]
    with pytest.raises(ValueError):
        kept._kept(nested(MAX_DEPTH))
    with pytest.raises(ValueError):
        kept._all_kept([nested(MAX_DEPTH)])


def test_a_record_subclass_or_a_token_inside_a_record_is_not_kept() -> None:
    """``_exact`` writes a record only of a class of the fixed table itself and each field's
    plain value only of exactly ``str``, ``int``, ``bool`` or None (a subclass of a record, a
    Lark ``Token`` or an ``IntEnum`` in a field: not kept), as ``_kept`` decides reading back."""
    import dataclasses
    import enum

    from lark import Token

    from formal.parse import syntax as S

    @dataclasses.dataclass(frozen=True)
    class Sub(S.Unread):
        pass

    class Small(enum.IntEnum):
        ONE = 1

    plain = S.Unread("parse", 3, "cannot read", "a title")
    values = [plain, Sub("parse", 3, "cannot read", "a title"),
              S.Unread("parse", Small.ONE, "cannot read", "a title"),
              S.Unread(Token("NAME", "parse"), 3, "cannot read", "a title"), [plain, (plain,)]]
    got = kept._all_kept(values)
    assert [w is kept._NOT for w in got] == [False, True, True, True, False]
    assert got[0] == {"#c": "Unread", "kind": "parse", "message": "cannot read", "pos": 3,
                      "what": "a title"}
    assert got[4] == [got[0], {"#t": [got[0]]}]
    for v, w in zip(values, got):
        if w is not kept._NOT:
            assert kept._kept(v) == w
