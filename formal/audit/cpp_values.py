"""The values of the C++ expressions a CuTe header states its layouts in, as the header reader
(``formal/audit/header.py``) keeps them: ``Shape<_4, Int<N/8>>`` is ``Type((TName("Shape",
(Type((TName("_4"),)), Type((TName("Int", (CppBinOp("/", Type((TName("N"),)), 8),)),)))),),))``
and prints back as ``Shape<_4,Int<N/8>>`` (``show_cpp``).  Frozen values, unevaluated:
``formal.audit.atoms`` gives them numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TName:
    """One component of a qualified type: ``Shape<_4,_8>`` is TName("Shape", (...))."""

    name: str
    args: tuple[Any, ...] | None = None  # None: no template argument list

    def __str__(self) -> str:
        if self.args is None:
            return self.name
        return f"{self.name}<{','.join(show_cpp(a) for a in self.args)}>"


@dataclass(frozen=True)
class Type:
    """A qualified type ``GMMA::ABLayout<64,16>`` as its components."""

    parts: tuple[TName, ...]

    @property
    def last(self) -> TName:
        return self.parts[-1]

    def __str__(self) -> str:
        return "::".join(str(p) for p in self.parts)


@dataclass(frozen=True)
class Opaque:
    """An expression the reader does not evaluate (``decltype(...)``, ``sizeof(...)``)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class CppBinOp:
    """A binary C++ expression ``a op b`` (``+ - * / % < ==`` ...) inside a template argument."""

    op: str
    a: Any
    b: Any


@dataclass(frozen=True)
class CppNeg:
    """A negated C++ expression ``-a``."""

    a: Any


@dataclass(frozen=True)
class CppParen:
    """A parenthesized C++ expression ``(a)``: kept, so the text re-prints as written
    (``cute::constant<int32_t, (1 << 21)>``, TMEM's lane stride in bits)."""

    a: Any


@dataclass(frozen=True)
class CppChoice:
    """``cond ? a : b`` (inside parentheses, as CUTLASS writes ``(M/2 > 64 ? M/2 : M)``)."""

    cond: Any
    a: Any
    b: Any


@dataclass(frozen=True)
class CppBraced:
    """A value-initialized type ``T{}`` (``Int<_DP{}*32>``): an integral constant's value."""

    a: Any


@dataclass(frozen=True)
class Pack:
    a: Any


@dataclass(frozen=True)
class CppBool:
    """A condition ``a || b``, ``a && b`` or ``!a`` (``op``: "||", "&&", "!")."""

    op: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Constant:
    """``NAME = value;`` in a struct's body or its member functions (``constexpr static int K
    = 96;``, ``constexpr int SUBPART_DPs = 32;``, ``using REP = _4;``), the value as the
    constant-expression syntax reads it (an int, a ``Type``, a ``CppChoice`` ...)."""

    name: str
    value: Any
    line: int


def show_cpp(e: Any) -> str:
    if isinstance(e, CppBinOp):
        return f"{show_cpp(e.a)}{e.op}{show_cpp(e.b)}"
    if isinstance(e, CppNeg):
        return f"-{show_cpp(e.a)}"
    if isinstance(e, CppParen):
        return f"({show_cpp(e.a)})"
    if isinstance(e, CppBraced):
        return f"{show_cpp(e.a)}{{}}"
    if isinstance(e, CppChoice):
        return f"{show_cpp(e.cond)}?{show_cpp(e.a)}:{show_cpp(e.b)}"
    if isinstance(e, Pack):
        return f"{show_cpp(e.a)}..."
    return str(e)
