"""Block-scale factor layouts drawn as the spec's selection figures draw them.

The spec draws scale_A as its M rows with the lane that supplies each (one figure per
``thread-id-a``) and the bytes of ``scale-a-data`` each ``byte-id`` picks.  Here one grid per
thread selector puts the two together: a row per row of scale_A, a column per (byte selector,
K block), and in each cell the lane and the byte of its scale register that holds the factor.
For ``.scale_vec::2X`` and ``thread-id-a = 0``::

    scale_A (16 x 2), thread-id-a = 0 (lanes with %laneid % 4 in {0, 1})
             byte-id-a = 0      byte-id-a = 2
             block 0  block 1   block 0  block 1
    row  0   T0.b0    T0.b1     T0.b2    T0.b3
    row  8   T1.b0    T1.b1     T1.b2    T1.b3
    ...

scale_B is drawn the other way round (a row per K block, a column per column of B), as its
SFB_M x N shape is.  ``match_forms`` finds the legal forms a user's opcode names, or, when it
names none, the nearest ones and what differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.block_scale import ScaleLayout


def _cell(lay: ScaleLayout, b: int, t: int) -> dict[tuple[int, int], str]:
    return {(h[2], h[3]): f"T{h[0]}.b{h[1]}" for h in lay.held(b, t)}


def _lanes(lay: ScaleLayout, b: int, t: int) -> str:
    mods = sorted({h[0] % 4 for h in lay.held(b, t)})
    return "{" + ", ".join(str(m) for m in mods) + "}"


def scale_figure(lay: ScaleLayout, also: Sequence[ScaleLayout] = ()) -> str:
    """Every legal selector pair of one scale operand, one grid per thread selector (``also``:
    further forms with the very same layout, named in the heading)."""
    rows, cols = lay.tile
    op = lay.operand.lower()
    names = [f"{x.instruction} (.{x.stype})" for x in (lay, *also)]
    out = [*(n + "," for n in names[:-1]),
           f"{names[-1]}: scale_{lay.operand} ({rows} x {cols}): "
           f"byte-id-{op} in {_set(lay.byte_ids)}, thread-id-{op} in {_set(lay.thread_ids)}",
           "cell = T<lane>.b<byte of scale-" + op + "-data> holding that scale factor"]
    for t in lay.thread_ids:
        out.append("")
        lanes = _lanes(lay, lay.byte_ids[0], t) if lay.byte_ids else "{}"
        out.append(f"thread-id-{op} = {t} (lanes with %laneid % 4 in {lanes})")
        grids = {b: _cell(lay, b, t) for b in lay.byte_ids}
        if lay.operand == "A":
            head = [""] + [f"byte-id-{op} = {b}" for b in lay.byte_ids for _ in range(cols)]
            sub = [""] + [f"block {k}" for _ in lay.byte_ids for k in range(cols)]
            body = [[f"row {r:2d}"] + [grids[b].get((r, k), "-") for b in lay.byte_ids
                                       for k in range(cols)] for r in range(rows)]
            out += _table([_thin(head, cols), sub, *body])
        else:
            head = ["", *(f"col {c}" for c in range(cols))]
            body = [[f"byte-id-{op} = {b}, block {k}"] + [grids[b].get((k, c), "-")
                                                          for c in range(cols)]
                    for b in lay.byte_ids for k in range(rows)]
            out += _table([head, *body])
    return "\n".join(out) + "\n"


def same_layouts(layouts: Sequence[ScaleLayout]) -> list[list[ScaleLayout]]:
    """The layouts grouped where they hold the same factors in the same places (mxf4 and
    mxf4nvf4 at .scale_vec::2X), in their order."""
    groups: dict[Any, list[ScaleLayout]] = {}
    for lay in layouts:
        key = (lay.operand, lay.tile, lay.byte_ids, lay.thread_ids, lay.every)
        groups.setdefault(key, []).append(lay)
    return list(groups.values())


def _thin(head: list[str], span: int) -> list[str]:
    """A spanning header: its text once, over the first of the columns it spans."""
    return [h if k == 0 or (k - 1) % span == 0 else "" for k, h in enumerate(head)]


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _set(vals: Sequence[int]) -> str:
    return "{" + ", ".join(str(v) for v in vals) + "}"


FACTS = (("kind", ".kind::{}"), ("shape", ".{}"), ("vec", ".scale_vec::{}X"), ("stype", ".{}"))


def match_forms(facts: Mapping[str, Any], layouts: Sequence[ScaleLayout]) \
        -> tuple[list[ScaleLayout], list[str]]:
    """(the layouts of the legal form ``facts`` names, []) -- or, when no legal form has
    every stated fact, (the layouts of the forms that share the most, what each lacks)."""
    def form(lay: ScaleLayout) -> dict[str, Any]:
        return {"kind": lay.kind, "shape": lay.shape, "vec": lay.vec, "stype": lay.stype}

    def fits(lay: ScaleLayout) -> bool:
        return "operand" not in facts or facts["operand"] == lay.operand

    stated = {k: facts[k] for k, _ in FACTS if k in facts}
    exact = [lay for lay in layouts if fits(lay)
             and all(form(lay)[k] == v for k, v in stated.items())]
    if exact:
        return exact, []
    score = {lay.id: sum(form(lay)[k] == v for k, v in stated.items()) for lay in layouts}
    best = max(score.values(), default=0)
    near = [lay for lay in layouts if fits(lay) and score[lay.id] == best]
    why = []
    if "kind" in stated:
        same = [form(lay) for lay in layouts if lay.kind == stated["kind"]]
        for key, spell in FACTS[1:]:
            legal = sorted({f[key] for f in same})
            if key in stated and legal and stated[key] not in legal:
                why.append(f".kind::{stated['kind']} takes "
                           f"{' or '.join(spell.format(x) for x in legal)}, not "
                           f"{spell.format(stated[key])}")
    rest = {k: v for k, v in stated.items() if k != "kind"}
    kinds = sorted({lay.kind for lay in near})
    if why and kinds:
        said = " ".join(spell.format(rest[k]) for k, spell in FACTS if k in rest)
        why.append(f"{said} is .kind::{' or .kind::'.join(kinds)}")
    if not why:
        why.append("no legal form has " + " ".join(spell.format(stated[k])
                                                    for k, spell in FACTS if k in stated))
    return near, why


def show_scale_forms(facts: Mapping[str, Any], layouts: Sequence[Any],
                     results: Sequence[Any]) -> tuple[str, list[str], bool]:
    """(the drawings, notes for the user, whether all is well) for an opcode's facts: the
    legal form's scale layouts with their proved obligations and hardware verdict, or, when
    no legal form matches, the nearest ones and why (not well).  A ``tcgen05.mma`` opcode's
    are drawn by ``formal.writers.tc_scale``."""
    if facts.get("family") == "tcgen05":
        from ..model.tc_scale import TcScaleLayout
        from .tc_scale import show_tc_forms
        return show_tc_forms(facts, [x for x in layouts if isinstance(x, TcScaleLayout)],
                             results)
    hits, why = match_forms(facts, [x for x in layouts if isinstance(x, ScaleLayout)])
    notes = []
    if why:
        notes.append("no legal block-scaled mma.sync matches: " + "; ".join(why))
        notes.append("showing the nearest legal form" + ("s" if len(hits) > 2 else ""))
    verdicts = {r.id: r for r in results}
    parts = []
    for group in same_layouts(hits):
        r = verdicts[group[0].id]
        proved = [v.name for v in r.verdicts if v.status == "proved"]
        hw = r.verdict("hardware")
        parts.append(scale_figure(group[0], group[1:]) + f"proved: {', '.join(proved)}\n"
                     f"hardware: {hw.status} ({hw.message})\n")
    ok = bool(hits) and not why and all(verdicts[lay.id].ok for lay in hits)
    return "\n".join(parts), notes, ok
