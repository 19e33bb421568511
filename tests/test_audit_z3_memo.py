"""The CuTe audit's question to Z3 (``formal.audit.compare``): the balanced multiplexer it
reads the spec's table through (``table_mux``) is the very term the z3 calls make, and an
answer kept within a process (``_z3``) is Z3's answer to the same question, a changed input a
new question."""

from __future__ import annotations

import random
from typing import Any

import pytest
import z3

from formal.audit import compare as C
from formal.audit.compare import table_mux
from formal.model.cute import CuteLayout


def _python_mux(p: Any, keys: list[int]) -> Any:
    w = p.size()

    def mux(lo: int, n: int) -> Any:
        if n == 1:
            return z3.BitVecVal(keys[lo], w)
        half = n // 2
        return z3.If(z3.ULT(p, lo + half), mux(lo, half), mux(lo + half, n - half))

    return mux(0, len(keys))


@pytest.mark.parametrize("n", (1, 2, 3, 5, 16, 33, 512, 1024))
def test_the_multiplexer_is_the_term_the_z3_calls_make(n: int) -> None:
    rng = random.Random(n)
    w = 14
    p = z3.BitVec("p", w)
    keys = [rng.randrange(1 << w) for _ in range(n)]
    keys[-1] = (1 << w) - 1  # the "no cell" key
    got = table_mux(p, keys)
    assert got.eq(_python_mux(p, keys))
    # and it is keys[p]: every position, and nothing past the keys' values
    s = z3.Solver()
    for i in (0, n // 2, n - 1):
        assert z3.simplify(z3.substitute(got, (p, z3.BitVecVal(i, w)))).as_long() == keys[i]
    s.add(z3.ULT(p, n), got != _python_mux(p, keys))
    assert s.check() == z3.unsat


def test_a_multiplexer_over_no_keys_is_refused() -> None:
    with pytest.raises(ValueError):
        table_mux(z3.BitVec("p", 8), [])


def _tables() -> tuple[CuteLayout, C.SpecTable, C.SpecTable]:
    """CuTe's SM80_16x8_Row and the spec's C/D of m16n8k16 (row = groupID + 8 * (i >= 2),
    col = 2 * threadID_in_group + (i & 1)), and that table with one cell moved."""
    cute = CuteLayout(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    cells = tuple(tuple((t // 4 + 8 * (i >= 2), 2 * (t % 4) + (i & 1)) for i in range(4))
                  for t in range(32))
    spec = C.SpecTable("c", 16, 8, False, cells)
    moved = C.SpecTable("c", 16, 8, False, ((cells[0][1], cells[0][0], *cells[0][2:]),
                                            *cells[1:]))
    return cute, spec, moved


def _counting(mp: pytest.MonkeyPatch) -> list[Any]:
    """``compare._ask`` patched to record each question it is asked (the list returned) and
    answer it as Z3 does."""
    asked: list[Any] = []
    real = C._ask

    def counted(*args: Any) -> str:
        asked.append(args)
        return real(*args)

    mp.setattr(C, "_ask", counted)
    return asked


def test_a_question_asked_again_is_z3s_answer_to_it() -> None:
    cute, spec, moved = _tables()
    lanes = list(range(32))
    C._ASKED.clear()
    assert C._z3(cute, lanes, spec, 4, 10000) == "unsat"
    assert len(C._ASKED) == 1 and set(C._ASKED.values()) == {"unsat"}
    with pytest.MonkeyPatch.context() as mp:
        asked = _counting(mp)
        # the same question (another table object of the same cells): not asked again
        same = C.SpecTable("other id", 16, 8, False, spec.cells)
        assert C._z3(cute, lanes, same, 4, 10000) == "unsat" and not asked
        # each input changed is a new question, answered as Z3 answers it
        assert C._z3(cute, lanes, moved, 4, 10000) == "sat" and len(asked) == 1
        assert C._z3(cute, lanes, spec, 3, 10000) == "unsat" and len(asked) == 2
        assert C._z3(cute, lanes, spec, 4, 5000) == "unsat" and len(asked) == 3
        assert C._z3(CuteLayout(((4, 8), (2, 2)), ((32, 1), (8, 16))), lanes, spec, 4,
                     10000) == "sat" and len(asked) == 4
        assert C._z3(cute, lanes[::-1], spec, 4, 10000) == "sat" and len(asked) == 5
    # and the whole comparison still enumerates: a moved cell is found either way
    got = C._compare(cute, None, moved, 10000)
    assert got.verdict == "differs" and got.method == "z3+enumeration"
    assert got.counterexample == C.Counterexample(0, 0, (0, 0), (0, 1))


def test_an_unknown_is_asked_again() -> None:
    cute, spec, _moved = _tables()
    C._ASKED.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "_ask", lambda *args: "unknown")
        assert C._z3(cute, list(range(32)), spec, 4, 10000) == "unknown"
    assert not C._ASKED
    assert C._z3(cute, list(range(32)), spec, 4, 10000) == "unsat"


def test_an_equal_atoms_unsat_is_kept_between_runs(kept_cache_dir: Any) -> None:
    """Where the enumeration finds the two equal, Z3's *unsat* is kept in the proof cache and
    read back by a later run (this process's memo emptied), Z3 not asked; a differing table
    is never answered from it, and a planted *unsat* for a question whose enumeration
    differs is never read."""
    from formal.prove import cache as P
    cute, spec, moved = _tables()
    lanes = list(range(32))
    C._ASKED.clear()
    assert C._compare(cute, None, spec, 10000).verdict == "equal"
    P.flush()  # as the process's end writes it
    assert len(list((kept_cache_dir / "proofs").glob("batch-*.json"))) == 1
    assert not P._PENDING
    with pytest.MonkeyPatch.context() as mp:
        asked = _counting(mp)
        C._ASKED.clear()
        got = C._compare(cute, None, spec, 10000)
        assert got.verdict == "equal" and got.method == "z3+enumeration" and not asked
        # the moved table: enumerated, found to differ, and asked of Z3 (sat)
        C._ASKED.clear()
        got = C._compare(cute, None, moved, 10000)
        assert got.verdict == "differs" and len(asked) == 1
        # a kept "unsat" planted under the moved table's question is not read: Z3 is asked
        keys = [moved.index(c) for lane in lanes for c in moved.cells[lane][:4]]
        t_modes = C.flat_modes(cute.mode(0).shape, cute.mode(0).stride)
        v_modes = C.flat_modes(cute.mode(1).shape, cute.mode(1).stride)
        hi = max(32 * 4, 16 * 8, 2) + sum(abs(d) * s for s, d in t_modes + v_modes)
        width = max(8, (hi * 4).bit_length() + 1)
        query = [[list(m) for m in t_modes], [list(m) for m in v_modes], 32, 4, width, keys,
                 10000]
        assert P.z3_unsat(query, "cute-tv-equal", lambda: True)  # the plant, kept
        C._ASKED.clear()
        got = C._compare(cute, None, moved, 10000)
        assert got.verdict == "differs" and len(asked) == 2
