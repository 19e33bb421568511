"""The ``hardware`` obligation: one judge of GPU evidence for every instruction family.

A run in the evidence (``formal.prove.evidence``) names a variant, the map hash it packed each
operand with, and its result.  A layout is judged by the runs of the variants it serves, with
the hash such a run would record for it (``want``): its own map hash, or -- for a layout stated
for every N (wgmma's D) -- the hash of each thread's first elements at the run's N
(``base.hashes.first_elements``).  A worked example: ``mma.m16n8k16.A.u8-s8`` (hash
``8148...``) serves four variants (s8/u8 x s8/u8); a ``match`` of any of them packed with
``8148...`` proves it ("confirmed on NVIDIA H100 80GB HBM3, 2026-11-22: 4 of 4 runnable
variants, 4 runs, ... trials bit-exact"); ``wgmma.m64nNk16.D.f32`` is proved the same way by
``wgmma.m64n64k16.f32.f16.f16.rs`` when that run packed C and read D with the hash of the
layout at N = 64 (the message adds "at N = 64, ...").

The families differ in what one run can say, and ``Served`` names it:

* ``relabel`` (mma, mma.sp): a one-hot discovery recovers a map up to renaming rows and
  columns, so a discovered map refutes only if it differs even so (checked first); a mismatch
  does not say which operand was wrong, so a map no match confirmed is judged by a match of
  the same run with another map of this operand (``Evidence.shown_wrong``), by a discovery
  that recovered it, and last by ``formal.prove.confirm.judge``.
* ``direct`` (ldmatrix, stmatrix, movmatrix, wgmma, wgmma.sp): a run's result speaks for the
  maps it packed with: a mismatch refutes them; matches with this map and with another map of
  the same operand leave it ``unconfirmed``; a move's discovery (``exact``: the addresses fix
  the map, so a discovery is cell for cell) that recovered another map refutes it.  wgmma's
  descriptor probes and experiments test shared memory, not the register maps: not read here.

Verdicts: ``proved``, ``refuted`` (with the first differing cell where a table shows it),
``unknown`` (mma: a mismatch no match explains), ``unconfirmed`` (a warning: no bit-exact run
of a variant it serves), ``not-applicable`` (no variant uses it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from ..base.matrix_variants import (
    CATALOG_OPERAND,
    MATRIX_VARIANTS,
    MOVES,
    TMEM_FAMILIES,
    TMEM_VARIANTS,
    Variant,
    executed,
    matrix_layout_serves,
    run_operand,
    runs_on,
    wgmma_sp_variants,
    wgmma_variants,
)
from .confirm import Stated, cell_name, distinguish, judge, show, table_doc
from .verdicts import Verdict


@dataclass(frozen=True)
class Served:
    """The variants a layout serves, the name runs give its operand (``layout_hashes``), and
    what its family's runs can say (the module's docstring)."""

    op: str
    variants: tuple[Any, ...]
    direct: bool  # a run's result speaks for each map it packed with
    exact: bool  # a discovery recovers the map cell for cell (the moves)

    @property
    def relabel(self) -> bool:
        return not self.direct


def served(ev: Any, lay: Any) -> Served:
    if lay.instruction in (*MOVES, *TMEM_FAMILIES, "wgmma", "wgmma.sp"):
        op = run_operand(lay.instruction, lay.operand)
        variants = _matrix_variants(lay, op) if op is not None else []
        return Served(op or lay.operand, tuple(variants), True, lay.instruction in MOVES)
    return Served(lay.operand, tuple(ev.variants_of(lay)), False, False)


@cache
def _pool(instruction: str) -> tuple[Variant, ...]:
    """The variants a layout of a move or wgmma family may serve: the table's rows, for
    wgmma every legal N, for wgmma.sp every sparse row (built once)."""
    if instruction == "wgmma.sp":
        return tuple(wgmma_sp_variants())
    if instruction in TMEM_FAMILIES:
        return TMEM_VARIANTS
    if instruction != "wgmma":
        return tuple(MATRIX_VARIANTS)
    listed = {x.key for x in MATRIX_VARIANTS}
    return (*MATRIX_VARIANTS, *(v for v in wgmma_variants() if v.key not in listed))


@cache
def _pool_of(instruction: str) -> tuple[Variant, ...]:
    """``_pool``'s rows of this instruction: the only ones ``matrix_layout_serves`` can
    accept (the wgmma pool also holds every move)."""
    return tuple(v for v in _pool(instruction) if v.instruction == instruction)


def _matrix_variants(lay: Any, op: str) -> list[Variant]:
    return list(_serving(op, lay.instruction, lay.shape_text, lay.operand, lay.types,
                         lay.n_values))


@cache
def _serving(op: str, instruction: str, shape_text: str, operand: str, types: Any,
             n_values: Any) -> tuple[Variant, ...]:
    """The pool's rows a layout with these facts serves (a pure function of them: the same
    answer for each of the hundreds of layouts that share them, asked once)."""
    by_type = _pool_by_type(op, instruction, operand)
    rows = sorted({n for t in types for n in by_type.get((t, shape_text), ())})
    pool = _pool_of(instruction)
    return tuple(pool[n] for n in rows
                 if matrix_layout_serves(pool[n], op, instruction, shape_text, operand, types,
                                         n_values))


@cache
def _pool_by_type(op: str, instruction: str, operand: str) \
        -> dict[tuple[str, str], tuple[int, ...]]:
    """The places in ``_pool_of(instruction)`` of the rows whose operand ``op`` is this
    layout's ``operand``, by the type ``matrix_layout_serves`` requires among the layout's
    types (C's for a wgmma accumulator, else A's) and by each shape it accepts a layout's
    to be spelled (``_shapes``): only those rows can serve it, so only those are asked (a
    wgmma pool holds some 2,000 rows)."""
    out: dict[tuple[str, str], list[int]] = {}
    shapes = _shapes_of(instruction)
    for n, v in enumerate(_pool_of(instruction)):
        if operand != CATALOG_OPERAND.get((v.instruction, op)):
            continue
        accumulator = v.wgmma and not v.tmem and operand not in ("A", "metadata")
        for shape in shapes[n]:
            out.setdefault((v.c if accumulator else v.a, shape), []).append(n)
    return {k: tuple(ns) for k, ns in out.items()}


@cache
def _shapes_of(instruction: str) -> tuple[tuple[str, ...], ...]:
    """``_shapes`` of each row of ``_pool_of(instruction)``, in order (worked out once)."""
    return tuple(map(_shapes, _pool_of(instruction)))


def _shapes(v: Variant) -> tuple[str, ...]:
    """The shapes a layout may be spelled with and serve ``v`` (``matrix_layout_serves``
    accepts no other): a tcgen05 move's spelled shape; wgmma's own or its family's,
    ``m64nNk16``; a move's spelled shape, or -- moving one matrix -- the title's without
    ``.x1`` (else the empty text that the same test holds)."""
    if v.tmem:
        return (v.spelled_shape,)
    if v.wgmma:
        return (v.shape, f"m64nNk{v.k}")
    return (v.spelled_shape, replace(v, num=0).spelled_shape if v.num == 1 else "")


class _Own:
    """A layout's own map hash (``Evidence.hash_of``), written out when first read: a verdict
    that no run can speak to (only ``compiled-only`` runs of its variants, say, or a layout
    stated for every N, judged at each run's N) never reads it, and writing a table's rows
    and their SHA-256 is most of what such a verdict would cost."""

    def __init__(self, ev: Any, lay: Any) -> None:
        self.ev, self.lay = ev, lay
        self.hit: str | None = None

    def __call__(self) -> str:
        if self.hit is None:
            self.hit = str(self.ev.hash_of(self.lay))
        return self.hit


class _Want:
    """The map hash a run of each variant would record for a layout: its own, or -- stated
    for every N -- ``first_elements`` at the run's N (``Evidence.hash_at``), each N once."""

    def __init__(self, ev: Any, lay: Any, own: _Own) -> None:
        self.ev, self.lay, self.own = ev, lay, own
        self.by_n: dict[int, str] = {}

    def __call__(self, v: Any) -> str:
        lay = self.lay
        if not lay.n_values:
            return self.own()
        hit = self.by_n.get(v.n)
        if hit is None:
            hit = self.by_n[v.n] = self.ev.hash_at(lay, v.n)
        return hit


def verdict(ev: Any, lay: Any, stated: Stated | None = None) -> Verdict:
    """The ``hardware`` obligation of ``lay`` from the evidence ``ev``; ``stated`` names the
    layout the same document states for another operand of a variant (``stated_in``)."""
    s = served(ev, lay)
    if not s.variants:
        return Verdict("hardware", "not-applicable",
                       "no instruction variant of the table uses this layout")
    kind, rows = ev.cells_of(lay)
    if not rows:
        figure = "" if s.direct else " (the document gives it only as a figure)"
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: the layout has no cell table{figure}, so no run can be "
                       "compared with it", None, None, "warning", "gpu")
    by_key = {v.key: v for v in s.variants}
    # the runs that can speak to a map: discoveries, checks that matched or mismatched
    runs = ev.runs_judged(by_key)
    own = _Own(ev, lay)
    want = _Want(ev, lay, own)
    if s.relabel:
        found = _discovered_otherwise(ev, s, kind, rows, own, runs)
        if found is not None:
            return found
    confirmed, ns, bad = [], set(), None
    # only a match or a mismatch of a run that packed the map it would for this layout
    # (``want``: its own, or the one at the run's N) counts: the hash is asked only of those
    for r in runs:
        if r.result not in ("match", "mismatch") or not (
                r.mode == "check" or (r.mode == "discover" and s.exact
                                      and r.result == "mismatch")):
            continue
        v = by_key[r.key]
        if r.layout_hashes.get(s.op) != want(v):
            continue
        if r.mode == "check" and r.result == "match":
            confirmed.append(r)
            if lay.n_values:
                ns.add(v.n)
        elif r.result == "mismatch" and bad is None:
            bad = r
            if s.direct:
                break
    if s.direct and bad is not None:
        return Verdict("hardware", "refuted",
                       f"{bad.key} ({bad.mode}) on {bad.file.where}, run with this map: "
                       f"{bad.detail[:300]}", {"variant": bad.key, "detail": bad.detail},
                       None, "error", "gpu")
    if s.direct and confirmed:
        other = sorted({by_key[r.key].n if lay.n_values else 0 for r in runs
                        if r.mode == "check" and r.result == "match"
                        and r.layout_hashes.get(s.op) not in (None, want(by_key[r.key]))})
        if other:
            at = ", ".join(str(n) for n in other) if lay.n_values else ""
            return Verdict("hardware", "unconfirmed",
                           f"unconfirmed: the device confirmed this map in {len(confirmed)} "
                           f"runs, but another map of {lay.operand} in others"
                           + (f" (N = {at})" if at else "") + "; the evidence does not "
                           "decide between them", None, None, "warning", "gpu")
    if confirmed:
        last = confirmed[-1].file
        keys = {r.key for r in confirmed}
        runnable = _runnable(tuple(sorted({f.sm for f in ev.files})), s.variants)
        at = f" at N = {', '.join(str(n) for n in sorted(ns))}" if ns else ""
        return Verdict("hardware", "proved",
                       f"confirmed on {last.where}: {len(keys)} of {len(runnable)} runnable "
                       f"variants{at}, {len(confirmed)} runs, "
                       f"{sum(r.trials for r in confirmed)} trials bit-exact", None, None,
                       "error", "gpu")
    if s.direct:
        return _unconfirmed(ev, s, kind, rows, runs, want)
    return _shown_wrong(ev, lay, s, kind, rows, own, runs, stated)


def _runnable(sms: tuple[int, ...], variants: tuple[Any, ...]) -> tuple[Any, ...]:
    """The variants a device of the evidence (of these SMs) can run, worked out once per
    variant and SM (``runs_on`` is a function of the two)."""
    return tuple(v for v in variants if any(_runs_on(v.key, sm, v) for sm in sms))


_RUNS_ON: dict[tuple[str, int], bool] = {}


def _runs_on(key: str, sm: int, v: Any) -> bool:
    hit = _RUNS_ON.get((key, sm))
    if hit is None:
        hit = _RUNS_ON[(key, sm)] = runs_on(v, sm)
    return hit


def _discovered_otherwise(ev: Any, s: Served, kind: str, rows: Any, own: _Own,
                          runs: list[Any]) -> Verdict | None:
    """mma: a discovery of one of its variants whose map differs even up to relabeling."""
    for r in reversed(runs):
        if r.mode != "discover" or s.op not in r.discovered_hashes:
            continue
        dh = r.discovered_hashes[s.op]
        if dh == own():
            continue
        found = ev.discovered_map(dh)
        if found is None:
            continue
        cex = distinguish(kind, rows, found)
        if cex is not None:
            return Verdict("hardware", "refuted", f"{r.key} on {r.file.where}: "
                           f"{cex['message']}", cex, None, "error", "gpu-discovery")
    return None


def _shown_wrong(ev: Any, lay: Any, s: Served, kind: str, rows: Any, own: _Own,
                 runs: list[Any], stated: Stated | None) -> Verdict:
    """mma, no match with this map: refuted by a match of the same run with another map of
    this operand, proved by a discovery that recovered it, ``unknown`` after a mismatch,
    else ``confirm.judge``."""
    wrong = ev.shown_wrong(s.op, own(), {v.key for v in s.variants}) \
        if any(r.mode == "check" and r.result == "mismatch" for r in runs) else None
    if wrong is not None:
        bad, good, table = wrong
        cex = distinguish(kind, rows, table, relabel=False)
        if cex is not None:
            cells = ", ".join(cell_name(c) for c in bad.d_cells[:8]) + \
                (" ..." if len(bad.d_cells) > 8 else "")
            cex = {**cex, "variant": bad.key, "selector": bad.selector,
                   "confirmed_hash": good.layout_hashes.get(s.op),
                   "d_cells": [list(c) for c in bad.d_cells]}
            return Verdict(
                "hardware", "refuted",
                f"{bad.key} on {bad.file.where}: packed by this map, D differs"
                + (f" in {cells}" if cells else "") + f"; with the map that the same "
                f"device confirmed ({good.layout_hashes.get(s.op)}, {good.trials} trials "
                f"bit-exact) lane {cex['lane']} element {cex['element']} is at "
                f"{show(cex['hardware'])}, this layout puts it at {show(cex['layout'])}",
                cex, None, "error", "gpu")
    recovered = [r for r in runs if r.mode == "discover"
                 and r.discovered_hashes.get(s.op) == own()]
    if recovered:
        r = recovered[-1]
        return Verdict("hardware", "proved",
                       f"recovered from the hardware alone on {r.file.where} ({r.key}, "
                       "one-hot discovery, up to relabeling)", None, None, "error",
                       "gpu-discovery")
    last_failed = [r for r in runs if r.mode == "check" and r.result == "mismatch"
                   and r.layout_hashes.get(s.op) == own()]
    if last_failed:
        fr = last_failed[-1]
        return Verdict("hardware", "unknown",
                       f"{fr.key} mismatched on {fr.file.where} (which operand "
                       f"is wrong needs --discover): {fr.detail[:300]}",
                       None, None, "error", "gpu")
    return judge(ev, lay, list(s.variants), (kind, rows), stated)


def _unconfirmed(ev: Any, s: Served, kind: str, rows: Any, runs: list[Any],
                 want: _Want) -> Verdict:
    """The direct families, no match with this map: a move's discovery that recovered
    another map refutes it (the first (lane, element) whose cell differs, both cells
    shown); else it is ``unconfirmed``, saying why."""
    if s.exact:
        by_key = {v.key: v for v in s.variants}
        for r in reversed(runs):
            h = r.discovered_hashes.get(s.op)
            if r.mode != "discover" or r.result != "match" or not h \
                    or h == want(by_key[r.key]):
                continue
            table = ev.table(h)
            if table is None:
                continue
            cex = distinguish(kind, rows, table_doc(*table), relabel=False)
            if cex is not None:
                return Verdict("hardware", "refuted",
                               f"{r.key} on {r.file.where}: the hardware's map, recovered "
                               f"by discovery, differs: {cex['message']}",
                               {**cex, "variant": r.key}, None, "error", "gpu-discovery")
    variants = s.variants
    ran = sorted({r.key for r in runs if r.mode == "check" and r.result in ("match",
                                                                             "mismatch")})
    if ran:
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: the evidence's runs of {ran[0]}"
                       f"{f' and {len(ran) - 1} more' if len(ran) > 1 else ''} used other "
                       "maps (older layouts); run the GPU check again", None, None, "warning",
                       "gpu")
    if not any(executed(v) for v in variants):
        nodev = f"no {variants[0].target} device: " if variants[0].min_sm >= 100 \
            else ""
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: {nodev}the executor assembles the {len(variants)} "
                       f"variants of this layout ({variants[0].opcode}, ...; ptxas -arch="
                       f"{variants[0].target}) but does not run them: the evidence decides "
                       "nothing about this map", None, None, "warning", "gpu")
    needs = sorted({v.target for v in variants})
    devices = ", ".join(f"sm_{sm}" for sm in sorted({f.sm for f in ev.files})) or "none"
    return Verdict("hardware", "unconfirmed",
                   f"unconfirmed: no device of the evidence ran a variant of this layout "
                   f"bit-exact (it needs {', '.join(needs)}; the evidence's devices: "
                   f"{devices}): the evidence decides nothing "
                   "about this map", None, None, "warning", "gpu")


__all__ = ["Served", "served", "verdict"]
