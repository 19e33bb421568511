"""Where a warm ``ptxlayout prove`` spends its time: each stage of ``api.analyze``, one process.

    python bench/stages.py [--repeat 3] [--no-evidence]

A default run of the catalog is ``api.analyze([])`` with the shipped GPU evidence: the text stage
reads the catalog's documents, the parse stage reads their sections, the model stage builds the
layouts, the prover decides every obligation (Z3 from the cache, the enumeration always) and the
hardware verdicts, then the other families (shared memory, block scale, tcgen05 sparse and
metadata, data paths).  This script runs those same calls one after another and prints each
one's CPU time (``time.process_time``: on a shared machine the wall clock adds the waits for a
core), the median of ``--repeat`` rounds, each in a fresh process (every memo a process keeps
starts empty, as a user's run does).  The proof cache is left as it is: run ``ptxlayout prove`` once
first for the warm numbers.  The collector runs as in ``api.analyze`` (``base/collector.py``).
Measured on branch fastdrv at d1705dc against main at a4991a6 (2 cores, loaded: other
sessions' tests beside it, so every row reads 5-15% high; CPU ms): evidence load 228 -> 161,
catalog ingest 85 -> 83, parse 223 -> 63, model 77 -> 81, prove 985 -> 807 (the hardware
verdicts about 0.3 s of it), the other families 2315 -> 2137 (the collector alone): 3915 ->
3331 ms beyond the imports.  Branch fastdrv2 against main at ea05d35 (loaded, --repeat 5, one
after the other): evidence load 156 -> 61 (the cache's ``evidence/``), the driver 750 -> 682
(relations enumerated in their steps, no SymPy composition); 1951 -> 1846 ms in all.  The
interpreter's teardown, which this script does not see, is gone from the command line
(``formal/__main__.quick_exit``).  Branch warmfam against main at 0d8e5fc (loaded, --repeat
3, one after the other): the families after the driver 647 -> 375 (with_smem 86 -> 67, no Z3
context in a warm run; with_block_scale 158 -> 107; with_tc_meta 109 -> 81, the hashes written
from arrays; with_datapath 277 -> 103, every N enumerated at once and the read-backs from the
ld layouts' arrays); 1613 -> 1338 ms in all.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLOCK = time.process_time


def one_round(evidence: bool) -> dict[str, float]:
    """Each stage's CPU seconds, in the order ``api.analyze`` runs them."""
    from formal import api, catalog
    from formal.model.resolve import build, catalog_model
    from formal.parse import parse_document
    from formal.prove.driver import prove
    from formal.prove.evidence import Evidence, default_dir
    from formal.prove.verdicts import Options
    from formal.writers.ledger import mark_accepted
    took: dict[str, float] = {}

    def timed(name: str, f: Callable[[], Any]) -> Any:
        t = CLOCK()
        out = f()
        took[name] = CLOCK() - t
        return out

    import gc

    from formal.base.collector import FEW_COLLECTIONS
    gc.set_threshold(FEW_COLLECTIONS, *gc.get_threshold()[1:])  # as analyze and Evidence.load
    where = default_dir() if evidence else None
    ev = timed("evidence load", lambda: Evidence.load(where)) if where is not None else None
    docs = timed("catalog ingest (text)", lambda: list(catalog.documents(False)))
    parsed = timed("catalog parse", lambda: [parse_document(d) for d in docs])
    timed("catalog model", lambda: build(parsed, []))
    model = timed("catalog_model (its parses memoized: not in the total)",
                  lambda: catalog_model(False))
    opts = api.with_catalog_tables(Options(evidence=ev, disk_cache=True))  # as the CLI
    p = timed("prove (driver: enumeration, Z3 cache, hardware)", lambda: prove(model, opts))
    p = timed("with_smem", lambda: api.with_smem(p, [], True, ev))
    p = timed("with_block_scale",  # the evidence as with_families passes it (judged)
              lambda: api.with_block_scale(p, [], True, model, False if ev is None else ev))
    p = timed("with_tc_sparse", lambda: api.with_tc_sparse(p, []))
    # the evidence itself, as with_families passes it (True would skip the hardware judge)
    p = timed("with_tc_meta", lambda: api.with_tc_meta(p, ev))
    p = timed("with_tc_copy", lambda: api.with_tc_copy(p, ev is not None))
    p = timed("with_datapath", lambda: api.with_datapath(p, model, [], True, ev))
    timed("mark_accepted", lambda: mark_accepted(p, catalog.errata()))
    return took


def main(argv: list[str] | None = None) -> int:
    import json
    import os
    import subprocess
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-evidence", action="store_true", help="as --evidence none")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:  # one round, in this fresh process: its numbers as JSON
        t = CLOCK()
        import formal.api  # noqa: F401
        import formal.cli  # noqa: F401
        import formal.prove.driver  # noqa: F401
        imports = CLOCK() - t
        print(json.dumps({"imports": imports, **one_round(not args.no_evidence)}))
        return 0
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    rounds = []
    for _ in range(max(1, args.repeat)):
        out = subprocess.run([sys.executable, __file__, "--one"]
                             + (["--no-evidence"] if args.no_evidence else []),
                             capture_output=True, text=True, check=True, env=env)
        rounds.append(json.loads(out.stdout.strip().splitlines()[-1]))
    total = 0.0
    for name in rounds[0]:
        ms = 1000 * statistics.median(r[name] for r in rounds)
        if name != "imports" and not name.startswith("catalog_model"):
            total += ms
        print(f"{name:55s} {ms:6.0f} ms")
    print(f"{'total beyond imports (as analyze runs them)':55s} {total:6.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
