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

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time only figure() needs the model (writers.views draws without it)
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


@lru_cache(maxsize=256)  # asked once a cell of a figure, of a few fills (PALETTE's)
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
    row_name: str = "row"  # "lane" for tensor memory (tcgen05.ld / tcgen05.st)

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
    return lay.letter


def _tmem(lay: Layout) -> bool:
    return lay.instruction in ("tcgen05.ld", "tcgen05.st")


def _label(lay: Layout, t: int, i: int, letter: str) -> str:
    """``T5:a3``; a packed tcgen05 register's two 16-bit elements are its halves,
    ``T5:r1.lo`` (bits 0-15) and ``T5:r1.hi``."""
    if _tmem(lay) and lay.types == ("b16",):
        return f"T{t}:{letter}{i >> 1}.{'hi' if i & 1 else 'lo'}"
    return f"T{t}:{letter}{i}"


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
    shape = lay.shape_text if _tmem(lay) else lay.shape
    if _tmem(lay):
        grid = f"{r} TMEM lanes x {c} 32-bit columns"
    title = f"{lay.instruction}.{shape}  {what}  {_types(lay)}  -- {grid}, " \
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
    ordered = sorted(table.items())
    for (_s, t, i), out in ordered:
        if None in out:
            unmapped.append(f"T{t}:{letter}{i}: no case of "
                            f"'{names[list(out).index(None)]}' applies")
    panels = []
    for g in views:
        grid: list[list[list[Holder]]] = [[[] for _ in range(cols)] for _ in range(rows)]
        outside: list[str] = []
        seen: dict[int, None] = {}  # the lanes in the order they come
        for (_s, t, i), out in ordered:
            if group_fn is not None and group_fn(t) != g:
                continue
            seen[t] = None
            if None in out:
                continue
            r, c = out
            label = _label(lay, t, i, letter)
            if 0 <= r < rows and 0 <= c < cols:
                grid[r][c].append(Holder(t, label))
            else:
                outside.append(f"{label} -> row {r}, col {c}")
        title = f"{groups[0]} {g} (lanes {_lane_ranges(list(seen))})" \
            if groups is not None else ""
        cells = tuple(tuple(Cell(tuple(h), _state(h)) for h in row) for row in grid)
        panels.append(Panel(title, rows, cols, tuple(str(c) for c in range(cols)), cells,
                            tuple(outside), row_name="lane" if _tmem(lay) else "row"))
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
    from ..model.cells import cells_and_names
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
    w = max(3, len(p.row_name))
    lines = [f"{p.row_name:>{w}} |" + "".join(h.rjust(width) for h in heads)]
    lines.append("-" * (w + 1) + "+" + "-" * (width * p.cols))
    for r in range(p.rows):
        lines.append(f"{r:>{w}} |" + "".join(s.rjust(width) for s in texts[r]))
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
