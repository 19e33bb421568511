"""The parse stage's Lark parses through the lean LALR loop (``formal/parse/grammars.lean_read``,
``formal/base/lean_short.lean_reader``): every catalog parse the loop answers is Lark's value
(each token's type and place too), every reader gives what it gave with Lark alone -- values
and findings, a syntax error's message and column, a ``Reject``, a line nested too deeply --
and what the loop declines (an error, a raising method, a deep tree) is Lark's to answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lark import Token, Tree

from formal import catalog
from formal.base import cache as caches
from formal.base import lean_short
from formal.base.lean_lalr import Declined
from formal.base.lean_short import lean_reader
from formal.base.source import SourceText
from formal.parse import block_scale, grammars, moves, prose, pseudocode, smem, tc_sparse, tmem
from formal.parse.document import parse_document
from formal.parse.grammars import ASK_LARK, clear_memo

from .test_grammar_lean import _parsers  # every parser the package builds, each start


def strict(v: Any) -> Any:
    """``v`` as a value compared with its types throughout: a token by its type, text and
    every place, a tree by its rule and children, a record by its class and fields."""
    if isinstance(v, Token):
        return ("Token", v.type, str(v), v.start_pos, v.line, v.column, v.end_line,
                v.end_column, v.end_pos)
    if isinstance(v, Tree):  # its place too, where the parser propagates positions
        return ("Tree", str(v.data), sorted(vars(v.meta).items()),
                [strict(c) for c in v.children])
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, [(f.name, strict(getattr(v, f.name)))
                                   for f in dataclasses.fields(v)])
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [strict(x) for x in v])
    if isinstance(v, dict):
        return ("dict", sorted(((repr(k), strict(x)) for k, x in v.items()), key=repr))
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(repr(strict(x)) for x in v))
    return (type(v).__name__, v)


@pytest.fixture
def no_cache() -> Iterator[None]:
    """No kept parses (each reading made afresh) and the memos empty before and after."""
    caches.disable()
    clear_memo()
    try:
        yield
    finally:
        caches.enable()
        clear_memo()


def _lark_only(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(grammars, "_reader", lambda *args: None)


def _catalog_texts() -> list[tuple[str, str]]:
    return sorted((str(p.relative_to(catalog.CATALOG_DIR)), p.read_text(encoding="utf-8"))
                  for p in catalog.CATALOG_DIR.rglob("*.md"))


def _read_everything() -> Any:
    """Every catalog document through the parse stage and every family reader of it."""
    from formal.parse import tc_copy, tc_meta
    clear_memo()
    out: list[Any] = [parse_document(d) for d in catalog.documents(False)]
    for name, text in _catalog_texts():
        out.append((name, smem.read_smem(text, name), block_scale.read_block_scale(text, name),
                    tc_sparse.read_tc_sparse(text, name), tc_meta.read_tc_meta(text, name),
                    tc_copy.read_tc_copy(text, name)))
    clear_memo()
    return out


def test_every_catalog_parse_the_loop_answers_is_larks(no_cache: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, str, Any, str, Any]] = []
    real = grammars.lean_read

    def recorded(parser: Any, start: str, transformer: Any, text: str) -> Any:
        got = real(parser, start, transformer, text)
        calls.append((parser, start, transformer, text, got))
        return got

    for module in (grammars, block_scale, moves, smem, tc_sparse, prose, pseudocode):
        if hasattr(module, "lean_read"):
            monkeypatch.setattr(module, "lean_read", recorded)
    from formal.parse import parts
    monkeypatch.setattr(parts, "lean_read", recorded)
    _read_everything()
    answered = [c for c in calls if c[4] is not ASK_LARK]
    assert len(answered) > 800 and len(answered) > 0.9 * len(calls)
    starts = {(type(t).__name__, start) for _, start, t, _, _ in answered}
    assert {("PseudoTransformer", "start"), ("ProseTransformer", "section_title"),
            ("_LineFacts", "smem_line"), ("_ToValues", "tc_decl"), ("_Cells", "smem_layout"),
            ("_ToMeta", "meta_title"), ("TmemTransformer", "tmem_table")} <= starts
    for parser, start, transformer, text, got in answered:
        tree = parser.parse(text, start=start)
        lark = tree if transformer is None else transformer.transform(tree)
        assert strict(got) == strict(lark), (start, text)


def test_the_catalog_reads_as_with_lark_alone(no_cache: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ours = _read_everything()
    with monkeypatch.context() as mp:
        _lark_only(mp)
        theirs = _read_everything()
    assert strict(ours) == strict(theirs)
    assert any(f.message for p in ours[:5] for f in getattr(p, "findings", ()))  # findings too


# ---- each reader's refusals: Lark's, the loop having declined -------------------------------

def _src(text: str) -> SourceText:
    return SourceText.at(text, "doc.md", 3, 5)


def _both(monkeypatch: pytest.MonkeyPatch, read: Callable[[], Any]) -> Any:
    clear_memo()
    ours = read()
    with monkeypatch.context() as mp:
        _lark_only(mp)
        clear_memo()
        theirs = read()
    clear_memo()
    assert strict(ours) == strict(theirs)
    return ours


def _finding(got: Any) -> str:
    value, findings = got
    assert value is None and len(findings) == 1
    f = findings[0]
    return f"{f.kind}@{f.span.column}: {f.message}"


def test_pseudocode_refusals_are_larks(no_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def line(text: str) -> Any:
        return _both(monkeypatch, lambda: pseudocode.parse_pseudo_line(_src(text)))

    assert "expected ')'" in _finding(line("row = (groupID + 8"))  # a syntax error
    assert _finding(line("row = (groupID + 8")).startswith("parse@22")  # at the end: Lark's column
    big = _finding(line("row = 0x1ffffffffffffffffff"))  # the transformer's Reject
    assert big.startswith("parse@11") and "bits" in big
    deep = _finding(line("r = " + "- " * 700 + "a"))  # Transformer's recursion: Lark's limit
    assert deep.startswith("limit@") and "nested too deeply" in deep
    value, findings = line("r = " + "- " * 150 + "a")  # deep, within the loop's depth
    assert value is not None and not findings
    value, findings = line("row = groupID + 8   for ai where i >= 4")
    assert value is not None and value.kind == "assign" and not findings


def test_prose_refusals_are_larks(no_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def cell(text: str, start: str) -> Any:
        return _both(monkeypatch, lambda: prose.parse_prose(_src(text), start, "this cell"))

    assert "cannot read this cell" in _finding(cell("a0, a1, (", "element_list"))
    got = _finding(cell("N = 8*i where i = {4, 8, ..., 2}", "n_cell"))  # the Transformer's Reject
    assert got == "parse@35: this '...' does not count up"
    value, findings = cell("a0, a1, ..., a7", "element_list")
    assert value is not None and not findings
    assert _both(monkeypatch, lambda: prose.try_prose(_src("a0, (("), "element_list")) is None


def test_family_refusals_are_larks(no_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _both(monkeypatch, lambda: moves._try(_src("Each thread (( holds"), "move_sentence"))
    assert got is None  # a syntax error: nothing read
    for text in ("Swizzle<1,4,3> o ((8,m),(T,2k)):((2T,SBO),(1,T))", "Swizzle<1,4,3> x (8):(1)",
                 "Swizzle<1,4 o (8):(1)"):
        def layout(text: str = text) -> Any:
            try:
                return smem.read_layout(text)
            except ValueError as exc:
                return str(exc)
        _both(monkeypatch, layout)
    assert _both(monkeypatch, lambda: block_scale.read_line("## Block scaling for (", "tc_title")) \
        is None
    assert _both(monkeypatch, lambda: tc_sparse.read_sparse_line("| ( |")) is None


# ---- the reader: tables once, the transformer bound for each parse ---------------------------

def test_each_parse_has_its_own_transformer() -> None:
    read = lean_reader(grammars.pseudo_parser(), "start", pseudocode.PseudoTransformer)
    assert read is not None
    a, b = _src("x = y + 1"), SourceText.at("x = y + 1", "other.md", 9, 1)
    one, two = read(a.text, pseudocode.PseudoTransformer(a)), \
        read(b.text, pseudocode.PseudoTransformer(b))
    assert one.source == a and two.source == b
    lark = pseudocode.PseudoTransformer(b).transform(grammars.pseudo_parser().parse(b.text))
    assert strict(two) == strict(lark)
    assert read.box == [None]  # nothing bound between parses
    with pytest.raises(Declined, match="another transformer"):
        read("x = 1", prose.ProseTransformer())
    shadowed = pseudocode.PseudoTransformer(a)
    shadowed.assignment = None  # type: ignore[attr-defined]
    with pytest.raises(Declined, match="attribute"):
        read("x = 1", shadowed)


def test_a_parse_inside_a_parse_keeps_its_own_transformer() -> None:
    parser = grammars.pseudo_parser()
    read = lean_reader(parser, "start", pseudocode.PseudoTransformer)
    inner_src = _src("z = 2")
    seen: list[Any] = []

    class Nested(pseudocode.PseudoTransformer):
        def name(self, c: list[Any]) -> Any:
            if not seen:
                seen.append(read2(inner_src.text, Nested(inner_src)))
            return super().name(c)

    read2 = lean_reader(parser, "start", Nested)
    outer = _src("x = y")
    got = read2(outer.text, Nested(outer))
    assert got.source == outer and seen[0].source == inner_src
    assert read is not None and read2.box == [None]


def test_what_the_reader_leaves_to_lark() -> None:
    # a method asking for meta (the tcgen05 reader): the loop makes Lark's tree, with its
    # places, and the Transformer walks it
    assert lean_reader(tmem.tmem_parser(), "sentence", tmem.TmemTransformer) is None
    trees = lean_reader(tmem.tmem_parser(), "paragraph", None)
    text = "Each row holds two. Rows are 32 lanes wide."
    ours = trees(text)
    assert strict(ours) == strict(tmem.tmem_parser().parse(text, start="paragraph"))
    assert ours.meta.end_pos == len(text) and ours.children[1].end_pos > 20
    assert lean_reader(grammars.pseudo_parser(), "no_such_start", None) is None
    read = lean_reader(grammars.pseudo_parser(), "start", None)
    with pytest.raises(Declined, match="no action"):
        read("row = (groupID + 8")
    with pytest.raises(Declined, match="no terminal"):
        read("row = $")
    with pytest.raises(Declined, match="too deep"):
        read("r = " + "- " * 250 + "a")
    with pytest.raises(Declined, match="ValueError"):
        lean_reader(smem._layout_parser(), "smem_layout", smem._Cells)(
            "Swizzle<1,4,3> x (8):(1)", smem._Cells())


@pytest.fixture(scope="module")
def sample() -> list[str]:
    lines = sorted({ln.strip() for doc in catalog.documents(False) for ln in doc.lines
                    if ln.strip()})
    return lines[::5]


def test_every_parser_gives_larks_tree_through_the_reader(sample: list[str]) -> None:
    given = 0
    for name, start, parser in _parsers():
        read = lean_reader(parser, start)
        assert read is not None, name
        for text in sample:
            try:
                ours = read(text)
            except Declined:
                continue
            given += 1
            assert strict(ours) == strict(parser.parse(text, start=start)), (name, start, text)
    assert given > 200


def test_a_states_terminals_by_first_character_answer_as_its_scanner(sample: list[str]) -> None:
    """``_by_first_char``'s first match at every place of the sample, in every lexer state of
    every parser, is the state's scanner's (its name and text)."""
    from formal.base.grammar_files import _OneByOne
    texts = sample[::3] + ["x = 0x1F // c", "\u00a0a\tb", "%laneid >> 2", "a0, ..., a7",
                           "FOR ai WHERE i < 4", "\u212aind \u017fparse \u0130f", "a0 \u2026 a7",
                           "Swizzle-Atom Layout", "Each Thread holds 2 Rows"]
    checked = 0
    for _, _, parser in _parsers()[::2]:
        seen = set()
        for state_lexer in parser.parser.lexer.lexers.values():
            if id(state_lexer) in seen or not isinstance(state_lexer, _OneByOne):
                continue
            seen.add(id(state_lexer))
            scanner = state_lexer.scanner
            by_char, rest = lean_short._by_first_char(scanner)
            every = [(p.match, name) for p, name in scanner._tries]
            for text in texts:
                for pos in range(0, len(text), 2):
                    ours = None
                    tries = by_char.get(text[pos])
                    if tries is None:  # as the loop asks them
                        tries = rest if text[pos] < "\x80" else every
                    for match, name in tries:
                        m = match(text, pos)
                        if m is not None:
                            ours = (m.group(0), name)
                            break
                    assert ours == scanner.match(text, pos), (text, pos)
                    checked += 1
    assert checked > 10000


def test_first_ascii_characters_of_a_terminal() -> None:
    first = lean_short._first_ascii
    assert first(r"(?i:for\b)") == {"f", "F"}
    assert first(r"(?i:an?\b)") == {"a", "A"}
    assert first(r"(?i:(two|[0-9]+)\b)") == {"t", "T", *"0123456789"}
    assert first(r"\d+") == set("0123456789")
    assert first(r"(?:[ \t\f\r\u00a0])+") == {" ", "\t", "\f", "\r"}  # U+00A0: not ASCII
    assert first(r"%[A-Za-z_]\w*") == {"%"}
    assert first(r"\s+") == set(" \t\n\r\f\v\x1c\x1d\x1e\x1f")
    assert first("\u2026|\\.\\.") == {"."}
    everything = frozenset(map(chr, range(128)))
    assert first(r"\S+") == everything - first(r"\s")
    for unknown in (r"[^x]", ".", r"(?i:\u212a)", r"(?i:[\u0100-\u0200])"):
        assert first(unknown) == everything, unknown
    for empty in ("a?", r"(?:a|)", r"\b"):
        assert first(empty) is None, empty
