"""The lean LALR loop (formal/base/lean_lalr.py ``lean_parser``): where it gives a value,
that value is Lark's own -- the tree ``parse`` builds, or a Transformer's ``transform`` of it --
for every parser the package builds and every start symbol, on a sample of the catalog's lines,
and for the CuTe header reader on whole CUTLASS headers; what it declines (a token no state
takes, a callback that raises, a tree too deep) is left to Lark, whose warnings the reader
gives unchanged."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from lark import Transformer
from lark.exceptions import LarkError

from formal.audit import header as cpp
from formal.base import lean_lalr
from formal.base.lean_lalr import Declined, lean_parser

from .wheel import cutlass_include

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import ship_tables  # noqa: E402

# a header of the constructs the reader keeps, and soup around them
HEADER = r"""
#include <cute/arch/mma_sm80.hpp>
#pragma once
namespace cute {
namespace { using SM80_8x4 = Layout<Shape<Shape<_4,_8>,_1>, Stride<Stride<_8,_1>,_0>>; }
template <int N> using CLayout_64xN = Layout<Shape<Shape<_4,_8,_4>,Shape<_2,_2,Int<N/8>>>,
                                             Stride<Stride<_128,_1,_16>,Stride<_64,_8,_512>>>;
template <> struct MMA_Traits<SM80_8x8x4_F64F64F64F64_TN> : MMA_Traits<X> {
  using ValTypeD = double;  /* a comment */ using ALayout = SM80_8x4;
  constexpr static int K = 96;
  static_assert(M == 64 || M == 128, "M must be 64 or 128");
  CUTE_HOST_DEVICE static void
  fma(uint32_t & d0, uint32_t const& a0, float const& c0) {
    if constexpr (M == 64 && N == 8) { Layout tmem = Layout<Shape<_32,_1>,Stride<_1,_0>>{}; }
    else { auto x = Layout<_1>{}; }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0}, {%1}, {%2}, {%3};\n" : "+d"(d0) : "d"(a0), "d"(c0));
    Other::fma(d0, a0, c0);
    x += (y << 2) - z % 3 ? a->b : c.d; i++; --j; k = ~m ^ n | o & p != q;
  }
};
enum class E : int { A = 1, B = 0x2u, C = 'c' };
}
"""


def _parsers() -> list[tuple[str, str, Any]]:
    out = []
    for module, function in ship_tables.BUILDERS:
        parser = getattr(importlib.import_module(module), function)()
        starts = parser.options.start
        for start in starts if isinstance(starts, list) else [starts]:
            out.append((f"{module}.{function}", start, parser))
    return out


@pytest.fixture(scope="module")
def sample() -> list[str]:
    from formal import catalog
    lines = sorted({ln.strip() for doc in catalog.documents(False) for ln in doc.lines
                    if ln.strip()})
    return [ln for ln in lines[::7]] + HEADER.splitlines() + [HEADER]


def test_every_parser_gives_larks_tree_or_declines(sample: list[str]) -> None:
    given = 0
    for name, start, parser in _parsers():
        lean = lean_parser(parser, start)
        assert lean is not None, name  # every parser of the package is one it runs
        for text in sample:
            try:
                ours = lean(text)
            except Declined:
                continue
            given += 1
            assert ours == parser.parse(text, start=start), (name, start, text)
    assert given > 500  # the loop answers most texts itself


def test_header_syntax_is_the_transformers(sample: list[str]) -> None:
    lean = cpp._lean()
    assert lean is not None and lean.soup  # the star shortcut is found in cute.lark
    tree = cpp._parser().parse(HEADER)
    assert lean(HEADER) == cpp._Syntax().transform(tree)


def _by_lark(monkeypatch: pytest.MonkeyPatch, path: str, text: str) -> cpp.CppHeader:
    with monkeypatch.context() as mp:
        mp.setattr(cpp, "_lean", lambda: None)
        return cpp.read_header(path, text)


def test_header_reads_as_lark_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = cpp.read_header("h.hpp", HEADER)
    assert ours == _by_lark(monkeypatch, "h.hpp", HEADER)
    assert [a.name for a in ours.aliases] == ["SM80_8x4", "CLayout_64xN"]
    (st,) = ours.structs
    assert st.asm and st.calls == ("Other",) and st.constants and st.asserts and st.locals


# an arch header (fma bodies, asm: soup) and two traits headers (aliases, structs, types);
# the whole audit reads every header with the loop (tests/test_audit_*.py)
@pytest.mark.parametrize("name", ["cute/arch/mma_sm80.hpp", "cute/atom/mma_traits_sm80.hpp",
                                  "cute/atom/copy_traits_sm90.hpp"])
def test_cutlass_headers_read_as_lark_reads_them(name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = cutlass_include() / name
    text = path.read_text(encoding="utf-8")
    lean = cpp._lean()
    ours = lean(text)  # no token the grammar cannot place: the loop answers it
    assert ours == cpp._Syntax().transform(cpp._parser().parse(text))
    assert cpp.read_header(str(path), text) == _by_lark(monkeypatch, str(path), text)


def test_a_skipped_token_is_larks_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "template <class Src, class Dst> struct copy_cv<Src const, Dst> { using T = X; };\n" \
           "using A = Layout<_1>; }\nusing B = Layout<_2>;\nstruct S { int x;\n"
    with pytest.raises(Declined):
        cpp._lean()(text)
    ours = cpp.read_header("e.hpp", text)
    assert ours == _by_lark(monkeypatch, "e.hpp", text)
    assert any("skipped 'const'" in f.message for f in ours.findings)


def test_what_it_declines() -> None:
    parser = cpp._parser()
    with pytest.raises(Declined, match="no terminal"):
        lean_parser(parser, "start")("using A = B; \x01")
    with pytest.raises(Declined, match="no action"):
        lean_parser(parser, "start")("using A = B; }")
    deep = "using L = " + "Shape<" * 12 + "_1" + ">" * 12 + ";"
    with pytest.raises(Declined, match="too deep"):
        lean_parser(parser, "start", cpp._Syntax(), max_depth=20)(deep)
    assert lean_parser(parser, "start", cpp._Syntax())(deep) == \
        cpp._Syntax().transform(parser.parse(deep))

    class Raises(Transformer):  # type: ignore[type-arg]
        def alias(self, c: list[Any]) -> Any:
            raise ValueError("no")

    with pytest.raises(Declined, match="ValueError"):
        lean_parser(parser, "start", Raises())("using A = B;")
    with pytest.raises(LarkError):
        parser.parse("using A = B; }")  # where Lark itself fails too


def test_a_token_transformer_is_left_to_lark() -> None:
    class Names(Transformer):  # type: ignore[type-arg]
        def NAME(self, t: Any) -> Any:  # noqa: N802 - a terminal's name
            return t

    assert lean_parser(cpp._parser(), "start", Names()) is None
    assert lean_parser(cpp._parser(), "no_such_start") is None


def test_the_loop_lexes_with_each_states_terminals() -> None:
    # 'struct' is the keyword STRUCT where a declaration may begin, a token of the soup
    # (dropped by its star) inside a statement; 'S' and 'b' are NAMEs either way
    lean = lean_parser(cpp._parser(), "start")
    for text in ("struct S { using A = B; };", "a ( struct b ;"):
        assert lean(text) == cpp._parser().parse(text)
    kept = lean("struct S { using A = B; };").scan_values(lambda v: True)
    assert [(t.type, str(t), t.line, t.column) for t in kept][:2] == [("STRUCT", "struct", 1, 1),
                                                                    ("NAME", "S", 1, 8)]
    assert [str(t) for t in lean("a ( struct b ;").children[0].children] == ["a", "b", ";"]


def test_first_characters_of_a_terminal() -> None:
    assert lean_lalr._first_chars(r"(?:[ \t\f\r\n])+") == {" ", "\t", "\f", "\r", "\n"}
    assert lean_lalr._first_chars(r'[LuU]?"([^"\\\n])*"') == {"L", "u", "U", '"'}
    assert lean_lalr._first_chars(r"\/\*(.|\n)*?\*\/") == {"/"}
    assert lean_lalr._first_chars(r"#[ \t]*(?!include)[a-z]+") == {"#"}
    assert lean_lalr._first_chars("ab|c(?=d)") == {"a", "c"}
    for unknown in (r"[^x]", r"\s+", "a?", "(?i:a)b", ".", r"(?:a|)"):
        assert lean_lalr._first_chars(unknown) is None, unknown


def test_ignored_text_is_passed_over_only_where_lark_would() -> None:
    import re
    ws, slash, name = re.compile(r"(?:[ \t])+"), re.compile(r"//[^\n]*"), re.compile("[a-z]+")
    ignore, newline = frozenset({"WS", "COMMENT"}), frozenset({"WS", "COMMENT"})
    tries = [(name, "NAME"), (slash, "COMMENT"), (ws, "WS")]
    passing = lean_lalr._passing(tries, 0, ignore, newline)
    skips = passing.startswith("(?:(?://[^\\n]*)|(?:(?:[ \\t])+))*+")  # in Lark's order
    assert skips == (sys.version_info >= (3, 11))
    m = re.compile(passing).match("  // c", 0)
    assert m is not None and (m.lastgroup is None or sys.version_info < (3, 11))
    div = re.compile("/")  # a terminal before COMMENT that begins as it does: no passing
    plain = lean_lalr._passing([(div, "DIV"), *tries], 0, ignore, newline)
    assert plain == "(?P<DIV>/)|(?P<NAME>[a-z]+)|(?P<COMMENT>//[^\\n]*)|(?P<WS>(?:[ \\t])+)"
    assert lean_lalr._passing(tries, 0, ignore, frozenset({"WS"})).startswith("(?P<NAME>")
    assert lean_lalr._passing([], 0, ignore, newline) == "(?!)"


def test_the_collector_is_paused_only_while_reading() -> None:
    import gc
    assert gc.isenabled()
    seen = []
    with lean_lalr.collector_paused():
        seen.append(gc.isenabled())
    assert seen == [False] and gc.isenabled()
    cpp.read_header("h.hpp", HEADER)
    assert gc.isenabled()
    gc.disable()
    try:
        with lean_lalr.collector_paused():
            pass
        assert not gc.isenabled()  # off before: off after
    finally:
        gc.enable()
    with pytest.raises(ValueError), lean_lalr.collector_paused():
        raise ValueError("on again after an error")
    assert gc.isenabled()
