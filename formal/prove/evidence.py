"""GPU evidence: what a real device showed, kept as JSON under ``proofs/evidence/``.

``python -m formal.execute.gpu --record proofs/evidence`` writes one file per run::

    {"schema": 1, "device": "NVIDIA H100 80GB HBM3", "sm": 90, "driver": "580.159.04",
     "cuda": "...", "date": "2026-11-22T09:00:00Z", "seconds": 9.1,
     "runs": [{"key", "instruction", "shape", "types": {a, b, c, d}, "selector", "mode":
               "check" | "discover", "layout_hashes": {A, B, C/D, metadata}, "trials",
               "seed", "result": match | mismatch | not-executed | compiled-only | error,
               "detail", "discovered_hashes" (discover runs), "erratum" (the id of the
               spec's layout the run packed with, where it ran an erratum), "d_cells"
               (mismatch: the differing D cells, [row, col] or [row, col, product])}],
     "discovered": {map_hash: {"instruction", "shape", "operand", "kind", "columns",
                               "rows"}},
     "maps": {map_hash: {...the same...}}}

``layout_hashes`` are ``formal.model.cells.map_hash`` of the maps the run packed with; a discover
run's ``discovered_hashes`` are the same hash of the maps the hardware showed (named as the
given layouts name them, see ``formal.execute.discover``), and ``discovered`` keeps the cell
tables of those that differ from every given one -- a map equal to a given layout is its hash.

``maps`` keeps the cell tables of the corrected maps that erratum runs replaced, so a verdict
can show the spec's cell beside the cell the hardware confirmed.

``Evidence.verdict(layout)`` is the ``hardware`` obligation of ``formal.prove``.  A worked
example: the layout ``mma.m16n8k16.A.u8-s8`` (hash ``8148...``) serves four variants (s8/u8 x
s8/u8); a ``match`` run of any of them that packed A with ``8148...`` proves it ("confirmed
on NVIDIA H100 80GB HBM3, 2026-11-22: 4 of 4 variants"); a discover run whose A differs
refutes it with the first (lane, element) whose cell differs (compared up to renaming rows and
columns, which no experiment can observe); no run of its variants, or only ``compiled-only``
ones, is not-applicable.  A layout whose map a run showed wrong -- a ``mismatch`` packed with
it, and a ``match`` of the same variant and selector that differs only in this operand's map
-- is refuted by the first (lane, element) whose cell differs from the confirmed map, both
cells shown, with the D cells that differed: so the spec's erratum layouts
(``catalog:mma.m16n8k16.A.f64``, ``catalog:mma.m16n8k256.A.b1``) are refuted by the same run
that proves their corrections.  A document's layout (a seed's, say) with the same map as a
confirmed one is proved by that evidence: the hash is of the map, not of the text.

Whether the evidence still covers the current layouts (for CI) is ``formal.out.evidence.stale``,
run as ``ptxlayout evidence proofs/evidence``.

This module imports neither numpy nor the prover at import time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.variants import VARIANTS, layout_serves, runs_on


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
    erratum: str = ""
    d_cells: tuple[tuple[int, ...], ...] = ()

    @staticmethod
    def of(d: Mapping[str, Any], f: EvidenceFile) -> EvidenceRun:
        return EvidenceRun(str(d.get("key", "")), d.get("selector"), str(d.get("mode", "check")),
                           str(d.get("result", "")), dict(d.get("layout_hashes") or {}),
                           dict(d.get("discovered_hashes") or {}), int(d.get("trials") or 0),
                           str(d.get("detail", "")), f, str(d.get("erratum") or ""),
                           tuple(tuple(int(x) for x in c) for c in d.get("d_cells") or ()))


@dataclass
class EvidenceFile:
    path: str
    device: str
    sm: int
    driver: str
    date: str
    runs: list[EvidenceRun] = field(default_factory=list)
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.device} (sm_{self.sm}, driver {self.driver}), {self.date[:10]}"


def default_dir() -> Path | None:
    """The evidence shipped with ptxlayout: inside the installed package, or the repository's
    ``proofs/evidence`` in a source checkout (None when neither exists)."""
    package = Path(__file__).resolve().parents[1]  # formal/
    for candidate in (package / "evidence_data", package.parent / "proofs" / "evidence"):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    return None


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
                             discovered=dict(doc.get("discovered") or {}),
                             maps=dict(doc.get("maps") or {}))
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

    def kept_map(self, h: str) -> dict[str, Any] | None:
        """A cell table the evidence keeps by hash (``maps``, else ``discovered``)."""
        for f in reversed(self.files):
            if h in f.maps:
                return f.maps[h]
        return self.discovered_map(h)

    def shown_wrong(self, op: str, h: str, keys: Iterable[str]) \
            -> tuple[EvidenceRun, EvidenceRun, dict[str, Any]] | None:
        """(mismatch, match, confirmed table): a run of one of ``keys`` packed with map ``h``
        for ``op`` that mismatched, and a match of the same variant and selector, with a
        kept table, whose maps differ from it only in ``op``."""
        keys = set(keys)
        checks = [r for r in self.runs if r.mode == "check" and r.key in keys]
        for bad in reversed([r for r in checks if r.result == "mismatch"
                             and r.layout_hashes.get(op) == h]):
            for good in reversed(checks):
                if good.result != "match" or good.key != bad.key \
                        or good.selector != bad.selector:
                    continue
                gh = good.layout_hashes.get(op)
                if gh in (None, h) or any(good.layout_hashes.get(o) != x
                                          for o, x in bad.layout_hashes.items() if o != op):
                    continue
                table = self.kept_map(str(gh))
                if table is not None:
                    return bad, good, table
        return None

    # -- the 'hardware' obligation
    def verdict(self, lay: Any) -> Any:
        from ..model.cells import cell_rows, map_hash
        from .verdicts import Verdict

        variants = [v for v in VARIANTS if layout_serves(
            v, lay.operand, lay.instruction, str(lay.shape), lay.types, lay.id,
            lay.arrangement)]
        if not variants:
            return Verdict("hardware", "not-applicable",
                           "no instruction variant of the table uses this layout")
        kind, rows = cell_rows(lay)
        if not rows:
            return Verdict("hardware", "not-applicable", "the layout has no cell table")
        h = map_hash(lay, (kind, rows))
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
        wrong = self.shown_wrong(op, h, keys)
        if wrong is not None:
            bad, good, table = wrong
            cex = distinguish(kind, rows, table, relabel=False)
            if cex is not None:
                cells = ", ".join(_cell_name(c) for c in bad.d_cells[:8]) + \
                    (" ..." if len(bad.d_cells) > 8 else "")
                cex = {**cex, "variant": bad.key, "selector": bad.selector,
                       "confirmed_hash": good.layout_hashes.get(op),
                       "d_cells": [list(c) for c in bad.d_cells]}
                return Verdict(
                    "hardware", "refuted",
                    f"{bad.key} on {bad.file.where}: packed by this map, D differs"
                    + (f" in {cells}" if cells else "") + f"; with the map that the same "
                    f"device confirmed ({good.layout_hashes.get(op)}, {good.trials} trials "
                    f"bit-exact) lane {cex['lane']} element {cex['element']} is at "
                    f"{_show(cex['hardware'])}, this layout puts it at {_show(cex['layout'])}",
                    cex, None, "error", "gpu")
        recovered = [r for r in mine if r.mode == "discover"
                     and r.discovered_hashes.get(op) == h]
        if recovered:
            r = recovered[-1]
            return Verdict("hardware", "proved",
                           f"recovered from the hardware alone on {r.file.where} ({r.key}, "
                           "one-hot discovery, up to relabeling)", None, None, "error",
                           "gpu-discovery")
        failed = [r for r in mine if r.mode == "check" and r.result == "mismatch"
                  and r.layout_hashes.get(op) == h]
        if failed:
            fr = failed[-1]
            return Verdict("hardware", "unknown",
                           f"{fr.key} mismatched on {fr.file.where} (which operand "
                           f"is wrong needs --discover): {fr.detail[:300]}",
                           None, None, "error", "gpu")
        if mine and all(r.result == "compiled-only" for r in mine):
            return Verdict("hardware", "not-applicable",
                           f"compiled only: its variants need {variants[0].target}; no device "
                           "of the evidence runs them")
        return Verdict("hardware", "not-applicable",
                       "no GPU evidence for this layout's variants with its current map")


def _show(cell: Mapping[str, Any] | None) -> str:
    if cell is None:
        return "no cell"
    return "(" + ", ".join(f"{k} {v}" for k, v in cell.items()) + ")"


def _cell_name(c: Sequence[int]) -> str:
    return f"D[{c[0]}][{c[1]}]" + (f" of product {c[2]}" if len(c) > 2 else "")


def _canonical(rows: Sequence[Mapping[str, int]], names: Sequence[str]) -> list[tuple[Any, ...]]:
    """Cells with each named coordinate renamed 0, 1, ... in order of first appearance (a
    replicated layout's rows and columns are renamed within their product)."""
    tables: dict[str, dict[Any, int]] = {n: {} for n in names}
    out = []
    for r in sorted(rows, key=lambda r: (r["lane"], r["element"])):
        cell = []
        for n in names:
            t = tables[n]
            label = (int(r.get("group", 0)), int(r[n]))
            t.setdefault(label, len(t))
            cell.append(t[label])
        out.append((int(r["lane"]), int(r["element"]), *cell))
    return out


def distinguish(kind: str, rows: Sequence[Mapping[str, Any]],
                found: Mapping[str, Any], relabel: bool = True) -> dict[str, Any] | None:
    """The first cell where the layout's table and a map the hardware showed disagree, or
    None.  ``relabel``: compare up to renaming rows and columns (a discovered map); without
    it, exactly (a map confirmed by a check run with the same other operands)."""
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
    relabel = relabel and names == ["row", "col"]
    if any("group" in r for r in (*rows[:1], *hw[:1])):
        names.append("group")
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
            return {"message": f"lane {k[0]} element {k[1]} is at {_cell_text(show_a)} in the "
                               f"layout but at {_cell_text(show_b)} on the hardware" +
                               (" (up to renaming rows and columns)" if relabel else ""),
                    "lane": k[0], "element": k[1], "layout": show_a, "hardware": show_b}
    return None


def _cell_text(cell: Mapping[str, Any] | None) -> str:
    """``(row 8, col 0)``; a (lane, element) the map leaves out is at ``no cell``."""
    if cell is None:
        return "no cell"
    return "(" + ", ".join(f"{k} {v}" for k, v in cell.items()) + ")"


__all__ = ["Evidence", "EvidenceFile", "EvidenceRun", "default_dir", "distinguish"]
