"""Issue 'figures and exports': the figures are read back (SVG through xml.etree, PNG through
Pillow) and checked against the layout's cells, for proved layouts, a deliberately broken
one and every catalog layout."""

from __future__ import annotations

import io
import itertools
import math
import sys
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from formal.api import find, model_of
from formal.cli import main
from formal.model.cells import cells_and_names
from formal.model.layout import Layout, Model
from formal.model.resolve import build
from formal.prove.driver import prove
from formal.text.read import read_text
from formal.writers import drawing, figures
from formal.writers.report import to_markdown

from .sections import COL, M8N8K4, ROW, a_section

NS = {"s": "http://www.w3.org/2000/svg"}


@lru_cache(maxsize=1)
def catalog() -> tuple[Layout, ...]:
    return model_of([]).layouts


def one(query: str) -> Layout:
    hits = find(list(catalog()), query)
    assert hits, query
    return hits[0]


def cells_of(svg: str | ET.Element) -> dict[tuple[int, int, int], ET.Element]:
    """(panel, row, col) -> the cell's <g>, of an SVG's text or its parsed root."""
    root = ET.fromstring(svg) if isinstance(svg, str) else svg
    out = {}
    for panel in root.iterfind("s:g[@class='panel']", NS):
        p = int(panel.get("data-panel", "0"))
        for g in panel.iterfind("s:g[@class='cell']", NS):
            out[(p, int(g.get("data-row", "-1")), int(g.get("data-col", "-1")))] = g
    return out


def texts(root: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{{{NS['s']}}}text") if t.get("class") == cls]


# Our own small section (the spec's form): the m16n8k16 .s8 A map with two mistakes --
# rows 9..16 instead of 8..15 for a4..a7 and (i & 0x1) instead of (i & 0x3).
BROKEN = a_section(row=ROW.replace("groupID + 8", "groupID + 9"),
                   col=COL.replace("(i & 0x3)", "(i & 0x1)"))


def broken_model() -> Model:
    return build([read_text(BROKEN, "broken.txt")], [])


# ---- palette -----------------------------------------------------------------------------------


def _lab(hexcolor: str) -> tuple[float, float, float]:
    def ch(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    r, g, b = (ch(v) for v in figures._rgb(hexcolor))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_palette_has_32_distinguishable_readable_colours() -> None:
    assert len(set(figures.PALETTE)) == 32
    closest = min(math.dist(_lab(a), _lab(b))
                  for a, b in itertools.combinations(figures.PALETTE, 2))
    assert closest >= 15
    for fill in figures.PALETTE:
        assert figures.contrast(fill, figures.text_color(fill)) >= 4.5, fill


# ---- a proved layout ---------------------------------------------------------------------------


def test_svg_of_a_proved_layout_reads_back() -> None:
    lay = one("catalog:mma.m16n8k16.A.u8-s8")
    text = drawing.svg(lay)
    root = ET.fromstring(text)
    title = root.find("s:title", NS)
    assert title is not None and title.text is not None
    for word in ("mma.m16n8k16", " A ", ".u8/.s8", "16 x 16"):
        assert word in title.text
    sub = texts(root, "subtitle")[0]
    assert "catalog:mma.m16n8k16.A.u8-s8" in sub and "source: catalog" in sub
    assert "dense-integer.md" in sub
    assert texts(root, "axis col") == [str(c) for c in range(16)]
    assert texts(root, "axis row") == [str(r) for r in range(16)]
    cells = cells_of(text)
    assert len(cells) == 256
    _names, table = cells_and_names(lay)
    for (_s, t, i), (r, c) in table.items():
        g = cells[(0, r, c)]
        assert g.get("data-state") == "ok"
        assert g.get("data-labels") == f"T{t}:a{i}"
        band = g.find("s:rect[@class='band']", NS)
        label = g.find("s:text[@class='label']", NS)
        assert band is not None and label is not None
        assert band.get("fill") == figures.PALETTE[t]
        assert label.text == f"T{t}:a{i}"
        assert label.get("fill") == figures.text_color(figures.PALETTE[t])
    assert not root.findall(".//s:rect[@class='collision']", NS)
    assert not root.findall(".//s:rect[@class='hole']", NS)
    assert texts(root, "summary") == ["each of the 256 cells is held exactly once"]
    # the spec's example: lane 13 holds a5 at row 11, col 5
    assert cells[(0, 11, 5)].get("data-labels") == "T13:a5"


def test_svg_is_deterministic() -> None:
    lay = one("catalog:mma.sp.m16n8k16.meta.f16-bf16")
    assert drawing.svg(lay) == drawing.svg(lay)


# ---- a broken layout ---------------------------------------------------------------------------


def test_svg_of_a_broken_layout_shows_collisions_holes_and_outside() -> None:
    lay = broken_model().layouts[0]
    text = drawing.svg(lay)
    root = ET.fromstring(text)
    cells = cells_of(text)
    _names, table = cells_and_names(lay)
    held: dict[tuple[int, int], list[str]] = {}
    outside = []
    for (_s, t, i), (r, c) in sorted(table.items()):
        if 0 <= r < 16 and 0 <= c < 16:
            held.setdefault((r, c), []).append(f"T{t}:a{i}")
        else:
            outside.append(f"T{t}:a{i} -> row {r}, col {c}")
    for r in range(16):
        for c in range(16):
            g = cells[(0, r, c)]
            want = held.get((r, c), [])
            assert g.get("data-labels") == "|".join(want)
            if not want:
                assert g.get("data-state") == "hole"
                assert g.find("s:rect[@class='hole']", NS) is not None
            elif len(want) > 1:
                assert g.get("data-state") == "collision"
                assert g.find("s:rect[@class='collision']", NS) is not None
                bands = g.findall("s:rect[@class='band']", NS)
                assert [b.get("fill") for b in bands] == \
                    [figures.PALETTE[int(x[1:].split(":")[0])] for x in want]
                assert [t.text for t in g.findall("s:text[@class='label']", NS)] == want
            else:
                assert g.get("data-state") == "ok"
    # T0 holds a0 and a2 on (0, 0); row 8 is held by nobody; lanes 28..31 fall off row 16
    assert cells[(0, 0, 0)].get("data-labels") == "T0:a0|T0:a2"
    assert all(cells[(0, 8, c)].get("data-state") == "hole" for c in range(16))
    listed = " ".join(texts(root, "outside"))
    assert len(outside) == 16
    for entry in outside:
        assert entry in listed
    summary = texts(root, "summary")[0]
    assert "120 cells held twice" in summary and "136 cells held by no lane" in summary
    assert "16 outside the tile" in summary


def test_ascii_of_a_broken_layout() -> None:
    text = figures.ascii_grid(broken_model().layouts[0], {(0, 2)})
    assert "!!T0:a0/T0:a2" in text
    assert "*.." in text  # the marked hole
    assert "outside the tile: T28:a4 -> row 16, col 0" in text


def test_a_hole_in_the_cases_is_listed() -> None:
    text = BROKEN.replace("for ai where i = {0,..,7}", "for ai where i < 7")
    lay = build([read_text(text, "gap.txt")], []).layouts[0]
    root = ET.fromstring(drawing.svg(lay))
    unmapped = " ".join(texts(root, "unmapped"))
    assert "T0:a7: no case of 'col' applies" in unmapped


# ---- sparse A, metadata, replicated layouts ----------------------------------------------------


def test_sparse_a_draws_chunks_with_their_lane_and_elements() -> None:
    lay = one("catalog:mma.sp.m16n8k16.A.f16-bf16")
    text = drawing.svg(lay)
    cells = cells_of(text)
    assert len(cells) == 16 * 4
    # lane 5: groupID 1, threadID_in_group 1 -> columns 4..7 of rows 1 (a0, a1) and 9 (a2, a3)
    assert cells[(0, 1, 1)].get("data-labels") == "T5:a0,a1"
    assert cells[(0, 9, 1)].get("data-labels") == "T5:a2,a3"
    assert {g.get("data-state") for g in cells.values()} == {"ok"}
    root = ET.fromstring(text)
    assert texts(root, "axis col") == ["0..3", "4..7", "8..11", "12..15"]
    # 8-bit: a lane's range of 8 columns is two chunks, two non-zeros each
    cells8 = cells_of(drawing.svg(one("catalog:mma.sp.m16n8k32.A.u8-s8")))
    assert cells8[(0, 0, 0)].get("data-labels") == "T0:a0,a1"
    assert cells8[(0, 0, 1)].get("data-labels") == "T0:a2,a3"
    # 4-bit: chunks of 8 columns, four non-zeros each
    cells4 = cells_of(drawing.svg(one("catalog:mma.sp.m16n8k64.A.u4-s4")))
    assert cells4[(0, 0, 0)].get("data-labels") == "T0:a0..a3"


def test_metadata_draws_one_panel_per_selector() -> None:
    lay = one("catalog:mma.sp.m16n8k16.meta.f16-bf16")
    text = drawing.svg(lay)
    root = ET.fromstring(text)
    panels = root.findall("s:g[@class='panel']", NS)
    assert len(panels) == 4
    assert [p.get("data-title") for p in panels][1].startswith("sparsity selector 1")
    cells = cells_of(text)
    # selector 0: lane 0 describes chunks 0..3 of row 0 in bits 3:0, 7:4, 11:8, 15:12
    assert [cells[(0, 0, c)].get("data-labels") for c in range(4)] == \
        ["T0[3:0]", "T0[7:4]", "T0[11:8]", "T0[15:12]"]
    assert cells[(0, 8, 0)].get("data-labels") == "T0[19:16]"
    # selector 1: lane 5 (threadID_in_group 1) describes row 1
    assert cells[(1, 1, 2)].get("data-labels") == "T5[11:8]"
    assert {g.get("data-state") for g in cells.values()} == {"ok"}


def test_replicated_layout_draws_one_panel_per_group() -> None:
    lay = build([read_text(M8N8K4, "m8.txt")], []).layouts[0]
    text = drawing.svg(lay)
    root = ET.fromstring(text)
    panels = root.findall("s:g[@class='panel']", NS)
    assert [p.get("data-title") for p in panels] == [
        f"quad-pair {g} (lanes {4 * g}-{4 * g + 3}, {16 + 4 * g}-{16 + 4 * g + 3})"
        for g in range(4)]
    cells = cells_of(text)
    assert cells[(1, 0, 2)].get("data-labels") == "T4:a2"
    assert cells[(3, 7, 3)].get("data-labels") == "T31:a3"
    assert {g.get("data-state") for g in cells.values()} == {"ok"}
    ascii_text = figures.ascii_grid(lay)
    assert ascii_text.count("quad-pair") == 4


# ---- every catalog layout ----------------------------------------------------------------------


def representatives(lays: list[Layout]) -> list[Layout]:
    """The first layout of each (instruction, operand, tile) in the catalog's order: every
    family, every operand of it and every tile shape it draws."""
    first: dict[tuple[Any, ...], Layout] = {}
    for lay in lays:
        first.setdefault((lay.instruction, lay.operand, tuple(lay.tile)), lay)
    return list(first.values())


@pytest.mark.slow
def test_every_catalog_layout_draws(catalog_run: Any) -> None:
    """Every layout at full scale; at a smaller slow-set scale (CI: 0.5) one layout of each
    instruction, operand and tile shape (``representatives``: about a third), which draws
    every family, operand and grid size the full run draws."""
    from .conftest import budget
    proof = catalog_run.proof  # the catalog's model (model_of([])) proven once a session
    assert {r.layout.id for r in proof.results} == {lay.id for lay in catalog()}
    ok = {r.layout.id for r in proof.results if r.ok}
    lays = list(catalog())
    drawn = lays if budget(len(lays)) >= len(lays) else representatives(lays)
    assert {x.id.split(".")[0] for x in drawn} == {x.id.split(".")[0] for x in lays}
    assert {(x.instruction, x.operand) for x in drawn} == \
        {(x.instruction, x.operand) for x in lays}
    for lay in drawn:
        text = drawing.svg(lay)
        root = ET.fromstring(text)
        assert root.get("data-layout") == lay.id
        cells = cells_of(root)
        assert cells, lay.id
        if lay.id in ok:
            assert {g.get("data-state") for g in cells.values()} == {"ok"}, lay.id
        ascii_text = figures.ascii_grid(lay)
        assert ascii_text.startswith(lay.id)
        tokens = ascii_text.split()
        if lay.id in ok:
            assert ".." not in tokens and not any(t.startswith("!!") for t in tokens), lay.id


# ---- PNG ---------------------------------------------------------------------------------------


def test_png_paints_the_lane_colours() -> None:
    pil = pytest.importorskip("PIL.Image")
    seen = set()
    for lay in (one("catalog:mma.m16n8k8.CD.f32@f16-bf16-tf32"), broken_model().layouts[0]):
        data = drawing.png(lay, scale=2)
        img = pil.open(io.BytesIO(data)).convert("RGB")
        root = ET.fromstring(drawing.svg(lay))
        assert img.size == (2 * int(root.get("width", "0")), 2 * int(root.get("height", "0")))
        for g in root.iterfind(".//s:g[@class='cell']", NS):
            band = g.find("s:rect[@class='band']", NS)
            x, y = float(g.findall("s:rect", NS)[0].get("x", "0")), \
                float(g.findall("s:rect", NS)[0].get("y", "0"))
            state = g.get("data-state", "")
            seen.add(state)
            if state == "ok":
                # a pixel just inside the top-left corner has the lane's colour
                assert band is not None
                want = figures._rgb(band.get("fill", ""))
                assert img.getpixel((int(2 * x + 6), int(2 * y + 4))) == want, \
                    (lay.id, g.get("data-labels"))
            elif state == "collision":
                assert img.getpixel((int(2 * x + 5), int(2 * y + 5))) == \
                    figures._rgb(figures.COLLISION)
            elif state == "hole":
                assert img.getpixel((int(2 * x + 12), int(2 * y + 12))) == \
                    figures._rgb(figures.HOLE_FILL)
    assert seen == {"ok", "collision", "hole"}


def test_png_without_pillow_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"ptxlayout\[png\]"):
        drawing.png(one("catalog:mma.m16n8k8.CD.f32@f16-bf16-tf32"))
    assert main(["draw", "mma.m16n8k8.CD.f32", "--png", str(tmp_path / "x.png")]) == 2
    assert "pip install 'ptxlayout[png]'" in capsys.readouterr().err


def test_draw_command_writes_every_kind(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a.svg"
    assert main(["draw", "mma.m16n8k16.A.s8", "--svg", str(out)]) == 0
    ET.fromstring(out.read_text(encoding="utf-8"))
    assert main(["draw", "mma.m16n8k16.A.s8", "--ascii"]) == 0
    assert "T13:a5" in capsys.readouterr().out
    if _has_pillow():
        png = tmp_path / "a.png"
        assert main(["draw", "mma.sp.m16n8k16.meta.f16", "--png", str(png)]) == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _has_pillow() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return True


# ---- the Markdown report -----------------------------------------------------------------------


def test_markdown_report_embeds_the_figure_of_a_refuted_layout(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_text(BROKEN, encoding="utf-8")
    out1, out2 = tmp_path / "r1.md", tmp_path / "r2.md"
    args = ["prove", str(path), "--format", "markdown", "--figures"]
    assert main([*args, "-o", str(out1)]) == 1
    assert main([*args, "-o", str(out2)]) == 1
    assert out1.read_bytes() == out2.read_bytes()
    md = out1.read_text(encoding="utf-8")
    assert md.count("<svg ") == 1  # one figure for the layout, at its first finding
    assert "!!T0:a0/T0:a2" in md  # the ASCII grid stays
    start = md.index("<svg ")
    end = md.index("</svg>") + len("</svg>")
    svg_text = md[start:end]
    assert "\n\n" not in svg_text  # one HTML block in CommonMark
    root = ET.fromstring(svg_text)
    states = [g.get("data-state") for g in root.iter(f"{{{NS['s']}}}g")
              if g.get("class") == "cell"]
    assert states.count("collision") == 120 and states.count("hole") == 136
    # the first finding (in-range) names row 16, outside; no cell is marked for it


def test_markdown_report_names_the_draw_command_without_figures(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_text(BROKEN, encoding="utf-8")
    out = tmp_path / "r.md"
    assert main(["prove", str(path), "--format", "markdown", "-o", str(out)]) == 1
    md = out.read_text(encoding="utf-8")
    assert "<svg " not in md
    assert md.count("Figure: `ptxlayout draw broken:mma.m16n8k16.A.u8-s8 --svg ") == 1
    assert md.count("!!T0:a0/T0:a2") >= 1  # the ASCII grid, once for the layout
    assert md.count("is shown above") == 2  # its other two map findings point back


def test_markdown_report_marks_the_counterexample_cell() -> None:
    model = broken_model()
    proof = prove(model)
    md = to_markdown(proof, {}, figures.ascii_for, drawing.svg_for)
    root = ET.fromstring(md[md.index("<svg "):md.index("</svg>") + 6])
    marked = [(g.get("data-row"), g.get("data-col")) for g in root.iter(f"{{{NS['s']}}}g")
              if g.get("data-marked")]
    assert marked == []  # the first finding's cell (row 16) is outside the tile
    surj = next(f for f in proof.findings if f.kind == "surjective")
    text = drawing.svg(model.layouts[0], figures.finding_marks(model.layouts[0], surj))
    marks = [g for g in ET.fromstring(text).iter(f"{{{NS['s']}}}g") if g.get("data-marked")]
    assert [(g.get("data-row"), g.get("data-col")) for g in marks] == [("0", "2")]
    assert marks[0].find("s:rect[@class='mark']", NS) is not None
