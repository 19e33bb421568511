"""Block-scale factors of ``tcgen05.mma`` proved: every factor in its own tensor-memory byte,
for every legal scale factor ID, and exactly the IDs the layout admits stated legal.

For scale_A of ``.scale_vec::2X`` (128 x 2 factors in 4 columns of 32 lanes, half-word
aligned) and ``sf_id = 2``, the 256 factors land on bytes 2 and 3 of the 4 x 32 words, each
byte once: ``scale-coverage`` enumerates the placements of every stated ID and refutes with
the two factors that share a byte (a rewrite ``column = row / 64`` puts (0, 0) and (32, 0)
both on lane 0, column 0, byte 2: ``{"selector": 2, "a": [0, 0], "b": [32, 0], "place":
{"lane": 0, "column": 0, "byte": 2}}``) or the one that lands outside the stated columns.
``selector-range`` compares the stated IDs with the admitted ones -- those of the two-bit
field that are multiples of the stated alignment and place every factor once -- so
``sf_id = {0, 1}`` is refuted (1 is not half-word aligned).  ``register-budget`` checks the
widths (one 8-bit factor a byte; the stated IDs use exactly the stated columns),
``tile-shape`` the stated matrices against the form (M x K/block, K/block x N, the block
size of the form's legal row) and ``sub-column-fit`` warns where a row's factors run past the
word their sub-column starts in while fewer words would hold them (K = 96: the text does not
say where those go).  ``scale-coverage`` also holds each factor to the data path of D
(``datapath_letter``): with a pair, row r of scale_A in the CTA whose half of D holds row r
(a rewrite ``cta = 1 - row / 64`` at M = 128 puts row 0 in CTA 1: refuted with the cell and
``{"data_path": {"layout": "B", "cta": 0}}``), all of scale_B in each CTA, and where Layout B
splits D's columns between the two 64-lane halves, each column's factor in its half.  Every
map here has at most 8 x 256 points per ID: enumeration is the proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache, partial
from typing import Any

from ..base.matrix_variants import TCGEN05_SCALE_FORMS
from ..base.source import Finding, error, warning
from ..model.block_scale import SCALE_BITS
from ..model.tc_scale import SF_ID_VALUES, WORD_BYTES, TcScaleLayout
from .block_scale import ScaleResult, faults_core
from .repeats import distinct, first_repeat, on_table, placed_array, placements_hash
from .verdicts import Core, Verdict

TC_SCALE_OBLIGATIONS = ("scale-coverage", "selector-range", "register-budget", "tile-shape",
                        "sub-column-fit", "hardware")
TC_NO_DEVICE = ("not run: block-scaled tcgen05.mma needs sm_100a and no lent device has it; "
                "the kernels are assembled with ptxas for sm_100a (compile-only)")


def _place(p: tuple[int, ...]) -> dict[str, int]:
    """Where a factor sits; the CTA named only where a pair issues the mma, the half of the
    tensor memory only where it is not the first."""
    at = {"lane": p[2], "column": p[3], "byte": p[4]}
    if len(p) > 6 and p[6] != 0:
        at = {"half": p[6], **at}
    return at if len(p) < 6 or p[5] == 0 else {"cta": p[5], **at}


def datapath_letter(lay: TcScaleLayout) -> str:
    """The data-path layout (PTX 9.7.16.10.5) that keeps D for this form: A (M = 256), B (M =
    128, a pair, dense A), C (the same, sparse A), D (M = 128, one CTA), F (M = 64)."""
    if lay.cta_group > 1:
        return "A" if lay.m == 256 else ("C" if lay.sparse else "B")
    return "D" if lay.m == 128 else "F"


def _where_d(lay: TcScaleLayout, p: Any) -> tuple[Any, Any, Any]:
    """Each factor of the placements ``p`` (an array, a row each) against the data path of D:
    (which: 0 where it agrees, 1 the CTA, 2 the half; what it is in; the one D's row or column
    of it is in, -1: any but a stated one).  With a pair, row r of scale_A belongs in the CTA
    whose half of D holds row r (r / (M / 2)); every CTA's D spans every column of B, so each
    holds all of scale_B (its program states no ``cta``).  Layout B keeps columns n < N / 2 of
    D in lanes 0-63 and the rest in 64-127, so a ``half`` of scale_B is ``n / (N / 2)``; every
    other data path keeps each row and column in all four partitions, where the factor is
    copied (no ``half``)."""
    import numpy as np
    which = np.zeros(len(p), dtype=np.int64)
    got, want = np.zeros_like(which), np.full_like(which, -1)
    if lay.states("half"):
        if lay.operand == "B" and datapath_letter(lay) == "B":
            want = p[:, 1] // (lay.n // 2)
            which = np.where(p[:, 6] != want, 2, 0)
        else:
            which = np.full_like(which, 2)
        got = p[:, 6]
    if lay.cta_group > 1 and (lay.operand == "A" or lay.states("cta")):
        cta = (p[:, 0] // (lay.m // lay.cta_group) if lay.operand == "A"
               else np.full_like(which, -1))
        off = (p[:, 5] != cta) if lay.operand == "A" else np.ones(len(p), dtype=bool)
        which, got, want = (np.where(off, 1, which), np.where(off, p[:, 5], got),
                            np.where(off, cta, want))
    return which, got, want


def _d_message(lay: TcScaleLayout, s: int, p: tuple[int, ...],
               what: tuple[str, int, int | None]) -> str:
    name, got, want = what
    dp = datapath_letter(lay)
    if lay.operand == "A":
        return (f"sf_id {s}: row {p[0]} of scale_A sits in CTA {got}; Layout {dp} keeps row "
                f"{p[0]} of D in CTA {want} (row / {lay.m // lay.cta_group})")
    if name == "cta":
        return (f"sf_id {s}: column {p[1]} of scale_B sits in CTA {got} only; Layout {dp} "
                "gives each CTA of the pair every column of D, so each holds all of scale_B "
                "(a program states no cta)")
    if want is None:
        return (f"sf_id {s}: column {p[1]} of scale_B sits in half {got} only; Layout {dp} "
                "keeps every column of D in all four partitions, where the factor is copied "
                "(a program states no half)")
    return (f"sf_id {s}: column {p[1]} of scale_B sits in half {got} (lanes {64 * got}-"
            f"{64 * got + 63}); Layout {dp} keeps column {p[1]} of D in lanes {64 * want}-"
            f"{64 * want + 63} (col / {lay.n // 2})")


def tc_placement_core(lay: TcScaleLayout, s: int) -> Core:
    """Do the factors at ID ``s`` each sit inside the stated lanes, columns and word, no two
    on one byte, in the CTA and half of the tensor memory where the data path keeps their
    row (column) of D?  Every factor is checked, all at once (numpy); the first one, in the
    layout's order, that fails is the counterexample, checked in this order: the bounds, the
    data path, a byte an earlier factor holds."""
    import numpy as np
    placed = lay.placed(s)
    if not placed:
        return Core("proved", method="enumeration")
    p = placed_array(lay, s)
    halves = 2 if lay.states("half") else 1
    bounds = (("cta", 5, lay.cta_group), ("half", 6, halves), ("lane", 2, lay.lanes),
              ("column", 3, lay.columns), ("byte", 4, WORD_BYTES))
    outside = np.stack([(p[:, k] < 0) | (p[:, k] >= top) for _n, k, top in bounds],
                       axis=-1).astype(bool)
    off, got_d, want_d = _where_d(lay, p)
    bad = np.flatnonzero(outside.any(axis=1) | (off != 0))
    first = int(bad[0]) if len(bad) else len(p)
    # up to the first bad factor every place is in bounds: one number a place finds repeats
    q = p[:first].astype(np.int64)
    again = first_repeat((((q[:, 5] * halves + q[:, 6]) * lay.lanes + q[:, 2]) * lay.columns
                          + q[:, 3]) * WORD_BYTES + q[:, 4])
    if again is not None:
        at, other = placed[again[0]], placed[again[1]]
        where = f"CTA {at[5]}, " if lay.cta_group > 1 else ""
        where += f"half {at[6]}, " if halves > 1 else ""
        return Core("refuted", f"sf_id {s}: factors ({other[0]}, {other[1]}) and "
                    f"({at[0]}, {at[1]}) of scale_{lay.operand} both sit on {where}lane "
                    f"{at[2]}, column {at[3]}, byte {at[4]}",
                    {"selector": s, "a": [other[0], other[1]], "b": [at[0], at[1]],
                     "place": _place(at), "name": "byte"}, method="enumeration")
    if first == len(p):
        return Core("proved", method="enumeration")
    at = placed[first]
    cell = [at[0], at[1]]
    if outside[first].any():
        name, k, top = bounds[int(np.argmax(outside[first]))]
        return Core("refuted", f"sf_id {s}: factor ({cell[0]}, {cell[1]}) of scale_"
                    f"{lay.operand} lands on {name} {at[k]}, outside the {top} "
                    f"{name}s", {"selector": s, "a": cell, "place": _place(at),
                                 "name": name}, method="enumeration")
    name = "cta" if off[first] == 1 else "half"
    want = None if want_d[first] == -1 else int(want_d[first])
    what = (name, int(got_d[first]), want)
    return Core("refuted", _d_message(lay, s, at, what),
                {"selector": s, "a": cell, "place": _place(at), "name": name,
                 "data_path": {"layout": datapath_letter(lay), name: want}},
                method="enumeration")


def _placed_once(lay: TcScaleLayout, ids: Sequence[int]) -> set[int]:
    """The IDs of ``ids`` at which ``tc_placement_core`` is proved, found for every ID in one
    pass over all their placements (numpy): no factor outside its bounds, none off the data
    path's CTA or half, no two on one byte.  An ID left out (a fault, or placements past
    int64) is asked of ``tc_placement_core`` itself, which names the first fault.  Once a
    table and the fields the check reads (``repeats.on_table``)."""
    facts = (tuple(ids), lay.states("half"), lay.states("cta"), lay.operand, lay.m, lay.n,
             lay.cta_group, lay.sparse, lay.lanes, lay.columns)
    return set(on_table(lay, "placed", facts, lambda: frozenset(_placed_at(lay, ids))))


def _placed_at(lay: TcScaleLayout, ids: Sequence[int]) -> set[int]:
    """``_placed_once``'s pass."""
    import numpy as np
    tables = [(s, placed_array(lay, s)) for s in ids]
    ok = {s for s, p in tables if not len(p)}
    tables = [(s, p) for s, p in tables if len(p) and p.dtype.kind == "i" and p.ndim == 2]
    if not tables:
        return ok
    p = np.concatenate([t for _s, t in tables]).astype(np.int64)
    which = np.repeat(np.arange(len(tables)), [len(t) for _s, t in tables])
    halves = 2 if lay.states("half") else 1
    tops = ((5, lay.cta_group), (6, halves), (2, lay.lanes), (3, lay.columns), (4, WORD_BYTES))
    bad = _where_d(lay, p)[0] != 0
    for k, top in tops:
        bad |= (p[:, k] < 0) | (p[:, k] >= top)
    faulty_at = np.zeros(len(tables), dtype=bool)
    faulty_at[which[bad]] = True
    faulty = set(np.flatnonzero(faulty_at).tolist())
    good = ~faulty_at[which]
    size = lay.cta_group * halves * lay.lanes * lay.columns * WORD_BYTES
    q = p[good]
    key = which[good] * size + (((q[:, 5] * halves + q[:, 6]) * lay.lanes + q[:, 2])
                                * lay.columns + q[:, 3]) * WORD_BYTES + q[:, 4]
    key.sort()
    faulty |= set((key[1:][key[1:] == key[:-1]] // max(size, 1)).tolist())
    return ok | {s for i, (s, _t) in enumerate(tables) if i not in faulty}


def placement_cores(lay: TcScaleLayout) -> dict[int, Core]:
    """``tc_placement_core`` at every ID value that is stated or a multiple of the stated
    alignment, each evaluated once: what ``scale-coverage`` and ``selector-range`` both read.
    Every ID's placements are checked at once first (``_placed_once``); the ID-by-ID core
    runs only where that finds a fault, and names it."""
    ids = [s for s in range(SF_ID_VALUES) if s in lay.sf_ids or s % max(lay.aligned, 1) == 0]
    fine = _placed_once(lay, ids)
    return {s: Core("proved", method="enumeration") if s in fine else tc_placement_core(lay, s)
            for s in ids}


def tc_coverage_core(lay: TcScaleLayout, cores: Mapping[int, Core] | None = None) -> Core:
    """Every stated ID places every factor once, inside the operand's columns."""
    for s in lay.sf_ids:
        core = cores[s] if cores is not None and s in cores else tc_placement_core(lay, s)
        if core.status != "proved":
            return core
    return Core("proved", method="enumeration")


def admitted_ids(lay: TcScaleLayout, cores: Mapping[int, Core] | None = None) \
        -> tuple[int, ...]:
    """The IDs of the two-bit field that are multiples of the stated alignment and place
    every factor once."""
    cores = placement_cores(lay) if cores is None else cores
    return tuple(s for s in range(SF_ID_VALUES) if s % max(lay.aligned, 1) == 0
                 and cores[s].status == "proved")


def _fmt(vals: Sequence[int]) -> str:
    return "{" + ", ".join(str(v) for v in vals) + "}"


def tc_selector_core(lay: TcScaleLayout, stated: tuple[int, ...] | None = None,
                     cores: Mapping[int, Core] | None = None) -> Core:
    want = admitted_ids(lay, cores)
    got = lay.sf_ids if stated is None else stated
    if tuple(got) == want:
        return Core("proved", method="enumeration")
    extra = [s for s in got if s not in want]
    why = (f"sf_id {extra[0]} is not a multiple of {lay.aligned} or does not place every "
           "factor once" if extra else "")
    return Core("refuted", f"the stated sf_id {_fmt(got)}; the layout admits {_fmt(want)} "
                f"(ID values of two bits, {lay.aligned}-byte aligned, every factor placed once)"
                + (f": {why}" if why else ""),
                {"stated": list(got), "admitted": list(want)}, method="enumeration")


def tc_budget_core(lay: TcScaleLayout) -> Core:
    faults = []
    bits = SCALE_BITS.get(lay.stype)
    if bits is None:
        faults.append(f".{lay.stype} is not a scale type ({', '.join(SCALE_BITS)})")
    elif bits != 8:
        faults.append(f".{lay.stype} factors are {bits} bits, not one byte")
    used = set().union(*(_columns(lay, s) for s in lay.sf_ids))
    if used and max(used) + 1 != lay.columns:
        faults.append(f"the stated IDs use columns 0-{max(used)}; the operand is stated to take "
                      f"{lay.columns}")
    if lay.lanes != 32:
        faults.append(f"{lay.lanes} lanes: a tensor-memory partition has 32")
    return faults_core(faults)


def tc_tile_core(lay: TcScaleLayout) -> Core:
    # tcgen05.mma.sp's K counts A's elements before compression: its factors are those of
    # the dense form of half the K, each scaling a block of twice the elements
    k = lay.k // 2 if lay.sparse else lay.k
    rows = [f for f in TCGEN05_SCALE_FORMS if (f[0], f[1], f[2], f[3]) ==
            (lay.kind, lay.form, lay.stype, k)]
    if not rows:
        legal = sorted({f"{f[0]} .{f[1]} .{f[2]} K={f[3]}" for f in TCGEN05_SCALE_FORMS})
        return Core("refuted", f".kind::{lay.kind} .{lay.form} .{lay.stype} at K = {lay.k} is "
                    f"not a legal form ({'; '.join(legal)})",
                    {"form": [lay.kind, lay.form, lay.stype, lay.k]}, method="table")
    block = rows[0][4] * (2 if lay.sparse else 1)
    vec = lay.k // block
    want = (lay.m, vec) if lay.operand == "A" else (vec, lay.n)
    faults = []
    if lay.tile != want:
        faults.append(f"scale_{lay.operand} is stated {lay.tile[0]} x {lay.tile[1]}; K = {lay.k} "
                      f"in blocks of {block} makes it {want[0]} x {want[1]}")
    if lay.vec != vec:
        faults.append(f"the form has {lay.vec} factors a row; K = {lay.k} in blocks of {block} "
                      f"is {vec}")
    return faults_core(faults, {"stated": list(lay.tile), "expected": list(want)})


def _columns(lay: TcScaleLayout, s: int) -> set[int]:
    """The tensor-memory columns of ``lay``'s factors at ID ``s``, from the array
    (``placed_array``): the tuples are never built for it."""
    def make() -> frozenset[int]:
        p = placed_array(lay, s)
        return frozenset(p[:, 3].tolist()) if len(p) else frozenset()
    return set(on_table(lay, "columns", (s,), make))


def _widest(p: Any, by: int) -> tuple[int, list[int]]:
    """The row (``by`` 0) or column (1) of the places ``p`` whose factors take the most
    tensor-memory columns (``p[:, 3]``), the smallest among equals, and those columns sorted:
    rows 0, 0, 1 in columns 5, 6, 5 -> (0, [5, 6]).  (0, []) for no places."""
    import numpy as np
    if not len(p):
        return 0, []
    w, c = p[:, by], p[:, 3]
    if p.dtype == object or int(w.max()) - int(w.min()) >= 1 << 30 \
            or int(c.max()) - int(c.min()) >= 1 << 30:  # (values past int64: the walk's)
        words: dict[int, set[int]] = {}
        for who, col in p[:, [by, 3]].tolist():
            words.setdefault(who, set()).add(col)
        who, cols = min(words.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return who, sorted(cols)
    w0, c0 = int(w.min()), int(c.min())
    rows, span = int(w.max()) - w0 + 1, int(c.max()) - c0 + 1
    if rows * span <= 1 << 22:  # a (who, column) grid of flags: the columns each who takes
        held = np.zeros((rows, span), dtype=bool)
        held[w - w0, c - c0] = True
        j = int(np.argmax(held.sum(axis=1)))  # the most; the smallest who among equals
        return j + w0, (np.flatnonzero(held[j]) + c0).tolist()
    pairs = distinct((w - w0) * span + (c - c0))  # (who, column) as one number, ascending
    whos, taken = pairs // span + w0, pairs % span + c0
    first, counts = np.unique(whos, return_index=True, return_counts=True)[1:]
    j = int(np.argmax(counts))  # the most columns; whos ascend, so the smallest among equals
    return int(whos[first[j]]), taken[first[j]:first[j] + counts[j]].tolist()


def _widest_at(lay: TcScaleLayout, s: int, by: int) -> tuple[int, list[int]]:
    """``_widest`` of the placements at ID ``s``, once a table (``repeats.on_table``)."""
    def make() -> tuple[int, tuple[int, ...]]:
        who, cols = _widest(placed_array(lay, s), by)
        return who, tuple(cols)
    who, cols = on_table(lay, "widest", (s, by), make)
    return who, list(cols)


def tc_fit_core(lay: TcScaleLayout) -> Core:
    """A row's (column's) factors at each stated ID take no more words than they need; where
    they do (the factors run on past the word their byte offset starts in), the text does not
    say where they go: a warning."""
    need = -(-lay.vec // WORD_BYTES)
    by = 0 if lay.operand == "A" else 1
    for s in lay.sf_ids:
        who, cols = _widest_at(lay, s, by)
        if len(cols) > need:
            name = "row" if lay.operand == "A" else "column"
            return Core("refuted", f"sf_id {s}: {name} {who}'s {lay.vec} one-byte factors start "
                        f"at byte {s} and run on into {len(cols)} columns "
                        f"({', '.join(map(str, sorted(cols)))}) where {need} would hold them; "
                        "the text does not say where those past the word go (the figures draw "
                        "it), this catalog reads them as running on into the next column",
                        {"selector": s, name: who, "columns": sorted(cols), "needed": need},
                        method="enumeration")
    return Core("proved", method="enumeration")


def tc_scale_hash(lay: TcScaleLayout) -> str:
    """The hash a run's evidence names the scale layout by (``layout_hashes["scale_A"]``): the
    cell-table hash of every factor's place at each legal ID, as ``writers.export_tc_scale``
    writes it into the record's ``map_hash`` (a test holds the two equal), written from the
    placement arrays (``placements_hash``) where the model kept them."""
    from ..base.hashes import cell_table_hash
    more = [(f, i) for f, i in (("cta", 5), ("half", 6)) if lay.cta_group > 1 and lay.states(f)]
    names = ("sf_id", "row", "col", "lane", "column", "byte", *(f for f, _i in more))
    label = ("tcgen05.block_scale", lay.shape, lay.id, "places")
    fast = placements_hash(label, names, lay, lay.sf_ids, (0, 1, 2, 3, 4, *(i for _f, i in more)))
    if fast is not None:
        return fast
    rows = [dict(zip(names, (s, *p[:5], *(p[i] for _f, i in more)), strict=True))
            for s in lay.sf_ids for p in lay.placed(s)]
    return cell_table_hash(*label, rows)


@cache
def _scale_rows() -> dict[tuple[str, str, str, int, int], list[Any]]:
    """The block-scaled rows of ``ptxlayout gpu``'s tcgen05-mma family by the form whose
    factors they place (kind, ``scale_vec::NX``, scale type, M, CTA group), in the table's
    order, listed once a process."""
    from ..base.matrix_variants import TCGEN05_MMA_SCALE_VARIANTS, datapath_row
    rows: dict[tuple[str, str, str, int, int], list[Any]] = {}
    for v in TCGEN05_MMA_SCALE_VARIANTS:
        rows.setdefault((v.kind, f"scale_vec::{v.scale_vec}X", v.scale, v.dims.m,
                         datapath_row(v.datapath)[2]), []).append(v)
    return rows


def scale_hardware(lay: TcScaleLayout, evidence: Any) -> Verdict:
    """The ``hardware`` obligation of ``lay`` from the evidence's sm_100 runs of the
    block-scaled rows that place this operand's factors by it (``execute.tcgen05_scale``),
    judged at each legal scale factor ID by the rows whose idesc names it
    (``prove.run_judge``): ``proved`` when at every ID every such check matched with the
    factors placed by this layout (its hash) and each planted edit owed on those rows (on
    scale_A: ``factors-swapped``, ``factor-moved``, ``scale-id-wrong``, and a pair's
    ``factor-other-cta``; on scale_B: ``b-factors-swapped``) mismatched (a pair's layouts, M =
    256 and a pair's M = 128, by the rows of Layouts A and B);
    ``refuted`` by the first check that mismatched, with its first differing cell of D;
    ``unconfirmed`` when the runs placed the factors by another map (stale), when an ID, a
    row or an owed plant has no run or a plant matched; with no run at all, for want of a
    device (``TC_NO_DEVICE``)."""
    from .run_judge import judge_runs
    which = 0 if lay.operand == "A" else 1
    rows = [] if lay.sparse else \
        _scale_rows().get((lay.kind, lay.form, lay.stype, lay.m, lay.cta_group), [])
    @cache
    def plants() -> list[Any]:  # listed only where a run is there to judge
        from ..execute.tcgen05_mma import scale_row_tasks
        from ..execute.tcgen05_scale import B_PLANTS
        return [t for t in scale_row_tasks(rows) if t.mode == "experiment"
                and (t.plant in B_PLANTS) == (which == 1)]
    op = f"scale_{lay.operand}"
    h = cache(partial(tc_scale_hash, lay))  # written once, and only where a run reads it
    judged = {}
    for s in lay.sf_ids:
        tasks = [v.key for v in rows if v.scale_ids[which] == s]
        judged[s] = judge_runs(evidence, tasks, op, h, partial(
            lambda ts: [(t.key, t.plant) for t in plants() if t.key in ts], tasks))
    if not any(j.runs for j in judged.values()):
        return Verdict("hardware", "unconfirmed", TC_NO_DEVICE, None, lay.span,
                       severity="warning")
    for s, j in judged.items():
        if j.bad is not None:
            bad = j.bad
            cell = list(bad.d_cells[0]) if bad.d_cells else None
            return Verdict("hardware", "refuted", f"{bad.key} on {bad.file.where}, the "
                           f"factors placed by this layout at scale factor ID {s}: "
                           f"{bad.detail[:300]}", {"variant": bad.key, "sf_id": s, "hash": j.hash,
                                                   "d_cell": cell, "detail": bad.detail},
                           lay.span, "error", "gpu")
    for s, j in judged.items():
        why = ""
        if not j.tasks:
            why = "no row of the tcgen05-mma family reads it there"
        elif j.status == "none" and j.other:
            old = j.other[-1]
            why = (f"stale: the evidence's {len(j.other)} runs of its rows (the last on "
                   f"{old.file.where}) placed the factors by another map "
                   f"({old.layout_hashes[op][:12]}..., now {j.hash[:12]}...): the layout changed "
                   "since; run 'ptxlayout gpu --only block_scale' on an sm_100a device again")
        elif j.status == "none":
            why = f"no sm_100a run of its {len(j.tasks)} rows"
        elif j.status == "missing":
            why = j.missing_message("rows", more=True)
        elif j.status == "blind":
            why = j.blind_message("row")
        if why:
            return Verdict("hardware", "unconfirmed", f"at scale factor ID {s}: {why}", None,
                           lay.span, severity="warning")
    checks = [r for j in judged.values() for r in j.checks]
    owed = sorted({t.plant for t in plants()})
    return Verdict("hardware", "proved",
                   f"confirmed on {checks[-1].file.where}: at each of the scale factor IDs "
                   f"{_fmt(lay.sf_ids)} every block-scaled row placing {op} by this layout "
                   f"bit-exact ({sum(len(j.tasks) for j in judged.values())} checks, "
                   f"{sum(j.trials for j in judged.values())} trials)"
                   + (f"; the planted edits {', '.join(owed)} mismatched" if owed else
                      "; no planted edit is owed on these rows"), None, None, "error", "gpu")


def prove_tc_scale(lay: TcScaleLayout, stated: tuple[int, ...] | None = None,
                   evidence: Any = None) -> tuple[ScaleResult, list[Finding]]:
    """Every obligation of one tcgen05 scale layout; an error finding for each refuted one
    (a warning for ``sub-column-fit``), on the line of the definition it is about.  With
    ``evidence`` (an ``EvidenceSet``) the hardware obligation is judged by its runs
    (``scale_hardware``)."""
    findings = list(lay.faults)
    if lay.faults:
        verdicts = [Verdict(n, "error", "not checked: the program is incomplete", None, lay.span)
                    for n in TC_SCALE_OBLIGATIONS[:-1]]
    else:
        placements = placement_cores(lay)
        cover = tc_coverage_core(lay, placements)
        bad = (cover.cex or {}).get("name", "byte")
        lines = {"scale-coverage": lay.line_of(bad), "selector-range": lay.line_of("sf_id"),
                 "register-budget": lay.span, "tile-shape": lay.span,
                 "sub-column-fit": lay.line_of("column")}
        cores = {"scale-coverage": cover,
                 "selector-range": tc_selector_core(lay, stated, placements),
                 "register-budget": tc_budget_core(lay), "tile-shape": tc_tile_core(lay),
                 "sub-column-fit": tc_fit_core(lay)}
        verdicts = []
        for n in TC_SCALE_OBLIGATIONS[:-1]:
            c = cores[n]
            sev = "warning" if n == "sub-column-fit" and c.status == "refuted" else "error"
            verdicts.append(Verdict(n, c.status, c.message, c.cex, lines[n], method=c.method,
                                    severity=sev))
    hw = scale_hardware(lay, evidence) if hasattr(evidence, "runs_of") and not lay.faults \
        else Verdict("hardware", "unconfirmed", TC_NO_DEVICE, None, lay.span, severity="warning")
    verdicts.append(hw)
    if hw.status == "unconfirmed":
        findings.append(warning("hardware", lay.span, f"{lay.id}: {hw.message}", layout=lay.id))
    for v in verdicts:
        if v.status != "refuted" or v.span is None:
            continue
        make = warning if v.severity == "warning" else error
        findings.append(make(f"block-scale-{v.name}", v.span, f"{lay.id}: {v.message}",
                             counterexample=v.counterexample, layout=lay.id))
    return ScaleResult(lay.id, "tcgen05.block_scale", lay.span, tuple(verdicts), lay.shape,
                       (lay.stype,), lay.tile, f"scale_{lay.operand}"), findings


def caption_selectors(lines: Sequence[Any], layouts: Sequence[TcScaleLayout]) \
        -> tuple[Verdict, list[Finding]]:
    """The scale factor IDs a document's figures draw (``TcScaleLine`` captions, grouped
    under their heading) against the IDs the catalog's layout of that matrix, form and K
    admits: ``selector-range``, refuted (an error on the first caption) where a heading's
    figures draw an ID the layout does not admit (drawing fewer is no contradiction: the
    figures may be examples)."""
    first = lines[0].source.span(0) if lines else None
    groups: list[tuple[Any, list[Any]]] = []
    for ln in lines:
        if ln.kind == "heading":
            groups.append((ln, []))
        elif groups and ln.facts["id"] is not None:
            groups[-1][1].append(ln)
    checked = 0
    for head, caps in groups:
        if not caps:
            continue
        f = head.facts
        forms = {x.lstrip(".") for x in f.get("forms", ())}
        mine = [lay for lay in layouts if lay.operand == f.get("matrix") and
                lay.form in forms and lay.k in f.get("k", ())]
        if not mine:
            continue
        checked += 1
        drawn = tuple(sorted({c.facts["id"] for c in caps}))
        want = tuple(sorted(set(mine[0].sf_ids)))
        if set(drawn) - set(want):
            nums = [c.facts["figure"] for c in caps]
            msg = (f"the figures of scale factor {f['matrix']} with {'/'.join(sorted(forms))} at "
                   f"K = {mine[0].k} (Figures {', '.join(map(str, nums))}) draw IDs "
                   f"{_fmt(drawn)}; the layout ({mine[0].id}) admits {_fmt(want)}")
            cex = {"drawn": list(drawn), "admitted": list(want), "figures": nums}
            odd = [c for c in caps if c.facts["id"] not in want]
            sp = (odd or caps)[0].source.span(0)
            return (Verdict("selector-range", "refuted", msg, cex, sp, method="text"),
                    [error("block-scale-caption", sp, msg, counterexample=cex)])
    if not checked:
        return Verdict("selector-range", "not-applicable", "no figure names an ID of a form "
                       "the catalog states", None, first), []
    return Verdict("selector-range", "proved", "", None, first, method="text"), []
