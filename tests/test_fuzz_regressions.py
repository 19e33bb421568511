"""Minimal reproducers of what the fuzz suite found (tests/test_fuzz.py), one per bug.

Each test states the input in a few lines of our own, the wrong behaviour it used to cause
and the right one.
"""

from __future__ import annotations

from . import fuzzkit as fk


def section(body: str, title: str = "9.1. Matrix Fragments for mma.m16n8k16 with floating "
            "point type") -> str:
    return f"{title}\n{body}"


CD_BLOCK = """Accumulators (C or D):
.ctype / .dtype Fragment Elements (low to high)
F32_ROW
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
ROW
col = (threadID_in_group * 2) + (i & 0x1) for ci where i = {0,..,3}
""".replace("F32_ROW", ".f32 A vector expression containing four .f32 registers, containing "
          "four .f32 elements from the matrix C (or D). c0, c1, c2, c3")


def kinds(out: dict) -> dict[str, list[tuple[int, int]]]:
    got: dict[str, list[tuple[int, int]]] = {}
    for f in out["findings"]:
        got.setdefault(f["kind"], []).append((f["line"], f["column"]))
    return got


def test_a_formula_with_a_missing_case_is_not_surjective_by_counting() -> None:
    """Bug: 'row' lost its second case (an unreadable line); the points no case covers were
    still counted as holding cells, so 'injective + in range + |domain| = |tile|' claimed
    coverage, the enumeration found the hole, and the run ended in an internal error (exit 2).
    Now the count is of the points a case covers: 'cases' and 'surjective' are refuted."""
    doc = section(CD_BLOCK.replace("ROW", "row = groupID for ci where i < 2"))
    out = fk.check_cli(doc)
    got = kinds(out)
    assert "internal" not in got
    assert got["cases"] == [(7, 1)] and "surjective" in got


SPARSE_A_WITHOUT_TABLE = """9.1. Matrix Fragments for sparse mma.m16n8k16 with .f16 type
Multiplicand A:
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = groupID for a0 and a1
      groupID + 8 for a2 and a3
col = [firstcol ... lastcol]
Where
firstcol = threadID_in_group * 4
lastcol = firstcol + 3
"""


def test_the_quantified_surjectivity_query_binds_the_selector() -> None:
    """Bug: the quantified query ('some cell that no point maps to') bound lane and element
    but left the point's selector free, so Z3 satisfied it vacuously with a selector outside
    the domain and every layout that reached it (sparse A with no fragment table, where the
    counting argument has no non-zero count) ended in an internal error."""
    out = fk.check_cli(SPARSE_A_WITHOUT_TABLE, ".txt", "--no-catalog")
    status = {o["name"]: o["status"] for o in out["layouts"][0]["obligations"]}
    assert status["surjective"] == "proved" and status["injective"] == "proved"
    assert out["findings"] == []


WRAPPED = """# 9.1. Matrix Fragments for sparse mma.m16n8k16 with .f16 type

* Metadata: A `.b32` register containing 16 2-bit vectors each storing
  the index of a non-zero element of a 4-wide chunk of matrix A as shoen in Figure 1.

* Multiplicand A:
"""


def test_a_wrapped_markdown_paragraph_keeps_the_lines_apart() -> None:
    """Bug: removing inline markup (the backticks) re-mapped the paragraph by runs of
    adjacent offsets, and a run that crossed from one wrapped line into the next was read as
    one line: the typo on line 4 was reported at line 3, column 137, past the end of line 3.
    """
    out = fk.check_cli(WRAPPED, ".md", "--no-catalog")
    parse = [f for f in out["findings"] if f["kind"] == "parse"]
    assert [(f["line"], f["column"]) for f in parse] == [(4, 68)]
    assert WRAPPED.split("\n")[3][67:].startswith("shoen")


# ---- ingest stays linear: each of these took minutes (quadratic time) before its fix ----------


def ingest_seconds(data: bytes, name: str) -> float:
    """This process's CPU seconds reading ``data`` (time spent waiting for a core on a busy
    machine does not count)."""
    import time

    from formal.text.read import read_bytes
    t0 = time.process_time()
    read_bytes(data, name)
    return time.process_time() - t0


def grows_linearly(head: bytes, unit: bytes, copies: int, name: str) -> bool:
    """Whether reading ``head + unit * copies`` costs less than 8 times reading a quarter of
    it (linear: about 4 times; the quadratic bugs below: 16 times).  A ratio of two CPU times
    taken side by side, never a number of seconds, so that a busy machine cannot fail it."""
    small = min(ingest_seconds(head + unit * (copies // 4), name) for _ in range(2))
    big = min(ingest_seconds(head + unit * copies, name) for _ in range(2))
    return big <= 8 * small + 0.05  # each the better of two: the first pays for warming up


def test_a_long_html_pre_block_is_read_in_linear_time() -> None:
    """Bug: every line of a ``pre`` block was cut out with ``SourceText.slice``, which walked
    all the block's segments (one per entity), and the text run was grown by ``+`` once per
    entity: 300 KB of ``&gt;&gt;&#x3e;&zzz;`` lines took 21 s, 10 MB would take hours."""
    assert grows_linearly(b"<html><body><pre>", b"x = a &gt;&gt; 2 &#x3e; &zzz; 1\n", 10_000,
                          "p.html")


def test_a_markdown_line_of_open_brackets_is_read_in_linear_time() -> None:
    """Bug: removing ``[text](url)`` markup scanned ahead up to 4,000 characters from every
    ``[`` for its partner: 300 KB of unmatched ``[`` took 65 s (10 MB: about 40 minutes)."""
    assert grows_linearly(b"# 9.1. [Matrix](x)\n", b"[" * 4096 + b"\n" + b"(" * 4096 + b"\n", 40,
                          "p.md")


def test_a_long_markdown_paragraph_is_read_in_linear_time() -> None:
    """Bug: a paragraph was grown by ``joined`` one line at a time, copying it each time."""
    assert grows_linearly(b"# 9.1. Matrix Fragments for mma.m16n8k16\n",
                          b"word `code` [x](y) more\n", 16_000, "p.md")


def test_a_formula_using_a_partial_definition_is_a_cases_finding() -> None:
    """Bug: 'groupID' had a case only for c0 and c1 but 'row' used it for every element;
    the enumeration raised 'no case of a Piecewise applies' and the run ended in an internal
    error (exit 2).  Now the partial definition is a 'cases' finding at its own line: c2
    matches no case of 'groupID', which 'row' uses there (so 'row' has no value at c2)."""
    doc = section(CD_BLOCK.replace("groupID = %laneid >> 2",
                                   "groupID = %laneid >> 2 for ci where i < 2")
                  .replace("ROW", "row = groupID for ci where i < 2\n"
                                  "      groupID + 8 for ci where i >= 2"))
    out = fk.check_cli(doc, ".txt", "--no-catalog")
    cases = [f for f in out["findings"] if f["kind"] == "cases"]
    assert [(f["line"], f["counterexample"]) for f in cases] == \
        [(5, {"lane": 0, "element": "c2", "formula": "groupID", "cases": []})]
    assert out["summary"]["internal_errors"] == 0


def test_an_enormous_or_empty_shape_is_a_limit_finding() -> None:
    """Bug: the title's shape was taken as is, and every obligation enumerates the tile:
    'mma.m99999999999999n8k16' never finished (and 'm0n0k0' was proven against an empty
    tile).  Now a shape with a zero dimension or a tile over 16,384 cells is a 'limit'
    finding at the title, and its section yields no layouts."""
    for shape in ("m99999999999999n8k16", "m4096n4096k4096", "m0n8k16"):
        doc = section(CD_BLOCK.replace("ROW", "row = groupID"),
                      f"9.1. Matrix Fragments for mma.{shape} with floating point type")
        out = fk.check_cli(doc, ".txt", "--no-catalog", budget_s=30)
        assert out["layouts"] == []
        assert [(f["kind"], f["line"], f["column"]) for f in out["findings"]] == \
            [("limit", 1, 1)], shape


FP = "Matrix Fragments for mma.{} with {} type"
SAME = "Matrix fragments for multiplicand B are the same as in case of " + FP + "."
B_TEXT = """Multiplicand B:
.btype Fragment Elements (low to high)
U8_ROW
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = (threadID_in_group * 4) + i for bi where i = {0,..,3}
col = groupID
""".replace("U8_ROW", ".u8 / .s8 A vector expression containing a single .b32 register, "
            "containing four .u8 / .s8 elements from the matrix B. b0, b1, b2, b3")


def references(out: dict) -> list[tuple[str, str | None, str]]:
    return [(lay["id"].split(":")[1], lay["reference_of"],
             next(o["status"] for o in lay["obligations"] if o["name"] == "reference"))
            for lay in out["layouts"] if lay["source"] == "reference"]


def test_a_section_that_refers_to_itself_is_a_circular_reference() -> None:
    """Bug: 'B is the same as in <this very section>' resolved silently to the catalog's
    layout and was proven; the document never states B.  Now it is a refuted 'reference'."""
    doc = "9.1. " + FP.format("m16n8k16", "floating point") + "\n" + \
        SAME.format("m16n8k16", "floating point") + "\n"
    out = fk.check_cli(doc, ".txt", "--verbose")
    assert references(out) == [("mma.m16n8k16.B.any", None, "refuted")]
    assert "circular" in out["findings"][0]["message"]


def test_two_sections_that_refer_to_each_other_are_circular() -> None:
    doc = "9.1. " + FP.format("m16n8k8", "floating point") + "\n" + \
        SAME.format("m16n8k16", "floating point") + "\n" + \
        "9.2. " + FP.format("m16n8k16", "floating point") + "\n" + \
        SAME.format("m16n8k8", "floating point") + "\n"
    out = fk.check_cli(doc, ".txt", "--verbose")
    assert [r[2] for r in references(out)] == ["refuted", "refuted"]
    assert [(f["line"], "circular" in f["message"]) for f in out["findings"]] == \
        [(2, True), (4, True)]


def test_a_chain_of_references_resolves_to_the_section_that_states_the_operand() -> None:
    """Bug: a reference to a section whose B is itself a reference found no stated layout
    there and fell through to the catalog; it now follows the chain within the document."""
    doc = "9.1. " + FP.format("m8n8k16", "floating point") + "\n" + \
        SAME.format("m16n8k16", "floating point") + "\n" + \
        "9.2. " + FP.format("m16n8k16", "floating point") + "\n" + \
        SAME.format("m16n8k16", "integer") + "\n" + \
        "9.3. " + FP.format("m16n8k16", "integer") + "\n" + B_TEXT
    out = fk.check_cli(doc, ".txt", "--verbose", label="regression")
    name = fk._WORK.joinpath("case.txt").stem
    assert references(out) == [
        ("mma.m8n8k16.B.u8-s8", f"{name}:mma.m16n8k16.B.u8-s8", "proved"),
        ("mma.m16n8k16.B.u8-s8#2", f"{name}:mma.m16n8k16.B.u8-s8", "proved")]
    assert [f for f in out["findings"] if f["severity"] == "error"] == []


def test_a_shift_past_int64_is_exact() -> None:
    """Bug (found by the long fuzz run after the vectorised enumeration landed): 'i >> 64'
    has small values but a divisor numpy's int64 cannot hold; the run ended in an internal
    error.  Such maps are enumerated with Python ints."""
    doc = section(CD_BLOCK.replace("ROW", "row = ((i >> 64)) otherwise"))
    out = fk.check_cli(doc, ".txt", "--no-catalog")
    assert out["summary"]["internal_errors"] == 0
    assert any(f["kind"] == "injective" for f in out["findings"])


def test_a_sparse_range_far_off_the_tile_is_not_walked() -> None:
    """Bug: 'lastcol = firstcol + 0xffffffffffffffff' (a seed with one literal edited) made the
    metadata check walk every column of the lane's range -- 2**64 of them: minutes and
    gigabytes until the machine killed the run.  Now only the tile's columns are walked, and
    the range is an 'in-range' and 'sparse-chunks' finding at once."""
    doc = SPARSE_A_WITHOUT_TABLE.replace("firstcol + 3", "firstcol + 0xffffffffffffffff") + (
        "Metadata: A .b32 register containing 16 2-bit vectors each storing the index of a "
        "non-zero element of a 4-wide chunk of matrix A as in Figure 1.\n")
    out = fk.check_cli(doc, budget_s=20.0)
    got = kinds(out)
    assert "internal" not in got
    assert got["in-range"] == [(10, 1)]
    msg = next(f["message"] for f in out["findings"] if f["kind"] == "in-range")
    assert "firstcol 0, lastcol 18446744073709551615" in msg
    # the metadata layout (from the catalog: the document shows it as a figure) was checked
    meta = next(lay for lay in out["layouts"] if lay["operand"] == "metadata")
    assert meta["source"] == "catalog"


def test_a_runaway_allocation_fails_the_case_instead_of_the_machine() -> None:
    import pytest

    with pytest.raises(MemoryError), fk.bounded_memory(256 << 20):
        bytearray(1 << 30)
    bytearray(1 << 28)  # the limit is lifted after the case
