"""The LALR tables the package ships (grammar/tables, tools/ship_tables.py).

What is held: (a) every shipped file is what Lark builds from today's grammars (compared as
canonical forms: Lark's numbering changes from process to process), and every parser the
package builds has one -- ``BUILDERS`` is every ``build_parser`` call of ``formal/``; (b) with
no cache at all (``--no-cache``) no parser is built by Lark: each is loaded from the package;
(c) the canonical form tells a changed table from a renumbered one; (d) a damaged shipped file
is ignored with a warning, and the parser is built.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from formal.base import cache as disk
from formal.base import grammar_files

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import ship_tables  # noqa: E402


def _shipped() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in grammar_files.shipped_dir().glob("*.json.gz")}


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    return ship_tables.built_entries()


def test_every_shipped_table_is_what_lark_builds_today(built: dict[str, bytes]) -> None:
    have = _shipped()
    assert sorted(have) == sorted(built)  # none missing, none stale
    assert len(have) == 16
    for name, body in built.items():
        assert ship_tables.canonical(have[name]) == ship_tables.canonical(body), name


def test_builders_name_every_build_parser_call_of_the_package() -> None:
    calls = []
    for p in sorted((ROOT / "formal").rglob("*.py")):
        if p.name == "grammar_files.py":
            continue
        for m in re.finditer(r"@cache\ndef (\w+)\(\) -> Lark:\n(?:    #.*\n)*"
                             r"    return build_parser\(", p.read_text(encoding="utf-8")):
            module = ".".join(p.relative_to(ROOT).with_suffix("").parts)
            calls.append((module, m.group(1)))
    every = sum(p.read_text(encoding="utf-8").count("return build_parser(")
                for p in (ROOT / "formal").rglob("*.py"))
    assert len(calls) == every == 16
    assert sorted(calls) == sorted(ship_tables.BUILDERS)


def test_with_no_cache_every_parser_is_loaded_not_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from lark import Lark

    built_by_lark: list[str] = []

    class Counting(Lark):
        def __init__(self, grammar: str, **options: object) -> None:
            built_by_lark.append(grammar[:40])
            super().__init__(grammar, **options)

    monkeypatch.setattr(grammar_files, "Lark", Counting)
    monkeypatch.setattr(disk, "_STATE", {"enabled": False})
    for module, function in ship_tables.BUILDERS:
        parser = getattr(importlib.import_module(module), function).__wrapped__()
        assert parser.options.parser == "lalr"
    assert built_by_lark == []
    # and a parser loaded from the package reads as a built one does
    pseudo = grammar_files.build_parser("pseudocode", "start")
    monkeypatch.setattr(grammar_files, "shipped_dir", lambda: ROOT / "no-such-folder")
    fresh = grammar_files.build_parser("pseudocode", "start")
    assert len(built_by_lark) == 1
    text = "row = groupID >> 1 for ai where i < 2"
    assert pseudo.parse(text) == fresh.parse(text)


def test_the_canonical_form_tells_a_changed_table_from_a_renumbered_one() -> None:
    [name] = [n for n in _shipped() if n.startswith("ptx_asm-")]
    body = _shipped()[name]
    entry = json.loads(gzip.decompress(body))
    tables = entry["tables"]
    # one shift sent to another state: the same tokens, another language
    shifts = re.findall(r"\[0,(\d+)\]", tables)
    assert len(set(shifts)) > 2
    a, b = sorted(set(shifts), key=int)[:2]
    moved = tables.replace(f"[0,{a}]", f"[0,{b}]", 1)
    assert moved != tables
    changed = gzip.compress(json.dumps({**entry, "tables": moved}).encode())
    assert ship_tables.canonical(changed) != ship_tables.canonical(body)
    # the same entry gzipped again (another byte string) has the same form
    again = gzip.compress(json.dumps(entry).encode())
    assert again != body and ship_tables.canonical(again) == ship_tables.canonical(body)


def test_an_unbounded_width_is_the_same_whichever_python_wrote_it() -> None:
    """Python 3.11.2 writes an unbounded pattern's largest width as 2**32 - 1, 3.11.7 as
    2**64 (Lark keeps it in the tables): the canonical form reads both as one, and still tells
    a changed bounded width."""
    [name] = [n for n in _shipped() if n.startswith("lines-")]  # bounded widths too
    body = _shipped()[name]
    entry = json.loads(gzip.decompress(body))
    tables = entry["tables"]
    widths = re.findall(r'_width\\?":\[(\d+),(\d+)\]', tables)
    assert ("1", str(2**64)) in widths or ("1", str(2**32 - 1)) in widths
    other = str(2**32 - 1) if str(2**64) in tables else str(2**64)
    old = str(2**64) if other == str(2**32 - 1) else str(2**32 - 1)
    older = tables.replace(f",{old}]", f",{other}]")
    assert older != tables
    written = gzip.compress(json.dumps({**entry, "tables": older}).encode())
    assert ship_tables.canonical(written) == ship_tables.canonical(body)
    lo, hi = next((a, b) for a, b in widths if int(b) < 2**32 - 1)
    wider = tables.replace(f"[{lo},{hi}]", f"[{lo},{int(hi) + 1}]", 1)
    assert wider != tables
    changed = gzip.compress(json.dumps({**entry, "tables": wider}).encode())
    assert ship_tables.canonical(changed) != ship_tables.canonical(body)


def _built_from(shipped: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    """The ptx_asm parser built with ``shipped`` as the package's tables and no cache
    folder, and what it printed on stderr."""
    monkeypatch.setattr(grammar_files, "shipped_dir", lambda: shipped)
    monkeypatch.setattr(disk, "_STATE", {"enabled": False})
    monkeypatch.setattr(disk, "_WARNED", set())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        parser = grammar_files.build_parser("ptx_asm", "start", positions=False)
    return parser, err.getvalue()


def test_a_damaged_shipped_file_is_ignored_and_the_parser_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, body in _shipped().items():
        entry = json.loads(gzip.decompress(body))
        if name.startswith("ptx_asm-"):
            entry["tables"] = entry["tables"].replace('"start"', '"begin"', 1)
        (tmp_path / name).write_bytes(gzip.compress(json.dumps(entry).encode()))
    parser, said = _built_from(tmp_path, monkeypatch)
    [name] = [n for n in _shipped() if n.startswith("ptx_asm-")]
    assert said == f"ptxlayout: warning: cache ignored: {tmp_path / name}: not " \
        "usable tables (the tables do not match their hash (edited or damaged)); built\n"
    assert [str(t) for t in parser.lex("mma.sync.aligned.m8n8k4 ;")] == \
        ["mma", ".sync", ".aligned", ".m8n8k4", ";"]


@pytest.mark.parametrize("value", [
    {0: {"@": 5}, 1: [0, 834]},  # a parse table's states: integer keys, as pairs
    {"options": {"start": ["a", "b"], "debug": False}},  # texts: a JSON object
    {"#d": [[1, 2]], "d": 1},  # a text beginning with '#': as pairs, never read as a mark
    {"#d": 1},
    {(1, "a"): "x", "y": ()},  # a tuple key comes back a tuple, a tuple value a list
    [{}, {"": None}, [1.5, True, "s"]],
])
def test_the_tables_encoding_reads_back(value: object) -> None:
    """``_encode`` / ``_decode_object``: every dict of Lark's tables comes back the same,
    whatever its keys (tuples become lists, as Lark's own serialization reads them)."""
    from formal.base.grammar_files import _decode_object, _encode

    def listed(x: object) -> object:
        if isinstance(x, dict):
            return {k: listed(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [listed(v) for v in x]
        return x
    text = json.dumps(_encode(value))
    assert json.loads(text, object_hook=_decode_object) == listed(value)
    assert '"d"' not in json.dumps(_encode({0: 1}))  # schema 3's mark is "#d"


def test_only_a_reader_that_asks_for_positions_has_them() -> None:
    """Lark's ``propagate_positions`` (every rule's node given its place) costs a walk of each
    reduction's children; a parser has it exactly where its module's Transformer asks for a
    rule's ``meta`` (the tcgen05 reader's table rows)."""
    import importlib

    asked = []
    for module, function in ship_tables.BUILDERS:
        mod = importlib.import_module(module)
        source = Path(mod.__file__ or "").read_text(encoding="utf-8")
        wants = "v_args(meta=True)" in source
        assert getattr(mod, function)().options.propagate_positions is wants, (module, function)
        if wants:
            asked.append(module)
    assert asked == ["formal.parse.tmem"]


def test_a_parse_without_positions_reads_as_one_with_them() -> None:
    """Every pseudocode line of the catalog, read by the shipped parser (no positions) and by
    one Lark builds with positions: the same records, or the same refusal."""
    from lark import Lark

    from formal import catalog
    from formal.parse import grammars
    from formal.parse.pseudocode import PseudoTransformer

    text = (grammar_files.grammar_dir() / "pseudocode.lark").read_text(encoding="utf-8")
    with_pos = Lark(text, parser="lalr", start="start", propagate_positions=True,
                    maybe_placeholders=False)
    shipped = grammars.pseudo_parser()
    assert not shipped.options.propagate_positions
    lines = [src for doc in catalog.documents(False) for sec in doc.sections
             for op in sec.operands for part in op.parts for src in part.pseudo
             if src.text.strip()]
    read = 0
    for src in lines:
        try:
            ours = PseudoTransformer(src).transform(shipped.parse(src.text))
        except Exception as exc:  # noqa: BLE001 - the same refusal both ways
            with pytest.raises(type(exc)):
                PseudoTransformer(src).transform(with_pos.parse(src.text))
            continue
        assert ours == PseudoTransformer(src).transform(with_pos.parse(src.text))
        read += 1
    assert read > 300


def _lark_own_load(body: bytes) -> object:
    from lark import Lark
    entry = json.loads(gzip.decompress(body))
    tables = json.loads(entry["tables"], object_hook=grammar_files._decode_object)
    return Lark._load_from_dict(tables["data"], tables["memo"])


def _described(parser: object) -> object:
    """Everything a loaded parser reads with: its rules (symbols, options, hashes), its
    terminals (patterns, flags, priorities) and its parse table, as plain values."""
    def rule(r: object) -> object:
        o = r.options  # type: ignore[attr-defined]
        return (str(r), r.order, r.alias, hash(r),  # type: ignore[attr-defined]
                [(type(s).__name__, s.name, getattr(s, "filter_out", None))
                 for s in r.expansion],  # type: ignore[attr-defined]
                (o.keep_all_tokens, o.expand1, o.priority, o.template_source, o.empty_indices))
    table = parser.parser.parser._parse_table  # type: ignore[attr-defined]
    return ([rule(r) for r in parser.rules],  # type: ignore[attr-defined]
            [(t.name, type(t.pattern).__name__, t.pattern.value, list(t.pattern.flags),
              t.pattern.raw, t.priority, t.pattern.max_width)
             for t in parser.terminals],  # type: ignore[attr-defined]
            {s: {tok: (a.name, rule(arg) if a.name == "Reduce" else arg)
                 for tok, (a, arg) in acts.items()} for s, acts in table.states.items()},
            table.start_states, table.end_states)


def test_a_parser_loaded_here_is_the_one_lark_loads() -> None:
    """The rules and terminals made by the tables' JSON hook (``_decode_for_lark``) are the
    ones Lark's own deserialization makes, for every shipped parser, and they read alike."""
    for name, body in sorted(_shipped().items()):
        entry = json.loads(gzip.decompress(body))
        ours = grammar_files._loaded(entry, entry["key"], entry["grammar"])
        theirs = _lark_own_load(body)
        assert _described(ours) == _described(theirs), name
    pseudo = [b for n, b in _shipped().items() if n.startswith("pseudocode-")][0]
    text = "row = groupID + 8 for ai where i >= 4"
    entry = json.loads(gzip.decompress(pseudo))
    assert grammar_files._loaded(entry, entry["key"], entry["grammar"]).parse(text) == \
        _lark_own_load(pseudo).parse(text)  # type: ignore[attr-defined]


def test_tables_missing_a_field_are_ignored_and_the_parser_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal without its ``filter_out`` under a matching hash (written by other code):
    not loadable, so a warning, and the parser is built."""
    [(name, body)] = [(n, b) for n, b in _shipped().items() if n.startswith("ptx_asm-")]
    entry = json.loads(gzip.decompress(body))
    tables = entry["tables"].replace(',"filter_out":false', "", 1)
    assert tables != entry["tables"]
    entry.update(tables=tables, content=grammar_files._digest(tables))
    (tmp_path / name).write_bytes(gzip.compress(json.dumps(entry).encode()))
    parser, said = _built_from(tmp_path, monkeypatch)
    assert said.startswith(f"ptxlayout: warning: cache ignored: {tmp_path / name}: "
                                     "not usable tables (")
    assert said.endswith("); built\n")
    assert [str(t) for t in parser.lex("mma.sync.aligned.m8n8k4 ;")] == \
        ["mma", ".sync", ".aligned", ".m8n8k4", ";"]
