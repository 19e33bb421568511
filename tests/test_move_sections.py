"""The warp-level matrix move sections (ldmatrix, stmatrix, movmatrix; issue 12): sections of
our own in the spec's language, as Markdown, as the Sphinx HTML page and as a browser's text,
read to the same variants and facts; each variant resolved by name to the catalog's layout;
planted contradictions found on their lines; an unreadable layout sentence a warning."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from formal import catalog
from formal.model import build
from formal.model.cells import cells
from formal.model.layout import Model
from formal.parse.document import parse_document
from formal.text.read import read_text
from tests.renderings import browser
from tests.sphinx import markdown_to_sphinx_html

# ---- sections of our own ---------------------------------------------------------------------

LD_TABLE = """| `.num` | Threads 0-7 | Threads 8-15 | Threads 16-23 | Threads 24-31 |
| --- | --- | --- | --- | --- |
| `.x1` | addr0-addr7 | - | - | - |
| `.x2` | addr0-addr7 | addr8-addr15 | - | - |
| `.x4` | addr0-addr7 | addr8-addr15 | addr16-addr23 | addr24-addr31 |"""

LDMATRIX = f"""# 4.2.1. Warp-level matrix load instruction: ldmatrix

Syntax

```
ldmatrix.sync.aligned.shape.num{{.trans}}.type r, [p];

.shape   = {{.m8n8}};
.num     = {{.x1, .x2, .x4}};
.type    = {{.b16}};
```

Description

Here the warp fetches small tiles from shared memory. Each matrix element holds 16-bit data
as indicated by the `.type` qualifier.

| .shape | Matrix shape | Element size |
| --- | --- | --- |
| `.m8n8` | 8x8 | 16-bit |

The values `.x1`, `.x2` and `.x4` for `.num` indicate one, two or four matrices respectively.

The destination operand `r` is a brace-enclosed vector expression consisting of 1, 2 or 4
32-bit registers as per the value of `.num`.

The eight addresses required for each matrix are provided by eight threads, depending upon the
value of `.num` as shown in the following table.

{LD_TABLE}

When loading 8x8 matrices, a group of four consecutive threads loads 16 bytes.

Each thread in a warp holds a fragment of a row, with thread 0 holding the first fragment in
register `r`, and so on. A group of four aligned threads holds an entire row of the matrix.

When `.num` = `.x2`, elements of the second matrix are held in the next destination register
in each thread. Similarly, when `.num` = `.x4`, elements of the third and fourth matrices are
held in the subsequent destination registers in each thread.

Optional qualifier `.trans` indicates that the matrix is loaded in column-major format.

Examples

```
ldmatrix.sync.aligned.m8n8.x2.trans.b16 {{d0, d1}}, [p];
```
"""

MOVMATRIX = """# 4.2.3. Warp-level matrix transpose instruction: movmatrix

Syntax

```
movmatrix.sync.aligned.shape.trans.type d, a;

.shape  = {.m8n8};
.type   = {.b16};
```

Each thread in a warp holds a fragment of a row of the input matrix, with thread 0 holding the
first fragment in register `a`, and so on.

Each thread in a warp holds a fragment of a row of the result matrix, with thread 0 holding the
first fragment in register `d`, and so on.
"""


def _markdown(md: str) -> str:
    return md


def _html(md: str) -> str:
    return markdown_to_sphinx_html(md)


def _text(md: str) -> str:
    return browser(md).text


RENDERINGS: dict[str, Callable[[str], str]] = {"md": _markdown, "html": _html, "txt": _text}


def model(text: str, name: str = "moves.md") -> Model:
    return build([read_text(text, name)], catalog.documents())


def errors(m: Model) -> list[tuple[int, str]]:
    return [(f.span.line, f.message) for f in m.findings if f.severity == "error"]


def line_of(text: str, needle: str) -> int:
    return next(k for k, ln in enumerate(text.split("\n"), 1) if needle in ln)


# ---- reading ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", sorted(RENDERINGS))
def test_each_rendering_reads_to_the_same_variants_and_facts(how: str) -> None:
    text = RENDERINGS[how](LDMATRIX)
    doc = read_text(text, f"ld.{how}")
    assert sum(s.move for s in doc.sections) == 1  # (the HTML page's title is a section too)
    moves = next(p.moves for p in parse_document(doc).sections if p.moves is not None)
    assert moves is not None and moves.instruction == "ldmatrix"
    assert moves.values_of("num") == ("x1", "x2", "x4")
    kinds = [f.kind for f in moves.facts]
    assert kinds == ["element_sizes", "shape_table", "num_values", "operand_registers",
                     "addresses_each", "num_table", "group_bytes", "thread_fragment",
                     "group_whole", "next_register", "next_register", "trans_optional"]
    table = next(f for f in moves.facts if f.kind == "num_table")
    # threads 8-15 give addr8-addr15 for .x2, nothing for .x1
    assert table.get("rows")[0][1] == ((0, 7), None, None, None)
    assert table.get("rows")[1][1] == ((0, 7), (8, 15), None, None)
    m = build([doc], catalog.documents())
    assert [f.message for f in m.findings] == []
    # six variants (.x1/.x2/.x4, with and without .trans), each the catalog's by name
    assert sorted(x.id.split(":")[1] for x in m.layouts) == sorted(
        f"ldmatrix.m8n8.{n}{t}.b16" for n in ("x1", "x2", "x4") for t in ("", ".trans"))
    assert all(x.source == "catalog" and x.reference_of.startswith("catalog:ldmatrix")
               for x in m.layouts)
    by = {x.id.split(":")[1]: x for x in m.layouts}
    # thread 5's d2 (register 1: the second matrix): row 8 + 5 // 4 = 9, col 2 * (5 % 4) = 2
    assert cells(by["ldmatrix.m8n8.x2.b16"])[(0, 5, 2)] == (9, 2)
    # with .trans: rows 8 + 2 * (5 % 4) = 10, column 5 // 4 = 1
    assert cells(by["ldmatrix.m8n8.x2.trans.b16"])[(0, 5, 2)] == (10, 1)


def test_movmatrix_reads_both_operands_by_name() -> None:
    m = model(MOVMATRIX)
    assert errors(m) == []
    assert sorted(x.id.split(":")[1] for x in m.layouts) == [
        "movmatrix.m8n8.trans.b16.a", "movmatrix.m8n8.trans.b16.d"]


# ---- planted contradictions: errors on their lines -------------------------------------------


@pytest.mark.parametrize("how", sorted(RENDERINGS))
def test_a_num_table_giving_x1_threads_8_to_15_is_an_error_on_its_row(how: str) -> None:
    md = LDMATRIX.replace("| `.x1` | addr0-addr7 | - |", "| `.x1` | addr0-addr7 | addr8-addr15 |")
    text = RENDERINGS[how](md)
    errs = [f for f in model(text, f"ld.{how}").findings if f.severity == "error"]
    assert len(errs) == 1
    assert errs[0].span.line == line_of(text, "addr8-addr15")
    assert errs[0].message == (
        "the .x1 row gives addr8–addr15 to threads 8–15; .x1 moves 1 matrix of 8 rows, whose "
        "row addresses addr0–addr7 come from threads 0–7: threads 8–15 give no address (–)")


def test_a_wrong_count_of_matrices_is_an_error_at_the_count() -> None:
    md = LDMATRIX.replace("one, two or four matrices", "one, two or three matrices")
    errs = errors(model(md))
    assert errs == [(line_of(md, "two or three"), "'.x4' is said to indicate 3 matrices; .x4 "
                     "moves 4")]


def test_a_shape_row_of_the_wrong_size_is_an_error() -> None:
    md = LDMATRIX.replace("| `.m8n8` | 8x8 |", "| `.m8n8` | 8x16 |")
    assert errors(model(md)) == [(line_of(md, "8x16"), "the .m8n8 row gives the matrix shape "
                                  "8x16; .m8n8 is 8x8")]


def test_a_group_of_two_threads_holding_a_row_is_refuted_on_the_cells() -> None:
    md = LDMATRIX.replace("A group of four aligned threads", "A group of two aligned threads")
    (line, message), = errors(model(md))
    assert line == line_of(md, "group of two")
    # threads 0 and 1 hold (0, 0), (0, 1), (0, 2), (0, 3): half of row 0
    assert message == ("a group of 2 threads is said to hold an entire row, but in "
                       "ldmatrix.m8n8.x1.b16 threads 0–1 hold 4 of the 8 cells of row 0 of "
                       "matrix 0")


def test_an_example_the_section_does_not_admit_is_an_error() -> None:
    md = LDMATRIX.replace("m8n8.x2.trans.b16 {d0, d1}", "m8n8.x2.trans.b16 {d0, d1, d2}")
    assert errors(model(md)) == [(line_of(md, "{d0, d1, d2}"), (
        "the example ldmatrix.m8n8.x2.trans.b16 names 3 register(s); its layout fills 2"))]


def test_movmatrix_result_as_columns_is_an_error_that_says_nothing_would_move() -> None:
    md = MOVMATRIX.replace("a row of the result", "a column of the result")
    (line, message), = errors(model(md))
    assert line == line_of(md, "column of the result")
    assert message.startswith("each thread is said to hold a fragment of a column, but in "
                              "movmatrix.m8n8.trans.b16 (destination) thread 0 holds (0, 0), "
                              "(0, 1): one row, several columns")
    assert message.endswith("and nothing would move")


def test_two_sentences_of_one_wrong_orientation_are_one_error() -> None:
    """'a fragment of a column' and then 'an entire column' of the result: one root cause."""
    md = MOVMATRIX.replace("a row of the result", "a column of the result").replace(
        "first fragment in register `d`, and so on.",
        "first fragment in register `d`, and so on. A group of four threads holds an entire "
        "column of the result matrix.")
    (line, message), = errors(model(md))
    assert line == line_of(md, "fragment of a column of the result")
    group = line_of(md, "entire column")
    col = md.splitlines()[group - 1].index("column", md.splitlines()[group - 1].index("entire")) + 1
    assert message.endswith(f"and nothing would move; {group}:{col} says the same")


# ---- what is not read, or not in the catalog: warnings ---------------------------------------


def test_an_unreadable_layout_sentence_is_a_warning_naming_what_is_unchecked() -> None:
    md = LDMATRIX.replace("Optional qualifier", "Each thread in a warp keeps its part "
                          "somewhere.\n\nOptional qualifier")
    m = model(md)
    assert errors(m) == []
    (w,) = [f for f in m.findings if f.kind == "unreadable"]
    assert w.severity == "warning" and w.span.line == line_of(md, "keeps its part")
    assert w.message.endswith("what it states about the ldmatrix layouts is not checked")


def test_a_variant_the_catalog_lacks_is_a_warning_naming_it() -> None:
    md = LDMATRIX.replace(".shape   = {.m8n8};", ".shape   = {.m8n8, .m16n8};")
    m = model(md)
    assert errors(m) == []
    (w,) = [f for f in m.findings if f.kind == "catalog"]
    assert w.severity == "warning"
    assert "'Matrix Fragments for ldmatrix.m16n8.x1.b16'" in w.message
    assert "'Matrix Fragments for ldmatrix.m16n8.x4.trans.b16'" in w.message
    assert w.message.startswith("the section admits 6 variant(s) the catalog does not state")


def test_a_misspelt_verb_is_read_and_reported() -> None:
    md = LDMATRIX.replace("are held in the next", "are loadedd in the next")
    m = model(md)
    assert errors(m) == []
    assert [(f.kind, f.message) for f in m.findings] == [
        ("wording", "'loadedd' reads as a slip of a verb (the fact is read as if it were spelt "
                    "right)")]


def test_a_document_of_other_sections_is_still_not_a_move_section() -> None:
    doc = read_text("1.1. Warp shuffle\n\nThreads exchange registers.\n", "other.txt")
    assert [s.move for s in doc.sections] == [False]
    assert [f.kind for f in doc.findings] == ["input"]


# ---- the title's instruction, as a value ------------------------------------------------------


@pytest.mark.parametrize(("title", "parts"), [
    ("Matrix Fragments for ldmatrix.m8n8.x4.trans.b16", ("ldmatrix", 8, 8, 4, True, "b16", "")),
    ("9.7.1. Matrix Fragments for movmatrix.m8n8.trans.b16.",
     ("movmatrix", 8, 8, 0, True, "b16", "")),
    ("Matrix Fragments for ldmatrix.m8n16.x2.b8x16.b6x16_p32",
     ("ldmatrix", 8, 16, 2, False, "b8x16", "b6x16_p32")),
    ("Matrix Fragments for stmatrix.m16n8.x1.trans.b8", ("stmatrix", 16, 8, 1, True, "b8", "")),
])
def test_a_move_title_is_read_into_its_parts(title: str, parts: tuple[object, ...]) -> None:
    """The grammar gives the instruction, shape, .xN, .trans, the element type and its packed
    source format; the value prints itself as the title spelled it, and the section title
    keeps its spelled shape and its type at the type's column."""
    from formal.base.ids import MoveInstr
    from formal.base.source import SourceText
    from formal.parse.prose import parse_prose

    value, errs = parse_prose(SourceText(title, "t.md", ((0, 1, 1),)), "section_title", "t")
    assert not errs
    move = value.move
    assert move == MoveInstr(*parts)  # type: ignore[arg-type]
    assert title.rstrip(".").endswith(str(move))
    assert value.shape == move.variant and value.instruction == move.instruction
    ((typ, at),) = value.qualifier.types
    assert typ == move.type and title[at:at + len(typ)] == typ
