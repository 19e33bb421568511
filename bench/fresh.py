"""What a user feels: ``ptxlayout`` in fresh processes, each target beside its measurement.

    python bench/fresh.py [--repeat 5]          (also the last table of bench/run.py)

Every row is the median wall time of ``--repeat`` new processes (``python -m formal ...``), its
CPU time (user + system, from ``wait4``: steadier than wall time on a shared machine) and the
largest peak resident memory among them (``ru_maxrss``; it counts what a child held before
its ``exec``, so this runs as a small process of its own: ``bench/run.py`` starts it).
Bytecode is written (into the temporary folder) and used, as an installed package's is, even
where the environment says ``PYTHONDONTWRITEBYTECODE``.  "Beyond imports" is the median of
paired differences: before each run, a process that only imports what ``prove`` imports (z3,
sympy, lark, numpy and the package), so the machine's drift falls on both.  The enumeration
floor is measured in bench/run.py's own process: the same obligations of the catalog decided
by enumeration alone (its ``floor``).

Rows: what the catalog holds (layouts, the wgmma ones stated for every N, the moves,
relations); ``--version`` / ``--help`` (nothing heavy may be imported); ``show``, ``draw`` and
``export`` of one layout, first and warm, beyond a bare python; the catalog cold (no
cache at all: ``--no-cache``) and, for scale, its ratio to the fragments' enumeration floor
(the run also reads, parses and models, and proves every other family), cold with the grammar
tables cached, warm (tables and Z3's answers cached), and with the shipped GPU evidence
(the default run) warm, with Z3's answers cold (the cache's ``proofs/`` emptied before each
run; its other folders stay warm) and with every cache folder emptied (the whole
``PTXLAYOUT_CACHE_DIR`` removed before each run: a CI runner's first run); a 6 MB document
made of the plain-text seeds and generated spec-like sections that hold no fragment layout
(it finds the seeds' 56 layouts and no other), cold and then warm with the evidence; the
4.6 MB document of one seed repeated 400 times (identical formulas must be proved once), the
same two ways.  Each target
is judged on the wall time and on the CPU time ("holds (wall / cpu)"); ``--docs-repeat 0``
leaves the big documents out.
Documents are generated into a temporary folder (no spec text is copied: the filler is made
of generated words).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seeds() -> Path:
    """``shared/seeds`` beside the checkout or above it (a worktree sits deeper), or
    ``PTXLAYOUT_SEEDS``."""
    if os.environ.get("PTXLAYOUT_SEEDS"):
        return Path(os.environ["PTXLAYOUT_SEEDS"])
    for up in ROOT.parents:
        if (up / "shared" / "seeds").is_dir():
            return up / "shared" / "seeds"
    raise SystemExit("bench/fresh.py: no shared/seeds above the checkout (set PTXLAYOUT_SEEDS)")


SEEDS = _seeds()

IMPORTS = ("import formal.cli, formal.api, formal.prove, formal.writers.report, formal.parse, "
           "formal.model, z3, sympy, lark, numpy")


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS in KiB) of one fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                         cwd=str(ROOT))
    _pid, _status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = 0
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


@dataclass
class Timing:
    wall: float  # median seconds
    cpu: float
    rss: int  # KiB, the largest

    def ms(self) -> str:
        return f"{self.wall * 1000:.0f} ms (cpu {self.cpu * 1000:.0f})"

    def s(self) -> str:
        return f"{self.wall:.1f} s (cpu {self.cpu:.1f})"


def measure(repeat: int, args: list[str], env: dict[str, str],
            before: Callable[[], None] | None = None,
            base: list[str] | None = None) -> Timing:
    """Medians over ``repeat`` fresh processes; with ``base``, of the paired differences
    (a ``base`` process right before each run: the noise of a shared machine falls on both)."""
    walls, cpus, rss = [], [], 0
    for _ in range(repeat):
        bw = bc = 0.0
        if base is not None:
            bw, bc, _r = run_once(base, env)
        if before is not None:
            before()
        w, c, r = run_once(args, env)
        walls.append(w - bw)
        cpus.append(c - bc)
        rss = max(rss, r)
    return Timing(statistics.median(walls), statistics.median(cpus), rss)


# ---- generated documents ------------------------------------------------------------------------

_WORDS = ("operand", "register", "vector", "predicate", "address", "state", "space", "shared",
          "global", "warp", "thread", "barrier", "scope", "order", "value", "source", "target",
          "destination", "type", "width", "mode", "rounding", "saturate", "cache", "policy",
          "eviction", "priority", "memory", "consistency", "fence", "atomic", "reduction",
          "instruction", "modifier", "qualifier", "semantics", "result", "operation", "bits",
          "unsigned", "signed", "integer", "floating", "point", "half", "precision", "lane")
_OPS = ("ld", "st", "add", "mul", "fma", "cvt", "mov", "shf", "prmt", "bar", "red", "atom",
        "cp", "tex", "vote", "shfl", "setp", "selp", "min", "max", "abs", "neg", "and", "or")
_TYPES = (".u32", ".s32", ".f32", ".f16", ".b64", ".u64", ".pred", ".b16")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def filler_section(rng: random.Random, number: int) -> str:
    """A spec-like section about some other instruction: prose, syntax, a small operand table
    and pseudocode lines -- none of it a fragment layout."""
    op = rng.choice(_OPS)
    ty = rng.choice(_TYPES)
    lines = [f"9.7.{number // 40}.{number % 40 + 1}. Instructions: {op}", "",
             f"{op}{ty}", "", "Syntax", "",
             f"{op}{ty}  d, a, b;", f"{op}.sat{ty}  d, a, b, c;", "", "Description", ""]
    for _ in range(rng.randint(2, 5)):
        lines.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 5))))
        lines.append("")
    lines += ["Operand Description", f"d the destination {rng.choice(_WORDS)} register",
              f"a the first {rng.choice(_WORDS)} operand", "", "Semantics", "",
              f"d = a {rng.choice(['+', '*', '&', '|', '^'])} b;",
              f"if (a > {rng.randint(0, 99)}) d = d + 1;", "", "Examples", "",
              f"{op}{ty} r1, r2, r3;", ""]
    return "\n".join(lines)


def mixed_document(path: Path, size: int) -> int:
    """The plain-text seeds spread through generated sections up to ``size`` bytes (the
    Markdown seeds are another dialect, and one document has one); returns its bytes."""
    rng = random.Random(14)
    seeds = plain_seeds()
    parts: list[str] = []
    total = 0
    n = 0
    every = max(1, size // max(1, len(seeds) + 1))
    next_seed = every
    while total < size:
        s = filler_section(rng, n)
        n += 1
        parts.append(s)
        total += len(s) + 2
        if seeds and total >= next_seed:
            parts.append(seeds.pop(0))
            total += len(parts[-1]) + 2
            next_seed += every
    parts.extend(seeds)
    text = "\n\n".join(parts)
    path.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def plain_seeds() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt"))]
    return [t for t in texts if not t.startswith("#")]


def repeated_document(path: Path, copies: int = 400) -> int:
    seed = sorted(SEEDS.glob("000*.txt"))[0].read_text(encoding="utf-8")
    text = "\n\n".join([seed] * copies)
    path.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


# ---- the table ----------------------------------------------------------------------------------


def table(repeat: int, floor_s: float | None, docs_repeat: int = 1) -> list[str]:
    """Measure every row; return the printed lines.  "holds" is judged on the wall time and
    on the CPU time (user + system) separately: on a shared machine the wall time is the
    CPU time plus however long the process waited for a core."""
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="ptxlayout-bench-"))
    cache = tmp / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PTXLAYOUT_CACHE_DIR=str(cache),
               PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    env.pop("PTXLAYOUT_DEBUG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    run_once([py, "-c", IMPORTS + ", formal.writers.ledger, formal.writers.figures, "
              "formal.writers.drawing"], env)  # compiles it once
    prove = [py, "-m", "formal", "prove", "--format", "json", "--output", os.devnull]
    rows: list[Row] = []

    def clear_proofs() -> None:
        for p in (cache / "proofs").glob("*.json"):
            p.unlink()

    def clear_all() -> None:
        clear_proofs()
        for p in (cache / "tables").glob("*.json"):
            p.unlink()

    def clear_everything() -> None:  # every folder of the cache: nothing kept at all
        shutil.rmtree(cache, ignore_errors=True)

    rows.append(("the catalog proven below", catalog_summary(py, env), "", "", ""))
    bare = measure(repeat, [py, "-c", "pass"], env)
    version = measure(repeat, [py, "-m", "formal", "--version"], env)
    helped = measure(repeat, [py, "-m", "formal", "--help"], env)
    imp = [py, "-c", IMPORTS]
    imports = measure(repeat, imp, env)
    rows.append(("python itself (the floor of the next two)", bare.ms(), "", "", ""))
    rows.append(("ptxlayout --version", version.ms(), "<= 150 ms", _holds(version, 0.15),
                 _mib(version.rss)))
    rows.append(("ptxlayout --help", helped.ms(), "<= 150 ms", _holds(helped, 0.15),
                 _mib(helped.rss)))
    rows.append(("imports of prove (subtracted below)", imports.ms(), "", "",
                 _mib(imports.rss)))
    rows += named_rows(repeat, env, cache)
    none = ["--evidence", "none"]
    cold = measure(repeat, prove + none + ["--no-cache"], env, base=imp)
    measure(1, prove + none, env)  # fills both caches
    tables_only = measure(repeat, prove + none, env, clear_proofs, base=imp)
    measure(1, prove + none, env)
    warm = measure(repeat, prove + none, env, base=imp)
    measure(1, prove, env)  # fills what only a run with the evidence keeps (its entry, verdicts)
    default = measure(repeat, prove, env, base=imp)
    default_cold = measure(repeat, prove, env, clear_proofs, base=imp)
    default_empty = measure(repeat, prove, env, clear_everything, base=imp)
    rows.append(("catalog, cold (--no-cache), beyond imports", cold.ms(), "<= 1500 ms",
                 _holds(cold, 1.5), _mib(cold.rss)))
    if floor_s:
        # for scale only: the run reads, parses and models the catalog and proves every
        # family; the floor enumerates the fragments' obligations alone (bench/run.py's
        # ratio, in one process, is the one held to 5x)
        rows.append(("  the same / the fragments' enumeration floor",
                     f"{cold.wall / floor_s:.1f}x (cpu {cold.cpu / floor_s:.1f}x)",
                     "(for scale)", "", f"floor {floor_s * 1000:.0f} ms"))
    rows.append(("catalog, tables cached, proofs cold, beyond imports", tables_only.ms(),
                 f"(the table cache saves {(cold.cpu - tables_only.cpu) * 1000:.0f} ms cpu)",
                 "", _mib(tables_only.rss)))
    rows.append(("catalog, warm (tables + Z3 answers), beyond imports", warm.ms(),
                 "<= 500 ms", _holds(warm, 0.5), _mib(warm.rss)))
    rows.append(("catalog, warm, with the GPU evidence (default run), beyond imports",
                 default.ms(), "<= 500 ms", _holds(default, 0.5), _mib(default.rss)))
    rows.append(("  the same, Z3's answers cold (proofs/ emptied), beyond imports",
                 default_cold.ms(), "<= 1500 ms", _holds(default_cold, 1.5),
                 _mib(default_cold.rss)))
    rows.append(("  the same, every cache folder emptied, beyond imports", default_empty.ms(),
                 "<= 1500 ms", _holds(default_empty, 1.5), _mib(default_empty.rss)))
    if docs_repeat <= 0:
        return _table(rows)
    mixed = tmp / "mixed.txt"
    size = mixed_document(mixed, 6 * 1000 * 1000)
    t = measure(docs_repeat, prove + none + [str(mixed)], env, clear_all)
    rows.append((f"{size / 1e6:.1f} MB: seeds + spec-like sections, cold, whole run", t.s(),
                 "<= 5 s", _holds(t, 5.0), _mib(t.rss)))
    t = measure(docs_repeat, prove + [str(mixed)], env)
    rows.append(("  the same, warm, with the GPU evidence", t.s(), "", "", _mib(t.rss)))
    rep = tmp / "repeated.txt"
    size = repeated_document(rep)
    t = measure(docs_repeat, prove + none + [str(rep)], env, clear_all)
    rows.append((f"{size / 1e6:.1f} MB: one seed x 400, cold, whole run", t.s(), "<= 20 s",
                 _holds(t, 20.0), _mib(t.rss)))
    t = measure(docs_repeat, prove + [str(rep)], env)
    rows.append(("  the same, warm, with the GPU evidence", t.s(), "", "", _mib(t.rss)))
    return _table(rows)


Row = tuple[str, str, str, str, str]
NAMED = "mma.m16n8k16.A.f16-bf16"


def named_rows(repeat: int, env: dict[str, str], cache: Path) -> list[Row]:
    """``show``, ``draw --svg`` and ``export`` of one layout of the catalog, beyond a bare
    ``python -c pass``: the first run (no views kept: the catalog is modelled) and a warm one
    (``formal.writers.views``: nothing is modelled)."""
    py = sys.executable
    bare = [py, "-c", "pass"]
    rows: list[Row] = []

    def clear_views() -> None:
        for p in (cache / "views").glob("*.json"):
            p.unlink()

    for name, tail in (("show", ["show", NAMED]),
                       ("draw --svg", ["draw", NAMED, "--svg", os.devnull]),
                       ("export", ["export", NAMED, "--output", os.devnull])):
        args = [py, "-m", "formal", *tail]
        first = measure(repeat, args, env, clear_views, base=bare)
        measure(1, args, env)
        warm = measure(repeat, args, env, base=bare)
        rows.append((f"{name} {NAMED}, first run, beyond python", first.ms(), "", "",
                     _mib(first.rss)))
        rows.append(("  the same, warm (views kept), beyond python", warm.ms(), "<= 300 ms",
                     _holds(warm, 0.3), _mib(warm.rss)))
    return rows


def catalog_summary(py: str, env: dict[str, str]) -> str:
    """What the catalog rows prove: layouts (parametric wgmma, moves) and relations."""
    import json
    out = subprocess.run([py, "-m", "formal", "prove", "--format", "json", "--evidence",
                          "none", "--no-cache"], capture_output=True, text=True, env=env,
                         cwd=str(ROOT), check=False)
    doc = json.loads(out.stdout)
    lays = doc["layouts"]
    wgmma = sum(1 for r in lays if r["instruction"].startswith("wgmma"))
    every_n = sum(1 for r in lays if r["instruction"].startswith("wgmma") and "nN" in r["shape"])
    moves = sum(1 for r in lays if r["instruction"] in ("ldmatrix", "stmatrix", "movmatrix"))
    return (f"{len(lays)} layouts ({wgmma} wgmma, {every_n} of them stated for every N; "
            f"{moves} moves), {len(doc['relations'])} relations")


def _table(rows: list[Row]) -> list[str]:
    head = ("measurement", "median wall (cpu)", "target", "holds (wall / cpu)",
            "peak RSS / note")
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(5)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return out


def _holds(t: Timing, limit: float) -> str:
    return f"{_ok(t.wall <= limit)} / {_ok(t.cpu <= limit)}"


def _mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def _ok(b: bool) -> str:
    return "yes" if b else "NO"


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--docs-repeat", type=int, default=1,
                    help="runs of each big document (they take seconds each; 0: leave them "
                         "out)")
    ap.add_argument("--floor", type=float, help="the enumeration floor in seconds (bench/run.py "
                    "measures it and passes it)")
    args = ap.parse_args(argv)
    for line in table(args.repeat, args.floor, args.docs_repeat):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
