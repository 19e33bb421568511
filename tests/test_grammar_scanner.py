"""Each lexer state's scanner (formal/base/grammar_files.py): its terminals tried one by one
give the token Lark's own scanner (their alternation, compiled) gives, and so does a busy state
scanning with that alternation itself, for every state of every
parser the package builds, at every place of a sample of the catalog's lines."""

from __future__ import annotations

import copy
import importlib
import sys
from pathlib import Path

import pytest
from lark.lexer import BasicLexer, Scanner
from lark.utils import TextSlice

from formal.base import grammar_files

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import ship_tables  # noqa: E402


@pytest.fixture(scope="module")
def sample() -> list[str]:
    from formal import catalog
    lines = sorted({ln.strip() for doc in catalog.documents(False) for ln in doc.lines
                    if ln.strip()})
    # every 25th distinct line, cut to 80 characters, and the marks the grammars spell
    return [ln[:80] for ln in lines[::25]] + ["row = (groupID + 8) >> 1 for ai where i < 2",
                                              "{a0, a1, ..., a7}", ".f16x2 | %laneid %4 !"]


def _lexers(parser: object) -> list[BasicLexer]:
    ctx = parser.parser.lexer  # type: ignore[attr-defined]
    seen: dict[int, BasicLexer] = {}
    for lx in [*ctx.lexers.values(), ctx.root_lexer]:
        seen.setdefault(id(lx), lx)
    return list(seen.values())


@pytest.mark.parametrize("module,function", ship_tables.BUILDERS)
def test_every_state_scans_as_lark_scans(module: str, function: str,
                                         sample: list[str]) -> None:
    parser = getattr(importlib.import_module(module), function)()
    lexers = _lexers(parser)
    assert lexers and all(isinstance(lx, grammar_files._OneByOne) for lx in lexers)
    for lx in lexers:
        ours = lx.scanner
        assert isinstance(ours, grammar_files._Scanner)
        theirs_lexer = copy.copy(lx)
        theirs = BasicLexer._build_scanner(theirs_lexer)
        assert isinstance(theirs, Scanner)
        assert ours.allowed_types == theirs.allowed_types
        assert sorted(lx.callback) == sorted(theirs_lexer.callback)
        for name, cb in lx.callback.items():
            other = theirs_lexer.callback[name]
            assert cb.scanner.allowed_types == other.scanner.allowed_types
            for word in [*other.scanner.allowed_types, "for", "x", ""]:
                value = next((t.pattern.value for t in lx.terminals if t.name == word), word)
                assert cb.scanner.fullmatch(value) == other.scanner.fullmatch(value)
        for text in sample:
            whole = TextSlice(text, 0, len(text))
            for pos in range(0, len(text), 2):
                assert ours.match(whole, pos) == theirs.match(whole, pos), (text, pos)


def test_a_parser_reads_as_lark_reads_with_its_own_scanners() -> None:
    """The pseudocode parser with these scanners and with Lark's: the same trees, and the same
    refusal (where, what was expected) of a line that does not parse."""
    import gzip
    import json

    from lark import Lark, UnexpectedInput

    from formal.parse.grammars import pseudo_parser

    ours = pseudo_parser()
    [path] = grammar_files.shipped_dir().glob("pseudocode-*.json.gz")
    entry = json.loads(gzip.decompress(path.read_bytes()))
    tables = json.loads(entry["tables"], object_hook=grammar_files._decode_object)
    lark_own = Lark._load_from_dict(tables["data"], tables["memo"])
    assert not isinstance(lark_own.parser.lexer.root_lexer, grammar_files._OneByOne)
    for text in ("row = groupID for ai where i < 4", "col = (threadID_in_group * 2) + (i & 0x1)",
                 "row = %laneid >> 2 if i < 2", "row = groupID +", "col = 3 $ 4",
                 "row = groupID + 8     for ai where i >= 4", "x = a0, a1"):
        try:
            want = lark_own.parse(text)
        except UnexpectedInput as exc:
            with pytest.raises(type(exc)) as got:
                ours.parse(text)
            assert (got.value.pos_in_stream, getattr(got.value, "expected", None),
                    getattr(got.value, "allowed", None)) == \
                (exc.pos_in_stream, getattr(exc, "expected", None), getattr(exc, "allowed", None))
            continue
        assert ours.parse(text) == want


@pytest.mark.parametrize("module,function", ship_tables.BUILDERS)
def test_a_busy_state_scans_with_the_alternation_as_lark_does(
        module: str, function: str, sample: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A state asked more than ``HOT`` times scans with its terminals' alternation (Lark's
    own expression, compiled once): here from its first token on (``HOT`` 0), every state of
    every parser gives Lark's token at every place of the sample."""
    monkeypatch.setattr(grammar_files, "HOT", 0)
    parser = getattr(importlib.import_module(module), function)()
    for lx in _lexers(parser):
        ours = copy.copy(lx.scanner)
        ours._asked, ours.hot = 0, None
        theirs = BasicLexer._build_scanner(copy.copy(lx))
        for text in sample:
            whole = TextSlice(text, 0, len(text))
            for pos in range(0, len(text), 2):
                assert ours.match(whole, pos) == theirs.match(whole, pos), (text, pos)
        assert (ours.hot is not None) == bool(ours._tries)  # a state of no terminal: none
