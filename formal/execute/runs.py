"""One unit of GPU work (``Task``) and one result (``Run``), for every family, and its record.

A worked example.  ``Task("mma.m16n8k16.f32.f16.f16.f32")`` asks for the checks (and, with
``--discover``, the discovery) of an mma row; ``Task("ldmatrix.m8n8.x4.b16", "discover")``
for the recovery of a move's map; ``Task("wgmma.m64n64k16.f32.f16.f16.rs", "experiment",
layout, expect="mismatch")`` for a wgmma run under a shared-memory layout that must NOT
match (LBO and SBO written into each other's field).  Each gives one ``Run`` per run:
``Run(variant, selector, "match", "8 trials bit-exact", 8, seed, {"A": "81..", ...})``, and
``run.record()`` is its line in the evidence file (``formal.prove.evidence`` reads it):

    {"key": "ldmatrix.m8n8.x4.b16", "instruction": "ldmatrix", "shape": "m8n8",
     "types": {"a": "b16"}, "selector": null, "mode": "check", "layout_hashes": {"r": ".."},
     "trials": 8, "seed": .., "result": "match", "detail": "8 trials bit-exact", "num": 4,
     "trans": false}

A run is as it should be (``ok``) when it shows what its task expects: a match, a mismatch
for an erratum layout or a planted error, anything for an experiment that is reported and
not judged (``expect="any"``); a run that could not execute here (``not-executed``,
``compiled-only``) is not a failure.  ``formal.execute.supervisor`` sends both through a pipe.

What one invocation shares is a ``Job`` (the layouts, errata and options every family reads);
what one task gives back is an ``Outcome`` (its runs, the maps a discovery showed, report
lines, the cell tables the evidence keeps); what the whole run gives is a ``Report``, whose
``evidence()`` is the file ``formal.execute.record`` writes.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.matrix_variants import variant
from ..base.variants import Variant
from .smem import SmemLayout

SCHEMA = 1  # of the evidence files

# a wgmma run's shared-memory layout, as ``formal.execute.smem.SmemLayout``'s fields (swizzle,
# lbo, sbo, swap_fields, major, mn_field); all zero: none
NO_LAYOUT: tuple[int, int, int, bool, str, str] = (0, 0, 0, False, "K", "sbo")


def short_text(text: str, limit: int = 600) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass(frozen=True)
class Task:
    """One unit of a run.  mma: a variant (its checks and discovery), or a variant packed with
    one of the spec's erratum layouts (``erratum``: that layout's id).  Moves and wgmma:
    ``mode`` check | discover | experiment | compile, the shared-memory ``layout`` (wgmma),
    the probed ``operand`` (descriptor probes: "A" | "B"), the result it ``expect``s and a
    deliberate map error to ``plant`` (``formal.execute.matrix.planted``)."""

    key: str
    mode: str = ""
    layout: tuple[int, int, int, bool, str, str] = NO_LAYOUT
    operand: str = ""
    expect: str = "match"
    plant: str = ""
    erratum: str = ""
    catalog: str = ""  # a catalog shared-memory layout and choice (formal.execute.smem_runs)

    @property
    def smem(self) -> SmemLayout | None:
        """The wgmma run's shared-memory layout (None: the task has none)."""
        if not self.layout[1] and not self.layout[0]:
            return None
        return SmemLayout(*self.layout)

    @property
    def label(self) -> str:
        if not self.mode:
            return self.key + (f" [{self.erratum} as written]" if self.erratum else "")
        extra = f" [{self.smem.name}]" if self.smem else ""
        extra += f" [{self.catalog}]" if self.catalog else ""
        extra += f" probe {self.operand}" if self.operand else ""
        extra += f" planted {self.plant}" if self.plant else ""
        return f"{self.key} {self.mode}{extra}"


@dataclass
class Run:
    """One evidence run: a variant (and selector) checked, discovered, probed or run under an
    experiment's layout."""

    variant: Variant
    selector: int | None
    result: str  # match | mismatch | not-executed | compiled-only | error
    detail: str = ""
    trials: int = 0
    seed: int | None = None
    layout_hashes: dict[str, str] = field(default_factory=dict)
    mode: str = "check"  # check | discover | experiment
    discovered_hashes: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    # the id of the spec's erratum layout this check packed with (expected: mismatch)
    erratum: str = ""
    # mismatch: the differing D cells, [row, col] (or [row, col, product] when the warp
    # computes several products), at most 64
    d_cells: list[list[int]] = field(default_factory=list)
    # wgmma: the shared-memory layout of the run (its fields, name and descriptor bits)
    smem_layout: dict[str, Any] | None = None
    probe: str = ""  # a wgmma descriptor probe's operand
    expect: str = "match"  # match | mismatch | any (reported, not judged)
    plant: str = ""  # the deliberate map error an experiment ran with

    def record(self) -> dict[str, Any]:
        v = self.variant
        if v.move:
            types: dict[str, str] = {"a": v.a}
        else:
            types = v.types
        out: dict[str, Any] = {
            "key": v.key, "instruction": v.instruction, "shape": v.shape, "types": types,
            "selector": self.selector, "mode": self.mode,
            "layout_hashes": self.layout_hashes, "trials": self.trials, "seed": self.seed,
            "result": self.result, "detail": self.detail,
        }
        if v.move or v.wgmma:
            if v.move:
                out.update(num=v.num, trans=v.trans)
            else:
                out["a_source"] = v.a_source
            for k in ("discovered_hashes", "smem_layout", "probe", "d_cells", "plant"):
                val = getattr(self, k)
                if val:
                    out[k] = val
            if self.expect != "match":
                out["expect"] = self.expect
            return out
        if v.datapath:  # tcgen05.mma: the data path, the smem layout, a planted edit
            out.update(kind=v.kind, datapath=v.datapath)
            for k in ("smem_layout", "d_cells", "plant"):
                if getattr(self, k):
                    out[k] = getattr(self, k)
            if self.expect != "match":
                out["expect"] = self.expect
            return out
        if v.kind:
            out["kind"] = v.kind
        if v.op:
            out["op"] = v.op
        if v.alayout or v.blayout:
            out["layouts"] = list(v.layouts)
        if self.mode == "discover":
            out["discovered_hashes"] = self.discovered_hashes
        if self.erratum:
            out["erratum"] = self.erratum
        if self.d_cells:
            out["d_cells"] = self.d_cells
        return out

    @staticmethod
    def from_record(d: Mapping[str, Any]) -> Run:
        """The run an evidence record (``record()``'s, or a worker's with ``seconds``) is."""
        return Run(variant(str(d["key"])), d.get("selector"), str(d["result"]),
                   str(d.get("detail", "")), int(d.get("trials") or 0), d.get("seed"),
                   dict(d.get("layout_hashes") or {}), str(d.get("mode", "check")),
                   dict(d.get("discovered_hashes") or {}), float(d.get("seconds", 0.0)),
                   str(d.get("erratum") or ""), [list(c) for c in d.get("d_cells") or ()],
                   d.get("smem_layout"), str(d.get("probe") or ""),
                   str(d.get("expect") or "match"), str(d.get("plant") or ""))

    @property
    def ok(self) -> bool:
        """As it should be: what the task expects (an erratum layout: a mismatch), or not
        run here."""
        if self.result in ("not-executed", "compiled-only"):
            return True
        if self.erratum:
            return self.result == "mismatch"
        return self.expect == "any" or self.result == self.expect


def task_runs(task: Task, result: str, detail: str) -> list[Run]:
    """The runs ``task`` would have given, each with ``result`` and ``detail``: what a task
    that could not run (no device, the deadline, a dead or hung worker, an exception)
    records.  An mma task gives one run per selector of its row; any other task one run."""
    v = variant(task.key)
    if not task.mode:
        return [Run(v, s, result, detail, erratum=task.erratum) for s in v.runs]
    mode = "check" if task.mode == "compile" else task.mode
    return [Run(v, v.selector if v.sparse else None, result, detail, mode=mode,
                expect=task.expect)]


@dataclass(frozen=True)
class Job:
    """What every task of one invocation reads: the layouts (export records), the spec's
    erratum layouts, and the options of ``ptxlayout gpu``."""

    records: Sequence[Mapping[str, Any]]
    errata: Sequence[Mapping[str, Any]] = ()
    trials: int = 4
    only: str | None = None
    discover: bool = False
    experiments: bool = True
    use_ptxas: bool = True


@dataclass(frozen=True)
class Outcome:
    """What one task gives: its runs, the maps a discovery or probe showed (by hash: the
    evidence's ``discovered``), report lines (logged when a run mismatches), and the cell
    tables the evidence keeps beside (by hash: ``maps``, the corrected maps an erratum
    replaced)."""

    runs: list[Run]
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)


NO_DEVICE_INFO: dict[str, Any] = {"device": "unknown", "sm": 0, "driver": "unknown",
                                  "cuda": "unknown"}


@dataclass
class Report:
    """A whole run: the device, every run in task order (the mma family's first), the maps
    discoveries showed and the tables the evidence keeps, the time, and notes."""

    info: dict[str, Any]
    runs: list[Run] = field(default_factory=list)
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, outcome: Outcome) -> None:
        self.runs.extend(outcome.runs)
        self.discovered.update(outcome.discovered)
        self.maps.update(outcome.maps)

    def evidence(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            **self.info,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(self.seconds, 2),
            "runs": [r.record() for r in self.runs],
            "discovered": self.discovered,
            "maps": self.maps,
        }
