"""A process memo's one rule: bounded by clearing.  A long-lived process (a language server, a
test session) meets many documents; a memo that reached its limit starts again empty rather
than grow without end (the answers are all recomputable)."""

from __future__ import annotations

from typing import Any, TypeVar

_V = TypeVar("_V")


def keep_bounded(memo: dict[Any, Any], key: Any, value: _V, limit: int) -> _V:
    """``memo[key] = value``, ``memo`` emptied first where it holds ``limit`` entries; the
    value."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
