"""Map hashes kept by their table's digest (formal/prove/kept_hashes.py): every catalog
layout's hash, and each wgmma accumulator's at every N, is the one its rows give, whether
computed or read back; a kept entry is what a run reads (a planted one is believed, which is
why its key holds the code and the arrays); a damaged file is ignored with a warning and
written again, one of other code replaced without a word; ``--no-cache`` keeps nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from formal.base import cache
from formal.base.hashes import cells_at, row_texts
from formal.model.cells import cell_rows, map_hash, table_digest
from formal.model.resolve import catalog_model
from formal.prove import kept_hashes as K
from formal.prove.evidence import Evidence

ROOT = Path(__file__).resolve().parents[1]


def _hashes(kept: K.KeptHashes | None, layouts: Any) -> dict[str, Any]:
    ev = Evidence()
    ev.keep_hashes(kept)
    out = {}
    for lay in layouts:
        own = ev.table_of(lay)[2]
        out[lay.id] = (own, {n: ev.hash_at(lay, n) for n in lay.n_values})
    if kept is not None:
        kept.close()
    return out


def test_every_catalog_hash_is_its_rows_computed_or_kept(kept_cache_dir: Path) -> None:
    layouts = catalog_model(False).layouts
    cold = _hashes(K.KeptHashes.open(), layouts)
    assert json.loads((kept_cache_dir / K.FOLDER / K.NAME).read_text())["hashes"]
    warm_kept = K.KeptHashes.open()
    assert warm_kept is not None and len(warm_kept.hashes) > 250
    warm = _hashes(warm_kept, layouts)
    assert warm_kept.added == 0  # every hash was read back, none written again
    assert warm == cold
    ledger = json.loads((ROOT / "proofs" / "ledger.json").read_text())["layouts"]
    checked = at_n = 0
    seen: set[Any] = set()
    rows: dict[Any, Any] = {}
    for lay in layouts:
        own, by_n = cold[lay.id]
        kind, count, digest = table_digest(lay)
        if not count:
            assert own == ""
            continue
        entry = ledger.get(lay.id)
        if entry is not None:
            assert entry["map"] == own, lay.id
            checked += 1
        what = (digest, lay.instruction, lay.shape_text, lay.operand, lay.n_values)
        if what in seen or (entry is not None and not lay.n_values):
            continue  # the rows below are written once for each table the ledger lacks
        seen.add(what)
        if digest not in rows:  # one table, written under each header (wgmma's 13 D)
            rows[digest] = cell_rows(lay), row_texts(cell_rows(lay)[1])
        table, texts = rows[digest]
        assert map_hash(lay, table) == own, lay.id  # the rows as dicts, json's text
        for n in sorted(by_n)[::7]:  # every seventh N: the rows as dicts at each N are slow
            h, at = by_n[n], lay.at(n)
            assert cells_at(lay.instruction, at.shape_text, lay.operand, table[1],
                            at.elements, texts)[1] == h, (lay.id, n)
            at_n += 1
    assert checked > 250 and at_n > 10


def _planted(kept_cache_dir: Path, layouts: Any) -> tuple[str, str]:
    _hashes(K.KeptHashes.open(), layouts)
    path = kept_cache_dir / K.FOLDER / K.NAME
    entry = json.loads(path.read_text())
    key = next(iter(entry["hashes"]))
    entry["hashes"][key] = "0123456789abcdef"
    entry["digest"] = K._digest(entry["hashes"])
    path.write_text(json.dumps(entry))
    return key, entry["code"]


def test_a_kept_hash_is_what_a_run_reads(kept_cache_dir: Path) -> None:
    layouts = [lay for lay in catalog_model(False).layouts
               if lay.id == "catalog:mma.m16n8k16.A.f16-bf16"]
    assert len(layouts) == 1
    key, _code = _planted(kept_cache_dir, layouts)
    kept = K.KeptHashes.open()
    assert kept is not None and kept.get(key) == "0123456789abcdef"
    assert _hashes(kept, layouts)[layouts[0].id][0] == "0123456789abcdef"
    assert _hashes(None, layouts)[layouts[0].id][0] != "0123456789abcdef"  # computed


@pytest.mark.parametrize("damage", ["not json", "digest", "not hex", "schema", "code"])
def test_a_damaged_file_is_ignored_and_written_again(
        damage: str, kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layouts = [lay for lay in catalog_model(False).layouts
               if lay.id == "catalog:mma.m16n8k16.A.f16-bf16"]
    want = _hashes(None, layouts)
    _hashes(K.KeptHashes.open(), layouts)
    path = kept_cache_dir / K.FOLDER / K.NAME
    entry = json.loads(path.read_text())
    key = next(iter(entry["hashes"]))
    if damage == "digest":
        entry["hashes"][key] = "0123456789abcdef"
    elif damage == "not hex":
        entry["hashes"][key] = "not a hash"
        entry["digest"] = K._digest(entry["hashes"])
    elif damage == "schema":
        entry["schema"] = "ptxlayout-map-hashes/0"
    elif damage == "code":  # another version's file: replaced, no warning
        entry["code"] = "0" * 64
    path.write_text("{" if damage == "not json" else json.dumps(entry))
    capsys.readouterr()
    kept = K.KeptHashes.open()
    assert kept is not None and kept.hashes == {}
    assert ("cache ignored" in capsys.readouterr().err) == (damage != "code")
    assert _hashes(kept, layouts) == want
    again = json.loads(path.read_text())
    assert again["code"] == K._code_key() and again["hashes"][key] != "0123456789abcdef"
    assert K._valid(again) == again["hashes"]


def test_no_cache_keeps_nothing(kept_cache_dir: Path) -> None:
    cache.disable()
    try:
        assert K.KeptHashes.open() is None
    finally:
        cache.enable()
    assert not (kept_cache_dir / K.FOLDER).exists()


def test_the_key_holds_the_digest_the_header_and_the_elements() -> None:
    keys = {K.hash_key(d, h, e) for d in ("a", "b") for h in ("x|y", "x|z") for e in (None, 4)}
    assert len(keys) == 8
