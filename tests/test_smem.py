"""The shared-memory half: CuTe notation with swizzles read by the grammar, swizzles and
canonical layouts as values, and every obligation refuted where an edit makes it false and
proved where a re-spelling keeps it true, in Markdown and in plain text alike."""

from __future__ import annotations

from typing import Any

import pytest

from formal.model.smem import (
    CHUNKS,
    SWIZZLE_CODES,
    TCGEN05_DESCRIPTOR,
    WGMMA_DESCRIPTOR,
    DescriptorRead,
    Swizzle,
    at_params,
    descriptor_encode,
    descriptor_of,
    descriptor_values,
    instances,
    pack_descriptor,
    tile_params,
)
from formal.parse.smem import SymEntry, line_facts, read_cell, read_layout, read_smem
from formal.prove.smem import SmemProof, injective_core, prove_smem, swizzle_core
from formal.prove.smem_descriptor import (
    SWIZZLES,
    descriptor_core,
    read_extent,
    tma_core,
    tma_swizzle,
)
from tests import smem_sections as S
from tests.sphinx import markdown_to_sphinx_html


def _proof(text: str, doc: str = "s.md", families: tuple[str, ...] = ()) -> SmemProof:
    return prove_smem(read_smem(text, doc), catalog_families=families)


def _errors(text: str) -> list[tuple[int, str]]:
    return sorted((f.span.line, f.kind) for f in _proof(text).findings if f.severity == "error")


# ---- the grammar -----------------------------------------------------------------------------


def test_layout_with_swizzle_and_symbols() -> None:
    sw, (shape, stride) = read_layout("Swizzle<1, 4, 3> o ((8,m),(T,2k)):((2T,SBO),(1,T))")
    assert sw == (1, 4, 3)
    assert shape == ((SymEntry(8), SymEntry(1, "m")), (SymEntry(1, "T"), SymEntry(2, "k", True)))
    assert str(stride[0][0]) == "2T" and str(stride[0][1]) == "SBO"
    _, (_, stride) = read_layout("((8,m),(T,2k)):((1T,SBO),(1,LBO))")
    assert str(stride[0][0]) == "1T"  # written with its 1, kept so


@pytest.mark.parametrize("bad", ["Swizzle<1,4> o (8,2):(1,8)", "Swizle<1,4,3> o (8):(1)",
                                 "Swizzle<1,4,3> x (8):(1)", "((8,2):(1,8)"])
def test_not_a_layout(bad: str) -> None:
    with pytest.raises(ValueError):
        read_layout(bad)


def test_cells() -> None:
    v = read_cell("64 *sizeof(tf32)", "smem_value")
    assert v.bytes({"tf32": 4}) == 256
    assert read_cell("NA", "smem_value").bytes({}) is None
    assert read_cell("(SBO) >> 4 = 16", "smem_encoding") == ("shifted", "SBO", 4, 16)
    assert read_cell("13–0", "smem_bits") == (0, 13)
    assert read_cell("8x4", "smem_dims") == (8, 4)


# ---- values ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "want"), [
    ("###### 9.7.15.5.1.2.1.3. [Canonical Layouts](#x-canonical-layouts)",
     {"heading": True, "tables": ("canonical",)}),
    ("9.7.15.5.1.2.1.1. Leading Dimension Byte Offset", {"heading": True, "tables": ("LBO",)}),
    ("Table 40 Shared memory descriptor layout", {"tables": ("fields-tcgen05",)}),
    ("The shared memory descriptor describes the operand", {"tables": ()}),
    ("| 64B Swizzling Mode | M/N | 4x8 |", {"modes": ((2, "64B"),),
                                          "majors": ((23, "MN", False),)}),
    ("| K- major | No-swizzling or Interleaved | ((8,m),(T,2k)):((1T,SBO),(1,LBO)) |",
     {"majors": ((2, "K", True),), "modes": ((13, "none"), (29, "none"))}),
    ("K-Major, 32B swizzling and tf32 type: [Figure 1](#k-32b-swizzle-tf32)",
     {"majors": ((0, "K", True),), "type": "tf32", "comma": 7, "modes": ((9, "32B"),
                                                                            (52, "32B"))}),
    ("  Exact layout : Swizzle<3,4,3> o ((8,2),(8,2)):((64,512),(1,8))", {"label": "exact"}),
    ("Canonical Layout without swizzling", {"label": ""}),
    ("  | Encoding of SBO in descriptor | (SBO) >> 4 = 64 |", {"encoding": ("SBO", 33)}),
    ("k 2", {"majors": ()}),  # the parameter k, not the majorness K
])
def test_line_facts_come_from_the_grammar(line: str, want: dict[str, object]) -> None:
    facts = line_facts(line)
    assert {k: getattr(facts, k) for k in want} == want


def test_swizzle_moves_chunks_within_a_row_of_the_atom() -> None:
    sw = Swizzle(3, 4, 3)
    assert sw(0x80) == 0x90  # row 1, chunk 0 -> chunk 1
    assert sw(0x3F7) == 0x387  # row 7, chunk 7, byte 7 -> chunk 0, byte 7
    assert sw.period == 1024
    assert Swizzle(0, 4, 3)(0x3F7) == 0x3F7


@pytest.mark.parametrize("bits,mode", [(0, "none"), (1, "32B"), (2, "64B"), (3, "128B")])
def test_each_swizzle_is_a_chunk_keeping_bijection(bits: int, mode: str) -> None:
    assert swizzle_core(Swizzle(bits, 4, 3), mode).status == "proved"


@pytest.mark.parametrize("sw,mode,why", [(Swizzle(3, 3, 3), "128B", "split"),
                                         (Swizzle(2, 4, 3), "128B", "64-byte rows"),
                                         (Swizzle(3, 4, 2), "128B", "overlap")])
def test_planted_swizzles_refuted(sw: Swizzle, mode: str, why: str) -> None:
    core = swizzle_core(sw, mode)
    assert core.status == "refuted" and why in core.message


def test_the_module_docstring_example() -> None:
    _, (shape, stride) = read_layout("((8,m),(T,2k)):((1T,SBO),(1,LBO))")
    from formal.base.source import Span
    from formal.parse.smem import LayoutText
    t = LayoutText(shape, stride, None, Span("x", 1, 1), "")
    lay = at_params(t, {"T": 4, "m": 2, "k": 2, "SBO": 32, "LBO": 64}, 32)
    assert lay.offset((9, 5)) == 101 and lay.address((9, 5)) == 404


def test_descriptor_fields_pack_as_named() -> None:
    d = pack_descriptor("wgmma", {"leading dimension byte offset": 256,
                                  "stride dimension byte offset": 128, "swizzling mode": 1})
    assert (d >> 16) & 0x3FFF == 16 and (d >> 32) & 0x3FFF == 8 and d >> 62 == 1
    t = pack_descriptor("tcgen05", {"swizzling mode": 2})
    assert (t >> 46) & 7 == 1 and t >> 61 == 2
    with pytest.raises(ValueError, match="swizzling mode"):
        pack_descriptor("wgmma", {"swizzling mode": 4})
    assert descriptor_encode(0x40010) == 1  # bit 18 and up are dropped
    assert [f.width for f in WGMMA_DESCRIPTOR] == [14, 14, 14, 3, 2]
    assert sum(f.width for f in TCGEN05_DESCRIPTOR) == 60


def test_catalog_params_are_dense_tiles() -> None:
    assert tile_params("K", "128B", 16) == {"T": 8, "m": 2, "k": 1, "SBO": 512, "LBO": 1}
    assert tile_params("MN", "none", 16) == {"T": 8, "m": 2, "k": 2, "SBO": 64, "LBO": 128}


# ---- the catalog -----------------------------------------------------------------------------


def _catalog_text() -> str:
    from formal.catalog import CATALOG_DIR
    return (CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")


def test_catalog_layouts_all_proved() -> None:
    text = read_smem(_catalog_text(), "layouts.md")
    assert (len(text.atoms), len(text.canonical), len(text.fields)) == (8, 8, 13)
    assert len(text.definitions) == 7
    from formal.prove.evidence import Evidence
    assert prove_smem(text, catalog_families=("wgmma", "tcgen05")).findings == ()
    proof = prove_smem(text, catalog_families=("wgmma", "tcgen05"), evidence=Evidence([]))
    # with evidence, no error; one warning a tcgen05 layout: not executed (no sm_100a device)
    assert {(f.severity, f.kind) for f in proof.findings} == {("warning", "hardware")}
    assert sorted(f.layout for f in proof.findings) == sorted(
        r.id for r in proof.results if r.id.startswith("tcgen05.smem.") and "major." in r.id)
    ids = {r.id for r in proof.results}
    # wgmma: K-major at 4 widths and MN-major (f16/bf16) x 4 modes; tcgen05: K 4 + MN 3 widths
    assert len([i for i in ids if i.startswith("wgmma.smem.K-")]) == 16
    assert len([i for i in ids if i.startswith("wgmma.smem.MN-")]) == 4
    assert len([i for i in ids if i.startswith("tcgen05.smem.") and "major." in i]) == 28
    assert "tcgen05.smem.K-major.128B.b4" in ids
    statuses = {v.status for r in proof.results for v in r.verdicts
                if v.name != "hardware" and (v.name, r.shape[-4:]) != ("tma-swizzle", "none")}
    assert {v.status for r in proof.results for v in r.verdicts if v.name == "hardware"
            and r.id.startswith("tcgen05.smem.") and "major." in r.id} == {"unconfirmed"}
    assert statuses == {"proved"}


def test_a_k_slice_wider_than_its_atom_is_not_a_layout() -> None:
    text = read_smem(_catalog_text(), "layouts.md")
    row = [r for r in text.canonical if r.major == "K" and r.mode == "32B"][0]
    p = tile_params("K", "32B", 16)
    p["k"] = 2  # 64 bytes of K in a 32-byte row
    lay = at_params(row.layout, p, 16, row.swizzle)
    core = injective_core(lay)
    assert core.status == "refuted"
    assert core.cex["a"] != core.cex["b"]
    assert lay.bit_address((core.cex["a"]["mn"], core.cex["a"]["k"])) == \
        lay.bit_address((core.cex["b"]["mn"], core.cex["b"]["k"]))
    assert len(instances("wgmma", text.canonical)) == 20


# ---- the sections ----------------------------------------------------------------------------


RENDERINGS = [lambda s: s, S.plain, markdown_to_sphinx_html]


@pytest.mark.parametrize("render", RENDERINGS, ids=["markdown", "plain", "html"])
def test_sections_read_to_the_same_findings(render) -> None:  # type: ignore[no-untyped-def]
    text = render(S.WGMMA)
    sm = read_smem(text, "w")
    assert (len(sm.atoms), len(sm.canonical), len(sm.examples), len(sm.fields)) == (8, 8, 3, 5)
    assert len(sm.definitions) == 7
    assert sm.findings == ()
    # one error, on the K-major 32B example's k cell: k = 2 makes its K mode 16 tf32 wide, and
    # a row of the 32-byte atom holds 8
    (f,) = [f for f in _proof(text).findings if f.severity == "error"]
    assert f.kind == "smem-injective" and f.counterexample["byte"] == 32
    assert "k <= 1" in f.message
    line = text.splitlines()[f.span.line - 1]
    assert line[f.span.column - 1] == "2"
    k_rows = [n for n, ln in enumerate(text.splitlines(), 1) if ln.replace("|", " ").split()[:2]
              == ["k", "2"] or "<p>k</p>" in ln]
    assert f.span.line == k_rows[1]  # the second example's k row


@pytest.mark.parametrize("render", RENDERINGS, ids=["markdown", "plain", "html"])
def test_tcgen05_fixed_constant_that_does_not_fit(render) -> None:  # type: ignore[no-untyped-def]
    text = render(S.TCGEN05_DESCRIPTOR)
    (f,) = _proof(text).findings
    assert f.kind == "smem-field-fit" and "0xb00000000" in text.splitlines()[f.span.line - 1]
    assert f.counterexample == {"constant": "0xb00000000", "bits": 8}
    assert "does not fit the 8-bit field 53-60" in f.message
    fixed = render(S.TCGEN05_DESCRIPTOR.replace("0xb00000000", "0b00000000"))
    assert _proof(fixed).findings == ()


# ---- mutations: each edit refuted near its line, each re-spelling still proved ---------------


def _edit(old: str, new: str) -> str:
    assert S.WGMMA.count(old) >= 1, old
    return S.WGMMA.replace(old, new, 1)


def _new_errors(text: str) -> list[tuple[int, str]]:
    base = _errors(S.WGMMA)
    return [e for e in _errors(text) if e not in base]


def test_exact_layout_stride_edited() -> None:
    text = _edit("((8,2),(4,4)):((4,32),(1,64))", "((8,2),(4,4)):((4,32),(1,48))")
    assert _new_errors(text) == [(S.line_of(text, "((4,32),(1,48))"), "smem-exact-layout")]
    f = [f for f in _proof(text).findings if f.kind == "smem-exact-layout"][0]
    assert f.counterexample["entry"] == "LBO" and f.counterexample["exact"] == 48
    assert f.counterexample["coordinate"] == {"mn": 0, "k": 4}


def test_parameter_edited() -> None:
    text = _edit("| m | 2 |", "| m | 4 |")  # the first example's m
    assert _new_errors(text) == [(S.line_of(text, "| m | 4 |"), "smem-exact-layout")]


def test_encoding_edited() -> None:
    text = _edit("(LBO) >> 4 = 16", "(LBO) >> 4 = 15")
    assert _new_errors(text) == [(S.line_of(text, "(LBO) >> 4 = 15"), "smem-encoding")]
    f = [f for f in _proof(text).findings if f.kind == "smem-encoding"][0]
    assert f.counterexample == {"parameter": "LBO", "bytes": 256, "encoded": 16, "stated": 15}


def test_canonical_table_stride_edited() -> None:
    text = _edit("((8,m),(T,2k)):((4T,SBO),(1,T))", "((8,m),(T,2k)):((2T,SBO),(1,T))")
    assert _new_errors(text) == [(S.line_of(text, "| 64B Swizzling | ((8,m),(T,2k)):((2T"),
                                  "smem-atom-shape")]


def test_example_canonical_stride_edited() -> None:
    text = _edit("Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
                 "Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,SBO),(4T,LBO))")
    assert _new_errors(text) == [(S.line_of(text, "((8,4,2),(8,2)):((1,8,256),(32,512))"),
                                  "smem-exact-layout")]


def test_canonical_lbo_and_sbo_swapped() -> None:
    text = _edit("((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))", "((T,2,m),(8,k)):((1,T,SBO),(2T,LBO))")
    assert _new_errors(text) == [(S.line_of(text, "((1,T,SBO),(2T,LBO))"), "smem-definitions")]
    f = [f for f in _proof(text).findings if f.kind == "smem-definitions"][0]
    assert f.counterexample == {"quantity": "LBO", "definition": "2 rows", "layout": "8 columns"}


def test_definition_edited() -> None:
    text = _edit("The step from the first 8 rows", "The step from the first 16 rows")
    assert {k for _, k in _new_errors(text)} == {"smem-definitions"}


@pytest.mark.parametrize("old,new", [("64\\*sizeof(tf32)", "256"),
                                     ("32\\*sizeof(tf32)", "8\\*4\\*sizeof(tf32)"),
                                     ("Swizzle<2, 4, 3>", "Swizzle<2,4,3>"),
                                     ("((1T,SBO),(1,LBO)) | Swizzle<0",
                                      "((T,SBO),(1,LBO)) | Swizzle<0")])
def test_equivalent_respellings_still_proved(old: str, new: str) -> None:
    assert _new_errors(_edit(old, new)) == []


# ---- the command line ------------------------------------------------------------------------


def _cli(tmp_path, text: str, name: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def,type-arg]
    import contextlib
    import io
    import json

    from formal.cli import main
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    out = tmp_path / "out.json"
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(["prove", str(doc), "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_prove_reads_a_shared_memory_document(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, data = _cli(tmp_path, S.WGMMA, "smem.md")
    assert code == 1
    assert [f["kind"] for f in data["findings"]] == ["smem-injective"]
    smem = [x for x in data["layouts"] if x["instruction"] == "wgmma.smem"]
    assert len(smem) == 3 + 8 + 1  # examples, canonical rows, the descriptor table
    ex = [x for x in smem if x["id"] == "wgmma.smem.example.K-major.none.tf32"][0]
    assert ex["tile"] == [16, 16] and ex["source"] == "text"
    assert {o["name"]: o["status"] for o in ex["obligations"]} == {
        "exact-layout": "proved", "injective": "proved", "in-atom": "proved",
        "encoding": "proved", "hardware": "not-applicable"}
    fixed = S.WGMMA.replace(S.K_32B_TF32, "")
    code, data = _cli(tmp_path, fixed, "fixed.md")
    assert code == 0 and data["findings"] == []  # read, proved: no 'no operand blocks'


def test_prove_catalog_counts_the_shared_memory_layouts(catalog_run: Any) -> None:
    from formal.writers.report import summary
    run = catalog_run
    # 60 layouts, examples and tables, and the 14 K slices of catalog/smem/k-slices.md
    assert len(run.proof.smem) == 60 + 14 and all(r.ok for r in run.proof.smem)
    assert summary(run.proof)["layouts"] == (len(run.proof.results) + 60 + 14
                                             + len(run.proof.scales) + len(run.proof.datapaths))


def test_junit_counts_the_shared_memory_checks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import contextlib
    import io

    from formal.cli import main
    doc = tmp_path / "smem.md"
    doc.write_text(S.WGMMA, encoding="utf-8")
    out = tmp_path / "out.xml"
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(["prove", str(doc), "--format", "junit", "--output", str(out)])
    xml = out.read_text(encoding="utf-8")
    assert code == 1 and 'failures="1"' in xml and 'tests="0"' not in xml
    assert 'name="wgmma.smem.example.K-major.32B.tf32::injective"' in xml


# ---- the descriptor and TMA relations -----------------------------------------------------------


def _instance(family: str, major: str, mode: str, bits: int):  # type: ignore[no-untyped-def]
    text = read_smem(_catalog_text(), "layouts.md")
    return next(i for i in instances(family, text.canonical)
                if (i.major, i.mode, i.bits) == (major, mode, bits))


def test_the_docstring_example_of_the_descriptor_relation() -> None:
    inst = _instance("wgmma", "K", "none", 16)
    assert inst.layout.address((9, 10)) == 404
    d = descriptor_of(inst)
    assert ((d >> 16) & 0x3FFF, (d >> 32) & 0x3FFF, d >> 62) == (8, 16, 0)
    assert DescriptorRead.of("wgmma", d).bit_address("K", 16, 9, 10) == 404 * 8
    assert descriptor_core(inst, d).status == "proved"


@pytest.mark.parametrize(("family", "major", "mode", "bits"), [
    ("wgmma", "K", "none", 16), ("wgmma", "K", "128B", 8), ("wgmma", "MN", "64B", 16),
    ("wgmma", "MN", "none", 16), ("tcgen05", "K", "32B", 4), ("tcgen05", "MN", "128B", 32)])
def test_descriptor_mutations_refuted(family: str, major: str, mode: str, bits: int) -> None:
    inst = _instance(family, major, mode, bits)
    vals = descriptor_values(inst)
    lbo, sbo = "leading dimension byte offset", "stride dimension byte offset"
    lbo = next(k for k in vals if k.startswith(lbo))
    # LBO and SBO written into each other's field
    swapped = pack_descriptor(family, {**vals, lbo: vals[sbo], sbo: vals[lbo]})
    core = descriptor_core(inst, swapped)
    assert core.status == "refuted"
    c = core.cex
    assert c["layout_byte"] == inst.layout.address((c["mn"], c["k"])) != c["descriptor_byte"]
    # another swizzle
    other = "32B" if mode != "32B" else "64B"
    core = descriptor_core(inst, pack_descriptor(
        family, {**vals, "swizzling mode": SWIZZLE_CODES[family][other]}))
    assert core.status == "refuted" and core.cex["layout_byte"] != core.cex["descriptor_byte"]
    # the instruction reading one atom more of K than the layout holds
    rows, cols = read_extent(inst)
    wider = cols + (CHUNKS[mode] * 128 // bits if major == "K" else 8)
    core = descriptor_core(inst, descriptor_of(inst), (rows, wider))
    assert core.status == "refuted" and core.cex["k"] >= cols


def test_every_catalog_descriptor_proved() -> None:
    text = read_smem(_catalog_text(), "layouts.md")
    proof = prove_smem(text, catalog_families=("wgmma", "tcgen05"))
    got = {(r.id, v.name): v.status for r in proof.results for v in r.verdicts
           if v.name in ("descriptor", "tma-swizzle")}
    assert len(got) == 2 * 48
    assert {s for (_, n), s in got.items() if n == "descriptor"} == {"proved"}
    assert got[("wgmma.smem.K-major.none.b16", "tma-swizzle")] == "not-applicable"
    assert got[("wgmma.smem.K-major.128B.b16", "tma-swizzle")] == "proved"


@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_tma_swizzle_is_the_descriptors_and_no_other(mode: str) -> None:
    assert tma_core(mode, mode).status == "proved"
    for other in ("none", "32B", "64B", "128B"):
        if other != mode:
            core = tma_core(mode, other)
            assert core.status == "refuted"
            b = core.cex["byte"]
            assert core.cex["tma"] == tma_swizzle(mode, b) != SWIZZLES[other](b)
    # by hand: 128B, byte 0x1A3 = row 3, chunk 2, byte 3 -> chunk 2 ^ 3 = 1 -> 0x193
    assert tma_swizzle("128B", 0x1A3) == 0x193


def test_the_tma_solver_answers_as_z3s_solver_and_its_model_is_an_address() -> None:
    """``tma_solver`` (the simplifier, then Z3's SMT core): *unsat* where the TMA's swizzle is
    the descriptor's, as ``z3.Solver()`` answers; where it is another's, *sat* with a model
    whose address the two place apart (the model comes back through the simplifier)."""
    import z3

    from formal.prove.smem_descriptor import SWIZZLES, tma_solver
    for mode in ("32B", "64B", "128B"):
        for other in ("none", "32B", "64B", "128B"):
            x = z3.BitVec("x", 32)
            fast, plain = tma_solver(), z3.Solver()
            for s in (fast, plain):
                s.add(tma_swizzle(mode, x) != SWIZZLES[other](x))
            got = fast.check()
            assert got == plain.check() == (z3.unsat if other == mode else z3.sat)
            if got == z3.sat:
                a = fast.model()[x].as_long()
                assert 0 <= a < 1 << 32
                assert tma_swizzle(mode, a) != SWIZZLES[other](a), (mode, other, a)


def test_a_kept_answer_builds_no_z3_term(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The swizzle and TMA-swizzle statements are built only where Z3 is asked: a second run
    takes the first run's kept *unsat* (the enumeration runs again) and makes no Z3 term at
    all, so a warm ``prove`` never starts Z3's context for them."""
    import z3

    from formal.prove.smem_descriptor import SWIZZLES, tma_core
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    modes = [m for m in SWIZZLES if m != "none"]

    def every() -> list[Any]:
        swizzle_core.cache_clear()
        tma_core.cache_clear()
        return [swizzle_core(SWIZZLES[m], m) for m in modes] + [tma_core(m, m) for m in modes]
    first = every()
    assert [c.status for c in first] == ["proved"] * (2 * len(modes))
    monkeypatch.setattr(z3, "BitVec", lambda *a: pytest.fail("a Z3 term was built"))
    assert every() == first
    monkeypatch.undo()
    swizzle_core.cache_clear()
    tma_core.cache_clear()
