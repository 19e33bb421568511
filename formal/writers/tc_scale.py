"""Block-scale factors of ``tcgen05.mma`` drawn as the spec's sub-column figures draw them.

The spec draws tensor memory as lanes down and columns across, each 32-bit column cut into
byte sub-columns, and colours the sub-columns one value of the scale factor ID selects.  Here
one grid per legal ID lists the selected sub-columns (``c1.b2``: column 1, byte 2) and, in
each lane's cell, the factor it holds.  scale_A of ``.scale_vec::2X`` at ID 2::

    sf_id = 2: bytes 2-3 of columns 0-3
    lane  c0.b2  c0.b3  c1.b2  c1.b3  ...
       0  r0k0   r0k1   r32k0  r32k1
       1  r1k0   r1k1   r33k0  r33k1

(``r33k1``: row 33's factor for K block 1; scale_B's cells name columns of B: ``n200k0``).
Every one of the four 32-lane partitions holds the same copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.tc_scale import TcScaleLayout


def _label(lay: TcScaleLayout, p: tuple[int, ...]) -> str:
    return f"r{p[0]}k{p[1]}" if lay.operand == "A" else f"n{p[1]}k{p[0]}"


def tc_scale_figure(lay: TcScaleLayout, also: Sequence[TcScaleLayout] = ()) -> str:
    """Every legal ID of one tcgen05 scale operand, one grid each (``also``: further forms
    with the very same placements, named in the heading)."""
    rows, cols = lay.tile
    names = [f"{x.instruction} (.{x.stype}, K = {x.k})" for x in (lay, *also)]
    ids = "{" + ", ".join(map(str, lay.sf_ids)) + "}"
    out = [*(n + "," for n in names[:-1]),
           f"{names[-1]}: scale_{lay.operand} ({rows} x {cols}) in {lay.columns} tensor-memory "
           f"columns, scale factor {lay.operand} ID in {ids}",
           "cell = the factor the lane holds in that sub-column (c<column>.b<byte>), the same "
           + ("in both 32-lane partitions of its half (h0: lanes 0-63, h1: 64-127)"
              if lay.states("half") else "in each 32-lane partition")]
    for s in lay.sf_ids:
        placed = lay.placed(s)
        subs = sorted({(p[5], p[6], p[3], p[4]) for p in placed})
        grid = {(p[2], p[5], p[6], p[3], p[4]): _label(lay, p) for p in placed}
        lanes = sorted({p[2] for p in placed})
        out += ["", f"sf_id = {s}: {len(subs)} sub-columns"]
        # a pair's scale_A sub-columns are named with their CTA (each CTA holds all of
        # scale_B), a half's (h1: partitions 2 and 3)
        # with their half of the tensor memory
        pair, half = lay.states("cta"), lay.states("half")
        head = ["lane", *((f"cta{t}." if pair else "") + (f"h{h}." if half else "") +
                          f"c{c}.b{b}" for t, h, c, b in subs)]
        body = [[f"{ln:4d}", *(grid.get((ln, *sub), "-") for sub in subs)] for ln in lanes]
        widths = [max(len(r[k]) for r in (head, *body)) for k in range(len(head))]
        out += ["  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in (head, *body)]
    return "\n".join(out) + "\n"


TC_FACTS = (("kind", ".kind::{}"), ("form", ".{}"), ("vec", ".scale_vec::{}X"))


def show_tc_forms(facts: Mapping[str, Any], layouts: Sequence[TcScaleLayout],
                  results: Sequence[Any]) -> tuple[str, list[str], bool]:
    """(the drawings, notes, whether all is well) for a block-scaled tcgen05.mma opcode: the
    layouts of every legal form it names (all its K and scale types; ``.block32`` names
    ``.scale_vec::1X`` / ``2X`` too, as the spec's aliases do), or, when it names none,
    every form of its kind and why not (not well)."""
    def fits(lay: TcScaleLayout) -> bool:
        if facts.get("operand", lay.operand) != lay.operand or \
                facts.get("kind", lay.kind) != lay.kind:
            return False
        # tcgen05.mma.sp names the sparse forms and the ones whose data path serves either
        # (a dense-only form: M = 128 with a pair, Layout B); tcgen05.mma the dense ones
        if lay.sparse and not facts.get("sparse") or \
                facts.get("sparse") and not lay.sparse and (lay.m, lay.cta_group) == (128, 2):
            return False
        pair = [o for o in facts.get("other", []) if str(o).startswith("cta_group::")]
        if pair and pair[0] != f"cta_group::{lay.cta_group}":
            return False
        if "vec" in facts and lay.form != f"scale_vec::{facts['vec']}X":
            return False
        # .block32 / .block16 name the forms whose factor scales 32 / 16 elements of K
        return "form" not in facts or lay.k == lay.vec * int(facts["form"][5:])

    hits = [lay for lay in layouts if fits(lay)]
    notes: list[str] = []
    if not hits:
        said = " ".join(spell.format(facts[k]) for k, spell in TC_FACTS if k in facts)
        kind = facts.get("kind", "")
        legal = sorted({f".{x.form}" for x in layouts if x.kind == kind})
        notes.append(f"no legal block-scaled tcgen05.mma matches {said}" +
                     (f": .kind::{kind} takes {' or '.join(legal)}" if legal else ""))
        hits = [lay for lay in layouts if facts.get("operand", lay.operand) == lay.operand
                and (not kind or lay.kind == kind)]
        notes.append("showing the legal forms of " + (f".kind::{kind}" if kind else "every kind"))
    verdicts = {r.id: r for r in results}
    groups: dict[Any, list[TcScaleLayout]] = {}
    for lay in hits:
        groups.setdefault((lay.operand, lay.tile, lay.sf_ids, lay.every), []).append(lay)
    parts = []
    for group in groups.values():
        r = verdicts[group[0].id]
        proved = [v.name for v in r.verdicts if v.status == "proved"]
        warned = [f"{v.name}: {v.message}" for v in r.verdicts
                  if v.status == "refuted" and v.severity == "warning"]
        hw = r.verdict("hardware")
        parts.append(tc_scale_figure(group[0], group[1:]) + f"proved: {', '.join(proved)}\n"
                     + "".join(f"warning: {w}\n" for w in warned)
                     + f"hardware: {hw.status} ({hw.message})\n")
    ok = bool(hits) and not notes and all(verdicts[lay.id].ok for lay in hits)
    return "\n".join(parts), notes, ok
