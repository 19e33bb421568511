"""The prove stage's entry points: ``prove(model)`` and ``prove_layout(layout)``.

Each layout gets every obligation of ``OBLIGATIONS`` as a ``Verdict`` (placed on the source
line of the formula or table cell it is about), and every refuted or undecided one becomes an
error ``Finding``.  Results of layouts with the same map are shared (a bounded cache): the
spec states the m16n8k16 C/D map for several type groups and it is proved once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ..base.memo import keep_bounded
from ..base.source import Finding
from ..model.cells import clear_enumerated, map_of
from ..model.layout import Layout, Model
from ..model.sreprs import kept as sreprs_kept
from .cache import ProofCache, entry_key
from .composes import RelationVerdict, prove_relations
from .confirm import stated_in
from .encode import SHARED_TERMS, unsat_together
from .every_n import every_n_core
from .formula import (
    ONE_QUERY,
    SURJECTIVE_Z3,
    chunk_spec,
    clear_found,
    combined_violation,
    formula_cores,
    guard_remarks,
    obligation_names,
    surjective_core,
)
from .kept_hashes import KeptHashes
from .kept_verdicts import KeptVerdicts, judged
from .relations import relation_table
from .sparse import metadata_cores, quad_fault
from .table import element_list_core, reference_core, register_budget_core, type_names_core
from .verdicts import (
    OBLIGATIONS,
    TEST_HOOKS,
    Core,
    InternalError,
    LayoutResult,
    Options,
    Proof,
    Verdict,
)
from .witness import output_ranges

# ---- per layout ----------------------------------------------------------------------------------


def _verdict(name: str, core: Core, lay: Layout) -> Verdict:
    span = lay.span
    if core.where is not None:
        fname, j = core.where
        if fname == "elements" and lay.table and lay.table.elements_src is not None:
            span = lay.table.elements_src.span(j)
        else:
            f = lay.formula(fname)
            if f is not None and f.cases:
                span = f.cases[min(j, len(f.cases) - 1)].source.strip().span(0)
    elif name in ("register-budget", "sparse-chunks") and lay.table is not None:
        fr = lay.table.fragment
        src = lay.table.fragment_src
        if src is not None and fr is not None:
            span = src.span(fr.register_kind_pos if name == "register-budget" else 0)
    elif name == "reference" and lay.reference_src is not None:
        span = lay.reference_src.span(0)
    elif name in ("metadata-coverage", "selector-range") and lay.metadata is not None:
        src = lay.metadata.desc_src or lay.metadata.selectors_src
        if src is not None:
            span = src.span(0)
    message = core.message
    if core.cases and core.where is not None:
        f = lay.formula(core.where[0])
        if f is not None and max(core.cases) < len(f.cases):
            lines = ", ".join(str(f.cases[j].source.line) for j in core.cases)
            message += f" (lines {lines})"
    return Verdict(name, core.status, message, core.cex, span, "error", core.method, core.note)


_CACHE: dict[tuple[Any, ...], Any] = {}


# Results and Z3 terms are shared across layouts with the same map for the life of the
# process; a long-lived caller (a fuzz run, a service) must not grow them without end, so
# each is dropped whole when it reaches its limit.
_CACHE_LIMIT = 4096


_T = TypeVar("_T")


def _shared_key(lay: Layout, m: Any, opts: Options) -> tuple[Any, ...]:
    """What the formula obligations of a map read, and nothing else: its formulas over its
    domain (lanes, elements, selectors, holder, replication), the output ranges (the tile),
    and the names its messages use (the element letter, the operand).  Layouts of another
    instruction or shape with the same formulas over the same tile share one proof (the
    catalog states 97 maps, 70 of them different problems); each verdict is still placed
    on the layout's own source lines (``_verdict``)."""
    return (m.names, tuple((f.name, tuple((c.value, c.cond, c.otherwise) for c in f.cases))
                           for f in m.formulas),
            m.lanes, m.n, m.selectors, m.holder, m.group, tuple(output_ranges(m)),
            lay.sparse_a, lay.letter, lay.operand, lay.groups, lay.tile, opts.cross_check,
            opts.timeout_ms)


def _cached(key: tuple[Any, ...], fn: Callable[[], _T]) -> _T:
    hit = _CACHE.get(key)
    if hit is None:
        hit = fn()
        keep_bounded(_CACHE, key, hit, _CACHE_LIMIT)
    return hit  # type: ignore[no-any-return]


def clear_cache() -> None:
    _CACHE.clear()
    clear_found()
    SHARED_TERMS.clear()
    clear_enumerated()


def _obligation(spec: Any) -> str:
    return "cases+in-range+injective" + ("+sparse-chunks" if spec is not None else "")


@dataclass
class _Together:
    """What ``_ask_together`` learnt before the layouts are proved one by one: the maps
    whose combined query Z3 answered *unsat* inside a disjunction of several (by their
    ``_cached`` key), and the disk cache's answer read for each map (None: no entry)."""

    unsat: set[tuple[Any, ...]] = field(default_factory=set)
    read: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    # each layout's ``_shared_key``, by the layout object (kept with it: its id names no
    # other while here), so that ``prove_layout`` does not write it again
    keys: dict[int, tuple[Layout, tuple[Any, ...]]] = field(default_factory=dict)

    def key_of(self, lay: Layout) -> tuple[Any, ...] | None:
        hit = self.keys.get(id(lay))
        return hit[1] if hit is not None and hit[0] is lay else None


def _ask_together(layouts: Iterable[Layout], opts: Options,
                  store: ProofCache | None) -> _Together:
    """Z3's combined query of every map not answered already (in this process or by the
    disk cache), asked ``encode.TOGETHER`` maps at a time as one disjunction: *unsat* says of each
    map what its own query would (none of its obligations fails); a model names the maps
    it satisfies, which are left to be asked alone, and the rest asked again.  With the
    cross-check, every map is still enumerated and decided again by ``formula_cores``
    (``z3_said_unsat``); without it, Z3's *unsat* to the group is each map's answer, as the
    map's own query's would be (the disk cache is opened only with the cross-check)."""
    out = _Together()
    if TEST_HOOKS:
        return out  # a planted encoding must meet Z3 on its own
    todo: list[tuple[tuple[Any, ...], Any]] = []
    for lay in layouts:
        m = map_of(lay) if not lay.incomplete else None
        if m is None:
            continue
        spec = chunk_spec(lay)[0] if lay.sparse_a else None
        key = _shared_key(lay, m, opts)
        out.keys[id(lay)] = (lay, key)
        ck = (*key, "formula", repr(spec))
        if ck in _CACHE or ck in out.read:
            continue
        answers = None
        if store is not None:
            obligation = _obligation(spec)
            answers = store.answers(entry_key(lay, obligation, spec, opts.timeout_ms),
                                    obligation, obligation_names(m, spec))
        out.read[ck] = answers
        if answers is None:
            try:
                todo.append((ck, combined_violation(m, spec)))
            except InternalError:
                pass  # no encoding: the layout meets it again on its own, and says so
    out.unsat.update(unsat_together("combined", todo, opts.timeout_ms))
    return out


def _formula_cores(lay: Layout, m: Any, opts: Options, spec: Any,
                   store: ProofCache | None, together: _Together | None = None,
                   ck: tuple[Any, ...] = ()) -> dict[str, Core]:
    """``formula_cores``, with Z3's answers taken from where they are known: *unsat* to a
    disjunction holding this map's combined query (``_ask_together``), or the disk cache's
    *unsat* to the combined query or each obligation's proved / refuted (the enumeration
    decides again either way; a cache entry it contradicts is dropped)."""
    if TEST_HOOKS:
        return formula_cores(m, opts, spec)  # a planted encoding must meet Z3, not the cache
    obligation = _obligation(spec)
    if together is not None and ck in together.unsat:
        cores = formula_cores(m, opts, spec, z3_said_unsat=True, asked_now=True)
        if store is not None:  # Z3 answered unsat in this run: kept as its own query's
            store.store(entry_key(lay, obligation, spec, opts.timeout_ms), obligation)
        return cores
    if not opts.cross_check:
        return formula_cores(m, opts, spec)  # Z3 alone: the disk cache is never read
    if store is None:
        return formula_cores(m, opts, spec)
    key = entry_key(lay, obligation, spec, opts.timeout_ms)
    names = obligation_names(m, spec)
    answers = together.read[ck] if together is not None and ck in together.read \
        else store.answers(key, obligation, names)
    if answers is not None:
        try:
            if all(a == "proved" for a in answers.values()):
                return formula_cores(m, opts, spec, z3_said_unsat=True)
            return formula_cores(m, opts, spec, z3_answers=answers)
        except InternalError as exc:
            said = "proved" if all(a == "proved" for a in answers.values()) else \
                "answered " + ", ".join(f"{n} {a}" for n, a in sorted(answers.items()))
            store.reject(key, f"says Z3 {said} {obligation}, but the enumeration finds "
                         f"otherwise ({exc}); removed")
    cores = formula_cores(m, opts, spec)
    if any(c.note for c in cores.values()):
        return cores  # Z3 gave no answer to keep: the enumeration decided
    if all(c.status == "proved" for c in cores.values()) and \
            any(c.method == ONE_QUERY for c in cores.values()):
        store.store(key, obligation)  # Z3 answered unsat to the combined query
    elif all(cores[n].status in ("proved", "refuted") for n in names) and \
            any(cores[n].status == "refuted" for n in names):
        store.store_answers(key, obligation, {n: cores[n].status for n in names})
    return cores


def _surjective(lay: Layout, m: Any, opts: Options, inj: Core, rng: Core, chunks: Core | None,
                spec: Any, cases_ok: bool, store: ProofCache | None) -> Core:
    """``surjective_core``, with Z3's earlier answer from the disk cache where the counting
    argument does not apply (an entry the enumeration contradicts is dropped)."""
    if store is None or not opts.cross_check or TEST_HOOKS:
        return surjective_core(m, opts, inj, rng, chunks, spec, cases_ok)
    key = entry_key(lay, "surjective", spec, opts.timeout_ms)
    said: list[str] = []

    def cached() -> str | None:  # asked only where counting does not decide
        answers = store.answers(key, "surjective", ["surjective"])
        if answers is None:
            return None
        said.append(answers["surjective"])
        return said[0]

    try:
        core = surjective_core(m, opts, inj, rng, chunks, spec, cases_ok, cached)
        if said:
            return core  # Z3's answer came from the cache, and the enumeration agreed
    except InternalError as exc:
        if not said:
            raise
        store.reject(key, f"says Z3 answered surjective {said[0]}, but the enumeration "
                     f"finds otherwise ({exc}); removed")
        core = surjective_core(m, opts, inj, rng, chunks, spec, cases_ok)
    if core.method in SURJECTIVE_Z3 and core.status == "proved":
        store.store(key, "surjective")
    elif core.method in SURJECTIVE_Z3 and core.status == "refuted":
        store.store_answers(key, "surjective", {"surjective": "refuted"})
    return core


NOT_CHECKED = "not checked: a formula of this layout did not parse"
NOT_CHECKED_FIGURE = "not checked: the document gives no formulas for this layout (a figure " \
    "at most) and the catalog states none for its instruction, shape, operand and types"


def _every_n(lay: Layout, check: Callable[[Layout], Core]) -> Core:
    """A table obligation of a layout stated for every N (``Layout.n_values``): checked on
    the layout at each N, the first that fails named; else the layout's own."""
    if not lay.n_values:
        return check(lay)
    for n in lay.n_values:
        core = check(lay.at(n))
        if core.status != "proved":
            return replace(core, message=f"at N = {n}: {core.message}")
    return core


def prove_layout(lay: Layout, opts: Options, by_id: dict[str, Layout] | None = None,
                 a_layout: Layout | None = None, stated: Any = None,
                 store: ProofCache | None = None,
                 together: _Together | None = None,
                 kept: KeptVerdicts | None = None) -> LayoutResult:
    """Every obligation of one layout; ``stated`` (``formal.prove.confirm.stated_in``) names
    the layouts its document states for the other operands of its variants; ``store`` is the
    on-disk proof cache (``formal.prove.cache``), if any; ``together``: what Z3 answered of
    the run's maps asked together (``_ask_together``)."""
    by_id = by_id or {}
    verdicts: dict[str, Verdict] = {}
    findings: list[Finding] = []
    m = map_of(lay) if not lay.incomplete else None
    key = (together.key_of(lay) if together is not None else None) or \
        (_shared_key(lay, m, opts) if m is not None else ())
    na = Verdict
    formula_names = ("cases", "in-range", "injective", "surjective")
    if lay.incomplete:
        # the obligations that read the map, where they apply: none is decided on a partial one
        for n in (*formula_names, *(("sparse-chunks",) if lay.sparse_a else ()),
                  *(("metadata-coverage", "selector-range") if lay.operand == "metadata"
                    else ()), *(("hardware",) if opts.evidence is not None else ())):
            verdicts[n] = na(n, "error", NOT_CHECKED)
    elif m is None and lay.source == "figure-only":
        # no formulas in the text and none in the catalog for it: nothing is proved of its
        # cells, and one finding says so
        for n in formula_names:
            verdicts[n] = na(n, "error", NOT_CHECKED_FIGURE)
        findings.append(Finding("error", "figure-only", lay.span, NOT_CHECKED_FIGURE,
                                lay.section, None, lay.id))
    elif m is None:
        for n in formula_names:
            verdicts[n] = na(n, "not-applicable", "no formulas")
    else:
        spec, spec_core = chunk_spec(lay) if lay.sparse_a else (None, None)
        ck = (*key, "formula", repr(spec))
        cores = _cached(ck, lambda: _formula_cores(lay, m, opts, spec, store, together, ck))
        case_cores = [cores[f"cases:{k}"] for k in range(len(m.formulas))]
        bad = next((c for c in case_cores if c.status != "proved"), None)
        verdicts["cases"] = _verdict("cases", bad or case_cores[0], lay)
        rng, inj = cores["in-range"], cores["injective"]
        verdicts["in-range"] = _verdict("in-range", rng, lay)
        verdicts["injective"] = _verdict("injective", inj, lay)
        chunks = None
        if lay.sparse_a:
            chunks = cores.get("sparse-chunks", spec_core)
            assert chunks is not None
            verdicts["sparse-chunks"] = _verdict("sparse-chunks", chunks, lay)
        cases_ok = all(c.status == "proved" for c in case_cores)
        sur = _cached((*key, "surjective", repr(spec)),
                      lambda: _surjective(lay, m, opts, inj, rng, chunks, spec, cases_ok,
                                          store))
        if lay.n_values and sur.status == "proved":
            every = _cached((*key, "every-n", lay.n_values), lambda: every_n_core(m))
            if every.status != "proved":
                sur = every
        verdicts["surjective"] = _verdict("surjective", sur, lay)
        if lay.operand == "metadata":
            cov, sel = metadata_cores(m, opts, inj, sur)
            if cov.status == "proved" and a_layout is not None:
                qf = quad_fault(m, a_layout)
                if qf is not None:
                    cov = Core("refuted", qf[0], qf[1], None, "enumeration")
            verdicts["metadata-coverage"] = _verdict("metadata-coverage", cov, lay)
            verdicts["selector-range"] = _verdict("selector-range", sel, lay)
    if lay.operand == "metadata" and m is None and not lay.incomplete:
        verdicts["metadata-coverage"] = na("metadata-coverage", "not-applicable",
                                           "no metadata layout (the spec gives a figure)")
        verdicts["selector-range"] = na("selector-range", "not-applicable",
                                        "no metadata layout")
    verdicts["register-budget"] = _verdict("register-budget",
                                           _every_n(lay, register_budget_core), lay)
    el, remarks = element_list_core(lay.at(max(lay.n_values)) if lay.n_values else lay)
    if lay.n_values and el.status == "proved":
        el = _every_n(lay, lambda at: element_list_core(at)[0])
    verdicts["element-list"] = _verdict("element-list", el, lay)
    if lay.table is not None and lay.table.elements is None and lay.table.fragment is not None \
            and not lay.sparse_a and lay.instruction != "wmma":  # wmma's tables name no elements
        findings.append(Finding("warning", "element-list", lay.table.source.span(0),
                                "this row gives no element list (its register budget is "
                                "still checked from the fragment sentence)", lay.section,
                                None, lay.id))
    src = lay.table.elements_src if lay.table else None
    for pos, msg in remarks:
        if src is not None:
            findings.append(Finding("warning", "punctuation", src.span(pos),
                                    f"element list: {msg}", lay.section, None, lay.id))
    for span, msg, detail in guard_remarks(lay, m.n if m is not None else lay.elements):
        findings.append(Finding("warning", "guard", span, msg, lay.section, detail, lay.id))
    verdicts["reference"] = _verdict("reference", reference_core(lay, by_id), lay)
    tcore, twarns, tspans = type_names_core(lay)
    v = _verdict("type-names", tcore, lay)
    if tspans:
        first = tspans[0][0]
        v = replace(v, span=first or v.span)
        for s, msg in tspans[1:]:
            findings.append(Finding("error", "type-names", s or lay.span, msg, lay.section,
                                    None, lay.id))
    verdicts["type-names"] = v
    for s, msg in twarns:
        findings.append(Finding("warning", "type-names", s, msg, lay.section, None, lay.id))
    if not lay.sparse_a:
        verdicts["sparse-chunks"] = na("sparse-chunks", "not-applicable")
    for n in ("metadata-coverage", "selector-range"):
        verdicts.setdefault(n, na(n, "not-applicable"))
    verdicts.setdefault("hardware", _hardware(lay, opts, stated, kept))
    ordered = tuple(verdicts[n] for n in OBLIGATIONS if n in verdicts)
    for v in ordered:
        if v.status == "error" and v.message in (NOT_CHECKED, NOT_CHECKED_FIGURE):
            continue  # the line that did not parse is the one finding
        if v.status in ("refuted", "error"):
            findings.append(Finding("error", v.name, v.span or lay.span, v.message, lay.section,
                                    v.counterexample, lay.id))
        elif v.status == "unconfirmed":
            findings.append(Finding("warning", v.name, v.span or lay.span, v.message,
                                    lay.section, v.counterexample, lay.id))
        elif v.status == "unknown":
            findings.append(Finding("error", "unknown", v.span or lay.span,
                                    f"{v.name}: {v.message or 'undecided'}", lay.section, None,
                                    lay.id))
    return LayoutResult(lay, ordered, tuple(findings))



def _hardware(lay: Layout, opts: Options, stated: Any = None,
              kept: KeptVerdicts | None = None) -> Verdict:
    ev = opts.evidence
    if ev is None:
        return Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)")
    if kept is None:
        return ev.verdict(lay, stated)
    return judged(ev, lay, stated, kept)


def _keep_hashes(opts: Options) -> tuple[KeptHashes | None, KeptVerdicts | None]:
    """The kept map hashes (``kept_hashes``) the evidence reads and adds to in this run, and
    the kept hardware verdicts (``kept_verdicts``), where there is evidence and a disk
    cache."""
    if opts.evidence is None or not opts.disk_cache:
        return None, None
    kept = KeptHashes.open()
    if kept is not None:
        opts.evidence.keep_hashes(kept)
    return kept, KeptVerdicts.open()


def prove(model: Model, opts: Options | None = None) -> Proof:
    opts = opts or Options()
    with sreprs_kept(opts.disk_cache):  # the formulas' srepr texts (``model/sreprs.py``)
        return _prove(model, opts)


def _prove(model: Model, opts: Options) -> Proof:
    t0 = time.perf_counter()
    by_id = {lay.id: lay for lay in model.layouts}
    results = []
    findings = list(model.findings)
    internal = 0
    a_by_section: dict[tuple[str, str, str], Layout] = {}
    for lay in model.layouts:
        if lay.sparse_a and lay.formulas:
            a_by_section.setdefault((lay.document, lay.section, str(lay.shape)), lay)
    stated = stated_in(model.layouts) if opts.evidence is not None else None
    store = ProofCache.open() if opts.disk_cache and opts.cross_check else None
    kept, judgements = _keep_hashes(opts)
    try:
        together = _ask_together(model.layouts, opts, store)
        for n, lay in enumerate(model.layouts):
            a_lay = a_by_section.get((lay.document, lay.section, str(lay.shape))) \
                if lay.operand == "metadata" else None
            res, failed = _prove_one(lay, opts, by_id, a_lay, stated, store, together,
                                     judgements)
            results.append(res)
            findings.extend(res.findings)
            internal += failed
            if opts.progress is not None:
                opts.progress(n + 1, len(model.layouts))
        t1 = time.perf_counter()
        try:
            relations, rel_findings = _relations(model, results, opts, store)
        except InternalError as exc:
            internal += 1
            relations = []
            rel_findings = [Finding("error", "internal", model.layouts[0].span,
                                    f"internal error: {exc}")]
    finally:
        if store is not None:
            store.close()
        if kept is not None:
            kept.close()
            opts.evidence.keep_hashes(None)
        if judgements is not None:
            judgements.close()
    findings.extend(rel_findings)
    secs = {"prove": t1 - t0, "relations": time.perf_counter() - t1}
    return Proof(tuple(results), tuple(_sorted(findings)), internal, secs, tuple(relations))


def _relations(model: Model, results: list[LayoutResult], opts: Options,
               store: ProofCache | None = None,
               ) -> tuple[list[RelationVerdict], list[Finding]]:
    """The ``composes`` table's rows whose producer and consumer are both in the model:
    proved, or refuted as an error finding at the consumer (its counterexample attached)."""
    by_short: dict[str, Layout] = {}
    for lay in model.layouts:
        by_short.setdefault(lay.short_id, lay)
    rows = [r for r in relation_table() if r.producer in by_short and r.consumer in by_short]
    if not rows:
        return [], []
    healthy = {r.layout.short_id for r in results if r.ok}
    letters = {k: lay.letter for k, lay in by_short.items()}
    verdicts = prove_relations(rows, by_short.values(), opts.timeout_ms, True, healthy,
                               letters, store)
    findings = []
    for v in verdicts:
        if v.status == "proved":
            continue
        cons = by_short[v.relation.consumer]
        what = f"composes {v.relation.producer} -> {v.relation.consumer}"
        severity = "error" if v.status == "refuted" else "warning"
        findings.append(Finding(severity, "composes", cons.span,
                                f"{what}: {v.status}" + (f": {v.message}" if v.message else ""),
                                cons.section, v.counterexample, cons.id))
    return verdicts, findings


def _prove_one(lay: Layout, opts: Options, by_id: dict[str, Layout], a_lay: Layout | None,
               stated: Any, store: ProofCache | None,
               together: _Together | None = None,
               kept: KeptVerdicts | None = None) -> tuple[LayoutResult, bool]:
    """The layout's result, and whether it is an internal error."""
    try:
        return prove_layout(lay, opts, by_id, a_lay, stated, store, together, kept), False
    except InternalError as exc:
        v = tuple(Verdict(n, "error", f"internal error: {exc}") for n in OBLIGATIONS)
        f = Finding("error", "internal", lay.span, f"internal error: {exc}", lay.section,
                    None, lay.id)
        return LayoutResult(lay, v, (f,)), True


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in sorted(findings, key=lambda f: (f.span.document, f.span.line, f.span.column,
                                             f.kind, f.message, f.layout)):
        key = (f.span, f.kind, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out
