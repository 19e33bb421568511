"""The audit's reports: text, JSON (the contract; writers.sarif makes SARIF of it), JUnit XML.

The text form opens with one row per instruction family (atoms; operand checks equal,
differs, not-in-spec, unreadable), then one line per operand entry that is not equal, e.g.

    mma_traits_sm80.hpp:623: SM80_16x8x256_S32U1U1S32_TN_XORPOPC  mma.sync.aligned.m16n8k256...
      A    differs vs spec (mma.m16n8k256.A.b1): thread 0, value 32: CuTe says (row 8,
           col 0), the spec says (row 8, col 32)
      A    equal vs correction (mma.m16n8k256.A.b1): CuTe follows the correction, ...

The JSON is ``{"atoms": [{"atom", "file", "line", "instruction", "operands": [{"operand",
"verdict", "against", "counterexample", "message", ...}]}], "scale_factors": [{"atom",
"operand", "vector_size", "cute", "spec_layout", "verdict", "differences": [{"lane", "byte",
"cute", "spec"}], "ignored_lanes", ...}], "summary": {...}, "warnings": [...]}``; the
scale-factor checks (SM120's block-scaled atoms, ``formal.audit.scale``) are the family
``block-scale`` of the text table; ``tcgen05_scale_factors`` (SM100's ``tmem_sf_frg``,
``formal.audit.tc_scale``) the family ``tcgen05-scale``, and ``tcgen05_sparse_metadata``
(SM100's ``tmem_e_frg``, ``formal.audit.tc_meta``: one check per atom, M, kind and selector,
a difference named by its first (lane, column, bit)) the family ``tcgen05-meta``.
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import quoteattr

from ..base.junit import testcase
from .audit import AtomResult, Audit, Entry
from .scale import ScaleComparison


def _line(r: AtomResult, e: Entry) -> str:
    what = f"{e.operand:<4} {e.verdict} vs {e.against}"
    if e.spec_layout:
        what += f" ({e.spec_layout})"
    if e.verdict == "equal" and e.against == "correction":
        return f"  {what}: CuTe follows the correction, not the spec as written"
    return f"  {what}" + (f": {e.message}" if e.message else "")


VERDICTS = ("equal", "differs", "not-in-spec", "unreadable")


def family_table(audit: Audit) -> list[str]:
    """One row per instruction family: atoms, and the operand checks by verdict."""
    atoms: dict[str, int] = {}
    ops: dict[str, dict[str, int]] = {}
    for r in audit.results:
        fam = r.atom.instruction.head if r.atom.instruction is not None else \
            "smem-atom" if r.atom.kind == "smem" else "?"
        atoms[fam] = atoms.get(fam, 0) + 1
        row = ops.setdefault(fam, dict.fromkeys(VERDICTS, 0))
        for e in r.entries:
            if e.against == "spec":
                row[e.verdict] += 1
    if audit.scales:  # the scale-factor layouts: a check per (atom, operand, vector size, form)
        fam = "block-scale"
        atoms[fam] = len({s.atom for s in audit.scales})
        ops[fam] = audit.scale_counts()
    if audit.tc_scales:  # a check per (atom, operand, M, vector size, catalog form)
        fam = "tcgen05-scale"
        atoms[fam] = len({s.atom for s in audit.tc_scales})
        ops[fam] = audit.tc_scale_counts()
    if audit.tc_metas:  # a check per (atom, M, kind, selector)
        fam = "tcgen05-meta"
        atoms[fam] = len({s.atom for s in audit.tc_metas})
        ops[fam] = audit.tc_meta_counts()
    head = f"{'family':<11} {'atoms':>6} " + " ".join(f"{v:>11}" for v in VERDICTS)
    out = [head]
    for fam in sorted(atoms):
        out.append(f"{fam:<11} {atoms[fam]:>6} "
                   + " ".join(f"{ops[fam][v]:>11}" for v in VERDICTS))
    return out


def _scale_line(s: ScaleComparison) -> str:
    """A scale-factor comparison that is not equal, with its first differing (lane, byte)."""
    head = f"  SF{s.operand} VS {s.vs} {s.verdict} vs spec ({s.spec or '?'})"
    if s.verdict != "differs" or not s.differences:
        return head + (f": {s.why}" if s.why else "")
    d = s.differences[0]

    def cell(x: Any) -> str:
        return f"(mn {x[0]}, block {x[1]})" if x is not None else "nothing"
    more = len(s.differences) - 1
    return (head + f": lane {d['lane']}, byte {d['byte']}: CuTe says {cell(d['cute'])}, the "
            f"spec says {cell(d['spec'])}" + (f" (and {more} more bytes)" if more else ""))


def audit_text(audit: Audit, verbose: bool = False) -> str:
    """The family table, then every operand that is not equal to the spec (each difference
    with its cells), then the totals; ``verbose`` lists every atom."""
    out: list[str] = family_table(audit)
    shown = 0
    for r in audit.results:
        odd = [e for e in r.entries if e.verdict != "equal" or e.against != "spec"]
        if not verbose and not odd:
            continue
        if not shown:
            out.append("")
        shown += 1
        out.append(f"{r.atom.file}:{r.atom.line}: {r.atom.name}  {r.instruction or '?'}")
        out.extend(_line(r, e) for e in (r.entries if verbose else odd))
    # the factor and metadata comparisons: one heading and one line each, unequal ones only
    # unless verbose
    rows: list[tuple[Any, str, str]] = [(sc, "block-scale factors", _scale_line(sc))
                                        for sc in audit.scales]
    rows += [(tc, "tcgen05 scale factors", f"  SF{tc.operand} M {tc.m} VS {tc.vs} {tc.verdict} "
              f"vs spec ({tc.spec or '?'}): {tc.why}") for tc in audit.tc_scales]
    rows += [(me, "tcgen05 sparse metadata", f"  E M {me.m} .kind::{me.kind}"
              + (f" sel {me.selector}" if me.selector is not None else "")
              + f" {me.verdict} vs spec ({me.spec or '?'}): {me.why}") for me in audit.tc_metas]
    for c, what, line in rows:
        if c.verdict == "equal" and not verbose:
            continue
        if not shown:
            out.append("")
        shown += 1
        out.append(f"{c.file}:{c.line}: {c.atom}  {what}")
        out.append(line)
    s = audit.summary()
    ops = s["operands"]
    quiet = sum(1 for r in audit.results if all(e.verdict == "equal" for e in r.entries))
    if quiet and not verbose:
        out.append(f"({quiet} atoms with every operand equal to the spec not shown; -v shows "
                   "them)")
    sf = s["scale_factors"]
    out.append(f"{s['atoms']} atoms, {sum(ops.values())} operand checks: "
               + ", ".join(f"{v} {k}" for k, v in ops.items())
               + (f"; {sum(sf.values())} scale-factor checks: "
                  + ", ".join(f"{v} {k}" for k, v in sf.items() if v) if audit.scales else "")
               + (f"; {len(audit.tc_scales)} tcgen05 scale-factor checks: "
                  + ", ".join(f"{v} {k}" for k, v in s["tcgen05_scale_factors"].items() if v)
                  if audit.tc_scales else "")
               + (f"; {len(audit.tc_metas)} tcgen05 sparse-metadata checks: "
                  + ", ".join(f"{v} {k}" for k, v in s["tcgen05_sparse_metadata"].items()
                              if v) if audit.tc_metas else "")
               + (f"; {s['warnings']} warnings" if s["warnings"] else ""))
    for f in audit.findings:
        out.append(f.format())
    return "\n".join(out) + "\n"


def audit_json(audit: Audit) -> str:
    doc: dict[str, Any] = {
        "atoms": [r.as_json() for r in audit.results],
        "scale_factors": [sc.as_json() for sc in audit.scales],
        "tcgen05_scale_factors": [tc.as_json() for tc in audit.tc_scales],
        "tcgen05_sparse_metadata": [me.as_json() for me in audit.tc_metas],
        "summary": audit.summary(),
        "warnings": [{"file": f.span.document, "line": f.span.line, "column": f.span.column,
                      "kind": f.kind, "message": f.message} for f in audit.findings],
    }
    return json.dumps(doc, indent=1) + "\n"


def audit_junit(audit: Audit) -> str:
    """One test case per operand check and per scale-factor check: equal passes, differs
    fails with the cells, anything else is skipped with its reason."""
    checks = [(r.atom.file, f"{r.atom.name}::{e.operand}::{e.against}", e.verdict,
               e.message if e.verdict == "differs" else e.verdict + ": " + e.message)
              for r in audit.results for e in r.entries]
    checks += [(sc.file, f"{sc.atom}::SF{sc.operand}::VS{sc.vs}::{sc.spec}", sc.verdict,
                _scale_line(sc).strip() if sc.verdict == "differs"
                else sc.verdict + ": " + sc.why) for sc in audit.scales]
    checks += [(tc.file, f"{tc.atom}::SF{tc.operand}::M{tc.m}::VS{tc.vs}::{tc.spec}",
                tc.verdict, tc.why if tc.verdict == "differs" else tc.verdict + ": " + tc.why)
               for tc in audit.tc_scales]
    checks += [(me.file, f"{me.atom}::E::M{me.m}::{me.kind}::sel{me.selector}::{me.spec}",
                me.verdict, me.why if me.verdict == "differs" else me.verdict + ": " + me.why)
               for me in audit.tc_metas]
    cases = []
    for file, name, verdict, said in checks:
        attrs = f"classname={quoteattr(file)} name={quoteattr(name)}"
        cases.append(testcase(attrs) if verdict == "equal" else
                     testcase(attrs, "failure" if verdict == "differs" else "skipped", said))
    failures = sum(c[2] == "differs" for c in checks)
    skipped = sum(c[2] not in ("equal", "differs") for c in checks)
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite '
            f'name="ptxlayout-audit-cute" tests="{len(cases)}" failures="{failures}" '
            f'errors="0" skipped="{skipped}">')
    return "\n".join([head, *cases, "  </testsuite>", "</testsuites>"]) + "\n"


def render_audit(audit: Audit, fmt: str, verbose: bool = False, version: str = "0") -> str:
    """The report in ``fmt`` (text, json or junit; the command line makes SARIF from the
    JSON, ``writers.sarif.audit_output``); ``version`` is kept for callers that pass it."""
    if fmt == "json":
        return audit_json(audit)
    if fmt == "junit":
        return audit_junit(audit)
    return audit_text(audit, verbose)
