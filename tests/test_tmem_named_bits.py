"""formal.audit.tmem.named_bits (ValID's bits against the spec's TMEM cells, as arrays) gives
exactly what named_bits_plain (one logical bit at a time) gives: the verdict, the
counterexample and the message, on the equal case and each kind of difference."""

from __future__ import annotations

import numpy as np
import pytest

from formal.audit.tmem import LANE_BITS, named_bits, named_bits_plain


def _addr(cells: list[tuple[int, int]], width: int) -> np.ndarray:
    return np.array([(r << LANE_BITS) + c * 32 + b for r, c in cells for b in range(width)],
                    dtype=np.int64)


# the spec's cells of 4 threads x 2 elements: lane t, columns 2t and 2t + 1; thread 3's
# second element has no cell
WANT = np.array([[[t, 2 * t], [t, 2 * t + 1]] for t in range(4)], dtype=np.int64)
WANT[3, 1] = -1
CELLS = [(t, 2 * t + e) for t in range(4) for e in range(2) if (t, e) != (3, 1)]


def _cases(width: int) -> dict[str, np.ndarray]:
    good = _addr(CELLS, width)
    dup = good.copy()
    dup[40] = dup[7]  # logical bit 40 names what bit 7 names
    outside = good.copy()
    outside[9] = (9 << LANE_BITS) + 3 * 32  # lane 9: no cell of the spec
    high_bit = good.copy()
    high_bit[width + 2] = good[width] + width  # bit `width` of a cell: past the element
    short = good[:-3]  # the last cell's top bits named by no logical bit
    gap = np.delete(good, width * 2 + 5)  # one bit in the middle missing
    swapped = good.copy()
    swapped[[3, 70]] = swapped[[70, 3]]  # another order: still each bit once
    return {"equal": good, "duplicate": dup, "outside": outside, "high bit": high_bit,
            "short": short, "gap": gap, "swapped": swapped, "empty": good[:0]}


@pytest.mark.parametrize("width", (32, 16))
@pytest.mark.parametrize("case", ("equal", "duplicate", "outside", "high bit", "short", "gap",
                                  "swapped", "empty"))
def test_the_arrays_find_what_the_plain_walk_finds(width: int, case: str) -> None:
    addr = _cases(width)[case]
    got = named_bits(addr, WANT, width)
    assert got == named_bits_plain(addr, WANT, width)
    assert got[0] == ("equal" if case in ("equal", "swapped") else "differs")


def test_the_messages_name_the_first_difference() -> None:
    cases = _cases(32)
    assert named_bits(cases["equal"], WANT, 32) == (
        "equal", None, "TMEM: one taddr for the warp; ValID names bits 0..31 of each of the "
        "4 lanes x 7 columns once")
    verdict, ce, msg = named_bits(cases["duplicate"], WANT, 32)
    assert msg == "TMEM: logical bit 40 is bit 7 of (lane 0, col 0), which another logical " \
        "bit names too"
    assert ce is not None and (ce.thread, ce.value, ce.cute, ce.spec) == (0, 40, (0, 0), None)
    assert named_bits(cases["outside"], WANT, 32)[2] == (
        "TMEM: logical bit 9 is bit 0 of (lane 9, col 3), outside the spec's cells and bits")
    assert named_bits(cases["short"], WANT, 32)[2] == (
        "TMEM: bit 29 of the spec's (lane 3, col 6) is named by no logical bit")
    assert named_bits(cases["gap"], WANT, 32)[2] == (
        "TMEM: bit 5 of the spec's (lane 1, col 2) is named by no logical bit")


def test_a_column_past_the_address_takes_the_plain_walk() -> None:
    want = np.array([[[0, 1 << 16]]], dtype=np.int64)
    addr = np.arange(32, dtype=np.int64) + (1 << 16) * 32  # column 65536: lane 1, column 0
    got = named_bits(addr, want, 32)
    assert got == named_bits_plain(addr, want, 32) and got[0] == "differs"
