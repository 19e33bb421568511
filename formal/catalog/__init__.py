"""The embedded catalog: the fragment chapter restated in the spec's pseudocode.

Each ``*.md`` file here is a document in the same form as the spec's Markdown rendering
(headings, operand blocks, fragment tables, fenced pseudocode), written in ptxlayout's own
words: the formulas are the spec's facts, the prose is ours, and table cells use the terse
form ``two .b32 registers of four .s8 / .u8 elements each``.  Where the spec shows a layout
only as a figure (sparse metadata, some sparse B operands), the catalog states it as formulas
in the grammar's metadata extension (README, "Metadata layouts"); those formulas are
confirmed on the GPU (proofs/evidence).

``corrections.md`` holds the fixes of the spec's known errata, proven like the rest.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..ingest import Document, read_path

CATALOG_DIR = Path(__file__).resolve().parent


def paths(include_corrections: bool = True) -> list[Path]:
    out = sorted(p for p in CATALOG_DIR.glob("*.md"))
    if not include_corrections:
        out = [p for p in out if p.name != "corrections.md"]
    return out


@lru_cache(maxsize=4)
def documents(include_corrections: bool = False) -> tuple[Document, ...]:
    return tuple(read_path(p, name=f"catalog/{p.name}") for p in paths(include_corrections))
