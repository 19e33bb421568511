"""`ptxlayout audit triton`: Triton's NVIDIA layouts, computed by the installed triton package
on the CPU, against the spec.  Skipped with the reason where Triton's wheel is not installed
(CI installs it where it installs: .ci/run)."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from formal.audit.triton import CASES, linear_cells
from formal.cli import main


def _need_triton() -> None:
    pytest.importorskip("triton", reason="Triton's wheel is not installed "
                                         "(pip install 'ptxlayout[triton]')")


def test_linear_cells_is_the_xor_of_the_bases() -> None:
    # the MMAv2 accumulator's bases as Triton prints them: lane 5 (bits 0, 2), register 3
    # (bits 0, 1) -> (0,2) ^ (1,0) ^ (0,1) ^ (8,0) = (9, 3)
    cells = linear_cells({"reg": [[0, 1], [8, 0]],
                          "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": []})
    assert cells.shape == (32, 4, 2)
    assert tuple(cells[5, 3]) == (9, 3)
    assert tuple(cells[0, 0]) == (0, 0) and tuple(cells[31, 0]) == (7, 6)


def test_every_triton_layout_equals_the_spec(tmp_path: Path) -> None:
    _need_triton()
    out = tmp_path / "t.json"
    assert main(["audit", "triton", "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["summary"]["operands"] == {"equal": len(CASES), "differs": 0,
                                          "not-in-spec": 0, "unreadable": 0}
    assert len(CASES) >= 10
    by = {a["atom"]: a for a in doc["atoms"]}
    acc = by["MMAv3 accumulator, N = 256"]
    assert acc["instruction"] == "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"
    assert acc["operands"][0]["spec_layout"] == "wgmma.m64n256k16.D.f32"
    assert "warp [[16, 0], [32, 0]]" in acc["operands"][0]["cute"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[1] / "docs" / "schema" /
                         "audit.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)


def test_a_wrong_basis_is_a_difference_with_its_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    # register bit 0 of the MMAv2 accumulator planted as row 1 instead of col 1: thread 0,
    # register 1 is then (row 1, col 0) where the spec's c1 of lane 0 is (row 0, col 1)
    _need_triton()
    from formal.audit import triton as t
    real = t.linear_cells

    def planted(bases: dict[str, Any]) -> Any:
        if bases["reg"] == [[0, 1], [8, 0]]:
            bases = {**bases, "reg": [[1, 0], [8, 0]]}
        return real(bases)

    monkeypatch.setattr(t, "linear_cells", planted)
    audit = t.audit_triton()
    e = next(r for r in audit.results if r.atom.name == "MMAv2 accumulator (f32)").entries[0]
    assert e.verdict == "differs"
    assert e.message == "thread 0, register 1: Triton says (row 1, col 0), the spec says " \
                        "(row 0, col 1)"


def test_without_triton_the_command_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    real = builtins.__import__

    def no_triton(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                  level: int = 0) -> Any:  # the top-level package only, not formal.audit.triton
        if level == 0 and (name == "triton" or name.startswith("triton.")):
            raise ImportError("No module named 'triton'")
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_triton)
    assert main(["audit", "triton"]) == 2
    assert "pip install 'ptxlayout[triton]'" in capsys.readouterr().err
