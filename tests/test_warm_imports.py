"""What the prover's tcgen05 families import: none of the executor's modules (the names the
prover needs of them live in ``base.matrix_variants``), so that a warm default ``prove``, which
judges no sm_100 run, never pays for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = """
import json, sys
from formal.api import datapath_catalog
from formal.prove import datapath, tc_meta
rows = tc_meta._sp_rows()
h = datapath.datapath_hash(datapath_catalog()[0])
print(json.dumps([len(rows), h, sorted(sys.modules)]))
"""


def test_the_tcgen05_families_import_no_executor_module() -> None:
    env = dict(os.environ, PTXLAYOUT_CACHE_DIR="",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=str(ROOT),
                          capture_output=True, text=True, check=True)
    count, h, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert count > 0 and len(h) == 16
    assert [m for m in modules if m.startswith("formal.execute")] == []
    # the names are the executor's own: the rows it runs are found by them
    from formal.execute.datapath import DATAPATH_INSTRUCTION
    from formal.execute.tcgen05_sp import META_INSTRUCTION, meta_id
    assert DATAPATH_INSTRUCTION == "tcgen05.datapath" and META_INSTRUCTION == "tcgen05.sp_meta"
    assert meta_id("f16", 64, True) == "tcgen05.sp_meta.ws.m64.f16"
    # every row's metadata layout is one the catalog states
    from formal import api, catalog
    from formal.model.tc_meta import meta_layouts
    from formal.parse.tc_meta import read_tc_meta
    from formal.prove.tc_meta import _sp_rows
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text("utf-8")
    ids = {lay.id for lay in meta_layouts(read_tc_meta(text, api.TC_META_CATALOG)[0])}
    assert {k for k, _sel in _sp_rows()} <= ids
