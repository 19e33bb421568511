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
from pathlib import Path
from typing import Any

from . import catalog
from .base.records import expand
from .model.layout import Layout, Model
from .model.resolve import build, catalog_model
from .prove.driver import prove
from .prove.verdicts import Options, Proof
from .text.blocks import MAX_BYTES, Document
from .text.read import read_path
from .writers.diff import Change, diff_models
from .writers.export import export_records


@dataclass(frozen=True)
class Analysis:
    """What ``analyze`` found: the documents' model, its proof and the seconds each took."""

    model: Model
    proof: Proof
    seconds: dict[str, float] = field(default_factory=dict)


def model_of(paths: Sequence[str | Path], max_bytes: int = MAX_BYTES,
             use_catalog: bool = True, corrections: bool = False,
             progress: Callable[..., None] | None = None) -> Model:
    """The model of the documents at ``paths`` (none: the catalog's).  ``progress``, a
    callback ``(done, total, part)``, hears how many of the documents are read, parsed and
    modeled (``part``: how far into the next one: half once it is read)."""
    if not paths:
        return catalog_model(corrections) if use_catalog else build([], [])
    cat = list(catalog.documents(corrections)) if use_catalog else []
    tell = progress or (lambda *_: None)
    total = len(paths)

    def each() -> Iterator[Document]:  # read one at a time, so that the count moves
        for k, p in enumerate(paths):
            doc = read_path(p, max_bytes)
            tell(k, total, 0.5)
            yield doc

    model = build(each(), cat, lambda k: tell(k, total, 0.0) if k < total else None)
    tell(total, total, 0.0)
    return model


def analyze(paths: Sequence[str | Path], options: Options | None = None,
            max_bytes: int = MAX_BYTES, use_catalog: bool = True,
            corrections: bool = False,
            accept: Sequence[dict[str, Any]] | None = None,
            reading: Callable[..., None] | None = None) -> Analysis:
    """Prove the documents (none: the catalog).  ``accept`` lists known errata to accept;
    by default, proving the catalog accepts the spec's errata it keeps on purpose.
    ``reading``: a progress callback for reading the documents (``model_of``'s)."""
    from .writers.ledger import mark_accepted
    t0 = time.perf_counter()
    model = model_of(paths, max_bytes, use_catalog, corrections, reading)
    t1 = time.perf_counter()
    proof = prove(model, with_catalog_tables(options or Options()))
    named = {str(p) for p in paths}
    proof = with_smem(proof, [d for d in model.documents if d.name in named],
                      use_catalog and not paths, (options or Options()).evidence)
    if accept is None:
        accept = catalog.errata() if not paths and use_catalog else []
    proof = mark_accepted(proof, accept)
    t2 = time.perf_counter()
    return Analysis(model, proof, {"model": t1 - t0, "prove": t2 - t1})


SMEM_CATALOG = "catalog/smem/layouts.md"


def with_smem(proof: Proof, documents: Sequence[Document], the_catalog: bool = False,
              evidence: Any = None) -> Proof:
    """``proof`` with the shared-memory layouts, examples and descriptor tables proved
    (``formal.prove.smem``): the catalog's, at every width wgmma and tcgen05 take, with
    ``the_catalog``; and each document's, from the lines the text stage read (the file is
    never opened twice).  A document whose only sections are these is read: the text stage's
    'no operand blocks' error for it is dropped."""
    from .model.smem import read_smem
    from .prove.smem import prove_smem
    proofs = []
    if the_catalog:
        text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
        proofs.append(prove_smem(read_smem(text, SMEM_CATALOG),
                                 catalog_families=("wgmma", "tcgen05"), evidence=evidence))
    read_here = set()
    for doc in documents:
        if not doc.lines:
            continue  # not read (missing, too large, not text): the text stage says so
        sm = read_smem("\n".join(doc.lines), doc.name)
        if not sm.empty:
            read_here.add(doc.name)
            proofs.append(prove_smem(sm))
    if not proofs:
        return proof
    kept = [f for f in proof.findings if not (f.kind == "input" and f.span.document in read_here
                                              and "no operand blocks" in f.message)]
    findings = kept + [f for sp in proofs for f in sp.findings]
    findings.sort(key=lambda f: (f.span.document, f.span.line, f.span.column, f.kind,
                                 f.message, f.layout))
    return replace(proof, findings=tuple(findings),
                   smem=tuple(r for sp in proofs for r in sp.results))


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
                   max_bytes: int = MAX_BYTES) -> list[Change]:
    """Two revisions of a document compared layout by layout (``formal.writers.diff``)."""
    return diff_models(model_of([old], max_bytes), model_of([new], max_bytes),
                       with_catalog_tables(options or Options()))


def current_catalog() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(layouts, errata) as exported JSON records: the catalog as ``corrections.md`` fixes it
    (the maps the hardware must confirm), and the spec's layouts those corrections replace.
    The GPU runner and the evidence check take these as data."""
    doc = export_records(catalog_model(True).layouts, catalog_model(False).layouts)
    return expand(doc["layouts"]) + smem_export(), list(doc["errata"])


def smem_export() -> list[dict[str, Any]]:
    """The catalog's wgmma shared-memory layouts as export records (``writers.export_smem``):
    what ``formal.execute.smem_runs`` builds its descriptors and images from."""
    from .model.smem import instances, read_smem
    from .writers.export_smem import smem_records
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    return smem_records(instances("wgmma", read_smem(text, SMEM_CATALOG).canonical))


def find(layouts: Sequence[Layout], query: str) -> list[Layout]:
    """Layouts matching an id or a short form such as ``mma.m16n8k16.A.s8``.

    A full id matches exactly; otherwise ``instr.shape.operand[.type]`` matches every layout
    of that instruction, shape and operand whose types include the type.  The chapter's
    other instructions match by the leading parts of their short ids:
    ``wgmma.sp.m64nNk32.A`` is ``wgmma.sp.m64nNk32.A.f16-bf16``, ``ldmatrix.m8n8.x4`` both
    ``ldmatrix.m8n8.x4.b16`` and ``ldmatrix.m8n8.x4.trans.b16``.
    """
    exact = [lay for lay in layouts if lay.id == query or lay.short_id == query]
    if exact:
        return exact
    q = query.split(":", 1)[-1]
    if q.split(".", 1)[0] not in ("mma", ""):
        return [lay for lay in layouts if (lay.short_id + ".").startswith(q + ".")]
    base, _, ctx = q.partition("@")
    parts = base.split(".")
    instr = "mma.sp" if len(parts) > 1 and parts[1] == "sp" else "mma"
    rest = parts[2:] if instr == "mma.sp" else parts[1:]
    if not rest:
        return []
    shape = rest[0]
    operand = {"A": "A", "B": "B", "C": "C/D", "D": "C/D", "CD": "C/D", "meta": "metadata",
               "metadata": "metadata"}.get(rest[1], "") if len(rest) > 1 else ""
    types = set(rest[2].split("-")) if len(rest) > 2 else set()
    out = []
    for lay in layouts:
        if lay.instruction != instr or str(lay.shape) != shape:
            continue
        if operand and lay.operand != operand:
            continue
        if types and not types & set(lay.types):
            continue
        if ctx and ctx not in lay.id:
            continue
        out.append(lay)
    return out


def relabel(model: Model, label: str) -> Model:
    return replace(model, layouts=tuple(replace(lay, id=f"{label}:{lay.short_id}")
                                        for lay in model.layouts))
