"""The audit's SM100 comparison: CuTe's TMEM load / store copy atoms (``copy_traits_sm100.hpp``)
read from the wheel's headers and compared cell by cell with the catalog's tcgen05.ld / st
maps; mutated copies of the real atoms give the hand-computed counterexample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from formal.audit import audit_cute
from formal.audit.atoms import read_atoms
from formal.audit.audit import Audit
from formal.audit.tmem import tmem_cells
from formal.base.matrix_variants import TMEM_VARIANTS

from .tmem_hand import BY_ATOM
from .wheel import cutlass_include as _include
from .wheel import header_block

TRAITS = "cute/atom/copy_traits_sm100.hpp"
ARCH = "cute/arch/copy_sm100.hpp"
ALLOC = "cute/arch/tmem_allocator_sm100.hpp"


def _trimmed(tmp_path: Path, atoms: list[str], edit: tuple[str, str] | None = None,
             arch_edit: tuple[str, str] | None = None,
             alloc_edit: tuple[str, str] | None = None) -> Path:
    """A copy of the wheel's TMEM headers holding only ``atoms`` (their traits and arch
    structs, as the wheel writes them), with one text edit to each if asked."""
    inc = _include()
    traits = (inc / TRAITS).read_text(encoding="utf-8")
    arch = (inc / ARCH).read_text(encoding="utf-8")
    t_body = "\n".join(header_block(traits, f"template <>\nstruct Copy_Traits<{a}>",
                                     template=False) for a in atoms)
    a_body = "\n".join(header_block(arch, f"struct {a}\n{{", template=False) for a in atoms)
    files = {
        TRAITS: f"#include <{ARCH}>\n#include <{ALLOC}>\nnamespace cute {{\n{t_body}\n}}\n",
        ARCH: f"namespace cute {{\n{a_body}\n}}\n",
        ALLOC: (inc / ALLOC).read_text(encoding="utf-8"),
    }
    for name, ed in ((TRAITS, edit), (ARCH, arch_edit), (ALLOC, alloc_edit)):
        if ed is not None:
            assert files[name].count(ed[0]) >= 1, ed[0]
            files[name] = files[name].replace(ed[0], ed[1], 1)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / TRAITS


def _entries(audit: Audit, atom: str) -> dict[str, tuple[str, object, str]]:
    r = next(r for r in audit.results if r.atom.name == atom)
    return {e.operand: (e.verdict, e.counterexample, e.message) for e in r.entries}


@pytest.fixture(scope="module")
def sm100(sm100_copy_audit: Audit) -> Audit:
    return sm100_copy_audit  # audit_cute([inc / TRAITS], [inc])'s atoms, of the whole audit


def test_every_tmem_atom_equals_the_catalogs_map(sm100: Audit) -> None:
    tmem = [r for r in sm100.results if r.atom.instruction is not None
            and r.atom.instruction.head in ("tcgen05.ld", "tcgen05.st")]
    keys = [r.atom.instruction.variant.key for r in tmem  # type: ignore[union-attr]
            if r.atom.instruction.variant is not None]  # type: ignore[union-attr]
    # one CuTe atom for each of the catalog's 148 forms (74 loads, 74 stores), each once
    assert len(tmem) == 148 and sorted(keys) == sorted(v.key for v in TMEM_VARIANTS)
    for r in tmem:
        assert [(e.operand, e.verdict) for e in r.entries] == [("src", "equal"),
                                                               ("dst", "equal")], r.atom.name
    r = next(r for r in tmem if r.atom.name == "SM100_TMEM_LOAD_16dp32b1x")
    assert r.atom.instruction is not None and r.atom.instruction.immediates == (1,)
    src, dst = r.entries
    assert "ValID names bits 0..31 of each of the 16 lanes x 2 columns once" in src.message
    assert "the second access at column 1 (its asm's immHalfSplitoff)" in dst.message
    st = next(r for r in tmem if r.atom.name == "SM100_TMEM_STORE_16dp32b1x_16b")
    assert st.atom.instruction is not None and st.atom.instruction.immediates == (2,)


def test_the_family_table_has_a_row_per_tmem_instruction(sm100: Audit) -> None:
    from formal.audit.report import audit_text
    rows = {ln.split()[0]: ln.split()[1:] for ln in audit_text(sm100).splitlines()[1:7]
            if ln.strip()}
    assert rows["tcgen05.ld"] == ["74", "148", "0", "0", "0"]
    assert rows["tcgen05.st"] == ["74", "148", "0", "0", "0"]


# (thread, register) -> (TMEM lane, column), worked out by hand from the atoms' DstLayout and
# ValID (tests/tmem_hand.py, the table test_tcgen05_tmem.py checks the catalog against): the
# audit's own decoding of the header gives these cells.
HAND = BY_ATOM


def test_the_audit_decodes_the_hand_worked_cells(tmp_path: Path) -> None:
    atoms, findings = read_atoms([_trimmed(tmp_path, sorted(HAND))])
    assert not [f for f in findings if "DP_b" in f.message]
    by = {a.name: a for a in atoms}
    for name, cells in HAND.items():
        a = by[name]
        assert a.val_id is not None
        dst = next(op for op in a.operands if op.operand == "dst")
        assert dst.layout is not None
        got = tmem_cells(dst.layout, a.val_id, 32)
        for (t, reg), cell in cells.items():
            assert tuple(int(x) for x in got[t, reg]) == cell, (name, t, reg)
    # TMEM::DP_b, read from tmem_allocator_sm100.hpp: (1 << 21), the lane stride in bits
    assert by["SM100_TMEM_LOAD_16dp256b1x"].val_id.stride[1] == 1 << 21  # type: ignore[union-attr]


# ---- mutated copies of the real atoms: the exact counterexample ------------------------------


def test_a_changed_register_stride_names_the_thread_and_cells(tmp_path: Path) -> None:
    """DstLayout's register stride 2048 -> 1024: thread 0's register 2 (bits 64..95, value
    digit (0, 1)) becomes logical bits 1024.., lane 1024 / 256 = 4, where the spec's lane 0
    holds (lane 8, col 0) -- and the store atom, which takes the load's DstLayout, with it."""
    path = _trimmed(tmp_path, ["SM100_TMEM_LOAD_16dp256b1x", "SM100_TMEM_STORE_16dp256b1x"],
                    ("Stride< _1,_2048>>>;", "Stride< _1,_1024>>>;"))
    audit = audit_cute([path], [tmp_path])
    ld = _entries(audit, "SM100_TMEM_LOAD_16dp256b1x")
    assert ld["src"][0] == "equal"  # the TMEM side and ValID are untouched
    verdict, cx, msg = ld["dst"]
    assert verdict == "differs"
    assert cx.as_json() == {"thread": 0, "value": 2, "cute": [4, 0], "spec": [8, 0]}  # type: ignore[attr-defined]
    assert msg.startswith("registers: thread 0, element 2: CuTe says (lane 4, col 0), the spec "
                          "says (lane 8, col 0)")
    st = _entries(audit, "SM100_TMEM_STORE_16dp256b1x")
    assert st["src"][0] == "differs" and st["dst"][0] == "equal"
    assert audit.differs


def test_a_half_split_offset_that_is_not_the_first_access_width_differs(tmp_path: Path) -> None:
    """The asm's immHalfSplitoff 1 -> 2 for tcgen05.ld.16x32bx2.x1: threads 16..31 then read
    column 2, where CuTe's ValID still says column 1."""
    path = _trimmed(tmp_path, ["SM100_TMEM_LOAD_16dp32b1x"],
                    arch_edit=('"[%1], 1;\\n"', '"[%1], 2;\\n"'))
    audit = audit_cute([path], [tmp_path])
    verdict, cx, msg = _entries(audit, "SM100_TMEM_LOAD_16dp32b1x")["dst"]
    assert verdict == "differs"
    assert cx.as_json() == {"thread": 16, "value": 0, "cute": [0, 1], "spec": [0, 2]}  # type: ignore[attr-defined]
    assert "the second access at column 2" in msg


def test_a_wrong_lane_stride_breaks_valid_and_the_registers(tmp_path: Path) -> None:
    """TMEM::DP_b (1 << 21) -> (1 << 20): ValID's lane 1 becomes column 32768 of lane 0 (an
    address the spec's cells do not hold): the TMEM side differs at logical bit 256."""
    path = _trimmed(tmp_path, ["SM100_TMEM_LOAD_16dp256b1x"],
                    alloc_edit=("(1 << 21)", "(1 << 20)"))
    audit = audit_cute([path], [tmp_path])
    got = _entries(audit, "SM100_TMEM_LOAD_16dp256b1x")
    verdict, cx, msg = got["src"]
    assert verdict == "differs"
    assert msg == ("TMEM: logical bit 256 is bit 0 of (lane 0, col 32768), outside the spec's "
                   "cells and bits")
    assert got["dst"][0] == "differs"


def test_tmem_cells_reject_bits_out_of_order() -> None:
    """An element whose 32 bits are not bits 0..31 of one cell in order has no cell."""
    from formal.model.cute import CuteLayout
    val = CuteLayout((32, 2), (1, 1 << 21))  # lanes 0, 1: one column each
    fine = CuteLayout((2, 32), (32, 1))
    reversed_bits = CuteLayout((2, 32), (32, -1))
    assert tmem_cells(fine, val, 32).tolist() == [[[0, 0]], [[1, 0]]]
    assert (tmem_cells(reversed_bits, val, 32) == -1).all()
    assert np.array_equal(tmem_cells(fine, val, 16), np.array([[[0, 0], [-1, -1]],
                                                               [[1, 0], [-1, -1]]]))


# ---- the block-scaled atoms' scale factors: a family of the audit's report -------------------

SM120 = "cute/atom/mma_traits_sm120.hpp"


def _sm120(tmp_path: Path, edit: tuple[str, str] | None = None) -> Audit:
    inc = _include()
    text = (inc / SM120).read_text(encoding="utf-8")
    if edit is not None:
        assert text.count(edit[0]) >= 1, edit[0]
        text = text.replace(*edit)
    (tmp_path / SM120).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / SM120).write_text(text, encoding="utf-8")
    return audit_cute([tmp_path / SM120], [inc])


def test_the_scale_factor_layouts_are_in_the_report(tmp_path: Path) -> None:
    import json

    from formal.audit.report import audit_json, audit_text
    audit = _sm120(tmp_path)
    assert len(audit.scales) == 10 and audit.scale_counts()["equal"] == 10
    assert not audit.differs
    doc = json.loads(audit_json(audit))
    assert doc["summary"]["scale_factors"] == {"equal": 10, "differs": 0, "not-in-spec": 0,
                                               "unreadable": 0}
    a16 = [x for x in doc["scale_factors"] if x["operand"] == "A" and x["vector_size"] == 16]
    assert [x["cute"] for x in a16] == ["((2,2,8),64):((8,0,1),16)"] * 2
    assert a16[0]["ignored_lanes"] == [ln for ln in range(32) if ln % 4 in (2, 3)]
    rows = {ln.split()[0]: ln.split()[1:] for ln in audit_text(audit).splitlines()[1:]
            if ln.strip() and not ln.startswith(("/", " "))}
    assert rows["block-scale"] == ["2", "10", "0", "0", "0"]
    from formal.writers.sarif import audit_output
    from tests.test_schema import (
        errors,  # the report (as the command writes it) keeps docs/'s schema
    )
    assert errors("audit", json.loads(audit_output(audit_json(audit), "json", "0"))) == []


def test_a_scale_factor_difference_is_named_by_lane_and_byte(tmp_path: Path) -> None:
    """SFALayout's lane bit 0 on row + 4 instead of + 8: lane 1's byte 0 holds (mn 4, block 0)
    where the spec's scale_A puts (mn 8, block 0); the audit differs and exits 1."""
    import json

    from formal.audit.report import audit_json, audit_text
    audit = _sm120(tmp_path, ("Stride<Stride<_8,_0,_1>,_16>>", "Stride<Stride<_4,_0,_1>,_16>>"))
    assert audit.differs
    doc = json.loads(audit_json(audit))
    bad = [x for x in doc["scale_factors"] if x["verdict"] == "differs"]
    assert bad and all(x["operand"] == "A" for x in bad)
    assert bad[0]["differences"][0] == {"lane": 1, "byte": 0, "spec": [8, 0], "cute": [4, 0]}
    text = audit_text(audit)
    assert "SFA VS 32 differs vs spec" in text
    assert "lane 1, byte 0: CuTe says (mn 4, block 0), the spec says (mn 8, block 0)" in text


def test_the_u8_ldsm_t_atoms_are_the_instruction_reordered(sm100: Audit) -> None:
    """SM100_U8x8_LDSM_T's DstLayout is not ldmatrix.m16n16.x1.trans.b8's registers: its
    copy() swaps the middle bytes of the two registers after the asm (bytes 2, 3 <-> 4, 5).
    The audit says differs -- at thread 0, element 2 CuTe has (row 0, col 8), the
    instruction's element 2 is (row 2, col 0) -- and names the reordering, the same in every
    thread, that makes them equal."""
    for name, order in (("SM100_U8x8_LDSM_T", [0, 1, 4, 5, 2, 3, 6, 7]),
                        ("SM100_U8x16_LDSM_T", [0, 1, 4, 5, 2, 3, 6, 7,
                                                8, 9, 12, 13, 10, 11, 14, 15])):
        got = _entries(sm100, name)
        verdict, cx, msg = got["dst"]
        assert got["src"][0] == "equal" and verdict == "differs"
        assert cx.as_json() == {"thread": 0, "value": 2, "cute": [0, 8], "spec": [2, 0]}  # type: ignore[attr-defined]
        assert f"CuTe's element e is the instruction's element {order}[e] in every thread" \
            in msg
