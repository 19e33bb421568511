"""The audit's tcgen05 sparse metadata: CuTe's SM100 sparse UMMA atoms' ``tmem_e_frg`` read
from trimmed copies of the wheel's headers (the atoms' traits and arch structs and the
fragment, as the wheel writes them), evaluated at every M, kind and selector, and compared bit
by bit with the catalog's tcgen05 metadata layouts; a mutated copy gives the hand-computed
cell."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from formal.audit.atoms import read_atoms_env
from formal.audit.project import tc_meta_spec_layouts
from formal.audit.tc_meta import ELEMENT_BITS, TcMetaComparison, audit_tc_meta_env

from .wheel import cutlass_include as _include
from .wheel import header_block

TRAITS = "cute/atom/mma_traits_sm100.hpp"
ARCH = "cute/arch/mma_sm100_umma.hpp"
FRAGMENT = "struct tmem_e_frg : tmem_frg_base"
F16, TF32_PAIR, F4 = ("SM100_MMA_F16BF16_SS_SPARSE", "SM100_MMA_TF32_2x1SM_SS_SPARSE",
                      "SM100_MMA_MXF4NVF4_SS_SPARSE")


def _trimmed(tmp_path: Path, atoms: list[str], edit: tuple[str, str] | None = None) \
        -> list[TcMetaComparison]:
    inc = _include()
    traits = (inc / TRAITS).read_text(encoding="utf-8")
    arch = (inc / ARCH).read_text(encoding="utf-8")
    frg = header_block(traits, FRAGMENT)
    if edit is not None:
        assert frg.count(edit[0]) == 1, edit[0]
        frg = frg.replace(*edit)
    t_body = "\n".join(header_block(traits, f"struct MMA_Traits<{a}<") for a in atoms)
    a_body = "\n".join(header_block(arch, f"struct {a}\n{{") for a in atoms)
    files = {TRAITS: f"#include <{ARCH}>\nnamespace cute {{\nnamespace UMMA {{\n{frg}\n}}\n"
                     f"{t_body}\n}}\n",
             ARCH: f"namespace cute {{\n{a_body}\n}}\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    got, _f, env = read_atoms_env([tmp_path / TRAITS], [tmp_path])
    return audit_tc_meta_env(env, got, tc_meta_spec_layouts())


def test_every_sparse_form_compared_with_its_catalog_layout(tmp_path: Path) -> None:
    rows = _trimmed(tmp_path, [F16, TF32_PAIR, F4])
    got = [(r.atom, r.m, r.kind, r.selector, r.verdict, r.spec) for r in rows]
    assert got == [
        # M = 64 without .ws: the text's Layout F, figures only
        (F16, 64, "f16", None, "not-in-spec", ""),
        (F16, 128, "f16", 0, "equal", "tcgen05.sp_meta.m128.f16.sel0"),
        (F16, 128, "f16", 1, "equal", "tcgen05.sp_meta.m128.f16.sel1"),
        # a pair: the catalog states one CTA's forms only
        (TF32_PAIR, 128, "tf32", None, "not-in-spec", ""),
        (TF32_PAIR, 256, "tf32", None, "not-in-spec", ""),
        # one atom, two kinds of its asm (.block16 mxf4nvf4, .block32 mxf4): 4:8 in pairs
        (F4, 128, "mxf4nvf4", 0, "equal", "tcgen05.sp_meta.m128.mxf4nvf4.sel0"),
        (F4, 128, "mxf4", 0, "equal", "tcgen05.sp_meta.m128.mxf4.sel0"),
    ]
    f16 = rows[1]
    # 128 rows x 8 fields x 4 bits; CuTe's FP16 branch, an element a bit
    assert "4096 bits" in f16.why and "((8,2,8),(16,2)):((1,2048,16),(128,8))" in f16.cute
    assert "cta_group::2" in rows[4].why and "its 128 rows in tmem_e_frg" in rows[4].why
    assert "1/2 bit an element" in rows[5].cute


def test_a_mutated_fragment_differs_at_the_hand_computed_bit(tmp_path: Path) -> None:
    """The FP16 branch with its row strides swapped (_2048, _16 -> _16, _2048): row a + 8b +
    16c goes to lane a + 16b + 8e, element d + 16c (k = d + 16e).  Lane 0 bits 0-15 are row 0's
    chunks 0-3 either way; bit 16 is element 16: CuTe's row 16 (c = 1), chunk 0, where the
    catalog puts row 8 (lane 8 % 8 + 0 + 16 * 0 = 0, bit 4 * 0 + 16 * 1 = 16)."""
    rows = _trimmed(tmp_path, [F16], ("Stride<_1,_2048,_16>", "Stride<_1,_16,_2048>"))
    bad = [r for r in rows if r.verdict == "differs"]
    assert [(r.m, r.selector) for r in bad] == [(128, 0), (128, 1)]
    assert bad[0].difference == {"lane": 0, "column": 0, "bit": 16, "cute": [[16, 0]],
                                 "spec": [[8, 0]]}
    # at selector 1 the same bit one column on
    assert bad[1].difference == {"lane": 0, "column": 1, "bit": 16, "cute": [[16, 0]],
                                 "spec": [[8, 0]]}
    assert bad[0].differing > 0
    assert "lane 0, column 0, bit 16: CuTe holds (row 16, chunk 0), the spec (row 8, " \
           "chunk 0)" in bad[0].why


def test_the_element_widths_are_the_fragments_pointers() -> None:
    """``ELEMENT_BITS`` is 8 / S of the ``sparse_elem<S, uint8_t>`` each ``sizeof_bits``
    branch of the wheel's ``tmem_e_frg::make`` returns (the reader keeps no ``return``)."""
    frg = re.sub(r"\s", "", header_block((_include() / TRAITS).read_text(encoding="utf-8"),
                                   FRAGMENT))
    branches = frg.split("sizeof_bits<ValueType>::value==")[1:]
    got = {}
    for b in branches:
        width = int(re.match(r"\d+", b).group())  # type: ignore[union-attr]
        got[width] = Fraction(8, int(re.search(r"sparse_elem<(\d+),uint8_t>", b).group(1)))  # type: ignore[union-attr]
    assert got == ELEMENT_BITS


@pytest.mark.parametrize("fmt", ["json", "text", "junit"])
def test_the_report_carries_them(tmp_path: Path, fmt: str) -> None:
    from formal.audit.audit import Audit
    from formal.audit.report import audit_json, audit_junit, audit_text
    rows = _trimmed(tmp_path, [F16], ("Stride<_1,_2048,_16>", "Stride<_1,_16,_2048>"))
    audit = Audit((), (), (), (), tuple(rows))
    assert audit.differs and audit.compared == 2
    assert audit.tc_meta_counts() == {"equal": 0, "differs": 2, "not-in-spec": 1,
                                      "unreadable": 0}
    if fmt == "text":
        text = audit_text(audit)
        assert "tcgen05-meta" in text
        assert "E M 128 .kind::f16 sel 0 differs vs spec (tcgen05.sp_meta.m128.f16.sel0)" \
            in text
        return
    if fmt == "junit":
        xml = audit_junit(audit)
        assert 'tests="3" failures="2"' in xml and "::E::M128::f16::sel1::" in xml
        return
    doc = json.loads(audit_json(audit))
    assert doc["summary"]["tcgen05_sparse_metadata"]["differs"] == 2
    assert doc["tcgen05_sparse_metadata"][1]["difference"]["bit"] == 16
    from formal.writers.sarif import audit_output
    from tests.test_schema import errors
    assert errors("audit", json.loads(audit_output(audit_json(audit), "json", "0"))) == []
