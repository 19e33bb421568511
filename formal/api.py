"""The pipeline as one call: documents -> model -> proof (what the CLI and the tests use).

    >>> from formal.api import analyze
    >>> model, proof = analyze(["spec.txt"])        # doctest: +SKIP

With no paths the embedded catalog is proven.  References in the documents resolve against
the documents themselves and then the catalog.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the stages are imported where they run: find() and the views need none
    from .model.layout import Layout, Model
    from .prove.verdicts import Options, Proof
    from .text.blocks import Document
    from .writers.diff import Change
    from .writers.views import IndexEntry


from .base.collector import few_collections
from .writers.cards import find  # the ids' vocabulary: find, pick, card (light imports)


@dataclass(frozen=True)
class Analysis:
    """What ``analyze`` found: the documents' model, its proof and the seconds each took."""

    model: Model
    proof: Proof
    seconds: dict[str, float] = field(default_factory=dict)


def model_of(paths: Sequence[str | Path], max_bytes: int | None = None,
             use_catalog: bool = True, corrections: bool = False,
             progress: Callable[..., None] | None = None) -> Model:
    """The model of the documents at ``paths`` (none: the catalog's).  ``progress``, a
    callback ``(done, total, part)``, hears how many of the documents are read, parsed and
    modeled (``part``: how far into the next one: half once it is read); ``max_bytes``:
    the largest document read (default ``formal.text.blocks.MAX_BYTES``)."""
    from . import catalog
    from .model.resolve import build, catalog_model
    from .text.blocks import MAX_BYTES
    from .text.read import read_path
    if not paths:
        return catalog_model(corrections) if use_catalog else build([], [])
    cat = list(catalog.documents(corrections)) if use_catalog else []
    tell = progress or (lambda *_: None)
    total = len(paths)

    def each() -> Iterator[Document]:  # read one at a time, so that the count moves
        for k, p in enumerate(paths):
            doc = read_path(p, MAX_BYTES if max_bytes is None else max_bytes)
            tell(k, total, 0.5)
            yield doc

    model = build(each(), cat, lambda k: tell(k, total, 0.0) if k < total else None)
    tell(total, total, 0.0)
    return model


def analyze(paths: Sequence[str | Path], options: Options | None = None,
            max_bytes: int | None = None, use_catalog: bool = True,
            corrections: bool = False,
            accept: Sequence[dict[str, Any]] | None = None,
            reading: Callable[..., None] | None = None) -> Analysis:
    """Prove the documents (none: the catalog).  ``accept`` lists known errata to accept;
    by default, proving the catalog accepts the spec's errata it keeps on purpose.
    ``reading``: a progress callback for reading the documents (``model_of``'s)."""
    from . import catalog
    from .prove.cache import flush as keep_proofs
    from .prove.driver import prove
    from .prove.verdicts import Options
    from .writers.ledger import mark_accepted
    with few_collections():
        t0 = time.perf_counter()
        model = model_of(paths, max_bytes, use_catalog, corrections, reading)
        t1 = time.perf_counter()
        proof = prove(model, with_catalog_tables(options or Options()))
        named = {str(p) for p in paths}
        proof = with_families(proof, model, [d for d in model.documents if d.name in named],
                              use_catalog and not paths, (options or Options()).evidence)
        if accept is None:
            accept = catalog.errata() if not paths and use_catalog else []
        proof = mark_accepted(proof, accept)
        keep_proofs()  # Z3's new answers, one batch file (formal/prove/cache.py)
        t2 = time.perf_counter()
    return Analysis(model, proof, {"model": t1 - t0, "prove": t2 - t1})


def with_families(proof: Proof, model: Model, documents: Sequence[Document],
                  the_catalog: bool, evidence: Any = None) -> Proof:
    """``proof`` (the fragments') with every other family ``prove`` reports: the shared-memory
    layouts, the block-scale factors, tcgen05's sparse tables, metadata and copies (the
    catalog's), and the data paths -- of ``documents``, and the catalog's with
    ``the_catalog``; ``evidence``: the GPU evidence read (None: none)."""
    proof = with_smem(proof, documents, the_catalog, evidence)
    proof = with_block_scale(proof, documents, the_catalog, model,
                             False if evidence is None else evidence)
    proof = with_tc_sparse(proof, documents)
    if the_catalog:
        proof = with_tc_meta(proof, evidence)
        proof = with_tc_copy(proof, evidence is not None)
    return with_datapath(proof, model, documents, the_catalog, evidence)


SMEM_CATALOG = "catalog/smem/layouts.md"
SMEM_K_SLICES = "catalog/smem/k-slices.md"


def with_smem(proof: Proof, documents: Sequence[Document], the_catalog: bool = False,
              evidence: Any = None) -> Proof:
    """``proof`` with the shared-memory layouts, examples and descriptor tables proved
    (``formal.prove.smem``): the catalog's, at every width wgmma and tcgen05 take, with
    ``the_catalog``; and each document's, from the lines the text stage read (the file is
    never opened twice).  A document whose only sections are these is read: the text stage's
    'no operand blocks' error for it is dropped."""
    from . import catalog
    from .model.smem import read_smem
    from .prove.cache import held_open
    from .prove.smem import prove_smem
    proofs = []
    with held_open():  # the proof cache's folder opened once for every query
        if the_catalog:
            text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
            proofs.append(prove_smem(read_smem(text, SMEM_CATALOG),
                                     catalog_families=("wgmma", "tcgen05"), evidence=evidence))
            text = (catalog.CATALOG_DIR / "smem" / "k-slices.md").read_text(encoding="utf-8")
            proofs.append(prove_smem(read_smem(text, SMEM_K_SLICES)))
        read_here = set()
        for doc in documents:
            if not doc.lines:
                continue  # not read (missing, too large, not text): the text stage says so
            sm = read_smem("\n".join(doc.lines), doc.name)
            checked = prove_smem(sm) if not sm.empty else None
            if checked is not None and checked.results:  # a table alone checks nothing: no read
                read_here.add(doc.name)
                proofs.append(checked)
    if not proofs:
        return proof
    kept = [f for f in proof.findings if not (f.kind == "input" and f.span.document in read_here
                                              and "no operand blocks" in f.message)]
    findings = kept + [f for sp in proofs for f in sp.findings]
    findings.sort(key=lambda f: (f.span.document, f.span.line, f.span.column, f.kind,
                                 f.message, f.layout))
    return replace(proof, findings=tuple(findings),
                   smem=tuple(r for sp in proofs for r in sp.results))


def with_block_scale(proof: Proof, documents: Sequence[Document], the_catalog: bool = False,
                     model: Model | None = None, evidence: Any = True) -> Proof:
    """``proof`` with the block-scale factor layouts and tables of each document that states
    any (``prove_block_scale``), read from the lines the text stage read; such a document's
    'no operand blocks' error is dropped.  With ``the_catalog``, the embedded block-scale
    catalog's layouts too (mma.sync's register factors, tcgen05.mma's tensor-memory ones),
    each scale operand related to ``model``'s fragments.  Without ``evidence`` read, the
    hardware obligation is not applicable, as every layout's is ('no GPU evidence given'):
    the 'unconfirmed' warnings come with the evidence that no device ran them."""
    from .parse.block_scale import read_block_scale
    read = {d.name: read_block_scale("\n".join(d.lines), d.name) for d in documents if d.lines}
    read_here = {name for name, sd in read.items() if not sd.empty}
    if not read_here and not the_catalog:
        return proof
    got = prove_block_scale([d for d in documents if d.name in read_here],
                            the_catalog=the_catalog, model=model if the_catalog else None,
                            evidence=evidence)
    # the program lines of the block-scale sections are checked here, not by the fragments'
    # reader: its 'unchecked' finding goes when it names only those lines
    programs = {name: {d.source.span(0).line for sec in read[name].sections
                       for op in sec.operands for d in op.program.definitions}
                for name in read_here}

    def mine(f: Any) -> bool:
        doc = f.span.document
        if doc not in read_here:
            return False
        if f.kind == "input" and "no operand blocks" in f.message:
            return True
        lines = (f.counterexample or {}).get("lines") if f.kind == "unchecked" else None
        return bool(lines) and set(lines or ()) <= programs[doc]

    kept = [f for f in proof.findings if not mine(f)]
    results = list(got.results)
    new = list(got.findings)
    if not evidence:
        results = [replace(r, verdicts=tuple(
            replace(v, status="not-applicable", message="no GPU evidence given (--evidence)",
                    severity="error") if v.name == "hardware" and v.status == "unconfirmed"
            else v for v in r.verdicts)) for r in results]
        new = [f for f in new if f.kind != "hardware"]
    findings = kept + new
    findings.sort(key=lambda f: (f.span.document, f.span.line, f.span.column, f.kind,
                                 f.message, f.layout))
    return replace(proof, findings=tuple(findings), scales=proof.scales + tuple(results))


def with_tc_sparse(proof: Proof, documents: Sequence[Document]) -> Proof:
    """``proof`` with each document's sparse ``tcgen05.mma.sp`` sub-sections checked
    (``formal.prove.sparse.prove_tc_sparse``: kind names, granularity, meaningful index
    values), read from the lines the text stage read; such a document's 'no operand blocks'
    error is dropped."""
    from .parse.tc_sparse import read_tc_sparse
    from .prove.sparse import prove_tc_sparse
    results, new, read_here = [], [], set()
    for d in documents:
        if not d.lines or not any("tcgen05.mma.sp" in ln for ln in d.lines):
            continue
        for sec in read_tc_sparse("\n".join(d.lines), d.name):
            read_here.add(d.name)
            r, fs = prove_tc_sparse(sec, d.name)
            results.append(r)
            new.extend(fs)
    if not read_here:
        return proof
    kept = [f for f in proof.findings if not (f.kind == "input" and f.span.document in read_here
                                              and "no operand blocks" in f.message)]
    findings = kept + new
    findings.sort(key=lambda f: (f.span.document, f.span.line, f.span.column, f.kind,
                                 f.message, f.layout))
    return replace(proof, findings=tuple(findings), scales=proof.scales + tuple(results))


_TMEM: dict[str, tuple[Any, tuple[Any, ...]]] = {}


def _catalog_tmem(name: str, doc: Any = None) -> tuple[Any, tuple[Any, ...]]:
    """One tensor-memory file of the catalog (``tcgen05-datapath.md``, ``-packing.md``) read
    and its sections parsed, once a process: (document, each section's ``ParsedTmem``).  As
    ``catalog.documents()`` gives it (no corrections): ``doc``, the one the catalog model
    read, where the caller has it, else read here without reading the other files."""
    got = _TMEM.get(name)
    if got is None:
        from . import catalog
        from .parse.document import parse_document
        from .text.read import read_path
        if doc is None:
            doc = read_path(catalog.CATALOG_DIR / name, name=f"catalog/{name}")
        got = _TMEM[name] = (doc, tuple(ps.tmem for ps in parse_document(doc).sections
                                        if ps.tmem is not None))
    return got


TC_META_CATALOG = "catalog/sparse-metadata/tcgen05.md"


def with_tc_meta(proof: Proof, evidence: Any = None) -> Proof:
    """``proof`` with the catalog's sparse ``tcgen05.mma.sp`` metadata layouts proved
    (``formal.prove.tc_meta``), one entry a selector value, their hardware obligation judged by
    ``evidence``'s tcgen05.mma.sp runs; without evidence read, not applicable, as
    ``with_block_scale`` makes it."""
    from . import catalog
    from .model.tc_meta import meta_layouts
    from .parse.tc_meta import figure_only, read_tc_meta
    from .prove.tc_meta import prove_meta
    text = (catalog.CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    sections, new_findings = read_tc_meta(text, TC_META_CATALOG)
    results: list[Any] = []
    new = [*new_findings, *figure_only(sections, TC_META_CATALOG)]  # what goes unchecked
    for lay in meta_layouts(sections):
        rs, fs = prove_meta(lay, evidence)
        results.extend(rs)
        new.extend(fs)
    if evidence is None or evidence is False:
        results = [replace(r, verdicts=tuple(
            replace(v, status="not-applicable", message="no GPU evidence given (--evidence)",
                    severity="error") if v.name == "hardware" else v for v in r.verdicts))
            for r in results]
        new = [f for f in new if f.kind != "hardware"]
    findings = sorted((*proof.findings, *new), key=lambda f: (
        f.span.document, f.span.line, f.span.column, f.kind, f.message, f.layout))
    return replace(proof, findings=tuple(findings), scales=proof.scales + tuple(results))


TC_COPY_CATALOG = "catalog/tensor-copy/tcgen05.md"


def with_tc_copy(proof: Proof, evidence: bool = False) -> Proof:
    """``proof`` with the catalog's ``tcgen05.cp`` layouts and decompression formats proved
    (``formal.prove.tc_copy``), among the scale-like layouts (programs of the catalog)."""
    from . import catalog
    from .model.tc_copy import copy_format, copy_layouts
    from .parse.tc_copy import read_tc_copy
    from .prove.tc_copy import prove_copy, prove_copy_format
    text = (catalog.CATALOG_DIR / "tensor-copy" / "tcgen05.md").read_text(encoding="utf-8")
    sections, formats, new_findings = read_tc_copy(text, TC_COPY_CATALOG)
    results, new = [], list(new_findings)
    for rs, fs in [*(prove_copy(lay, evidence) for lay in copy_layouts(sections)),
                   *(prove_copy_format(copy_format(f), evidence) for f in formats)]:
        results.extend(rs)
        new.extend(fs)
    findings = sorted((*proof.findings, *new), key=lambda f: (
        f.span.document, f.span.line, f.span.column, f.kind, f.message, f.layout))
    return replace(proof, findings=tuple(findings), scales=proof.scales + tuple(results))


def datapath_catalog(rows: bool = False) -> list[Any]:
    """The catalog's data-path layouts (formal/catalog/tcgen05-datapath.md), read (with
    ``rows``: its summary table's rows instead)."""
    from .model.datapath import datapaths, summary_rows
    parsed = list(_catalog_tmem("tcgen05-datapath.md")[1])
    return list(summary_rows(parsed)) if rows else datapaths(parsed)


def packing_catalog() -> list[Any]:
    """The catalog's packing formats (formal/catalog/tcgen05-packing.md), read."""
    from .model.datapath import pack_formats
    return pack_formats(list(_catalog_tmem("tcgen05-packing.md")[1]))


@lru_cache(maxsize=4)
def results_beyond_fragments(paths: tuple[str, ...] = (), use_catalog: bool = True,
                             max_bytes: int | None = None) -> tuple[Any, ...]:
    """What ``prove`` reports beside the register fragments (shared-memory layouts, examples
    and descriptor tables, block-scale factors, sparse metadata, data paths, packing), proved
    as ``analyze`` proves them with the shipped GPU evidence: the ids ``list`` names and
    ``show`` draws beyond the fragments (``formal.writers.cards``)."""
    from .prove.evidence import Evidence, default_dir
    from .prove.verdicts import Options
    where = default_dir()
    try:
        evidence = Evidence.load(where) if where is not None else None
    except (OSError, ValueError):
        evidence = None  # the hardware obligation then says no evidence was given
    proof = analyze(list(paths), Options(evidence=evidence), max_bytes, use_catalog).proof
    return (*proof.smem, *proof.scales, *proof.datapaths)


def show_beyond_fragments(query: str, paths: Sequence[str] = (), use_catalog: bool = True,
                          max_bytes: int | None = None) -> tuple[str, list[str], bool] | None:
    """``show`` of what is not a fragment: (the text, notes for stderr, whether all holds).
    A block-scaled opcode draws its forms' factors, a data path its blocks, any other id the
    report names its card (``formal.writers.cards``, with the family's drawing).  None when
    ``query`` names nothing; a ValueError listing the ids when it names several."""
    from .parse.block_scale import read_query
    from .writers import cards
    facts = read_query(query)
    if facts is not None:
        from .writers.block_scale import show_scale_forms
        proof = prove_block_scale()
        return show_scale_forms(facts, proof.layouts, proof.results)
    drawn = datapath_drawing(query)
    if drawn is not None:
        return drawn, [], True
    hits = cards.pick(results_beyond_fragments(tuple(paths), use_catalog, max_bytes), query)
    if len(hits) > 1:
        raise ValueError(f"'{query}' matches {len(hits)} results; name one of them:\n"
                         + "\n".join(f"  {cards.listed_id(h)}" for h in hits))
    return (cards.card(hits[0], cards.drawing(hits[0])), [], cards.ok(hits[0])) if hits \
        else None


def datapath_drawing(query: str) -> str | None:
    """``ptxlayout show tcgen05.datapath.E``: the catalog's layout drawn, with its verdicts
    (``formal.writers.datapath``); None when ``query`` names no data-path layout."""
    from .prove.datapath import prove_datapath
    from .writers.datapath import draw_datapath, find_datapath
    dp = find_datapath(datapath_catalog(), query)
    if dp is None:
        return None
    row = next((r for r in datapath_catalog(rows=True) if r.layout == dp.layout), None)
    return draw_datapath(dp, prove_datapath(dp, row, evidence=True)[0])


def with_datapath(proof: Proof, model: Model, documents: Sequence[Document],
                  the_catalog: bool, evidence: Any = None) -> Proof:
    """``proof`` with the tcgen05.mma data-path layouts each document states proved
    (``formal.prove.datapath``), the catalog's with ``the_catalog``; a document's summary
    table checked against tensor memory and the variant table, and its organization column
    against the blocks of the layouts (the catalog's where the document draws them only as
    figures); Layout D read back with tcgen05.ld.32x32b (``relations.DATAPATH_READS``)."""
    from .base.source import error
    from .model.cells import cells
    from .model.datapath import (
        check_pack_statements,
        check_summary,
        datapaths,
        pack_formats,
        summary_rows,
    )
    from .model.resolve import catalog_model
    from .parse.document import parse_document
    from .prove.cache import held_open
    from .prove.datapath import DataPathResult, prove_datapath, prove_reads
    from .prove.datapath_packing import PackingGroup, prove_packing
    from .prove.relations import DATAPATH_READS
    from .prove.verdicts import Verdict
    read = {d.name: d for d in catalog_model(False).documents}  # the catalog's, read once
    names = ("tcgen05-datapath.md", "tcgen05-packing.md")
    docs = list(documents)
    if the_catalog:
        docs += [_catalog_tmem(n, read.get(f"catalog/{n}"))[0] for n in names]
    tmem = {id(_catalog_tmem(n, read.get(f"catalog/{n}"))[0]): _catalog_tmem(n)[1]
            for n in names}
    results, findings, reads = [], [], []
    cat = {dp.layout: dp for dp in datapath_catalog()}
    cat_formats = packing_catalog()
    by_id: dict[str, Any] = {}
    for lay in [*model.layouts, *catalog_model(False).layouts]:
        by_id.setdefault(lay.short_id, lay)
    with held_open():  # the proof cache's folder opened once for every query
        for doc in docs:
            parsed = list(tmem[id(doc)]) if id(doc) in tmem else \
                [ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None]
            rows = summary_rows(parsed)
            mine = datapaths(parsed)
            formats = pack_formats(parsed)
            together = PackingGroup(formats)  # their statements asked of Z3 together
            for pf in formats:
                pr, fs = prove_packing(pf, evidence, together)
                results.append(pr)
                findings.extend(fs)
            checked, wrong = check_pack_statements(parsed, cat_formats)
            if checked:  # the sentences that state a packing, against the catalog's formats
                findings.extend(wrong)
                results.append(DataPathResult(
                    "tcgen05.packing.statements", "tcgen05.mma", wrong[0].span if wrong else
                    next(p for p in parsed if p.heading is not None).title.span(0),
                    (Verdict("stated", "refuted" if wrong else "proved",
                             f"{len(wrong)} of {checked} statements differ from the catalog's "
                             "formats" if wrong else "", method="exhaustive"),),
                    "sentences", (), (), "A/B"))
            if not rows and not mine:
                continue
            findings.extend(check_summary(rows))
            by_letter = {r.layout: r for r in rows}
            for dp in mine:
                r, fs = prove_datapath(dp, by_letter.get(dp.layout), evidence)
                results.append(r)
                findings.extend(fs)
            drawn = {dp.layout for dp in mine}
            for row in rows:  # a layout the document gives only as figures: the catalog's blocks
                known = cat.get(row.layout)
                if row.layout in drawn or known is None or \
                        row.organization[0] * row.organization[1] != 4:
                    continue
                got = known.organization()
                if (got, known.half()) != (row.organization, row.half):
                    findings.append(error("datapath", row.src, f"Layout {row.layout}: the table "
                                          f"says {row.organization[0]}x{row.organization[1]}, "
                                          f"the catalog's blocks form {got[0]}x{got[1]}",
                                          counterexample={"layout": row.layout}))
            for rv in prove_reads(DATAPATH_READS, mine, by_id, cells):
                reads.append(rv)
                if rv.status == "refuted":
                    at = next(dp for dp in mine if dp.id == rv.relation.consumer).title.span(0)
                    line = (rv.counterexample or {}).get("line", at.line)
                    findings.append(error("composes", replace(at, line=line, column=1),
                                          f"{rv.relation.producer} -> {rv.relation.consumer}: "
                                          f"{rv.message}", counterexample=rv.counterexample))
    if not results and not findings:
        return proof
    findings = [f for f in proof.findings if not (
        f.kind == "input" and "no operand blocks" in f.message
        and any(f.span.document == d.name for d in docs))] + findings
    findings.sort(key=lambda f: (f.span.document, f.span.line, f.span.column, f.kind,
                                 f.message, f.layout))
    return replace(proof, findings=tuple(findings), datapaths=tuple(results),
                   relations=proof.relations + tuple(reads))


def with_catalog_tables(options: Options) -> Options:
    """``options`` whose evidence can find the cell table of any map the catalog states (as
    written and as corrected) by its hash: a confirmed map a document no longer states is
    compared with the document's (built only when a verdict needs one)."""
    ev = options.evidence
    if ev is not None and hasattr(ev, "add_source"):
        ev.add_source("catalog", lambda: [*model_of([], corrections=True).layouts,
                                          *model_of([]).layouts])
    return options


def diff_documents(old: str | Path, new: str | Path, options: Options | None = None,
                   max_bytes: int | None = None) -> list[Change]:
    """Two revisions of a document compared layout by layout (``formal.writers.diff``)."""
    from .prove.verdicts import Options
    from .writers.diff import diff_models
    return diff_models(model_of([old], max_bytes), model_of([new], max_bytes),
                       with_catalog_tables(options or Options()))


# the last current_catalog: (its two catalog models, the records marshalled)
_CURRENT: list[tuple[Any, Any, bytes]] = []


def current_catalog() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(layouts, errata) as exported JSON records: the catalog as ``corrections.md`` fixes it
    (the maps the hardware must confirm), and the spec's layouts those corrections replace.
    The GPU runner and the evidence check take these as data.  Made once for each pair of
    catalog models (``model.resolve.catalog_model``, itself keyed by the catalog's text) and
    kept as ``marshal``'s bytes of those plain values (in memory only, never written or read
    from a file): each call gets fresh values, so a caller may change its own.  The values
    are JSON's own types (lists, dicts, strings, ints), as ``json.loads`` of the export
    gives them (tests/test_read_once.py holds them equal)."""
    import marshal

    from .base.records import expand
    from .model.resolve import catalog_model
    from .writers.export import catalog_device_records, export_records
    fixed, plain = catalog_model(True), catalog_model(False)
    if not (_CURRENT and _CURRENT[0][0] is fixed and _CURRENT[0][1] is plain):
        doc = export_records(fixed.layouts, plain.layouts)
        _CURRENT[:] = [(fixed, plain, marshal.dumps(
            [expand(doc["layouts"]) + smem_export()
             + [r for recs in catalog_device_records().values() for r in recs],
             list(doc["errata"])]))]
    records, errata = marshal.loads(_CURRENT[0][2])
    return records, errata


def smem_export() -> list[dict[str, Any]]:
    """The catalog's wgmma shared-memory layouts as export records (``writers.export_smem``):
    what ``formal.execute.smem_runs`` builds its descriptors and images from."""
    from .writers.export_smem import catalog_smem_records
    return catalog_smem_records()


def listed_ids(layouts: Sequence[Layout], the_catalog: bool, family: str | None = None,
               queries: Sequence[str] = (), unmatched: Callable[[str], Any] = print,
               beyond: Sequence[Any] = ()) -> list[tuple[str, str]]:
    """``ptxlayout list``: (family, id) of every id ``show`` takes -- the layouts', with
    ``the_catalog`` its shared-memory layouts (``wgmma.smem`` / ``tcgen05.smem``) and tcgen05's
    data paths (``tcgen05.datapath``), and every other id the report names (``beyond``:
    ``results_beyond_fragments``).  ``family``: only those whose family is it or starts
    with it and a dot (``tcgen05``: .ld, .st, .smem, .datapath ...); a ValueError with the
    nearest families when none is.  ``queries``: only the ids one names (as ``show`` reads an
    id) or is part of; ``unmatched(query)`` is called for one that matches none (the CLI
    raises)."""
    from difflib import get_close_matches

    from .writers import cards
    rows = [(lay.instruction, lay.id) for lay in layouts]
    if the_catalog:
        from .writers.smem_figure import catalog_instances
        rows += [(f"{i.family}.smem", f"catalog:{i.id}") for i in catalog_instances()]
        rows += [("tcgen05.datapath", f"catalog:{dp.id}") for dp in datapath_catalog()]
    seen = {cards.bare(i).lower() for _f, i in rows}
    rows += [(cards.family(r), cards.listed_id(r)) for r in beyond
             if cards.bare(r.id).lower() not in seen]
    if family is not None:
        known = sorted({f for f, _ in rows})
        rows = [r for r in rows if r[0] == family or r[0].startswith(family + ".")]
        if not rows:
            close = get_close_matches(family, known, n=3, cutoff=0.5)
            raise ValueError(f"no layout of family '{family}'" + (
                f"; did you mean {' or '.join(close)}?" if close else
                f" (the families: {', '.join(known)})"))
    if not queries:
        return rows
    chosen: set[str] = set()
    for q in queries:
        hits = [lay.id for lay in find(layouts, q)] or [i for _f, i in rows
                                                        if q.lower() in i.lower()]
        if not hits:
            unmatched(q)
        chosen.update(hits)
    return [r for r in rows if r[1] in chosen]


BLOCK_SCALE_CATALOG = "catalog/block-scale/mma-sync.md"
# the fragment each scale operand scales, by the block-scaled form's shape and kind
_SCALED_TYPE = {"mxf8f6f4": "e4m3", "mxf4": "e2m1", "mxf4nvf4": "e2m1"}


@dataclass(frozen=True)
class ScaleProof:
    """The block-scale layouts' results and findings (``formal.prove.block_scale``), the
    spec tables' findings among them."""

    results: tuple[Any, ...]
    findings: tuple[Any, ...]
    layouts: tuple[Any, ...] = ()


def block_scale_catalog(which: str = "mma-sync") -> Any:
    """The catalog's block-scale sections, read (``formal.parse.block_scale.ScaleDocument``):
    ``mma-sync`` (mma.sync's register factors) or ``tcgen05`` (tensor memory's)."""
    from . import catalog
    from .parse.block_scale import read_block_scale
    text = (catalog.CATALOG_DIR / "block-scale" / f"{which}.md").read_text(encoding="utf-8")
    return read_block_scale(text, f"catalog/block-scale/{which}.md")


def prove_block_scale(documents: Sequence[Document] = (), the_catalog: bool = True,
                      model: Model | None = None, evidence: Any = None) -> ScaleProof:
    """Every block-scale layout proved: the catalog's (with ``the_catalog``) and each
    document's, read from the lines the text stage read; each scale operand related to the
    catalog's A or B fragment of its shape (``quad-locality``), and a document's spec tables
    (shapes, legal combinations, selector values) compared with the catalog's layouts;
    ``evidence`` (the GPU evidence read) judges the tcgen05 scale layouts' hardware."""
    from .model.block_scale import scale_layouts, spec_tables
    from .model.cells import cells
    from .model.resolve import catalog_model
    from .model.tc_scale import tc_scale_layouts
    from .parse.block_scale import read_block_scale
    from .prove.block_scale import (
        prove_scale,
        prove_scale_tables,
        prove_tcgen05_captions,
        spec_table_findings,
    )
    from .prove.tc_scale import caption_selectors, prove_tc_scale
    fragments = (model or catalog_model(False)).layouts
    mma_doc, tc_doc = block_scale_catalog(), block_scale_catalog("tcgen05")
    cat_layouts = scale_layouts(mma_doc)
    tc_layouts = tc_scale_layouts(tc_doc)
    docs = []
    if the_catalog:
        docs += [mma_doc, tc_doc]
    for doc in documents:
        if doc.lines:
            sd = read_block_scale("\n".join(doc.lines), doc.name)
            if not sd.empty:
                docs.append(sd)
    results: list[Any] = []
    findings: list[Any] = []
    lays: list[Any] = []
    for sd in docs:
        findings.extend(sd.findings)
        for lay in cat_layouts if sd is mma_doc else scale_layouts(sd):
            frag = None
            want = _SCALED_TYPE.get(lay.kind, "")
            for f in fragments:
                if f.instruction == "mma" and str(f.shape) == lay.shape \
                        and f.operand == lay.operand and want in f.types:
                    frag = cells(f)
                    break
            r, fs = prove_scale(lay, frag)
            results.append(r)
            findings.extend(fs)
            lays.append(lay)
        for tlay in tc_layouts if sd is tc_doc else tc_scale_layouts(sd):
            r, fs = prove_tc_scale(tlay, None, evidence)
            results.append(r)
            findings.extend(fs)
            lays.append(tlay)
        figures, found = prove_tcgen05_captions(sd.tcgen05, sd.name)
        if figures is not None:
            ids, wrong = caption_selectors(sd.tcgen05, tc_layouts)
            figures = replace(figures, verdicts=(*figures.verdicts[:-1], ids,
                                                 figures.verdicts[-1]))
            results.append(figures)
            findings.extend([*found, *wrong])
        table = prove_scale_tables(spec_tables(sd), cat_layouts, sd.name)
        if table is not None:
            results.append(table)
            findings.extend(spec_table_findings(spec_tables(sd), cat_layouts))
    return ScaleProof(tuple(results), tuple(findings), tuple(lays))


def catalog_entries(corrections: bool = False) -> list[IndexEntry] | None:
    """The catalog's index (``formal.writers.views``): what ``find`` needs of each layout,
    kept between runs so that naming one layout models nothing; None when no cache folder
    is on (then the caller builds the model)."""
    from .writers import views
    return views.catalog_index(corrections) if views.enabled() else None


def block_scale_form_maps(form: str) -> tuple[Any, Any, Any, Any]:
    """(variant, scale_A map, scale_B map, D cells) of one block-scaled form, named by a
    variant key or a part of one (``mxf4nvf4.block_scale.scale_vec::4X``, the first row that
    matches): the maps as the executor takes them, data from the proved catalog."""
    import numpy as np

    from .base.matrix_variants import BLOCK_SCALE_VARIANTS
    from .execute.block_scale import ScaleMap
    from .model.block_scale import scale_layouts
    from .model.cells import cells
    from .model.resolve import catalog_model
    v = next((x for x in BLOCK_SCALE_VARIANTS if form in x.key), None)
    if v is None:
        raise KeyError(f"no block-scaled form matches '{form}'")
    lays = [lay for lay in scale_layouts(block_scale_catalog())
            if (lay.kind, lay.shape, lay.vec, lay.stype) == (v.kind, v.shape, v.scale_vec, v.scale)]
    maps = {lay.operand: ScaleMap(lay.operand, lay.tile, dict(lay.holdings)) for lay in lays}
    cd = next(f for f in catalog_model(False).layouts if f.instruction == "mma"
              and str(f.shape) == v.shape and f.operand == "C/D" and "f32" in f.types)
    table = cells(cd)
    d = np.zeros((32, max(i for _s, _l, i in table) + 1, 2), dtype=np.int64)
    for (_s, lane, i), vals in table.items():
        d[lane, i] = (int(vals[0]), int(vals[1]))
    return v, maps["A"], maps["B"], d
