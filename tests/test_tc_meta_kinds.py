"""The sparsity metadata of every kind and M of tcgen05.mma.sp beside .kind::f16 at M = 128
(test_tc_meta.py has that one): each form read and proved, checked bit for bit against CuTe's
metadata fragment (its layout transcribed here as shape and stride, and found verbatim in the
installed wheel's header where the wheel is installed), and each group of kinds mutated and
refuted with the cell the mutation is about."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from formal.model.tc_meta import MetaLayout, meta_layouts
from formal.parse.tc_meta import read_tc_meta
from formal.prove.tc_meta import META_OBLIGATIONS, prove_meta

CATALOG_TEXT = (Path(__file__).resolve().parents[1] / "formal" / "catalog" / "sparse-metadata"
                / "tcgen05.md").read_text(encoding="utf-8")

Nest = int | tuple["Nest", ...]

# CuTe's metadata fragments (cute/atom/mma_traits_sm100.hpp, tmem_e_frg): (row, k) -> an
# element of "virtual tensor memory" (lane + 128 * element within the lane), an element being
# ``bits`` of the lane's words (K = 16 tf32 elements in 32 bits; one bit an element of 16- and
# 8-bit kinds; half a bit an element of the 4-bit kinds).  Keys: (instruction, kind, M).
CUTE: dict[tuple[str, str, int], tuple[Nest, Nest, Fraction]] = {
    ("tcgen05.mma.sp", "tf32", 128): (((8, 2, 8), (8, 2)), ((1, 1024, 16), (128, 8)),
                                      Fraction(2)),
    ("tcgen05.mma.sp", "f16", 128): (((8, 2, 8), (16, 2)), ((1, 2048, 16), (128, 8)),
                                     Fraction(1)),
    **{("tcgen05.mma.sp", kind, 128): ((128, 64), (1, 128), Fraction(1))
       for kind in ("f8f6f4", "mxf8f6f4", "i8")},
    **{("tcgen05.mma.sp", kind, 128): ((128, 128), (1, 128), Fraction(1, 2))
       for kind in ("mxf4", "mxf4nvf4")},
    # tmem_e_frg_ws: a .ws fragment of M < 128 has a last mode of 128 / M copies, M lanes
    # apart (the 8-bit ones fold it into K's mode: (64, 2) at M = 64)
    ("tcgen05.mma.ws.sp", "tf32", 128): (((8, 2, 8), (8, 2)), ((1, 1024, 16), (128, 8)),
                                         Fraction(2)),
    ("tcgen05.mma.ws.sp", "tf32", 64): (((8, 2, 4), (8, 2), 2), ((1, 1024, 16), (128, 8), 64),
                                        Fraction(2)),
    ("tcgen05.mma.ws.sp", "tf32", 32): (((8, 2, 2), (8, 2), 4), ((1, 1024, 16), (128, 8), 32),
                                        Fraction(2)),
    ("tcgen05.mma.ws.sp", "f16", 128): (((8, 2, 8), (16, 2)), ((1, 2048, 16), (128, 8)),
                                        Fraction(1)),
    ("tcgen05.mma.ws.sp", "f16", 64): (((8, 2, 4), (16, 2), 2), ((1, 2048, 16), (128, 8), 64),
                                       Fraction(1)),
    ("tcgen05.mma.ws.sp", "f16", 32): (((8, 2, 2), (16, 2), 4), ((1, 2048, 16), (128, 8), 32),
                                       Fraction(1)),
    **{("tcgen05.mma.ws.sp", kind, m): atom
       for kind in ("f8f6f4", "i8")
       for m, atom in ((128, ((128, 64), (1, 128), Fraction(1))),
                       (64, ((64, (64, 2)), (1, (128, 64)), Fraction(1))),
                       (32, ((32, (64, 4)), (1, (128, 32)), Fraction(1))))},
}


def section(title: str) -> str:
    head = CATALOG_TEXT.index(title + "\n")
    end = CATALOG_TEXT.find("\n## ", head + 1)
    return CATALOG_TEXT[head:] if end < 0 else CATALOG_TEXT[head:end + 1]


@cache
def layouts() -> dict[tuple[str, str, int], MetaLayout]:
    secs, found = read_tc_meta(CATALOG_TEXT, "catalog")
    assert not found
    return {(lay.instruction, lay.kind, lay.m): lay for lay in meta_layouts(secs)}


def _mode(shape: Nest, stride: Nest) -> list[int]:
    """The offsets of one (possibly nested) mode, in CuTe's colexicographic order."""
    if isinstance(shape, int):
        assert isinstance(stride, int)
        return [i * stride for i in range(shape)]
    assert isinstance(stride, tuple)
    out = [0]
    for s, d in zip(shape, stride, strict=True):
        out = [o + q for q in _mode(s, d) for o in out]
    return out


def cute_bits(key: tuple[str, str, int], k: int) -> dict[tuple[int, int, int], set]:
    """CuTe's fragment as (row, k, copy) -> the (lane, column, bit) it takes; the modes after
    the first, flattened, are K and then the copies of a .ws fragment of M < 128."""
    shape, stride, bits = CUTE[key]
    assert isinstance(shape, tuple) and isinstance(stride, tuple)
    rows = _mode(shape[0], stride[0])
    rest = _mode(tuple(shape[1:]), tuple(stride[1:]))
    out: dict[tuple[int, int, int], set] = {}
    for (r, ro), (j, jo) in itertools.product(enumerate(rows), enumerate(rest)):
        v = ro + jo
        first = Fraction(v // 128) * bits
        places = {(v % 128, int(b) // 32, int(b) % 32)
                  for b in range(int(first), max(int(first + bits), int(first) + 1))}
        out[(r, j % k, j // k)] = places
    return out


def _cpp(t: Nest, name: str) -> str:
    return f"_{t}" if isinstance(t, int) else f"{name}<{','.join(_cpp(x, name) for x in t)}>"


@pytest.mark.parametrize("key", sorted(CUTE))
def test_the_placement_is_cutes_metadata_fragment(key: tuple[str, str, int]) -> None:
    """Every field at selector 0 takes exactly the bits CuTe's fragment gives the elements of
    its chunk (and, at selector s, those s columns on)."""
    lay = layouts()[key]
    frag = cute_bits(key, lay.k)
    per = lay.k // lay.chunks
    assert len(frag) == lay.rows * lay.k * lay.copies
    for s in lay.sels:
        for row, chunk, lane, col, bit, copy in lay.placed(s):
            want = set().union(*(frag[(row, per * chunk + j, copy)] for j in range(per)))
            assert want == {(lane, col - s, b) for b in range(bit, bit + lay.width)}


@pytest.mark.parametrize("key", sorted(CUTE))
def test_the_transcription_is_in_the_installed_header(key: tuple[str, str, int]) -> None:
    from formal.audit import installed_include
    inc = installed_include()
    if inc is None:
        pytest.skip("the nvidia-cutlass wheel is not installed")
    text = re.sub(r"\s", "", (Path(inc) / "cute" / "atom" / "mma_traits_sm100.hpp").read_text())
    plain, ws = text.split("structtmem_e_frg:")[1].split("structtmem_e_frg_ws:")
    ws = ws.split("structtmem_sf_frg")[0]
    shape, stride, _ = CUTE[key]
    atom = f"Layout<{_cpp(shape, 'Shape')},{_cpp(stride, 'Stride')}>"
    assert atom in (ws if key[0] == "tcgen05.mma.ws.sp" else plain)


def test_every_form_is_proved() -> None:
    for lay in layouts().values():
        results, findings = prove_meta(lay)
        assert [r.id for r in results] == [lay.selector_id(s) for s in lay.sels]
        for r in results:
            assert {v.name: v.status for v in r.verdicts} == {
                **{n: "proved" for n in META_OBLIGATIONS[:-1]}, "hardware": "unconfirmed"}
        assert not [f for f in findings if f.severity == "error"]


# ---- .kind::tf32: 1:2, a 4-bit field for each two-wide chunk of K = 16 --------------------

TF32 = section("## Sparse metadata for tcgen05.mma.sp .kind::tf32 with M=128, K=16")


def _prove(text: str) -> tuple[list, list]:
    secs, found = read_tc_meta(text, "mutant.md")
    assert not found and len(secs) == 1
    results, findings = prove_meta(meta_layouts(secs)[0])
    return results, [f for f in findings if f.severity == "error"]


def _mutate(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def test_tf32_reads_as_eight_four_bit_fields_a_row() -> None:
    lay = layouts()[("tcgen05.mma.sp", "tf32", 128)]
    assert (lay.k, lay.rows, lay.chunks, lay.width, lay.columns, lay.sels) \
        == (16, 128, 8, 4, 2, (0, 1))
    placed = {(p[0], p[1]): p[2:5] for p in lay.placed(0)}
    # chunk 5 is K 10-11: eight lanes down (K 8-15), bits 4-7; row 8 takes the high half word
    assert placed[(0, 5)] == (8, 0, 4) and placed[(8, 5)] == (8, 0, 20)


def test_tf32_two_bit_fields_are_refuted_against_the_text() -> None:
    """The text's 4-bit index per two-wide chunk: a 2-bit field (the colleague's reading of
    "2-bit fields over K = 16") is a register-budget refutation, not a layout."""
    results, _ = _prove(_mutate(TF32, "8 fields of 4 bits", "8 fields of 2 bits"))
    v = results[0].verdict("register-budget")
    assert v.status == "refuted" and "a chunk has 2 indices of 2 bits" in v.message


def test_tf32_k_unlike_the_kind_is_refuted() -> None:
    results, _ = _prove(_mutate(TF32, "K=16", "K=32"))
    v = results[0].verdict("register-budget")
    assert v.status == "refuted"
    assert "K = 32; a sparse .kind::tf32 has K = 16" in v.message
    assert "8 fields a row of 2-element chunks cover 16 of K = 32" in v.message


def test_tf32_a_lane_off_by_one_is_refuted_with_the_cell() -> None:
    lane = "lane   = row % 8 + 8 * (chunk / 4) + 16 * (row / 16)"
    results, errors = _prove(_mutate(TF32, lane, lane + " + 1"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [119, 4],
                                "place": {"lane": 128, "column": 0, "bit": 0}, "name": "lane"}
    assert errors[0].span.line == TF32.split("\n").index("  " + lane) + 1


# ---- 8-bit kinds (f8f6f4, mxf8f6f4, i8): 2:4, lane = row, 16 fields of K = 64 in 2 columns --

I8 = section("## Sparse metadata for tcgen05.mma.sp .kind::i8 with M=128, K=64")


def test_eight_bit_kinds_read_as_sixteen_fields_a_row_in_two_columns() -> None:
    for kind in ("f8f6f4", "mxf8f6f4", "i8"):
        lay = layouts()[("tcgen05.mma.sp", kind, 128)]
        assert (lay.k, lay.chunks, lay.width, lay.columns, lay.sels) == (64, 16, 4, 2, (0,))
        placed = {(p[0], p[1]): p[2:5] for p in lay.placed(0)}
        # chunk 9 is K 36-39: the second column, bits 4-7, in the row's own lane
        assert placed[(5, 9)] == (5, 1, 4) and placed[(127, 15)] == (127, 1, 28)


def test_eight_bit_a_lane_off_by_one_is_refuted_with_the_cell() -> None:
    results, errors = _prove(_mutate(I8, "lane   = row", "lane   = row + 1"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [127, 0],
                                "place": {"lane": 128, "column": 0, "bit": 0}, "name": "lane"}
    # row 31's fields in lane 32: the next partition of tensor memory
    assert results[0].verdict("lane-partition").counterexample == {
        "selector": 0, "a": [31, 0], "place": {"lane": 32, "column": 0, "bit": 0},
        "name": "lane"}
    assert {f.kind for f in errors} == {"metadata-coverage", "lane-partition"}


def test_eight_bit_a_field_past_the_word_is_refuted() -> None:
    results, _ = _prove(_mutate(I8, "bit    = 4 * (chunk % 8)", "bit    = 4 * (chunk % 8) + 1"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [0, 7],
                                "place": {"lane": 0, "column": 0, "bit": 29}, "name": "bit"}
    assert "bits 29-32, past the 32-bit word" in v.message


def test_eight_bit_two_fields_on_the_same_bits_are_refuted() -> None:
    results, _ = _prove(_mutate(I8, "column = chunk / 8", "column = 0"))
    v = results[0].verdict("metadata-coverage")
    # chunk 8 (K 32-35) lands on chunk 0's bits once both sit in column 0
    assert v.counterexample == {"selector": 0, "a": [0, 0], "b": [0, 8],
                                "place": {"lane": 0, "column": 0, "bit": 0}, "name": "bit"}


def test_eight_bit_a_second_selector_value_is_refuted_against_the_text() -> None:
    """The text: the selector "must be 0 for .kind::i8": a catalog stating {0, 1} is refuted
    even though the placement (which never reads sel) would put every field in place."""
    results, errors = _prove(_mutate(I8, "sel    = {0}", "sel    = {0, 1}"))
    v = results[0].verdict("selector-range")
    assert v.status == "refuted"
    assert v.counterexample == {"stated": [0, 1], "text": [0]}
    assert "must be (or is assumed to be) {0} for .kind::i8" in v.message
    assert results[1].verdict("metadata-coverage").status == "proved"
    assert [f.kind for f in errors] == ["selector-range"]


# ---- 4-bit kinds (mxf4, mxf4nvf4): 4:8 in pairs, a 4-bit field for each eight of K = 128 ----

MXF4 = section("## Sparse metadata for tcgen05.mma.sp .kind::mxf4 with M=128, K=128")


def test_four_bit_kinds_read_as_a_field_for_each_eight_wide_chunk() -> None:
    for kind in ("mxf4", "mxf4nvf4"):
        lay = layouts()[("tcgen05.mma.sp", kind, 128)]
        assert (lay.k, lay.chunks, lay.width, lay.columns, lay.sels) == (128, 16, 4, 2, (0,))
        placed = {(p[0], p[1]): p[2:5] for p in lay.placed(0)}
        # chunk 9 is K 72-79: bit k / 2 of the second column (K 64-127), bits 4-7
        assert placed[(3, 9)] == (3, 1, 4)


def test_four_bit_chunk_of_four_is_refuted_against_the_granularity() -> None:
    """4:8 in pairs: a row of K = 128 has 16 chunks; a catalog stating 32 (the 2:4 reading)
    is refuted by the register budget, and its fields run past the two columns."""
    text = _mutate(MXF4, "128 x 16 fields", "128 x 32 fields")
    results, _ = _prove(text)
    v = results[0].verdict("register-budget")
    assert v.status == "refuted"
    assert "32 fields a row of 8-element chunks cover 256 of K = 128" in v.message
    assert results[0].verdict("metadata-coverage").counterexample == {
        "selector": 0, "a": [0, 16], "place": {"lane": 0, "column": 2, "bit": 0},
        "name": "column"}


def test_four_bit_a_lane_off_by_one_is_refuted_with_the_cell() -> None:
    results, _ = _prove(_mutate(MXF4, "lane   = row", "lane   = row - 1"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [0, 0],
                                "place": {"lane": -1, "column": 0, "bit": 0}, "name": "lane"}


def test_four_bit_two_fields_on_the_same_bits_are_refuted() -> None:
    results, _ = _prove(_mutate(MXF4, "bit    = 4 * (chunk % 8)", "bit    = 2 * (chunk % 8)"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [0, 0], "b": [0, 1],
                                "place": {"lane": 0, "column": 0, "bit": 2}, "name": "bit"}


def test_four_bit_selector_one_is_refuted_against_the_text() -> None:
    results, _ = _prove(_mutate(MXF4, "sel    = {0}", "sel    = {1}"))
    assert results[0].verdict("selector-range").counterexample == {"stated": [1], "text": [0]}


# ---- .ws forms (tcgen05.mma.ws.sp: tf32, f16, f8f6f4, i8 at M = 128, 64, 32) ---------------


def test_the_ws_forms_hold_each_field_once_a_lane_group() -> None:
    lays = layouts()
    ws = sorted((k, m) for (i, k, m) in lays if i == "tcgen05.mma.ws.sp")
    assert ws == [(k, m) for k in ("f16", "f8f6f4", "i8", "tf32") for m in (32, 64, 128)]
    lay = lays[("tcgen05.mma.ws.sp", "f16", 64)]
    assert lay.id == "tcgen05.sp_meta.ws.m64.f16" and (lay.rows, lay.copies) == (64, 2)
    placed = {(p[0], p[1], p[5]): p[2:5] for p in lay.placed(1)}
    # row 40's chunk 5: lane 0 + 8 + 32, bits 20-23 of column 1 ((40 / 8) % 2 = 1: the high
    # half word); its copy 64 lanes down
    assert placed[(40, 5, 0)] == (40, 1, 20) and placed[(40, 5, 1)] == (104, 1, 20)
    i8 = {(p[0], p[1], p[5]): p[2:5] for p in lays[("tcgen05.mma.ws.sp", "i8", 32)].placed(0)}
    assert [i8[(7, 9, c)] for c in range(4)] == [(7, 1, 4), (39, 1, 4), (71, 1, 4), (103, 1, 4)]


WS_F16 = section("## Sparse metadata for tcgen05.mma.ws.sp .kind::f16 with M=64, K=32")
WS_I8 = section("## Sparse metadata for tcgen05.mma.ws.sp .kind::i8 with M=32, K=64")


def test_ws_copies_unlike_the_lane_groups_are_refuted() -> None:
    """M = 64 .ws keeps D in two lane groups: a catalog holding each field once is refuted by
    the register budget (and its fields then fill only half of the 128 lanes' column)."""
    text = _mutate(_mutate(WS_F16, ", each held 2 times", ""), " + 64 * copy", "")
    results, _ = _prove(text)
    v = results[0].verdict("register-budget")
    assert v.status == "refuted"
    assert "each field held 1 time(s); a .ws form of M = 64 keeps D in 2 lane group(s)" \
        in v.message
    assert "sel 0: 2048 bits of fields in 1 column(s) of 128 32-bit words" in v.message


def test_ws_a_copy_in_the_wrong_lane_group_is_refuted_with_the_cell() -> None:
    """M = 32 .ws: copy c of row r belongs in lanes 32c..32c+31; a copy 31 lanes on lands on
    the last row of the copy before it and outside its row's partition."""
    results, errors = _prove(_mutate(WS_I8, "row + 32 * copy", "row + 31 * copy"))
    cover = results[0].verdict("metadata-coverage")
    assert cover.counterexample == {"selector": 0, "a": [0, 0, 1], "b": [31, 0, 0],
                                    "place": {"lane": 31, "column": 0, "bit": 0},
                                    "name": "bit"}
    assert "row 0, chunk 0 (copy 1) and row 31, chunk 0 (copy 0)" in cover.message
    part = results[0].verdict("lane-partition")
    assert part.counterexample == {"selector": 0, "a": [0, 0, 1],
                                   "place": {"lane": 31, "column": 0, "bit": 0},
                                   "name": "lane"}
    assert "its row of D is in lane 32, partition 1" in part.message
    assert {f.kind for f in errors} == {"metadata-coverage", "lane-partition"}


def test_ws_a_field_past_the_word_is_refuted() -> None:
    results, _ = _prove(_mutate(WS_F16, "bit    = 4 * (chunk % 4) + 16 * ((row / 8) % 2)",
                                "bit    = 4 * (chunk % 4) + 17 * ((row / 8) % 2)"))
    v = results[0].verdict("metadata-coverage")
    assert v.counterexample == {"selector": 0, "a": [8, 3, 0],
                                "place": {"lane": 0, "column": 0, "bit": 29}, "name": "bit"}
