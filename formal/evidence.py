"""GPU evidence: what a real device showed, kept as JSON under ``proofs/evidence/``.

``python -m formal.execute.gpu --record proofs/evidence`` writes one file per run::

    {"schema": 1, "device": "NVIDIA H100 80GB HBM3", "sm": 90, "driver": "580.159.04",
     "cuda": "...", "date": "2026-11-22T09:00:00Z", "seconds": 9.1,
     "runs": [{"key", "instruction", "shape", "types": {a, b, c, d}, "selector", "mode":
               "check" | "discover", "layout_hashes": {A, B, C/D, metadata}, "trials",
               "seed", "result": match | mismatch | not-executed | compiled-only | error,
               "detail", "discovered_hashes" (discover runs)}],
     "discovered": {map_hash: {"instruction", "shape", "operand", "kind", "columns",
                               "rows"}}}

``layout_hashes`` are ``formal.export.map_hash`` of the maps the run packed with; a discover
run's ``discovered_hashes`` are the same hash of the maps the hardware showed (named as the
given layouts name them, see ``formal.execute.discover``), and ``discovered`` keeps the cell
tables of those that differ from every given one -- a map equal to a given layout is its hash.

``Evidence.verdict(layout, m)`` is the ``hardware`` obligation of ``formal.prove``.  A worked
example: the layout ``mma.m16n8k16.A.u8-s8`` (hash ``8148...``) serves four variants (s8/u8 x
s8/u8); a ``match`` run of any of them that packed A with ``8148...`` proves it ("confirmed
on NVIDIA H100 80GB HBM3, 2026-11-22: 4 of 4 variants"); a discover run whose A differs
refutes it with the first (lane, element) whose cell differs (compared up to renaming rows and
columns, which no experiment can observe); no run of its variants, or only ``compiled-only``
ones, is not-applicable.

``stale(evidence, layouts)`` is for CI: every variant the evidence's device can run and the
layouts describe must have a ``match`` whose layout hashes equal the current ones.

This module imports neither numpy nor the prover at import time.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .variants import VARIANTS, layout_serves, records_by_operand, runs_on


@dataclass(frozen=True)
class EvidenceRun:
    key: str
    selector: int | None
    mode: str
    result: str
    layout_hashes: dict[str, str]
    discovered_hashes: dict[str, str]
    trials: int
    detail: str
    file: EvidenceFile

    @staticmethod
    def of(d: Mapping[str, Any], f: EvidenceFile) -> EvidenceRun:
        return EvidenceRun(str(d.get("key", "")), d.get("selector"), str(d.get("mode", "check")),
                           str(d.get("result", "")), dict(d.get("layout_hashes") or {}),
                           dict(d.get("discovered_hashes") or {}), int(d.get("trials") or 0),
                           str(d.get("detail", "")), f)


@dataclass
class EvidenceFile:
    path: str
    device: str
    sm: int
    driver: str
    date: str
    runs: list[EvidenceRun] = field(default_factory=list)
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.device} (sm_{self.sm}, driver {self.driver}), {self.date[:10]}"


class Evidence:
    """Every evidence file of a folder (or one file)."""

    def __init__(self, files: Sequence[EvidenceFile] = ()) -> None:
        self.files = sorted(files, key=lambda f: f.date)

    @classmethod
    def load(cls, path: str | Path) -> Evidence:
        p = Path(path)
        if p.is_dir():
            paths = sorted(p.glob("*.json"))
        elif p.is_file():
            paths = [p]
        else:
            raise FileNotFoundError(f"no evidence at {p}")
        files = []
        for q in paths:
            with open(q, encoding="utf-8") as fh:
                doc = json.load(fh)
            f = EvidenceFile(str(q), str(doc.get("device", "?")), int(doc.get("sm") or 0),
                             str(doc.get("driver", "?")), str(doc.get("date", "")),
                             discovered=dict(doc.get("discovered") or {}))
            f.runs = [EvidenceRun.of(r, f) for r in doc.get("runs") or ()]
            files.append(f)
        return cls(files)

    @property
    def runs(self) -> list[EvidenceRun]:
        return [r for f in self.files for r in f.runs]

    @property
    def sm(self) -> int:
        return max((f.sm for f in self.files), default=0)

    def discovered_map(self, h: str) -> dict[str, Any] | None:
        for f in reversed(self.files):
            if h in f.discovered:
                return f.discovered[h]
        return None

    # -- the 'hardware' obligation
    def verdict(self, lay: Any, m: Any = None) -> Any:
        from .export import cell_rows, map_hash
        from .prove import Verdict

        variants = [v for v in VARIANTS if layout_serves(
            v, lay.operand, lay.instruction, str(lay.shape), lay.types, lay.id)]
        if not variants:
            return Verdict("hardware", "not-applicable",
                           "no instruction variant of the table uses this layout")
        kind, rows = cell_rows(lay)
        if not rows:
            return Verdict("hardware", "not-applicable", "the layout has no cell table")
        h = map_hash(lay)
        keys = {v.key for v in variants}
        op = lay.operand
        mine = [r for r in self.runs if r.key in keys]
        # refuted: a discovery of one of its variants shows another map
        for r in reversed(mine):
            if r.mode != "discover" or op not in r.discovered_hashes:
                continue
            dh = r.discovered_hashes[op]
            if dh == h:
                continue
            found = self.discovered_map(dh)
            if found is None:
                continue
            cex = distinguish(kind, rows, found)
            if cex is not None:
                where = r.file.where
                return Verdict("hardware", "refuted",
                               f"{r.key} on {where}: {cex['message']}", cex, None, "error",
                               "gpu-discovery")
        confirmed = [r for r in mine if r.mode == "check" and r.result == "match"
                     and r.layout_hashes.get(op) == h]
        if confirmed:
            last = confirmed[-1].file
            ok_keys = {r.key for r in confirmed}
            runnable = [v for v in variants if any(runs_on(v, f.sm) for f in self.files)]
            trials = sum(r.trials for r in confirmed)
            return Verdict("hardware", "proved",
                           f"confirmed on {last.where}: {len(ok_keys)} of {len(runnable)} "
                           f"runnable variants, {len(confirmed)} runs, {trials} trials "
                           "bit-exact", None, None, "error", "gpu")
        recovered = [r for r in mine if r.mode == "discover"
                     and r.discovered_hashes.get(op) == h]
        if recovered:
            r = recovered[-1]
            return Verdict("hardware", "proved",
                           f"recovered from the hardware alone on {r.file.where} ({r.key}, "
                           "one-hot discovery, up to relabeling)", None, None, "error",
                           "gpu-discovery")
        bad = [r for r in mine if r.mode == "check" and r.result == "mismatch"
               and r.layout_hashes.get(op) == h]
        if bad:
            return Verdict("hardware", "unknown",
                           f"{bad[-1].key} mismatched on {bad[-1].file.where} (which operand "
                           f"is wrong needs --discover): {bad[-1].detail[:300]}",
                           None, None, "error", "gpu")
        if mine and all(r.result == "compiled-only" for r in mine):
            return Verdict("hardware", "not-applicable",
                           f"compiled only: its variants need {variants[0].target}; no device "
                           "of the evidence runs them")
        return Verdict("hardware", "not-applicable",
                       "no GPU evidence for this layout's variants with its current map")


def _canonical(rows: Sequence[Mapping[str, int]], names: Sequence[str]) -> list[tuple[Any, ...]]:
    """Cells with each named coordinate renamed 0, 1, ... in order of first appearance."""
    tables: dict[str, dict[int, int]] = {n: {} for n in names}
    out = []
    for r in sorted(rows, key=lambda r: (r["lane"], r["element"])):
        cell = []
        for n in names:
            t = tables[n]
            t.setdefault(int(r[n]), len(t))
            cell.append(t[int(r[n])])
        out.append((int(r["lane"]), int(r["element"]), *cell))
    return out


def distinguish(kind: str, rows: Sequence[Mapping[str, Any]],
                found: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first cell where the layout's table and a discovered map disagree, or None."""
    cols = list(found.get("columns") or ())
    hw = [dict(zip(cols, r, strict=True)) for r in found.get("rows") or ()]
    if kind == "fields":
        key = ("selector", "lane", "bit_lo", "bit_hi")
        mine = {tuple(r[k] for k in key): r for r in rows}
        theirs = {tuple(r[k] for k in key): r for r in hw}
        for k in sorted(set(mine) | set(theirs)):
            a, b = mine.get(k), theirs.get(k)
            fa = None if a is None else (a["row"], a["chunk"], a["slot"])
            fb = None if b is None else (b["row"], b["chunk"], b["slot"])
            if fa != fb:
                return {"message": f"selector {k[0]} lane {k[1]} bits {k[2]}..{k[3]}: the "
                                   f"layout says (row, chunk, slot) {fa}, the hardware reads "
                                   f"{fb}",
                        "selector": k[0], "lane": k[1], "bit_lo": k[2], "layout": fa,
                        "hardware": fb}
        return None
    names = ["row", "col"] if rows and "col" in rows[0] else ["row", "firstcol", "lastcol"]
    relabel = names == ["row", "col"]
    a_c = _canonical(rows, names) if relabel else [
        (int(r["lane"]), int(r["element"]), *(int(r[n]) for n in names)) for r in rows]
    b_c = _canonical(hw, names) if relabel else [
        (int(r["lane"]), int(r["element"]), *(int(r[n]) for n in names)) for r in hw]
    by_a: dict[tuple[Any, ...], tuple[Any, ...]] = {x[:2]: x for x in a_c}
    by_b: dict[tuple[Any, ...], tuple[Any, ...]] = {x[:2]: x for x in b_c}
    orig_a: dict[tuple[Any, ...], Mapping[str, Any]] = {
        (int(r["lane"]), int(r["element"])): r for r in rows}
    orig_b: dict[tuple[Any, ...], Mapping[str, Any]] = {
        (int(r["lane"]), int(r["element"])): r for r in hw}
    for k in sorted(set(by_a) | set(by_b)):
        if by_a.get(k) != by_b.get(k):
            la = orig_a.get(k)
            lb = orig_b.get(k)
            show_a = None if la is None else {n: la[n] for n in names}
            show_b = None if lb is None else {n: lb[n] for n in names}
            return {"message": f"lane {k[0]} element {k[1]} is at {show_a} in the layout but "
                               f"at {show_b} on the hardware" +
                               (" (up to renaming rows and columns)" if relabel else ""),
                    "lane": k[0], "element": k[1], "layout": show_a, "hardware": show_b}
    return None


def _as_records(layouts: Iterable[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    lays = list(layouts)
    objs = [x for x in lays if not isinstance(x, Mapping)]
    if objs:
        from .export import layout_record

        by_id = {x.id: x for x in objs}
        out.extend(layout_record(x, by_id) for x in objs)
    out.extend(x for x in lays if isinstance(x, Mapping))
    return out


def stale(evidence: Evidence, layouts: Iterable[Any], sm: int | None = None) -> list[str]:
    """Variants the evidence's device can run and the layouts describe, lacking a ``match``
    with the current layout hashes (one line each; empty: the evidence is current)."""
    records = _as_records(layouts)
    target = sm or evidence.sm or 90
    runs = [r for r in evidence.runs if r.mode == "check" and r.result == "match"]
    out = []
    for v in VARIANTS:
        if not runs_on(v, target):
            continue
        recs = records_by_operand(v, records)
        if len(recs) < (4 if v.sparse else 3) or any(not r.get("map_hash")
                                                     for r in recs.values()):
            continue
        want = {op: str(r["map_hash"]) for op, r in recs.items()}
        for sel in (v.selectors or (None,)):
            if not any(r.key == v.key and r.selector == sel
                       and all(r.layout_hashes.get(op) == h for op, h in want.items())
                       for r in runs):
                label = v.key + ("" if sel is None else f" selector {sel}")
                old = [r for r in evidence.runs if r.key == v.key and r.selector == sel
                       and r.mode == "check"]
                why = "no run" if not old else (
                    f"last run {old[-1].result}" if old[-1].result != "match"
                    else "the layouts changed since " + old[-1].file.date[:10])
                out.append(f"{label}: no hardware match for the current layouts ({why}; "
                           + ", ".join(f"{k} {h}" for k, h in want.items()) + ")")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m formal.evidence DIR [--layouts JSON]``: exit 1 when evidence is stale."""
    ap = argparse.ArgumentParser(prog="python -m formal.evidence",
                                 description="Is the GPU evidence current for the layouts?")
    ap.add_argument("evidence", help="proofs/evidence (a folder or one file)")
    ap.add_argument("--layouts", help="layouts JSON (default: export the embedded catalog)")
    ap.add_argument("--sm", type=int, help="the device class to require (default: the "
                                           "evidence's)")
    args = ap.parse_args(argv)
    try:
        ev = Evidence.load(args.evidence)
    except (OSError, ValueError) as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    if args.layouts:
        with open(args.layouts, encoding="utf-8") as fh:
            records: list[Any] = list(json.load(fh)["layouts"])
    else:
        from .api import model_of

        records = list(model_of([]).layouts)
    lines = stale(ev, records, args.sm)
    for line in lines:
        print(line)
    print(f"{len(lines)} stale of the variants sm_{args.sm or ev.sm or 90} runs "
          f"({len(ev.files)} evidence files)")
    return 1 if lines else 0


__all__ = ["Evidence", "EvidenceFile", "EvidenceRun", "stale", "distinguish", "main"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
