"""The wmma fragment section, on a short section of our own written from its facts: register
counts per type, shape and matrix in tables with merged cells, read the same from Markdown,
browser text and Sphinx HTML; each fragment a layout of its own (shape, operand, types) whose
register budget is an obligation, proved (an exact share, whole copies of it) or refuted;
slips as warnings."""

from __future__ import annotations

from pathlib import Path

from formal.api import analyze
from formal.base.source import Finding
from formal.parse.document import parse_document
from formal.prove import Options
from formal.text.read import read_text

from . import renderings as R

OPTS = Options(cross_check="off")

# our words; the counts are the spec's, the .f64 accumulator's "single register" its slip
WMMA = """## 9.7.14.4.1. Matrix Fragments for WMMA

Which element a lane holds is left to the architecture; the counts are these.

Multiplicands (A or B):

| Data-type | Shape | Matrix | Fragment |
| --- | --- | --- | --- |
| `.u8` or `.s8` | `.m16n16k16` | A | TWO_REGS |
| B | TWO_REGS |
|  | `.m8n32k16` | A | SLIPS |

Accumulators (C or D):

| Data-type | Shape | Fragment |
| --- | --- | --- |
| `.s32` | `.m16n16k16` | A vector expression of eight `.s32` registers. |
| `.m8n32k16` |

| Data-type | Matrix | Fragment |
| --- | --- | --- |
| `.f16` | A or B | A vector expression of eight `.f16x2` registers. |

| Data-type | Shape | Matrix | Fragment |
| --- | --- | --- | --- |
| `.f64` | `.m8n8k4` | C or D | A vector expression containing single `.f64` register. |
""".replace("TWO_REGS", "A vector expression of two `.b32` registers, with each register "
            "containing four elements from the matrix.") \
   .replace("SLIPS", "A vector expression containing a two `.b32` registers, with containing "
            "two elements from the matrix.")


def _rows(text: str, name: str) -> list[tuple[tuple[str, ...], tuple[str, ...],
                                              tuple[str, ...], int]]:
    doc = parse_document(read_text(text, name))
    return [(r.types, r.shapes, r.matrices, r.fragment.registers.value)
            for ps in doc.sections if ps.wmma is not None for r in ps.wmma.rows]


def _findings(tmp_path: Path, text: str, name: str) -> list[Finding]:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return list(analyze([p], OPTS).proof.findings)


WANT_ROWS = [
    (("u8", "s8"), ("m16n16k16",), ("A",), 2),
    (("u8", "s8"), ("m16n16k16",), ("B",), 2),  # type and shape merged from above
    (("u8", "s8"), ("m8n32k16",), ("A",), 2),  # the type cell left empty
    (("s32",), ("m16n16k16",), ("C", "D"), 8),  # the matrices from the heading
    (("s32",), ("m8n32k16",), ("C", "D"), 8),  # a shape alone: the fragment merged
    (("f16",), ("m16n16k16", "m8n32k16"), ("A", "B"), 8),  # no shape: the table before's
    (("f64",), ("m8n8k4",), ("C", "D"), 1),
]


def test_merged_cells_take_the_value_above_in_every_rendering() -> None:
    assert _rows(WMMA, "w.md") == WANT_ROWS
    text = R.browser(WMMA).text
    assert "B A vector expression" in text  # a merged row, flattened
    assert _rows(text, "w.txt") == WANT_ROWS
    assert _rows(R.sphinx(WMMA).text, "w.html") == WANT_ROWS
    assert _rows(R.titles_without_numbers(text, ".txt").text, "w.txt") == WANT_ROWS
    # a converted mirror's forms: tables without outer pipes, and the page's raw <table>
    assert _rows(R.bare_tables(WMMA).text, "w.md") == WANT_ROWS
    html = R.html_tables(WMMA).text
    assert "<td><p>B</p></td>" in html
    assert _rows(html, "w.md") == WANT_ROWS


def test_budgets_are_checked_and_slips_are_warnings(tmp_path: Path) -> None:
    for name, text in (("w.md", WMMA), ("w.txt", R.browser(WMMA).text),
                       ("w.html", R.sphinx(WMMA).text)):
        found = _findings(tmp_path, text, name)
        errors = [f for f in found if f.severity == "error"]
        # .f64: 32 lanes x 1 = 32 elements for a 64-cell tile; .f16's 512 elements are two
        # copies of the 16 x 16 tile (replication) and four of m8n32k16's 8 x 16 A: no error
        assert [(f.kind, f.counterexample, f.layout.split(":")[1]) for f in errors] == [
            ("register-budget", {"elements_per_lane": 1, "lanes": 32, "tiles": [[8, 8]]},
             "wmma.m8n8k4.CD.f64")], name
        assert name != "w.md" or errors[0].span.line == 26
        slips = sorted(f.message.split(": ", 1)[1] for f in found if f.kind == "wording")
        assert slips == [
            "'a two' reads as a slip ('two' is meant)",
            "'single' without 'a' reads as a slip ('a single' is meant)",
            "'with containing' reads as a slip ('with each register containing' is meant)"], \
            name
        assert not [f for f in found if f.kind in ("unchecked", "parse", "input")], name


def test_the_section_exits_clean_once_its_count_holds(tmp_path: Path) -> None:
    fixed = WMMA.replace("containing single `.f64` register", "of two `.f64` registers")
    found = _findings(tmp_path, fixed, "w.md")
    assert [f for f in found if f.severity == "error"] == []
    assert len([f for f in found if f.kind == "wording"]) == 2


def _budgets(tmp_path: Path, text: str, name: str) -> dict[str, tuple[str, str]]:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    out = {}
    for r in analyze([p], OPTS).proof.results:
        v = {o.name: o for o in r.verdicts}
        assert v["injective"].status == "not-applicable", r.layout.id  # no map: no formula
        out[r.layout.short_id] = (v["register-budget"].status, v["register-budget"].message)
    return out


def test_every_fragment_is_a_layout_whose_budget_is_an_obligation(tmp_path: Path) -> None:
    """Reported as checks, not only as findings: one layout per row, shape and operand, its
    register budget proved (with the copies of the tile a replicated fragment holds) or
    refuted; the same in every rendering."""
    want = _budgets(tmp_path, WMMA, "w.md")
    assert sorted(want) == sorted([
        "wmma.m16n16k16.A.u8-s8", "wmma.m16n16k16.B.u8-s8", "wmma.m8n32k16.A.u8-s8",
        "wmma.m16n16k16.CD.s32", "wmma.m8n32k16.CD.s32",
        "wmma.m16n16k16.A.f16", "wmma.m16n16k16.B.f16", "wmma.m8n32k16.A.f16",
        "wmma.m8n32k16.B.f16", "wmma.m8n8k4.CD.f64"])
    assert want["wmma.m16n16k16.A.u8-s8"] == (
        "proved", "8 elements a lane x 32 lanes hold the 16 x 16 tile once")
    # .f16 A/B: eight .f16x2 registers are 16 elements a lane, 512 in all -- the 16 x 16 A
    # twice, m8n32k16's 8 x 16 A four times and its 16 x 32 B once
    assert want["wmma.m16n16k16.A.f16"] == (
        "proved", "16 elements a lane x 32 lanes hold the 16 x 16 tile 2 times (replicated)")
    assert want["wmma.m8n32k16.A.f16"][1].endswith("8 x 16 tile 4 times (replicated)")
    assert want["wmma.m8n32k16.B.f16"][1].endswith("16 x 32 tile once")
    assert want["wmma.m8n8k4.CD.f64"][0] == "refuted"
    for name, text in (("w.txt", R.browser(WMMA).text), ("w.html", R.sphinx(WMMA).text)):
        assert _budgets(tmp_path, text, name) == want, name


def test_the_text_report_names_each_fragments_shape(tmp_path: Path) -> None:
    """One wmma section states several shapes: each layout's line names its own (a section of
    one shape, every mma section, leaves it to its title)."""
    from formal.writers.report import report_text
    p = tmp_path / "w.md"
    p.write_text(WMMA, encoding="utf-8")
    lines = [ln.split() for ln in report_text(analyze([p], OPTS).proof).splitlines()
             if ln.startswith("  \u2713") or ln.startswith("  \u2717")]
    assert [ln[1:4] for ln in lines] == [
        ["m16n16k16", "A", ".u8/.s8"], ["m16n16k16", "B", ".u8/.s8"],
        ["m8n32k16", "A", ".u8/.s8"], ["m16n16k16", "C/D", ".s32"],
        ["m8n32k16", "C/D", ".s32"], ["m16n16k16", "A", ".f16"], ["m16n16k16", "B", ".f16"],
        ["m8n32k16", "A", ".f16"], ["m8n32k16", "B", ".f16"], ["m8n8k4", "C/D", ".f64"]]
