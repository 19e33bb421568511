"""One supervisor for every family of ``ptxlayout gpu``: one task list, one worker, one watchdog.

A worked example.  ``ptxlayout gpu --only mma.m16n8k8.f32.tf32,ldmatrix.m8n8.x1.b16`` on an
sm_90 device makes one task list from the rows of ``FAMILIES``, each family contributing its
tasks for that device:

    0  mma       Task("mma.m16n8k8.f32.tf32.tf32.f32")
    1  mma       Task("mma.m16n8k8.f32.tf32.tf32.f32", erratum="spec:...")   (an erratum it serves)
    2  matrix    Task("ldmatrix.m8n8.x1.b16", "check")
    3  matrix    Task("ldmatrix.m8n8.x1.b16", "discover")

A child process (spawned: CUDA does not survive a fork) opens the device, announces it, and
runs the tasks from a start index on, each through its family's ``run``, sending
``("start", i)`` before and ``("result", i, runs, ...)`` after through a pipe.  The parent
watches: if task 2 faults the CUDA context (the device says it is ``broken``), the child
says ``restart`` and a fresh child takes tasks 3..; if task 2 kills its process or runs past
``timeout`` seconds, task 2 is an ``error`` of its own ("the worker died (exit -11)",
"timed out (watchdog)") and a fresh child takes 3..; past ``deadline`` (the whole run) the
running task is an ``error`` and the rest ``not-executed``.  Without a device every task is
``not-executed`` (``assemble_only`` then assembles what ptxas can).  Every task gives an
``Outcome``, and the ``Report`` holds them in task order, so the evidence file
(``formal.execute.record``) lists the runs in the same order whatever failed.

**A new family is one row** of ``FAMILIES``: a function giving its tasks for a job on a
device of compute capability ``sm`` (``tasks(job, sm)``: sm 0 is "no device"), and a
function running one of them (``run(device, job, task, memo)`` -> ``Outcome``; ``memo`` is
the process's, for what a family makes once: plans, ptxas verdicts).  A task that raises
is an ``error`` run of that task alone (``runs.task_runs``).
"""

from __future__ import annotations

import queue
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import block_scale, gpu, gpu_matrix, tcgen05_mma, tcgen05_run
from .devices import DeviceError
from .runs import NO_DEVICE_INFO, Job, Outcome, Report, Run, Task, short_text, task_runs

__all__ = ["FAMILIES", "Family", "Job", "Outcome", "Report", "all_tasks", "assemble_only",
           "no_device", "run_all", "run_line", "run_supervised", "run_task", "worker"]


@dataclass(frozen=True)
class Family:
    """One row of the executor: a family's tasks on a device, and how one of them runs."""

    name: str
    tasks: Callable[[Job, int], list[Task]]
    run: Callable[[Any, Job, Task, dict[str, Any]], Outcome]


FAMILIES: tuple[Family, ...] = (
    Family("mma", gpu.mma_tasks, gpu.run_mma),
    Family("matrix", gpu_matrix.matrix_tasks, gpu_matrix.run_matrix),
    Family("tmem", gpu_matrix.tmem_tasks, gpu_matrix.run_tmem),
    Family("block-scale", block_scale.scale_tasks, block_scale.run_scale),
    Family("tcgen05-mma", tcgen05_mma.tc_mma_tasks, tcgen05_run.run_tc_mma),
)


def all_tasks(job: Job, sm: int) -> list[tuple[Family, Task]]:
    """Every family's tasks for ``job`` on a device of ``sm`` (0: none), in table order."""
    return [(f, t) for f in FAMILIES for t in f.tasks(job, sm)]


def run_task(device: Any, job: Job, family: Family, task: Task,
             memo: dict[str, Any]) -> Outcome:
    """``family.run`` of ``task``; an exception is an ``error`` of this task alone."""
    try:
        return family.run(device, job, task, memo)
    except Exception as exc:  # noqa: BLE001 - report it, and go on with the next task
        return Outcome(task_runs(task, "error", short_text(
            f"{type(exc).__name__}: {exc}; " + traceback.format_exc(limit=2))))


def run_line(r: Run) -> str:
    """One run as the log prints it."""
    sel = "" if r.selector is None or r.variant.wgmma else f" sel {r.selector}"
    what = f" probe {r.probe}" if r.probe else ""
    what += f" [{r.smem_layout['name']}]" if r.smem_layout else ""
    what += f" planted {r.plant}" if r.plant else ""
    what += f" [{r.erratum} as written]" if r.erratum else ""
    return (f"{r.variant.key}{sel} {r.mode}{what}: {r.result} ({r.seconds:.2f} s) "
            f"{short_text(r.detail, 300)}")


def _take(report: Report, out: Outcome, log: Callable[[str], None] | None) -> None:
    report.add(out)
    if log:
        for r in out.runs:
            log(run_line(r))
        for line in out.lines if any(r.result == "mismatch" for r in out.runs) else []:
            log(f"    {line}")


def run_all(device: Any, records: Sequence[Mapping[str, Any]], trials: int = 4,
            only: str | None = None, do_discover: bool = False, use_ptxas: bool = True,
            log: Callable[[str], None] | None = None,
            errata: Sequence[Mapping[str, Any]] = (), experiments: bool = True) -> Report:
    """Every task of every family on ``device``, in this process (no watchdog)."""
    t0 = time.perf_counter()
    job = Job(records, errata, trials, only, do_discover, experiments, use_ptxas)
    report = Report(device.info())
    memo: dict[str, Any] = {}
    for family, task in all_tasks(job, device.sm):
        _take(report, run_task(device, job, family, task, memo), log)
    report.seconds = time.perf_counter() - t0
    return report


# ---- a supervised run (a child process per batch, a watchdog in the parent) ------------------


def worker(spec: str, job: Job, start: int, conn: Any) -> None:
    """Run the tasks from ``start`` on, on the device ``spec`` (``gpu.make_device``'s), one
    message each through ``conn``."""
    # Messages go through a pipe, not a multiprocessing.Queue: Connection.send has written the
    # message before it returns, where Queue.put hands it to a feeder thread that a crash
    # right after can kill first -- and the parent would blame the crash on the task before.
    try:
        device = gpu.make_device(spec, job.records)
    except DeviceError as exc:
        conn.send(("nodevice", str(exc)))
        return
    todo = all_tasks(job, device.sm)
    # announced only now: the per-task watchdog starts here, after the set-up above
    conn.send(("device", device.info()))
    memo: dict[str, Any] = {}
    for i in range(start, len(todo)):
        family, task = todo[i]
        conn.send(("start", i))
        out = run_task(device, job, family, task, memo)
        conn.send(("result", i, [_wire(r) for r in out.runs], out.discovered, out.lines,
                   out.maps))
        if getattr(device, "broken", False):
            # a fault may leave the CUDA context unusable: a fresh process takes the rest
            conn.send(("restart",))
            return
    conn.send(("done",))


def _wire(r: Run) -> dict[str, Any]:
    d = r.record()
    d["seconds"] = r.seconds
    return d


def _receive(conn: Any, timeout: float) -> tuple[Any, ...]:
    """The worker's next message; ``queue.Empty`` when none came within ``timeout`` or the
    worker's end is closed (it exited or died: the caller asks the process which)."""
    if conn.poll(timeout):
        try:
            return conn.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            time.sleep(min(timeout, 0.1))  # the pipe is closed: let the process be reaped
    raise queue.Empty


def run_supervised(spec: str, records: Sequence[Mapping[str, Any]], trials: int = 4,
                   only: str | None = None, do_discover: bool = False,
                   use_ptxas: bool = True, timeout: float = 120.0,
                   log: Callable[[str], None] | None = None,
                   errata: Sequence[Mapping[str, Any]] = (),
                   deadline: float | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   experiments: bool = True) -> Report:
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
    job = Job([dict(r) for r in records], [dict(e) for e in errata], trials, only, do_discover,
              experiments, use_ptxas)
    report = Report(dict(NO_DEVICE_INFO))
    todo = all_tasks(job, 0)  # until a device names its compute capability
    start = 0

    def fill(upto: int, result: str, why: str) -> None:
        """Tasks ``start`` .. ``upto`` - 1 could not run."""
        nonlocal start
        for _f, task in todo[start:upto]:
            report.add(Outcome(task_runs(task, result, why)))
        start = max(start, upto)

    while start < len(todo):
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=worker, args=(spec, job, start, sender), daemon=True)
        proc.start()
        sender.close()  # the child holds the only writing end: its exit closes the pipe
        current: int | None = None
        got_device = False
        why = ""
        limit = time.monotonic() + timeout + 60  # the child's start-up and CuPy import
        while True:
            now = time.monotonic()
            if end is not None and now > end:
                why = "the overall time limit ran out"
            elif now > limit:
                why = "timed out (watchdog)"
            if why:
                proc.kill()
                break
            soon = limit if end is None else min(limit, end)
            try:
                msg = _receive(receiver, max(0.1, min(1.0, soon - now)))
            except queue.Empty:
                if proc.is_alive():
                    continue
                why = f"the worker died (exit {proc.exitcode})"
                break
            kind = msg[0]
            if kind == "nodevice":
                report.notes.append(msg[1])
                fill(len(todo), "not-executed", f"no device: {msg[1]}")
            elif kind == "device":
                got_device = True
                report.info = msg[1]
                todo = all_tasks(job, int(msg[1].get("sm", 0)))
                limit = time.monotonic() + timeout
            elif kind == "start":
                current = int(msg[1])
                limit = time.monotonic() + timeout
            elif kind == "result":
                _take(report, Outcome([Run.from_record(d) for d in msg[2]], msg[3], msg[4],
                                      msg[5]), log)
                start = int(msg[1]) + 1
                current = None
            if progress is not None:
                progress(start, len(todo))
            if kind == "restart" and log:
                log("(a fault may have spoilt the CUDA context: a fresh process takes the "
                    f"remaining {len(todo) - start} tasks)")
            if kind in ("done", "nodevice", "restart"):
                break
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
        receiver.close()
        if not why:  # done, no device, or a restart from ``start``
            continue
        if why == "the overall time limit ran out":
            if current is not None:
                fill(current + 1, "error", f"{why} while running this variant")
            fill(len(todo), "not-executed", f"not run: {why} ({deadline:.0f} s)")
        elif not got_device:  # died starting up: no device for the rest
            fill(len(todo), "error", f"device worker: {why}")
        else:
            failed = start if current is None else current
            if log:
                log(f"{todo[failed][1].label}: error ({why})")
            fill(failed + 1, "error", f"{why} while running this variant")
    if progress is not None:
        progress(len(todo), len(todo))
    report.seconds = time.perf_counter() - t0
    return report


def no_device(report: Report) -> str | None:
    """Why no device ran anything in ``report`` (None: a device answered)."""
    if report.info.get("device") != "unknown":
        return None
    return "; ".join(report.notes) or "no device answered"


# what ptxas says of a target it does not know (CUDA 13 dropped sm_70, m8n8k4's target)
UNKNOWN_TARGET = "is not defined for option 'gpu-name'"


def assemble_only(report: Report, use_ptxas: bool = True) -> Report:
    """The compile-only run where no device is: every run that was not executed is
    assembled with ptxas for its own target (``compiled-only``, or an ``error`` when ptxas
    rejects it); without ptxas, or with one that no longer knows the variant's target, it
    stays ``not-executed`` with the reason."""
    checker = gpu.ptxas_checker(use_ptxas)
    for k, r in enumerate(report.runs):
        if r.result != "not-executed":
            continue
        err = checker(r.variant)
        if err == "no ptxas":
            continue
        if err is not None and UNKNOWN_TARGET in err:  # CUDA 13's ptxas and sm_70: not ours
            report.runs[k] = replace(r, detail=f"this ptxas no longer knows {r.variant.target}: "
                                     "neither run nor assembled")
            continue
        report.runs[k] = replace(
            r, result="compiled-only" if err is None else "error",
            detail=f"assembled for {r.variant.target} with ptxas; no device ran it"
            if err is None else f"ptxas failed: {short_text(err, 300)}")
    return report
