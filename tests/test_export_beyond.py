"""``ptxlayout export`` of the catalog's ids that are not register fragments: one record of
each family checked by hand against its catalog statement, the GPU side's readers reading the
exported records back, and exit 2 for an id that names nothing or a format with no meaning."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import numpy as np
import pytest

from formal.cli import main


def _export(*argv: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["export", *argv])
    return code, json.loads(out.getvalue()) if code == 0 else out.getvalue(), err.getvalue()


def _one(ident: str) -> dict[str, Any]:
    code, recs, err = _export(ident)
    assert code == 0, err
    assert [r["id"] for r in recs] == [ident.removeprefix("catalog:")]
    return recs[0]


def test_mma_block_scale_factors() -> None:
    """.scale_vec::1X of m16n8k32, scale_A (16 x 1) at byte-id 0, thread-id 0: lane 0 holds
    row 0 and lane 1 row 8 (the two rows a lane pair's group shares), each in byte 0."""
    r = _one("catalog:mma.block_scale.m16n8k32.mxf8f6f4.1X.ue8m0.scale_A")
    assert (r["instruction"], r["tile"], r["scale_vec"]) == ("mma.block_scale", [16, 1], 1)
    assert [0, 0, 0, 0, 0, 0] in r["places"] and [0, 0, 1, 0, 8, 0] in r["places"]


def test_tcgen05_block_scale_factors() -> None:
    """.kind::mxf4 .scale_vec::2X at M = 128: lane row % 32, column row / 32, byte sf_id +
    block, so at ID 2 the factor (row 33, block 1) is lane 1, column 1, byte 3: position
    33 * 2 + 1 = 67 of ID 2's row-major table, three numbers a factor."""
    r = _one("tcgen05.block_scale.m128n256k64.mxf4.scale_vec::2X.ue8m0.scale_A")
    assert r["sf_ids"] == [0, 2] and r["tile"] == [128, 2] and r["cta_group"] == 1
    assert r["place_fields"] == ["lane", "column", "byte"]
    assert r["places"][1][3 * 67:3 * 68] == [1, 1, 3]
    assert [len(t) for t in r["places"]] == [3 * 128 * 2] * 2


def test_a_pairs_scale_factors_name_the_cta() -> None:
    """.cta_group::2 at M = 256, scale_A (256 x 1): cta row / 128, lane row % 32, column
    (row % 128) / 32, byte sf_id, so at ID 2 row 161 is CTA 1's lane 1, column 1, byte 2."""
    r = _one("tcgen05.block_scale.m256n256k32.mxf8f6f4.scale_vec::1X.ue8m0.cta_group::2"
             ".scale_A")
    assert r["place_fields"] == ["lane", "column", "byte", "cta"] and r["cta_group"] == 2
    assert r["places"][2][4 * 161:4 * 162] == [1, 1, 2, 1]


def test_sparse_metadata() -> None:
    """.kind::f16 at M = 128, selector 1: row 8's chunk 5 is lane 8 % 8 + 8 * (5 / 4) + 16 *
    (8 / 16) = 8, column 1, bit 4 * (5 % 4) + 16 * ((8 / 8) % 2) = 20: position 8 * 8 + 5 =
    69 of the (row, chunk) table."""
    r = _one("tcgen05.sp_meta.m128.f16.sel1")
    assert (r["sels"], r["width"], r["rows"], r["chunks"], r["copies"]) == ([1], 4, 128, 8, 1)
    assert r["place_fields"] == ["lane", "column", "bit"]
    assert r["places"][0][3 * 69:3 * 70] == [8, 1, 20] and len(r["places"][0]) == 3 * 128 * 8


def test_a_ws_metadata_layout_holds_each_field_in_every_copy() -> None:
    """.ws at M = 32, .kind::tf32: each field is held 128 / 32 = 4 times, one copy a 32-lane
    quarter: (row 5, chunk 0) is the same column and bit in four lanes, one in each quarter."""
    r = _one("tcgen05.sp_meta.ws.m32.tf32.sel0")
    assert (r["rows"], r["copies"]) == (32, 4)
    t, first = r["places"][0], 5 * r["chunks"] * 4
    at = [t[3 * (first + c):3 * (first + c) + 3] for c in range(4)]
    assert sorted(a[0] // 32 for a in at) == [0, 1, 2, 3]
    assert len({a[0] % 32 for a in at}) == 1 and len({(a[1], a[2]) for a in at}) == 1


def test_data_path() -> None:
    """Layout D (M = 128, one CTA) at N = 8: warp 1 holds rows 32-63 in lanes 32-63."""
    r = _one("tcgen05.datapath.D")
    assert (r["m"], r["cta_group"]) == (128, 1)
    assert {"n": 8, "cta": 0, "warp": 1, "lane_lo": 32, "lane_hi": 63, "tcol_lo": 0,
            "tcol_hi": 7, "row_lo": 32, "dcol_lo": 0} in r["blocks"]


def test_packing_format() -> None:
    """.kind::mxf8f6f4's .e2m1 in tensor memory: a byte each, four a word, bits 5..2 of the
    byte: element k's first bit 8k + 2."""
    r = _one("tcgen05.packing.tensor.mxf8f6f4.e2m1")
    assert (r["bits"], r["slot"], r["unit"], r["count"]) == (4, 8, 32, 4)
    assert r["first_bits"] == [2, 10, 18, 26]


def test_tcgen05_cp() -> None:
    """.128x256b: row r to lane r, its eight 32-bit pieces to columns 0-7."""
    r = _one("tcgen05.cp.128x256b")
    assert (r["rows"], r["pieces"], r["width"]) == (128, 8, 32)
    assert [5, 7, 0, 5, 7] in r["places"] and len(r["places"]) == 128 * 8
    f = _one("tcgen05.cp.b8x16.b6x16_p32")
    assert (f["count"], f["bits"], f["padding"], f["unit"], f["out_bits"]) == (16, 6, 32, 128,
                                                                                8)


def test_a_prefix_names_every_record_it_begins() -> None:
    """A layout's id answers its record at both selectors, the same record the GPU export
    carries; a selector's id the slice; a shorter prefix every layout it begins."""
    from formal.api import current_catalog
    code, recs, _err = _export("tcgen05.sp_meta.m128.f16", "tcgen05.sp_meta.m128.f16.sel0")
    assert code == 0
    assert [(r["id"], r["sels"]) for r in recs] == [("tcgen05.sp_meta.m128.f16", [0, 1]),
                                                    ("tcgen05.sp_meta.m128.f16.sel0", [0])]
    assert recs[1]["places"] == recs[0]["places"][:1]
    gpu = next(r for r in current_catalog()[0] if r.get("id") == "tcgen05.sp_meta.m128.f16")
    assert recs[0] == gpu
    code, recs, _err = _export("tcgen05.sp_meta.m128")
    assert code == 0 and "tcgen05.sp_meta.m128.f16" in [r["id"] for r in recs]
    assert all(not r["id"].endswith(("sel0", "sel1")) and r["m"] == 128 for r in recs)


@pytest.mark.parametrize("argv, said", [
    (["tcgen05.sp_meta.m128.f16.sel7"], "no tcgen05.mma.sp sparse metadata id matches"),
    (["tcgen05.datapath.Z"], "no tcgen05.mma data paths id matches"),
    (["tcgen05.cp.128x256b", "--format", "cute"],
     "export --format cute has no meaning for tcgen05.cp"),
    (["tcgen05.block_scale.m128n256k64.mxf4", "--format", "f2"], "has no meaning"),
])
def test_exit_2_for_what_has_no_export(argv: list[str], said: str) -> None:
    code, out, err = _export(*argv)
    assert code == 2 and out == "" and said in err


def test_the_gpu_readers_read_the_export_back(tmp_path: Any) -> None:
    from formal.api import current_catalog
    from formal.base.matrix_variants import variant
    from formal.execute.block_scale import scale_maps_in_records
    from formal.execute.datapath import datapath_map
    from formal.execute.tcgen05_scale import find_tc_scale, read_tmem_factors
    from formal.execute.tcgen05_sp import find_meta, read_indices
    form = "mma.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue4m3"
    out = tmp_path / "x.json"
    assert main(["export", "mma.block_scale.m16n8k64.mxf4nvf4.4X.ue4m3",
                 "tcgen05.datapath.D", "tcgen05.sp_meta.m128.f16",
                 "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A",
                 "-o", str(out)]) == 0
    recs = json.loads(out.read_text(encoding="utf-8"))
    catalog = current_catalog()[0]
    assert scale_maps_in_records(variant(form), recs) == \
        scale_maps_in_records(variant(form), catalog)
    assert datapath_map(recs, "D", 64) == datapath_map(catalog, "D", 64)
    words = (np.arange(128 * 4, dtype=np.uint64).reshape(128, 4) * 2654435761) % (1 << 32)
    mine, theirs = (find_meta(r, "f16", 128, False) for r in (recs, catalog))
    assert mine is not None and theirs is not None
    got = [read_indices(x, 1, words[:, :2]) for x in (mine, theirs)]
    assert (got[0] == got[1]).all()
    # row 8's chunk 5 at selector 1: lane 8, column 1, bits 20-23 (indices 2 bits each)
    assert got[0][8, 5].tolist() == [(int(words[8, 1]) >> 20) & 3, (int(words[8, 1]) >> 22) & 3]
    sa = [find_tc_scale(r, "mxf8f6f4", "scale_vec::1X", "ue8m0", 128, "scale_A")
          for r in (recs, catalog)]
    assert sa[0] is not None and sa[1] is not None
    factors = [read_tmem_factors(x, 3, words, 128, 1) for x in sa]
    assert (factors[0] == factors[1]).all()
    # row 33 at ID 3: lane 1, column 1, byte 3 of word (1, 1)
    assert factors[0][33, 0] == (int(words[1, 1]) >> 24) & 0xFF


def test_every_id_the_report_names_in_these_families_exports() -> None:
    """The ids ``prove`` reports (and ``list`` prints) of the six families are exactly the
    ids ``export`` has records for, 145 in the catalog, besides the 19 metadata layouts'
    whole records (each at every selector, as the GPU export carries them)."""
    from formal.api import results_beyond_fragments
    from formal.writers.cards import bare
    from formal.writers.export_beyond import FAMILIES, export_family, family_ids
    reported = {bare(r.id) for r in results_beyond_fragments() if export_family(r.id)}
    exported = set().union(*(family_ids(f) for f in FAMILIES))
    whole = exported - reported
    assert reported <= exported and len(reported) == 145 and len(whole) == 19
    assert all(i.startswith("tcgen05.sp_meta.") and f"{i}.sel0" in reported for i in whole)
