"""``SourceText.strip``: the characters without their surrounding white space, with their
places, whatever the segments (its shortcut for a text with nothing to strip is the value
``slice`` would make)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from formal.base.source import SourceText

_TEXT = st.text(alphabet=" \tab=+\n", max_size=12)


@given(_TEXT, st.integers(1, 50), st.integers(1, 9))
def test_strip_of_one_line_is_its_slice(text: str, line: int, column: int) -> None:
    src = SourceText.at(text, "d.txt", line, column)
    left = len(text) - len(text.lstrip())
    right = len(text.rstrip())
    assert src.strip() == src.slice(left, right)
    assert src.strip().text == text.strip()


@given(st.lists(st.tuples(_TEXT, st.integers(1, 50), st.integers(1, 9)), min_size=1,
                max_size=4))
def test_strip_of_glued_lines_is_its_slice(parts: list[tuple[str, int, int]]) -> None:
    src = SourceText.concat([SourceText.at(t, "d.txt", ln, c) for t, ln, c in parts])
    left = len(src.text) - len(src.text.lstrip())
    right = len(src.text.rstrip())
    got = src.strip()
    assert got == src.slice(left, right)
    assert [got.span(k) for k in range(len(got.text))] == \
        [src.span(left + k) for k in range(right - left)]


def test_a_text_with_nothing_to_strip_is_itself() -> None:
    src = SourceText.at("row = lane", "d.txt", 3, 5)
    assert src.strip() is src
    shifted = SourceText("row", "d.txt", ((1, 3, 5),))  # a segment not at 0: sliced anew
    assert shifted.strip() == shifted.slice(0, 3) and shifted.strip() is not shifted


_WIDE = st.text(alphabet=" \tab|\u3000\u00a0\n", max_size=14)
_AT = st.integers(-3, 18)


@given(_WIDE, st.integers(1, 50), st.integers(1, 9), _AT, st.one_of(st.none(), _AT))
def test_trimmed_is_the_stripped_slice(text: str, line: int, column: int, start: int,
                                       end: int | None) -> None:
    """``text.blocks.trimmed`` (a table cell, a bullet's body) is the value ``slice`` then
    ``strip`` make, out-of-range bounds included; a text of several segments too."""
    from formal.text.blocks import trimmed
    src = SourceText.at(text, "d.md", line, column)
    assert trimmed(src, start, end) == src.slice(start, end).strip()
    glued = SourceText.concat([src, SourceText.at(text, "d.md", line + 1, 1)])
    assert trimmed(glued, start, end) == glued.slice(start, end).strip()


def test_trimmed_cell_keeps_its_column() -> None:
    from formal.text.blocks import trimmed
    cell = trimmed(SourceText.at("| .s8  | a0 |", "d.md", 3, 1), 1, 7)
    assert cell.text == ".s8" and cell.span(0).line == 3 and cell.span(0).column == 3
