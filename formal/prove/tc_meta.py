"""The sparsity metadata of ``tcgen05.mma.sp`` proved: every field of the metadata matrix in
its own bits of tensor memory, for every stated selector value, and exactly the selector
values the layout admits stated legal.

For ``.kind::f16`` at M = 128 (128 rows x 8 chunks, a 4-bit field each, in 2 columns of 128
lanes) and ``sel = 0``, the 1024 fields fill the 128 words of column 0, each bit once:
``metadata-coverage`` enumerates the fields of every stated selector and refutes with the two
that share a bit (a rewrite ``bit = 4 * (chunk % 4)`` puts rows 0 and 8's chunk 0 both on
lane 0, column 0, bits 0-3: ``{"selector": 0, "a": [0, 0], "b": [8, 0], "place": {"lane": 0,
"column": 0, "bit": 0}}``), or the one that leaves the word (``bit + width > 32``), the stated
lanes or columns.  ``selector-range`` compares the stated values with the admitted ones --
those of the descriptor's two-bit field that place every field once inside the stated
columns -- so ``sel = {0, 1, 2}`` is refuted (2 reads column 2, past the two).
For the 8-bit and block-scaled kinds the text itself fixes the selector ("must be 0", "is
assumed to be 0"): there ``selector-range`` compares the stated values with the text's.
``register-budget`` checks the stated shape against the form (M rows; the kind's sparse K;
K / chunk fields a row of the kind's granularity; the field as wide as a chunk's indices;
each field held once for each lane group of D -- twice for a .ws form of M = 64, four times
at M = 32 --; the stated values use exactly the stated columns, full words), and
``lane-partition`` that a row's fields sit in the 32-lane partition of its row of D (the warp
of lanes 32w..32w+31 reads rows 32w..32w+31; a .ws form's copy c of row r: lane r + M * c).
Every map here has at most 4 x 128 x 32 points: enumeration is the proof.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from typing import Any

from ..base.matrix_variants import TCGEN05_SPARSITY
from ..base.source import Finding, error, warning
from ..base.variants import SPARSITY
from ..model.tc_meta import SELECTOR_VALUES, TMEM_LANES, WORD_BITS, Field, MetaLayout
from .block_scale import ScaleResult, faults_core
from .repeats import first_repeat, on_table, placed_array, placements_hash
from .verdicts import Core, Verdict

META_OBLIGATIONS = ("metadata-coverage", "selector-range", "register-budget", "lane-partition",
                    "hardware")
# What the text's sentences fix per kind (9.7.16.10.8.4.5-6): "The value of the sparsity
# selector must be 0 for .kind::i8 and .kind::f8f6f4, is assumed to be 0 for .kind::mxf8f6f4,
# .kind::mxf4 and .kind::mxf4nvf4".  For .kind::tf32 and .kind::f16 it draws figures only.
TEXT_SELECTORS: dict[str, tuple[int, ...]] = {
    "i8": (0,), "f8f6f4": (0,), "mxf8f6f4": (0,), "mxf4": (0,), "mxf4nvf4": (0,)}
# K of a sparse tcgen05.mma.sp (twice the dense K: 256 bits of A a row, stored as 128): A's
# element is 32 bits for tf32, 16 for f16, an 8-bit container for f8f6f4, mxf8f6f4 and i8,
# and 4 bits for mxf4 and mxf4nvf4.
SPARSE_K: dict[str, int] = {"tf32": 16, "f16": 32, "f8f6f4": 64, "mxf8f6f4": 64, "i8": 64,
                            "mxf4": 128, "mxf4nvf4": 128}
META_NO_DEVICE = ("not run: tcgen05.mma.sp needs sm_100a and no lent device has it; the text "
                  "gives the metadata's placement as figures only (this layout follows CuTe)")


def _place(p: Field) -> dict[str, int]:
    return {"lane": p[2], "column": p[3], "bit": p[4]}


def _fields(ps: Sequence[int]) -> str:
    return ", ".join(str(v) for v in ps)


def _cell(lay: MetaLayout, p: Field) -> list[int]:
    """A field's (row, chunk), and its copy where the form holds each field more than once."""
    return [p[0], p[1], p[5]] if lay.copies > 1 else [p[0], p[1]]


def _named(cell: list[int]) -> str:
    copy = f" (copy {cell[2]})" if len(cell) > 2 else ""
    return f"row {cell[0]}, chunk {cell[1]}{copy}"


def meta_placement_core(lay: MetaLayout, s: int) -> Core:
    """Do the fields at selector ``s`` each sit inside the stated lanes, columns and word,
    no two on one bit?  Every field is checked, all at once (numpy): the first field, in the
    layout's order, that leaves its bounds or holds a bit an earlier field holds (its lowest
    such bit) is the counterexample."""
    import numpy as np
    placed = lay.placed(s)
    if not placed:
        return Core("proved", method="enumeration")
    p = placed_array(lay, s)
    bounds = (("lane", 2, lay.lanes), ("column", 3, lay.columns),
              ("bit", 4, WORD_BITS - lay.width + 1))
    outside = np.stack([(p[:, k] < 0) | (p[:, k] >= top) for _n, k, top in bounds],
                       axis=-1).astype(bool)
    bad = np.flatnonzero(outside.any(axis=1))
    first = int(bad[0]) if len(bad) else len(p)
    # the fields before the first one out of bounds, each as its bits, field by field
    q = p[:first].astype(np.int64)
    bits = q[:, 4, None] + np.arange(lay.width, dtype=np.int64)[None, :]
    again = first_repeat(((q[:, 2, None] * lay.columns + q[:, 3, None]) * WORD_BITS
                          + bits).reshape(-1))
    if again is not None:
        i, j = again[0] // lay.width, again[1] // lay.width
        cell, other, at = _cell(lay, placed[i]), _cell(lay, placed[j]), placed[i]
        b = at[4] + again[0] % lay.width
        return Core("refuted", f"sel {s}: the fields of {_named(other)} and "
                    f"{_named(cell)} both hold lane {at[2]}, column {at[3]}, bit {b}",
                    {"selector": s, "a": other, "b": cell,
                     "place": {"lane": at[2], "column": at[3], "bit": b},
                     "name": "bit"}, method="enumeration")
    if first == len(p):
        return Core("proved", method="enumeration")
    at, cell = placed[first], _cell(lay, placed[first])
    name, k, top = bounds[int(np.argmax(outside[first]))]
    where = (f"bits {at[4]}-{at[4] + lay.width - 1}, past the {WORD_BITS}-bit word"
             if name == "bit" else f"{name} {at[k]}, outside the {top} {name}s")
    return Core("refuted", f"sel {s}: the field of {_named(cell)} lands on {where}",
                {"selector": s, "a": cell, "place": _place(at), "name": name},
                method="enumeration")


def meta_placement_cores(lay: MetaLayout) -> dict[int, Core]:
    """``meta_placement_core`` at each value of the two-bit field that ``metadata-coverage``
    (the stated values) or ``selector-range`` (all four, where the text does not fix them)
    reads, each evaluated once."""
    every = lay.kind not in TEXT_SELECTORS
    asked = tuple(s for s in range(SELECTOR_VALUES) if every or s in lay.sels)
    # the proved cores, once a placement table and the fields the core reads
    # (``repeats.on_table``); a value not proved is asked again, which names its fault
    proved = dict(on_table(lay, "meta-placed", (asked, lay.lanes, lay.columns, lay.width,
                                                lay.copies),
                           lambda: tuple((s, c) for s in asked
                                         if (c := meta_placement_core(lay, s)).status
                                         == "proved")))
    return {s: proved.get(s) or meta_placement_core(lay, s) for s in asked}


def admitted_meta_selectors(lay: MetaLayout, cores: Mapping[int, Core] | None = None) \
        -> tuple[int, ...]:
    """The values of the two-bit selector field that place every field once inside the
    stated lanes and columns."""
    cores = {} if cores is None else cores
    return tuple(s for s in range(SELECTOR_VALUES)
                 if (cores[s] if s in cores else meta_placement_core(lay, s)).status
                 == "proved")


def meta_selector_core(lay: MetaLayout, cores: Mapping[int, Core] | None = None) -> Core:
    """The stated selector values are those the text fixes for the kind (``TEXT_SELECTORS``),
    or, where it draws figures only, those the placement admits."""
    text = TEXT_SELECTORS.get(lay.kind)
    if text is not None:
        if tuple(lay.sels) == text:
            return Core("proved", method="table")
        return Core("refuted", f"the stated sel {{{_fields(lay.sels)}}}; the text says the "
                    f"selector must be (or is assumed to be) {{{_fields(text)}}} for "
                    f".kind::{lay.kind}", {"stated": list(lay.sels), "text": list(text)},
                    method="table")
    want = admitted_meta_selectors(lay, cores)
    if tuple(lay.sels) == want:
        return Core("proved", method="enumeration")
    return Core("refuted", f"the stated sel {{{_fields(lay.sels)}}}; the layout admits "
                f"{{{_fields(want)}}} (values of the two-bit field that place every field "
                f"once in the {lay.columns} columns)",
                {"stated": list(lay.sels), "admitted": list(want)}, method="enumeration")


def meta_budget_core(lay: MetaLayout) -> Core:
    faults = []
    row = TCGEN05_SPARSITY.get(lay.kind)
    if row is None:
        return Core("refuted", f".kind::{lay.kind} is not a kind of tcgen05.mma.sp "
                    f"({', '.join(TCGEN05_SPARSITY)})", {"kind": lay.kind}, method="table")
    sp = SPARSITY[row]
    if lay.rows != lay.m:
        faults.append(f"{lay.rows} rows; M = {lay.m}")
    if lay.k != SPARSE_K[lay.kind]:
        faults.append(f"K = {lay.k}; a sparse .kind::{lay.kind} has K = {SPARSE_K[lay.kind]}")
    if lay.chunks * sp.chunk != lay.k:
        faults.append(f"{lay.chunks} fields a row of {sp.chunk}-element chunks cover "
                      f"{lay.chunks * sp.chunk} of K = {lay.k}")
    if lay.width != sp.slots * sp.index_bits:
        faults.append(f"{lay.width}-bit fields; a chunk has {sp.slots} indices of "
                      f"{sp.index_bits} bits")
    if lay.copies != _d_copies(lay):
        faults.append(f"each field held {lay.copies} time(s); a{' .ws' if _ws(lay) else ''} "
                      f"form of M = {lay.m} keeps D in {_d_copies(lay)} lane group(s)")
    if lay.lanes > TMEM_LANES:
        faults.append(f"{lay.lanes} lanes: tensor memory has {TMEM_LANES}")
    for s in lay.sels:
        cols = _columns(lay, s)
        need = lay.rows * lay.chunks * lay.width * lay.copies
        if need != len(cols) * lay.lanes * WORD_BITS:
            faults.append(f"sel {s}: {need} bits of fields in {len(cols)} column(s) of "
                          f"{lay.lanes} {WORD_BITS}-bit words")
            break
    used = set().union(*(_columns(lay, s) for s in lay.sels))
    if used and len(used) != lay.columns:
        faults.append(f"the stated selector values use {len(used)} column(s); the metadata "
                      f"is stated to take {lay.columns}")
    return faults_core(faults)


def _columns(lay: Any, s: int) -> set[int]:
    """The tensor-memory columns (a place's fourth number) of ``lay``'s places at selector
    ``s``, from the array (``placed_array``): the tuples are never built for it."""
    p = placed_array(lay, s)
    return set(p[:, 3].tolist()) if len(p) else set()


def _ws(lay: MetaLayout) -> bool:
    return lay.instruction == "tcgen05.mma.ws.sp"


def _d_copies(lay: MetaLayout) -> int:
    """The lane groups D of the form takes: a .ws form of M < 128 keeps row r in lanes
    r + M * copy (Layouts E and G), every other form once."""
    return TMEM_LANES // lay.m if _ws(lay) and lay.m in (32, 64) else 1


def meta_partition_core(lay: MetaLayout, s: int) -> Core:
    """Each row's fields at selector ``s`` sit in the 32-lane partition of that row of D:
    lane r at M = 128; lane r + M * copy for a .ws form of M = 64 or 32, whose D keeps row r
    in each of its 128 / M lane groups."""
    if lay.m != TMEM_LANES and not (_ws(lay) and lay.m in (32, 64)):
        return Core("not-applicable", f"M = {lay.m}: only M = 128's D and the .ws forms' put "
                    "row r in lane r (+ M * copy)")
    import numpy as np
    placed = lay.placed(s)
    p = placed_array(lay, s) if placed else np.zeros((0, 6), dtype=np.int64)
    d_lane = p[:, 0] + lay.m * p[:, 5]
    bad = np.flatnonzero((p[:, 2] // 32 != d_lane // 32).astype(bool))
    if len(bad):
        at = placed[int(bad[0])]
        d = at[0] + lay.m * at[5]
        return Core("refuted", f"sel {s}: the field of {_named(_cell(lay, at))} sits in "
                    f"lane {at[2]}, partition {at[2] // 32}; its row of D is in lane "
                    f"{d}, partition {d // 32}",
                    {"selector": s, "a": _cell(lay, at), "place": _place(at),
                     "name": "lane"}, method="enumeration")
    return Core("proved", method="enumeration")


# ---- the hardware obligation: tcgen05.mma.sp runs in the evidence ---------------------------


def meta_hash(lay: MetaLayout) -> str:
    """The hash a run's evidence names the metadata layout by (``layout_hashes["meta"]``): the
    cell-table hash of every field at each stated selector, as ``writers.export_meta`` writes
    it into the record's ``map_hash`` (a test holds the two equal)."""
    from ..base.hashes import cell_table_hash_of_tuples
    names = ("sel", "row", "chunk", "lane", "column", "bit", "copy")
    label = ("tcgen05.sp_meta", f"m{lay.m}", lay.id, "fields")
    fast = placements_hash(label, names, lay, lay.sels, range(6))
    if fast is not None:  # written from the arrays
        return fast
    rows = [[s, *f] for s in lay.sels for f in placed_array(lay, s).tolist()]
    return cell_table_hash_of_tuples(*label, names, rows)


@cache
def _sp_rows() -> dict[tuple[str, int], list[str]]:
    """The tcgen05.mma.sp rows of ``ptxlayout gpu`` by the (metadata layout, selector) they
    place their metadata by (``base.matrix_variants.meta_id``), listed once a process."""
    from ..base.matrix_variants import TCGEN05_MMA_SP_VARIANTS, issued_ws, meta_id
    rows: dict[tuple[str, int], list[str]] = {}
    for v in TCGEN05_MMA_SP_VARIANTS:
        rows.setdefault((meta_id(v.kind, v.dims.m, issued_ws(v)), v.selector), []).append(v.key)
    return rows


@cache
def _sp_plants() -> tuple[tuple[str, str], ...]:
    """(row, planted edit) of every experiment the tcgen05.mma.sp rows owe on an sm_100
    device (``execute.tcgen05_mma.tc_mma_tasks``), listed once a process."""
    from ..execute.runs import Job
    from ..execute.tcgen05_mma import tc_mma_tasks
    return tuple((t.key, t.plant or "") for t in tc_mma_tasks(Job((), only="tcgen05.mma.sp"),
                                                              100) if t.mode == "experiment")


def meta_hardware(lay: MetaLayout, s: int, evidence: Any, h: str | Callable[[], str]) \
        -> Verdict:
    """The ``hardware`` obligation of ``lay`` at selector ``s`` from the evidence's sm_100 runs
    of the ``tcgen05.mma.sp`` rows that place their metadata by it at ``s``
    (``execute.tcgen05_sp``): ``proved`` when every such check matched with the metadata placed
    by this layout (its hash ``h``) and each planted edit owed on these rows mismatched;
    ``refuted`` by the first check that mismatched, with its first differing cell of D;
    ``unconfirmed`` when the runs placed the metadata by another map (stale), when a row or an
    owed plant is missing or a plant matched, and -- with no run at all -- for want of a
    device (``META_NO_DEVICE``)."""
    from .run_judge import judge_runs
    tasks = _sp_rows().get((lay.id, s), [])
    j = judge_runs(evidence, tasks, "meta", h,
                   lambda: [(k, p) for k, p in _sp_plants() if k in tasks])
    owed = j.owed  # (listed only where a run is there to judge)
    h = j.hash  # (written only where a run is there to compare it with)
    if not j.runs:  # (no row places the block-scaled kinds' or .ws M = 128's metadata yet)
        return Verdict("hardware", "unconfirmed", META_NO_DEVICE, None, lay.span,
                       severity="warning")
    if j.bad is not None:
        bad = j.bad
        cell = list(bad.d_cells[0]) if bad.d_cells else None
        return Verdict("hardware", "refuted", f"{bad.key} on {bad.file.where}, the metadata "
                       f"placed by this layout at selector {s}: {bad.detail[:300]}",
                       {"variant": bad.key, "selector": s, "hash": h, "d_cell": cell,
                        "detail": bad.detail}, lay.span, "error", "gpu")
    if j.status == "none":
        old = j.runs[-1]
        return _meta_unconfirmed(lay, f"stale: the evidence's {len(j.runs)} runs of its rows "
                                 f"(the last on {old.file.where}) placed the metadata by "
                                 f"another map ({old.layout_hashes.get('meta', '?')[:12]}..., "
                                 f"now {h[:12]}...): the layout changed since; run 'ptxlayout "
                                 f"gpu --only tcgen05.mma.sp' on an sm_100a device again")
    if j.status == "missing":
        return _meta_unconfirmed(lay, j.missing_message("rows"))
    if j.status == "blind":
        return _meta_unconfirmed(lay, j.blind_message("row"))
    return Verdict("hardware", "proved",
                   f"confirmed on {j.checks[-1].file.where}: {len(tasks)} of {len(tasks)} "
                   f"tcgen05.mma.sp rows with the metadata placed by this layout at selector {s} "
                   f"bit-exact ({sum(r.trials for r in j.checks)} trials)"
                   + (f"; the planted edit {owed[0][1]} mismatched" if owed else
                      "; no planted edit is owed on these rows"), None, None, "error", "gpu")


def _meta_unconfirmed(lay: MetaLayout, why: str) -> Verdict:
    return Verdict("hardware", "unconfirmed", why, None, lay.span, severity="warning")


def prove_meta(lay: MetaLayout, evidence: Any = None) \
        -> tuple[list[ScaleResult], list[Finding]]:
    """Every obligation of one metadata layout, one result a stated selector value (id
    ``tcgen05.sp_meta.m128.f16.sel0``); an error finding for each refuted obligation, on the
    line of the definition it is about (those of the whole layout -- ``selector-range``,
    ``register-budget`` -- once).  With ``evidence`` (an ``EvidenceSet``) the hardware
    obligation is judged by its runs (``meta_hardware``)."""
    findings = list(lay.faults)
    judged = hasattr(evidence, "runs_of") and not lay.faults
    h = cache(partial(meta_hash, lay))  # written once, and only where a run reads it
    hw = {s: meta_hardware(lay, s, evidence, h) if judged else
          Verdict("hardware", "unconfirmed", META_NO_DEVICE, None, lay.span, severity="warning")
          for s in lay.sels or (0,)}
    findings += [warning("hardware", lay.span, f"{lay.selector_id(s)}: {v.message}",
                         layout=lay.selector_id(s)) for s, v in hw.items()
                 if v.status == "unconfirmed"]
    results = []
    whole: dict[str, Core] = {}
    placements: dict[int, Core] = {}
    if not lay.faults:
        placements = meta_placement_cores(lay)
        whole = {"selector-range": meta_selector_core(lay, placements),
                 "register-budget": meta_budget_core(lay)}
    for s in lay.sels or (0,):
        if lay.faults:
            verdicts = [Verdict(n, "error", "not checked: the program is incomplete", None,
                                lay.span) for n in META_OBLIGATIONS[:-1]]
        else:
            cover = placements[s] if s in placements else meta_placement_core(lay, s)
            cores = {**whole, "metadata-coverage": cover,
                     "lane-partition": meta_partition_core(lay, s)}
            lines = {"metadata-coverage": lay.line_of((cover.cex or {}).get("name", "bit")),
                     "selector-range": lay.line_of("sel"), "register-budget": lay.span,
                     "lane-partition": lay.line_of("lane")}
            verdicts = [Verdict(n, cores[n].status, cores[n].message, cores[n].cex, lines[n],
                                method=cores[n].method) for n in META_OBLIGATIONS[:-1]]
        verdicts.append(hw[s])
        sid = lay.selector_id(s)
        for v in verdicts:
            if v.status != "refuted" or v.span is None or (v.name in whole and s != lay.sels[0]):
                continue
            findings.append(error(v.name, v.span, f"{sid}: {v.message}",
                                  counterexample=v.counterexample, layout=sid))
        results.append(ScaleResult(sid, lay.instruction, lay.span, tuple(verdicts),
                                   f"m{lay.m}k{lay.k}", (lay.kind,), (lay.rows, lay.chunks),
                                   "metadata"))
    return results, findings
