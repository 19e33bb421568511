"""The matrix runner without a GPU: ``emulate_wgmma`` is what a tensor core does with a
wgmma or wgmma.sp launch's data when ``truth``'s maps are the hardware's -- it unpacks the
registers by those maps, reads B (and A from shared memory) from the image by the
descriptor's layout, decompresses a sparse A by its metadata and returns D's registers
packed by the truth's accumulator map -- and ``formal.execute.devices.FakeDevice`` runs it
behind the same interface as the CUDA device.  A run packed with other maps than the
truth's must mismatch, which is how the runner's packing, descriptors and comparison are
tested without a GPU.  numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..base.matrix_variants import Variant
from ..base.variants import sparsity_of
from . import cpu
from . import matrix as mx
from .maps import OperandMap
from .matrix import codes_of, regs_of
from .numbers import reference_any
from .smem import SmemLayout, image_codes


def emulate_wgmma(v: Variant, truth: Mapping[str, OperandMap], inputs: np.ndarray,
                  image: np.ndarray, a_off: int, b_off: int, layout_a: SmemLayout,
                  layout_b: SmemLayout) -> np.ndarray:
    """D's words a warpgroup returns if ``truth``'s maps are the hardware's: A from the
    registers by the A map (wgmma.sp: the compressed elements put back where the metadata
    the holders of ``v.selector`` supply says, ``cpu.read_units`` / ``cpu.decompress``) or
    read from the image by ``layout_a`` (wgmma.sp: a 64 x K/2 compressed matrix), B by
    ``layout_b``, C by the C/D map, and D = A x B + C (rounded, never refused: a wrong map
    can make it inexact)."""
    x = np.asarray(inputs, np.uint32)
    wa = v.words("A") if v.a_source == "reg" else 0
    wd = v.words("D")
    img = np.asarray(image).view(np.uint8)
    b = np.swapaxes(image_codes(img[:, b_off:], v.b, layout_b, v.n, v.k), 1, 2)
    cd = truth["C/D"]
    c = codes_of(cd, v.c, x[..., wa:wa + wd])
    if v.sparse:
        sp = sparsity_of(v.a)
        meta = truth["meta"].meta
        assert sp is not None and meta is not None
        units = cpu.read_units(meta, v.selector, x[..., wa + wd], 64, v.k // sp.chunk)
        if v.a_source == "reg":
            a = cpu.decompress(truth["A"], v.a, x[..., :wa], units, sp, v.k)
        else:
            comp = image_codes(img[:, a_off:], v.a, layout_a, 64, v.k // 2)
            a = cpu.dense_from_units(sp, units, comp.reshape(*units.shape[:3], sp.nonzeros),
                                     v.k)
    elif v.a_source == "reg":
        a = codes_of(truth["A"], v.a, x[..., :wa])
    else:
        a = image_codes(img[:, a_off:], v.a, layout_a, 64, v.k)
    return regs_of(cd, v.c, reference_any(v, a, b, c))


def emulate_move(v: Variant, truth: Mapping[str, OperandMap], t: mx.MoveTrial) -> np.ndarray:
    """What a warp's 16-bit move returns if ``truth``'s maps are the hardware's: tile row k
    lies at the address lane k supplies (the other lanes' addresses are never used), lane l's
    element i is the cell ``(row, col)`` of the map.  ldmatrix: the registers (T, 32, R) read
    from the image; stmatrix: the image (T, W) with the registers written into it;
    movmatrix: the registers of the transpose (element i of lane l is the source's cell
    ``(col, row)`` of d's map)."""
    count = t.addr.shape[0]
    tr = np.arange(count)[:, None, None]
    if v.instruction == "movmatrix":
        a, d = truth["a"], truth["d"]
        m = np.zeros((count, 8, 8), np.uint64)
        m[tr, a.row[None], a.col[None]] = cpu.unpack_elements(t.inputs, 16, a.n)
        return cpu.pack_elements(m[tr, d.col[None], d.row[None]], 16)
    r = truth["r"]
    halves = np.ascontiguousarray(t.image, np.uint32).view(np.uint16).reshape(count, -1)
    where = t.addr[tr, r.row[None]] // 2 + r.col[None]
    if v.instruction == "ldmatrix":
        return cpu.pack_elements(halves[tr, where].astype(np.uint64), 16)
    out = halves.copy()
    out[tr, where] = cpu.unpack_elements(t.inputs, 16, r.n).astype(np.uint16)
    return out.view(np.uint32).reshape(count, -1)
