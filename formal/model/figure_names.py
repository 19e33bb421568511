"""A figure that names another block than the one it stands in: the spec reuses images.

A figure under the mma ``.m16n8k16`` ``.f16`` accumulators whose caption says ``.m16n8k8`` or
whose image file is named for ``.bf16`` matrix A is a warning naming what it says and where it
stands::

    the figure's caption names .m16n8k8, but it stands under the mma .m16n8k16 accumulators
    C/D block of .f16

An accumulator figure is judged by the multiplicand types, as labels are; a warpgroup section
may draw one warp's part (sparse wgmma's metadata figure is the warp-level ``.m16n8k32`` one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.source import SourceText, warning
from ..base.variants import legal_types
from ..parse import syntax as S


def check_figures(ctx: Any, figures: Sequence[tuple[SourceText, S.FigureFacts]],
                  operand: str, types: set[str]) -> None:
    """A figure whose caption or image name names another instruction, shape, operand or
    type than the block it stands in (the spec reuses images): a warning each.  ``ctx``: the
    block's ``sections.SectionContext`` (its instruction, shape and findings)."""
    for src, ff in figures:
        said = []
        if ff.sparse and ctx.instruction == "mma":
            said.append("sparse mma")
        # a warpgroup section may draw one warp's part: sparse wgmma .m64nNk32's metadata
        # figure is the warp-level .m16n8k32 one ("the metadata bits ... for a warp")
        warp = f"m16n8k{ctx.shape.k}" if ctx.instruction.startswith("wgmma") else ""
        if ff.shapes and str(ctx.shape) not in ff.shapes and ctx.shape_text not in ff.shapes \
                and warp not in ff.shapes:
            said.append("." + " / .".join(ff.shapes))
        if ff.operands and operand not in ff.operands:
            said.append(" / ".join(_OPERAND_WORDS.get(o, o) for o in ff.operands))
        known = set(types)
        if operand == "C/D":  # accumulator figures go by the multiplicand types, as labels do
            known |= legal_types(ctx.instruction, str(ctx.shape), "A") | \
                legal_types(ctx.instruction, str(ctx.shape), "B")
        if ff.types and types and not set(ff.types) & known:
            said.append(" / ".join(f".{t}" for t in ff.types))
        if said:
            what = "image" if ff.image else "caption"
            ctx.findings.append(warning(
                "figure", src, f"the figure's {what} names {', '.join(said)}, but it stands "
                f"under the {ctx.instruction} .{ctx.shape_text or ctx.shape} "
                f"{_OPERAND_WORDS.get(operand, operand)}"
                f" block of " + " / ".join(f".{t}" for t in sorted(types))))


_OPERAND_WORDS = {"A": "matrix A", "B": "matrix B", "C/D": "accumulators C/D",
                  "metadata": "metadata"}
