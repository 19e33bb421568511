"""Issue 'figures and exports': every export is evaluated back and compared with the layout's
cells, over the whole embedded catalog, plus golden values (CuTe's SM80 atoms, an F2 basis
worked by hand, a small C header)."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.api import find, model_of
from formal.cli import main
from formal.model.cells import cells_and_names
from formal.model.layout import Layout
from formal.model.resolve import build
from formal.text.read import read_text
from formal.writers import export, export_cute, export_f2

from .sections import M8N8K4, a_section


@lru_cache(maxsize=1)
def catalog() -> tuple[Layout, ...]:
    return model_of([]).layouts


def one(query: str, layouts: Any = None) -> Layout:
    hits = find(list(layouts or catalog()), query)
    assert hits, query
    return hits[0]


# Metadata whose lanes depend on the sparsity selector has no (thread, value) layout; every
# other catalog layout is both CuTe-affine and F2-linear.
NOT_EXPRESSIBLE = {
    "catalog:mma.sp.m16n8k16.meta.f16-bf16", "catalog:mma.sp.m16n8k32.meta.f16-bf16",
    "catalog:mma.sp.m16n8k16.meta.tf32", "catalog:mma.sp.m16n8k8.meta.tf32",
    "catalog:mma.sp.m16n8k32.meta.u8-s8", "catalog:mma.sp.m16n8k64.meta.u4-s4",
}
# the spec's two errata, kept in the catalog as the spec writes them: not bijections, so no
# CuTe or F2 form, and the C tables carry -1 where no case of a formula applies
ERRATA = {"catalog:mma.m16n8k16.A.f64", "catalog:mma.m16n8k256.A.b1"}
NOT_EXPRESSIBLE |= ERRATA
# sparse wgmma's .f16/.bf16 and .tf32 metadata: 64 of the 128 threads hold it, per selector
WGMMA_SP_NOT_EXPRESSIBLE = {"catalog:wgmma.sp.m64nNk32.meta.f16-bf16",
                            "catalog:wgmma.sp.m64nNk16.meta.tf32"}


# ---- an independent reading of the layout's cells ------------------------------------------


def expected_cells(lay: Layout) -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, value) -> (row, col) as the exports promise it, from the raw cell table:
    dense cells as they are, sparse A compressed (column = firstcol/2 + rank within
    [firstcol..lastcol]), metadata (selector 0 only) as (row, chunk * slots + slot)."""
    _names, table = cells_and_names(lay)
    out: dict[tuple[int, int], tuple[int, int]] = {}
    if lay.operand == "metadata":
        slots = lay.sparsity.slots
        for (_s, t, i), (r, ch, slot) in table.items():
            out[(t, i)] = (r, ch * slots + slot)
        return out
    if lay.sparse_a:
        sp_ = lay.sparsity
        rank: dict[tuple[int, int, int, int], int] = {}
        for (_s, t, i), (r, fc, lc) in sorted(table.items()):
            k = rank.get((t, r, fc, lc), 0)
            rank[(t, r, fc, lc)] = k + 1
            out[(t, i)] = (r, fc * sp_.nonzeros // sp_.chunk + k)
        return out
    return {(t, i): (r, c) for (_s, t, i), (r, c) in table.items()}


def cute_eval(shape: Any, stride: Any, idx: Any) -> Any:
    """CuTe's colexicographic index -> offset, written here again (not the module's); ``idx``
    an int or a numpy array of them (every coordinate at once)."""
    if isinstance(shape, int):
        assert np.all((0 <= idx) & (idx < shape))
        return idx * stride
    out = 0
    for s, d in zip(shape, stride, strict=True):
        n = s if isinstance(s, int) else _prod(s)
        out += cute_eval(s, d, idx % n)
        idx //= n
    return out


def _prod(shape: Any) -> int:
    if isinstance(shape, int):
        return shape
    out = 1
    for s in shape:
        out *= _prod(s)
    return out


def parse_cute(text: str) -> tuple[Any, Any]:
    """'((4,8),(2,2)):((32,1),(16,8))' -> nested tuples, by a tiny recursive reader."""
    def read(s: str, k: int) -> tuple[Any, int]:
        if s[k] == "(":
            items, k = [], k + 1
            while True:
                v, k = read(s, k)
                items.append(v)
                if s[k] == ")":
                    return tuple(items), k + 1
                assert s[k] == ","
                k += 1
        m = re.match(r"-?\d+", s[k:])
        assert m, s[k:]
        return int(m.group()), k + len(m.group())

    shape_text, stride_text = text.split(":")
    shape, k1 = read(shape_text, 0)
    stride, k2 = read(stride_text, 0)
    assert k1 == len(shape_text) and k2 == len(stride_text)
    return shape, stride


# ---- CuTe -------------------------------------------------------------------------------------

# CuTe's own atoms (cute/atom/mma_traits_sm80.hpp): index = m + M*k (A), n + N*k (B),
# m + M*n (C/D).
CUTE_SM80 = {
    "mma.m16n8k16.CD.f32@f16-bf16": "((4,8),(2,2)):((32,1),(16,8))",  # SM80_16x8_Row
    "mma.m16n8k16.A.f16-bf16": "((4,8),(2,2,2)):((32,1),(16,8,128))",
    "mma.m16n8k16.B.f16-bf16": "((4,8),(2,2)):((16,1),(8,64))",
    "mma.m16n8k8.A.f16-bf16": "((4,8),(2,2)):((32,1),(16,8))",
    "mma.m16n8k8.B.f16-bf16": "((4,8),2):((16,1),8)",  # SM80_8x8_Row
    "mma.m16n8k8.A.tf32": "((4,8),(2,2)):((16,1),(8,64))",
    "mma.m16n8k8.B.tf32": "((4,8),2):((8,1),32)",
    "mma.m16n8k16.A.u8-s8": "((4,8),(4,2)):((64,1),(16,8))",
    "mma.m16n8k16.B.u8-s8": "((4,8),4):((32,1),8)",  # SM80_8x16_Row
    "mma.m16n8k32.A.s8-u8": "((4,8),(4,2,2)):((64,1),(16,8,256))",
    "mma.m16n8k32.B.s8-u8": "((4,8),(4,2)):((32,1),(8,128))",
    "mma.m8n8k128.A.b1": "((4,8),32):((256,1),8)",
    "mma.m8n8k128.CD.s32@b1": "((4,8),2):((16,1),8)",  # SM80_8x8_Row
}


def test_cute_c_of_m16n8k16_is_sm80_16x8_row() -> None:
    lay = one("catalog:mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2")
    r = export_cute.to_cute(lay)
    assert str(r.cute) == "((4,8),(2,2)):((32,1),(16,8))"
    assert r.cute is not None
    assert r.cute.cpp() == "Layout<Shape<Shape<_4,_8>,Shape<_2,_2>>, " \
                           "Stride<Stride<_32,_1>,Stride<_16,_8>>>"
    assert r.signature() == "(T32,V4) -> (M16,N8), index m + 16*n"


@pytest.mark.parametrize("query,want", sorted(CUTE_SM80.items()))
def test_cute_matches_cutlass_sm80_atoms(query: str, want: str) -> None:
    assert str(export_cute.to_cute(one("catalog:" + query)).cute) == want


def test_cute_over_the_whole_catalog() -> None:
    """Every expressible layout's printed expression, re-read and evaluated here, gives
    every cell; every other layout gives a reason."""
    not_expressible = set()
    for lay in catalog():
        r = export_cute.to_cute(lay)
        if not r.ok:
            assert r.reason, lay.id
            not_expressible.add(lay.id)
            continue
        shape, stride = parse_cute(str(r.cute))
        want = expected_cells(lay)
        (first, e0), (_second, e1) = r.dims
        threads, values = _prod(shape[0]), _prod(shape[1])
        assert (threads, values) == (lay.lanes, lay.elements), lay.id
        assert len(want) == threads * values
        # every (thread, value) at once: CuTe's index by this file's evaluator, as a cell
        tv, cell = np.array(list(want), dtype=np.int64), np.array(list(want.values()))
        k = cute_eval(shape[0], stride[0], tv[:, 0]) + cute_eval(shape[1], stride[1], tv[:, 1])
        got = np.stack([k // e0, k % e0] if lay.operand == "B" else [k % e0, k // e0], axis=1)
        bad = np.flatnonzero((got != cell).any(axis=1))
        assert not bad.size, (lay.id, *tv[bad[0]], k[bad[0]])
        # (export_cute.to_cute has already run its own verify_cute on this text: the
        # verifier's refusal of a wrong expression is test_the_cute_verifier_names_a_wrong_cell)
    assert {i for i in not_expressible if ":mma" in i} == NOT_EXPRESSIBLE


def test_the_cute_verifier_names_a_wrong_cell() -> None:
    """verify_cute (which to_cute runs on every layout it returns) refuses an expression
    that is off by one stride, at the first (thread, value) it gets wrong."""
    lay = one("catalog:mma.m16n8k16.CD.f32@f16-bf16")
    r = export_cute.to_cute(lay)
    assert str(r.cute) == "((4,8),(2,2)):((32,1),(16,8))"
    assert export_cute.verify_cute(str(r.cute), lay) == ""
    wrong = export_cute.verify_cute("((4,8),(2,2)):((32,1),(32,8))", lay)
    # thread 0, value 1: 32 = (row 0, col 2), where the layout has D's c1 at (row 0, col 1)
    assert wrong == "(thread 0, value 1) -> index 32 = (0, 2), the layout has (0, 1)"
    assert export_cute.verify_cute("((4,8),(2,4)):((32,1),(16,8))", lay).startswith("shape ")


# Our own small sections (the spec's form, our formulas): an XOR swizzle of the s8 A map
# (a bijection, F2-linear, not affine) and a rotation (a bijection, neither).
SECTION = a_section(col="col = COL for ai where i = {0,..,7}")
XOR_COL = "((threadID_in_group ^ (groupID & 0x3)) * 4) + (i & 0x3)"
ROT_COL = "(((threadID_in_group + groupID) % 4) * 4) + (i & 0x3)"


def doc_layout(col: str, name: str = "own.txt") -> Layout:
    m = build([read_text(SECTION.replace("COL", col), name)], [])
    assert len(m.layouts) == 1, m.findings
    return m.layouts[0]


def test_cute_not_expressible_names_a_witness() -> None:
    r = export_cute.to_cute(doc_layout(XOR_COL))
    assert not r.ok
    assert "not affine" in r.reason
    # lane 1 (tig 1) -> col 4: index 64; lane 4 (groupID 1, tig 0 ^ 1) -> row 1, col 4:
    # index 65; lane 5 = lane 1 + lane 4 has tig ^ gid = 0 -> row 1, col 0: index 1, not 129
    assert r.reason.endswith("lane 5, element a0 maps to (row 1, col 0) = index 1, but the "
                             "strides of 1 x lane 1 (stride 64) + 1 x lane 4 (stride 65) sum "
                             "to 129")


def test_cute_export_command_lists_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--format", "cute", "mma.m16n8k16.CD.f32@f16"]) == 0
    out = capsys.readouterr().out
    assert "((4,8),(2,2)):((32,1),(16,8))" in out
    assert main(["export", "--format", "cute", "mma.sp.m16n8k16.meta.f16"]) == 1
    cap = capsys.readouterr()
    assert "not expressible, because for sparsity selector 0 metadata comes from 8 of the " \
           "32 lanes" in cap.out
    assert "not expressible in CuTe" in cap.err


# ---- F2 ---------------------------------------------------------------------------------------

# m16n8k16 C/D by hand: row = groupID = lane >> 2 (+8 for c2, c3), col = 2 * (lane % 4) +
# (i & 1).  register bit 0 -> col 1; register bit 1 -> row 8; lane bits 0, 1 -> col 2, 4;
# lane bits 2, 3, 4 -> row 1, 2, 4.
F2_CD = {"register": [(0, 1), (8, 0)], "lane": [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]}
F2_CD_TEXT = """ - register=1 -> (0, 1)
   register=2 -> (8, 0)
 - lane=1 -> (0, 2)
   lane=2 -> (0, 4)
   lane=4 -> (1, 0)
   lane=8 -> (2, 0)
   lane=16 -> (4, 0)
where out dims are: [row (size 16), col (size 8)]"""


def test_f2_basis_of_m16n8k16_cd_by_hand() -> None:
    r = export_f2.to_f2(one("catalog:mma.m16n8k16.CD.f32@f16-bf16"))
    assert r.f2 is not None
    assert list(r.f2.register) == F2_CD["register"]
    assert list(r.f2.lane) == F2_CD["lane"]
    assert r.f2.text() == F2_CD_TEXT
    assert r.f2.to_dict()["out_dims"] == {"row": 16, "col": 8}


def xor_eval(bases: dict[str, list[tuple[int, int]]], lane: int, reg: int) -> tuple[int, int]:
    r = c = 0
    for name, idx in (("lane", lane), ("register", reg)):
        for bit, (br, bc) in enumerate(bases[name]):
            if idx >> bit & 1:
                r, c = r ^ br, c ^ bc
    return r, c


def test_f2_over_the_whole_catalog() -> None:
    not_linear = set()
    for lay in catalog():
        r = export_f2.to_f2(lay)
        if not r.ok:
            assert r.reason, lay.id
            not_linear.add(lay.id)
            continue
        assert r.f2 is not None
        bases = {"lane": list(r.f2.lane), "register": list(r.f2.register)}
        assert 1 << len(bases["lane"]) == lay.lanes  # 32, or a warpgroup's 128
        assert 1 << len(bases["register"]) == lay.elements
        for (t, v), cell in expected_cells(lay).items():
            assert xor_eval(bases, t, v) == cell, (lay.id, t, v)
    # the warp-level mma layouts as before; wgmma's D at an N that is no power of two (N/2
    # elements) is not linear either
    assert {i for i in not_linear if ":mma" in i} == NOT_EXPRESSIBLE
    assert all(":wgmma" in i for i in not_linear if ":mma" not in i)


def test_f2_and_cute_disagree_on_a_swizzle() -> None:
    """An XOR swizzle is F2-linear but not affine; a rotation is neither."""
    xor = doc_layout(XOR_COL)
    r = export_f2.to_f2(xor)
    assert r.ok and r.f2 is not None
    assert r.f2.lane[2] == (1, 4)  # lane 4: groupID 1 -> row 1, and tig ^ 1 -> col 4
    rot = export_f2.to_f2(doc_layout(ROT_COL))
    assert not rot.ok
    # lane 5 = lane 1 ^ lane 4: (tig 1 + gid 1) % 4 = 2 -> col 8, but (0,4) ^ (1,4) = (1,0)
    assert rot.reason == ("lane 5, element a0 maps to (row 1, col 8), but (lane 1, element "
                          "a0) -> (0, 4) xor lane 4 -> (1, 4) gives (1, 0)")
    assert not export_cute.to_cute(doc_layout(ROT_COL)).ok


def test_replicated_layout_has_broadcast_modes() -> None:
    m8 = build([read_text(M8N8K4, "m8.txt")], [])
    lay = m8.layouts[0]
    assert lay.groups is not None
    c = export_cute.to_cute(lay)
    assert str(c.cute) == "((4,4,2),4):((1,0,4),8)"
    f = export_f2.to_f2(lay)
    assert f.f2 is not None and list(f.f2.lane) == [(1, 0), (2, 0), (0, 0), (0, 0), (4, 0)]


# ---- C header ---------------------------------------------------------------------------------


def parse_header(text: str) -> dict[str, dict[str, Any]]:
    """namespace -> {constant or array name: int | nested lists}, read back from the text."""
    out: dict[str, dict[str, Any]] = {}
    for m in re.finditer(r"^namespace (\w+) \{\n(constexpr .*?)\n\}  // namespace \1", text,
                         re.S | re.M):
        ns: dict[str, Any] = {}
        body = m.group(2)
        for c in re.finditer(r"^constexpr int (\w+) = (-?\d+);", body, re.M):
            ns[c.group(1)] = int(c.group(2))
        for a in re.finditer(r"^PTXLAYOUT_DEVICE constexpr [\w:]+ (\w+)((?:\[\w+\])+) = "
                             r"(.*?);$", body, re.M | re.S):
            dims = [ns[d] for d in re.findall(r"\[(\w+)\]", a.group(2))]
            flat = [int(x) for x in re.findall(r"-?\d+", a.group(3))]
            assert len(flat) == _size(dims), (m.group(1), a.group(1))
            ns[a.group(1)] = _reshape(flat, dims)
        for u in re.finditer(r"^using (\w+)::(\w+);$", body, re.M):
            ns[u.group(2)] = out[u.group(1)][u.group(2)]  # a table stated once, earlier
        out[m.group(1)] = ns
    return out


def _size(dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _reshape(flat: list[int], dims: list[int]) -> Any:
    if len(dims) == 1:
        return flat
    step = _size(dims[1:])
    return [_reshape(flat[k * step:(k + 1) * step], dims[1:]) for k in range(dims[0])]


def test_c_header_reads_back_cell_by_cell() -> None:
    text, problems = export.export(catalog(), "c")
    assert {p.split(":", 2)[0] + ":" + p.split(":", 2)[1] for p in problems} <= ERRATA
    spaces = parse_header(text)
    assert len(spaces) == len(catalog())
    for lay in catalog():
        ns = spaces[export.c_name(lay)]
        names, table = cells_and_names(lay)
        if lay.operand == "metadata":
            sels = list(lay.metadata.selectors)
            assert ns["selector_value"] == sels
            assert ns["kFields"] == lay.elements
            for si, s in enumerate(sels):
                for t in range(32):
                    held = (s, t, 0) in table
                    assert ns["holds"][si][t] == int(held)
                    for i in range(lay.elements):
                        want = table.get((s, t, i), (-1, -1, -1))
                        got = tuple(ns[k][si][t][i] for k in ("row", "chunk", "slot"))
                        assert got == want, (lay.id, s, t, i)
            assert ns["bit_lo"][3] == 6 and ns["bit_hi"][3] == 7
            continue
        assert (ns["kLanes"], ns["kElements"]) == (lay.lanes, lay.elements)
        assert (ns["kRows"], ns["kCols"]) == lay.tile
        for (_s, t, i), out in table.items():
            want = tuple(-1 if v is None else v for v in out)  # -1: no case applies
            assert tuple(ns[k][t][i] for k in names) == want, (lay.id, t, i)


def test_c_header_compiles() -> None:
    gxx = shutil.which("g++") or shutil.which("c++")
    if gxx is None:
        pytest.skip("no C++ compiler on PATH")
    text, _ = export.export(catalog(), "c")
    src = text + """
static_assert(ptxlayout::mma_m16n8k16_A_u8_s8::row[13][5] == 11, "T13:a5 row");
static_assert(ptxlayout::mma_m16n8k16_A_u8_s8::col[13][5] == 5, "T13:a5 col");
static_assert(ptxlayout::mma_sp_m16n8k16_A_f16_bf16::lastcol[5][0] == 7, "sparse");
static_assert(ptxlayout::mma_sp_m16n8k16_meta_f16_bf16::chunk[1][5][2] == 1, "metadata");
static_assert(ptxlayout::mma_sp_m16n8k16_meta_f16_bf16::row[0][5][2] == -1, "not held");
int main() { return ptxlayout::mma_m16n8k8_B_f16_bf16::kElements == 2 ? 0 : 1; }
"""
    path = Path(__import__("tempfile").mkdtemp()) / "layouts.cpp"
    path.write_text(src, encoding="utf-8")
    run = subprocess.run([gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                          str(path)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[:3000]


B_ROWS = ["{0, 1},", "{2, 3},", "{4, 5},", "{6, 7},"] * 8
B_COLS = [f"{{{g}, {g}}}," for g in range(8) for _ in range(4)]
GOLDEN_B = "\n".join([
    "// catalog:mma.m16n8k8.B.f16-bf16: mma.m16n8k8 B .f16/.bf16, tile 8 x 8",
    "// catalog/dense-float.md:232 (catalog); map hash 5724d6475744dffc",
    "namespace mma_m16n8k8_B_f16_bf16 {",
    "constexpr int kLanes = 32;",
    "constexpr int kElements = 2;",
    "constexpr int kRows = 8;",
    "constexpr int kCols = 8;",
    "PTXLAYOUT_DEVICE constexpr std::int16_t row[kLanes][kElements] = {",
    *[("    " + x) for x in B_ROWS[:-1]], "    " + B_ROWS[-1].rstrip(","),
    "};",
    "PTXLAYOUT_DEVICE constexpr std::int16_t col[kLanes][kElements] = {",
    *[("    " + x) for x in B_COLS[:-1]], "    " + B_COLS[-1].rstrip(","),
    "};",
    "}  // namespace mma_m16n8k8_B_f16_bf16",
])


def test_c_header_golden_for_a_small_layout() -> None:
    text, problems = export.to_c([one("catalog:mma.m16n8k8.B.f16-bf16")])
    assert problems == []
    assert GOLDEN_B in text
    assert text.startswith("// Generated by ptxlayout")
    guard = re.search(r"#ifndef (PTXLAYOUT_\w+_H)\n#define \1\n", text)
    assert guard and text.rstrip().endswith(f"#endif  // {guard.group(1)}")
    assert "#include <cstdint>" in text


def test_c_header_marks_missing_cases() -> None:
    text = SECTION.replace("COL for ai where i = {0,..,7}",
                           "(threadID_in_group * 4) + (i & 0x3) for ai where i < 7")
    m = build([read_text(text, "gap.txt")], [])
    out, problems = export.to_c(m.layouts)
    assert any("lane 0, element 7: no case of 'col' applies" in p for p in problems)
    ns = parse_header(out)[export.c_name(m.layouts[0])]
    assert ns["col"][0][7] == -1 and ns["row"][0][7] == 8


# ---- every format, every catalog layout, through the command line ---------------------------


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_every_format_exports_the_catalog(fmt: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"all.{fmt}"
    assert main(["export", "--format", fmt, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    for lay in catalog():
        assert lay.id in text or export.c_name(lay) in text, (fmt, lay.id)
    err = capsys.readouterr().err
    if fmt in ("cute", "f2"):
        assert sorted(line.split(":", 2)[0] + ":" + line.split(":", 2)[1]
                      for line in err.splitlines()) == \
            sorted(NOT_EXPRESSIBLE | WGMMA_SP_NOT_EXPRESSIBLE)
    else:
        assert {line.split(":", 2)[0] + ":" + line.split(":", 2)[1]
                for line in err.splitlines()} <= ERRATA
    # (the same bytes on every run: test_golden holds each format's export to the bytes of
    # tests/golden/outputs.json, written by another process)


def test_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="unknown export format"):
        export.export(catalog(), "yaml")
    assert main(["export", "--format", "yaml"]) == 2


def test_a_table_of_integers_is_written_row_by_row_as_json_writes_each_row() -> None:
    """The export writes a cell table or a list of places one row a line, each row as
    ``json.dumps`` writes it, also through its one-format path for rows of plain integers."""
    import json

    from formal.writers.export import _dump, _int_rows
    cells = [{"lane": t, "element": i, "row": -t, "col": 10 * i} for t in range(2)
             for i in range(2)]
    places = [[s, 3 * s, -1] for s in range(3)]
    assert _int_rows(cells) is not None and _int_rows(places) is not None
    tables = [cells, places, [*cells, {"element": 0, "lane": 0, "row": 0, "col": 0}],
              [*cells, {**cells[0], "col": True}], [*places, [1, 2]], [*places, [1, 2, 1.5]],
              [*cells, {**cells[0], "row": "r%d"}], [[1], [2]], [{"k%": 1, "j": 2}] * 2]
    for rows in tables:
        assert json.loads(_dump(rows)) == rows
        lines = [" " + json.dumps(r) for r in rows]
        assert _dump(rows).splitlines()[1:-1] == [x + "," for x in lines[:-1]] + lines[-1:]
    assert _dump(cells).splitlines()[1] == ' {"lane": 0, "element": 0, "row": 0, "col": 0},'
