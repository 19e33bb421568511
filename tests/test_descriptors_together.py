"""The shared-memory descriptor queries asked of Z3 as disjunctions
(``prove.smem_descriptor.DescriptorGroup``): with Z3's answers cold, the first query not in
the proof cache asks the catalog's 48 as two checks, each answer kept under its own query's key
and taken by ``descriptor_core``; a descriptor the enumeration refutes is left out of every
group and refuted at its coordinate as before; with the answers kept, nothing is stated,
enumerated or asked for the group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import z3

from formal.catalog import CATALOG_DIR
from formal.model.smem import descriptor_of, descriptor_values, instances, pack_descriptor
from formal.parse.smem import read_smem
from formal.prove import cache as pc
from formal.prove import smem_descriptor as SD
from formal.prove.smem_descriptor import DescriptorGroup, descriptor_core


def _catalog() -> list:  # type: ignore[type-arg]
    text = read_smem((CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8"),
                     "layouts.md")
    return [i for f in ("wgmma", "tcgen05") for i in instances(f, text.canonical)]


def _swapped(inst: object) -> int:
    """``inst``'s descriptor with its LBO and SBO written into each other's field."""
    vals = descriptor_values(inst)
    lbo = next(k for k in vals if k.startswith("leading dimension byte"))
    sbo = "stride dimension byte offset"
    return pack_descriptor(inst.family, {**vals, lbo: vals[sbo], sbo: vals[lbo]})  # type: ignore[attr-defined]


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    asked: list[int] = []
    real_check = z3.Solver.check
    monkeypatch.setattr(z3.Solver, "check",
                        lambda self, *a: asked.append(1) or real_check(self, *a))
    return asked


def test_the_catalogs_descriptors_are_two_checks_and_kept_one_a_query(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    insts = _catalog()
    assert len(insts) == 48
    asked = _count_checks(monkeypatch)
    pairs = [(i, descriptor_of(i)) for i in insts]
    together = DescriptorGroup(pairs)
    assert asked == [] and together.unsat is None  # nothing asked before a query misses
    cores = [descriptor_core(i, d, together=together) for i, d in pairs]
    assert len(asked) == 2  # the group's two disjunctions, nothing alone
    assert together.unsat is not None and len(together.unsat) == 48
    assert all(c.status == "proved" and c.method == "z3+enumeration" for c in cores)
    pc.flush()
    [batch] = (tmp_path / "c" / "proofs").glob("batch-*.json")
    kept = json.loads(batch.read_text())["entries"].values()
    assert sum(e["obligation"] == "descriptor" and e["z3_answer"] == "unsat"
               for e in kept) == 48
    asked.clear()
    monkeypatch.setattr(SD.DescriptorGroup, "_asked", lambda self: pytest.fail("asked"))
    monkeypatch.setattr(SD, "_misread", lambda *a: pytest.fail("a query was stated"))
    monkeypatch.setattr(pc, "_PENDING", {})
    again = DescriptorGroup(pairs)  # every answer kept: the group neither states nor asks
    assert [descriptor_core(i, d, together=again) for i, d in pairs] == cores
    assert asked == [] and again.unsat is None


def test_a_descriptor_the_enumeration_refutes_is_asked_of_no_group(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """LBO and SBO swapped in the first of 16 pairs: the group holds the other 15 (their
    unsat said), the swapped one is refuted at its coordinate with both addresses."""
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")  # no cache: --no-cache's answers
    insts = _catalog()
    bad = insts[0]
    swapped = _swapped(bad)
    pairs = [(bad, swapped), *[(i, descriptor_of(i)) for i in insts[1:16]]]
    together = DescriptorGroup(pairs)
    cores = [descriptor_core(i, d, together=together) for i, d in pairs]
    assert together.unsat is not None and len(together.unsat) == 15
    core = cores[0]
    assert core.status == "refuted" and core == descriptor_core(bad, swapped)
    assert core.cex["layout_byte"] == bad.layout.address((core.cex["mn"], core.cex["k"])) \
        != core.cex["descriptor_byte"]
    assert all(c.status == "proved" for c in cores[1:])


def test_every_familys_descriptors_are_one_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prove_smem`` of the catalog with both families hands their 48 descriptors to one
    ``DescriptorGroup`` (two disjunctions of 16 terms, not two a family), wgmma's first,
    and proves each as before; with no catalog family, the group is empty."""
    from formal.prove import smem as S
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    groups: list[list[str]] = []
    real = S.DescriptorGroup

    def group(pairs: list) -> DescriptorGroup:  # type: ignore[type-arg]
        groups.append([i.id for i, _d in pairs])
        return real(pairs)
    monkeypatch.setattr(S, "DescriptorGroup", group)
    text = read_smem((CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8"),
                     "layouts.md")
    got = S.prove_smem(text, catalog_families=("wgmma", "tcgen05"))
    assert groups == [[i.id for i in _catalog()]] and len(groups[0]) == 48
    assert groups[0][0].startswith("wgmma.") and groups[0][-1].startswith("tcgen05.")
    desc = [v.status for r in got.results for v in r.verdicts if v.name == "descriptor"]
    assert desc == ["proved"] * 48
    groups.clear()
    S.prove_smem(text)
    assert groups == [[]]


def test_each_descriptor_query_is_the_very_term_z3s_operators_make() -> None:
    """``_misread`` states the query through ``_Bits`` (one C-API call a term): for each of
    the catalog's 48 (instance, descriptor) pairs, and for each instance with its LBO and SBO
    swapped, the very term (``eq``) the same rules make on z3's own terms with ``z3.UDiv`` and
    ``z3.URem``; and ``_Bits`` operators with a number on either side are z3's."""
    from formal.model.smem import DescriptorRead, layout_bit_address
    from formal.prove.smem_descriptor import _Bits, _misread, read_extent
    mn, k = z3.BitVecs("mn k", 32)
    for inst in _catalog():
        vals = descriptor_values(inst)
        lbo = next(x for x in vals if x.startswith("leading dimension byte"))
        sbo = "stride dimension byte offset"
        for d in (descriptor_of(inst),
                  pack_descriptor(inst.family, {**vals, lbo: vals[sbo], sbo: vals[lbo]})):
            read = DescriptorRead.of(inst.family, d)
            rows, cols = read_extent(inst)
            want = z3.And(z3.ULT(mn, rows), z3.ULT(k, cols),
                          read.bit_address(inst.major, inst.bits, mn, k, z3.UDiv, z3.URem)
                          != layout_bit_address(inst.layout, mn, k, z3.UDiv, z3.URem))
            assert _misread(inst, read, rows, cols).eq(want), inst.id
    x = _Bits(mn)
    for got, want in (((x + 3).term, mn + 3), ((3 + x).term, 3 + mn), ((x * 8).term, mn * 8),
                      ((8 * x).term, 8 * mn), ((x ^ x).term, mn ^ mn),
                      ((x & 12).term, mn & 12), ((x >> 2).term, mn >> 2)):
        assert got.eq(want), (got, want)
    assert not (x + 3).term.eq(3 + mn)


def test_queries_that_are_one_term_are_one_member(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """wgmma's and tcgen05's descriptor of a layout often read alike: their queries are one
    Z3 term (``eq``), one member of a group, its answer each one's.  The catalog's 48 queries
    are 32 terms: two disjunctions of 16, and every one of the 48 then proved."""
    from formal.model.smem import DescriptorRead
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    insts = _catalog()
    terms = []
    for i in insts:
        read = DescriptorRead.of(i.family, descriptor_of(i))
        terms.append(SD._misread(i, read, *SD.read_extent(i)))
    distinct: list[z3.ExprRef] = []
    for t in terms:
        if not any(t.eq(u) for u in distinct):
            distinct.append(t)
    assert len(distinct) == 32
    given: list[int] = []
    real = SD.unsat_together
    monkeypatch.setattr(SD, "unsat_together",
                        lambda name, todo, *a, **k: given.append(len(todo)) or real(name, todo,
                                                                                    *a, **k))
    asked = _count_checks(monkeypatch)
    pairs = [(i, descriptor_of(i)) for i in insts]
    together = DescriptorGroup(pairs)
    assert all(descriptor_core(i, d, together=together).status == "proved" for i, d in pairs)
    assert given == [32] and len(asked) == 2


def test_a_group_said_unsat_to_everything_cannot_hide_a_misread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A group is asked only where the enumeration found no misread: planted as *unsat* to
    whatever it holds (and holding the swapped descriptor's key besides), the swapped
    descriptor is still refuted by the enumeration, the rest proved."""
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    insts = _catalog()[:8]
    pairs = [(insts[0], _swapped(insts[0])), *[(i, descriptor_of(i)) for i in insts[1:]]]
    together = DescriptorGroup(pairs)
    every = {pc.query_key(SD._descriptor_query(i, SD.DescriptorRead.of(i.family, d),
                                               *SD.read_extent(i)), "descriptor")
             for i, d in pairs}
    monkeypatch.setattr(SD.DescriptorGroup, "_asked", lambda self: set(every))
    cores = [descriptor_core(i, d, together=together) for i, d in pairs]
    assert cores[0].status == "refuted" and cores[0].method == "enumeration"
    assert all(c.status == "proved" for c in cores[1:])


def test_each_pair_is_enumerated_once_a_group_with_the_same_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The group's query and each pair's ``descriptor_core`` read one enumeration of the
    pair (``DescriptorGroup.first_misread``): the same first misread as enumerating afresh,
    a refuted descriptor's coordinate included, and each pair enumerated once."""
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    insts = _catalog()
    real = SD._first_misread
    fresh = {}
    for i in insts[:6]:
        for d in (descriptor_of(i), _swapped(i)):
            read = SD.DescriptorRead.of(i.family, d)
            fresh[(id(i), d)] = real(read, i, *SD.read_extent(i))
    assert any(v is not None for v in fresh.values())  # a swapped one misreads somewhere
    calls: list[object] = []
    monkeypatch.setattr(SD, "_first_misread",
                        lambda read, inst, r, c: calls.append(inst) or real(read, inst, r, c))
    pairs = [(i, d) for i in insts[:6] for d in (descriptor_of(i), _swapped(i))]
    together = DescriptorGroup(pairs)
    for i, d in pairs:
        read = SD.DescriptorRead.of(i.family, d)
        assert together.first_misread(read, i, *SD.read_extent(i)) == fresh[(id(i), d)]
        descriptor_core(i, d, together=together)
    assert len(calls) == len({(id(i), d) for i, d in pairs})  # once each, group query included
    pc.flush()


def test_a_term_two_pairs_state_is_made_once(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog's 48 descriptor queries state 32 terms (wgmma's and tcgen05's descriptor of
    a layout read alike): the group makes each term once, and each made term is the one Z3
    hands back for every pair that states it (the same members, the same answers)."""
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    insts = _catalog()
    pairs = [(i, descriptor_of(i)) for i in insts]
    alive, ids = [], set()
    for i, d in pairs:  # every term made afresh (kept alive: Z3 reuses a freed term's id)
        read = SD.DescriptorRead.of(i.family, d)
        alive.append(SD._misread(i, read, *SD.read_extent(i)))
        ids.add(alive[-1].get_id())
    assert len(ids) == 32
    real = SD._misread
    made: list[object] = []
    monkeypatch.setattr(SD, "_misread", lambda *a: made.append(a) or real(*a))
    together = DescriptorGroup(pairs)
    unsat = together._asked()
    assert len(made) == 32 and len(unsat) == 48
    assert unsat == {SD.query_key(SD._descriptor_query(
        i, SD.DescriptorRead.of(i.family, d), *SD.read_extent(i)), "descriptor") for i, d in pairs}
