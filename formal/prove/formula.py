"""The formula obligations: cases, in-range, injective, surjective, sparse-chunks.

Each is decided by Z3 (one combined query per distinct map, per-obligation queries where it
fails) and then by enumeration; a Z3 witness must replay and the two must agree, or it is an
``InternalError``.  For the toy ``row = i``, ``col = lane >> 1`` the injective core is refuted:
Z3 finds two points on one cell, the enumeration finds the smallest, (lane 0, i 0) and
(lane 1, i 0) on (0, 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import sympy as sp
import z3

from ..base.memo import keep_bounded
from ..model.cells import CellMap
from ..model.layout import Formula, Layout
from .encode import Sym, conj, disj, mod_const, ops, solve, z3_int
from .verdicts import Core, InternalError, Options
from .witness import (
    output_ranges,
    witness_cases,
    witness_chunks,
    witness_collision,
    witness_hole,
    witness_range,
)


def _elem(m: CellMap, i: int) -> str:
    if m.lay.operand == "metadata":
        return f"field {i}"
    return f"{m.lay.letter}{i}"


def guard_remarks(lay: Layout, n: int) -> list[tuple[Any, str, dict[str, Any]]]:
    """(span, message, detail) for each bound of a case's condition that names an element
    past the ``n`` a lane holds: one rule for every form (``a7``, ``i = {0,..,7}``, ``i < 8``,
    ``i <= 7``, ``i > 6``, ``i >= 7``), a warning -- the map may still be right, the guard
    is wider than the element list."""
    letter = "field " if lay.operand == "metadata" else lay.letter
    out = []
    for f in (*lay.formulas, *lay.helpers):
        for c in f.cases:
            for k, pos, form in c.named:
                if k < n:
                    continue
                out.append((c.source.span(pos),
                            f"the condition '{c.guard_text}' of '{f.name}' is wider than the "
                            f"element list: '{form}' admits {letter}{k}, but a lane holds "
                            f"only {n} elements ({letter}0..{letter}{n - 1})",
                            {"element": f"{letter}{k}", "elements": n, "bound": form}))
    return out


def _pt(m: CellMap, s: int, t: int, i: int) -> dict[str, Any]:
    d: dict[str, Any] = {"lane": t, "element": _elem(m, i)}
    if m.lay.operand == "metadata":
        d = {"selector": s, **d}
    return d


def _agree(name: str, z3_status: str, enum_status: str) -> None:
    if z3_status in ("proved", "refuted") and enum_status != z3_status:
        raise InternalError(f"{name}: Z3 says {z3_status} but enumeration says {enum_status}")


def _settle(name: str, zs: str, replays: Callable[[], bool], find: Callable[[], Any],
            opts: Options) -> Any:
    """The cross-check of one obligation: a Z3 counterexample must replay in the enumeration
    table, and the enumeration, deciding on its own, must agree with Z3.  Returns the
    smallest witness enumeration finds (None when it finds none or was not asked)."""
    if zs == "refuted" and not replays():
        raise InternalError(f"{name}: the Z3 witness does not replay")
    witness = find() if opts.cross_check or zs in ("refuted", "unknown") else None
    if opts.cross_check:
        _agree(name, zs, "refuted" if witness is not None else "proved")
    return witness


def by_enumeration(zs: str, witness: Any, opts: Options, why: Any = None) -> tuple[str, str]:
    """(status, note): Z3's answer as it is, or where Z3 gave none (``unknown``) the
    enumeration's -- every map here is finite and the enumeration visits all of it, so its
    answer is a proof -- with a note that says so.  ``why``: Z3's reason, if known."""
    if zs != "unknown":
        return zs, ""
    return ("refuted" if witness is not None else "proved"), enumeration_note(opts, why)


def enumeration_note(opts: Options, why: Any = None) -> str:
    reason = str(why or "timeout")
    if "timeout" in reason or "canceled" in reason:
        return f"decided by enumeration; Z3 timed out after {opts.timeout_ms / 1000:g} s"
    return f"decided by enumeration; Z3 gave no answer ({reason})"


def _noted(core: Core, note: str) -> Core:
    return replace(core, note=note, method="enumeration") if note else core


@dataclass(frozen=True)
class _ChunkSpec:
    width: int
    chunk: int
    nonzeros: int


def _violations(sym: Sym, chunks: _ChunkSpec | None) -> dict[str, Any]:
    """Obligation name -> a Z3 formula satisfiable exactly when the obligation fails (the
    terms made by ``encode.ops``, each the term z3's operator would make)."""
    m = sym.m
    rel = ops.rel
    one, zero = sym.val(1), sym.val(0)
    out: dict[str, Any] = {}
    for k, f in enumerate(m.formulas):
        if len(f.cases) == 1 and f.cases[0].cond is sp.true:
            continue
        count = ops.total([ops.ite(c, one, zero) for c in sym.conds[k]], sym.w)
        out[f"cases:{k}"] = conj(sym.dom, ops.ne(count, one))  # as `count != 1`
    ok = [conj(rel(">=", v, sym.val(lo)), rel("<", v, sym.val(hi)))
          for v, (lo, hi) in zip(sym.vals, output_ranges(m))]
    if m.lay.sparse_a:
        ok.append(rel("<=", sym.vals[1], sym.vals[2]))
    out["in-range"] = conj(sym.dom, sym.defined, ops.not_(conj(*ok)))
    s2, t2, i2, dom2, v2, d2, g2 = sym.renamed("2")
    v1 = sym.vals
    conds = [sym.dom, dom2, sym.defined, d2, rel("==", sym.s, s2)]
    if sym.group is not None:
        conds.append(rel("==", sym.group, g2))
    if m.lay.sparse_a:
        same = conj(rel("==", sym.t, t2), rel("==", v1[1], v2[1]), rel("==", v1[2], v2[2]))
        conds += [rel("==", v1[0], v2[0]), ops.not_(same), rel("<=", v1[1], v2[2]),
                  rel("<=", v2[1], v1[2])]
    else:
        conds += [disj(rel("!=", sym.t, t2), rel("!=", sym.i, i2))] + \
            [rel("==", a, b) for a, b in zip(v1, v2)]
    out["injective"] = conj(*conds)
    out["_second"] = (s2, t2, i2)
    if chunks is not None:
        row, fc, lc = v1
        same_key = []
        for j in range(m.n):
            vj, dj = sym.at_element(j)
            same_key.append(ops.ite(conj(dj, rel("==", vj[0], row), rel("==", vj[1], fc),
                                         rel("==", vj[2], lc)), one, zero))
        bad = disj(rel("!=", ops.add(ops.sub(lc, fc), one), sym.val(chunks.width)),
                   rel("!=", mod_const(fc, chunks.chunk, sym.w), zero),
                   rel("!=", ops.total(same_key, sym.w), sym.val(chunks.nonzeros)))
        out["sparse-chunks"] = conj(sym.dom, sym.defined, bad)
    return out


ONE_QUERY = "z3 (one query) + enumeration"  # the method of a map whose combined query is unsat


def combined_violation(m: CellMap, chunks: _ChunkSpec | None) -> Any:
    """The combined query of a map (``formula_cores``'s first): satisfiable exactly when one
    of its obligations fails.  Queries of several maps may be asked as one disjunction: it is
    unsatisfiable exactly when each of them is (``formal.prove.driver``)."""
    viol = _violations(Sym(m), chunks)
    viol.pop("_second")
    return disj(*viol.values())


_W = TypeVar("_W")
_FOUND: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
_FOUND_LIMIT = 4096


def found(m: CellMap, finder: Callable[..., _W], *args: Any) -> _W:
    """``finder(m, *args)``, once a process for every map with the same enumerated arrays
    and the same facts of its layout that a finder reads (``witness.py``: the points,
    outputs, definedness, replication groups and case matches; the selectors, the
    replication's count, sparse A, the tile and the output ranges).  A map stated for
    several layouts shares its arrays (``cells.build_map``): the catalog's 196 formula
    problems search 130 maps.  The arrays are kept with the answer, so their ids name no
    others while it is here (the map and its layout are not: nothing keeps a layout
    alive)."""
    lay = m.lay
    key = (finder, args, id(m.pts), id(m.out), id(m.defined), id(m.groups), id(m.match),
           tuple(m.selectors), lay.groups[1] if lay.groups else 1, lay.sparse_a, lay.tile,
           tuple(output_ranges(m)))
    hit = _FOUND.get(key)
    if hit is not None:
        return hit[1]  # type: ignore[no-any-return]
    answer = finder(m, *args)
    keep_bounded(_FOUND, key, ((m.pts, m.out, m.defined, m.groups, m.match), answer), _FOUND_LIMIT)
    return answer


def clear_found() -> None:
    _FOUND.clear()


def obligation_names(m: CellMap, chunks: _ChunkSpec | None) -> list[str]:
    """The obligations of the combined query, as ``_violations`` names them."""
    out = [f"cases:{k}" for k, f in enumerate(m.formulas)
           if not (len(f.cases) == 1 and f.cases[0].cond is sp.true)]
    return out + ["in-range", "injective"] + (["sparse-chunks"] if chunks is not None else [])


def formula_cores(m: CellMap, opts: Options, chunks: _ChunkSpec | None,
                  z3_said_unsat: bool = False,
                  z3_answers: dict[str, str] | None = None,
                  asked_now: bool = False) -> dict[str, Core]:
    """Decide cases, in-range, injective (and sparse-chunks) for a map.

    One Z3 query asks whether *any* of them fails; when it does not (the usual case) every
    obligation is proved by that one query.  Otherwise each is decided on its own.  Either
    way enumeration decides each again and must agree.  ``z3_said_unsat``: the proof cache
    holds Z3's *unsat* for this query from an earlier run, so Z3 is not asked again -- the
    enumeration still is (with the cross-check off the cache is never consulted), and a
    disagreement raises ``InternalError`` as ever (the caller then drops the entry).
    ``z3_answers``: the cache holds Z3's answer to each obligation (``obligation_names``:
    proved or refuted) from a run where the combined query was *sat*; again the enumeration
    decides each one and must agree, and the witnesses reported are its own.
    ``asked_now``: the *unsat* of ``z3_said_unsat`` is Z3's in this process (to a disjunction
    holding this query, ``driver._ask_together``), not a kept one: with the cross-check off
    it stands as Z3's answer, as the query's own *unsat* would.
    """
    z3_status: dict[str, str] = {}
    z3_models: dict[str, Any] = {}
    sym: Sym | None = None
    second: Any = None
    if ((z3_said_unsat and not asked_now) or z3_answers is not None) and not opts.cross_check:
        raise ValueError("a cached Z3 answer is used only with the enumeration cross-check")
    if z3_said_unsat:
        z3_status = {name: "proved" for name in obligation_names(m, chunks)}
        method = ONE_QUERY
    elif z3_answers is not None:
        if set(z3_answers) != set(obligation_names(m, chunks)):
            raise InternalError("the cached answers name other obligations")
        z3_status = dict(z3_answers)
        method = "z3+enumeration"
    else:
        sym = Sym(m)
        viol = _violations(sym, chunks)
        second = viol.pop("_second")
        r, _model = solve("combined", z3.Or(*viol.values()), opts.timeout_ms)
        if r == "unsat":
            z3_status = {name: "proved" for name in viol}
            method = ONE_QUERY
        else:
            method = "z3+enumeration"
            for name, formula in viol.items():
                rr, model = solve(name, formula, opts.timeout_ms)
                z3_status[name] = {"unsat": "proved", "sat": "refuted"}.get(rr, "unknown")
                z3_models[name] = model
    cores: dict[str, Core] = {}
    for k, f in enumerate(m.formulas):
        cores[f"cases:{k}"] = _cases_core(m, k, f, z3_status.get(f"cases:{k}"),
                                          z3_models.get(f"cases:{k}"), sym, opts, method)
    cores["in-range"] = _range_core(m, z3_status["in-range"], z3_models.get("in-range"), sym,
                                    opts, method)
    cores["injective"] = _injective_core(m, z3_status["injective"],
                                         z3_models.get("injective"), sym, second, opts, method)
    if chunks is not None:
        cores["sparse-chunks"] = _chunks_core(m, chunks, z3_status["sparse-chunks"],
                                              z3_models.get("sparse-chunks"), sym, opts,
                                              method)
    return cores


def _cases_core(m: CellMap, k: int, f: Formula, zs: str | None, model: Any, sym: Sym | None,
                opts: Options, method: str) -> Core:
    if zs is None:
        return Core("proved", method="trivial (one unconditional case)")
    def replays() -> bool:
        if sym is None:
            return True  # a cached answer: no model to replay; the enumeration decides
        p = m.index(*sym.point(model))
        return p is not None and len(m.matches(k, p)) != 1

    witness = _settle(f"cases of '{f.name}'", zs, replays,
                      lambda: found(m, witness_cases, k), opts)
    zs, note = by_enumeration(zs, witness, opts, model)
    return _noted(_cases_verdict(m, k, f, zs, witness, method), note)


def _cases_verdict(m: CellMap, k: int, f: Formula, zs: str, witness: Any,
                   method: str) -> Core:
    if zs == "proved":
        return Core("proved", method=method)
    assert witness is not None
    s_, t_, i_ = m.point(witness)
    hits = m.matches(k, witness)
    cex = {**_pt(m, s_, t_, i_), "formula": f.name, "cases": [j + 1 for j in hits]}
    if not hits:
        return Core("refuted", f"{_elem(m, i_)} of lane {t_} matches no case of "
                     f"'{f.name}'", cex, (f.name, len(f.cases) - 1), method)
    # the source lines are the layout's own: _verdict names them (a core is shared by every
    # layout with the same map, whatever document its text comes from)
    return Core("refuted", f"{_elem(m, i_)} of lane {t_} matches {len(hits)} cases of "
                 f"'{f.name}'", cex, (f.name, hits[1]), method, tuple(hits))


def _range_core(m: CellMap, zs: str, model: Any, sym: Sym | None, opts: Options,
                method: str) -> Core:
    def replays() -> bool:
        if sym is None:
            return True  # a cached answer: no model to replay; the enumeration decides
        p = m.index(*sym.point(model))
        return p is not None and _w_range_at(m, p)

    witness = _settle("in-range", zs, replays, lambda: found(m, witness_range), opts)
    zs, note = by_enumeration(zs, witness, opts, model)
    return _noted(_range_verdict(m, zs, witness, method), note)


def _range_verdict(m: CellMap, zs: str, witness: Any, method: str) -> Core:
    if zs != "refuted":
        return Core(zs, method=method)
    assert witness is not None
    out = m.values(witness)
    ranges = output_ranges(m)
    s_, t_, i_ = m.point(witness)
    k = next((j for j, (v, (lo, hi)) in enumerate(zip(out, ranges)) if not lo <= v < hi), 1)
    case = (m.matches(k, witness) or [0])[0]
    cell = dict(zip(m.names, out))
    if m.lay.operand == "metadata":
        tail = ", out of range"
    else:
        tail = f", outside the {ranges[0][1]} x {ranges[1][1]} tile"
    msg = f"lane {t_}, {_elem(m, i_)} maps to " + \
          ", ".join(f"{n} {v}" for n, v in cell.items()) + tail
    if m.lay.sparse_a and all(lo <= v < hi for v, (lo, hi) in zip(out, ranges)):
        msg = f"lane {t_}, {_elem(m, i_)}: firstcol {out[1]} > lastcol {out[2]}"
    return Core("refuted", msg, {**_pt(m, s_, t_, i_), **cell}, (m.names[k], case), method)


def _w_range_at(m: CellMap, p: int) -> bool:
    """Is point p out of range (the Z3 witness replay)?"""
    out = m.values(p)
    if None in out:
        return False
    bad = any(not lo <= v < hi for v, (lo, hi) in zip(out, output_ranges(m)))
    return bad or bool(m.lay.sparse_a and out[1] > out[2])


def _collide_at(m: CellMap, pa: int, pb: int) -> bool:
    a, b = m.values(pa), m.values(pb)
    sa, sb = m.point(pa), m.point(pb)
    if None in a or None in b or pa == pb or sa[0] != sb[0]:
        return False
    if m.groups[pa] != m.groups[pb]:
        return False
    if m.lay.sparse_a:
        same = sa[1] == sb[1] and a[1] == b[1] and a[2] == b[2]
        return a[0] == b[0] and not same and a[1] <= b[2] and b[1] <= a[2]
    return a == b


def _injective_core(m: CellMap, zs: str, model: Any, sym: Sym | None,
                    second: tuple[Any, Any, Any], opts: Options, method: str) -> Core:
    def replays() -> bool:
        if sym is None:
            return True  # a cached answer: no model to replay; the enumeration decides
        pa = m.index(*sym.point(model))
        pb = m.index(*(z3_int(model, v, sym.w) for v in second))
        return pa is not None and pb is not None and _collide_at(m, pa, pb)

    witness = _settle("injective", zs, replays, lambda: found(m, witness_collision), opts)
    zs, note = by_enumeration(zs, witness, opts, model)
    return _noted(_injective_verdict(m, zs, witness, method), note)


def _injective_verdict(m: CellMap, zs: str, witness: Any, method: str) -> Core:
    if zs != "refuted":
        return Core(zs, method=method)
    assert witness is not None
    pa, pb = witness
    a, b = m.values(pa), m.values(pb)
    sa, sb = m.point(pa), m.point(pb)
    if m.lay.sparse_a:
        msg = (f"lane {sa[1]} ({_elem(m, sa[2])}: row {a[0]}, cols {a[1]}..{a[2]}) and lane "
               f"{sb[1]} ({_elem(m, sb[2])}: row {b[0]}, cols {b[1]}..{b[2]}) hold "
               "overlapping chunks")
        cex = {"first": {**_pt(m, *sa), "row": a[0], "firstcol": a[1], "lastcol": a[2]},
               "second": {**_pt(m, *sb), "row": b[0], "firstcol": b[1], "lastcol": b[2]}}
    else:
        cell = ", ".join(f"{n} {v}" for n, v in zip(m.names, a))
        sel = f"selector {sa[0]}: " if m.lay.operand == "metadata" else ""
        msg = f"{sel}lane {sa[1]} {_elem(m, sa[2])} and lane {sb[1]} {_elem(m, sb[2])} " \
              f"both map to {cell}"
        cex = {"first": _pt(m, *sa), "second": _pt(m, *sb), "cell": dict(zip(m.names, a))}
    return Core("refuted", msg, cex, _culprit(m, pa, pb), method)


def _culprit(m: CellMap, pa: int, pb: int) -> tuple[str, int]:
    """The formula and case to blame for a collision: the first formula whose case differs
    between the two points, else (one case maps both) the last formula."""
    for k, name in enumerate(m.names):
        ha, hb = m.matches(k, pa), m.matches(k, pb)
        if ha and hb and ha[0] != hb[0]:
            return name, hb[0]
    k = len(m.names) - 1
    hb = m.matches(k, pb)
    return m.names[k], hb[0] if hb else 0


def _chunks_core(m: CellMap, spec: _ChunkSpec, zs: str, model: Any, sym: Sym | None,
                 opts: Options, method: str) -> Core:
    def replays() -> bool:
        if sym is None:
            return True  # a cached answer: no model to replay; the enumeration decides
        p = m.index(*sym.point(model))
        return p is not None and _w_chunks_at(m, spec, p) is not None

    witness = _settle("sparse-chunks", zs, replays,
                      lambda: found(m, witness_chunks, spec.width, spec.chunk,
                                    spec.nonzeros), opts)
    zs, note = by_enumeration(zs, witness, opts, model)
    if zs != "refuted":
        return _noted(Core(zs, method=method), note)
    assert witness is not None
    p, why = witness
    out = m.values(p)
    s_, t_, i_ = m.point(p)
    return _noted(Core("refuted", f"lane {t_}, {_elem(m, i_)}: {why}",
                       {**_pt(m, s_, t_, i_), "row": out[0], "firstcol": out[1],
                        "lastcol": out[2]}, ("firstcol", 0), method), note)


def _w_chunks_at(m: CellMap, spec: _ChunkSpec, p: int) -> str | None:
    out = m.values(p)
    if None in out:
        return None
    r, a, b = out
    if b - a + 1 != spec.width or a % spec.chunk:
        return "width or alignment"
    s, t, _i = m.point(p)
    same = sum(1 for q in range(len(m)) if m.point(q)[:2] == (s, t) and m.values(q) == out)
    return None if same == spec.nonzeros else "count"


def chunk_spec(lay: Layout) -> tuple[_ChunkSpec | None, Core | None]:
    """What the table says of the sparse chunks, or why sparse-chunks does not apply."""
    frag = lay.table.fragment if lay.table else None
    sparsity = lay.sparsity
    if frag is None or frag.per_register is None or frag.out_of is None:
        return None, Core("not-applicable", "the table states no 'N non-zero out of M "
                           "consecutive'", method="table")
    nz, width = frag.per_register.value, frag.out_of.value
    if sparsity is not None and nz * sparsity.chunk != width * sparsity.nonzeros:
        return None, Core(
            "refuted", f"the table says {nz} non-zero out of {width}, but "
            f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse",
            {"stated": [nz, width], "pattern": [sparsity.nonzeros, sparsity.chunk]}, None,
            "table")
    return _ChunkSpec(width, sparsity.chunk if sparsity else width, nz), None


SURJECTIVE_Z3 = ("z3+enumeration", "z3 (quantified) + enumeration")  # methods that asked Z3


def surjective_core(m: CellMap, opts: Options, inj: Core, rng: Core,
                    chunks: Core | None, spec: _ChunkSpec | None, cases_ok: bool,
                    cached: Callable[[], str | None] | None = None) -> Core:
    """Every cell held.  Counting where it applies, else a Z3-confirmed hole, else Z3.

    The counting argument needs every point of the domain to have a value: ``cases_ok``
    (every formula's cases exhaustive, as Z3 proved), besides injectivity and range.
    ``cached``, asked only where Z3 would be: Z3's answer in an earlier run (proved |
    refuted, from the proof cache) or None; with an answer Z3 is not asked, the enumeration
    decides as ever and must agree (a hole it finds is the counterexample), else
    ``InternalError``.
    """
    lay = m.lay
    ngroups = lay.groups[1] if lay.groups else 1
    hole = found(m, witness_hole) if opts.cross_check else None
    per_sel = len(m) // max(1, len(m.selectors))
    ranges = output_ranges(m)
    cells = 1
    for _lo, hi in ranges if not lay.sparse_a else ranges[:1]:
        cells *= hi
    if lay.sparse_a:
        counted = (cases_ok and inj.status == "proved" and rng.status == "proved"
                   and chunks is not None
                   and chunks.status == "proved" and spec is not None
                   and (len(m) // spec.nonzeros) * spec.width == lay.tile[0] * lay.tile[1])
        if counted:
            if hole is not None:
                raise InternalError(f"surjective: counting proves coverage, enumeration finds "
                                    f"{hole[2]} uncovered")
            return Core("proved", method="counting (disjoint chunks x width = tile)")
    elif cases_ok and inj.status == "proved" and rng.status == "proved" and \
            per_sel == cells * ngroups:
        if hole is not None:
            raise InternalError(f"surjective: counting proves coverage, enumeration finds "
                                f"{hole[2]} uncovered")
        return Core("proved", method="counting (injective, |domain| = |tile|)")
    if hole is None and not opts.cross_check:
        hole = found(m, witness_hole)
    z3_answer = cached() if cached is not None else None
    if z3_answer is not None:
        if not opts.cross_check:
            raise ValueError("a cached Z3 answer is used only with the enumeration cross-check")
        if (hole is not None) != (z3_answer == "refuted"):
            raise InternalError(f"surjective: the cached answer is {z3_answer}, the "
                                f"enumeration finds {'a hole' if hole else 'none'}")
        if hole is None:
            return Core("proved", method=SURJECTIVE_Z3[1])
        return _hole_core(m, hole)
    sym = Sym(m)
    if hole is not None:
        s_, g, cell = hole
        v = sym.vals
        if lay.sparse_a:
            hit = z3.And(v[0] == sym.val(cell[0]), v[1] <= sym.val(cell[1]),
                         sym.val(cell[1]) <= v[2])
        else:
            hit = z3.And(*[x == sym.val(c) for x, c in zip(v, cell)])
        dom = z3.And(sym.dom, sym.defined, sym.s == sym.val(s_))
        if sym.group is not None:
            dom = z3.And(dom, sym.group == sym.val(g))
        r, _model = solve("surjective", z3.And(dom, hit), opts.timeout_ms)
        if r == "sat":
            raise InternalError(f"surjective: enumeration finds {cell} uncovered, Z3 finds a "
                                "pre-image")
        if r == "unknown":  # the enumeration found the hole: a proof that it is one
            return _noted(_hole_core(m, hole), enumeration_note(opts, _model))
        return _hole_core(m, hole)
    # neither counting nor a hole: the quantified statement, for Z3 to decide
    cell_vars = [z3.BitVec(f"cell{k}", sym.w) for k in range(len(ranges))]
    v = sym.vals
    if lay.sparse_a:
        cv = cell_vars[:2]
        hit = z3.And(v[0] == cv[0], v[1] <= cv[1], cv[1] <= v[2])
        in_tile = z3.And(cv[0] >= 0, cv[0] < sym.val(lay.tile[0]), cv[1] >= 0,
                         cv[1] < sym.val(lay.tile[1]))
    else:
        hit = z3.And(*[x == c for x, c in zip(v, cell_vars)])
        in_tile = z3.And(*[z3.And(c >= sym.val(lo), c < sym.val(hi))
                           for c, (lo, hi) in zip(cell_vars, ranges)])
    sq = z3.BitVec("sq", sym.w)
    gq = z3.BitVec("gq", sym.w)
    scope = [sym.dom, sym.defined, sym.s == sq]
    if sym.group is not None:
        scope.append(sym.group == gq)
    body = z3.ForAll([sym.s, sym.t, sym.i], z3.Implies(z3.And(*scope), z3.Not(hit)))
    sel_ok = z3.Or(*[sq == sym.val(x) for x in m.selectors])
    g_ok = z3.And(gq >= 0, gq < sym.val(ngroups))
    r, model = solve("surjective", z3.And(sel_ok, g_ok, in_tile, body), opts.timeout_ms,
                      quantified=True)
    if r == "unknown":  # the enumeration found no hole: every cell is held
        return Core("proved", method="enumeration", note=enumeration_note(opts, model))
    if r == "sat":
        raise InternalError("surjective: Z3 finds an uncovered cell that enumeration covers")
    return Core("proved", method=SURJECTIVE_Z3[1])


def _hole_core(m: CellMap, hole: tuple[int, int, tuple[int, ...]]) -> Core:
    """The refutation of ``surjective`` by a cell no point holds (``witness_hole``)."""
    lay = m.lay
    s_, g, cell = hole
    names = ("row", "col") if lay.sparse_a else m.names
    where = ", ".join(f"{n} {v}" for n, v in zip(names, cell))
    prefix = f"selector {s_}: " if lay.operand == "metadata" else \
        (f"{lay.groups[0]} {g}: " if lay.groups else "")
    cex: dict[str, Any] = {"cell": dict(zip(names, cell))}
    if lay.operand == "metadata":
        cex["selector"] = s_
    return Core("refuted", f"{prefix}no (lane, element) holds {where}", cex,
                (m.names[-1], 0))
