"""The data walks one way: each document is read once, the catalog modeled once a process.

A report quotes the lines the pipeline read (``Document.lines``), not a second read of the
file: a document written with CRLF line ends and a byte-order mark is opened once, and its
quote is the line as the pipeline saw it (no ``\\r``, no BOM).  The catalog's model is built
once for each setting of ``corrections`` however many times the prover, the evidence check,
the GPU export and the audit ask; the GPU export's records are the export's values, equal to
what its JSON text reads back to.
"""

from __future__ import annotations

import builtins
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from formal import api
from formal.audit.project import spec_layouts
from formal.base.records import expand
from formal.cli import main
from formal.model import resolve
from formal.writers.export import catalog_device_records, to_json

from .test_never_lie import F32, HEAD, LAYOUTS


def test_the_report_quotes_the_lines_the_pipeline_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    formulas = LAYOUTS["correct"][0].replace("row = groupID for", "row = groupID >> 1 for")
    text = HEAD.format(row=F32) + formulas + "\n"
    doc = tmp_path / "crlf.txt"
    doc.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    opened: list[str] = []
    real_open, real_io_open = builtins.open, io.open

    def counting(real: Any) -> Any:
        def open_(file: Any, *args: Any, **kw: Any) -> Any:
            opened.append(str(file))
            return real(file, *args, **kw)
        return open_

    monkeypatch.setattr(builtins, "open", counting(real_open))
    monkeypatch.setattr(io, "open", counting(real_io_open))
    code = main(["prove", str(doc), "--no-catalog", "--no-cache", "--evidence", "none",
                 "--format", "markdown"])
    monkeypatch.undo()
    out = capsys.readouterr().out
    assert code == 1
    assert opened.count(str(doc)) == 1
    lines = [int(m) for m in re.findall(rf"`{re.escape(str(doc))}:(\d+):\d+`", out)]
    assert lines == [9, 9]  # the two findings, at the col formula
    assert f"    9 | {text.split(chr(10))[8]}\n" in out
    assert text.split("\n")[8].startswith("col = (threadID_in_group * 2)")
    assert "\r" not in out and "\ufeff" not in out


def test_the_catalog_model_is_built_once_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = resolve.build

    def counting(*args: Any, **kw: Any) -> Any:
        built.append(1)
        return real(*args, **kw)

    resolve.catalog_model.cache_clear()
    spec_layouts.cache_clear()
    monkeypatch.setattr(resolve, "build", counting)
    plain, fixed = api.model_of([]), api.model_of([], corrections=True)
    api.current_catalog()
    assert api.model_of([]) is plain and api.model_of([], corrections=True) is fixed
    assert spec_layouts(False) == plain.layouts and spec_layouts(True) == fixed.layouts
    assert len(built) == 2 and len(plain.layouts) == 163 + 148  # and the tcgen05.ld/st forms


def test_the_gpu_export_records_are_the_exports_values() -> None:
    records, errata = api.current_catalog()
    fixed, plain = api.model_of([], corrections=True), api.model_of([])
    smem = api.smem_export()
    text = json.loads(to_json(fixed.layouts, plain.layouts, smem, catalog_device_records()))
    # the layouts, then the shared-memory records the catalog runs are built from, then the
    # block-scale factor maps, the data paths, the sparse metadata and the tcgen05 scale factors
    # (one CTA's 36 and a pair's 36)
    assert records == expand(text["layouts"]) + text["smem"] + text["scale"] + \
        text["datapath"] + text["meta"] + text["tc_scale"] and errata == text["errata"]
    assert len(records) == len(fixed.layouts) + len(smem) + 10 + 7 + 19 + 72 and errata and \
        len(smem) == 20 + 12  # the wgmma layouts, the K-major tcgen05 ones
    assert all(isinstance(r["cells"], list) for r in records if "cells" in r)


def test_each_call_gets_fresh_values_of_json_types_only() -> None:
    records, errata = api.current_catalog()
    seen: list[Any] = [records, errata]
    kinds: set[type] = set()
    while seen:
        x = seen.pop()
        kinds.add(type(x))
        if isinstance(x, dict):
            assert all(type(k) is str for k in x)
            seen.extend(x.values())
        elif isinstance(x, list):
            seen.extend(x)
    assert kinds <= {dict, list, str, int, float, bool, type(None)}, kinds
    first = records[0]["cells"][0]
    first["row"] = -7
    records[1]["id"] = "changed"
    again, _ = api.current_catalog()
    assert again[0]["cells"][0]["row"] != -7 and again[1]["id"] != "changed"
