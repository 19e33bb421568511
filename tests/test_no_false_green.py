"""Never a false green (issue 23): what was not read is never "proved", and a run in which text
that looks like a fragment section was not checked never exits 0.

Every case starts from the same small document: the first 49 lines of seed 000 (one
m16n8k16 integer section, A and B) with ``row = groupID`` made ``row = groupID >> 1``, which
is refuted as it is (two lanes share a cell; exit 1).  Each damage below must keep that
verdict, or end in a finding that names what was not checked -- never exit 0.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from formal.cli import main

from .conftest import seed_path

WRONG = "row =      groupID >> 1 "


@pytest.fixture(scope="module")
def base() -> list[str]:
    lines = seed_path("000").read_text().split("\n")[:49]
    k = next(n for n, ln in enumerate(lines) if ln.startswith("row =      groupID  "))
    lines[k] = lines[k].replace("row =      groupID  ", WRONG, 1)
    return lines


def prove(tmp_path: Path, lines: list[str], *args: str,
          name: str = "doc.txt") -> tuple[int, dict[str, Any]]:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["prove", str(p), "--format", "json", *args])
    return code, json.loads(out.getvalue())


def errors(result: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(f["line"], f["kind"], f["message"]) for f in result["findings"]
            if f["severity"] == "error"]


def statuses(result: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {lay["id"]: {ob["name"]: ob["status"] for ob in lay["obligations"]}
            for lay in result["layouts"]}


def refuted_a(result: dict[str, Any]) -> None:
    """The A layouts are refuted (two lanes in one cell), the B ones proved."""
    st = statuses(result)
    a = [k for k in st if ".A." in k]
    b = [k for k in st if ".B." in k]
    assert len(a) == 2 and len(b) == 2, sorted(st)
    assert all(st[k]["injective"] == "refuted" for k in a)
    assert all(st[k]["injective"] == "proved" for k in b)
    kinds = [k for _line, k, _m in errors(result)]
    assert kinds.count("injective") == 1 and kinds.count("surjective") == 1


def test_the_small_document_is_refuted(tmp_path: Path, base: list[str]) -> None:
    code, res = prove(tmp_path, base)
    assert code == 1
    refuted_a(res)


# ---- the reader: how a document looks never changes what is read --------------------------------


@pytest.mark.parametrize("damage", ["bullets", "notes", "quoted"])
def test_markup_around_the_text_changes_nothing_read(tmp_path: Path, base: list[str],
                                                     damage: str) -> None:
    if damage == "bullets":  # four Markdown bullets at the top of a .txt
        lines = ["* a", "* b", "* c", "* d", *base]
    elif damage == "notes":  # a Markdown heading and one list item at the top
        lines = ["# Notes", "", "* item", "", *base]
    else:  # every line quoted
        lines = [f"> {ln}" if ln.strip() else ln for ln in base]
    code, res = prove(tmp_path, lines)
    assert code == 1
    refuted_a(res)
    assert not any(lay["source"] == "figure-only" for lay in res["layouts"])


@pytest.mark.parametrize("prefix", ["000", "001", "002", "003", "004"])
def test_a_seed_with_bullets_or_quotes_reads_as_the_seed(tmp_path: Path, prefix: str) -> None:
    lines = seed_path(prefix).read_text().split("\n")
    _, plain = prove(tmp_path, lines)
    want = sorted((lay["id"], lay["source"]) for lay in plain["layouts"])
    for damaged in (["* a", "* b", "* c", "* d", *lines],
                    [f"> {ln}" if ln.strip() else ln for ln in lines]):
        _, res = prove(tmp_path, damaged)
        assert sorted((lay["id"], lay["source"]) for lay in res["layouts"]) == want
        assert sorted((k, m) for _, k, m in errors(res)) == \
            sorted((k, m) for _, k, m in errors(plain))


# ---- a formula that did not become a map is never proved ---------------------------------------


@pytest.mark.parametrize("damage, message", [
    ("row =      groupID / 0 ", r"division by zero"),
    ("row =      groupID >> 70 ", r"a shift by 70 bits"),
    ("", r"no formula for 'col'"),
])
def test_a_formula_that_is_no_map_is_never_proved(tmp_path: Path, base: list[str], damage: str,
                                                  message: str) -> None:
    if damage:
        lines = [ln.replace(WRONG, damage) for ln in base]
    else:  # A's col line removed
        k = next(n for n, ln in enumerate(base) if ln.startswith("col =  (threadID_in_group"))
        lines = base[:k] + base[k + 1:]
    code, res = prove(tmp_path, lines)
    assert code == 1
    assert [k for _, k, m in errors(res) if re.search(message, m)] == ["model"]
    st = statuses(res)
    a = [k for k in st if ".A." in k]
    assert len(a) == 2
    for k in a:
        assert st[k]["injective"] == "error" and st[k]["surjective"] == "error"
    assert res["summary"]["layouts_proved"] == 2  # the two B layouts only
    assert not any(lay["source"] == "figure-only" for lay in res["layouts"])


# ---- text that looks like a fragment section is checked or named: never exit 0 -----------------


def _without_title(base: list[str]) -> list[str]:
    return base[1:]


def _title_without_number(base: list[str]) -> list[str]:
    return [base[0].split(". ", 1)[1], *base[1:]]


def _without_headings(base: list[str]) -> list[str]:
    return [ln for ln in base if not ln.startswith(("9.7", "Multiplicand"))]


def _lone_formula(base: list[str]) -> list[str]:
    return ["Multiplicand A:", "", "row = %laneid >> 2"]


@pytest.mark.parametrize("damage, first", [
    (_without_title, "Multiplicand A:"),
    (_without_headings, ".u8 / .s8 A vector expression"),
    (_lone_formula, "Multiplicand A:"),
])
def test_a_section_that_opens_nowhere_is_named_not_passed(tmp_path: Path, base: list[str],
                                                          damage: Any, first: str) -> None:
    lines = damage(base)
    code, res = prove(tmp_path, lines)
    assert code == 1
    assert res["layouts"] == []
    unchecked = [f for f in res["findings"] if f["kind"] == "unchecked"]
    assert len(unchecked) == 1
    f = unchecked[0]
    assert f["severity"] == "error"
    assert lines[f["line"] - 1].startswith(first)
    assert "no title that names an instruction and a shape" in f["message"]
    # the one finding counts every line that looks like a fragment section: the operand
    # headings, the table rows and the row/col formulas
    looks = [ln for ln in lines if ln.startswith(("Multiplicand", "row =", "col =", "."))
             and ("vector expression" in ln or not ln.startswith("."))]
    assert f["message"].startswith(f"{len(looks)} lines that look like part of a fragment "
                                   "section were not checked: ")


def test_a_title_without_its_number_opens_its_section(tmp_path: Path, base: list[str]) -> None:
    """A heading is known by its words ("Matrix Fragments for mma.m16n8k16 ..."), numbered
    or not: the section opens and reads to the same layouts and findings as numbered."""
    code, res = prove(tmp_path, base)
    code2, res2 = prove(tmp_path, _title_without_number(base))
    assert res["layouts"] and code2 == code
    def facts(r: dict[str, Any]) -> list[tuple[Any, ...]]:
        return sorted((la["shape"], la["operand"], tuple(la["types"]),
                       [(o["name"], o["status"]) for o in la["obligations"]])
                      for la in r["layouts"])
    assert facts(res2) == facts(res)
    assert sorted(f["kind"] for f in res2["findings"]) == sorted(f["kind"]
                                                                 for f in res["findings"])


def test_an_empty_operand_block_is_an_error(tmp_path: Path, base: list[str]) -> None:
    a = base.index("Multiplicand A:")
    b = base.index("Multiplicand B:")
    lines = base[:a + 1] + base[b:]
    code, res = prove(tmp_path, lines)
    assert code == 1
    assert errors(res) == [(a + 1, "model", "the A block has no table and no formulas: "
                            "nothing of it was checked")]
    assert sorted(lay["operand"] for lay in res["layouts"]) == ["B", "B"]


def test_a_formula_outside_every_block_is_named(tmp_path: Path, base: list[str]) -> None:
    a = base.index("Multiplicand A:")
    lines = base[:a] + ["col = groupID", ""] + base[a:]
    code, res = prove(tmp_path, lines)
    assert code == 1
    refuted_a(res)
    unchecked = [(line, m) for line, k, m in errors(res) if k == "unchecked"]
    assert len(unchecked) == 1 and unchecked[0][0] == a + 1
    assert "a row/col formula was not checked" in unchecked[0][1]


@pytest.mark.parametrize("prefix", ["000", "001", "002", "003", "004"])
def test_the_seeds_leave_nothing_unchecked(prefix: str, tmp_path: Path) -> None:
    _, res = prove(tmp_path, seed_path(prefix).read_text().split("\n"))
    assert [f for f in res["findings"] if f["kind"] == "unchecked"] == []


# ---- the pseudocode's / and % are C's ------------------------------------------------------------


def c_div(a: int, m: int) -> int:
    q = abs(a) // abs(m)
    return q if (a >= 0) == (m > 0) else -q


def c_rem(a: int, m: int) -> int:
    return a - m * c_div(a, m)


def test_division_and_remainder_follow_c() -> None:
    import sympy as sp

    from formal.model.algebra import LANE, SEL, I, c_divide, compile_expr
    for m in (-8, -3, -1, 1, 2, 3, 8):
        for op, ref in (("/", c_div), ("%", c_rem)):
            e = c_divide(op, I - 8, m)
            fn = compile_expr(e)
            for i in range(0, 20):
                want = ref(i - 8, m)
                assert fn(0, i, 0) == want, (op, m, i)
                assert int(e.subs({I: i, LANE: 0, SEL: 0})) == want, (op, m, i)
    # a dividend that is never negative keeps its floor form (formulas and their hashes)
    assert c_divide("%", LANE, 4) == sp.Mod(LANE, 4)
    assert c_divide("/", LANE, 4) == sp.floor(LANE / 4)


def test_a_negative_remainder_is_a_negative_row(tmp_path: Path, base: list[str]) -> None:
    """``row = (groupID - 8) % 8``: floor modulo would make it groupID (a correct layout);
    in C, lane 4 (groupID 1) has row -7.  Z3 and the enumeration agree (else exit 2)."""
    lines = [ln.replace(WRONG, "row =      (groupID - 8) % 8 ") for ln in base]
    code, res = prove(tmp_path, lines)
    assert code == 1
    msgs = [m for _, k, m in errors(res) if k == "in-range"]
    assert msgs == ["lane 4, a0 maps to row -7, col 0, outside the 16 x 16 tile"]


# ---- accept files are validated; --strict accepts nothing ----------------------------------------


def prove_cli(tmp_path: Path, lines: list[str], *args: str) -> tuple[int, str, dict[str, Any]]:
    p = tmp_path / "doc.txt"
    p.write_text("\n".join(lines) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["prove", str(p), "--format", "json", *args])
    return code, err.getvalue(), (json.loads(out.getvalue()) if out.getvalue() else {})


@pytest.mark.parametrize("entries, says", [
    ([{"reason": "oops"}], "names none of kind, layout"),
    ([{"knid": "injective", "reason": "typo"}], "has unknown key(s) 'knid'"),
    ([{"kind": "injectiv", "reason": "typo"}], "accepts no error finding of this run"),
    ([{"kind": "injective", "line": "27", "reason": "x"}], "has 'line' of the wrong type"),
    (["injective"], "is not a JSON object"),
])
def test_an_accept_entry_that_selects_nothing_is_a_usage_error(
        tmp_path: Path, base: list[str], entries: list[Any], says: str) -> None:
    acc = tmp_path / "accept.json"
    acc.write_text(json.dumps([{"kind": "surjective", "reason": "fine"}, *entries]))
    code, err, _ = prove_cli(tmp_path, base, "--accept", str(acc))
    assert code == 2
    assert err.startswith(f"ptxlayout: {acc}: entry 2 {json.dumps(entries[0])} ")
    assert says in err


def test_strict_accepts_nothing_whatever_accept_names(tmp_path: Path, base: list[str]) -> None:
    acc = tmp_path / "accept.json"
    acc.write_text(json.dumps([{"kind": "injective", "reason": "x"},
                               {"kind": "surjective", "reason": "y"}]))
    code, _err, res = prove_cli(tmp_path, base, "--accept", str(acc), "--evidence", "none")
    assert code == 0
    assert res["summary"]["accepted"] == 2
    code, err, res = prove_cli(tmp_path, base, "--accept", str(acc), "--evidence", "none",
                               "--strict")
    assert code == 1
    assert "--strict: the accepted findings of --accept and [tool.ptxlayout] are not applied" in err
    assert res["summary"]["accepted"] == 0


# ---- diff: a revision whose maps were not compared is not a pass ---------------------------------


def diff(tmp_path: Path, old: list[str], new: list[str]) -> tuple[int, dict[str, str]]:
    a, b = tmp_path / "old.txt", tmp_path / "new.txt"
    a.write_text("\n".join(old) + "\n")
    b.write_text("\n".join(new) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["diff", str(a), str(b), "--format", "json", "--evidence", "none"])
    return code, {c["key"]: c["kind"] for c in json.loads(out.getvalue())["changes"]}


def test_diff_of_a_revision_whose_formula_no_longer_parses_fails(tmp_path: Path,
                                                                 base: list[str]) -> None:
    new = [ln.replace(WRONG, "row =      groupID >>> 1 ") for ln in base]
    code, kinds = diff(tmp_path, base, new)
    assert code == 1
    assert kinds == {"mma.m16n8k16.A.e4m3-e5m2": "not-comparable",
                     "mma.m16n8k16.A.s8-u8": "not-comparable",
                     "mma.m16n8k16.B.e4m3-e5m2": "same-text",
                     "mma.m16n8k16.B.s8-u8": "same-text"}


def test_diff_of_a_revision_that_removed_every_layout_fails(tmp_path: Path,
                                                            base: list[str]) -> None:
    new = [ln.replace("m16n8k16", "m16n8k8") for ln in base]
    code, kinds = diff(tmp_path, base, new)
    assert code == 1
    assert sorted(kinds.values()) == ["added"] * 4 + ["removed"] * 4


def test_diff_of_a_revision_against_itself_passes(tmp_path: Path, base: list[str]) -> None:
    code, kinds = diff(tmp_path, base, base)
    assert code == 0 and set(kinds.values()) == {"same-text"}


# ---- figure-only: only what the catalog states ---------------------------------------------------


def _no_formulas(base: list[str]) -> list[str]:
    return [ln for ln in base if not ln.startswith(
        ("row", "col", "groupID", "threadID", "         groupID", "The row and column"))]


def test_a_layout_given_only_as_a_figure_takes_the_catalogs(tmp_path: Path,
                                                            base: list[str]) -> None:
    code, res = prove(tmp_path, _no_formulas(base), "--evidence", "none")
    assert code == 0
    assert {lay["source"] for lay in res["layouts"]} == {"catalog"}
    assert res["summary"]["layouts_proved"] == 4


def test_a_figure_the_catalog_does_not_state_is_never_proved(tmp_path: Path,
                                                             base: list[str]) -> None:
    lines = [ln.replace("m16n8k16", "m16n8k48") for ln in _no_formulas(base)]
    code, res = prove(tmp_path, lines, "--evidence", "none")
    assert code == 1
    assert {lay["source"] for lay in res["layouts"]} == {"figure-only"}
    assert res["summary"]["layouts_proved"] == 0
    for st in statuses(res).values():
        assert st["injective"] == st["surjective"] == "error"
    assert len([f for f in res["findings"] if f["kind"] == "figure-only"]) == 4
