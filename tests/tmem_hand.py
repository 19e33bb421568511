"""One hand-worked table of the SM100 TMEM atoms, for the catalog's tcgen05.ld maps
(test_tcgen05_tmem.py) and the audit's decoding of CuTe's headers (test_audit_sm100.py).

Worked out by hand from CuTe's SM100 TMEM atoms (cute/atom/copy_traits_sm100.hpp): each atom
maps (thread, bit) to bit b of a lane-major TMEM block, lane b // width, column
(b % width) // 32; with its ValID, (thread, register) -> (TMEM lane, column).  For
16dp256b1x, ((4,8),(64,2)):((64,256),(1,2048)) over a 256-bit-wide block: thread 5 is
(t0 1, t1 1), its register 2 starts at value bit 64 = (v0 0, v1 1), so bit
64 + 256 + 2048 = 2368: lane 2368 // 256 = 9, column (2368 % 256) // 32 = 2.
"""

from __future__ import annotations

# (CuTe's atom, the PTX form it issues) -> {(thread, register): (TMEM lane, column)}
TMEM_HAND: dict[tuple[str, str], dict[tuple[int, int], tuple[int, int]]] = {
    # 16dp256b1x: ((4,8),(64,2)):((64,256),(1,2048)) -- the m16n8 accumulator pattern
    ("SM100_TMEM_LOAD_16dp256b1x", "tcgen05.ld.16x256b.x1.b32"):
        {(0, 0): (0, 0), (1, 1): (0, 3), (5, 2): (9, 2), (31, 3): (15, 7)},
    # 16dp128b2x: ((4,8),(32,2,2)):((32,256),(1,2048,128))
    ("SM100_TMEM_LOAD_16dp128b2x", "tcgen05.ld.16x128b.x2.b32"):
        {(0, 1): (8, 0), (6, 2): (1, 6), (31, 3): (15, 7)},
    # 16dp64b1x: ((2,2,8),32):((512,32,64),1): lane (t >> 2) + 8 (t & 1)
    ("SM100_TMEM_LOAD_16dp64b1x", "tcgen05.ld.16x64b.x1.b32"):
        {(1, 0): (8, 0), (2, 0): (0, 1), (5, 0): (9, 0), (30, 0): (7, 1)},
    # 16dp64b2x: ((2,2,8),(32,2)):((1024,32,128),(1,64))
    ("SM100_TMEM_LOAD_16dp64b2x", "tcgen05.ld.16x64b.x2.b32"): {(3, 1): (8, 3), (4, 1): (1, 2)},
    # 16dp32b1x: ((16,2),32):((64,32),1): threads 16..31 the second access
    ("SM100_TMEM_LOAD_16dp32b1x", "tcgen05.ld.16x32bx2.x1.b32"):
        {(15, 0): (15, 0), (16, 0): (0, 1)},
    ("SM100_TMEM_LOAD_16dp32b2x", "tcgen05.ld.16x32bx2.x2.b32"): {(17, 1): (1, 3)},
    # 32dp32b4x: (32,128):(128,1)
    ("SM100_TMEM_LOAD_32dp32b4x", "tcgen05.ld.32x32b.x4.b32"): {(7, 3): (7, 3)},
}

BY_ATOM = {atom: cells for (atom, _form), cells in TMEM_HAND.items()}
BY_FORM = {form: cells for (_atom, form), cells in TMEM_HAND.items()}
