"""Spec revisions: pair the layouts of two documents and say what changed.

``ptxlayout diff OLD NEW`` pairs layouts by (instruction, shape, operand, types) and gives,
for each pair, one verdict:

    same-text       the formulas are the same (after normalisation)
    same-map        the text differs but Z3 proves the maps equal (e.g. ``i & 0x3`` became
                    ``i % 4``); enumeration agrees
    different-map   a (lane, element) where the two maps differ, with both cells
    added, removed  a layout only one revision has

Exit status 1 when any map changed.  A toy example: OLD says ``col = lane``, NEW says
``col = lane ^ 1``; lane 0 maps to column 0 in OLD and column 1 in NEW -- different-map,
witness (lane 0, element 0).

With GPU evidence (``Options.evidence``) every changed map -- different-map or added -- is
marked with what the hardware says of the NEW one, the ``hardware`` obligation judged with
NEW's other operands: ``confirmed`` (a bit-exact run packed it), ``refuted`` (it differs from
the map a run confirmed, at the (lane, element) shown), or ``unconfirmed`` (the evidence
cannot decide: its variants never ran, or NEW changed the other operands too).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import z3

from ..base.ids import LayoutId
from ..base.options import picked
from ..model.cells import map_of
from ..model.layout import Layout, Model
from ..prove.confirm import stated_in
from ..prove.encode import Sym, solve, width_of
from ..prove.verdicts import InternalError, Options


@dataclass(frozen=True)
class Change:
    kind: str  # same-text | same-map | different-map | added | removed | not-comparable
    key: str
    old: str = ""
    new: str = ""
    message: str = ""
    witness: Any = None
    hardware: str = ""  # confirmed | refuted | unconfirmed | "" (no evidence, no variant)
    hardware_message: str = ""


def _key(lay: Layout) -> tuple[str, str, str, frozenset[str], tuple[str, ...]]:
    """What pairs a layout of one revision with its counterpart in the other: the shape as
    the instruction spells it (a move's ``m8n16.x2`` is not ``m16n16.x1.trans``, though both
    tiles are 16 x 16), m8n8k4's register arrangement (``.row`` / ``.col``), and -- preferred,
    not required -- the section types an accumulator is stated for (``...CD.f16@u8-s8``)."""
    return (lay.instruction, _shape(lay), lay.operand, frozenset(lay.types),
            LayoutId.parse(lay.id).for_types)


def _shape(lay: Layout) -> str:
    shape = lay.shape_name or str(lay.shape)
    return f"{shape}.{lay.arrangement}" if lay.arrangement else shape


def _label(lay: Layout) -> str:
    return f"{lay.instruction}.{_shape(lay)}.{lay.operand}.{'-'.join(sorted(lay.types))}"


def pair(old: Sequence[Layout], new: Sequence[Layout]) -> list[tuple[Layout | None,
                                                                      Layout | None]]:
    """Exact type sets first, then overlapping ones, then the rest unpaired."""
    out: list[tuple[Layout | None, Layout | None]] = []
    left = list(old)
    right = list(new)
    for a in list(left):
        b = next((x for x in right if _key(x) == _key(a)), None)
        if b is not None:
            out.append((a, b))
            left.remove(a)
            right.remove(b)
    for a in list(left):
        b = next((x for x in right if _key(x)[:3] == _key(a)[:3] and _key(x)[3] & _key(a)[3]),
                 None)
        if b is not None:
            out.append((a, b))
            left.remove(a)
            right.remove(b)
    out += [(a, None) for a in left] + [(None, b) for b in right]
    return out


def compare_layouts(a: Layout, b: Layout, opts: Options) -> Change:
    key = _label(b)
    if a.formula_hash() == b.formula_hash():
        return Change("same-text", key, a.id, b.id)
    ma, mb = (None if a.incomplete else map_of(a)), (None if b.incomplete else map_of(b))
    if ma is None or mb is None:
        broken = [w for w, lay in (("OLD", a), ("NEW", b)) if lay.incomplete]
        return Change("not-comparable", key, a.id, b.id,
                      f"the {' and '.join(broken)} revision's formulas did not become a map "
                      "(its finding says why)" if broken else
                      "one of them gives no formulas (figure-only)")
    if ma.n != mb.n or ma.names != mb.names or ma.selectors != mb.selectors:
        return Change("different-map", key, a.id, b.id,
                      f"the domains differ ({ma.n} vs {mb.n} elements per lane)")
    # Z3: is there a point of the domain where the two maps differ?
    w = max(width_of(ma), width_of(mb))
    sa, sb = Sym(ma, w), Sym(mb, w)  # same variable names and width: the same point
    differ = z3.Or(sa.defined != sb.defined,
                   z3.Or(*[x != y for x, y in zip(sa.vals, sb.vals)]))
    r, model = solve("diff", z3.And(sa.dom, sb.dom, differ), opts.timeout_ms)
    ta, tb = ma.table(), mb.table()
    enum_diff = next((p for p in ta if ta[p] != tb.get(p)), None)
    if r == "unsat":
        if enum_diff is not None:
            raise InternalError(f"diff {key}: Z3 proves the maps equal, enumeration finds "
                                f"{enum_diff}")
        return Change("same-map", key, a.id, b.id, "the formulas differ; the maps are equal")
    if r == "unknown":  # finite maps: the enumeration above compared every point
        if enum_diff is None:
            return Change("same-map", key, a.id, b.id, "the formulas differ; the maps are "
                          "equal (decided by enumeration; Z3 timed out after "
                          f"{opts.timeout_ms / 1000:g} s)")
        zp = enum_diff
    else:
        zp = sa.point(model)
    if ta.get(zp) == tb.get(zp):
        raise InternalError(f"diff {key}: the Z3 witness {zp} does not replay")
    p = enum_diff or zp
    s, t, i = p
    letter = b.letter
    names = ma.names
    wa = dict(zip(names, ta[p])) if ta.get(p) else None
    wb = dict(zip(names, tb[p])) if tb.get(p) else None
    sel = f"selector {s}, " if b.operand == "metadata" else ""
    return Change("different-map", key, a.id, b.id,
                  f"{sel}lane {t}, {letter}{i}: {wa} in OLD, {wb} in NEW",
                  {"lane": t, "element": f"{letter}{i}", "old": wa, "new": wb,
                   **({"selector": s} if b.operand == "metadata" else {})})


def diff_models(mo: Model, mn: Model, opts: Options | None = None) -> list[Change]:
    """Every layout of two revisions paired and compared (``formal.api.diff_documents`` reads
    the two documents)."""
    opts = opts or Options()
    ev = opts.evidence
    stated = stated_in(mn.layouts) if ev is not None else None
    out = []
    for a, b in pair(mo.layouts, mn.layouts):
        if a is None:
            assert b is not None
            c = Change("added", _label(b), "", b.id)
        elif b is None:
            c = Change("removed", _label(a), a.id, "")
        else:
            c = compare_layouts(a, b, opts)
        if ev is not None and b is not None and c.kind in ("different-map", "added"):
            v = ev.verdict(b, stated)
            word = HARDWARE_WORDS.get(v.status, "")
            if word:
                c = replace(c, hardware=word, hardware_message=v.message)
        out.append(c)
    return sorted(out, key=lambda c: (c.key, c.kind))


# the hardware obligation's status, as the diff names it for a changed map
HARDWARE_WORDS = {"proved": "confirmed", "refuted": "refuted", "unconfirmed": "unconfirmed",
                  "unknown": "unconfirmed"}


def kept_changes(changes: Sequence[Change], select: Sequence[str] = (),
                 ignore: Sequence[str] = ()) -> list[Change]:
    """``diff --select`` / ``--ignore``: the changes whose kind they keep, and every unchanged
    map (not a finding: it is counted whatever is selected)."""
    return [c for c in changes
            if c.kind in ("same-text", "same-map") or picked(c.kind, select, ignore)]


def render_diff(changes: Sequence[Change], fmt: str = "text", quiet: bool = False,
                version: str = "0") -> str:
    """The changes as text (``quiet``: only the maps that differ, were added, removed or could
    not be compared, and the counts) or JSON (docs/schema/diff.schema.json)."""
    if fmt == "json":
        return json.dumps({"version": version, "changes": [c.__dict__ for c in changes],
                           "summary": _summary(changes),
                           "hardware": _hardware_summary(changes)}, indent=2) + "\n"
    lines = []
    for c in changes:
        if quiet and c.kind in ("same-text", "same-map"):
            continue
        msg = f"  {c.message}" if c.message else ""
        lines.append(f"{c.kind:<15} {c.key}{msg}")
        if c.hardware:
            lines.append(f"{'':<15} hardware: {c.hardware}: {c.hardware_message}")
    s = _summary(changes)
    lines.append(", ".join(f"{v} {k}" for k, v in s.items()))
    hw = _hardware_summary(changes)
    if hw:
        lines.append("changed maps on the hardware: " +
                     ", ".join(f"{v} {k}" for k, v in hw.items()))
    return "\n".join(lines) + "\n"


def _hardware_summary(changes: Sequence[Change]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in changes:
        if c.hardware:
            out[c.hardware] = out.get(c.hardware, 0) + 1
    return dict(sorted(out.items()))


def _summary(changes: Sequence[Change]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in changes:
        out[c.kind] = out.get(c.kind, 0) + 1
    return dict(sorted(out.items()))
