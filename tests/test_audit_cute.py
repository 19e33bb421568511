"""`ptxlayout audit cute`: CUTLASS's CuTe atoms read from their headers and proved against
the spec.  Headers come from the installed nvidia-cutlass wheel (skipped when it is absent,
outside CI); mutated copies live in tmp_path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from formal.audit import audit_cute, parse_text
from formal.audit.atoms import Env
from formal.audit.audit import AtomResult, Audit
from formal.audit.compare import (
    Counterexample,
    compare_with_spec,
    cute_cells,
    first_difference,
    index_array,
    spec_cells,
    spec_table,
)
from formal.audit.header import read_header
from formal.audit.project import spec_layouts
from formal.audit.ptx import instruction_of, join_literals
from formal.cli import main
from formal.model.cute import CuteLayout
from formal.writers import export_cute

from .wheel import cutlass_include as _include


def _copy(tmp_path: Path, traits: str, arch: str) -> Path:
    inc = _include()
    for sub, name in (("atom", traits), ("arch", arch)):
        (tmp_path / "cute" / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(inc / "cute" / sub / name, tmp_path / "cute" / sub / name)
    return tmp_path / "cute" / "atom" / traits


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _entry(audit: Audit, atom: str, operand: str, against: str = "spec") -> object:
    r = next(r for r in audit.results if r.atom.name == atom)
    return next(e for e in r.entries if e.operand == operand and e.against == against)


def _result(audit: Audit, atom: str) -> AtomResult:
    return next(r for r in audit.results if r.atom.name == atom)


# ---- mutated copies of a real header: the exact counterexample -----------------------------


def test_changed_stride_gives_the_hand_computed_counterexample(tmp_path: Path) -> None:
    # SM80_8x4 is ((4,8),1):((8,1),0): thread t = t0 + 4*t1 has index 8*t0 + t1, i.e. the
    # f64 m8n8k4 A cell (row t1 = groupID, col t0 = threadID_in_group).  With stride 16 for
    # t0, thread 1 has index 16 = (row 0, col 2) where the spec has (row 0, col 1); for B
    # (N x K in CuTe, index n + 8*k) index 16 is k = 2, n = 0: (row 2, col 0) vs (1, 0).
    hdr = _copy(tmp_path, "mma_traits_sm80.hpp", "mma_sm80.hpp")
    _replace_once(hdr, "Stride<Stride< _8,_1>,_0>>;", "Stride<Stride<_16,_1>,_0>>;")
    audit = audit_cute([hdr])
    a = _entry(audit, "SM80_8x8x4_F64F64F64F64_TN", "A")
    assert a.verdict == "differs"
    assert a.counterexample == Counterexample(1, 0, (0, 2), (0, 1))
    b = _entry(audit, "SM80_8x8x4_F64F64F64F64_TN", "B")
    assert b.counterexample == Counterexample(1, 0, (2, 0), (1, 0))
    assert _entry(audit, "SM80_8x8x4_F64F64F64F64_TN", "C").verdict == "equal"
    assert main(["audit", "cute", str(hdr)]) == 1


def test_changed_shape_gives_the_hand_computed_counterexample(tmp_path: Path) -> None:
    # SM80_8x8_Row ((4,8),2):((16,1),8) read as ((8,4),2): thread t = t0 + 8*t1 has index
    # 16*t0 + t1 + 8*v.  Threads 0..3 still agree with the spec's C of m8n8k4 .f64
    # (row groupID, col 2*threadID_in_group + i); thread 4 has index 64 = (row 0, col 8),
    # outside the tile, where the spec has (row 1, col 0).
    hdr = _copy(tmp_path, "mma_traits_sm80.hpp", "mma_sm80.hpp")
    _replace_once(hdr, "using SM80_8x8_Row  = Layout<Shape <Shape < _4,_8>,_2>,",
                  "using SM80_8x8_Row  = Layout<Shape <Shape < _8,_4>,_2>,")
    audit = audit_cute([hdr])
    c = _entry(audit, "SM80_8x8x4_F64F64F64F64_TN", "C")
    assert c.verdict == "differs"
    assert c.counterexample == Counterexample(4, 0, (0, 8), (1, 0))
    assert "thread 4, value 0: CuTe says (row 0, col 8), the spec says (row 1, col 0)" \
        in c.message


def test_fewer_values_than_the_spec_is_a_difference(tmp_path: Path) -> None:
    hdr = _copy(tmp_path, "mma_traits_sm80.hpp", "mma_sm80.hpp")
    _replace_once(hdr, "using SM80_8x8_Row  = Layout<Shape <Shape < _4,_8>,_2>,",
                  "using SM80_8x8_Row  = Layout<Shape <Shape < _4,_8>,_1>,")
    c = _entry(audit_cute([hdr]), "SM80_8x8x4_F64F64F64F64_TN", "C")
    assert c.verdict == "differs"
    assert c.counterexample == Counterexample(0, 1, None, (0, 1))
    assert c.message.startswith("CuTe gives each thread 1 values, the spec 2")


# ---- the installed headers -------------------------------------------------------------------


@pytest.fixture(scope="module")
def sm80() -> Audit:
    return audit_cute([_include() / "cute" / "atom" / "mma_traits_sm80.hpp"])


def test_sm80_counts(sm80: Audit) -> None:
    assert len(sm80.results) == 65
    assert sm80.counts() == {"equal": 185, "differs": 10, "not-in-spec": 0, "unreadable": 2}
    assert all(r.instruction.startswith("mma.sync.aligned.") for r in sm80.results)


def test_k256_b1_follows_the_correction(sm80: Audit) -> None:
    for name in ("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "SM80_16x8x256_S32U1U1S32_TN_ANDPOPC"):
        spec = _entry(sm80, name, "A", "spec")
        # lane 0's a32 is row 8, col 0 in CuTe (and on the H100); the spec's i < 64 case
        # without the & 0x1F mask puts it at col 32
        assert spec.verdict == "differs"
        assert spec.counterexample == Counterexample(0, 32, (8, 0), (8, 32))
        assert _entry(sm80, name, "A", "correction").verdict == "equal"
        assert [e.operand for e in _result(sm80, name).entries] == ["A", "A", "B", "C"]


def test_m16n8k32_s4_b_differs(sm80: Audit) -> None:
    # CuTe's B stride for threadID_in_group is 32 (k += 4), the spec's (and the H100's,
    # proofs/evidence) is 64 (k += 8): thread 1's b0 is k = 4 in CuTe, k = 8 in the spec
    e = _entry(sm80, "SM80_16x8x32_S32S4S4S32_TN", "B")
    assert e.verdict == "differs"
    assert e.counterexample == Counterexample(1, 0, (4, 0), (8, 0))
    assert e.cute == "((4,8),(8)):((32,1),(8))"


def test_m16n8k128_b1_a_is_not_congruent(sm80: Audit) -> None:
    e = _entry(sm80, "SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "A")
    assert e.verdict == "unreadable"
    assert "((4,8),(32,2)) and stride ((512,1),((16,8))) are not congruent" in e.message


def test_composed_complex_atoms_take_the_instruction_they_call(sm80: Audit) -> None:
    r = _result(sm80, "SM80_8x8x4_C64C64C64C64_TN")
    assert r.instruction == "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"
    assert {e.verdict for e in r.entries} == {"equal"}


def test_sm70_quad_pairs_and_copy_atoms() -> None:
    inc = _include() / "cute" / "atom"
    audit = audit_cute([inc / "mma_traits_sm70.hpp", inc / "copy_traits_sm90.hpp"])
    sm70 = [r for r in audit.results if r.atom.name.startswith("SM70_")]
    assert len(sm70) == 8
    assert all(e.verdict == "equal" for r in sm70 for e in r.entries)
    assert str(sm70[0].atom.thr_id) == "(4,2):(1,16)"
    stsm = _result(audit, "SM90_U32x1_STSM_N")
    assert stsm.instruction == "stmatrix.sync.aligned.x1.m8n8.shared.b16"
    # Src/Dst are Copy_Traits<SM75_U32x1_LDSM_N>::DstLayout / ::SrcLayout, read through
    assert [(e.operand, e.verdict, e.cute) for e in stsm.entries] == [
        ("src", "equal", "(32,32):(32,1)"),
        ("dst", "equal", "((8,4),128):((128,0),1)")]


# ---- unreadable constructs -------------------------------------------------------------------

_TOY = """\
namespace cute {
struct SM99_X { void fma() { asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"
                                          " {%0, %1}, {%2}, {%3}, {%4, %5};\\n"); } };
template <> struct MMA_Traits<SM99_X> {
  using ThrID   = Layout<_32>;
  using ALayout = decltype(make_layout(Shape<_32>{}));
  using BLayout = Layout<Shape<Shape<_4,_8>,_1>, Stride<Stride<_8,_1>,_0>>;
  using CLayout = NoSuchAlias;
};
template <int N> struct MMA_Traits<SM99_Y<N>> { using ALayout = Layout<Shape<Int<N>>>; };
struct 5 { };
}
"""


def test_unreadable_constructs_are_warnings_with_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "toy_traits_sm99.hpp"
    p.write_text(_TOY, encoding="utf-8")
    h = read_header(p)
    assert [(f.severity, f.span.line) for f in h.findings] == [("warning", 11)]
    assert "skipped '5'" in h.findings[0].message
    audit = audit_cute([p])
    x = _result(audit, "SM99_X")
    assert x.atom.line == 4
    by = {e.operand: e for e in x.entries}
    assert by["A"].verdict == "unreadable" and "computed by C++ code" in by["A"].message
    assert by["B"].verdict == "equal"
    assert by["C"].verdict == "unreadable" and "NoSuchAlias" in by["C"].message
    y = _result(audit, "SM99_Y")
    assert "depends on the template parameter(s) N" in y.entries[0].message


def test_templated_alias_with_int_arithmetic() -> None:
    env = Env([])
    h = read_header("x.hpp", "template <int N> using L = Layout<Shape<_4, Int<N/8>>, "
                             "Stride<_1, Int<N*2-4>>>; using L64 = L<64>;")
    for a in h.aliases:
        env.aliases[a.name] = a
    assert env.layout(h.aliases[1].type, {}) == CuteLayout((4, 8), (1, 124))


def test_asm_text_is_read_with_its_predicate_block() -> None:
    lits = ('"{\\n"', '".reg .pred p;\\n"', '"setp.ne.b32 p, %4, 0;\\n"',
            '"wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0, %1}, %2, %3, p, 1, 1;\\n"',
            '"}\\n"')
    assert join_literals(lits[:2]) == "{\n.reg .pred p;\n"
    got = instruction_of((lits,))
    assert not isinstance(got, str)
    assert str(got.opcode) == "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16"
    assert got.opcode.name == "wgmma" and got.opcode.words[:2] == ("mma_async", "sync")
    assert got.head == "wgmma" and got.variant is not None
    assert (got.variant.shape, got.variant.a, got.variant.c) == ("m64n8k16", "f16", "f16")


# ---- the JSON contract and the command -----------------------------------------------------


def test_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hdr = _copy(tmp_path, "mma_traits_sm80.hpp", "mma_sm80.hpp")
    assert main(["audit", "cute", str(hdr), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"atoms", "summary"}
    atom = next(a for a in doc["atoms"] if a["atom"] == "SM80_16x8x256_S32U1U1S32_TN_XORPOPC")
    assert set(atom) >= {"atom", "file", "line", "instruction", "operands"}
    assert atom["instruction"] == "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc"
    a_spec, a_fix = atom["operands"][:2]
    assert set(a_spec) >= {"operand", "verdict", "against", "counterexample", "message"}
    assert (a_spec["operand"], a_spec["verdict"], a_spec["against"]) == ("A", "differs", "spec")
    assert a_spec["counterexample"] == {"thread": 0, "value": 32, "cute": [8, 0],
                                        "spec": [8, 32]}
    assert (a_fix["verdict"], a_fix["against"], a_fix["counterexample"]) == \
        ("equal", "correction", None)
    assert doc["summary"]["operands"]["differs"] == 10
    for fmt, marker in (("sarif", '"version": "2.1.0"'), ("junit", "<testsuites>")):
        assert main(["audit", "cute", str(hdr), "--format", fmt]) == 1
        assert marker in capsys.readouterr().out


def test_without_the_wheel_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import formal.audit
    monkeypatch.setattr(formal.audit, "installed_include", lambda: None)
    assert main(["audit", "cute"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'ptxlayout[cutlass]'" in err and len(err.strip().splitlines()) == 1


def test_no_atoms_is_not_success(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "empty.hpp"
    p.write_text("namespace cute { }\n", encoding="utf-8")
    assert main(["audit", "cute", str(p)]) == 2
    assert "no MMA_Traits or Copy_Traits atom" in capsys.readouterr().err


# ---- round trip: export --format cute, read back through the header reader --------------------


def test_cute_export_round_trips_through_the_reader() -> None:
    # every expressible layout's C++ read back equals the spec's table at every (thread,
    # value) (the audit's enumeration); the first layout of each (instruction, operand,
    # values a thread) goes through the whole compare_with_spec, Z3 and the enumeration's
    # re-check (one Z3 encoding for every layout; the whole audit's report runs it on every
    # atom)
    checked, proved = 0, set()
    for lay in spec_layouts(True):
        r = export_cute.to_cute(lay)
        if r.cute is None:
            continue
        h = read_header("export.hpp", f"using L = {r.cute.cpp()};")
        assert not h.findings
        got = Env([]).layout(h.aliases[0].type, {})
        assert got == parse_text(str(r.cute))
        table = spec_table(lay)
        assert not isinstance(table, str)
        cells = cute_cells(index_array(got), table.rows, table.cols, table.swapped)
        lanes = list(range(got.mode(0).size))
        assert first_difference(cells, spec_cells(table, lanes)) is None, lay.id
        if (lay.instruction, lay.operand, lay.elements) not in proved:
            proved.add((lay.instruction, lay.operand, lay.elements))
            verdict = compare_with_spec(got, None, table)
            assert verdict.verdict == "equal", (lay.id, verdict.message)
        checked += 1
    assert checked >= 80 and len(proved) >= 60


_ALL_UNREADABLE = """\
namespace cute {
struct SM99_Z { void fma() { asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"
                                          " {%0, %1}, {%2}, {%3}, {%4, %5};\\n"); } };
template <> struct MMA_Traits<SM99_Z> {
  using ThrID   = Layout<_32>;
  using ALayout = decltype(make_layout(Shape<_32>{}));
  using BLayout = NoSuchAlias;
  using CLayout = NoSuchAlias;
};
}
"""


def test_an_audit_whose_every_operand_is_unreadable_checked_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "toy_traits_sm99.hpp"
    p.write_text(_ALL_UNREADABLE, encoding="utf-8")
    assert main(["audit", "cute", str(p), "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["operands"] == \
        {"equal": 0, "differs": 0, "not-in-spec": 0, "unreadable": 3}
    assert "no operand of the 1 atom(s) could be compared with the spec (3 unreadable, " \
           "0 not in the spec)" in err
    # one operand read and equal: that one was checked, the run passes with its warnings
    q = tmp_path / "toy2_traits_sm99.hpp"
    q.write_text(_TOY, encoding="utf-8")
    assert main(["audit", "cute", str(q), "--format", "json"]) == 0
