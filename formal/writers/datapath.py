"""A data-path layout drawn as the spec's figures draw it: TMEM lanes down, columns across.

One line per block (a sub-partition's lanes), one box per block that names the rectangle of
D it holds.  Layout E at N (its 2x2 organization: the 64 rows twice, half the columns each):

    Layout E (M = 64, cta_group::1), N = 64..256
    CTA 0   TMEM columns 0 to N/2-1
      lanes   0-31   warp 0   D[0-31][0 to N/2-1]
      lanes  32-63   warp 1   D[32-63][0 to N/2-1]
      lanes  64-95   warp 2   D[0-31][N/2 to N-1]
      lanes 96-127   warp 3   D[32-63][N/2 to N-1]

and under it each obligation's verdict, the hardware one ``unconfirmed`` with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.datapath import Bound, DataPath
from ..prove.datapath import DataPathResult


def _bound(b: Bound) -> str:
    a, c = b
    if a == 0:
        return str(c)
    n = "N" if a == 1 else (f"N/{a.denominator}" if a.numerator == 1
                            else f"{a.numerator}N/{a.denominator}")
    return n if c == 0 else f"{n}{'+' if c > 0 else '-'}{abs(c)}"


def _span(lo: Bound, hi: Bound) -> str:
    return f"{_bound(lo)} to {_bound(hi)}"


def draw_datapath(dp: DataPath, result: DataPathResult | None = None) -> str:
    """The text figure of one data-path layout (the module's docstring)."""
    lines = [f"{dp.id}: Layout {dp.layout} (M = {dp.m}, cta_group::{dp.cta_group}), "
             f"N = {dp.ns[0]}..{dp.ns[-1]}; rows x columns of D per TMEM lane block"]
    half = dp.half()
    if half:
        lines.append("half of each sub-partition's lanes: at lane alignment 16 every block "
                     "moves 16 lanes down")
    for cta in sorted({b.cta for b in dp.blocks}):
        mine = sorted((b for b in dp.blocks if b.cta == cta), key=lambda b: b.lanes)
        cols = sorted({_span(*b.tcols) for b in mine})
        lines.append(f"CTA {cta}   TMEM columns {', '.join(cols)}")
        for b in mine:
            lanes = f"{b.lanes[0]}-{b.lanes[1]}"
            lines.append(f"  lanes {lanes:>7}   warp {b.warp}   "
                         f"D[{b.rows[0]}-{b.rows[1]}][{_span(*b.dcols)}]")
    if result is not None:
        lines.append("")
        for v in result.verdicts:
            why = f" ({v.message})" if v.status != "proved" and v.message else ""
            lines.append(f"  {v.name}: {v.status}{why}")
    return "\n".join(lines) + "\n"


def find_datapath(dps: Sequence[DataPath], query: str) -> DataPath | None:
    """``tcgen05.datapath.E``, ``datapath.E``, ``layout-E`` or ``Layout E`` (``catalog:`` in
    front, as ``list`` writes it, is the same)."""
    q = query.strip().replace(" ", "-").lower().removeprefix("catalog:")
    for dp in dps:
        if q in (dp.id.lower(), f"datapath.{dp.layout.lower()}", f"layout-{dp.layout.lower()}"):
            return dp
    return None



