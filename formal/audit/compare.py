"""Proving a CuTe atom's layouts equal to the spec's, operand by operand.

Both sides become functions of (thread, value) into CuTe's index of the operand's tile:
A ``m + M*k`` (sparse A over the compressed tile), B ``n + N*k`` (CuTe's B is N x K), C
``m + M*n``.  CuTe's side is its ``shape:stride`` evaluated at (thread, value), with the
thread first sent through ``ThrID`` to a lane (m8n8k4's quad-pairs); the spec's side is the
catalog layout's (lane, value) table (``formal.tv``).  Z3 decides whether any (thread,
value) differs -- the CuTe side symbolically (digits by division by the constant shape,
times the strides), the spec side as an array over its table -- and enumeration of every
(thread, value) re-checks the verdict; a disagreement is an internal error.  Past ``Z3_MAX_KEYS``
(thread, value) pairs (wgmma's accumulators) the enumeration decides alone.

Example: CuTe's SM80_16x8_Row ``((4,8),(2,2)):((32,1),(16,8))`` against the spec's C/D of
m16n8k16 (row = groupID + 8*(i >= 2), col = 2*threadID_in_group + (i & 1)): lane 5, value 3
is index 1*32 + 1*1 + 16 + 8 = 57 on CuTe's side, and (row 9, col 3) = 9 + 16*3 = 57 on the
spec's -- equal everywhere, so ``equal``.  Change the stride 16 to 32 and lane 0, value 1
becomes index 32 = (row 0, col 2) against the spec's (row 0, col 1): ``differs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.cute import CuteLayout, flat_modes, size
from .project import InternalError, Layout, tv_view
from .views import axis_index

Cell = tuple[int, int]

# Z3 reads the spec's side as a multiplexer over its table: fast for a warp's fragment (32 x 16
# pairs), minutes for wgmma's accumulator at N = 256 (128 x 128).  Past this many (thread,
# value) pairs the enumeration -- exhaustive, so a proof -- decides alone, and says so.
Z3_MAX_KEYS = 1024


@dataclass(frozen=True)
class Counterexample:
    thread: int
    value: int
    cute: Cell | None
    spec: Cell | None

    def as_json(self) -> dict[str, Any]:
        return {"thread": self.thread, "value": self.value,
                "cute": list(self.cute) if self.cute is not None else None,
                "spec": list(self.spec) if self.spec is not None else None}


@dataclass(frozen=True)
class Comparison:
    verdict: str  # "equal" | "differs" | "unreadable"
    counterexample: Counterexample | None = None
    message: str = ""
    method: str = ""  # "z3+enumeration" | "enumeration (z3: unknown)"


@dataclass(frozen=True)
class SpecTable:
    """The spec's (lane, value) -> (row, col), with None where the spec gives no cell."""

    layout_id: str
    rows: int
    cols: int
    swapped: bool  # B: CuTe's first coordinate is the tile's column
    cells: tuple[tuple[Cell | None, ...], ...]
    note: str = ""

    def index(self, cell: Cell) -> int:
        r, c = cell
        return c + self.cols * r if self.swapped else r + self.rows * c

    def cell(self, idx: int) -> Cell:
        if self.swapped:
            return idx // self.cols, idx % self.cols
        return idx % self.rows, idx // self.rows


def spec_table(lay: Layout) -> SpecTable | str:
    """``_spec_table`` of a layout, made once per layout object (kept in its ``__dict__``, as
    ``Layout.at`` keeps its layouts at each N): every atom of an instruction asks for it."""
    memo = lay.__dict__.setdefault("_ptxlayout_audit_table", [])
    if not memo:
        memo.append(_spec_table(lay))
    return memo[0]  # type: ignore[no-any-return]


def _spec_table(lay: Layout) -> SpecTable | str:
    """The spec layout's (lane, value) table in tile coordinates, or why it has none.

    Where the (thread, value) view fails only because some element has no cell (the
    m16n8k16 .f64 A erratum), the dense cells that exist are kept and the rest are None."""
    tv = tv_view(lay)
    swapped = lay.operand == "B"
    if not isinstance(tv, str):
        rows, cols = tv.tile
        return SpecTable(lay.id, rows, cols, swapped, tv.cells, tv.note)
    if lay.sparse_a or lay.operand == "metadata":
        return tv
    from .project import cells_and_names
    _names, table = cells_and_names(lay)
    if not table:
        return tv
    rows, cols = lay.tile
    cells = tuple(tuple(_cell(table.get((0, t, i))) for i in range(lay.elements))
                  for t in range(lay.lanes))
    return SpecTable(lay.id, rows, cols, swapped, cells, f"partial: {tv}")


def _cell(out: Any) -> Cell | None:
    if out is None or len(out) < 2 or out[0] is None or out[1] is None:
        return None
    return int(out[0]), int(out[1])


def _lanes(thr: CuteLayout | None, threads: int) -> list[int]:
    if thr is None:
        return list(range(threads))
    return [thr(t) for t in range(thr.size)]


def compare_with_spec(cute: CuteLayout, thr: CuteLayout | None, spec: SpecTable,
            timeout_ms: int = 10000) -> Comparison:
    """Is CuTe's (thread, value) layout the spec's map?"""
    key = (cute, thr, id(spec), timeout_ms)
    hit = _COMPARED.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    got = _compare(cute, thr, spec, timeout_ms)
    _COMPARED[key] = (spec, got)
    return got


# (CuTe layout, ThrID, the spec table's identity, time limit) -> the table and the verdict:
# hashing a 128 x 128 table for every atom cost more than comparing it
_COMPARED: dict[tuple[Any, ...], tuple[SpecTable, Comparison]] = {}


def _compare(cute: CuteLayout, thr: CuteLayout | None, spec: SpecTable,
             timeout_ms: int) -> Comparison:
    if cute.rank != 2:
        return Comparison("unreadable", message=f"{cute} is not a (thread, value) layout "
                                                "(rank 2)")
    tmode, vmode = cute.mode(0), cute.mode(1)
    threads, values = tmode.size, vmode.size
    lanes = _lanes(thr, threads)
    if thr is not None and thr.size != threads:
        return Comparison("unreadable", message=f"ThrID {thr} has {thr.size} threads, the "
                                                f"layout {threads}")
    spec_lanes, spec_values = len(spec.cells), len(spec.cells[0]) if spec.cells else 0
    bad_lane = next((t for t, lane in enumerate(lanes) if not 0 <= lane < spec_lanes), None)
    if bad_lane is not None:
        return Comparison("differs", Counterexample(bad_lane, 0, None, None),
                          f"thread {bad_lane} is lane {lanes[bad_lane]}, outside the "
                          f"{spec_lanes} lanes of the instruction")
    found = _enumerate(cute, lanes, spec)
    shape_note = ""
    if values != spec_values:
        shape_note = (f"CuTe gives each thread {values} values, the spec {spec_values}; ")
    keys = len(lanes) * min(values, spec_values)
    zs = _z3(cute, lanes, spec, min(values, spec_values), timeout_ms,
             kept=found is None and values == spec_values) \
        if keys <= Z3_MAX_KEYS else "too large"
    enum_differs = found is not None
    if zs == "too large":
        method = f"enumeration ({keys} pairs: past the solver's table)"
    elif zs == "unknown":
        method = "enumeration (z3: unknown)"
    else:
        z3_differs = zs == "sat" or values != spec_values
        if z3_differs != enum_differs:
            raise InternalError(f"{spec.layout_id} vs {cute}: z3 says {zs}, enumeration "
                                f"{'differs' if enum_differs else 'equal'}")
        method = "z3+enumeration"
    if found is None:
        return Comparison("equal", None, spec.note, method)
    t, v, got, want = found
    return Comparison("differs", Counterexample(t, v, got, want),
                      shape_note + _describe(t, lanes[t], v, got, want), method)


def _describe(t: int, lane: int, v: int, got: Cell | None, want: Cell | None) -> str:
    where = f"thread {t}" + (f" (lane {lane})" if lane != t else "") + f", value {v}"
    g = f"(row {got[0]}, col {got[1]})" if got is not None else "no cell"
    w = f"(row {want[0]}, col {want[1]})" if want is not None else "no cell"
    return f"{where}: CuTe says {g}, the spec says {w}"


def index_array(cute: CuteLayout) -> np.ndarray:
    """CuTe's index of every (thread, value) of a rank-2 layout, as a threads x values array
    (each flat digit times its stride, summed: the layout function, vectorized)."""

    return axis_index(cute.mode(0))[:, None] + axis_index(cute.mode(1))[None, :]


def first_difference(got: np.ndarray, want: np.ndarray) \
        -> tuple[int, int, Cell | None, Cell | None] | None:
    """The smallest (thread, value), thread first, where two threads x values x 2 cell arrays
    differ (a cell with a negative coordinate is "no cell" and never equal), else None."""
    t_n = max(got.shape[0], want.shape[0])
    v_n = max(got.shape[1], want.shape[1])

    def pad(a: np.ndarray) -> np.ndarray:
        out = np.full((t_n, v_n, 2), -1, dtype=np.int64)
        out[:a.shape[0], :a.shape[1]] = a
        return out

    g, w = pad(got), pad(want)
    bad = (g != w).any(axis=2) | (g < 0).any(axis=2) | (w < 0).any(axis=2)
    if not bad.any():
        return None
    t, v = (int(x) for x in np.argwhere(bad)[0])

    def cell(a: np.ndarray) -> Cell | None:
        r, c = int(a[t, v, 0]), int(a[t, v, 1])
        return None if r < 0 or c < 0 else (r, c)

    return t, v, cell(g), cell(w)


_CELLS: dict[int, tuple[SpecTable, tuple[int, ...], np.ndarray]] = {}


def spec_cells(spec: SpecTable, lanes: list[int]) -> np.ndarray:
    """The spec's cell of each (thread, value), thread t read as ``lanes[t]`` (made once per
    table and lanes; the array is not to be written)."""
    hit = _CELLS.get(id(spec))
    if hit is not None and hit[0] is spec and hit[1] == tuple(lanes):
        return hit[2]
    out = _spec_cells(spec, lanes)
    _CELLS[id(spec)] = (spec, tuple(lanes), out)
    return out


def _spec_cells(spec: SpecTable, lanes: list[int]) -> np.ndarray:
    values = len(spec.cells[0]) if spec.cells else 0
    rows = [spec.cells[lane] for lane in lanes]
    if all(len(row) == values for row in rows):  # one array of the pairs, no cell = (-1, -1)
        flat = [(-1, -1) if c is None else c for row in rows for c in row]
        return np.array(flat, dtype=np.int64).reshape(len(lanes), values, 2)
    out = np.full((len(lanes), values, 2), -1, dtype=np.int64)
    for t, lane in enumerate(lanes):
        for v, c in enumerate(spec.cells[lane]):
            if c is not None:
                out[t, v] = c
    return out


def cute_cells(idx: np.ndarray, rows: int, cols: int, swapped: bool) -> np.ndarray:
    """CuTe's indices as cells of a rows x cols tile (A, C: ``m + M*n``; B: ``n + N*k``); an
    index past the tile gives a cell outside it (never equal to the spec's), a negative one
    no cell."""
    if swapped:
        r, c = idx // cols, idx % cols
    else:
        r, c = idx % rows, idx // rows
    out = np.stack([r, c], axis=-1)
    out[idx < 0] = -1
    return out


def _enumerate(cute: CuteLayout, lanes: list[int], spec: SpecTable) \
        -> tuple[int, int, Cell | None, Cell | None] | None:
    """The smallest (thread, value) whose cells differ, thread first."""
    got = cute_cells(index_array(cute), spec.rows, spec.cols, spec.swapped)
    return first_difference(got, spec_cells(spec, lanes))


def _z3(cute: CuteLayout, lanes: list[int], spec: SpecTable, values: int,
        timeout_ms: int, kept: bool = False) -> str:
    """'sat' when some (thread, value < values) differs, 'unsat' when none, or 'unknown'.

    Each digit of the thread and value coordinates is a bounded variable, so CuTe's index
    is a sum of digit * stride with no division; the spec's index is a balanced multiplexer
    over its table, keyed by thread * values + value.  ``kept``: the enumeration found the
    two equal, so Z3's *unsat* may come from the proof cache (``prove.cache.z3_unsat``, keyed
    by everything the query states), and a new *unsat* is kept there."""
    threads = len(lanes)
    if not threads or not values:
        return "unsat"
    t_modes = flat_modes(cute.mode(0).shape, cute.mode(0).stride)
    v_modes = flat_modes(cute.mode(1).shape, cute.mode(1).stride)
    hi = max(threads * values, spec.rows * spec.cols, 2)
    for s, d in t_modes + v_modes:
        hi += abs(d) * s
    w = max(8, (hi * 4).bit_length() + 1)
    missing = (1 << w) - 1  # a cell the spec does not give: no CuTe index reaches it
    keys = [spec.index(c) if c is not None else missing
            for lane in lanes for c in spec.cells[lane][:values]]
    # everything the query and the check of a model read: the atoms of one shape and types
    # (GMMA's major-ness and scale variants, each N's table cut from one) ask the same
    asked = (cute, tuple(lanes), values, w, tuple(keys), spec.rows, spec.cols, spec.swapped,
             timeout_ms)
    hit = _ASKED.get(asked)
    if hit is not None:
        return hit
    if kept:
        from ..prove.cache import z3_unsat
        said: list[str] = []

        def solve() -> bool:
            said.append(_ask(cute, lanes, spec, values, timeout_ms, t_modes, v_modes, w, keys))
            return said[0] == "unsat"

        query = [[list(m) for m in t_modes], [list(m) for m in v_modes], threads, values, w,
                 keys, timeout_ms]
        got = "unsat" if z3_unsat(query, "cute-tv-equal", solve) else said[0]
    else:
        got = _ask(cute, lanes, spec, values, timeout_ms, t_modes, v_modes, w, keys)
    if got != "unknown":  # an unknown (Z3's time limit) is asked again
        _ASKED[asked] = got
    return got


# a query's inputs (``asked`` above) -> Z3's sat / unsat, once a process: 85 comparisons of
# the CUTLASS wheel ask 35 questions
_ASKED: dict[tuple[Any, ...], str] = {}


def _ask(cute: CuteLayout, lanes: list[int], spec: SpecTable, values: int, timeout_ms: int,
         t_modes: list[tuple[int, int]], v_modes: list[tuple[int, int]], w: int,
         keys: list[int]) -> str:
    """``_z3``'s query, asked of Z3."""
    import z3

    threads = len(lanes)
    solver = z3.SolverFor("QF_BV")
    solver.set("timeout", timeout_ms)

    def coord(name: str, modes: list[tuple[int, int]]) -> tuple[Any, Any]:
        pos, idx, place = z3.BitVecVal(0, w), z3.BitVecVal(0, w), 1
        for j, (s, d) in enumerate(modes):
            if s <= 1:
                continue
            x = z3.BitVec(f"{name}{j}", w)
            solver.add(z3.ULT(x, s))
            pos, idx, place = pos + x * place, idx + x * d, place * s
        return pos, idx

    t, t_idx = coord("t", t_modes)
    v, v_idx = coord("v", v_modes)
    solver.add(z3.ULT(t, threads), z3.ULT(v, values))
    p = t * values + v
    solver.add(t_idx + v_idx != table_mux(p, keys))
    res = solver.check()
    if res == z3.unknown:
        return "unknown"
    if res == z3.sat:
        m = solver.model()
        tt, vv = m.evaluate(t).as_long(), m.evaluate(v).as_long()
        cell = spec.cells[lanes[tt]][vv]
        if cell is not None and spec.cell(cute((tt, vv))) == cell:
            raise InternalError(f"{spec.layout_id}: z3's counterexample thread {tt}, value "
                                f"{vv} is not one")
        return "sat"
    return "unsat"


def table_mux(p: Any, keys: Sequence[int]) -> Any:
    """``keys[p]`` as a Z3 term for ``0 <= p < len(keys)``: a balanced multiplexer,

        If(ULT(p, lo + half), <keys[lo : lo + half]>, <keys[lo + half : lo + n]>)

    down to one key, ``BitVecVal(key, width of p)``.  The very term those z3 calls make
    (Z3 shares equal terms: ``z3.eq`` holds them equal, tests/test_audit_z3_memo.py), made
    by one call of Z3's C API a node (the Python operators' coercions and wrappers were most
    of the time of a wgmma table's thousands of nodes), each node referenced until the whole
    term is."""
    import z3

    if not keys:
        raise ValueError("a multiplexer over no keys")
    ctx = p.ctx
    ref = ctx.ref()
    sort = p.sort().ast
    held: list[Any] = []
    vals: dict[int, Any] = {}

    def keep(a: Any) -> Any:
        z3.Z3_inc_ref(ref, a)
        held.append(a)
        return a

    def val(k: int) -> Any:
        hit = vals.get(k)
        if hit is None:
            hit = vals[k] = keep(z3.Z3_mk_numeral(ref, str(k), sort))
        return hit

    pa = p.as_ast()

    def mux(lo: int, n: int) -> Any:
        if n == 1:
            return val(keys[lo])
        half = n // 2
        cond = keep(z3.Z3_mk_bvult(ref, pa, val(lo + half)))
        return keep(z3.Z3_mk_ite(ref, cond, mux(lo, half), mux(lo + half, n - half)))

    try:
        return z3.BitVecRef(mux(0, len(keys)), ctx)  # referenced by the wrapper from here on
    finally:
        for a in held:
            z3.Z3_dec_ref(ref, a)


def same_table(a: SpecTable, b: SpecTable) -> bool:
    return (a.rows, a.cols, a.swapped, a.cells) == (b.rows, b.cols, b.swapped, b.cells)


def value_count(cute: CuteLayout) -> int:
    return size(cute.mode(1).shape) if cute.rank == 2 else 0
