"""Run every mutant of every seed and print the kill rate (python bench/mutants.py [SEEDS])."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import mutants  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("(")[0].strip())
    ap.add_argument("seeds", nargs="?", type=Path, default=ROOT.parent / "shared" / "seeds",
                    help="the folder of seed documents (*.txt); default ../shared/seeds")
    ap.add_argument("--write-docs", action="store_true",
                    help="also write the counts, dated, into docs/testing.md's mutants block")
    args = ap.parse_args(argv)
    seeds = args.seeds
    if not any(seeds.glob("*.txt")):
        print(f"no seed documents (*.txt) in {seeds}", file=sys.stderr)
        return 2
    total: Counter[tuple[str, bool]] = Counter()
    survivors = []
    t0 = time.perf_counter()
    for p in sorted(seeds.glob("*.txt")):
        for o in mutants.run(p):
            total[(o.kind, o.killed)] += 1
            if o.kind == "internal" or (o.kind == "breaking" and not o.killed):
                survivors.append((p.name, o.mutant.line, o.mutant.new.strip()))
            if o.mutant.expect == "equivalent" and (o.killed or o.kind != "equivalent"):
                survivors.append((p.name, o.mutant.line, "REWRITE " + o.mutant.new.strip()))
    breaking = total[("breaking", True)] + total[("breaking", False)]
    killed = total[("breaking", True)]
    lines = [f"mutants: {sum(total.values())} in {time.perf_counter() - t0:.0f} s"]
    for (kind, k), n in sorted(total.items()):
        lines.append(f"  {kind:<12} {'killed' if k else 'survived':<9} {n}")
    lines.append(f"kill rate: {killed}/{breaking} = {100.0 * killed / max(1, breaking):.1f}%")
    lines += ["  survivor: " + " ".join(map(str, s)) for s in survivors]
    print("\n".join(lines))
    if args.write_docs:
        sys.path.insert(0, str(ROOT / "tools"))
        import docs_numbers
        command = "python bench/mutants.py " + " ".join(argv if argv is not None
                                                        else sys.argv[1:])
        print(f"written: {docs_numbers.write_measured('mutants', command.strip(), lines)}")
    return 0 if not survivors else 1


if __name__ == "__main__":
    sys.exit(main())
