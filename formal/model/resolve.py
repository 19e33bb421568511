"""Every document's layouts together: "the same as" references resolved, the catalog filling gaps.

A section that says its B and C/D fragments are "the same as in case of Matrix Fragments for
mma.m16n8k16 with floating point type" gets copies of those layouts (provenance ``reference``),
found first in the documents given and then in the embedded catalog; a reference that leads
back to its own section, or to nothing, is a finding.  ``build`` is the stage's entry point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from ..base.ids import LayoutId
from ..base.matrix_variants import wgmma_sp_dtypes
from ..base.memo import keep_bounded
from ..base.source import Finding, SourceText, warning
from ..base.variants import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    VARIANTS,
)
from ..parse import syntax as S
from ..parse.document import ParsedDocument, parse_document
from ..text.blocks import Document
from .built import clear_built
from .coverage import unchecked
from .layout import Layout, Model
from .moves import move_layouts
from .sections import (
    SectionContext,
    layout_id,
    section_a_types,
    section_layouts,
    types_of_title,
    with_section_context,
)
from .tmem import check_tmem
from .wmma import wmma_layouts

# ---- references ----------------------------------------------------------------------------------


def _target_matches(lay: Layout, target: S.Target, operand: str) -> bool:
    return lay.operand == operand and \
        _names_section(target, lay.instruction, str(lay.shape), lay.title)


def _partner_types(instruction: str, shape: str, operand: str,
                   a_types: Iterable[str]) -> set[str]:
    """The B or C/D types the variant table pairs with these A types."""
    a = set(a_types)
    out: set[str] = set()
    for v in VARIANTS:
        if v.instruction == instruction and v.shape == shape and v.a in a:
            if operand == "B":
                out.add(v.b)
            elif operand == "C/D":
                out.update((v.c, v.d))
    return out


def _resolve(ctx: SectionContext, src: SourceText, ref: S.ReferenceSentence, own: list[Layout],
             pool: Sequence[Layout], findings: list[Finding], circular: str = "",
             written: S.ReferenceSentence | None = None) -> list[Layout]:
    """Layouts for each operand a "same as" sentence names, copied from its target.

    ``circular`` is set when the sentence leads back to its own section (see ``_follow``):
    the operand then resolves to nothing, whatever the catalog holds.
    """
    out: list[Layout] = []
    a_types = section_a_types(own)
    own_types = set(a_types) | set(types_of_title(ctx.title))
    for operand in ref.operands:
        if any(lay.operand == operand and lay.source != "figure-only" for lay in own):
            findings.append(warning(
                "reference", src, f"the {operand} operand is given both in this section and by "
                f"reference to 'Matrix Fragments for {ref.target.shape}'"))
            continue
        cands = [lay for lay in pool if _target_matches(lay, ref.target, operand)
                 and lay.source in ("text", "catalog")]
        # prefer the same document, then any document, then the catalog
        same_doc = [c for c in cands if c.document == ctx.doc.name]
        cands = same_doc or [c for c in cands if c.source == "text"] or cands
        fmt = {t for t, _ in ref.target.format_types}
        wanted = (fmt & own_types) or own_types
        partner = _partner_types(ctx.instruction, str(ctx.shape), operand, a_types or
                                 tuple(wanted))
        if partner:
            typed = [c for c in cands if set(c.types) & partner]
            cands = typed or cands
        target_desc = f"Matrix Fragments for {'sparse ' if ref.target.sparse else ''}" \
                      f"mma.{ref.target.shape}"
        if ref.target.qualifier.words:
            target_desc += " with " + " ".join(ref.target.qualifier.words)
        if not cands or circular:
            why = circular or f"'{target_desc}' names no {operand} layout in the documents " \
                  "given or the embedded catalog"
            out.append(Layout(
                id=layout_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand,
                       tuple(sorted(own_types))),
                document=ctx.doc.name, section=ctx.title.number, title=ctx.section.title.text,
                span=src.span(0), instruction=ctx.instruction, shape=ctx.shape,
                operand=operand, types=tuple(sorted(own_types)), source="reference",
                reference_src=src, reference=written or ref, notes=(why,),
                title_types=types_of_title(ctx.title)))
            continue
        seen: set[tuple[tuple[str, ...], str]] = set()
        for c in cands:
            if (c.types, c.arrangement) in seen:
                continue
            seen.add((c.types, c.arrangement))
            out.append(replace(
                c,
                id=layout_id(ctx.doc_label, ctx.instruction, str(ctx.shape), operand, c.types,
                       c.arrangement),
                document=ctx.doc.name, section=ctx.title.number,
                title=ctx.section.title.text.strip(), span=src.span(0),
                instruction=ctx.instruction, shape=ctx.shape, source="reference",
                reference_of=c.id, reference_src=src, reference=written or ref, table=None,
                label_types=(),
                notes=(f"resolved to {c.id} ({c.document}:{c.span.line})",),
                title_types=types_of_title(ctx.title)))
    return out


# ---- entry point ---------------------------------------------------------------------------------


def _label_for(doc: Document) -> str:
    return "catalog" if doc.name.startswith("catalog/") else document_label(doc.name)


def document_label(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def layouts_of(doc: Document | ParsedDocument, provenance: str = "text",
               label: str | None = None,
               ) -> tuple[list[Layout], list[tuple[Any, ...]], list[Finding]]:
    parsed = doc if isinstance(doc, ParsedDocument) else parse_document(doc)
    findings: list[Finding] = list(parsed.findings)
    layouts: list[Layout] = []
    refs: list[tuple[Any, ...]] = []
    lab = label or document_label(parsed.document.name)
    for ps in parsed.sections:
        lays, rs = section_layouts(parsed.document, lab, ps, provenance, findings)
        layouts.extend(lays)
        refs.extend(rs)
    return layouts, refs, findings


_CATALOG_LAYOUTS: dict[tuple[str, str, str], tuple[Layout, ...]] = {}


def catalog_layouts(doc: Document | ParsedDocument) -> tuple[Layout, ...]:
    """The layouts a catalog document states, for references to resolve against: built once a
    process for each text (keyed by name, format and the SHA-256 of the text, so an edited
    catalog is built again), not once for every document proved beside it.  Layouts are
    frozen values; the prover enumerates every map it is asked about on its own."""
    d = doc.document if isinstance(doc, ParsedDocument) else doc
    key = (d.name, d.format,
           d.digest or hashlib.sha256("\n".join(d.lines).encode("utf-8")).hexdigest())
    hit = _CATALOG_LAYOUTS.get(key)
    if hit is None:
        parsed = doc if isinstance(doc, ParsedDocument) else parse_document(doc)
        hit = tuple(layouts_of(parsed, "catalog", "catalog")[0])
        # bounded: a long-lived process sees few catalogs
        keep_bounded(_CATALOG_LAYOUTS, key, hit, 64)
    return hit


def clear_catalog_layouts() -> None:
    """Forget the catalog's layouts and the blocks built (benchmarks measure cold runs)."""
    _CATALOG_LAYOUTS.clear()
    catalog_model.cache_clear()
    clear_built()


@cache
def catalog_model(corrections: bool = False) -> Model:
    """The embedded catalog proven on its own (its documents are the documents), built once a
    process: ``corrections`` applies ``corrections.md``.  The prover, the evidence check, the
    GPU export and the audit all ask here, so a run builds each model once."""
    from .. import catalog
    return build(list(catalog.documents(corrections)), [])


def build(documents: Iterable[Document | ParsedDocument],
          catalog: Iterable[Document | ParsedDocument] = (),
          done: Callable[[int], None] | None = None) -> Model:
    """Every layout of ``documents``; references resolve against them and the catalog.

    Takes ingested documents (parsed here) or parsed ones (``formal.parse.parse_document``),
    one at a time: ``documents`` may be a generator that reads each when it is asked for.
    ``done`` (a progress callback) is told how many documents are parsed and modeled so far.
    """
    docs: list[ParsedDocument] = []
    findings: list[Finding] = []
    written: list[Layout] = []
    wmma: list[Layout] = []  # the wmma sections' fragments: register budgets, no map
    pending: list[tuple[Any, ...]] = []
    for one in documents:
        d = one if isinstance(one, ParsedDocument) else parse_document(one)
        docs.append(d)
        findings.extend(d.document.findings)
        lab = _label_for(d.document)
        lays, refs, errs = layouts_of(d, "catalog" if lab == "catalog" else "text", label=lab)
        written.extend(lays)
        pending.extend(refs)
        findings.extend(errs)
        wmma.extend(wmma_layouts(d, lab))
        if done is not None:
            done(len(docs))
    cat_layouts = [lay for d in catalog for lay in catalog_layouts(d)]
    for d in docs:  # the matrix move sections: their variants, by name, from the catalog
        lab = _label_for(d.document)
        for ps in d.sections:
            if ps.moves is not None:
                written.extend(move_layouts(d.document, lab, ps.moves, cat_layouts, findings))
        findings.extend(check_tmem([ps.tmem for ps in d.sections if ps.tmem is not None]))
    pool = written + cat_layouts
    resolved: list[Layout] = []
    stated: dict[tuple[str, str], list[Layout]] = {}  # (document, operand) -> its layouts
    for lay in written:
        if lay.source in ("text", "catalog"):
            stated.setdefault((lay.document, lay.operand), []).append(lay)
    for ctx, src, ref in pending:
        if ref.target.instruction == "wgmma":
            resolved.extend(_resolve_wgmma(ctx, src, ref, written, pool))
            continue
        own = [lay for lay in written if _in_section(lay, ctx) and lay.shape == ctx.shape]
        for operand in ref.operands:
            target, circular = _follow(ctx, ref.target, operand,
                                       stated.get((ctx.doc.name, operand), []), pending)
            one = replace(ref, operands=(operand,), target=target)
            resolved.extend(with_section_context(
                _resolve(ctx, src, one, own, pool, findings, circular, ref), own))
    layouts = _fill_from_catalog(written + resolved, cat_layouts) + wmma
    findings = unchecked(docs, layouts, findings)
    return Model(tuple(_unique_ids(layouts)), tuple(findings),
                 tuple(d.document for d in docs))


def _resolve_wgmma(ctx: SectionContext, src: SourceText, ref: S.ReferenceSentence,
                   written: Sequence[Layout], pool: Sequence[Layout]) -> list[Layout]:
    """A sparse wgmma section's "accumulator D is the same as in case of Matrix Fragments for
    wgmma.mma_async.m64nNk32 for the same .dtype format": a copy of each dense D of that
    section whose type an accumulator of this instruction may have (``wgmma.sp`` with
    ``.f16`` A accumulates in ``.f16`` or ``.f32``, not the ``.s32`` the dense k32 section
    also states), still stated once in N (``n_values`` kept).  ``.dtype`` names no type:
    every such one is meant."""
    target = ref.target
    own_a = [t for lay in written if _in_section(lay, ctx) and lay.operand == "A"
             and lay.instruction == ctx.instruction for t in lay.types]
    legal = set(wgmma_sp_dtypes(ctx.shape.k, own_a)) if ctx.instruction == "wgmma.sp" \
        else set()
    out: list[Layout] = []
    for operand in ref.operands:
        cands = [lay for lay in pool if lay.instruction == "wgmma" and lay.operand == operand
                 and lay.shape_text == target.shape and lay.source in ("text", "catalog")]
        same_doc = [c for c in cands if c.document == ctx.doc.name]
        cands = same_doc or [c for c in cands if c.source == "text"] or cands
        if legal:
            cands = [c for c in cands if set(c.types) & legal]
        if not cands:
            types = tuple(sorted(legal)) or types_of_title(ctx.title)
            out.append(Layout(
                id=layout_id(ctx.doc_label, ctx.instruction, ctx.shape_text, operand, types),
                document=ctx.doc.name, section=ctx.title.number, title=ctx.section.title.text,
                span=src.span(0), instruction=ctx.instruction, shape=ctx.shape,
                operand=operand, types=types, source="reference", reference_src=src,
                reference=ref, shape_name=ctx.shape_text, lanes=128,
                notes=(f"'Matrix Fragments for wgmma.mma_async.{target.shape}' names no "
                       f"{operand} layout in the documents given or the embedded catalog",)))
            continue
        seen: set[tuple[str, ...]] = set()
        for c in cands:
            if c.types in seen:
                continue
            seen.add(c.types)
            out.append(replace(
                c, id=layout_id(ctx.doc_label, ctx.instruction, ctx.shape_text, operand,
                                c.types),
                document=ctx.doc.name, section=ctx.title.number,
                title=ctx.section.title.text.strip(), span=src.span(0),
                instruction=ctx.instruction, shape=replace(c.shape, k=ctx.shape.k),
                shape_name=ctx.shape_text, source="reference", reference_of=c.id,
                reference_src=src, reference=ref, table=None, label_types=(),
                notes=(f"resolved to {c.id} ({c.document}:{c.span.line})",),
                title_types=types_of_title(ctx.title)))
    return out


def _in_section(lay: Layout, ctx: SectionContext) -> bool:
    """``lay`` is stated in the section of ``ctx``: by its number and, where a mirror dropped
    the numbers, by its title."""
    return lay.document == ctx.doc.name and \
        lay.section == (ctx.title.number or ctx.section.number) and \
        lay.title.strip() == ctx.section.title.text.strip()


def _section_key(ctx: SectionContext) -> tuple[str, str, str, str]:
    return ctx.doc.name, ctx.title.number or ctx.section.number, str(ctx.shape), \
        ctx.section.title.text.strip()


def _names_section(target: S.Target, instruction: str, shape: str, title: str) -> bool:
    if instruction != ("mma.sp" if target.sparse else "mma") or shape != target.shape:
        return False
    words, title = set(target.qualifier.words), title.lower()
    return not ("integer" in words and "integer" not in title) and \
        not ("floating" in words and "floating" not in title)


def _follow(ctx: SectionContext, target: S.Target, operand: str, stated: Sequence[Layout],
            pending: Sequence[tuple[Any, ...]]) -> tuple[S.Target, str]:
    """Where a "same as" sentence leads within its own document: (final target, "") when it
    ends at a section that states the operand (or leaves the document), ("", why) when it
    comes back to a section already visited -- the sentence's own section included.

    Section 9.2 saying "B is the same as in 9.3" while 9.3 says "B is the same as in 9.4"
    resolves to 9.4's B; a section naming itself, or 9.2 and 9.3 naming each other, is a
    circular reference, which resolves to nothing (not to the catalog's layout).
    """
    doc = ctx.doc.name
    seen = [_section_key(ctx)]
    titles = [ctx.section.title.text.strip()]
    while True:
        # ``stated``: the document's layouts of this operand that the text itself states
        if any(_names_section(target, lay.instruction, str(lay.shape), lay.title)
               for lay in stated):
            return target, ""
        hops = [(c, r) for c, _src, r in pending if c.doc.name == doc and operand in r.operands
                and _names_section(target, c.instruction, str(c.shape),
                                   c.section.title.text)]
        if not hops:
            return target, ""
        c, r = hops[0]
        if _section_key(c) in seen:
            loop = " -> ".join(f"'{t}'" for t in titles + [c.section.title.text.strip()])
            return target, f"the reference for {operand} is circular: {loop}"
        seen.append(_section_key(c))
        titles.append(c.section.title.text.strip())
        target = r.target


def _fill_from_catalog(layouts: list[Layout], catalog: list[Layout]) -> list[Layout]:
    """A layout the document shows only as a figure takes the catalog's formulas."""
    out = []
    for lay in layouts:
        if lay.source != "figure-only" or not catalog:
            out.append(lay)
            continue
        match = next((c for c in catalog if c.instruction == lay.instruction
                      and c.shape == lay.shape and c.operand == lay.operand
                      and set(c.types) & set(lay.types) and c.formulas), None)
        if match is None:
            out.append(lay)
            continue
        md = lay.metadata
        if md is not None and match.metadata is not None:
            md = replace(match.metadata, desc=md.desc or match.metadata.desc,
                         desc_src=md.desc_src or match.metadata.desc_src)
        out.append(replace(
            lay, formulas=match.formulas, metadata=md if md is not None else match.metadata,
            lanes=match.lanes, helpers=match.helpers, source="catalog", reference_of=match.id,
            notes=lay.notes + (f"the document gives this layout only as a figure; formulas "
                               f"from {match.id}",)))
    return out


def _unique_ids(layouts: list[Layout]) -> list[Layout]:
    seen: dict[str, int] = {}
    out = []
    for lay in layouts:
        n = seen.get(lay.id, 0)
        seen[lay.id] = n + 1
        out.append(lay if n == 0 else replace(
            lay, id=str(replace(LayoutId.parse(lay.id), copy=n + 1))))
    return out


def type_category_words(types: Iterable[str]) -> tuple[bool, bool]:
    ts = set(types)
    return bool(ts & INTEGER_TYPES), bool(ts & FLOAT_TYPES)
