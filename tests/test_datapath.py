"""tcgen05.mma data-path layouts A-G (formal/catalog/tcgen05-datapath.md): read through
grammar/tmem.lark, proved a bijection of TMEM blocks onto D for every N, each block in its
warp's lanes, Layout D read back with tcgen05.ld.32x32b; mutants refuted near their line; the
real sections (Markdown, HTML, browser text) give exactly their one real finding."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from formal import catalog
from formal.cli import main
from formal.model.datapath import datapath_cells
from tests import renderings

CATALOG = Path(catalog.__file__).resolve().parent / "tcgen05-datapath.md"
SECTIONS = Path("/work/notes/bw-sections")
REAL = SECTIONS / "9-7-16-10-5-data-path-layout-organization.md"


def run_json(*argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    code, rep = run_json("prove", str(CATALOG), "--format", "json")
    assert code == 0
    return rep


def _statuses(lay: dict[str, Any]) -> dict[str, str]:
    return {o["name"]: o["status"] for o in lay["obligations"]}


def test_the_seven_layouts_are_proved_for_every_n(report: dict[str, Any]) -> None:
    lays = {x["id"]: x for x in report["layouts"]}
    assert sorted(lays) == [f"tcgen05.datapath.{c}" for c in "ABCDEFG"]
    for lay in lays.values():
        got = _statuses(lay)
        assert got.pop("hardware") == "unconfirmed"  # prove reads proofs/evidence
        assert set(got.values()) == {"proved"}, (lay["id"], got)
        assert set(got) == {"block-shape", "in-range", "injective", "tmem-injective",
                            "surjective", "warp-quarter", "organization"}
    assert lays["tcgen05.datapath.A"]["tile"] == [256, 256]
    assert lays["tcgen05.datapath.G"]["tile"] == [32, 256]


def test_with_evidence_the_hardware_is_unconfirmed_with_its_reason() -> None:
    evidence = Path(__file__).resolve().parents[1] / "proofs" / "evidence"
    code, rep = run_json("prove", str(CATALOG), "--evidence", str(evidence), "--format", "json")
    assert code == 0
    for lay in rep["layouts"]:
        assert _statuses(lay)["hardware"] == "unconfirmed"
    notes = [f["message"] for f in rep["findings"] if f["kind"] == "hardware"]
    assert len(notes) == 7 and all("sm_100a" in m for m in notes)


def test_layout_d_is_read_back_by_32x32b(report: dict[str, Any]) -> None:
    reads = [r for r in report["relations"] if r["consumer"] == "tcgen05.datapath.D"]
    assert [r["producer"] for r in reads] == [f"tcgen05.ld.32x32b.x{n}.b32"
                                              for n in (8, 16, 32, 64, 128)]
    assert {r["status"] for r in reads} == {"proved"}


def test_the_maps_by_hand() -> None:
    """Layout E at N = 64: lane 69, TMEM column 2 is D[5][34] (the second column half);
    Layout F at alignment 16: rows 16-31 in lanes 48-63."""
    from formal.api import datapath_catalog
    dps = {dp.layout: dp for dp in datapath_catalog()}
    e = datapath_cells(dps["E"], 64)
    k = [j for j in range(len(e["lane"])) if e["lane"][j] == 69 and e["tcol"][j] == 2]
    assert [(int(e["row"][j]), int(e["dcol"][j])) for j in k] == [(5, 34)]
    f = datapath_cells(dps["F"], 8, 16)
    rows = sorted({int(f["row"][j]) for j in range(len(f["lane"])) if 48 <= f["lane"][j] < 64})
    assert rows == list(range(16, 32))
    assert dps["E"].organization() == (2, 2) and dps["G"].organization() == (1, 4)
    assert dps["C"].half() and not dps["B"].half()


# ---- mutants ---------------------------------------------------------------------------------


def _assert_e_rows_moved_is_refuted_at_its_cell(tmp_path: Path) -> None:
    """Layout E with its third block's rows moved to 32-63: ``injective`` refuted at N = 16,
    D[32][8] (in two blocks), exit 1."""
    code, rep, _line = _mutant(tmp_path, "| 0 | 2 | 64-95 | 0 to N/2-1 | 0-31 | N/2 to N-1 |",
                               "| 0 | 2 | 64-95 | 0 to N/2-1 | 32-63 | N/2 to N-1 |")
    got = {o["name"]: o for lay in rep["layouts"] for o in lay["obligations"]
           if o["status"] == "refuted"}
    cex = got["injective"]["counterexample"]
    assert code == 1 and (cex["N"], cex["cell"]) == (16, {"row": 32, "dcol": 8})


def _mutant(tmp_path: Path, old: str, new: str) -> tuple[int, dict[str, Any], int]:
    text = CATALOG.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    line = text[:text.index(old)].count("\n") + 1
    p = tmp_path / "mutant.md"
    p.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    return code, rep, line


@pytest.mark.parametrize("old, new, broken", [
    # Layout E's third block holds rows 32-63 instead of 0-31: D[32][N/2] twice, D[0][N/2] never
    ("| 0 | 2 | 64-95 | 0 to N/2-1 | 0-31 | N/2 to N-1 |",
     "| 0 | 2 | 64-95 | 0 to N/2-1 | 32-63 | N/2 to N-1 |", "injective"),
    # Layout G's last quarter of the columns starts at N/2 instead of 3N/4
    ("| 0 | 3 | 96-127 | 0 to N/4-1 | 0-31 | 3N/4 to N-1 |",
     "| 0 | 3 | 96-127 | 0 to N/4-1 | 0-31 | N/2 to 3N/4-1 |", "injective"),
    # Layout A's second warp reaches lanes 16-47, half of them another warp's
    ("| 0 | 1 | 32-63 | 0 to N-1 | 32-63 | 0 to N-1 |\n| 0 | 2 | 64-95 | 0 to N-1 | 64-95",
     "| 0 | 1 | 16-47 | 0 to N-1 | 32-63 | 0 to N-1 |\n| 0 | 2 | 64-95 | 0 to N-1 | 64-95",
     "warp-quarter"),
    # Layout B's TMEM columns run to N-1 while the block holds only N/2 columns of D
    ("| 1 | 3 | 96-127 | 0 to N/2-1 | 96-127 | N/2 to N-1 |",
     "| 1 | 3 | 96-127 | 0 to N-1 | 96-127 | N/2 to N-1 |", "block-shape"),
])
def test_an_edited_fact_is_refuted_near_its_line(tmp_path: Path, old: str, new: str,
                                                 broken: str) -> None:
    code, rep, line = _mutant(tmp_path, old, new)
    assert code == 1
    bad = [o for lay in rep["layouts"] for o in lay["obligations"] if o["status"] == "refuted"]
    assert broken in {o["name"] for o in bad}
    errs = [f for f in rep["findings"] if f["kind"] == "datapath"]
    assert errs and any(abs(f["line"] - line) <= 1 for f in errs), (line, errs)
    assert all(f["counterexample"] for f in errs)


def test_z3_answers_kept_between_runs_only_confirm_the_enumeration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second run takes Z3's *unsat* from the cache (Z3 is not asked again) and still
    enumerates every N; an entry cannot turn a counterexample into a proof: where the
    enumeration finds one, Z3 itself is asked (here a cache that answers *unsat* to
    everything leaves Layout E's mutant refuted, with its cell)."""
    import z3

    from formal.api import datapath_catalog
    from formal.prove import datapath as P
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    dps = datapath_catalog()
    first = [P.prove_datapath(dp)[0] for dp in dps]
    assert all(v.status == "proved" for r in first for v in r.verdicts
               if v.name not in ("organization", "hardware"))
    asked, walked = [], []
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: asked.append(1))
    real = P.every_n_keys

    def every_n(dp: Any) -> Any:  # every cell of every N, counted
        held = real(dp)
        walked.append(held.cells)
        return held
    monkeypatch.setattr(P, "every_n_keys", every_n)
    again = [P.prove_datapath(dp)[0] for dp in dps]
    assert [r.verdicts for r in again] == [r.verdicts for r in first]
    assert not asked and walked == [sum(len(P.datapath_cells(dp, n)["block"]) for n in dp.ns)
                                    for dp in dps]
    monkeypatch.undo()
    monkeypatch.setattr(P, "z3_unsat", lambda *a: True)
    _assert_e_rows_moved_is_refuted_at_its_cell(tmp_path)


def test_layout_d_with_its_warps_swapped_is_not_read_back_row_by_row(tmp_path: Path) -> None:
    """Rows 0-31 in lanes 32-63 and rows 32-63 in lanes 0-31: still a bijection, but warp 0's
    thread 0 reads D[32][0] with tcgen05.ld.32x32b, not its row 0."""
    old = "| 0 | 0 | 0-31 | 0 to N-1 | 0-31 | 0 to N-1 |\n| 0 | 1 | 32-63 | 0 to N-1 | 32-63 |"
    new = "| 0 | 0 | 0-31 | 0 to N-1 | 32-63 | 0 to N-1 |\n| 0 | 1 | 32-63 | 0 to N-1 | 0-31 |"
    text = CATALOG.read_text(encoding="utf-8")
    at = text.index("Layout D (M = 128")
    p = tmp_path / "mutant.md"
    p.write_text(text[:at] + text[at:].replace(old, new, 1), encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    assert code == 1
    d = next(x for x in rep["layouts"] if x["id"] == "tcgen05.datapath.D")
    assert _statuses(d)["injective"] == "proved"
    reads = [r for r in rep["relations"] if r["consumer"] == "tcgen05.datapath.D"]
    assert {r["status"] for r in reads} == {"refuted"}
    ce = reads[0]["counterexample"]
    assert (ce["warp"], ce["lane"], ce["consumer_cell"], ce["want"]) == (0, 0, [32, 0], [0, 0])


def test_an_equivalent_respelling_still_proves(tmp_path: Path) -> None:
    """``N/2 to N-1`` written ``N/2 to N - 1`` and ``4x1`` rows in any order."""
    code, rep, _line = _mutant(tmp_path, "| 0 | 2 | 64-95 | 0 to N/2-1 | 0-31 | N/2 to N-1 |",
                               "| 0 | 2 | 64-95 | 0 to N/2 - 1 | 0-31 | N/2 to N - 1 |")
    assert code == 0
    assert all(_statuses(x)["injective"] == "proved" for x in rep["layouts"])


def test_the_summary_table_rows_are_checked(tmp_path: Path) -> None:
    code, rep, line = _mutant(tmp_path, "| 64 | ::1 | Either | No | 4x1 (1/2 datapath utilized) "
                              "| Layout F | 0 or 16 |",
                              "| 64 | ::1 | Either | No | 4x1 (1/2 datapath utilized) "
                              "| Layout F | 0 |")
    assert code == 1
    errs = [f for f in rep["findings"] if f["severity"] == "error"]
    assert [f["line"] for f in errs] == [line] and "lane 0 or 16" in errs[0]["message"]


# ---- the real sections -----------------------------------------------------------------------


needs_sections = pytest.mark.skipif(not REAL.exists(), reason="the spec's sections are not here")


@needs_sections
@pytest.mark.parametrize("render", ["markdown", "sphinx", "browser"])
def test_the_real_section_gives_exactly_its_one_real_error(tmp_path: Path, render: str) -> None:
    """The spec's table calls Layout E's organization "2x3": six groups for four
    sub-partitions (CuTe's tmem_frg_ws builds it 2x2, as the catalog states)."""
    seed = REAL.read_text(encoding="utf-8")
    if render == "markdown":
        p = tmp_path / "dp.md"
        shutil.copy(REAL, p)
    elif render == "sphinx":
        p = tmp_path / "dp.html"
        p.write_text(renderings.sphinx(seed).text, encoding="utf-8")
    else:
        p = tmp_path / "dp.txt"
        p.write_text(renderings.browser(seed).text, encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    assert code == 1
    errs = [f for f in rep["findings"] if f["severity"] == "error"]
    assert len(errs) == 1, errs
    assert errs[0]["kind"] == "datapath" and "2x3" in errs[0]["message"]
    assert errs[0]["counterexample"]["groups"] == 6


def test_show_draws_a_layout_as_lanes_by_columns() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["show", "tcgen05.datapath.E"])
    text = out.getvalue()
    assert code == 0
    assert "64-95   warp 2   D[0-31][N/2 to N-1]" in text
    assert "organization: proved" in text and "hardware: unconfirmed (no lent" in text


# ---- packing formats (9.7.16.10.4) -------------------------------------------------------------


PACKING = Path(catalog.__file__).resolve().parent / "tcgen05-packing.md"
REAL_PACKING = SECTIONS / "9-7-16-10-4-packing-formats-of-elements-in-tensor-and-shared-memory.md"


def test_the_packing_formats_are_proved() -> None:
    code, rep = run_json("prove", str(PACKING), "--format", "json")
    assert code == 0
    lays = {x["id"]: x for x in rep["layouts"]}
    assert len(lays) == 11
    for lay in lays.values():
        got = _statuses(lay)
        assert got.pop("hardware") == "unconfirmed"
        assert got == {"slot-fit": "proved", "unit-fit": "proved", "bit-injective": "proved"}
    # 4-bit elements of .kind::mxf8f6f4 in shared memory: 16 in a 128-bit row, 64 bits padding
    assert lays["tcgen05.packing.shared.mxf8f6f4.e2m1"]["tile"] == [16, 128]
    assert lays["tcgen05.packing.shared.mxf4-mxf4nvf4.e2m1"]["tile"] == [2, 8]


def test_the_padding_by_hand() -> None:
    from formal.api import packing_catalog
    pads = {(f.memory, f.kinds, f.type): f.padding for f in packing_catalog()}
    assert pads[("shared", ("mxf8f6f4",), "e2m1")] == 64
    assert pads[("shared", ("mxf8f6f4",), "e3m2")] == 32
    assert pads[("shared", ("mxf4", "mxf4nvf4"), "e2m1")] == 0
    f16 = next(f for f in packing_catalog() if f.type == "f16")
    # one element a word, in its low 16 bits: the high half of its 32-bit slot unused
    assert (f16.count, f16.first_bit(0), f16.slot - f16.bits, f16.padding) == (1, 0, 16, 0)


@pytest.mark.parametrize("old, new, broken", [
    # .e2m1 in its TMEM byte from bit 5: bits 5..8 leave the byte
    ("| .e2m1 | 4 | 8 | 32 | 4 | 8k + 2 |", "| .e2m1 | 4 | 8 | 32 | 4 | 8k + 5 |", "slot-fit"),
    # 6-bit elements of shared memory 5 bits apart: element 1 (bits 10..5) leaves its slot
    ("| .e3m2 | 6 | 6 | 128 | 16 | 6k |", "| .e3m2 | 6 | 6 | 128 | 16 | 5k |", "slot-fit"),
    # five 8-bit slots in a 32-bit word
    ("| .e2m1 | 4 | 8 | 32 | 4 | 8k + 2 |", "| .e2m1 | 4 | 8 | 32 | 5 | 8k + 2 |", "unit-fit"),
])
def test_an_edited_packing_is_refuted_at_its_row(tmp_path: Path, old: str, new: str,
                                                 broken: str) -> None:
    text = PACKING.read_text(encoding="utf-8")
    line = text[:text.index(old)].count("\n") + 1
    p = tmp_path / "mutant.md"
    p.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    assert code == 1
    bad = [f for f in rep["findings"] if f["kind"] == "packing"]
    assert [f["line"] for f in bad] == [line] and broken.split("-")[0] in json.dumps(rep)
    refuted = [o["name"] for x in rep["layouts"] for o in x["obligations"]
               if o["status"] == "refuted"]
    assert refuted == [broken]


def test_an_equivalent_packing_respelling_proves(tmp_path: Path) -> None:
    text = PACKING.read_text(encoding="utf-8").replace("| 8k + 2 |", "| 8k+2 |")
    p = tmp_path / "same.md"
    p.write_text(text, encoding="utf-8")
    code, _rep = run_json("prove", str(p), "--format", "json")
    assert code == 0


@needs_sections
@pytest.mark.parametrize("render", ["markdown", "sphinx", "browser"])
def test_the_real_packing_sentences_agree_with_the_catalog(tmp_path: Path, render: str) -> None:
    seed = REAL_PACKING.read_text(encoding="utf-8")
    text = {"markdown": lambda: seed, "sphinx": lambda: renderings.sphinx(seed).text,
            "browser": lambda: renderings.browser(seed).text}[render]()
    p = tmp_path / ("pk" + {"markdown": ".md", "sphinx": ".html", "browser": ".txt"}[render])
    p.write_text(text, encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    assert code == 0, rep["findings"]
    stated = next(x for x in rep["layouts"] if x["id"] == "tcgen05.packing.statements")
    assert _statuses(stated) == {"stated": "proved"}


@needs_sections
def test_a_wrong_packing_sentence_is_an_error_at_its_line(tmp_path: Path) -> None:
    seed = REAL_PACKING.read_text(encoding="utf-8")
    old = "then 4 consecutive"
    line = seed[:seed.index(old)].count("\n") + 1
    p = tmp_path / "pk.md"
    p.write_text(seed.replace(old, "then 5 consecutive", 1), encoding="utf-8")
    code, rep = run_json("prove", str(p), "--format", "json")
    assert code == 1
    errs = [f for f in rep["findings"] if f["severity"] == "error"]
    assert len(errs) == 1 and errs[0]["kind"] == "packing" and errs[0]["line"] == line
    assert "5 elements in a 32-bit word" in errs[0]["message"]


def test_a_data_paths_statements_are_asked_of_z3_as_one_query(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Z3's answers cold, each data path's six statements (every one the enumeration
    found no counterexample for) are one query: seven layouts, seven checks, each statement
    proved and kept on its own in the proof cache.  A group's answer covers only statements
    the enumeration found none for: planted as *unsat* to whatever it is given, Layout E's
    mutant is still refuted at its cell (its counterexample asks Z3 alone)."""
    import z3

    from formal.api import datapath_catalog
    from formal.prove import datapath as P
    from formal.prove.cache import flush
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    dps = datapath_catalog()
    asked: list[int] = []
    real_check = z3.Solver.check
    monkeypatch.setattr(z3.Solver, "check",
                        lambda self, *a: asked.append(1) or real_check(self, *a))
    results = [P.prove_datapath(dp)[0] for dp in dps]
    assert len(dps) == 7 and len(asked) == 7
    assert all(r.verdict(x).status == "proved" and r.verdict(x).method == "z3+enumeration"
               for r in results for x in P.STATEMENTS)
    flush()  # one batch file, one entry a statement
    [batch] = (tmp_path / "cache" / "proofs").glob("*.json")
    assert len(json.loads(batch.read_text())["entries"]) == 6 * 7
    monkeypatch.undo()
    monkeypatch.setattr(P, "unsat_together", lambda name, todo, *a, **k: {x for x, _f in todo})
    _assert_e_rows_moved_is_refuted_at_its_cell(tmp_path)


def test_the_n_values_of_a_data_path_are_one_term_a_process() -> None:
    """``_ns``: N and ``Or(N == n, ...)`` over the data path's Ns, made once per tuple of Ns
    (every statement of every data path with those Ns shares it): the term a fresh ``Or``
    is, and another tuple of Ns another term."""
    import z3

    from formal import api
    from formal.prove import datapath_statements as D
    paths = api.datapath_catalog()
    assert paths
    for dp in paths:
        n, ns = D._ns(dp)
        assert D._ns(dp)[1] is ns and n.eq(z3.Int("N"))
        assert ns.eq(z3.Or(*[z3.Int("N") == v for v in dp.ns]))
    assert not D._ns_of((8, 16))[1].eq(D._ns(paths[0])[1])


def test_the_linear_solver_answers_a_group_and_names_what_holds() -> None:
    """``linear_solver``, the data-path groups' solver: *unsat* to each catalog data path's
    six statements asked together, and a model that names the member that holds in a group
    with one satisfiable statement (the rest then *unsat*), as ``z3.Solver()`` answers."""
    import z3

    from formal.api import datapath_catalog
    from formal.prove import datapath as P
    from formal.prove.encode import unsat_together
    for dp in datapath_catalog():
        todo = [(x, P.STATEMENTS[x](dp)) for x in P.STATEMENTS]
        assert unsat_together("datapath", todo, 60_000, general=True,
                              make=P.linear_solver) == set(P.STATEMENTS)
    n = z3.Int("N")
    todo = [("never", z3.And(n > 3, n < 2)), ("holds", z3.And(n * 2 == 16, n / 3 == 2)),
            ("never2", z3.And(n == 5, n % 2 == 0))]
    for make in (P.linear_solver, z3.Solver):
        assert unsat_together("t", todo, 60_000, general=True, make=make) == {"never",
                                                                              "never2"}


def _statements_by_operators(dp: Any) -> dict[str, Any]:
    """Each statement of ``dp`` written with z3's Python operators (``z3.And``, ``<``,
    ``z3.Sum``, ``z3.If`` ...), as ``prove.datapath`` wrote them before its C-API terms."""
    import z3

    from formal.base.matrix_variants import (
        TMEM_COLUMN_COUNT,
        TMEM_LANE_COUNT,
        TMEM_SUBPARTITION,
    )
    from formal.prove import datapath as P
    n = z3.Int("N")
    ns = z3.Or(*[n == v for v in dp.ns])
    aligns = P._alignments(dp)

    def z(b: Any) -> Any:
        return (b[0].numerator * n) / b[0].denominator + b[1]

    def inside(b: Any, r: Any, c: Any) -> Any:
        return z3.And(r >= b.rows[0], r <= b.rows[1], c >= z(b.dcols[0]), c <= z(b.dcols[1]))

    def cover(twice: bool) -> Any:
        r, c = z3.Ints("row col")
        count = z3.Sum(*[z3.If(inside(b, r, c), 1, 0) for b in dp.blocks])
        return z3.And(ns, r >= 0, r < dp.m, c >= 0, c < n, count >= 2 if twice else count == 0)

    bad = []
    for b in dp.blocks:
        t0, t1, d0, d1 = (z(x) for x in (*b.tcols, *b.dcols))
        bad.append(z3.Or(t0 < 0, t1 >= TMEM_COLUMN_COUNT, t0 > t1, d0 < 0, d1 >= n, d0 > d1,
                         z3.BoolVal(b.lanes[0] < 0 or b.lanes[1] + max(aligns) >= TMEM_LANE_COUNT
                                    or b.rows[0] < 0 or b.rows[1] >= dp.m
                                    or not 0 <= b.cta < dp.cta_group)))
    cta, lane, col = z3.Ints("cta lane tcol")
    a = z3.Int("align")
    return {
        "block-shape": z3.And(ns, z3.Or(*[z3.Or(z(b.tcols[1]) - z(b.tcols[0])
                                                != z(b.dcols[1]) - z(b.dcols[0]),
                                                b.lanes[1] - b.lanes[0] != b.rows[1] - b.rows[0])
                                          for b in dp.blocks])),
        "in-range": z3.And(ns, z3.Or(*bad)),
        "injective": cover(True),
        "tmem-injective": z3.And(ns, z3.Sum(*[z3.If(z3.And(
            cta == b.cta, lane >= b.lanes[0], lane <= b.lanes[1], col >= z(b.tcols[0]),
            col <= z(b.tcols[1])), 1, 0) for b in dp.blocks]) >= 2),
        "surjective": cover(False),
        "warp-quarter": z3.And(z3.Or(*[a == x for x in aligns]), z3.Or(*[z3.Or(
            b.warp < 0, b.warp > 3, b.lanes[0] + a < TMEM_SUBPARTITION * b.warp,
            b.lanes[1] + a > TMEM_SUBPARTITION * b.warp + TMEM_SUBPARTITION - 1)
            for b in dp.blocks])),
    }


def test_each_statement_is_the_very_term_z3s_operators_make() -> None:
    """``prove.datapath_statements`` makes each statement by one call of Z3's C API a term
    (``ints``): each of the catalog's 42, and each of a planted data path's (Layout E with a
    block moved, a block outside tensor memory, a warp outside its quarter), is the very
    term (``eq``: Z3 shares equal terms) the same statement written with z3's operators is."""
    import dataclasses
    from fractions import Fraction

    from formal.api import datapath_catalog
    from formal.prove import datapath as P
    dps = datapath_catalog()
    assert len(dps) == 7
    b0 = dps[3].blocks[0]
    planted = [
        dataclasses.replace(dps[3], blocks=(dataclasses.replace(b0, rows=(32, 63)),
                                            *dps[3].blocks[1:])),
        dataclasses.replace(dps[3], blocks=(dataclasses.replace(
            b0, lanes=(-1, 30), tcols=((Fraction(1, 2), 600), (Fraction(3, 1), -7))),
            *dps[3].blocks[1:])),
        dataclasses.replace(dps[0], blocks=(dataclasses.replace(dps[0].blocks[0], warp=5),
                                            *dps[0].blocks[1:]))]
    for dp in [*dps, *planted]:
        want = _statements_by_operators(dp)
        assert set(want) == set(P.STATEMENTS)
        for name, make in P.STATEMENTS.items():
            got = make(dp)
            assert got.eq(want[name]), (dp.id, name, got.sexpr()[:300])
    # and a term is not equal to another statement's (eq tells terms apart)
    assert not P.STATEMENTS["injective"](dps[0]).eq(_statements_by_operators(dps[0])["surjective"])


def test_the_packing_statements_are_asked_of_z3_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Z3's answers cold, the catalog's packing formats (and a planted one whose
    element 0 leaves its slot) in one ``PackingGroup``: every statement the enumeration
    found no counterexample for is asked in a few disjunctions, not one query each; each
    verdict is the one asked alone gives; each statement is kept on its own; and the
    planted slot-fit is refuted with its element (its counterexample asks Z3 alone), its
    bit-injective not checked.  Planted as *unsat* to whatever it is given, the group
    changes none of that."""
    import dataclasses

    import z3

    from formal.api import packing_catalog
    from formal.prove import datapath_packing as K
    from formal.prove.cache import flush
    formats = packing_catalog()
    assert len(formats) == 11
    e2m1 = next(f for f in formats if f.first == (8, 2))
    planted = dataclasses.replace(e2m1, first=(8, 5))
    every = [*formats, planted]
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    alone = [K.prove_packing(pf)[0] for pf in every]
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    asked: list[int] = []
    real_check = z3.Solver.check
    monkeypatch.setattr(z3.Solver, "check",
                        lambda self, *a: asked.append(1) or real_check(self, *a))
    together = K.PackingGroup(every)
    grouped = [K.prove_packing(pf, None, together)[0] for pf in every]
    assert grouped == alone
    assert [v.status for v in grouped[-1].verdicts] == [
        "refuted", "proved", "error", "not-applicable"]
    assert grouped[-1].verdicts[0].counterexample == {"element": 0, "bits": [8, 5],
                                                      "slot": [7, 0]}
    assert all(v.status in ("proved", "not-applicable") for r in grouped[:-1]
               for v in r.verdicts)
    distinct = {json.dumps(K._query(pf, w)) for pf in formats for w in K.WHATS} | {
        json.dumps(K._query(planted, "unit-fit"))}
    # two disjunctions of at most 16 statements, and the planted slot-fit alone
    assert len(asked) == 3 and len(distinct) > 16
    flush()
    [batch] = (tmp_path / "cache" / "proofs").glob("*.json")
    assert len(json.loads(batch.read_text())["entries"]) == len(distinct)
    shutil.rmtree(tmp_path / "cache")
    monkeypatch.setattr(K, "unsat_together", lambda name, todo, *a, **k: {x for x, _f in todo})
    assert [K.prove_packing(pf, None, K.PackingGroup(every))[0] for pf in every] == alone
