"""How ``ptxlayout gpu`` runs a task of the ``tcgen05-mma`` family
(``formal.execute.tcgen05_mma``) on a device: assembled for sm_100a where the device is not
sm_100a, else on the fake device (``devices.FakeDevice``: its records are the truth of a
``FakeTcgen05Device``) or on a real one through CuPy (``CupyTcgen05``).

A worked example: on the lent H100 (sm_90) the task ``tcgen05.mma.m128n64k16.kind::f16.f32.
f16.f16.layoutD compile`` gives one run, ``compiled-only``, "tcgen05.mma needs sm_100a; the
device is sm_90: assembled with ptxas, not run"; on a B200 (sm_100) the same row's ``check``
launches the kernel with 128 threads (two CTAs in a cluster for ``cta_group::2``) and
compares D cell by cell.  ``stale_tc_scale`` lists what an sm_100 device still owes of the
block-scaled rows (``ptxlayout evidence``): a row with no match under its scale layouts'
current hashes, say ``...layoutD.sf3_1: no hardware match for the current scale layouts (no
run; scale_A a48b..., scale_B ...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base.matrix_variants import TCGEN05_MMA_SCALE_VARIANTS, variant
from ..base.variants import Variant, runs_on
from .datapath import DataPathError, datapath_map
from .devices import POISON, DeviceError, FakeDevice
from .ptx_tcgen05 import THREADS, module_text
from .runs import Job, Outcome, Run, Task, short_text
from .tcgen05_mma import (
    TARGET,
    FakeTcgen05Device,
    Launch,
    kernel_of,
    run_tc_task,
    scale_row_tasks,
)
from .tcgen05_scale import row_scales, scale_view


class CupyTcgen05:
    """A real device's launch (``devices.CupyDevice``): the kernel's module written under
    a name unique to its text, the image, ``out`` and (``.sp``) the metadata, (block-scaled)
    the scale factors' words in global memory -- one argument a ``.param`` of the entry, in
    its order --, one CTA of 128 threads per CTA of the group (a cluster of two for
    ``cta_group::2``)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.functions: dict[str, Any] = {}

    def launch(self, ln: Launch) -> np.ndarray:
        from .ptx import module_filename
        dev, k = self.device, ln.kernel
        cp = dev.cp
        text = module_text([k])
        name = module_filename(k.name, text)
        if name not in self.functions:
            path = dev.tmp / name
            path.write_text(text, encoding="utf-8")
            try:
                self.functions[name] = cp.RawModule(path=str(path)).get_function(k.name)
            except Exception as exc:  # noqa: BLE001 - CUDA driver / JIT errors
                raise DeviceError(f"JIT/load failed: {type(exc).__name__}: {exc}") from exc
        g = k.cta_group
        try:
            out = cp.full(g * 128 * k.out_columns, POISON, dtype=cp.uint32)
            smem = cp.asarray(np.ascontiguousarray(ln.smem, dtype=np.uint8).ravel())
            args: tuple[Any, ...] = (np.uint32(ln.idesc), np.uint64(ln.adesc),
                                     np.uint64(ln.bdesc), out, smem)
            if k.meta_columns and ln.meta is not None:  # .sp: (CTAs, 128, columns) words
                args += (cp.asarray(np.ascontiguousarray(ln.meta, dtype=np.uint32).ravel()),)
            if sum(k.scale_columns) and ln.scales is not None:  # (CTAs x 128, A's + B's columns)
                args += (cp.asarray(np.ascontiguousarray(ln.scales, dtype=np.uint32).ravel()),)
            self.functions[name]((g,), (THREADS,), args)
            cp.cuda.get_current_stream().synchronize()
            return np.asarray(cp.asnumpy(out)).reshape(g, 128, k.out_columns)
        except Exception as exc:  # noqa: BLE001
            dev.broken = True
            raise DeviceError(f"launch failed: {type(exc).__name__}: {exc}") from exc


def stale_tc_scale(evidence: Any, records: Sequence[Mapping[str, Any]], sm: int) -> list[str]:
    """The block-scaled runs an sm_100 device owes (``ptxlayout evidence``), one line each: a
    row of ``TCGEN05_MMA_SCALE_VARIANTS`` with no ``check`` that matched with the factors
    placed by its scale layouts' current ``map_hash`` (no run, the last one's result, or the
    layouts changed since), and each planted edit (``tcgen05_mma.scale_row_tasks``) with no such
    run that mismatched.  Nothing is owed where the device does not run sm_100a, or for a row
    whose scale layouts ``records`` lack."""
    rows = [v for v in TCGEN05_MMA_SCALE_VARIANTS if runs_on(v, sm)]
    out: list[str] = []
    for t in scale_row_tasks(rows):
        pair = row_scales(records, variant(t.key))
        if pair is None:
            continue
        want = {x.operand: x.map_hash for x in map(scale_view, pair)}
        runs = [r for r in evidence.runs_of([t.key]) if r.mode == t.mode and r.plant == t.plant
                and r.result in ("match", "mismatch")]
        mine = [r for r in runs if all(r.layout_hashes.get(k) == h for k, h in want.items())]
        if any(r.result == t.expect for r in mine):
            continue
        why = "no run" if not runs else (f"last run {mine[-1].result}" if mine else
                                         "the layouts changed since " + runs[-1].file.date[:10])
        hashes = ", ".join(f"{k} {h}" for k, h in want.items())
        out.append(f"{t.key}: no hardware match for the current scale layouts ({why}; {hashes})"
                   if t.mode == "check" else
                   f"{t.key} planted {t.plant}: no run of the current scale layouts mismatched "
                   f"({why}; {hashes}; expected: mismatch)")
    return out


# ---- the family's hook ------------------------------------------------------------------------


def assembled(v: Variant, records: Sequence[Mapping[str, Any]], sm: int, use_ptxas: bool,
              memo: dict[str, Any]) -> Run:
    """Row ``v``'s kernel assembled for sm_100a with ptxas (``compiled-only``: not run)."""
    from .ptx import assemble, ptxas_path
    why = f"tcgen05.mma needs {TARGET}; the device is " + (f"sm_{sm}" if sm else "absent")
    if not use_ptxas:
        return Run(v, None, "not-executed", f"{why}; not assembled (--no-ptxas)")
    if ptxas_path() is None:
        return Run(v, None, "not-executed", f"{why}; no ptxas here")
    try:
        text = module_text([kernel_of(v, datapath_map(records, v.datapath, v.n), 4096,
                                      records)])
    except DataPathError as exc:
        return Run(v, None, "not-executed", f"{why}; {exc}")
    cache: dict[str, tuple[bool, str]] = memo.setdefault("tcgen05-mma ptxas", {})
    if text not in cache:
        cache[text] = assemble(text, TARGET)
    ok, msg = cache[text]
    return Run(v, None, "compiled-only" if ok else "error",
               f"{why}: assembled with ptxas, not run" if ok
               else f"{why}; ptxas failed: {short_text(msg, 300)}")


def run_tc_mma(device: Any, job: Job, task: Task, memo: dict[str, Any]) -> Outcome:
    """One task of the family: assembled where the device is not sm_100a, else run."""
    v = variant(task.key)
    sm = int(getattr(device, "sm", 0) or 0)
    if task.mode == "compile" or not runs_on(v, sm):
        return Outcome([assembled(v, job.records, sm, job.use_ptxas, memo)])
    launcher = memo.get("tcgen05-mma launcher")
    if launcher is None:
        launcher = FakeTcgen05Device(device.truth) if isinstance(device, FakeDevice) \
            else CupyTcgen05(device)
        memo["tcgen05-mma launcher"] = launcher
    return Outcome([run_tc_task(launcher, task, job.records, job.trials)])


__all__ = ["CupyTcgen05", "assembled", "run_tc_mma", "stale_tc_scale"]
