"""Exact number formats: every PTX element type encoded and decoded bit for bit (numpy only).

``encode("e4m3", [1.5])`` is ``0x3C`` (sign 0, exponent 0111, mantissa 100) and ``decode`` gives
1.5 back; integers are two's complement at their width (``encode("s4", [-1])`` is ``0xF``).
``encode`` refuses a value the format cannot hold exactly (``NotExact``), so a test datum can
never be rounded behind our back.  ``.tf32`` lives in the upper 19 bits of a ``.b32`` and the
4- and 6-bit floats of ``kind::f8f6f4`` in 8-bit containers (``container_shift``).
``reference`` is the exact product D = A x B + C in these codes (the test data are chosen so
that it is exact); ``reference_any`` rounds where a wrong layout made it inexact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.variants import Variant

U64 = np.uint64

# ---- number formats ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatFormat:
    """Sign, ``exp`` exponent bits, ``man`` mantissa bits; ``special`` is how the top
    exponent is used: ``ieee`` (inf / NaN), ``fn`` (only all-ones mantissa is NaN, as
    e4m3) or ``none`` (every code is finite, as the 6- and 4-bit formats)."""

    exp: int
    man: int
    bias: int
    special: str = "ieee"

    @property
    def width(self) -> int:
        return 1 + self.exp + self.man

    @property
    def max_exp_field(self) -> int:
        top = (1 << self.exp) - 1
        return top - 1 if self.special == "ieee" else top


FLOATS: dict[str, FloatFormat] = {
    "f16": FloatFormat(5, 10, 15),
    "bf16": FloatFormat(8, 7, 127),
    "tf32": FloatFormat(8, 10, 127),
    "f32": FloatFormat(8, 23, 127),
    "f64": FloatFormat(11, 52, 1023),
    "e4m3": FloatFormat(4, 3, 7, "fn"),
    "e5m2": FloatFormat(5, 2, 15),
    "e3m2": FloatFormat(3, 2, 3, "none"),
    "e2m3": FloatFormat(2, 3, 1, "none"),
    "e2m1": FloatFormat(2, 1, 1, "none"),
}

INTEGERS: dict[str, tuple[int, bool]] = {  # width, signed
    "b1": (1, False), "u4": (4, False), "s4": (4, True), "u8": (8, False), "s8": (8, True),
    "s32": (32, True),
}


class NotExact(ValueError):
    """A value the format cannot hold exactly."""


def code_width(t: str) -> int:
    return FLOATS[t].width if t in FLOATS else INTEGERS[t][0]


def encode(t: str, values: Any) -> np.ndarray:
    """Exact codes (uint64) of ``values`` in type ``t``; raises ``NotExact`` otherwise."""
    x = np.asarray(values)
    if t in INTEGERS:
        width, signed = INTEGERS[t]
        xi = np.asarray(x, dtype=np.int64)
        if not np.array_equal(xi, x):
            raise NotExact(f"{t}: not integers")
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        if xi.size and (xi.min() < lo or xi.max() > hi):
            raise NotExact(f"{t}: out of range [{lo}, {hi}]")
        return (xi & ((1 << width) - 1)).astype(U64)
    f = FLOATS[t]
    xf = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(xf)):
        raise NotExact(f"{t}: not finite")
    sign = np.signbit(xf).astype(U64)
    a = np.abs(xf)
    frac, exp = np.frexp(a)  # a = frac * 2**exp, frac in [0.5, 1)
    efield = exp.astype(np.int64) - 1 + f.bias
    normal = (a > 0) & (efield >= 1)
    m_norm = np.ldexp(2 * frac - 1, f.man)
    with np.errstate(over="ignore"):  # only read where the value is subnormal
        m_sub = np.ldexp(a, f.man + f.bias - 1)
    m = np.where(normal, m_norm, m_sub)
    e = np.where(normal, efield, 0)
    bad = (m != np.floor(m)) | (m >= (1 << f.man)) | (e > f.max_exp_field)
    if f.special == "fn":
        bad |= (e == f.max_exp_field) & (m == (1 << f.man) - 1)
    if np.any(bad):
        first = xf[bad].ravel()[0]
        raise NotExact(f"{t} cannot hold {first!r} exactly")
    return (sign << U64(f.exp + f.man)) | (e.astype(U64) << U64(f.man)) | m.astype(U64)


def decode(t: str, codes: Any) -> np.ndarray:
    """Values of ``codes`` in type ``t``: int64 for integer types, float64 for floats."""
    c = np.asarray(codes, dtype=U64)
    if t in INTEGERS:
        width, signed = INTEGERS[t]
        v = (c & U64((1 << width) - 1)).astype(np.int64)
        if signed:
            v = v - ((v >> (width - 1)) << width)
        return v
    f = FLOATS[t]
    m = (c & U64((1 << f.man) - 1)).astype(np.float64)
    e = ((c >> U64(f.man)) & U64((1 << f.exp) - 1)).astype(np.int64)
    s = ((c >> U64(f.exp + f.man)) & U64(1)).astype(bool)
    val = np.where(e == 0, np.ldexp(m, 1 - f.bias - f.man),
                   np.ldexp(m + (1 << f.man), e - f.bias - f.man))
    top = (1 << f.exp) - 1
    if f.special == "ieee":
        val = np.where((e == top) & (m == 0), np.inf, val)
        val = np.where((e == top) & (m != 0), np.nan, val)
    elif f.special == "fn":
        val = np.where((e == top) & (m == (1 << f.man) - 1), np.nan, val)
    return np.where(s, -val, val)


def container_shift(t: str, bits: int) -> int:
    """Where a ``t`` code sits in its ``bits``-wide register slot (tf32: the top 19 bits)."""
    if t == "tf32":
        return 13
    if bits == 8 and t == "e2m1":
        return 2
    return 0


def representable(t: str, candidates: Iterable[float]) -> list[float]:
    out = []
    for v in candidates:
        try:
            encode(t, [v])
        except NotExact:
            continue
        out.append(v)
    return out


# ---- the reference product: exact D = A x B + C --------------------------------------------------


def reference(v: Variant, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Exact D = A x B + C as codes of ``v.d``: a, b, c are (T, ., .) codes."""
    av, bv, cv = decode(v.a, a), decode(v.b, b), decode(v.c, c)
    if v.a == "b1":
        ai, bi = av.astype(np.int64), bv.astype(np.int64)
        both = _exact_int_matmul(ai, bi)
        if v.op.startswith(".xor"):
            d = cv + ai.sum(axis=2)[:, :, None] + bi.sum(axis=1)[:, None, :] - 2 * both
        else:
            d = cv + both
        return encode(v.d, d)
    if v.d in INTEGERS:
        return encode(v.d, _exact_int_matmul(av, bv) + cv.astype(np.int64))
    d = np.matmul(av.astype(np.float64), bv.astype(np.float64)) + cv
    return encode(v.d, d)


def _exact_int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer matmul through float64 (BLAS) when every partial sum is below 2**53."""
    bound = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * a.shape[-1]
    if bound < 2.0 ** 53:
        return np.rint(np.matmul(a.astype(np.float64), b.astype(np.float64))).astype(np.int64)
    return np.asarray(a, dtype=np.int64) @ np.asarray(b, dtype=np.int64)


def reference_any(v: Variant, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``reference`` that rounds instead of refusing (a device computes whatever it is
    given; a wrong layout can make the product inexact or overflow)."""
    try:
        return reference(v, a, b, c)
    except NotExact:
        av, bv, cv = decode(v.a, a), decode(v.b, b), decode(v.c, c)
        d = np.matmul(av.astype(np.float64), bv.astype(np.float64)) + cv
        if v.d in INTEGERS:
            return (np.asarray(d, dtype=np.int64) & 0xFFFFFFFF).astype(U64)
        f = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[v.d]
        with np.errstate(over="ignore"):  # past the type's range: inf, as a device rounds
            raw = np.asarray(d).astype(f)
        return raw.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[raw.itemsize]).astype(U64)
