"""SARIF 2.1.0 for code scanning: one result a finding, fit for GitHub's upload-sarif.

What code scanning needs beyond the format, on one finding (the seed's erratum at line 55)::

    artifactLocation   {"uri": "seeds/000.txt", "uriBaseId": "SRCROOT"}   relative to the
                       checkout (an absolute path outside it stays a file:// URI)
    partialFingerprints {"ptxlayout/v1": "3f2a..."}   the finding's kind, layout, document and
                       message hashed, so the alert keeps its identity when lines move
    rule               {"id": "injective", "shortDescription", "fullDescription", "helpUri"}

Nothing depends on the directory the command ran in except the relative URIs themselves,
which are what code scanning matches against the repository.  The audit's report
(``sarif_of_audit``) has the same shape: one result per operand that differs from the spec
(rule ``audit-differs``), a header path relative to the CUTLASS include folder
(``uriBaseId`` ``CUTLASS_INCLUDE``, given in ``originalUriBaseIds``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

from ..prove.verdicts import Proof
from .kinds import help_uri, rule_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "ptxlayout"
INFORMATION_URI = "https://github.com/ptxlayout/ptxlayout"



def artifact(document: str) -> dict[str, str]:
    """The SARIF artifactLocation of a document name: relative to SRCROOT where it is a
    relative path or lies under the working folder, else an absolute file URI."""
    path = PurePath(document)
    if not path.is_absolute():
        return {"uri": path.as_posix(), "uriBaseId": "SRCROOT"}
    try:
        rel = Path(document).relative_to(Path(os.getcwd()))
    except ValueError:
        return {"uri": Path(document).as_uri()}
    return {"uri": rel.as_posix(), "uriBaseId": "SRCROOT"}


def fingerprint(*parts: str) -> str:
    """A finding's identity apart from its line: what it is, where (layout and document) and
    what it says."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def rule(kind: str) -> dict[str, object]:
    """A rule of the run: its id, its one line, what a finding of it means, and the anchor in
    the docs that explains it (``formal.writers.kinds``)."""
    short = rule_text(kind)
    return {"id": kind, "shortDescription": {"text": short},
            "fullDescription": {"text": f"{short}. A '{kind}' finding of ptxlayout: an error "
                                        "when the text contradicts itself, the instruction "
                                        "table or the hardware; a warning when a sentence "
                                        "could not be read."},
            "helpUri": help_uri(kind)}


def report_sarif(proof: Proof, version: str = "0") -> str:
    rules = sorted({f.kind for f in proof.findings})
    results = []
    for f in proof.findings:
        results.append({
            "ruleId": f.kind,
            "ruleIndex": rules.index(f.kind),
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": artifact(f.span.document),
                    "region": {"startLine": max(1, f.span.line),
                               "startColumn": max(1, f.span.column)},
                },
                **({"logicalLocations": [{"name": f.layout, "kind": "object"}]}
                   if f.layout else {}),
            }],
            "partialFingerprints": {"ptxlayout/v1": fingerprint(
                f.kind, f.layout or "", PurePath(f.span.document).name, f.message)},
            **({"properties": {"counterexample": f.counterexample, "section": f.section}}
               if f.counterexample is not None or f.section else {}),
            **({"suppressions": [{"kind": "external", "justification": f.accepted}]}
               if f.accepted else {}),
        })
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": TOOL_NAME,
                "version": version,
                "informationUri": INFORMATION_URI,
                "rules": [rule(r) for r in rules],
            }},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _located(path: str, roots: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``path`` relative to the first root (``(uriBaseId, folder)``) it lies under; else as
    ``artifact`` places it."""
    for base, folder in roots:
        try:
            rel = Path(path).resolve().relative_to(Path(folder).resolve())
        except (ValueError, OSError):
            continue
        return {"uri": rel.as_posix(), "uriBaseId": base}
    return artifact(path)


def sarif_of_audit(data: dict[str, Any], version: str = "0",
                   roots: Sequence[tuple[str, str]] = ()) -> str:
    """The audit's JSON report (``formal.audit.report.audit_json``) as SARIF for code
    scanning: one result per operand that differs from the spec, cannot be read or is not in
    the spec, and per warning of the headers.  A difference the correction of a known erratum
    explains (the library follows the correction) is a suppressed result.  ``roots``: the
    folders the header paths are made relative to, each with its ``uriBaseId`` (the CUTLASS
    include directory as ``CUTLASS_INCLUDE``); SRCROOT, the working folder, comes last."""
    roots = [*roots, ("SRCROOT", os.getcwd())]
    results: list[dict[str, Any]] = []
    levels = {"differs": "error", "unreadable": "warning", "not-in-spec": "note"}
    for atom in data.get("atoms", ()):
        ops = atom.get("operands", ())
        followed = {e["operand"] for e in ops
                    if e.get("against") == "correction" and e.get("verdict") == "equal"}
        for e in ops:
            if e.get("verdict") == "equal" or e.get("against") != "spec":
                continue
            kind = f"audit-{e['verdict']}"
            text = f"{atom['atom']} {e['operand']}: {e.get('message') or e['verdict']}" + (
                f" (the spec's {e['spec_layout']})" if e.get("spec_layout") else "")
            result: dict[str, Any] = {
                "ruleId": kind, "level": levels.get(e["verdict"], "warning"),
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": _located(atom["file"], roots),
                    "region": {"startLine": max(1, int(atom.get("line") or 1))}},
                    "logicalLocations": [{"name": atom["atom"], "kind": "type"}]}],
                "partialFingerprints": {"ptxlayout/v1": fingerprint(
                    kind, atom["atom"], e["operand"], PurePath(atom["file"]).name,
                    e.get("message") or "")},
            }
            if e.get("counterexample") is not None:
                result["properties"] = {"counterexample": e["counterexample"]}
            if e["operand"] in followed:
                result["suppressions"] = [{"kind": "external", "justification":
                                           "the library follows the correction of a known "
                                           "erratum of the spec"}]
            results.append(result)
    for w in data.get("warnings", ()):
        results.append({
            "ruleId": w["kind"], "level": "warning", "message": {"text": w["message"]},
            "locations": [{"physicalLocation": {
                "artifactLocation": _located(w["file"], roots),
                "region": {"startLine": max(1, int(w.get("line") or 1)),
                           "startColumn": max(1, int(w.get("column") or 1))}}}],
            "partialFingerprints": {"ptxlayout/v1": fingerprint(
                w["kind"], PurePath(w["file"]).name, w["message"])},
        })
    rules = sorted({str(r["ruleId"]) for r in results})
    for r in results:
        r["ruleIndex"] = rules.index(r["ruleId"])
    bases = {base: {"uri": Path(folder).resolve().as_uri() + "/"}
             for base, folder in roots if base != "SRCROOT"}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "version": version,
                            "informationUri": INFORMATION_URI,
                            "rules": [rule(r) for r in rules]}},
        **({"originalUriBaseIds": bases} if bases else {}),
        "results": results,
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def audit_output(text: str, fmt: str, version: str, quiet: bool = False,
                 include: str | Path | None = None) -> str:
    """The audit's report as the user asked for it, from what ``formal.audit.report`` wrote:
    ``json`` with the ``version`` first; ``sarif`` made from the JSON (``sarif_of_audit``,
    header paths relative to the CUTLASS ``include`` folder); ``text`` with ``quiet``: the
    problems only (no family table, no count of the atoms found equal)."""
    if fmt in ("json", "sarif"):
        data = json.loads(text)
        if fmt == "sarif":
            roots = [("CUTLASS_INCLUDE", str(include))] if include else []
            return sarif_of_audit(data, version, roots)
        return json.dumps({"version": version, **data}, indent=1) + "\n"
    if fmt != "text" or not quiet:
        return text
    return "".join(f"{x}\n" for x in text.splitlines()
                   if x and not _TABLE_ROW.match(x) and not x.startswith("("))


# a row of the audit's family table (``mma  1290  5120  12  0  0``) or its header
_TABLE_ROW = re.compile(r"family\s|\S+(\s+\d+){5}$")
