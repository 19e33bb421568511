"""What a confirmed run says of a map that differs from the one it confirmed.

A check run packs every operand of one instruction variant by a map and compares D with
``A x B + C`` on random data; bit-exact, it confirms those maps *together*.  For a fixed A and
C, only one B fits random data (``D = A x B + C`` pins each row k of B once A's column k is
fixed), so a document that states A and C/D with the confirmed maps and B with another is
wrong, and the first (lane, element) where its B differs from the confirmed B shows it.

A worked example: the H100 ran ``mma.m16n8k32.s32.s4.s4.s32`` bit-exact with B packed by
``row = tig * 8 + (i & 0x7), col = groupID``.  A revision that writes ``(i ^ 0x7)`` states
lane 0's b0 at (row 7, col 0); with the same A and C/D maps, the hardware put it at (row 0,
col 0): ``refuted``.  Had the revision also changed A, the evidence could not decide: the
maps of one variant may be renumbered together (the columns of A with the rows of B, the rows
of A with those of D, the columns of B with those of D) without changing D, so a B that
differs from the confirmed one only by renumbering its rows fits an A that the evidence never
ran -- that is a warning, ``unconfirmed``, which says what would decide it.  A B that differs
even up to those renumberings is refuted whatever the other operands say.

``judge`` is the tail of ``Evidence.verdict`` (``formal.prove.evidence``): it is called when
no run confirmed, refuted or recovered the map itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..base.variants import Variant, layout_serves
from .verdicts import Verdict

# (layout judged, variant, operand) -> the layout the same document states for that operand
Stated = Callable[[Any, Variant, str], Any]

# The dimensions an operand's rows and columns run over: renumbering one dimension in every
# operand that uses it leaves D = A x B + C unchanged, so no run can see it.
DIMS: dict[str, tuple[str, str]] = {"A": ("m", "k"), "B": ("k", "n"), "C/D": ("m", "n"),
                                    "metadata": ("m", "k")}


def _pins(op: str, v: Variant) -> tuple[str, ...]:
    """The dimensions an operand stated with its confirmed map pins.  A sparse A names only
    the chunk of k each non-zero comes from; which k inside the chunk is the metadata's, so
    a sparse A pins m alone (a B may be renumbered inside chunks with the metadata)."""
    if v.sparse and op == "A":
        return ("m",)
    return DIMS.get(op, ())


def stated_in(layouts: Sequence[Any]) -> Stated:
    """The layout a document states for each operand of a variant: the first layout of the
    same document, with a cell table, that serves that operand of the variant."""
    by_doc: dict[tuple[str, str], list[Any]] = {}
    for lay in layouts:
        if lay.formulas or lay.table is not None:
            by_doc.setdefault((lay.document, lay.operand), []).append(lay)

    def stated(near: Any, v: Variant, op: str) -> Any:
        for lay in by_doc.get((near.document, op), ()):
            if layout_serves(v, op, lay.instruction, str(lay.shape), lay.types, lay.id,
                             lay.arrangement):
                return lay
        return None

    return stated


def show(cell: Mapping[str, Any] | None) -> str:
    if cell is None:
        return "no cell"
    return "(" + ", ".join(f"{k} {v}" for k, v in cell.items()) + ")"


def cell_name(c: Sequence[int]) -> str:
    return f"D[{c[0]}][{c[1]}]" + (f" of product {c[2]}" if len(c) > 2 else "")


def _canonical(rows: Sequence[Mapping[str, Any]], names: Sequence[str],
               free: Sequence[str]) -> list[tuple[Any, ...]]:
    """Cells with each coordinate of ``free`` renamed 0, 1, ... in order of first appearance
    (a replicated layout's rows and columns are renamed within their product); the others
    kept as they are."""
    order = sorted(rows, key=lambda r: (r["lane"], r["element"]))
    if not free:  # nothing renamed: each row's numbers as they are
        get = itemgetter("lane", "element", *names)
        return [tuple(map(int, get(r))) for r in order]
    tables: dict[str, dict[Any, int]] = {n: {} for n in free}
    out = []
    for r in order:
        cell = []
        for n in names:
            if n not in tables:
                cell.append(int(r[n]))
                continue
            t = tables[n]
            label = (int(r.get("group", 0)), int(r[n]))
            t.setdefault(label, len(t))
            cell.append(t[label])
        out.append((int(r["lane"]), int(r["element"]), *cell))
    return out


def distinguish(kind: str, rows: Sequence[Mapping[str, Any]],
                found: Mapping[str, Any], relabel: bool | Sequence[str] = True) \
        -> dict[str, Any] | None:
    """The first cell where the layout's table and a map the hardware showed disagree, or
    None.  ``relabel``: compare up to renaming rows and columns (True: both, a discovered
    map; a list: those coordinates only); False: exactly (a map confirmed by a check run
    with the same other operands)."""
    cols = list(found.get("columns") or ())
    hw = [dict(zip(cols, r, strict=True)) for r in found.get("rows") or ()]
    if kind == "fields":
        key = ("selector", "lane", "bit_lo", "bit_hi")
        mine = {tuple(r[k] for k in key): r for r in rows}
        theirs = {tuple(r[k] for k in key): r for r in hw}
        for k in sorted(set(mine) | set(theirs)):
            a, b = mine.get(k), theirs.get(k)
            fa = None if a is None else (a["row"], a["chunk"], a["slot"])
            fb = None if b is None else (b["row"], b["chunk"], b["slot"])
            if fa != fb:
                return {"message": f"selector {k[0]} lane {k[1]} bits {k[2]}..{k[3]}: the "
                                   f"layout says (row, chunk, slot) {fa}, the hardware reads "
                                   f"{fb}",
                        "selector": k[0], "lane": k[1], "bit_lo": k[2], "layout": fa,
                        "hardware": fb}
        return None
    names = ["row", "col"] if rows and "col" in rows[0] else ["row", "firstcol", "lastcol"]
    free: list[str] = []
    if names == ["row", "col"]:
        free = list(names) if relabel is True else [n for n in names if n in (relabel or ())]
    if any("group" in r for r in (*rows[:1], *hw[:1])):
        names.append("group")
        if free == ["row", "col"]:
            free.append("group")
    a_c = _canonical(rows, names, free)
    b_c = _canonical(hw, names, free)
    by_a: dict[tuple[Any, ...], tuple[Any, ...]] = {x[:2]: x for x in a_c}
    by_b: dict[tuple[Any, ...], tuple[Any, ...]] = {x[:2]: x for x in b_c}
    orig_a: dict[tuple[Any, ...], Mapping[str, Any]] = {
        (int(r["lane"]), int(r["element"])): r for r in rows}
    orig_b: dict[tuple[Any, ...], Mapping[str, Any]] = {
        (int(r["lane"]), int(r["element"])): r for r in hw}
    upto = {("row", "col"): " (up to renaming rows and columns)",
            ("row", "col", "group"): " (up to renaming rows and columns)",
            ("row",): " (up to renaming rows)", ("col",): " (up to renaming columns)"}
    for k in sorted(set(by_a) | set(by_b)):
        if by_a.get(k) != by_b.get(k):
            la = orig_a.get(k)
            lb = orig_b.get(k)
            show_a = None if la is None else {n: la[n] for n in names}
            show_b = None if lb is None else {n: lb[n] for n in names}
            return {"message": f"lane {k[0]} element {k[1]} is at {show(show_a)} in the layout "
                               f"but at {show(show_b)} on the hardware" +
                               upto.get(tuple(free), ""),
                    "lane": k[0], "element": k[1], "layout": show_a, "hardware": show_b}
    return None


def table_doc(kind: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    cols = list(rows[0]) if rows else []
    return {"kind": kind, "columns": cols, "rows": [[r[c] for c in cols] for r in rows]}


def _names(variants: Sequence[Variant]) -> str:
    keys = sorted({v.key for v in variants})
    return keys[0] if len(keys) == 1 else f"{len(keys)} variants ({keys[0]}, ...)"


def judge(ev: Any, lay: Any, variants: Sequence[Variant],
          table: tuple[str, Sequence[dict[str, Any]]], stated: Stated | None) -> Verdict:
    """What the confirmed runs of ``variants`` say of ``lay``, whose map (``table``: kind,
    rows) no run confirmed: ``refuted`` when it differs from the map a bit-exact run
    confirmed for its operand and no other operand could absorb the difference, else the
    warning ``unconfirmed`` with what the evidence can and cannot decide."""
    kind, rows = table
    op = lay.operand
    by_key = {v.key: v for v in variants}
    ran = [r for r in ev.runs_of(by_key) if r.mode == "check" and r.result == "match"
           and op in r.layout_hashes and not r.erratum]
    if not ran:
        return _never_ran(ev, variants)
    best: tuple[int, Verdict] | None = None
    missing: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    for r in reversed(ran):
        v = by_key[r.key]
        c = str(r.layout_hashes[op])
        confirmed = ev.table(c)
        if confirmed is None:
            missing.append(c)
            continue
        same: list[tuple[str, str, str]] = []
        other: list[tuple[str, str, str]] = []
        for o, x in sorted(r.layout_hashes.items()):
            if o == op:
                continue
            mine = stated(lay, v, o) if stated is not None else None
            mh = ev.hash_of(mine) if mine is not None else ""
            (same if mh == x else other).append((o, x, mh))
        if (c, *same, *other) in seen:
            continue  # another run of the same maps: the same conclusion
        seen.add((c, *same, *other))
        pinned = {d for o, _x, _m in same for d in _pins(o, v)}
        free = [n for n, d in zip(("row", "col"), DIMS.get(op, ("", ""))) if d not in pinned]
        if kind == "fields":
            mode = "none" if other else "exact"
        elif not free:
            mode = "exact"
        else:
            mode = "relabel" if rows and "col" in rows[0] else "none"
        doc = table_doc(*confirmed)
        cex = None if mode == "none" else \
            distinguish(kind, rows, doc, False if mode == "exact" else free)
        run = {"variant": r.key, "selector": r.selector, "confirmed_hash": c,
               "device": r.file.device, "date": r.file.date,
               "file": Path(r.file.path).name, "trials": r.trials}
        where = (f"{r.key} ran bit-exact on {r.file.where} ({Path(r.file.path).name}, "
                 f"{r.trials} trials) with {op} packed by {c}")
        if cex is not None:
            cex = {**{k: cex[k] for k in cex if k != "message"}, **run}
            if mode == "exact":
                told = ", ".join(f"{o} {x}" for o, x, _m in same)
                msg = (f"{where} and {told}, the maps this document states for them: only "
                       f"one {op} map fits random data then, and this layout's differs from "
                       f"it: {_at(cex)}")
                rank = 3
            else:
                msg = (f"{where}: this layout's {op} differs from it even up to renumbering "
                       f"{_dims(op, free)} ({_others(same, other)}), so no choice of the "
                       f"other operands makes it fit: {_at(cex)}")
                rank = 2
            cand = Verdict("hardware", "refuted", msg, cex, None, "error", "gpu")
        else:
            first = distinguish(kind, rows, doc, False)
            diff = f"; exactly, {_at(first)}" if first is not None else ""
            can = (f"it differs from the confirmed map only by renumbering "
                   f"{_dims(op, free)}, which {_absorb(op, free, other)} could absorb"
                   if mode == "relabel" else
                   "its fields or column ranges are not compared up to renumbering")
            msg = (f"unconfirmed: {where}, but {_others(same, other)}: the evidence "
                   f"confirms that combination, not this one; {can}{diff}; a run of this "
                   "document's maps on a device decides it (ptxlayout export, then "
                   "ptxlayout gpu --layouts)")
            cand = Verdict("hardware", "unconfirmed", msg,
                           {**run, **({k: first[k] for k in first if k != "message"}
                                      if first else {})}, None, "warning", "gpu")
            rank = 1
        if best is None or rank > best[0]:
            best = (rank, cand)
        if rank == 3:
            break
    if best is not None:
        return best[1]
    return Verdict("hardware", "unconfirmed",
                   f"unconfirmed: {_names(variants)} ran bit-exact with {op} packed by "
                   f"{', '.join(sorted(set(missing)))}, a map whose cell table is neither kept "
                   "in the evidence nor the map of any layout at hand (the catalog's or this "
                   "document's): the evidence cannot compare it with this one",
                   None, None, "warning", "gpu")


def _at(cex: Mapping[str, Any]) -> str:
    return (f"lane {cex['lane']} element {cex['element']} is at {show(cex['hardware'])} on the "
            f"hardware, this layout puts it at {show(cex['layout'])}")


def _dims(op: str, free: Sequence[str]) -> str:
    what = {"row": "rows", "col": "columns"}
    return " and ".join(f"its {what[n]} ({d})" for n, d in zip(("row", "col"), DIMS[op])
                        if n in free)


def _absorb(op: str, free: Sequence[str], other: Sequence[tuple[str, str, str]]) -> str:
    dims = {d for n, d in zip(("row", "col"), DIMS[op]) if n in free}
    who = [(f"the {o} this document states" if m else
            f"{'an' if o == 'A' else 'a'} {o} it does not state")
           for o, _x, m in other if dims & set(DIMS.get(o, ()))]
    return " or ".join(who) or "the other operands"


def _others(same: Sequence[tuple[str, str, str]], other: Sequence[tuple[str, str, str]]) \
        -> str:
    parts = [f"this document states {o} with another map ({m})" for o, _x, m in other if m]
    absent = [o for o, _x, m in other if not m]
    if absent:
        parts.append(f"this document does not state {' or '.join(absent)}")
    parts += [f"{o} as confirmed" for o, _x, _m in same]
    return ", ".join(parts) or "no other operand"


def _never_ran(ev: Any, variants: Sequence[Variant]) -> Verdict:
    runs = ev.runs_of(v.key for v in variants)
    sms = sorted({f.sm for f in ev.files})
    devices = ", ".join(f"sm_{s}" for s in sms) or "none"
    need = sorted({v.target for v in variants})
    results = sorted({r.result for r in runs if r.mode == "check"})
    if not runs:
        what = "no run of them"
    elif results == ["compiled-only"]:
        what = "only compiled (ptxas)"
    else:
        what = f"runs: {' / '.join(results) or 'discoveries'}, never a bit-exact match"
    they = "they need" if len(variants) > 1 else "it needs"
    return Verdict("hardware", "unconfirmed",
                   f"unconfirmed: no device of the evidence ran {_names(variants)} bit-exact "
                   f"({they} {', '.join(need)}; the evidence's devices: {devices}; {what}): "
                   "the evidence decides nothing about this map", None, None, "warning", "gpu")
