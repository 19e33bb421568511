"""Never lie: a wrong Z3 encoding, a Z3 that gives up, or a broken layout can never turn into
a false "proved".

(a) A planted wrong encoding (``formal.prove.TEST_HOOKS["encoding"]``: every query replaced
    by False, by True, or negated) is caught by the enumeration cross-check and reported as
    an internal error (exit status 2, a finding of kind ``internal``) wherever the planted
    answer differs from the truth -- for a wrong layout and for a correct one alike; where
    it happens to agree with the truth, the verdicts are the honest ones.
(b) A Z3 time limit of 1 ms changes no verdict and no exit status: where Z3 times out, the
    exhaustive enumeration of the finite map decides, and the obligation says so.
(c) ``--cross-check off`` gives the same verdicts on the seeds.
(d) Broken layouts -- a collision, a hole, a cell out of range, overlapping cases, a missing
    case -- are refuted, and each counterexample is re-checked here by an evaluator of our
    own (plain Python lambdas written beside the formulas, not formal.model.algebra).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import z3

from formal import prove
from formal.cli import main

# ---- running the CLI in-process ----------------------------------------------------------------


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    """Verdicts are cached by map digest: a planted encoding must meet an empty cache."""
    prove.clear_cache()
    yield
    prove.TEST_HOOKS.clear()
    prove.clear_cache()


def run(*args: str) -> tuple[int, dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["prove", *args, "--format", "json"])
    return code, json.loads(out.getvalue())


def verdicts(result: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(lay["id"], ob["name"]): ob["status"] for lay in result["layouts"]
            for ob in lay["obligations"]}


# ---- layouts of our own: a 16 x 8 accumulator tile, 4 elements per lane ---------------------

HEAD = """9.1. Matrix Fragments for mma.m16n8k16 with floating point type
Accumulators (C or D):
.ctype / .dtype Fragment Elements (low to high)
{row}
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
"""
F32 = (".f32 A vector expression containing four .f32 registers, containing four .f32 "
       "elements from the matrix C (or D). c0, c1, c2, c3")

Case = tuple[Callable[[int, int], bool], Callable[[int, int], int]]  # (condition, value)


def g(t: int) -> int:  # groupID, by hand
    return t >> 2


def q(t: int) -> int:  # threadID_in_group, by hand
    return t % 4


# Each layout: its formulas as the spec writes them, and the same formulas as Python cases
# (condition, value) with first-match reading, for the independent evaluator.
LAYOUTS: dict[str, tuple[str, list[Case], list[Case]]] = {
    "correct": (
        "row = groupID for ci where i < 2\n      groupID + 8 for ci where i >= 2\n"
        "col = (threadID_in_group * 2) + (i & 0x1) for ci where i = {0,..,3}",
        [(lambda t, i: i < 2, lambda t, i: g(t)), (lambda t, i: i >= 2, lambda t, i: g(t) + 8)],
        [(lambda t, i: 0 <= i <= 3, lambda t, i: q(t) * 2 + (i & 1))]),
    "collision": (
        "row = groupID for ci where i < 2\n      groupID + 8 for ci where i >= 2\n"
        "col = ((threadID_in_group >> 1) * 2) + (i & 0x1)",
        [(lambda t, i: i < 2, lambda t, i: g(t)), (lambda t, i: i >= 2, lambda t, i: g(t) + 8)],
        [(lambda t, i: True, lambda t, i: (q(t) >> 1) * 2 + (i & 1))]),
    "hole": (
        "row = groupID for ci where i < 2\n      groupID + 8 for ci where i >= 2\n"
        "col = (threadID_in_group * 2) + (i & 0x1) - (threadID_in_group & 1)",
        [(lambda t, i: i < 2, lambda t, i: g(t)), (lambda t, i: i >= 2, lambda t, i: g(t) + 8)],
        [(lambda t, i: True, lambda t, i: q(t) * 2 + (i & 1) - (q(t) & 1))]),
    "out-of-range": (
        "row = groupID for ci where i < 2\n      groupID + 9 for ci where i >= 2\n"
        "col = (threadID_in_group * 2) + (i & 0x1)",
        [(lambda t, i: i < 2, lambda t, i: g(t)), (lambda t, i: i >= 2, lambda t, i: g(t) + 9)],
        [(lambda t, i: True, lambda t, i: q(t) * 2 + (i & 1))]),
    "overlapping-cases": (
        "row = groupID for ci where i <= 2\n      groupID + 8 for ci where i >= 2\n"
        "col = (threadID_in_group * 2) + (i & 0x1)",
        [(lambda t, i: i <= 2, lambda t, i: g(t)), (lambda t, i: i >= 2, lambda t, i: g(t) + 8)],
        [(lambda t, i: True, lambda t, i: q(t) * 2 + (i & 1))]),
    "missing-case": (
        "row = groupID for ci where i < 2\n      groupID + 8 for ci where i > 2\n"
        "col = (threadID_in_group * 2) + (i & 0x1)",
        [(lambda t, i: i < 2, lambda t, i: g(t)), (lambda t, i: i > 2, lambda t, i: g(t) + 8)],
        [(lambda t, i: True, lambda t, i: q(t) * 2 + (i & 1))]),
}
ROWS, COLS, LANES, N = 16, 8, 32, 4


def document(tmp_path: Path, name: str) -> str:
    formulas = LAYOUTS[name][0]
    path = tmp_path / f"{name}.txt"
    path.write_text(HEAD.format(row=F32) + formulas + "\n", encoding="utf-8")
    return str(path)


# ---- the independent evaluator ------------------------------------------------------------------


def matching(cases: list[Case], t: int, i: int) -> list[int]:
    return [k for k, (cond, _v) in enumerate(cases) if cond(t, i)]


def cell(name: str, t: int, i: int) -> tuple[int, int] | None:
    """(row, col) of lane t, element i by first match; None where a formula has no case."""
    _text, rows, cols = LAYOUTS[name]
    r, c = matching(rows, t, i), matching(cols, t, i)
    if not r or not c:
        return None
    return rows[r[0]][1](t, i), cols[c[0]][1](t, i)


def element(e: str) -> int:
    assert e.startswith("c")
    return int(e[1:])


def recheck(name: str, ob: str, cex: dict[str, Any]) -> None:
    """Assert that the counterexample of obligation ``ob`` is a real fault of the map."""
    if ob == "cases":
        t, i = cex["lane"], element(cex["element"])
        rows = matching(LAYOUTS[name][1], t, i) if cex["formula"] == "row" else \
            matching(LAYOUTS[name][2], t, i)
        assert len(rows) != 1 and [k + 1 for k in rows] == cex["cases"], (cex, rows)
    elif ob == "in-range":
        rc = cell(name, cex["lane"], element(cex["element"]))
        assert rc is not None and rc == (cex["row"], cex["col"])
        assert not (0 <= rc[0] < ROWS and 0 <= rc[1] < COLS)
    elif ob == "injective":
        a, b = cex["first"], cex["second"]
        pa, pb = (a["lane"], element(a["element"])), (b["lane"], element(b["element"]))
        assert pa != pb
        ca, cb = cell(name, *pa), cell(name, *pb)
        assert ca is not None and ca == cb == (cex["cell"]["row"], cex["cell"]["col"])
    elif ob == "surjective":
        want = (cex["cell"]["row"], cex["cell"]["col"])
        assert 0 <= want[0] < ROWS and 0 <= want[1] < COLS
        assert all(cell(name, t, i) != want for t in range(LANES) for i in range(N))
    else:
        raise AssertionError(f"no re-check for {ob}")


def truth(name: str) -> dict[str, bool]:
    """Which of the four map obligations hold, decided by the independent evaluator."""
    _text, rows, cols = LAYOUTS[name]
    pts = [(t, i) for t in range(LANES) for i in range(N)]
    cases = all(len(matching(rows, t, i)) == 1 and len(matching(cols, t, i)) == 1
                for t, i in pts)
    cells = [cell(name, t, i) for t, i in pts]
    got = [c for c in cells if c is not None]
    return {"cases": cases,
            "in-range": all(0 <= r < ROWS and 0 <= c < COLS for r, c in got),
            "injective": len(set(got)) == len(got),
            "surjective": {(r, c) for r in range(ROWS) for c in range(COLS)} <= set(got)}


# ---- (d) broken layouts are refuted, with a counterexample that re-checks -----------------------

FAULT = {"collision": "injective", "hole": "surjective", "out-of-range": "in-range",
         "overlapping-cases": "cases", "missing-case": "cases"}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_verdicts_match_an_independent_evaluator(tmp_path: Path, name: str) -> None:
    code, result = run(document(tmp_path, name), "--no-catalog")
    [lay] = result["layouts"]
    status = {ob["name"]: ob for ob in lay["obligations"]}
    facts = truth(name)
    if name != "correct":
        assert not facts[FAULT[name]], "the broken layout must really be broken"
        assert status[FAULT[name]]["status"] == "refuted"
    for ob, holds in facts.items():
        got = status[ob]["status"]
        if holds:
            # a map obligation that holds is never refuted (it may go undecided after an
            # earlier fault, e.g. 'surjective' once 'cases' fails)
            assert got in ("proved", "not-applicable"), (ob, got)
        else:
            assert got == "refuted", (ob, got)  # a "proved" here would be a lie
            recheck(name, ob, status[ob]["counterexample"])
    assert code == (0 if all(facts.values()) else 1)
    assert result["summary"]["internal_errors"] == 0


# ---- (a) a planted wrong encoding is an internal error, never a verdict ------------------------

HOOKS: dict[str, Callable[[str, Any], Any]] = {
    "always-unsat": lambda name, f: z3.BoolVal(False),  # Z3 "proves" everything
    "always-sat": lambda name, f: z3.BoolVal(True),  # Z3 refutes everything
    "negated": lambda name, f: z3.Not(f),
}


@pytest.mark.parametrize("hook", sorted(HOOKS))
@pytest.mark.parametrize("name", ["correct", "collision", "hole", "out-of-range"])
def test_a_wrong_encoding_is_an_internal_error(tmp_path: Path, hook: str, name: str) -> None:
    path = document(tmp_path, name)
    honest_code, honest = run(path, "--no-catalog")
    prove.clear_cache()
    prove.TEST_HOOKS["encoding"] = HOOKS[hook]
    code, planted = run(path, "--no-catalog")
    facts = truth(name)
    # the planted answer is wrong for some query exactly when it disagrees with the truth:
    # always-unsat is right only on a correct map; always-sat and negation never are
    lied = not (hook == "always-unsat" and all(facts.values()))
    if lied:
        assert code == 2
        assert [f["kind"] for f in planted["findings"] if f["kind"] == "internal"] \
            == ["internal"]
        assert all(ob["status"] == "error" for lay in planted["layouts"]
                   for ob in lay["obligations"])
        assert planted["summary"]["internal_errors"] == 1
    else:
        assert code == honest_code == 0
        assert verdicts(planted) == verdicts(honest)


def test_a_planted_encoding_on_the_seeds_is_never_a_verdict(seeds: dict[str, Path]) -> None:
    """The same on real text: Z3 'proves' everything, the cross-check refuses every layout
    whose truth differs, and no verdict of the planted run contradicts the honest one."""
    paths = [str(p) for p in seeds.values()]
    _code, honest = run(*paths)
    prove.clear_cache()
    prove.TEST_HOOKS["encoding"] = HOOKS["negated"]
    code, planted = run(*paths)
    assert code == 2
    truth_ = verdicts(honest)
    for key, status in verdicts(planted).items():
        assert status in (truth_[key], "error"), (key, status, truth_[key])
    assert planted["summary"]["internal_errors"] > 0


# ---- (b) a Z3 that gives up never changes a verdict: the enumeration decides ---------------------


def _timed_out_matches(hurried_code: int, hurried: dict[str, Any], code: int,
                       honest: dict[str, Any]) -> None:
    assert hurried_code == code
    assert verdicts(hurried) == verdicts(honest)
    assert [(f["kind"], f["line"], f["message"]) for f in hurried["findings"]] == \
        [(f["kind"], f["line"], f["message"]) for f in honest["findings"]]
    assert [r["status"] for r in hurried["relations"]] == \
        [r["status"] for r in honest["relations"]]
    # the obligations Z3 left undecided say how they were decided; the honest run has none
    notes = {ob.get("note") for lay in hurried["layouts"] for ob in lay["obligations"]}
    assert notes <= {None, "decided by enumeration; Z3 timed out after 0.001 s"}
    assert not any("note" in ob for lay in honest["layouts"] for ob in lay["obligations"])
    assert "unknown" not in verdicts(hurried).values()


def _timed_out_matches_default(*paths: str) -> dict[str, Any]:
    code, honest = run(*paths)
    prove.clear_cache()
    hurried_code, hurried = run(*paths, "--timeout", "0.001")
    _timed_out_matches(hurried_code, hurried, code, honest)
    return hurried


@lru_cache(maxsize=1)
def _catalog_hurried_then_patient() -> tuple[int, dict[str, Any], int, dict[str, Any]]:
    """The catalog proved with a 1 ms limit from an empty verdict cache, then with the default
    limit in the same process after it (what the two catalog tests below read: two proofs a
    process, not four).  The patient run must be the honest report, byte for byte the golden
    that test_golden's own run reproduces (tests/golden/prove-catalog.json)."""
    prove.clear_cache()
    hurried_code, hurried = run("--timeout", "0.001")
    code, patient = run()
    return hurried_code, hurried, code, patient


GOLDEN_CATALOG = Path(__file__).resolve().parent / "golden" / "prove-catalog.json"


@pytest.mark.slow
def test_a_one_millisecond_timeout_changes_nothing_on_the_catalog() -> None:
    """Issue 28: every map is finite, so where Z3 times out the exhaustive enumeration --
    a proof on its own -- decides; the catalog keeps every status and its exit status."""
    hurried_code, hurried, code, patient = _catalog_hurried_then_patient()
    assert patient == json.loads(GOLDEN_CATALOG.read_text(encoding="utf-8"))  # the honest one
    _timed_out_matches(hurried_code, hurried, code, patient)


def test_a_one_millisecond_timeout_changes_nothing_on_the_seeds(
        seeds: dict[str, Path]) -> None:
    hurried = _timed_out_matches_default(*[str(p) for p in seeds.values()])
    notes = [ob for lay in hurried["layouts"] for ob in lay["obligations"] if "note" in ob]
    assert notes, "a 1 ms limit should leave some query to the enumeration"
    assert {ob["status"] for ob in notes} <= {"proved", "refuted"}


# ---- (c) without the cross-check, the verdicts on the seeds are the same ----------------------


def test_cross_check_off_gives_the_same_verdicts(seeds: dict[str, Path]) -> None:
    paths = [str(p) for p in seeds.values()]
    code_on, on = run(*paths)
    prove.clear_cache()
    code_off, off = run(*paths, "--cross-check", "off")
    assert code_on == code_off == 1
    assert verdicts(on) == verdicts(off)
    assert [(f["kind"], f["line"], f["column"], f["message"]) for f in on["findings"]] == \
        [(f["kind"], f["line"], f["column"], f["message"]) for f in off["findings"]]


def test_cross_check_off_asks_z3_what_the_default_run_asks(
        seeds: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the cross-check the maps' combined queries are asked together as well (one
    disjunction of several maps, ``driver._ask_together``), far fewer questions than one per
    map; the verdicts are the default run's, and a group that holds a broken map still
    refutes it (the group is sat, and the map is asked alone)."""
    from formal.prove import encode, formula
    calls: list[tuple[str, str]] = []
    real = encode.solve

    def counting(name: str, f: Any, *args: Any, **kw: Any) -> Any:
        got = real(name, f, *args, **kw)
        calls.append((name, got[0]))
        return got

    monkeypatch.setattr(formula, "solve", counting)
    monkeypatch.setattr(encode, "solve", counting)
    paths = [str(p) for p in seeds.values()] + [document(tmp_path, n) for n in sorted(LAYOUTS)]
    asked: list[list[tuple[str, str]]] = []
    reports = []
    for extra in ((), ("--cross-check", "off")):
        prove.clear_cache()
        calls.clear()
        code, report = run(*paths, "--no-cache", *extra)
        assert code == 1
        asked.append(list(calls))
        reports.append(report)
    off = asked[1]
    assert verdicts(reports[0]) == verdicts(reports[1])
    mine = {lay["document"].rsplit("/", 1)[-1][:-4]: lay for lay in reports[1]["layouts"]
            if lay["document"].startswith(str(tmp_path))}
    assert sorted(mine) == sorted(LAYOUTS)
    for name, ob in FAULT.items():
        assert {o["name"]: o["status"] for o in mine[name]["obligations"]}[ob] == "refuted"
    combined = [r for name, r in off if name == "combined"]
    maps = [lay for lay in reports[1]["layouts"]
            if any(ob["name"] == "injective" and ob["status"] in ("proved", "refuted")
                   for ob in lay["obligations"])]
    assert "unsat" in combined and "sat" in combined
    assert 0 < len(combined) < len(maps) // 4  # asked one per map: 39 here


def test_a_verdict_cached_under_one_time_limit_is_not_reused_under_another() -> None:
    """Bug: the verdict cache (by map digest) ignored the time limit, so after a hurried run
    in the same process a patient run got the hurried run's 'unknown's back."""
    _hurried_code, _hurried, code, patient = _catalog_hurried_then_patient()
    assert "unknown" not in verdicts(patient).values()
    assert code == 0
    # and nothing else of the hurried run came back: the patient report is the honest one
    assert patient == json.loads(GOLDEN_CATALOG.read_text(encoding="utf-8"))
