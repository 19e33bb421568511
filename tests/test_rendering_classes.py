"""Each class of rendering that once changed what was read, on short sections of our own (the
spec's facts, our words): a table of two types with a sub-bullet per type, the permalink glyph
as heading text, headings without numbers, a formula block that no layout takes."""

from __future__ import annotations

from pathlib import Path

from formal.api import analyze
from formal.base.source import Finding
from formal.prove import Options
from formal.text.blocks import blank_glyphs
from formal.text.lines import kind_of
from formal.text.read import read_text

OPTS = Options(cross_check="off")

# the m8n8k4 .f16 section's accumulators: one table of .f16 and .f32, then one sub-bullet per
# type, each over its own formulas (the .f32 row states no element list, as in the spec)
M8N8K4_CD = """## 9.7.14.5.1. Matrix Fragments for mma.m8n8k4 with .f16 floating point type

* Accumulators C (or D):

  | .ctype / .dtype | Fragment | Elements (low to high) |
  | --- | --- | --- |
  | `.f16` | F16_SENTENCE | c0, c1, c2, c3, c4, c5, c6, c7 |
  | `.f32` | A vector expression of eight `.f32` registers. |

  + Fragment layout for accumulator matrix when `.ctype` is `.f16` is shown in [Figure 50](#c-f16).

    ```
    row = %laneid % 4 if %laneid < 16
          (%laneid % 4) + 4 otherwise

    col = i for ci where i = {0,..,7}
    ```
  + Fragment layout for accumulator matrix when `.ctype` is `.f32` is shown in
    [Figure 51](#c-f32-1) and [Figure 52](#c-f32-2).

    ```
    row = X if %laneid < 16
          X + 4 otherwise

      where X = (%laneid & 0b1) + (i & 0b10) for ci where i = {0,..,7}

    col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1) for ci where i = {0,..,7}
    ```
""".replace("F16_SENTENCE", "A vector expression containing four `.f16x2` registers, with each "
            "register containing two `.f16` elements from the matrix C (or D).")


def _run(tmp_path: Path, text: str,
         name: str = "doc.md") -> tuple[dict[str, object], list[Finding]]:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    a = analyze([p], OPTS)
    return {lay.short_id: lay for lay in a.model.layouts}, list(a.proof.findings)


def _formula_lines(lay: object) -> list[int]:
    return sorted({f.source.span(0).line for f in lay.formulas})  # type: ignore[attr-defined]


def test_a_sub_bullet_gives_its_formulas_to_the_rows_of_its_type(tmp_path: Path) -> None:
    lays, findings = _run(tmp_path, M8N8K4_CD)
    assert sorted(lays) == ["mma.m8n8k4.CD.f16", "mma.m8n8k4.CD.f32"]
    assert _formula_lines(lays["mma.m8n8k4.CD.f16"]) == [13, 16]
    assert _formula_lines(lays["mma.m8n8k4.CD.f32"]) == [22, 27]
    assert [f.format() for f in findings if f.severity == "error"] == []
    # the .f32 row's missing element list is a warning, and the only one
    assert [(f.kind, f.span.line) for f in findings] == [("element-list", 8)]


def test_two_formula_blocks_not_told_apart_name_the_first_in_a_warning(tmp_path: Path) -> None:
    """With neither sub-bullet naming a type, the second block replaces the first: never in
    silence -- an 'unattached' warning lists the first block's lines, and no line is
    'unchecked'."""
    text = M8N8K4_CD.replace("when `.ctype` is `.f16`", "for the first case") \
        .replace("when `.ctype` is `.f32`", "for the second case")
    _lays, findings = _run(tmp_path, text)
    un = [f for f in findings if f.kind == "unattached"]
    assert len(un) == 1 and un[0].severity == "warning" and un[0].span.line == 13
    assert un[0].counterexample == {"lines": [13, 14, 16]}
    assert "defined again at line 22, 27" in un[0].message
    assert not [f for f in findings if f.kind == "unchecked"]


def test_the_sub_bullet_reads_as_a_type_label() -> None:
    k = kind_of("Fragment layout for accumulator matrix when .ctype is .f16 is shown in "
                "Figure 50.")
    assert k.type_select and not k.major_label and not k.type_label
    assert not kind_of("Fragment layout for Row Major matrix A is shown in Figure 46.") \
        .type_select


def test_icon_glyphs_are_spaces_in_every_format() -> None:
    assert blank_glyphs("Title\uf0c1") == "Title "
    assert blank_glyphs("a\u00b6b\U000f0001c") == "a b c"
    assert blank_glyphs("no glyph: .f16 × 2") == "no glyph: .f16 × 2"
    title = "9.7.14.5.1. Matrix Fragments for mma.m8n8k4 with .f16 floating point type"
    for body in (f"<h2>{title}\uf0c1</h2>", f"<h2>{title}&#xf0c1;</h2>",
                 f"<h2>\uf0c1{title}</h2>"):
        doc = read_text(f"<html><body><section>{body}<p>x</p></section></body></html>",
                        "p.html")
        assert [s.title.text.strip() for s in doc.sections] == [title], body
    md = read_text(f"## {title}\uf0c1\n\nx\n", "p.md")
    assert [s.title.text.strip() for s in md.sections] == [title]


def test_headings_are_known_by_their_words() -> None:
    for t in ("Matrix Fragments for mma.m8n8k4 with .f16 floating point type",
              "Matrix Fragments for sparse mma.m16n8k16 with .f16 and .bf16 types",
              "Matrix Fragments for wgmma.mma_async.m64nNk16",
              "Matrix Fragments for WMMA",
              "Multiply-and-Accumulate Instruction: mma.sp / mma.sp::ordered_metadata",
              "Warp-level matrix load instruction: ldmatrix"):
        assert kind_of(t).heading, t
    assert kind_of("Warp-level matrix load instruction: ldmatrix").move_heading
    # a reference sentence wrapped so that its link opens a line is no heading
    for t in ("Matrix Fragments for mma.m16n8k32.",
              "Matrix Fragments for mma.m16n8k8 for .tf32",
              "Matrix Fragments for mma.m16n8k16 with floating point type for .f16/.b16 formats.",
              "Matrix fragments for multiplicand B and accumulators C and D are the same as in"):
        assert not kind_of(t).heading, t


def test_a_plain_text_chapter_without_numbers_opens_each_section(tmp_path: Path) -> None:
    """Browser text with the numbers dropped: the instruction section between two fragment
    sections opens a section of its own, so its example code is no formula of the first."""
    frag = ("Matrix Fragments for mma.m8n8k4 with .f16 floating point type\n\n" +
            "\n".join(ln.strip(" *+`") for ln in M8N8K4_CD.split("\n")[2:]
                      if not ln.strip().startswith(("|", "```"))))
    text = (frag + "\nMultiply-and-Accumulate Instruction: mma\n\n"
            "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 d, a, b, c;\n"
            "x = y.z\n")
    doc = read_text(text, "p.txt")
    assert [s.title.text.strip() for s in doc.sections] == [
        "Matrix Fragments for mma.m8n8k4 with .f16 floating point type",
        "Multiply-and-Accumulate Instruction: mma"]


# ---- escaped characters in link text; a merged-cell table flattened by a browser ------------

# a wgmma accumulator table of our own with the spec's facts and merges: the element list stated
# once for three rows (the .s32 row's says N is in the next column), the N column once for the
# .f32 and .f16 rows; the section's D also names the dense section through an escaped link
WGMMA_MERGED = """## 9.7.15.5.1.1.3. Matrix Fragments for `wgmma.mma_async.m64nNk32`

* Accumulator D:

  | .dtype | Fragment | Elements (low to high) | N |
  | --- | --- | --- | --- |
  | `.s32` | S32 | LIST | N_S32 |
  | `.f32` | F32 | N_F32 |
  | `.f16` | F16 |

## 9.7.15.6.2.1. Matrix Fragments for sparse `wgmma.mma_async.m64nNk32`

* Accumulator D:

  Matrix fragments for accumulator D are the same as in case of
  [Matrix Fragments for wgmma.mma\\_async.m64nNk32](#dense-64n32)
  for the same `.dtype` format.
""".replace("N_S32", "`N = 8*i where i = {1, 2, 3, 4}`  `= 16*i where i = {3, 4, ..., 15, 16}`") \
   .replace("N_F32", "`N = 8*i where i = {1, 2, ... , 32}`") \
   .replace("S32", "A vector expression containing N/2 number of `.s32` registers.") \
   .replace("F32", "A vector expression containing N/2 number of `.f32` registers.") \
   .replace("F16", "A vector expression containing N/4 number of `.f16x2` registers, with each "
            "register containing two `.f16` elements from matrix D.") \
   .replace("LIST", "d0, d1, d2, d3, …, dX, dY, dZ, dW  where `X = N/2  -  4`  `Y = N/2  -  3`  "
            "`Z = N/2  -  2`  `W = N/2  -  1`  `N` depends on .dtype, as described in the next "
            "column.")

WANT_N = {
    "wgmma.m64nNk32.D.s32": (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208,
                             224, 240, 256),
    "wgmma.m64nNk32.D.f32": tuple(range(8, 257, 8)),
    "wgmma.m64nNk32.D.f16": tuple(range(8, 257, 8)),  # no N of its own: the row above's
}


def _wgmma_read(tmp_path: Path, text: str, name: str) -> tuple[dict[str, tuple[int, ...]],
                                                                list[tuple[str, str]]]:
    lays, findings = _run(tmp_path, text, name)
    return ({k: lay.n_values for k, lay in lays.items()},  # type: ignore[attr-defined]
            sorted((f.severity, f.kind) for f in findings))


def test_a_merged_cell_table_reads_alike_in_every_rendering(tmp_path: Path) -> None:
    """The Markdown table, the Sphinx page and the browser copy (each row one line: the .s32
    row ends in its N column, the .f32 row has its N column where the element list stood):
    the same layouts at the same N, and the same findings."""
    from . import renderings as R

    want = _wgmma_read(tmp_path, WGMMA_MERGED, "w.md")
    n_of = {k: v for k, v in want[0].items() if k.startswith("wgmma.m64")}
    assert n_of == WANT_N
    # the sparse D, named through the escaped link (sparse k32 has .f16 / .bf16 A: no .s32)
    assert sorted(k for k in want[0] if k.startswith("wgmma.sp")) == [
        "wgmma.sp.m64nNk32.D.f16", "wgmma.sp.m64nNk32.D.f32"]
    assert ("error", "model") not in want[1] and ("error", "parse") not in want[1]
    text = R.browser(WGMMA_MERGED).text
    assert ".f32 A vector expression containing N/2 number of .f32 registers. N = 8*i" in text
    for name, doc in (("w.html", R.sphinx(WGMMA_MERGED).text), ("w.txt", text),
                      ("n.txt", R.titles_without_numbers(text, ".txt").text)):
        assert _wgmma_read(tmp_path, doc, name) == want, name


def test_escapes_in_link_text_are_undone_outside_code() -> None:
    """CommonMark: a backslash escapes any ASCII punctuation, except in a code span.  The
    reader undoes every such escape (in a link's text too); the Sphinx page and the browser
    copy made from Markdown show the character itself."""
    from formal.base.source import SourceText
    from formal.text.blocks import strip_markup

    from . import renderings as R

    def plain(s: str) -> str:
        return strip_markup(SourceText(s, "d.md", ((0, 1, 1),))).text

    assert plain(r"see [wgmma.mma\_async.m64nNk32](#x) and \*, \., \<") == \
        "see wgmma.mma_async.m64nNk32 and *, ., <"
    assert plain(r"`a\_b` and [`c\_d` e\_f](#y)") == r"a\_b and c\_d e_f"
    # the column of a character after an undone escape is its own
    src = strip_markup(SourceText(r"[mma\_async.m64nNk32](#x)", "d.md", ((0, 1, 1),)))
    assert src.text == "mma_async.m64nNk32" and src.span(3).column == 6  # the "_"
    page = R.sphinx("## 1.2. T\n\nsee [wgmma.mma\\_async](#x) and `c\\_d`\n").text
    assert "wgmma.mma_async</span></a>" in page and '<span class="pre">c\\_d</span>' in page
    assert "mma\\_async" not in page
    assert R.browser("see [wgmma.mma\\_async](#x) and `c\\_d`\n").text == \
        "see wgmma.mma_async and c\\_d\n"


def test_tables_without_outer_pipes_are_tables(tmp_path: Path) -> None:
    """GFM lets a table drop its outer pipes (``.ctype / .dtype | Fragment | Elements`` over
    ``---|---|---``), as the PTX ISA 9.4 Markdown mirror writes every table: the same rows,
    layouts and findings; a line with a '|' over a lone ``---`` (a rule) is no table."""
    from formal.text.markdown import markdown_blocks

    from . import renderings as R

    bare = R.bare_tables(M8N8K4_CD).text
    assert "  .ctype / .dtype | Fragment | Elements (low to high)\n  ---|---|---\n" in bare
    want = _run(tmp_path, M8N8K4_CD)
    got = _run(tmp_path, bare, "bare.md")
    assert sorted(got[0]) == sorted(want[0]) == ["mma.m8n8k4.CD.f16", "mma.m8n8k4.CD.f32"]
    assert [(f.kind, f.span.line) for f in got[1]] == [(f.kind, f.span.line) for f in want[1]]
    rows = [b for b in markdown_blocks(bare.split("\n"), "d.md") if b.kind == "row"]
    assert [len(b.cells) for b in rows] == [3, 3, 2]  # the header, .f16, .f32 (no list)
    kinds = [b.kind for b in markdown_blocks(["a | b", "---", "", "c"], "d.md")]
    assert "row" not in kinds
