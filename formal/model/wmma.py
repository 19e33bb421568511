"""The wmma fragments as layouts without a map: each one's register budget is an obligation.

The wmma section names no layout (which element a lane holds is architecture dependent), so
what can be checked is the count.  Every row of its tables gives one layout per shape and
operand it serves (``wmma.m16n16k16.A.u8-s8``), whose formula obligations are not applicable
and whose ``register-budget`` is proved or refuted like any other layout's.  A fragment of n
elements in each of 32 lanes holds 32 * n elements of an R x C tile:

    .u8 m16n16k16 A   two .b32 registers x four elements = 8;  32 * 8 = 256 = 16 x 16   exact
    .f16 m16n16k16 A  eight .f16x2 registers = 16 .f16;  32 * 16 = 512 = 2 x (16 x 16)
                      every element twice: replication, which the section allows (it leaves
                      the identity of each element unspecified) -- proved, with the copies
                      named in the verdict
    .f64 m8n8k4 C     a single .f64 register = 1;  32 * 1 = 32 < 8 x 8 = 64   refuted: the
                      fragment cannot hold the tile

Elements per register are the sentence's, or, where it names none ("of eight .f16x2
registers"), as many of the row's type as fill the register; more than fill it is refuted too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.ids import LayoutId
from ..base.variants import REGISTER_BITS, TYPE_BITS, Shape
from ..parse import syntax as S
from ..parse.document import ParsedDocument
from .layout import Layout

LANES = 32
UNSPECIFIED = "which element a lane holds is left to the architecture (the wmma section " \
              "states register counts only)"


@dataclass(frozen=True)
class WmmaBudget:
    """What a wmma fragment's count says of one tile: elements a lane, copies of the tile
    the warp holds (0 when not a whole number), and the faults (empty: the budget holds)."""

    elements: int
    copies: int
    faults: tuple[str, ...]


def wmma_layouts(doc: ParsedDocument, label: str) -> list[Layout]:
    """One layout per row, shape and operand of the document's wmma sections."""
    out: list[Layout] = []
    for ps in doc.sections:
        if ps.wmma is None:
            continue
        title = ps.section.title.text.strip()
        for row in ps.wmma.rows:
            operands = list(dict.fromkeys("C/D" if m in "CD" else m for m in row.matrices))
            for name in row.shapes:
                shape = Shape.parse(name)
                if shape is None:
                    continue
                for operand in operands:
                    # the same fragment stated again (another table's row) is numbered
                    # by the model's _unique_ids, as every repeated id is
                    lid = LayoutId.register(label, "wmma", name, operand, row.types)
                    table = S.TableFacts(row.source, row.types, row.fragment, row.source, None,
                                         None, None, None)
                    out.append(Layout(
                        id=str(lid), document=doc.document.name, section=ps.section.number,
                        title=title, span=row.source.strip().span(0), instruction="wmma",
                        shape=shape, operand=operand, types=row.types, source="text",
                        table=table, notes=(UNSPECIFIED,)))
    return out


def wmma_budget(fragment: S.FragmentDesc, types: tuple[str, ...],
                tile: tuple[int, int]) -> WmmaBudget | None:
    """The budget of a fragment of ``types`` over an R x C ``tile`` (None where the sentence
    does not say how many elements a register holds and the type does not tell)."""
    got = _per_register(fragment, types)
    if got is None:
        return None
    per, bits = got
    n = fragment.total.value if fragment.total is not None else fragment.registers.value * per
    faults: list[str] = []
    width = REGISTER_BITS.get(fragment.register_kind)
    names = " / ".join(f".{t}" for t in types)
    if width is not None and bits and per * bits > width:
        faults.append(f"{per} {names} elements take {per * bits} bits; a "
                      f".{fragment.register_kind} register has {width}")
    r, c = tile
    held = LANES * n
    copies = held // (r * c) if held % (r * c) == 0 else 0
    if not copies:
        faults.append(f"{n} element{'s' if n > 1 else ''} a lane x {LANES} lanes = {held}, "
                      f"but the {r} x {c} tile has {r * c} cells (a fragment holds the tile "
                      "once, or whole copies of it)")
    return WmmaBudget(n, copies, tuple(faults))


def _per_register(fr: S.FragmentDesc, types: tuple[str, ...]) -> tuple[int, int] | None:
    """(elements per register, bits of one element), None where unknown."""
    bits = max((TYPE_BITS.get(t, 0) for t in (*fr.types, *types)), default=0)
    if fr.per_register is not None:
        return fr.per_register.value, bits
    if fr.total is not None and fr.registers.value:
        return fr.total.value // fr.registers.value, bits
    width = REGISTER_BITS.get(fr.register_kind)
    if width is None or not bits:
        return None
    return max(1, width // bits), bits
