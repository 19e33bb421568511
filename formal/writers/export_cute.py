"""CuTe export: a layout's (thread, value) map as a CuTe ``shape:stride`` layout.

A CuTe layout is a function of integer coordinates given by a shape and a stride: the index
is split into mixed-radix digits by the shape (first mode fastest) and the digits are
weighted by the strides.  CuTe's MMA atoms state each operand as a (thread, value) ->
index layout, the index being the tile coordinate in column-major order: for the C/D tile
of m16n8k16 (M = 16, N = 8) the index of (row m, col n) is ``m + 16*n``.

Worked example, the spec's C/D map of m16n8k16 (``row = groupID`` [+8 for c2, c3],
``col = 2*threadID_in_group + (i & 1)``).  Split the 32 lanes into binary digits and read
each digit's stride off the map:

    lane 1  -> (0, 2) -> 32        element 1 -> (0, 1) -> 16
    lane 2  -> (0, 4) -> 64        element 2 -> (8, 0) ->  8
    lane 4  -> (1, 0) ->  1
    lane 8  -> (2, 0) ->  2        lanes: (2,2,2,2,2):(32,64,1,2,4)
    lane 16 -> (4, 0) ->  4        values: (2,2):(16,8)

Merging neighbours whose strides continue each other (64 = 2*32, 2 = 2*1, 4 = 2*2) gives
``((4,8),(2,2)):((32,1),(16,8))`` -- CuTe's own ``SM80_16x8_Row``.  The expression is then
*evaluated back* at every (thread, value) and compared with the layout's cells; only a
verified expression is emitted.  When no digit order makes the map affine the answer is
"not expressible", with the first (thread, value) whose cell differs from the sum of the
digit strides as the witness.

Coordinate convention (as ``cute/atom/mma_traits_sm80.hpp``): A is (M,K) with index
``row + M*col``; B is (N,K) with index ``col + N*row`` (CuTe stores B transposed: the PTX
B tile is K x N); C/D is (M,N) with index ``row + M*col``.  Sparse A uses the compressed
M x K/2 tile (``formal.model.tv``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..model import cute as _cute
from ..model.cute import CuteLayout
from ..model.layout import Layout
from ..model.tv import TV, cute_dims, cute_swapped, tv_view

Shape = Any  # int | tuple[Shape, ...]


def _tv_layout(thread: tuple[tuple[int, int], ...],
               value: tuple[tuple[int, int], ...]) -> CuteLayout:
    """The (thread, value) layout of two lists of (size, stride) digits: a mode of one digit
    is an int, ``((4,32),(2,1))`` and ``((2,16),)`` give ``((4,2),2):((32,1),16)``."""
    def part(m: tuple[tuple[int, int], ...], k: int) -> Any:
        return m[0][k] if len(m) == 1 else tuple(x[k] for x in m)

    return CuteLayout((part(thread, 0), part(value, 0)), (part(thread, 1), part(value, 1)))


@dataclass(frozen=True)
class CuteResult:
    layout_id: str
    cute: CuteLayout | None
    reason: str = ""
    dims: tuple[tuple[str, int], tuple[str, int]] = (("M", 0), ("N", 0))
    threads: int = 32
    values: int = 0
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.cute is not None

    def signature(self) -> str:
        (a, ea), (b, eb) = self.dims
        return f"(T{self.threads},V{self.values}) -> ({a}{ea},{b}{eb}), index " \
               f"{a.lower()} + {ea}*{b.lower()}"


# ---- parsing and evaluating a CuTe expression ----------------------------------------------
# One reader and one evaluator for CuTe's shape:stride (formal.model.cute), shared with the
# CuTe header audit:
# the printed form is read by grammar/cute.lark's cute_text start symbol.


def parse(text: str) -> tuple[Shape, Shape]:
    """``"((4,8),(2,2)):((32,1),(16,8))"`` -> (shape, stride) as nested tuples of ints."""
    got = _cute.parse_text(text)
    return got.shape, got.stride


size = _cute.size
evaluate = _cute.evaluate


# ---- factoring ------------------------------------------------------------------------------


def _primes(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def _orders(n: int, limit: int = 720) -> list[tuple[int, ...]]:
    """Distinct orders of n's prime factors (the digit systems of a mixed radix)."""
    ps = _primes(n)
    seen: list[tuple[int, ...]] = []
    for perm in itertools.permutations(ps):
        if perm not in seen:
            seen.append(perm)
        if len(seen) >= limit:
            break
    return seen or [()]


def _digit_points(radix: tuple[int, ...]) -> list[int]:
    """The index of each digit's unit vector: 1, r0, r0*r1, ..."""
    out, w = [], 1
    for r in radix:
        out.append(w)
        w *= r
    return out


def _digits(idx: int, radix: tuple[int, ...]) -> list[int]:
    out = []
    for r in radix:
        out.append(idx % r)
        idx //= r
    return out


def _coalesce(modes: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """CuTe's coalesce: drop size-1 modes, merge (s0:d0, s1:d1) when d1 == s0*d0."""
    out: list[tuple[int, int]] = []
    for s, d in modes:
        if s == 1:
            continue
        if out and d == out[-1][0] * out[-1][1]:
            out[-1] = (out[-1][0] * s, out[-1][1])
        else:
            out.append((s, d))
    return tuple(out) or ((1, 0),)


def index_table(lay: Layout, tv: TV) -> list[list[int]]:
    """The CuTe index of every (thread, value): ``a + A*b`` in CuTe's (first, second) order."""
    rows, cols = tv.tile
    if cute_swapped(lay):
        return [[c + cols * r for r, c in lane] for lane in tv.cells]
    return [[r + rows * c for r, c in lane] for lane in tv.cells]


def to_cute(lay: Layout) -> CuteResult:
    """The verified CuTe layout of ``lay``, or the reason there is none."""
    tv = tv_view(lay)
    first, second = cute_dims(lay)
    if isinstance(tv, str):
        return CuteResult(lay.id, None, tv, ((first, 0), (second, 0)))
    rows, cols = tv.tile
    ext = (cols, rows) if cute_swapped(lay) else (rows, cols)
    dims = ((first, ext[0]), (second, ext[1]))
    base = CuteResult(lay.id, None, "", dims, tv.threads, tv.values, tv.note)
    idx = index_table(lay, tv)
    if idx[0][0] != 0:
        r, c = tv(0, 0)
        return _replace(base, reason=f"lane 0, element {tv.letter}0 maps to (row {r}, col "
                                     f"{c}), not the origin; a CuTe layout maps (0, 0) to 0")
    witness = ""
    for t_radix in _orders(tv.threads):
        for v_radix in _orders(tv.values):
            t_strides = [idx[p][0] for p in _digit_points(t_radix)]
            v_strides = [idx[0][p] for p in _digit_points(v_radix)]
            bad = _first_mismatch(idx, t_radix, t_strides, v_radix, v_strides)
            if bad is None:
                cute = _tv_layout(_coalesce(list(zip(t_radix, t_strides, strict=True))),
                                  _coalesce(list(zip(v_radix, v_strides, strict=True))))
                problem = verify_cute(cute, lay, tv)
                if problem:  # pragma: no cover - the search only returns what it checked
                    raise AssertionError(f"unverified CuTe layout {cute}: {problem}")
                return _replace(base, cute=cute)
            if not witness:
                witness = _describe(tv, idx, bad, t_radix, t_strides, v_radix, v_strides)
    return _replace(base, reason=f"the map is not affine in any mixed radix of the lanes "
                                 f"and elements: {witness}")


def _replace(r: CuteResult, **kw: Any) -> CuteResult:
    from dataclasses import replace
    return replace(r, **kw)


def _first_mismatch(idx: list[list[int]], t_radix: tuple[int, ...], t_strides: list[int],
                    v_radix: tuple[int, ...], v_strides: list[int]) -> tuple[int, int] | None:
    for t, lane in enumerate(idx):
        base = sum(d * s for d, s in zip(_digits(t, t_radix), t_strides, strict=True))
        for v, got in enumerate(lane):
            want = base + sum(d * s for d, s in zip(_digits(v, v_radix), v_strides,
                                                     strict=True))
            if got != want:
                return t, v
    return None


def _describe(tv: TV, idx: list[list[int]], bad: tuple[int, int], t_radix: tuple[int, ...],
              t_strides: list[int], v_radix: tuple[int, ...], v_strides: list[int]) -> str:
    t, v = bad
    parts = []
    for d, w, s in zip(_digits(t, t_radix), _digit_points(t_radix), t_strides, strict=True):
        if d:
            parts.append(f"{d} x lane {w} (stride {s})")
    for d, w, s in zip(_digits(v, v_radix), _digit_points(v_radix), v_strides, strict=True):
        if d:
            parts.append(f"{d} x element {tv.letter}{w} (stride {s})")
    want = sum(d * s for d, s in zip(_digits(t, t_radix), t_strides, strict=True)) + \
        sum(d * s for d, s in zip(_digits(v, v_radix), v_strides, strict=True))
    r, c = tv(t, v)
    return (f"lane {t}, element {tv.letter}{v} maps to (row {r}, col {c}) = index "
            f"{idx[t][v]}, but the strides of " + " + ".join(parts) + f" sum to {want}")


def verify_cute(cute: CuteLayout | str, lay: Layout, tv: TV | None = None) -> str:
    """'' when the CuTe layout (or its printed text) reproduces every cell, else the first
    difference."""
    view = tv if tv is not None else tv_view(lay)
    if isinstance(view, str):
        return view
    shape, stride = parse(str(cute))
    if size(shape[0]) != view.threads or size(shape[1]) != view.values:
        return f"shape {shape} is not (T{view.threads}, V{view.values})"
    rows, cols = view.tile
    for t in range(view.threads):
        for v in range(view.values):
            k = evaluate(shape, stride, (t, v))
            if cute_swapped(lay):
                got = (k // cols, k % cols)
            else:
                got = (k % rows, k // rows)
            if got != view(t, v):
                return f"(thread {t}, value {v}) -> index {k} = {got}, the layout has {view(t, v)}"
    return ""


def cute_text(results: list[CuteResult]) -> str:
    out = ["# ptxlayout CuTe export: (thread, value) -> index, as in cute/atom/mma_traits_sm80.hpp",
           "# A is (M,K) with index row + M*col; B is (N,K) with index col + N*row; C/D is (M,N)",
           "# with index row + M*col; sparse A is the compressed M x K/2 tile.  Every layout below",
           "# was evaluated back at every (thread, value) and matches the formulas' cells.",
           ""]
    for r in results:
        out.append(r.layout_id)
        if r.cute is not None:
            out.append(f"  {r.signature()}")
            out.append(f"  {r.cute}")
            out.append(f"  {r.cute.cpp()}")
            if r.note:
                out.append(f"  note: {r.note}")
        else:
            out.append(f"  not expressible, because {r.reason}")
        out.append("")
    return "\n".join(out)
