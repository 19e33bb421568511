"""``base.memo.keep_bounded``: every process memo's bound (emptied at its limit, then the new
entry), the value handed back."""

from __future__ import annotations

from formal.base.memo import keep_bounded


def test_a_memo_at_its_limit_starts_again_with_the_new_entry() -> None:
    memo: dict[str, int] = {}
    assert keep_bounded(memo, "a", 1, 2) == 1
    assert keep_bounded(memo, "b", 2, 2) == 2
    assert memo == {"a": 1, "b": 2}
    assert keep_bounded(memo, "c", 3, 2) == 3
    assert memo == {"c": 3}


def test_a_key_held_is_replaced_below_the_limit() -> None:
    memo = {"a": 1}
    keep_bounded(memo, "a", 5, 3)
    assert memo == {"a": 5}
