"""Names as values: a matrix move's instruction (``MoveInstr``), a layout's id (``LayoutId``).

A worked example.  The catalog's title
"Matrix Fragments for ldmatrix.m16n16.x2.trans.b8x16.b6x16_p32" is read by the grammar
(``grammar/fragment.lark``, ``move_instr``) into its parts, and the parse stage's
Transformer hands on one value::

    MoveInstr("ldmatrix", 16, 16, num=2, trans=True, dst="b8x16", src="b6x16_p32")

whose ``variant`` is ``m16n16.x2.trans`` (the spelled shape a layout is filed under), whose
``type`` is ``b8x16.b6x16_p32`` (a destination format and its packed source format) and
which prints itself as the title spelled it.  Nothing splits that text afterwards: the model
asks the value for ``m``, ``n``, ``num`` and ``trans``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MOVE_INSTRUCTIONS = ("ldmatrix", "stmatrix", "movmatrix")


@dataclass(frozen=True)
class MoveInstr:
    """One matrix move as a title names it: ``ldmatrix.m8n8.x4.trans.b16``."""

    instruction: str  # ldmatrix | stmatrix | movmatrix
    m: int  # rows of one matrix
    n: int  # columns of one matrix
    num: int = 0  # the .xN count (0: the title has none, as movmatrix)
    trans: bool = False
    dst: str = "b16"  # the element type (with a packed source: the destination format)
    src: str = ""  # the packed source format (b6x16_p32), or ""

    @property
    def shape(self) -> str:
        return f"m{self.m}n{self.n}"

    @property
    def count(self) -> int:
        """How many matrices move (1 where the title has no .xN)."""
        return self.num or 1

    @property
    def variant(self) -> str:
        """The spelled shape a layout is filed under: ``m8n8.x4.trans``."""
        num = f".x{self.num}" if self.num else ""
        return f"{self.shape}{num}{'.trans' if self.trans else ''}"

    @property
    def type(self) -> str:
        """The element type as the title spells it: ``b16``, ``b8x16.b6x16_p32``."""
        return self.dst + (f".{self.src}" if self.src else "")

    def __str__(self) -> str:
        return f"{self.instruction}.{self.variant}.{self.type}"


@dataclass(frozen=True)
class TmemInstr:
    """One tcgen05.ld / tcgen05.st form as a title names it: ``tcgen05.ld.16x256b.x2.
    pack::16b.b16`` is ``TmemInstr("tcgen05.ld", "16x256b", 2, True, "b16")``."""

    instruction: str  # tcgen05.ld | tcgen05.st
    shape: str  # 16x64b | 16x128b | 16x256b | 32x32b | 16x32bx2
    num: int  # the .xN count
    pack: bool  # .pack::16b (ld) / .unpack::16b (st)
    elem: str  # b32 | b16

    @property
    def variant(self) -> str:
        """The spelled form a layout is filed under: ``16x256b.x2.pack::16b``."""
        qual = ".unpack::16b" if self.instruction.endswith("st") else ".pack::16b"
        return f"{self.shape}.x{self.num}{qual if self.pack else ''}"

    def __str__(self) -> str:
        return f"{self.instruction}.{self.variant}.{self.elem}"


# ---- a layout's id ----------------------------------------------------------------------------

# the register layouts' operand tags (wgmma's accumulator is D: it has no C operand)
ID_OPERANDS = {"A": "A", "B": "B", "C/D": "CD", "metadata": "meta"}
TMEM_INSTRUCTIONS = ("tcgen05.ld", "tcgen05.st")
_FAMILIES = ("wgmma.sp", "wgmma", "wmma", "mma.sp", "mma", *MOVE_INSTRUCTIONS, *TMEM_INSTRUCTIONS)
_MOVE_NAME = re.compile(r"(?P<shape>m[0-9]+n[0-9]+(?:\.x[0-9]+)?(?:\.trans)?)"
                        r"\.(?P<type>b[0-9]+(?:x[0-9]+\.b[0-9]+x[0-9]+_p[0-9]+)?)"
                        r"(?:\.(?P<tail>[ad]))?")
_REGISTER_NAME = re.compile(r"(?P<shape>[^.]+)\.(?P<operand>[^.]+)\.(?P<types>[^.]+)"
                            r"(?:\.(?P<tail>[^.]+))?")


@dataclass(frozen=True)
class LayoutId:
    """A layout's id as a value: ``catalog:mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2#2`` is

        LayoutId("catalog", "mma", "m16n8k16", "CD", ("f32",),
                  for_types=("u8", "s8", "e4m3", "e5m2"), copy=2)

    -- the document's label, the instruction, the shape as the title spells it, the operand's
    tag (``A`` ``B`` ``CD`` ``D`` ``meta``; none for a move), the types (``any`` when none
    is named), a tail (the register arrangement ``row`` / ``col`` of ``mma.m8n8k4``, or
    movmatrix's ``a`` / ``d``), the multiplicand types a shared C/D layout is stated for
    (after ``@``), and which copy of a repeated section it is (after ``#``).  A move's id
    has no operand tag and one type: ``catalog:ldmatrix.m8n8.x4.trans.b16``,
    ``catalog:movmatrix.m8n8.trans.b16.a``.  ``str`` prints it; ``parse`` reads it back
    (``str(LayoutId.parse(text)) == text`` for every id; a name of no known family keeps
    its whole text in ``shape``)."""

    document: str
    instruction: str
    shape: str
    operand: str = ""
    types: tuple[str, ...] = ()
    tail: str = ""
    for_types: tuple[str, ...] = ()
    copy: int = 0

    @staticmethod
    def register(document: str, instruction: str, shape: str, operand: str,
                 types: Sequence[str], arrangement: str = "") -> LayoutId:
        """A register layout's id from the model's words: operand ``C/D`` is ``CD`` (``D``
        for wgmma), ``metadata`` is ``meta``."""
        op = ID_OPERANDS[operand]
        if instruction.startswith("wgmma") and operand == "C/D":
            op = "D"  # wgmma has no C operand: D is the accumulator
        return LayoutId(document, instruction, shape, op, tuple(types), arrangement)

    @staticmethod
    def move(document: str, move: MoveInstr, tail: str = "") -> LayoutId:
        """A matrix move's id: ``catalog:ldmatrix.m8n8.x4.b16`` (movmatrix: tail a | d)."""
        return LayoutId(document, move.instruction, move.variant, "", (move.type,), tail)

    @property
    def name(self) -> str:
        """The id without document, ``@`` and ``#``: ``mma.m16n8k16.CD.f32``."""
        if not self.instruction:
            return self.shape
        op = f".{self.operand}" if self.operand else ""
        tail = f".{self.tail}" if self.tail else ""
        return f"{self.instruction}.{self.shape}{op}.{'-'.join(self.types) or 'any'}{tail}"

    @property
    def short(self) -> str:
        """The id without its document: ``mma.m16n8k16.CD.f32@u8-s8-e4m3-e5m2``."""
        at = f"@{'-'.join(self.for_types)}" if self.for_types else ""
        return self.name + at + (f"#{self.copy}" if self.copy else "")

    @property
    def arrangement(self) -> str:
        """The register arrangement the id ends in (``row`` | ``col``), else ""."""
        return self.tail if self.tail in ("row", "col") else ""

    def __str__(self) -> str:
        return f"{self.document}:{self.short}" if self.document else self.short

    @classmethod
    def parse(cls, text: str) -> LayoutId:
        """The id ``text`` is (the inverse of ``str``)."""
        document, colon, rest = text.partition(":")
        if not colon:
            document, rest = "", text
        copy = 0
        head, hash_, n = rest.rpartition("#")
        if hash_ and n.isdigit() and not n.startswith("0"):
            rest, copy = head, int(n)
        for_types: tuple[str, ...] = ()
        head, at, named = rest.rpartition("@")
        if at and named:
            rest, for_types = head, tuple(named.split("-"))
        instruction = next((f for f in _FAMILIES if rest.startswith(f + ".")), "")
        body = rest[len(instruction) + 1:]
        if instruction in MOVE_INSTRUCTIONS:
            m = _MOVE_NAME.fullmatch(body)
            if m:
                return cls(document, instruction, m["shape"], "", (m["type"],),
                           m["tail"] or "", for_types, copy)
        elif instruction in TMEM_INSTRUCTIONS:  # tcgen05.ld.16x256b.x2.pack::16b.b16
            shape, dot, elem = body.rpartition(".")
            if dot and shape and elem:
                return cls(document, instruction, shape, "", (elem,), "", for_types, copy)
        elif instruction:
            m = _REGISTER_NAME.fullmatch(body)
            if m:
                types = () if m["types"] == "any" else tuple(m["types"].split("-"))
                parsed = cls(document, instruction, m["shape"], m["operand"], types,
                             m["tail"] or "", for_types, copy)
                if parsed.name == rest:
                    return parsed
        return cls(document, "", rest, for_types=for_types, copy=copy)
