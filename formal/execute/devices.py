"""Devices that run one variant's kernel on a batch of trials: a CUDA GPU through CuPy, or a fake.

``CupyDevice("cuda:0").run(variant, words)`` loads the variant's PTX module (written to a file
named by the hash of its text, because CuPy caches modules by path: reusing a path would
silently run the previous kernel), launches one warp per trial and returns D's words.
``FakeDevice`` computes the same words with ``formal.execute.cpu.emulate`` -- optionally with
planted faults (``fake:fault=KEY,sticky=1``) -- so the supervisor can be tested without a GPU.
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

from ..base.variants import runs_on
from . import cpu, ptx

THREADS = 128  # four warps a block
POISON = 0xDEADBEEF  # D words no kernel wrote

class DeviceError(RuntimeError):
    """The device could not load or run a kernel (JIT failure, fault, wrong architecture)."""


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
