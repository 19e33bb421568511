"""Hardware verdicts kept by what they read (formal/prove/kept_verdicts.py): every catalog
verdict read back is the one the judge gives afresh; a changed evidence record or a changed map
is a new key and is judged afresh; a planted wrong verdict is not believed unless the file's
digest matches it (the folder is the user's own: a planted file with a matching digest is
believed, which is why the key holds the code, the evidence's bytes and the map's arrays); a
verdict that read the other operands' layouts is never kept; ``--no-cache`` keeps nothing."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from formal.model.resolve import catalog_model
from formal.prove import kept_verdicts as K
from formal.prove.evidence import Evidence, default_dir
from formal.prove.verdicts import Verdict

ID = "mma.m16n8k16.A.f16-bf16"


def _evidence(where: Path | None = None) -> Evidence:
    folder = default_dir()
    assert folder is not None
    return Evidence.load(where or folder)


class _Counts:
    def __init__(self, kept: K.KeptVerdicts) -> None:
        self.hits, self.added = kept.hits, kept.added  # before ``close`` writes them


def _judged(ev: Evidence, layouts: Any) -> tuple[list[Verdict], _Counts]:
    kept = K.KeptVerdicts.open()
    assert kept is not None
    out = [K.judged(ev, lay, None, kept) for lay in layouts]
    counts = _Counts(kept)
    kept.close()
    return out, counts


def _layout(layouts: Any, short: str) -> Any:
    return next(lay for lay in layouts if lay.short_id == short)


def test_every_catalog_verdict_read_back_is_the_judges(kept_cache_dir: Path) -> None:
    layouts = catalog_model(False).layouts
    ev = _evidence()
    fresh = [ev.verdict(lay) for lay in layouts]
    cold, kept = _judged(ev, layouts)
    assert cold == fresh and kept.hits == 0 and kept.added == len(layouts)
    assert len(json.loads((kept_cache_dir / K.FOLDER / K.NAME).read_text())["verdicts"]) > 250
    warm, kept = _judged(_evidence(), layouts)
    assert warm == fresh and kept.hits > 250 and kept.added == 0
    statuses = {v.status for v in warm}
    assert {"proved", "refuted", "unconfirmed"} <= statuses


def test_a_changed_evidence_record_is_judged_afresh(kept_cache_dir: Path, tmp_path: Path) -> None:
    layouts = catalog_model(False).layouts
    lay = _layout(layouts, ID)
    ev = _evidence()
    before, _ = _judged(ev, [lay])
    assert before[0].status == "proved" and "trials bit-exact" in before[0].message
    copy = tmp_path / "evidence"
    shutil.copytree(default_dir() or "", copy)
    changed = 0
    for path in sorted(copy.glob("*.json")):
        doc = json.loads(path.read_text())
        for run in doc["runs"]:
            if run.get("result") == "match" and run.get("mode") == "check" \
                    and run.get("layout_hashes", {}).get("A") == ev.hash_of(lay):
                run["trials"] = int(run.get("trials") or 0) + 1000
                changed += 1
        path.write_text(json.dumps(doc))
    assert changed
    after, kept = _judged(_evidence(copy), [lay])
    assert kept.hits == 0 and kept.added == 1
    assert after[0] == _evidence(copy).verdict(lay) != before[0]
    assert after[0].status == "proved" and after[0].message != before[0].message


def test_a_changed_map_is_judged_afresh(kept_cache_dir: Path) -> None:
    layouts = catalog_model(False).layouts
    lay = _layout(layouts, ID)
    _judged(_evidence(), [lay])
    row, col = lay.formula("row"), lay.formula("col")
    assert row is not None and col is not None
    swapped = replace(lay, formulas=tuple(replace(f, name="col" if f.name == "row" else "row")
                                          if f.name in ("row", "col") else f
                                          for f in lay.formulas))
    ev = _evidence()
    got, kept = _judged(ev, [swapped])
    assert kept.hits == 0 and kept.added == 1
    assert got[0] == _evidence().verdict(swapped)
    assert got[0].status != "proved"


def _plant(kept_cache_dir: Path, digest_too: bool) -> None:
    path = kept_cache_dir / K.FOLDER / K.NAME
    doc = json.loads(path.read_text())
    for key, (text, h) in doc["verdicts"].items():
        value = json.loads(text)
        if value[0] == "proved":
            value[0], value[1] = "refuted", "planted"
            doc["verdicts"][key] = [json.dumps(value), h]
    if digest_too:
        doc["digest"] = K._digest(doc["verdicts"])
    path.write_text(json.dumps(doc))


def test_a_planted_verdict_is_believed_only_where_the_digest_matches(
        kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layouts = catalog_model(False).layouts
    lay = _layout(layouts, ID)
    truth, _ = _judged(_evidence(), [lay])
    _plant(kept_cache_dir, digest_too=False)
    got, kept = _judged(_evidence(), [lay])
    assert got == truth and kept.hits == 0
    assert "not an entry of this version" in capsys.readouterr().err
    _plant(kept_cache_dir, digest_too=True)
    got, kept = _judged(_evidence(), [lay])
    assert kept.hits == 1 and got[0].status == "refuted" and got[0].message == "planted"


def test_a_verdict_that_read_the_other_operands_is_not_kept(kept_cache_dir: Path) -> None:
    lay = _layout(catalog_model(False).layouts, ID)
    ev = _evidence()
    asked: list[Any] = []

    class Reads:  # the real evidence, judging by the layouts the document states
        def __getattr__(self, name: str) -> Any:
            return getattr(ev, name)

        def verdict(self, lay: Any, stated: Any) -> Verdict:
            stated(lay, None, "B")
            return ev.verdict(lay)

    kept = K.KeptVerdicts.open()
    assert kept is not None
    v = K.judged(Reads(), lay, lambda *a: asked.append(a), kept)
    assert v == ev.verdict(lay) and asked and kept.added == 0
    v = K.judged(ev, lay, lambda *a: asked.append(a), kept)
    assert kept.added == 1  # the same layout, judged without reading them: kept


def test_no_cache_keeps_no_verdict(kept_cache_dir: Path) -> None:
    from formal.cli import main
    assert main(["prove", "--no-cache", "--format", "json", "--output", "/dev/null"]) == 0
    assert not (kept_cache_dir / K.FOLDER).exists()


@pytest.mark.parametrize("message", ["confirmed on H100", "", "\udc80 lone", "é\n\"q\"\\",
                                     "\x00"])
def test_a_verdict_of_texts_reads_back_as_itself(message: str) -> None:
    """A verdict whose fields are all texts is kept without a read-back (a text reads back as
    itself), and the text kept is one that reads back as the very same verdict."""
    v = Verdict("hardware", "unconfirmed", message, None, None, "warning", "gpu", "n")
    text = K.verdict_text(v)
    assert text is not None and K._verdict(text) == v
    assert K.verdict_text(Verdict("hardware", "refuted", message, {"lane": (1, 2)})) is None
