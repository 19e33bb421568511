"""The table of producer -> consumer relations (``composes``) between catalog layouts.

Each row says how a consumer's (lane, element) reads a producer's and where the producer's
cell lands in the consumer's tile (``formal.prove.composes.Arrangement``).  Cells of the
warp-level moves are (row address index, position in the row): ``ldmatrix.x4``'s four 8 x 8
matrices stacked one above the other, so its cell (r, c) is row r & 7 of matrix r >> 3.
A worked example, the first row: matrix q of ``ldmatrix.m8n8.x4.b16`` is the m16n8k16 A
tile's quadrant at rows 8 (q & 1), columns 8 (q >> 1) (a0 a1 | a4 a5 over a2 a3 | a6 a7):
cell (25, 2) -- matrix 3, row 1 -- is A's (9, 10), which is where lane 5 keeps a6.

The facts are the spec's layouts; the arrangements are the standard ways kernels use them
(a row-major 16 x 16 tile of .b16 stored as four 8 x 8 matrices in natural order, and so
on), each stated once here and proved by ``formal.prove.composes``.
"""

from __future__ import annotations

import sympy as sp

from ..model.algebra import COL, LANE, ROW, BitAnd, I
from .composes import Arrangement, Relation


def _shr(x: sp.Expr, k: int) -> sp.Expr:
    return sp.floor(x / 2 ** k)


# ldmatrix's stacked matrices -> a 16 x 16 tile in natural (column-major block) order
QUADRANT_ROW = BitAnd(ROW, 7) + 8 * BitAnd(_shr(ROW, 3), 1)
QUADRANT_COL = COL + 8 * _shr(ROW, 4)
WARP = _shr(LANE, 5)  # the warp of a warpgroup thread

NATURAL = Arrangement(
    "four 8 x 8 .b16 matrices of a row-major 16 x 16 tile in natural order "
    "(rows 0-7 | 8-15 of columns 0-7, then of columns 8-15)", row=QUADRANT_ROW,
    col=QUADRANT_COL)
STACKED = Arrangement("the matrices stacked one above the other, as the consumer's rows")
K_ROWS = Arrangement("B stored as K rows of N .b16 (row-major K x N), loaded transposed")
N_ROWS = Arrangement("B stored as N rows of K .b16 (K contiguous): matrix q is rows 8q.. of K",
                     row=COL + 8 * _shr(ROW, 3), col=BitAnd(ROW, 7))
BYTES_A = Arrangement("a row-major 16 x 32 tile of 8-bit elements read as 16 x 16 .b16 words "
                      "in natural order; element i is byte i & 1 of word i >> 1",
                      element=_shr(I, 1), row=QUADRANT_ROW,
                      col=2 * QUADRANT_COL + BitAnd(I, 1))
BYTES_B = Arrangement("B (32 x 8, 8-bit) stored as N rows of K bytes read as .b16 words; "
                      "element i is byte i & 1 of word i >> 1", element=_shr(I, 1),
                      row=2 * COL + BitAnd(I, 1) + 16 * _shr(ROW, 3), col=BitAnd(ROW, 7))

# The 8-bit moves of sm_100a (cells: row address index, byte of the row)
K_ROWS_BYTES = Arrangement(
    "B (32 x 16 bytes: two n8 tiles) stored as K rows of N bytes (row-major K x N), loaded "
    "with ldmatrix .m16n16 .x2 .trans: the first tile's b0-b3 are d0-d3, its b4-b7 d8-d11",
    element=BitAnd(I, 3) + 8 * _shr(I, 2))
K_ROWS_BYTES_N8 = Arrangement(
    "the same load's second n8 tile (columns 8-15): b0-b3 are d4-d7, b4-b7 d12-d15",
    element=BitAnd(I, 3) + 4 + 8 * _shr(I, 2), col=COL - 8)
NATURAL_8X16 = Arrangement(
    "four 8 x 16 matrices of a row-major 16 x 32 tile of 8-bit containers in natural order "
    "(rows 0-7 | 8-15 of columns 0-15, then of columns 16-31)", row=QUADRANT_ROW,
    col=COL + 16 * _shr(ROW, 4))
COLUMN_MAJOR = Arrangement(
    "the m16n8 accumulator narrowed to 8 bits (element i to byte i of one register) and "
    "stored column-major: D's column c is memory row c", row=COL, col=ROW)


def warp_tiles(elements_per_tile: int) -> Arrangement:
    """wgmma D: warp w's m16n8 accumulator tile at rows 16w, repeated every 8 columns."""
    return Arrangement(
        "warp w of the warpgroup holds rows 16w..16w+15; its elements repeat the m16n8 "
        f"tile every 8 columns ({elements_per_tile} per tile)", lane=sp.Mod(LANE, 32),
        element=sp.Mod(I, elements_per_tile), row=ROW + 16 * WARP,
        col=COL + 8 * sp.floor(I / elements_per_tile))


WARP_ROWS = Arrangement("warp w of the warpgroup holds rows 16w..16w+15 of the warp tile",
                        lane=sp.Mod(LANE, 32), row=ROW + 16 * WARP)


# wgmma's accumulator D of each K family and type, with the warp-level C/D layout whose warp
# tiles it is made of (the m16n8 accumulator layout is the same for every K).
WGMMA_D = (
    ("k16", "f16", "mma.m16n8k16.CD.f16@f16-bf16-f64"),
    ("k16", "f32", "mma.m16n8k16.CD.f32@f16-bf16-f64"),
    ("k8", "f32", "mma.m16n8k8.CD.f32@f16-bf16-tf32-f64"),
    ("k32", "s32", "mma.m16n8k32.CD.s32@s4-u4-s8-u8-e4m3-e5m2-e3m2-e2m3-e2m1"),
    ("k32", "f32", "mma.m16n8k32.CD.f32@s4-u4-s8-u8-e4m3-e5m2-e3m2-e2m3-e2m1"),
    ("k32", "f16", "mma.m16n8k32.CD.f16@s4-u4-s8-u8-e4m3-e5m2-e3m2-e2m3-e2m1"),
    ("k256", "s32", "mma.m16n8k256.CD.s32@b1"),
)
# wgmma's A in registers, with the warp-level A layout of the same K and type.  m64nNk256
# .b1 is left out: the warp-level m16n8k256 A is a known erratum in the spec (its first
# column case), so the relation would be checked against a refuted layout.
WGMMA_A = (
    ("mma.m16n8k16.A.f16-bf16", "wgmma.m64nNk16.A.f16-bf16"),
    ("mma.m16n8k8.A.tf32", "wgmma.m64nNk8.A.tf32"),
    ("mma.m16n8k32.A.s8-u8", "wgmma.m64nNk32.A.s8-u8"),
    ("mma.m16n8k32.A.e4m3-e5m2-e3m2-e2m3-e2m1", "wgmma.m64nNk32.A.e4m3-e5m2"),
)


# wgmma.mma_async.sp: warp w's rows of A and of the metadata are the warp-level sparse mma
# fragment of the same types (the metadata for every sparsity selector, from the same
# threads), and its accumulator is made of that mma.sp's C/D tiles, as the dense one's.
_K64 = "u8-s8-e4m3-e5m2-e3m2-e2m3-e2m1"
WGMMA_SP_A = (
    ("mma.sp.m16n8k32.A.f16-bf16", "wgmma.sp.m64nNk32.A.f16-bf16"),
    ("mma.sp.m16n8k16.A.tf32", "wgmma.sp.m64nNk16.A.tf32"),
    ("mma.sp.m16n8k64.A.u8-s8", "wgmma.sp.m64nNk64.A.s8-u8"),
    ("mma.sp.m16n8k64.A.e4m3-e5m2-e3m2-e2m3-e2m1", "wgmma.sp.m64nNk64.A.e4m3-e5m2"),
    ("mma.sp.m16n8k32.meta.f16-bf16", "wgmma.sp.m64nNk32.meta.f16-bf16"),
    ("mma.sp.m16n8k16.meta.tf32", "wgmma.sp.m64nNk16.meta.tf32"),
    (f"mma.sp.m16n8k64.meta.{_K64}", "wgmma.sp.m64nNk64.meta.e4m3-e5m2-s8-u8"),
)
WGMMA_SP_D = (
    ("k32", "f32", "mma.sp.m16n8k32.CD.f32@f16-bf16"),
    ("k32", "f16", "mma.sp.m16n8k32.CD.f16@f16-bf16"),
    ("k16", "f32", "mma.sp.m16n8k16.CD.f32@tf32"),
    ("k64", "s32", f"mma.sp.m16n8k64.CD.s32@{_K64}"),
    ("k64", "f32", f"mma.sp.m16n8k64.CD.f32@{_K64}"),
    ("k64", "f16", f"mma.sp.m16n8k64.CD.f16@{_K64}"),
)


# tcgen05.ld of a data-path layout (formal/prove/datapath.read_back): the ld form, the layout's
# letter, N (= the registers a thread gets).  Layout D (M = 128, cta_group::1) read with
# .32x32b gives thread t of warp w row 32w + t of D, register i its column i.
DATAPATH_READS: tuple[tuple[str, str, int], ...] = tuple(
    (f"tcgen05.ld.32x32b.x{n}.b32", "D", n) for n in (8, 16, 32, 64, 128))


def relation_table() -> list[Relation]:
    """Every relation; a wgmma accumulator is stated for every N at once (its map at the
    largest N, of which each N's is the first elements of every thread)."""
    rels = [
        Relation("ldmatrix.m8n8.x4.b16", "mma.m16n8k16.A.f16-bf16", NATURAL),
        Relation("ldmatrix.m8n8.x2.b16", "mma.m16n8k8.A.f16-bf16", STACKED),
        Relation("ldmatrix.m8n8.x1.b16", "movmatrix.m8n8.trans.b16.a", STACKED),
        Relation("ldmatrix.m8n8.x2.trans.b16", "mma.m16n8k16.B.f16-bf16", K_ROWS),
        Relation("ldmatrix.m8n8.x2.b16", "mma.m16n8k16.B.f16-bf16", N_ROWS),
        Relation("ldmatrix.m8n8.x4.b16", "mma.m16n8k32.A.s8-u8", BYTES_A),
        Relation("ldmatrix.m8n8.x2.b16", "mma.m16n8k32.B.s8-u8", BYTES_B),
        Relation("mma.m16n8k16.CD.f16@f16-bf16-f64", "stmatrix.m8n8.x2.b16", STACKED),
        Relation("ldmatrix.m8n8.x1.b16", "movmatrix.m8n8.trans.b16.d", STACKED),
        Relation("ldmatrix.m16n16.x2.trans.b8", "mma.m16n8k32.B.s8-u8", K_ROWS_BYTES),
        Relation("ldmatrix.m16n16.x2.trans.b8", "mma.m16n8k32.B.s8-u8", K_ROWS_BYTES_N8),
        Relation("ldmatrix.m16n16.x2.trans.b8x16.b6x16_p32",
                 "mma.m16n8k32.B.e4m3-e5m2-e3m2-e2m3-e2m1", K_ROWS_BYTES),
        Relation("ldmatrix.m8n16.x4.b8x16.b6x16_p32",
                 "mma.m16n8k32.A.e4m3-e5m2-e3m2-e2m3-e2m1", NATURAL_8X16),
        Relation("ldmatrix.m8n16.x4.b8x16.b4x16_p64",
                 "mma.m16n8k32.A.e4m3-e5m2-e3m2-e2m3-e2m1", NATURAL_8X16),
        Relation("mma.m16n8k32.CD.s32@s4-u4-s8-u8-e4m3-e5m2-e3m2-e2m3-e2m1",
                 "stmatrix.m16n8.x1.trans.b8", COLUMN_MAJOR),
    ]
    rels += [Relation(p, c, WARP_ROWS) for p, c in WGMMA_A]
    rels += [Relation(p, f"wgmma.m64nN{k}.D.{t}", warp_tiles(4)) for k, t, p in WGMMA_D]
    rels += [Relation(p, c, WARP_ROWS) for p, c in WGMMA_SP_A]
    rels += [Relation(p, f"wgmma.sp.m64nN{k}.D.{t}", warp_tiles(4)) for k, t, p in WGMMA_SP_D]
    return rels
