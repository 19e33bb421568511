"""formal/text/terminals.py: a line none of whose columns matches a set of a grammar's terminals
holds no token of them (the readers skip Lark on it), checked against Lark's own tokens."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from formal import catalog
from formal.parse.smem import _blank_markup, _line_facts, _line_parser, _may_open
from formal.text.terminals import terminals_search
from tests import smem_sections

ROOT = Path(__file__).resolve().parents[1]


def filler_section(rng: random.Random, number: int) -> str:
    """bench/fresh.py's generated spec-like section (the big documents' prose)."""
    fresh = sys.modules.get("bench_fresh")
    if fresh is None:
        spec = importlib.util.spec_from_file_location("bench_fresh", ROOT / "bench" / "fresh.py")
        assert spec is not None and spec.loader is not None
        fresh = sys.modules["bench_fresh"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
    return fresh.filler_section(rng, number)  # type: ignore[no-any-return]


def _lines(seeds: dict[str, Path]) -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in seeds.values()]
    texts += [p.read_text(encoding="utf-8") for p in sorted(catalog.CATALOG_DIR.rglob("*.md"))]
    texts += [v for v in vars(smem_sections).values() if isinstance(v, str)]
    rng = random.Random(3)
    texts += [filler_section(rng, n) for n in range(50)]
    return sorted({_blank_markup(raw) for t in texts for raw in t.splitlines()})


def test_a_line_the_search_passes_has_no_such_token(seeds: dict[str, Path]) -> None:
    """For every line of the seeds, the catalog, the test sections and generated filler: where
    the search finds none of the terminals, Lark's reading of the line holds none of the facts
    they make (a table, a label, a majorness, a family)."""
    lines = _lines(seeds)
    assert len(lines) > 1500
    skipped = 0
    for text in lines:
        if _may_open()(text):
            continue
        skipped += 1
        facts = _line_facts(text)
        assert not (facts.tables or facts.label or facts.majors or facts.families), text
    assert skipped > len(lines) // 2  # the prose is skipped


def test_the_search_finds_what_opens_a_table() -> None:
    near = _may_open()
    assert near("| 64B Swizzling Mode | M/N | 4x8 |")
    assert near("9.7.15.5.1.2.1.3. Canonical Layouts")
    assert near("* K-Major, 128B swizzling and bf16 type:")
    assert near("[Figure 188](#tcgen05-k-no-swizzle-tf32)")
    assert not near("the destination register of the warp, and its lane")
    assert not near("9.7.3.4. Instructions: ld")  # a heading alone closes, opens nothing


def test_a_name_no_terminal_has_is_refused() -> None:
    with pytest.raises(ValueError, match="TABLEAU_"):
        terminals_search(_line_parser(), ("TABLE_", "TABLEAU_"))
