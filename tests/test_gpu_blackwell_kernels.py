"""tcgen05.mma kernels that no other test assembles: the data-path layouts A-G (the mma, then
each warp's tcgen05.ld of its block at the catalog's address) and every plain kind, dense and
.sp, issued by one CTA, a pair and as .ws, one
template for every tcgen05 form (``formal.execute.ptx_tcgen05``), the data paths' from the
export records (``ptx_tcgen05.datapath_map_kernel``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import DATAPATH_ROWS
from formal.execute.datapath import datapath_map
from formal.execute.ptx import assemble, ptxas_path
from formal.execute.ptx_tcgen05 import (
    PLAIN_KINDS,
    Tc05Kernel,
    datapath_map_kernel,
    kernel_text,
    module_text,
    tcgen05_kinds_module,
)


def datapath_kernels() -> list[Tc05Kernel]:
    """Every layout at its smallest and largest N, read back block by block, made from the
    exported records (what a Blackwell run reads)."""
    records = current_catalog()[0]
    return [datapath_map_kernel(datapath_map(records, letter, n))
            for letter, *_r, ns in DATAPATH_ROWS for n in (ns[0], ns[-1])]


def test_each_layout_has_its_mma_and_each_warp_reads_its_block_at_the_catalogs_address() \
        -> None:
    ks = {k.name: k for k in datapath_kernels()}
    assert sorted(ks) == sorted(f"datapath_{x}_n{n}" for x, *_r, ns in DATAPATH_ROWS
                                for n in (ns[0], ns[-1]))
    d = kernel_text(ks["datapath_D_n8"])  # M = 128: warp w reads lanes 32w.., columns 0..7
    assert "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p2;" in d
    assert "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;" in d
    assert re.findall(r"add.u32 %r12, %r1, (\d+);", d) == [str((32 * w) << 16) for w in range(4)]
    assert d.count("tcgen05.ld.sync.aligned.32x32b.x8.b32") == 4
    g = kernel_text(ks["datapath_G_n64"])  # .ws, M = 32: four N/4-column blocks
    assert "tcgen05.mma.ws.cta_group::1.kind::f16" in g and g.count(".x16.b32") == 4
    c = kernel_text(ks["datapath_C_n256"])  # 2 CTAs, sparse: metadata in TMEM, 2 x .x128
    assert "tcgen05.mma.sp.cta_group::2.kind::f16 [%r1], %rd1, %rd2, [%r9], %r2, %p2;" in c
    assert ".reqnctapercluster 2, 1, 1" in c and "multicast::cluster" in c
    assert c.count(".x128.b32") == 2 * 8  # 256 columns a block, 8 blocks
    assert kernel_text(ks["datapath_A_n16"]).count("setp.ne.or.u32 %p5, %r11,") == 8


@pytest.mark.ptxas
def test_the_data_path_and_sparse_kernels_assemble_for_sm_100a() -> None:
    if ptxas_path() is None:
        pytest.skip("ptxas is not on PATH")
    ok, msg = assemble(module_text(datapath_kernels()), "sm_100a")
    assert ok, msg
    kinds = tcgen05_kinds_module()
    assert len(PLAIN_KINDS) == 4 and [kinds.count(f"{op}.kind::") for op in (
        "tcgen05.mma.cta_group::1", "tcgen05.mma.cta_group::2", "tcgen05.mma.ws.cta_group::1",
        "tcgen05.mma.sp.cta_group::1", "tcgen05.mma.sp.cta_group::2",
        "tcgen05.mma.ws.sp.cta_group::1")] == [4] * 6
    assert kinds.count(", [%r9], %r2, %p2;") == 12  # the metadata operand of each .sp
    ok, msg = assemble(kinds, "sm_100a")
    assert ok, msg
    # and ptxas refuses what is not a tcgen05 form (the check can fail): .ws with 2 CTAs
    bad = Tc05Kernel("bad", "tcgen05.mma.ws.cta_group::2.kind::f16")
    ok, msg = assemble(module_text([bad]), "sm_100a")
    assert not ok and msg


@pytest.mark.ptxas
def test_ptx_check_for_sm_100a_assembles_the_tcgen05_modules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ptxlayout ptx --check --arch sm_100a`` (what .ci/run's ptx step runs, among other
    targets) writes and assembles the modules the variant table has no row for."""
    from formal.cli import main
    if ptxas_path() is None:
        pytest.skip("ptxas is not on PATH")
    code = main(["ptx", "--check", "--arch", "sm_100a", "--only", "tcgen05.mma", "--out",
                 str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "tcgen05.mma.block_scale.ptx", "tcgen05.mma.datapath.ptx", "tcgen05.mma.kinds.ptx",
        "tcgen05.mma.runs.ptx", "tcgen05.mma.sp.block_scale.ptx"]
    assert "tcgen05.mma.datapath (14 entries) for sm_100a: ok (compile-only)" in out
    # the tcgen05-mma family's kernels as a Blackwell run makes them (formal.execute.tcgen05_mma)
    # 48 dense + 24 .sp + 22 block-scaled entries (the 45 rows' kernels: one a data path, kind,
    # .scale_vec and image size; the scale type and the IDs are idesc fields, not the kernel's;
    # a pair's Layouts A and B three image sizes each)
    assert "tcgen05.mma.runs (94 entries) for sm_100a: ok (compile-only)" in out
    assert "tcgen05.mma.kinds (24 entries) for sm_100a: ok (compile-only)" in out
    assert "tcgen05.mma.block_scale (14 entries) for sm_100a: ok (compile-only)" in out
    # without --check they are written all the same (here the block-scaled ones)
    assert main(["ptx", "--arch", "sm_100a", "--only",
                 "tcgen05.mma.block_scale,tcgen05.mma.sp.block_scale", "--out",
                 str(tmp_path / "w")]) == 0
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == [
        "tcgen05.mma.block_scale.ptx", "tcgen05.mma.sp.block_scale.ptx"]
    # without sm_100a among the targets there is nothing of them to write
    assert main(["ptx", "--arch", "sm_90", "--only", "tcgen05.mma", "--out",
                 str(tmp_path / "x")]) == 2
