"""The prose checks of issue 11 on small sections of our own (facts of the spec, our words):
fragment sentences in every grammatical form, slips as warnings, unreadable prose as warnings
naming what went unchecked, the accumulator label convention, a missing element list, a
figure that names another block, and a formula line that does not parse as the one error."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.api import analyze
from formal.base.source import Finding
from formal.prove import Options

from .sections import a_section, section

OPTS = Options(cross_check="off")


def prove(tmp_path: Path, text: str, name: str = "s.txt") -> list[Finding]:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return list(analyze([p], OPTS).proof.findings)


def errors(fs: list[Finding]) -> list[tuple[str, int]]:
    return [(f.kind, f.span.line) for f in fs if f.severity == "error"]


def warnings(fs: list[Finding]) -> list[tuple[str, int]]:
    return [(f.kind, f.span.line) for f in fs if f.severity == "warning"]


# m16n8k16 integer A: 8 elements per lane, in two .b32 registers of four 8-bit elements
ROW = ".u8 / .s8 A vector expression {} from the matrix A. a0, a1, a2, a3, a4, a5, a6, a7"


@pytest.mark.parametrize("words", [
    "containing two .b32 registers, with each register containing four .u8 / .s8 elements",
    "of two .b32 registers, each containing four .u8/.s8 elements",
    "containing 2 .b32 registers with each register holding 4 .u8 or .s8 elements",
    "of two .b32 registers, containing eight .u8, .s8 elements",        # in all: 8 = 2 x 4
    "containing two .b32 registers containing .u8 / .s8 elements",      # 32 / 8 = 4 each
    "consisting of two .b32 registers, each of them containing four .u8 / .s8 elements",
    "containing two .b32 registers, with four .u8 / .s8 elements per register",
])
def test_every_form_of_a_true_sentence_proves(tmp_path: Path, words: str) -> None:
    fs = prove(tmp_path, a_section().replace(
        ROW.format("containing two .b32 registers, with each register containing four "
                   ".u8 / .s8 elements"), ROW.format(words)))
    assert errors(fs) == [] and warnings(fs) == [], [f.format() for f in fs]


@pytest.mark.parametrize("words, kind", [
    ("containing three .b32 registers, with each register containing four .u8 / .s8 elements",
     "register-budget"),                                                   # 3 x 4 = 12 != 8
    ("containing two .b64 registers, with each register containing four .u8 / .s8 elements",
     "register-budget"),                                                   # 4 x 8 bits != 64
    ("containing two .b32 registers, with each register containing four .f16 elements",
     "type-names"),                                                        # the row says .u8
    ("containing two .b32 registers containing .f16 elements", "type-names"),
])
def test_a_meaning_changing_edit_is_an_error_on_its_line(tmp_path: Path, words: str,
                                                          kind: str) -> None:
    fs = prove(tmp_path, a_section().replace(
        ROW.format("containing two .b32 registers, with each register containing four "
                   ".u8 / .s8 elements"), ROW.format(words)))
    assert (kind, 4) in errors(fs), [f.format() for f in fs]   # line 4: the row


def test_slips_are_wording_warnings(tmp_path: Path) -> None:
    text = a_section().replace(
        ROW.format("containing two .b32 registers, with each register containing four "
                   ".u8 / .s8 elements"),
        ROW.format("containing of two .b32 registers, with each register containing four "
                   ".u8 / .s8 elements"))
    fs = prove(tmp_path, text)
    assert errors(fs) == [] and warnings(fs) == [("wording", 4)]
    slip = next(f for f in fs if f.kind == "wording")
    assert slip.span.column == text.split("\n")[3].index("containing of") + 1


def test_an_unreadable_sentence_is_a_warning_and_the_rest_is_proved(tmp_path: Path) -> None:
    fs = prove(tmp_path, a_section().replace(
        "A vector expression containing two .b32 registers", "A vector expression made of two "
        ".b32 registers"))
    assert errors(fs) == []
    [w] = [f for f in fs if f.severity == "warning"]
    assert w.kind == "unreadable" and w.span.line == 4
    assert "register budget" in w.message and "not checked" in w.message


# m16n8k8 accumulators: a 16 x 8 tile, four elements per lane
CD = """9.7.14.5.7. Matrix Fragments for mma.m16n8k8
Accumulators (C or D):
{label}
.ctype / .dtype Fragment Elements (low to high)
.f32 A vector expression of four .f32 registers.{elements}
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = groupID for c0 and c1
      groupID + 8 for c2 and c3
col = (threadID_in_group * 2) + (i & 0x1) for ci where i = {{0,..,3}}
"""


def test_an_accumulator_table_labelled_by_its_multiplicand_types(tmp_path: Path) -> None:
    # .tf32 is a multiplicand type of m16n8k8: the label says which products use the table
    fs = prove(tmp_path, CD.format(label=".tf32:", elements=" c0, c1, c2, c3"))
    assert errors(fs) == [] and warnings(fs) == []
    # .s8 is not: the row's .f32 stands under a label that names no type of the shape
    fs = prove(tmp_path, CD.format(label=".s8:", elements=" c0, c1, c2, c3"))
    assert ("type-names", 5) in errors(fs)


def test_an_unreadable_label_is_a_warning(tmp_path: Path) -> None:
    fs = prove(tmp_path, CD.format(label=".tf32 ~ .f64:", elements=" c0, c1, c2, c3"))
    assert errors(fs) == [] and warnings(fs) == [("unreadable", 3)]


def test_a_row_without_its_element_list_is_a_warning(tmp_path: Path) -> None:
    fs = prove(tmp_path, CD.format(label=".tf32:", elements=""))
    assert errors(fs) == [] and warnings(fs) == [("element-list", 5)]
    # the budget is still checked from the sentence: five registers of one .f32 is not 4
    fs = prove(tmp_path, CD.format(label=".tf32:", elements="").replace("of four", "of five"))
    assert ("register-budget", 5) in errors(fs)


def test_a_figure_naming_another_block_is_a_warning(tmp_path: Path) -> None:
    body = CD.format(label=".tf32:", elements=" c0, c1, c2, c3")
    good = body.replace("groupID = %", "!MMA .m16n8k8 fragment layout for accumulator matrix "
                        "C/D with .f32 type\ngroupID = %", 1)
    assert warnings(prove(tmp_path, good)) == []
    for caption, named in [
        ("!MMA .m16n8k16 fragment layout for accumulator matrix C/D with .f32 type", ".m16n8k16"),
        ("!MMA .m16n8k8 fragment layout for matrix B with .f32 type", "matrix B"),
        ("!_images/sparse-mma-1688-C.png", "sparse mma"),
        ("!_images/mma-1688-C-s32.png", ".s32"),  # .f64 would pass: a multiplicand type
    ]:
        fs = prove(tmp_path, body.replace("groupID = %", caption + "\ngroupID = %", 1))
        assert errors(fs) == [], caption
        [w] = [f for f in fs if f.severity == "warning"]
        assert w.kind == "figure" and w.span.line == 6 and named in w.message, w.message


def test_a_formula_that_does_not_parse_is_one_error(tmp_path: Path) -> None:
    # the second col case loses its closing parenthesis: one parse error, nothing refuted
    text = a_section(col="col = (threadID_in_group * 4) + (i & 0x3 for ai where i < 4\n"
                         "      (threadID_in_group * 4) + (i & 0x3) for ai where i >= 4")
    run_fs = prove(tmp_path, text)
    assert errors(run_fs) == [("parse", 9)], [f.format() for f in run_fs]
    p = tmp_path / "s.txt"
    [lay] = analyze([p], OPTS).model.layouts
    assert lay.incomplete
    result = next(r for r in analyze([p], OPTS).proof.results if r.layout.id == lay.id)
    status = {v.name: v.status for v in result.verdicts}
    assert status["cases"] == status["injective"] == status["surjective"] == "error"
    assert status["register-budget"] == status["element-list"] == "proved"
    # a definition line that does not parse takes its case lines with it, silently
    text = a_section(row="row = groupID for ai where i < 4 +\n"
                         "      groupID + 8 for ai where i >= 4")
    assert errors(prove(tmp_path, text)) == [("parse", 7)]


def test_the_sections_helper_is_what_these_tests_assume() -> None:
    s = a_section()
    assert s.split("\n")[3].startswith(".u8 / .s8 A vector expression")
    assert s.split("\n")[8].startswith("col =")
    assert section("1.2", "m16n8k8", "x").startswith("1.2. Matrix Fragments")


# A packed ldmatrix section in the catalog's form (8 x 16 per matrix; a .b8x16.b6x16_p32 row
# arrives one element a byte, four bytes a .b32 register)
PACKED = """# 9.7.14.5.15. Matrix Fragments for ldmatrix.m8n16.x2.b8x16.b6x16_p32

* Destination registers:

  | .dtype | Fragment | Elements |
  | --- | --- | --- |
  | .b8x16.b6x16_p32 | {frag} | d0, d1, ..., d6, d7 |

  ```
  groupID           = %laneid >> 2
  threadID_in_group = %laneid % 4

  row =   8 * (i >> 2) + groupID
  col =   (threadID_in_group * 4) + (i & 0x3)
  ```
"""


def test_a_packed_move_title_and_type_are_read(tmp_path: Path) -> None:
    p = tmp_path / "packed.md"
    p.write_text(PACKED.format(frag="two .b32 registers of four .b8x16.b6x16_p32 elements each"),
                 encoding="utf-8")
    run = analyze([p], OPTS)
    [lay] = run.model.layouts
    assert lay.short_id == "ldmatrix.m8n16.x2.b8x16.b6x16_p32"
    assert lay.types == ("b8x16.b6x16_p32",) and lay.tile == (16, 16) and lay.elements == 8
    assert errors(list(run.proof.findings)) == []


def test_a_packed_element_is_a_byte_of_the_register(tmp_path: Path) -> None:
    # two packed elements a register would be 16 bits of a .b32 (and 4 elements, not 8)
    fs = prove(tmp_path, PACKED.format(
        frag="two .b32 registers of two .b8x16.b6x16_p32 elements each"), "packed.md")
    assert errors(fs) == [("register-budget", 7)], [f.format() for f in fs]
    [f] = [f for f in fs if f.kind == "register-budget"]
    assert "2 .b8x16.b6x16_p32 elements per register take 16 bits" in f.message
