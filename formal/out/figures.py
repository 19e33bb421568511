"""Figures: a layout redrawn from its formulas, as the spec's figures draw it.

The spec's fragment figures are images: a grid of the tile whose cells read ``T5:a3`` --
lane 5 holds element a3 there.  This module computes the same grid from the formulas and
draws it as text (``ascii_grid``), SVG (``svg``, written directly) or PNG (``png``, through
Pillow).  Nothing here assumes the map is a bijection: every cell collects the labels of all
(lane, element) pairs that land on it.  A 4-lane toy layout of a 2 x 2 tile with
``row = lane >> 1``, ``col = 0`` draws

    row |  col0  col1
      0 | !!T0:a0/T1:a0    ..
      1 | !!T2:a0/T3:a0    ..

-- two collisions (``!!``, both labels, a red border in SVG) and two holes (``..``, a
dashed grey cell); pairs that land outside the tile are listed under the grid.

The kinds of operand draw different cells:

* **dense** A/B/C/D: one cell per (row, col), labelled ``T<lane>:<element>`` and coloured by
  the lane (``PALETTE``: 8 hues for the 8 groups of four lanes, 4 shades within a group;
  the text is black or white, whichever contrasts more).
* **sparse A**: one cell per chunk of a row (4 columns for 16/8-bit, 2 for tf32, 8 for
  4-bit), labelled with the lane and the elements it holds there (``T5:a0,a1``); a chunk
  held by two lanes is a collision, one held by nobody a hole, one whose lane holds the
  wrong number of non-zeros is highlighted too (orange).
* **metadata**: one panel per sparsity selector; each (row, chunk) cell names the lane and
  the bits of its metadata register that index that chunk (``T5[3:0]``, the spec's
  "T5: [0..3] in cell[x][y..z]").
* **replicated** layouts (``Layout.groups``, m8n8k4 ``.f16``): one panel per group.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..base.variants import ELEMENT_LETTER
from ..model.cells import cells_and_names
from ..model.layout import Layout

# ---- colours --------------------------------------------------------------------------------

# lane -> fill: hue by groupID (lane >> 2), shade by threadID_in_group (lane % 4); every fill
# is at least 15 CIE76 units from every other, and black or white text on it has a WCAG
# contrast ratio of 4.5 or more (tests/test_figures.py checks both).
PALETTE: tuple[str, ...] = (
    "#7d1212", "#c11515", "#f04242", "#fa9e9e", "#7d4412", "#c16515", "#f09342", "#fac99e",
    "#7d6f12", "#c1aa15", "#f0d942", "#faee9e", "#247d12", "#32c115", "#5ff042", "#adfa9e",
    "#127d6b", "#15c1a4", "#42f0d3", "#9efaeb", "#12507d", "#1579c1", "#42a7f0", "#9ed4fa",
    "#2d127d", "#4015c1", "#6e42f0", "#b59efa", "#7d127d", "#c115c1", "#f042f0", "#fa9efa",
)
COLLISION = "#000000"  # border of a cell held twice: black outside, gold inside, so that it
COLLISION_INNER = "#ffd700"  # shows on every lane colour
ALERT = "#c00000"  # text of the lists under a figure
COUNT = "#ff8c00"  # border of a sparse chunk with the wrong number of non-zeros
HOLE_FILL = "#eeeeee"
HOLE_STROKE = "#d00000"
MARK = "#1f3fff"  # the cell a finding names


def lane_color(lane: int) -> str:
    return PALETTE[lane % len(PALETTE)]


def _rgb(hexcolor: str) -> tuple[int, int, int]:
    h = hexcolor.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def luminance(hexcolor: str) -> float:
    """WCAG relative luminance."""
    def ch(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4
    r, g, b = _rgb(hexcolor)
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_color(fill: str) -> str:
    """Black or white, whichever reads better on ``fill``."""
    return "#000000" if contrast(fill, "#000000") >= contrast(fill, "#ffffff") else "#ffffff"


# ---- the figure model ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Holder:
    lane: int
    text: str  # "T5:a3" | "T5:a0,a1" | "T5[3:0]"


@dataclass(frozen=True)
class Cell:
    holders: tuple[Holder, ...]
    state: str  # "ok" | "collision" | "hole" | "count"
    note: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    rows: int
    cols: int
    col_labels: tuple[str, ...]
    cells: tuple[tuple[Cell, ...], ...]
    outside: tuple[str, ...] = ()
    col_name: str = "col"

    def count(self, state: str) -> int:
        return sum(1 for row in self.cells for c in row if c.state == state)


@dataclass(frozen=True)
class Figure:
    layout_id: str
    title: str
    subtitle: str
    kind: str  # "dense" | "sparse" | "metadata"
    panels: tuple[Panel, ...]
    unmapped: tuple[str, ...] = ()
    message: str = ""  # why there is no grid (no formulas)
    marks: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    def count(self, state: str) -> int:
        return sum(p.count(state) for p in self.panels)

    @property
    def outside(self) -> tuple[str, ...]:
        return tuple(x for p in self.panels for x in p.outside)

    def summary(self) -> str:
        unit = {"dense": "cell", "sparse": "chunk", "metadata": "chunk"}[self.kind]
        cells = sum(p.rows * p.cols for p in self.panels)
        parts = []
        if self.count("collision"):
            parts.append(f"{self.count('collision')} {unit}s held twice (black and gold border)")
        if self.count("hole"):
            parts.append(f"{self.count('hole')} {unit}s held by no lane (dashed, grey)")
        if self.count("count"):
            parts.append(f"{self.count('count')} chunks with the wrong number of non-zeros "
                         "(orange border)")
        if self.outside:
            parts.append(f"{len(self.outside)} outside the tile (listed)")
        if self.unmapped:
            parts.append(f"{len(self.unmapped)} with no applicable case (listed)")
        if parts:
            return "; ".join(parts)
        if self.kind == "metadata":
            return f"every slot of the {cells} (selector, row, chunk) cells is described once"
        if self.kind == "sparse":
            return f"each of the {cells} chunks is held by one lane with its non-zeros"
        return f"each of the {cells} cells is held exactly once"


def _letter(lay: Layout) -> str:
    return ELEMENT_LETTER.get(lay.operand, "a")


def _types(lay: Layout) -> str:
    return "/".join("." + t for t in lay.types) or "(no types)"


def _titles(lay: Layout) -> tuple[str, str]:
    r, c = lay.tile
    if lay.operand == "metadata":
        sp_ = lay.sparsity
        what = "metadata"
        grid = f"{r} rows x {lay.shape.k // sp_.chunk if sp_ else 0} chunks of A"
    elif lay.sparse_a:
        sp_ = lay.sparsity
        what = "A (sparse" + (f" {sp_.nonzeros}:{sp_.chunk}" if sp_ else "") + ")"
        grid = f"{r} x {c} tile in chunks of {sp_.chunk if sp_ else '?'} columns"
    else:
        what = lay.operand
        grid = f"{r} x {c} tile"
    per = "fields" if lay.operand == "metadata" else "elements"
    title = f"{lay.instruction}.{lay.shape}  {what}  {_types(lay)}  -- {grid}, " \
            f"{lay.lanes} lanes x {lay.elements} {per}"
    src = lay.source
    if lay.reference_of:
        src += f" of {lay.reference_of}"
    where = f"{lay.document}:{lay.span.line}" if lay.span.line else lay.document
    sub = f"{lay.id} -- source: {src}, {where}" + (f", section {lay.section}" if lay.section
                                                    else "")
    return title, sub


def _runs(xs: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive values, in the order given: [0, 1, 2, 5] -> [(0, 2), (5, 5)]."""
    runs: list[tuple[int, int]] = []
    for x in xs:
        if runs and x == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], x)
        else:
            runs.append((x, x))
    return runs


def _elems(letter: str, idx: list[int]) -> str:
    """a0,a1 | a0..a3 (runs of three or more collapse)."""
    out: list[str] = []
    for a, b in _runs(sorted(idx)):
        if b - a >= 2:
            out.append(f"{letter}{a}..{letter}{b}")
        else:
            out.extend(f"{letter}{x}" for x in range(a, b + 1))
    return ",".join(out)


def _lane_ranges(lanes: list[int]) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in _runs(lanes))


def _state(holders: list[Holder]) -> str:
    if not holders:
        return "hole"
    if len(holders) > 1:
        return "collision"
    return "ok"


def _dense_panels(lay: Layout, table: dict[tuple[int, int, int], tuple[Any, ...]],
                  names: tuple[str, ...]) -> tuple[list[Panel], list[str]]:
    rows, cols = lay.tile
    letter = _letter(lay)
    groups = lay.groups
    group_fn = lay.lane_group()
    views = list(range(groups[1])) if groups is not None else [0]
    unmapped: list[str] = []
    for (_s, t, i), out in sorted(table.items()):
        if None in out:
            unmapped.append(f"T{t}:{letter}{i}: no case of "
                            f"'{names[list(out).index(None)]}' applies")
    panels = []
    for g in views:
        grid: list[list[list[Holder]]] = [[[] for _ in range(cols)] for _ in range(rows)]
        outside: list[str] = []
        lanes: list[int] = []
        for (_s, t, i), out in sorted(table.items()):
            if group_fn is not None and group_fn(t) != g:
                continue
            if t not in lanes:
                lanes.append(t)
            if None in out:
                continue
            r, c = out
            label = f"T{t}:{letter}{i}"
            if 0 <= r < rows and 0 <= c < cols:
                grid[r][c].append(Holder(t, label))
            else:
                outside.append(f"{label} -> row {r}, col {c}")
        title = f"{groups[0]} {g} (lanes {_lane_ranges(lanes)})" if groups is not None else ""
        cells = tuple(tuple(Cell(tuple(h), _state(h)) for h in row) for row in grid)
        panels.append(Panel(title, rows, cols, tuple(str(c) for c in range(cols)), cells,
                            tuple(outside)))
    return panels, unmapped


def _sparse_panels(lay: Layout, table: dict[tuple[int, int, int], tuple[Any, ...]],
                   names: tuple[str, ...]) -> tuple[list[Panel], list[str]]:
    sp_ = lay.sparsity
    chunk, nz = (sp_.chunk, sp_.nonzeros) if sp_ else (4, 2)
    rows, k = lay.tile
    cols = k // chunk
    letter = _letter(lay)
    unmapped: list[str] = []
    held: list[list[dict[int, list[int]]]] = [[{} for _ in range(cols)] for _ in range(rows)]
    outside: list[str] = []
    ranges: dict[tuple[int, int, int, int], list[int]] = {}
    for (_s, t, i), out in sorted(table.items()):
        if None in out:
            unmapped.append(f"T{t}:{letter}{i}: no case of "
                            f"'{names[list(out).index(None)]}' applies")
            continue
        r, fc, lc = out
        ranges.setdefault((t, r, fc, lc), []).append(i)
    for (t, r, fc, lc), elems in sorted(ranges.items()):
        # the lane's non-zeros of [fc .. lc], in element order, fill its chunks in order
        for rank, i in enumerate(elems):
            c = fc // chunk + rank // nz
            if 0 <= r < rows and 0 <= c < cols and c * chunk <= lc and fc < k:
                held[r][c].setdefault(t, []).append(i)
            else:
                outside.append(f"T{t}:{letter}{i} -> row {r}, cols {fc}..{lc}")
    grid = []
    for r in range(rows):
        line = []
        for c in range(cols):
            hs = tuple(Holder(t, f"T{t}:{_elems(letter, el)}")
                       for t, el in sorted(held[r][c].items()))
            if not hs:
                state = "hole"
            elif len(hs) > 1:
                state = "collision"
            elif len(next(iter(held[r][c].values()))) != nz:
                state = "count"
            else:
                state = "ok"
            note = f"{nz} non-zeros expected" if state == "count" else ""
            line.append(Cell(hs, state, note))
        grid.append(tuple(line))
    labels = tuple(f"{c * chunk}..{c * chunk + chunk - 1}" for c in range(cols))
    return [Panel("", rows, cols, labels, tuple(grid), tuple(outside), "cols")], unmapped


def _bits(fields: list[int], width: int) -> str:
    """[3:0] for fields 0, 1 of 2 bits; non-adjacent runs are listed."""
    runs = _runs(sorted(fields))
    return ",".join(f"{b * width + width - 1}:{a * width}" for a, b in runs)


def _metadata_panels(lay: Layout, table: dict[tuple[int, int, int], tuple[Any, ...]],
                     names: tuple[str, ...]) -> tuple[list[Panel], list[str]]:
    sp_ = lay.sparsity
    md = lay.metadata
    chunk = sp_.chunk if sp_ else 4
    slots = sp_.slots if sp_ else 2
    width = sp_.index_bits if sp_ else 2
    rows = lay.tile[0]
    cols = lay.shape.k // chunk
    unmapped: list[str] = []
    panels = []
    for s in (md.selectors if md is not None and md.selectors else (0,)):
        desc: list[list[dict[int, list[int]]]] = [[{} for _ in range(cols)]
                                                  for _ in range(rows)]
        slot_of: list[list[dict[int, int]]] = [[{} for _ in range(cols)] for _ in range(rows)]
        outside: list[str] = []
        lanes: list[int] = []
        for (ss, t, i), out in sorted(table.items()):
            if ss != s:
                continue
            if t not in lanes:
                lanes.append(t)
            label = f"T{t}[{i * width + width - 1}:{i * width}]"
            if None in out:
                unmapped.append(f"selector {s}: {label}: no case of "
                                f"'{names[list(out).index(None)]}' applies")
                continue
            r, ch, slot = out
            if 0 <= r < rows and 0 <= ch < cols and 0 <= slot < slots:
                desc[r][ch].setdefault(t, []).append(i)
                slot_of[r][ch][slot] = slot_of[r][ch].get(slot, 0) + 1
            else:
                outside.append(f"selector {s}: {label} -> row {r}, chunk {ch}, slot {slot}")
        grid = []
        for r in range(rows):
            line = []
            for c in range(cols):
                hs = tuple(Holder(t, f"T{t}[{_bits(f, width)}]")
                           for t, f in sorted(desc[r][c].items()))
                used = slot_of[r][c]
                if any(v > 1 for v in used.values()):
                    state = "collision"
                elif len(used) < slots:
                    state = "hole"
                else:
                    state = "ok"
                missing = [x for x in range(slots) if x not in used]
                note = f"slot {', '.join(map(str, missing))} not described" if missing and hs \
                    else ""
                line.append(Cell(hs, state, note))
            grid.append(tuple(line))
        labels = tuple(f"{c * chunk}..{c * chunk + chunk - 1}" for c in range(cols))
        title = f"sparsity selector {s} (metadata from lanes {_lane_ranges(lanes)})"
        panels.append(Panel(title, rows, cols, labels, tuple(grid), tuple(outside), "cols"))
    return panels, unmapped


def figure(lay: Layout, marks: set[tuple[int, int]] | frozenset[tuple[int, int]] = frozenset(),
           ) -> Figure:
    """The layout's grid(s), computed from its formulas: the model every renderer draws."""
    title, sub = _titles(lay)
    kind = "metadata" if lay.operand == "metadata" else "sparse" if lay.sparse_a else "dense"
    names, table = cells_and_names(lay)
    if not table:
        return Figure(lay.id, title, sub, kind, (), (),
                      "no formulas: the document gives this layout only as a figure")
    if kind == "metadata":
        panels, unmapped = _metadata_panels(lay, table, names)
    elif kind == "sparse":
        panels, unmapped = _sparse_panels(lay, table, names)
    else:
        panels, unmapped = _dense_panels(lay, table, names)
    return Figure(lay.id, title, sub, kind, tuple(panels), tuple(unmapped), "",
                  frozenset(marks))


# ---- ASCII -------------------------------------------------------------------------------------


def ascii_grid(lay: Layout, marks: set[tuple[int, int]] | None = None) -> str:
    """The tile as a text grid; several views for metadata (one per selector) and for
    replicated layouts (one per group)."""
    fig = figure(lay, frozenset(marks or ()))
    return render_ascii(fig)


def render_ascii(fig: Figure) -> str:
    head = f"{fig.layout_id}  ({fig.title})\n"
    if fig.message:
        return head + f"  ({fig.message})\n"
    out = [head]
    for p in fig.panels:
        if p.title:
            out.append(f"{p.title}:\n")
        out.append(_render(p, fig.marks))
        for x in p.outside:
            out.append(f"  outside the tile: {x}\n")
    for x in fig.unmapped:
        out.append(f"  unmapped: {x}\n")
    out.append(f"  {fig.summary()}\n")
    return "".join(out)


def _render(p: Panel, marks: frozenset[tuple[int, int]]) -> str:
    def text(cell: Cell, r: int, c: int) -> str:
        labels = [h.text for h in cell.holders]
        if cell.state == "hole" and not labels:
            s = ".."
        elif cell.state == "collision":
            s = "!!" + "/".join(labels)
        elif cell.state in ("count", "hole"):
            s = "?" + ",".join(labels)
        else:
            s = ",".join(labels)
        return ("*" + s) if (r, c) in marks else s

    texts = [[text(p.cells[r][c], r, c) for c in range(p.cols)] for r in range(p.rows)]
    heads = [f"col{c}" if p.col_name == "col" else p.col_labels[c] for c in range(p.cols)]
    width = max([len(h) for h in heads] + [len(s) for row in texts for s in row]) + 1
    lines = ["row |" + "".join(h.rjust(width) for h in heads)]
    lines.append("----+" + "-" * (width * p.cols))
    for r in range(p.rows):
        lines.append(f"{r:>3} |" + "".join(s.rjust(width) for s in texts[r]))
    return "\n".join(lines) + "\n"


def ascii_for(lay: Layout, finding: Any) -> str | None:
    """The grid with the cells a finding names marked with '*' (for the Markdown report)."""
    if not lay.formulas:
        return None
    text = ascii_grid(lay, finding_marks(lay, finding))
    if text.count("\n") > 80:
        lines = text.split("\n")
        text = "\n".join(lines[:80]) + "\n..."
    return text


def svg_for(lay: Layout, finding: Any) -> str | None:
    """The SVG figure with the finding's cell marked (for the Markdown report)."""
    if not lay.formulas:
        return None
    return svg(lay, finding_marks(lay, finding))


def finding_marks(lay: Layout, finding: Any) -> set[tuple[int, int]]:
    """The (row, col) -- or (row, chunk) -- cell a finding's counterexample names."""
    marks: set[tuple[int, int]] = set()
    cex = getattr(finding, "counterexample", None) or {}
    cell = cex.get("cell") if isinstance(cex, dict) else None
    if isinstance(cell, dict):
        r = cell.get("row")
        c = cell.get("col", cell.get("chunk"))
        if isinstance(r, int) and isinstance(c, int):
            if lay.sparse_a and "col" in cell and lay.sparsity is not None:
                c //= lay.sparsity.chunk
            marks.add((r, c))
    return marks


# ---- drawing: a scene of rectangles and text, written as SVG or painted by Pillow ------------

FONT = 11.0
CHAR_W = 6.7  # advance of an 11 px monospace glyph, rounded up
LINE_H = 14.0
PAD = 6.0
TITLE_FONT = 14.0
BORDER = 5.0  # the space a collision or count border takes inside a cell
BORDERED = ("collision", "count")


@dataclass(frozen=True)
class _Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str = "none"
    width: float = 0.0
    dash: bool = False
    cls: str = ""


@dataclass(frozen=True)
class _Text:
    x: float
    y: float  # the vertical centre of the text
    text: str
    fill: str = "#000000"
    size: float = FONT
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    cls: str = ""


@dataclass(frozen=True)
class _Group:
    attrs: tuple[tuple[str, str], ...]
    items: tuple[Any, ...]


def _tw(text: str, size: float = FONT) -> float:
    return len(text) * CHAR_W * size / FONT


def _scene(fig: Figure) -> tuple[float, float, list[Any]]:
    items: list[Any] = []
    x0 = 12.0
    y = 16.0
    width = max(_tw(fig.title, TITLE_FONT), _tw(fig.subtitle)) + 2 * x0
    items.append(_Text(x0, y, fig.title, size=TITLE_FONT, bold=True, cls="title"))
    y += 18
    items.append(_Text(x0, y, fig.subtitle, fill="#333333", cls="subtitle"))
    y += 20
    if fig.message:
        items.append(_Text(x0, y, fig.message, fill="#333333", cls="message"))
        return width, y + 16, items
    for pi, p in enumerate(fig.panels):
        labels = [h.text for row in p.cells for c in row for h in c.holders]
        cw = max([_tw(s) for s in labels] + [_tw(s) for s in p.col_labels] + [_tw("hole")])
        cw = float(int(cw + 2 * PAD + 1))
        ch = max([len(c.holders) * LINE_H + 6 + (2 * BORDER if c.state in BORDERED else 0)
                  for row in p.cells for c in row] + [LINE_H + 6])
        left = x0 + _tw(str(p.rows - 1)) + 14
        if p.title:
            items.append(_Text(x0, y, p.title, bold=True, cls="panel-title"))
            y += 18
        axis = "row \\ " + ("col" if p.col_name == "col" else "cols (chunk)")
        items.append(_Text(x0, y, axis, fill="#555555", size=FONT - 1, cls="axis-name"))
        y += 16
        for c, lab in enumerate(p.col_labels):
            items.append(_Text(left + c * cw + cw / 2, y, lab, fill="#333333", anchor="middle",
                               cls="axis col"))
        y += 10
        top = y
        cells: list[Any] = []
        for r in range(p.rows):
            cy = top + r * ch
            cells.append(_Text(left - 6, cy + ch / 2, str(r), fill="#333333", anchor="end",
                               cls="axis row"))
            for c in range(p.cols):
                cells.append(_cell(p.cells[r][c], r, c, left + c * cw, cy, cw, ch,
                                   (r, c) in fig.marks))
        items.append(_Group((("class", "panel"), ("data-panel", str(pi)),
                             ("data-title", p.title)), tuple(cells)))
        y = top + p.rows * ch + 14
        width = max(width, left + p.cols * cw + x0)
        y = _listing(items, "outside the tile", p.outside, x0, y, width)
        y += 8
    y = _listing(items, "no case applies", fig.unmapped, x0, y, width)
    bad = fig.count("collision") + fig.count("hole") + fig.count("count") + \
        len(fig.outside) + len(fig.unmapped)
    summary = fig.summary()
    items.append(_Text(x0, y, summary, fill=ALERT if bad else "#1a6b1a", bold=bool(bad),
                       cls="summary"))
    width = max(width, x0 + _tw(summary) + x0)
    return float(int(width + 1)), float(int(y + 14)), items


def _listing(items: list[Any], what: str, entries: tuple[str, ...], x0: float, y: float,
             width: float) -> float:
    """``what (n): a; b; c`` wrapped to the figure's width, one text element per line."""
    if not entries:
        return y
    limit = max(60, int((width - 2 * x0) / CHAR_W))
    lines = [f"{what} ({len(entries)}):"]
    for e in entries:
        sep = " " if lines[-1].endswith(":") else "; "
        if len(lines[-1]) + len(sep) + len(e) > limit:
            lines.append("  " + e)
        else:
            lines[-1] += sep + e
    cls = "outside" if what.startswith("outside") else "unmapped"
    for text in lines:
        items.append(_Text(x0, y, text, fill=ALERT, cls=cls))
        y += LINE_H
    return y


def _cell(cell: Cell, r: int, c: int, x: float, y: float, w: float, h: float,
          marked: bool) -> _Group:
    parts: list[Any] = []
    if not cell.holders:
        parts.append(_Rect(x, y, w, h, HOLE_FILL, HOLE_STROKE, 1.5, dash=True, cls="hole"))
        parts.append(_Text(x + w / 2, y + h / 2, "hole", fill=HOLE_STROKE, anchor="middle",
                           cls="hole-label"))
    else:
        # a bordered cell keeps its labels clear of the border
        inset = BORDER if cell.state in BORDERED else 0.0
        band = (h - 2 * inset) / len(cell.holders)
        for k, hd in enumerate(cell.holders):
            fill = lane_color(hd.lane)
            by = y + inset + k * band
            parts.append(_Rect(x, by, w, band, fill, "#ffffff", 0.5, cls="band"))
            parts.append(_Text(x + w / 2, by + band / 2, hd.text, fill=text_color(fill),
                               anchor="middle", cls="label"))
        if cell.state == "collision":
            parts.append(_Rect(x + 1.5, y + 1.5, w - 3, h - 3, "none", COLLISION, 3,
                               cls="collision"))
            parts.append(_Rect(x + 3.5, y + 3.5, w - 7, h - 7, "none", COLLISION_INNER, 1.5,
                               cls="collision-inner"))
        elif cell.state == "count":
            parts.append(_Rect(x + 1.5, y + 1.5, w - 3, h - 3, "none", COUNT, 3, cls="count"))
        elif cell.state == "hole":  # metadata: a slot of the chunk nobody describes
            parts.append(_Rect(x + 1, y + 1, w - 2, h - 2, "none", HOLE_STROKE, 2, dash=True,
                               cls="hole"))
    if marked:
        parts.append(_Rect(x - 1, y - 1, w + 2, h + 2, "none", MARK, 2.5, cls="mark"))
    attrs = [("class", "cell"), ("data-row", str(r)), ("data-col", str(c)),
             ("data-state", cell.state),
             ("data-labels", "|".join(hd.text for hd in cell.holders))]
    if cell.holders:
        attrs.append(("data-lanes", " ".join(str(hd.lane) for hd in cell.holders)))
    if cell.note:
        attrs.append(("data-note", cell.note))
    if marked:
        attrs.append(("data-marked", "1"))
    return _Group(tuple(attrs), tuple(parts))


def _n(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}".rstrip("0").rstrip(".")


def _svg_item(it: Any, out: list[str], indent: str) -> None:
    if isinstance(it, _Group):
        attrs = "".join(f" {k}={quoteattr(v)}" for k, v in it.attrs)
        out.append(f"{indent}<g{attrs}>")
        for sub in it.items:
            _svg_item(sub, out, indent + " ")
        out.append(f"{indent}</g>")
    elif isinstance(it, _Rect):
        extra = f' stroke="{it.stroke}" stroke-width="{_n(it.width)}"' \
            if it.stroke != "none" else ""
        if it.dash:
            extra += ' stroke-dasharray="4 3"'
        cls = f' class="{it.cls}"' if it.cls else ""
        out.append(f'{indent}<rect{cls} x="{_n(it.x)}" y="{_n(it.y)}" width="{_n(it.w)}" '
                   f'height="{_n(it.h)}" fill="{it.fill}"{extra}/>')
    elif isinstance(it, _Text):
        cls = f' class="{it.cls}"' if it.cls else ""
        anchor = f' text-anchor="{it.anchor}"' if it.anchor != "start" else ""
        weight = ' font-weight="bold"' if it.bold else ""
        size = f' font-size="{_n(it.size)}"' if it.size != FONT else ""
        out.append(f'{indent}<text{cls} x="{_n(it.x)}" y="{_n(it.y)}" fill="{it.fill}"'
                   f'{anchor}{weight}{size} dominant-baseline="central">'
                   f'{escape(it.text)}</text>')


def render_svg(fig: Figure) -> str:
    width, height, items = _scene(fig)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" '
           f'height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" '
           f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
           f'font-size="{_n(FONT)}" data-layout={quoteattr(fig.layout_id)}>',
           f" <title>{escape(fig.title)}</title>",
           f" <desc>{escape(fig.subtitle + '. ' + fig.summary())}</desc>",
           f' <rect x="0" y="0" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>']
    for it in items:
        _svg_item(it, out, " ")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def svg(lay: Layout, marks: set[tuple[int, int]] | None = None) -> str:
    """The figure as a standalone SVG document (deterministic: same layout, same bytes)."""
    return render_svg(figure(lay, frozenset(marks or ())))


def _font(size: float, bold: bool) -> Any:
    from PIL import ImageFont
    names = ("DejaVuSansMono-Bold.ttf",) if bold else ()
    for name in names + ("DejaVuSansMono.ttf",):
        try:
            return ImageFont.truetype(name, round(size))
        except OSError:
            continue
    try:
        return ImageFont.load_default(round(size))
    except TypeError:  # pragma: no cover - Pillow < 10.1
        return ImageFont.load_default()


def render_png(fig: Figure, scale: float = 2.0) -> bytes:
    """The figure painted by Pillow (``pip install 'ptxlayout[png]'``)."""
    from PIL import Image, ImageDraw

    width, height, items = _scene(fig)
    img = Image.new("RGB", (round(width * scale), round(height * scale)), "#ffffff")
    draw = ImageDraw.Draw(img)
    fonts: dict[tuple[float, bool], Any] = {}

    def font(size: float, bold: bool) -> Any:
        if (size, bold) not in fonts:
            fonts[(size, bold)] = _font(size * scale, bold)
        return fonts[(size, bold)]

    def paint(it: Any) -> None:
        if isinstance(it, _Group):
            for sub in it.items:
                paint(sub)
        elif isinstance(it, _Rect):
            box = [it.x * scale, it.y * scale, (it.x + it.w) * scale, (it.y + it.h) * scale]
            if it.fill != "none":
                draw.rectangle(box, fill=it.fill)
            if it.stroke != "none":
                lw = max(1, round(it.width * scale))
                if it.dash:
                    _dashed(draw, box, it.stroke, lw, 4 * scale, 3 * scale)
                else:
                    draw.rectangle(box, outline=it.stroke, width=lw)
        elif isinstance(it, _Text):
            anchor = {"start": "lm", "middle": "mm", "end": "rm"}[it.anchor]
            f = font(it.size, it.bold)
            kw: dict[str, Any] = {"fill": it.fill, "font": f}
            if f.__class__.__name__ == "FreeTypeFont":  # bitmap fonts take no anchor
                kw["anchor"] = anchor
            draw.text((it.x * scale, it.y * scale), it.text, **kw)

    for it in items:
        paint(it)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _dashed(draw: Any, box: list[float], color: str, width: int, on: float,
            off: float) -> None:
    x0, y0, x1, y1 = box
    for (ax, ay, bx, by) in ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1),
                             (x0, y1, x0, y0)):
        length = abs(bx - ax) + abs(by - ay)
        if length == 0:
            continue
        dx, dy = (bx - ax) / length, (by - ay) / length
        pos = 0.0
        while pos < length:
            end = min(length, pos + on)
            draw.line([(ax + dx * pos, ay + dy * pos), (ax + dx * end, ay + dy * end)],
                      fill=color, width=width)
            pos = end + off


def png(lay: Layout, marks: set[tuple[int, int]] | None = None, scale: float = 2.0) -> bytes:
    """The figure as PNG bytes; raises ImportError (with the install hint) without Pillow."""
    try:
        import PIL  # noqa: F401
    except ImportError as exc:
        raise ImportError("PNG figures need Pillow: pip install 'ptxlayout[png]'") from exc
    return render_png(figure(lay, frozenset(marks or ())), scale)
