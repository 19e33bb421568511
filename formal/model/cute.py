"""CuTe layouts as values: a shape and a stride, nested tuples of ints, and their function.

A CuTe layout maps a coordinate to an index.  An integer coordinate is split into digits by
the shape, first mode fastest (colexicographic); each digit is weighted by its stride:

    ((4,8),(2,2)):((32,1),(16,8))     the C/D layout of CuTe's SM80_16x8_Row
    (thread 5, value 3):  thread 5 -> digits (1, 1) -> 1*32 + 1*1 = 33
                          value 3  -> digits (1, 1) -> 1*16 + 1*8 = 24      index 57

``evaluate(shape, stride, (5, 3)) == 57``; with M = 16 the index is row 57 % 16 = 9, column
57 // 16 = 3.  ``parse_text("((4,8),(2,2)):((32,1),(16,8))")`` reads the printed form with
the grammar's ``cute_text`` start symbol (``grammar/cute.lark``), so that the CuTe export
(``formal.writers.export_cute``) and the CuTe header audit (``formal.audit``) share one syntax
and one evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from ..base.grammar_files import build_parser

IntTuple = Any  # int | tuple[IntTuple, ...]


@dataclass(frozen=True)
class CuteLayout:
    """One CuTe layout ``shape:stride``."""

    shape: IntTuple
    stride: IntTuple

    def __str__(self) -> str:
        return f"{show_tuple(self.shape)}:{show_tuple(self.stride)}"

    def __call__(self, coord: Any) -> int:
        return evaluate(self.shape, self.stride, coord)

    @property
    def size(self) -> int:
        return size(self.shape)

    def mode(self, i: int) -> CuteLayout:
        """The i-th top-level mode (a rank-0 layout is its own mode 0)."""
        if isinstance(self.shape, int):
            if i:
                raise IndexError(i)
            return self
        return CuteLayout(self.shape[i], self.stride[i])

    @property
    def rank(self) -> int:
        return 1 if isinstance(self.shape, int) else len(self.shape)

    def cpp(self) -> str:
        """The same layout as a CuTe C++ type: ``(4,2):(2,1)`` is
        ``Layout<Shape<_4,_2>, Stride<_2,_1>>``."""
        return f"Layout<{_cpp(self.shape, 'Shape')}, {_cpp(self.stride, 'Stride')}>"


def _cpp(t: IntTuple, kind: str) -> str:
    if isinstance(t, int):
        return f"_{t}"
    return f"{kind}<" + ",".join(_cpp(x, kind) for x in t) + ">"


def show_tuple(t: IntTuple) -> str:
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(show_tuple(x) for x in t) + ")"


def size(shape: IntTuple) -> int:
    if isinstance(shape, int):
        return shape
    out = 1
    for s in shape:
        out *= size(s)
    return out


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same tuple profile (CuTe's ``congruent``)."""
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int)
    return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))


def compact_left(shape: IntTuple) -> IntTuple:
    """The column-major stride CuTe gives a ``Layout<Shape>`` written without a stride."""
    cur = 1

    def walk(s: IntTuple) -> IntTuple:
        nonlocal cur
        if isinstance(s, int):
            d = cur if s != 1 else 0
            cur *= s
            return d
        return tuple(walk(x) for x in s)

    return walk(shape)


def evaluate(shape: IntTuple, stride: IntTuple, coord: Any) -> int:
    """CuTe's layout function: an int index is split colexicographically across the modes;
    a tuple coordinate addresses the modes one by one."""
    if isinstance(shape, int):
        if not isinstance(coord, int) or not 0 <= coord < shape:
            raise ValueError(f"coordinate {coord} outside shape {shape}")
        return coord * int(stride)
    if isinstance(coord, tuple):
        return sum(evaluate(s, d, c) for s, d, c in zip(shape, stride, coord, strict=True))
    out = 0
    for s, d in zip(shape, stride, strict=True):
        n = size(s)
        out += evaluate(s, d, coord % n)
        coord //= n
    return out


def flat_modes(shape: IntTuple, stride: IntTuple) -> list[tuple[int, int]]:
    """The (extent, stride) digits of a congruent layout, first digit fastest."""
    if isinstance(shape, int):
        return [(shape, int(stride))]
    out: list[tuple[int, int]] = []
    for s, d in zip(shape, stride, strict=True):
        out.extend(flat_modes(s, d))
    return out


# ---- the printed form ---------------------------------------------------------------------


def _as_int(text: str) -> int:
    return int(text, 0)


class _PrintedLayout(Transformer):  # type: ignore[type-arg]
    def int(self, c: list[Token]) -> Any:
        return _as_int(str(c[0]))

    def neg_int(self, c: list[Token]) -> Any:
        v = _as_int(str(c[1]))
        return -v if str(c[0]) == "-" else v

    def tuple(self, c: list[Any]) -> Any:
        return (*c,)

    def cute_text(self, c: list[Any]) -> CuteLayout:
        return CuteLayout(c[0], c[1])


@cache
def _text_parser() -> Lark:
    return build_parser("cute", "cute_text", positions=False)


def parse_text(text: str) -> CuteLayout:
    """``"((4,8),(2,2)):((32,1),(16,8))"`` -> CuteLayout; ValueError when it is not one."""
    try:
        tree = _text_parser().parse(text)
    except LarkError as e:
        raise ValueError(f"not a CuTe layout: {text!r}") from e
    out = _PrintedLayout().transform(tree)
    assert isinstance(out, CuteLayout)
    if not congruent(out.shape, out.stride):
        raise ValueError(f"shape and stride of {text!r} are not congruent")
    return out
