"""Every rendering of the seeds reads to the seed's own findings; every planted erratum is
found on its line (tests/renderings.py makes the documents from ../shared/seeds at test time).

The expectation is the seed itself: its errors, by kind and line, are what each rendering must
report -- no more (a false alarm) and no fewer (a missed erratum) -- with the lines traced back
through the rendering's ``origin``.  The seeds' own findings are pinned by test_read_spec and
README.md (tests/test_docs.py); here only their invariance is asserted."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from formal.api import analyze
from formal.base.source import Finding
from formal.prove import Options

from . import renderings as R
from .conftest import seed_path

SEEDS = ("000", "001", "002", "003", "004")
OPTS = Options(cross_check="off")


def _seed(prefix: str) -> tuple[str, bool]:
    text = seed_path(prefix).read_text(encoding="utf-8")
    return text, text.lstrip().startswith("#")


def _prove(tmp_path: Path, name: str, text: str, suffix: str) -> list[Finding]:
    p = tmp_path / f"{name}{suffix}"
    p.write_text(text, encoding="utf-8")
    return list(analyze([p], OPTS).proof.findings)


def _errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def _by_line(findings: list[Finding],
             origin: R.Rendering | None = None) -> Counter[tuple[str, int]]:
    return Counter((f.kind, origin.seed_line(f.span.line) if origin else f.span.line)
                   for f in _errors(findings))


def _by_layout(findings: list[Finding]) -> Counter[tuple[str, str]]:
    return Counter((f.kind, f.layout.split(":", 1)[-1]) for f in _errors(findings))


def _facts(tmp_path: Path, name: str, text: str, suffix: str) -> dict[str, tuple]:
    p = tmp_path / f"{name}{suffix}"
    p.write_text(text, encoding="utf-8")
    out = {}
    for lay in analyze([p], OPTS).model.layouts:
        fr = lay.table.fragment if lay.table is not None else None
        if fr is None:
            continue
        per = fr.per_register.value if fr.per_register is not None else \
            (fr.total.value // fr.registers.value if fr.total is not None else None)
        out[lay.short_id] = (fr.registers.value, fr.register_kind, per, tuple(sorted(fr.types)),
                             fr.nonzero, fr.out_of.value if fr.out_of else 0)
    return out


@pytest.fixture(scope="module")
def seed_findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Finding]]:
    tmp = tmp_path_factory.mktemp("seeds")
    out = {}
    for prefix in SEEDS:
        text, md = _seed(prefix)
        out[prefix] = _prove(tmp, prefix, text, ".md" if md else ".txt")
    return out


@pytest.mark.parametrize("prefix", SEEDS)
def test_every_rendering_reads_to_the_seeds_findings(
        prefix: str, tmp_path: Path, seed_findings: dict[str, list[Finding]]) -> None:
    text, md = _seed(prefix)
    want_lines = _by_line(seed_findings[prefix])
    want_layouts = _by_layout(seed_findings[prefix])
    for r in R.renderings(text, md):
        got = _prove(tmp_path, r.name, r.text, r.suffix)
        if not r.origin:  # HTML: compare by layout
            assert _by_layout(got) == want_layouts, r.name
            continue
        want = Counter(want_lines)
        if r.missing_lists:
            # a row that lost its element list can no longer show the list's own erratum
            gone = {r.seed_line(k) for k in r.missing_lists}
            want = Counter({k: v for k, v in want.items()
                            if not (k[0] == "element-list" and k[1] in gone)})
        assert _by_line(got, r) == want, (r.name, [f.format() for f in _errors(got)])


@pytest.mark.parametrize("prefix", SEEDS)
def test_every_paraphrase_reads_to_the_same_facts(
        prefix: str, tmp_path: Path, seed_findings: dict[str, list[Finding]]) -> None:
    text, md = _seed(prefix)
    suffix = ".md" if md else ".txt"
    want_facts = _facts(tmp_path, "seed", text, suffix)
    assert want_facts, "the seed states no fragment sentence"
    want = _by_line(seed_findings[prefix])
    for r in R.paraphrases(text, suffix):
        got = _prove(tmp_path, r.name, r.text, r.suffix)
        assert _by_line(got) == want, (r.name, [f.format() for f in _errors(got)])
        assert _facts(tmp_path, r.name, r.text, r.suffix) == want_facts, r.name


@pytest.mark.parametrize("prefix", SEEDS)
def test_every_planted_erratum_is_found_on_its_line(
        prefix: str, tmp_path: Path, seed_findings: dict[str, list[Finding]]) -> None:
    text, md = _seed(prefix)
    suffix = ".md" if md else ".txt"
    seed_lines = {line for _k, line in _by_line(seed_findings[prefix])}
    for r in R.errata(text, suffix):
        assert r.planted, r.name
        got = _errors(_prove(tmp_path, r.name, r.text, r.suffix))
        lines = {f.span.line for f in got}
        missed = [k for k in r.planted if k not in lines]
        assert not missed, (r.name, missed, [f.format() for f in got])
        stray = [f.format() for f in got if f.span.line not in r.planted
                 and f.span.line not in seed_lines]
        assert not stray, (r.name, stray)


# ---- the generator itself, on sentences of our own --------------------------------------------


def test_facts_of_reads_each_seed_form() -> None:
    f = R.facts_of("A vector expression containing two .b32 registers, with each register "
                   "containing four .u8 / .s8 elements from the matrix A.")
    assert f == R.Facts(2, "b32", 4, ("u8", "s8"), matrix="A")
    f = R.facts_of("A vector expression containing four .s32 registers, containing four .s32 "
                   "elements from the matrix C (or D).")
    assert f == R.Facts(4, "s32", 1, ("s32",), matrix="C")
    f = R.facts_of("A vector expression of two .s32 registers.")
    assert f == R.Facts(2, "s32", 1, ("s32",))
    f = R.facts_of("A vector expression containing two `.b32` registers, with each register "
                   "containing two non-zero `.f16` / `.bf16` elements out of 4 consecutive "
                   "elements from matrix A.")
    assert f == R.Facts(2, "b32", 2, ("f16", "bf16"), True, 4, "A", ticked=True)


def test_say_round_trips_through_facts_of() -> None:
    f = R.Facts(2, "b32", 4, ("u8", "s8"), matrix="A")
    for k in range(R.FORMS):
        form = R.forms_for(f, k)
        s = R.say(f, form)
        if form.clause in ("per", "total") and R._INTROS[form.intro] != "containing of":
            assert R.facts_of(s.replace("holding", "containing")
                              .replace("each of them", "each")) == f, s


def test_the_renderings_keep_their_origins() -> None:
    md = "# 1.2. T\n\n```\nrow =   g   for a0\n        g + 8   for a1\n```\n"
    r = R.double_spaced(md)
    assert r.text.split("\n")[3:7] == ["row = g for a0", "", " g + 8 for a1", ""]
    assert r.seed_line(4) == 4 and r.seed_line(6) == 5 and r.seed_line(5) == 0
    g = R.glued("col = groupID\n\nAccumulators (C or D):\nx\n")
    assert g.text.split("\n")[0] == "col = groupIDAccumulators (C or D):"
    assert g.seed_line(2) == 4


@pytest.mark.parametrize("prefix", SEEDS)
def test_damaged_headings_drop_no_formula_without_a_finding(prefix: str) -> None:
    """Titles without their numbers, or removed: the sections no longer open, and every
    formula line is named by an error finding (tests/fuzzkit.check_nothing_dropped)."""
    from . import fuzzkit as fk

    text, md = _seed(prefix)
    for r in R.headings_damaged(text, ".md" if md else ".txt"):
        name = f"doc{r.suffix}"
        raw = r.text.encode("utf-8")
        from formal import catalog
        from formal.model.resolve import build
        from formal.prove.driver import prove
        from formal.text.read import read_bytes
        model = build([read_bytes(raw, name)], catalog.documents())
        proof = prove(model, OPTS)
        lines = fk.check_nothing_dropped(raw, name, model, proof)
        assert lines, r.name
        assert any(f.kind == "unchecked" for f in proof.findings), r.name


# ---- the catalog in the renderings that change its headings and its type labels -----------

CATALOG_RENDERINGS = ("titles_without_numbers", "glyph_headings", "glyph_headings_html",
                      "sub_bulleted", "sphinx", "browser", "browser_without_numbers",
                      "bare_tables", "html_tables")


def _catalog_renderings(md: str) -> list[R.Rendering]:
    glyphs = R.glyph_headings(md, ".md")
    text = R.browser(md)
    return [R.titles_without_numbers(md, ".md"), glyphs,
            R.Rendering("glyph_headings_html", R.sphinx(glyphs.text).text, ".html"),
            R.sub_bulleted(md), R.sphinx(md), text,
            replace(R.titles_without_numbers(text.text, ".txt"),
                    name="browser_without_numbers"), R.bare_tables(md), R.html_tables(md)]


def _ids_and_errors(tmp_path: Path, name: str, text: str, suffix: str,
                    ) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    p = tmp_path / f"{name}{suffix}"
    p.write_text(text, encoding="utf-8")
    a = analyze([p], OPTS)
    ids = Counter(lay.short_id for lay in a.model.layouts)
    return ids, _by_layout(list(a.proof.findings))


@pytest.mark.parametrize("doc", ["dense-float", "dense-integer", "sparse", "matrix-moves",
                                 "wgmma", "wgmma-sparse", "corrections"])
def test_the_catalog_reads_the_same_in_every_heading_and_label_rendering(
        doc: str, tmp_path: Path) -> None:
    """The catalog's own documents without section numbers, with the permalink glyph as
    heading text (Markdown and HTML), with per-type parts as one table and sub-bullets
    that name their types, as the Sphinx page and as a browser's copy (every table row one
    line, the terse fragments too), with and without numbers: the same layouts and the same
    errors, layout by layout."""
    from formal import catalog

    md = (Path(catalog.__file__).parent / f"{doc}.md").read_text(encoding="utf-8")
    want = _ids_and_errors(tmp_path, "doc", md, ".md")
    assert want[0], doc
    renderings = _catalog_renderings(md)
    assert [r.name for r in renderings] == list(CATALOG_RENDERINGS)
    for r in renderings:
        assert _ids_and_errors(tmp_path, r.name, r.text, r.suffix) == want, (doc, r.name)


def test_sub_bulleted_rewrites_the_labelled_parts() -> None:
    """The generator itself: a labelled block becomes one table and sub-bullets naming the
    types; a block labelled by arrangement is left alone."""
    md = ("* Multiplicand A:\n\n  + .s4 or .u4:\n\n    | .atype | Fragment | Elements |\n"
          "    | --- | --- | --- |\n    | .s4 | x | a0 |\n\n    ```\n    row = 0\n    ```\n"
          "  + .s8:\n\n    | .atype | Fragment | Elements |\n    | --- | --- | --- |\n"
          "    | .s8 | y | a0 |\n\n* Multiplicand B:\n\n  + .f16 with .row:\n")
    out = R.sub_bulleted(md).text.split("\n")
    assert out[:6] == ["* Multiplicand A:", "", "  | .atype | Fragment | Elements |",
                       "  | --- | --- | --- |", "  | .s4 | x | a0 |", "  | .s8 | y | a0 |"]
    assert "  + Fragment layout for matrix A when `.atype` is .s4 or .u4 is shown below:" in out
    assert "  + Fragment layout for matrix A when `.atype` is .s8 is shown below:" in out
    assert out[-2:] == ["  + .f16 with .row:", ""]
    assert R.titles_without_numbers("## 9.7.1. T\n", ".md").text == "## T\n"
    assert R.glyph_headings("## 9.7.1. T\nx\n", ".md").text == "## 9.7.1. T\uf0c1\nx\n"
