"""Block-scale factors of mma.sync: the catalog proved, its selector facts mutated and refuted
with counterexamples, equivalent rewritings proved, the spec's tables read and compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.api import block_scale_catalog, prove_block_scale
from formal.model.block_scale import scale_layouts, spec_tables
from formal.parse.block_scale import read_block_scale, read_line
from formal.prove.block_scale import SCALE_OBLIGATIONS, prove_scale, spec_table_findings

CATALOG = Path(__file__).resolve().parents[1] / "formal" / "catalog" / "block-scale" / "mma-sync.md"
TEXT = CATALOG.read_text(encoding="utf-8")
TITLE_2X = "## Block scaling for mma.m16n8k64 .kind::mxf4 .scale_vec::2X .ue8m0"


def _section(text: str, title: str) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _prove(text: str, which: str, name: str = "mutant.md") -> tuple[dict[str, object], list]:
    """The verdicts of one layout (id ending ``which``) of a catalog text."""
    doc = read_block_scale(text, name)
    lay = next(x for x in scale_layouts(doc) if x.id.endswith(which))
    res, findings = prove_scale(lay)
    return {v.name: v for v in res.verdicts}, findings


def _mutate(old: str, new: str, title: str = TITLE_2X, operand: str = "Scale A") -> str:
    sec = _section(TEXT, title)
    start = sec.index(operand)
    k = sec.index(old, start)
    return sec[:k] + new + sec[k + len(old):]


def test_catalog_reads_five_forms_ten_layouts() -> None:
    doc = block_scale_catalog()
    assert not doc.findings
    assert [(s.shape, s.kind, s.vec, s.stype) for s in doc.sections] == [
        ("m16n8k32", "mxf8f6f4", 1, "ue8m0"), ("m16n8k64", "mxf4", 2, "ue8m0"),
        ("m16n8k64", "mxf4nvf4", 2, "ue8m0"), ("m16n8k64", "mxf4nvf4", 4, "ue8m0"),
        ("m16n8k64", "mxf4nvf4", 4, "ue4m3")]
    lays = scale_layouts(doc)
    assert len(lays) == 10
    assert {lay.tile for lay in lays} == {(16, 1), (1, 8), (16, 2), (2, 8), (16, 4), (4, 8)}


def test_catalog_proved_and_related_to_fragments() -> None:
    proof = prove_block_scale()
    mine = [r for r in proof.results if r.instruction == "mma.block_scale"]
    assert len(mine) == 10
    assert [f.kind for f in proof.findings if f.layout.startswith("mma.")] == ["hardware"] * 10
    for r in mine:
        got = {v.name: v.status for v in r.verdicts}
        assert got == {**{n: "proved" for n in SCALE_OBLIGATIONS[:-1]},
                       "hardware": "unconfirmed"}, r.id
        assert "sm_120a" in r.verdict("hardware").message


def test_the_2x_holdings_named_lane_by_lane() -> None:
    lay = next(x for x in scale_layouts(block_scale_catalog())
               if x.id == "mma.block_scale.m16n8k64.mxf4.2X.ue8m0.scale_A")
    assert lay.byte_ids == (0, 2) and lay.thread_ids == (0, 1)
    held = {(h[0], h[1]): (h[2], h[3]) for h in lay.held(2, 1)}
    # thread_id 1: lanes with %laneid % 4 in {2, 3}; byte_id 2: bytes 2 and 3
    assert held[(6, 2)] == (1, 0) and held[(6, 3)] == (1, 1)
    assert held[(7, 2)] == (9, 0) and held[(7, 3)] == (9, 1)
    assert held[(30, 3)] == (7, 1) and held[(31, 2)] == (15, 0)
    assert {ln for ln, _ in held} == {ln for ln in range(32) if ln % 4 in (2, 3)}
    b = next(x for x in scale_layouts(block_scale_catalog())
             if x.id == "mma.block_scale.m16n8k64.mxf4nvf4.4X.ue4m3.scale_B")
    held_b = {(h[0], h[1]): (h[2], h[3]) for h in b.held(0, 3)}
    assert held_b[(7, 0)] == (0, 1) and held_b[(31, 3)] == (3, 7) and len(held_b) == 32


@pytest.mark.parametrize("old,new", [
    ("", ""),  # the catalog's own program
    ("row    = groupID + 8 * (threadID_in_group & 0x1)",
     "row    = (groupID - 5) / 2 + (i << 70) + (i >> 66)"),
    ("block  = i - byte_id", "block  = i - byte_id + 0 * (1 / (i - byte_id + 1))"),
    ("holder = threadID_in_group >> 1 == thread_id",
     "holder = (%laneid - 7) / 4 % 2 == thread_id"),
    ("block  = i - byte_id", "block  = (i << 40) / 1099511627776 - byte_id"),
])
def test_each_definition_evaluated_over_all_points_equals_the_walk_point_by_point(
        old: str, new: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """model.block_scale evaluates a program once over all (lane, byte) points (numpy); the
    scalar walk is the reference: the same holdings in the same order at every selector pair,
    also for C's truncating division of negatives, a division by zero only at unused bytes,
    shifts past 63 and values past int64."""
    import formal.model.block_scale as B
    sec = read_block_scale(_mutate(old, new) if old else TEXT, "t.md").sections[0 if old else 1]
    op = sec.operands[0]
    defs = {d.name: d for d in op.program.definitions}
    total, walk = 0, B._held_by_point
    if not old:  # the catalog's program is evaluated over arrays, never walked
        monkeypatch.setattr(B, "_held_by_point", None)
    for b in range(4):
        for t in range(4):
            got = B._held(defs, "row", "A", b, t, 4)
            assert got == walk(defs, "row", "A", b, t, 4)
            total += len(got)
    assert total > 0
    if "groupID - 5" in new:  # C truncates: (0 - 5) / 2 is -2, Python's floor -3
        assert B._held(defs, "row", "A", 0, 0, 4)[0] == (0, 0, -2, 0)


@pytest.mark.parametrize("old,new", [
    ("", ""),  # the catalog's own program
    ("row    = groupID + 8 * (threadID_in_group & 0x1)",
     "row    = (groupID - 5) / 2 + (i << 70) + (i >> 66)"),
    ("block  = i - byte_id", "block  = i - byte_id + 0 * (1 / (i - byte_id + 1))"),
    ("block  = i - byte_id", "block  = i - byte_id + 0 * (1 / (byte_id - 2))"),  # one pair's
    ("block  = i - byte_id", "block  = i - byte_id + (thread_id << 31)"),  # past 2**31 at t > 0
    ("holder = threadID_in_group >> 1 == thread_id", "holder = byte_id == thread_id"),
])
def test_every_selector_pair_at_once_equals_pair_by_pair(
        old: str, new: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """model.block_scale evaluates a program over every selector pair at once; pair by pair
    (``_held``, which walks where arrays cannot say) is the reference: the same layouts, the
    same faults, for the catalog and for programs where some pair divides by zero or passes
    2**31 (then every pair is asked on its own)."""
    import formal.model.block_scale as B
    doc = read_block_scale(_mutate(old, new) if old else TEXT, "t.md")
    at_once = scale_layouts(doc)
    monkeypatch.setattr(B, "_held_at_every_pair", lambda *a: None)
    assert scale_layouts(doc) == at_once
    assert all(lay.every or lay.faults for lay in at_once)
    if "byte_id - 2" in new:
        assert at_once[0].faults and "/ by zero" in at_once[0].faults[0].message


def test_row_formula_mutated_collides_with_counterexample() -> None:
    text = _mutate("row    = groupID + 8 * (threadID_in_group & 0x1)", "row    = groupID")
    v, findings = _prove(text, "scale_A")
    cov = v["scale-coverage"]
    assert cov.status == "refuted"
    assert cov.counterexample == {"selector": [0, 0], "a": {"lane": 0, "byte": 0},
                                  "b": {"lane": 1, "byte": 0}, "cell": [0, 0]}
    assert any(f.kind == "block-scale-scale-coverage" and "lane 0 byte 0 and lane 1 byte 0"
               in f.message for f in findings)
    assert v["selector-range"].status == "refuted"  # no thread selector covers exactly


def test_byte_selector_range_mutated() -> None:
    text = _mutate("byte_id   = {0, 2}", "byte_id   = {0, 1, 2}")
    v, findings = _prove(text, "scale_A")
    sel = v["selector-range"]
    assert sel.status == "refuted"
    assert sel.counterexample["admitted"] == {"byte_id": [0, 2], "thread_id": [0, 1]}
    assert "admits {0, 2}" in sel.message
    assert sel.span is not None and sel.span.line == 6  # the byte_id line of the section


def test_byte_selector_past_the_register() -> None:
    text = _mutate("byte_id   = {0, 2}", "byte_id   = {0, 3}")
    v, _ = _prove(text, "scale_A")
    assert v["register-budget"].status == "refuted"
    assert "byte 4" in v["register-budget"].message
    assert v["scale-coverage"].status == "refuted"


def test_b_holder_mutated_two_lanes_a_column() -> None:
    text = _mutate("holder = threadID_in_group == thread_id",
                   "holder = threadID_in_group >> 1 == thread_id", operand="Scale B")
    v, _ = _prove(text, "scale_B")
    cex = v["scale-coverage"].counterexample
    assert cex == {"selector": [0, 0], "a": {"lane": 0, "byte": 0}, "b": {"lane": 1, "byte": 0},
                   "cell": [0, 0]}


def test_used_bytes_mutated_leaves_a_block_uncovered() -> None:
    text = _mutate("used   = byte_id <= i < byte_id + 2", "used   = byte_id <= i < byte_id + 1")
    v, _ = _prove(text, "scale_A")
    assert v["scale-coverage"].counterexample == {"selector": [0, 0], "uncovered": [0, 1]}
    assert v["register-budget"].status == "refuted"


def test_stated_shape_mutated() -> None:
    text = _mutate("scale_A is 16 x 2", "scale_A is 16 x 4")
    v, _ = _prove(text, "scale_A")
    assert v["tile-shape"].counterexample == {"stated": [16, 4], "expected": [16, 2]}
    assert v["scale-coverage"].counterexample == {"selector": [0, 0], "uncovered": [0, 2]}


@pytest.mark.parametrize("old,new", [
    ("row    = groupID + 8 * (threadID_in_group & 0x1)",
     "row    = (%laneid >> 2) + ((%laneid & 1) << 3)"),
    ("holder = threadID_in_group >> 1 == thread_id", "holder = %laneid % 4 / 2 == thread_id"),
    ("used   = byte_id <= i < byte_id + 2", "used   = byte_id - 1 < i <= byte_id + 1"),
    ("block  = i - byte_id", "block  = i & 0x1"),
])
def test_equivalent_rewritings_proved(old: str, new: str) -> None:
    v, findings = _prove(_mutate(old, new), "scale_A")
    assert not [f for f in findings if f.fails]
    assert all(v[n].status == "proved" for n in SCALE_OBLIGATIONS[:4])


def test_rows_rotated_breaks_quad_locality_only() -> None:
    from formal.model.cells import cells
    from formal.model.resolve import catalog_model
    a = next(f for f in catalog_model(False).layouts
             if f.instruction == "mma" and str(f.shape) == "m16n8k64" and f.operand == "A"
             and "e2m1" in f.types)
    text = _mutate("row    = groupID + 8 * (threadID_in_group & 0x1)",
                   "row    = (groupID + 1) % 8 + 8 * (threadID_in_group & 0x1)")
    lay = next(x for x in scale_layouts(read_block_scale(text, "m.md")) if x.operand == "A")
    res, _ = prove_scale(lay, cells(a))
    assert res.verdict("scale-coverage").status == "proved"
    loc = res.verdict("quad-locality")
    assert loc.status == "refuted"
    # lane 0 holds A's row 0; its scale factor (0, 0) now comes from lane 28 (quad 7)
    assert loc.counterexample == {"selector": [0, 0], "lane": 0, "element": 0, "at": [0, 0],
                                  "scale": [0, 0], "holder": 28}


def test_an_undefined_name_is_a_fault_not_a_crash() -> None:
    text = _mutate("block  = i - byte_id", "block  = i - byte_idx")
    doc = read_block_scale(text, "m.md")
    lay = next(x for x in scale_layouts(doc) if x.operand == "A")
    res, findings = prove_scale(lay)
    assert res.verdict("scale-coverage").status == "error"
    assert any("byte_idx" in f.message for f in findings)


SPEC_MD = """\
Table 35 Shapes for scale matrices

| .scale\\_vec\\_size | Shape of scale\\_A | Shape of scale\\_B |
| --- | --- | --- |
| `.scale_vec::1X` | M x 1 | 1 x N |
| `.scale_vec::2X` | M x 2 | 2 x N |
| `.scale_vec::4X` | M x 4 | 4 x N |

| .kind::\\* | Element Data Type | Scale Data Type .stype | .scale\\_vec\\_size |
| --- | --- | --- | --- |
| `.kind::mxf8f6f4` | `.e4m3`, `.e5m2` `.e3m2`, `.e2m3` `.e2m1` | `.ue8m0` | `.scale_vec::1X` |
| `.kind::mxf4` | `.e2m1` | `.ue8m0` | `.scale_vec::2X` |
| `.kind::mxf4nvf4` | `.e2m1` | `.ue8m0` | `.scale_vec::2X`, `.scale_vec::4X` |
| `.e2m1` | `.ue4m3` | `.scale_vec::4X` |

| byte-id-a | thread-id-a | byte-id-b | thread-id-b |
| `scale_vec::1X` | [0, 1, 2, 3] | [0, 1] | [0, 1, 2, 3] | [0, 1, 2, 3] |
| `scale_vec::2X` | [0, 2] | [0, 2] |
| `scale_vec::4X` | 0 | 0 |
"""


def test_spec_tables_read_and_agree() -> None:
    doc = read_block_scale(SPEC_MD, "spec.md")
    t = spec_tables(doc)
    assert [(v, a, b) for v, a, b, _ in t.shapes] == [
        (1, ("M", 1), (1, "N")), (2, ("M", 2), (2, "N")), (4, ("M", 4), (4, "N"))]
    assert [(k, s, v) for k, _t, s, v, _ in t.forms] == [
        ("mxf8f6f4", "ue8m0", 1), ("mxf4", "ue8m0", 2), ("mxf4nvf4", "ue8m0", 2),
        ("mxf4nvf4", "ue8m0", 4), ("mxf4nvf4", "ue4m3", 4)]
    # the 2X and 4X rows' thread-id cells span from the 1X row
    assert [(v, lists) for v, lists, _ in t.selectors][1] == (2, ((0, 2), (0, 1), (0, 2),
                                                                 (0, 1, 2, 3)))
    assert spec_table_findings(t, scale_layouts(block_scale_catalog())) == []


def test_spec_table_edits_refuted_on_their_line() -> None:
    lays = scale_layouts(block_scale_catalog())
    bad = SPEC_MD.replace("| `scale_vec::2X` | [0, 2] | [0, 2] |",
                          "| `scale_vec::2X` | [0, 1] | [0, 2] |")
    found = spec_table_findings(spec_tables(read_block_scale(bad, "s.md")), lays)
    assert len(found) == 2  # mxf4 and mxf4nvf4 scale_A at 2X
    assert all(f.span.line == 18 and "byte-id {0, 1}" in f.message for f in found)
    bad = SPEC_MD.replace("| `.scale_vec::4X` | M x 4 | 4 x N |",
                          "| `.scale_vec::4X` | M x 4 | 2 x N |")
    found = spec_table_findings(spec_tables(read_block_scale(bad, "s.md")), lays)
    assert found and found[0].span.line == 7 and "2 x N" in found[0].message


def test_grammar_reads_the_catalog_lines() -> None:
    assert read_line("Block scaling for mma.m16n8k64 .kind::mxf4nvf4 .scale_vec::4X .ue4m3",
                     "scale_title") == ("title", "m16n8k64", "mxf4nvf4", 4, "ue4m3")
    assert read_line("Scale B: scale_B is 4 x 8, one .b32 register of four .ue4m3 bytes.",
                     "scale_decl") == ("decl", "B", "scale_B", 4, 8, 1, "b32", 4, "ue4m3")
    assert read_line("Scale B: scale_B is 4 by 8", "scale_decl") is None


# ---- kernels: every legal form written and assembled for sm_120a (compile-only) ------------

HAS_PTXAS = __import__("shutil").which("ptxas") is not None


def test_every_legal_form_has_kernels_with_selectors_from_memory() -> None:
    from formal.base.matrix_variants import BLOCK_SCALE_VARIANTS
    from formal.execute import ptx
    assert len(BLOCK_SCALE_VARIANTS) == 25 + 4  # mxf8f6f4: 5 x 5 types; the e2m1 forms
    forms = {(v.kind, v.shape, v.scale_vec, v.scale) for v in BLOCK_SCALE_VARIANTS}
    proved = {(lay.kind, lay.shape, lay.vec, lay.stype)
              for lay in scale_layouts(block_scale_catalog())}
    assert forms == proved  # one vocabulary: the rows are the proved forms
    v = next(x for x in BLOCK_SCALE_VARIANTS if x.scale == "ue4m3")
    assert v.key == "mma.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue4m3"
    assert (v.words("A"), v.words("B"), v.words("S")) == (4, 2, 3)
    text = ptx.module(v).text
    assert ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X"
            ".f32.e2m1.e2m1.f32.ue4m3") in text
    assert "%w10, {%hs0, %hs1}, %w11, {%hs2, %hs3};" in text  # scale data, then selectors
    assert "bfe.u32 %sel3, %w12, 24, 8;" in text
    f6 = next(x for x in BLOCK_SCALE_VARIANTS if x.kind == "mxf8f6f4" and x.a == "e2m1")
    assert f6.words("A") == 4  # kind::mxf8f6f4 keeps e2m1 in byte containers


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_every_legal_form_assembles_for_sm_120a_only() -> None:
    from formal.base.matrix_variants import BLOCK_SCALE_VARIANTS
    from formal.execute import ptx
    res = ptx.check(BLOCK_SCALE_VARIANTS, ["sm_120a", "sm_90a"], jobs=2)
    by = {(r.variant.key, r.arch): r for r in res}
    for v in BLOCK_SCALE_VARIANTS:
        assert by[(v.key, "sm_90a")].status == "skipped"
        r = by[(v.key, "sm_120a")]
        if v.ptx > (9, 0) and r.status == "skipped":  # a ptxas older than PTX ISA 9.1
            assert "needs PTX ISA 9.1" in r.detail, r.detail
        else:
            assert r.status == "ok", (v.key, r.detail[:300])
    # the form PTX ISA 9.1 added, written for 9.0, is refused by ptxas
    v = next(x for x in BLOCK_SCALE_VARIANTS if x.scale_vec == 4 and x.scale == "ue8m0")
    ok, msg = ptx.assemble(ptx.module(v).text.replace(".version 9.1", ".version 9.0"), "sm_120a")
    assert not ok and "scale_vec::4X" in msg


# ---- ptxlayout show: the forum's question in one command --------------------------------------


def test_show_the_forum_question_names_the_nearest_legal_form(
        capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "mma.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale"
                       ".scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0"])
    out, err = capsys.readouterr()
    assert rc == 1  # no such legal form: said, and the nearest drawn
    assert ".kind::mxf8f6f4 takes .m16n8k32, not .m16n8k64" in err
    assert ".kind::mxf8f6f4 takes .scale_vec::1X, not .scale_vec::2X" in err
    assert ".m16n8k64 .scale_vec::2X .ue8m0 is .kind::mxf4 or .kind::mxf4nvf4" in err
    assert "kind::mxf4.block_scale.scale_vec::2X (.ue8m0)," in out  # one drawing for both
    lines = out.splitlines()
    # thread-id-a = 1, byte-id-a = 2: row 9's blocks 0 and 1 are bytes 2 and 3 of lane 7
    k = lines.index("thread-id-a = 1 (lanes with %laneid % 4 in {2, 3})")
    row9 = next(ln for ln in lines[k:] if ln.startswith("row  9"))
    assert row9.split() == ["row", "9", "T7.b0", "T7.b1", "T7.b2", "T7.b3"]
    assert "hardware: unconfirmed (not run: block-scaled mma.sync needs sm_120a" in out
    assert out.count("proved: scale-coverage, selector-range, register-budget, tile-shape, "
                     "quad-locality") == 2


def test_show_a_legal_form_one_operand(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    rc = main(["show", "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64"
                       ".row.col.f32.e2m1.e2m1.f32.ue4m3.scale_B"])
    out, err = capsys.readouterr()
    assert rc == 0 and not err
    assert "scale_B (4 x 8): byte-id-b in {0}, thread-id-b in {0, 1, 2, 3}" in out
    assert "scale_A" not in out
    lines = out.splitlines()
    k = lines.index("thread-id-b = 3 (lanes with %laneid % 4 in {3})")
    assert lines[k + 5].split() == ["byte-id-b", "=", "0,", "block", "3", "T3.b3", "T7.b3",
                                    "T11.b3", "T15.b3", "T19.b3", "T23.b3", "T27.b3", "T31.b3"]


# ---- ptxlayout prove: a document's block-scale sections and tables, in the JSON contract ---


def _prove_json(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    import json

    from formal.cli import main
    rc = main(["prove", str(path), "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def _schema_ok(data: dict) -> None:
    import json
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schema" /
                         "prove.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)


def test_prove_the_catalog_document(capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = _prove_json(CATALOG, capsys)
    assert rc == 0
    _schema_ok(data)
    assert data["summary"]["layouts"] == 10 and data["summary"]["layouts_proved"] == 10
    lay = data["layouts"][2]
    assert (lay["instruction"], lay["operand"], lay["shape"], lay["tile"], lay["types"]) == \
        ("mma.block_scale", "scale_A", "m16n8k64", [16, 2], ["ue8m0"])
    assert [f["kind"] for f in data["findings"]] == ["hardware"] * 10  # no error, no unchecked


@pytest.mark.parametrize("rendering", ["md", "txt"])
def test_prove_the_spec_renderings(tmp_path: Path, rendering: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The spec's tables, as Markdown and as a plain-text scrape, agree with the layouts; a
    mutated selector row is refuted on its line."""
    def render(md: str) -> str:
        if rendering == "md":
            return md
        # a scrape flattens the rows into their cells
        return "\n".join(ln.replace("|", " ").replace("`", "").replace("\\", "")
                         for ln in md.splitlines() if "---" not in ln)

    doc = tmp_path / f"spec.{rendering}"
    doc.write_text(render(SPEC_MD), encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    _schema_ok(data)
    assert rc == 0 and data["findings"] == []
    (entry,) = data["layouts"]
    assert entry["operand"] == "scale_A/B" and entry["shape"] == "tables"
    assert {o["name"]: o["status"] for o in entry["obligations"]} == {
        "tile-shape": "proved", "legal-forms": "proved", "selector-range": "proved",
        "hardware": "not-applicable"}
    doc.write_text(render(SPEC_MD.replace("[0, 2] | [0, 2]", "[0, 2] | [0, 1]")),
                   encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    _schema_ok(data)
    assert rc == 1
    lines = {f["line"] for f in data["findings"]}
    assert lines == {18 if rendering == "md" else 16}
    assert all("byte-id {0, 1}" in f["message"] for f in data["findings"])


# ---- the harness: one trial per scale factor, on a fake device ---------------------------------


@pytest.mark.parametrize("form,checked", [
    ("mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.f32.e3m2.e2m1", 16 * (16 + 8)),
    ("mxf4.block_scale.scale_vec::2X", 8 * (32 + 16)),
    ("mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue4m3", 4 * (64 + 32)),
])
def test_the_harness_checks_every_factor_at_every_selector(form: str, checked: int) -> None:
    from formal.api import block_scale_form_maps as scale_maps
    from formal.execute.block_scale import check_scale_layouts, one_hot_trials
    v, a, b, d = scale_maps(form)
    n, faults = check_scale_layouts(v, a, b, d)
    assert (n, faults) == (checked, [])
    # the trials are the kernel's memory layout: A, B, C words, then the scale words
    t = one_hot_trials(v, a, b, (0, 1, 0, 3))
    assert t.inputs.shape[1:] == (32, sum(v.words(o) for o in "ABCS"))
    assert int(t.inputs[0, 0, -1]) == (1 << 8) | (3 << 24)  # thread-id-a 1, thread-id-b 3


def test_the_harness_names_a_misplaced_factor() -> None:
    from formal.api import block_scale_form_maps as scale_maps
    from formal.execute.block_scale import FakeScaleDevice, ScaleMap, check_scale_layouts
    v, a, b, d = scale_maps("mxf4.block_scale.scale_vec::2X")
    # a device that reads the even lane of each pair as row groupID + 8, the odd as groupID
    swapped = {sel: tuple((ln, by, (r + 8) % 16, c) for ln, by, r, c in ps)
               for sel, ps in a.places.items()}
    dev = FakeScaleDevice(v, ScaleMap("A", a.tile, swapped), b, d)
    n, faults = check_scale_layouts(v, a, b, d, dev)
    assert n == 384 and len(faults) == 8 * 32  # every scale_A factor, at every selector
    k = 2  # marking (row 1, block 0): D's row 9 doubles its block instead of row 1
    assert faults[k] == {"selector": [0, 0, 0, 0], "factor": {"operand": "A", "row": 1,
                         "col": 0}, "lane": 4, "element": 0, "d": [1, 0], "got": 64.0,
                         "want": 96.0}


# ---- CuTe's SM120 block-scaled atoms, an independent transcription -----------------------------


def _include() -> str:
    from formal.audit import installed_include
    inc = installed_include()
    if inc is None:
        pytest.skip("the nvidia-cutlass wheel is not installed")
    return inc


def test_cute_sm120_scale_layouts_equal_the_spec() -> None:
    from formal.audit.scale import audit_scale
    got = audit_scale(_include(), scale_layouts(block_scale_catalog()))
    assert len(got) == 10  # 16x8x32 at VS 32 (1X); 16x8x64 at VS 32 (2X: 2 forms), 16 (4X: 2)
    assert {(c.atom, c.operand, c.vs, c.verdict) for c in got} == {
        ("SM120_16x8x32_TN_VS", "A", 32, "equal"), ("SM120_16x8x32_TN_VS", "B", 32, "equal"),
        ("SM120_16x8x64_TN_VS", "A", 32, "equal"), ("SM120_16x8x64_TN_VS", "B", 32, "equal"),
        ("SM120_16x8x64_TN_VS", "A", 16, "equal"), ("SM120_16x8x64_TN_VS", "B", 16, "equal")}
    a = next(c for c in got if c.operand == "A" and c.vs == 16)
    assert a.cute == "((2,2,8),64):((8,0,1),16)"
    # CuTe's 0 stride gives the pair's rows to lanes 2, 3 of each quad too: not read at tid 0
    assert a.ignored_lanes == tuple(ln for ln in range(32) if ln % 4 in (2, 3))


def test_cute_difference_named_by_cells(tmp_path: Path) -> None:
    """A header whose SFALayout puts lane bit 0 on row + 4 (not + 8) differs from the spec,
    lane by lane, byte by byte."""
    from formal.audit.scale import HEADER, audit_scale
    src = (Path(_include()) / HEADER).read_text(encoding="utf-8")
    bad = src.replace("Stride<Stride<_8,_0,_1>,_16>>", "Stride<Stride<_4,_0,_1>,_16>>")
    assert bad != src
    (tmp_path / HEADER).parent.mkdir(parents=True)
    (tmp_path / HEADER).write_text(bad, encoding="utf-8")
    got = audit_scale(tmp_path, scale_layouts(block_scale_catalog()))
    a = next(c for c in got if c.operand == "A" and c.vs == 32 and "mxf4." in c.spec)
    assert a.verdict == "differs"
    assert a.differences[0] == {"lane": 1, "byte": 0, "spec": [8, 0], "cute": [4, 0]}
    assert all(c.verdict == "equal" for c in got if c.operand == "B")


def _html(rows: list[list[str]]) -> str:
    """A Sphinx-like page: one table, a row's cells over several lines, rowspans omitted."""
    body = []
    for cells in rows:
        body.append('<tr class="row-even">' + "".join(
            f'\n<td><p><code class="docutils literal notranslate"><span class="pre">{c}'
            f"</span></code></p></td>" for c in cells) + "\n</tr>")
    return ('<!DOCTYPE html>\n<html><body><section id="s">\n<h3>9.7.14.3. Block Scaling for '
            "mma.sync</h3>\n<table>\n<tbody>\n" + "\n".join(body) +
            "\n</tbody>\n</table>\n</section></body></html>\n")


def test_prove_the_spec_tables_in_html(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[".scale_vec::1X", "M x 1", "1 x N"], [".scale_vec::2X", "M x 2", "2 x N"],
            ["scale_vec::1X", "[0, 1, 2, 3]", "[0, 1]", "[0, 1, 2, 3]", "[0, 1, 2, 3]"],
            ["scale_vec::2X", "[0, 2]", "[0, 2]"]]
    doc = tmp_path / "spec.html"
    doc.write_text(_html(rows), encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    assert rc == 0 and data["findings"] == []
    assert {o["name"]: o["status"] for o in data["layouts"][0]["obligations"]}["selector-range"] \
        == "proved"
    rows[1] = [".scale_vec::2X", "M x 2", "1 x N"]
    doc.write_text(_html(rows), encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    assert rc == 1
    f = data["findings"][0]
    assert (f["line"], f["kind"]) == (12, "block-scale-table")  # the row's first cell
    assert "do not cut K into 2 blocks" in f["message"]


# ---- tcgen05.mma's scale-factor figures: what their headings and captions state ----------------

TC = """\
### 1.2.4. Layout of the Scale Factor A Matrix for block32 with K=96 \
(Semantically equivalent to scale_vec::3X)

Figure 7 Layout of scale factor A matrix with block32 with K=96 with SFA_ID=00

Figure 8 Layout of scale factor A matrix with block32 with K=96 with SFA_ID=01

Figure 9 Layout of scale factor A matrix with block32 with K=96 with SFA_ID=11

### 1.3.1. Layout of the Scale Factor B Matrix for scale_vec::2X/block32 with K=64/K=128

Figure 10 Layout of scale factor B matrix with scale_vec::2X/block32 with K=64/K=128 with SFB_ID=10
"""


def test_tcgen05_captions_read_and_checked(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "tc.md"
    doc.write_text(TC, encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    _schema_ok(data)
    assert rc == 0  # a warning only: where factors past the word go is the figures' to say
    (entry,) = data["layouts"]
    assert entry["instruction"] == "tcgen05.block_scale"
    got = {o["name"]: (o["status"], o["counterexample"]) for o in entry["obligations"]}
    assert got["selector-names"] == ("proved", None)
    assert got["sub-column-fit"] == ("refuted", {"factors": 3, "selector": [3],
                                                 "figures": [9]})
    (f,) = data["findings"]
    assert (f["severity"], f["kind"], f["line"]) == ("warning", "block-scale-fit", 1)
    # a B figure that names A's selector: one error for the slip, at its caption
    doc.write_text(TC.replace("SFB_ID=10", "SFA_ID=10"), encoding="utf-8")
    rc, data = _prove_json(doc, capsys)
    assert rc == 1
    err = next(f for f in data["findings"] if f["severity"] == "error")
    assert (err["kind"], err["line"], err["counterexample"]) == (
        "block-scale-caption", 11, {"figures": [10]})
    assert "name the selector SFA_ID; the matrix's own selector is SFB_ID" in err["message"]


def _locality_by_dict(lay, fragment, k):  # type: ignore[no-untyped-def]
    """``locality_core``'s walk, one dict lookup an element and selector pair: its answer."""
    block = k // lay.vec
    elements = []
    for (_sel, lane, i), vals in sorted(fragment.items()):
        r, c = int(vals[0]), int(vals[1])
        elements.append((lane, i, r, c, (r, c // block) if lay.operand == "A"
                         else (r // block, c)))
    for (b, t), hs in lay.holdings:
        who = {(h[2], h[3]): h[0] for h in hs}
        for lane, i, r, c, cell in elements:
            src = who.get(cell)
            if src is None or src // 4 != lane // 4:
                return {"selector": [b, t], "lane": lane, "element": i, "at": [r, c],
                        "scale": list(cell), "holder": src}
    return None


def test_quad_locality_over_arrays_answers_as_the_walk() -> None:
    """``locality_core`` checks every element at once (numpy) and names the first fault
    the walk names: the catalog's layouts, and each moved to other lanes, with a factor
    dropped, held twice or held at a cell past the matrix."""
    import dataclasses
    import random

    from formal.model.cells import cells
    from formal.model.resolve import catalog_model
    from formal.prove.block_scale import locality_core
    frags = catalog_model(False).layouts
    want = {"mxf8f6f4": "e4m3", "mxf4": "e2m1", "mxf4nvf4": "e2m1"}
    rng = random.Random(7)
    checked = refuted = 0
    for lay in scale_layouts(block_scale_catalog()):
        frag = next(cells(f) for f in frags if f.instruction == "mma" and str(f.shape) ==
                    lay.shape and f.operand == lay.operand and want[lay.kind] in f.types)
        k = int(lay.shape.split("k")[1])
        variants = [lay]
        for how in ("lanes", "drop", "twice", "past"):
            every = []
            for sel, held in lay.every:
                hs = list(held)
                if not hs:
                    every.append((sel, held))
                    continue
                j = rng.randrange(len(hs))
                if how == "lanes":
                    hs[j] = ((hs[j][0] + 4 * rng.randrange(1, 8)) % 32, *hs[j][1:])
                elif how == "drop":
                    del hs[j]
                elif how == "twice":
                    hs.append((rng.randrange(32), *hs[j][1:]))
                else:
                    hs[j] = (*hs[j][:2], hs[j][2] + 1000, hs[j][3])
                every.append((sel, tuple(hs)))
            variants.append(dataclasses.replace(lay, every=tuple(every)))
        moved = dict(frag)  # one element of the fragment moved 8 rows down (another quad's)
        key = rng.choice(sorted(moved))
        moved[key] = ((moved[key][0] + 8) % lay.tile[0] if lay.operand == "A"
                      else moved[key][0], *moved[key][1:])
        for v, f in [*((v, frag) for v in variants), (lay, moved)]:
            core = locality_core(v, f, k)
            walk = _locality_by_dict(v, f, k)
            assert (core.status, core.cex) == ("proved" if walk is None else "refuted", walk)
            checked += 1
            refuted += walk is not None
    assert checked == 60 and refuted >= 30
