"""The prove stage's entry points: ``prove(model)`` and ``prove_layout(layout)``.

Each layout gets every obligation of ``OBLIGATIONS`` as a ``Verdict`` (placed on the source
line of the formula or table cell it is about), and every refuted or undecided one becomes an
error ``Finding``.  Results of layouts with the same map are shared (a bounded cache): the
spec states the m16n8k16 C/D map for several type groups and it is proved once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from ..base.source import Finding
from ..model.cells import map_of
from ..model.layout import Layout, Model
from .encode import SHARED_TERMS
from .formula import chunk_spec, formula_cores, surjective_core
from .sparse import metadata_cores, quad_fault
from .table import element_list_core, reference_core, register_budget_core, type_names_core
from .verdicts import OBLIGATIONS, Core, InternalError, LayoutResult, Options, Proof, Verdict

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
    return Verdict(name, core.status, message, core.cex, span, "error", core.method)


_CACHE: dict[tuple[Any, ...], Any] = {}


# Results and Z3 terms are shared across layouts with the same map for the life of the
# process; a long-lived caller (a fuzz run, a service) must not grow them without end, so
# each is dropped whole when it reaches its limit.
_CACHE_LIMIT = 4096


_T = TypeVar("_T")


def _cached(key: tuple[Any, ...], fn: Callable[[], _T]) -> _T:
    hit = _CACHE.get(key)
    if hit is None:
        hit = fn()
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit  # type: ignore[no-any-return]


def clear_cache() -> None:
    _CACHE.clear()
    SHARED_TERMS.clear()


NOT_CHECKED = "not checked: a formula of this layout did not parse"


def prove_layout(lay: Layout, opts: Options, by_id: dict[str, Layout] | None = None,
                 a_layout: Layout | None = None) -> LayoutResult:
    by_id = by_id or {}
    verdicts: dict[str, Verdict] = {}
    findings: list[Finding] = []
    m = map_of(lay) if not lay.incomplete else None
    key = (lay.map_key(), lay.elements, lay.lanes, lay.tile, lay.operand, lay.sparse_a,
           opts.cross_check, opts.timeout_ms,
           repr(lay.metadata.selectors if lay.metadata else ()))
    na = Verdict
    formula_names = ("cases", "in-range", "injective", "surjective")
    if lay.incomplete:
        # the obligations that read the map, where they apply: none is decided on a partial one
        for n in (*formula_names, *(("sparse-chunks",) if lay.sparse_a else ()),
                  *(("metadata-coverage", "selector-range") if lay.operand == "metadata"
                    else ()), *(("hardware",) if opts.evidence is not None else ())):
            verdicts[n] = na(n, "error", NOT_CHECKED)
    elif m is None:
        why = "the document gives this layout only as a figure" \
            if lay.source == "figure-only" else "no formulas"
        for n in formula_names:
            verdicts[n] = na(n, "not-applicable", why)
    else:
        spec, spec_core = chunk_spec(lay) if lay.sparse_a else (None, None)
        cores = _cached((*key, "formula", repr(spec)),
                             lambda: formula_cores(m, opts, spec))
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
                      lambda: surjective_core(m, opts, inj, rng, chunks, spec, cases_ok))
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
    verdicts["register-budget"] = _verdict("register-budget", register_budget_core(lay), lay)
    el, remarks = element_list_core(lay)
    verdicts["element-list"] = _verdict("element-list", el, lay)
    if lay.table is not None and lay.table.elements is None and lay.table.fragment is not None \
            and not lay.sparse_a:
        findings.append(Finding("warning", "element-list", lay.table.source.span(0),
                                "this row gives no element list (its register budget is "
                                "still checked from the fragment sentence)", lay.section,
                                None, lay.id))
    src = lay.table.elements_src if lay.table else None
    for pos, msg in remarks:
        if src is not None:
            findings.append(Finding("warning", "punctuation", src.span(pos),
                                    f"element list: {msg}", lay.section, None, lay.id))
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
    verdicts.setdefault("hardware", _hardware(lay, opts))
    ordered = tuple(verdicts[n] for n in OBLIGATIONS if n in verdicts)
    for v in ordered:
        if v.status == "error" and v.message == NOT_CHECKED:
            continue  # the line that did not parse is the one finding
        if v.status in ("refuted", "error"):
            findings.append(Finding("error", v.name, v.span or lay.span, v.message, lay.section,
                                    v.counterexample, lay.id))
        elif v.status == "unknown":
            findings.append(Finding("error", "unknown", v.span or lay.span,
                                    f"{v.name}: {v.message or 'undecided'}", lay.section, None,
                                    lay.id))
    return LayoutResult(lay, ordered, tuple(findings))



def _hardware(lay: Layout, opts: Options) -> Verdict:
    ev = opts.evidence
    if ev is None:
        return Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)")
    return ev.verdict(lay)


def prove(model: Model, opts: Options | None = None) -> Proof:
    opts = opts or Options()
    t0 = time.perf_counter()
    by_id = {lay.id: lay for lay in model.layouts}
    results = []
    findings = list(model.findings)
    internal = 0
    a_by_section: dict[tuple[str, str, str], Layout] = {}
    for lay in model.layouts:
        if lay.sparse_a and lay.formulas:
            a_by_section.setdefault((lay.document, lay.section, str(lay.shape)), lay)
    for lay in model.layouts:
        a_lay = a_by_section.get((lay.document, lay.section, str(lay.shape))) \
            if lay.operand == "metadata" else None
        try:
            res = prove_layout(lay, opts, by_id, a_lay)
        except InternalError as exc:
            internal += 1
            v = tuple(Verdict(n, "error", f"internal error: {exc}") for n in OBLIGATIONS)
            f = Finding("error", "internal", lay.span, f"internal error: {exc}", lay.section,
                        None, lay.id)
            res = LayoutResult(lay, v, (f,))
        results.append(res)
        findings.extend(res.findings)
    secs = {"prove": time.perf_counter() - t0}
    return Proof(tuple(results), tuple(_sorted(findings)), internal, secs)


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
