"""The one device of every family: a CUDA GPU through CuPy, or a fake that emulates it.

``CupyDevice(0)`` runs a batch of trials of one variant: ``load`` / ``launch`` an mma module
(one warp per trial, D's words back), ``move`` a move's trials (one warp per trial, the
registers or -- stmatrix -- the shared-memory image back), ``wgmma`` a warpgroup's (128 threads
per trial, D's words back).  Every module is written to a file named by the hash of its text,
because CuPy caches modules by path: reusing a path would silently run the previous kernel.
``FakeDevice`` computes the same words by emulation, taking the given layouts as the
hardware's truth (mma: ``formal.execute.cpu.emulate``; the moves and wgmma / wgmma.sp:
``formal.execute.matrix_fake``) -- optionally with planted faults (``fake:fault=KEY,sticky=1``)
-- so the supervisor can be tested without a GPU.  A worked
example: ``FakeDevice(records).wgmma(v, trial, la, lb)`` of ``wgmma.m64n8k16.f32.f16.f16.rs``
unpacks A and C by the records' maps, reads B from the image by ``lb`` and returns A x B + C
packed by the C/D map: 128 threads x 2 words a trial.  ``DeviceError`` is every refusal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..base.variants import Variant, runs_on
from . import cpu, ptx, ptx_matrix
from . import matrix as mx
from . import tmem as tm
from .matrix_fake import emulate_move, emulate_wgmma

THREADS = 128  # four warps a block
POISON = 0xDEADBEEF  # D words no kernel wrote

class DeviceError(RuntimeError):
    """The device could not load or run a kernel (no CuPy or CUDA device, a JIT, load or
    launch failure, a fault, the wrong architecture, an image larger than shared memory)."""


# what to install for a CUDA device: CuPy's wheels are built per CUDA major version
GPU_EXTRA = ("install the GPU extra that matches the driver's CUDA: "
             "pip install 'ptxlayout[gpu-cuda13]' (CUDA 13) or 'ptxlayout[gpu-cuda12]' "
             "(CUDA 12); from a clone, pip install '.[gpu-cuda13]'")


def has_cupy() -> bool:
    """Is CuPy installed?  (Looked up without importing it: no CUDA context is made here.)"""
    import importlib.util
    return importlib.util.find_spec("cupy") is not None


def device_problem(spec: str) -> str | None:
    """Why ``spec`` cannot name a usable device before anything starts (None: try it).
    Only what is known without touching the GPU: a ``cuda`` device needs CuPy."""
    if spec.partition(":")[0] == "cuda" and not has_cupy():
        return f"CuPy missing: {GPU_EXTRA}"
    return None


# ---- devices ----------------------------------------------------------------------------------


class CupyDevice:
    """A CUDA device through CuPy: modules from PTX files, one warp per trial."""

    def __init__(self, ordinal: int = 0) -> None:
        try:
            import cupy  # noqa: F401 - the optional dependency
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken CUDA install
            raise DeviceError(f"CuPy missing or not usable ({type(exc).__name__}: {exc}); "
                              f"{GPU_EXTRA}") from exc
        import cupy as cp

        self.cp = cp
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001
            raise DeviceError(f"no CUDA device: {exc}") from exc
        if count <= ordinal:
            raise DeviceError(f"no CUDA device {ordinal} ({count} found)")
        self.device = cp.cuda.Device(ordinal)
        self.device.use()
        props = cp.cuda.runtime.getDeviceProperties(ordinal)
        name = props.get("name", b"")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        major, minor = int(props["major"]), int(props["minor"])
        self.sm = 10 * major + minor
        drv = cp.cuda.runtime.driverGetVersion()
        rt = cp.cuda.runtime.runtimeGetVersion()
        self.cuda = f"driver API {drv // 1000}.{drv % 1000 // 10}, runtime {rt // 1000}." \
                    f"{rt % 1000 // 10}, CuPy {cp.__version__}"
        self.driver = _nvidia_smi_driver() or f"CUDA driver API {drv}"
        self.tmp = Path(tempfile.mkdtemp(prefix="ptxlayout-kernels-"))
        # a failed launch may leave a sticky error in the context: the supervisor then gives
        # the remaining variants to a fresh process
        self.broken = False
        self.functions: dict[str, Any] = {}  # the moves' and wgmma's, by module file

    def load(self, module: ptx.Module) -> dict[str, Any]:
        path = self.tmp / module.filename  # unique per text: CuPy caches modules by path
        path.write_text(module.text, encoding="utf-8")
        try:
            mod = self.cp.RawModule(path=str(path))
            return {name: mod.get_function(name) for _s, name in module.entries}
        except Exception as exc:  # noqa: BLE001 - CUDA driver / JIT errors
            raise DeviceError(f"JIT/load failed: {type(exc).__name__}: {exc}") from exc

    def launch(self, handle: Mapping[str, Any], entry: str, inputs: np.ndarray,
               words_out: int) -> np.ndarray:
        cp = self.cp
        warps = int(inputs.shape[0])
        try:
            d_in = cp.asarray(np.ascontiguousarray(inputs, dtype=np.uint32).ravel())
            d_out = cp.full(warps * 32 * words_out, POISON, dtype=cp.uint32)
            blocks = (warps * 32 + THREADS - 1) // THREADS
            handle[entry]((blocks,), (THREADS,), (d_in, d_out, np.uint32(warps)))
            cp.cuda.get_current_stream().synchronize()
            return cp.asnumpy(d_out).reshape(warps, 32, words_out)
        except Exception as exc:  # noqa: BLE001
            self.broken = True
            raise DeviceError(f"launch failed: {type(exc).__name__}: {exc}") from exc

    def info(self) -> dict[str, Any]:
        return {"device": self.name, "sm": self.sm, "driver": self.driver, "cuda": self.cuda}

    # ---- the moves and wgmma: one kernel a trial (a warp, or a warpgroup) ------------------

    def function(self, v: Variant, trans: bool = False) -> Any:
        arch = f"sm_{self.sm}a" if v.arch_suffix else None
        m = ptx.module(v, arch, trans)
        if m.filename not in self.functions:
            path = self.tmp / m.filename  # unique per text: CuPy caches modules by path
            path.write_text(m.text, encoding="utf-8")
            try:
                mod = self.cp.RawModule(path=str(path))
                self.functions[m.filename] = mod.get_function(m.entry(None))
            except Exception as exc:  # noqa: BLE001 - CUDA driver / JIT errors
                raise DeviceError(f"JIT/load failed: {type(exc).__name__}: {exc}") from exc
        return self.functions[m.filename]

    def _run(self, fn: Any, blocks: int, threads: int, args: Sequence[Any], out_words: int) \
            -> np.ndarray:
        cp = self.cp
        try:
            d_out = cp.full(max(1, out_words), POISON, dtype=cp.uint32)
            dev = [cp.asarray(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                   for a in args]
            fn((blocks,), (threads,), (dev[0], d_out, *dev[1:]))
            cp.cuda.get_current_stream().synchronize()
            return cp.asnumpy(d_out)
        except Exception as exc:  # noqa: BLE001
            self.broken = True
            raise DeviceError(f"launch failed: {type(exc).__name__}: {exc}") from exc

    def move(self, v: Variant, t: mx.MoveTrial) -> np.ndarray:
        count = t.addr.shape[0]
        fn = self.function(v)
        words = t.image.shape[1]
        r = max(1, v.registers)
        ins = t.inputs if t.inputs.size else np.zeros((count, 32, r), np.uint32)
        img = t.image if t.image.size else np.zeros((count, 1), np.uint32)
        out_words = count * words if v.instruction == "stmatrix" else count * 32 * r
        got = self._run(fn, count, 32, [ins.astype(np.uint32).ravel(),
                                        img.astype(np.uint32).ravel(),
                                        t.addr.astype(np.uint32).ravel(), np.uint32(words)],
                        out_words)
        if v.instruction == "stmatrix":
            return got.reshape(count, words)
        return got.reshape(count, 32, r)

    def tmem(self, v: Variant, t: tm.TmemTrial) -> np.ndarray:
        """tcgen05.ld's registers (T, 32, R) or tcgen05.st's TMEM image (T, 32, C)."""
        count, _, c = t.image.shape
        r = v.registers
        st = v.instruction == "tcgen05.st"
        got = self._run(self.function(v), count, 32,
                        [t.inputs.astype(np.uint32).ravel(), t.image.astype(np.uint32).ravel(),
                         np.zeros(1, np.uint32), np.uint32(32 * c)],
                        count * 32 * (c if st else r))
        return got.reshape(count, 32, c if st else r)

    def wgmma(self, v: Variant, t: mx.WgmmaTrial, la: mx.SmemLayout,
              lb: mx.SmemLayout) -> np.ndarray:
        count = t.inputs.shape[0]
        wd = v.words("D")
        _fits(t)
        fn = self.function(v, lb.major == "MN")
        got = self._run(fn, count, 128, [t.inputs.astype(np.uint32).ravel(),
                                         t.image.astype(np.uint32).ravel(),
                                         np.uint32(t.image.shape[1]), np.uint32(t.a_off),
                                         np.uint32(t.b_off), np.uint64(la.descriptor_hi()),
                                         np.uint64(lb.descriptor_hi())], count * 128 * wd)
        return got.reshape(count, 128, wd)


def _fits(t: mx.WgmmaTrial) -> None:
    if t.image.shape[1] * 4 > ptx_matrix.SMEM_BYTES:
        raise DeviceError(f"image of {t.image.shape[1] * 4} bytes exceeds shared memory")


def _nvidia_smi_driver() -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip().splitlines()
    return line[0].strip() if out.returncode == 0 and line else None


class FakeDevice:
    """A device that executes kernels by emulation, taking the given layouts as the
    hardware's truth (for testing the harness without a GPU).

    ``crash`` / ``hang`` name variant keys whose launch kills the process / never returns
    (to exercise the watchdog); ``fault`` keys raise ``DeviceError`` as a faulting kernel,
    and with ``sticky`` every later launch of the process fails too, as after a real fault
    (a CUDA context keeps its error)."""

    def __init__(self, truth: Sequence[Mapping[str, Any]], sm: int = 90,
                 crash: Iterable[str] = (), hang: Iterable[str] = (),
                 fault: Iterable[str] = (), sticky: bool = False) -> None:
        self.truth = list(truth)
        self.sm = sm
        self.name = f"fake device (emulated sm_{sm})"
        self.driver = "none"
        self.cuda = "emulated by formal.execute.cpu"
        self.crash, self.hang, self.fault = set(crash), set(hang), set(fault)
        self._plans: dict[str, cpu.Plan] = {}
        self.broken = False
        self.sticky = sticky
        self.launches = 0

    def load(self, module: ptx.Module) -> Any:
        v = module.variant
        if not runs_on(v, self.sm):
            raise DeviceError(f"no kernel image for sm_{self.sm} ({v.key} needs {v.target})")
        if v.key not in self._plans:
            try:
                self._plans[v.key] = cpu.plan(v, self.truth)
            except cpu.LayoutError as exc:
                raise DeviceError(f"the fake device has no truth for {v.key}: {exc}") from exc
        return module

    def launch(self, handle: Any, entry: str, inputs: np.ndarray, words_out: int) -> np.ndarray:
        module: ptx.Module = handle
        key = module.variant.key
        if key in self.crash:
            os._exit(3)
        if key in self.hang:
            time.sleep(3600)
        if key in self.fault or (self.broken and self.sticky):
            self.broken = True  # with ``sticky``, as a CUDA fault: every later launch fails
            raise DeviceError("launch failed: CUDARuntimeError: cudaErrorIllegalInstruction")
        self.launches += 1
        selector = None if entry == "mma" else int(entry.removeprefix("sel"))
        out = cpu.emulate(self._plans[key], inputs, selector)
        assert out.shape[-1] == words_out
        return out

    def info(self) -> dict[str, Any]:
        return {"device": self.name, "sm": self.sm, "driver": self.driver, "cuda": self.cuda}

    def move(self, v: Variant, t: mx.MoveTrial) -> np.ndarray:
        """The registers (or stmatrix's image) of a move with the truth's maps as the
        hardware's."""
        return emulate_move(v, self._launch(v), t)

    def tmem(self, v: Variant, t: tm.TmemTrial) -> np.ndarray:
        """tcgen05.ld / tcgen05.st with the truth's map as the hardware's (an sm_100 fake)."""
        if not runs_on(v, self.sm):
            raise DeviceError(f"no kernel image for sm_{self.sm} ({v.key} needs {v.target})")
        return tm.emulate_tmem(v, self._launch(v)["r"], t)

    def _launch(self, v: Variant) -> dict[str, Any]:
        """The truth's maps for one launch of ``v`` (a planted fault or a missing truth is the
        launch's error), counted as a launch."""
        if v.key in self.fault:
            raise DeviceError("launch failed: CUDARuntimeError: cudaErrorIllegalInstruction")
        try:
            truth = mx.maps_for(v, self.truth)
        except cpu.LayoutError as exc:
            raise DeviceError(f"the fake device has no truth for {v.key}: {exc}") from exc
        self.launches += 1
        return truth

    def wgmma(self, v: Variant, t: mx.WgmmaTrial, la: mx.SmemLayout,
              lb: mx.SmemLayout) -> np.ndarray:
        """D's words of a wgmma / wgmma.sp launch with the truth's maps as the hardware's."""
        _fits(t)
        return emulate_wgmma(v, self._launch(v), t.inputs, t.image, t.a_off, t.b_off, la, lb)
