"""Benchmark: ``ptxlayout audit cute`` on the installed nvidia-cutlass wheel, cold and warm, and
``ptxlayout audit triton``, each in a fresh process.

    python bench/audit.py [--write-docs]

Cold: an empty cache folder (every header parsed with grammar/cute.lark).  Warm: the same folder
again (each header's syntax read back and checked against its text).  Each row gives the child
process's CPU time (user + system: on a shared machine the wall clock adds the waits for a
core) and its wall clock, and the warm run as a share of the cold one.  One run each.
``--write-docs`` writes the table, dated and with the machine's load, into the ``audit-bench``
block of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- audit-bench -->", "<!-- /audit-bench -->"


def timed(args: list[str], cache: str) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of one fresh ``ptxlayout`` process."""
    env = {**os.environ, "PTXLAYOUT_CACHE_DIR": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    code = subprocess.run([sys.executable, "-c", "import sys; from formal.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *args], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    rows: list[str] = ["| run | CPU s | wall s | exit | share of cold (CPU) |",
                       "| --- | --- | --- | --- | --- |"]
    with tempfile.TemporaryDirectory(prefix="ptxlayout-bench-audit-") as tmp:
        cache = os.path.join(tmp, "cache")
        cute = ["audit", "cute", "--format", "json", "-o", os.devnull]
        cold = timed(cute, cache)
        warm = timed(cute, cache)
        tri = timed(["audit", "triton", "--format", "json", "-o", os.devnull], cache)
    rows.append(f"| audit cute, cold | {cold[0]:.1f} | {cold[1]:.1f} | {cold[2]} | 1.00 |")
    rows.append(f"| audit cute, warm | {warm[0]:.1f} | {warm[1]:.1f} | {warm[2]} | "
                f"{warm[0] / cold[0]:.2f} |")
    rows.append(f"| audit triton | {tri[0]:.1f} | {tri[1]:.1f} | {tri[2]} | |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = (f"One run, {when}, {os.cpu_count()} CPUs, load average {load:.1f} at the end "
            "(exit 1: CuTe has atoms that differ from the spec).")
    text = head + "\n\n" + "\n".join(rows) + "\n"
    print(text, end="")
    if args.write_docs:
        doc = DOC.read_text(encoding="utf-8")
        block = f"{BEGIN}\n{text}{END}"
        if BEGIN in doc and END in doc:
            doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
        else:
            doc = doc.rstrip("\n") + ("\n\n## The audit (`bench/audit.py`)\n\n"
                                      "`ptxlayout audit cute` over the whole installed "
                                      "nvidia-cutlass wheel, with an empty header cache "
                                      "(cold) and again (warm), and `ptxlayout audit "
                                      f"triton`.\n\n{block}\n")
        DOC.write_text(doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
