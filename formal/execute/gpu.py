"""The mma / mma.sp families of ``ptxlayout gpu``: every row on a CUDA device, D bit for bit.

    ptxlayout gpu --layouts build/layouts.json [--trials N] [--record DIR]
                  [--discover] [--only SUBSTR] [--deadline SEC]

(the same invocation then runs the move and wgmma families, ``formal.execute.gpu_matrix``,
and writes one evidence file for all of them, ``formal.execute.record``.)

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

**Isolation.**  With CuPy the work runs in a child process; the parent is a watchdog: a
variant that faults (a sticky CUDA error spoils the whole context), kills its process or runs
past its time is recorded as an ``error`` and a fresh child takes the remaining variants, so
nothing hangs and one bad kernel cannot spoil the others.  ``--deadline`` bounds the whole
run: past it the running variant is an ``error``, the rest ``not-executed``, and the evidence
is still written.  Each PTX module is written to a file named by the hash of its text before
``cupy.RawModule(path=...)`` loads it, because CuPy caches modules by path: reusing a path
would silently run a previous kernel.

**Discovery** (``--discover``): see ``formal.execute.discover`` -- each operand's map is
recovered from the hardware alone (up to the relabelings no experiment can observe), and each
sparse variant's metadata fields, per selector, by flipping one index at a time.  Every dense
and sparse variant supports it, m8n8k4 ``.f16`` included (its four products are four blocks).

**Evidence** (``--record DIR``): one JSON file per run, read by ``formal.prove.evidence``.
"""

from __future__ import annotations

import datetime as _dt
import queue
import secrets
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base.variants import VARIANTS, Variant, record_serves, runs_on, selects
from . import compare, cpu, discover, ptx
from .devices import POISON, CupyDevice, DeviceError, FakeDevice
from .runs import Run, Task, short_text

SCHEMA = 1  # of the evidence files
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


# ---- a whole run ------------------------------------------------------------------------------


@dataclass
class Report:
    info: dict[str, Any]
    runs: list[Run] = field(default_factory=list)
    discovered: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # cell tables the evidence keeps by hash: the corrected maps the errata runs replaced
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the runs of the move and wgmma families (``formal.execute.gpu_matrix``), as recorded
    family_runs: list[dict[str, Any]] = field(default_factory=list)

    def evidence(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            **self.info,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(self.seconds, 2),
            "runs": [r.record() for r in self.runs] + self.family_runs,
            "discovered": self.discovered,
            "maps": self.maps,
        }


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


Outcome = tuple[list[Run], dict[str, dict[str, Any]], list[str], dict[str, dict[str, Any]]]


def _runs(v: Variant, result: str, detail: str, **kw: Any) -> list[Run]:
    """The same result for every run of ``v`` (each selector)."""
    return [Run(v, s, result, detail, **kw) for s in v.runs]


def _error_runs(task: Task, why: str) -> list[Run]:
    return _runs(_VARIANT[task.key], "error", why, erratum=task.erratum)


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


def run_task(device: Any, task: Task, plans: Mapping[str, cpu.Plan | cpu.LayoutError],
             records: Sequence[Mapping[str, Any]], errata: Mapping[str, Mapping[str, Any]],
             trials: int, do_discover: bool, ptxas_ok: Callable[[Variant], str | None]) \
        -> Outcome:
    """(runs, discovered maps, report lines, maps the evidence keeps) of one task."""
    v = _VARIANT[task.key]
    if not task.erratum:
        runs, maps, lines = run_variant(device, v, plans, trials, do_discover, ptxas_ok)
        return runs, maps, lines, {}
    if not runs_on(v, device.sm):
        return _runs(v, "not-executed", f"needs {v.target}; the device is sm_{device.sm}",
                     erratum=task.erratum), {}, [], {}
    runs, kept = check_erratum(device, v, records, errata[task.erratum], trials,
                               plans.get(v.key))
    return runs, {}, [], kept


def _ptxas_checker(enabled: bool) -> Callable[[Variant], str | None]:
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


def run_all(device: Any, records: Sequence[Mapping[str, Any]], trials: int = 4,
            only: str | None = None, do_discover: bool = False, use_ptxas: bool = True,
            log: Callable[[str], None] | None = None,
            errata: Sequence[Mapping[str, Any]] = ()) -> Report:
    """Check (and discover) every selected variant on ``device``, in this process; then
    run the ``errata`` (the spec's layouts as written) on the variants they serve."""
    t0 = time.perf_counter()
    report = Report(device.info())
    variants = select(only)
    plans = cpu.plans(records, variants)
    checker = _ptxas_checker(use_ptxas)
    by_id = {str(e.get("id", "")): e for e in errata}
    for task in tasks_of(variants, errata):
        runs, maps, lines, kept = run_task(device, task, plans, records, by_id, trials,
                                           do_discover, checker)
        _add(report, runs, maps, kept, lines, log)
    report.seconds = time.perf_counter() - t0
    return report


def _add(report: Report, runs: list[Run], maps: dict[str, dict[str, Any]],
         kept: dict[str, dict[str, Any]], lines: list[str],
         log: Callable[[str], None] | None) -> None:
    report.runs.extend(runs)
    report.discovered.update(maps)
    report.maps.update(kept)
    if log:
        for r in runs:
            log(_line(r))
        for line in lines if any(r.result == "mismatch" for r in runs) else []:
            log(f"    {line}")


def _line(r: Run) -> str:
    sel = "" if r.selector is None else f" sel {r.selector}"
    mode = " discover" if r.mode == "discover" else ""
    what = f" [{r.erratum} as written]" if r.erratum else ""
    return (f"{r.variant.key}{sel}{mode}{what}: {r.result} ({r.seconds:.2f} s) "
            f"{short_text(r.detail, 300)}")


# ---- a supervised run (a child process per batch, a watchdog in the parent) ------------------


def _worker(spec: str, records: list[dict[str, Any]], errata: list[dict[str, Any]],
            tasks: list[Task], trials: int, do_discover: bool, use_ptxas: bool, conn: Any) -> None:
    # Messages go through a pipe, not a multiprocessing.Queue: Connection.send has written the
    # message before it returns, where Queue.put hands it to a feeder thread that a crash
    # right after can kill first -- and the parent would blame the crash on the task before.
    try:
        device = make_device(spec, records)
    except DeviceError as exc:
        conn.send(("nodevice", str(exc)))
        return
    variants = list({_VARIANT[t.key].key: _VARIANT[t.key] for t in tasks}.values())
    plans = cpu.plans(records, variants)
    checker = _ptxas_checker(use_ptxas)
    # announced only now: the per-task watchdog starts here, after the set-up above
    conn.send(("device", device.info()))
    by_id = {str(e.get("id", "")): e for e in errata}
    for task in tasks:
        conn.send(("start", task))
        try:
            runs, maps, lines, kept = run_task(device, task, plans, records, by_id, trials,
                                               do_discover, checker)
        except Exception as exc:  # noqa: BLE001 - report, and go on with the next variant
            runs = _error_runs(task, short_text(f"{type(exc).__name__}: {exc}; "
                                            + traceback.format_exc(limit=2)))
            maps, lines, kept = {}, [], {}
        conn.send(("result", task, [_run_to_wire(r) for r in runs], maps, lines, kept))
        if getattr(device, "broken", False):
            # a fault may leave the CUDA context unusable: a fresh process takes the rest
            conn.send(("restart",))
            return
    conn.send(("done",))


def _receive(conn: Any, timeout: float) -> tuple[Any, ...]:
    """The worker's next message; ``queue.Empty`` when none came within ``timeout`` or the
    worker's end is closed (it exited or died: the caller asks the process which)."""
    if conn.poll(timeout):
        try:
            return conn.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            time.sleep(min(timeout, 0.1))  # the pipe is closed: let the process be reaped
    raise queue.Empty


def _run_to_wire(r: Run) -> dict[str, Any]:
    d = r.record()
    d["seconds"] = r.seconds
    return d


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


def no_device(report: Report) -> str | None:
    """Why no device ran anything in ``report`` (None: a device answered)."""
    if report.info.get("device") != "unknown":
        return None
    return "; ".join(report.notes) or "no device answered"


# what ptxas says of a target it does not know (CUDA 13 dropped sm_70, m8n8k4's target)
UNKNOWN_TARGET = "is not defined for option 'gpu-name'"


def assemble_only(report: Report, use_ptxas: bool = True) -> Report:
    """The compile-only run where no device is: every variant that was not executed is
    assembled with ptxas for its own target (``compiled-only``, or an ``error`` when ptxas
    rejects it); without ptxas, or with one that no longer knows the variant's target, it
    stays ``not-executed`` with the reason."""
    checker = _ptxas_checker(use_ptxas)
    for k, r in enumerate(report.runs):
        if r.result != "not-executed":
            continue
        err = checker(r.variant)
        if err == "no ptxas":
            continue
        if err is not None and UNKNOWN_TARGET in err:  # CUDA 13's ptxas and sm_70: not ours
            report.runs[k] = Run(r.variant, r.selector, "not-executed",
                                 f"this ptxas no longer knows {r.variant.target}: neither run "
                                 "nor assembled", layout_hashes=r.layout_hashes,
                                 erratum=r.erratum)
            continue
        report.runs[k] = Run(r.variant, r.selector, "compiled-only" if err is None else "error",
                             f"assembled for {r.variant.target} with ptxas; no device ran it"
                             if err is None else f"ptxas failed: {short_text(err, 300)}",
                             layout_hashes=r.layout_hashes, erratum=r.erratum)
    return report


def run_supervised(spec: str, records: Sequence[Mapping[str, Any]], trials: int = 4,
                   only: str | None = None, do_discover: bool = False,
                   use_ptxas: bool = True, timeout: float = 120.0,
                   log: Callable[[str], None] | None = None,
                   errata: Sequence[Mapping[str, Any]] = (),
                   deadline: float | None = None,
                   progress: Callable[[int, int], None] | None = None) -> Report:
    """``run_all`` in child processes, with a watchdog of ``timeout`` seconds a task.

    A child that dies, hangs, or reports a fault that may have spoilt its CUDA context is
    replaced by a fresh one for the remaining tasks.  ``deadline`` (seconds, the whole run):
    past it the running task is an ``error`` and the rest are ``not-executed``, and the
    report is still returned (and its evidence written).  ``progress`` hears
    ``(done, total)`` tasks as they finish."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    end = None if deadline is None else time.monotonic() + deadline
    pending = tasks_of(select(only), errata)
    total = len(pending)
    report = Report({"device": "unknown", "sm": 0, "driver": "unknown", "cuda": "unknown"})
    recs = [dict(r) for r in records]
    errs = [dict(e) for e in errata]

    def skip(rest: Sequence[Task], why: str, result: str) -> None:
        for t in rest:
            report.runs.extend(_runs(_VARIANT[t.key], result, why, erratum=t.erratum))

    while pending:
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(spec, recs, errs, pending, trials, do_discover,
                                                 use_ptxas, sender), daemon=True)
        proc.start()
        sender.close()  # the child holds the only writing end: its exit closes the pipe
        current: Task | None = None
        got_device = False
        deadline_task = time.monotonic() + timeout + 60  # the child's start-up and CuPy import
        while True:
            now = time.monotonic()
            limit = deadline_task if end is None else min(deadline_task, end)
            try:
                msg = _receive(receiver, max(0.1, min(1.0, limit - now)))
            except queue.Empty:
                now = time.monotonic()
                over = end is not None and now > end
                if now > deadline_task or over or not proc.is_alive():
                    why = ("the overall time limit ran out" if over else
                           "timed out (watchdog)" if proc.is_alive() else
                           f"the worker died (exit {proc.exitcode})")
                    if proc.is_alive():
                        proc.kill()
                    proc.join(5)
                    if over:
                        if current is not None:
                            skip([current], f"{why} while running this variant", "error")
                            pending.remove(current)
                        skip(pending, f"not run: {why} ({deadline:.0f} s)", "not-executed")
                        pending = []
                    elif not got_device:  # died starting up: no device for the rest
                        skip(pending, f"device worker: {why}", "error")
                        pending = []
                    else:
                        current = current or pending[0]
                        skip([current], f"{why} while running this variant", "error")
                        if log:
                            log(f"{current.label}: error ({why})")
                        pending = pending[pending.index(current) + 1:]
                    break
                continue
            kind = msg[0]
            if kind == "nodevice":
                report.notes.append(msg[1])
                skip(pending, f"no device: {msg[1]}", "not-executed")
                pending = []
            elif kind == "device":
                got_device = True
                report.info = msg[1]
                deadline_task = time.monotonic() + timeout
            elif kind == "start":
                current = msg[1]
                deadline_task = time.monotonic() + timeout
            elif kind == "result":
                runs = [Run.from_record(d) for d in msg[2]]
                _add(report, runs, msg[3], msg[5], msg[4], log)
                pending = pending[pending.index(msg[1]) + 1:]
                current = None
            if progress is not None:
                progress(total - len(pending), total)
            if kind in ("done", "nodevice", "restart"):
                proc.join(10)
                if proc.is_alive():
                    proc.kill()
                if kind == "done":
                    pending = []
                elif kind == "restart" and log:
                    log("(a fault may have spoilt the CUDA context: a fresh process takes the "
                        f"remaining {len(pending)} tasks)")
                break
        receiver.close()
    if progress is not None:
        progress(total, total)
    report.seconds = time.perf_counter() - t0
    return report
