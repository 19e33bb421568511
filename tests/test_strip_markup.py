"""``text.blocks.strip_markup`` keeps a run of plain characters whole (one search for the
next backtick, bracket, star or backslash): the same characters, at the same places, as
walking the text one character at a time (``_walked`` below, the walk it replaces), on
every line and paragraph of the catalog and on texts made of markup."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from formal import catalog
from formal.base.source import SourceText
from formal.text.blocks import ESCAPABLE, _pairs, select_chars, strip_markup


def _walked(src: SourceText) -> SourceText:
    """Markup taken off one character at a time."""
    text = src.text
    keep: list[int] = []
    k, n = 0, len(text)
    brackets, parens = _pairs(text, "[", "]"), _pairs(text, "(", ")")
    code = False
    while k < n:
        ch = text[k]
        if ch == "`":
            code = not code
        elif ch == "\\" and not code and k + 1 < n and text[k + 1] in ESCAPABLE:
            keep.append(k + 1)
            k += 2
            continue
        if ch == "*" and k + 1 < n and text[k + 1] == "*":
            k += 2
            continue
        if ch == "[":
            close = brackets.get(k, -1)
            if close > 0 and close + 1 < n and text[close + 1] == "(":
                end = parens.get(close + 1, -1)
                if end > 0:
                    if not text[k + 1:close].strip():
                        k = end + 1
                        continue
                    j, in_code = k + 1, False
                    while j < close:
                        if text[j] == "`":
                            in_code = not in_code
                        elif text[j] == "\\" and not in_code and j + 1 < close \
                                and text[j + 1] in ESCAPABLE:
                            j += 1
                        keep.append(j)
                        j += 1
                    k = end + 1
                    continue
        keep.append(k)
        k += 1
    return select_chars(src, [k for k in keep if text[k] != "`"])


def _both(text: str) -> None:
    one = SourceText.at(text, "d.md", 3, 2)
    assert strip_markup(one) == _walked(one), text
    half = len(text) // 2
    glued = SourceText.concat([SourceText.at(text[:half], "d.md", 1, 1),
                               SourceText.at(text[half:], "d.md", 2, 5)])
    assert strip_markup(glued) == _walked(glued), text


_MARKS = st.sampled_from(["`", "[", "]", "(", ")", "*", "**", "\\", "\\_", "[](u)", "](x)",
                          "a", "b", " ", "_", "!", "|", "mma"])


@settings(max_examples=400)
@given(st.lists(_MARKS, max_size=24).map("".join))
def test_markup_runs_are_taken_off_as_the_walk_does(text: str) -> None:
    _both(text)


def test_every_catalog_line_and_paragraph_as_the_walk_does() -> None:
    for path in sorted(catalog.CATALOG_DIR.rglob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for text in lines + [" ".join(lines[k:k + 8]) for k in range(0, len(lines), 8)]:
            _both(text)
    got = strip_markup(SourceText.at("see [mma\\_sync](x.html) and **bold** `a0`", "d.md", 1))
    assert got.text == "see mma_sync and bold a0"
    assert [got.span(k).column for k in (4, 8, len(got.text) - 1)] == [6, 11, 40]
