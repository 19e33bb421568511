"""tcgen05.ld / tcgen05.st fragments (issue 25): the rows of the variant table, the catalog's
TMEM maps proved, checked cell by cell against maps worked out by hand from CuTe's SM100 TMEM
copy atoms, the warp's lane slice, the Layout D read-back relation, and mutants of the facts
(a lane stride, a column offset, the pack rule) refuted with a counterexample while equivalent
rewritings still prove."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from formal import catalog
from formal.base.matrix_variants import TMEM_VARIANTS, variant
from formal.base.variants import TMEM_SHAPES, tmem_tile
from formal.cli import main
from formal.execute import ptx, tmem
from formal.execute.devices import FakeDevice
from formal.model import build
from formal.model.cells import cells
from formal.model.layout import Layout

from .tmem_hand import BY_FORM

CATALOG = Path(catalog.__file__).resolve().parent / "tcgen05-tmem.md"

# PTX ISA Table 47 / 48: registers a thread holds at .x1, and the largest legal .num
TABLE_47 = {"32x32b": (1, 128), "16x64b": (1, 128), "16x32bx2": (1, 128),
            "16x128b": (2, 64), "16x256b": (4, 32)}


def run_json(*argv: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    assert code in (0, 1), argv
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def layouts() -> dict[str, Layout]:
    m = build(list(catalog.documents()), ())
    return {lay.id.split(":", 1)[1]: lay for lay in m.layouts
            if lay.instruction.startswith("tcgen05.") and "smem" not in lay.instruction}


# ---- the rows --------------------------------------------------------------------------------


def test_the_rows_are_every_form_of_table_47() -> None:
    assert len(TMEM_VARIANTS) == 148  # (8 + 8 + 8 + 7 + 6) nums x 2 packings x ld, st
    for v in TMEM_VARIANTS:
        at_x1, most = TABLE_47[v.shape]
        assert v.num <= most
        assert v.registers == at_x1 * v.num
        assert v.registers <= 128
        assert v.target == "sm_100a" and v.threads == 32
    v = variant("tcgen05.ld.16x256b.x2.pack::16b.b16")
    assert v.opcode == "tcgen05.ld.sync.aligned.16x256b.x2.pack::16b.b32"
    assert v.tile == (16, 32) and v.registers == 8 and v.element_bits() == 16
    st = variant("tcgen05.st.16x32bx2.x4.unpack::16b.b16")
    assert st.opcode == "tcgen05.st.sync.aligned.16x32bx2.x4.unpack::16b.b32"
    assert st.tile == (16, 16)
    with pytest.raises(KeyError):
        variant("tcgen05.ld.16x256b.x64.b32")  # NA in Table 47


def test_every_form_fits_one_warps_lane_slice() -> None:
    """Warp w of a warpgroup reaches lanes 32 (w % 4) .. 32 (w % 4) + 31 (9.7.16.8.1): every
    shape touches at most 32 lanes, so one warp's slice holds it, and the 512 columns hold
    the widest form."""
    for v in TMEM_VARIANTS:
        lanes, cols = v.tile
        assert lanes in (16, 32) and cols <= 512
    widest = [v.key for v in TMEM_VARIANTS if v.tile[1] == 512]
    assert "tcgen05.ld.16x64b.x128.pack::16b.b16" in widest  # every column of TMEM
    assert tmem_tile("32x32b", 128, False) == (32, 128)
    assert set(TMEM_SHAPES) == set(TABLE_47)


# ---- the catalog's maps ----------------------------------------------------------------------


def test_the_catalog_states_every_form_once(layouts: dict[str, Layout]) -> None:
    assert sorted(layouts) == sorted(v.key for v in TMEM_VARIANTS)
    lay = layouts["tcgen05.st.32x32b.x1.b32"]
    assert lay.operand == "A" and layouts["tcgen05.ld.32x32b.x1.b32"].operand == "C/D"


def test_every_map_is_a_bijection_onto_its_tmem_region() -> None:
    report = run_json("prove", str(CATALOG), "--format", "json")
    assert len(report["layouts"]) == 148
    for lay in report["layouts"]:
        status = {o["name"]: o["status"] for o in lay["obligations"]}
        for name in ("cases", "in-range", "injective", "surjective", "register-budget",
                     "element-list", "type-names"):
            assert status[name] == "proved", (lay["id"], name)
        assert status["hardware"] == "unconfirmed"
    hw = [f["message"] for f in report["findings"] if f["kind"] == "hardware"]
    assert len(hw) == 148 and all("no sm_100a device" in m for m in hw)
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def _at(lay: Layout, lane: int, i: int) -> tuple[int, int]:
    table = _TABLES.get(lay.id)
    if table is None or table[0] is not lay:  # each layout's table made once, not a cell
        table = _TABLES[lay.id] = (lay, cells(lay))
    row, col = table[1][(0, lane, i)]
    return int(row), int(col)


_TABLES: dict[str, tuple[Layout, dict[tuple[int, int, int], tuple[Any, ...]]]] = {}


# the hand-worked cells of CuTe's TMEM atoms (tests/tmem_hand.py, which the audit's test shares)
CUTE = BY_FORM


def test_the_maps_agree_with_cutes_tmem_atoms(layouts: dict[str, Layout]) -> None:
    for key, expected in CUTE.items():
        for (lane, reg), cell in expected.items():
            assert _at(layouts[key], lane, reg) == cell, (key, lane, reg)


def test_a_packed_register_holds_two_adjacent_columns(layouts: dict[str, Layout]) -> None:
    """``.pack::16b``: register r of the unpacked form is column c; packed, its elements
    2r and 2r + 1 are the low halves of columns 2c and 2c + 1 of the same lane (CuTe's
    ``_16b`` atoms: logical bit x + 16 y of a lane is bit x of column y)."""
    for v in TMEM_VARIANTS:
        if not v.pack or v.num == 128:
            continue
        plain = layouts[v.key.replace(".pack::16b", "").replace(".unpack::16b", "")
                       .replace(".b16", ".b32")]
        packed = layouts[v.key]
        for lane in range(32):
            for r in range(v.registers):
                row, col = _at(plain, lane, r)
                assert _at(packed, lane, 2 * r) == (row, 2 * col), (v.key, lane, r)
                assert _at(packed, lane, 2 * r + 1) == (row, 2 * col + 1)


def test_layout_d_read_back_with_32x32b_gives_each_thread_its_row(
        layouts: dict[str, Layout]) -> None:
    """Layout D (M = 128, cta_group::1): row m of D lies in TMEM lane m, column n in column
    n.  Warp w reads its slice (lanes 32 (w % 4) ..) with tcgen05.ld.32x32b.xN: thread t's
    register i is D[32 (w % 4) + t][i] -- each thread its own row, in column order."""
    lay = layouts["tcgen05.ld.32x32b.x64.b32"]
    for w in range(4):
        for t in range(32):
            held = [_at(lay, t, i) for i in range(64)]
            rows = {32 * w + lane for lane, _ in held}
            assert rows == {32 * w + t}
            assert [col for _, col in held] == list(range(64))


# ---- mutants ---------------------------------------------------------------------------------


def _section(key: str) -> str:
    text = CATALOG.read_text(encoding="utf-8")
    head = f"## {text.split(f'Matrix Fragments for {key}', 1)[0].rsplit('## ', 1)[1]}"
    body = text.split(f"Matrix Fragments for {key}\n", 1)[1].split("\n## ", 1)[0]
    return f"# mutant\n\n{head}Matrix Fragments for {key}\n{body}\n"


def _prove(tmp_path: Path, text: str) -> dict[str, Any]:
    p = tmp_path / "mutant.md"
    p.write_text(text, encoding="utf-8")
    report = run_json("prove", str(p), "--format", "json")
    assert len(report["layouts"]) == 1
    lay = report["layouts"][0]
    return {o["name"]: o for o in lay["obligations"]}


@pytest.mark.parametrize("key, old, new, broken", [
    # the lane stride of the second register pair: 8 lanes down, written 4
    ("tcgen05.ld.16x256b.x1.b32", "groupID + 8 * ((i >> 1) & 0x1)",
     "groupID + 4 * ((i >> 1) & 0x1)", "injective"),
    # the column offset of a repetition: 8 columns, written 4
    ("tcgen05.ld.16x256b.x2.b32", "8 * (i >> 2)", "4 * (i >> 2)", "injective"),
    # the second access of .16x32bx2 placed at column 1 instead of N = 2
    ("tcgen05.ld.16x32bx2.x2.b32", "2 * (%laneid >> 4) + i", "(%laneid >> 4) + i", "injective"),
    # the pack rule edited: a register's two halves from one column
    ("tcgen05.ld.16x128b.x1.pack::16b.b16", "(threadID_in_group * 2) + (i & 0x1)",
     "(threadID_in_group * 2)", "injective"),
    # the pair of threads a lane of .16x64b swapped for four: lanes 8..15 never reached
    ("tcgen05.st.16x64b.x1.b32", "groupID + 8 * (%laneid & 0x1)", "groupID", "injective"),
])
def test_a_mutated_fact_is_refuted_with_a_counterexample(tmp_path: Path, key: str, old: str,
                                                          new: str, broken: str) -> None:
    text = _section(key)
    assert old in text
    got = _prove(tmp_path, text.replace(old, new))
    assert got[broken]["status"] == "refuted"
    assert got[broken]["counterexample"]
    assert _prove(tmp_path, text)[broken]["status"] == "proved"


@pytest.mark.parametrize("key, old, new", [
    ("tcgen05.ld.16x256b.x1.b32", "groupID + 8 * ((i >> 1) & 0x1)",
     "(%laneid >> 2) + 8 * ((i % 4) >> 1)"),
    ("tcgen05.st.16x128b.x2.b32", "4 * (i >> 1) + threadID_in_group",
     "4 * (i / 2) + (%laneid & 0x3)"),
    ("tcgen05.ld.16x32bx2.x4.b32", "%laneid % 16", "%laneid - 16 * (%laneid >> 4)"),
])
def test_an_equivalent_rewriting_still_proves(tmp_path: Path, key: str, old: str,
                                             new: str) -> None:
    text = _section(key)
    assert old in text
    got = _prove(tmp_path, text.replace(old, new))
    assert {n: o["status"] for n, o in got.items()
            if n in ("cases", "in-range", "injective", "surjective")} == \
        dict.fromkeys(("cases", "in-range", "injective", "surjective"), "proved")


# ---- kernels and the harness -----------------------------------------------------------------

HAS_PTXAS = ptx.ptxas_path() is not None


@pytest.mark.ptxas
@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas is not on PATH")
def test_the_kernels_assemble_for_sm_100a_only() -> None:
    """One form of each shape, packed and not, ld and st (``ptxlayout ptx --check --arch
    sm_100a --only tcgen05.`` assembles all 148; the slow test of test_execute too)."""
    picked = [v for v in TMEM_VARIANTS if v.num in (1, 4)]
    results = ptx.check(picked, ["sm_100a", "sm_90a", "sm_120a"])
    ok = {(r.variant.key, r.arch) for r in results if r.status == "ok"}
    assert {v.key for v in picked} == {k for k, a in ok if a == "sm_100a"}
    assert not [r for r in results if r.status == "failed"]
    assert not {a for _k, a in ok} - {"sm_100a"}  # tcgen05 is refused elsewhere: skipped


def test_a_kernel_moves_what_its_row_says() -> None:
    text = ptx.module(variant("tcgen05.ld.16x32bx2.x2.pack::16b.b16")).text
    assert "tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32 {%q0, %q1}, [%r_t], 4;" in text
    assert "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r_sm], 32;" in text
    text = ptx.module(variant("tcgen05.st.16x64b.x128.unpack::16b.b16")).text
    assert "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r_sm], 512;" in text
    assert text.count("tcgen05.ld.sync.aligned.32x32b.x128.b32") == 4  # 512 columns back


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    from formal.api import current_catalog
    return current_catalog()[0]


def test_a_blackwell_fake_checks_every_word_of_every_form(records: list[dict[str, Any]]) \
        -> None:
    results = tmem.check_forms(FakeDevice(records, sm=100), records, trials=2)
    assert len(results) == 148 and {r["result"] for r in results} == {"match"}
    by = {r["key"]: r["elements"] for r in results}
    assert by["tcgen05.ld.16x256b.x32.b32"] == 2 * 32 * 128  # every register of every lane
    assert by["tcgen05.st.16x64b.x128.unpack::16b.b16"] == 2 * 32 * 512  # all of TMEM back
    refused = tmem.check_forms(FakeDevice(records, sm=90), records, "tcgen05.ld.32x32b.x1.b32")
    assert refused[0]["result"] == "error" and "needs sm_100a" in refused[0]["detail"]


def test_hardware_with_another_map_is_caught_with_the_lane_and_cells(
        records: list[dict[str, Any]]) -> None:
    """The fake takes a 16x64b map whose lanes come in fours (lane t >> 2, the pair rule
    forgotten) as the hardware's: thread 1's r0 then reads lane 0, not lane 8."""
    key = "catalog:tcgen05.ld.16x64b.x1.b32"
    wrong = []
    for r in records:
        if r["id"] == key:
            r = {**r, "cells": [{**c, "row": c["lane"] >> 2, "col": c["col"]}
                                for c in r["cells"]]}
            r.pop("map_hash", None)
        wrong.append(r)
    got = tmem.check_forms(FakeDevice(wrong, sm=100), records, "tcgen05.ld.16x64b.x1.b32")
    assert got[0]["result"] == "mismatch"
    assert "lane 1, r0" in got[0]["detail"] and "[(8, 0)]" in got[0]["detail"]


def test_ptxlayout_gpu_runs_the_tmem_family_on_a_blackwell_device_only(tmp_path: Path) -> None:
    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["gpu", "--no-ptxas", "--trials", "2", *argv])
        return code, out.getvalue()

    code, out = run("--device", "fake:sm=100", "--only", "tcgen05.st.16x128b.x2",
                    "--record", str(tmp_path))
    assert code == 0 and "checks: 2 match" in out
    runs = json.loads(next(tmp_path.glob("*.json")).read_text())["runs"]
    assert sorted((r["key"], r["result"]) for r in runs) == [
        ("tcgen05.st.16x128b.x2.b32", "match"),
        ("tcgen05.st.16x128b.x2.unpack::16b.b16", "match")]
    # an sm_90 device runs none of them (assembling is off): nothing was checked, exit 2
    code, out = run("--device", "fake", "--only", "tcgen05.ld.32x32b.x1.b32")
    assert code == 2 and "checks: 1 not-executed" in out


# ---- reading the sections ---------------------------------------------------------------------

SHAPE = """## 1.2.{k}. Matrix fragments for shape .{shape}

The registers of one form:

| Fragment | Elements (low to high) |
| --- | --- |
| A vector expression containing `.num` number of `.b32` registers as mentioned in the \
Table 9. | r0, r1, ... |

A warp executing `tcgen05{{.ld,.st}}.{shape}` will access {lanes} lanes of the Tensor Memory.
It loads from or stores to each of the lane ({bits} \\* .num)-bits of data as shown in Figure {k}.
"""

NUMS = """## 1.3. Our own Instructions: tcgen05.ld

The shape `.16x32bx2` performs two accesses into Tensor Memory of the shape `.16x32b`.

Table 9 Registers a thread holds

| .num | .shape | | |
| --- | --- | --- | --- |
| .16x32bx2 / .16x64b / .32x32b | .16x128b | .16x256b |
| `.x1` | 1 | 2 | 4 |
| `.x2` | 2 | 4 | 8 |
| `.x64` | 64 | 128 | NA |
| `.x128` | 128 | NA | NA |

## 1.4. Access restrictions

The Tensor Memory of a CTA is divided into 4 equal chunks such that each warp owns one.

| ID of the warp within the warpgroup | Accessible Lanes |
| --- | --- |
| 0 | 0-31 |
| 1 | 32-63 |
| 2 | 64-95 |
| 3 | 96-127 |
"""

SHAPES = (("32x32b", 32, 32), ("16x64b", 16, 64), ("16x128b", 16, 128), ("16x256b", 16, 256),
          ("16x32bx2", 16, 64))


def _sections(**change: tuple[str, str]) -> str:
    text = "# tcgen05 tensor memory, in our words\n\n" + "\n".join(
        SHAPE.format(k=k, shape=s, lanes=n, bits=b) for k, (s, n, b) in enumerate(SHAPES, 1))
    text += "\n" + NUMS
    for old, new in change.values():
        assert old in text
        text = text.replace(old, new)
    return text


def _tmem_findings(tmp_path: Path, text: str, suffix: str = ".md") -> list[dict[str, Any]]:
    from tests.renderings import browser
    from tests.sphinx import markdown_to_sphinx_html
    body = {".md": lambda t: t, ".html": markdown_to_sphinx_html,
            ".txt": lambda t: browser(t).text}[suffix](text)
    p = tmp_path / f"tmem{suffix}"
    p.write_text(body, encoding="utf-8")
    report = run_json("prove", str(p), "--format", "json")
    return [f for f in report["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize("suffix", [".md", ".html", ".txt"])
def test_sections_that_agree_give_no_error(tmp_path: Path, suffix: str) -> None:
    assert _tmem_findings(tmp_path, _sections(), suffix) == []


@pytest.mark.parametrize("suffix", [".md", ".html", ".txt"])
def test_a_bits_sentence_that_counts_one_access_is_refuted(tmp_path: Path, suffix: str) -> None:
    """The spec's own .16x32bx2 sentence says (32 * .num) bits a lane: one of its two
    accesses.  Table 9 gives .x1 one register a thread, 1024 bits = 16 lanes x 64 bits."""
    text = _sections(bits=("(64 \\* .num)-bits of data as shown in Figure 5",
                           "(32 \\* .num)-bits of data as shown in Figure 5"))
    got = _tmem_findings(tmp_path, text, suffix)
    assert [f["kind"] for f in got] == ["tmem"]
    assert got[0]["counterexample"] == {"shape": "16x32bx2", "num": 1, "lanes": 16,
                                        "stated_bits_per_lane": 32, "register_bits": 1024,
                                        "bits_per_lane_held": 64}
    assert "2 accesses of .16x32b" in got[0]["message"]
    if suffix == ".md":  # at the sentence's own line
        line = next(k for k, ln in enumerate(text.splitlines(), 1) if "Figure 5." in ln)
        assert got[0]["line"] == line


def test_a_table_cell_and_an_access_row_that_disagree_are_refuted(tmp_path: Path) -> None:
    got = _tmem_findings(tmp_path, _sections(cell=("| `.x64` | 64 | 128 | NA |",
                                                   "| `.x64` | 64 | 128 | 256 |")))
    assert len(got) == 1 and got[0]["counterexample"] == \
        {"shape": "16x256b", "num": 64, "table": 256, "rows": None}
    got = _tmem_findings(tmp_path, _sections(row=("| 2 | 64-95 |", "| 2 | 64-96 |")))
    assert len(got) == 1 and got[0]["counterexample"] == {"warp": 2, "lanes": [64, 96]}
    got = _tmem_findings(tmp_path, _sections(lanes=("access 16 lanes of the Tensor Memory.\n"
                                                    "It loads from or stores to each of the "
                                                    "lane (128",
                                                    "access 32 lanes of the Tensor Memory.\n"
                                                    "It loads from or stores to each of the "
                                                    "lane (128")))
    assert {f["counterexample"]["shape"] for f in got} == {"16x128b"}


REAL = Path("/work/notes/bw-sections")


@pytest.mark.skipif(not REAL.is_dir(), reason="the PTX ISA's tcgen05 sections are not here")
def test_the_real_sections_give_one_error_the_16x32bx2_bits(tmp_path: Path) -> None:
    names = ("9-7-16-2-3-data-movement-shape.md", "9-7-16-8-1-access-restrictions.md",
             "9-7-16-8-3-tensorcore-5th-generation-instructions-tcgen05-ld.md",
             "9-7-16-8-4-tensorcore-5th-generation-instructions-tcgen05-st.md")
    text = "\n\n".join((REAL / n).read_text(encoding="utf-8") for n in names)
    for suffix in (".md", ".html", ".txt"):
        got = _tmem_findings(tmp_path, text, suffix)
        assert [f["counterexample"]["shape"] for f in got] == ["16x32bx2"], suffix


def test_show_draws_tmem_lanes_by_columns_with_thread_ids() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["show", "tcgen05.ld.16x64b.x2.b32"]) == 0
    lines = out.getvalue().splitlines()
    assert "tcgen05.ld.16x64b.x2  C/D  .b32  -- 16 TMEM lanes x 4 32-bit columns" in lines[0]
    assert lines[1].split() == ["lane", "|", "col0", "col1", "col2", "col3"]
    assert lines[3].split() == ["0", "|", "T0:r0", "T2:r0", "T0:r1", "T2:r1"]
    assert lines[11].split() == ["8", "|", "T1:r0", "T3:r0", "T1:r1", "T3:r1"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["show", "tcgen05.st.16x32bx2.x1.unpack::16b.b16"]) == 0
    row = out.getvalue().splitlines()[3].split()
    assert row == ["0", "|", "T0:r0.lo", "T0:r0.hi", "T16:r0.lo", "T16:r0.hi"]
