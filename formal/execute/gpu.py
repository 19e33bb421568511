"""Run every variant on a CUDA device and compare D bit for bit with the exact product.

    python -m formal.execute.gpu --layouts build/layouts.json [--trials N] [--record DIR]
                                 [--discover] [--only SUBSTR]

This module needs numpy and (for a real device) CuPy, and nothing of the prover: it imports
no z3, lark or sympy, so it runs on a GPU machine that has only numpy and CuPy.  Layouts come
from the JSON that ``ptxlayout export --format json`` writes.

**The check.**  For each variant of ``formal.variants`` the device can run (its compute
capability, ``runs_on``) and for each legal sparsity selector: draw fresh random matrices
(numpy ``default_rng`` with a fresh seed, recorded), pack them into per-lane register words
with the layouts (``formal.execute.cpu``), run one warp per trial, unpack D with the C/D map
and compare it with the exact ``A x B + C``.  A mismatch names each differing D cell and the
(lane, element) pairs of A, B and C that feed it.  Variants the device cannot run are
assembled with ``ptxas`` where it is on PATH and reported ``compiled-only``; variants without
layouts are ``not-executed``; a JIT failure or a faulting kernel is an ``error`` of that variant
alone.

**Isolation.**  With CuPy the work runs in a child process; the parent is a watchdog: a
variant that faults (a sticky CUDA error spoils the whole context) or runs past its time is
recorded as an ``error`` and a fresh child takes the remaining variants, so nothing hangs and
one bad kernel cannot spoil the others.  Each PTX module is written to a file named by the hash
of its text before ``cupy.RawModule(path=...)`` loads it, because CuPy caches modules by path:
reusing a path would silently run a previous kernel.

**Discovery** (``--discover``): see ``formal.execute.discover`` -- each operand's map is
recovered from the hardware alone (up to the relabelings no experiment can observe), and each
sparse variant's metadata fields, per selector, by flipping one index at a time.

**Evidence** (``--record DIR``): one JSON file per run, read by ``formal.evidence``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..variants import VARIANTS, Variant, runs_on
from . import cpu, discover, ptx

SCHEMA = 1
THREADS = 128  # four warps a block
POISON = 0xDEADBEEF  # D words no kernel wrote


class DeviceError(RuntimeError):
    """The device could not load or run a kernel (JIT failure, fault, wrong architecture)."""


# ---- devices ----------------------------------------------------------------------------------


class CupyDevice:
    """A CUDA device through CuPy: modules from PTX files, one warp per trial."""

    def __init__(self, ordinal: int = 0) -> None:
        try:
            import cupy  # noqa: F401 - the optional dependency
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken CUDA install
            raise DeviceError(f"CuPy is not usable: {type(exc).__name__}: {exc}") from exc
        import cupy as cp

        self.cp = cp
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001
            raise DeviceError(f"no CUDA device: {exc}") from exc
        if count <= ordinal:
            raise DeviceError(f"no CUDA device {ordinal} ({count} found)")
        self.device = cp.cuda.Device(ordinal)
        self.device.use()
        props = cp.cuda.runtime.getDeviceProperties(ordinal)
        name = props.get("name", b"")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        major, minor = int(props["major"]), int(props["minor"])
        self.sm = 10 * major + minor
        drv = cp.cuda.runtime.driverGetVersion()
        rt = cp.cuda.runtime.runtimeGetVersion()
        self.cuda = f"driver API {drv // 1000}.{drv % 1000 // 10}, runtime {rt // 1000}." \
                    f"{rt % 1000 // 10}, CuPy {cp.__version__}"
        self.driver = _nvidia_smi_driver() or f"CUDA driver API {drv}"
        self.tmp = Path(tempfile.mkdtemp(prefix="ptxlayout-kernels-"))

    def load(self, module: ptx.Module) -> dict[str, Any]:
        path = self.tmp / module.filename  # unique per text: CuPy caches modules by path
        path.write_text(module.text, encoding="utf-8")
        try:
            mod = self.cp.RawModule(path=str(path))
            return {name: mod.get_function(name) for _s, name in module.entries}
        except Exception as exc:  # noqa: BLE001 - CUDA driver / JIT errors
            raise DeviceError(f"JIT/load failed: {type(exc).__name__}: {exc}") from exc

    def launch(self, handle: Mapping[str, Any], entry: str, inputs: np.ndarray,
               words_out: int) -> np.ndarray:
        cp = self.cp
        warps = int(inputs.shape[0])
        try:
            d_in = cp.asarray(np.ascontiguousarray(inputs, dtype=np.uint32).ravel())
            d_out = cp.full(warps * 32 * words_out, POISON, dtype=cp.uint32)
            blocks = (warps * 32 + THREADS - 1) // THREADS
            handle[entry]((blocks,), (THREADS,), (d_in, d_out, np.uint32(warps)))
            cp.cuda.get_current_stream().synchronize()
            return cp.asnumpy(d_out).reshape(warps, 32, words_out)
        except Exception as exc:  # noqa: BLE001
            raise DeviceError(f"launch failed: {type(exc).__name__}: {exc}") from exc

    def info(self) -> dict[str, Any]:
        return {"device": self.name, "sm": self.sm, "driver": self.driver, "cuda": self.cuda}


def _nvidia_smi_driver() -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip().splitlines()
    return line[0].strip() if out.returncode == 0 and line else None


class FakeDevice:
    """A device that executes kernels by emulation, taking the given layouts as the
    hardware's truth (for testing the harness without a GPU).

    ``crash`` / ``hang`` name variant keys whose launch kills the process / never returns
    (to exercise the watchdog); ``fault`` keys raise ``DeviceError`` as a faulting kernel."""

    def __init__(self, truth: Sequence[Mapping[str, Any]], sm: int = 90,
                 crash: Iterable[str] = (), hang: Iterable[str] = (),
                 fault: Iterable[str] = ()) -> None:
        self.truth = list(truth)
        self.sm = sm
        self.name = f"fake device (emulated sm_{sm})"
        self.driver = "none"
        self.cuda = "emulated by formal.execute.cpu"
        self.crash, self.hang, self.fault = set(crash), set(hang), set(fault)
        self._plans: dict[str, cpu.Plan] = {}

    def load(self, module: ptx.Module) -> Any:
        v = module.variant
        if not runs_on(v, self.sm):
            raise DeviceError(f"no kernel image for sm_{self.sm} ({v.key} needs {v.target})")
        if v.key not in self._plans:
            try:
                self._plans[v.key] = cpu.plan(v, self.truth)
            except cpu.LayoutError as exc:
                raise DeviceError(f"the fake device has no truth for {v.key}: {exc}") from exc
        return module

    def launch(self, handle: Any, entry: str, inputs: np.ndarray, words_out: int) -> np.ndarray:
        module: ptx.Module = handle
        key = module.variant.key
        if key in self.crash:
            os._exit(3)
        if key in self.hang:
            time.sleep(3600)
        if key in self.fault:
            raise DeviceError("launch failed: CUDARuntimeError: cudaErrorIllegalInstruction")
        selector = None if entry == "mma" else int(entry.removeprefix("sel"))
        out = cpu.emulate(self._plans[key], inputs, selector)
        assert out.shape[-1] == words_out
        return out

    def info(self) -> dict[str, Any]:
        return {"device": self.name, "sm": self.sm, "driver": self.driver, "cuda": self.cuda}


# ---- one variant ------------------------------------------------------------------------------


@dataclass
class Run:
    """One evidence run: a variant (and selector) checked, or discovered."""

    variant: Variant
    selector: int | None
    result: str  # match | mismatch | not-executed | compiled-only | error
    detail: str = ""
    trials: int = 0
    seed: int | None = None
    layout_hashes: dict[str, str] = field(default_factory=dict)
    mode: str = "check"  # check | discover
    discovered_hashes: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        v = self.variant
        out: dict[str, Any] = {
            "key": v.key, "instruction": v.instruction, "shape": v.shape,
            "types": {"a": v.a, "b": v.b, "c": v.c, "d": v.d},
            "selector": self.selector, "mode": self.mode,
            "layout_hashes": self.layout_hashes, "trials": self.trials, "seed": self.seed,
            "result": self.result, "detail": self.detail,
        }
        if v.kind:
            out["kind"] = v.kind
        if v.op:
            out["op"] = v.op
        if self.mode == "discover":
            out["discovered_hashes"] = self.discovered_hashes
        return out


def _short(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_variant(device: Any, p: cpu.Plan, trials: int, handle: Any = None,
                  module: ptx.Module | None = None) -> list[Run]:
    """Run ``trials`` random trials of each selector of ``p.variant`` and compare D."""
    v = p.variant
    module = module or ptx.module(v)
    if handle is None:
        handle = device.load(module)
    runs = []
    for sel in (v.selectors or (None,)):
        t0 = time.perf_counter()
        seed = secrets.randbits(63)
        rng = np.random.default_rng(seed)
        trial = cpu.make_trials(p, rng, trials, sel)
        got = device.launch(handle, module.entry(sel), trial.inputs, module.words_out)
        diffs = cpu.compare(p, got, trial.expected)
        if not diffs:
            result, detail = "match", f"{trials} trials bit-exact"
        else:
            result = "mismatch"
            cells = sorted({(d.row, d.col) for d in diffs})
            poisoned = int((np.asarray(got) == POISON).sum())
            lines = [f"{len(diffs)} D elements differ in {len({d.trial for d in diffs})} of "
                     f"{trials} trials, cells " + ", ".join(f"D[{r}][{c}]" for r, c in
                                                           cells[:12])
                     + (" ..." if len(cells) > 12 else "")]
            if poisoned:
                lines.append(f"{poisoned} D words were never written")
            first_trial = diffs[0].trial
            for d in [d for d in diffs if d.trial == first_trial][:3]:
                lines.append(cpu.trace(p, d, trial))
            detail = "; ".join(lines)
        runs.append(Run(v, sel, result, detail, trials, seed, p.hashes,
                        seconds=time.perf_counter() - t0))
    return runs


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
        holders = "; ".join(f"selector {s}: lanes {_ranges(ls)}" for s, ls in md.holders.items())
        lines.append(f"metadata holders {holders}")
    result = "match" if agrees else "mismatch"
    detail = f"{warps} probe warps; " + ("maps agree with the layouts up to relabeling"
                                         if agrees else "differs: " + "; ".join(lines[:8]))
    if agrees and v.sparse:
        detail += "; " + lines[-1]
    r = Run(v, None, result, _short(detail, 2000), 0, None, p.hashes, "discover", hashes,
            time.perf_counter() - t0)
    return r, maps, lines


def _ranges(xs: Sequence[int]) -> str:
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

    def evidence(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            **self.info,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(self.seconds, 2),
            "runs": [r.record() for r in self.runs],
            "discovered": self.discovered,
        }


def select(only: str | None) -> list[Variant]:
    return [v for v in VARIANTS if not only or only in v.key]


def run_variant(device: Any, v: Variant, plans: Mapping[str, cpu.Plan | cpu.LayoutError],
                trials: int, do_discover: bool, ptxas_ok: Callable[[Variant], str | None]) \
        -> tuple[list[Run], dict[str, dict[str, Any]], list[str]]:
    """Everything about one variant: its check runs, and its discovery."""
    p = plans.get(v.key)
    sels: Sequence[int | None] = v.selectors or (None,)
    hashes = p.hashes if isinstance(p, cpu.Plan) else {}
    if not runs_on(v, device.sm):
        err = ptxas_ok(v)
        if err is None:
            return [Run(v, s, "compiled-only", f"assembled for {v.target} with ptxas; the "
                        f"device is sm_{device.sm}", layout_hashes=hashes) for s in sels], {}, []
        return [Run(v, s, "not-executed" if err == "no ptxas" else "error",
                    f"needs {v.target}; the device is sm_{device.sm}"
                    + ("" if err == "no ptxas" else f"; ptxas failed: {_short(err, 300)}"),
                    layout_hashes=hashes) for s in sels], {}, []
    if not isinstance(p, cpu.Plan):
        return [Run(v, s, "not-executed", _short(str(p))) for s in sels], {}, []
    module = ptx.module(v)
    try:
        handle = device.load(module)
    except DeviceError as exc:
        return [Run(v, s, "error", _short(str(exc)), layout_hashes=p.hashes) for s in sels], \
            {}, []
    try:
        runs = check_variant(device, p, trials, handle, module)
    except DeviceError as exc:
        return [Run(v, s, "error", _short(str(exc)), layout_hashes=p.hashes) for s in sels], \
            {}, []
    maps: dict[str, dict[str, Any]] = {}
    lines: list[str] = []
    if do_discover:
        try:
            r, maps, lines = discover_variant(device, p, handle, module)
        except DeviceError as exc:
            r = Run(v, None, "error", _short(str(exc)), layout_hashes=p.hashes,
                    mode="discover")
        runs.append(r)
    return runs, maps, lines


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
            log: Callable[[str], None] | None = None) -> Report:
    """Check (and discover) every selected variant on ``device``, in this process."""
    t0 = time.perf_counter()
    report = Report(device.info())
    variants = select(only)
    plans = cpu.plans(records, variants)
    checker = _ptxas_checker(use_ptxas)
    for v in variants:
        runs, maps, lines = run_variant(device, v, plans, trials, do_discover, checker)
        report.runs.extend(runs)
        report.discovered.update(maps)
        if log:
            for r in runs:
                log(_line(r))
            for line in lines if any(r.result == "mismatch" for r in runs) else []:
                log(f"    {line}")
    report.seconds = time.perf_counter() - t0
    return report


def _line(r: Run) -> str:
    sel = "" if r.selector is None else f" sel {r.selector}"
    mode = " discover" if r.mode == "discover" else ""
    return f"{r.variant.key}{sel}{mode}: {r.result} ({r.seconds:.2f} s) {_short(r.detail, 300)}"


# ---- a supervised run (a child process per batch, a watchdog in the parent) ------------------


def _worker(spec: str, records: list[dict[str, Any]], keys: list[str], trials: int,
            do_discover: bool, use_ptxas: bool, q: Any) -> None:
    try:
        device = make_device(spec, records)
    except DeviceError as exc:
        q.put(("nodevice", str(exc)))
        return
    q.put(("device", device.info()))
    by_key = {v.key: v for v in VARIANTS}
    variants = [by_key[k] for k in keys]
    plans = cpu.plans(records, variants)
    checker = _ptxas_checker(use_ptxas)
    for v in variants:
        q.put(("start", v.key))
        try:
            runs, maps, lines = run_variant(device, v, plans, trials, do_discover, checker)
        except Exception as exc:  # noqa: BLE001 - report, and go on with the next variant
            runs = [Run(v, s, "error", _short(f"{type(exc).__name__}: {exc}; "
                                              + traceback.format_exc(limit=2)))
                    for s in (v.selectors or (None,))]
            maps, lines = {}, []
        q.put(("result", v.key, [_run_to_wire(r) for r in runs], maps, lines))
    q.put(("done",))


def _run_to_wire(r: Run) -> dict[str, Any]:
    d = r.record()
    d["seconds"] = r.seconds
    return d


def _run_from_wire(d: Mapping[str, Any]) -> Run:
    v = {x.key: x for x in VARIANTS}[d["key"]]
    return Run(v, d["selector"], d["result"], d["detail"], d["trials"], d["seed"],
               dict(d["layout_hashes"]), d["mode"], dict(d.get("discovered_hashes") or {}),
               float(d.get("seconds", 0.0)))


def make_device(spec: str, records: Sequence[Mapping[str, Any]]) -> Any:
    """``cuda`` / ``cuda:N`` (CuPy) or ``fake[:sm=90,crash=KEY,hang=KEY,fault=KEY]``."""
    name, _, opts = spec.partition(":")
    if name == "cuda":
        return CupyDevice(int(opts or 0))
    if name == "fake":
        kw: dict[str, Any] = {"crash": [], "hang": [], "fault": []}
        sm = 90
        for part in filter(None, opts.split(",")):
            k, _, val = part.partition("=")
            if k == "sm":
                sm = int(val)
            elif k in kw:
                kw[k].append(val)
        return FakeDevice(records, sm, **kw)
    raise DeviceError(f"unknown device {spec!r} (cuda, cuda:N or fake)")


def run_supervised(spec: str, records: Sequence[Mapping[str, Any]], trials: int = 4,
                   only: str | None = None, do_discover: bool = False,
                   use_ptxas: bool = True, timeout: float = 120.0,
                   log: Callable[[str], None] | None = None) -> Report:
    """``run_all`` in child processes, with a watchdog of ``timeout`` seconds a variant."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    pending = [v.key for v in select(only)]
    report = Report({"device": "unknown", "sm": 0, "driver": "unknown", "cuda": "unknown"})
    by_key = {v.key: v for v in VARIANTS}
    recs = [dict(r) for r in records]
    while pending:
        q = ctx.Queue()
        proc = ctx.Process(target=_worker, args=(spec, recs, pending, trials, do_discover,
                                                 use_ptxas, q), daemon=True)
        proc.start()
        current: str | None = None
        got_device = False
        deadline = time.monotonic() + timeout + 60  # the child's start-up and CuPy import
        finished = False
        while True:
            try:
                msg = q.get(timeout=max(0.1, min(1.0, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() > deadline or not proc.is_alive():
                    why = "timed out (watchdog)" if proc.is_alive() else \
                        f"the worker died (exit {proc.exitcode})"
                    if proc.is_alive():
                        proc.kill()
                    proc.join(5)
                    if not got_device:  # died starting up: no device for the rest
                        for k in pending:
                            v = by_key[k]
                            report.runs.extend(Run(v, s, "error", f"device worker: {why}")
                                               for s in (v.selectors or (None,)))
                        pending = []
                    else:
                        current = current or pending[0]
                        v = by_key[current]
                        report.runs.extend(Run(v, s, "error", f"{why} while running this "
                                               "variant") for s in (v.selectors or (None,)))
                        if log:
                            log(f"{current}: error ({why})")
                        pending = pending[pending.index(current) + 1:]
                    break
                continue
            kind = msg[0]
            if kind == "nodevice":
                report.notes.append(msg[1])
                for k in pending:
                    v = by_key[k]
                    report.runs.extend(Run(v, s, "not-executed", f"no device: {msg[1]}")
                                       for s in (v.selectors or (None,)))
                pending = []
                finished = True
            elif kind == "device":
                got_device = True
                report.info = msg[1]
                deadline = time.monotonic() + timeout
            elif kind == "start":
                current = msg[1]
                deadline = time.monotonic() + timeout
            elif kind == "result":
                runs = [_run_from_wire(d) for d in msg[2]]
                report.runs.extend(runs)
                report.discovered.update(msg[3])
                if log:
                    for r in runs:
                        log(_line(r))
                    if any(r.result == "mismatch" for r in runs):
                        for line in msg[4]:
                            log(f"    {line}")
                pending = pending[pending.index(msg[1]) + 1:]
                current = None
            elif kind == "done":
                finished = True
            if finished:
                proc.join(10)
                if proc.is_alive():
                    proc.kill()
                pending = [] if kind in ("done", "nodevice") else pending
                break
    report.seconds = time.perf_counter() - t0
    return report


# ---- output -----------------------------------------------------------------------------------


def table(report: Report) -> str:
    """One line per variant (selectors folded), then the totals."""
    rows: dict[str, list[Run]] = {}
    for r in report.runs:
        rows.setdefault(r.variant.key, []).append(r)
    width = max((len(k) for k in rows), default=10)
    out = [f"{'variant':<{width}}  {'check':<14} {'discover':<10} detail"]
    counts: dict[str, int] = {}
    for key, runs in rows.items():
        checks = [r for r in runs if r.mode == "check"]
        disc = [r for r in runs if r.mode == "discover"]
        results = sorted({r.result for r in checks})
        res = results[0] if len(results) == 1 else "/".join(results)
        if len(checks) > 1:
            res += f" x{len(checks)}"
        for r in checks:
            counts[r.result] = counts.get(r.result, 0) + 1
        dres = disc[0].result if disc else "-"
        bad = [r for r in runs if r.result in ("mismatch", "error")]
        detail = _short(bad[0].detail, 90) if bad else ""
        out.append(f"{key:<{width}}  {res:<14} {dres:<10} {detail}")
    total = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    dcount = sum(1 for r in report.runs if r.mode == "discover")
    dbad = sum(1 for r in report.runs if r.mode == "discover" and r.result != "match")
    info = report.info
    out.append(f"device: {info.get('device')} (sm_{info.get('sm')}), driver "
               f"{info.get('driver')}; {report.seconds:.1f} s")
    out.append(f"checks: {total or 'none'}"
               + (f"; discoveries: {dcount - dbad} agree, {dbad} differ" if dcount else ""))
    return "\n".join(out)


def write_evidence(report: Report, directory: str | Path) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ev = report.evidence()
    slug = "".join(ch if ch.isalnum() else "-" for ch in str(ev.get("device", "gpu"))).strip("-")
    stamp = ev["date"].replace(":", "").replace("-", "")
    path = d / f"{slug.lower()}-{stamp}.json"
    path.write_text(dumps_evidence(ev), encoding="utf-8")
    return path


def dumps_evidence(ev: Mapping[str, Any]) -> str:
    """Evidence JSON with one run, and one discovered map, a line (compact, diffable)."""
    head = {k: v for k, v in ev.items() if k not in ("runs", "discovered")}
    lines = ["{"]
    lines += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    runs = [f"  {json.dumps(r, separators=(',', ':'))}" for r in ev.get("runs", [])]
    lines.append(' "runs": [')
    lines.append(",\n".join(runs))
    lines.append(" ],")
    maps = [f"  {json.dumps(h)}: {json.dumps(m, separators=(',', ':'))}"
            for h, m in (ev.get("discovered") or {}).items()]
    lines.append(' "discovered": {')
    lines.append(",\n".join(maps))
    lines.append(" }")
    lines.append("}")
    return "\n".join(x for x in lines if x) + "\n"


def load_layouts(path: str | None) -> list[dict[str, Any]]:
    if not path:
        raise FileNotFoundError("--layouts JSON is required here (export it with "
                                "'python -m formal export --format json -o build/layouts.json'"
                                " where the prover is installed)")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    recs = doc.get("layouts") if isinstance(doc, dict) else None
    if not isinstance(recs, list):
        raise ValueError(f"{path}: not a layouts export (no 'layouts' list)")
    return recs


def _catalog_records() -> list[dict[str, Any]]:
    """The embedded catalog's layouts (needs the prover: only where no --layouts is given)."""
    from ..api import model_of
    from ..export import to_json

    return list(json.loads(to_json(model_of([]).layouts))["layouts"])


def main_from_args(args: argparse.Namespace) -> int:
    """Exit 0: every executed check matched (and discoveries agreed); 1: a mismatch or an
    error; 2: usage (no layouts)."""
    try:
        if getattr(args, "layouts", None):
            records = load_layouts(args.layouts)
        else:
            try:
                records = _catalog_records()
            except ImportError as exc:
                raise ValueError(f"no --layouts given and the catalog cannot be read here "
                                 f"({exc}); export it where the prover is installed") from exc
    except (OSError, ValueError) as exc:
        print(f"ptxlayout gpu: {exc}", file=sys.stderr)
        return 2
    spec = getattr(args, "device", None) or "cuda"
    trials = max(1, int(getattr(args, "trials", 4) or 4))

    def log(line: str) -> None:
        print(line, flush=True)

    report = run_supervised(spec, records, trials, getattr(args, "only", None),
                            bool(getattr(args, "discover", False)),
                            not getattr(args, "no_ptxas", False),
                            float(getattr(args, "timeout", 120.0) or 120.0), log)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if getattr(args, "record", None):
        path = write_evidence(report, args.record)
        print(f"evidence written to {path}")
    print(table(report))
    bad = [r for r in report.runs if r.result in ("mismatch", "error")]
    return 1 if bad else 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m formal.execute.gpu",
                                 description="Check every mma / mma.sp layout on a CUDA device.")
    ap.add_argument("--layouts", metavar="JSON",
                    help="layouts exported by 'ptxlayout export --format json'")
    ap.add_argument("--trials", type=int, default=4, help="random trials (warps) per run")
    ap.add_argument("--record", metavar="DIR", help="write evidence JSON to DIR")
    ap.add_argument("--discover", action="store_true",
                    help="also recover every map and the metadata fields from the hardware")
    ap.add_argument("--only", metavar="SUBSTR", help="only variants whose key contains this")
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N, or fake (tests)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="watchdog: seconds one variant may take (default 120)")
    ap.add_argument("--no-ptxas", action="store_true",
                    help="do not assemble the variants the device cannot run")
    return ap


if __name__ == "__main__":  # pragma: no cover - the command line
    sys.exit(main_from_args(parser().parse_args()))
