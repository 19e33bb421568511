"""The audit's tcgen05 scale factors: CuTe's SM100 block-scaled UMMA atoms' ``tmem_sf_frg``
read from trimmed copies of the wheel's headers (the atoms' traits and arch structs and the
fragment, as the wheel writes them), evaluated at every M and vector size, and compared
factor by factor with the catalog's tcgen05 block-scale layouts; a mutated copy gives the
hand-computed places."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formal.audit.atoms import read_atoms_env
from formal.audit.header import Constant, CppBool, read_header
from formal.audit.project import tc_scale_spec_layouts
from formal.audit.tc_scale import TcScaleComparison, audit_tc_scale_env, cute_factor_places

from .wheel import cutlass_include as _include
from .wheel import header_block

TRAITS = "cute/atom/mma_traits_sm100.hpp"
ARCH = "cute/arch/mma_sm100_umma.hpp"
FRAGMENT = "template <class ValueType, int SFVecSize, int N_SM, bool Is_SFA,"
DENSE, SPARSE, K96 = ("SM100_MMA_MXF4_2x1SM_SS", "SM100_MMA_MXF4NVF4_2x1SM_SS_SPARSE",
                      "SM103_MXF4_ULTRA_SS_VS")


def _trimmed(tmp_path: Path, atoms: list[str], edit: tuple[str, str] | None = None) \
        -> list[TcScaleComparison]:
    inc = _include()
    traits = (inc / TRAITS).read_text(encoding="utf-8")
    arch = (inc / ARCH).read_text(encoding="utf-8")
    frg = header_block(traits, FRAGMENT, template=False)
    if edit is not None:
        assert frg.count(edit[0]) == 1, edit[0]
        frg = frg.replace(*edit)
    names = {a: a.replace("SM103_", "SM103::SM103_") for a in atoms}
    t_body = "\n".join(header_block(traits, f"struct MMA_Traits<{names[a]}<") for a in atoms)
    a_body = "\n".join(header_block(arch, f"struct {a}\n{{") for a in atoms)
    files = {TRAITS: f"#include <{ARCH}>\nnamespace cute {{\nnamespace UMMA {{\n{frg}\n}}\n"
                     f"{t_body}\n}}\n",
             ARCH: f"namespace cute {{\n{a_body}\n}}\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    got, _f, env = read_atoms_env([tmp_path / TRAITS], [tmp_path])
    return audit_tc_scale_env(env, got, tc_scale_spec_layouts())


def _by(rows: list[TcScaleComparison], atom: str, operand: str, m: int) -> list[str]:
    return sorted(r.verdict for r in rows if (r.atom, r.operand, r.m) == (atom, operand, m))


def test_the_reader_keeps_the_fragments_branches_and_the_atoms_constants() -> None:
    inc = _include()
    h = read_header(inc / TRAITS)
    frg = next(s for s in h.structs if s.name == "tmem_sf_frg")
    atoms = [x for x in frg.locals if x.name == "tmem_atom"]
    assert len(atoms) == 2 and atoms[1].conditions == (None,)  # if constexpr (...) / else
    cond = atoms[0].conditions[0][0]
    assert isinstance(cond, CppBool) and cond.op == "||" and str(cond.args[0]) == "Is_SFA"
    consts = {c.name: c.value for c in frg.constants}
    assert consts["SUBPART_DPs"] == 32 and str(consts["REP"]) == "_4"
    dense = next(s for s in h.structs if s.name == "MMA_Traits"
                 and str(s.type).startswith(f"MMA_Traits<{DENSE}<"))
    got = {c.name: c for c in dense.constants}
    assert isinstance(got["K"], Constant) and got["K"].value == 64
    assert str(got["SFVecSize"].value) == "VS"
    assert "ScaleFactorDuplicated2by2" in str(got["TmemAlloc"].value.a)  # M == 128 ? 2by2 : 4by1


def test_every_form_compared_with_its_catalog_layout(tmp_path: Path) -> None:
    rows = _trimmed(tmp_path, [DENSE, SPARSE, K96])
    # the dense pair (Layout B at M = 128, A at 256): CuTe's 2by2 and 4x1 fragments are the
    # catalog's, scale_B in the half of D that holds its column included
    for op in "AB":
        assert _by(rows, DENSE, op, 128) == ["equal"] * 3  # 4X ue8m0, 4X ue4m3, 2X
        assert _by(rows, DENSE, op, 256) == ["equal"] * 3
    assert _by(rows, SPARSE, "A", 128) == ["equal"] * 3
    # the sparse pair at M = 128 (Layout C, 4x1): CuTe keeps its 2by2 scale_B
    assert _by(rows, SPARSE, "B", 128) == ["differs"] * 3
    assert _by(rows, SPARSE, "B", 256) == ["equal"] * 3
    bad = next(r for r in rows if (r.atom, r.operand, r.m, r.vs) == (SPARSE, "B", 128, 64))
    assert bad.spec.endswith(".cta_group::2.sp.scale_B") and bad.differing == 512
    # column 0's factor: CuTe in lanes 0 and 32 of each CTA (partitions 0 and 1), the spec in
    # all four partitions
    assert bad.differences[0] == {"factor": [0, 0], "cute_only": [],
                                  "spec_only": [[0, 64, 0, 0], [0, 96, 0, 0], [1, 64, 0, 0],
                                                [1, 96, 0, 0]]}
    # K = 96: CuTe's one fragment gives row 32 column 1 (a row's factors four bytes apart),
    # the catalog two columns a row
    assert {r.verdict for r in rows if r.atom == K96} == {"differs"}
    k96 = next(r for r in rows if (r.atom, r.operand, r.vs) == (K96, "A", 32))
    assert k96.differences[0]["factor"] == [32, 0]
    assert [0, 0, 1, 0] in k96.differences[0]["cute_only"]
    assert [0, 0, 2, 0] in k96.differences[0]["spec_only"]
    assert len(rows) == 12 + 12 + 6


def test_cute_k96_fragment_puts_two_factors_on_one_byte() -> None:
    """Evaluated at NSF = K / VS = 6, CuTe's atom (row mn at byte 4 * (mn / 32) + block)
    puts row 0's block 4 and row 32's block 0 on lane 0, column 1, byte 0."""
    from formal.audit.atoms import Env
    from formal.audit.umma import _struct
    env = Env([_include() / TRAITS])
    frg = _struct(env, "tmem_sf_frg")
    assert frg is not None
    got = cute_factor_places(env, frg, 1, True, "ScaleFactorDuplicated4by1", 128, 16, 6)
    assert not isinstance(got, str)
    assert (0, 0, 1, 0) in got[(0, 4)] and (0, 0, 1, 0) in got[(32, 0)]


def test_a_mutated_2by2_fragment_differs_with_its_places(tmp_path: Path) -> None:
    """The 2by2 branch with its halves' strides swapped (_64, _32 -> _32, _64) puts column 0
    of scale_B in lanes 0 and 64 (partitions 0 and 2), where the spec's half 0 is lanes 0 and
    32."""
    rows = _trimmed(tmp_path, [DENSE], ("_64, _32>", "_32, _64>"))
    bad = [r for r in rows if r.verdict == "differs"]
    assert {(r.operand, r.m) for r in bad} == {("B", 128)}
    assert bad[0].differences[0] == {"factor": [0, 0], "cute_only": [[0, 64, 0, 0],
                                                                     [1, 64, 0, 0]],
                                     "spec_only": [[0, 32, 0, 0], [1, 32, 0, 0]]}
    assert "CuTe alone has (CTA 0, lane 64, column 0, byte 0)" in bad[0].why


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_report_carries_them(tmp_path: Path, fmt: str) -> None:
    from formal.audit.audit import Audit
    from formal.audit.report import audit_json, audit_text
    rows = _trimmed(tmp_path, [SPARSE])
    audit = Audit((), (), (), tuple(rows))
    assert audit.differs and audit.tc_scale_counts() == {"equal": 9, "differs": 3,
                                                         "not-in-spec": 0, "unreadable": 0}
    if fmt == "text":
        text = audit_text(audit)
        assert "tcgen05-scale" in text and "SFB M 128 VS 64 differs" in text
        return
    doc = json.loads(audit_json(audit))
    assert doc["summary"]["tcgen05_scale_factors"]["differs"] == 3
    assert doc["tcgen05_scale_factors"][0]["atom"] == SPARSE
    from formal.writers.sarif import audit_output
    from tests.test_schema import errors
    assert errors("audit", json.loads(audit_output(audit_json(audit), "json", "0"))) == []
