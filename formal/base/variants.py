"""The one table of PTX facts: types, registers, sparsity patterns, instruction variants.

Every other module asks this table instead of hard-coding a shape or a type: the type-name
checks, the register-budget obligation, the sparse obligations, PTX generation, the GPU runner
and the coverage lists in the tests.  Adding an instruction variant is one row of ``VARIANTS``.

A worked example of how the table is read: ``mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32``
is the row ``V("mma", "m16n8k32", "s8", "s8", "s32", "s32", 80, (7, 0))``; its A operand is a
16 x 32 tile, so each of the 32 lanes holds 16 * 32 / 32 = 16 elements of 8 bits, which is four
``.b32`` registers of four elements each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from .ids import LayoutId

# Bits of information in one element of each PTX type an mma fragment can hold.
TYPE_BITS: dict[str, int] = {
    "b1": 1,
    "u4": 4, "s4": 4, "e2m1": 4,
    "e3m2": 6, "e2m3": 6,
    "u8": 8, "s8": 8, "e4m3": 8, "e5m2": 8,
    "f16": 16, "bf16": 16,
    "tf32": 32, "f32": 32, "s32": 32,
    "f64": 64,
}

# Widths of the register slot an element may occupy.  The sub-byte float types of
# ``kind::f8f6f4`` sit in 8-bit containers; ``.e2m1`` is packed at 4 bits elsewhere.
CONTAINER_BITS: dict[str, tuple[int, ...]] = {
    **{t: (b,) for t, b in TYPE_BITS.items()},
    "e2m1": (4, 8),
    "e3m2": (8,),
    "e2m3": (8,),
    # the untyped elements of ldmatrix / stmatrix / movmatrix; a packed source format
    # (16 6-bit or 4-bit elements a row) arrives one element a byte, padded
    "b16": (16,), "b8": (8,), "b8x16.b6x16_p32": (8,), "b8x16.b4x16_p64": (8,),
}

INTEGER_TYPES = frozenset({"b1", "u4", "s4", "u8", "s8", "s32"})
FLOAT_TYPES = frozenset(TYPE_BITS) - INTEGER_TYPES

# Register kinds a fragment is made of, with their width in bits and the element types they
# may carry directly.
REGISTER_BITS: dict[str, int] = {
    "b32": 32, "f16x2": 32, "bf16x2": 32, "f32": 32, "s32": 32, "u32": 32,
    "b64": 64, "f64": 64,
}

# Every PTX fundamental type name (for "is this a real type" messages).
PTX_TYPES = frozenset({
    "b1", "b8", "b16", "b32", "b64", "b128", "u4", "s4", "u8", "s8", "u16", "s16",
    "u32", "s32", "u64", "s64", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64",
    "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3", "pred",
})

COUNT_WORDS: dict[str, int] = {
    "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16,
    "thirty two": 32, "thirty-two": 32, "sixty four": 64, "sixty-four": 64,
}

OPERANDS = ("A", "B", "C/D", "metadata")
# The warp-level matrix moves: their fragments are stated per variant (``ldmatrix.m8n8.x4.b16``)
MOVES = ("ldmatrix", "stmatrix", "movmatrix")
ELEMENT_LETTER = {"A": "a", "B": "b", "C/D": "c", "metadata": "m"}
HEADER_NAMES = {"A": ("atype",), "B": ("btype",), "C/D": ("ctype", "dtype")}


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    @staticmethod
    @cache  # a run asks for the same few shapes tens of thousands of times (the evidence)
    def parse(text: str) -> Shape | None:
        """``m16n8k32`` -> Shape(16, 8, 32); anything else -> None."""
        t = text.strip().lstrip(".")
        if not t.startswith("m") or "n" not in t or "k" not in t:
            return None
        m, _, rest = t[1:].partition("n")
        n, _, k = rest.partition("k")
        if not (m.isdigit() and n.isdigit() and k.isdigit()):
            return None
        return Shape(int(m), int(n), int(k))

    def __str__(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"

    def tile(self, operand: str, sparse: bool = False) -> tuple[int, int]:
        if operand == "A":
            return (self.m, self.k)
        if operand == "B":
            return (self.k, self.n)
        return (self.m, self.n)


@dataclass(frozen=True)
class Sparsity:
    """How ``mma.sp`` stores A for one element type.

    ``chunk`` consecutive elements of a row hold ``nonzeros`` non-zeros.  The metadata names
    each non-zero by an index of ``index_bits`` bits counted in units of ``unit`` elements
    (a 4-bit type is indexed by pairs; ``.tf32`` by 16-bit halves, so one ``.tf32`` spans
    two index units); ``slots`` indices describe one chunk.
    """

    chunk: int
    nonzeros: int
    unit_elements: float  # elements per index unit (2 for 4-bit pairs, 0.5 for tf32 halves)
    index_bits: int
    slots: int
    invalid_nibbles: tuple[int, ...]
    meaningful_fields: tuple[int, ...] = ()  # restricted encodings of one chunk's slots

    @property
    def units_per_chunk(self) -> int:
        return round(self.chunk / self.unit_elements)


_ORDERED_INVALID = (0b0000, 0b0101, 0b1010, 0b1111)

SPARSITY: dict[str, Sparsity] = {
    **{t: Sparsity(4, 2, 1, 2, 2, _ORDERED_INVALID) for t in ("f16", "bf16")},
    **{t: Sparsity(4, 2, 1, 2, 2, _ORDERED_INVALID)
       for t in ("u8", "s8", "e4m3", "e5m2", "e3m2", "e2m3")},
    "tf32": Sparsity(2, 1, 0.5, 2, 2, _ORDERED_INVALID, (0b0100, 0b1110)),
    **{t: Sparsity(8, 4, 2, 2, 2, _ORDERED_INVALID) for t in ("u4", "s4", "e2m1")},
}


# Products a warp computes at once, by (instruction, shape, A type): m8n8k4 with .f16 runs
# four 8x8x4 products, one per quad-pair (formal.model.layout.REPLICATION adds the lane groups).
REPLICATED: dict[tuple[str, str, str], int] = {("mma", "m8n8k4", "f16"): 4}

def container_bits(t: str, kind: str = "") -> int:
    """Bits one element of type ``t`` occupies in a register under ``.kind`` ``kind``: the
    sub-byte floats of ``kind::f8f6f4`` (and its block-scaled ``kind::mxf8f6f4``) take their
    8-bit container (``CONTAINER_BITS``); elsewhere (``.e2m1`` of ``kind::mxf4``) a type is
    packed at its own width."""
    return max(CONTAINER_BITS[t]) if kind in ("f8f6f4", "mxf8f6f4") else TYPE_BITS[t]


def sparsity_of(atype: str, kind: str = "") -> Sparsity | None:
    """The compression of A: 8-bit containers compress 2:4 whatever their payload."""
    if container_bits(atype, kind) == 8:
        return SPARSITY["u8"]
    return SPARSITY.get(atype)


# Oldest PTX ISA version that knows each target.
TARGET_PTX: dict[int, tuple[int, int]] = {
    70: (6, 0), 75: (6, 3), 80: (7, 0), 86: (7, 1), 89: (7, 8), 90: (7, 8),
    100: (8, 6), 120: (8, 7),
}


def parse_arch(arch: str) -> tuple[int, str]:
    """``sm_90`` -> (90, ""); ``sm_120a`` -> (120, "a"); anything else raises ValueError."""
    a = arch.strip().lower()
    if not a.startswith("sm_"):
        raise ValueError(f"not an architecture: {arch!r} (expected e.g. sm_90)")
    digits = a[3:].rstrip("af")
    suffix = a[3 + len(digits):]
    if not digits.isdigit() or suffix not in ("", "a", "f"):
        raise ValueError(f"not an architecture: {arch!r} (expected e.g. sm_90 or sm_120a)")
    return int(digits), suffix


def _family(sm: int) -> int:
    return sm // 10


# ---- the support rules: one predicate each, for every family ---------------------------------


def runs_on(v: Variant, sm: int, suffix: str = "a") -> bool:
    """Can a device of compute capability ``sm`` (90 for an H100) execute ``v``?

    A variant of a plain target runs on every later architecture; an arch-specific one
    (``sm_120a``) only on its own family (and on the further ``families`` its row names: the
    sm_100a moves also run on sm_120a), and only when the code is built for the ``a`` target
    (a device always offers its own ``a`` features).
    """
    if sm < v.min_sm:
        return False
    if v.arch_suffix:
        return _family(sm) in (_family(v.min_sm), *v.families) and suffix == "a"
    return True


def assembles_for(v: Variant, arch: str) -> bool:
    """Should ``ptxas -arch=<arch>`` accept ``v``?  (The ptxas tests hold us to this.)"""
    sm, suffix = parse_arch(arch)
    return runs_on(v, sm, suffix)


def ptx_version(v: Variant, arch: str | None = None) -> tuple[int, int]:
    """The ``.version`` of ``v``'s kernel: the variant's own, or the target's if later."""
    sm, _ = parse_arch(arch or v.target)
    known = [ver for s, ver in TARGET_PTX.items() if s <= sm]
    return max([v.ptx, *known[-1:]])


def selects(only: str | None, key: str) -> bool:
    """Does ``--only`` pick the row ``key``?  ``only`` is a comma-separated list of parts of
    keys (``mma.m16n8k8.f32.tf32,wgmma.m64n8k8,ldmatrix.m8n8.x4``); None or "" picks all."""
    return not only or any(part and part in key for part in only.split(","))


# The instruction families, each a row family of the one table (``formal.base.variants`` holds
# mma / mma.sp, ``formal.base.matrix_variants`` the moves and wgmma / wgmma.sp).
MMA_FAMILIES = ("mma", "mma.sp")
WGMMA_FAMILIES = ("wgmma", "wgmma.sp")
TMEM_FAMILIES = ("tcgen05.ld", "tcgen05.st")
FAMILIES = (*MMA_FAMILIES, *MOVES, *WGMMA_FAMILIES, *TMEM_FAMILIES)

# Rows x columns (in elements) of one matrix of each move shape.
MOVE_SHAPES: dict[str, tuple[int, int]] = {
    "m8n8": (8, 8), "m16n16": (16, 16), "m8n16": (8, 16), "m16n8": (16, 8),
}

# The packed source formats of ldmatrix .m16n16 / .m8n16: (payload bits, padding bits) of
# one 16-element row; the destination holds each element in the low bits of a byte.
PACKED_FORMATS: dict[str, tuple[int, int]] = {"b6x16_p32": (6, 32), "b4x16_p64": (4, 64)}


def move_tile(m: int, n: int, num: int, trans: bool) -> tuple[int, int]:
    """The tile of a move's fragment in memory cells: ``num`` m x n matrices stacked one
    above the other, each as it lies in memory -- with ``.trans`` as its n columns of m
    elements (``stmatrix.m16n8.x2.trans.b8``: 2 x 8 rows of 16 bytes, a 16 x 16 tile)."""
    rows, cols = (n, m) if trans else (m, n)
    return rows * num, cols


# ---- tcgen05.ld / tcgen05.st: tensor memory <-> registers (issue 25) --------------------------
# Each data-movement shape ``lanes x size``: (TMEM lanes a warp accesses, bits of each lane one
# ``.num`` repetition moves, the largest ``.num``).  ``.16x32bx2`` is two ``.16x32b`` accesses,
# so 64 bits a lane; ``.pack::16b`` / ``.unpack::16b`` takes two 16-bit halves of adjacent
# 32-bit columns into one register, so a register covers two columns.
TMEM_SHAPES: dict[str, tuple[int, int, int]] = {
    "32x32b": (32, 32, 128), "16x64b": (16, 64, 128), "16x128b": (16, 128, 64),
    "16x256b": (16, 256, 32), "16x32bx2": (16, 64, 128)}
TMEM_NUMS = (1, 2, 4, 8, 16, 32, 64, 128)


def tmem_tile(shape: str, num: int, pack: bool) -> tuple[int, int]:
    """TMEM lanes x 32-bit columns one tcgen05.ld/st touches: ``16x256b.x2`` is 16 x 16;
    with ``.pack::16b`` each register holds two columns' low halves, so 16 x 32."""
    lanes, bits, _ = TMEM_SHAPES[shape]
    return lanes, bits * num // 32 * (2 if pack else 1)


def tmem_registers(shape: str, num: int) -> int:
    """``.b32`` registers a thread holds (PTX ISA Table 47): ``16x128b.x4`` -> 8."""
    lanes, bits, _ = TMEM_SHAPES[shape]
    return lanes * bits * num // (32 * 32)


@dataclass(frozen=True)
class Variant:
    """One instruction variant of any family: the unit of PTX generation and of GPU evidence.

    mma / mma.sp: ``a``, ``b``, ``c``, ``d`` types, ``kind``, ``op`` (``.and.popc`` for
    ``.b1``), ``scale``, ``alayout`` / ``blayout``; the sparsity selectors are runs of one
    row.  Moves (ldmatrix, stmatrix, movmatrix): ``a`` is the element type (``b16``, ``b8``,
    ``b8x16.b6x16_p32``), ``num`` 1, 2 or 4 (0 for movmatrix), ``trans``.  wgmma / wgmma.sp:
    ``a``, ``b``, ``c`` (= ``d``), ``a_source`` "reg" | "smem", and (sparse) one row per
    ``selector``.  The key names the row in evidence files: ``mma.m16n8k16.f32.f16.f16.f32``,
    ``ldmatrix.m8n8.x4.trans.b16``, ``wgmma.m64n64k16.f32.f16.f16.rs``,
    ``wgmma.sp.m64n64k32.f32.f16.f16.ss.sel1``.  tcgen05.mma: ``kind``, the types, and the
    ``datapath`` layout D lands by: ``tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD``.
    """

    instruction: str  # the family: one of FAMILIES
    shape: str
    a: str
    b: str = ""
    c: str = ""
    d: str = ""
    min_sm: int = 75
    ptx: tuple[int, int] = (6, 5)
    kind: str = ""  # "" | "f8f6f4"
    op: str = ""  # ".and.popc" | ".xor.popc" for .b1
    arch_suffix: str = ""  # "a" for sm_120a-only variants
    scale: str = ""  # block-scale type for .block_scale variants ("ue8m0")
    # .alayout / .blayout where the row lets them vary (m8n8k4 with .f16: "row" | "col");
    # "" is the only form every other shape takes, .row.col.
    alayout: str = ""
    blayout: str = ""
    num: int = 0  # moves: matrices moved (.x1 / .x2 / .x4)
    trans: bool = False  # moves: .trans
    a_source: str = ""  # wgmma: "reg" | "smem"
    # further families an ``a`` target also runs on (the sm_100a moves: sm_120a too)
    families: tuple[int, ...] = ()
    selector: int = 0  # wgmma.sp: the sparsity selector (an immediate)
    pack: bool = False  # tcgen05.ld .pack::16b / tcgen05.st .unpack::16b
    # block-scaled mma whose scale factors a run passes (``BLOCK_SCALE_VARIANTS``): the
    # .scale_vec::NX (1, 2, 4); 0 for the older rows, whose kernels pass unit factors
    scale_vec: int = 0
    # tcgen05.mma: the data-path layout (A-G, PTX ISA 9.7.16.10.5) D lands in tensor memory by
    datapath: str = ""
    scale_ids: tuple[int, ...] = ()  # block-scaled tcgen05.mma: the idesc's (A, B) scale IDs
    ws: bool = False  # tcgen05.mma issued as .ws where its data path takes both (Layout D)

    @property
    def tmem(self) -> bool:
        return self.instruction in TMEM_FAMILIES

    @property
    def sparse(self) -> bool:
        return self.instruction in ("mma.sp", "wgmma.sp")

    @property
    def wgmma(self) -> bool:
        return self.instruction in WGMMA_FAMILIES

    @property
    def move(self) -> bool:
        return self.instruction in MOVES

    @cached_property  # asked thousands of times a run (the evidence's index of runs)
    def key(self) -> str:
        """The row's name in evidence files (see the class): rows with a choice of layouts
        name it after the shape, as the opcode does: ``mma.m8n8k4.col.row.f32.f16.f16.f32``."""
        if self.wgmma:
            src = "rs" if self.a_source == "reg" else "ss"
            op = self.op.replace(".", "_") if self.op else ""
            sel = f".sel{self.selector}" if self.sparse else ""
            return f"{self.instruction}.{self.shape}.{self.c}.{self.a}.{self.b}{op}.{src}{sel}"
        if self.move or self.tmem:
            return f"{self.instruction}.{self.spelled_shape}.{self.a}"
        if self.datapath:  # tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD
            sel = f".sel{self.selector}" if self.instruction.endswith(".sp") else ""
            sel = (".ws" if self.ws else "") + sel
            kind = f"kind::{self.kind}"
            if self.scale:  # ...kind::mxf4.block_scale.scale_vec::2X.ue8m0....layoutD.sf0_2
                kind += f".block_scale.scale_vec::{self.scale_vec}X.{self.scale}"
                sel += ".sf" + "_".join(map(str, self.scale_ids))
            return (f"{self.instruction}.{self.shape}.{kind}.{self.d}.{self.a}."
                    f"{self.b}.layout{self.datapath}{sel}")
        kind = f".kind::{self.kind}" if self.kind else ""
        kind += ".block_scale" if self.scale else ""
        kind += f".scale_vec::{self.scale_vec}X" if self.scale_vec else ""
        op = self.op.replace(".", "_") if self.op else ""
        op += f".{self.scale}" if self.scale_vec else ""
        arr = f".{self.alayout}.{self.blayout}" if self.alayout or self.blayout else ""
        return (f"{self.instruction}{kind}.{self.shape}{arr}.{self.d}.{self.a}.{self.b}."
                f"{self.c}{op}")

    @property
    def spelled_shape(self) -> str:
        """A move's shape as the catalog's titles spell it: ``m8n8.x4.trans``,
        ``16x256b.x2.pack::16b``."""
        if self.tmem:
            pack = ("pack" if self.instruction == "tcgen05.ld" else "unpack") + "::16b"
            return f"{self.shape}.x{self.num}{'.' + pack if self.pack else ''}"
        num = f".x{self.num}" if self.num else ""
        return f"{self.shape}{num}{'.trans' if self.trans else ''}"

    @property
    def opcode(self) -> str:
        """The moves' and wgmma's PTX opcode (mma's is written by ``formal.execute.ptx``)."""
        if self.wgmma:
            sp = ".sp" if self.sparse else ""
            return (f"wgmma.mma_async{sp}.sync.aligned.{self.shape}.{self.c}.{self.a}.{self.b}"
                    f"{self.op}")
        if self.tmem:
            return f"{self.instruction}.sync.aligned.{self.spelled_shape}.b32"
        trans = ".trans" if self.trans else ""
        if self.instruction == "movmatrix":
            return f"movmatrix.sync.aligned.{self.shape}{trans}.{self.a}"
        return (f"{self.instruction}.sync.aligned.{self.shape}.x{self.num}{trans}.shared."
                f"{self.a}")

    @property
    def layouts(self) -> tuple[str, str]:
        """The .alayout and .blayout qualifiers of the opcode (``("row", "col")`` unless the
        row says otherwise)."""
        return (self.alayout or "row", self.blayout or "col")

    def arrangement(self, operand: str) -> str:
        """``row`` | ``col``: the qualifier that governs ``operand``'s layout ("" for C/D and
        metadata, which have none)."""
        if operand == "A":
            return self.layouts[0]
        if operand == "B":
            return self.layouts[1]
        return ""

    @property
    def target(self) -> str:
        return f"sm_{self.min_sm}{self.arch_suffix}"

    @property
    def selectors(self) -> tuple[int, ...]:
        """The sparsity selectors of the row: every legal one for mma.sp (one run each), the
        row's own for wgmma.sp."""
        if self.instruction == "wgmma.sp":
            return (self.selector,)
        if not self.sparse:
            return ()
        return tuple(range(selector_count(self.shape, self.a, self.kind)))

    @property
    def runs(self) -> tuple[int | None, ...]:
        """One entry per run of the variant: each legal selector, or None for plain mma."""
        return self.selectors or (None,)

    @property
    def dims(self) -> Shape:
        s = Shape.parse(self.shape)
        assert s is not None, self.shape
        return s

    @property
    def n(self) -> int:
        return self.dims.n

    @property
    def k(self) -> int:
        return self.dims.k

    @property
    def types(self) -> dict[str, str]:
        return {"a": self.a, "b": self.b, "c": self.c, "d": self.d}

    @property
    def sparsity(self) -> Sparsity | None:
        """How A is compressed: by the element's container, so ``kind::f8f6f4``'s 4- and
        6-bit types in 8-bit containers are 2:4 like ``.u8``."""
        if not self.sparse:
            return None
        return sparsity_of(self.a, self.kind)

    @property
    def replication(self) -> int:
        """Independent products one warp computes (4 for m8n8k4 with .f16, else 1)."""
        return REPLICATED.get((self.instruction, self.shape, self.a), 1)

    @property
    def threads(self) -> int:
        return 128 if self.wgmma else 32

    def element_bits(self, operand: str = "A") -> int:
        """Bits one element of ``operand`` occupies in its register ("A", "B", "C", "D"); a
        move's element (a packed 6/4-bit one sits in a byte) whatever the operand."""
        if self.move or self.tmem:
            return int(self.a[1:]) if self.tmem else 8 if self.a.startswith("b8") else 16
        t = {"A": self.a, "B": self.b, "C": self.c, "D": self.d, "C/D": self.c}[operand]
        return container_bits(t, self.kind)

    @property
    def source_bits(self) -> int:
        """A move's element as it lies in memory: 16 for .b16, 8 for .b8, 6 for
        .b8x16.b6x16_p32 (the data of its 8-bit container)."""
        packed = self.packed
        return packed[0] if packed else self.element_bits()

    @property
    def packed(self) -> tuple[int, int] | None:
        """(payload bits, padding bits) of a packed ldmatrix source format, else None."""
        return PACKED_FORMATS.get(self.a.partition(".")[2])

    @property
    def matrix(self) -> tuple[int, int]:
        """One moved matrix as it lies in memory: rows (one address each) x elements a row
        (moves) -- or D's rows x columns (wgmma).  With ``.trans`` an m x n matrix lies as
        its n columns of m elements: ``stmatrix.m16n8.x1.trans.b8`` is 8 rows of 16 bytes."""
        if self.wgmma or self.tmem:
            return self.tile if self.tmem else (64, self.n)
        return move_tile(*MOVE_SHAPES[self.shape], 1, self.trans)

    @property
    def matrices(self) -> int:
        return self.num or 1

    @property
    def tile(self) -> tuple[int, int]:
        """The register fragment's tile of a move (its matrices stacked one above the other)
        or of wgmma's D."""
        if self.wgmma:
            return self.matrix
        if self.tmem:
            return tmem_tile(self.shape, self.num, self.pack)
        return move_tile(*MOVE_SHAPES[self.shape], self.matrices, self.trans)

    @property
    def registers(self) -> int:
        """``.b32`` registers of the moved fragment a lane holds (moves, tcgen05.ld/st)."""
        if self.tmem:
            return tmem_registers(self.shape, self.num)
        r, c = self.tile
        return r * c * self.element_bits() // (32 * 32)

    def elements(self, operand: str) -> int:
        """Elements of ``operand`` each lane holds (sparse A: the non-zeros); wgmma: of A
        ("A") or of the accumulator (any other operand)."""
        if self.wgmma:
            if operand == "A":
                return 64 * self.k // (128 * (2 if self.sparse else 1))
            return 64 * self.n // 128
        s = self.dims
        rows, cols = s.tile("C/D" if operand in ("C", "D") else operand)
        cells = rows * cols * self.replication
        if operand == "A" and self.sparse:
            cells //= 2
        return cells // 32

    def words(self, operand: str) -> int:
        """32-bit words each lane holds for ``operand`` ("A", "B", "C", "D", "E" metadata);
        wgmma: of A ("A") or of the accumulator."""
        if self.wgmma:
            if operand == "A":  # sparse A: half of the 64 x K elements are stored
                return 64 * self.k * TYPE_BITS[self.a] // (128 * 32 * (2 if self.sparse else 1))
            return 64 * self.n * TYPE_BITS[self.c] // (128 * 32)
        if operand == "E":
            return 1 if self.sparse else 0
        if operand == "S":  # scale-a-data, scale-b-data and the four selectors, a byte each
            return 3 if self.scale_vec else 0
        return max(1, self.elements(operand) * self.element_bits(operand) // 32)


# Every .alayout / .blayout combination, for the rows that allow them all.
ANY_LAYOUTS: tuple[tuple[str, str], ...] = (
    ("row", "col"), ("row", "row"), ("col", "col"), ("col", "row"))


def _rows(instruction: str, shape: str, ab: Iterable[str], cd: Iterable[str], sm: int,
          ptx: tuple[int, int], kind: str = "", mixed: bool = False, suffix: str = "",
          op: str = "", scale: str = "",
          layouts: Sequence[tuple[str, str]] = (("", ""),)) -> list[Variant]:
    out = []
    ab = tuple(ab)
    for a in ab:
        for b in (ab if mixed else (a,)):
            for c in cd:
                for al, bl in layouts:
                    out.append(Variant(instruction, shape, a, b, c, c, sm, ptx, kind, op,
                                       suffix, scale, al, bl))
    return out


_FP8 = ("e4m3", "e5m2")
F8F6F4_TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")

VARIANTS: tuple[Variant, ...] = tuple(
    _rows("mma", "m8n8k4", ["f16"], ["f16", "f32"], 70, (6, 4), layouts=ANY_LAYOUTS)
    + _rows("mma", "m8n8k4", ["f64"], ["f64"], 80, (7, 0))
    + _rows("mma", "m8n8k16", ["s8", "u8"], ["s32"], 75, (6, 5), mixed=True)
    + _rows("mma", "m8n8k32", ["s4", "u4"], ["s32"], 75, (6, 5), mixed=True)
    + _rows("mma", "m8n8k128", ["b1"], ["s32"], 80, (7, 1), op=".and.popc")
    + _rows("mma", "m8n8k128", ["b1"], ["s32"], 75, (7, 0), op=".xor.popc")
    + _rows("mma", "m16n8k4", ["tf32"], ["f32"], 80, (7, 0))
    + _rows("mma", "m16n8k4", ["f64"], ["f64"], 90, (7, 8))
    + _rows("mma", "m16n8k8", ["f16"], ["f16", "f32"], 75, (6, 5))
    + _rows("mma", "m16n8k8", ["bf16"], ["f32"], 80, (7, 0))
    + _rows("mma", "m16n8k8", ["tf32"], ["f32"], 80, (7, 0))
    + _rows("mma", "m16n8k8", ["f64"], ["f64"], 90, (7, 8))
    + _rows("mma", "m16n8k16", ["f16"], ["f16", "f32"], 80, (7, 0))
    + _rows("mma", "m16n8k16", ["bf16"], ["f32"], 80, (7, 0))
    + _rows("mma", "m16n8k16", ["f64"], ["f64"], 90, (7, 8))
    + _rows("mma", "m16n8k16", ["s8", "u8"], ["s32"], 80, (7, 0), mixed=True)
    + _rows("mma", "m16n8k16", _FP8, ["f16", "f32"], 89, (8, 7), mixed=True)
    + _rows("mma", "m16n8k32", ["s4", "u4"], ["s32"], 80, (7, 0), mixed=True)
    + _rows("mma", "m16n8k32", ["s8", "u8"], ["s32"], 80, (7, 0), mixed=True)
    + _rows("mma", "m16n8k32", _FP8, ["f16"], 89, (8, 7), mixed=True)
    + _rows("mma", "m16n8k32", _FP8, ["f32"], 89, (8, 4), mixed=True)
    + _rows("mma", "m16n8k32", F8F6F4_TYPES, ["f16", "f32"], 120, (8, 7), kind="f8f6f4",
            mixed=True, suffix="a")
    + _rows("mma", "m16n8k64", ["s4", "u4"], ["s32"], 80, (7, 0), mixed=True)
    + _rows("mma", "m16n8k64", ["e2m1"], ["f32"], 120, (8, 7), kind="mxf4", suffix="a",
            scale="ue8m0")
    + _rows("mma", "m16n8k128", ["b1"], ["s32"], 80, (7, 1), op=".and.popc")
    + _rows("mma", "m16n8k128", ["b1"], ["s32"], 80, (7, 0), op=".xor.popc")
    + _rows("mma", "m16n8k256", ["b1"], ["s32"], 80, (7, 1), op=".and.popc")
    + _rows("mma", "m16n8k256", ["b1"], ["s32"], 80, (7, 0), op=".xor.popc")
    + _rows("mma.sp", "m16n8k16", ["f16"], ["f16", "f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k16", ["bf16"], ["f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k32", ["f16"], ["f16", "f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k32", ["bf16"], ["f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k8", ["tf32"], ["f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k16", ["tf32"], ["f32"], 80, (8, 5))
    + _rows("mma.sp", "m16n8k32", ["s8", "u8"], ["s32"], 80, (8, 5), mixed=True)
    + _rows("mma.sp", "m16n8k64", ["s8", "u8"], ["s32"], 80, (8, 5), mixed=True)
    + _rows("mma.sp", "m16n8k64", _FP8, ["f32"], 89, (8, 5), mixed=True)
    # ptxas: "mma with F16 accumulator and F8 floating point type" is sm_120a-only when sparse
    + _rows("mma.sp", "m16n8k64", _FP8, ["f16"], 120, (8, 7), mixed=True, suffix="a")
    + _rows("mma.sp", "m16n8k64", F8F6F4_TYPES, ["f16", "f32"], 120, (8, 7), kind="f8f6f4",
            mixed=True, suffix="a")
    + _rows("mma.sp", "m16n8k64", ["s4", "u4"], ["s32"], 80, (8, 5), mixed=True)
    + _rows("mma.sp", "m16n8k128", ["s4", "u4"], ["s32"], 80, (8, 5), mixed=True)
    + _rows("mma.sp", "m16n8k128", ["e2m1"], ["f32"], 120, (8, 7), kind="mxf4", suffix="a",
            scale="ue8m0")
)


@cache
def legal_types(instruction: str, shape: str, operand: str) -> frozenset[str]:
    """Element types the table allows for one operand of one shape (the table is constant:
    each question answered once)."""
    out: set[str] = set()
    for v in VARIANTS:
        if v.instruction == instruction and v.shape == shape:
            if operand == "A":
                out.add(v.a)
            elif operand == "B":
                out.add(v.b)
            elif operand == "C/D":
                out.update((v.c, v.d))
    return frozenset(out)


def shapes(instruction: str) -> frozenset[str]:
    return frozenset(v.shape for v in VARIANTS if v.instruction == instruction)


def selector_count(shape: str, atype: str, kind: str = "") -> int:
    """How many sparsity-selector values are legal: 4 / groups-of-lanes holding metadata."""
    s = Shape.parse(shape)
    sp = sparsity_of(atype, kind)
    if s is None or sp is None:
        return 0
    chunks = s.m * (s.k // sp.chunk)
    bits = chunks * sp.slots * sp.index_bits
    lanes_needed = bits // 32  # 32 bits of metadata per contributing lane
    per_group = max(1, lanes_needed // 8)  # 8 groups of four lanes
    return 4 // per_group


# ---- which layout serves which variant --------------------------------------------------------

# The operands a variant's kernel reads, in the order of its registers.
def operands_of(v: Variant) -> tuple[str, ...]:
    return ("A", "B", "C/D", "metadata") if v.sparse else ("A", "B", "C/D")


def record_serves(v: Variant, r: Mapping[str, Any]) -> bool:
    """``layout_serves`` for a layout record in ``formal.writers.export``'s JSON form."""
    return layout_serves(v, str(r.get("operand")), str(r.get("instruction")),
                         str(r.get("shape")), r.get("types") or (), str(r.get("id", "")),
                         record_arrangement(r))


def layout_serves(v: Variant, operand: str, instruction: str, shape: str,
                  types: Iterable[str], layout_id: str = "", arrangement: str = "") -> bool:
    """Does a layout (instruction, shape, operand, types) describe ``operand`` of ``v``?

    A, B and metadata layouts match by their element types (A's type for metadata); C/D
    layouts by the accumulator type, and where the id names the A types it was written for
    (``...CD.f32@u8-s8``), by those too.  A layout written for one ``.row`` / ``.col``
    qualifier (``arrangement``, m8n8k4 .f16) serves only the variants that use it.
    """
    if instruction != v.instruction or shape != v.shape:
        return False
    if arrangement and arrangement != v.arrangement(operand):
        return False
    ts = set(types)
    if operand == "A" or operand == "metadata":
        return v.a in ts
    if operand == "B":
        return v.b in ts
    if operand == "C/D":
        if v.c not in ts or v.d not in ts:
            return False
        # a repeated section's copy is ``...@s4-u4-e2m1#2`` (formal.model.resolve): the
        # copy's number is not a type
        for_types = LayoutId.parse(layout_id).for_types
        return not for_types or v.a in for_types
    return False


def record_arrangement(r: Mapping[str, Any]) -> str:
    """A layout record's ``arrangement`` (``row`` | ``col`` | ""); records exported before
    the field existed say it only as the id's last part (``...A.f16.row``)."""
    if "arrangement" in r:
        return str(r.get("arrangement") or "")
    return LayoutId.parse(str(r.get("id", ""))).arrangement


def records_by_operand(v: Variant, records: Sequence[Mapping[str, Any]]) \
        -> dict[str, Mapping[str, Any]]:
    """The first layout record (``formal.writers.export`` JSON) serving each operand of ``v``;
    records with a cell or field table come first."""
    out: dict[str, Mapping[str, Any]] = {}
    for op in operands_of(v):
        hits = [r for r in records
                if r.get("operand") == op and record_serves(v, r)]
        hits.sort(key=lambda r: not (r.get("cells") or r.get("fields")))
        if hits:
            out[op] = hits[0]
    return out
