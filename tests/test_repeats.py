"""The first place a placement table repeats, found by sorting, is the one a loop with a
``seen`` dictionary finds: the docstring's example, random tables against that loop, and a
table with a value past int64."""

from __future__ import annotations

import numpy as np

from formal.prove.repeats import distinct, first_repeat, placement_array


def _loop(keys: list[int]) -> tuple[int, int] | None:
    seen: dict[int, int] = {}
    for i, k in enumerate(keys):
        if k in seen:
            return i, seen[k]
        seen[k] = i
    return None


def test_the_docstring_example() -> None:
    assert first_repeat([0, 1, 4, 1]) == (3, 1)
    assert first_repeat([0, 1, 4, 5]) is None and first_repeat([]) is None
    assert first_repeat([7, 7, 7]) == (1, 0)


def test_random_tables_agree_with_the_loop() -> None:
    rng = np.random.default_rng(28)
    found = 0
    for n in (1, 2, 5, 40, 300):
        for top in (3, 50, 5000):
            keys = rng.integers(-top, top, size=n).tolist()
            assert first_repeat(keys) == _loop(keys), (n, top)
            found += _loop(keys) is not None
    assert found >= 5  # repeats among them (6 with this seed), and tables without


def test_a_value_past_int64_keeps_python_integers() -> None:
    a = placement_array([(0, 1), (1, 1 << 70)])
    assert a.dtype == object and a[1, 1] == 1 << 70 and a[1, 1] // 3 == (1 << 70) // 3
    assert placement_array([(0, 1), (2, -3)]).dtype == np.int64


def test_distinct_is_sorted_set_of_the_values() -> None:
    """``distinct`` (one sort, no numpy.ma) gives np.unique's values: sorted, each once."""
    assert distinct(np.array([5, 1, 5, 3, 1], dtype=np.int64)).tolist() == [1, 3, 5]
    assert distinct(np.array([[2, 2], [0, 9]])).tolist() == [0, 2, 9]
    assert distinct(np.array([], dtype=np.int64)).tolist() == []
    assert distinct(np.array([4])).tolist() == [4]
    rng = np.random.default_rng(7)
    for n in (2, 17, 1000):
        a = rng.integers(-50, 50, size=n)
        assert distinct(a).tolist() == sorted(set(a.tolist()))
