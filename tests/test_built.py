"""A pseudocode block's formulas built once a process (formal/model/built.py): a block written
as one built before gets the same values on its own lines, a block that differs in any line
is built on its own, and a build that gave a finding is not kept."""

from __future__ import annotations

from typing import Any

import pytest

from formal import catalog
from formal.base.source import SourceText
from formal.model import built
from formal.model.resolve import build
from formal.parse import parse_document
from formal.text.read import read_text

BLOCK = """# 9.7.14.5.{n}. Matrix Fragments for mma.m16n8k{k}

Multiplicand A:

| .f16 | A vector expression of two .f16x2 registers | a0, a1, a2, a3 |

  groupID           = %laneid >> 2
  threadID_in_group = %laneid % 4

  row =      groupID            for a0 and a1
             groupID + 8        for a2 and a3

  col =  (threadID_in_group * 2) + (i & 0x1){extra}
"""


def _layouts(text: str) -> list[Any]:
    return build([parse_document(read_text(text, "t.md"))]).layouts


def test_the_catalog_is_the_same_built_once_or_every_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [parse_document(d) for d in catalog.documents(False)]
    built.clear_built()
    once = build(docs)
    assert len(built._BUILT) > 50  # blocks kept
    monkeypatch.setattr(built, "built_once", lambda program, key, make: make()[:2])
    every = build(docs)
    assert once.layouts == every.layouts and once.findings == every.findings
    # the same values on each block's own lines: formulas, helpers, sources and all
    assert [[(c.source, c.guard_text, c.named) for f in lay.formulas for c in f.cases]
            for lay in once.layouts] == \
        [[(c.source, c.guard_text, c.named) for f in lay.formulas for c in f.cases]
         for lay in every.layouts]


def test_a_block_written_alike_elsewhere_gets_its_own_lines() -> None:
    built.clear_built()
    first = _layouts(BLOCK.format(n=8, k=8, extra=""))
    text = "\n" * 20 + BLOCK.format(n=9, k=16, extra="")  # the same block, 20 lines down
    second = _layouts(text)
    row1, row2 = first[0].formulas[0], second[0].formulas[0]
    assert [c.value for c in row1.cases] == [c.value for c in row2.cases]
    assert [c.source.span(0).line for c in row2.cases] == \
        [c.source.span(0).line + 20 for c in row1.cases]
    assert isinstance(row2.cases[0].source, SourceText) and row2.cases[0].guard_text == \
        "for a0 and a1"


def test_a_block_that_differs_in_a_line_is_built_on_its_own() -> None:
    built.clear_built()
    plain = _layouts(BLOCK.format(n=8, k=8, extra=""))
    other = _layouts(BLOCK.format(n=8, k=8, extra=" + 1"))
    assert plain[0].formulas[1].cases[0].value != other[0].formulas[1].cases[0].value


def test_a_build_with_a_finding_is_not_kept() -> None:
    built.clear_built()
    text = BLOCK.format(n=8, k=8, extra="").replace("for a2 and a3", "for b2 and b3")
    model = build([parse_document(read_text(text, "t.md"))])
    again = build([parse_document(read_text(text, "t.md"))])
    wrong = [f for f in model.findings if f.kind == "element-name"]
    assert len(wrong) == 1 and wrong == [f for f in again.findings if f.kind == "element-name"]
    assert not any("b2" in t for key in built._BUILT for _n, _k, ts in key[0] for t in ts)
    _layouts(BLOCK.format(n=8, k=8, extra=""))  # the clean block is kept
    assert any("a2" in t for key in built._BUILT for _n, _k, ts in key[0] for t in ts)
