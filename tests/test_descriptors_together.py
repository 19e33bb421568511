"""The shared-memory descriptor queries asked of Z3 as disjunctions
(``prove.smem_descriptor.descriptors_together``): with Z3's answers cold, the catalog's 48
queries are a handful of checks, each answer kept under its own query's key and taken by
``descriptor_core``; a descriptor the enumeration refutes is left out of every group and
refuted at its coordinate as before; with the answers kept, nothing is asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import z3

from formal.catalog import CATALOG_DIR
from formal.model.smem import descriptor_of, descriptor_values, instances, pack_descriptor
from formal.parse.smem import read_smem
from formal.prove import cache as pc
from formal.prove.smem_descriptor import descriptor_core, descriptors_together


def _catalog() -> list:  # type: ignore[type-arg]
    text = read_smem((CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8"),
                     "layouts.md")
    return [i for f in ("wgmma", "tcgen05") for i in instances(f, text.canonical)]


def test_the_catalogs_descriptors_are_a_few_checks_and_kept_one_a_query(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    monkeypatch.setattr(pc, "_TOLD", set())
    insts = _catalog()
    assert len(insts) == 48
    asked: list[int] = []
    real_check = z3.Solver.check
    monkeypatch.setattr(z3.Solver, "check",
                        lambda self, *a: asked.append(1) or real_check(self, *a))
    pairs = [(i, descriptor_of(i)) for i in insts]
    descriptors_together(pairs)
    assert 0 < len(asked) <= 48 // 16 + 2  # groups of 16 (a few widths of the tile)
    assert len(pc._TOLD) == 48
    cores = [descriptor_core(i, d) for i, d in pairs]
    assert len(asked) <= 48 // 16 + 2  # descriptor_core asked Z3 nothing more
    assert all(c.status == "proved" and c.method == "z3+enumeration" for c in cores)
    assert pc._TOLD == set()  # each told answer taken once
    pc.flush()
    [batch] = (tmp_path / "c" / "proofs").glob("batch-*.json")
    kept = json.loads(batch.read_text())["entries"].values()
    assert sum(e["obligation"] == "descriptor" and e["z3_answer"] == "unsat"
               for e in kept) == 48
    asked.clear()
    descriptors_together(pairs)  # every answer known: nothing asked, nothing told
    assert asked == [] and pc._TOLD == set()


def test_a_descriptor_the_enumeration_refutes_is_asked_of_no_group(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")  # no cache: --no-cache's answers
    monkeypatch.setattr(pc, "_TOLD", set())
    insts = _catalog()
    bad = insts[0]
    vals = descriptor_values(bad)
    lbo = next(k for k in vals if k.startswith("leading dimension byte"))
    sbo = "stride dimension byte offset"
    swapped = pack_descriptor(bad.family, {**vals, lbo: vals[sbo], sbo: vals[lbo]})
    pairs = [(bad, swapped), *[(i, descriptor_of(i)) for i in insts[1:16]]]
    descriptors_together(pairs)
    assert len(pc._TOLD) == 15  # the swapped one is not among them
    core = descriptor_core(bad, swapped)
    assert core.status == "refuted"
    assert core.cex["layout_byte"] == bad.layout.address((core.cex["mn"], core.cex["k"])) \
        != core.cex["descriptor_byte"]


def test_every_familys_descriptors_are_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prove_smem`` of the catalog with both families hands their 48 descriptors to one
    ``descriptors_together`` (three groups of at most 16, not two a family), wgmma's first,
    and proves each as before; with no catalog family, none is called."""
    from formal.prove import smem as S
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", "")
    monkeypatch.setattr(pc, "_TOLD", set())
    calls: list[list[str]] = []
    real = S.descriptors_together
    monkeypatch.setattr(S, "descriptors_together",
                        lambda pairs: calls.append([i.id for i, _d in pairs]) or real(pairs))
    text = read_smem((CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8"),
                     "layouts.md")
    got = S.prove_smem(text, catalog_families=("wgmma", "tcgen05"))
    assert calls == [[i.id for i in _catalog()]] and len(calls[0]) == 48
    assert calls[0][0].startswith("wgmma.") and calls[0][-1].startswith("tcgen05.")
    desc = [v.status for r in got.results for v in r.verdicts if v.name == "descriptor"]
    assert desc == ["proved"] * 48
    calls.clear()
    S.prove_smem(text)
    assert calls == []


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
    Z3 term (``eq``), asked once in a group and told to each.  The catalog's 48 queries are
    32 terms: two groups of at most 16, every one of the 48 told and then proved."""
    from formal.model.smem import DescriptorRead
    from formal.prove import smem_descriptor as SD
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(pc, "_PENDING", {})
    monkeypatch.setattr(pc, "_TOLD", set())
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
    asked: list[int] = []
    real_check = z3.Solver.check
    monkeypatch.setattr(z3.Solver, "check",
                        lambda self, *a: asked.append(1) or real_check(self, *a))
    pairs = [(i, descriptor_of(i)) for i in insts]
    descriptors_together(pairs)
    assert given == [32] and len(asked) == 2 and len(pc._TOLD) == 48
    assert all(descriptor_core(i, d).status == "proved" for i, d in pairs)
    assert len(asked) == 2 and pc._TOLD == set()
