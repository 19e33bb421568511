"""The audit's tcgen05.cp comparison: CuTe's twelve SM100_UTCCP atoms (copy_traits_sm100.hpp,
their ValID's member aliases ``_DP`` / ``_DPx32`` read in the trait's scope) against the
catalog's tcgen05.cp forms, source bit by source bit; mutated copies of the real atoms give
the hand-computed counterexample."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.audit import audit_cute
from formal.audit.atoms import read_atoms
from formal.audit.audit import Audit

from .test_audit_sm100 import _entries, _trimmed

UTCCP = [f"SM100_UTCCP_{shape}_{cta}" for shape in (
    "128dp256bit", "128dp128bit", "4dp256bit", "4x32dp128bit", "2x64dp128bitlw0213",
    "2x64dp128bitlw0123") for cta in ("1cta", "2cta")]


@pytest.fixture(scope="module")
def utccp(tmp_path_factory: pytest.TempPathFactory) -> Audit:
    path = _trimmed(tmp_path_factory.mktemp("utccp"), UTCCP)
    return audit_cute([path], [path.parents[2]])


def test_every_utccp_atom_is_compared(utccp: Audit) -> None:
    got = {r.atom.name: [(e.operand, e.verdict, e.spec_layout) for e in r.entries]
           for r in utccp.results if r.atom.name in UTCCP}
    assert sorted(got) == sorted(UTCCP)
    forms = {"128dp256bit": "128x256b", "128dp128bit": "128x128b", "4dp256bit": "4x256b",
             "4x32dp128bit": "32x128b.warpx4", "2x64dp128bitlw0213": "64x128b.warpx2::02_13",
             "2x64dp128bitlw0123": "64x128b.warpx2::01_23"}
    for name, entries in got.items():
        form = "tcgen05.cp." + forms[name.split("_")[2]]
        verdict = "differs" if "4dp256bit" in name else "equal"
        assert entries == [("src", verdict, form), ("dst", verdict, form)], name


def test_the_4x256b_lanes_differ_with_the_cells(utccp: Audit) -> None:
    # CuTe's values (4,256):(32,128) -> logical bit 32 i + 128 b -> ValID (128,256):(DP,1):
    # row i goes to lane 32 i (one a sub-partition); the catalog reads "4 lanes" as lanes 0-3
    e = _entries(utccp, "SM100_UTCCP_4dp256bit_1cta")
    verdict, cx, msg = e["src"]
    assert verdict == "differs"
    assert cx.as_json() == {"thread": 0, "value": 1, "cute": [32, 0], "spec": [1, 0]}
    assert "source row 1, bit 0 (piece 0): CuTe copies it to lane 32, column 0; the " \
        "catalog (tcgen05.cp.4x256b) to lane 1, column 0" in msg
    assert e["dst"][0] == "differs" and "outside the catalog's lanes" in e["dst"][2]


def test_the_multicast_valid_reads_the_traits_own_aliases(tmp_path: Path) -> None:
    atoms, _f = read_atoms([_trimmed(tmp_path, UTCCP)])
    by = {a.name: a for a in atoms}
    dp = 1 << 21  # TMEM::DP_b: the lane stride of a TMEM bit address
    assert str(by["SM100_UTCCP_4x32dp128bit_1cta"].val_id) == f"(32,128,4):({dp},1,{32 * dp})"
    # the 2cta atom's ValID is the 1cta trait's, read in that trait's scope
    assert str(by["SM100_UTCCP_2x64dp128bitlw0123_2cta"].val_id) == \
        f"(32,128,2,2):({dp},1,{64 * dp},{32 * dp})"


def test_a_pairing_off_by_a_quarter_is_reported_with_the_cell(tmp_path: Path) -> None:
    # 02_13's second copy 32 lanes down instead of 64: row 0 reaches lanes 0 and 32 (warps 0
    # and 1), the catalog's lanes 0 and 64 (warps 0 and 2)
    one = "SM100_UTCCP_2x64dp128bitlw0213_1cta"
    path = _trimmed(tmp_path, [one], edit=("using _DPx64 = Int<_DP{}*64>;",
                                           "using _DPx64 = Int<_DP{}*32>;"))
    audit = audit_cute([path], [path.parents[2]])
    e = _entries(audit, one)
    verdict, cx, msg = e["src"]
    assert verdict == "differs"
    assert cx.as_json() == {"thread": 0, "value": 0, "cute": [32, 0], "spec": [64, 0]}
    assert "CuTe copies it to lanes 0, 32, column 0; the catalog" in msg
    assert "to lanes 0, 64, column 0" in msg
    assert e["dst"][0] == "differs" and "another value names it too" in e["dst"][2]


def test_the_repeat_and_the_broadcast_swapped_are_reported(tmp_path: Path) -> None:
    # 01_23 with the rows' second block broadcast and the copy a block of rows: rows 32-63
    # would be warps 0 and 1's copy -- CuTe's source row 0 lands on lanes 0 and 64
    one = "SM100_UTCCP_2x64dp128bitlw0123_1cta"
    path = _trimmed(tmp_path, [one], edit=("Stride<_0,Stride<_1, _32,_4096,_0>>",
                                           "Stride<_0,Stride<_1, _32,_0,_4096>>"))
    audit = audit_cute([path], [path.parents[2]])
    verdict, cx, _msg = _entries(audit, one)["src"]
    assert verdict == "differs" and cx.as_json()["cute"] == [64, 0]
    assert cx.as_json()["spec"] == [32, 0]


@pytest.mark.slow
def test_the_whole_wheel_has_no_utccp_row_left_out(sm100_copy_audit: Audit) -> None:
    # audit_cute([inc / TRAITS], [inc])'s atoms, from the whole audit (conftest.sm100_copy_audit)
    rows = [(r.atom.name, e.verdict) for r in sm100_copy_audit.results
            if "UTCCP" in r.atom.name for e in r.entries]
    assert len(rows) == 24 and not [v for _n, v in rows if v == "not-in-spec"]
