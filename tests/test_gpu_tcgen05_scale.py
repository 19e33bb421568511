"""Block-scaled ``tcgen05.mma`` (``formal.execute.tcgen05_scale``): the catalog's tcgen05 scale
layouts as export records (``writers.export_tc_scale``), one factor placed by hand, a device
reading the factors by its truth at the idesc's scale factor IDs computing the exact scaled
product, the planted swap of two factors and a wrong ID caught, and the kernel that stores the
factors with tcgen05.st assembled for sm_100a."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from formal.api import current_catalog
from formal.execute.datapath import datapath_map
from formal.execute.idesc import decode_idesc, encode_idesc, idesc_for
from formal.execute.ptx import assemble, ptxas_path
from formal.execute.ptx_tcgen05 import SCALE_A_COLUMN, SCALE_B_COLUMN, module_text, scale_kernel
from formal.execute.tcgen05_scale import (
    device_product,
    draw_factors,
    find_tc_scale,
    read_tmem_factors,
    scaled_product,
    tmem_scale_words,
)
from formal.writers.export_tc_scale import catalog_tc_scale_records, tc_scale_record

FORM = ("mxf8f6f4", "scale_vec::1X", "ue8m0")
M, N, K = 128, 64, 32


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return catalog_tc_scale_records()


def _pair(records: list[dict[str, Any]], form: tuple[str, str, str] = FORM) \
        -> tuple[dict[str, Any], dict[str, Any]]:
    ra, rb = (find_tc_scale(records, *form, M, op) for op in ("scale_A", "scale_B"))
    assert ra is not None and rb is not None
    return dict(ra), dict(rb)


def test_the_records_of_the_one_cta_dense_layouts(records: list[dict[str, Any]]) -> None:
    # 9 forms x M 64 and 128 x scale_A and scale_B, and again issued by a pair at M = 256 and
    # 128 (test_the_records_of_a_pair); the .sp forms are not exported
    assert len(records) == 72 and len({r["id"] for r in records}) == 72
    assert sum(1 for r in records if r.get("cta_group") == 2) == 36
    ra, rb = _pair(records)
    assert ra["id"] == "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A"
    assert (ra["tile"], ra["columns"], ra["sf_ids"], ra["vec"]) == ([128, 1], 4, [0, 1, 2, 3], 1)
    assert (rb["tile"], rb["columns"]) == ([1, 256], 8)
    # row 33 at sf_id 3: lane 1, column 1, byte 3 (three numbers a factor, row-major)
    assert ra["places"][3][3 * 33:3 * 34] == [1, 1, 3]
    # scale_B's column 40 at sf_id 2: lane 8, column 1, byte 2
    assert rb["places"][2][3 * 40:3 * 41] == [8, 1, 2]
    v2 = find_tc_scale(records, "mxf4nvf4", "scale_vec::2X", "ue8m0", M, "scale_A")
    assert v2 is not None and v2["sf_ids"] == [0, 2] and len(v2["places"][0]) == 3 * 128 * 2


PAIR = "tcgen05.block_scale.m{m}n256k32.mxf8f6f4.scale_vec::1X.ue8m0.cta_group::2.scale_{op}"


def _by_id(records: list[dict[str, Any]], m: int, op: str) -> dict[str, Any]:
    return dict(next(r for r in records if r["id"] == PAIR.format(m=m, op=op)))


def test_the_records_of_a_pair(records: list[dict[str, Any]]) -> None:
    # a pair's M = 128 (Layout B): scale_A states its CTA (row / 64), scale_B its half
    # (col / 128); four numbers a factor, the stated field last
    a, b = _by_id(records, 128, "A"), _by_id(records, 128, "B")
    assert (a["cta_group"], a["place_fields"], a["tile"], a["columns"]) == \
        (2, ["lane", "column", "byte", "cta"], [128, 1], 2)
    assert a["places"][2][4 * 70:4 * 71] == [6, 0, 2, 1]  # row 70: lane 6, column 0, CTA 1
    assert (b["place_fields"], b["tile"], b["columns"]) == \
        (["lane", "column", "byte", "half"], [1, 256], 4)
    assert b["places"][1][4 * 200:4 * 201] == [8, 2, 1, 1]  # column 200: lane 8, half 1
    # M = 256 (Layout A): scale_A's row 160 in CTA 1, lane 0, column 1; scale_B states neither
    # (each CTA holds all of it, in all four partitions): one CTA's places, another hash
    a2, b2 = _by_id(records, 256, "A"), _by_id(records, 256, "B")
    assert a2["places"][0][4 * 160:4 * 161] == [0, 1, 0, 1] and a2["columns"] == 4
    one = _pair(records)[1]
    assert b2["place_fields"] == ["lane", "column", "byte"] and b2["places"] == one["places"]
    assert b2["map_hash"] != one["map_hash"]
    assert find_tc_scale(records, *FORM, 128, "scale_A", 2) == a
    assert find_tc_scale(records, *FORM, 128, "scale_A")["id"] == _pair(records)[0]["id"]


def test_a_pair_writes_each_ctas_factors_into_its_own_tensor_memory(
        records: list[dict[str, Any]]) -> None:
    a, b = _by_id(records, 128, "A"), _by_id(records, 128, "B")
    f = np.full((128, 1), 127, dtype=np.uint8)
    f[70, 0] = 130
    w = tmem_scale_words(a, 2, f, np.random.default_rng(0))
    assert w.shape == (256, 2)  # CTA 1's lanes after CTA 0's
    for lane in (6, 38, 70, 102):  # row 70: CTA 1, lane 6 of each partition, column 0, byte 2
        assert (int(w[128 + lane, 0]) >> 16) & 0xFF == 130
        assert (int(w[lane, 0]) >> 16) & 0xFF == 127  # CTA 0's lane 6: row 6's
    fb = np.full((1, 256), 127, dtype=np.uint8)
    fb[0, 200] = 124
    wb = tmem_scale_words(b, 1, fb, np.random.default_rng(1))
    for cta in (0, 1):  # column 200: lane 8 of partitions 2 and 3 (half 1), in both CTAs
        assert [(int(wb[128 * cta + lane, 2]) >> 8) & 0xFF for lane in (72, 104)] == [124, 124]
        assert (read_tmem_factors(b, 1, wb, 1, 256, cta=cta) == fb).all()
    assert (read_tmem_factors(a, 2, w, 128, 1) == f).all()
    # the planted edit: row 0's factor (2**3) at its place in CTA 1, over row 64's (1); its
    # own place given 2**2
    f[0, 0] = 130
    moved = tmem_scale_words(a, 0, f, np.random.default_rng(0), "factor-other-cta")
    got = read_tmem_factors(a, 0, moved, 128, 1)
    assert (got[0, 0], got[64, 0]) == (129, 130)
    assert np.array_equal(np.delete(got, [0, 64]), np.delete(f, [0, 64]))
    with pytest.raises(ValueError, match="no other CTA"):
        tmem_scale_words(_pair(records)[0], 0, f, np.random.default_rng(0), "factor-other-cta")


def test_the_map_hash_names_the_places(records: list[dict[str, Any]]) -> None:
    from formal import catalog
    from formal.model.tc_scale import tc_scale_layouts
    from formal.parse.block_scale import read_block_scale
    text = (catalog.CATALOG_DIR / "block-scale" / "tcgen05.md").read_text(encoding="utf-8")
    lay = next(x for x in tc_scale_layouts(read_block_scale(text, "t"))
               if x.id == _pair(records)[0]["id"])
    assert tc_scale_record(lay)["map_hash"] == _pair(records)[0]["map_hash"]
    moved = replace(lay, every=tuple((s, ((0, 0, 5, 0, s, 0, 0), *ps[1:]))
                                     for s, ps in lay.every))
    assert tc_scale_record(moved)["map_hash"] != tc_scale_record(lay)["map_hash"]


def test_one_factor_placed_by_hand(records: list[dict[str, Any]]) -> None:
    ra, _rb = _pair(records)
    f = np.full((M, 1), 127, dtype=np.uint8)
    f[33, 0] = 130  # 2**3
    w = tmem_scale_words(ra, 3, f, np.random.default_rng(0))
    assert w.shape == (128, 4)
    for lane in (1, 33, 65, 97):  # copied into each partition
        assert (int(w[lane, 1]) >> 24) & 0xFF == 130
        assert (int(w[lane + 1, 1]) >> 24) & 0xFF == 127  # row 34
    for s in range(4):
        assert (read_tmem_factors(ra, s, tmem_scale_words(ra, s, f, np.random.default_rng(s)), M, 1)
                == f).all()
    with pytest.raises(ValueError, match="scale factor ID 1"):
        tmem_scale_words(_pair(records, ("mxf4", "scale_vec::2X", "ue8m0"))[0], 1,
                    np.zeros((M, 2), dtype=np.uint8), np.random.default_rng(0))


def _operands(records: list[dict[str, Any]], seed: int, form: tuple[str, str, str] = FORM) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ra, rb = _pair(records, form)
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, size=(M, K)).astype(np.float64)  # exact in e4m3
    b = rng.integers(-4, 5, size=(K, N)).astype(np.float64)
    return a, b, draw_factors(rng, ra, M, ra["vec"]), draw_factors(rng, rb, rb["vec"], N)


@pytest.mark.parametrize("sf_id", [0, 1, 2, 3])
def test_a_truthful_device_computes_the_scaled_product(records: list[dict[str, Any]],
                                                       sf_id: int) -> None:
    ra, rb = _pair(records)
    a, b, sa, sb = _operands(records, sf_id)
    want = scaled_product(a, b, sa, sb)
    assert not np.array_equal(want, a @ b)  # the factors change D
    rng = np.random.default_rng(10 + sf_id)
    wa, wb = tmem_scale_words(ra, sf_id, sa, rng), tmem_scale_words(rb, 3 - sf_id, sb, rng)
    x = decode_idesc("mxf8f6f4", encode_idesc(idesc_for(
        "mxf8f6f4", m=M, n=N, a="e4m3", b="e4m3", scale="ue8m0", a_scale_id=sf_id,
        b_scale_id=3 - sf_id)))
    ids = (x.a_scale_id, x.b_scale_id)
    assert ids == (sf_id, 3 - sf_id)
    assert np.array_equal(device_product((ra, rb), ids, a, b, wa, wb), want)
    # the planted edit: rows 0 and 1's factors in each other's places -> exactly rows 0, 1 differ
    wp = tmem_scale_words(ra, sf_id, sa, np.random.default_rng(10 + sf_id), "factors-swapped")
    got = device_product((ra, rb), ids, a, b, wp, wb)
    bad = sorted({int(r) for r in np.argwhere(got != want)[:, 0]})
    assert bad == [0, 1] or bad in ([0], [1])  # a row of A that is 0 would hide its half
    # the device reading scale_A at another ID reads the random bytes of the other half words
    other = device_product((ra, rb), ((sf_id + 1) % 4, ids[1]), a, b, wa, wb)
    assert (other != want).sum() > M * N // 2


def test_a_device_of_another_form_reads_other_places(records: list[dict[str, Any]]) -> None:
    # scale_vec::2X's scale_A at sf_id 0 keeps rows in bytes 0 and 1: 1X's factors at sf_id 0
    # (byte 0) are read as block 0, block 1 read from byte 1 (random): D differs
    ra, rb = _pair(records)
    a, b, sa, sb = _operands(records, 7)
    rng = np.random.default_rng(1)
    wa, wb = tmem_scale_words(ra, 0, sa, rng), tmem_scale_words(rb, 0, sb, rng)
    want = scaled_product(a, b, sa, sb)
    r2a, r2b = _pair(records, ("mxf4", "scale_vec::2X", "ue8m0"))
    assert r2b["columns"] == rb["columns"]
    got = device_product((r2a, r2b), (0, 0), a, b, wa, wb)
    assert not np.array_equal(got, want)


def test_the_scaled_kernel_assembles_for_sm_100a() -> None:
    if ptxas_path() is None:
        pytest.skip("no ptxas")
    m = datapath_map(current_catalog()[0], "D", N)
    k = scale_kernel(m, "mxf8f6f4", "scale_vec::1X", (4, 8), 24576)
    assert k.name == "scaled_D_n64_mxf8f6f4_v1X" and k.columns == 512
    text = module_text([k])
    assert "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X" in text
    assert f"add.u32 %r15, %r15, {SCALE_A_COLUMN};" in text
    assert f"add.u32 %r15, %r15, {SCALE_B_COLUMN};" in text
    assert text.count("tcgen05.st.sync.aligned.32x32b.x4.b32") == 1
    assert text.count("tcgen05.st.sync.aligned.32x32b.x8.b32") == 1
    assert ".param .u64 scales" in text
    k4 = scale_kernel(m, "mxf4nvf4", "scale_vec::4X", (4, 8), 24576)
    assert k4.name == "scaled_D_n64_mxf4nvf4_v4X"
    text = module_text([k, k4])
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X" in text
    ok, msg = assemble(text, "sm_100a")
    assert ok, msg[:2000]


# ---- the run on a fake sm_100 device: Layout D, N = 64, e4m3 x e4m3 by the 128B layout -----

ROW = "tcgen05.mma.m128n64k32.kind::f8f6f4.f32.e4m3.e4m3.layoutD"


@pytest.fixture(scope="module")
def device_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # the export carries the records (its 'tc_scale' list), which current_catalog hands on
    out = current_catalog()[0]
    assert [r for r in out if r.get("instruction") == "tcgen05.block_scale"] == records
    return out


def _scaled_ops(device_records: list[dict[str, Any]], ids: tuple[int, int], seed: int,
                plant: str = "") -> tuple[Any, Any]:
    from formal.base.matrix_variants import variant
    from formal.execute.tcgen05_mma import tc_scale_operands, tc_smem_record
    v = variant(ROW)
    m = datapath_map(device_records, "D", N)
    rec = tc_smem_record(device_records, "tcgen05.smem.K-major.128B.b8")
    assert rec is not None
    ops = tc_scale_operands(v, m, rec, _pair(device_records), ids,
                            np.random.default_rng(seed), plant)
    return m, ops


@pytest.mark.parametrize("sf_id", [0, 1, 2, 3])
def test_a_truthful_fake_runs_the_block_scaled_mma(device_records: list[dict[str, Any]],
                                                   sf_id: int) -> None:
    from formal.execute.tcgen05_mma import FakeTcgen05Device, tc_differences
    m, ops = _scaled_ops(device_records, (sf_id, 3 - sf_id), sf_id)
    x = decode_idesc("mxf8f6f4", ops.launch.idesc)
    assert (x.a_scale_id, x.b_scale_id, x.scale_format, x.m, x.n) == (sf_id, 3 - sf_id, 1, M, N)
    assert ops.launch.scales is not None and ops.launch.scales.shape == (128, 4 + 8)
    assert ops.launch.kernel.opcode == \
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X"
    fake = FakeTcgen05Device(device_records)
    assert not tc_differences(m, ops.d_words, fake.launch(ops.launch))
    # unscaled, D would differ: the factors reached the product
    from formal.execute import numbers
    plain = numbers.decode("e4m3", ops.a).astype(np.float64) \
        @ numbers.decode("e4m3", ops.b).astype(np.float64)
    assert not np.array_equal(plain.astype(np.float32).view(np.uint32), ops.d_words)
    # the planted swap of scale_A's rows 0 and 1: the rows of D they scale differ
    _m, bad_ops = _scaled_ops(device_records, (sf_id, 3 - sf_id), sf_id, "factors-swapped")
    bad = tc_differences(m, bad_ops.d_words, fake.launch(bad_ops.launch))
    assert bad and {int(c["d"][0]) for c in bad} <= {0, 1}
    # the idesc naming another scale_A ID: the device reads other bytes
    wrong = replace(ops.launch, idesc=encode_idesc(replace(x, a_scale_id=(sf_id + 1) % 4)))
    with np.errstate(over="ignore"):  # a random byte read as a factor: up to 2**128
        assert len(tc_differences(m, ops.d_words, fake.launch(wrong))) > M * N // 2


def test_a_fake_without_the_scale_layouts_refuses(device_records: list[dict[str, Any]]) -> None:
    from formal.execute.tcgen05_mma import FakeTcgen05Device, LaunchError
    _m, ops = _scaled_ops(device_records, (0, 0), 5)
    with pytest.raises(LaunchError, match="no scale layouts of kind::mxf8f6f4"):
        FakeTcgen05Device([r for r in device_records if r.get("instruction")
                           != "tcgen05.block_scale"]).launch(ops.launch)


def test_ue4m3_factors_of_mxf4nvf4_at_4x(records: list[dict[str, Any]]) -> None:
    from formal.execute.tcgen05_scale import factor_values
    # ue4m3 codes by hand: 0x38 = e 7, m 0 = 1.0; 0x50 = 2**3; 0x3c = 1.5; 0x04 = 2**-6 * 4/8
    assert factor_values("ue4m3", np.array([0x38, 0x50, 0x3C, 0x04])).tolist() == \
        [1.0, 8.0, 1.5, 2.0 ** -7]
    assert factor_values("ue8m0", np.array([127, 130, 124])).tolist() == [1.0, 8.0, 0.125]
    form = ("mxf4nvf4", "scale_vec::4X", "ue4m3")
    ra, rb = _pair(records, form)
    assert (ra["tile"], rb["tile"], ra["sf_ids"], ra["vec"], ra["k"]) == \
        ([128, 4], [4, 256], [0], 4, 64)
    rng = np.random.default_rng(4)
    e2m1 = np.array([-6, -4, -3, -2, -1, 0, 1, 2, 3, 4, 6], dtype=np.float64)  # its integers
    a, b = rng.choice(e2m1, size=(M, 64)), rng.choice(e2m1, size=(64, N))
    sa, sb = draw_factors(rng, ra, M, 4), draw_factors(rng, rb, 4, N)
    assert set(np.unique(sa).tolist()) <= {(x + 7) << 3 for x in range(-3, 4)}
    # each 16-wide K block of a row takes its own factor
    want = scaled_product(a, b, sa, sb, "ue4m3")
    f = factor_values("ue4m3", sa)
    assert want[0, 0] == sum(a[0, k] * f[0, k // 16] * b[k, 0] * factor_values(
        "ue4m3", sb[k // 16, 0]) for k in range(64))
    wa, wb = tmem_scale_words(ra, 0, sa, rng), tmem_scale_words(rb, 0, sb, rng)
    assert np.array_equal(device_product((ra, rb), (0, 0), a, b, wa, wb), want)
    # four factors a word here (one a K block): each placed in its own byte
    assert (read_tmem_factors(ra, 0, wa, M, 4) == sa).all()
    assert (read_tmem_factors(rb, 0, wb, 4, N) == sb).all()
    wp = tmem_scale_words(ra, 0, sa, np.random.default_rng(9), "factors-swapped")
    got = device_product((ra, rb), (0, 0), a, b, wp, wb)
    assert 0 < len({int(r) for r in np.argwhere(got != want)[:, 0]}) <= 2
    assert {int(r) for r in np.argwhere(got != want)[:, 0]} <= {0, 1}
