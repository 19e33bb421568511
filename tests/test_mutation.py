"""Mutation tests: every breaking mutant of the seeds is refuted, every equivalent rewrite
still proves.  CI runs an evenly spaced sample; ``python bench/mutants.py`` runs them all and
prints the kill rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import mutants


@pytest.mark.parametrize("seed,limit", [("000", 45), ("002", 25), ("003", 45), ("004", 25)])
def test_breaking_mutants_are_killed(seeds: dict[str, Path], seed: str, limit: int) -> None:
    outcomes = mutants.run(seeds[seed], limit=limit, rewrites=False)
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
    from formal.prove import Options
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
