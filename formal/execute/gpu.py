"""The mma / mma.sp families of ``ptxlayout gpu``: every row on a CUDA device, D bit for bit.

    ptxlayout gpu --layouts build/layouts.json [--trials N] [--record DIR]
                  [--discover] [--only SUBSTR] [--deadline SEC]

(the same invocation runs the move and wgmma families too, ``formal.execute.gpu_matrix``, all
under one supervisor, ``formal.execute.supervisor``, and writes one evidence file for all of
them, ``formal.execute.record``.)

This module needs numpy and (for a real device) CuPy, and nothing of the prover: it imports
no z3, lark or sympy, so it runs on a GPU machine that has only numpy and CuPy.  Layouts come
from the JSON that ``ptxlayout export --format json --corrections`` writes
(``tools/gpu_check.sh`` is the one command that runs all of this).

**The check.**  For each variant of ``formal.base.variants`` the device can run (its compute
capability, ``runs_on``) and for each legal sparsity selector: draw fresh random matrices
(numpy ``default_rng`` with a fresh seed, recorded), pack them into per-lane register words
with the layouts (``formal.execute.cpu``; m8n8k4 ``.f16``'s four products a warp as one
block-diagonal product), run one warp per trial, unpack D with the C/D map and compare it
with the exact ``A x B + C``.  A mismatch names each differing D cell (``d_cells`` in the
evidence) and the (lane, element) pairs of A, B and C that feed it.  Variants the device
cannot run are assembled with ``ptxas`` where it is on PATH and reported ``compiled-only``;
variants without layouts are ``not-executed``; a JIT failure or a faulting kernel is an
``error`` of that variant alone.

**Errata.**  The export's ``errata`` are the spec's layouts as written where
``corrections.md`` changes the map.  Each is run on every variant it serves, packed in place
of the corrected layout (``check_erratum``): the hardware must disagree (``mismatch``, with the
differing D cells), and the corrected map's cell table is kept in the evidence (``maps``) so
that ``formal.prove.evidence`` can refute the spec's layout with a (lane, element) and both cells.
A run is as it should be (``Run.ok``) when every check matches, every discovery agrees and
every erratum mismatches.

**Its row of the executor** (``formal.execute.supervisor.FAMILIES``): ``mma_tasks`` (a task
per variant, then one per (variant, erratum layout) pair) and ``run_mma`` (one of them).  The
supervisor runs them in child processes with the other families' tasks: a variant that
faults, kills its process or hangs is an ``error`` of its own.  Each PTX module is written to
a file named by the hash of its text before ``cupy.RawModule(path=...)`` loads it, because
CuPy caches modules by path: reusing a path would silently run a previous kernel.

**Discovery** (``--discover``): see ``formal.execute.discover`` -- each operand's map is
recovered from the hardware alone (up to the relabelings no experiment can observe), and each
sparse variant's metadata fields, per selector, by flipping one index at a time.  Every dense
and sparse variant supports it, m8n8k4 ``.f16`` included (its four products are four blocks).

**Evidence** (``--record DIR``): one JSON file per run, read by ``formal.prove.evidence``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..base.variants import VARIANTS, Variant, record_serves, runs_on, selects
from . import compare, cpu, discover, ptx
from .devices import POISON, CupyDevice, DeviceError, FakeDevice
from .runs import Job, Outcome, Run, Task, short_text

_VARIANT = {v.key: v for v in VARIANTS}

# ---- one variant ------------------------------------------------------------------------------


MAX_CELLS = 64


def check_variant(device: Any, p: cpu.Plan, trials: int, handle: Any = None,
                  module: ptx.Module | None = None) -> list[Run]:
    """Run ``trials`` random trials of each selector of ``p.variant`` and compare D."""
    v = p.variant
    module = module or ptx.module(v)
    if handle is None:
        handle = device.load(module)
    runs = []
    for sel in v.runs:
        t0 = time.perf_counter()
        seed = secrets.randbits(63)
        rng = np.random.default_rng(seed)
        trial = cpu.make_trials(p, rng, trials, sel)
        got = device.launch(handle, module.entry(sel), trial.inputs, module.words_out)
        diffs = compare.compare(p, got, trial.expected)
        d_cells: list[list[int]] = []
        if not diffs:
            result, detail = "match", f"{trials} trials bit-exact"
        else:
            result = "mismatch"
            cells = sorted({(d.row, d.col) for d in diffs})
            for r, c in cells[:MAX_CELLS]:
                g, lr, lc = p.cd.local(r, c)
                d_cells.append([lr, lc, g] if p.groups > 1 else [r, c])
            poisoned = int((np.asarray(got) == POISON).sum())
            lines = [f"{len(diffs)} D elements differ in {len({d.trial for d in diffs})} of "
                     f"{trials} trials, {len(cells)} cells: "
                     + ", ".join(p.cd.cell_name("D", r, c) for r, c in cells[:12])
                     + (" ..." if len(cells) > 12 else "")]
            if poisoned:
                lines.append(f"{poisoned} D words were never written")
            first_trial = diffs[0].trial
            for d in [d for d in diffs if d.trial == first_trial][:3]:
                lines.append(compare.trace(p, d, trial))
            detail = "; ".join(lines)
        runs.append(Run(v, sel, result, detail, trials, seed, p.hashes,
                        seconds=time.perf_counter() - t0, d_cells=d_cells))
    return runs


def check_erratum(device: Any, v: Variant, records: Sequence[Mapping[str, Any]],
                  erratum: Mapping[str, Any], trials: int,
                  fixed: cpu.Plan | cpu.LayoutError | None = None) \
        -> tuple[list[Run], dict[str, dict[str, Any]]]:
    """Pack one operand of ``v`` by the spec's erratum layout (the rest as ``records``) and
    run it: the hardware should disagree.  Also returns the cell table of the map the
    erratum's correction puts there, by hash (evidence keeps it, so that the ``hardware``
    obligation can show the spec's cell beside the confirmed one).  ``fixed`` is the plan of
    ``v`` from ``records`` when the caller has it already."""
    op = str(erratum["operand"])
    lid = str(erratum.get("id", ""))
    try:
        p = cpu.plan(v, records, override={op: erratum})
        if fixed is None:
            fixed = cpu.plan(v, records)
        if isinstance(fixed, cpu.LayoutError):
            raise fixed
    except cpu.LayoutError as exc:
        return _runs(v, "not-executed", short_text(str(exc)), erratum=lid), {}
    module = ptx.module(v)
    try:
        runs = check_variant(device, p, trials, None, module)
    except DeviceError as exc:
        return _runs(v, "error", short_text(str(exc)), layout_hashes=p.hashes, erratum=lid), {}
    fixed_map = {"A": fixed.a, "B": fixed.b, "C/D": fixed.cd}[op]
    maps = {fixed.hashes[op]: _compact_map(v, op, "cells", fixed_map.cells())}
    for r in runs:
        r.erratum = lid
        r.detail = f"{op} packed by the spec's {lid} as written: {r.detail}"
    return runs, maps


def discover_variant(device: Any, p: cpu.Plan, handle: Any = None,
                     module: ptx.Module | None = None) \
        -> tuple[Run, dict[str, dict[str, Any]], list[str]]:
    """(run, discovered maps by hash, report lines) of one variant's discovery."""
    v = p.variant
    module = module or ptx.module(v)
    if handle is None:
        handle = device.load(module)
    t0 = time.perf_counter()

    def run(sel: int | None, inputs: np.ndarray) -> np.ndarray:
        outs = []
        step = 1 << 16  # warps a launch
        for lo in range(0, len(inputs), step):
            outs.append(device.launch(handle, module.entry(sel), inputs[lo:lo + step],
                                      module.words_out))
        return np.concatenate(outs)

    dd = discover.discover_dense(p, run)
    hashes = dict(dd.hashes)
    maps: dict[str, dict[str, Any]] = {}
    lines = list(dd.anomalies)
    for op, diff in dd.differences.items():
        lines.extend(diff[:4])
        if len(diff) > 4:
            lines.append(f"{op}: {len(diff) - 4} more differences")
    for op, cells in dd.maps.items():
        h = dd.hashes[op]
        if h != p.hashes.get(op):
            maps[h] = _compact_map(v, op, "cells", cells)
    agrees = dd.agrees
    warps = dd.warps
    if v.sparse and p.meta is not None:
        md = discover.discover_metadata(p, run)
        warps += md.warps
        hashes["metadata"] = md.map_hash
        lines.extend(discover.describe(md))
        agrees = agrees and md.agrees
        if md.map_hash != p.meta.map_hash:
            maps[md.map_hash] = _compact_map(v, "metadata", "fields", md.fields)
        holders = "; ".join(f"selector {s}: lanes {ranges(ls)}" for s, ls in md.holders.items())
        lines.append(f"metadata holders {holders}")
    result = "match" if agrees else "mismatch"
    detail = f"{warps} probe warps; " + ("maps agree with the layouts up to relabeling"
                                         if agrees else "differs: " + "; ".join(lines[:8]))
    if agrees and v.sparse:
        detail += "; " + lines[-1]
    r = Run(v, None, result, short_text(detail, 2000), 0, None, p.hashes, "discover", hashes,
            time.perf_counter() - t0)
    return r, maps, lines


def ranges(xs: Sequence[int]) -> str:
    if len(xs) > 1 and all(b - a == xs[1] - xs[0] for a, b in zip(xs, xs[1:], strict=False)):
        return f"{xs[0]}, {xs[1]}, ..., {xs[-1]}"
    return ", ".join(map(str, xs))


def _compact_map(v: Variant, operand: str, kind: str, rows: Sequence[Mapping[str, int]]) \
        -> dict[str, Any]:
    columns = list(rows[0].keys()) if rows else []
    return {"instruction": v.instruction, "shape": v.shape, "operand": operand, "kind": kind,
            "columns": columns, "rows": [[int(r[c]) for c in columns] for r in rows]}


# ---- the family's hook: its tasks, and one task run ---------------------------------------


def select(only: str | None) -> list[Variant]:
    return [v for v in VARIANTS if selects(only, v.key)]


def tasks_of(variants: Sequence[Variant], errata: Sequence[Mapping[str, Any]] = ()) \
        -> list[Task]:
    """Every variant, then each (variant, erratum layout) pair the erratum serves."""
    out = [Task(v.key) for v in variants]
    for e in errata:
        for v in variants:
            if record_serves(v, e):
                out.append(Task(v.key, erratum=str(e.get("id", ""))))
    return out


def mma_tasks(job: Job, sm: int) -> list[Task]:
    """The mma / mma.sp family's tasks (whatever the device: one it cannot run is
    assembled, ``run_variant``)."""
    return tasks_of(select(job.only), job.errata)


def _runs(v: Variant, result: str, detail: str, **kw: Any) -> list[Run]:
    """The same result for every run of ``v`` (each selector)."""
    return [Run(v, s, result, detail, **kw) for s in v.runs]


def run_variant(device: Any, v: Variant, plans: Mapping[str, cpu.Plan | cpu.LayoutError],
                trials: int, do_discover: bool, ptxas_ok: Callable[[Variant], str | None]) \
        -> tuple[list[Run], dict[str, dict[str, Any]], list[str]]:
    """Everything about one variant: its check runs, and its discovery."""
    p = plans.get(v.key)
    hashes = p.hashes if isinstance(p, cpu.Plan) else {}
    if not runs_on(v, device.sm):
        err = ptxas_ok(v)
        if err is None:
            return _runs(v, "compiled-only", f"assembled for {v.target} with ptxas; the "
                         f"device is sm_{device.sm}", layout_hashes=hashes), {}, []
        return _runs(v, "not-executed" if err == "no ptxas" else "error",
                     f"needs {v.target}; the device is sm_{device.sm}"
                     + ("" if err == "no ptxas" else f"; ptxas failed: {short_text(err, 300)}"),
                     layout_hashes=hashes), {}, []
    if not isinstance(p, cpu.Plan):
        return _runs(v, "not-executed", short_text(str(p))), {}, []
    module = ptx.module(v)
    try:
        handle = device.load(module)
        runs = check_variant(device, p, trials, handle, module)
    except DeviceError as exc:
        return _runs(v, "error", short_text(str(exc)), layout_hashes=p.hashes), {}, []
    maps: dict[str, dict[str, Any]] = {}
    lines: list[str] = []
    if do_discover:
        try:
            r, maps, lines = discover_variant(device, p, handle, module)
        except DeviceError as exc:
            r = Run(v, None, "error", short_text(str(exc)), layout_hashes=p.hashes,
                    mode="discover")
        runs.append(r)
    return runs, maps, lines


def ptxas_checker(enabled: bool) -> Callable[[Variant], str | None]:
    """None when the variant assembles for its own target, else why not."""
    cache: dict[str, str | None] = {}

    def check(v: Variant) -> str | None:
        if not enabled or ptx.ptxas_path() is None:
            return "no ptxas"
        if v.key not in cache:
            ok, msg = ptx.assemble(ptx.module(v).text, v.target)
            cache[v.key] = None if ok else (msg or "failed")
        return cache[v.key]

    return check


def run_mma(device: Any, job: Job, task: Task, memo: dict[str, Any]) -> Outcome:
    """One mma task: a variant's checks (and discovery), or its run packed with one of the
    spec's erratum layouts.  ``memo`` is the calling process's: the plans and the ptxas
    verdicts, each made once."""
    v = _VARIANT[task.key]
    plans: dict[str, cpu.Plan | cpu.LayoutError] = memo.setdefault("mma plans", {})
    if v.key not in plans:
        plans.update(cpu.plans(job.records, [v]))
    checker = memo.setdefault("ptxas", ptxas_checker(job.use_ptxas))
    if not task.erratum:
        runs, maps, lines = run_variant(device, v, plans, job.trials, job.discover, checker)
        return Outcome(runs, maps, lines)
    if not runs_on(v, device.sm):
        return Outcome(_runs(v, "not-executed", f"needs {v.target}; the device is "
                             f"sm_{device.sm}", erratum=task.erratum))
    errata = {str(e.get("id", "")): e for e in job.errata}
    runs, kept = check_erratum(device, v, job.records, errata[task.erratum], job.trials,
                               plans.get(v.key))
    return Outcome(runs, maps=kept)


def make_device(spec: str, records: Sequence[Mapping[str, Any]]) -> Any:
    """``cuda`` / ``cuda:N`` (CuPy) or
    ``fake[:sm=90,crash=KEY,hang=KEY,fault=KEY,sticky=1]``; ``fake:absent`` is no device
    at all (as a machine without a GPU)."""
    name, _, opts = spec.partition(":")
    if name == "cuda":
        return CupyDevice(int(opts or 0))
    if name == "fake":
        if "absent" in opts.split(","):
            raise DeviceError("no CUDA device: the fake device is absent (fake:absent)")
        kw: dict[str, Any] = {"crash": [], "hang": [], "fault": []}
        sm = 90
        sticky = False
        for part in filter(None, opts.split(",")):
            k, _, val = part.partition("=")
            if k == "sm":
                sm = int(val)
            elif k == "sticky":
                sticky = val not in ("", "0")
            elif k in kw:
                kw[k].append(val)
        return FakeDevice(records, sm, sticky=sticky, **kw)
    raise DeviceError(f"unknown device {spec!r} (cuda, cuda:N or fake)")
