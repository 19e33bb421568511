"""Source positions and findings: the values every stage passes along instead of raising.

A document reaches ptxlayout in one of three renderings (plain text scraped from the HTML
page, Markdown, the HTML page itself).  Each ingester turns its rendering into *logical
lines*: the text a reader sees, with the markup stripped, plus a map from every character
back to where it stood in the file.  A logical line may be glued from several physical
lines (a Markdown paragraph wrapped over two lines) or cut out of one (a formula glued to
the next heading in scraped text), so the map is piecewise:

    physical:   3|  > row =      groupID      for ai where i < 8
    logical:       row =      groupID      for ai where i < 8
    segments:      ((0, 3, 7),)         offset 0 of the logical text is line 3, column 7

``SourceText.span(4)`` is then line 3, column 11: the ``=``.  Columns are 1-based, as in
compiler diagnostics (``file:line:col``).

A ``Finding`` is how every stage reports a problem: never an exception that reaches the
user, always a value with a location, a kind and a message, so that the rest of the
document is still processed.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any


@dataclass(frozen=True, order=True)
class Span:
    """A position in a document: 1-based line and column."""

    document: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.document}:{self.line}:{self.column}"


@dataclass(frozen=True)
class SourceText:
    """A logical line of text with the source position of each of its characters.

    ``segments`` holds ``(offset, line, column)`` triples sorted by offset: the character at
    logical offset ``k`` comes from ``line`` at ``column + (k - offset)`` of the segment whose
    offset is the largest one not above ``k``.
    """

    text: str
    document: str
    segments: tuple[tuple[int, int, int], ...]

    @staticmethod
    def at(text: str, document: str, line: int, column: int = 1) -> SourceText:
        return SourceText(text, document, ((0, line, column),))

    @cached_property
    def _offsets(self) -> list[int]:
        return [s[0] for s in self.segments]

    def span(self, offset: int = 0) -> Span:
        if not self.segments:
            return Span(self.document, 0, 0)
        k = max(0, min(offset, max(len(self.text) - 1, 0)))
        idx = max(0, bisect_right(self._offsets, k) - 1)
        start, line, column = self.segments[idx]
        return Span(self.document, line, column + (k - start))

    @property
    def line(self) -> int:
        return self.span(0).line

    def slice(self, start: int, end: int | None = None) -> SourceText:
        """The characters ``text[start:end]`` with their positions."""
        end = len(self.text) if end is None else end
        start = max(0, min(start, len(self.text)))
        end = max(start, min(end, len(self.text)))
        if len(self.segments) == 1 and self.segments[0][0] == 0:  # one line: no search
            _off, line, col = self.segments[0]
            return SourceText(self.text[start:end], self.document, ((0, line, col + start),))
        segs: list[tuple[int, int, int]] = []
        # segments ending before ``start`` or starting after ``end`` contribute nothing: look
        # only at those in between (a slice per line of a long text stays linear)
        first = max(0, bisect_left(self._offsets, start) - 1)
        for idx in range(first, len(self.segments)):
            off, line, col = self.segments[idx]
            if off > end:
                break
            nxt = self.segments[idx + 1][0] if idx + 1 < len(self.segments) else len(self.text)
            lo, hi = max(off, start), min(nxt, end)
            if lo < hi or (not segs and lo == hi == start and off <= start < max(nxt, start + 1)):
                segs.append((lo - start, line, col + (lo - off)))
        if not segs:
            sp = self.span(start)
            segs = [(0, sp.line, sp.column)]
        return SourceText(self.text[start:end], self.document, tuple(segs))

    def strip(self) -> SourceText:
        left = len(self.text) - len(self.text.lstrip())
        right = len(self.text.rstrip())
        if left == 0 and right == len(self.text) and len(self.segments) == 1 \
                and self.segments[0][0] == 0:
            return self  # nothing to strip, one segment: ``slice`` would make this very value
        return self.slice(left, right)

    def __add__(self, other: SourceText) -> SourceText:
        """Concatenate two logical texts (their positions are kept)."""
        shift = len(self.text)
        segs = self.segments + tuple((o + shift, ln, c) for o, ln, c in other.segments)
        return SourceText(self.text + other.text, self.document, segs)

    @staticmethod
    def concat(parts: Sequence[SourceText], document: str = "") -> SourceText:
        """``parts[0] + parts[1] + ...`` in one pass (repeated ``+`` is quadratic)."""
        if not parts:
            return SourceText("", document, ())
        segs: list[tuple[int, int, int]] = []
        shift = 0
        for p in parts:
            segs.extend((o + shift, ln, c) for o, ln, c in p.segments)
            shift += len(p.text)
        return SourceText("".join(p.text for p in parts), parts[0].document, tuple(segs))


Severity = str  # "error" | "warning"


@dataclass(frozen=True)
class Finding:
    """A problem found in a document, or a refuted obligation, with its place."""

    severity: Severity
    kind: str
    span: Span
    message: str
    section: str = ""
    counterexample: Any = None
    layout: str = ""
    extra_spans: tuple[Span, ...] = field(default=())
    accepted: str = ""  # the reason, when a known erratum is accepted

    @property
    def shown_message(self) -> str:
        """The message as reports show it: an accepted erratum says so at the end."""
        return self.message + (f" [accepted: {self.accepted}]" if self.accepted else "")

    @property
    def label(self) -> str:
        """The severity as a line shows it: an accepted error is ``accepted``, never ``error``
        (the summary does not count it as one)."""
        return "accepted" if self.accepted and self.severity == "error" else self.severity

    def format(self) -> str:
        return f"{self.span}: {self.label}: {self.kind}: {self.shown_message}"

    @property
    def fails(self) -> bool:
        """Does this finding fail a run (an error nobody accepted)?"""
        return self.severity == "error" and not self.accepted


def error(kind: str, where: SourceText | Span, message: str, **kw: Any) -> Finding:
    span = where.span(0) if isinstance(where, SourceText) else where
    return Finding("error", kind, span, message, **kw)


def warning(kind: str, where: SourceText | Span, message: str, **kw: Any) -> Finding:
    span = where.span(0) if isinstance(where, SourceText) else where
    return Finding("warning", kind, span, message, **kw)


def name_layout(findings: list[Finding], lines: Sequence[SourceText], layout: str) -> None:
    """The ``parse`` findings on ``lines`` that name no layout name ``layout`` (in place): the
    parse stage reports a formula line it cannot read before the model stage makes the id of
    the layout the line belongs to."""
    at = {(ln.span(0).document, ln.span(0).line) for ln in lines}
    for k, f in enumerate(findings):
        if f.kind == "parse" and not f.layout and (f.span.document, f.span.line) in at:
            findings[k] = replace(f, layout=layout)
