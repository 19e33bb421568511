"""The test suite under an artificial load: no test may depend on timing or on a quiet machine.

    python bench/under_load.py [--busy 2] [--write-docs] [-- PYTEST ARGS ...]

Starts ``--busy`` processes that only spin (each keeps one core at 100 %), runs
``pytest -n auto -q`` (or the arguments after ``--``) beside them, stops the
spinners (by their own process ids) and exits with pytest's status.  On the 2-core machine
two spinners halve what every test gets: a Z3 time-out, a wall-clock budget or a race that
a quiet machine hides shows here.  The verdicts cannot move (a Z3 time-out on a finite map
is decided by enumeration), so the suite must pass as it does alone.

A toy: a test that asserted "proves in under 50 ms" would pass alone on a fast machine and fail
here; a test that asserts the verdict passes both ways.

``--write-docs`` writes the summary (load average before and after, pytest's last line, the
exit status) into the ``load`` block of docs/testing.md (``tools/docs_numbers.write_measured``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPIN = "while True: pass"


def spinners(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(n)]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:  # only the processes this script started
        p.kill()
    for p in procs:
        p.wait()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    given = list(argv)
    extra: list[str] = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--busy", type=int, default=2, help="spinning processes (default 2)")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the summary into docs/testing.md's load block")
    args = ap.parse_args(argv)
    pytest_args = extra or ["-n", "auto", "-q"]
    load0 = os.getloadavg()[0]
    busy = spinners(args.busy)
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT,
                              capture_output=True, text=True, check=False)
    finally:
        stop(busy)
    wall = time.perf_counter() - t0
    sys.stdout.write(done.stdout[-20000:])
    sys.stderr.write(done.stderr[-5000:])
    tail = [line for line in done.stdout.splitlines() if line.strip()]
    lines = [f"pytest {' '.join(pytest_args)} beside {args.busy} spinning processes",
             f"  load average {load0:.1f} before, {os.getloadavg()[0]:.1f} at the end",
             f"  {tail[-1] if tail else '(no output)'}",
             f"  exit status {done.returncode}, {wall:.0f} s wall"]
    print("\n".join(lines))
    if args.write_docs:
        sys.path.insert(0, str(ROOT / "tools"))
        import docs_numbers
        command = "python bench/under_load.py " + " ".join(given)
        print(f"written: {docs_numbers.write_measured('load', command.strip(), lines)}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
