"""``grammars.can_read``: a line is sent to Lark unless a terminal its start symbol needs
(``required_terminals``, found from the grammar's rules) matches nowhere in it -- and then Lark
refuses it too (checked here on every line of the families' catalog documents)."""

from __future__ import annotations

import pytest
from lark import Lark
from lark.exceptions import LarkError

from formal import catalog
from formal.parse import block_scale, smem, tc_copy, tc_meta, tc_sparse, tmem
from formal.parse.grammars import can_read, required_terminals

GRAMMAR = r"""
start: A B? C | A C C
    | loop
loop: loop "z" | "w" D
A: "a"
B: "b"
C: "c"
D: /d+/
%ignore " "
"""


def test_required_terminals_of_a_small_grammar():
    p = Lark(GRAMMAR, parser="lalr", start=["start", "loop"])
    # start: two alternatives of A..C and one of loop (W D, then Zs): none in all three
    assert required_terminals(p, "start") == frozenset()
    assert required_terminals(p, "loop") == {"W", "D"}
    q = Lark(GRAMMAR.replace("    | loop\n", ""), parser="lalr", start="start")
    assert required_terminals(q, "start") == {"A", "C"}  # B optional
    test = can_read(q, "start")
    assert test("a b c") and test("a c c") and not test("a b b") and not test("b c")
    assert can_read(q, "start") is test  # one test a parser and start


def test_required_terminals_of_the_block_scale_title():
    got = required_terminals(block_scale._parser(), "scale_title")
    assert got == {"BLOCK", "SCALING", "FOR", "SCALE_INSTR", "KIND", "SCALE_VEC", "STYPE"}
    assert required_terminals(block_scale._parser(), "scale_query") == frozenset()
    assert required_terminals(tc_copy._parser(), "copy_title") == {"COPY", "CP_SHAPE"}


def _lines() -> list[str]:
    out = []
    for folder in ("block-scale", "smem", "sparse-metadata", "tensor-copy"):
        for path in sorted((catalog.CATALOG_DIR / folder).glob("*.md")):
            for raw in path.read_text(encoding="utf-8").split("\n"):
                out += [raw, raw.strip(), raw.strip().lstrip("#").strip(),
                        block_scale._clean(raw).strip()]
    for path in sorted(catalog.CATALOG_DIR.rglob("tcgen05*.md")):
        out += [raw.strip() for raw in path.read_text(encoding="utf-8").split("\n")]
    return sorted(set(out))


PARSERS = [
    (block_scale._parser, block_scale.STARTS), (tc_meta._parser, tc_meta.STARTS),
    (tc_copy._parser, tc_copy.STARTS), (tc_sparse._parser, tc_sparse.STARTS),
    (tmem.tmem_parser, tmem.TMEM_STARTS),
    (smem._cell_parser, ("smem_value", "smem_encoding", "smem_bits", "smem_dims",
                         "smem_constant")),
]


@pytest.mark.parametrize("parser, starts", PARSERS)
def test_a_line_can_read_refuses_is_one_lark_refuses(parser, starts):
    lines = _lines()
    skipped = read = 0
    for start in starts:
        test = can_read(parser(), start)
        for text in lines:
            if test(text):
                continue
            skipped += 1
            with pytest.raises(LarkError):
                parser().parse(text, start=start)
        read += sum(1 for text in lines if test(text))
    assert skipped > 0 and read > 0  # the test skips lines, and lets others through
