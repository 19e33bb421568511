"""A figure as a picture: a scene of rectangles and text, written as SVG or painted by Pillow.

``svg(layout)`` lays the ``Figure`` of ``formal.writers.figures`` out on a grid (one cell per tile
cell, ``T5:a3`` in the lane's colour, a black-and-gold border where two elements collide, a
dashed grey box where nobody holds the cell) and writes it as SVG text; ``png`` paints the same
scene with Pillow (``pip install 'ptxlayout[png]'``).  For m16n8k16 ``.f16`` A the picture is a
16 x 16 grid, rows 0..7 and 8..15 held by the same 32 lanes.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any, NamedTuple
from xml.sax.saxutils import escape, quoteattr

from .figures import (
    ALERT,
    COLLISION,
    COLLISION_INNER,
    COUNT,
    HOLE_FILL,
    HOLE_STROKE,
    MARK,
    Cell,
    Figure,
    figure,
    finding_marks,
    lane_color,
    text_color,
)

if TYPE_CHECKING:
    from ..model.layout import Layout


def svg_for(lay: Layout, finding: Any) -> str | None:
    """The SVG figure with the finding's cell marked (for the Markdown report)."""
    if not lay.formulas:
        return None
    return svg(lay, finding_marks(lay, finding))



# ---- drawing: a scene of rectangles and text, written as SVG or painted by Pillow ------------

FONT = 11.0
CHAR_W = 6.7  # advance of an 11 px monospace glyph, rounded up
LINE_H = 14.0
PAD = 6.0
TITLE_FONT = 14.0
BORDER = 5.0  # the space a collision or count border takes inside a cell
BORDERED = ("collision", "count")


# the scene's items are immutable tuples (a catalog figure makes hundreds of thousands: a frozen
# dataclass's __init__ costs three times a tuple's)
class _Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str = "none"
    width: float = 0.0
    dash: bool = False
    cls: str = ""


class _Text(NamedTuple):
    x: float
    y: float  # the vertical centre of the text
    text: str
    fill: str = "#000000"
    size: float = FONT
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    cls: str = ""


class _Group(NamedTuple):
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


_PLAIN = re.compile(r'[^&<>"\n\r\t]*')  # what quoteattr and escape leave as it is


def _attr(v: str) -> str:
    """``quoteattr(v)``: ``"v"`` where ``v`` holds nothing it replaces (most values: numbers)."""
    return f'"{v}"' if _PLAIN.fullmatch(v) else quoteattr(v)


def _text(v: str) -> str:
    """``escape(v)``: ``v`` itself where it holds nothing escape replaces."""
    return v if _PLAIN.fullmatch(v) else escape(v)


def _svg_item(it: Any, out: list[str], indent: str) -> None:
    if isinstance(it, _Group):
        attrs = "".join(f" {k}={_attr(v)}" for k, v in it.attrs)
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
                   f'{_text(it.text)}</text>')


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


def svg(lay: Layout | Figure, marks: set[tuple[int, int]] | None = None) -> str:
    """The figure as a standalone SVG document (deterministic: same layout, same bytes); a
    ``Figure`` already drawn (``writers.views``) is written as it is."""
    return render_svg(lay if isinstance(lay, Figure) else figure(lay, frozenset(marks or ())))


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


def png(lay: Layout | Figure, marks: set[tuple[int, int]] | None = None,
        scale: float = 2.0) -> bytes:
    """The figure as PNG bytes (of a ``Figure`` as it is); raises ImportError (with the
    install hint) without Pillow."""
    try:
        import PIL  # noqa: F401
    except ImportError as exc:
        raise ImportError("PNG figures need Pillow: pip install 'ptxlayout[png]'") from exc
    fig = lay if isinstance(lay, Figure) else figure(lay, frozenset(marks or ()))
    return render_png(fig, scale)
