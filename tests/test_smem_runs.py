"""wgmma runs built from the catalog's shared-memory layouts (formal.execute.smem_runs), on the
fake device, which reads the image by the descriptor's fields as the hardware does."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import numpy as np
import pytest

from formal.base.matrix_variants import variant
from formal.execute import gpu_matrix
from formal.execute import matrix as mx
from formal.execute import smem_runs as S
from formal.execute.gpu import make_device
from formal.execute.runs import Run
from formal.execute.smem import SmemLayout


@cache
def _records() -> list[dict[str, Any]]:
    from formal.api import current_catalog
    return current_catalog()[0]


def test_the_task_list() -> None:
    ts = S.smem_tasks(90)
    kinds = Counter((t.mode, t.plant) for t in ts)
    # 8 types x 4 modes K-major, 2 types x 4 modes M/N-major: 40 layouts a type, 3 choices
    assert kinds == {("check", ""): 120, ("experiment", "lbo-sbo-swapped"): 40,
                     ("experiment", "other-swizzle"): 40, ("experiment", "k-atom-wider"): 32}
    assert all(t.expect == "mismatch" for t in ts if t.plant)
    assert S.smem_tasks(80) == [] and S.smem_tasks(100) == []
    assert len(S.smem_tasks(90, "tf32")) == 4 * 6 and len(S.smem_tasks(90, "wgmma.smem")) == 232
    # plugged into the move and wgmma families' list, after their checks
    assert [t for t in gpu_matrix.tasks(90) if t.catalog] == ts


def test_the_docstring_example() -> None:
    rec = S.record_of(_records(), "wgmma.smem.K-major.128B.b16")
    assert rec is not None
    ch = rec["choices"][0]
    lay = S.CatalogSmem(ch["shape"], ch["stride"], tuple(ch["swizzle"]), "K")
    assert int(lay.element_offset(np.array(9), np.array(10), 16)) == 1156
    assert (ch["lbo"], ch["sbo"]) == (16, 1024)
    d = S.descriptor_layout("K", "128B", ch["lbo"], ch["sbo"])
    assert d.descriptor_hi() == (1 << 16) | (64 << 32) | (1 << 62)
    # the descriptor's reading of (9, 10) is the layout's
    assert int(d.element_offset(np.array(9), np.array(10), 16)) == 1156


def _run(key: str, lid: str, choice: int = 0, plant: str = "") -> Run:
    from formal.execute.runs import Task
    dev = make_device("fake", _records())
    t = Task(key, "experiment" if plant else "check", catalog=f"{lid}#{choice}", plant=plant,
             expect="mismatch" if plant else "match")
    return S.run_smem_task(dev, t, _records(), 2)


@pytest.mark.parametrize(("key", "lid"), [
    ("wgmma.m64n64k16.f32.f16.f16.ss", "wgmma.smem.MN-major.64B.b16"),
    ("wgmma.m64n64k32.s32.s8.s8.ss", "wgmma.smem.K-major.32B.b8"),
    ("wgmma.m64n64k8.f32.tf32.tf32.ss", "wgmma.smem.K-major.none.b32"),
])
def test_checks_match_and_plants_mismatch(key: str, lid: str) -> None:
    for choice in range(3):
        r = _run(key, lid, choice)
        assert (r.result, r.ok, r.trials) == ("match", True, 2)
        assert r.smem_layout is not None and r.smem_layout["catalog"] == lid
        assert r.layout_hashes["smem"] == S.record_of(_records(), lid)["map_hash"]  # type: ignore[index]
    plants = ["lbo-sbo-swapped", "other-swizzle"] + (["k-atom-wider"] if ".K-" in lid else [])
    for plant in plants:
        r = _run(key, lid, 1 if plant == "lbo-sbo-swapped" else 0, plant)
        assert (r.result, r.ok) == ("mismatch", True), plant
        assert r.d_cells
    rec = _run(key, lid, 1, "lbo-sbo-swapped").record()
    assert rec["plant"] == "lbo-sbo-swapped" and rec["expect"] == "mismatch"


def test_a_device_reading_m_n_major_fields_the_other_way_fails_the_check() -> None:
    """The check can fail: a device taking the M/N step from SBO where the catalog's swizzled
    M/N-major layout puts it in LBO sees another tile."""
    v = variant("wgmma.m64n64k16.f32.f16.f16.ss")
    rec = S.record_of(_records(), "wgmma.smem.MN-major.32B.b16")
    assert rec is not None
    ch = rec["choices"][0]
    write = S.CatalogSmem(ch["shape"], ch["stride"], tuple(ch["swizzle"]), "MN")
    right = S.descriptor_layout("MN", "32B", ch["lbo"], ch["sbo"])
    wrong = SmemLayout(32, ch["lbo"], ch["sbo"], False, "MN", "sbo")
    maps = mx.maps_for(v, _records())
    dev = make_device("fake", _records())
    trial = S._trial(v, maps, np.random.default_rng(7), 2, write, wrong, None)  # room for both
    assert mx.wgmma_differences(v, maps, trial, dev.wgmma(v, trial, right, right))[0] == []
    cells, line = mx.wgmma_differences(v, maps, trial, dev.wgmma(v, trial, wrong, wrong))
    assert cells and "D elements differ" in line


def test_a_missing_record_is_not_executed() -> None:
    from formal.execute.runs import Task
    dev = make_device("fake", _records())
    r = S.run_smem_task(dev, Task("wgmma.m64n64k16.f32.f16.f16.ss", "check",
                                  catalog="wgmma.smem.K-major.none.b16#0"), [], 2)
    assert r.result == "not-executed" and "no record" in r.detail


# ---- the hardware verdict of the catalog's layouts ---------------------------------------------


def _wgmma_instances() -> list[Any]:
    from formal.catalog import CATALOG_DIR
    from formal.model.smem import instances, read_smem
    text = (CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    return instances("wgmma", read_smem(text, "layouts.md").canonical)


def test_the_h100_evidence_confirms_every_wgmma_catalog_layout() -> None:
    from pathlib import Path

    from formal.prove.evidence import Evidence
    from formal.prove.smem_descriptor import hardware_verdict
    ev = Evidence.load(Path(__file__).parents[1] / "proofs" / "evidence")
    got = {i.id: hardware_verdict(i, ev, None) for i in _wgmma_instances()}
    assert len(got) == 20 and {v.status for v in got.values()} == {"proved"}
    msg = got["wgmma.smem.MN-major.128B.b16"].message
    assert "12 runs of wgmma.m64n64k16.f32.bf16.bf16.ss, wgmma.m64n64k16.f32.f16.f16.ss" in msg
    assert "8 planted edits" in msg  # two evidence files; M/N-major: no K-wider plant
    assert "NVIDIA H100" in msg


def test_a_check_that_mismatched_refutes_the_layout() -> None:
    from formal.model.smem import smem_hash
    from formal.prove.evidence import Evidence, EvidenceFile, EvidenceRun
    from formal.prove.smem_descriptor import hardware_verdict
    inst = next(i for i in _wgmma_instances() if i.id == "wgmma.smem.K-major.64B.b8")
    f = EvidenceFile("x.json", "NVIDIA H100 80GB HBM3", 90, "x", "2026-11-25T00:00:00Z")
    run = EvidenceRun("wgmma.m64n64k32.s32.s8.s8.ss", None, "check", "mismatch",
                      {"smem": smem_hash(inst)}, {}, 8, "3 D elements differ", f)
    f.runs.append(run)
    v = hardware_verdict(inst, Evidence([f]), None)
    assert v.status == "refuted" and "3 D elements differ" in v.message
    f.runs[0] = EvidenceRun(run.key, None, "check", "match", run.layout_hashes, {}, 8, "", f)
    assert hardware_verdict(inst, Evidence([f]), None).status == "proved"
    assert hardware_verdict(inst, Evidence([]), None).status == "not-applicable"
    assert hardware_verdict(inst, None, None).message == "no GPU evidence given (--evidence)"


# ---- tcgen05: the catalog's descriptors in kernels ptxas assembles for sm_100a ----------------


def test_tcgen05_kernels_with_the_catalogs_descriptors_assemble() -> None:
    import re

    from formal.catalog import CATALOG_DIR
    from formal.execute.ptx import assemble, ptxas_path
    from formal.execute.ptx_tcgen05 import KINDS, tcgen05_module
    from formal.model.smem import descriptor_of, instances, read_smem
    text = (CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    insts = [i for i in instances("tcgen05", read_smem(text, "l.md").canonical)
             if i.bits in KINDS]
    assert len(insts) == 24  # K-major 3 widths x 4 modes, M/N-major 3 x 4 (b4: block-scaled)
    entries = [(re.sub(r"\W", "_", i.id), i.bits, descriptor_of(i), descriptor_of(i))
               for i in insts]
    ptx = tcgen05_module(entries)
    k128 = next(i for i in insts if i.id == "tcgen05.smem.K-major.128B.b16")
    assert descriptor_of(k128) == 0x4000404000010000  # the module docstring's example
    assert "mov.b64 %rd1, 0x4000404000010000;" in ptx
    assert ptx.count(".entry") == 24 + 8  # and a kind::i8 entry for each 8-bit layout
    with pytest.raises(ValueError):
        tcgen05_module([("x", 4, 0, 0)])
    if ptxas_path() is None:
        pytest.skip("no ptxas here")
    ok, msg = assemble(ptx, "sm_100a")
    assert ok, msg
    bad = ptx.replace("tcgen05.mma.cta_group::1", "tcgen05.mma.cta_group::3", 1)
    assert not assemble(bad, "sm_100a")[0]  # ptxas does check the text
