"""Is the GPU evidence current?  Every variant a device can run needs a match with today's maps.

CI has no GPU, so it checks that the evidence in ``proofs/evidence`` still covers the layouts:
for each variant of ``formal.base.variants`` (and of ``formal.base.matrix_variants``: the moves
and wgmma, with the maps the executor takes from the layouts) the evidence's device can run
and the layouts describe, a ``match`` run whose layout hashes (``cell_table_hash``) equal the
current ones; and
for each erratum layout (the spec as written, where ``corrections.md`` changes a map) a
``mismatch`` on every variant it serves.  Take m16n8k16 ``.f16``: if the catalog's A map changes,
its hash changes, the old run no longer counts, and ``stale`` names the variant ("the layouts
changed since 2026-11-22").  ``ptxlayout evidence DIR`` prints one line per missing run and
exits 1, or 0 when the evidence is current (``--format json``: the same as one object).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..base.variants import VARIANTS, record_serves, records_by_operand, runs_on
from ..prove.evidence import Evidence, EvidenceRun


def _as_records(layouts: Iterable[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    lays = list(layouts)
    objs = [x for x in lays if not isinstance(x, Mapping)]
    if objs:
        from .export import layout_record

        by_id = {x.id: x for x in objs}
        out.extend(layout_record(x, by_id) for x in objs)
    out.extend(x for x in lays if isinstance(x, Mapping))
    return out


def stale(evidence: Evidence, layouts: Iterable[Any], sm: int | None = None,
          errata: Iterable[Any] = (), bar: Any = None) -> list[str]:
    """The lines of ``stale_kinds``."""
    return [line for _kind, line in stale_kinds(evidence, layouts, sm, errata, bar)]


def stale_kinds(evidence: Evidence, layouts: Iterable[Any], sm: int | None = None,
                errata: Iterable[Any] = (), bar: Any = None) -> list[tuple[str, str]]:
    """Each as (the variant's instruction, its line), the instruction being the kind that
    ``evidence --select`` picks (``wgmma.smem`` for a shared-memory layout's).  Variants the
    evidence's device can run and the layouts describe, lacking a ``match``
    with the current layout hashes; and each (erratum layout, variant it serves) lacking a
    ``mismatch`` packed with it (one line each; empty: the evidence is current).  ``bar``:
    a progress bar (``formal.base.progress``), told of each variant checked."""
    records = _as_records(layouts)
    target = sm or evidence.sm or 90
    checks = [r for r in evidence.runs if r.mode == "check"]
    out = []
    tick = bar.phase("checking", "variants") if bar is not None else None
    for k, v in enumerate(VARIANTS):
        if tick is not None:
            tick(k, len(VARIANTS))
        if not runs_on(v, target):
            continue
        want = _current(v, records)
        if want is None:
            continue
        for sel in v.runs:
            label = v.key + ("" if sel is None else f" selector {sel}")
            line = _missing_match(label, [r for r in checks
                                          if r.key == v.key and r.selector == sel], want)
            if line:
                out.append((v.instruction, line))
    for e in _as_records(errata):
        op, h, lid = str(e.get("operand")), str(e.get("map_hash") or ""), str(e.get("id", ""))
        for v in VARIANTS:
            if not runs_on(v, target) or not record_serves(v, e):
                continue
            want = _current(v, records)
            if want is None:
                continue
            want = {**want, op: h}
            for sel in v.runs:
                label = v.key + ("" if sel is None else f" selector {sel}")
                ran = [r for r in checks if r.key == v.key and r.selector == sel
                       and _packed_with(r, want)]
                if not ran:
                    out.append((v.instruction, f"{label}: no hardware run of the spec's "
                                f"erratum layout {lid} as written ({op} {h}; expected: "
                                "mismatch)"))
                elif ran[-1].result != "mismatch":
                    out.append((v.instruction, f"{label}: the spec's erratum layout {lid} "
                                f"as written gave '{ran[-1].result}' on "
                                f"{ran[-1].file.where}, not the mismatch that refutes it"))
    from ..execute.tcgen05_run import stale_tc_scale
    from .export_datapath import stale_tc_mma
    from .export_smem import stale_smem
    out += _stale_matrix(evidence, records, target)
    out += [("tcgen05.mma", line) for line in stale_tc_mma(evidence, records, target)]
    out += [("tcgen05.mma", line) for line in stale_tc_scale(evidence, records, target)]
    out += [("wgmma.smem", line) for line in stale_smem(evidence, records, target)]
    if bar is not None:
        bar.clear()
    return out


def owed(sm: int) -> int:
    """How many variants of the table (every family) a device of ``sm`` runs: 0 means the
    staleness check of that device would check nothing (``ptxlayout evidence --sm 5``)."""
    from ..base.matrix_variants import MATRIX_VARIANTS, TCGEN05_MMA_VARIANTS, WGMMA_SP_VARIANTS

    return sum(runs_on(v, sm) for v in (*VARIANTS, *MATRIX_VARIANTS, *WGMMA_SP_VARIANTS,
                                        *TCGEN05_MMA_VARIANTS))


def _stale_matrix(evidence: Evidence, records: Sequence[Mapping[str, Any]], sm: int) \
        -> list[tuple[str, str]]:
    """The same for the moves and wgmma (``formal.base.matrix_variants``): a bit-exact
    ``check`` of each variant the device runs, with the maps the executor would take from
    the current layouts (a wgmma accumulator's at the run's N).  wgmma.sp
    (``WGMMA_SP_VARIANTS``) is owed too once the evidence holds any run of it
    (``sparse_owed``): until the first device run, no evidence of it is due."""
    from ..base.matrix_variants import MATRIX_VARIANTS, WGMMA_SP_VARIANTS, sparse_owed
    from ..base.records import expand
    from ..execute import matrix as mx

    full = expand(records)
    out = []
    sparse = WGMMA_SP_VARIANTS if sparse_owed(r.key for r in evidence.runs) else ()
    memo: dict[Any, Any] = {}  # one map per record and shape: 'full' lives as long
    for v in MATRIX_VARIANTS + sparse:
        if not runs_on(v, sm):
            continue
        try:
            want = mx.hashes(mx.maps_for(v, full, memo))
        except mx.LayoutError:
            continue  # the layouts do not describe it: no evidence is due
        line = _missing_match(v.key, [r for r in evidence.runs_of([v.key])
                                      if r.mode == "check"], want)
        if line:
            out.append((v.instruction, line))
    return out


def _missing_match(label: str, runs: Sequence[EvidenceRun], want: Mapping[str, str]) \
        -> str | None:
    """The line saying that none of a variant's ``check`` runs (oldest first) matched packed
    with the current maps ``want``, and why (no run, the last run's result, or the layouts
    changed since it); None when one did."""
    if any(r.result == "match" and _packed_with(r, want) for r in runs):
        return None
    old = [r for r in runs if not r.erratum]
    why = "no run" if not old else (
        f"last run {old[-1].result}" if old[-1].result != "match"
        else "the layouts changed since " + old[-1].file.date[:10])
    return (f"{label}: no hardware match for the current layouts ({why}; "
            + ", ".join(f"{k} {h}" for k, h in want.items()) + ")")


def _current(v: Any, records: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """The map hash of each operand of ``v`` in ``records`` (None: ``v`` is not fully
    described, so no evidence is due)."""
    recs = records_by_operand(v, records)
    if len(recs) < (4 if v.sparse else 3) or any(not r.get("map_hash") for r in recs.values()):
        return None
    return {op: str(r["map_hash"]) for op, r in recs.items()}


def _packed_with(r: EvidenceRun, want: Mapping[str, str]) -> bool:
    return all(r.layout_hashes.get(op) == h for op, h in want.items())


def evidence_command(args: Any, catalog: Any, bar: Any = None) -> int:
    """``ptxlayout evidence DIR [--layouts JSON] [--sm N] [--format json] [-q] [--select
    INSTRUCTION] [--ignore INSTRUCTION]``: one line per
    variant whose run is missing or stale, against ``--layouts`` or ``catalog()`` (the current
    catalog's records and errata), and a total (not with ``-q``); or all of it as JSON
    (docs/schema/evidence.schema.json).  0 none, 1 some, 2 unreadable evidence or nothing that
    would be checked.  ``bar``: the progress bar (None: none)."""
    import sys

    from ..prove.evidence import Evidence
    try:
        ev = Evidence.load(args.evidence)
    except (OSError, ValueError) as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    target = args.sm or ev.sm or 90
    if not owed(target):
        print(f"ptxlayout evidence: no variant of the table runs on sm_{target}: nothing would "
              "be checked", file=sys.stderr)
        return 2
    if args.layouts:
        from ..execute.record import load_export
        try:
            records, errata = load_export(args.layouts)
        except (OSError, ValueError) as exc:
            print(f"ptxlayout: {args.layouts}: not a layouts export ({exc})", file=sys.stderr)
            return 2
    else:
        records, errata = catalog()
    from ..base.options import picked, selection
    select, ignore = selection(args)
    lines = [line for kind, line in stale_kinds(ev, records, args.sm, errata, bar)
             if picked(kind, select, ignore)]
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(evidence_json(ev, target, lines, len(errata)))
    else:
        for line in lines:
            print(line)
        if not getattr(args, "quiet", False):
            print(f"{len(lines)} stale of the variants sm_{target} runs "
                  f"({len(ev.files)} evidence files; {len(errata)} erratum layouts)")
    return 1 if lines else 0


def evidence_json(ev: Evidence, sm: int, lines: Sequence[str], errata: int) -> str:
    """The staleness check as JSON: the evidence files read, each missing or stale run as
    ``{"variant", "message"}`` and the counts."""
    import json

    from .. import __version__
    stale_runs = []
    for line in lines:
        variant, _, message = line.partition(": ")
        stale_runs.append({"variant": variant, "message": message})
    return json.dumps({
        "version": __version__,
        "sm": sm,
        "files": [{"path": f.path, "device": f.device, "sm": f.sm, "driver": f.driver,
                   "date": f.date, "runs": len(f.runs)} for f in ev.files],
        "stale": stale_runs,
        "summary": {"stale": len(lines), "files": len(ev.files), "erratum_layouts": errata,
                    "current": not lines},
    }, indent=2, ensure_ascii=False) + "\n"
