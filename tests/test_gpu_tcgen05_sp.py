"""``tcgen05.mma.sp`` in the ``tcgen05-mma`` family (``formal.execute.tcgen05_sp``): the rows,
the metadata records the export carries, the metadata placed by hand for one field, a
truthful fake passing every sparse task while the planted swap of two chunks' metadata
mismatches, a wrong selector in the idesc caught, and the kernels assembled for sm_100a."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.base.matrix_variants import TCGEN05_MMA_SP_VARIANTS, variant
from formal.execute.datapath import datapath_map
from formal.execute.idesc import decode_idesc, encode_idesc
from formal.execute.ptx import assemble, ptxas_path
from formal.execute.ptx_tcgen05 import META_COLUMN, module_text
from formal.execute.runs import Job
from formal.execute.tcgen05_mma import (
    FakeTcgen05Device,
    kernel_of,
    run_tc_task,
    tc_differences,
    tc_mma_tasks,
    tc_operands,
    tc_smem_record,
)
from formal.execute.tcgen05_sp import meta_words, read_indices, row_meta

KEY = "tcgen05.mma.sp.m128n64k32.kind::f16.f32.f16.f16.layoutD.sel1"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return current_catalog()[0]


def test_the_rows_and_the_metadata_records(records: list[dict[str, Any]]) -> None:
    # D, E, G x (tf32 and f16 at selectors 0 and 1, f8f6f4 and i8 at 0), N = 64
    # and Layout D issued as .ws (its own metadata layout, tcgen05.sp_meta.ws.m128)
    assert len(TCGEN05_MMA_SP_VARIANTS) == 4 * 6
    v = variant(KEY)
    assert (v.instruction, v.dims.m, v.n, v.k, v.selector, v.datapath) == \
        ("tcgen05.mma.sp", 128, 64, 32, 1, "D")
    metas = [r for r in records if r.get("instruction") == "tcgen05.sp_meta"]
    assert len(metas) == 19 and all(r["map_hash"] for r in metas)
    rec = row_meta(records, v)
    assert rec is not None and rec["id"] == "tcgen05.sp_meta.m128.f16" and rec["sels"] == [0, 1]
    # the catalog's worked example: at sel = 1 row 8's chunk 0 is lane 0, column 1, bits 16-19
    # (the table at sel = 1 holds (lane, column, bit) at (row, chunk) position 8 * 8 + 0 = 64)
    assert rec["places"][1][3 * 64:3 * 65] == [0, 1, 16]
    ws = row_meta(records, variant("tcgen05.mma.sp.m32n64k16.kind::tf32.f32.tf32.tf32.layoutG"
                                   ".sel0"))
    assert ws is not None and ws["id"] == "tcgen05.sp_meta.ws.m32.tf32" and ws["copies"] == 4


def test_the_metadata_of_one_field_by_hand(records: list[dict[str, Any]]) -> None:
    rec = row_meta(records, variant(KEY))
    assert rec is not None
    units = np.zeros((128, 8, 2), dtype=np.int64)
    units[:, :, 1] = 1  # every chunk keeps elements 0 and 1: field 0b0100
    units[8, 0] = (0, 2)  # row 8's chunk 0 keeps elements 0 and 2: field 0b1000
    words = meta_words(rec, 1, units, np.random.default_rng(0))
    assert words.shape == (128, 2)
    assert (int(words[0, 1]) >> 16) & 0xF == 0b1000 and int(words[0, 1]) & 0xF == 0b0100
    assert (read_indices(rec, 1, words) == units).all()
    # two chunks' fields swapped: row 8's chunk 1 now reads (0, 2)
    swapped = read_indices(rec, 1, meta_words(rec, 1, units, np.random.default_rng(0),
                                              "meta-chunks-swapped"))
    assert swapped[8, 1].tolist() == [0, 2] and swapped[8, 0].tolist() == [0, 1]


def test_a_truthful_fake_passes_every_sparse_task(records: list[dict[str, Any]]) -> None:
    tasks = tc_mma_tasks(Job(records, only="tcgen05.mma.sp"), 100)
    checks = [t for t in tasks if t.mode == "check"]
    plants = [t for t in tasks if t.mode == "experiment"]
    assert len(checks) == 24 and [t.plant for t in plants] == ["meta-chunks-swapped"] * 4
    assert {t.catalog.split(".")[3] for t in checks} == {"64B", "128B"}
    fake = FakeTcgen05Device(records)
    for t in tasks:
        run = run_tc_task(fake, t, records, 1)
        assert run.result == t.expect, (t.key, t.plant, run.detail)
        assert run.layout_hashes["meta"] == row_meta(records, variant(t.key))["map_hash"]
        assert run.selector == variant(t.key).selector
    run = run_tc_task(fake, checks[0], records, 1)
    assert "metadata by tcgen05.sp_meta.ws.m32.tf32 at selector 0" in run.detail
    first = run_tc_task(fake, plants[0], records, 1)
    assert "cells of D differ read through Layout G; first: CTA 0 lane" in first.detail


def test_the_launch_carries_the_sparse_idesc_and_a_wrong_selector_is_caught(
        records: list[dict[str, Any]]) -> None:
    v = variant(KEY)
    m = datapath_map(records, "D", 64)
    rec = tc_smem_record(records, "tcgen05.smem.K-major.128B.b16")
    assert rec is not None
    ops = tc_operands(v, m, rec, np.random.default_rng(3), meta=row_meta(records, v))
    x = decode_idesc("f16", ops.launch.idesc)
    assert (x.sparse, x.sparse_selector, x.m_dim, x.n_dim) == (1, 1, 128 >> 4, 64 >> 3)
    assert ops.launch.meta is not None and ops.launch.meta.shape == (1, 128, 2)
    assert ops.a.shape == (128, 32) and ops.launch.kernel.meta_columns == 2
    # 2:4: each chunk of four holds at most two non-zeros
    assert ((ops.a.reshape(128, 8, 4) != 0).sum(axis=2) <= 2).all()
    fake = FakeTcgen05Device(records)
    assert not tc_differences(m, ops.d_words, fake.launch(ops.launch))
    # the same launch with selector 0: the device reads column 0's (random) bits
    wrong = replace(ops.launch, idesc=encode_idesc(replace(x, sparse_selector=0)))
    bad = tc_differences(m, ops.d_words, fake.launch(wrong))
    assert len(bad) > 1000


def test_the_sparse_kernels_assemble_for_sm_100a(records: list[dict[str, Any]]) -> None:
    if ptxas_path() is None:
        pytest.skip("no ptxas")
    kernels = {k.name: k for k in (kernel_of(v, datapath_map(records, v.datapath, v.n), 24576)
                                   for v in TCGEN05_MMA_SP_VARIANTS)}
    assert len(kernels) == 16  # the selector is an idesc field: one kernel for both
    text = module_text(list(kernels.values()))
    assert text.count("tcgen05.mma.ws.sp.cta_group::1.kind::f16") == 3  # E, G and D as .ws
    assert text.count(f"add.u32 %r15, %r15, {META_COLUMN};") == 16
    assert text.count("tcgen05.st.sync.aligned.32x32b.x2.b32") == 16
    ok, msg = assemble(text, "sm_100a")
    assert ok, msg[:2000]
