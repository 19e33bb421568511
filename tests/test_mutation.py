"""Mutation tests: every breaking mutant of the seeds is refuted, every equivalent rewrite
still proves.  CI runs an evenly spaced sample; ``python bench/mutants.py`` runs them all and
prints the kill rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import mutants
from .conftest import budget

pytestmark = pytest.mark.slow  # the sample CI runs; bench/mutants.py runs them all


@pytest.mark.parametrize("seed,limit", [("000", 45), ("002", 25), ("003", 45), ("004", 25)])
def test_breaking_mutants_are_killed(seeds: dict[str, Path], seed: str, limit: int) -> None:
    limit = budget(limit)
    outcomes = mutants.run(seeds[seed], limit=limit, rewrites=False)
    assert not [o for o in outcomes if o.kind == "internal"]
    breaking = [o for o in outcomes if o.kind == "breaking"]
    assert len(breaking) >= limit // 2
    survivors = [(o.mutant.line, o.mutant.operator, o.mutant.new.strip()) for o in breaking
                 if not o.killed]
    assert not survivors


@pytest.mark.parametrize("seed", ["000", "003"])
def test_equivalent_rewrites_still_prove(seeds: dict[str, Path], seed: str) -> None:
    text = seeds[seed].read_text(encoding="utf-8")
    rewrites = list(mutants.equivalent_rewrites(text))
    assert len(rewrites) >= 10
    from formal.prove.verdicts import Options
    base = mutants.baseline(text, seeds[seed].name, Options())
    for m in rewrites:
        o = mutants.classify(text, seeds[seed].name, m, base, Options())  # type: ignore[arg-type]
        assert o.kind == "equivalent" and not o.killed, (m.line, m.new.strip(), o.detail)


def test_the_operators_produce_the_expected_mutants(seeds: dict[str, Path]) -> None:
    text = seeds["000"].read_text(encoding="utf-8")
    muts = list(mutants.breaking_candidates(text))
    ops = {m.operator for m in muts}
    assert {"constant+1", "constant-1", "operator+-", "operator&|", "compare<", "swap-name",
            "register-count", "element-list-drop", "element-list-duplicate"} <= ops
    line27 = [m for m in muts if m.line == 27 and m.operator == "constant+1"]
    assert any("(i & 0x4)" in m.new for m in line27)


SPARSE_MUTANTS = [
    # (line in seed 003, old text, new text, the obligation that must refute it)
    (29, "lastcol = firstcol + 3", "lastcol = firstcol + 4", "sparse-chunks"),  # chunk width
    (29, "lastcol = firstcol + 3", "lastcol = firstcol + 1", "sparse-chunks"),
    (28, "firstcol = threadID_in_group * 4", "firstcol = threadID_in_group * 4 + 2",
     "sparse-chunks"),                                                           # misaligned
    (54, "(threadID_in_group * 4) + 16", "(threadID_in_group * 4) + 12", "injective"),
    (84, "row = groupID for a0 and a2", "row = groupID for a0 and a1", "cases"),  # a1 and a3
    (85, "groupID + 8 for a1 and a3", "groupID + 8 for a2 and a3", "cases"),
    (89, "for a0 and a1", "for a0 and a2", "cases"),
    (149, "firstcol = threadID_in_group * 8", "firstcol = threadID_in_group * 4",
     "injective"),                                                     # lanes' chunks overlap
]


@pytest.mark.parametrize("line,old,new,kind", SPARSE_MUTANTS)
def test_sparse_text_mutants_are_refuted(seeds: dict[str, Path], line: int, old: str,
                                         new: str, kind: str) -> None:
    from formal.api import analyze
    text = seeds["003"].read_text(encoding="utf-8").split("\n")
    assert old in text[line - 1], text[line - 1]
    text[line - 1] = text[line - 1].replace(old, new)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "003.txt"
        p.write_text("\n".join(text), encoding="utf-8")
        run = analyze([p])
    errors = [f for f in run.proof.findings if f.fails]
    assert any(f.kind == kind for f in errors), [(f.span.line, f.kind, f.message)
                                                for f in errors]
    hit = next(f for f in errors if f.kind == kind)
    assert hit.counterexample is not None
    assert abs(hit.span.line - line) <= 6  # at the mutated block


def test_ordered_metadata_encodings() -> None:
    from dataclasses import replace

    from formal.base.variants import SPARSITY
    from formal.prove.sparse import ordered_encodings
    for t in ("f16", "bf16", "s8", "u8", "e4m3", "tf32", "s4", "u4", "e2m1"):
        assert ordered_encodings(SPARSITY[t]) == "", t
    broken = replace(SPARSITY["s8"], invalid_nibbles=(0b1000,))  # would forbid (0, 2)
    assert "(0, 2)" in ordered_encodings(broken)
    assert "meaningful" in ordered_encodings(replace(SPARSITY["tf32"],
                                                     meaningful_fields=(0b0100,)))
