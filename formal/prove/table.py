"""The table obligations: register budget, element list, type names, reference.

The fragment sentence is checked against the tile: "four .b32 registers, each containing two
.f16 elements" holds 4 x 2 = 8 elements of 16 bits in 32-bit registers, and a 16 x 16 A tile over
32 lanes needs 8 per lane -- proved; "a0, a1, a2, a3" for those 8 is refuted at the list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..base.source import Span
from ..base.variants import (
    CONTAINER_BITS,
    FLOAT_TYPES,
    HEADER_NAMES,
    PTX_TYPES,
    REGISTER_BITS,
    TYPE_BITS,
    legal_types,
)
from ..model.layout import Layout
from ..model.wmma import wmma_budget
from ..parse.syntax import ElementList
from .verdicts import Core

# ---- table obligations ---------------------------------------------------------------------------


def register_budget_core(lay: Layout) -> Core:
    if lay.instruction == "wmma":
        return _wmma_budget_core(lay)
    if lay.operand == "metadata":
        md = lay.metadata
        if md is None or md.desc is None:
            return Core("not-applicable", "no metadata sentence", method="table")
        d = md.desc
        bits = d.fields * d.field_bits
        width = REGISTER_BITS.get(d.register_kind, 32)
        if bits > width:
            return Core("refuted", f"{d.fields} fields of {d.field_bits} bits need {bits} "
                         f"bits; a .{d.register_kind} register has {width}",
                         {"fields": d.fields, "field_bits": d.field_bits}, None, "table")
        return Core("proved", method="table")
    tf = lay.table
    if tf is None or tf.fragment is None:
        return Core("not-applicable", "no fragment description in the table", method="table")
    fr = tf.fragment
    n = lay.elements
    regs = fr.registers.value
    faults = []
    known = REGISTER_BITS.get(fr.register_kind)
    if known is None:
        faults.append(f"'.{fr.register_kind}' is not a register kind a fragment can use")
    width = known or 32
    if fr.per_register is not None:
        per = fr.per_register.value
        total = regs * per
        if total != n:
            faults.append(f"{fr.registers.text} register{'s' if regs > 1 else ''} x "
                          f"{fr.per_register.text} element{'s' if per > 1 else ''} = {total}, "
                          f"but the {lay.tile[0]} x {lay.tile[1]} tile"
                          f"{' (half of it non-zero)' if lay.sparse_a else ''} needs "
                          f"{n} per lane")
    elif fr.total is None:
        return Core("not-applicable", "the fragment sentence does not say how many elements "
                    "a register holds", method="table")
    else:
        total = fr.total.value
        per = total // regs if regs else 0
        if total != n:
            faults.append(f"{fr.total.text} elements per lane, but the {lay.tile[0]} x "
                          f"{lay.tile[1]} tile needs {n} per lane")
        elif regs and total % regs:
            faults.append(f"{total} elements do not split evenly over {regs} registers")
    for t in fr.types or lay.types:
        conts = CONTAINER_BITS.get(t)
        if conts is None:
            continue
        if not any(per * c == width for c in conts) and not (t == "b1"
                                                             and per * TYPE_BITS[t] <= width):
            need = " or ".join(str(per * c) for c in conts)
            faults.append(f"{per} .{t} element{'s' if per > 1 else ''} per register take "
                          f"{need} bits; a .{fr.register_kind} register has {width}")
            break
    if faults:
        return Core("refuted", "; ".join(faults),
                     {"registers": regs, "per_register": per, "register_kind": fr.register_kind,
                      "elements_needed": n}, None, "table")
    return Core("proved", method="table")


def _wmma_budget_core(lay: Layout) -> Core:
    """A wmma fragment holds its tile once or in whole copies (``formal.model.wmma``)."""
    tf = lay.table
    if tf is None or tf.fragment is None:
        return Core("not-applicable", "no fragment description in the table", method="table")
    b = wmma_budget(tf.fragment, lay.types, lay.tile)
    if b is None:
        return Core("not-applicable", "the fragment sentence does not say how many elements "
                    "a register holds", method="table")
    r, c = lay.tile
    if b.faults:
        return Core("refuted", f"the wmma {' / '.join('.' + t for t in lay.types)} fragment: "
                    + "; ".join(b.faults),
                    {"elements_per_lane": b.elements, "lanes": lay.lanes, "tiles": [[r, c]]},
                    None, "table")
    copies = "once" if b.copies == 1 else f"{b.copies} times (replicated)"
    return Core("proved", f"{b.elements} elements a lane x {lay.lanes} lanes hold the {r} x {c} "
                f"tile {copies}", method="table")


def element_list_core(lay: Layout) -> tuple[Core, list[tuple[int, str]]]:
    """Check the names; return punctuation remarks (offset, message) separately."""
    tf = lay.table
    if tf is None or tf.elements is None:
        if lay.sparse_a or tf is None:
            return Core("not-applicable", "no element list", method="table"), []
        return Core("not-applicable", "this row gives no element list", method="table"), []
    return check_element_list(tf.elements, lay.letter, lay.elements)


def check_element_list(el: ElementList, letter: str, n: int,
                       ) -> tuple[Core, list[tuple[int, str]]]:
    names = [it for it in el.items if it.kind == "name"]
    remarks: list[tuple[int, str]] = []
    # punctuation: name (sep name)* with ellipses standing between separators
    prev = None
    for it in el.items:
        if it.kind == "sep" and it.text != ",":
            remarks.append((it.pos, f"'{it.text}' separates elements where ',' is meant"))
        if it.kind == "ellipsis" and it.text == "..":
            remarks.append((it.pos, "the ellipsis is written '..' (two dots)"))
        if prev is not None and prev.kind != "sep" and it.kind != "sep":
            remarks.append((it.pos, f"no comma before '{it.text}'"))
        if prev is not None and prev.kind == "sep" and it.kind == "sep":
            remarks.append((it.pos, "two separators in a row"))
        prev = it
    if prev is not None and prev.kind == "sep":
        remarks.append((prev.pos, "the list ends with a separator"))
    letters = {it.text[0] for it in names}
    if letters - {letter}:
        bad = next(it for it in names if it.text[0] != letter)
        return Core("refuted", f"'{bad.text}' in the element list of an operand whose "
                     f"elements are {letter}0, {letter}1, ...", {"name": bad.text},
                     ("elements", bad.pos), "table"), remarks
    # expand ellipses
    seq: list[int] = []
    items = [it for it in el.items if it.kind != "sep"]
    for k, it in enumerate(items):
        if it.kind == "name":
            seq.append(int(it.text[1:]))
        elif k > 0 and k + 1 < len(items) and items[k - 1].kind == "name" \
                and items[k + 1].kind == "name":
            lo, hi = int(items[k - 1].text[1:]), int(items[k + 1].text[1:])
            if hi - lo > 4096:
                return Core("refuted", f"the ellipsis spans {hi - lo} elements",
                             None, None, "table"), remarks
            seq.extend(range(lo + 1, hi))
    expected = list(range(n))
    if seq == expected:
        return Core("proved", method="table"), remarks
    shown = ", ".join(f"{letter}{v}" for v in seq[:12]) + (", ..." if len(seq) > 12 else "")
    dups = sorted({v for v in seq if seq.count(v) > 1})
    missing = sorted(set(expected) - set(seq))
    extra = sorted(set(seq) - set(expected))
    parts = []
    if dups:
        parts.append("repeats " + ", ".join(f"{letter}{v}" for v in dups))
    if missing:
        parts.append("lacks " + ", ".join(f"{letter}{v}" for v in missing[:8]) +
                     (", ..." if len(missing) > 8 else ""))
    if extra:
        parts.append("names " + ", ".join(f"{letter}{v}" for v in extra[:8]) +
                     (", ..." if len(extra) > 8 else "") + " beyond the fragment")
    if not parts:
        parts.append("is out of order")
    msg = f"the element list ({shown}) {' and '.join(parts)}; a lane holds {n} elements " \
          f"({letter}0..{letter}{n - 1})"
    first_bad = next((k for k, (a, b) in enumerate(zip(seq, expected)) if a != b),
                     min(len(seq), len(expected)))
    pos = 0
    explicit = [it for it in items if it.kind == "name"]
    for it in explicit:
        if int(it.text[1:]) == (seq[first_bad] if first_bad < len(seq) else -1):
            pos = it.pos
    if dups:
        dup_items = [it for it in explicit if int(it.text[1:]) == dups[0]]
        pos = dup_items[1].pos if len(dup_items) > 1 else pos
    return Core("refuted", msg, {"listed": [f"{letter}{v}" for v in seq], "expected": n},
                 ("elements", pos), "table"), remarks


def type_names_core(lay: Layout,
                ) -> tuple[Core, list[tuple[Span, str]], list[tuple[Span | None, str]]]:
    """Header names, row types, sentence types and reference types against the table of
    legal types; returns (verdict, warnings)."""
    faults: list[tuple[Span | None, str, Any]] = []
    warns: list[tuple[Span, str]] = []
    legal = legal_types(lay.instruction, str(lay.shape),
                        "A" if lay.operand == "metadata" else lay.operand)
    tf = lay.table
    if tf is not None and tf.header is not None and tf.header_src is not None \
            and lay.operand in HEADER_NAMES:
        want = HEADER_NAMES[lay.operand]
        for tv in tf.header.type_vars:
            if tv not in want:
                faults.append((tf.header_src.span(tf.header.pos), f"the table header "
                               f"'.{tv}' stands over {_operand_name(lay.operand)}, whose "
                               f"types are " + " / ".join(f".{w}" for w in want),
                               {"header": f".{tv}", "expected": [f".{w}" for w in want]}))
    if tf is not None and legal:
        for t in tf.types:
            if t not in legal:
                faults.append((tf.source.span(0), _not_legal(t, lay, legal),
                               {"type": f".{t}"}))
        fr = tf.fragment
        if fr is not None and tf.fragment_src is not None:
            if fr.types and set(fr.types) != set(tf.types):
                faults.append((tf.fragment_src.span(fr.types_pos),
                               "the fragment sentence speaks of " +
                               " / ".join(f".{t}" for t in fr.types) + " elements in the row of "
                               + " / ".join(f".{t}" for t in tf.types),
                               {"row": list(tf.types), "sentence": list(fr.types)}))
            want_m = {"A": {"A"}, "B": {"B"}, "C/D": {"C", "D"}}.get(lay.operand, set())
            if fr.matrices and want_m and not set(fr.matrices) <= want_m:
                faults.append((tf.fragment_src.span(fr.matrix_pos),
                               f"the fragment sentence says 'matrix {fr.matrices[0]}' under "
                               f"{_operand_name(lay.operand)}", {"matrix": fr.matrices[0]}))
    if lay.label_types and tf is not None:
        stray = [t for t in tf.types if t not in lay.label_types]
        if stray and lay.operand == "C/D":
            # the spec labels an accumulator table by the multiplicand types it serves
            # (".tf32:" over .f32 rows): the label must name multiplicand types of the shape
            ab = legal_types(lay.instruction, str(lay.shape), "A") | \
                legal_types(lay.instruction, str(lay.shape), "B")
            stray = [t for t in lay.label_types if ab and t not in ab and t not in tf.types]
        if stray:
            faults.append((tf.source.span(0), "the row's " + " / ".join(f".{t}" for t in stray)
                           + " is not among the block's label types", {"types": stray}))
    if lay.reference_src is not None and lay.source == "reference":
        ref = lay.reference
        if ref is not None:
            instr = "mma.sp" if ref.target.sparse else "mma"
            # "for .f16/.bf16 formats" names the multiplicands' format
            cands = legal_types(instr, ref.target.shape, "A") | \
                legal_types(instr, ref.target.shape, "B")
            for t, pos in ref.target.format_types:
                if t not in cands:
                    faults.append((lay.reference_src.span(pos),
                                   _not_legal(t, lay, cands, ref.target.shape, "multiplicand"),
                                   {"type": f".{t}"}))
    # section-title words: warnings
    title = lay.title.lower()
    floats = bool(set(lay.types) & FLOAT_TYPES)
    if tf is not None and "integer type" in title and floats and lay.operand != "C/D":
        fl = [t for t in tf.types if t in FLOAT_TYPES]
        warns.append((tf.source.span(0), "the section is titled '... integer type' but this "
                      "row holds floating-point " + " / ".join(f".{t}" for t in fl)))
    if lay.title_types and tf is not None and lay.operand in ("A", "B"):
        missing = [t for t in tf.types if t not in lay.title_types]
        if missing:
            warns.append((tf.source.span(0), "the section title lists " + " / ".join(
                f".{t}" for t in lay.title_types) + " but not " + " / ".join(
                f".{t}" for t in missing)))
    if faults:
        span, msg, cex = faults[0]
        extra = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        core = Core("refuted", msg + extra, {"faults": [m for _s, m, _c in faults], **cex},
                     None, "table")
        return core, warns, [(s, m) for s, m, _c in faults]
    return Core("proved", method="table"), warns, []


def _not_legal(t: str, lay: Layout, legal: Iterable[str], shape: str | None = None,
               role: str = "") -> str:
    legal = sorted(legal)
    real = t in PTX_TYPES
    guess = closest(t, legal)
    where = f"mma.{shape or lay.shape}"
    msg = f"'.{t}' is {'not' if not real else 'a PTX type but not'} " \
          f"{'a ' + role + ' type' if role else 'an element type'} of " \
          f"{where}{'' if role else ' ' + _operand_name(lay.operand)}"
    if guess:
        msg += f" (did you mean '.{guess}'?)"
    return msg


def _operand_name(op: str) -> str:
    return {"A": "Multiplicand A", "B": "Multiplicand B", "C/D": "the accumulators C/D",
            "metadata": "the metadata"}.get(op, op)


def reference_core(lay: Layout, by_id: dict[str, Layout]) -> Core:
    if lay.source != "reference":
        return Core("not-applicable", method="table")
    if not lay.reference_of:
        why = lay.notes[0] if lay.notes else "the reference resolves to no layout"
        return Core("refuted", why,
                     {"sentence": lay.reference_src.text.strip() if lay.reference_src else ""},
                     None, "table")
    target = by_id.get(lay.reference_of)
    tile = lay.shape.tile(lay.operand)
    if target is not None:
        ttile = target.shape.tile(target.operand)
        if ttile != tile:
            return Core("refuted", f"the referenced {target.operand} tile of "
                         f"{target.shape} is {ttile[0]} x {ttile[1]}, but this section's "
                         f"{lay.operand} is {tile[0]} x {tile[1]}",
                         {"target": lay.reference_of, "target_tile": list(ttile),
                          "tile": list(tile)}, None, "table")
    return Core("proved", f"resolved to {lay.reference_of}", method="table")


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate nearest to ``name`` by edit distance (for 'did you mean')."""
    best, best_d = None, 3
    for c in sorted(candidates):
        d = _edit_distance(name, c)
        if d < best_d:
            best, best_d = c, d
    return best


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
