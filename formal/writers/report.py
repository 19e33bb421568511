"""Report stage: a ``Proof`` -> text, Markdown, JSON, SARIF 2.1.0 or JUnit XML.

Every format is deterministic (sorted, no timestamps) so that two runs on the same input are
byte-identical and a CI job can diff them.  The JSON shape is the contract of DESIGN.md:

    {"version": "0.1.0",
     "layouts": [{"id", "section", "title", "document", "line", "instruction", "shape",
                  "operand", "types", "tile", "elements_per_thread", "source",
                  "obligations": [{"name", "status", "counterexample"}]}],
     "findings": [{"severity", "kind", "document", "line", "column", "section", "message",
                   "counterexample", "layout", "accepted"}],
     "relations": [{"producer", "consumer", "arrangement", "status", "message",
                    "counterexample"}],
     "summary": {...}}

The Markdown report is written to be pasted into an erratum: for each finding it quotes the
source lines, states the counterexample, and draws the lane grid with the offending cells
marked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from xml.sax.saxutils import quoteattr

from ..base.junit import testcase
from ..base.source import Finding
from ..model.layout import Layout
from ..prove.verdicts import OBLIGATIONS, LayoutResult, Proof, Verdict
from .jsontext import dumps_indented


def _operand_json(op: str) -> str:
    return op


def layout_json(r: LayoutResult, verbose: bool = False) -> dict[str, Any]:
    """One layout, with exactly the keys of the contract (``verbose`` adds the formulas, the
    referenced layout and each obligation's message)."""
    lay = r.layout
    out: dict[str, Any] = {
        "id": lay.id,
        "section": lay.section,
        "title": lay.title,
        "document": lay.document,
        "line": lay.span.line,
        "instruction": lay.instruction,
        "shape": lay.shape_text,
        "operand": _operand_json(lay.operand),
        "types": list(lay.types),
        "tile": list(lay.tile),
        "elements_per_thread": lay.elements,
        "source": lay.source,
        "obligations": [{"name": v.name, "status": v.status, "counterexample": v.counterexample,
                         **({"note": v.note} if v.note else {})} for v in r.verdicts],
    }
    if verbose:
        out["formulas"] = [f.text() for f in lay.formulas]
        out["reference_of"] = lay.reference_of or None
        for ob, v in zip(out["obligations"], r.verdicts):
            ob["message"] = v.message or None
    return out


def smem_json(r: Any, verbose: bool = False) -> dict[str, Any]:
    """A shared-memory result (``formal.prove.smem.SmemResult``) with the keys of a layout."""
    out: dict[str, Any] = {
        "id": r.id,
        "section": "",
        "title": r.shape,
        "document": r.span.document,
        "line": r.span.line,
        "instruction": r.instruction,
        "shape": r.shape,
        "operand": "A/B",
        "types": list(r.types),
        "tile": list(r.tile),
        "elements_per_thread": None,
        "source": "catalog" if r.span.document.startswith("catalog/") else "text",
        "obligations": [{"name": v.name, "status": v.status,
                         "counterexample": v.counterexample} for v in r.verdicts],
    }
    if verbose:
        for ob, v in zip(out["obligations"], r.verdicts):
            ob["message"] = v.message or None
    return out


def scale_json(r: Any, verbose: bool = False) -> dict[str, Any]:
    """A block-scale factor layout (``formal.prove.block_scale.ScaleResult``) with the keys of
    a layout: operand ``scale_A`` / ``scale_B``, its scale type, the scale matrix as tile."""
    out = smem_json(r, verbose)
    out["title"] = r.id
    out["operand"] = r.operand
    return out


def datapath_json(r: Any, verbose: bool = False) -> dict[str, Any]:
    """A data-path layout (``formal.prove.datapath.DataPathResult``); verbose: its blocks."""
    out = scale_json(r, verbose)
    if verbose:
        out["formulas"] = list(r.statements)
    return out


def finding_json(f: Finding, verbose: bool = False) -> dict[str, Any]:
    """One finding, with exactly the keys of the contract: the layout it belongs to (null
    when it belongs to none, a parse error of a section say) and the reason it was accepted
    (null unless it is a known erratum, which also says so at the end of its message)."""
    message = f.shown_message
    out: dict[str, Any] = {
        "severity": f.severity,
        "kind": f.kind,
        "document": f.span.document,
        "line": f.span.line,
        "column": f.span.column,
        "section": f.section,
        "message": message,
        "counterexample": f.counterexample,
    }
    out["layout"] = f.layout or None
    out["accepted"] = f.accepted or None
    return out


def summary(proof: Proof) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    every = [*proof.results, *proof.smem, *proof.scales, *proof.datapaths]
    for r in every:
        for v in r.verdicts:
            statuses[v.status] = statuses.get(v.status, 0) + 1
    return {
        "layouts": len(every),
        "layouts_proved": sum(1 for r in every if r.ok),
        "layouts_failed": sum(1 for r in every if not r.ok),
        "obligations": dict(sorted(statuses.items())),
        "errors": sum(1 for f in proof.findings if f.fails),
        "accepted": sum(1 for f in proof.findings if f.accepted),
        "warnings": sum(1 for f in proof.findings if f.severity == "warning"),
        "internal_errors": proof.internal_errors,
        "relations": len(proof.relations),
        "relations_proved": sum(1 for v in proof.relations if v.status == "proved"),
    }


def report_json(proof: Proof, verbose: bool = False, version: str = "0") -> str:
    data = {
        "version": version,
        "layouts": [*(layout_json(r, verbose) for r in proof.results),
                    *(smem_json(r, verbose) for r in proof.smem),
                    *(scale_json(r, verbose) for r in proof.scales),
                    *(datapath_json(r, verbose) for r in proof.datapaths)],
        "relations": [v.to_json() for v in proof.relations],
        "findings": [finding_json(f, verbose) for f in proof.findings],
        "summary": summary(proof),
    }
    return dumps_indented(data) + "\n"  # json.dumps(data, indent=2, ensure_ascii=False)


# ---- text ----------------------------------------------------------------------------------------


def _failed(r: LayoutResult) -> list[Verdict]:
    """Verdicts neither proved nor not-applicable (a warning, ``unconfirmed``, included)."""
    return [v for v in r.verdicts if v.status not in ("proved", "not-applicable")]


def report_text(proof: Proof, verbose: bool = False, quiet: bool = False) -> str:
    """One line per layout with its check mark, the relations, the findings (identical
    warnings as one line, ``finding_lines``) and the counts; ``quiet``: the problems only
    (no layout or relation that was proved)."""
    out: list[str] = []
    by_section: dict[tuple[str, str, str], list[LayoutResult]] = {}
    for r in proof.results if not quiet else ():
        key = (r.layout.document, r.layout.section, r.layout.title)
        by_section.setdefault(key, []).append(r)
    for (doc, _sec, title), rs in by_section.items():
        out.append(f"{doc}: {title}")
        # a section of several shapes (wmma's: m16n16k16, m8n32k16, ...) names each line's
        shapes = len({r.layout.shape_text for r in rs}) > 1  # (one shape: the title says it)
        for r in rs:
            lay = r.layout
            bad = _failed(r)
            mark = "\u2713" if r.ok else "\u2717"
            types = "/".join("." + t for t in lay.types) + \
                (f" (.{lay.arrangement})" if lay.arrangement else "")
            what = (f"{lay.shape_text:<10} " if shapes else "") + f"{lay.operand:<8} {types:<28}"
            src = f"[{lay.source}]"
            tail = "" if not bad else "  " + ", ".join(f"{v.name}: {v.status}" for v in bad)
            out.append(f"  {mark} {what} {src:<14}{tail}")
            if verbose:
                for formula in lay.formulas:
                    out.append(f"      {formula.text()}")
        out.append("")
    shown = [v for v in proof.relations if not quiet or v.status != "proved"]
    if shown:
        out.append("relations (composes):")
        for v in shown:
            mark = "\u2713" if v.status == "proved" else "\u2717"
            tail = "" if v.status == "proved" else f"  {v.status}"
            out.append(f"  {mark} {v.relation.producer} -> {v.relation.consumer}{tail}")
        out.append("")
    if proof.findings:
        out.append("findings:")
        out.extend(f"  {line}" for line in finding_lines(proof.findings, verbose))
        out.append("")
    s = summary(proof)
    accepted = f", {s['accepted']} accepted errata" if s["accepted"] else ""
    out.append(f"{s['layouts']} layouts: {s['layouts_proved']} proved, "
               f"{s['layouts_failed']} with findings; {s['errors']} errors{accepted}, "
               f"{s['warnings']} warnings")
    if proof.relations:
        out.append(_relations_line(s))
    decided = [v.note for r in proof.results for v in r.verdicts if v.note] + \
        ["decided by enumeration" for v in proof.relations if v.method == "enumeration"]
    if decided:  # Z3 timed out; the enumeration, a proof on a finite map, decided
        out.append(f"{len(decided)} obligations {max(decided, key=len)}")
    return "\n".join(out) + "\n"


# what varies between warnings that say the same thing: an instruction or layout id
# (``tcgen05.ld.sync.aligned.16x64b.x1.b32``), a count
_VARYING = re.compile(r"\b[A-Za-z_][\w:-]*(?:\.[\w:-]+)+|\b\d+\b")


def finding_lines(findings: Iterable[Finding], verbose: bool = False) -> list[str]:
    """One line per finding, except that warnings saying the same thing (the same kind and
    message once the ids and counts in it are set aside: 148 tcgen05 layouts "unconfirmed: no
    sm_100a device") are one line with their count and the first's place; ``verbose`` lists
    each one's place and layout under it.  Errors always stand alone."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    order: list[Finding | tuple[str, str, str]] = []
    for f in findings:
        if f.severity != "warning":
            order.append(f)
            continue
        key = (f.label, f.kind, _VARYING.sub("\u2026", f.shown_message))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(f)
    out = []
    for item in order:
        if isinstance(item, Finding):
            out.append(item.format())
            continue
        group = groups[item]
        if len(group) == 1:
            out.append(group[0].format())
            continue
        label, kind, message = item
        out.append(f"{label}: {kind}: {message} ({len(group)} findings, the first at "
                   f"{group[0].span}" + ("" if verbose else "; -v lists them") + ")")
        if verbose:
            out.extend(f"    {f.span}" + (f" {f.layout}" if f.layout else "") for f in group)
    return out


def _relations_line(s: dict[str, Any]) -> str:
    return f"{s['relations']} relations: {s['relations_proved']} proved, " \
           f"{s['relations'] - s['relations_proved']} not"


# ---- markdown -----------------------------------------------------------------------------------


def _quote_lines(f: Finding, sources: dict[str, list[str]]) -> list[str]:
    lines = sources.get(f.span.document)
    if not lines or f.span.line <= 0 or f.span.line > len(lines):
        return []
    text = lines[f.span.line - 1].rstrip("\n")
    caret = " " * max(0, f.span.column - 1) + "^"
    return ["```", f"{f.span.line:>5} | {text}", f"      | {caret}", "```"]


# findings about a layout's map, which its figure shows
FIGURE_KINDS = ("injective", "surjective", "in-range", "cases", "sparse-chunks",
                "metadata-coverage")


def to_markdown(proof: Proof, sources: dict[str, list[str]] | None = None,
                grid: Any = None, figure: Any = None) -> str:
    """An erratum-ready report: per finding, the quote, the counterexample and a grid.

    ``grid(layout, finding) -> str | None`` draws the lane grid (formal.writers.figures.ascii_for)
    and ``figure(layout, finding) -> str | None`` the SVG figure (formal.writers.drawing.svg_for),
    passed in so this module does not depend on the figure module.  With ``figure`` the SVG
    is inlined once per failing layout, at its first finding, inside a ``<details>`` block;
    without it (the default of ``prove --format markdown``: one SVG can run to thousands of
    lines) the report says the command that draws it.
    """
    sources = sources or {}
    out = ["# ptxlayout report", ""]
    s = summary(proof)
    accepted = f", {s['accepted']} accepted errata" if s["accepted"] else ""
    out.append(f"{s['layouts']} layouts, {s['layouts_proved']} proved, "
               f"{s['layouts_failed']} with findings; {s['errors']} errors{accepted}, "
               f"{s['warnings']} warnings.")
    out.append("")
    if proof.relations:
        out.append(_relations_line(s) + ".")
        out.append("")
        out.append("| producer | consumer | status |")
        out.append("| --- | --- | --- |")
        for v in proof.relations:
            out.append(f"| `{v.relation.producer}` | `{v.relation.consumer}` | {v.status} |")
        out.append("")
    by_id = {r.layout.id: r.layout for r in proof.results}
    errors = [f for f in proof.findings if f.severity == "error" and not f.accepted]
    # accepted errata are still reported, under their own heading: they are what the spec
    # gets wrong, but the summary does not count them as errors
    errata = [f for f in proof.findings if f.severity == "error" and f.accepted]
    warnings = [f for f in proof.findings if f.severity == "warning"]
    drawn: set[str] = set()
    gridded: set[str] = set()
    for title, group in (("Errors", errors), ("Accepted errata", errata),
                         ("Warnings", warnings)):
        if not group:
            continue
        out.append(f"## {title}")
        out.append("")
        for k, f in enumerate(group, 1):
            out.append(f"### {k}. `{f.span}` {f.kind}")
            out.append("")
            if f.accepted:
                out.append(f"*Accepted erratum:* {f.accepted}")
                out.append("")
            if f.section:
                out.append(f"Section {f.section}" + (f", layout `{f.layout}`" if f.layout else ""))
                out.append("")
            out.append(f.message)
            out.append("")
            out.extend(_quote_lines(f, sources))
            if f.counterexample is not None:
                out.append("")
                out.append("Counterexample:")
                out.append("")
                out.append("```json")
                out.append(json.dumps(f.counterexample, sort_keys=True))
                out.append("```")
            lay = by_id.get(f.layout) if f.layout else None
            if grid is not None and lay is not None and f.kind in FIGURE_KINDS \
                    and lay.id in gridded:
                out.append("")
                out.append(f"(The grid of `{lay.id}` is shown above.)")
            elif grid is not None and lay is not None and f.kind in FIGURE_KINDS:
                gridded.add(lay.id)
                pic = grid(lay, f)
                if pic:
                    out.append("")
                    out.append("```")
                    out.append(pic.rstrip("\n"))
                    out.append("```")
            if figure is None and lay is not None and f.kind in FIGURE_KINDS \
                    and lay.id not in drawn:
                drawn.add(lay.id)
                out.append("")
                out.append(f"Figure: `ptxlayout draw {lay.id} --svg figure.svg` (or "
                           "`prove --format markdown --figures` to inline it)")
            if figure is not None and lay is not None and f.kind in FIGURE_KINDS \
                    and lay.id not in drawn:
                drawn.add(lay.id)
                pic = figure(lay, f)
                if pic:
                    out.append("")
                    out.append(f"<details><summary>Figure of <code>{lay.id}</code> "
                               "(collisions, holes and the counterexample's cell marked)"
                               "</summary>")
                    out.append("")
                    out.append(pic.rstrip("\n"))
                    out.append("")
                    out.append("</details>")
            out.append("")
    out.append("## Layouts")
    out.append("")
    out.append("| layout | source | " + " | ".join(OBLIGATIONS) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in OBLIGATIONS) + " |")
    sym = {"proved": "\u2713", "refuted": "\u2717", "unknown": "?", "error": "!",
           "unconfirmed": "~",
           "not-applicable": "\u2013"}
    for r in proof.results:
        cells = [sym.get(r.verdict(n).status, "?") for n in OBLIGATIONS]
        out.append(f"| `{r.layout.id}` | {r.layout.source} | " + " | ".join(cells) + " |")
    out.append("")
    return "\n".join(out)


# ---- JUnit ---------------------------------------------------------------------------------------


def _verdict_case(attrs: str, v: Any, skip_why: str) -> tuple[str, str]:
    """One obligation's JUnit testcase and what it counts as (passed | skipped | failure |
    error); ``skip_why`` is the message of a skipped one without its own."""
    if v.status == "proved":
        return testcase(attrs), "passed"
    if v.status == "not-applicable" or v.severity == "warning":
        return testcase(attrs, "skipped", v.message or skip_why), "skipped"
    if v.status == "refuted":
        where = f"{v.span}: " if v.span else ""
        return testcase(attrs, "failure", v.message, where + v.message), "failure"
    return testcase(attrs, "error", v.status + ": " + (v.message or "")), "error"


def report_junit(proof: Proof) -> str:
    cases = []
    tally = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    accepted = {(f.layout, f.kind): f.accepted for f in proof.findings if f.accepted}
    for r in proof.results:
        for v in r.verdicts:
            name = f"{r.layout.id}::{v.name}"
            attrs = f"classname={quoteattr(r.layout.document)} name={quoteattr(name)}"
            why = accepted.get((r.layout.id, v.name))
            if why and v.status in ("refuted", "error"):
                tally["skipped"] += 1
                cases.append(testcase(attrs, "skipped", "accepted erratum: " + why))
                continue
            case, kind = _verdict_case(attrs, v, f"not applicable: {v.name} has nothing to "
                                                 f"check in this {r.layout.operand} layout")
            tally[kind] += 1
            cases.append(case)
    for rv in proof.relations:
        attrs = f"classname={quoteattr('relations')} " \
                f"name={quoteattr(f'{rv.relation.producer} -> {rv.relation.consumer}::composes')}"
        if rv.status == "proved":
            cases.append(testcase(attrs))
        elif rv.status == "refuted":
            tally["failure"] += 1
            cases.append(testcase(attrs, "failure", rv.message))
        else:
            tally["error"] += 1
            cases.append(testcase(attrs, "error", rv.status + ": " + (rv.message or "")))
    for sr in (*proof.smem, *proof.scales, *proof.datapaths):  # smem, scale, data path
        for v in sr.verdicts:
            attrs = f"classname={quoteattr(sr.span.document)} " \
                    f"name={quoteattr(f'{sr.id}::{v.name}')}"
            case, kind = _verdict_case(attrs, v, "not applicable")
            tally[kind] += 1
            cases.append(case)
    failures, errors, skipped = tally["failure"], tally["error"], tally["skipped"]
    total = len(cases)
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="ptxlayout" '
            f'tests="{total}" failures="{failures}" errors="{errors}" skipped="{skipped}">')
    return head + "\n" + "\n".join(cases) + "\n  </testsuite>\n</testsuites>\n"


def render(proof: Proof, fmt: str, sources: dict[str, list[str]] | None = None,
           grid: Any = None, version: str = "0", verbose: bool = False,
           figure: Any = None, quiet: bool = False) -> str:
    if fmt == "json":
        return report_json(proof, verbose, version)
    if fmt == "markdown":
        return to_markdown(proof, sources, grid, figure)
    if fmt == "sarif":
        from .sarif import report_sarif
        return report_sarif(proof, version)
    if fmt == "junit":
        return report_junit(proof)
    return report_text(proof, verbose, quiet)


def extract_json(layouts: Iterable[Layout]) -> str:
    rows = []
    for lay in layouts:
        rows.append({
            "id": lay.id, "document": lay.document, "section": lay.section,
            "title": lay.title, "line": lay.span.line, "instruction": lay.instruction,
            "shape": lay.shape_text, "operand": lay.operand, "types": list(lay.types),
            "tile": list(lay.tile), "elements_per_thread": lay.elements,
            "source": lay.source, "reference_of": lay.reference_of or None,
            "formulas": [f.text() for f in lay.formulas],
        })
    return json.dumps({"layouts": rows}, indent=2, ensure_ascii=False) + "\n"


def extract_text(layouts: Iterable[Layout]) -> str:
    out = []
    for lay in layouts:
        out.append(f"{lay.id}  ({lay.document}:{lay.span.line}, {lay.source})")
        out.append(f"    {lay.instruction}.{lay.shape} {lay.operand} "
                   f"{'/'.join('.' + t for t in lay.types)}: tile {lay.tile[0]} x "
                   f"{lay.tile[1]}, {lay.elements} elements per lane")
        if lay.reference_of:
            out.append(f"    same as {lay.reference_of}")
        for f in lay.formulas:
            out.append(f"    {f.text()}")
        if lay.metadata is not None and lay.metadata.selectors:
            out.append(f"    selectors {list(lay.metadata.selectors)}")
    return "\n".join(out) + "\n"
