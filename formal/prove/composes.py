"""Producer -> consumer relations between layouts (``composes``), proved like a layout.

Kernel authors fill an mma fragment with ``ldmatrix``, drain it with ``stmatrix`` and build
wgmma's warpgroup fragments out of warp tiles.  Each such claim is a *relation*: for every
point (lane t, element j) of the consumer, the producer's point (lane(t, j), element(t, j))
holds the value the consumer needs, i.e. the producer's cell (r, c), moved by the
*arrangement*, is the consumer's cell.  A worked example, ``ldmatrix.x4`` of four 8 x 8
``.b16`` matrices into the m16n8k16 ``.f16`` A fragment:

    producer cell of (t, j)   row 8 * (j >> 1) + (t >> 2), col 2 * (t % 4) + (j & 1)
                              (the four matrices stacked one above the other)
    arrangement               matrix q = r >> 3 goes to rows 8 * (q & 1), cols 8 * (q >> 1):
                              row (r & 7) + 8 * ((r >> 3) & 1), col c + 8 * (r >> 4)
    consumer cell of (t, j)   the m16n8k16 A formulas

Lane 5, a6: the producer cell is (25, 2) -- matrix 3, row 1 -- which the arrangement puts
at (9, 10), and the A formulas give row 1 + 8, col 2 + 8: the same cell.

The statement ``exists (t, j) in the consumer's domain whose producer point leaves the
producer's domain or whose cells differ`` is decided by Z3 over bit-vectors (widths from
sound interval bounds, as the layout obligations); the same statement is then decided by
enumerating every (t, j) with numpy.  They must agree -- a disagreement, or a Z3 witness
that does not replay, is an internal error, never a verdict.  A refuted relation carries
the smallest counterexample: the lane, the consumer element, the producer's point and the
two cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp
import z3

from ..base.variants import TYPE_BITS
from ..model.algebra import COL, LANE, ROW, SEL, I, bounds, compile_array
from ..model.layout import Layout
from .encode import _Enc, bv_val, conj, disj, magnitude, ops, unsat_together, z3_int
from .verdicts import TEST_HOOKS, InternalError

STATUSES = ("proved", "refuted", "unknown", "error")


@dataclass(frozen=True)
class Arrangement:
    """How a consumer point reads the producer.  ``lane`` and ``element`` are SymPy
    expressions over the consumer's (lane, i); ``row`` and ``col`` over the producer's cell
    (``ROW``, ``COL``) and the consumer's (lane, i)."""

    text: str
    lane: Any = LANE
    element: Any = I
    row: Any = ROW
    col: Any = COL


@dataclass(frozen=True)
class Relation:
    producer: str  # a layout's short id
    consumer: str
    arrangement: Arrangement


@dataclass(frozen=True)
class RelationVerdict:
    relation: Relation
    status: str  # proved | refuted | unknown | error
    message: str = ""
    counterexample: dict[str, Any] | None = None
    method: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"producer": self.relation.producer, "consumer": self.relation.consumer,
                "arrangement": self.relation.arrangement.text, "status": self.status,
                "message": self.message, "counterexample": self.counterexample}


@dataclass(frozen=True)
class _Statement:
    """The relation over the consumer's domain, as SymPy expressions over (selector, lane,
    i).  The outputs are the map's: (row, col), a sparse A's (row, firstcol, lastcol), or
    a metadata layout's (row, chunk, slot) and whether the lane holds metadata (1 or 0).
    ``produced`` are the producer's outputs over its own (lane, i); ``_composed`` reads them
    at the arrangement's point and moves them by it (Z3's statement), the enumeration
    evaluates the same steps one after another on arrays (``_enumerate``)."""

    lanes: int
    n: int
    p_lane: Any
    p_elem: Any
    p_lanes: int
    p_n: int
    got: tuple[Any, ...]  # consumer outputs
    produced: tuple[Any, ...]  # producer outputs, over the producer's (lane, i)
    arrangement: Arrangement
    letters: tuple[str, str] = ("a", "a")
    extra: dict[str, Any] = field(default_factory=dict)
    selectors: tuple[int, ...] = (0,)
    names: tuple[str, ...] = ("row", "col")


def output_names(lay: Layout) -> tuple[str, ...]:
    """The names of a layout's map outputs, the form a relation compares."""
    if lay.operand == "metadata":
        return ("row", "chunk", "slot")
    if lay.sparse_a:
        return ("row", "firstcol", "lastcol")
    return ("row", "col")


def _cell(lay: Layout) -> tuple[Any, ...] | None:
    out = []
    for name in output_names(lay):
        f = lay.formula(name)
        if f is None:
            return None
        out.append(f.piecewise())
    if lay.operand == "metadata" and lay.metadata is not None:
        # the holder predicate as an output: a warp's metadata comes from the same threads
        out.append(sp.Piecewise((1, lay.metadata.holder), (0, True)))
    return tuple(out)


@lru_cache(maxsize=1024)
def _at(e: Any, lane: Any, elem: Any) -> Any:
    # xreplace, not subs: a Piecewise built unevaluated must stay as written; once per
    # (formula, arrangement): the chapter's 20 relations read 16 distinct producer cells
    return e.xreplace({LANE: lane, I: elem})


def statement(rel: Relation, producer: Layout, consumer: Layout,
              letters: tuple[str, str] = ("a", "a"), cells: bool = True) -> _Statement | None:
    """The relation's statement; None when a side has no map, or the two maps are not of one
    kind (a sparse A against a dense one).  ``cells=False``: without the SymPy cells
    (``got`` and ``produced`` are None each), for an enumeration that reads both layouts'
    enumerated maps (``_enumerate``'s ``maps``) where Z3 is not asked."""
    pc, cc = (_cell(producer), _cell(consumer)) if cells else \
        (_outputs(producer), _outputs(consumer))
    names = output_names(consumer)
    if pc is None or cc is None or output_names(producer) != names or len(pc) != len(cc):
        return None
    a = rel.arrangement
    md = consumer.metadata
    sels = tuple(md.selectors) if consumer.operand == "metadata" and md is not None \
        and md.selectors else (0,)
    return _Statement(consumer.lanes, consumer.elements, a.lane, a.element, producer.lanes,
                      producer.elements, cc, pc, a, letters, _registers(consumer), sels,
                      names + (("holder",) if len(cc) > len(names) else ()))


def _outputs(lay: Layout) -> tuple[None, ...] | None:
    """``_cell``'s outputs, each None: how many there are, and None where ``_cell`` is."""
    if any(lay.formula(name) is None for name in output_names(lay)):
        return None
    holder = lay.operand == "metadata" and lay.metadata is not None
    return (None,) * (len(output_names(lay)) + holder)


def _composed(st: _Statement) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(want, p_cell) over the consumer's (selector, lane, i): the producer's outputs at the
    arrangement's point, and those moved by the arrangement -- the row through its row;
    each column-like output (col, firstcol, lastcol, chunk, slot) through its col with that
    output as COL; the holder as is."""
    a = st.arrangement
    p_cell = tuple(_at(x, a.lane, a.element) for x in st.produced)
    k_out = _k_out(st)
    want = [a.row.xreplace({ROW: p_cell[0], COL: p_cell[1]})]
    for k in range(1, k_out):
        want.append(a.col.xreplace({ROW: p_cell[0], COL: p_cell[k]}))
    want.extend(p_cell[k_out:])
    return tuple(want), p_cell


def _registers(lay: Layout) -> dict[str, Any]:
    """How a consumer element sits in its registers: a metadata field i is bits 2i+1..2i of
    the one .b32 (in index units); element j of a 16-bit type is register j >> 1."""
    if lay.operand == "metadata":
        return {"field_bits": 2}
    bits = next((TYPE_BITS[t] for t in lay.types if t in TYPE_BITS), 0)
    return {"per_register": 32 // bits} if 0 < bits <= 32 else {}


# ---- enumeration -----------------------------------------------------------------------------


_SLOTS = (LANE, I, SEL)  # the three inputs of a compiled expression (``compile_array``)


@lru_cache(maxsize=1024)
def _compiled(e: Any) -> tuple[Any, tuple[Any, ...]] | None:
    """``e`` compiled over arrays, with the symbols it reads (at most three of ROW, COL,
    LANE, I, SEL) renamed onto the three inputs; None when it reads four or more."""
    free = tuple(sorted(e.free_symbols, key=str))
    if len(free) > len(_SLOTS):
        return None
    return compile_array(e.xreplace(dict(zip(free, _SLOTS, strict=False))), np), free


@lru_cache(maxsize=1024)
def _array(e: Any) -> Any:
    """``compile_array(e, np)``, once per expression (a closure of numpy calls: pure)."""
    return compile_array(e, np)


@lru_cache(maxsize=1024)
def _reads(e: Any, x: Any) -> bool:
    return x in getattr(e, "free_symbols", ())


def _at_arrays(e: Any, values: dict[Any, Any], shape: tuple[int, ...]) -> Any:
    """``e`` evaluated where each symbol is the array ``values[symbol]`` (None: ``e`` reads
    too many symbols to be evaluated this way)."""
    hit = _compiled(e)
    if hit is None:
        return None
    fn, free = hit
    args = [values[x] for x in free] + [values[SEL]] * (len(_SLOTS) - len(free))
    return np.broadcast_to(np.asarray(fn(*args), dtype=np.int64), shape)


def _enumerate(st: _Statement, maps: tuple[Any, Any] | None = None) \
        -> tuple[np.ndarray, dict[str, Any]]:
    """Every (selector, lane, i) of the consumer: the statement evaluated in the steps it
    states -- the producer's point, its outputs there, those moved by the arrangement --
    each a numpy array (the composed expressions of ``_composed`` give the same values; an
    arrangement that reads four symbols at once is evaluated composed).  ``maps``: the
    consumer's and producer's enumerated maps (``model.cells.map_of``, ``_readable``),
    whose outputs are read where the cells would be evaluated again: the consumer's at
    each point, the producer's at its point (where that point is in its domain; outside
    it, the producer's outputs are its first point's, and the point is bad whatever they
    are)."""
    per = st.lanes * st.n
    s = np.repeat(np.asarray(st.selectors, dtype=np.int64), per)
    t = np.tile(np.repeat(np.arange(st.lanes, dtype=np.int64), st.n), len(st.selectors))
    j = np.tile(np.arange(st.n, dtype=np.int64), st.lanes * len(st.selectors))

    def ev(e: Any) -> np.ndarray:
        out = np.asarray(_array(e)(t, j, s), dtype=np.int64)
        return np.broadcast_to(out, t.shape)

    pt, pj = ev(st.p_lane), ev(st.p_elem)
    inside = (pt >= 0) & (pt < st.p_lanes) & (pj >= 0) & (pj < st.p_n)
    if maps is not None:
        cm, pm = maps
        k_maps = len(cm.names)
        where = {x: k for k, x in enumerate(pm.selectors)}
        first = np.repeat(np.asarray([where[x] * st.p_lanes * st.p_n for x in st.selectors],
                                     dtype=np.int64), per)
        at = np.where(inside, first + pt * st.p_n + pj, 0)
        ones = [np.ones(len(t), dtype=np.int64)] * (len(st.got) - k_maps)  # the holder
        p = [pm.out[at, k] for k in range(k_maps)] + ones
        got = [cm.out[:, k] for k in range(k_maps)] + ones
    else:
        p = [np.broadcast_to(np.asarray(_array(x)(pt, pj, s), dtype=np.int64),
                             t.shape) for x in st.produced]
    a = st.arrangement
    k_out = _k_out(st)
    here = {LANE: t, I: j, SEL: s, ROW: p[0]}
    want = [_at_arrays(a.row, {**here, COL: p[1]}, t.shape)]
    want += [_at_arrays(a.col, {**here, COL: p[k]}, t.shape) for k in range(1, k_out)]
    want += p[k_out:]
    if any(w is None for w in want):
        want = [ev(x) for x in _composed(st)[0]]
    if maps is None:
        got = [ev(x) for x in st.got]
    vals: dict[str, Any] = {"s": s, "t": t, "j": j, "pt": pt, "pj": pj,
                            "got": got, "want": want, "p": p}
    bad = ~inside
    for g, w in zip(vals["got"], vals["want"]):
        bad = bad | (g != w)
    return bad, vals


def _readable(st: _Statement, consumer: Layout, producer: Layout) -> tuple[Any, Any] | None:
    """The two layouts' enumerated maps, where ``_enumerate`` may read its cells off them:
    each map int64, defined everywhere and held at each of its selectors by every lane (its
    points are then every (selector, lane, element), in that order, as ``CellMap`` builds
    them), the consumer's selectors among the producer's, the outputs those the statement
    compares, and a metadata holder (the last output) reading no element index (it is then
    1 at every point of a map held by every lane); else None."""
    from ..model.cells import map_of
    cm, pm = map_of(consumer), map_of(producer)
    holder = st.names[-1] == "holder"
    names = st.names[:-1] if holder else st.names
    for m, lanes, n in ((cm, st.lanes, st.n), (pm, st.p_lanes, st.p_n)):
        if m is None or m.out.dtype != np.int64 or (m.lanes, m.n) != (lanes, n) \
                or len(m.pts) != len(m.selectors) * lanes * n or m.names != names \
                or not bool(m.all_defined().all()) \
                or (holder and _reads(m.holder, I)) or (not holder and m.holder is not sp.true):
            return None
    if cm is None or pm is None or tuple(cm.selectors) != st.selectors \
            or not set(st.selectors) <= set(pm.selectors):
        return None
    return cm, pm


def _witness(st: _Statement, vals: dict[str, Any], k: int) -> dict[str, Any]:
    pt, pj = int(vals["pt"][k]), int(vals["pj"][k])
    out: dict[str, Any] = {
        "lane": int(vals["t"][k]), "element": f"{st.letters[1]}{int(vals['j'][k])}",
        "producer_lane": pt, "producer_element": f"{st.letters[0]}{pj}",
        "consumer_cell": [int(x[k]) for x in vals["got"]],
    }
    j = int(vals["j"][k])
    if "field_bits" in st.extra:
        w = st.extra["field_bits"]
        out["register"], out["bits"] = 0, [w * j + w - 1, w * j]
    elif "per_register" in st.extra:
        out["register"] = j // st.extra["per_register"]
    if len(st.selectors) > 1 or st.names[-1] == "holder":
        out["selector"] = int(vals["s"][k])
    if st.names != ("row", "col"):
        out["outputs"] = list(st.names)
    if 0 <= pt < st.p_lanes and 0 <= pj < st.p_n:
        out["producer_cell"] = [int(x[k]) for x in vals["p"]]
        out["arranged_cell"] = [int(x[k]) for x in vals["want"]]
    else:
        out["producer_cell"] = None
        out["outside"] = f"the producer has lanes 0..{st.p_lanes - 1} and elements " \
                         f"0..{st.p_n - 1}"
    return out


# ---- Z3 ----------------------------------------------------------------------------------------


def _box(st: _Statement) -> dict[Any, tuple[int, int]]:
    return {LANE: (0, st.lanes - 1), I: (0, max(0, st.n - 1)),
            SEL: (min(st.selectors), max(st.selectors))}


def _width(st: _Statement) -> int:
    """Bits that hold every value the statement's terms take at a point that matters: the
    consumer's point and formulas over its box; the producer's formulas over the producer's
    own box (at a point the arrangement sends outside it, ``outside`` holds whatever they
    give); the arrangement's row and col with ROW and COL in the spans of the producer's
    outputs there.  Subexpressions without bounds count only through their parts, as in
    ``encode.width_of``."""
    box = _box(st)
    pbox = {LANE: (0, st.p_lanes - 1), I: (0, max(0, st.p_n - 1)), SEL: box[SEL]}
    top = max(st.lanes, st.n + 1, st.p_lanes, st.p_n + 1, max(st.selectors) + 1)
    top = magnitude([st.p_lane, st.p_elem, *st.got], box, top, (sp.Piecewise,))
    top = magnitude(st.produced, pbox, top, (sp.Piecewise,))
    spans = [_span(x, pbox, top) for x in st.produced]
    cols = spans[1:_k_out(st)] or [(0, 0)]
    abox = {**box, ROW: spans[0], COL: (min(c[0] for c in cols), max(c[1] for c in cols))}
    top = max(top, *(abs(v) for sp_ in spans for v in sp_))
    top = magnitude([st.arrangement.row, st.arrangement.col], abox, top, (sp.Piecewise,))
    return max(8, (2 * top + 2).bit_length() + 1)


def _span(e: Any, box: dict[Any, tuple[int, int]], top: int) -> tuple[int, int]:
    """Sound bounds of ``e`` over ``box``; [-top, top] where it has none."""
    try:
        return bounds(e, box)
    except (ValueError, TypeError):
        return -top, top


def _k_out(st: _Statement) -> int:
    """How many outputs the arrangement moves (all but a metadata holder)."""
    return len(st.got) - (1 if st.names[-1] == "holder" else 0)


def _violation(st: _Statement) -> tuple[Any, tuple[Any, Any, Any, int]]:
    """The relation's statement as one Z3 formula, satisfiable exactly when some point of the
    consumer breaks it, and its variables (sel, t, i, width).  Composed in Z3, as
    ``_enumerate`` composes in steps: the producer's formulas encoded at the producer's
    point (the arrangement's lane and element terms), then the arrangement's row and col
    at those outputs -- no SymPy expression is composed (``_composed`` writes the same
    statement as one expression per output)."""
    w = _width(st)
    t, j = z3.BitVec("t", w), z3.BitVec("i", w)
    sel = z3.BitVec("sel", w)
    enc = _Enc(w, sel, t, j)

    def e(x: Any) -> Any:
        return enc.expr(x)

    def v(n: int) -> Any:
        return bv_val(n, w)

    # the terms z3's operators make (``encode.ops``): ``pt < 0`` is ops.lt(pt, v(0))
    pt, pj = e(st.p_lane), e(st.p_elem)
    at_producer = _Enc(w, sel, pt, pj)
    p_cell = [at_producer.expr(x) for x in st.produced]
    k_out = _k_out(st)

    def arranged(x: Any, col: Any) -> Any:
        moved = _Enc(w, sel, t, j)
        moved.env[ROW], moved.env[COL] = p_cell[0], col
        return moved.expr(x)

    a = st.arrangement
    want = [arranged(a.row, p_cell[1])] + [arranged(a.col, p_cell[k])
                                           for k in range(1, k_out)] + p_cell[k_out:]
    outside = disj(ops.lt(pt, v(0)), ops.ge(pt, v(st.p_lanes)), ops.lt(pj, v(0)),
                   ops.ge(pj, v(st.p_n)))
    differ = disj(*[ops.rel("!=", e(g), x) for g, x in zip(st.got, want)])
    return conj(ops.ge(t, v(0)), ops.lt(t, v(st.lanes)), ops.ge(j, v(0)), ops.lt(j, v(st.n)),
                disj(outside, differ), disj(*[ops.eq(sel, v(x)) for x in st.selectors])), \
        (sel, t, j, w)


def _z3_decide(st: _Statement, timeout_ms: int) -> tuple[str, tuple[int, int, int] | None]:
    formula, (sel, t, j, w) = _violation(st)
    s = z3.SolverFor("QF_BV")
    s.set("timeout", timeout_ms)
    s.add(formula)
    r = s.check()
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        m = s.model()
        return "refuted", (z3_int(m, sel, w), z3_int(m, t, w), z3_int(m, j, w))
    return "unknown", None


def _index(st: _Statement, point: tuple[int, int, int]) -> int:
    s_, t, j = point
    return st.selectors.index(s_) * st.lanes * st.n + t * st.n + j if s_ in st.selectors \
        else -1


# ---- the obligation -------------------------------------------------------------------------


def prove_relation(rel: Relation, by_id: dict[str, Layout], timeout_ms: int = 5000,
                   cross_check: bool = True, healthy: Iterable[str] | None = None,
                   letters: dict[str, str] | None = None, store: Any = None,
                   asked: _Asked | None = None) -> RelationVerdict:
    """Decide one relation.  ``healthy`` names the layouts whose own obligations hold; a
    relation over a layout outside it is ``error`` ("not checked"), never ``refuted``.
    ``store`` is the on-disk proof cache (``formal.prove.cache.ProofCache``): a relation Z3
    proved in an earlier run skips Z3, never the enumeration, and an entry the enumeration
    contradicts is removed with a warning and Z3 asked.  ``asked``: what ``_relations_together``
    made and learnt of this run's relations (their statements, cache entries, and those Z3
    answered *unsat* together)."""
    prod, cons = by_id.get(rel.producer), by_id.get(rel.consumer)
    missing = [name for name, lay in ((rel.producer, prod), (rel.consumer, cons))
               if lay is None]
    if prod is None or cons is None:
        return RelationVerdict(rel, "error", "not checked: no layout " + ", ".join(missing))
    ok = set(healthy) if healthy is not None else None
    if ok is not None:
        sick = [x for x in (rel.producer, rel.consumer) if x not in ok]
        if sick:
            return RelationVerdict(rel, "error", "not checked: " + ", ".join(sick) +
                                   " is not a proved layout")
    lt = letters or {}
    st = asked.statements[rel] if asked is not None and rel in asked.statements else \
        statement(rel, prod, cons, (lt.get(rel.producer, "x"), lt.get(rel.consumer, "x")))
    if st is None:
        return RelationVerdict(rel, "error", "not checked: a layout has no formulas, or the "
                               "two maps are not of one kind")
    key = None
    cached = False
    if store is not None and cross_check and not TEST_HOOKS:
        from .cache import relation_key
        key = relation_key(rel, prod, cons, timeout_ms)
        cached = asked.cached[rel] if asked is not None and rel in asked.cached \
            else store.proved(key, "composes")
    told = asked is not None and rel in asked.unsat and not cached
    maps = _readable(st, cons, prod) if cached or told else None
    if st.got[0] is None and maps is None:  # made without its cells: they are read now
        st = statement(rel, prod, cons, st.letters)
        assert st is not None
    zs, point = ("proved", None) if cached or told else _z3_decide(st, timeout_ms)
    if zs == "unknown":
        # the relation is over finite maps: the enumeration visits every (selector, lane,
        # element), so its answer is a proof where Z3 gave none
        note = f"decided by enumeration; Z3 timed out after {timeout_ms / 1000:g} s"
        bad, vals = _enumerate(st)
        if not bad.any():
            return RelationVerdict(rel, "proved", note, None, "enumeration")
        cex = _witness(st, vals, int(np.argmax(bad)))
        return RelationVerdict(rel, "refuted", f"{_say(st, cex)} ({note})", cex,
                               "enumeration")
    if not cross_check:
        if zs == "refuted" and point is not None:
            bad, vals = _enumerate(st)
            k = _index(st, point)
            return RelationVerdict(rel, "refuted", _say(st, _witness(st, vals, k)),
                                   _witness(st, vals, k), "z3")
        return RelationVerdict(rel, zs, "", None, "z3")
    bad, vals = _enumerate(st, maps)
    es = "refuted" if bad.any() else "proved"
    if cached and es != "proved":
        # a cache entry the enumeration contradicts: dropped, and Z3 asked as if no cache
        assert store is not None and key is not None
        store.reject(key, f"says Z3 proved composes {rel.producer} -> {rel.consumer}, but "
                     "the enumeration finds otherwise; removed")
        cached = False
        if st.got[0] is None:
            st = statement(rel, prod, cons, st.letters)
            assert st is not None
        zs, point = _z3_decide(st, timeout_ms)
    if zs == "unknown":  # the cache entry was dropped and Z3 asked again gave no answer
        return prove_relation(rel, by_id, timeout_ms, cross_check, healthy, letters, None)
    if zs != es:
        raise InternalError(f"composes {rel.producer} -> {rel.consumer}: Z3 says {zs}, "
                            f"enumeration says {es}")
    if es == "proved":
        if store is not None and key is not None and not cached:
            store.store(key, "composes")
        return RelationVerdict(rel, "proved", "", None, "z3+enumeration")
    assert point is not None
    k_z3 = _index(st, point)
    if not (0 <= k_z3 < len(bad)) or not bad[k_z3]:
        raise InternalError(f"composes {rel.producer} -> {rel.consumer}: Z3's witness "
                            f"lane {point[1]} element {point[2]} does not replay")
    k = int(np.argmax(bad))  # the smallest (lane, element)
    cex = _witness(st, vals, k)
    return RelationVerdict(rel, "refuted", _say(st, cex), cex, "z3+enumeration")


def _say(st: _Statement, cex: dict[str, Any]) -> str:
    head = f"lane {cex['lane']} {cex['element']} reads the producer's lane " \
           f"{cex['producer_lane']} {cex['producer_element']}"
    if cex.get("producer_cell") is None:
        return f"{head}, which does not exist ({cex['outside']})"
    what = "cell" if "outputs" not in cex else "(" + ", ".join(cex["outputs"]) + ")"
    sel = f"selector {cex['selector']}: " if "selector" in cex else ""
    return (f"{sel}{head}, {what} {tuple(cex['producer_cell'])}, which the arrangement puts "
            f"at {tuple(cex['arranged_cell'])}; the consumer's formulas give "
            f"{tuple(cex['consumer_cell'])}")


def prove_relations(relations: Sequence[Relation], layouts: Iterable[Layout],
                    timeout_ms: int = 5000, cross_check: bool = True,
                    healthy: Iterable[str] | None = None,
                    letters: dict[str, str] | None = None,
                    store: Any = None) -> list[RelationVerdict]:
    by_id = {lay.short_id: lay for lay in layouts}
    ok = list(healthy) if healthy is not None else None
    asked = _relations_together(relations, by_id, timeout_ms, cross_check, ok, letters, store)
    return [prove_relation(r, by_id, timeout_ms, cross_check, ok, letters, store, asked)
            for r in relations]


@dataclass
class _Asked:
    """``_relations_together``'s findings: each relation's statement, whether the disk cache holds
    Z3's proof of it, and the relations Z3 answered *unsat* inside a disjunction."""

    statements: dict[Relation, _Statement | None] = field(default_factory=dict)
    cached: dict[Relation, bool] = field(default_factory=dict)
    unsat: set[Relation] = field(default_factory=set)


def _relations_together(relations: Sequence[Relation], by_id: dict[str, Layout], timeout_ms: int,
                  cross_check: bool, healthy: Iterable[str] | None,
                  letters: dict[str, str] | None, store: Any) -> _Asked:
    """Z3's statement of every relation over healthy layouts that the cache does not hold,
    ``encode.TOGETHER`` at a time as one disjunction: *unsat* to it is *unsat* to each (each is
    still enumerated and must agree); a model names the relations it breaks, which are
    left to be asked alone."""
    out = _Asked()
    if not cross_check or TEST_HOOKS:
        return out  # a planted encoding must meet Z3 on its own
    ok = set(healthy) if healthy is not None else None
    lt = letters or {}
    todo: list[tuple[Relation, Any]] = []
    for rel in relations:
        prod, cons = by_id.get(rel.producer), by_id.get(rel.consumer)
        if prod is None or cons is None or (ok is not None and (rel.producer not in ok
                                                                 or rel.consumer not in ok)):
            continue
        letter = (lt.get(rel.producer, "x"), lt.get(rel.consumer, "x"))
        st = statement(rel, prod, cons, letter, cells=False)
        out.statements[rel] = st
        if st is None:
            continue
        if store is not None:
            from .cache import relation_key
            out.cached[rel] = store.proved(relation_key(rel, prod, cons, timeout_ms),
                                           "composes")
            if out.cached[rel]:
                continue  # its cells are made only where the maps cannot be read
        st = out.statements[rel] = statement(rel, prod, cons, letter)
        assert st is not None
        todo.append((rel, _violation(st)[0]))
    out.unsat.update(unsat_together("composes", todo, timeout_ms))
    return out
