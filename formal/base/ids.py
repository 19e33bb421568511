"""Names as values: a matrix move's instruction (``MoveInstr``) and a layout's id (``LayoutId``).

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
