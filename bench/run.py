"""Benchmark: prove the embedded catalog several times and report the median of each phase.

    python bench/run.py [--repeat 7] [--plot bench/scaling.png] [--write-docs] [DOC ...]

``--write-docs`` also writes the output, dated and with the machine, into the ``bench`` block
of docs/benchmarks.md (``tools/docs_numbers.write_measured``): the page's timings are never
typed by hand.

Phases: ingest (documents -> sections), parse (grammar), model (SymPy layouts), prove (Z3 with
the cross-check off), cross-check (the enumeration re-check: full proof minus Z3-only), other
families (what ``ptxlayout prove`` adds: the shared-memory, block-scale, tcgen05 sparse and
data-path layouts, as ``api.analyze`` runs them; the layout and relation counts are its), each
in this process's CPU time (the wall clock of a shared machine adds the waits for a core).  Beside
them, in the same run, the *floor*: a plain enumeration checker of the same obligations on the
same layouts (no Z3), and the ratio of the full proof to it.  Then the fresh-process table of
``bench/fresh.py`` (what a user feels: ``--version``, the catalog cold / with the table cache /
warm, the 6 MB and 4.6 MB documents, peak RSS), each target beside its measurement.

Then the scaling run: synthetic warpgroup-wide accumulators (128 threads through ``%warpid``, a
64 x N tile as wgmma's, N = 8 .. 256), written in the same grammar, each proven cold; the proof
time is plotted against the tile size (PNG, through Pillow).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

T_IMPORT = time.perf_counter()
import sympy  # noqa: E402
import z3  # noqa: E402,F401

from formal import api, catalog  # noqa: E402
from formal import prove as pv  # noqa: E402
from formal.model import Model, build  # noqa: E402
from formal.model.algebra import _floor_parts  # noqa: E402
from formal.model.cells import build_map, clear_enumerated  # noqa: E402
from formal.model.layout import srepr  # noqa: E402
from formal.model.resolve import clear_catalog_layouts  # noqa: E402
from formal.model.tc_meta import _TABLES as tc_meta_tables  # noqa: E402
from formal.model.tc_scale import _TABLES as tc_scale_tables  # noqa: E402
from formal.parse import clear_memo, parse_document  # noqa: E402
from formal.prove import formula, table, witness  # noqa: E402
from formal.prove.repeats import _ON_TABLE as on_table_memo  # noqa: E402
from formal.text import read_path, read_text  # noqa: E402

T_IMPORT = time.perf_counter() - T_IMPORT
# The phases and the scaling run are timed in this process's CPU time (Z3 solves in this
# thread): on a shared machine the wall clock adds however long the process waited for a core.
CLOCK = time.process_time


def floor(model: Model) -> int:
    """The same obligations decided by enumeration alone (no Z3): the floor to compare with."""
    checked = 0
    for lay in model.layouts:
        clear_enumerated()  # every layout enumerated on its own, as the floor always was
        m = build_map(lay)  # its own map, not the prover's
        if m is not None:
            for k in range(len(m.formulas)):
                witness.witness_cases(m, k)
            witness.witness_range(m)
            witness.witness_collision(m)
            witness.witness_hole(m)
            if lay.sparse_a:
                spec, _core = formula.chunk_spec(lay)
                if spec is not None:
                    witness.witness_chunks(m, spec.width, spec.chunk, spec.nonzeros)
        table.register_budget_core(lay)
        table.element_list_core(lay)
        table.type_names_core(lay)
        checked += 1
    return checked


def cold() -> None:
    """Forget every result a previous round left: proofs, parses, the catalog's layouts,
    SymPy's own cache, the memos of srepr and of floor's parts."""
    pv.clear_cache()
    clear_catalog_layouts()
    catalog.documents.cache_clear()
    api._TMEM.clear()
    tc_scale_tables.clear()  # each program's placement table, and the checks kept by it
    tc_meta_tables.clear()
    on_table_memo.clear()
    clear_memo()
    sympy.core.cache.clear_cache()
    srepr.cache_clear()
    _floor_parts.cache_clear()


def one_round(paths: list[Path]) -> dict[str, float]:
    cold()
    t = {}
    t0 = CLOCK()
    if paths:
        docs = [read_path(p) for p in paths]
        cat = list(catalog.documents())
    else:
        docs = list(catalog.documents())
        cat = []
    t1 = CLOCK()
    parsed = [parse_document(d) for d in docs]
    parsed_cat = [parse_document(d) for d in cat]
    t2 = CLOCK()
    model = build(parsed, parsed_cat)
    t3 = CLOCK()
    pv.prove(model, pv.Options(cross_check=False))
    t4 = CLOCK()
    pv.clear_cache()
    model = build(parsed, parsed_cat)  # fresh layouts: their enumerated maps are not kept
    t5 = CLOCK()
    proof = pv.prove(model, pv.Options())
    t6 = CLOCK()
    floor(model)
    t7 = CLOCK()
    assert proof.internal_errors == 0
    # what `ptxlayout prove` adds to the fragments' proof, the very call api.analyze makes:
    # the shared-memory, block-scale, tcgen05 sparse, metadata, copy and data-path layouts
    named = {str(p) for p in paths}
    mine = [d for d in model.documents if d.name in named]
    proof = api.with_families(proof, model, mine, not paths)
    t8 = CLOCK()
    t["families"] = t8 - t7
    t["ingest"] = t1 - t0
    t["parse"] = t2 - t1
    t["model"] = t3 - t2
    t["prove"] = t4 - t3
    t["cross-check"] = max(0.0, (t6 - t5) - (t4 - t3))
    t["total"] = (t3 - t0) + (t6 - t5) + (t8 - t7)
    t["floor"] = t7 - t6
    t["layouts"] = float(len(proof.results) + len(proof.smem) + len(proof.scales)
                         + len(proof.datapaths))
    t["relations"] = proof.seconds.get("relations", 0.0)  # inside "prove" + "cross-check"
    t["relation_count"] = float(len(proof.relations))
    return t


def synthetic(n: int) -> str:
    """A warpgroup accumulator of a 64 x n tile (wgmma's m64nNk16 C/D), our own section."""
    per = n // 2
    return (f"1.1. Matrix Fragments for mma.m64n{n}k16\n"
            "Accumulators (C or D):\n"
            ".ctype / .dtype Fragment Elements (low to high)\n"
            f".f32 A vector expression containing {per} .f32 registers, containing {per} .f32 "
            f"elements from the matrix C (or D). c0, c1, ..., c{per - 1}\n"
            "groupID           = %laneid >> 2\n"
            "threadID_in_group = %laneid % 4\n"
            "row = (%warpid * 16) + groupID + (8 * ((i >> 1) & 0x1))\n"
            "col = ((i >> 2) * 8) + (threadID_in_group * 2) + (i & 0x1)"
            f"     for ci where i = {{0,..,{per - 1}}}\n")


def scaling(sizes: list[int], repeat: int) -> list[tuple[int, int, float, float]]:
    out = []
    for n in sizes:
        times, floors = [], []
        for _ in range(repeat):
            pv.clear_cache()
            t0 = CLOCK()
            model = build([read_text(synthetic(n), f"wg{n}.txt")], [])
            proof = pv.prove(model, pv.Options())
            t1 = CLOCK()
            floor(model)
            t2 = CLOCK()
            r = proof.results[0]
            assert all(v.status in ("proved", "not-applicable") for v in r.verdicts), \
                [(v.name, v.status, v.message) for v in r.verdicts]
            assert r.layout.lanes == 128
            times.append(t1 - t0)
            floors.append(t2 - t1)
        out.append((n, 64 * n, statistics.median(times), statistics.median(floors)))
    return out


def plot(rows: list[tuple[int, int, float, float]], path: Path) -> None:
    from PIL import Image, ImageDraw
    w, h, pad = 720, 440, 70
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    xs = [c for _n, c, _t, _f in rows]
    ys = [t for *_x, t, _f in rows] + [f for *_x, f in rows]
    xmax, ymax = max(xs) * 1.05, max(ys) * 1.15

    def pt(x: float, y: float) -> tuple[float, float]:
        return pad + (w - 2 * pad) * x / xmax, h - pad - (h - 2 * pad) * y / ymax

    d.line([pt(0, 0), pt(xmax, 0)], fill="black")
    d.line([pt(0, 0), pt(0, ymax)], fill="black")
    for k in range(5):
        y = ymax * k / 4
        d.text((8, pt(0, y)[1] - 6), f"{y * 1000:.0f} ms", fill="black")
    last = -1e9
    for _n, c, _t, _f in rows:
        x = pt(c, 0)[0]
        if x - last >= 40:  # labels that would overlap are left out
            d.text((x - 14, h - pad + 8), f"{c}", fill="black")
            last = x
    for series, colour, label in (([(c, t) for _n, c, t, _f in rows], (200, 40, 40),
                                   "prove (Z3 + cross-check)"),
                                  ([(c, f) for _n, c, _t, f in rows], (40, 90, 200),
                                   "enumeration floor")):
        pts = [pt(x, y) for x, y in series]
        d.line(pts, fill=colour, width=3)
        for p in pts:
            d.ellipse([p[0] - 4, p[1] - 4, p[0] + 4, p[1] + 4], fill=colour)
        d.text((pts[-1][0] - 160, pts[-1][1] - 22), label, fill=colour)
    d.text((w // 2 - 150, h - 30), "tile cells (64 x N accumulator, 128 threads)", fill="black")
    d.text((w // 2 - 170, 14), "ptxlayout: proof time of a warpgroup layout vs tile size",
           fill="black")
    img.save(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("docs", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--plot", type=Path, default=ROOT / "bench" / "scaling.png")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--docs-repeat", type=int, default=1,
                    help="fresh runs of each big document (seconds each)")
    ap.add_argument("--write-docs", action="store_true",
                    help="also write this output, dated, into docs/benchmarks.md's bench block")
    args = ap.parse_args(argv)
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    one_round(args.docs)  # warm: Lark grammars built, SymPy and Z3 caches touched
    rounds = [one_round(args.docs) for _ in range(args.repeat)]
    med: dict[str, Any] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    what = ", ".join(str(p) for p in args.docs) or "the embedded catalog"
    say(f"proving {what}: {int(med['layouts'])} layouts and {int(med['relation_count'])} "
        f"relations, median of {args.repeat} cold runs, cpu time")
    say(f"  imports (once)      {T_IMPORT * 1000:8.0f} ms")
    for k in ("ingest", "parse", "model", "prove", "cross-check"):
        say(f"  {k:<19} {med[k] * 1000:8.0f} ms")
    say(f"  of which relations  {med['relations'] * 1000:8.0f} ms")
    say(f"  other families      {med['families'] * 1000:8.0f} ms  (api.with_families: shared "
        "memory, block scale, tcgen05 sparse, metadata, copies, data paths)")
    say(f"  total beyond imports {med['total'] * 1000:7.0f} ms")
    say(f"  enumeration floor   {med['floor'] * 1000:8.0f} ms")
    front = med["ingest"] + med["parse"] + med["model"]
    ratio = (med["prove"] + med["cross-check"]) / med["floor"]
    say(f"  ratio prove+cross-check / floor            {ratio:6.1f}x  (the fragments; "
        f"target <= 5x: {'holds' if ratio <= 5 else 'NO'})")
    say(f"  ratio fragments end to end / (front stages + floor)  "
        f"{(med['total'] - med['families']) / (front + med['floor']):6.1f}x")
    say(f"fresh processes (bench/fresh.py), median of {max(3, args.repeat // 2)}:")
    import subprocess  # a small process of its own: a child's peak RSS counts its parent's
    fresh = subprocess.run([sys.executable, str(ROOT / "bench" / "fresh.py"), "--repeat",
                            str(max(3, args.repeat // 2)), "--docs-repeat",
                            str(args.docs_repeat), "--floor", str(med["floor"])],
                           check=False, capture_output=True, text=True)
    sys.stderr.write(fresh.stderr)
    for line in fresh.stdout.splitlines():
        say(line)
    if not args.no_scaling:
        rows = scaling([8, 16, 32, 64, 128, 256], max(3, args.repeat // 2))
        say("warpgroup accumulators (128 threads, %warpid), cold, median:")
        say("     N   cells   prove    floor")
        for n, cells, t, f in rows:
            say(f"  {n:4d} {cells:7d} {t * 1000:6.0f} ms {f * 1000:5.0f} ms")
        plot(rows, args.plot)
        say(f"plot: {args.plot.relative_to(ROOT) if args.plot.is_relative_to(ROOT) else args.plot}")
    if args.write_docs:
        sys.path.insert(0, str(ROOT / "tools"))
        import docs_numbers
        command = "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
        print(f"written: {docs_numbers.write_measured('bench', command.strip(), lines)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
