"""The matrix runner without a GPU: ``emulate_wgmma`` is what a tensor core does with a
wgmma or wgmma.sp launch's data when ``truth``'s maps are the hardware's -- it unpacks the
registers by those maps, reads B (and A from shared memory) from the image by the
descriptor's layout, decompresses a sparse A by its metadata and returns D's registers
packed by the truth's accumulator map -- and ``FakeDevice`` runs it behind the same
interface as the CUDA ``Device`` of ``formal.execute.gpu_matrix``.  A run packed with other
maps than the truth's must mismatch, which is how the runner's packing, descriptors and
comparison are tested without a GPU.  numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base.matrix_variants import Variant
from ..base.variants import sparsity_of
from . import cpu, ptx_matrix
from . import matrix as mx
from .matrix import FragMap, codes_of, regs_of
from .numbers import reference_any
from .smem import SmemLayout, image_codes


class DeviceError(RuntimeError):
    """The device could not run a kernel (no CuPy or CUDA device, a JIT, load or launch
    failure, an image larger than shared memory)."""


def emulate_wgmma(v: Variant, truth: Mapping[str, FragMap], inputs: np.ndarray,
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
            sa = truth["A"].sparse
            assert sa is not None
            a = cpu.decompress(sa, v.a, x[..., :wa], units, sp, v.k)
        else:
            comp = image_codes(img[:, a_off:], v.a, layout_a, 64, v.k // 2)
            a = cpu.dense_from_units(sp, units, comp.reshape(*units.shape[:3], sp.nonzeros),
                                     v.k)
    elif v.a_source == "reg":
        a = codes_of(truth["A"], v.a, x[..., :wa])
    else:
        a = image_codes(img[:, a_off:], v.a, layout_a, 64, v.k)
    return regs_of(cd, v.c, reference_any(v, a, b, c))


class FakeDevice:
    """An sm_90 device that executes wgmma and wgmma.sp by emulation
    (``emulate_wgmma``), taking ``truth``'s maps as the hardware's: the runner's
    packing, descriptors and comparison are tested without a GPU, and a run packed with
    other maps than the truth's must mismatch.  Moves are not emulated here."""

    sm = 90

    def __init__(self, truth: Sequence[Mapping[str, Any]]) -> None:
        self.truth = list(truth)
        self.launches = 0

    def info(self) -> dict[str, Any]:
        return {"device": "fake device (emulated sm_90)", "sm": self.sm, "driver": "none",
                "cuda": "emulated by formal.execute.matrix"}

    def move(self, v: Variant, t: mx.MoveTrial) -> np.ndarray:
        raise DeviceError(f"{v.key}: the fake device emulates wgmma only")

    def wgmma(self, v: Variant, t: mx.WgmmaTrial, la: mx.SmemLayout,
              lb: mx.SmemLayout) -> np.ndarray:
        if t.image.shape[1] * 4 > ptx_matrix.SMEM_BYTES:
            raise DeviceError(f"image of {t.image.shape[1] * 4} bytes exceeds shared memory")
        try:
            truth = mx.maps_for(v, self.truth)
        except mx.LayoutError as exc:
            raise DeviceError(f"the fake device has no truth for {v.key}: {exc}") from exc
        self.launches += 1
        return emulate_wgmma(v, truth, t.inputs, t.image, t.a_off, t.b_off, la, lb)
