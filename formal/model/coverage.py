"""Nothing that looks like a fragment section is dropped without a word: each line the text
stage found (``Document.looks``: an operand heading, a fragment-table row, a ``row``/``col``
formula) is part of a layout the prove stage checks, or is named by an error finding.

    9.7.14.5.9 Matrix Fragments for mma.m16n8k16      (lost its number: no section opens)
    Multiplicand A:                                    line 7   operand
    .u8 / .s8  A vector expression containing ...      line 9   table
    row = groupID   for ai where i < 4                 line 22  formula

gives one error of kind ``unchecked`` at line 7: "3 lines that look like part of a fragment
section were not checked: line 7 'Multiplicand A:', line 9 '.u8 / .s8 A vector ...', line 22
'row = groupID ...'; they stand under no title that names an instruction and a shape", its
counterexample ``{"lines": [7, 9, 22]}``.  Consecutive lines not checked are one finding, so
one cause is one error.

A formula block that a later block of the same part replaces (``row`` defined twice, the
types of two sub-bullets not told apart) is named by its ``unattached`` warning, which lists
its lines.  An operand heading counts as read when a layout of the document begins between
it and the next operand heading; a table row or a formula when it is one of the lines a
layout was built from, or stands between two formula lines of one layout.  A finding on its
own line names a line too (a table row that could not be read has its warning there; a
formula needs an error), and an error on its section's title (a title that does not parse,
a shape over the limits) names the section's lines: that error then lists them in its
counterexample.  The lines of the wmma fragment section are read as its register budgets
(``formal.model.wmma``), which state no layout.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..base.source import Finding, SourceText, error
from ..parse.document import ParsedDocument
from .layout import Layout


def lines_of(src: SourceText | None) -> set[int]:
    if src is None:
        return set()
    return {seg[1] for seg in src.segments}


def layout_lines(lay: Layout) -> set[int]:
    """The document lines a layout was read from (its table row, its formulas)."""
    out: set[int] = {lay.span.line}
    code: set[int] = set()
    for f in (*lay.formulas, *lay.helpers):
        code |= lines_of(f.source)
        for c in f.cases:
            code |= lines_of(c.source)
    if code:  # the block's program, from its first formula line to its last (sparse A's
        # ``col = [firstcol ... lastcol]`` between ``row`` and ``firstcol`` included)
        out |= set(range(min(code), max(code) + 1))
    t = lay.table
    if t is not None:
        for s in (t.source, t.fragment_src, t.elements_src, t.header_src):
            out |= lines_of(s)
    md = lay.metadata
    if md is not None:
        for s in (md.desc_src, md.selectors_src, md.holder_src):
            out |= lines_of(s)
    out |= lines_of(lay.reference_src)
    return out


def unchecked(docs: Sequence[ParsedDocument], layouts: Iterable[Layout],
              findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with an error added for each run of lines that look like a fragment
    section and were not checked.  Where an error on a section's title already says why
    (a title that does not parse, a shape over the limits), that error lists the lines
    instead (``counterexample["lines"]``): one cause, one error."""
    by_doc: dict[str, list[Layout]] = {}
    for lay in layouts:
        by_doc.setdefault(lay.document, []).append(lay)
    findings = list(findings)
    named = {(f.span.document, f.span.line) for f in findings if f.severity == "error"}
    # a formula block that no layout takes is named by its 'unattached' warning, line by line
    named |= {(f.span.document, line) for f in findings if f.kind == "unattached"
              and isinstance(f.counterexample, dict) for line in f.counterexample["lines"]}
    # a table row or heading that could not be read is named by its warning (the layout's
    # formulas are still checked); a formula line only by an error
    warned = {(f.span.document, f.span.line) for f in findings}
    out: list[Finding] = []
    under_title: dict[tuple[str, int], list[int]] = {}
    for d in docs:
        doc = d.document
        if not doc.looks:
            continue
        lays = by_doc.get(doc.name, [])
        read: set[int] = set()
        for lay in lays:
            read |= layout_lines(lay)
        for ps in d.sections:  # a tcgen05 section's tables and sentences read as facts
            for fact in ps.tmem.facts if ps.tmem is not None else ():
                read |= lines_of(fact.src)
        starts = sorted(lay.span.line for lay in lays)
        heads = [src.span(0).line for what, src in doc.looks if what == "operand"]
        wmma_titles = {ps.section.title.span(0).line for ps in d.sections
                       if ps.wmma is not None and ps.section.title.text}
        titles = _title_lines(d)
        run: list[tuple[str, SourceText]] = []
        for what, src in doc.looks:
            line = src.span(0).line
            if what == "operand":
                nxt = next((h for h in heads if h > line), None)
                k = bisect_right(starts, line - 1)
                ok = k < len(starts) and (nxt is None or starts[k] < nxt)
            else:
                ok = line in read
            k = bisect_right(titles, line)
            title = titles[k - 1] if k else None  # the title of the section the line is in
            if not ok and title in wmma_titles:
                ok = True  # the wmma section: its rows' register budgets are checked
            if not ok and title is not None and (doc.name, title) in named:
                under_title.setdefault((doc.name, title), []).append(line)
                ok = True
            if ok or (doc.name, line) in (warned if what != "formula" else named):
                if run:
                    out.append(_finding(d, run))
                run = []
            else:
                run.append((what, src))
        if run:
            out.append(_finding(d, run))
    kept = [f if f.severity != "error" or f.counterexample is not None
            or (f.span.document, f.span.line) not in under_title
            else replace(f, counterexample={"lines": under_title[(f.span.document,
                                                                  f.span.line)]})
            for f in findings]
    return kept + out


_WHAT = {"operand": "an operand heading", "table": "a fragment-table row",
         "formula": "a row/col formula"}


def _finding(d: ParsedDocument, run: list[tuple[str, SourceText]]) -> Finding:
    first = run[0][1]
    shown = ", ".join(f"line {src.span(0).line} {_short(src.text)!r}" for _w, src in run[:3])
    more = f" and {len(run) - 3} more" if len(run) > 3 else ""
    if len(run) == 1:
        head = f"{_WHAT[run[0][0]]} was not checked: {shown}"
    else:
        head = f"{len(run)} lines that look like part of a fragment section were not " \
               f"checked: {shown}{more}"
    return error("unchecked", first.strip(), f"{head}; {_why(d, first.span(0).line)}",
                 counterexample={"lines": [src.span(0).line for _w, src in run]})


def _short(text: str) -> str:
    t = " ".join(text.split())
    return t if len(t) <= 40 else t[:37] + "..."


def _title_lines(d: ParsedDocument) -> list[int]:
    """The title lines of the document's sections, in order (a line stands in the section of
    the last title at or above it: an error there names the whole section as not checked, a
    shape over the limits)."""
    return sorted(ps.section.title.span(0).line for ps in d.sections if ps.section.title.text)


def _why(d: ParsedDocument, line: int) -> str:
    section = None
    for ps in d.sections:
        if ps.section.title.text and ps.section.title.span(0).line <= line:
            section = ps
    if section is None or (section.title is None and section.moves is None):
        return "they stand under no title that names an instruction and a shape (such as " \
               "'9.7.14.5.9. Matrix Fragments for mma.m16n8k16 ...'), so no layout was made"
    return "they became part of no layout (an operand block with no table and no formulas, " \
           "or lines outside any operand block)"
