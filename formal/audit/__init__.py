"""Auditing other libraries' layouts against the spec: CuTe's MMA and copy atoms.

CUTLASS states each atom's fragment layout as a C++ type.  ``audit_cute`` reads the headers
(``grammar/cute.lark``), evaluates each ``ALayout`` / ``BLayout`` / ``CLayout`` /
``SrcLayout`` / ``DstLayout`` to ``shape:stride``, finds the atom's PTX instruction in its
own ``asm`` statement (``grammar/ptx_asm.lark``) and proves, operand by operand, the
(thread, value) -> index map equal to the catalog's layout of that instruction.

A tiny worked example.  ``mma_traits_sm80.hpp`` says

    template <> struct MMA_Traits<SM80_16x8x8_F16F16F16F16_TN> { ...
      using CLayout = SM80_16x8_Row;  // ((4,8),(2,2)):((32,1),(16,8)) }

and ``mma_sm80.hpp`` that the atom runs ``mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16``.
The catalog's C/D of m16n8k8 puts lane 5's c3 at (row 9, col 3); CuTe's index of (thread 5,
value 3) is 32 + 1 + 16 + 8 = 57 = 9 + 16 * 3, the same cell -- and so for all 32 x 4
(thread, value) pairs: ``equal``.

    >>> from formal.audit import audit_cute
    >>> audit = audit_cute(["/path/to/include"])          # doctest: +SKIP
    >>> audit.summary()["operands"]                        # doctest: +SKIP
    {'equal': 185, 'differs': 10, 'not-in-spec': 0, 'unreadable': 2}

Modules, in the order data flows: ``header`` (C++ syntax), ``ptx`` (the asm's opcode),
``atoms`` (evaluated atoms), ``compare`` (Z3 + enumeration), ``audit`` (verdicts),
``report`` (text / json / sarif / junit); ``formal.model.cute`` is the shape:stride algebra
(shared with the CuTe export) and ``project`` the one door into the rest of ptxlayout.
"""

from __future__ import annotations

from ..model.cute import CuteLayout, evaluate, parse_text
from .audit import AtomResult, Audit, Entry, audit_cute

__all__ = ["AUDIT_DEFAULT_HEADERS", "Audit", "AtomResult", "CuteLayout", "Entry", "audit_cute",
           "evaluate", "installed_include", "parse_text"]

# The CuTe headers `ptxlayout audit cute` reads when given no PATH (of the installed wheel).
AUDIT_DEFAULT_HEADERS = ("mma_traits_sm70.hpp", "mma_traits_sm75.hpp", "mma_traits_sm80.hpp",
                         "mma_traits_sm90.hpp", "mma_traits_sm90_gmma.hpp",
                         "mma_traits_sm90_gmma_sparse.hpp", "mma_traits_sm100.hpp",
                         "mma_traits_sm120.hpp", "copy_traits_sm75.hpp", "copy_traits_sm90.hpp",
                         "copy_traits_sm100.hpp")


def installed_include() -> str | None:
    """The include directory of the installed ``nvidia-cutlass`` wheel, or None."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        inc = os.path.join(loc, "source", "include")
        if os.path.isdir(os.path.join(inc, "cute", "atom")):
            return inc
    return None
