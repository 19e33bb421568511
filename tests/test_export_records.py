"""One record shape a family: the sparse-metadata and tcgen05 scale-factor records of the GPU
export (its ``meta`` and ``tc_scale`` lists) and of ``ptxlayout export <id>`` come from one
function each and keep the contract of ``docs/schema/export.schema.json``: tables of numbers,
one a selector value or scale factor ID, never an object a cell."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from math import prod
from typing import Any

import pytest

from formal.cli import main

from .conftest import ROOT

jsonschema = pytest.importorskip("jsonschema")


def _errors(value: Any) -> list[str]:
    schema = json.loads((ROOT / "docs" / "schema" / "export.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    # a value matching neither form is reported with what each form said of it
    return [f"{list(x.absolute_path)}: {x.message}" for e in v.iter_errors(value)
            for x in (e, *e.context)]


@pytest.fixture(scope="module")
def device() -> dict[str, list[dict[str, Any]]]:
    from formal.writers.export import catalog_device_records
    return catalog_device_records()


def _ids(*ids: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["export", *ids]) == 0
    return json.loads(out.getvalue())


def test_the_gpu_lists_keep_the_contract_and_their_tables_are_whole(device: Any) -> None:
    doc = {"layouts": [], "meta": device["meta"], "tc_scale": device["tc_scale"]}
    assert _errors(doc) == []
    assert (len(device["meta"]), len(device["tc_scale"])) == (19, 72)
    for r in device["meta"]:
        assert len(r["places"]) == len(r["sels"])
        assert {len(t) for t in r["places"]} == {3 * r["rows"] * r["chunks"] * r["copies"]}
    for r in device["tc_scale"]:
        assert r["sparse"] is False and r["place_fields"][:3] == ["lane", "column", "byte"]
        assert {len(t) for t in r["places"]} == {len(r["place_fields"]) * prod(r["tile"])}
    one = [r for r in device["tc_scale"] if r["cta_group"] == 1]
    pair = [r for r in device["tc_scale"] if r["cta_group"] == 2]
    assert len(one) == len(pair) == 36 and {len(r["place_fields"]) for r in one} == {3}
    # the M the block-scaled rows read: one CTA's Layouts D (128) and F (64), a pair's A (256)
    # and B (128)
    assert {r["m"] for r in one} == {64, 128} and {r["m"] for r in pair} == {128, 256}
    # a pair's M = 128 scale_A names its CTA (row / 64), four numbers a factor
    sfa = next(r for r in pair if r["m"] == 128 and r["operand"] == "scale_A")
    assert sfa["place_fields"] == ["lane", "column", "byte", "cta"]


def test_the_id_export_keeps_the_contract_with_the_same_records(device: Any) -> None:
    pair = "tcgen05.block_scale.m128n256k32.mxf8f6f4.scale_vec::1X.ue8m0.cta_group::2.scale_B"
    got = _ids("tcgen05.sp_meta.ws.m64.f16", "tcgen05.sp_meta.m128.i8.sel0",
               "tcgen05.block_scale.m64n256k32.mxf8f6f4.scale_vec::1X.ue8m0.scale_A", pair)
    assert _errors(got) == []
    assert got[0] == next(r for r in device["meta"] if r["id"] == got[0]["id"])
    assert got[2] == next(r for r in device["tc_scale"] if r["id"] == got[2]["id"])
    # scale_B of a pair at M = 128: half = col / 128, lane col % 32, column (col % 128) / 32,
    # byte sf_id, so at ID 1 column 200 of B is half 1's lane 8, column 2, byte 1
    assert got[3]["place_fields"] == ["lane", "column", "byte", "half"]
    assert got[3]["places"][1][4 * 200:4 * 201] == [8, 2, 1, 1]


@pytest.mark.parametrize("edit, said", [
    (lambda r: r["places"].__setitem__(0, [{"lane": 0, "column": 0, "bit": 0}]),
     "is not of type 'integer'"),
    (lambda r: r.pop("place_fields"), "'place_fields' is a required property"),
    (lambda r: r.__setitem__("place_fields", ["sel", "row", "chunk", "lane", "column", "bit",
                                              "copy"]), "was expected"),
    (lambda r: r.__setitem__("cells", []), "Additional properties are not allowed"),
])
def test_a_record_of_another_shape_breaks_the_contract(device: Any, edit: Any,
                                                      said: str) -> None:
    bad = copy.deepcopy(device["meta"][0])
    edit(bad)
    assert any(said in e for e in _errors([bad]))
    assert any(said in e for e in _errors({"layouts": [], "meta": [bad]}))
