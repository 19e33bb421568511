"""The data-path layouts proved: each a bijection of TMEM blocks onto D, each block in its
warp's lanes, for every N the mma takes.

A worked example, Layout E (M = 64, .ws, N in {64, 128, 256}): its four blocks hold
D[0-31][0 to N/2-1], D[32-63][0 to N/2-1], D[0-31][N/2 to N-1], D[32-63][N/2 to N-1] in lanes
0-31, 32-63, 64-95, 96-127.  Injective: no cell of D lies in two blocks; surjective: every
cell of the 64 x N tile lies in one; warp-quarter: warp w's block lies in lanes 32w..32w+31.
Edit the third block's rows to 32-63 and D[32][N/2] lies in two blocks (the second and the
third, lines named) while D[0][N/2] lies in none: ``injective`` and ``surjective`` are refuted
with those cells at the smallest N.

Each obligation is a statement over (N, a cell) in linear integer arithmetic, N one of the
mma's values and every bound ``a * N + c``; Z3 decides it, and enumerating every N's cells
(``model.datapath.datapath_cells``) decides it again.  The two must agree -- a disagreement is an
internal error, never a verdict.  An obligation whose premises failed (a block whose lanes and
rows differ in number, a block outside the tile) is ``error`` ("not checked").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..base.hashes import cell_table_hash
from ..base.matrix_variants import (
    DATAPATH_INSTRUCTION,
    TCGEN05_MMA_VARIANTS,
    TMEM_COLUMN_COUNT,
    TMEM_LANE_COUNT,
    TMEM_SUBPARTITION,
)
from ..base.source import Finding, Span, error, warning
from ..model.cells import map_of
from ..model.datapath import (
    DataPath,
    SummaryRow,
    block_place,
    datapath_cells,
)
from ..model.layout import Layout
from .cache import z3_unsat
from .composes import Arrangement, Relation, RelationVerdict
from .datapath_keys import every_n_keys
from .datapath_statements import STATEMENTS, _alignments, _holds, linear_solver
from .encode import unsat_together
from .repeats import distinct
from .verdicts import TEST_HOOKS, InternalError, Verdict

HARDWARE = ("no lent machine runs sm_100a: the layout is proved from the text, not run on "
            "a Blackwell GPU")


@dataclass(frozen=True)
class DataPathResult:
    """One data-path layout and its verdicts (the keys of a layout in the JSON report)."""

    id: str
    instruction: str
    span: Span
    verdicts: tuple[Verdict, ...]
    shape: str = ""
    types: tuple[str, ...] = ()
    tile: tuple[int, ...] = ()
    operand: str = "D"
    statements: tuple[str, ...] = ()  # the blocks as stated (the verbose report's formulas)

    @property
    def ok(self) -> bool:
        return all(v.status in ("proved", "not-applicable") or v.severity == "warning"
                   for v in self.verdicts)

    def verdict(self, name: str) -> Verdict:
        return next((v for v in self.verdicts if v.name == name),
                    Verdict(name, "not-applicable"))


# ---- Z3 (the statements: ``datapath_statements``) ------------------------------------------


class _StatementGroup:
    """Z3's *unsat* to a data path's statements the enumeration found no counterexample to,
    asked as one disjunction (``encode.unsat_together``) the first time one is not in the
    proof cache (six queries become one).  A statement the group leaves open is asked alone;
    a disagreement with the enumeration is an internal error as ever."""

    def __init__(self, dp: DataPath, names: Sequence[str]) -> None:
        self.dp = dp
        self.names = list(names)
        self.unsat: set[str] | None = None

    def says_unsat(self, name: str) -> bool:
        if self.unsat is None:
            self.unsat = set() if TEST_HOOKS else unsat_together(
                "datapath", [(x, STATEMENTS[x](self.dp)) for x in self.names], TOGETHER_MS,
                general=True, make=linear_solver)
        return name in self.unsat or not _holds(STATEMENTS[name](self.dp))


TOGETHER_MS = 60_000  # a group Z3 does not answer in time is asked statement by statement


# ---- enumeration -----------------------------------------------------------------------------


def _first(dp: DataPath, test: Any) -> dict[str, Any] | None:
    """The counterexample ``test`` finds at the smallest N (None: none at any N)."""
    for n in dp.ns:
        for a in _alignments(dp):
            found = test(n, a)
            if found is not None:
                return {"N": n, **({"alignment": a} if a else {}), **found}
    return None


def _shape_bad(dp: DataPath, n: int, _a: int) -> dict[str, Any] | None:
    for b in dp.blocks:
        (t0, t1), (d0, d1) = b.tcol_range(n), b.dcol_range(n)
        if b.lanes[1] - b.lanes[0] != b.rows[1] - b.rows[0] or t1 - t0 != d1 - d0:
            return {"block": block_place(b), "lanes": b.lanes[1] - b.lanes[0] + 1,
                    "rows": b.rows[1] - b.rows[0] + 1, "tmem_columns": t1 - t0 + 1,
                    "columns": d1 - d0 + 1}
    return None


def _range_bad(dp: DataPath, n: int, a: int) -> dict[str, Any] | None:
    for b in dp.blocks:
        (t0, t1), (d0, d1) = b.tcol_range(n), b.dcol_range(n)
        if not (0 <= t0 <= t1 < TMEM_COLUMN_COUNT and 0 <= d0 <= d1 < n
                and 0 <= b.lanes[0] and b.lanes[1] + a < TMEM_LANE_COUNT
                and 0 <= b.rows[0] and b.rows[1] < dp.m and 0 <= b.cta < dp.cta_group):
            return {"block": block_place(b), "tile": [dp.m, n], "tmem_columns": [t0, t1],
                    "columns": [d0, d1]}
    return None


def _collision(c: dict[str, np.ndarray], dp: DataPath, keys: tuple[str, ...]) \
        -> dict[str, Any] | None:
    """The first cell (by the keys' values) two TMEM cells of the map ``c`` share."""
    if _distinct(c, keys):
        return None
    key = np.zeros(c["block"].shape, dtype=np.int64)
    for k in keys:
        key = key * 1024 + c[k]
    _u, first, counts = np.unique(key, return_index=True, return_counts=True)
    dup = np.nonzero(counts > 1)[0]
    if not len(dup):
        return None
    k0 = int(first[dup[0]])
    others = np.nonzero(key == key[k0])[0]
    blocks = sorted({int(c["block"][j]) for j in others})
    return {"cell": {k: int(c[k][k0]) for k in keys},
            "blocks": [block_place(dp.blocks[j]) for j in blocks[:2]]}


def _distinct(c: dict[str, np.ndarray], keys: tuple[str, ...]) -> bool:
    """No two entries of ``c`` agree on every key: each entry's keys as one number in mixed
    radix (each key's largest value + 1), counted in one pass where the radix product is small
    beside the entries, else sorted -- False where that cannot say (a negative value, a radix
    product past 2**22: the caller sorts)."""
    if not len(c["block"]):
        return True
    key = np.zeros(c["block"].shape, dtype=np.int64)
    size = 1
    for k in keys:
        top = int(c[k].max()) + 1
        if int(c[k].min()) < 0 or size * top > 1 << 22:
            return False
        key, size = key * top + c[k], size * top
    if size <= 8 * len(key):  # a count per value is the cheaper
        return bool(np.bincount(key, minlength=size).max() <= 1)
    key = np.sort(key)
    return not bool((key[1:] == key[:-1]).any())


def _uncovered(c: dict[str, np.ndarray], dp: DataPath, n: int) -> dict[str, Any] | None:
    """The first cell of D at N = ``n`` no TMEM cell of the map ``c`` holds."""
    held = np.zeros((dp.m, n), dtype=bool)
    ok = (c["row"] >= 0) & (c["row"] < dp.m) & (c["dcol"] >= 0) & (c["dcol"] < n)
    held[c["row"][ok], c["dcol"][ok]] = True
    miss = np.argwhere(~held)
    return None if not len(miss) else {"cell": {"row": int(miss[0][0]),
                                                "col": int(miss[0][1])}}


def _quarter_bad(dp: DataPath, _n: int, a: int) -> dict[str, Any] | None:
    for b in dp.blocks:
        lo, hi = TMEM_SUBPARTITION * b.warp, TMEM_SUBPARTITION * b.warp + TMEM_SUBPARTITION - 1
        if not (0 <= b.warp < 4 and lo <= b.lanes[0] + a and b.lanes[1] + a <= hi):
            return {"block": block_place(b), "warp_lanes": [lo, hi],
                    "lanes": [b.lanes[0] + a, b.lanes[1] + a]}
    return None


def _query(dp: DataPath) -> list[Any]:
    """What every Z3 statement about ``dp`` depends on, as JSON values (the cache's key): the
    blocks' numbers and bounds, the Ns, M, the CTA group, the alignments, tensor memory's
    sizes."""
    blocks = [[b.cta, b.warp, list(b.lanes), list(b.rows),
               [[str(f), c] for f, c in (*b.tcols, *b.dcols)]] for b in dp.blocks]
    return [blocks, list(dp.ns), dp.m, dp.cta_group, list(_alignments(dp)),
            [TMEM_COLUMN_COUNT, TMEM_LANE_COUNT, TMEM_SUBPARTITION]]


def _z3_says(name: str, found: dict[str, Any] | None, dp: DataPath,
             together: _StatementGroup | None = None) -> bool:
    """Z3's answer (True: a violation exists).  Where the enumeration found none, an earlier
    run's *unsat* to the same statement (``prove.cache.z3_unsat``) stands for it, else Z3's
    answer to it asked with the data path's other such statements (``together``); a
    counterexample always asks Z3 itself, so a cache entry can only confirm the enumeration."""
    if found is not None:
        return _holds(STATEMENTS[name](dp))
    solve = (lambda: together.says_unsat(name)) if together is not None else \
        (lambda: not _holds(STATEMENTS[name](dp)))
    return not z3_unsat([name, _query(dp)], f"datapath-{name}", solve)


def _decide(name: str, found: dict[str, Any] | None, what: str, dp: DataPath,
            together: _StatementGroup | None = None) -> Verdict:
    z3_says = _z3_says(name, found, dp, together)
    if z3_says != (found is not None):
        raise InternalError(f"{dp.id} {name}: Z3 says {'sat' if z3_says else 'unsat'}, the "
                            "enumeration of every N the opposite")
    if found is None:
        return Verdict(name, "proved", method="z3+enumeration")
    line = (found.get("block") or (found.get("blocks") or [{}])[0]).get("line")
    span = dp.title.span(0)
    if line is not None:
        span = Span(span.document, line, 1)
    return Verdict(name, "refuted", f"{dp.id}: {what}", found, span,
                   method="z3+enumeration")


def _organization(dp: DataPath, row: SummaryRow | None) -> Verdict:
    if row is None:
        return Verdict("organization", "not-applicable", "no summary table row names "
                       f"Layout {dp.layout}")
    got, half = dp.organization(), dp.half()
    if (got, half) == (row.organization, row.half):
        return Verdict("organization", "proved", method="exhaustive")
    return Verdict("organization", "refuted",
                   f"{dp.id}: the blocks form {got[0]}x{got[1]}"
                   f"{' (half the lanes)' if half else ''}; the summary table says "
                   f"{row.organization[0]}x{row.organization[1]}"
                   f"{' (half the lanes)' if row.half else ''}",
                   {"blocks": f"{got[0]}x{got[1]}", "table": "x".join(map(str, row.organization)),
                    "half": [half, row.half]}, row.src.span(0), method="exhaustive")


def prove_datapath(dp: DataPath, row: SummaryRow | None = None, evidence: Any = None,
                   ) -> tuple[DataPathResult, list[Finding]]:
    """Every obligation of one data-path layout (the module's docstring).  ``hardware``:
    judged by ``hardware`` when GPU evidence is read, not applicable without evidence, as for
    a register layout."""
    def first(test: Any) -> dict[str, Any] | None:
        return _first(dp, lambda n, a: test(dp, n, a))

    tables: dict[tuple[int, int], dict[str, np.ndarray]] = {}

    def cells_at(n: int, a: int) -> dict[str, np.ndarray]:
        """The map at (N, alignment), built once for the three obligations that read it."""
        if (n, a) not in tables:
            tables[n, a] = datapath_cells(dp, n, a)
        return tables[n, a]

    def first_of_all(clean: Any, test: Any) -> dict[str, Any] | None:
        """``first(test)`` where the map at every N at once is not ``clean`` (a clean one has
        no counterexample at any N or alignment: a lane shift moves no cell of D)."""
        return None if clean else first(test)

    found = {"block-shape": first(_shape_bad), "in-range": first(_range_bad)}
    sound = all(f is None for f in found.values())
    if sound:  # every cell in range: D's tile, the CTAs' tensor memory, at every alignment
        held = every_n_keys(dp)
        found["injective"] = first_of_all(
            held.d_distinct(), lambda d, n, a: _collision(cells_at(n, a), d, ("row", "dcol")))
        found["tmem-injective"] = first_of_all(
            held.tmem_distinct(),
            lambda d, n, a: _collision(cells_at(n, a), d, ("cta", "lane", "tcol")))
        found["surjective"] = first_of_all(
            held.covers(), lambda d, n, a: _uncovered(cells_at(n, a), d, n))
    found["warp-quarter"] = first(_quarter_bad)
    together = _StatementGroup(dp, [x for x, f in found.items() if f is None])
    vs = [_decide("block-shape", found["block-shape"],
                  "a block's lanes and rows (or TMEM columns and columns) differ in number", dp,
                  together),
          _decide("in-range", found["in-range"],
                  "a block lies outside D's tile or the CTA's tensor memory", dp, together)]
    if sound:
        vs += [_decide("injective", found["injective"], "a cell of D lies in two blocks", dp,
                       together),
               _decide("tmem-injective", found["tmem-injective"],
                       "a TMEM cell holds two cells of D", dp, together),
               _decide("surjective", found["surjective"], "a cell of D lies in no block", dp,
                       together)]
    else:
        vs += [Verdict(x, "error", "not checked: a block's bounds did not hold")
               for x in ("injective", "tmem-injective", "surjective")]
    vs.append(_decide("warp-quarter", found["warp-quarter"],
                      "a block lies outside the lanes its warp reaches", dp, together))
    vs.append(_organization(dp, row))
    if evidence is None:
        vs.append(Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)"))
    else:
        vs.append(hardware(dp, evidence))
    findings = [error("datapath", v.span or dp.title.span(0), v.message,
                      counterexample=v.counterexample)
                for v in vs if v.status == "refuted"]
    if evidence is not None and vs[-1].status == "unconfirmed":
        findings += [warning("hardware", dp.title.span(0), f"{dp.id}: {vs[-1].message}",
                             layout=dp.id)]
    return DataPathResult(dp.id, "tcgen05.mma", dp.title.span(0), tuple(vs),
                          f"M = {dp.m}, cta_group::{dp.cta_group}",
                          tile=(dp.m, max(dp.ns)),
                          statements=tuple(b.src.text for b in dp.blocks)), findings


# ---- the hardware obligation: tcgen05-mma runs in the evidence ------------------------------


def datapath_blocks(dp: DataPath) -> list[dict[str, Any]]:
    """The layout at every N of its mma, one flat row a block (``writers.export_datapath``'s
    ``blocks``): the CTA and warp, the TMEM lanes and columns, D's first row and column."""
    out = []
    for n in dp.ns:
        for b in dp.blocks:
            t0, t1 = b.tcol_range(n)
            out.append({"n": n, "cta": b.cta, "warp": b.warp, "lane_lo": b.lanes[0],
                        "lane_hi": b.lanes[1], "tcol_lo": t0, "tcol_hi": t1,
                        "row_lo": b.rows[0], "dcol_lo": b.dcol_range(n)[0]})
    return out


def datapath_hash(dp: DataPath) -> str:
    """The map hash a ``tcgen05-mma`` run records for the data path it read D back by
    (``layout_hashes["datapath"]``): ``cell_table_hash`` of ``datapath_blocks``."""
    return cell_table_hash(DATAPATH_INSTRUCTION, f"m{dp.m}", dp.layout, "blocks",
                           datapath_blocks(dp))


def _unconfirmed(why: str) -> Verdict:
    return Verdict("hardware", "unconfirmed", f"unconfirmed: {why}", severity="warning",
                   method="gpu")


def _plants() -> list[tuple[str | None, str]]:
    """The planted edits every data path owes (``execute.tcgen05_mma.PLANTS``), on any of its
    tasks: imported only where a run is there to judge."""
    from ..execute.tcgen05_mma import PLANTS
    return [(None, p) for p in PLANTS]


def hardware(dp: DataPath, evidence: Any) -> Verdict:
    """The ``hardware`` obligation of a data path from the evidence's ``tcgen05-mma`` runs
    on an sm_100 device (``formal.execute.tcgen05_mma``): each task whose mma the layout
    holds D of (``v.datapath``), read back by this map (its hash).  ``proved`` when every
    task's check matched and each planted edit of the layout mismatched; ``refuted`` by the
    first check that mismatched, with its first differing cell; ``unconfirmed`` when the runs
    read D by another map (stale: the layout changed since), when a task or a plant is
    missing or a plant matched (the run could not tell maps apart), or with no such run."""
    if not hasattr(evidence, "runs_of"):  # drawn, not judged (``api.show``)
        return Verdict("hardware", "unconfirmed", HARDWARE, severity="warning")
    from .run_judge import judge_runs
    tasks = [v.key for v in TCGEN05_MMA_VARIANTS if v.datapath == dp.layout]
    if not tasks:
        return _unconfirmed(f"no task of ptxlayout gpu's tcgen05-mma family reads D by "
                            f"Layout {dp.layout}; {HARDWARE}")
    j = judge_runs(evidence, tasks, "datapath", partial(datapath_hash, dp), _plants)
    h = j.hash  # written only where a run is there to compare it with
    if j.bad is not None:
        bad = j.bad
        cex = {"variant": bad.key, "detail": bad.detail, "hash": h,
               "d_cells": [list(c) for c in bad.d_cells]}
        return Verdict("hardware", "refuted", f"{bad.key} on {bad.file.where}, D read back "
                       f"by this map: {bad.detail[:300]}", cex, dp.title.span(0), "error", "gpu")
    if j.status == "none":
        if j.other:
            old = j.other[-1]
            return _unconfirmed(f"stale: the evidence's {len(j.other)} runs of its tasks (the "
                                f"last on {old.file.where}) read D by another map "
                                f"({old.layout_hashes['datapath'][:12]}..., now "
                                f"{h[:12]}...): the layout changed since; run 'ptxlayout gpu "
                                f"--only layout{dp.layout}' on an sm_100a device again")
        return _unconfirmed(f"no sm_100a run of its {len(tasks)} tasks in the evidence; "
                            + HARDWARE)
    if j.status == "missing":
        return _unconfirmed(j.missing_message("tasks", more=True))
    if j.status == "blind":
        return _unconfirmed(j.blind_message("task"))
    return Verdict("hardware", "proved",
                   f"confirmed on {j.checks[-1].file.where}: {len(tasks)} of {len(tasks)} "
                   f"tcgen05-mma tasks read D back by this map bit-exact "
                   f"({j.trials} trials); "
                   f"the planted edits {', '.join(p for _k, p in j.owed)} mismatched", None,
                   None, "error",
                   "gpu")


# ---- reading D back with tcgen05.ld ----------------------------------------------------------


def _ld_offsets(ld: Layout, ld_cells: Callable[[], dict[Any, Any]]) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thread, register, the (lane, column) offset it reads) of every point of ``ld``: its
    enumerated arrays where every point has both offsets as int64, else its table's."""
    m = map_of(ld)
    if m is not None and len(m.names) >= 2 and m.out.dtype != object \
            and bool(m.defined[:, :2].all()):
        return (m.pts[:, 1].astype(np.int64), m.pts[:, 2].astype(np.int64),
                m.out[:, :2].astype(np.int64))
    return _table_offsets(ld_cells())


def _table_offsets(cells: dict[Any, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = sorted(cells)  # a table of a dict a point (ld_cells()), as read_back walks it
    ti = np.array([k[1:3] for k in keys], dtype=np.int64).reshape(-1, 2)
    return ti[:, 0], ti[:, 1], np.array([[int(cells[k][0]), int(cells[k][1])] for k in keys],
                                        dtype=np.int64).reshape(-1, 2)


def _reads_back(dp: DataPath, c: dict[str, np.ndarray],
                reads: tuple[np.ndarray, np.ndarray, np.ndarray], n: int) -> bool:
    """``read_back``'s test for every warp, thread and register at once (numpy): True when
    each register reads the cell of D it must; False when one does not, or where the arrays
    cannot say (a lane or column outside tensor memory): ``read_back`` walks them then.
    ``reads``: ``_ld_offsets`` of the ld layout."""
    t, i, off = reads
    if not len(t):
        return True
    mine = c["cta"] == 0
    lanes, cols = c["lane"][mine], c["tcol"][mine]
    if len(lanes) and (lanes.min() < 0 or lanes.max() >= TMEM_LANE_COUNT or cols.min() < 0
                       or cols.max() >= TMEM_COLUMN_COUNT):
        return False
    if distinct(lanes * TMEM_COLUMN_COUNT + cols).size != lanes.size:
        return False  # two cells at one place: the walk says which one a register reads
    at = np.full((TMEM_LANE_COUNT, TMEM_COLUMN_COUNT), -1, dtype=np.int64)
    at[lanes, cols] = np.nonzero(mine)[0]
    for b in dp.blocks:
        if b.cta != 0:
            continue
        t0, _t1 = b.tcol_range(n)
        d0, _d1 = b.dcol_range(n)
        lane, col = b.lanes[0] + off[:, 0], t0 + off[:, 1]
        if lane.min() < 0 or lane.max() >= TMEM_LANE_COUNT or col.min() < 0 \
                or col.max() >= TMEM_COLUMN_COUNT:
            return False
        k = at[lane, col]
        if (k < 0).any():
            return False
        if not ((c["row"][k] == TMEM_SUBPARTITION * b.warp + t).all()
                and (c["dcol"][k] == d0 + i).all()):
            return False
    return True


def read_back(rel: Relation, dp: DataPath, ld: Layout,
              ld_cells: Callable[[], dict[Any, Any]], registers: int) -> RelationVerdict:
    """Warp w reads its quarter with ``ld`` at its block's first lane and TMEM column: thread
    t's register i must be D[32w + t][dcol_lo + i] (each thread of the warpgroup its own row
    of D, its registers the row's columns in order).  Decided by
    enumerating every warp, thread and register: finite maps, so the enumeration is a
    proof."""
    n = registers
    if n not in dp.ns:
        return RelationVerdict(rel, "error", f"not checked: N = {n} is not an N of {dp.id}")
    c = datapath_cells(dp, n)
    if _reads_back(dp, c, _ld_offsets(ld, ld_cells), n):
        return RelationVerdict(rel, "proved", method="exhaustive")
    # some register is read elsewhere: the walk below finds the first, in order (``ld_cells()``:
    # ld's table, (selector, thread, register) -> its offsets)
    where = {(int(c["cta"][k]), int(c["lane"][k]), int(c["tcol"][k])): k
             for k in range(len(c["block"]))}
    table = sorted(ld_cells().items())
    for b in sorted(dp.blocks, key=lambda x: (x.cta, x.warp)):
        if b.cta != 0:
            continue
        t0, _t1 = b.tcol_range(n)
        d0, _d1 = b.dcol_range(n)
        for (_s, t, i), cell in table:
            lane, col = b.lanes[0] + int(cell[0]), t0 + int(cell[1])
            k = where.get((0, lane, col))
            want = [TMEM_SUBPARTITION * b.warp + t, d0 + i]
            got = None if k is None else [int(c["row"][k]), int(c["dcol"][k])]
            if got != want:
                return RelationVerdict(rel, "refuted", f"warp {b.warp}, thread {t}, register "
                                       f"{i} of {ld.id} reads TMEM lane {lane}, column {col}: "
                                       f"{'no cell of D' if got is None else f'D{got}'}, not "
                                       f"D{want}", {"warp": b.warp, "lane": t,
                                                    "element": f"r{i}", "N": n,
                                                    "tmem": [lane, col], "consumer_cell": got,
                                                    "want": want,
                                                    "line": b.src.span(0).line},
                                       method="exhaustive")
    return RelationVerdict(rel, "proved", method="exhaustive")


def read_relation(producer: str, dp: DataPath) -> Relation:
    return Relation(producer, dp.id, Arrangement(
        "warp w reads its block with taddr at the block's first lane and TMEM column: thread "
        "t's register i is D[32w + t][first column + i]"))


def prove_reads(table: Sequence[tuple[str, str, int]], dps: Sequence[DataPath],
                by_id: dict[str, Layout], cells_of: Any) -> list[RelationVerdict]:
    """Each (ld layout, data-path layout, registers = N) of the relations table."""
    out = []
    mine = {dp.layout: dp for dp in dps}
    for producer, letter, n in table:
        dp, ld = mine.get(letter), by_id.get(producer)
        if dp is None:
            continue
        rel = read_relation(producer, dp)
        if ld is None:
            out.append(RelationVerdict(rel, "error", f"not checked: no layout {producer}"))
            continue
        out.append(read_back(rel, dp, ld, partial(cells_of, ld), n))
    return out
