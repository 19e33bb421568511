"""formal/text/html.py's runs of text: white space squashed and lines counted as the
character-by-character definitions do, and one reading of a page a process."""

from __future__ import annotations

import random

from formal.base.source import SourceText
from formal.text.html import _multi_line, _squash, html_blocks


def _squash_by_chars(text: str) -> str:
    """The definition: a white-space character right after another one is dropped; the
    newlines and tabs that stay read as spaces."""
    out = [ch for k, ch in enumerate(text) if not (ch.isspace() and k and text[k - 1].isspace())]
    return "".join(out).replace("\n", " ").replace("\t", " ")


def test_squash_keeps_each_runs_first_character_with_its_place() -> None:
    src = _multi_line("a  b\n\n c\u00a0\u2003d\t", "p.html", 3, 5)
    out = _squash(src)
    assert out.text == "a b c\u00a0d "
    assert [out.span(k) for k in (0, 2, 4, 5, 6)] == [src.span(k) for k in (0, 3, 7, 8, 10)]
    rng = random.Random(5)
    for _ in range(2000):
        text = "".join(rng.choice("ab \n\t\u00a0\u3000\r") for _ in range(rng.randint(0, 12)))
        assert _squash(SourceText.at(text, "p", 1)).text == _squash_by_chars(text), repr(text)


def test_a_run_across_lines_counts_them() -> None:
    src = _multi_line("ab\ncd\n\nef\n", "p.html", 7, 9)
    assert src.segments == ((0, 7, 9), (3, 8, 1), (6, 9, 1), (7, 10, 1))
    assert _multi_line("no newline", "p", 2, 4).segments == ((0, 2, 4),)


def test_a_page_is_read_once_and_each_caller_gets_its_own_list() -> None:
    page = "<html><body><section><h2>9.1. Title</h2><p>a  line</p></section></body></html>"
    first, again = html_blocks(page, "p.html"), html_blocks(page, "p.html")
    assert first == again and first is not again
    assert [(b.kind, b.text.text) for b in first] == [("heading", "9.1. Title"),
                                                      ("prose", "a line")]
    assert first[0] is again[0]  # the same frozen blocks
