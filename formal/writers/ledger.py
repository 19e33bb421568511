"""The proof ledger: what was proven for which document revision, and which findings are known.

``ptxlayout prove --ledger proofs/`` writes ``proofs/ledger.json``::

    {"documents": [{"name": "catalog/dense-integer.md", "sha256": "..."}],
     "layouts": {"catalog:mma.m16n8k16.A.u8-s8":
                    {"formula": "3f0c...", "map": "91ab...",
                     "obligations": {"cases": "proved", "injective": "proved", ...}}},
     "findings": [{"kind", "document", "line", "column", "layout", "message"}]}

``proofs/accepted.json`` (edited by hand) lists the findings a project accepts -- typically a
known erratum of the spec -- each with a one-line reason::

    [{"kind": "element-list", "layout": "mma.m16n8k16.CD.f16", "reason": "erratum 1234: ..."}]

``ptxlayout prove --check-ledger proofs/`` recomputes everything and exits 1 when anything
drifted: a layout added or removed, a formula or map that changed, an obligation whose status
changed, a new finding, a finding that disappeared -- or an error finding nobody accepted.
That makes the ledger the "proof run in CI" a project copies into its pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..base.files import load_json, write_atomic
from ..base.source import Finding
from ..model.layout import Model
from ..prove.verdicts import Proof

LEDGER = "ledger.json"
ACCEPTED = "accepted.json"


def _finding_key(f: Finding) -> dict[str, Any]:
    return {"kind": f.kind, "severity": f.severity, "document": f.span.document,
            "line": f.span.line, "column": f.span.column,
            "layout": f.layout.split(":", 1)[-1] if f.layout else "", "message": f.message}


def snapshot(model: Model, proof: Proof) -> dict[str, Any]:
    from ..model.cells import map_hash
    docs = sorted({(d.name, d.digest) for d in model.documents})
    layouts: dict[str, Any] = {}
    for r in proof.results:
        lay = r.layout
        layouts[lay.id] = {
            "formula": lay.formula_hash(),
            "map": map_hash(lay) if lay.formulas else None,
            "source": lay.source,
            "obligations": {v.name: v.status for v in r.verdicts},
        }
    for sr in proof.smem:  # the shared-memory layouts, examples and tables
        names = _numbered(v.name for v in sr.verdicts)
        layouts[smem_key(sr)] = {"formula": sr.formula, "map": sr.map, "source": "smem",
                                 "obligations": {n: v.status
                                                 for n, v in zip(names, sr.verdicts)}}
    findings = sorted((_finding_key(f) for f in proof.findings),
                      key=lambda d: (d["document"], d["line"], d["column"], d["kind"],
                                     d["message"]))
    return {"documents": [{"name": n, "sha256": h} for n, h in docs],
            "layouts": dict(sorted(layouts.items())), "findings": findings}


def smem_key(sr: Any) -> str:
    """A shared-memory entry's ledger key: ``catalog:wgmma.smem.K-major.128B.b16`` for the
    embedded catalog's, ``<document name>:<id>`` for a document's."""
    doc = sr.span.document
    return f"{'catalog' if doc.startswith('catalog/') else Path(doc).name}:{sr.id}"


def _numbered(names: Any) -> list[str]:
    """Obligation names, a repeated one numbered (an example's two ``encoding`` verdicts,
    LBO's and SBO's, are ``encoding`` and ``encoding#2``)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def write_ledger(directory: str | Path, model: Model, proof: Proof) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / LEDGER
    # all or nothing: a kill or a full disk leaves the old ledger, never an empty one
    write_atomic(path, json.dumps(snapshot(model, proof), indent=1, sort_keys=True) + "\n")
    acc = d / ACCEPTED
    if not acc.exists():
        write_atomic(acc, "[]\n")
    return path


def _load(path: Path) -> Any:
    """A ledger file's JSON (``base.files.load_json``: a FIFO, a nesting too deep or a
    file that is not JSON is a ``ValueError`` naming the file)."""
    try:
        return load_json(path)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def load_accepted(directory: str | Path) -> list[dict[str, Any]]:
    p = Path(directory) / ACCEPTED
    if not p.exists():
        return []
    data = _load(p)
    if not isinstance(data, list):
        raise ValueError(f"{p}: expected a JSON list of accepted findings")
    for k, entry in enumerate(data):
        if not isinstance(entry, dict) or not entry.get("reason"):
            raise ValueError(f"{p}: entry {k} needs a 'reason'")
    return data


# the keys an accepted entry may select a finding by, with their types; and the others it may
# carry
SELECTORS: dict[str, type] = {"kind": str, "layout": str, "document": str, "line": int,
                              "column": int, "message": str}
NOTES = ("reason", "severity")


def read_accept_file(path: str | Path) -> list[tuple[str, int, dict[str, Any]]]:
    """The entries of an ``--accept`` file as (file, entry number, entry); a ``ValueError``
    of one line when the file cannot be read or an entry cannot be used."""
    try:
        data = load_json(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    return accept_entries(data, str(path))


def accept_entries(data: Any, where: str) -> list[tuple[str, int, dict[str, Any]]]:
    """``data`` as a list of accept entries (``accept_entry_problem`` for each); a
    ``ValueError`` naming ``where`` and the first entry that cannot be used."""
    if not isinstance(data, list):
        raise ValueError(f"{where}: expected a JSON list of accepted findings")
    out = []
    for k, entry in enumerate(data, 1):
        why = accept_entry_problem(entry)
        if why:
            raise ValueError(f"{where}: entry {k} {json.dumps(entry)} {why}")
        out.append((where, k, entry))
    return out


def accept_entry_problem(entry: Any) -> str:
    """Why an entry of an accept file cannot be used ("" when it can): not an object, a key
    no finding has (a misspelling would otherwise accept every error), a value of the wrong
    type, or no key to select by at all (``{"reason": "oops"}`` would accept every error)."""
    if not isinstance(entry, dict):
        return "is not a JSON object"
    unknown = sorted(k for k in entry if k not in SELECTORS and k not in NOTES)
    if unknown:
        return f"has unknown key(s) {', '.join(map(repr, unknown))} (known: " \
               f"{', '.join(sorted([*SELECTORS, *NOTES]))})"
    for k, t in SELECTORS.items():
        if k in entry and (not isinstance(entry[k], t) or isinstance(entry[k], bool)):
            return f"has {k!r} of the wrong type (a {t.__name__} is meant)"
    if not any(k in entry for k in SELECTORS):
        return f"names none of {', '.join(SELECTORS)}, so it would accept every error"
    return ""


def accepts_any(entry: dict[str, Any], findings: Sequence[Finding]) -> bool:
    """Does the entry accept at least one error finding of ``findings``?"""
    return any(accepts(entry, _finding_key(f)) for f in findings if f.severity == "error")


def accepts(entry: dict[str, Any], f: dict[str, Any]) -> bool:
    """Does an accepted entry match a finding?  Every key it names must agree."""
    for key in ("kind", "layout", "document", "line", "column", "message"):
        if key in entry:
            want = entry[key]
            got = f.get(key)
            if key == "message":
                if str(want) not in str(got):
                    return False
            elif want != got:
                return False
    return True


def accept_findings(findings: Sequence[Finding],
                    entries: Sequence[dict[str, Any]]) -> tuple[Finding, ...]:
    """The findings, each an entry accepts marked so (its reason attached)."""
    out = []
    for f in findings:
        if f.severity == "error" and not f.accepted:
            key = _finding_key(f)
            hit = next((e for e in entries if accepts(e, key)), None)
            if hit is not None:
                f = replace(f, accepted=str(hit.get("reason", "accepted")))
        out.append(f)
    return tuple(out)


def mark_accepted(proof: Proof, entries: Sequence[dict[str, Any]]) -> Proof:
    """The proof with every finding an entry accepts marked so (its reason attached)."""
    if not entries:
        return proof
    return replace(proof, findings=accept_findings(proof.findings, entries))


def check_ledger(directory: str | Path, model: Model, proof: Proof) -> list[str]:
    """Every way the current proof differs from the ledger, one line each (empty: no drift);
    a ledger that cannot be read is an ``OSError`` or ``ValueError``."""
    d = Path(directory)
    path = d / LEDGER
    if not path.exists():
        return [f"{path}: no ledger (write one with --ledger {directory})"]
    old = _load(path)  # an unreadable ledger is an OSError or ValueError, not drift
    if not isinstance(old, dict) or not isinstance(old.get("layouts", {}), dict):
        raise ValueError(f"{path}: not a ledger (a JSON object with 'layouts' and 'findings')")
    new = snapshot(model, proof)
    out: list[str] = []
    old_l, new_l = old.get("layouts", {}), new["layouts"]
    for lid in sorted(set(old_l) - set(new_l)):
        out.append(f"drift: layout {lid} is gone")
    for lid in sorted(set(new_l) - set(old_l)):
        out.append(f"drift: layout {lid} is new")
    for lid in sorted(set(old_l) & set(new_l)):
        a, b = old_l[lid], new_l[lid]
        if a.get("formula") != b["formula"]:
            same_map = a.get("map") == b["map"]
            out.append(f"drift: {lid}: the formulas changed"
                       + (" (the map is the same)" if same_map else " and so did the map"))
        elif a.get("map") != b["map"]:
            out.append(f"drift: {lid}: the map changed")
        for name, status in sorted(b["obligations"].items()):
            was = a.get("obligations", {}).get(name)
            if was != status:
                out.append(f"drift: {lid}: {name} was {was}, is {status}")
    def key(f: dict[str, Any]) -> tuple[Any, ...]:
        return (f["kind"], f["document"], f["line"], f["column"], f["layout"], f["message"])
    old_f = {key(f) for f in old.get("findings", [])}
    new_f = {key(f): f for f in new["findings"]}
    for k in sorted(set(new_f) - old_f):
        f = new_f[k]
        out.append(f"drift: new finding {f['document']}:{f['line']}:{f['column']}: "
                   f"{f['kind']}: {f['message']}")
    for k in sorted(old_f - set(new_f)):
        out.append(f"drift: finding gone {k[1]}:{k[2]}:{k[3]}: {k[0]}: {k[5]}")
    accepted = load_accepted(d)
    already = {(f.span.document, f.span.line, f.span.column, f.kind, f.message)
               for f in proof.findings if f.accepted}
    for f in new["findings"]:
        if f["severity"] != "error":
            continue
        if (f["document"], f["line"], f["column"], f["kind"], f["message"]) in already:
            continue
        if not any(accepts(e, f) for e in accepted):
            out.append(f"unaccepted: {f['document']}:{f['line']}:{f['column']}: {f['kind']}: "
                       f"{f['message']} (accept it in {d / ACCEPTED} with a reason, or fix it)")
    for idx, e in enumerate(accepted):
        if not any(accepts(e, f) for f in new["findings"]):
            out.append(f"drift: accepted entry {idx} ({e.get('reason')}) matches no finding")
    return out


def gather_accepts(paths: Sequence[str | Path], strict: bool,
                   configured: Sequence[tuple[str, int, dict[str, Any]]] = ()) \
        -> tuple[list[tuple[str, int, dict[str, Any]]] | None, str]:
    """The accepted findings of ``prove`` as (file, entry number, entry): those of the
    ``--accept`` files and of ``[tool.ptxlayout]`` (``configured``); None when neither names
    any and not ``strict`` (the catalog's own errata are accepted then); empty with
    ``strict``, which accepts nothing.  The second value is a note for stderr ("" when none).
    A ``ValueError`` of one line when a file or an entry cannot be used."""
    if not (paths or strict or configured):
        return None, ""
    named = [*configured]
    for path in paths:
        named.extend(read_accept_file(path))
    if strict and named:  # accepts nothing, whatever --accept names
        return [], "--strict: the accepted findings of --accept and [tool.ptxlayout] are " \
                   "not applied"
    return ([] if strict else named), ""
