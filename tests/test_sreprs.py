"""SymPy's srepr texts kept by the expression tree (formal/model/sreprs.py) and the one kept
dictionary store they use (formal/base/cache.KeptFile): every catalog expression's text read
back equals SymPy's; a damaged file is ignored with a warning and written again, one of other
code replaced without a word; another expression is another key; ``--no-cache`` keeps
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from formal.base import cache
from formal.model import sreprs as S
from formal.model.algebra import LANE, BitAnd, I
from formal.model.resolve import catalog_model


def _expressions() -> list[Any]:
    out: list[Any] = []
    for lay in catalog_model(False).layouts:
        for f in lay.formulas + lay.helpers:
            for c in f.cases:
                out.append(c.value)
                if not c.otherwise:
                    out.append(c.cond)
        if lay.metadata is not None:
            out.append(lay.metadata.holder)
        if lay.groups is not None:
            out.append(lay.groups[2])
    return list(dict.fromkeys(out))


def _path(where: Path) -> Path:
    return where / S.STORE.folder / S.STORE.name


def test_every_catalog_text_read_back_is_sympys(kept_cache_dir: Path) -> None:
    exprs = _expressions()
    assert len(exprs) > 80
    with S.kept():
        cold = [S.srepr_of(e) for e in exprs]
    kept = json.loads(_path(kept_cache_dir).read_text())["texts"]
    assert len(kept) == len(exprs)
    assert cold == [sp.srepr(e) for e in exprs]
    store = cache.Kept.of(S.STORE)
    assert store is not None and store.values == kept
    with S.kept():
        warm = [S.srepr_of(e) for e in exprs]
        assert S._OPEN[-1].added == 0  # every text was read back, none written again
    assert warm == cold


def test_the_tree_names_the_expression() -> None:
    a, b = LANE + 1, LANE + 2
    assert S.tree_key(a) != S.tree_key(b)
    assert S.tree_key(sp.Symbol("lane")) != S.tree_key(LANE)  # the assumptions too
    assert S.tree_key(BitAnd(LANE, 3)) != S.tree_key(sp.Mod(LANE, 3))
    assert S.tree_key(sp.floor(LANE / 4) + 8) == S.tree_key(8 + sp.floor(LANE / 4))
    assert S.tree(I) == sp.srepr(I)
    assert S.tree_key(3) is None  # not a SymPy value: SymPy's text, not kept


def _kept_lane_plus_one(cache_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The file a run that keeps ``lane + 1``'s text writes, and its JSON."""
    with S.kept():
        S.srepr_of(LANE + 1)
    path = _path(cache_dir)
    return path, json.loads(path.read_text())


def test_a_damaged_file_is_ignored_and_written_again(
        kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, doc = _kept_lane_plus_one(kept_cache_dir)
    key = next(iter(doc["texts"]))
    doc["texts"][key] = "Integer(7)"  # a planted text, the digest left as it was
    path.write_text(json.dumps(doc))
    with S.kept():
        assert S.srepr_of(LANE + 1) == sp.srepr(LANE + 1)
    assert "not an entry of this version" in capsys.readouterr().err
    assert json.loads(path.read_text())["texts"][key] == sp.srepr(LANE + 1)
    path.write_text("{not json")
    with S.kept():
        assert S.srepr_of(LANE + 1) == sp.srepr(LANE + 1)
    assert "not valid JSON" in capsys.readouterr().err
    assert S.STORE.valid(json.loads(path.read_text())) == {key: sp.srepr(LANE + 1)}


def test_a_file_of_other_code_is_replaced_silently(
        kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, doc = _kept_lane_plus_one(kept_cache_dir)
    doc["code"] = "0" * 64
    path.write_text(json.dumps(doc))
    store = cache.Kept.of(S.STORE)
    assert store is not None and store.values == {}
    assert capsys.readouterr().err == ""


def test_no_cache_keeps_nothing(kept_cache_dir: Path) -> None:
    with S.kept(False):
        assert S.srepr_of(LANE + 1) == sp.srepr(LANE + 1)
    cache.disable()
    try:
        with S.kept():
            assert S.srepr_of(LANE + 2) == sp.srepr(LANE + 2)
    finally:
        cache.enable()
    assert not _path(kept_cache_dir).exists()


def test_the_store_keeps_the_newest_half_past_its_limit(kept_cache_dir: Path) -> None:
    spec = cache.KeptFile("toy", "toy.json", "ptxlayout-toy/1", "values", lambda: "c",
                          lambda v: isinstance(v, int), limit=4)
    kept = cache.Kept.of(spec)
    assert kept is not None and kept.values == {}
    for n in range(5):
        kept.put(f"k{n}", n)
    kept.put("k4", 4)  # the same value: nothing added
    assert kept.added == 5
    kept.close()
    assert cache.Kept.of(spec).values == {"k3": 3, "k4": 4}
    doc = json.loads((kept_cache_dir / "toy" / "toy.json").read_text())
    doc["values"]["k3"] = "three"
    doc["digest"] = spec.digest(doc["values"])
    assert spec.valid(doc) is None  # a value that does not check refuses the file
