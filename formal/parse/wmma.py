"""The wmma fragment section, read: a register count per data type, shape and matrix.

The section states no layout (which element a lane holds is left to the target architecture)
but does state how many registers a fragment is, in tables whose cells a page merges
(``rowspan``).  A Markdown or text mirror writes a merged cell by leaving it out, so a row has
fewer cells than its header, and each cell is known by what it holds, not by its column:

    | Data-type      | Shape       | Matrix | Fragment                                 |
    | `.u8` or `.s8` | `.m16n16k16`| A      | ... of two .b32 registers, with each ... |
    | B              | ... of two .b32 registers ...    |   <- type and shape as above
    |                | `.m8n32k16` | A      | ... a single .b32 register ...           |

reads as three rows: (u8/s8, m16n16k16, A, 2 x 4), (u8/s8, m16n16k16, B, 2 x 4) and (u8/s8,
m8n32k16, A, 1 x 4).  A row that names no shape (the ``.f16`` table) stands for the shapes of
the table before it; a row that names no matrix, for those of its ``Multiplicands (A or B)`` /
``Accumulators (C or D)`` heading.  The budgets themselves are checked by the model stage
(``formal.model.wmma``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..base.source import Finding, SourceText, warning
from ..text.blocks import Block, Section
from . import syntax as S
from .prose import parse_prose, try_prose


@dataclass(frozen=True)
class WmmaRow:
    """One fragment: its data types, shapes and matrices, and the fragment sentence."""

    types: tuple[str, ...]
    shapes: tuple[str, ...]
    matrices: tuple[str, ...]  # of A, B, C, D
    fragment: S.FragmentDesc
    source: SourceText  # the fragment cell (or the row's first cell when it holds it)


@dataclass(frozen=True)
class ParsedWmma:
    rows: tuple[WmmaRow, ...]


def _heading_matrices(text: str) -> tuple[str, ...] | None:
    """``Multiplicands (A or B):`` -> (A, B); ``Accumulators (C or D):`` -> (C, D) (a text
    copy may have joined the line above: ``Integer fragments Multiplicands (A or B):``)."""
    words = text.replace("(", " ").replace(")", " ").replace(":", " ").split()
    at = next((k for k, w in enumerate(words)
               if w.lower().startswith(("multiplicand", "accumulator"))), None)
    if at is None:
        return None
    names = tuple(w for w in words[at + 1:] if w in ("A", "B", "C", "D"))
    if names:
        return names
    return ("A", "B") if words[at].lower().startswith("multiplicand") else ("C", "D")


def parse_wmma(section: Section, findings: list[Finding]) -> ParsedWmma:
    rows: list[WmmaRow] = []
    heading: tuple[str, ...] = ()
    shapes_before: tuple[str, ...] = ()  # the shapes of the last table that named any
    table_shapes: list[str] = []
    above: dict[str, Any] = {}  # the row above: its values, for merged cells
    for b in section.body:
        if b.kind == "prose":
            named = _heading_matrices(b.text.text.strip())
            if named is not None:
                heading = named
                continue
            if _header_text(b.text.text):  # "Data-type Shape Matrix Fragment", flattened
                b = Block("row", b.text, (b.text,), header=True, flat=True)
            elif not _row_text(b.text):
                continue
            else:
                # a text copy's row that opens with a merged cell's neighbour ("B A vector
                # expression ...", ".m8n32k16") is no table row to the text stage
                b = Block("row", b.text, (b.text,), flat=True)
        if b.kind != "row":
            continue
        if not b.header and _header_text(b.text.text):
            b = Block("row", b.text, b.cells, header=True, flat=b.flat)
        if b.header:
            if table_shapes:
                shapes_before = tuple(dict.fromkeys(table_shapes))
            table_shapes, above = [], {}
            continue
        for row in _rows(b, above, heading, shapes_before, findings):
            rows.append(row)
            table_shapes.extend(row.shapes)
    return ParsedWmma(tuple(rows))


def _rows(b: Block, above: dict[str, Any], heading: tuple[str, ...],
          shapes_before: tuple[str, ...], findings: list[Finding]) -> list[WmmaRow]:
    """One table row (or, where a text copy joined the lines of two short rows, ``.m8n32k16
    .m32n8k16``, one per repeated cell); ``above`` (the values of the row above) is updated
    in place: a merged cell takes the value above it, the fragment too (an accumulator table
    states one fragment for several shapes)."""
    out: list[WmmaRow] = []
    said: set[str] = set()

    def close() -> None:
        if "fragment" in above and "types" in above:
            frag, src = above["fragment"]
            out.append(WmmaRow(above["types"], tuple(above.get("shape") or shapes_before),
                               tuple(above.get("matrix") or heading), frag, src))
        said.clear()

    cells = [c for c in (b.cells or (b.text,)) if c.text.strip()]
    if b.flat and len(cells) == 1:
        cells = _flat_cells(cells[0])
    for cell in cells:
        if try_prose(cell, "fragment_cell") is not None or cell.text.strip().lower() \
                .startswith(("a vector expression", "vector expression")):
            frag, errs = parse_prose(cell, "fragment_cell", "the fragment cell")
            # a sentence that cannot be read is a warning naming what goes unchecked
            findings.extend(replace(f, severity="warning", kind="unreadable",
                                    message=f.message + "; this fragment's register budget "
                                    "is not checked") for f in errs)
            if frag is not None:
                findings.extend(warning("wording", cell.span(pos),
                                        f"the fragment sentence: {remark}")
                                for pos, remark in frag.slips)
                above["fragment"] = (frag, cell)
            else:
                above.pop("fragment", None)
            continue
        values = try_prose(cell, "wmma_cells")
        if values is None:
            findings.append(warning("unreadable", cell.strip(),
                                    "this wmma table cell is not a data type, a shape, a "
                                    f"matrix or a fragment: {cell.text.strip()!r}"))
            continue
        for kind, what in values:
            if kind in said:
                close()
            said.add(kind)
            above[kind] = (what,) if isinstance(what, str) else what
    if cells:
        close()
    return out


def _flat_cells(src: SourceText) -> list[SourceText]:
    """A row a text copy flattened into one line (``.u8 or .s8 .m16n16k16 A A vector
    expression ...``): the cells before the fragment sentence, and the sentence -- cut where
    the rest of the line first reads as a fragment sentence."""
    text = src.text
    # the cells before the sentence are a few words: a cut is looked for in the first 120
    # characters only (each try is a parse; a long paragraph is no row)
    for k, ch in enumerate(text[:120]):
        if ch == " " and text[k + 1:k + 2].isalpha():
            rest = src.slice(k + 1)
            if try_prose(rest, "fragment_cell") is not None:
                return [src.slice(0, k), rest]
    return [src]


def _row_text(src: SourceText) -> bool:
    """Prose that is a flattened row: cells alone (``.m8n32k16``), or cells and a fragment
    sentence (``B A vector expression of ...``)."""
    return try_prose(src, "wmma_cells") is not None or len(_flat_cells(src)) == 2 \
        or try_prose(src, "fragment_cell") is not None


def _header_text(text: str) -> bool:
    """A header row, flattened or not: a few words ending in ``Fragment``
    (``Data-type Shape Matrix Fragment``, ``.atype / .btype Shape Matrix Fragment``)."""
    words = text.replace("|", " ").split()
    return 1 < len(words) <= 8 and words[-1] == "Fragment"
