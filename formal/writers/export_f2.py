"""F2 export: a layout as a linear map over GF(2), as Triton's ``LinearLayout`` states it.

A linear layout maps the bits of the hardware location -- register (element) bits and lane
bits -- to the bits of the tile coordinate, with XOR as addition: the image of a location is
the XOR of the images of its set bits.  So it is fixed by one *basis vector* per input bit,
the image of that bit alone.

Worked example, the spec's C/D map of m16n8k16 (``row = groupID`` [+8 for c2, c3],
``col = 2*threadID_in_group + (i & 1)``):

    register=1 -> (0, 1)       lane=1 -> (0, 2)     lane=4 -> (1, 0)    lane=16 -> (4, 0)
    register=2 -> (8, 0)       lane=2 -> (0, 4)     lane=8 -> (2, 0)

Lane 7, element c3 has bits lane 1, 2, 4 and register 1, 2, so its cell is
(0,2) ^ (0,4) ^ (1,0) ^ (0,1) ^ (8,0) = (9, 7): row 9, col 7 -- as the formulas say.  A map
is F2-linear exactly when this holds for *every* (lane, element), which ``verify`` checks
by evaluating the XOR of the bases everywhere; when it fails, the first failing location is
the witness, as ``map(a ^ b) != map(a) ^ map(b)`` for two of its bits.

Output dims are the tile's (row, col) in PTX order (B: row = k, col = n, as Triton's
dot-operand B), and sparse A is the compressed tile (``formal.model.tv``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.layout import Layout
from ..model.tv import TV, tv_view


@dataclass(frozen=True)
class F2Layout:
    """Bases per input dimension; each basis is the (row, col) image of one input bit."""

    register: tuple[tuple[int, int], ...]
    lane: tuple[tuple[int, int], ...]
    out_dims: tuple[tuple[str, int], tuple[str, int]]

    def __call__(self, lane: int, register: int) -> tuple[int, int]:
        r = c = 0
        for bit, (br, bc) in enumerate(self.lane):
            if lane >> bit & 1:
                r, c = r ^ br, c ^ bc
        for bit, (br, bc) in enumerate(self.register):
            if register >> bit & 1:
                r, c = r ^ br, c ^ bc
        return r, c

    def text(self) -> str:
        """Triton's ``LinearLayout::toString`` form."""
        out = []
        for name, bases in (("register", self.register), ("lane", self.lane)):
            for k, (r, c) in enumerate(bases):
                out.append(f" {'-' if k == 0 else ' '} {name}={1 << k} -> ({r}, {c})")
            if not bases:
                out.append(f" - {name} is a size 1 dimension")
        dims = ", ".join(f"{n} (size {s})" for n, s in self.out_dims)
        out.append(f"where out dims are: [{dims}]")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"bases": {"register": [list(b) for b in self.register],
                          "lane": [list(b) for b in self.lane]},
                "out_dims": {n: s for n, s in self.out_dims}}


@dataclass(frozen=True)
class F2Result:
    layout_id: str
    f2: F2Layout | None
    reason: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.f2 is not None


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def to_f2(lay: Layout) -> F2Result:
    """The verified F2 bases of ``lay``, or the reason it is not F2-linear."""
    tv = tv_view(lay)
    if isinstance(tv, str):
        return F2Result(lay.id, None, tv)
    for what, n in (("lanes", tv.threads), ("elements per lane", tv.values),
                    ("tile rows", tv.tile[0]), ("tile columns", tv.tile[1])):
        if _log2(n) is None:
            return F2Result(lay.id, None, f"{n} {what} is not a power of two", tv.note)
    if tv(0, 0) != (0, 0):
        r, c = tv(0, 0)
        return F2Result(lay.id, None, f"lane 0, element {tv.letter}0 maps to (row {r}, col "
                                      f"{c}); a linear map sends 0 to (0, 0)", tv.note)
    f2 = F2Layout(
        register=tuple(tv(0, 1 << k) for k in range(_log2(tv.values) or 0)),
        lane=tuple(tv(1 << k, 0) for k in range(_log2(tv.threads) or 0)),
        out_dims=tv.dims)
    bad = verify_f2(f2, tv)
    if bad:
        return F2Result(lay.id, None, bad, tv.note)
    return F2Result(lay.id, f2, "", tv.note)


def verify_f2(f2: F2Layout, tv: TV | Layout) -> str:
    """'' when the XOR of the bases reproduces every (lane, element), else a witness."""
    view = tv_view(tv) if isinstance(tv, Layout) else tv
    if isinstance(view, str):
        return view
    for t in range(view.threads):
        for v in range(view.values):
            got = f2(t, v)
            want = view(t, v)
            if got != want:
                return _witness(view, f2, t, v, want, got)
    return ""


def _witness(tv: TV, f2: F2Layout, t: int, v: int, want: tuple[int, int],
             got: tuple[int, int]) -> str:
    """Split the failing location into a ^ b, with b its highest set bit."""
    if v:
        hb = 1 << (v.bit_length() - 1)
        a = (t, v ^ hb)
        b_desc = f"element {tv.letter}{hb}"
        b_img = tv(0, hb)
    else:
        hb = 1 << (t.bit_length() - 1)
        a = (t ^ hb, v)
        b_desc = f"lane {hb}"
        b_img = tv(hb, 0)
    a_img = tv(*a)
    x = (a_img[0] ^ b_img[0], a_img[1] ^ b_img[1])
    return (f"lane {t}, element {tv.letter}{v} maps to (row {want[0]}, col "
            f"{want[1]}), but (lane {a[0]}, element {tv.letter}{a[1]}) -> {a_img} xor "
            f"{b_desc} -> {b_img} gives {x}")


def f2_text(results: list[F2Result]) -> str:
    out = ["# ptxlayout F2 export: (register, lane) bits -> (row, col) bits, XOR-linear, as",
           "# Triton's LinearLayout prints it.  Every layout below was checked by evaluating",
           "# the XOR of its bases at every (lane, element) against the formulas' cells.",
           ""]
    for r in results:
        out.append(r.layout_id)
        if r.f2 is not None:
            out.append(r.f2.text())
            if r.note:
                out.append(f"note: {r.note}")
        else:
            out.append(f"not F2-linear, because {r.reason}")
        out.append("")
    return "\n".join(out)
