"""The report's JSON writer writes what ``json.dumps(value, indent=2, ensure_ascii=False)``
writes, byte for byte."""

from __future__ import annotations

import json
import random
from typing import Any

from formal.writers.jsontext import dumps_indented


def _same(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_the_small_cases_by_hand() -> None:
    assert dumps_indented({"a": [1, True], "b": {}}) == \
        '{\n  "a": [\n    1,\n    true\n  ],\n  "b": {}\n}'
    for v in ({}, [], (), "", None, False, 0, -7, 2**70, [[]], {"k": ()}, [None, {"x": []}]):
        _same(v)


def test_strings_are_escaped_as_the_standard_library_escapes_them() -> None:
    _same({"q\"uote": "back\\slash\nnew\tline \u2713 \x00 \u00e9 \ud83d\ude00 </script>"})


def test_other_values_are_left_to_json_dumps() -> None:
    class Flag(int):
        pass

    for v in ({"f": 1.5}, {"nan": float("nan")}, {1: "int key"}, {"s": Flag(3)},
              {"deep": [{"x": 0.1}]}):
        _same(v)


def test_random_reports() -> None:
    rng = random.Random(14)

    def value(depth: int) -> Any:
        k = rng.randrange(7 if depth < 4 else 4)
        if k == 0:
            return rng.choice(["", "a", "lane 0 a4", "\u2717", "x\"y"])
        if k == 1:
            return rng.randrange(-10**6, 10**6)
        if k == 2:
            return rng.choice([None, True, False])
        if k == 3:
            return rng.choice([[], {}])
        if k == 4:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        if k == 5:
            return tuple(value(depth + 1) for _ in range(rng.randrange(3)))
        return {f"k{j}": value(depth + 1) for j in range(rng.randrange(4))}

    for _ in range(300):
        _same(value(0))
