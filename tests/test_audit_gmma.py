"""`ptxlayout audit cute` on the GMMA (wgmma), LDSM, STSM and MOVM atoms of the installed
nvidia-cutlass wheel: every verdict is re-derived here from the layout CuTe's header states
(the entry's shape:stride, evaluated by a few lines of this file) and the PTX ISA's fragment
formulas written out by hand; planted faults in copied headers and in the header cache are
caught."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from formal.audit import audit_cute
from formal.audit.audit import Audit, Entry
from formal.audit.compare import Counterexample
from formal.audit.store import SCHEMA, SUBFOLDER, header_key
from formal.cli import main

from .conftest import whole_audit_of
from .wheel import cutlass_include as _include


@pytest.fixture(scope="module")
def gmma() -> Audit:
    # audit_cute of these four headers (and the _ext headers they include) is exactly the
    # whole audit's atoms of these six files: the whole audit is made once a process (the
    # header group's worker makes it for test_docs and test_schema too)
    return whole_audit_of("mma_traits_sm90_gmma.hpp", "mma_traits_sm90_gmma_ext.hpp",
                          "mma_traits_sm90_gmma_sparse.hpp", "mma_traits_sm90_gmma_sparse_ext.hpp",
                          "copy_traits_sm75.hpp", "copy_traits_sm90.hpp")


# ---- an evaluation of CuTe's layouts and of the spec, independent of formal/ --------------


def _layout(text: str) -> tuple[Any, Any]:
    shape, stride = text.split(":")
    return ast.literal_eval(shape), ast.literal_eval(stride)


def _size(s: Any) -> int:
    if isinstance(s, int):
        return s
    out = 1
    for x in s:
        out *= _size(x)
    return out


def _flat(s: Any, d: Any) -> list[tuple[int, int]]:
    if isinstance(s, int):
        return [(s, d)]
    return [m for si, di in zip(s, d) for m in _flat(si, di)]


def _index(s: Any, d: Any) -> np.ndarray:
    """CuTe's layout function at every 1-D coordinate (colexicographic digits)."""
    c = np.arange(_size(s))
    out = np.zeros_like(c)
    for si, di in _flat(s, d):
        out += (c % si) * di
        c = c // si
    return out


def _tv(text: str) -> np.ndarray:
    """threads x values: the index CuTe's (thread, value) layout gives."""
    (ts, vs), (td, vd) = _layout(text)
    return _index(ts, td)[:, None] + _index(vs, vd)[None, :]


def _grid(threads: int, values: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(threads)[:, None], np.arange(values)[None, :]


def _d_cell(t: Any, i: Any) -> tuple[Any, Any]:
    """wgmma's accumulator, element i of thread t: the PTX ISA's D fragment figure."""
    w, g, q = t // 32, t % 32 // 4, t % 4
    return 16 * w + g + 8 * (i // 2 % 2), 8 * (i // 4) + 2 * q + i % 2


def _a_cell(bits: int, t: Any, i: Any) -> tuple[Any, Any]:
    """wgmma's register A, element i of thread t, by element width."""
    w, g, q = t // 32, t % 32 // 4, t % 4
    if bits == 32:
        return 16 * w + g + 8 * (i % 2), 4 * (i // 2) + q
    if bits == 16:
        return 16 * w + g + 8 * (i // 2 % 2), 8 * (i // 4) + 2 * q + i % 2
    return 16 * w + g + 8 * (i // 4 % 2), 16 * (i // 8) + 4 * q + i % 4


def _meta_cell(bits: int, t: Any, f: Any) -> tuple[Any, Any]:
    """wgmma.sp's metadata field f of thread t: (row, chunk)."""
    w, g, q = t // 32, t % 32 // 4, t % 4
    if bits == 8:
        return 16 * w + g + 8 * (q % 2), 8 * (q // 2) + f // 2
    return 16 * w + g + 8 * (f // 8), 4 * (q % 2) + f % 8 // 2


_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


def _expect(instruction: str, e: Entry) -> str:
    """equal | differs, decided here for one GMMA operand entry (once per distinct question:
    the atoms of one shape share their layouts)."""
    words = instruction.split(".")
    shape = next(w for w in words if w.startswith("m64n"))
    types = tuple(w for w in words if w in _BITS or w in ("f32", "s32", "b1"))[:2]
    key = (shape, types, ".sp." in instruction, e.operand,
           e.spec_layout.startswith("descriptor:"), e.cute)
    if key not in _DECIDED:
        _DECIDED[key] = _decide(instruction, e)
    return _DECIDED[key]


_DECIDED: dict[tuple[Any, ...], str] = {}


def _decide(instruction: str, e: Entry) -> str:
    words = instruction.split(".")
    shape = next(w for w in words if w.startswith("m64n"))
    n, k = int(shape[4:shape.index("k")]), int(shape[shape.index("k") + 1:])
    a = [w for w in words if w in _BITS or w in ("f32", "s32", "b1")][1]
    sparse = ".sp." in instruction
    idx = _tv(e.cute)
    threads, values = idx.shape
    t, i = _grid(threads, values)

    def verdict(ok: Any) -> str:
        return "equal" if bool(np.all(ok)) else "differs"

    if e.operand == "B" or (e.operand == "A" and e.spec_layout.startswith("descriptor:")):
        cells = (64 if e.operand == "A" else n) * k
        return verdict(values == cells and np.all(idx == i))
    if e.operand == "C":
        r, c = _d_cell(t, i)
        return verdict(values == n // 2 and np.all(idx == r + 64 * c))
    bits = _BITS[a]
    if e.operand == "A" and not sparse:
        r, c = _a_cell(bits, t, i)
        return verdict(values == 64 * k // 128 and np.all(idx == r + 64 * c))
    if e.operand == "A":  # values 2j, 2j+1 are the stored element j's two logical columns
        r, c = _a_cell(bits, t, i // 2)
        return verdict(values == 64 * k // 128 and np.all(idx == r + 64 * (2 * c + i % 2)))
    # 16 two-bit fields a thread; a field describes 2 logical values (sparse_elem<8, uint8_t>)
    # or, for tf32, 1 (sparse_elem<4, uint8_t>); a chunk spans 4 logical columns (tf32: 2)
    per, width = (1, 2) if bits == 32 else (2, 4)
    r, c = _meta_cell(bits, t, i // per)
    return verdict(values == 16 * per
                   and np.all((idx % 64 == r) & (idx // 64 // width == c)))


def test_every_gmma_verdict_agrees_with_the_hand_evaluation(gmma: Audit) -> None:
    seen: set[str] = set()
    for r in gmma.results:
        if not r.instruction.startswith("wgmma"):
            continue
        for e in r.entries:
            assert e.verdict == _expect(r.instruction, e), (r.atom.name, e.operand, e.message)
            seen.add(e.operand + (" register" if e.spec_layout.startswith("wgmma") else ""))
    assert seen == {"A", "A register", "B", "C register", "metadata register"}


def test_gmma_operand_checks_are_compared_none_unreadable(gmma: Audit) -> None:
    entries = [e for r in gmma.results if r.instruction.startswith("wgmma") for e in r.entries]
    assert len(entries) == 2112 + 2112 + 2112 + 1056
    compared = sum(e.verdict in ("equal", "differs") for e in entries)
    assert compared / len(entries) >= 0.9
    assert not [e for e in entries if e.verdict == "unreadable"]
    # the _ext atoms (reached by the #include at the end of each GMMA header) are there
    assert any(r.atom.name == "SM90_64x24x16_F16F16F16_RS" for r in gmma.results)


def test_ldsm_and_stsm_are_all_compared_and_movm_differs(gmma: Audit) -> None:
    moves = [r for r in gmma.results if r.instruction.split(".")[0] in ("ldmatrix", "stmatrix")]
    assert len(moves) == 12
    assert all(e.verdict == "equal" for r in moves for e in r.entries)
    # SM75_U32x1_MOVM_T states Src = Dst = (32,32):(32,1): by CuTe's copy rule thread 0's
    # bits 16..31 stay thread 0's bits 16..31, the source's (row 0, col 1) -- which the
    # transposing move puts at (row 1, col 0) of the destination, where the spec's lane 0,
    # element 1 is (row 0, col 1).
    movm = next(r for r in gmma.results if r.atom.name == "SM75_U32x1_MOVM_T")
    src, dst = movm.entries
    assert src.verdict == "equal"
    assert dst.verdict == "differs"
    assert dst.counterexample == Counterexample(0, 1, (1, 0), (0, 1))


# ---- planted faults --------------------------------------------------------------------------


def _copy(tmp_path: Path) -> Path:
    inc = _include()
    for sub, name in (("atom", "mma_traits_sm90_gmma.hpp"), ("arch", "mma_sm90_gmma.hpp")):
        (tmp_path / "cute" / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(inc / "cute" / sub / name, tmp_path / "cute" / sub / name)
    return tmp_path / "cute" / "atom" / "mma_traits_sm90_gmma.hpp"


def test_a_planted_stride_swap_in_a_copied_gmma_header_is_caught(tmp_path: Path) -> None:
    # CLayout_64xN's value strides (64, 8, 512) swapped to (8, 64, 512): value 1 of thread 0
    # is index 8 = (row 8, col 0) where the spec's D element 1 of lane 0 is (row 0, col 1).
    hdr = _copy(tmp_path)
    text = hdr.read_text(encoding="utf-8")
    old = "Stride<Stride<_128,_1,_16>,Stride<_64,_8,   _512>>>;"
    assert text.count(old) == 1, "CLayout_64xN as CUTLASS 4.2 writes it"
    hdr.write_text(text.replace(old, "Stride<Stride<_128,_1,_16>,Stride<_8,_64,   _512>>>;"),
                   encoding="utf-8")
    audit = audit_cute([hdr])
    cs = [e for r in audit.results for e in r.entries if e.operand == "C"]
    assert len(cs) == 320 and all(e.verdict == "differs" for e in cs)
    assert cs[0].counterexample == Counterexample(0, 1, (8, 0), (0, 1))
    assert all(e.verdict == "equal" for r in audit.results for e in r.entries
               if e.operand != "C")
    assert main(["audit", "cute", str(hdr), "--format", "json", "-o",
                 str(tmp_path / "a.json")]) == 1


def test_a_lying_header_cache_entry_is_caught(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # the entry of the copied header says ALayout_64x16's stride _128 is _256: the header's
    # text disagrees, so the entry is removed and the header read afresh (all equal)
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    from formal.audit import store
    store.in_process.cache_clear()
    hdr = _copy(tmp_path / "inc")
    first = audit_cute([hdr])
    key = header_key(hdr.read_text(encoding="utf-8"))
    entry_path = tmp_path / "cache" / SUBFOLDER / f"{key}.json"
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    assert entry["schema"] == SCHEMA
    raw = json.dumps(entry)
    lie = raw.replace('["_128", null]', '["_256", null]', 1)
    assert lie != raw
    entry_path.write_text(lie, encoding="utf-8")
    store.in_process.cache_clear()
    again = audit_cute([hdr])
    assert "the entry does not match" in capsys.readouterr().err
    assert again.counts() == first.counts() and again.counts()["differs"] == 0
    assert not entry_path.exists() or json.loads(entry_path.read_text()) == entry
