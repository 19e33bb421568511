"""Every number README.md and docs/ give is computed here, never typed by hand.

    python tools/docs_numbers.py            rewrite every marked block that can be computed here
    python tools/docs_numbers.py --check    exit 1 and name each block that is out of date

A marked block is an HTML comment pair that Markdown renders as nothing:

    <!-- numbers:catalog -->
    163 layouts and 39 relations ...          <- this text is generated
    <!-- /numbers -->

The text between the markers is the output of one function of ``BLOCKS`` (named after the
block).  Each runs the public command line in this process (``ptxlayout prove --format json``
on the catalog or on the seeds, ``ptxlayout audit cute --format json``) or pytest's collection,
and writes a sentence or a table from the JSON it reads: the output contract is the only
thing it relies on.  A block whose inputs are missing here (the seeds beside the repository,
the nvidia-cutlass wheel) is left as it is and reported as skipped.  Timings are not made here:
``bench/run.py --write-docs`` writes the ``bench`` block of docs/benchmarks.md (and
``bench/mutants.py --write-docs`` the ``mutants`` block of docs/testing.md), with the date and
the machine, through ``write_measured`` below.  ``tests/test_docs.py`` fails when a block differs
from what this script computes now.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
BLOCK = re.compile(r"(<!-- numbers:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /numbers -->)",
                   re.DOTALL)


class Missing(Exception):
    """An input this block needs is not installed or not beside the repository."""


def documents() -> list[Path]:
    """README.md and every Markdown file under docs/: the files that may hold blocks."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _cli_json(*argv: str) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from formal.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    if code not in (0, 1):
        raise RuntimeError(f"ptxlayout {' '.join(argv)} exited {code}: {err.getvalue()}")
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def _seed_files() -> list[Path]:
    files = sorted(SEEDS.glob("*.txt")) + sorted(SEEDS.glob("*.md"))
    if not files:
        raise Missing(f"no seed documents in {SEEDS}")
    return files


_cache: dict[str, dict[str, Any]] = {}


def catalog_report() -> dict[str, Any]:
    if "catalog" not in _cache:
        _cache["catalog"] = _cli_json("prove", "--format", "json")
    return _cache["catalog"]


def seeds_report() -> dict[str, Any]:
    if "seeds" not in _cache:
        _cache["seeds"] = _cli_json("prove", *map(str, _seed_files()), "--format", "json")
    return _cache["seeds"]


def _by_kind(findings: list[dict[str, Any]], severity: str) -> str:
    kinds = Counter(f["kind"] for f in findings if f["severity"] == severity)
    return ", ".join(f"{n} `{k}`" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1],
                                                                                   kv[0])))


def block_catalog() -> str:
    r = catalog_report()
    s = r["summary"]
    families = Counter(x["instruction"] for x in r["layouts"])
    fams = ", ".join(f"{n} {k}" for k, n in sorted(families.items()))
    ob = s["obligations"]
    return (f"The embedded catalog holds **{s['layouts']} layouts** ({fams}) and "
            f"**{s['relations']} producer -> consumer relations** ({s['relations_proved']} "
            f"proved).  `ptxlayout prove` decides {sum(ob.values())} obligations: "
            f"{ob.get('proved', 0)} proved, {ob.get('refuted', 0)} refuted and "
            f"{ob.get('error', 0)} not checked (the spec's errata, kept as written), "
            f"{ob.get('unconfirmed', 0)} unconfirmed on hardware, the rest not applicable.  "
            f"It reports {s['errors']} unaccepted errors, {s['accepted']} accepted erratum "
            f"findings and {s['warnings']} warnings ({_by_kind(r['findings'], 'warning')}).\n")


def _where(f: dict[str, Any]) -> str:
    return f"{Path(f['document']).name[:3]}:{f['line']}"


def block_seeds() -> str:
    r = seeds_report()
    s = r["summary"]
    return (f"`ptxlayout prove ../shared/seeds/*` reads {len(_seed_files())} documents: "
            f"**{s['layouts']} layouts**, {s['layouts_proved']} proved and "
            f"{s['layouts_failed']} with findings; **{s['errors']} errors** and "
            f"{s['warnings']} warnings ({_by_kind(r['findings'], 'warning')}); exit 1.\n")


def block_seed_errors() -> str:
    rows = ["| where | kind | finding |", "| --- | --- | --- |"]
    for f in seeds_report()["findings"]:
        if f["severity"] == "error":
            message = f["message"].replace("|", "\\|")
            rows.append(f"| {_where(f)} | `{f['kind']}` | {message} |")
    return "\n".join(rows) + "\n"


def block_catalog_errata() -> str:
    rows = ["| where | kind | finding |", "| --- | --- | --- |"]
    for f in catalog_report()["findings"]:
        if f["severity"] == "error":
            message = " ".join(f["message"].split(" [accepted: ")[0].split())
            message = message.replace("|", "\\|")
            if len(message) > 160:
                message = message[:157] + "..."
            rows.append(f"| {f['document']}:{f['line']} | `{f['kind']}` | {message} |")
    return "\n".join(rows) + "\n"


def block_hardware() -> str:
    per: dict[str, Counter[str]] = {}
    for x in catalog_report()["layouts"]:
        (status,) = [o["status"] for o in x["obligations"] if o["name"] == "hardware"]
        per.setdefault(x["instruction"], Counter())[status] += 1
    kinds = ["proved", "refuted", "unconfirmed", "error", "not-applicable"]
    rows = ["| family | layouts | " + " | ".join(kinds) + " |",
            "| --- | ---: | " + " | ".join("---:" for _ in kinds) + " |"]
    for fam, c in sorted(per.items()):
        rows.append(f"| {fam} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in kinds)
                    + " |")
    out, err = io.StringIO(), io.StringIO()
    sys.path.insert(0, str(ROOT))
    from formal.cli import main
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evidence", str(ROOT / "proofs" / "evidence")])
    last = out.getvalue().strip().splitlines()[-1]
    return ("\n".join(rows) + f"\n\n`ptxlayout evidence proofs/evidence` (exit {code}): {last}.\n")


def audit_report() -> dict[str, Any]:
    if "audit" not in _cache:
        try:
            import cutlass_library  # noqa: F401
        except ImportError as exc:
            raise Missing("the nvidia-cutlass wheel is not installed") from exc
        _cache["audit"] = _cli_json("audit", "cute", "--format", "json")
    return _cache["audit"]


def block_audit() -> str:
    r = audit_report()
    s = r["summary"]
    ops = s["operands"]
    worst = s["atoms_by_worst_verdict"]
    from importlib.metadata import version
    lines = [f"nvidia-cutlass {version('nvidia-cutlass')}: "
             f"{s['atoms']} atoms, {sum(ops.values())} operand checks: "
             + ", ".join(f"{ops.get(k, 0)} {k}" for k in ("equal", "differs", "not-in-spec",
                                                          "unreadable"))
             + "; atoms by their worst operand: "
             + ", ".join(f"{worst.get(k, 0)} {k}" for k in ("equal", "differs", "not-in-spec",
                                                           "unreadable")) + ".", ""]
    lines += ["| atom | header:line | operand | verdict | |", "| --- | --- | --- | --- | --- |"]
    for a in r["atoms"]:
        for o in a["operands"]:
            if o["verdict"] in ("differs", "unreadable"):
                header = a["file"].split("include/")[-1]
                msg = (o["message"] or "").replace("|", "\\|")
                if len(msg) > 110:
                    msg = msg[:107] + "..."
                lines.append(f"| `{a['atom']}` | {header}:{a['line']} | {o['operand']} | "
                             f"{o['verdict']} | {msg} |")
    return "\n".join(lines) + "\n"


def block_tests() -> str:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    m = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", proc.stdout)
    if not m:
        raise RuntimeError(f"pytest's collection said: {proc.stdout[-300:]}{proc.stderr[-300:]}")
    run, _total, fuzz = m.groups()
    return (f"`pytest -n auto` collects **{run} tests**; `pytest -m fuzz` runs the "
            f"{fuzz} long fuzz tests it leaves out.\n")


BLOCKS: dict[str, Callable[[], str]] = {
    "catalog": block_catalog,
    "catalog-errata": block_catalog_errata,
    "seeds": block_seeds,
    "seed-errors": block_seed_errors,
    "hardware": block_hardware,
    "audit": block_audit,
    "tests": block_tests,
}
SLOW = {"audit", "tests"}  # seconds each: tests/test_docs.py checks them in its slow set
ELSEWHERE = {"bench", "mutants", "load"}  # written by bench/run.py, bench/mutants.py and
# bench/under_load.py --write-docs


def blocks_in(text: str) -> list[tuple[str, str]]:
    """The (name, body) of each marked block of a Markdown text, in order."""
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def write_block(path: Path, name: str, body: str) -> bool:
    """Replace the body of every block NAME in PATH; True when PATH changed."""
    text = path.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + body + m.group(4) if m["name"] == name
                    else m.group(0), text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def machine() -> str:
    """The machine a measurement ran on, in one line (for the dated blocks of the benchmarks)."""
    import os
    import platform
    from importlib.metadata import version
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    libs = ", ".join(f"{name} {version(name)}" for name in ("z3-solver", "lark", "sympy",
                                                            "numpy"))
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{os.cpu_count()} cores ({cpu}){load}; Python {platform.python_version()}, "
            f"{libs}")


def write_measured(name: str, command: str, lines: list[str]) -> Path:
    """Write a dated block NAME (a bench script's output) into the docs page that holds it."""
    import datetime
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    body = (f"Measured {when} UTC by `{command}` on {machine()}:\n\n```\n"
            + "\n".join(lines) + "\n```\n")
    for path in documents():
        if any(n == name for n, _ in blocks_in(path.read_text(encoding="utf-8"))):
            write_block(path, name, body)
            return path
    raise LookupError(f"no page holds the block {name!r}")


def compute(names: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The bodies of the named blocks, and why each block that could not be made was not."""
    done: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for name in sorted(names):
        try:
            done[name] = BLOCKS[name]()
        except Missing as exc:
            skipped[name] = str(exc)
    return done, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a "
                                                          "block is out of date")
    args = ap.parse_args(argv)
    used = {name for path in documents()
            for name, _ in blocks_in(path.read_text(encoding="utf-8"))}
    unknown = used - set(BLOCKS) - ELSEWHERE
    if unknown:
        print(f"docs_numbers: unknown blocks: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    done, skipped = compute(used & set(BLOCKS))
    stale = []
    for path in documents():
        for name, body in blocks_in(path.read_text(encoding="utf-8")):
            if name in done and body != done[name]:
                stale.append(f"{path.relative_to(ROOT)}: {name}")
                if not args.check:
                    write_block(path, name, done[name])
    for name, why in skipped.items():
        print(f"docs_numbers: {name} skipped: {why}", file=sys.stderr)
    for line in stale:
        print(f"{'out of date' if args.check else 'rewritten'}: {line}")
    if not done:
        print("docs_numbers: no block could be computed", file=sys.stderr)
        return 2
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
