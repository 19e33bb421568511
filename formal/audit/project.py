"""The audit's one door into the rest of ptxlayout (so a move of those modules is one edit).

Everything the audit needs from the pipeline -- findings and spans, the one Lark parser builder,
the catalog's layouts (as written and corrected), the (thread, value) view of a layout, the
variants table, the prover's ``InternalError`` (Z3 and enumeration disagree: a bug, never a
verdict) -- is imported here and nowhere else in ``formal.audit`` (besides the
shape:stride algebra ``formal.model.cute``, which the CuTe export shares).  For example
``spec_layouts(False)`` is the catalog's layouts with the spec's formulas as written, and
``tv_view(lay)`` the table ``cells[lane][value] = (row, col)`` of one of them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..base.grammar_files import build_parser
from ..base.lean_lalr import Declined, collector_paused, lean_parser
from ..base.matrix_variants import DATAPATH_ROWS, TMEM_VARIANTS, matrix_layout_serves
from ..base.source import Finding, Span, error, warning
from ..base.variants import (
    MOVE_SHAPES,
    MOVES,
    PTX_TYPES,
    VARIANTS,
    Shape,
    Variant,
    layout_serves,
)
from ..model import Layout, cells_and_names
from ..model.datapath import DataPath, datapath_cells
from ..model.tv import TV, tv_view
from ..prove.verdicts import InternalError

__all__ = ["DATAPATH_ROWS", "DataPath", "Declined", "Finding", "InternalError", "Layout", "MOVES",
           "MOVE_SHAPES", "PTX_TYPES", "Shape", "Span", "TMEM_VARIANTS", "TV", "VARIANTS",
           "Variant", "build_parser", "cells_and_names", "collector_paused", "datapath_cells",
           "error", "layout_serves", "lean_parser", "matrix_layout_serves", "scale_spec_layouts",
           "smem_canonical_rows", "smem_layout_at", "spec_copies", "spec_datapaths", "spec_layouts",
           "tc_meta_spec_layouts", "tc_scale_spec_layouts", "tv_view", "warning"]


@cache
def spec_layouts(corrections: bool) -> tuple[Layout, ...]:
    """The embedded catalog's layouts; ``corrections`` applies corrections.md."""
    from ..model import catalog_model
    return catalog_model(corrections).layouts


BLOCK_SCALE_CATALOG = "catalog/block-scale/mma-sync.md"


@cache
def scale_spec_layouts() -> tuple[object, ...]:
    """The catalog's block-scale factor layouts (``formal.model.block_scale.ScaleLayout``:
    every legal ``mma.sync ... .block_scale`` form's scale_A and scale_B), as proved by
    ``ptxlayout prove formal/catalog/block-scale/mma-sync.md``."""
    from ..catalog import CATALOG_DIR
    from ..model.block_scale import scale_layouts
    from ..parse.block_scale import read_block_scale
    text = (CATALOG_DIR / "block-scale" / "mma-sync.md").read_text(encoding="utf-8")
    return tuple(scale_layouts(read_block_scale(text, BLOCK_SCALE_CATALOG)))


@cache
def tc_scale_spec_layouts() -> tuple[object, ...]:
    """The catalog's tcgen05 block-scale factor layouts (``formal.model.tc_scale
    .TcScaleLayout``: every legal block-scaled ``tcgen05.mma`` form's scale_A and scale_B at
    each M the catalog states), as ``ptxlayout prove`` proves them."""
    from ..catalog import CATALOG_DIR
    from ..model.tc_scale import tc_scale_layouts
    from ..parse.block_scale import read_block_scale
    text = (CATALOG_DIR / "block-scale" / "tcgen05.md").read_text(encoding="utf-8")
    return tuple(tc_scale_layouts(read_block_scale(text, "catalog/block-scale/tcgen05.md")))


@cache
def tc_meta_spec_layouts() -> tuple[object, ...]:
    """The catalog's tcgen05 sparse-metadata layouts (``formal.model.tc_meta.MetaLayout``:
    every ``tcgen05.mma.sp`` form it states, at each selector value), as ``ptxlayout prove``
    reads them."""
    from ..catalog import CATALOG_DIR
    from ..model.tc_meta import meta_layouts
    from ..parse.tc_meta import read_tc_meta
    text = (CATALOG_DIR / "sparse-metadata" / "tcgen05.md").read_text(encoding="utf-8")
    return tuple(meta_layouts(read_tc_meta(text, "catalog/sparse-metadata/tcgen05.md")[0]))


@cache
def spec_datapaths() -> tuple[DataPath, ...]:
    """The catalog's tcgen05.mma data-path layouts A-G (formal/catalog/tcgen05-datapath.md),
    as ``ptxlayout prove`` reads them (once a process: every UMMA atom's D at every M and N
    asks for them)."""
    from ..catalog import documents
    from ..model.datapath import datapaths
    from ..parse.document import parse_document
    doc = next(d for d in documents() if d.name.endswith("tcgen05-datapath.md"))
    parsed = [ps.tmem for ps in parse_document(doc).sections if ps.tmem is not None]
    return tuple(datapaths(parsed))


@cache
def spec_copies() -> tuple[Any, ...]:
    """The catalog's tcgen05.cp forms (``formal.model.tc_copy.CopyLayout``, from
    formal/catalog/tensor-copy/tcgen05.md), as ``ptxlayout prove`` reads them."""
    from ..catalog import CATALOG_DIR
    from ..model.tc_copy import copy_layouts
    from ..parse.tc_copy import read_tc_copy
    text = (CATALOG_DIR / "tensor-copy" / "tcgen05.md").read_text(encoding="utf-8")
    return copy_layouts(read_tc_copy(text, "catalog/tensor-copy/tcgen05.md")[0])


@cache
def smem_canonical_rows() -> tuple[Any, ...]:
    """The catalog's canonical shared-memory layouts (formal/catalog/smem/layouts.md), one
    row per (majorness, swizzle mode), as ``ptxlayout prove`` reads them."""
    from ..catalog import CATALOG_DIR
    from ..model.smem import read_smem
    text = (CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    return tuple(read_smem(text, "formal/catalog/smem/layouts.md").canonical)


def smem_layout_at(row: Any, bits: int, mn: int, k: int) -> Any:
    """A canonical row at ``bits``-bit elements, with m and k (its repetitions) doubled until
    it covers ``mn`` x ``k`` elements (the tile parameters of ``model.smem.tile_params``)."""
    from ..model.smem import at_params, tile_params
    reps = [1, 1]
    while True:
        p = tile_params(row.major, row.mode, bits, reps[0])
        p["k"] = reps[1]
        lay = at_params(row.layout, p, bits, row.swizzle)
        ext = lay.extent
        if ext[0] >= mn and ext[1] >= k:
            return lay
        reps = [reps[0] * (2 if ext[0] < mn else 1), reps[1] * (2 if ext[1] < k else 1)]
