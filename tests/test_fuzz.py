"""Fuzz the whole pipeline: never crash, never hang, never point outside the document.

Every property below runs twice: a short, deterministic run in the normal test suite (a few
hundred cases in all, well under a minute) and a long one under the ``fuzz`` marker
(``pytest -m fuzz``: more than 10,000 cases in all).  The inputs are the seeds with random
edits, truncations, shuffled lines, Unicode look-alikes and binary junk; formulas with
hostile operators and literals; "same as" references that point at themselves, at each
other or along a chain; huge tables, deep Markdown quotes, malformed HTML, and sections
with nothing in them.  The properties are those of ``tests/fuzzkit.py``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from formal.base.source import SourceText
from formal.parse.grammars import FRAGMENT_STARTS
from formal.parse.prose import parse_prose
from formal.parse.pseudocode import parse_pseudo_line

from . import fuzzkit as fk
from . import renderings as R
from .conftest import ROOT, budget
from .sections import A_BLOCK, COL, ROW, ROW_TEXT, a_section, section

# the short runs are the CI budget of the slow set; the long ones are '-m fuzz'
pytestmark = pytest.mark.slow

# ---- running each property short (CI) and long (-m fuzz) -------------------------------------


# The long run does not shrink a failing case: its documents are large, and each fault it
# finds gets a minimal reproducer written by hand in tests/test_fuzz_regressions.py.
FULL_PHASES = (Phase.explicit, Phase.reuse, Phase.generate)


def twice(short: int, full: int) -> Callable[[Callable[..., None]], Any]:
    """Register ``prop`` as two tests: ``<name>`` with ``short`` cases and ``<name>_full``
    (marker ``fuzz``) with ``full`` cases.  ``prop`` carries its own ``@given``-less
    strategies in ``prop.strategies``."""

    def deco(prop: Callable[..., None]) -> Any:
        strategies = prop.strategies  # type: ignore[attr-defined]
        quick = settings(max_examples=budget(short))(given(*strategies)(prop))
        long = pytest.mark.fuzz(settings(max_examples=full, phases=FULL_PHASES)(
            given(*strategies)(prop)))
        globs = globals()
        globs[f"test_{prop.__name__}"] = quick
        globs[f"test_{prop.__name__}_full"] = long
        return prop
    return deco


def strategies(*strats: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def deco(fn: Callable[..., None]) -> Callable[..., None]:
        fn.strategies = strats  # type: ignore[attr-defined]
        return fn
    return deco


# ---- 1. the seeds with random edits ----------------------------------------------------------


@twice(short=40, full=2000)
@strategies(fk.mutated_seed())
def mutated_seeds(case: tuple[str, str]) -> None:
    text, suffix = case
    fk.check_cli(text, suffix, label="mutated seed")


@st.composite
def damaged_seed(draw: Any) -> tuple[str, str]:
    """A seed with bullets or a heading added above it, quoted whole, or its section titles
    unnumbered or removed (tests/renderings.py), then a few random edits."""
    key = draw(st.sampled_from(fk.SEED_KEYS))
    text = fk.seed_text(key)
    suffix = ".md" if key in fk.MARKDOWN_SEEDS else ".txt"
    made = [R.bulleted(text, suffix), R.quoted_whole(text, suffix),
            *R.headings_damaged(text, suffix), R.titles_without_numbers(text, suffix)]
    r = made[draw(st.integers(0, len(made) - 1))]
    return draw(fk.edited(r.text, max_edits=3)), r.suffix


@twice(short=12, full=400)
@strategies(damaged_seed())
def damaged_renderings(case: tuple[str, str]) -> None:
    """Content is never dropped (fk.check_nothing_dropped), whatever is around it."""
    text, suffix = case
    fk.check_pipeline(text, f"doc{suffix}", label="damaged rendering")


@twice(short=12, full=400)
@strategies(fk.mutated_seed())
def mutated_seeds_pipeline(case: tuple[str, str]) -> None:
    text, suffix = case
    fk.check_pipeline(text, f"doc{suffix}", label="mutated seed (pipeline)")


@twice(short=20, full=500)
@strategies(st.sampled_from(fk.SEED_KEYS), st.integers(0, 10**7))
def truncated_seeds(key: str, cut: int) -> None:
    data = fk.seed_text(key).encode("utf-8")
    fk.check_cli(data[:cut % (len(data) + 1)], ".txt", label="truncated")


@twice(short=10, full=300)
@strategies(st.sampled_from(fk.SEED_KEYS), st.randoms(use_true_random=False),
            st.integers(1, 300))
def shuffled_lines(key: str, rnd: random.Random, window: int) -> None:
    lines = fk.seed_text(key).split("\n")
    start = rnd.randrange(len(lines))
    part = lines[start:start + window]
    rnd.shuffle(part)
    lines[start:start + window] = part
    fk.check_cli("\n".join(lines), ".txt", label="shuffled lines")


@twice(short=12, full=500)
@strategies(st.sampled_from(fk.SEED_KEYS),
            st.lists(st.sampled_from(sorted(fk.LOOKALIKES)), min_size=1, max_size=6,
                     unique=True))
def unicode_lookalikes(key: str, which: list[str]) -> None:
    fk.check_cli(fk.all_lookalikes(fk.seed_text(key), which), ".txt", label="look-alikes")


@twice(short=15, full=500)
@strategies(st.binary(max_size=4096), st.sampled_from(("", "000", "001")),
            st.integers(0, 10**7))
def binary_junk(junk: bytes, key: str, at: int) -> None:
    base = fk.seed_text(key).encode("utf-8") if key else b""
    k = at % (len(base) + 1)
    fk.check_cli(base[:k] + junk + base[k:], ".txt", label="binary junk")


# ---- 2. formulas with hostile operators, literals and ranges ---------------------------------

ATOMS = ["i", "%laneid", "groupID", "threadID_in_group", "0", "1", "3", "4", "8", "0x3",
         "0xffffffffffffffff", "18446744073709551616", "9" * 30, "%warpid", "%bogus",
         "undefined_name", "row", "col"]
BINOPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]
RIGHTS = ["0", "-1", "1", "2", "64", "65", "100000", "i", "%laneid", "(0 - 1)"]


def expressions() -> st.SearchStrategy[str]:
    leaf = st.sampled_from(ATOMS)
    return st.recursive(leaf, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(BINOPS), inner).map(" ".join),
        st.tuples(inner, st.sampled_from(BINOPS), st.sampled_from(RIGHTS)).map(" ".join),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"-{e}")), max_leaves=8)


def guards() -> st.SearchStrategy[str]:
    n = st.sampled_from(["0", "3", "4", "7", "8", "100000000", "18446744073709551615",
                         "99999999999999999999999"])
    return st.one_of(
        st.just(""), st.just("otherwise"),
        st.tuples(st.sampled_from(["ai", "bi"]), st.sampled_from(["<", ">=", "==", "!="]),
                  n).map(lambda t: f"for {t[0]} where i {t[1]} {t[2]}"),
        st.tuples(n, n).map(lambda t: f"for ai where i = {{{t[0]},..,{t[1]}}}"),
        st.tuples(n, n).map(lambda t: f"for ai where {t[0]} <= i < {t[1]} || i = {{0}}"),
        st.lists(st.integers(0, 10**9).map(str), min_size=1, max_size=4).map(
            lambda v: "for " + " and ".join(f"a{x}" for x in v)))


def formula(name: str) -> st.SearchStrategy[str]:
    case = st.tuples(expressions(), guards()).map(" ".join)
    return st.lists(case, min_size=1, max_size=3).map(
        lambda cs: f"{name} = " + "\n      ".join(cs))


@twice(short=25, full=1000)
@strategies(st.one_of(st.just(ROW), formula("row")), st.one_of(st.just(COL), formula("col")))
def hostile_formulas(row: str, col: str) -> None:
    # no range may ever be enumerated: {0,..,100000000} is decided symbolically
    fk.check_cli(a_section(row, col, "9.1"), ".txt", budget_s=60, label="formulas")


@pytest.mark.parametrize("row,col", [
    ("row = groupID for ai where i = {0,..,100000000}", COL),
    (ROW, "col = i for ai where i = {0,..,100000000} || i = {3,..,99999999}"),
    ("row = groupID % 0", COL),
    ("row = groupID >> -1", "col = i << 100000"),
    ("row = groupID << 64", "col = (i * 0xffffffffffffffff) >> 64"),
    ("row = " + "(" * 3000 + "groupID" + ")" * 3000, COL),
    ("row = " + "(" * 60 + "groupID" + ")" * 60, COL),
    ("row = " + " * ".join(["(groupID + 18446744073709551615)"] * 30), COL),
], ids=["range-1e8", "ranges-or", "mod-0", "negative-shift", "shift-64", "parens-3000",
        "parens-60", "huge-product"])
def test_hostile_formula_examples(row: str, col: str) -> None:
    fk.check_cli(a_section(row, col, "9.1"), ".txt", budget_s=60, label="formulas")


# ---- 3. "same as" references: self, mutual, chains --------------------------------------------

SHAPES = ["m16n8k16", "m16n8k32", "m16n8k8", "m8n8k4", "m16n8k4", "m16n8k64", "m8n8k16"]
QUALIFIERS = ["integer type", "floating point type", ".f16 floating point type", "any type"]


def reference(shape: str, qualifier: str, operands: str) -> str:
    return (f"Matrix fragments for {operands} are the same as in case of Matrix Fragments for "
            f"mma.{shape} with {qualifier}.")


@st.composite
def referencing_documents(draw: Any) -> str:
    n = draw(st.integers(1, 6))
    titles = [(f"9.{k + 1}", draw(st.sampled_from(SHAPES)), draw(st.sampled_from(QUALIFIERS)))
              for k in range(n)]
    out = []
    for k, (num, shape, qual) in enumerate(titles):
        body = A_BLOCK.replace("ROW", ROW).replace("COL", COL) if draw(st.booleans()) else ""
        for _ in range(draw(st.integers(0, 3))):
            j = draw(st.sampled_from(["self", "next", "prev", "any"]))
            idx = {"self": k, "next": (k + 1) % n, "prev": (k - 1) % n,
                   "any": draw(st.integers(0, n - 1))}[j]
            _n, t_shape, t_qual = titles[idx]
            ops = draw(st.sampled_from(["multiplicand B", "multiplicand A",
                                        "multiplicand B and accumulators C and D",
                                        "accumulators C and D"]))
            body += reference(t_shape, t_qual, ops) + "\n"
        out.append(f"{num}. Matrix Fragments for mma.{shape} with {qual}\n{body}")
    return "\n".join(out)


@twice(short=20, full=500)
@strategies(referencing_documents())
def references(doc: str) -> None:
    fk.check_cli(doc, ".txt", label="references")


# ---- 4. structure: tables, quotes, HTML, empty sections -------------------------------------

def huge_tables(rows: int, form: str) -> None:
    if form == "flat":
        table = "\n".join([ROW_TEXT] * rows)
    elif form == "markdown":
        table = "| .atype | Fragment | Elements |\n| --- | --- | --- |\n" + "\n".join(
            ["| .u8 / .s8 | two .b32 registers of four .u8 / .s8 elements each | a0, a1, "
             "\u2026, a7 |"] * rows)
    else:
        table = ".atype |\nFragment | Elements |\n|---|---|---|\n" + "\n".join(
            [".u8 / .s8 |", "A vector expression containing two .b32 registers, each "
             "containing four .u8 / .s8 elements from matrix A. |", "a0, a1, a2 |"] * rows)
    body = A_BLOCK.replace(A_BLOCK.split("\n")[2], table).replace("ROW", ROW).replace("COL", COL)
    fk.check_cli(section("9.1", "m16n8k16", body), ".md" if form == "markdown" else ".txt",
                 label="huge tables")


TABLE_FORMS = st.sampled_from(["flat", "markdown", "cells"])
test_huge_tables = settings(max_examples=budget(6))(
    given(st.integers(1, 300), TABLE_FORMS)(huge_tables))
test_huge_tables_full = pytest.mark.fuzz(settings(max_examples=100, phases=FULL_PHASES)(
    given(st.integers(1, 5000), TABLE_FORMS)(huge_tables)))


@twice(short=8, full=300)
@strategies(st.integers(0, 10**6), st.integers(1, 3000), st.integers(1, 40))
def deep_quotes(at: int, depth: int, lines: int) -> None:
    text = fk.seed_text("001").split("\n")
    k = at % len(text)
    for j in range(k, min(len(text), k + lines)):
        text[j] = "> " * depth + text[j]
    fk.check_cli("\n".join(text), ".md", label="deep quotes")


HTML_DAMAGE = ["</section>", "</pre>", "</td>", "</tr>", "</table>", "</p>", "</h2>", "</h5>",
               "</div>", "</code>", "</figure>", "</a>", "</span>"]
HTML_JUNK = ["<pre>", "<td>", "<tr>", "<table>", "<h2>", "<section>", "<!--", "<script>",
             "<![CDATA[", "<?xml ?>", "&zzz;", "&#x3e;", "&#62;", "&gt", "&#xFFFFFFFF;",
             "&#0;", "&gt;&gt;", "&amp;gt;", "<br>", "<img alt=\"&#x3e;\">", "</", "<", "&",
             "<a class=\"headerlink\">", "<button>", "<style>"]


@st.composite
def malformed_html(draw: Any) -> str:
    page = fk.seed_html(draw(st.sampled_from(fk.MARKDOWN_SEEDS)))
    for _ in range(draw(st.integers(1, 10))):
        if draw(st.booleans()):
            tag = draw(st.sampled_from(HTML_DAMAGE))
            hits = [m.start() for m in re.finditer(re.escape(tag), page)]
            if hits:
                k = hits[draw(st.integers(0, 10**6)) % len(hits)]
                page = page[:k] + page[k + len(tag):]
        else:
            k = draw(st.integers(0, 10**7)) % (len(page) + 1)
            page = page[:k] + draw(st.sampled_from(HTML_JUNK)) + page[k:]
    if draw(st.booleans()):
        page = page.replace("&gt;", draw(st.sampled_from(["&#x3e;", "&#62;", "&zzz;", "&gt"])))
    return page


@twice(short=15, full=600)
@strategies(malformed_html())
def html_damage(page: str) -> None:
    fk.check_cli(page, ".html", label="malformed HTML")


@st.composite
def hollow_documents(draw: Any) -> str:
    parts = []
    for k in range(draw(st.integers(1, 40))):
        shape = draw(st.sampled_from(SHAPES))
        head = draw(st.sampled_from([
            f"9.{k}. Matrix Fragments for mma.{shape}",
            f"9.{k}. Matrix Fragments for sparse mma.{shape} with .f16 type",
            f"# 9.{k}. Matrix Fragments for mma.{shape}", f"##### 9.{k}.", "#", "9.1. x",
            f"<h2>9.{k}. Matrix Fragments for mma.{shape}</h2>"]))
        body = draw(st.sampled_from(["", "Multiplicand A:", "Multiplicand B:\n\nAccumulators:",
                                     "Metadata:", "Where", "row =", "col = [firstcol ... ]",
                                     ".s8:", "| .atype |", "```", "> ", "Multiplicand A:\n"
                                     ".atype Fragment Elements (low to high)"]))
        parts.append(head + "\n" + body)
    return "\n\n".join(parts)


@twice(short=15, full=300)
@strategies(hollow_documents(), st.sampled_from([".txt", ".md"]))
def empty_sections(doc: str, suffix: str) -> None:
    fk.check_cli(doc, suffix, label="empty sections")


# ---- 5. the parsers on their own (cheap, many cases) --------------------------------------------

LINE_ALPHABET = st.one_of(fk.ALPHABET, st.sampled_from(fk.TOKENS + fk.OPERATORS + fk.NUMBERS
                                                       + ATOMS))


@twice(short=150, full=3000)
@strategies(st.lists(LINE_ALPHABET, max_size=30).map(" ".join),
            st.sampled_from(("pseudo",) + FRAGMENT_STARTS))
def parsers(text: str, start: str) -> None:
    fk.CASES["parser"] += 1
    src = SourceText.at(text, "line.txt", 3, 5)
    if start == "pseudo":
        _value, findings = parse_pseudo_line(src)
    else:
        _value, findings = parse_prose(src, start, "this text")
    for f in findings:
        assert f.span.line == 3 and 5 <= f.span.column <= 5 + len(text), f.format()


# ---- 6. big documents: bounded time and memory ------------------------------------------------


def big_document(kind: str, size: int) -> bytes:
    if kind == "seeds":
        unit = "\n".join(fk.seed_text(k) for k in ("000", "003")).encode()
    elif kind == "one line":
        unit = b"row = groupID + 8 for ai where i >= 4 " * 64
    elif kind == "brackets":
        unit = b"# 9.1. [Matrix](x)\n" + b"[" * 4096 + b"\n" + b"(" * 4096 + b"\n"
    elif kind == "quotes":
        unit = b"> " * 2000 + b"Multiplicand A:\n"
    elif kind == "entities":
        unit = b"<html><pre>" + b"&gt;&gt;&#x3e;&zzz;\n" * 200
    elif kind == "paragraph":
        unit = b"# 9.1. Matrix Fragments for mma.m16n8k16\nword [x](y) `z` \\*\n" + \
            b"a b c d e f g h\n" * 200
    else:
        raise ValueError(kind)
    return (unit * (size // len(unit) + 1))[:size]


BIG_KINDS = ["seeds", "one line", "brackets", "quotes", "entities", "paragraph"]


@pytest.mark.parametrize("kind", BIG_KINDS)
def test_big_documents_short(kind: str) -> None:
    fk.check_cli(big_document(kind, 200_000), ".html" if kind == "entities" else ".md",
                 budget_s=60, label="big documents")


@pytest.mark.fuzz
@pytest.mark.parametrize("kind", BIG_KINDS)
def test_big_documents_full(kind: str) -> None:
    fk.check_cli(big_document(kind, 10_000_000), ".html" if kind == "entities" else ".md",
                 budget_s=300, label="big documents")


def test_a_document_over_the_limit_is_a_finding() -> None:
    out = fk.check_cli(big_document("seeds", 2_000_000), ".txt", "--max-size", "1000000",
                       label="big documents")
    assert [(f["kind"], f["line"], f["column"]) for f in out["findings"]] == [("input", 1, 1)]


def peak_of_child(data: bytes, suffix: str, tmp: Any) -> tuple[int, float, int]:
    """(exit status, seconds, peak resident bytes) of ``ptxlayout prove`` in a process of
    its own, so that its peak memory is its own: the child writes its ``VmHWM`` (the high
    water mark of its own address space, new at exec) as it exits.  ``ru_maxrss`` of
    ``wait4`` would not do: Linux carries the forking parent's size into the child's figure,
    and a test worker is large."""
    import os
    import subprocess
    import sys
    import time

    path = tmp / f"big{suffix}"
    path.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    hwm = tmp / "hwm"
    probe = ("import atexit, runpy, sys\n"
             "def _hwm():\n"
             "    for line in open('/proc/self/status'):\n"
             "        if line.startswith('VmHWM:'):\n"
             f"            open({str(hwm)!r}, 'w').write(line.split()[1])\n"
             "atexit.register(_hwm)\n"
             "sys.argv = ['ptxlayout', *sys.argv[1:]]\n"
             "runpy.run_module('formal', run_name='__main__')\n")
    child = subprocess.Popen([sys.executable, "-c", probe, "prove", str(path), "--format",
                              "json", "-o", str(tmp / "out.json")], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    status = child.wait()
    seconds = time.perf_counter() - t0
    return status, seconds, int(hwm.read_text()) * 1024


@pytest.mark.parametrize("kind", ["one line", "quotes"])
def test_ten_megabytes_in_bounded_time_and_memory(kind: str, tmp_path: Any) -> None:
    code, seconds, peak = peak_of_child(big_document(kind, 10_000_000), ".md", tmp_path)
    assert code in (0, 1) and seconds < 120 and peak < 1 << 30, (code, seconds, peak)


@pytest.mark.fuzz
@pytest.mark.parametrize("kind", BIG_KINDS)
def test_ten_megabytes_in_bounded_time_and_memory_full(kind: str, tmp_path: Any) -> None:
    code, seconds, peak = peak_of_child(big_document(kind, 10_000_000),
                                        ".html" if kind == "entities" else ".md", tmp_path)
    assert code in (0, 1) and seconds < 900 and peak < 4 << 30, (code, seconds, peak)
