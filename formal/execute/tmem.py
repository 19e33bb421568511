"""tcgen05.ld / tcgen05.st on a device: a trial, what the maps predict, and the differences.

A trial is a tensor-memory image (32 lanes x C columns of random words, C =
``ptx_matrix.tmem_columns``) and, for tcgen05.st, random registers (32 threads x R).  The kernel
(``formal.execute.ptx_matrix``) writes the image with ``.32x32b`` (thread t is lane t), runs
the form, and returns the registers (ld) or the whole image read back (st).  The map says what
each word must be: for ld, register j of lane l is the cell of element j, or -- packed, two
``.b16`` elements a register -- the low halves of the cells of elements 2j (bits 0-15) and
2j + 1 (bits 16-31); for st each element's cell receives its register (packed: its half, in the
low 16 bits of the column -- the high bits are not compared) and no other cell changes.

A worked example: ``tcgen05.ld.16x64b.x1.b32`` maps thread 1's r0 to (lane 8, column 0); with
``image[8][0] = 0x1234`` lane 1 must return 0x1234.  A fake device that takes a map with lane
stride 4 as the hardware's returns ``image[4][0]`` there, and ``differences`` names lane 1,
register 0 and both cells.

``check_forms`` runs every form the records serve on a device (``devices.CupyDevice`` on a
Blackwell GPU, ``devices.FakeDevice`` anywhere) and compares every element of every trial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.matrix_variants import TMEM_VARIANTS
from ..base.variants import Variant, selects
from . import matrix as mx
from .maps import OperandMap
from .ptx_matrix import tmem_columns

LOW = np.uint32(0xFFFF)


@dataclass(frozen=True)
class TmemTrial:
    image: np.ndarray  # (count, 32, C) the initial TMEM words, lane-major
    inputs: np.ndarray  # (count, 32, R) tcgen05.st's registers (zeros for tcgen05.ld)


def trial(v: Variant, rng: np.random.Generator, count: int) -> TmemTrial:
    c, r = tmem_columns(v), v.registers
    image = rng.integers(0, 1 << 32, (count, 32, c), dtype=np.uint64).astype(np.uint32)
    regs = rng.integers(0, 1 << 32, (count, 32, r), dtype=np.uint64).astype(np.uint32)
    return TmemTrial(image, regs if v.instruction == "tcgen05.st" else np.zeros_like(regs))


def expected(v: Variant, m: OperandMap, t: TmemTrial) -> np.ndarray:
    """What the device returns if ``m`` is the hardware's map: ld, the registers (count, 32,
    R); st, the image (count, 32, C)."""
    count = t.image.shape[0]
    tr = np.arange(count)[:, None, None]
    row, col = m.row[None], m.col[None]  # (1, 32, n)
    if v.instruction == "tcgen05.ld":
        words = t.image[tr, row, col]  # (count, 32, n)
        if not v.pack:
            return words
        return (words[..., 0::2] & LOW) | ((words[..., 1::2] & LOW) << np.uint32(16))
    out = t.image.copy()
    if not v.pack:
        out[tr, row, col] = t.inputs
        return out
    halves = np.stack([t.inputs & LOW, t.inputs >> np.uint32(16)], axis=-1)
    halves = halves.reshape(count, 32, -1)
    out[tr, row, col] = (out[tr, row, col] & ~LOW) | halves
    return out


def differences(v: Variant, m: OperandMap, t: TmemTrial, got: np.ndarray) -> str:
    """"" when ``got`` is what ``m`` predicts; else the first differing word, with the cells
    (packed st: only the low 16 bits of each column are compared)."""
    want = expected(v, m, t)
    mask = LOW if (v.pack and v.instruction == "tcgen05.st") else np.uint32(0xFFFFFFFF)
    bad = np.argwhere((want & mask) != (got & mask))
    if not bad.size:
        return ""
    k, a, b = (int(x) for x in bad[0])
    if v.instruction == "tcgen05.ld":
        per = 2 if v.pack else 1
        cells = [(int(m.row[a, per * b + h]), int(m.col[a, per * b + h])) for h in range(per)]
        return (f"{len(bad)} words differ; trial {k}, lane {a}, r{b}: got {int(got[k, a, b]):#x},"
                f" the map's cells (lane, column) {cells} hold {int(want[k, a, b]):#x}")
    return (f"{len(bad)} words differ; trial {k}, TMEM lane {a}, column {b}: got "
            f"{int(got[k, a, b]):#x}, the map predicts {int(want[k, a, b]):#x}")


def emulate_tmem(v: Variant, truth: OperandMap, t: TmemTrial) -> np.ndarray:
    """The fake device's answer: the words ``truth`` (taken as the hardware's map) predicts;
    a packed store leaves the high halves it writes as they were."""
    return expected(v, truth, t)


def check_forms(device: Any, records: Sequence[Mapping[str, Any]], only: str | None = "tcgen05.",
          trials: int = 2, seed: int = 0) -> list[dict[str, Any]]:
    """Every tcgen05.ld/st form ``only`` picks, run on ``device`` with fresh random images and
    registers, every word compared with the records' map: one result a form (``match`` |
    ``mismatch`` | ``error`` with the reason, ``elements`` the words compared)."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for v in TMEM_VARIANTS:
        if not selects(only, v.key):
            continue
        try:
            m = mx.maps_for(v, records)["r"]
        except Exception as exc:  # noqa: BLE001 - a missing map is this form's error
            out.append({"key": v.key, "result": "error", "detail": str(exc), "elements": 0})
            continue
        t = trial(v, rng, trials)
        try:
            got = device.tmem(v, t)
        except Exception as exc:  # noqa: BLE001 - a device refusal is this form's error
            out.append({"key": v.key, "result": "error", "detail": str(exc), "elements": 0})
            continue
        detail = differences(v, m, t, got)
        out.append({"key": v.key, "result": "mismatch" if detail else "match",
                    "detail": detail, "elements": int(got.size)})
    return out


__all__ = ["TmemTrial", "trial", "expected", "differences", "emulate_tmem", "check_forms"]
