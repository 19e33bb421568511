"""The embedded catalog: the fragment chapter restated in the spec's pseudocode.

Each ``*.md`` file here is a document in the same form as the spec's Markdown rendering
(headings, operand blocks, fragment tables, fenced pseudocode), written in ptxlayout's own
words: the formulas are the spec's facts, the prose is ours, and table cells use the terse
form ``two .b32 registers of four .s8 / .u8 elements each``.  Where the spec shows a layout
only as a figure (sparse metadata, some sparse B operands), the catalog states it as formulas
in the grammar's metadata extension (docs/pseudocode.md, "Metadata layouts"); those formulas are
confirmed on the GPU (proofs/evidence).

``corrections.md`` holds the fixes of the spec's known errata, proven like the rest.  It is
read only on request (``ptxlayout prove --corrections``); each of its sections then replaces
the catalog section of the same number, so the run proves the chapter as it should read.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from ..text.blocks import Document
from ..text.read import read_path

CORRECTIONS = "corrections.md"

CATALOG_DIR = Path(__file__).resolve().parent


def paths(include_corrections: bool = True) -> list[Path]:
    out = sorted(p for p in CATALOG_DIR.glob("*.md"))
    if not include_corrections:
        out = [p for p in out if p.name != CORRECTIONS]
    return out


def errata() -> list[dict[str, object]]:
    """The spec's known errata in the catalog, each accepted with its reason."""
    import json
    data = json.loads((CATALOG_DIR / "errata.json").read_text(encoding="utf-8"))
    return list(data)


@lru_cache(maxsize=4)
def documents(include_corrections: bool = False) -> tuple[Document, ...]:
    docs = [read_path(p, name=f"catalog/{p.name}") for p in paths(include_corrections)]
    fixes = [d for d in docs if d.name == f"catalog/{CORRECTIONS}"]
    fixed = {s.number for d in fixes for s in d.sections if s.number}
    return tuple(d if d in fixes or not fixed else _without(d, fixed) for d in docs)


def _without(doc: Document, numbers: set[str]) -> Document:
    """The document without the sections numbered ``numbers`` (their lines included)."""
    starts = [s.title.span(0).line for s in doc.sections]
    gone = [(lo, hi) for s, lo, hi in zip(doc.sections, starts, [*starts[1:], 1 << 62])
            if s.number in numbers]
    return replace(doc, sections=tuple(s for s in doc.sections if s.number not in numbers),
                   looks=tuple((w, src) for w, src in doc.looks
                               if not any(lo <= src.span(0).line < hi for lo, hi in gone)))
