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


@pytest.mark.parametrize("regexp, starts", [
    ("(?i:canonical layouts)", (("canonical layouts", True),)),
    ("(?i:(?:m\\/n|mn|K)-\\s*major)", (("m/n", True), ("mn", True), ("k", True))),
    ("(?<![A-Za-z0-9_])(?:tcgen05|wgmma)(?![A-Za-z0-9])", (("tcgen05", False), ("wgmma", False))),
    ("Encoding of (?:LBO|SBO)", (("Encoding of ", False),)),
    ("(?i:exact layout)(?=\\s*:)", (("exact layout", True),)),
    ("(?i)Swizzle", (("swizzle", True),)),
    ("(?i:a(?-i:B)c)", (("a", True),)),          # the run ends where the case rule changes
    ("(?i:ab\u212ac)", (("ab", True),)),         # ... and before a letter that is not ASCII
    ("\u212a-major", (("\u212a-major", False),)),
    ("^(?:for|if)\\b", (("for", False), ("if", False))),
    ("[0-9]+", None), ("(?:a|b*)c", None), ("(?:a?)x", None), ("(?a:x)", None),
    ("(?i:\u212a)", None),
])
def test_literal_starts_are_read_off_the_patterns_parse(regexp: str, starts: object) -> None:
    from formal.text.terminals import literal_starts
    assert literal_starts(regexp) == starts


def _cased(text: str, rng: random.Random) -> str:
    return "".join(ch.upper() if rng.random() < 0.5 else ch for ch in text)


def test_the_gated_search_answers_as_every_pattern_searched(seeds: dict[str, Path]) -> None:
    """A pattern is skipped in a line holding none of its literal starts: on every line of the
    corpus, the same lines with their letters' cases changed, and lines with the letters
    that ignoring case matches beyond ASCII (the Kelvin sign for k, the long s for s), the
    test answers exactly as searching every pattern of the terminals does."""
    import re

    prefixes = ("TABLE_", "LABEL_", "MAJOR_", "FAMILY")
    chosen = [t for t in _line_parser().terminals if t.name.startswith(prefixes)]
    searches = [re.compile(t.pattern.to_regexp()).search for t in chosen]
    rng = random.Random(7)
    lines = _lines(seeds)
    lines += [_cased(t, rng) for t in lines[::3]]
    lines += ["\u212a-major", "K-major", "\u017fwizzle atom layout", "swizzle atom layout",
              "the \u017fwizzle", "mn -  MAJOR here", "Encoding of SBO in descriptor",
              "encoding of SBO in descriptor", "x K", "KM", "wgmma", "wgmmax", "é wgmma"]
    near = terminals_search(_line_parser(), prefixes)
    found = 0
    for text in lines:
        want = any(search(text) is not None for search in searches)
        assert near(text) == want, text
        found += want
    assert found > 100
    assert near("\u212a-major") and near("\u017fwizzle atom layout")
    assert not near("K-major".replace("K", "Q"))
