"""Figures: a layout redrawn from its formulas, as the spec's figures draw it.

The spec's fragment figures are images: a grid of the tile whose cells read ``T5:a3`` --
lane 5 holds element a3 there.  ``ascii_grid`` draws the same grid as text (``ptxlayout
show``); a cell held twice reads ``!!`` and a cell held by nobody ``..``, so a refuted layout
shows its collisions and holes.  Sparse A draws one cell per chunk of a row with the lane and
elements that hold it; metadata draws, per selector, which lane and bits describe each chunk.
"""

from __future__ import annotations

from typing import Any

from .model import Layout
from .prove import cells_and_names
from .variants import ELEMENT_LETTER


def _letter(lay: Layout) -> str:
    return ELEMENT_LETTER.get(lay.operand, "a")


def grid_cells(lay: Layout, selector: int = 0) -> tuple[list[list[list[str]]], int, int]:
    """(cells, rows, cols): each cell is the list of labels held there."""
    names, table = cells_and_names(lay)
    letter = _letter(lay)
    if lay.operand == "metadata":
        sp_ = lay.sparsity
        rows = lay.tile[0]
        cols = lay.shape.k // sp_.chunk if sp_ else 0
        grid: list[list[list[str]]] = [[[] for _ in range(cols)] for _ in range(rows)]
        for (s, t, i), out in table.items():
            if s != selector or None in out:
                continue
            r, ch, slot = out
            if 0 <= r < rows and 0 <= ch < cols:
                grid[r][ch].append(f"T{t}[{2 * i + 1}:{2 * i}]")
        return grid, rows, cols
    if lay.sparse_a:
        sp_ = lay.sparsity
        chunk = sp_.chunk if sp_ else 4
        rows, cols = lay.tile[0], lay.tile[1] // chunk
        grid = [[[] for _ in range(cols)] for _ in range(rows)]
        for (_s, t, _i), out in table.items():
            if None in out:
                continue
            r, fc, lc = out
            for c in range(fc // chunk, lc // chunk + 1):
                if 0 <= r < rows and 0 <= c < cols:
                    label = f"T{t}"
                    if label not in grid[r][c]:
                        grid[r][c].append(label)
        return grid, rows, cols
    rows, cols = lay.tile
    groups = lay.groups
    grid = [[[] for _ in range(cols)] for _ in range(rows)]
    for (_s, t, i), out in table.items():
        if None in out:
            continue
        r, c = out
        if groups is not None and (t % 16) // 4 != selector:
            continue
        if 0 <= r < rows and 0 <= c < cols:
            grid[r][c].append(f"T{t}:{letter}{i}")
    return grid, rows, cols


def ascii_grid(lay: Layout, marks: set[tuple[int, int]] | None = None) -> str:
    """The tile as a text grid; several views for metadata (one per selector)."""
    head = f"{lay.id}  ({lay.instruction}.{lay.shape} {lay.operand} " \
           f"{'/'.join('.' + t for t in lay.types)}, {lay.source})\n"
    if not lay.formulas:
        return head + "  (no formulas: the document gives this layout only as a figure)\n"
    views = [0]
    if lay.operand == "metadata" and lay.metadata is not None and lay.metadata.selectors:
        views = list(lay.metadata.selectors)
    elif lay.groups is not None:
        views = list(range(lay.groups[1]))
    out = [head]
    for v in views:
        grid, rows, cols = grid_cells(lay, v)
        if len(views) > 1:
            what = "selector" if lay.operand == "metadata" else lay.groups[0] if lay.groups \
                else "view"
            out.append(f"{what} {v}:\n")
        out.append(_render(grid, rows, cols, marks or set(),
                           "chunk" if (lay.sparse_a or lay.operand == "metadata") else "col"))
    return "".join(out)


def _render(grid: list[list[list[str]]], rows: int, cols: int, marks: set[tuple[int, int]],
            colname: str) -> str:
    def text(cell: list[str], r: int, c: int) -> str:
        if not cell:
            s = ".."
        elif len(cell) > 1 and colname == "col":
            s = "!!" + "/".join(cell)
        else:
            s = ",".join(cell)
        return ("*" + s) if (r, c) in marks else s

    texts = [[text(grid[r][c], r, c) for c in range(cols)] for r in range(rows)]
    width = max([len(colname) + len(str(cols))] + [len(s) for row in texts for s in row]) + 1
    lines = ["row |" + "".join(f"{colname}{c}".rjust(width) for c in range(cols))]
    lines.append("----+" + "-" * (width * cols))
    for r in range(rows):
        lines.append(f"{r:>3} |" + "".join(s.rjust(width) for s in texts[r]))
    return "\n".join(lines) + "\n"


def ascii_for(lay: Layout, finding: Any) -> str | None:
    """The grid with the cells a finding names marked with '*' (for the Markdown report)."""
    if not lay.formulas:
        return None
    marks: set[tuple[int, int]] = set()
    cex = getattr(finding, "counterexample", None) or {}
    cell = cex.get("cell") if isinstance(cex, dict) else None
    if isinstance(cell, dict):
        r = cell.get("row")
        c = cell.get("col", cell.get("chunk"))
        if isinstance(r, int) and isinstance(c, int):
            marks.add((r, c))
    text = ascii_grid(lay, marks)
    if text.count("\n") > 80:
        lines = text.split("\n")
        text = "\n".join(lines[:80]) + "\n..."
    return text


def svg(lay: Layout) -> str:  # pragma: no cover - replaced by the figures issue
    raise NotImplementedError("SVG figures are not implemented yet")


def png(lay: Layout) -> bytes:  # pragma: no cover - replaced by the figures issue
    raise NotImplementedError("PNG figures are not implemented yet")
