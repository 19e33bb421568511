"""Sparse tcgen05.mma.sp: the kinds, granularity and meaningful metadata index values its text
states, checked against the sparsity rows mma.sp uses (one vocabulary: formal.prove.sparse's
placements); the real section read in Markdown, HTML and text; edits refuted on their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formal.base.variants import SPARSITY
from formal.prove.sparse import listed_values_core, placement_words

REAL = Path("/work/notes/bw-sections/9-7-16-10-8-sparse-matrices.md")


def test_placements_are_the_words_mma_sp_uses() -> None:
    assert [w for _p, w in placement_words(SPARSITY["f16"])] == [
        0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110]
    assert [w for _p, w in placement_words(SPARSITY["tf32"])] == [0b0100, 0b1110]
    assert len(placement_words(SPARSITY["e2m1"])) == 6


def test_listed_values_checked_both_ways() -> None:
    words = [w for _p, w in placement_words(SPARSITY["u8"])]
    assert listed_values_core(list(reversed(words)), SPARSITY["u8"]).status == "proved"
    core = listed_values_core([*words, 0b0110], SPARSITY["u8"])
    assert core.status == "refuted" and core.cex == {
        "value": "0b0110", "indices": [2, 1], "same_as": "0b1001"}
    core = listed_values_core(words[1:], SPARSITY["u8"])
    assert core.status == "refuted" and core.cex == {"missing": ["0b0100"]}
    assert "(0, 1)" in core.message


def _prove(tmp_path: Path, text: str, suffix: str,
           capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    from formal.cli import main
    doc = tmp_path / f"sparse.{suffix}"
    doc.write_text(text, encoding="utf-8")
    rc = main(["prove", str(doc), "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def _render(kind: str, md: str) -> str:
    from tests.renderings import browser, sphinx
    return md if kind == "md" else (sphinx(md) if kind == "html" else browser(md)).text


@pytest.mark.skipif(not REAL.is_file(), reason="the spec's sparse section is not here")
@pytest.mark.parametrize("kind", ["md", "html", "txt"])
def test_the_real_section_in_every_rendering(tmp_path: Path, kind: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    md = REAL.read_text(encoding="utf-8")
    rc, data = _prove(tmp_path, _render(kind, md), kind, capsys)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schema" /
                         "prove.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert rc == 1
    got = {lay["id"].split(":")[-1]: {o["name"]: o["status"] for o in lay["obligations"]}
           for lay in data["layouts"]}
    assert got == {
        "tcgen05.mma.sp.tf32.metadata": {
            "type-names": "proved", "sparse-chunks": "proved", "metadata-coverage": "proved",
            "hardware": "unconfirmed"},
        "tcgen05.mma.sp.f16-f8f6f4-mxf8f6f4-i8-f8f8f4.metadata": {
            "type-names": "refuted", "sparse-chunks": "proved", "metadata-coverage": "refuted",
            "hardware": "unconfirmed"},
        "tcgen05.mma.sp.mxf4-mxf4nvf4.metadata": {
            "type-names": "proved", "sparse-chunks": "proved", "metadata-coverage": "refuted",
            "hardware": "unconfirmed"}}
    errors = [(f["kind"], f["counterexample"]) for f in data["findings"]
              if f["severity"] == "error"]
    assert errors == [
        ("type-names", {"kind": "f8f8f4", "nearest": "f8f6f4"}),
        ("metadata-coverage", {"value": "0b0110", "indices": [2, 1], "same_as": "0b1001"}),
        ("metadata-coverage", {"value": "0b0110", "indices": [2, 1], "same_as": "0b1001"})]
    if kind == "md":  # each on its own line
        lines = md.splitlines()
        where = [f["line"] for f in data["findings"] if f["severity"] == "error"]
        assert "f8f8f4" in lines[where[0] - 1] and "0b0110" in lines[where[1] - 1]


@pytest.mark.skipif(not REAL.is_file(), reason="the spec's sparse section is not here")
def test_edits_refuted_and_fixes_proved(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    md = REAL.read_text(encoding="utf-8")
    fixed = md.replace("`.kind::f8f8f4`", "`.kind::f8f6f4`").replace("* `0b0110`\n", "")
    rc, data = _prove(tmp_path, fixed, "md", capsys)
    assert rc == 0 and not [f for f in data["findings"] if f["severity"] == "error"]
    edited = fixed.replace("granularity of `2:4`", "granularity of `1:2`")
    rc, data = _prove(tmp_path, edited, "md", capsys)
    (err,) = [f for f in data["findings"] if f["severity"] == "error"]
    assert rc == 1 and err["kind"] == "sparse-chunks"
    assert err["counterexample"] == {"stated": [1, 2], "expected": [2, 4]}
    assert "granularity of `1:2`" in edited.splitlines()[err["line"] - 1]
    edited = fixed.replace("* `0b1110`\n\nRest", "\nRest", 1)  # tf32's list loses a value
    rc, data = _prove(tmp_path, edited, "md", capsys)
    (err,) = [f for f in data["findings"] if f["severity"] == "error"]
    assert err["kind"] == "metadata-coverage" and err["counterexample"] == {"missing": ["0b1110"]}
