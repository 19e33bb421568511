"""wgmma runs built from the catalog's shared-memory layouts: the data where the catalog's
canonical layout puts it, the descriptor from the catalog's LBO, SBO and swizzle mode, D bit
exact -- and planted edits that must not match.

The layouts come as export records (``formal.writers.export_smem``; numpy only here, never the
prover).  A record is one catalog layout, ``wgmma.smem.K-major.128B.b16``, with two or three
concrete choices for a 64-row operand (dense, the atoms in the other order, gaps), each a CuTe
``shape:stride`` in elements, a ``Swizzle<B,M,S>`` on byte addresses and the descriptor's LBO
and SBO in bytes.  A worked example, K-major, 128B, f16, dense:
``Swizzle<3,4,3> o ((8,8),(8,2)):((64,512),(1,8))`` puts (mn 9, k 10) at element
1 * 64 + 1 * 512 + 2 * 1 + 1 * 8 = 586, byte 1172 = 0b100_1001_0100, whose chunk bits (4-6,
001) are XORed with its row bits (7-9, 001): byte 1156.  Its descriptor: LBO 16 (unused, the
spec's "assumed 1"), SBO 1024, swizzle code 1.

``smem_tasks()`` lists, for each wgmma ``.ss`` row at n64 of one type per element width (f16, bf16,
tf32, e4m3, e5m2, s8, u8, b1) and each catalog layout of that width and majorness (MN-major:
the ``imm-trans`` .f16 / .bf16 only), a ``check`` per choice (expect a match) and the planted
edits (expect a mismatch): ``lbo-sbo-swapped`` (the two fields written into each other, on the
second choice, where they always differ), ``other-swizzle`` (another mode's code, dense) and,
K-major, ``k-atom-wider`` (the data laid out by the layout whose K mode is one atom wider: its
extra columns land on the next rows').  A and B are both laid out by the layout (A: 64 rows
of M, B: 64 rows of N).
``run_smem_task()`` runs one on a device (``CupyDevice`` or ``FakeDevice``, which reads the image
by the descriptor's fields: ``formal.execute.smem.SmemLayout``) and returns the ``Run``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.matrix_variants import variant
from ..base.variants import TYPE_BITS, selects
from . import cpu
from . import matrix as mx
from .maps import LayoutError
from .runs import Run, Task
from .smem import SmemLayout, element_bytes_image

# one .ss row at n64 for each type whose width wgmma reads from shared memory
KEYS = ("wgmma.m64n64k16.f32.f16.f16.ss", "wgmma.m64n64k16.f32.bf16.bf16.ss",
        "wgmma.m64n64k8.f32.tf32.tf32.ss", "wgmma.m64n64k32.f32.e4m3.e4m3.ss",
        "wgmma.m64n64k32.f32.e5m2.e5m2.ss", "wgmma.m64n64k32.s32.s8.s8.ss",
        "wgmma.m64n64k32.s32.u8.u8.ss", "wgmma.m64n64k256.s32.b1.b1_and_popc.ss")
MODES = ("none", "32B", "64B", "128B")
CHOICES = 3
PLANTS = ("lbo-sbo-swapped", "other-swizzle", "k-atom-wider")
WIDTH = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
OTHER = {"none": "32B", "32B": "64B", "64B": "128B", "128B": "none"}


def catalog_id(major: str, mode: str, bits: int) -> str:
    return f"wgmma.smem.{major}-major.{mode}.b{bits}"


def smem_tasks(sm: int, only: str | None = None) -> list[Task]:
    """The catalog runs of an sm_90 device (none elsewhere: wgmma is sm_90a's)."""
    if sm // 10 != 9:
        return []
    out: list[Task] = []
    for key in KEYS:
        v = variant(key)
        if not (selects(only, key) or selects(only, "wgmma.smem")):
            continue
        majors = ("K", "MN") if v.a in ("f16", "bf16") else ("K",)
        for major in majors:
            for mode in MODES:
                lid = catalog_id(major, mode, TYPE_BITS[v.a])
                out += [Task(key, "check", catalog=f"{lid}#{i}") for i in range(CHOICES)]
                # swapped on the choice whose LBO and SBO differ at every mode (the dense
                # M/N-major 128B one has a single atom along M/N: LBO = SBO)
                out += [Task(key, "experiment", plant=p, expect="mismatch",
                             catalog=f"{lid}#{1 if p == 'lbo-sbo-swapped' else 0}")
                        for p in PLANTS if p != "k-atom-wider" or major == "K"]
    return out


def _digits(shape: Any, stride: Any) -> list[tuple[int, int]]:
    if isinstance(shape, int):
        return [(shape, int(stride))]
    out: list[tuple[int, int]] = []
    for s, d in zip(shape, stride, strict=True):
        out += _digits(s, d)
    return out


@dataclass(frozen=True)
class CatalogSmem:
    """A choice of a catalog record as a layout of byte addresses: (mn, k) -> the swizzled
    byte of element (mn, k) (``bits`` < 8: the byte holding it), the same interface as
    ``SmemLayout``'s ``element_offset`` / ``extent``."""

    shape: Any
    stride: Any
    swizzle: tuple[int, int, int]
    major: str

    def element_offset(self, mn: np.ndarray, k: np.ndarray, bits: int) -> np.ndarray:
        off = np.zeros(np.shape(mn), dtype=np.int64)
        for coord, shape, stride in ((np.asarray(mn, np.int64), self.shape[0], self.stride[0]),
                                     (np.asarray(k, np.int64), self.shape[1], self.stride[1])):
            rest = coord
            for extent, st in _digits(shape, stride):
                off = off + (rest % extent) * st
                rest = rest // extent
        byte = off * bits // 8
        b, m, s = self.swizzle
        mask = ((1 << b) - 1) << (m + s)
        return byte ^ ((byte & mask) >> s)  # type: ignore[no-any-return]

    def extent(self, rows: int, k: int, bits: int) -> int:
        mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
        return int(self.element_offset(mn, kk, bits).max()) + max(1, bits // 8)


def record_of(records: Sequence[Mapping[str, Any]], lid: str) -> Mapping[str, Any] | None:
    return next((r for r in records if r.get("instruction") == "wgmma.smem"
                 and r.get("id") == lid), None)


def descriptor_layout(major: str, mode: str, lbo: int, sbo: int) -> SmemLayout:
    """The descriptor (and how the device reads by it): the mode's swizzle width, LBO, SBO;
    M/N-major, the M/N step is SBO without swizzle and LBO with one (the canonical layouts)."""
    return SmemLayout(WIDTH[mode], lbo, sbo, False, major, "sbo" if mode == "none" else "lbo")


def _round(x: int, to: int) -> int:
    return (x + to - 1) // to * to


def run_smem_task(dev: Any, task: Task, records: Sequence[Mapping[str, Any]], trials: int) -> Run:
    """One catalog run: fresh random exact A, B, C, laid out by the record's choice, the
    descriptor built from it (with the task's planted edit), D compared bit for bit."""
    v = variant(task.key)
    t0 = time.perf_counter()
    lid, _, idx = task.catalog.partition("#")
    rec = record_of(records, lid)
    run = Run(v, None, "not-executed", mode=task.mode, expect=task.expect, plant=task.plant)
    if rec is None:
        run.detail = f"no record of {lid} in the layouts export"
        return run
    ch = rec["choices"][int(idx)]
    major, mode = str(rec["major"]), str(rec["mode"])
    write = CatalogSmem(ch["shape"], ch["stride"], tuple(ch["swizzle"]), major)
    lbo, sbo = int(ch["lbo"]), int(ch["sbo"])
    read = descriptor_layout(major, mode, lbo, sbo)
    if task.plant == "lbo-sbo-swapped":
        read = descriptor_layout(major, mode, sbo, lbo)
    elif task.plant == "other-swizzle":
        read = descriptor_layout(major, OTHER[mode], lbo, sbo)
    try:
        maps = mx.maps_for(v, records)
    except LayoutError as exc:
        run.detail = str(exc)
        return run
    run.layout_hashes = {**mx.hashes(maps), "smem": str(rec["map_hash"])}
    run.smem_layout = {"catalog": lid, "choice": int(idx), "params": ch["params"],
                       "layout": f"Swizzle<{','.join(map(str, ch['swizzle']))}> o "
                                 f"{_show(ch['shape'])}:{_show(ch['stride'])}",
                       "lbo": read.lbo, "sbo": read.sbo, "mode": OTHER[mode]
                       if task.plant == "other-swizzle" else mode,
                       "descriptor_hi": f"0x{read.descriptor_hi():016x}", "name": read.name}
    run.seed = secrets.randbits(63)
    rng = np.random.default_rng(run.seed)
    wide = CatalogSmem(ch["wide"]["shape"], ch["wide"]["stride"], tuple(ch["wide"]["swizzle"]),
                       major) if task.plant == "k-atom-wider" else None
    trial = _trial(v, maps, rng, trials, write, read, wide)
    got = dev.wgmma(v, trial, read, read)
    cells, line = mx.wgmma_differences(v, maps, trial, got)
    run.trials = trials
    run.result = "mismatch" if cells else "match"
    run.detail = line or f"{trials} trials bit-exact"
    run.d_cells = [list(c) for c in cells[:64]]
    run.seconds = time.perf_counter() - t0
    return run


def _show(t: Any) -> str:
    return str(t) if isinstance(t, int) else "(" + ",".join(_show(x) for x in t) + ")"


def _trial(v: Any, maps: Mapping[str, Any], rng: np.random.Generator, count: int,
           write: CatalogSmem, read: SmemLayout, wide: CatalogSmem | None) -> mx.WgmmaTrial:
    """A and B (64 rows each) written by ``write``; the image as large as what ``read`` would
    read too (a wrong descriptor reads zeros, never past the image); ``wide``: the layout's
    extra K columns written with random bytes after the operand."""
    a = cpu.draw(rng, v.a, "A", v, (count, 64, v.k))
    b = cpu.draw(rng, v.b, "B", v, (count, v.k, v.n))
    c = cpu.draw(rng, v.c, "C", v, (count, 64, v.n))
    bits = TYPE_BITS[v.a]
    span = _round(max(write.extent(64, v.k, bits), read.extent(64, v.k, bits)), 16)
    img = np.zeros((count, 2 * _round(span, 1024)), dtype=np.uint8)
    b_off = _round(span, 1024)
    for base, codes in ((0, a), (b_off, np.swapaxes(b, 1, 2))):
        img[:, base:base + span] = element_bytes_image(codes, v.a, write, span)
        if wide is not None:
            extra = np.arange(v.k, _wide_k(wide))
            mn, kk = np.meshgrid(np.arange(64), extra, indexing="ij")
            off = wide.element_offset(mn, kk, bits).ravel()
            off = np.unique((off[:, None] + np.arange(max(1, bits // 8))[None]).ravel())
            off = off[off < span]  # every byte of each extra element
            img[:, base + off] = rng.integers(0, 256, (count, off.size), dtype=np.uint8)
    inputs = mx.regs_of(maps["C/D"], v.c, c)
    d = cpu.reference(v, a, b, c)
    return mx.WgmmaTrial(inputs, img.view(np.uint32), 0, b_off,
                         mx.regs_of(maps["C/D"], v.c, d), a, b, c)


def _wide_k(wide: CatalogSmem) -> int:
    """The K extent (elements) of the wider layout."""
    n = 1
    for extent, _ in _digits(wide.shape[1], wide.stride[1]):
        n *= extent
    return n
