"""The move and wgmma families' tasks of ``ptxlayout gpu``, run on the device bit exact.

``ptxlayout gpu --layouts LAYOUTS.json [--only SUBSTR] [--no-experiments]`` runs them after
the mma families (``formal.execute.record``), numpy + CuPy only (no prover).  For every row of
``formal.base.matrix_variants`` the device runs:

- **moves** (``check``): fresh random shared-memory images and registers each trial; rows at
  random 16-byte slots, the lanes whose addresses the instruction must ignore pointing at
  random decoy rows; every lane's registers (ldmatrix, movmatrix) or the whole image
  (stmatrix: no stray writes) compared bit for bit with ``formal.execute.matrix``.
  ``discover``: data that name their own cell recover each map from the hardware alone.
- **wgmma** (``check``): random exact A, B, C (``formal.execute.cpu``'s pools), A packed by
  its register layout (``.rs``) or laid out in shared memory (``.ss``), B through a matrix
  descriptor, C in the accumulator by the C/D layout; D compared bit for bit with
  ``A x B + C``.  The shared-memory layout is ``matrix.canonical`` (no swizzle, core
  matrices adjacent along K: LBO 128, SBO 256).
- **wgmma.sp** (``check``): random 2:4 (``.tf32``: 1:2) sparse A --
  random legal indices per chunk, non-zero values there -- packed by the sparse A map
  (``.rs``) or as the compressed 64 x K/2 matrix in shared memory (``.ss``), each thread's
  metadata word from the metadata map at the variant's selector (the other threads' and
  bits random), B dense through its descriptor (LBO 128, SBO 512: K is twice the dense
  one's), D compared bit for bit with the decompressed A x B + C (``matrix.sparse_trial``).
  Experiments: the metadata map with chunks 2j and 2j + 1 swapped must mismatch; A in
  shared memory uncompressed (64 x K, zeros included) is run and reported (``any``).
- **wgmma probes** (``discover``): one-hot images recover which (row, k) the hardware reads
  from each element slot of B (and of A from shared memory) under a descriptor with
  deliberately odd LBO / SBO, and compare it with ``SmemLayout.offset``.
- **experiments**: other layouts (core matrices adjacent along M/N; 32/64/128-byte
  swizzles) and a negative control (LBO and SBO written into each other's field: must
  mismatch).
- Rows the device cannot run (sm_100a) are assembled with ``ptxas`` (``compiled-only``).

Its row of the executor (``formal.execute.supervisor.FAMILIES``) is ``matrix_tasks`` and
``run_matrix``: the supervisor runs each task in a child process it watches, so a kernel
that faults (and spoils the CUDA context), hangs or kills its process is an ``error`` of
that task alone and a fresh child takes the rest.  Modules are written to files named by
the hash of their text before ``cupy.RawModule(path=...)`` loads them (CuPy caches by path).

**The layouts JSON** (``formal.export``'s records; fields the runner reads): ``instruction``
(ldmatrix | stmatrix | movmatrix | wgmma | wgmma.sp), ``shape`` (m8n8 ...; wgmma m64nNk16,
where an A record may keep the literal ``N``), ``operand`` (``r`` for ldmatrix / stmatrix; ``a`` and
``d`` for movmatrix; ``A`` and ``C/D`` for wgmma, and ``metadata`` for wgmma.sp, whose A
cells carry ``firstcol`` / ``lastcol`` and whose metadata record has ``fields`` [{selector,
lane, bit_lo, bit_hi, row, chunk, slot}] instead of cells), ``types`` (element types served:
``b16``; wgmma A's types, or the accumulator type), ``num`` (1, 2, 4) and ``trans`` (bool)
for ldmatrix / stmatrix, ``cells`` [{lane, element, row, col} (optionally ``matrix``)],
optional ``map_hash`` (else ``base.hashes.cell_table_hash`` of the cells) and ``id``.  Cell
conventions: ``formal.execute.matrix``.

Evidence (``--record DIR``): the runs go into the one evidence file of the invocation, in the
schema of ``formal.execute.gpu`` plus, per run, ``num`` / ``trans`` / ``a_source`` /
``smem_layout`` / ``plant`` where they apply (wgmma.sp: ``selector``, and ``meta`` among the
layout hashes).  ``formal.execute.devices.FakeDevice`` emulates wgmma and wgmma.sp with given
maps as the hardware's (the tests' device, ``--device fake``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ..base.hashes import cell_table_hash
from ..base.matrix_variants import (
    MATRIX_VARIANTS,
    TMEM_VARIANTS,
    WGMMA_SP_VARIANTS,
    Variant,
    runs_on,
    variant,
)
from ..base.variants import TYPE_BITS, selects
from . import matrix as mx
from . import ptx_matrix, smem_runs
from .devices import CupyDevice, FakeDevice
from .maps import OperandMap
from .runs import Job, Outcome, Run, Task, short_text

MOVE_IMAGE = ptx_matrix.MOVE_SMEM_BYTES


# ---- tasks ------------------------------------------------------------------------------------


def _lay(s: mx.SmemLayout) -> tuple[int, int, int, bool, str, str]:
    return (s.swizzle, s.lbo, s.sbo, s.swap_fields, s.major, s.mn_field)


def mn_major_hypotheses(n: int = 64) -> list[mx.SmemLayout]:
    """M/N-major .f16 layouts of a 64-wide operand, each physical arrangement under both
    readings of the descriptor (the M/N stride in SBO, or in LBO): one of each pair must
    match.  No swizzle: core matrices adjacent along M/N (128 bytes), K groups after all of
    them; swizzled: atoms of 8 K-rows x W bytes, adjacent along M/N, K groups after."""
    out = []
    for w in (0, 32, 64, 128):
        width = w or 16
        atoms = max(1, 2 * n // width)
        s_mn = 8 * width
        s_k = s_mn * atoms if atoms > 1 else 8 * width
        if atoms == 1:
            s_mn = 4 * s_k  # one atom along M/N: this stride is never used
        for field_ in ("sbo", "lbo"):
            lbo, sbo = (s_k, s_mn) if field_ == "sbo" else (s_mn, s_k)
            out.append(mx.SmemLayout(w, lbo, sbo, False, "MN", field_))
    return out


def probe_layout(rows: int) -> mx.SmemLayout:
    """Core matrices adjacent along M/N (SBO 128) and a gap before the second K column of
    core matrices (LBO = 16 * rows + 256): a reading that confused the two fields, or read
    the gap, shows at once."""
    return mx.SmemLayout(0, 16 * rows + 256, 128)


def check_layout(v: Variant) -> mx.SmemLayout:
    """The shared-memory layout of a check: ``matrix.canonical`` for B's K bytes (32 for
    every dense wgmma; 64 for wgmma.sp, whose K is twice the dense one's) -- the compressed
    A of wgmma.sp (K/2 columns, 32 bytes) sits in the same layout, its K-neighbour core
    matrices unused."""
    return mx.canonical(v.n, v.k * TYPE_BITS[v.b] // 8 if v.sparse else 32)


def selected(only: str | None) -> list[Variant]:
    """The rows of the move and wgmma families whose key contains ``only`` (all: None)."""
    return [v for v in MATRIX_VARIANTS + WGMMA_SP_VARIANTS if selects(only, v.key)]


def tasks(sm: int, only: str | None = None, experiments: bool = True) -> list[Task]:
    out: list[Task] = []
    sel = selected(only)
    for v in sel:
        if not runs_on(v, sm):
            out.append(Task(v.key, "compile"))
            continue
        if v.wgmma:
            out.append(Task(v.key, "check", _lay(check_layout(v))))
        else:
            out += [Task(v.key, "check"), Task(v.key, "discover")]
    out += smem_runs.smem_tasks(sm, only)  # wgmma under the catalog's shared-memory layouts
    if not experiments or sm // 10 != 9:
        return out
    n = 64
    for a, b, c, op in (("f16", "f16", "f32", ""), ("bf16", "bf16", "f32", ""),
                        ("s8", "s8", "s32", ""), ("tf32", "tf32", "f32", "")):
        k = {"f16": 16, "bf16": 16, "s8": 32, "tf32": 8}[a]
        key_rs = f"wgmma.m64n{n}k{k}.{c}.{a}.{b}{op}.rs"
        key_ss = f"wgmma.m64n{n}k{k}.{c}.{a}.{b}{op}.ss"
        if not selects(only, key_rs):
            continue
        out.append(Task(key_rs, "discover", _lay(probe_layout(n)), "B"))
        out.append(Task(key_ss, "discover", _lay(probe_layout(64)), "A"))
    for v in sel:  # wgmma.sp: a metadata map with its chunks swapped must mismatch
        if v.sparse and v.n == 64 and v.selector == 0 and v.a_source == "reg":
            out.append(Task(v.key, "experiment", _lay(check_layout(v)), expect="mismatch",
                            plant="meta-chunks-swapped"))
        # ... and A in shared memory uncompressed (64 x K, zeros included), the other
        # reading of "A from shared memory": reported, not judged (the check decides)
        if v.sparse and v.n == 64 and v.selector == 0 and v.a_source == "smem" and \
                v.a == v.b and v.c != "f16":
            out.append(Task(v.key, "experiment", _lay(check_layout(v)), expect="any",
                            plant="a-smem-dense"))
    for v in sel:
        if not v.wgmma or v.sparse or v.n != 64 or v.c == "f16" or (v.a != v.b):
            continue
        if v.a not in ("f16", "bf16", "tf32", "e4m3", "s8", "b1"):
            continue
        alts = [mx.canonical(64, mn_inner=True), mx.canonical(64, swizzle=32),
                mx.canonical(64, swizzle=64), mx.canonical(64, swizzle=128)]
        for s in alts:
            out.append(Task(v.key, "experiment", _lay(s)))
        neg = mx.canonical(64)
        out.append(Task(v.key, "experiment", _lay(mx.SmemLayout(0, neg.lbo, neg.sbo, True)),
                        expect="mismatch"))
        if v.a in ("f16", "bf16"):
            out += [Task(v.key, "experiment", _lay(s), expect="any")
                    for s in mn_major_hypotheses(64)]
    return out


def _run(key: str, mode: str, result: str, detail: str = "", **kw: Any) -> Run:
    """A run of the row ``key`` (wgmma.sp: at the row's selector)."""
    v = variant(key)
    return Run(v, v.selector if v.sparse else None, result, detail, mode=mode, **kw)


def run_matrix_task(dev: CupyDevice | FakeDevice | None, task: Task,
                    records: Sequence[Mapping[str, Any]], trials: int,
                    use_ptxas: bool = True) -> tuple[Run, dict[str, dict[str, Any]]]:
    """One move or wgmma task on ``dev`` with the maps of ``records``: the run, and the
    tables it keeps by hash (what a discovery or probe showed).  A ``compile`` task is
    assembled with ptxas unless ``use_ptxas`` is off (``--no-ptxas``: ``not-executed``)."""
    v = variant(task.key)
    t0 = time.perf_counter()
    if task.catalog:
        return smem_runs.run_smem_task(dev, task, records, trials), {}
    if task.mode == "compile":
        from .ptx import assemble, module, ptxas_path

        if not use_ptxas:
            return _run(v.key, "check", "not-executed",
                        f"needs {v.target}; not assembled (--no-ptxas)"), {}
        if ptxas_path() is None:
            return _run(v.key, "check", "not-executed", f"needs {v.target}; no ptxas here"), {}
        ok, msg = assemble(module(v).text, v.target)
        return _run(v.key, "check", "compiled-only" if ok else "error",
                   f"assembled for {v.target} with ptxas" if ok else short_text(msg)), {}
    try:
        maps = mx.maps_for(v, records)
        if task.plant:
            maps = mx.planted(v, maps, task.plant)
    except mx.LayoutError as exc:
        return _run(v.key, task.mode, "not-executed", short_text(str(exc))), {}
    assert dev is not None
    hashes = mx.hashes(maps)
    lay = task.smem
    lay_rec = ({**asdict(lay), "name": lay.name, "descriptor_hi": f"0x{lay.descriptor_hi():016x}"}
               if lay else None)
    kept: dict[str, dict[str, Any]] = {}
    run = _run(v.key, task.mode, "match", layout_hashes=hashes, smem_layout=lay_rec,
              expect=task.expect, probe=task.operand, plant=task.plant)
    if not v.wgmma and task.mode == "check":
        run.seed = secrets.randbits(63)
        rng = np.random.default_rng(run.seed)
        t = mx.move_trial(v, maps, rng, trials, MOVE_IMAGE)
        got = dev.move(v, t)
        diffs = mx.move_differences(v, maps, t, got)
        run.trials = trials
        run.result = "mismatch" if diffs else "match"
        run.detail = "; ".join(diffs) if diffs else f"{trials} trials bit-exact"
    elif not v.wgmma:  # discover
        t = mx.discovery_trial(v, maps, MOVE_IMAGE)
        got = dev.move(v, t)
        table = mx.discovered(v, maps, t, got)
        op = "d" if v.instruction == "movmatrix" else "r"
        h = cell_table_hash(*maps[op].label, "cells", table)
        run.discovered_hashes = {op: h}
        same = h == hashes[op]
        run.result = "match" if same else "mismatch"
        run.detail = ("the map the hardware shows is the layout's" if same else
                      "differs: " + _first_diff(table, maps[op]))
        if not same:
            kept[h] = _compact(v, op, "cells", table)
    elif task.operand:  # wgmma probe
        assert lay is not None
        pt, slots = mx.probe_trial(v, maps, lay, task.operand)
        got = dev.wgmma(v, pt, lay, lay if task.operand == "B" else mx.canonical(v.n))
        table = mx.probe_map(v, maps, task.operand, got)
        want = mx.expected_probe(v, lay, task.operand)
        h = cell_table_hash(v.instruction, v.shape, task.operand, "slots", table)
        run.discovered_hashes = {task.operand: h}
        kept[h] = _compact(v, task.operand, "slots", table)
        bad = [(g, w) for g, w in zip(table, want, strict=True) if g != w]
        run.trials = slots
        run.result = "mismatch" if bad else "match"
        used = sum(1 for w in want if w["mn"] >= 0)
        run.detail = (f"{slots} one-hot probes ({used} slots read, {slots - used} unread) as "
                      f"{lay.name} predicts" if not bad else
                      f"{len(bad)} of {slots} slots differ, first: " + "; ".join(
                          f"slot {g['slot']} read as (mn {g['mn']}, k {g['k']}), predicted "
                          f"(mn {w['mn']}, k {w['k']})" for g, w in bad[:4]))
    else:  # wgmma check / experiment
        assert lay is not None
        run.seed = secrets.randbits(63)
        rng = np.random.default_rng(run.seed)
        # A (from shared memory) in the same kind of layout; every layout the tasks use is
        # the same for 64 rows as for B's N rows (the M/N-adjacent one is run at N = 64)
        wt = (mx.sparse_trial(v, maps, rng, trials, lay, lay, dense_a=True)
              if task.plant == "a-smem-dense" else mx.random_trial(v, maps, rng, trials, lay,
                                                                   lay))
        got = dev.wgmma(v, wt, lay, lay)
        cells, line = mx.wgmma_differences(v, maps, wt, got)
        run.trials = trials
        run.result = "mismatch" if cells else "match"
        run.detail = line or f"{trials} trials bit-exact"
        run.d_cells = [list(c) for c in cells[:64]]
    run.seconds = time.perf_counter() - t0
    return run, kept


def _first_diff(table: Sequence[Mapping[str, int]], m: OperandMap) -> str:
    out = []
    for c in table:
        t, i = c["lane"], c["element"]
        want = (int(m.row[t, i]), int(m.col[t, i]))
        if (c["row"], c["col"]) != want:
            out.append(f"lane {t} element {i}: hardware ({c['row']}, {c['col']}), layout {want}")
        if len(out) >= 4:
            break
    return "; ".join(out)


def _compact(v: Variant, operand: str, kind: str, rows: Sequence[Mapping[str, int]]) \
        -> dict[str, Any]:
    cols = list(rows[0].keys()) if rows else []
    return {"instruction": v.instruction, "shape": v.shape, "operand": operand, "kind": kind,
            "columns": cols, "rows": [[int(r[c]) for c in cols] for r in rows]}


# ---- the family's hook ------------------------------------------------------------------------


def matrix_tasks(job: Job, sm: int) -> list[Task]:
    """The move and wgmma families' tasks on a device of ``sm`` (``tasks``)."""
    return tasks(sm, job.only, job.experiments)


def run_matrix(device: CupyDevice | FakeDevice | None, job: Job, task: Task,
               memo: dict[str, Any]) -> Outcome:
    """One move or wgmma task (``run_matrix_task``); what a discovery or probe showed goes
    into the evidence's ``discovered``."""
    run, kept = run_matrix_task(device, task, job.records, job.trials, job.use_ptxas)
    return Outcome([run], kept)


def tmem_tasks(job: Job, sm: int) -> list[Task]:
    """The tcgen05.ld / tcgen05.st forms ``job.only`` picks: checked on a Blackwell device
    (every word of fresh random images, ``formal.execute.tmem``), assembled for sm_100a on any
    other (``compile``)."""
    return [Task(v.key, "check" if runs_on(v, sm) else "compile")
            for v in TMEM_VARIANTS if selects(job.only, v.key)]


def run_tmem(device: CupyDevice | FakeDevice | None, job: Job, task: Task,
             memo: dict[str, Any]) -> Outcome:
    """One tcgen05.ld / tcgen05.st form: assembled (``compile``, as a move's), or run and
    every word compared with its map (``tmem.check_forms``)."""
    if task.mode == "compile":
        return run_matrix(device, job, task, memo)
    from .tmem import check_forms
    seed = secrets.randbits(63)
    got = [r for r in check_forms(device, job.records, task.key, job.trials, seed)
           if r["key"] == task.key]
    if not got:
        return Outcome([_run(task.key, "check", "not-executed", "no map of this form")])
    r = got[0]
    try:
        hashes = mx.hashes(mx.maps_for(variant(task.key), job.records))
    except mx.LayoutError:
        hashes = {}
    run = _run(task.key, "check", r["result"], short_text(r["detail"]) or
               f"{job.trials} trials bit-exact ({r['elements']} words)", layout_hashes=hashes)
    run.seed, run.trials = seed, job.trials
    return Outcome([run])
