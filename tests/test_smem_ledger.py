"""The shared-memory entries of the proof ledger: each layout, example and table is kept with
the hash of what the text states and of its addresses, and ``--check-ledger`` fails when one
changes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from formal.cli import main
from tests import smem_sections as S


def _prove(doc: Path, *args: str) -> int:
    return main(["prove", str(doc), *args, "-o", str(doc.parent / "out")])


def test_the_ledger_keeps_each_shared_memory_entry(tmp_path: Path) -> None:
    doc = tmp_path / "smem.md"
    doc.write_text(S.ATOMS + "\n" + S.CANONICAL + "\nExamples\n\n" + S.K_NONE_TF32
                   + "\n" + S.WGMMA_DESCRIPTOR, encoding="utf-8")
    assert _prove(doc, "--ledger", str(tmp_path / "led")) == 0
    led = json.loads((tmp_path / "led" / "ledger.json").read_text())["layouts"]
    ex = led["smem.md:wgmma.smem.example.K-major.none.tf32"]
    assert ex["obligations"] == {"exact-layout": "proved", "injective": "proved",
                                 "in-atom": "proved", "encoding": "proved",
                                 "encoding#2": "proved", "hardware": "not-applicable"}
    assert ex["source"] == "smem" and len(ex["formula"]) == 16 and len(ex["map"]) == 16
    assert led["smem.md:wgmma.smem.canonical.K-major.128B"]["obligations"]["swizzle"] == "proved"
    assert led["smem.md:wgmma.smem.descriptor"]["obligations"] == {"field-fit": "proved",
                                                                   "hardware": "not-applicable"}
    assert _prove(doc, "--check-ledger", str(tmp_path / "led")) == 0


def test_check_ledger_fails_when_a_shared_memory_layout_changes(tmp_path: Path,
                                                                 capsys) -> None:  # type: ignore[no-untyped-def]
    doc = tmp_path / "smem.md"
    text = S.CANONICAL + "\nExamples\n\n" + S.K_NONE_TF32
    doc.write_text(text, encoding="utf-8")
    assert _prove(doc, "--ledger", str(tmp_path / "led")) == 0
    # a re-spelling of a value (64*4 bytes is 256) states the same: no drift
    doc.write_text(text.replace("64\\*sizeof(tf32)", "256"), encoding="utf-8")
    assert _prove(doc, "--check-ledger", str(tmp_path / "led")) == 0
    # an exact-layout stride edited: what is stated and where the elements lie both change
    doc.write_text(text.replace("((4,32),(1,64))", "((4,32),(1,128))"), encoding="utf-8")
    capsys.readouterr()
    assert _prove(doc, "--check-ledger", str(tmp_path / "led")) == 1
    out = capsys.readouterr().err
    assert "smem.md:wgmma.smem.example.K-major.none.tf32: the formulas changed and so did " \
           "the map" in out
    assert "smem.md:wgmma.smem.example.K-major.none.tf32: exact-layout was proved, is " \
           "refuted" in out
    # a canonical table stride edited: that row's formula changes (and its verdicts)
    doc.write_text(text.replace("((8,m),(T,2k)):((8T,SBO),(1,T))",
                                "((8,m),(T,2k)):((4T,SBO),(1,T))"), encoding="utf-8")
    assert _prove(doc, "--check-ledger", str(tmp_path / "led")) == 1
    out = capsys.readouterr().err
    assert "smem.md:wgmma.smem.canonical.K-major.128B: the formulas changed" in out


def test_the_catalog_ledger_has_every_shared_memory_layout() -> None:
    led = json.loads(Path("proofs/ledger.json").read_text())["layouts"]
    smem = {k: v for k, v in led.items() if v.get("source") == "smem"}
    assert "catalog:wgmma.smem.K-major.128B.b16" in smem
    assert "catalog:tcgen05.smem.MN-major.64B.b8" in smem
    assert smem["catalog:wgmma.smem.K-major.128B.b16"]["obligations"]["descriptor"] == "proved"
    from formal.model.smem import instances, read_smem
    from formal.prove.smem import prove_instance
    text = Path("formal/catalog/smem/layouts.md").read_text(encoding="utf-8")
    insts = [i for f in ("wgmma", "tcgen05")
             for i in instances(f, read_smem(text, "catalog/smem/layouts.md").canonical)]
    assert {f"catalog:{i.id}" for i in insts} <= set(smem)
    one = prove_instance(insts[0])
    assert smem[f"catalog:{insts[0].id}"]["map"] == one.map


# ---- stale GPU evidence of a shared-memory layout -------------------------------------------


def test_evidence_flags_a_shared_memory_layout_changed_since_its_runs() -> None:
    from formal.prove.evidence import Evidence
    from formal.writers.export_smem import catalog_smem_records, stale_smem

    ev = Evidence.load(Path("proofs/evidence"))
    records = [r for r in catalog_smem_records() if r["instruction"] == "wgmma.smem"]
    assert len(records) == 20 and stale_smem(ev, records) == []  # every wgmma layout current
    # one layout's addresses changed (its hash is no run's): that layout, and only it, is named
    edited = [dict(r, map_hash="0123456789abcdef") if r["id"] == "wgmma.smem.K-major.128B.b16"
              else r for r in records]
    lines = stale_smem(ev, edited)
    assert len(lines) == 1 and lines[0].startswith(
        "wgmma.smem.K-major.128B.b16: no hardware run of the current shared-memory layout "
        "(smem 0123456789abcdef; the layout changed since the runs of 2026-11-26)")
    # a device that runs no wgmma owes none; evidence with no shared-memory run owes none yet
    assert stale_smem(ev, edited, sm=80) == []
    older = SimpleNamespace(runs=[r for r in ev.runs if not r.layout_hashes.get("smem")])
    assert stale_smem(older, edited) == []
