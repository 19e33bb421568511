"""The ``hardware`` obligation of the matrix moves' and wgmma's layouts.

``formal.execute.gpu_matrix`` runs each row of ``formal.base.matrix_variants`` with the
exported layouts and records, per run, the hash of each register map it used under the
executor's operand names (``r`` for ldmatrix / stmatrix, ``a`` / ``d`` for movmatrix, ``A``
/ ``C/D`` for wgmma).  A layout's map for a run is its own, or -- for a layout stated for
every N (wgmma's D) -- the first elements of each thread at that run's N, hashed as the
layout at that N would be: ``wgmma.m64nNk16.D.f32`` is confirmed by the run
``wgmma.m64n64k16.f32.f16.f16.rs`` when that run packed C and read D with the map of
``Layout.at(64)``.

Verdicts: ``proved`` when a bit-exact ``check`` used the layout's map (the message lists
the N the runs covered); ``refuted`` when a ``check`` with the layout's map did not match,
or a move's discovery recovered another map from the hardware (its detail names the first
differing cell) -- wgmma's descriptor probes and experiments test shared memory, not the
register maps, and are not read here; ``unconfirmed`` (a warning) when no device of the
evidence ran a variant the layout serves (sm_100a forms are only assembled);
``not-applicable`` when no variant uses it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..base.hashes import first_elements
from ..base.matrix_variants import (
    MATRIX_VARIANTS,
    MOVES,
    Variant,
    executed,
    matrix_layout_serves,
    run_operand,
    runs_on,
    wgmma_sp_variants,
    wgmma_variants,
)
from .verdicts import Verdict


def is_matrix(lay: Any) -> bool:
    return lay.instruction in MOVES or lay.instruction in ("wgmma", "wgmma.sp")


@cache
def _pool(instruction: str) -> tuple[Variant, ...]:
    """The variants a layout of ``instruction`` may serve: the table's rows, for wgmma every
    legal N, for wgmma.sp every sparse row (the same for every layout of a run, so built
    once)."""
    if instruction == "wgmma.sp":
        return tuple(wgmma_sp_variants())
    if instruction != "wgmma":
        return tuple(MATRIX_VARIANTS)
    listed = {x.key for x in MATRIX_VARIANTS}
    return (*MATRIX_VARIANTS, *(v for v in wgmma_variants() if v.key not in listed))


def _variants(lay: Any, op: str) -> list[Variant]:
    return [v for v in _pool(lay.instruction)
            if matrix_layout_serves(v, op, lay.instruction, lay.shape_text, lay.operand, lay.types,
                      lay.n_values)]


class _Hashes:
    """The map hash a run of each variant would record for a layout: its own, or -- stated
    for every N -- the hash of its first elements at the run's N, each N hashed once (the
    rows written once, ``row_text``)."""

    def __init__(self, ev: Any, lay: Any, own: str) -> None:
        self.ev, self.lay, self.own = ev, lay, own
        self.by_n: dict[int, str] = {}

    def of(self, v: Variant) -> str:
        lay = self.lay
        if not lay.n_values:
            return self.own
        hit = self.by_n.get(v.n)
        if hit is None:
            texts, elements = self.ev.texts_of(lay)
            at = lay.at(v.n)
            hit = first_elements(lay.instruction, at.shape_text, lay.operand, texts,
                                 elements.tolist(), at.elements, str)[1]
            self.by_n[v.n] = hit
        return hit


def _shown_otherwise(ev: Any, lay: Any, op: str, kind: str, rows: list[dict[str, Any]],
                     runs: list[Any], want: dict[str, str]) -> Verdict | None:
    """A move's map is fixed by the addresses (no relabeling leaves a run unchanged), so a
    discovery that found the hardware's map equal to the map the run used refutes any other
    map of that operand: the first (lane, element) whose cell differs, both cells shown."""
    from .confirm import distinguish, table_doc

    if lay.instruction not in MOVES:
        return None
    for r in reversed(runs):
        h = r.discovered_hashes.get(op)
        if r.mode != "discover" or r.result != "match" or not h or h == want.get(r.key):
            continue
        table = ev.table(h)
        if table is None:
            continue
        cex = distinguish(kind, rows, table_doc(*table), relabel=False)
        if cex is not None:
            return Verdict("hardware", "refuted",
                           f"{r.key} on {r.file.where}: the hardware's map, recovered by "
                           f"discovery, differs: {cex['message']}", {**cex, "variant": r.key},
                           None, "error", "gpu-discovery")
    return None


def matrix_verdict(ev: Any, lay: Any) -> Verdict:
    op = run_operand(lay.instruction, lay.operand)
    variants = _variants(lay, op) if op is not None else []
    if op is None or not variants:
        return Verdict("hardware", "not-applicable",
                       "no instruction variant of the table uses this layout")
    kind, rows, own = ev.table_of(lay)
    if not rows:
        return Verdict("hardware", "unconfirmed", "unconfirmed: the layout has no cell table, "
                       "so no run can be compared with it", None, None, "warning", "gpu")
    by_key = {v.key: v for v in variants}
    runs = ev.runs_of(by_key)
    want: dict[str, str] = {}
    hashes = _Hashes(ev, lay, own)
    confirmed, ns = [], set()
    for r in runs:
        if r.mode != "check" and not (r.mode == "discover" and lay.instruction in MOVES):
            continue  # wgmma's descriptor probes and experiments test shared memory
        v = by_key[r.key]
        h = want.get(r.key)
        if h is None:
            h = want[r.key] = hashes.of(v)
        if r.layout_hashes.get(op) != h or (r.mode == "discover" and r.result == "match"):
            continue
        if r.mode == "check" and r.result == "match":
            confirmed.append(r)
            if lay.n_values:
                ns.add(v.n)
        elif r.result == "mismatch":
            return Verdict("hardware", "refuted",
                           f"{r.key} ({r.mode}) on {r.file.where}, run with this map: "
                           f"{r.detail[:300]}", {"variant": r.key, "detail": r.detail}, None,
                           "error", "gpu")
    other = sorted({by_key[r.key].n if lay.n_values else 0 for r in runs
                    if r.mode == "check" and r.result == "match"
                    and r.layout_hashes.get(op) not in (None, want.get(r.key))})
    if confirmed and other:
        at = ", ".join(str(n) for n in other) if lay.n_values else ""
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: the device confirmed this map in {len(confirmed)} runs, "
                       f"but another map of {lay.operand} in others"
                       + (f" (N = {at})" if at else "") + "; the evidence does not decide "
                       "between them", None, None, "warning", "gpu")
    if confirmed:
        last = confirmed[-1].file
        keys = {r.key for r in confirmed}
        runnable = [v for v in variants if any(runs_on(v, f.sm) for f in ev.files)]
        at = f" at N = {', '.join(str(n) for n in sorted(ns))}" if ns else ""
        return Verdict("hardware", "proved",
                       f"confirmed on {last.where}: {len(keys)} of {len(runnable)} runnable "
                       f"variants{at}, {len(confirmed)} runs, "
                       f"{sum(r.trials for r in confirmed)} trials bit-exact", None, None,
                       "error", "gpu")
    shown = _shown_otherwise(ev, lay, op, kind, rows, runs, want)
    if shown is not None:
        return shown
    ran = sorted({r.key for r in runs if r.mode == "check" and r.result in ("match",
                                                                             "mismatch")})
    if ran:
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: the evidence's runs of {ran[0]}"
                       f"{f' and {len(ran) - 1} more' if len(ran) > 1 else ''} used other "
                       "maps (older layouts); run the GPU check again", None, None, "warning",
                       "gpu")
    if not any(executed(v) for v in variants):
        return Verdict("hardware", "unconfirmed",
                       f"unconfirmed: the executor assembles the {len(variants)} variants of "
                       f"this layout ({variants[0].opcode}, ...; ptxas -arch="
                       f"{variants[0].target}) but does not run them: the evidence decides "
                       "nothing about this map", None, None, "warning", "gpu")
    needs = sorted({v.target for v in variants})
    devices = ", ".join(f"sm_{s}" for s in sorted({f.sm for f in ev.files})) or "none"
    return Verdict("hardware", "unconfirmed",
                   f"unconfirmed: no device of the evidence ran a variant of this layout "
                   f"bit-exact (it needs {', '.join(needs)}; the evidence's devices: "
                   f"{devices}): the evidence decides nothing "
                   "about this map", None, None, "warning", "gpu")
