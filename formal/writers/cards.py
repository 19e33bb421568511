"""A card for every id a proof report names beside the register fragments.

``ptxlayout prove`` reports more than fragments: shared-memory layouts, examples and
descriptor tables, block-scale factors, sparse metadata, tcgen05 data paths and packing
formats.  Each comes out of its prover as a result with the same keys (id, instruction, span,
verdicts, shape, types, tile, operand), so one writer answers ``show ID`` for all of them: the
statement's place, each obligation's status, and the family's drawing where it has one::

    tcgen05.sp_meta.m128.f16.sel0: tcgen05.mma.sp metadata, m128k32, 128 x 8 (f16)
      stated at catalog/sparse-metadata/tcgen05.md:21
      metadata-coverage  proved
      hardware           unconfirmed: no lent device runs sm_100a

``pick`` finds the results an id names: exactly (case and a ``catalog:`` prefix aside), else
every result whose id starts with the query and a dot (``tcgen05.sp_meta.m128.f16`` names both
selectors); ``family`` is the id's family as ``list --family`` reads it.  ``find`` and ``near``
do the same for the fragments (the layouts of a model), where a short form names a layout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.layout import Layout

GOOD = ("proved", "not-applicable")


def bare(ident: str) -> str:
    """``ident`` without the document prefix the catalog's ids carry in ``list``."""
    return ident[len("catalog:"):] if ident.startswith("catalog:") else ident


def family(result: Any) -> str:
    """The family ``list --family`` files ``result`` under: its id's first two parts
    (``tcgen05.block_scale``, ``wgmma.smem``, ``tcgen05.sp_meta``)."""
    return ".".join(bare(result.id).split(".")[:2])


def listed_id(result: Any) -> str:
    """The id ``list`` prints: the catalog's with its ``catalog:`` prefix, as the fragments'."""
    catalog = result.span.document.startswith("catalog/")
    return f"catalog:{result.id}" if catalog and ":" not in result.id.split(".")[0] \
        else result.id


def pick(results: Sequence[Any], query: str) -> list[Any]:
    """The results ``query`` names: one whose id it is, else those whose id it begins."""
    q = bare(query).lower()
    exact = [r for r in results if bare(r.id).lower() == q]
    if exact:
        return exact[:1]
    return [r for r in results if bare(r.id).lower().startswith(q + ".")]


def ok(result: Any) -> bool:
    """No obligation of ``result`` failed (a warning's status, ``unconfirmed``, is no failure)."""
    return all(v.status in GOOD or v.severity == "warning" for v in result.verdicts)


def card(result: Any, drawing: str | None = None) -> str:
    """The card of one result: what it is, where it is stated, each obligation, the drawing."""
    what = [result.instruction, getattr(result, "operand", "A/B")]
    head = f"{result.id}: {' '.join(w for w in what if w)}"
    if result.shape:
        head += f", {result.shape}"
    if result.tile:
        head += f", {' x '.join(str(t) for t in result.tile)}"
    if result.types:
        head += f" ({', '.join(result.types)})"
    lines = [head, f"  stated at {result.span.document}:{result.span.line}"]
    width = max((len(v.name) for v in result.verdicts), default=0)
    for v in result.verdicts:
        line = f"  {v.name:<{width}}  {v.status}"
        if v.status not in GOOD and v.message:
            line += f": {v.message}"
        if v.counterexample is not None and v.status not in GOOD:
            line += f"\n  {'':<{width}}  counterexample: {json.dumps(v.counterexample)}"
        lines.append(line)
    if drawing:
        lines += ["", drawing.rstrip("\n")]
    return "\n".join(lines) + "\n"


def meta_figure(lay: Any, sel: int) -> str:
    """The sparse metadata of one selector value: lanes down, each field's place in the
    32-bit word across (``c0.b4``: column 0, bits 4 up), ``r<row>c<chunk>`` in each cell."""
    placed = [p[:5] for p in lay.placed(sel)]  # (row, chunk, lane, column, bit[, copy])
    slots = sorted({(col, bit) for _r, _c, _ln, col, bit in placed})
    grid = {(ln, col, bit): f"r{r}c{c}" for r, c, ln, col, bit in placed}
    head = ["lane", *(f"c{col}.b{bit}" for col, bit in slots)]
    body = [[f"{ln:4d}", *(grid.get((ln, *s), "-") for s in slots)]
            for ln in sorted({p[2] for p in placed})]
    widths = [max(len(r[k]) for r in (head, *body)) for k in range(len(head))]
    out = [f"sparsity selector {sel}: {len(placed)} places of {lay.width}-bit fields; cell = "
           "the field of metadata row r for chunk c of K"]
    out += ["  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in (head, *body)]
    return "\n".join(out) + "\n"


def drawing(result: Any) -> str | None:
    """The drawing of a catalog result whose family has one (block-scale factors of mma.sync
    and tcgen05.mma, sparse metadata), from the catalog document it is stated in; None for
    the other families and for a document's own statements."""
    from ..catalog import CATALOG_DIR
    doc = result.span.document
    fam = family(result)
    if not doc.startswith("catalog/") or fam not in (
            "mma.block_scale", "tcgen05.block_scale", "tcgen05.sp_meta"):
        return None
    text = (CATALOG_DIR / doc[len("catalog/"):]).read_text(encoding="utf-8")
    if fam == "tcgen05.sp_meta":
        from ..model.tc_meta import meta_layouts
        from ..parse.tc_meta import read_tc_meta
        base, _, sel = result.id.rpartition(".sel")
        meta = next((x for x in meta_layouts(read_tc_meta(text, doc)[0]) if x.id == base),
                    None)
        return None if meta is None or not sel.isdigit() else meta_figure(meta, int(sel))
    from ..parse.block_scale import read_block_scale
    read = read_block_scale(text, doc)
    if fam == "mma.block_scale":
        from ..model.block_scale import scale_layouts
        from .block_scale import scale_figure
        return next((scale_figure(x) for x in scale_layouts(read) if x.id == result.id), None)
    from ..model.tc_scale import tc_scale_layouts
    from .tc_scale import tc_scale_figure
    return next((tc_scale_figure(x) for x in tc_scale_layouts(read) if x.id == result.id),
                None)


def find(layouts: Sequence[Layout], query: str) -> list[Layout]:
    """Layouts matching an id or a short form such as ``mma.m16n8k16.A.s8``.

    A full id matches exactly; otherwise ``instr.shape.operand[.type]`` matches every layout
    of that instruction, shape and operand whose types include the type.  The chapter's
    other instructions match by the leading parts of their short ids:
    ``wgmma.sp.m64nNk32.A`` is ``wgmma.sp.m64nNk32.A.f16-bf16``, ``ldmatrix.m8n8.x4`` both
    ``ldmatrix.m8n8.x4.b16`` and ``ldmatrix.m8n8.x4.trans.b16``.
    Ids are compared without regard to case (``.S8`` is ``.s8``); a document prefix
    (``catalog:mma.m16n8k16.A.s8``) keeps only that document's layouts; a segment that names
    nothing (``mma.m16n8k16.zzz.s8``) matches nothing.
    """
    exact = [lay for lay in layouts if query in (lay.id, lay.short_id)]
    if exact:
        return exact
    low = query.lower()
    exact = [lay for lay in layouts if low in (lay.id.lower(), lay.short_id.lower())]
    if exact:
        return exact
    doc, colon, q = low.partition(":")
    if not colon or "." in doc or q.startswith(":"):  # no prefix ('kind::f8f6f4' is no prefix)
        doc, q = "", low
    if doc:
        layouts = [lay for lay in layouts if lay.id.lower().startswith(doc + ":")]
    if q.split(".", 1)[0] not in ("mma", ""):
        return [lay for lay in layouts if (lay.short_id.lower() + ".").startswith(q + ".")]
    base, _, ctx = q.partition("@")
    parts = base.split(".")
    instr = "mma.sp" if len(parts) > 1 and parts[1] == "sp" else "mma"
    rest = parts[2:] if instr == "mma.sp" else parts[1:]
    if not rest or len(rest) > 3:
        return []
    shape = rest[0]
    operand = {"a": "A", "b": "B", "c": "C/D", "d": "C/D", "cd": "C/D", "c/d": "C/D",
               "meta": "metadata", "metadata": "metadata"}.get(rest[1], "?") \
        if len(rest) > 1 else ""
    if operand == "?":
        return []  # 'mma.m16n8k16.zzz.s8' names no operand: it matches neither A nor B
    types = set(rest[2].split("-")) if len(rest) > 2 else set()
    out = []
    for lay in layouts:
        if lay.instruction != instr or str(lay.shape).lower() != shape:
            continue
        if operand and lay.operand != operand:
            continue
        if types and not types & {t.lower() for t in lay.types}:
            continue
        if ctx and ctx not in lay.id.lower():
            continue
        out.append(lay)
    return out


def near(layouts: Sequence[Layout], query: str, n: int = 3) -> list[str]:
    """The short ids closest to ``query`` (difflib), for a 'did you mean' -- at most ``n``."""
    import difflib
    names = sorted({lay.short_id for lay in layouts})
    low = {name.lower(): name for name in names}
    close = difflib.get_close_matches(query.split(":")[-1].lower(), list(low), n, 0.75)
    return [low[c] for c in close]
