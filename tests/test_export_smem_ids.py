"""``ptxlayout export`` of the shared-memory examples, canonical forms, descriptor tables and K
slices: cells worked by hand, the CuTe expressions evaluated back by an evaluator of this test's
own (a tokenizer and a recursive descent, never eval) against the layouts' addresses, the C
header compiled with its values asserted, F2 bases checked by XOR, and exit 2 with the reason
where a format has no meaning."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
from typing import Any

import pytest

from formal.cli import main

K128 = "wgmma.smem.example.K-major.128B.bf16"
MN128 = "wgmma.smem.example.MN-major.128B.tf32"


def _export(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["export", *argv])
    return code, out.getvalue(), err.getvalue()


def _json(*ids: str) -> list[dict[str, Any]]:
    code, out, err = _export(*ids)
    assert code == 0, err
    recs: list[dict[str, Any]] = json.loads(out)
    return recs


def _at(rec: dict[str, Any], row: int, col: int) -> int:
    """The byte of (row, col): position row * K + col of the row-major table."""
    value: int = rec["places"][row * rec["tile"][1] + col]
    return value


def test_the_k_major_128b_bf16_example_by_hand() -> None:
    """((8,2),(8,2)):((64,512),(1,8)), bf16, Swizzle<3,4,3> on bytes.  (row 1, col 0):
    element 64, byte 128, bits 7-9 = 1 XORed into bits 4-6: 144.  (row 0, col 8): element 8,
    byte 16, bits 7-9 = 0: 16.  (row 9, col 8): element 64 + 512 + 8 = 584, byte 1168 =
    1024 + 128 + 16, bits 7-9 = 1: 1168 ^ 16 = 1152."""
    (r,) = _json(K128)
    assert (r["tile"], r["bits"], r["place_fields"]) == ([16, 16], 16, ["byte"])
    assert (r["params"], r["not_applicable"]) == ({"SBO": 512, "T": 8, "k": 1, "m": 2},
                                                  ["LBO"])
    assert (_at(r, 1, 0), _at(r, 0, 8), _at(r, 9, 8), _at(r, 0, 0)) == (144, 16, 1152, 0)
    # 256 elements of 2 bytes, each its own, in two 1024-byte atoms (m = 2); K = 16 of the
    # 64 elements a 128-byte row holds, so each row's 32 bytes sit at a chunk the swizzle picks
    assert len(set(r["places"])) == 256 and max(r["places"]) < 2 * 1024
    assert {p // 16 % 8 for p in r["places"][16:32]} == {1, 0}  # row 1: chunks 1 and 0


def test_the_mn_major_128b_tf32_example_by_hand() -> None:
    """((4,8,2),(8,1)):((1,4,256),(32,512)), tf32: (mn 4, k 0) is element 4, byte 16 (bits 7-9
    = 0); (mn 0, k 1) is element 32, byte 128, bits 7-9 = 1: 128 ^ 16 = 144."""
    (r,) = _json(MN128)
    assert r["tile"] == [64, 8]
    assert (_at(r, 4, 0), _at(r, 0, 1), _at(r, 1, 0)) == (16, 144, 4)


# ---- an evaluator of CuTe's ``Swizzle<B,M,S> o shape:stride``, this test's own -------------

TOKEN = re.compile(r"\s*(Swizzle<\d+,\d+,\d+>|\d*[A-Za-z]+|\d+|[(),:]|o\b)")


def _tokens(text: str) -> list[str]:
    pos, out = 0, []
    while pos < len(text.rstrip()):
        m = TOKEN.match(text, pos)
        assert m is not None, text[pos:]
        out.append(m.group(1))
        pos = m.end()
    return out


def _tree(toks: list[str], params: dict[str, int]) -> tuple[Any, list[str]]:
    """One entry (``8``, ``2k``, ``SBO``: its value at ``params``) or a parenthesised tuple."""
    head, rest = toks[0], toks[1:]
    if head != "(":
        m = re.fullmatch(r"(\d*)([A-Za-z]*)", head)
        assert m is not None
        scale = int(m.group(1)) if m.group(1) else 1
        return scale * (params[m.group(2)] if m.group(2) else 1), rest
    items = []
    while True:
        item, rest = _tree(rest, params)
        items.append(item)
        sep, rest = rest[0], rest[1:]
        if sep == ")":
            return tuple(items), rest
        assert sep == ","


def _digits(shape: Any, stride: Any) -> list[tuple[int, int]]:
    if isinstance(shape, int):
        return [(shape, stride)]
    return [d for s, t in zip(shape, stride, strict=True) for d in _digits(s, t)]


def evaluate(text: str, params: dict[str, int], bits: int, mn: int, k: int) -> int:
    """The bit address of (mn, k): each mode's coordinate split into digits, first fastest,
    weighted by the strides; the swizzle on the byte address."""
    toks = _tokens(text)
    b, m, s = (int(x) for x in re.findall(r"\d+", toks[0]))
    assert toks[1] == "o"
    shape, rest = _tree(toks[2:], params)
    assert rest[0] == ":"
    stride, rest = _tree(rest[1:], params)
    assert rest == []
    off = 0
    for coord, sh, st in ((mn, shape[0], stride[0]), (k, shape[1], stride[1])):
        for extent, step in _digits(sh, st):
            off += (coord % extent) * step
            coord //= extent
    byte, bit = divmod(off * bits, 8)
    return (byte ^ ((byte >> s) & (((1 << b) - 1) << m))) * 8 + bit


def _cute_lines(*ids: str) -> dict[str, str]:
    code, out, err = _export(*ids, "--format", "cute")
    assert code == 0, err
    lines = out.splitlines()
    return {ln.removeprefix("catalog:"): lines[i + 2].strip()
            for i, ln in enumerate(lines) if ln.startswith("catalog:")}


def test_every_canonical_form_in_cute_is_each_of_its_layouts() -> None:
    """The symbolic expression, evaluated at each instance's T, m, k, LBO, SBO, gives every
    cell's address of the catalog's layout at that width (wgmma's and tcgen05's widths)."""
    from formal.writers.export_smem_ids import smem_entry_records
    from formal.writers.smem_figure import catalog_instances
    forms = [r["id"] for r in smem_entry_records() if r["entry"] == "canonical"]
    exprs = _cute_lines(*forms)
    assert len(exprs) == 8
    assert exprs["wgmma.smem.canonical.K-major.128B"] == \
        "Swizzle<3,4,3> o ((8,m),(T,2k)):((8T,SBO),(1,T))"
    seen = 0
    for inst in catalog_instances():
        text = exprs[f"wgmma.smem.canonical.{inst.major}-major.{inst.mode}"]
        rows, cols = inst.layout.extent
        for k in range(cols):
            for mn in range(rows):
                assert evaluate(text, inst.params, inst.bits, mn, k) == \
                    inst.layout.bit_address((mn, k)), (inst.id, mn, k)
        seen += 1
    assert seen == 48


def test_an_example_in_cute_gives_its_cells_and_a_wrong_stride_would_not() -> None:
    exprs = _cute_lines(K128, MN128)
    for ident, text in exprs.items():
        (r,) = _json(ident)
        rows, cols = r["tile"]
        got = [evaluate(text, {}, r["bits"], mn, k) // 8 for mn in range(rows)
               for k in range(cols)]
        assert got == r["places"]
    wrong = exprs[K128].replace("(64,512)", "(64,256)")
    assert evaluate(wrong, {}, 16, 8, 0) // 8 != 1024


def test_the_c_header_compiles_and_holds_the_cells() -> None:
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    code, out, err = _export(K128, "tcgen05.smem.descriptor", "--format", "c")
    assert code == 0, err
    checks = "\n".join([
        "static_assert(ptxlayout::wgmma_smem_example_K_major_128B_bf16::kByte[1][0] == 144);",
        "static_assert(ptxlayout::wgmma_smem_example_K_major_128B_bf16::kByte[0][8] == 16);",
        "static_assert(ptxlayout::tcgen05_smem_descriptor::lo[3] == 46);",
        "static_assert(ptxlayout::tcgen05_smem_descriptor::constant[3] == 1);",
        "static_assert(ptxlayout::tcgen05_smem_descriptor::bits[7] == 3);"])
    run = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-"],
                         input=out + checks + "\n", text=True, capture_output=True,
                         check=False)
    assert run.returncode == 0, run.stderr


def test_f2_bases_xor_to_every_cell() -> None:
    """Row bit 1 -> 144 (row 1), col bit 8 -> 16 (col 8); (row 9, col 8) = 144 ^ 1024 ^ 16 =
    1152, as by hand above."""
    code, out, err = _export(K128, "--format", "f2")
    assert code == 0, err
    assert "row: 1->144 2->288 4->576 8->1024" in out and "col: 1->2 2->4 4->8 8->16" in out
    from formal.writers.export_smem_ids import f2_bases
    (r,) = _json(K128)
    r["places"][9 * 16 + 8] = 1168  # the address without the swizzle's XOR
    assert f2_bases(r) == "not F2-linear: (row 9, col 8) is byte 1168, the XOR of its " \
                          "bits' bases 1152"


def test_a_descriptor_table_and_a_k_slice() -> None:
    (d,) = _json("tcgen05.smem.descriptor")
    assert [(f["lo"], f["hi"], f["constant"]) for f in d["fields"]][3] == (46, 48, 1)
    assert [f["lo"] for f in d["fields"]] == [0, 16, 32, 46, 49, 52, 53, 61]
    (w,) = _json("catalog:wgmma.smem.descriptor")
    assert [(f["lo"], f["hi"]) for f in w["fields"]][-1] == (62, 63)
    (s,) = _json("wgmma.smem.k-slice.bf16")
    assert (s["k"], s["sparse_k"], s["bytes"], s["sparse_bytes"]) == (16, 32, 32, 64)
    assert [r["id"] for r in _json("tcgen05.smem.k-slice")][:2] == [
        "tcgen05.smem.k-slice.tf32", "tcgen05.smem.k-slice.f16"]


@pytest.mark.parametrize("argv, said", [
    (["wgmma.smem.canonical.K-major.128B", "--format", "c"], "have no values"),
    (["wgmma.smem.canonical.K-major.128B", "--format", "f2"], "has no cells"),
    (["tcgen05.smem.descriptor", "--format", "cute"], "is not a layout"),
    (["wgmma.smem.k-slice.f16", "--format", "c"], "not a table"),
    (["wgmma.smem.example.K-major.64B.f16"], "no shared-memory example, canonical form"),
])
def test_exit_2_with_the_reason(argv: list[str], said: str) -> None:
    code, out, err = _export(*argv)
    assert code == 2 and out == "" and said in err


def test_the_records_keep_the_export_contract() -> None:
    from .test_export_records import _errors
    recs = _json("wgmma.smem.example", "wgmma.smem.canonical.MN-major.64B",
                 "tcgen05.smem.descriptor", "wgmma.smem.k-slice.b1")
    assert [r["entry"] for r in recs] == ["example", "example", "canonical", "descriptor",
                                          "k-slice"]
    assert _errors(recs) == []
    bad = dict(recs[0], places=[{"row": 0, "col": 0, "byte": 0}])
    assert any("is not of type 'integer'" in e for e in _errors([bad]))


def test_every_such_id_the_report_names_exports() -> None:
    from formal.api import results_beyond_fragments
    from formal.writers.cards import bare
    from formal.writers.export_smem_ids import is_smem_entry_query, smem_entry_records
    reported = {bare(r.id) for r in results_beyond_fragments() if is_smem_entry_query(r.id)}
    assert reported == {r["id"] for r in smem_entry_records()} and len(reported) == 26
