"""CuTe's SM100 UTCCP atoms (``tcgen05.cp``, shared memory -> tensor memory) against the
catalog's tcgen05.cp forms (``formal/catalog/tensor-copy/tcgen05.md``).

A UTCCP atom of ``cute/atom/copy_traits_sm100.hpp`` states ``ValID`` -- a destination value's
logical bit -> its TMEM bit address, lane * 2^21 + column * 32 + bit (``formal.audit.tmem``)
-- and, over (CTA, value), ``SrcLayout`` and ``DstLayout``.  The value's *source* bit is read
from ``SrcLayout``'s value mode as the header's comment numbers it: the first mode the row of
the shared-memory matrix (core_matrix_strided), the second the bit of the row
(core_matrix_leading), a mode of stride 0 the multicast copy (broadcast), any other a further
block of rows (repeat).  Where that mode is one flat run (``(1,32768):(0,1)``) the same
reading applies to ``ValID``'s own modes at the value's logical bit.

A worked example, ``SM100_UTCCP_4x32dp128bit_1cta`` (``tcgen05.cp.32x128b.warpx4``):
``SrcLayout``'s values are ``(32,128,4):(1,32,0)``, so value v = r + 32 b + 4096 k is row r,
bit b, copy k; ``DstLayout`` is the identity and ``ValID = (32,128,4):(DP,1,32 DP)`` puts it
at lane r + 32 k, column b / 32, bit b % 32.  The catalog's ``lane = row + 32 * copy``,
``column = piece`` puts row r's bit b on the same four (lane, column, bit): ``equal``.  For
``.4x256b`` CuTe's values ``(4,256):(32,128)`` reach lanes 0, 32, 64, 96 (one a
sub-partition), the catalog's lanes 0-3: ``differs`` at row 1, bit 0 -- (lane 32, col 0)
against (lane 1, col 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model.cute import CuteLayout, flat_modes
from .compare import Counterexample
from .tmem import split_address
from .views import axis_index

Place = tuple[int, int, int]  # (lane, column, bit)


def _digits(n: int, modes: Sequence[tuple[int, int]]) -> list[np.ndarray]:
    """Each value's coordinate in ``modes`` (the first fastest, as CuTe's colexicographic)."""
    x = np.arange(n, dtype=np.int64)
    out, place = [], 1
    for extent, _stride in modes:
        out.append((x // place) % extent)
        place *= extent
    return out


def source_bits(src_v: CuteLayout, logical: np.ndarray, val_id: CuteLayout) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, bit, copy) of each value: from ``SrcLayout``'s value modes, or -- one flat run --
    from ``ValID``'s modes at the value's logical bit (``logical``)."""
    modes = flat_modes(src_v.shape, src_v.stride)
    own = len(modes) >= 2
    if own:
        digits = _digits(len(logical), modes)
    else:
        modes = flat_modes(val_id.shape, val_id.stride)
        digits = [(logical // p) % e for p, (e, _s) in
                  zip(np.cumprod([1] + [e for e, _s in modes[:-1]]), modes)]
    row, bit = digits[0].copy(), digits[1]
    copy = np.zeros_like(row)
    rows = modes[0][0]
    for (extent, stride), d in zip(modes[2:], digits[2:]):
        if own and stride != 0:  # a further block of rows
            row = row + rows * d
            rows *= extent
        else:  # the broadcast (ValID's modes past the first two are its copies)
            copy = copy * extent + d
    return row, bit, copy


def cute_places(src: CuteLayout, dst: CuteLayout, val_id: CuteLayout) \
        -> dict[tuple[int, int], tuple[list[Place], int]]:
    """(source row, bit) -> the TMEM (lane, column, bit) CuTe copies it to, and its first
    value's index."""
    src_v, dst_v = src.mode(1), dst.mode(1)
    logical = axis_index(dst_v)
    addr_of = axis_index(val_id)
    ok = (logical >= 0) & (logical < len(addr_of))
    addr = np.where(ok, addr_of[np.clip(logical, 0, len(addr_of) - 1)], -1)
    lane, col, bit = split_address(np.maximum(addr, 0))
    row, sbit, _copy = source_bits(src_v, logical, val_id)
    out: dict[tuple[int, int], tuple[list[Place], int]] = {}
    for v in range(len(logical)):
        key = (int(row[v]), int(sbit[v]))
        place = (int(lane[v]), int(col[v]), int(bit[v])) if ok[v] else (-1, -1, -1)
        got = out.setdefault(key, ([], v))
        got[0].append(place)
    return out


def spec_places(spec: Any) -> dict[tuple[int, int], list[Place]]:
    """(source row, bit) -> the catalog's (lane, column, bit) for every copy."""
    out: dict[tuple[int, int], list[Place]] = {}
    for row, piece, _c, lane, col in spec.landings:
        for b in range(spec.width):
            out.setdefault((row, piece * spec.width + b), []).append((lane, col, b))
    return out


def _lanes(ps: Sequence[Place]) -> str:
    cols = sorted({p[1] for p in ps})
    return (f"lane{'s' if len(ps) > 1 else ''} {', '.join(str(p[0]) for p in sorted(ps))}, "
            f"column {', '.join(map(str, cols))}") if ps else "nowhere"


def compare_copy(src: CuteLayout, dst: CuteLayout, val_id: CuteLayout | None, spec: Any) \
        -> dict[str, tuple[str, Counterexample | None, str]]:
    """Verdicts ``{"src": ..., "dst": ...}`` (verdict, counterexample, message) of one UTCCP
    atom against ``spec``, the catalog's ``CopyLayout`` of its form: ``src``, each source bit
    on the catalog's places; ``dst``, the values name each bit of those places once."""
    if val_id is None:
        why = "the atom's ValID (logical bit -> TMEM address) could not be read"
        return {"src": ("unreadable", None, why), "dst": ("unreadable", None, why)}
    for lay in (src, dst):
        if lay.rank != 2:
            why = f"{lay} is not a (CTA, value) layout (rank 2)"
            return {"src": ("unreadable", None, why), "dst": ("unreadable", None, why)}
        moved = np.nonzero(axis_index(lay.mode(0)) != 0)[0]
        if len(moved):
            why = f"CTA {int(moved[0])} names other bits than CTA 0 (one copy, the same in each)"
            return {"src": ("differs", Counterexample(int(moved[0]), 0, None, None), why),
                    "dst": ("differs", Counterexample(int(moved[0]), 0, None, None), why)}
    got = cute_places(src, dst, val_id)
    want = spec_places(spec)
    out: dict[str, tuple[str, Counterexample | None, str]] = {}
    diff = next((k for k in sorted(set(got) | set(want))
                 if sorted(got.get(k, ([], 0))[0]) != sorted(want.get(k, []))), None)
    if diff is None:
        copies = len(spec.copies)
        out["src"] = ("equal", None, f"each of the {spec.rows} rows x {spec.pieces * spec.width}"
                      f" source bits lands on the catalog's {copies} place"
                      f"{'s' if copies > 1 else ''} (lane, column, bit) ({spec.id})")
    else:
        mine, v = got.get(diff, ([], 0))
        theirs = want.get(diff, [])
        c = next(((p[0], p[1]) for p in sorted(mine) if p not in theirs), None)
        s = next(((p[0], p[1]) for p in sorted(theirs) if p not in mine), None)
        out["src"] = ("differs", Counterexample(0, v, c, s),
                      f"source row {diff[0]}, bit {diff[1]} (piece {diff[1] // spec.width}): "
                      f"CuTe copies it to {_lanes(mine)}; the catalog ({spec.id}) to "
                      f"{_lanes(theirs)}")
    places = [p for ps, _v in got.values() for p in ps]
    region = {p for ps in want.values() for p in ps}
    seen: set[Place] = set()
    bad = None
    for _k, (ps, v) in sorted(got.items()):
        for p in ps:
            if p in seen or p not in region:
                bad = (v, p, "another value names it too" if p in seen else
                       "outside the catalog's lanes and columns")
                break
            seen.add(p)
        if bad:
            break
    if bad is None and len(places) == len(region):
        out["dst"] = ("equal", None, f"the {len(places)} values name each bit of the catalog's "
                      f"{len({(p[0], p[1]) for p in region})} TMEM words once")
    elif bad is None:
        miss = sorted(region - seen)[0]
        out["dst"] = ("differs", Counterexample(0, len(places), None, (miss[0], miss[1])),
                      f"bit {miss[2]} of (lane {miss[0]}, col {miss[1]}) is named by no value")
    else:
        v, p, why = bad
        out["dst"] = ("differs", Counterexample(0, v, (p[0], p[1]), None),
                      f"value {v} is bit {p[2]} of (lane {p[0]}, col {p[1]}): {why}")
    return out


__all__: Sequence[str] = ("compare_copy", "cute_places", "source_bits", "spec_places")
