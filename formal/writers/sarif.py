"""SARIF 2.1.0 for code scanning: one result a finding, fit for GitHub's upload-sarif.

What code scanning needs beyond the format, on one finding (the seed's erratum at line 55)::

    artifactLocation   {"uri": "seeds/000.txt", "uriBaseId": "SRCROOT"}   relative to the
                       checkout (an absolute path outside it stays a file:// URI)
    partialFingerprints {"ptxlayout/v1": "3f2a..."}   the finding's kind, layout, document and
                       message hashed, so the alert keeps its identity when lines move
    rule               {"id": "injective", "shortDescription", "fullDescription", "helpUri"}

Nothing depends on the directory the command ran in except the relative URIs themselves,
which are what code scanning matches against the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path, PurePath

from ..prove.verdicts import Proof

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "ptxlayout"
INFORMATION_URI = "https://github.com/ptxlayout/ptxlayout"
HELP_URI = INFORMATION_URI + "/blob/main/docs/obligations.md"

_RULE_TEXT = {
    "cases": "The cases of a formula must cover every element exactly once",
    "guard": "A condition must admit only the elements a lane holds",
    "in-range": "Every (lane, element) must map inside the tile",
    "injective": "No two (lane, element) pairs may share a cell",
    "surjective": "Every cell of the tile must be held",
    "register-budget": "Registers x elements per register must match the tile",
    "element-list": "The element list must be x0 .. x(n-1)",
    "reference": "A 'same as' reference must resolve to a compatible layout",
    "type-names": "Type names must be real and legal for the operand",
    "sparse-chunks": "Sparse A must hold whole chunks with the stated non-zeros",
    "metadata-coverage": "Metadata must describe every (row, chunk, slot) once",
    "selector-range": "Metadata lanes per group must imply the selector range",
    "hardware": "The map must match the GPU",
    "parse": "The text must be readable",
    "punctuation": "Element lists should be punctuated consistently",
    "model": "Formulas must define every needed name",
    "input": "The document must be readable text",
    "limit": "Inputs must stay within limits",
    "internal": "Z3 and enumeration must agree",
    "unknown": "Every obligation must be decided",
    "element-name": "Conditions must name this operand's elements",
    "composes": "A producer's layout must be the consumer's, moved by the arrangement",
}


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
    short = _RULE_TEXT.get(kind, kind)
    return {"id": kind, "shortDescription": {"text": short},
            "fullDescription": {"text": f"{short}. A '{kind}' finding of ptxlayout: an error "
                                        "when the text contradicts itself, the instruction "
                                        "table or the hardware; a warning when a sentence "
                                        "could not be read."},
            "helpUri": f"{HELP_URI}#{kind}"}


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
