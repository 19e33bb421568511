"""The end of a GPU run: the short table, the evidence file, and ``ptxlayout gpu``'s work.

``ptxlayout gpu`` runs every family in one invocation: mma / mma.sp (``formal.execute.gpu``,
its checks, discoveries and erratum runs), then the moves and wgmma / wgmma.sp
(``formal.execute.gpu_matrix``: checks, discoveries, descriptor probes and experiments), as
one task list in supervised child processes (``formal.execute.supervisor``), within one
``--deadline``.  ``table(report)`` prints one line
per instruction and shape (``mma m16n8k16  36 match``), then one per move / wgmma family and
mode (``wgmma     check       160 match``), and the totals last (``checks: 118 match; ...;
moves and wgmma: 313 runs, 0 not as expected``); ``write_evidence(report, DIR)`` writes ONE
JSON file per invocation (device, driver, date, the map hash of every layout each run packed
with, trials, seeds and results) that ``formal.prove.evidence`` reads and
``formal.writers.evidence`` judges for staleness; ``gpu_command`` is what the command line's
``gpu`` subcommand runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.files import FileProblem, load_json, write_atomic
from ..base.progress import progress
from ..base.records import expand
from . import smem_runs
from .devices import device_problem
from .runs import Job, Report, Run, short_text
from .supervisor import all_tasks, assemble_only, no_device, run_supervised

# ---- output -----------------------------------------------------------------------------------


def table(report: Report, full: bool = False) -> str:
    """A short table: one line per instruction and shape (``full``: per variant), then every
    problem, the errata runs, and the totals (the last line starts ``checks:``)."""
    plain = [r for r in report.runs if _mma(r) and not r.erratum]
    rows: dict[str, list[Run]] = {}
    for r in plain:
        v = r.variant
        label = v.key if full else f"{v.instruction} {v.shape}"
        rows.setdefault(label, []).append(r)
    width = max((len(k) for k in rows), default=10)
    out = [f"{'variant' if full else 'shape':<{width}}  {'variants':>8}  {'checks':<28} "
           f"discover"]
    counts: dict[str, int] = {}
    for label, runs in rows.items():
        checks = [r for r in runs if r.mode == "check"]
        disc = [r for r in runs if r.mode == "discover"]
        by: dict[str, int] = {}
        for r in checks:
            by[r.result] = by.get(r.result, 0) + 1
            counts[r.result] = counts.get(r.result, 0) + 1
        res = ", ".join(f"{n} {k}" for k, n in sorted(by.items()))
        dres = "-" if not disc else ", ".join(
            f"{n} {k}" for k, n in sorted(_tally(["agree" if r.result == "match" else r.result
                                                  for r in disc]).items()))
        nvar = len({r.variant.key for r in runs})
        out.append(f"{label:<{width}}  {nvar:>8}  {res:<28} {dres}")
    bad = [r for r in plain if r.result in ("mismatch", "error")]
    if bad:
        out.append("problems:")
        for r in bad[:40]:
            sel = "" if r.selector is None else f" sel {r.selector}"
            mode = " discover" if r.mode == "discover" else ""
            out.append(f"  {r.variant.key}{sel}{mode}: {r.result}: {short_text(r.detail, 160)}")
        if len(bad) > 40:
            out.append(f"  ... {len(bad) - 40} more")
    errata = [r for r in report.runs if r.erratum]
    if errata:
        out.append("errata (the spec's layout as written; the hardware must disagree):")
        for r in errata:
            sel = "" if r.selector is None else f" sel {r.selector}"
            verdict = "as it should" if r.ok and r.result == "mismatch" else "UNEXPECTED" \
                if not r.ok else "not run"
            out.append(f"  {r.erratum} on {r.variant.key}{sel}: {r.result} ({verdict}); "
                       f"{short_text(r.detail.partition(': ')[2] or r.detail, 110)}")
    family = family_runs(report)
    if family:
        out += family_lines(family)
    info = report.info
    if info.get("device") == "unknown":
        out.append(f"device: none; {report.seconds:.1f} s")
    else:
        out.append(f"device: {info.get('device')} (sm_{info.get('sm')}), driver "
                   f"{info.get('driver')}; {report.seconds:.1f} s")
    total = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    dcount = sum(1 for r in plain if r.mode == "discover")
    dbad = sum(1 for r in plain if r.mode == "discover" and r.result != "match")
    shown = [r for r in errata if r.result not in ("not-executed", "compiled-only")]
    out.append(f"checks: {total or 'none'}"
               + (f"; discoveries: {dcount - dbad} agree, {dbad} differ" if dcount else "")
               + (f"; errata: {sum(r.result == 'mismatch' for r in shown)} of {len(shown)} "
                  "refuted by the hardware" if errata else "")
               + (f"; moves and wgmma: {len(family)} runs, "
                  f"{len(unexpected(family))} not as expected" if family else ""))
    return "\n".join(out)


def _mma(r: Run) -> bool:
    """An mma / mma.sp run (the table's first part, by instruction and shape); the moves',
    wgmma's and tcgen05.mma's runs (which plant edits that must mismatch) are the second."""
    return not (r.variant.move or r.variant.wgmma or r.variant.datapath)


def family_runs(report: Report) -> list[dict[str, Any]]:
    """The evidence records of the runs that are not mma's (the moves, wgmma, wgmma.sp):
    the table's second part, by instruction and mode."""
    return [r.record() for r in report.runs if not _mma(r)]


def family_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The move and wgmma runs (evidence records): one line per instruction and mode, then
    every run that is not as expected."""
    rows: dict[str, dict[str, int]] = {}
    for r in runs:
        label = f"{r['instruction']:<9} {r['mode']:<10}"
        by = rows.setdefault(label, {})
        ok = r.get("expect", "match") in ("any", r["result"])
        res = r["result"] + ("" if ok or r["result"] in ("compiled-only", "not-executed")
                             else " (UNEXPECTED)")
        by[res] = by.get(res, 0) + 1
    out = [f"{k}  " + ", ".join(f"{n} {res}" for res, n in sorted(v.items()))
           for k, v in rows.items()]
    for r in unexpected(runs)[:30]:
        lay = f" [{r['smem_layout']['name']}]" if r.get("smem_layout") else ""
        lay += f" planted {r['plant']}" if r.get("plant") else ""
        out.append(f"  PROBLEM {r['key']} {r['mode']}{lay}: {r['result']}: "
                   f"{short_text(r['detail'], 220)}")
    for r in runs:
        if r.get("expect") == "any":  # reported, not judged
            plant = f" planted {r['plant']}" if r.get("plant") else ""
            lay = f" [{r['smem_layout']['name']}]" if r.get("smem_layout") else ""
            out.append(f"  {r['key']}{lay}{plant}: {r['result']} (reported, not judged)")
    return out


def unexpected(runs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The move and wgmma runs that are not as they should be (an experiment expected to
    mismatch that matched, a check that did not match, an error)."""
    return [r for r in runs if r["result"] not in ("compiled-only", "not-executed")
            and r.get("expect", "match") not in ("any", r["result"])]


def _tally(xs: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return out


def failed(report: Report) -> list[Run]:
    """Runs that are not as they should be: a check or discovery that did not match, an
    error, or an erratum layout the hardware did not refute."""
    return [r for r in report.runs if not r.ok]


def write_evidence(report: Report, directory: str | Path) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ev = report.evidence()
    slug = "".join(ch if ch.isalnum() else "-" for ch in str(ev.get("device", "gpu"))).strip("-")
    stamp = ev["date"].replace(":", "").replace("-", "")
    path = d / f"{slug.lower()}-{stamp}.json"
    write_atomic(path, dumps_evidence(ev))  # evidence is whole or absent
    return path


def dumps_evidence(ev: Mapping[str, Any]) -> str:
    """Evidence JSON with one run, and one map, a line (compact, diffable)."""
    sections = ("runs", "discovered", "maps")
    head = {k: v for k, v in ev.items() if k not in sections}
    lines = ["{"]
    lines += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    runs = [f"  {json.dumps(r, separators=(',', ':'))}" for r in ev.get("runs", [])]
    lines.append(' "runs": [')
    lines.append(",\n".join(runs))
    lines.append(" ],")
    for n, name in enumerate(sections[1:]):
        maps = [f"  {json.dumps(h)}: {json.dumps(m, separators=(',', ':'))}"
                for h, m in (ev.get(name) or {}).items()]
        lines.append(f' "{name}": {{')
        lines.append(",\n".join(maps))
        lines.append(" }," if n + 2 < len(sections) else " }")
    lines.append("}")
    return "\n".join(x for x in lines if x) + "\n"


def load_export(path: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(layouts, errata) of a ``ptxlayout export --format json [--corrections]`` file, or a
    folder holding ``layouts.json``."""
    if not path:
        raise FileNotFoundError("--layouts JSON is required here (export it with "
                                "'python -m formal export --format json --corrections -o "
                                "build/layouts.json' where the prover is installed)")
    p = Path(path)
    if p.is_dir():
        p = p / "layouts.json"
    try:
        doc = load_json(p)
    except FileProblem as exc:
        raise FileProblem(f"{p}: {exc}") from None
    recs = doc.get("layouts") if isinstance(doc, dict) else None
    if not isinstance(recs, list):
        raise ValueError(f"{p}: not a layouts export (no 'layouts' list)")
    errata = doc.get("errata") or []
    if not isinstance(errata, list):
        raise ValueError(f"{p}: 'errata' is not a list")
    extra = []
    for name in ("smem", "scale", "datapath", "meta", "tc_scale"):
        more = doc.get(name) or []
        if not isinstance(more, list):
            raise ValueError(f"{p}: '{name}' is not a list")
        extra += [dict(r) for r in more]
    # a table the export states once ('cells_from') is spelled out here, checked by its hash;
    # the shared-memory layouts, the block-scale factor maps, the data paths and the sparse
    # metadata and the tcgen05 scale factors (no cells) ride along for formal.execute.
    # smem_runs, .block_scale, .datapath, .tcgen05_sp and .tcgen05_scale
    return expand(recs) + extra, expand(errata)


def gpu_command(args: argparse.Namespace,
                   catalog: tuple[list[Any], list[Any]] | None = None) -> int:
    """``ptxlayout gpu``'s work (the command line is ``formal.cli``'s, which needs only the
    standard library to start).  The layouts are ``--layouts`` (an export) or ``catalog``,
    (records, errata) the caller computed where the prover is installed; this module never
    imports the prover.  Exit 0: every executed check matched, discoveries agreed and the
    errata layouts were refuted; 1: anything else (a mismatch, an error); 2: usage."""
    try:
        if getattr(args, "layouts", None):
            records, errata = load_export(args.layouts)
        elif catalog is not None:
            records, errata = catalog
        else:
            raise ValueError("no --layouts given: export the layouts where the prover is "
                             "installed ('ptxlayout export --format json --corrections -o "
                             "build/layouts.json') and pass that file")
    except (OSError, ValueError) as exc:
        print(f"ptxlayout gpu: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "no_errata", False):
        errata = []
    only = getattr(args, "only", None)
    trials = max(1, int(getattr(args, "trials", 4) or 4))
    use_ptxas = not getattr(args, "no_ptxas", False)
    job = Job(records, errata, trials, only, bool(getattr(args, "discover", False)),
              not getattr(args, "no_experiments", False), use_ptxas)
    if only and not all_tasks(job, 0) and not smem_runs.smem_tasks(90, only):
        print(f"ptxlayout gpu: no variant matches '{only}' (--only takes part of a key such "
              "as 'mma.m16n8k16.f32.bf16', 'ldmatrix.m8n8.x4' or "
              "'wgmma.m64n64k16.f32.f16.f16.rs')", file=sys.stderr)
        return 2
    spec = getattr(args, "device", None) or "cuda"
    allow = bool(getattr(args, "allow_no_device", False))
    problem = device_problem(spec)
    if problem and not allow:
        print(f"ptxlayout gpu: {problem}; or --allow-no-device for the compile-only run",
              file=sys.stderr)
        return 2
    record = getattr(args, "record", None)
    if record:
        try:  # before the run: an evidence folder that cannot be made fails at once
            Path(record).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"ptxlayout gpu: cannot write evidence to {record}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    bar = progress("running", "variants")  # None unless stderr is a terminal

    def log(line: str) -> None:
        if bar is not None:
            bar.clear()  # the line goes where the bar was; the next count draws it again
        print(line, flush=True)

    deadline = getattr(args, "deadline", None)
    timeout = float(getattr(args, "timeout", 120.0) or 120.0)
    report = run_supervised(spec, job.records, trials, only, job.discover, use_ptxas, timeout,
                            log, job.errata, float(deadline) if deadline else None, bar,
                            job.experiments)
    absent = no_device(report)
    if absent and not allow:
        print(f"ptxlayout gpu: {absent}; nothing was run (--allow-no-device for the "
              "compile-only run)", file=sys.stderr)
        return 2
    if absent:
        assemble_only(report, use_ptxas)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if getattr(args, "record", None):
        if absent:
            print("no evidence written: no device ran anything", file=sys.stderr)
        else:
            path = write_evidence(report, args.record)
            print(f"evidence written to {path}")
    if absent:
        print("compile-only run: no device (--allow-no-device); nothing was checked")
    print(table(report, bool(getattr(args, "full_table", False))))
    if failed(report):
        return 1
    if not absent and all(r.result in ("not-executed", "compiled-only") for r in report.runs):
        print(f"ptxlayout gpu: {report.info.get('device')} ran none of the selected variants "
              "(they need another architecture): nothing was checked", file=sys.stderr)
        return 2
    return 0
