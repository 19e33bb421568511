"""The audit's SM100 UMMA accumulators: CuTe's TMEM placement of D (``UMMA::tmem_frg``'s
``if constexpr`` branches, read from the wheel's header) against the catalog's data-path
layouts A-G, cell by cell at every M the atom's static_assert allows and every N."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.audit import audit_cute
from formal.audit.audit import Audit
from formal.audit.header import read_header

from .wheel import cutlass_include as _include

TRAITS = "cute/atom/mma_traits_sm100.hpp"


@pytest.fixture(scope="module")
def umma() -> Audit:
    inc = _include()
    return audit_cute([inc / TRAITS], [inc])


def _d(audit: Audit, name: str):  # type: ignore[no-untyped-def]
    r = next(r for r in audit.results if r.atom.name == name)
    return next(e for e in r.entries if e.operand == "C")


def test_the_reader_keeps_local_layouts_under_their_conditions_and_asserts() -> None:
    text = """namespace cute {
    struct F { template <class S> static auto make(S const& s) {
      Layout r = Layout<Shape<_128,_16384>, Stride<_1,_128>>{};
      if constexpr (N_SM == 1) {
        if constexpr (M_MMA == 64 && Mode == UMMA::Mode::Interleaved) {
          Layout tmem_atom = Layout<Shape<Shape<_16,_4>,Int<N_MMA>>, Stride<Stride<_1,_32>,_128>>{};
          return r;
        }
      } else { Layout tmem_atom = Layout<_2,_1>{}; }
    } };
    struct A { static_assert(M == 64 || M == 128, "M"); static_assert(x && y, "no"); };
    }"""
    h = read_header("f.hpp", text)
    assert not h.findings
    f = next(s for s in h.structs if s.name == "F")
    assert [(x.name, x.line) for x in f.locals] == [("r", 3), ("tmem_atom", 6),
                                                    ("tmem_atom", 9)]
    assert f.locals[0].conditions == ()
    outer, inner = f.locals[1].conditions
    assert [str(t) for t in outer or ()] == ["CppBinOp(op='==', a=Type(parts=(TName(name='N_SM', "
                                             "args=None),)), b=1)"]
    assert len(inner or ()) == 2
    assert str(f.locals[1].type) == ("Layout<Shape<Shape<_16,_4>,Int<N_MMA>>,"
                                     "Stride<Stride<_1,_32>,_128>>")
    assert f.locals[2].conditions == (None,)  # a plain else: not negated, so not used
    a = next(s for s in h.structs if s.name == "A")
    assert [[t.b for t in terms] for terms in a.asserts] == [[64, 128]]


def test_dense_umma_accumulators_are_the_spec_data_path_layouts(umma: Audit) -> None:
    c = _d(umma, "SM100_MMA_F16BF16_SS")
    assert c.verdict == "equal"
    assert c.spec_layout == "tcgen05.datapath.F, tcgen05.datapath.D"
    assert "M = 64: Layout F, N = 8..256; M = 128: Layout D, N = 8..256" in c.message
    c = _d(umma, "SM100_MMA_F16BF16_2x1SM_SS")
    assert (c.verdict, c.spec_layout) == ("equal", "tcgen05.datapath.B, tcgen05.datapath.A")
    # its static_assert allows only M = 128: Layout D alone
    c = _d(umma, "SM100_MMA_MXF8F6F4_SS")
    assert (c.verdict, c.spec_layout) == ("equal", "tcgen05.datapath.D")
    assert not [f for f in umma.findings if f.kind == "cute-syntax"]


def test_sparse_two_sm_m128_differs_from_layout_c(umma: Audit) -> None:
    """tmem_frg_2sm at M = 128 (64 rows a CTA) is the 2x2 atom: D(0, 8) at N = 16 is
    n = 0 + 8 * 1 -> address 0 + 128 * 0 + 64 * 1 = 64: lane 64, column 0.  The spec's
    Layout C (4x1, half the lanes) puts row 0 in lane 0 and column 8 in column 8."""
    c = _d(umma, "SM100_MMA_F16BF16_2x1SM_SS_SPARSE")
    assert c.verdict == "differs"
    assert c.spec_layout == "tcgen05.datapath.C"
    assert c.counterexample is not None
    assert c.counterexample.as_json() == {"thread": 0, "value": 8, "cute": [64, 0],
                                          "spec": [0, 8]}
    assert "M = 128, N = 16" in c.message and "1792 of 2048 cells differ" in c.message
    # an atom whose static_assert says M == 256 only is not asked about M = 128
    c = _d(umma, "SM100_MMA_MXF8F6F4_2x1SM_SS_SPARSE")
    assert (c.verdict, c.spec_layout) == ("equal", "tcgen05.datapath.A")


def _template_block(text: str, head: str) -> str:
    """One templated declaration of a real header: from the ``template <`` before ``head``
    to its closing ``};`` (or the end of its line, for an alias)."""
    at = text.index(head)
    start = text.rindex("template <", 0, at)
    end = text.index("\n};", at) + 3 if "struct" in head else text.index("\n", at)
    return text[start:end]


def test_a_mutated_tmem_atom_names_the_cell(tmp_path: Path) -> None:
    """Layout F's 16 rows a sub-partition, changed to a lane stride of 16: D(row 16, col 0)
    goes to lane 16 where the spec has lane 32.  (A copy of the wheel's header holding only
    tmem_frg, its alias and one atom's traits, so that the test reads little.)"""
    inc = _include()
    text = (inc / TRAITS).read_text(encoding="utf-8")
    frg = _template_block(text, "struct tmem_frg : tmem_frg_base")
    alias = _template_block(text, "using tmem_frg_1sm =")
    traits = _template_block(text, "struct MMA_Traits<SM100_MMA_F16BF16_SS<")
    old = "Stride<Stride< _1, _32>,      _128>>{};"
    assert frg.count(old) == 1
    frg = frg.replace(old, "Stride<Stride< _1, _16>,      _128>>{};")
    out = tmp_path / TRAITS
    out.parent.mkdir(parents=True)
    out.write_text("#include <cute/arch/mma_sm100_umma.hpp>\nnamespace cute {\n"
                   f"namespace UMMA {{\nstruct tmem_frg_base {{}};\n{frg}\n{alias}\n}}\n"
                   f"{traits}\n}}\n", encoding="utf-8")
    audit = audit_cute([out], [inc])
    assert [r.atom.name for r in audit.results] == ["SM100_MMA_F16BF16_SS"]
    c = _d(audit, "SM100_MMA_F16BF16_SS")
    assert c.verdict == "differs"
    assert c.counterexample is not None
    assert c.counterexample.as_json() == {"thread": 16, "value": 0, "cute": [16, 0],
                                          "spec": [32, 0]}
    assert c.message.endswith("M = 64, N = 8 (tmem_frg, N_SM = 1, Interleaved; Layout F): "
                              "D(row 16, col 0): CuTe says (lane 16, column 0), the spec says "
                              "(lane 32, column 0) (lane = 128 * CTA + lane); 384 of 512 cells "
                              "differ")


def test_the_smem_swizzle_atoms_equal_the_canonical_layouts(umma: Audit) -> None:
    rows = {r.atom.name: r for r in umma.results if r.atom.kind == "smem"}
    assert len(rows) == 9
    k128 = {e.operand: e for e in rows["Layout_K_SW128_Atom"].entries}
    assert sorted(k128) == ["b16", "b32", "b4", "b8"]
    assert {e.verdict for e in k128.values()} == {"equal"}
    assert k128["b16"].cute == "Swizzle<3,4,3> o (8,64):(64,1)"
    assert k128["b16"].spec_layout == "tcgen05.smem.K-major.128B.b16"
    assert k128["b4"].message.startswith("every element of the 8 x 256 (MN x K) atom at the "
                                         "spec's bit address")
    verdicts = {e.verdict for r in rows.values() for e in r.entries}
    assert verdicts == {"equal", "not-in-spec"}
    odd = rows["Layout_MN_SW128_32B_Atom"].entries[0]
    assert odd.verdict == "not-in-spec" and "no MN-major 128B with 32B atomicity row" in odd.message


def test_a_mutated_swizzle_atom_names_the_coordinate_and_bytes(tmp_path: Path) -> None:
    """K-major 128B with the 64B swizzle: row 4's bit 9 no longer flips the chunk, so at
    (MN 4, K 0) CuTe's byte is 4 * 128 = 512 and the spec's 512 ^ (4 << 4) = 576."""
    from formal.audit.atoms import Env
    from formal.audit.smem import smem_atoms
    p = tmp_path / "atoms.hpp"
    p.write_text("namespace cute { namespace GMMA {\nusing Layout_K_SW128_Atom_Bits = "
                 "ComposedLayout<Swizzle<2,4,3>, smem_ptr_flag, "
                 "Layout<Shape<_8,_1024>,Stride<_1024,_1>>>;\n} }\n", encoding="utf-8")
    [(atom, verdicts)] = smem_atoms(Env([p]))
    assert (atom.name, atom.line) == ("Layout_K_SW128_Atom", 2)
    v = {x.bits: x for x in verdicts}
    assert (v[16].verdict, v[16].message) == ("differs",
                                              "(MN 4, K 0): CuTe's byte 512, the spec's byte 576")
    assert v[4].message == "(MN 4, K 0): CuTe's bit 4096, the spec's bit 4608"


def test_sm120_specializations_are_atoms_of_their_own() -> None:
    """SM120_16x8x32_TN's asm is in its explicit specializations, one type pair each: every
    one is an atom with its own instruction, compared; the _VS traits' `UnderlyingTraits::
    ALayout` is read through the alias; block-scaled forms the catalog has no row for say
    which rows it has."""
    inc = _include()
    audit = audit_cute([inc / "cute/atom/mma_traits_sm120.hpp"], [inc])
    by = {r.atom.name: r for r in audit.results}
    r = by["SM120_16x8x32_TN<float_e2m1_t,float_e3m2_t,float>"]
    assert r.instruction == "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32"
    assert [(e.operand, e.verdict) for e in r.entries] == [("A", "equal"), ("B", "equal"),
                                                           ("C", "equal")]
    assert not [x for x in audit.results if x.atom.name == "SM120_16x8x32_TN"]
    vs = by["SM120_16x8x32_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,VS>"]
    a = next(e for e in vs.entries if e.operand == "A")
    assert a.cute == "((4,8),(4,2,2)):((64,1),(16,8,256))"  # UnderlyingTraits::ALayout, read
    assert a.verdict == "not-in-spec"
    assert "of the block-scaled mma forms it states only mma.kind::mxf4.block_scale" in a.message
    assert audit.counts()["unreadable"] == 0


def test_an_fma_of_one_thread_says_so(umma: Audit) -> None:
    r = next(r for r in umma.results if r.atom.name == "SM100_1x2x1_F32F32F32F32")
    assert {e.verdict for e in r.entries} == {"unreadable"}
    assert r.entries[0].message == (
        "no instruction: SM100_1x2x1_F32F32F32F32 has no asm: its fma calls cute::fma, CuTe's "
        "element-wise fused multiply-add in one thread (FFMA2 on float2), no matrix-fragment "
        "instruction the spec states a layout for")


def test_umma_a_and_b_and_utccp_say_what_is_not_compared(umma: Audit,
                                                        sm100_copy_audit: Audit) -> None:
    r = next(r for r in umma.results if r.atom.name == "SM100_MMA_F16BF16_SS")
    a = next(e for e in r.entries if e.operand == "A")
    assert a.verdict == "not-in-spec"
    assert a.message.startswith("tcgen05.mma.cta_group::1.kind::f16 (f16, cta_group::1): the "
                                "catalog has no tcgen05.mma (thread, value) row for A")
    # audit_cute([inc / "cute/atom/copy_traits_sm100.hpp"], [inc]), once a session (conftest)
    r = next(r for r in sm100_copy_audit.results
             if r.atom.name == "SM100_UTCCP_4x32dp128bit_1cta")
    # compared now (tests/test_audit_utccp.py): the catalog states tcgen05.cp's forms
    assert {e.verdict for e in r.entries} == {"equal"}
    assert r.entries[0].message.startswith("each of the 32 rows x 128 source bits lands on "
                                           "the catalog's 4 places")
