"""Block-scale factor layouts proved: every scale factor held once per selector pair.

For scale_A of ``.scale_vec::2X`` (16 x 2) and the selectors ``byte_id = 0, thread_id = 0``,
the holders are the 16 lanes with ``%laneid % 4`` in {0, 1}, each using bytes 0 and 1: 32
(lane, byte) pairs for the 32 cells.  ``scale-coverage`` enumerates them for every legal
selector pair and refutes with the cells: a rewrite ``row = groupID`` makes lanes 0 and 1
both hold (0, 0) (``{"selector": [0, 0], "a": {"lane": 0, "byte": 0}, "b": {"lane": 1,
"byte": 0}, "cell": [0, 0]}``) and leaves (8, 0) uncovered.  ``selector-range`` compares the
stated selector values with the ones the layout admits: a byte selector whose bytes are an
aligned group of ``.scale_vec`` bytes inside the register (0 or 2 for 2X), a thread selector
whose holders cover the matrix exactly.  ``register-budget`` checks the widths (four 8-bit
factors fill a ``.b32``; a holder's bytes fit it) and ``tile-shape`` the stated matrix
against the instruction (M x SFA_N, SFB_M x N, K cut into ``.scale_vec`` whole blocks).
``quad-locality`` relates scale_A to the A fragment (scale_B to B): the factor of every
element a lane holds comes from a lane of the same quad, for every selector pair.

Every map here has at most 32 x 4 points per selector, so enumeration is the proof.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..base.source import Finding, Span, error, warning
from ..base.variants import Shape
from ..model.block_scale import BYTE_BITS, REGISTER_BITS, SCALE_BITS, ScaleLayout, ScaleTables
from .verdicts import Core, Verdict

SCALE_OBLIGATIONS = ("scale-coverage", "selector-range", "register-budget", "tile-shape",
                     "quad-locality", "hardware")
# a document's spec tables, checked against the layouts (``prove_scale_tables``)
TABLE_OBLIGATIONS = ("tile-shape", "legal-forms", "selector-range", "hardware")
NO_DEVICE = ("not run: block-scaled mma.sync needs sm_120a and no lent device has it; the "
             "kernels are assembled with ptxas for sm_120a (compile-only)")


def faults_core(faults: Sequence[str], cex: Any = None, method: str = "table") -> Core:
    """What a list of table checks found, as one verdict: refuted with the faults joined
    (``"2 rows; the shape moves 4"``) and ``cex`` (``{"faults": faults}`` where none is
    given), else proved."""
    if faults:
        return Core("refuted", "; ".join(faults),
                    {"faults": list(faults)} if cex is None else cex, method=method)
    return Core("proved", method=method)


@dataclass(frozen=True)
class ScaleResult:
    """One scale layout and its verdicts (the keys of a layout in the JSON report)."""

    id: str
    instruction: str  # mma.block_scale
    span: Span
    verdicts: tuple[Verdict, ...]
    shape: str = ""
    types: tuple[str, ...] = ()
    tile: tuple[int, ...] = ()
    operand: str = ""  # scale_A | scale_B | scale_A/B (a document's tables)

    @property
    def ok(self) -> bool:
        return all(v.status in ("proved", "not-applicable") or v.severity == "warning"
                   for v in self.verdicts)

    def verdict(self, name: str) -> Verdict:
        for v in self.verdicts:
            if v.name == name:
                return v
        return Verdict(name, "not-applicable")


def _pair(h: tuple[int, int, int, int]) -> dict[str, int]:
    return {"lane": h[0], "byte": h[1]}


def exact_cover(lay: ScaleLayout, b: int, t: int) -> Core:
    """Do the holdings of selector pair (b, t) cover the scale matrix exactly once?"""
    rows, cols = lay.tile
    seen: dict[tuple[int, int], tuple[int, int, int, int]] = {}
    sel = [b, t]
    nbytes = REGISTER_BITS.get(lay.register_type, 32) * lay.registers // BYTE_BITS
    for h in lay.held(b, t):
        cell = (h[2], h[3])
        if h[1] >= nbytes:
            return Core("refuted", f"selectors (byte_id {b}, thread_id {t}): lane {h[0]} uses "
                        f"byte {h[1]}, past the {nbytes} bytes of its scale register",
                        {"selector": sel, "a": _pair(h), "cell": list(cell)},
                        method="enumeration")
        if not (0 <= cell[0] < rows and 0 <= cell[1] < cols):
            return Core("refuted", f"selectors (byte_id {b}, thread_id {t}): lane {h[0]} byte "
                        f"{h[1]} holds ({cell[0]}, {cell[1]}), outside the {rows} x {cols} "
                        "scale matrix", {"selector": sel, "a": _pair(h), "cell": list(cell)},
                        method="enumeration")
        if cell in seen:
            o = seen[cell]
            return Core("refuted", f"selectors (byte_id {b}, thread_id {t}): lane {o[0]} byte "
                        f"{o[1]} and lane {h[0]} byte {h[1]} both hold ({cell[0]}, {cell[1]})",
                        {"selector": sel, "a": _pair(o), "b": _pair(h), "cell": list(cell)},
                        method="enumeration")
        seen[cell] = h
    for r in range(rows):
        for c in range(cols):
            if (r, c) not in seen:
                return Core("refuted", f"selectors (byte_id {b}, thread_id {t}): no lane holds "
                            f"({r}, {c})", {"selector": sel, "uncovered": [r, c]},
                            method="enumeration")
    return Core("proved", method="enumeration")


def coverage_core(lay: ScaleLayout) -> Core:
    if not lay.holdings:
        return Core("refuted", "no legal selector value is stated", {"selector": None},
                    method="enumeration")
    for b in lay.byte_ids:
        for t in lay.thread_ids:
            c = exact_cover(lay, b, t)
            if c.status != "proved":
                return c
    return Core("proved", method="enumeration")


def admitted_selectors(lay: ScaleLayout) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(byte selectors, thread selectors) the layout admits: aligned groups of ``vec`` bytes
    inside the register; thread values 0..3 whose holders cover the matrix exactly (with the
    first stated byte selector)."""
    nbytes = REGISTER_BITS.get(lay.register_type, 32) * lay.registers // BYTE_BITS
    bytes_ok = tuple(b for b in range(nbytes) if b % lay.vec == 0 and b + lay.vec <= nbytes)
    threads_ok: list[int] = []
    if lay.byte_ids:
        threads_ok = [t for t in range(4)
                      if exact_cover(lay, lay.byte_ids[0], t).status == "proved"]
    return bytes_ok, tuple(threads_ok)


def selector_core(lay: ScaleLayout, stated_table: tuple[tuple[int, ...], tuple[int, ...]] | None
                  = None) -> Core:
    """The stated selector values equal the admitted ones (and the spec table's, when given)."""
    want_b, want_t = admitted_selectors(lay)
    faults = []
    if lay.byte_ids != want_b:
        faults.append(f"byte_id is stated {_fmt(lay.byte_ids)}; an aligned group of "
                      f"{lay.vec} byte{'s' if lay.vec > 1 else ''} in a .b32 register admits "
                      f"{_fmt(want_b)}")
    if lay.thread_ids != want_t:
        faults.append(f"thread_id is stated {_fmt(lay.thread_ids)}; the holders cover scale_"
                      f"{lay.operand} exactly for {_fmt(want_t)}")
    if stated_table is not None:
        tb, tt = stated_table
        if tb != lay.byte_ids or tt != lay.thread_ids:
            faults.append(f"the spec's table lists byte-id {_fmt(tb)} and thread-id {_fmt(tt)}; "
                          f"the layout holds every factor once for byte_id "
                          f"{_fmt(lay.byte_ids)} and thread_id {_fmt(lay.thread_ids)}")
    return faults_core(faults, {"stated": {"byte_id": list(lay.byte_ids),
                                           "thread_id": list(lay.thread_ids)},
                                "admitted": {"byte_id": list(want_b), "thread_id": list(want_t)}},
                       "enumeration")


def _fmt(vals: Sequence[int]) -> str:
    return "{" + ", ".join(str(v) for v in vals) + "}"


def budget_core(lay: ScaleLayout) -> Core:
    faults = []
    sbits = SCALE_BITS.get(lay.stype)
    rbits = REGISTER_BITS.get(lay.register_type, 0) * lay.registers
    if sbits is None:
        faults.append(f".{lay.stype} is not a scale type ({', '.join(SCALE_BITS)})")
    elif lay.elements * sbits != rbits:
        faults.append(f"{lay.elements} .{lay.stype} factors of {sbits} bits fill "
                      f"{lay.elements * sbits} bits, not the {rbits} of {lay.registers} "
                      f".{lay.register_type}")
    for (b, t), hs in lay.holdings:
        top = max((h[1] for h in hs), default=-1)
        if (top + 1) * BYTE_BITS > rbits:
            faults.append(f"selectors (byte_id {b}, thread_id {t}) use byte {top}, past the "
                          f"{rbits} bits of the register")
            break
        lanes = {h[0] for h in hs}
        per_lane = {sum(1 for h in hs if h[0] == ln) for ln in lanes}
        if per_lane and per_lane != {lay.vec}:
            faults.append(f"selectors (byte_id {b}, thread_id {t}): a holder uses "
                          f"{sorted(per_lane)} bytes; .scale_vec::{lay.vec}X is {lay.vec}")
            break
    return faults_core(faults)


def tile_core(lay: ScaleLayout) -> Core:
    sh = Shape.parse(lay.shape)
    if sh is None:
        return Core("refuted", f"{lay.shape} is not a shape", None, method="table")
    want = (sh.m, lay.vec) if lay.operand == "A" else (lay.vec, sh.n)
    faults = []
    if lay.tile != want:
        faults.append(f"scale_{lay.operand} is stated {lay.tile[0]} x {lay.tile[1]}; "
                      f"{lay.shape} with .scale_vec::{lay.vec}X makes it {want[0]} x {want[1]}")
    if sh.k % lay.vec:
        faults.append(f"K = {sh.k} is not {lay.vec} whole blocks")
    return faults_core(faults, {"stated": list(lay.tile), "expected": list(want)})


def locality_core(lay: ScaleLayout, fragment: dict[tuple[int, int, int], tuple[Any, ...]] | None,
                  k: int) -> Core:
    """Every element of the A (B) fragment -- (lane, element) at (row, col) of A, (k, n) of
    B -- has its scale factor, at (row, col // block) of scale_A ((k // block, n) of
    scale_B), supplied by a lane of its own quad, for every selector pair."""
    if fragment is None:
        return Core("not-applicable", f"the catalog has no {lay.operand} fragment of "
                    f"{lay.shape} to relate", method="enumeration")
    block = k // lay.vec
    arrays = _element_arrays(fragment, block, lay.operand)
    elements: list[tuple[Any, ...]] | None = None
    for (b, t), hs in lay.holdings:
        first = _first_off_quad(arrays, hs)
        if first == -1:
            continue  # every element's factor is held in its quad (all at once, numpy)
        if elements is None:
            elements = _elements(fragment, block, lay.operand)
        who = {(h[2], h[3]): h[0] for h in hs}
        for lane, i, r, c, cell in elements[first or 0:]:
            src = who.get(cell)
            if src is None or src // 4 != lane // 4:
                return Core("refuted", f"selectors (byte_id {b}, thread_id {t}): lane {lane}'s "
                            f"element {i} at ({r}, {c}) of {lay.operand} is scaled by ({cell[0]}, "
                            f"{cell[1]}), which " + ("no lane holds" if src is None else
                                                     f"lane {src} of another quad holds"),
                            {"selector": [b, t], "lane": lane, "element": i, "at": [r, c],
                             "scale": list(cell), "holder": src}, method="enumeration")
    return Core("proved", method="enumeration")


def _elements(fragment: dict[tuple[int, int, int], tuple[Any, ...]], block: int,
              operand: str) -> list[tuple[Any, ...]]:
    """Each element's (lane, element, row, col, its factor's cell), in (selector, lane,
    element) order, once."""
    elements = []
    for (_sel, lane, i), vals in sorted(fragment.items()):
        r, c = int(vals[0]), int(vals[1])
        elements.append((lane, i, r, c, (r, c // block) if operand == "A" else (r // block, c)))
    return elements


def _element_arrays(fragment: dict[tuple[int, int, int], tuple[Any, ...]], block: int,
                    operand: str) -> Any:
    """(lanes, factor rows, factor columns) of ``_elements`` as int64 arrays in the same
    order, made from the fragment's table at once; None where a value is not a small
    non-negative int (then the walk answers)."""
    import numpy as np
    if block <= 0 or not fragment:
        return None
    try:
        keys = np.array(list(fragment), dtype=np.int64)
        vals = np.array([v[:2] for v in fragment.values()], dtype=np.int64)
    except (OverflowError, TypeError, ValueError, IndexError):
        return None
    if keys.shape[1:] != (3,) or vals.shape != (len(keys), 2):
        return None
    order = np.lexsort((keys[:, 2], keys[:, 1], keys[:, 0]))  # as sorted() orders the keys
    r, c = vals[order, 0], vals[order, 1]
    a = np.stack([keys[order, 1], *((r, c // block) if operand == "A" else (r // block, c))])
    if a.min() < 0 or a.max() >= 1 << 20:
        return None
    return a[0], a[1], a[2]


def _first_off_quad(arrays: Any, hs: Sequence[tuple[Any, ...]]) -> int | None:
    """The index of the first element (of ``_element_arrays``) whose factor no holding of
    ``hs`` holds or a lane of another quad holds, -1 where there is none: the dict walk of
    ``locality_core`` at once, over arrays.  None where the arrays cannot say what the walk
    says (no arrays, a holding not of small non-negative ints, two holdings of one cell)."""
    import numpy as np

    from .repeats import first_repeat
    if arrays is None or not hs:
        return None
    lanes, rows, cols = arrays
    try:
        h = np.array([(x[0], x[2], x[3]) for x in hs], dtype=np.int64)
    except (OverflowError, TypeError, ValueError, IndexError):
        return None
    if h.ndim != 2 or h.shape[1] != 3 or h.min() < 0 or h.max() >= 1 << 20:
        return None
    height = int(max(h[:, 1].max(), rows.max())) + 1
    width = int(max(h[:, 2].max(), cols.max())) + 1
    if height * width > 1 << 22:
        return None
    at = h[:, 1] * width + h[:, 2]
    if first_repeat(at) is not None:  # a cell held twice: the dict keeps the last holder
        return None
    holder = np.full(height * width, -1, dtype=np.int64)
    holder[at] = h[:, 0]
    src = holder[rows * width + cols]
    bad = np.flatnonzero((src < 0) | (src // 4 != lanes // 4))
    return int(bad[0]) if len(bad) else -1


def _verdict(name: str, core: Core, span: Span) -> Verdict:
    return Verdict(name, core.status, core.message, core.cex, span, method=core.method)


def prove_scale(lay: ScaleLayout, fragment: dict[tuple[int, int, int], tuple[Any, ...]] | None
                = None, table: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
                ) -> tuple[ScaleResult, list[Finding]]:
    """Every obligation of one scale layout; findings for the refuted ones, on the line of the
    definition each is about."""
    findings = list(lay.faults)
    sh = Shape.parse(lay.shape)
    if lay.faults:
        verdicts = [Verdict(n, "error", "not checked: the program is incomplete", None, lay.span)
                    for n in SCALE_OBLIGATIONS[:-1]]
    else:
        lines = {"scale-coverage": lay.line_of("row" if lay.operand == "A" else "col"),
                 "selector-range": lay.line_of("byte_id"), "register-budget": lay.span,
                 "tile-shape": lay.span, "quad-locality": lay.line_of("holder")}
        cores = {"scale-coverage": coverage_core(lay), "selector-range": selector_core(lay, table),
                 "register-budget": budget_core(lay), "tile-shape": tile_core(lay),
                 "quad-locality": locality_core(lay, fragment, sh.k if sh else 0)}
        verdicts = [_verdict(n, cores[n], lines[n]) for n in SCALE_OBLIGATIONS[:-1]]
    verdicts.append(Verdict("hardware", "unconfirmed", NO_DEVICE, None, lay.span,
                            severity="warning"))
    findings.append(warning("hardware", lay.span, f"{lay.id}: {NO_DEVICE}", layout=lay.id))
    for v in verdicts:
        if v.status in ("refuted",) and v.span is not None:
            findings.append(error(f"block-scale-{v.name}", v.span, f"{lay.id}: {v.message}",
                                  counterexample=v.counterexample, layout=lay.id))
    types = (lay.stype,)
    return ScaleResult(lay.id, "mma.block_scale", lay.span, tuple(verdicts), lay.shape, types,
                       lay.tile, f"scale_{lay.operand}"), findings


def _shape_findings(tables: ScaleTables, layouts: Sequence[ScaleLayout]) -> list[Finding]:
    out: list[Finding] = []
    for vec, a, b, sp in tables.shapes:
        if a[1] != vec or b[0] != vec:
            out.append(error("block-scale-table", sp, f".scale_vec::{vec}X: the table's "
                             f"scale_A {a[0]} x {a[1]} and scale_B {b[0]} x {b[1]} do not cut K "
                             f"into {vec} blocks", counterexample={"scale_A": list(a),
                                                                   "scale_B": list(b)}))
        for lay in layouts:
            if lay.vec != vec:
                continue
            want = a if lay.operand == "A" else b
            got = tuple(x if isinstance(y, int) else y for x, y in zip(lay.tile, want))
            if got != tuple(want):
                out.append(error("block-scale-table", sp, f"{lay.id}: scale_{lay.operand} is "
                                 f"{lay.tile[0]} x {lay.tile[1]}; the table says {want[0]} x "
                                 f"{want[1]}", counterexample={"layout": list(lay.tile),
                                                               "table": list(want)}))
    return out


def _form_findings(tables: ScaleTables, layouts: Sequence[ScaleLayout]) -> list[Finding]:
    proved = {(lay.kind, lay.stype, lay.vec) for lay in layouts}
    return [error("block-scale-table", sp, f"the table allows .kind::{k} with .{s} and "
                  f".scale_vec::{v}X; no layout of that form is known",
                  counterexample={"form": [k, s, v]})
            for k, _t, s, v, sp in tables.forms if (k, s, v) not in proved]


def _selector_findings(tables: ScaleTables, layouts: Sequence[ScaleLayout]) -> list[Finding]:
    out: list[Finding] = []
    for vec, lists, sp in tables.selectors:
        for lay in layouts:
            if lay.vec != vec:
                continue
            want = (lists[0], lists[1]) if lay.operand == "A" else (lists[2], lists[3])
            core = selector_core(lay, want)
            if core.status == "refuted":
                out.append(error("block-scale-table", sp, f"{lay.id}: {core.message}",
                                 counterexample=core.cex, layout=lay.id))
    return out


def spec_table_findings(tables: ScaleTables, layouts: Sequence[ScaleLayout]) -> list[Finding]:
    """The spec's tables against the proved layouts: each scale matrix shape, each legal form
    and each selector value range; one error per contradiction, on the table row's line, with
    the values on both sides."""
    return [*_shape_findings(tables, layouts), *_form_findings(tables, layouts),
            *_selector_findings(tables, layouts)]


def prove_scale_tables(tables: ScaleTables, layouts: Sequence[ScaleLayout], document: str) \
        -> ScaleResult | None:
    """The spec tables of one document as one checked entry (None when it has none): its
    shapes (``tile-shape``), its legal forms (``legal-forms``) and its selector values
    (``selector-range``), each proved or refuted by the first contradiction."""
    spans: dict[str, list[Span]] = {
        "tile-shape": [r[-1] for r in tables.shapes],
        "legal-forms": [r[-1] for r in tables.forms],
        "selector-range": [r[-1] for r in tables.selectors]}
    every = [sp for sps in spans.values() for sp in sps]
    if not every:
        return None
    first = min(every, key=lambda sp: sp.line)
    verdicts = []
    for name, got in (("tile-shape", _shape_findings), ("legal-forms", _form_findings),
                      ("selector-range", _selector_findings)):
        stated = spans[name]
        if not stated:
            verdicts.append(Verdict(name, "not-applicable", "the document has no such table",
                                    None, first))
            continue
        fs = got(tables, layouts)
        if fs:
            verdicts.append(Verdict(name, "refuted", fs[0].message, fs[0].counterexample,
                                    fs[0].span, method="table"))
        else:
            verdicts.append(Verdict(name, "proved", "", None, stated[0], method="table"))
    verdicts.append(Verdict("hardware", "not-applicable", "a table is checked against the "
                            "proved layouts, not run", None, first))
    return ScaleResult(f"{document}:block-scale-tables", "mma.block_scale", first,
                       tuple(verdicts), "tables", (), (), "scale_A/B")


# ---- tcgen05.mma: what the scale-factor headings and figure captions state ---------------------


def _figures(nums: Sequence[int]) -> str:
    if len(nums) == 1:
        return f"Figure {nums[0]}"
    if list(nums) == list(range(nums[0], nums[0] + len(nums))):
        return f"Figures {nums[0]}-{nums[-1]}"
    return "Figures " + ", ".join(map(str, nums))


def prove_tcgen05_captions(lines: Sequence[Any], document: str) \
        -> tuple[ScaleResult | None, list[Finding]]:
    """The tcgen05 scale-factor sections' headings and captions (``TcScaleLine``; their
    layouts are figures only): each caption names its own matrix's selector (``SFB_ID`` for
    B: ``selector-names``), and each selector a K = 96 figure draws keeps its factors (one
    byte each, as many as the heading's "semantically equivalent to scale_vec::NX") inside
    the 4-byte word its sub-column is aligned to (``sub-column-fit``; where they run past it,
    the text does not say where the rest go: a warning naming the figures that show it)."""
    caps = [ln for ln in lines if ln.kind == "caption"]
    if not lines:
        return None, []
    first = lines[0].source.span(0)
    findings: list[Finding] = []
    wrong = [c for c in caps if c.facts["id"] is not None
             and c.facts["id_of"] != c.facts["matrix"]]
    if wrong:
        nums = [c.facts["figure"] for c in wrong]
        msg = (f"{_figures(nums)} ({len(wrong)} captions) draw scale factor "
               f"{wrong[0].facts['matrix']} but name the selector SF{wrong[0].facts['id_of']}_ID"
               f"; the matrix's own selector is SF{wrong[0].facts['matrix']}_ID")
        names = Verdict("selector-names", "refuted", msg, {"figures": nums},
                        wrong[0].source.span(0), method="text")
        findings.append(error("block-scale-caption", wrong[0].source.span(0), msg,
                              counterexample={"figures": nums}))
    else:
        names = Verdict("selector-names", "proved", "", None, first, method="text")
    past: list[tuple[Any, list[Any]]] = []
    heading = None
    for ln in lines:
        if ln.kind == "heading":
            heading = ln
            continue
        f = ln.facts
        if heading is None or not heading.facts["factors"] or f["id"] is None:
            continue
        n = heading.facts["factors"]
        if f["id"] + n > 4:
            if past and past[-1][0] is heading:
                past[-1][1].append(ln)
            else:
                past.append((heading, [ln]))
    for head, caps_past in past:
        n = head.facts["factors"]
        ids = sorted({c.facts["id"] for c in caps_past})
        nums = [c.facts["figure"] for c in caps_past]
        msg = (f"scale factor {head.facts['matrix']} with {'/'.join(head.facts['forms'])} at "
               f"K = {head.facts['k'][0]}: {n} one-byte factors a row from byte "
               f"{', '.join(map(str, ids))} run past the 4-byte word their sub-column is "
               f"aligned to; the text does not say which column holds the rest "
               f"({_figures(nums)} draw it)")
        findings.append(warning("block-scale-fit", head.source.span(0), msg,
                                counterexample={"factors": n, "selector": ids,
                                                "figures": nums}))
    fit = (Verdict("sub-column-fit", "refuted", findings[-1].message,
                   findings[-1].counterexample, findings[-1].span, severity="warning",
                   method="text") if past else
           Verdict("sub-column-fit", "proved", "", None, first, method="text"))
    hw = Verdict("hardware", "unconfirmed", "not run: tcgen05.mma needs sm_100a and no lent "
                 "device has it", None, first, severity="warning")
    return ScaleResult(f"{document}:tcgen05-scale-factor-figures", "tcgen05.block_scale", first,
                       (names, fit, hw), "figures", (), (), "scale_A/B"), findings
