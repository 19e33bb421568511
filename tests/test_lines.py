"""grammar/lines.lark through formal/text/lines.py: the kind of a line, on lines of our own
(hand-written expectations; each row says what a reader of the line sees)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from formal.text.lines import kind_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("line, facts", [
    ("9.7.14.5.9. Matrix Fragments for mma.m16n8k16", {"section_number": True,
                                                       "prose_opener": True}),
    ("9.7 x", {"section_number": True}),
    ("9 Title", {"section_number": False}),                 # no dot: not a section number
    ("row = groupID   for ai where i < 4", {"assignment": True, "case": True}),
    ("x == 3", {"assignment": False}),
    ("groupID + 8   for a2 and a3", {"assignment": False, "case": True,
                                     "continues_expression": True}),
    ("groupID + 8", {"case": False, "continues_expression": True}),
    ("The layout is shown below: x", {"continues_expression": False, "prose_opener": False}),
    ("Multiplicand B:", {"operand": "B", "prose_opener": True, "opener": True}),
    ("Metadata: A .b32 register", {"operand": "metadata", "opener": True}),
    ("Accumulators (C or D):", {"operand": "C/D"}),
    ("Matrix fragments for multiplicand B are the same as in case of X.", {"reference": True}),
    ("Matrix fragments for multiplicand B.", {"reference": False, "opener": True}),
    ("Same as Matrix Fragments for mma.m16n8k64: accumulators C and D.", {"reference": True}),
    ("Fragment layout for Row Major matrix A is shown in Figure 46.", {"major_label": True}),
    (".s4 or .u4:", {"type_label": True, "flat_row": False}),
    (".f16 A vector expression of two .f16x2 registers:", {"type_label": False,
                                                          "flat_row": True}),
    (".atype Fragment Elements (low to high)", {"header_row": True, "type_label": False}),
    ("!MMA .m16n8k8 fragment layout", {"figure": True, "prose_opener": True}),
    ("Figure 71 MMA .m16n8k8 fragment layout for matrix A", {"figure_caption": True}),
    ("Figure 71 shows it", {"figure_caption": False}),
    (".f16 |", {"table_cell": True}),
    ("x = a |", {"table_cell": False}),                      # a formula, not a cell
])
def test_line_kinds(line: str, facts: dict[str, object]) -> None:
    kind = kind_of(line)
    for name, want in facts.items():
        assert getattr(kind, name) == want, (line, name)


@pytest.mark.parametrize("line, at", [
    ("lastcol = firstcol + 3Matrix fragments for x", 22),   # an opener after '3'
    ("col = groupIDAccumulators (C or D):", 13),
    ("col = threadID_in_group for ai where i >= 4.f64:", 43),  # a type label after "4"
    ("col = groupID.s8 or .u8, .e4m3 and .e5m2:", 13),
    ("row = groupID Multiplicand A", -1),                   # a space before: not glued
    ("x = 1.5", -1),
])
def test_glued_openers(line: str, at: int) -> None:
    assert kind_of(line).glued_at == at


def test_no_line_classifier_beside_the_grammar() -> None:
    """The text stage holds no string-test classifier of its own: its readers ask kind_of."""
    banned = {"looks_like_assignment", "looks_like_case", "is_prose_opener",
              "starts_with_section_number", "_is_reference", "_is_type_label",
              "_is_major_label", "_operand_of", "OPENERS", "OPERAND_OPENERS"}
    for path in sorted((ROOT / "formal" / "text").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)} | \
            {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}
        assert not names & banned, (path.name, names & banned)


def test_the_flat_tree_is_read_as_the_transformer_reads_it(seeds: dict[str, Path]) -> None:
    """``_read_kind`` reads the pairs off lines.lark's flat tree; the Transformer walking the
    same tree gives the same facts, on every line of the seeds and the catalog."""
    from formal import catalog
    from formal.text.lines import _Facts, _parser, _read_kind
    texts = [p.read_text(encoding="utf-8") for p in seeds.values()]
    texts += [p.read_text(encoding="utf-8") for p in sorted(catalog.CATALOG_DIR.rglob("*.md"))]
    lines = sorted({s for t in texts for raw in t.splitlines() for s in (raw, raw.strip())})
    assert len(lines) > 2000
    for text in lines:
        assert _read_kind(text) == _Facts(text).transform(_parser().parse(text)), text
    assert _read_kind("Multiplicand A:").operand == "A"


def _lark_rules() -> dict[str, str]:
    from formal.base.grammar_files import grammar_dir
    text = (grammar_dir() / "lines.lark").read_text(encoding="utf-8")
    return dict(ln.split(": ", 1) for ln in text.splitlines()
                if ln.startswith(("FILL.1:", "SENTENCE_BREAK.3:", "_QUIET:", "_GOES_ON:")))


def test_a_sentence_break_takes_the_fill_after_it() -> None:
    """SENTENCE_BREAK's run is FILL's own (the grammar builds both of the same two pieces), and
    the line's facts are those of a break followed by FILL."""
    rules = _lark_rules()
    assert rules["FILL.1"] == "(_QUIET | _GOES_ON) (_QUIET* _GOES_ON)* _QUIET*"
    assert rules["SENTENCE_BREAK.3"] == "/[.:](?= )/ (_QUIET* _GOES_ON)* _QUIET*"
    k = kind_of("Barrier order. Predicate eviction. Memory point")
    assert (k.sentence_break, k.last, k.head) == (True, "fill", "")
    assert kind_of("Memory point. for ai where i < 4").case_word
    assert kind_of("point. same as before").same_as


# where the tail's terminals start, as the grammar wrote it before each alternative opened with a
# character of its own: one case-insensitive group, the look-behinds first
_PLAIN_STARTS = (
    '(?:^| )(?:for|For)(?= |$)| (?:[a-z]+|[0-9]+|N\\/[0-9]+) \\.[a-z][a-z0-9]* registers? of(?= )'
    '|\\tfor(?= |$)|(?:^| )(?:otherwise|Otherwise)|(?:^| )if(?= |$)|(?i:vector|same as| major ma'
    'trix | when \\.[abcd]type is |warp-level matrix (?:load|store|transpose) instruction|matrix'
    ' fragments for shape|access restrictions|instructions: tcgen05\\.(?:ld|st)\\b|data path layo'
    'ut organization|layout [a-g] \\(m = |packing formats? (?:of|for|used))|fragment layout|meta'
    'data layout|(?<=\\S)(?:Matrix [Ff]ragments|Multiplicand [AB]|Accumulators|Metadata:|The lay'
    'out of|The row and column|Same as Matrix|Fragment layout for)|(?<=\\S)\\.[a-z][a-z0-9]*(?:(?'
    ':\\s*(?:\\/|,)\\s*|\\s+(?:or|and)\\s+)\\.[a-z][a-z0-9]*)*\\s*:$|[.:](?= )|:$|\\|$')


def _runs_of(rx: str, texts: list[str]) -> list[tuple[int, int]]:
    import re
    pattern = re.compile(rx)
    out = []
    for text in texts:
        for pos in range(len(text) + 1):
            m = pattern.match(text, pos)
            out.append((pos, m.end() if m else -1))
    return out


def test_fill_runs_as_its_plain_definition(seeds: dict[str, Path]) -> None:
    """FILL as compiled (a run of _QUIET at a time, then one character that goes on) and
    SENTENCE_BREAK end where the plain definitions end -- ``(_QUIET | (?!starts)[\\s\\S])+``
    with the starts written as one case-insensitive group -- at every column of the seeds'
    lines, lines made of every terminal's words (in other cases, glued, after a tab) and of
    the characters that ignoring case matches beyond ASCII (the long s, the Kelvin sign,
    the dotted and dotless i)."""
    import random

    from formal.text.lines import _parser
    rules = _lark_rules()
    quiet = rules["_QUIET"].strip("/").replace("\\t", "\t")
    plain = f"(?:{quiet}|(?!{_PLAIN_STARTS})[\\s\\S])"
    compiled = {t.name: t.pattern.to_regexp() for t in _parser().terminals}
    texts = sorted({raw for p in seeds.values() for raw in p.read_text(encoding="utf-8")
                    .splitlines()})[:200] + _EVERY_TERMINAL
    rng = random.Random(5)
    pieces = _EVERY_TERMINAL + ["for", "if", "otherwise", "Otherwise", "VeCtor", " MAJOR matrix ",
                                " when .atype is ", "Packing formats used", "Layout b (M = ",
                                "Access restrictions", "\u017fame as", "acce\u017f\u017f",
                                "\u212a", "\u0130nstructions: tcgen05.ld", "\u0131f", ". ", ": ",
                                "\t", " ", "x", "3", ".", ":", "|", "é"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(1000)]
    assert _runs_of(compiled["FILL"], texts) == _runs_of(plain + "+", texts)
    assert _runs_of(compiled["SENTENCE_BREAK"], texts) == _runs_of("[.:](?= )" + plain + "*",
                                                                     texts)


# lines that between them hold every terminal of lines.lark (the catalog holds about half)
_EVERY_TERMINAL = [
    "9.7.14.5.9. Matrix Fragments for mma.m16n8k16", "Matrix Fragments for wmma",
    "Warp-level matrix load instruction: ldmatrix", "!MMA .m16n8k8 fragment layout",
    "// a comment", "where", ".atype | Fragment |", "Vector VECTOR x",
    ".f16 A vector expression of two registers, vector", "Same as Matrix Fragments for x.",
    "Fragment layout for Row Major matrix A is shown", "for x when .ctype is .f16 here",
    "col = groupIDAccumulators (C or D):", "col = groupID.s8 or .u8:",
    "Matrix fragments for shape .16x64b", "row = x for ai where i < 4. The rest: y",
    "x. otherwise if y", "four .b32 registers of two", "a\tfor b", "|",
]


def test_lines_read_off_larks_tables_as_lark_reads_them(seeds: dict[str, Path]) -> None:
    """``_lean_pairs`` runs Lark's own tables and per-state scanners: on every line of the
    seeds and the catalog and on lines holding every terminal, it gives the tokens (kind,
    text, offset) under the rule names Lark's tree gives them, and their LineKind."""
    from formal import catalog
    from formal.text.lines import _Facts, _lean_pairs, _parser
    texts = [p.read_text(encoding="utf-8") for p in seeds.values()]
    texts += [p.read_text(encoding="utf-8") for p in sorted(catalog.CATALOG_DIR.rglob("*.md"))]
    lines = sorted({s for t in texts for raw in t.splitlines() for s in (raw, raw.strip())})
    lines += _EVERY_TERMINAL + ["", " ", "x" * 300, "é ü \u200b"]
    seen = set()
    for text in lines:
        tree = _parser().parse(text)
        want = [(str(t.data), c.type, str(c), c.start_pos)
                for t in tree.children for c in t.children]
        got = _lean_pairs(text)
        assert got is not None, text
        assert [(name, t.type, str(t), t.start_pos) for name, t in got] == want, text
        assert _Facts(text).line(got) == _Facts(text).transform(tree), text  # type: ignore
        seen.update(t.type for _name, t in got)
    assert seen == {t.name for t in _parser().terminals}


def test_a_line_the_lean_reading_declines_is_read_by_lark(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``_lean_pairs`` answers None, ``_read_kind`` asks Lark: the same kind."""
    from formal.text import lines as L
    text = "row = groupID   for ai where i < 4"
    want = L._read_kind.__wrapped__(text)
    monkeypatch.setattr(L, "_lean_pairs", lambda _t: None)
    assert L._read_kind.__wrapped__(text) == want
    assert want.assignment and want.case


def _every_line(seeds: dict[str, Path]) -> list[str]:
    from formal import catalog
    texts = [p.read_text(encoding="utf-8") for p in seeds.values()]
    texts += [p.read_text(encoding="utf-8") for p in sorted(catalog.CATALOG_DIR.rglob("*.md"))]
    lines = {s for t in texts for raw in t.splitlines() for s in (raw, raw.strip())}
    # and each as looks_of_lines hands it to look (marks, bars and back ticks taken off)
    lines |= {s.lstrip("*+-#|` ").rstrip().rstrip("|`").rstrip() for s in list(lines)}
    return sorted(lines) + _EVERY_TERMINAL + ["", " ", "x" * 300, "x" * 20000]


def test_a_lines_head_is_read_off_its_first_token(seeds: dict[str, Path]) -> None:
    """``head_of`` (the first token only) gives the head facts ``kind_of`` (the whole line)
    gives, on every line of the seeds and the catalog and on lines of every terminal."""
    from formal.text.lines import _read_kind, head_of
    heads = set()
    for text in _every_line(seeds):
        head, kind = head_of.__wrapped__(text), _read_kind.__wrapped__(text)
        assert (head.assignment, head.operand, head.opener, head.row_head, head.phrase,
                head.first, head.length) == (kind.assignment, kind.operand, kind.opener,
                                             kind.row_head, kind.phrase, kind.first,
                                             kind.length), text
        assert head.head == kind.head or (kind.head == "titled" and head.head == ""), text
        heads.add(head.head)
    assert heads == {"", "heading", "titled", "assignment", "phrase", "header_type", "dotted",
                     "bang", "comment", "where"}
    assert head_of("row = groupID   for ai where i < 4").assignment
    assert head_of("Multiplicand A:").operand == "A"
    assert not head_of("row = x").case  # a fact of the tail: not read


def test_a_titles_heading_kinds_are_its_whole_kinds(seeds: dict[str, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``heading_kinds`` (a title read whole only where a move or tensor-memory title token
    can stand in it) gives the move, tmem and WMMA heading facts of the whole kind, on every
    line of the seeds and the catalog, on titles of each kind and on lines of every
    terminal; the catalog's numbered titles without such a token are not read whole."""
    from formal.text import lines as L
    titles = ["9.7.14.5.15. Warp-level matrix load instruction: ldmatrix",
              "Warp-level matrix transpose instruction: movmatrix", "9.7.14.4.1. Matrix "
              "Fragments for WMMA", "Matrix fragments for wmma", "9.7.16.2.3.1.2. Matrix "
              "fragments for shape .16x64b", "9.7.16.10.5. Data Path Layout Organization",
              "9.7.16.8.1. Access restrictions", "9.7.16.8.3. Instructions: tcgen05.ld",
              "9.7.14.5.9. Matrix Fragments for mma.m16n8k16 with floating point type"]
    texts = _every_line(seeds) + titles
    want = {t: L._read_kind.__wrapped__(t) for t in texts}
    monkeypatch.setattr(L, "_READ", {})
    monkeypatch.setattr(L, "_KNOWN", {})
    L._read_kind.cache_clear()
    L.head_of.cache_clear()
    for text in texts:
        k = want[text]
        assert L.heading_kinds(text) == (k.move_heading, k.tmem_heading, k.wmma_heading), text
    assert [L.heading_kinds(t) for t in titles[:4]] == [(True, False, False)] * 2 + \
        [(False, False, True)] * 2
    assert L.heading_kinds(titles[4]) == (False, True, False)
    assert titles[2] not in L._READ and titles[0] in L._READ  # the WMMA title: its head alone
    L._read_kind.cache_clear()
    L.head_of.cache_clear()


def test_look_decides_as_the_whole_kind_does(seeds: dict[str, Path]) -> None:
    """``look`` asks a line's head first and reads it whole only where it opens as a flat
    row: the same answer as from the whole kind of every line."""
    from formal.text.lines import _read_kind
    from formal.text.looks import look

    def whole(text: str) -> str:
        if not text:
            return ""
        kind = _read_kind.__wrapped__(text)
        if kind.assignment and text.split("=", 1)[0].strip() in ("row", "col"):
            return "formula"
        if kind.operand in ("A", "B", "C/D") and text.endswith(":") and len(text) < 60:
            return "operand"
        if kind.flat_row or text.lower().startswith("a vector expression"):
            return "table"
        return ""
    found = {}
    for text in _every_line(seeds):
        found[text] = look(text)
        assert found[text] == whole(text), text
    assert {"formula", "operand", "table", ""} == set(found.values())


def test_a_plain_lines_kind_is_decided_as_the_whole_kind_does(seeds: dict[str, Path]) -> None:
    """The Markdown reader's ``_plain_kind`` asks a line's head first outside a formula: the
    same answer as from the whole kind of every line, below a formula line or not."""
    from formal.base.source import SourceText
    from formal.text.lines import _read_kind
    from formal.text.markdown import _plain_kind

    def whole(text: str, in_pseudo: bool) -> str:
        k = _read_kind.__wrapped__(text)
        if k.assignment or k.head in ("where", "comment") or \
                (in_pseudo and not k.prose_opener and (k.case or k.continues_expression)):
            return "pseudo"
        return "row" if k.flat_row else ""
    found = set()
    for text in _every_line(seeds):
        for in_pseudo in (False, True):
            got = _plain_kind(SourceText.at(text, "d.md", 1), in_pseudo)
            assert got == whole(text, in_pseudo), (text, in_pseudo)
            found.add((got, in_pseudo))
    assert found == {(w, p) for w in ("pseudo", "row", "") for p in (False, True)}


def test_looks_of_lines_looks_at_a_repeated_line_once(seeds: dict[str, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``looks_of_lines`` asks ``look_of_raw`` once a distinct line, and gives every line what
    looking at it alone gives, at its own line and column (quoted, bulleted, in a table)."""
    from formal.text import looks

    lines = [raw for p in sorted(seeds.values()) for raw in
             p.read_text(encoding="utf-8").splitlines()]
    lines += ["> * Multiplicand A:", "| row = groupID |", "", "> * Multiplicand A:",
              "  row = groupID", "", "| row = groupID |"]
    want = []
    for lineno, raw in enumerate(lines, 1):
        what, start, end = looks.look_of_raw(raw)
        if what:
            want.append((what, raw[start:end], lineno, start + 1))
    asked: list[str] = []
    real = looks.look_of_raw

    def counted(raw: str) -> tuple[str, int, int]:
        asked.append(raw)
        return real(raw)
    monkeypatch.setattr(looks, "look_of_raw", counted)
    got = [(what, src.text, src.span(0).line, src.span(0).column)
           for what, src in looks.looks_of_lines(lines, "doc")]
    assert got == want
    assert sorted(asked) == sorted(set(lines))
    assert ("operand", "Multiplicand A:", len(lines) - 3, 5) in got
    assert ("formula", "row = groupID", len(lines), 3) in got


def test_a_head_asked_after_the_whole_kind_is_not_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``head_of`` of a line ``kind_of`` has read gives that kind (its head facts the same)
    without tokenizing the line again; a line never read whole still has its first token
    read."""
    from formal.text import lines as L
    text = "Multiplicand B: the operand of a warp-level instruction, unread before"
    other = "Accumulators: another line, unread before"
    whole = L.kind_of(text)
    head = L.head_of(text)
    assert head == whole and head.operand == "B" and head.opener

    def no_lexer() -> None:
        raise AssertionError("tokenized again")
    monkeypatch.setattr(L, "_lean_tables", no_lexer)
    assert L.head_of.__wrapped__(text) == whole  # answered from the kinds read
    with pytest.raises(AssertionError, match="tokenized again"):
        L.head_of.__wrapped__(other)
