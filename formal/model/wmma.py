"""The wmma fragments' register budgets: does each fragment hold at least a lane's share of
its tile, and a whole number of shares?

The wmma section names no layout (which element a lane holds is architecture dependent), so
what can be checked is the count.  A fragment of n elements in each of 32 lanes holds 32 * n
elements of an R x C tile:

    .u8 m16n16k16 A   two .b32 registers x four elements = 8;  32 * 8 = 256 = 16 x 16   exact
    .f16 m16n16k16 A  eight .f16x2 registers = 16 .f16;  32 * 16 = 512 = 2 x (16 x 16)
                      every element twice: replication, which the section allows (it leaves
                      the identity of each element unspecified) -- no finding
    .f64 m8n8k4 C     a single .f64 register = 1;  32 * 1 = 32 < 8 x 8 = 64   an error: the
                      fragment cannot hold the tile

Elements per register are the sentence's, or, where it names none ("of eight .f16x2
registers"), as many of the row's type as fill the register; more than fill it is an error
too.
"""

from __future__ import annotations

from ..base.source import Finding, error
from ..base.variants import REGISTER_BITS, TYPE_BITS, Shape
from ..parse.document import ParsedDocument
from ..parse.wmma import WmmaRow

LANES = 32


def wmma_budgets(doc: ParsedDocument) -> list[Finding]:
    """One error per fragment row whose count cannot hold a tile it serves."""
    out: list[Finding] = []
    for ps in doc.sections:
        if ps.wmma is None:
            continue
        for row in ps.wmma.rows:
            out.extend(_row_budget(row))
    return out


def _per_register(row: WmmaRow) -> tuple[int, int] | None:
    """(elements per register, bits of one element) of the row, None where unknown."""
    fr = row.fragment
    bits = max((TYPE_BITS.get(t, 0) for t in (*fr.types, *row.types)), default=0)
    if fr.per_register is not None:
        return fr.per_register.value, bits
    if fr.total is not None and fr.registers.value:
        return fr.total.value // fr.registers.value, bits
    width = REGISTER_BITS.get(fr.register_kind)
    if width is None or not bits:
        return None
    return max(1, width // bits), bits


def _row_budget(row: WmmaRow) -> list[Finding]:
    fr = row.fragment
    got = _per_register(row)
    if got is None:
        return []
    per, bits = got
    n = fr.total.value if fr.total is not None else fr.registers.value * per
    faults: list[str] = []
    width = REGISTER_BITS.get(fr.register_kind)
    types = " / ".join(f".{t}" for t in row.types)
    if width is not None and bits and per * bits > width:
        faults.append(f"{per} {types} elements take {per * bits} bits; a .{fr.register_kind} "
                      f"register has {width}")
    short: dict[tuple[int, int], list[str]] = {}
    for name in row.shapes:
        shape = Shape.parse(name)
        if shape is None:
            continue
        for m in row.matrices:
            r, c = shape.tile("C/D" if m in "CD" else m)
            if LANES * n < r * c or (LANES * n) % (r * c):
                short.setdefault((r, c), []).append(f".{name} {m}")
    for (r, c), where in short.items():
        faults.append(f"{n} element{'s' if n > 1 else ''} a lane x {LANES} lanes = {LANES * n}"
                      f", but the {r} x {c} tile of {', '.join(where)} has {r * c} cells "
                      f"(a fragment holds the tile once, or whole copies of it)")
    if not faults:
        return []
    return [error("register-budget", row.source.strip(),
                  f"the wmma {types} fragment: " + "; ".join(faults),
                  counterexample={"elements_per_lane": n, "lanes": LANES,
                                  "tiles": [[r, c] for r, c in short]})]
