"""CuTe's SM120 block-scaled MMA atoms against the spec's scale-factor layouts.

CuTe states each scale operand as a (thread, value) -> index layout over the operand's M x K
(or N x K) tile, index ``m + M * k`` (``n + N * k``), in ``cute/atom/mma_traits_sm120.hpp``:
``SFALayout = ((2,2,8),64):((8,0,1),16)`` for the 16x8x64 atom gives lane 5 (bits 1, 0, 1) row
``8 + 1 = 9`` at every k.  A value's scale factor is (row, k // VS) -- VS, the atom's vector size,
is the block -- and CuTe hands the factors to the instruction as the bytes of one register in
block order, with ``byte-id = thread-id = 0`` (its asm's ``bidA`` / ``tidA``).  So lane 5 holds
(9, 0) in byte 0 and (9, 1) in byte 1 for VS = 32, which the spec's layout at selectors (0, 0)
must say too.  A lane the spec's selector leaves out (``%laneid % 4`` in {2, 3} for
thread-id-a 0) may hold anything in CuTe (its ``0`` stride copies the pair's rows there): it is
counted as ignored, not as a difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .atoms import Env, _Unreadable

# the block-scaled traits and the K of their shape (their Shape_MNK is their base's)
SCALE_ATOMS = {"SM120_16x8x32_TN_VS": 32, "SM120_16x8x64_TN_VS": 64}
HEADER = "cute/atom/mma_traits_sm120.hpp"


@dataclass(frozen=True)
class ScaleComparison:
    """One CuTe scale operand at one vector size against one proved spec layout."""

    atom: str
    file: str
    line: int
    operand: str  # "A" | "B"
    vs: int
    cute: str  # the layout as CuTe writes it
    spec: str  # the spec layout's id
    verdict: str  # equal | differs | unreadable
    differences: tuple[dict[str, Any], ...] = ()
    ignored_lanes: tuple[int, ...] = ()
    why: str = ""

    def as_json(self) -> dict[str, Any]:
        """The report's entry: every differing (lane, byte) with both cells (mn, block)."""
        return {"atom": self.atom, "file": self.file, "line": self.line,
                "operand": self.operand, "vector_size": self.vs, "cute": self.cute,
                "spec_layout": self.spec or None, "verdict": self.verdict,
                "differences": list(self.differences),
                "ignored_lanes": list(self.ignored_lanes), "message": self.why}


def cute_scale_cells(layout: Any, tile_mn: int, vs: int) -> dict[int, set[tuple[int, int]]]:
    """lane -> the (mn, block) factors CuTe's (thread, value) layout gives it."""
    out: dict[int, set[tuple[int, int]]] = {}
    thr, val = layout.mode(0), layout.mode(1)
    for t in range(thr.size):
        cells = set()
        for v in range(val.size):
            idx = thr(t) + val(v)
            cells.add((idx % tile_mn, idx // tile_mn // vs))
        out[t] = cells
    return out


def compare_scale(atom: str, file: str, line: int, operand: str, vs: int, layout: Any,
                  spec: Any) -> ScaleComparison:
    """CuTe's ``layout`` against ``spec`` (a ``formal.model.block_scale.ScaleLayout``) at
    byte-id 0, thread-id 0: every (lane, byte) of a holder lane, by cells."""
    tile_mn = spec.tile[0] if operand == "A" else spec.tile[1]
    cute = cute_scale_cells(layout, tile_mn, vs)
    held: dict[int, dict[int, tuple[int, int]]] = {}
    for lane, byte, r, c in spec.held(0, 0):
        cell = (r, c) if operand == "A" else (c, r)  # (mn, block)
        held.setdefault(lane, {})[byte] = cell
    diffs: list[dict[str, Any]] = []
    ignored = []
    for lane in range(32):
        theirs = cute.get(lane, set())
        if lane not in held:
            if theirs:
                ignored.append(lane)
            continue
        # CuTe's bytes: its blocks in K order, one byte each (filter_zeros, then recast)
        order = sorted(theirs, key=lambda x: x[1])
        cute_bytes = {k: cell for k, cell in enumerate(order)}
        for byte in sorted(set(cute_bytes) | set(held[lane])):
            a, b = held[lane].get(byte), cute_bytes.get(byte)
            if a != b:
                diffs.append({"lane": lane, "byte": byte,
                              "spec": None if a is None else list(a),
                              "cute": None if b is None else list(b)})
    return ScaleComparison(atom, file, line, operand, vs, str(layout), spec.id,
                           "differs" if diffs else "equal", tuple(diffs), tuple(ignored))


def audit_scale(include: str | Path, layouts: Sequence[Any]) -> list[ScaleComparison]:
    """Every SM120 block-scaled atom's SFALayout / SFBLayout against the proved layouts of
    the forms it serves (VS 32 at K 32: 1X; VS 32 at K 64: 2X; VS 16 at K 64: 4X)."""
    return audit_scale_env(Env([Path(include) / HEADER]), layouts)


def audit_scale_env(env: Env, layouts: Sequence[Any]) -> list[ScaleComparison]:
    """``audit_scale`` over the headers ``env`` has read (``ptxlayout audit cute``'s)."""
    out: list[ScaleComparison] = []
    for (trait, atom), (_struct, file) in sorted(env.traits.items()):
        if trait != "MMA_Traits" or atom not in SCALE_ATOMS:
            continue
        k = SCALE_ATOMS[atom]
        for operand, member in (("A", "SFALayout"), ("B", "SFBLayout")):
            m = env.member(trait, atom, member)
            if m is None:
                continue
            try:
                layout = env.layout(m.type, {})
            except _Unreadable as exc:
                out.append(ScaleComparison(atom, str(file), m.line, operand, 0, str(m.type),
                                           "", "unreadable", why=str(exc)))
                continue
            for vs in (32, 16):
                vec = k // vs
                if vec not in (1, 2, 4) or (k == 32 and vs != 32):
                    continue
                for spec in layouts:
                    if spec.shape == f"m16n8k{k}" and spec.vec == vec \
                            and spec.operand == operand:
                        out.append(compare_scale(atom, str(file), m.line, operand, vs, layout,
                                                 spec))
    return out
