"""Sparse ``tcgen05.mma.sp``: what the text states per ``.kind``, read into facts.

Each sparse sub-section names its kinds in its heading (and again as bullets), states the
granularity of A's sparsity and lists the only meaningful values of a chunk's metadata
index::

    ###### 9.7.16.10.8.1. Sparse tcgen05.mma.sp with .kind::tf32
    For .kind::tf32, matrix A is structured sparse at a granularity of 1:2. ...
    * 0b1110
    * 0b0100

becomes ``SparseKinds(kinds=("tf32",), grain=(1, 2), values=(0b1110, 0b0100), ...)``, each
fact with its line.  The lines are read by ``grammar/tc_sparse.lark``; nothing is evaluated
here (``formal.prove.sparse`` checks the facts against the sparsity rows mma.sp uses).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError

from ..base.grammar_files import build_parser
from ..base.source import SourceText
from ..text.blocks import strip_markup
from .grammars import RuleTransformer, can_read, transformed
from .kept import parses_remembered, remembered_read

STARTS = ("sp_heading", "sp_kind", "sp_grain", "sp_value")


@cache
def _parser() -> Lark:
    return build_parser("tc_sparse", list(STARTS))


@dataclass(frozen=True)
class SparseKinds:
    """One sparse sub-section: its kinds (heading and bullets, each with its line), its
    stated granularity (non-zeros, chunk) and its listed index values."""

    kinds: tuple[tuple[str, SourceText], ...]
    grain: tuple[int, int] | None
    grain_source: SourceText | None
    values: tuple[tuple[int, SourceText], ...]
    source: SourceText


class _ToFacts(RuleTransformer):
    def sp_heading(self, items: list[Token]) -> tuple[Any, ...]:
        return ("heading", tuple(str(t).partition("::")[2] for t in items if t.type == "KIND"))

    def sp_kind(self, items: list[Token]) -> tuple[Any, ...]:
        return ("kind", next(str(t).partition("::")[2] for t in items if t.type == "KIND"))

    def sp_grain(self, items: list[Token]) -> tuple[Any, ...]:
        a, _, b = next(str(t) for t in items if t.type == "RATIO").partition(":")
        return ("grain", (int(a), int(b)))

    def sp_value(self, items: list[Token]) -> tuple[Any, ...]:
        return ("value", int(next(str(t) for t in items if t.type == "BINARY")[2:], 2))


def _clean(text: str) -> str:
    """Markdown's marks dropped (code marks, escapes) and links reduced to their text:
    ``[Sparse `tcgen05.mma.sp` with ...](#x)[](#x "Permalink")``, by the text stage's
    ``strip_markup``."""
    plain = strip_markup(SourceText.at(text.replace("\uf0c1", " "), "", 1)).text
    return plain.strip().lstrip("#>").strip()


def _read_now(text: str) -> tuple[Any, ...] | None:
    clean = _clean(text)
    for start in STARTS:
        if not can_read(_parser(), start)(clean):
            continue  # a token the start symbol needs matches nowhere: Lark would refuse it
        try:
            return transformed(_parser(), start, _ToFacts, clean)  # type: ignore[no-any-return]
        except LarkError:
            continue
    return None


def read_sparse_line(text: str) -> tuple[Any, ...] | None:
    """One line as the first start symbol that reads it, or None; read once a text
    (``kept.remembered_read``)."""
    return remembered_read(text, "tc_sparse:line", lambda: _read_now(text))  # type: ignore[no-any-return]


def _lines(text: str, name: str) -> list[tuple[SourceText, bool]]:
    """(line, is a heading) of a Markdown or text document, or of the Sphinx HTML page's
    blocks (a heading, a paragraph or list item each)."""
    from ..text.read import detect_format
    if detect_format(text, name) == "html":
        from ..text.html import html_blocks
        return [(b.text, b.kind == "heading") for b in html_blocks(text, name)
                if b.kind in ("heading", "prose")]
    return [(SourceText.at(raw, name, no), raw.lstrip().startswith("#"))
            for no, raw in enumerate(text.split("\n"), start=1)]


def read_tc_sparse(text: str, name: str) -> tuple[SparseKinds, ...]:
    """Every sparse sub-section of a document: one opens at a line that reads as
    ``sp_heading`` (a heading, or a numbered title line of a text scrape) and runs to the
    next heading.  Its lines' readings are kept between runs (``kept.parses_remembered``)."""
    with parses_remembered(tuple(text.split("\n")), "tc_sparse"):
        return _read_tc_sparse(text, name)


def _read_tc_sparse(text: str, name: str) -> tuple[SparseKinds, ...]:
    out: list[SparseKinds] = []
    cur: dict[str, Any] | None = None

    def close() -> None:
        if cur is not None:
            out.append(SparseKinds(tuple(cur["kinds"]), cur["grain"], cur["grain_src"],
                                   tuple(cur["values"]), cur["src"]))

    for src, heading in _lines(text, name):
        raw = src.text
        wanted = "tcgen05.mma.sp" in raw or (cur is not None and any(
            w in raw for w in ("kind::", "0b", "granularity")))
        got = read_sparse_line(raw) if wanted else None
        if got is not None and got[0] == "heading":
            close()
            cur = {"kinds": [(k, src) for k in got[1]], "grain": None, "grain_src": None,
                   "values": [], "src": src}
        elif heading:
            close()
            cur = None
        elif cur is not None and got is not None:
            if got[0] == "kind":
                cur["kinds"].append((got[1], src))
            elif got[0] == "grain" and cur["grain"] is None:
                cur["grain"], cur["grain_src"] = got[1], src
            elif got[0] == "value":
                cur["values"].append((got[1], src))
    close()
    return tuple(out)
