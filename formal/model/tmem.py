"""The facts of the tcgen05 tensor-memory sections, checked against each other and the table.

A shape section says how many lanes a warp accesses and how many bits of each lane one
``.num`` moves; Table 47 (tcgen05.ld) and Table 48 (tcgen05.st) say how many ``.b32``
registers a thread holds.  The two must agree: the warp's 32 threads hold exactly the bits it
moves.  A worked example: ``.16x256b`` accesses 16 lanes, 256 bits each a ``.num`` -- 4096
bits -- and Table 47 gives ``.x1`` four registers a thread: 32 x 4 x 32 = 4096 bits, so the
section agrees.  ``.16x32bx2`` accesses 16 lanes, "(32 * .num)-bits" each -- 512 bits at
``.x1`` -- but Table 47 gives one register a thread, 1024 bits: the sentence counts one of the
shape's two ``.16x32b`` accesses, and the error says so with both numbers.

Also checked: Table 47's every cell against the variant table (``formal.base.variants``,
``NA`` where no row exists), a section's lanes against the shape's, and the access table (warp
w of a warpgroup -> its lanes) against "divided into 4 equal chunks" of the 128 lanes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base.source import Finding, error
from ..base.variants import TMEM_SHAPES, tmem_registers
from ..parse.tmem import ParsedTmem, TmemFact

TMEM_LANES = 128  # lanes of a CTA's tensor memory (sm_100a: 128 lanes x 512 columns)


def _registers(table: TmemFact | None) -> dict[tuple[str, int], int | None]:
    """(shape, num) -> registers a thread, as the document's num table states them."""
    out: dict[tuple[str, int], int | None] = {}
    if table is None:
        return out
    groups = table.get("groups", ())
    for num, counts in table.get("rows", ()):
        for group, count in zip(groups, counts):
            for shape in group:
                out[(shape, num)] = count
    return out


def _check_table(table: TmemFact) -> list[Finding]:
    bad = []
    for (shape, num), count in _registers(table).items():
        if shape not in TMEM_SHAPES:
            continue
        want = tmem_registers(shape, num) if num <= TMEM_SHAPES[shape][2] else None
        if count != want:
            bad.append((shape, num, count, want))
    if not bad:
        return []
    shape, num, count, want = bad[0]
    said = "NA" if count is None else f"{count} registers"
    row = "no such form" if want is None else f"{want} registers"
    return [error("tmem", table.src, f"the table gives .{shape}.x{num} {said}, the variant "
                  f"table {row}" + (f" (and {len(bad) - 1} more cells differ)" if len(bad) > 1
                                    else ""),
                  counterexample={"shape": shape, "num": num, "table": count, "rows": want})]


def _check_shape(p: ParsedTmem, regs: dict[tuple[str, int], int | None],
                 splits: dict[str, TmemFact]) -> list[Finding]:
    assert p.heading is not None
    shape = str(p.heading.get("shape"))
    lanes = next(iter(p.facts_of("lanes")), None)
    bits = next(iter(p.facts_of("bits")), None)
    if shape not in TMEM_SHAPES or lanes is None or bits is None:
        return []
    out: list[Finding] = []
    n_lanes, n_bits = int(lanes.get("lanes")), int(bits.get("bits"))
    if n_lanes != TMEM_SHAPES[shape][0]:
        out.append(error("tmem", lanes.src, f"a warp accesses {n_lanes} lanes with .{shape}, "
                         f"but the shape's name and the variant table say "
                         f"{TMEM_SHAPES[shape][0]}", counterexample={"shape": shape}))
    per = regs.get((shape, 1)) or tmem_registers(shape, 1)
    held = 32 * per * 32
    if n_lanes * n_bits != held:
        split = splits.get(shape)
        why = ""
        if split is not None:
            part = str(split.get("part"))
            k, b = int(split.get("accesses")), int(part.rsplit("x", 1)[-1].rstrip("b"))
            why = (f"; the shape performs {k} accesses of .{part}, {k} x {b} = {k * b} bits of "
                   f"each lane a .num, which the sentence counts once")
        out.append(error(
            "tmem", bits.src,
            f".{shape}: {n_lanes} lanes x ({n_bits} * .num) bits is {n_lanes * n_bits} bits at "
            f".x1, but Table 47 gives every thread {per} .b32 register(s) at .x1: 32 threads x "
            f"{per} x 32 bits = {held} bits, {held // n_lanes} bits of each lane{why}",
            counterexample={"shape": shape, "num": 1, "lanes": n_lanes,
                            "stated_bits_per_lane": n_bits, "register_bits": held,
                            "bits_per_lane_held": held // n_lanes}))
    return out


def _check_access(p: ParsedTmem) -> list[Finding]:
    table = next(iter(p.facts_of("access_table")), None)
    if table is None:
        return []
    rows = sorted(table.get("rows", ()))
    chunks = next(iter(p.facts_of("chunks")), None)
    n = int(chunks.get("chunks")) if chunks is not None else len(rows)
    size = TMEM_LANES // max(1, n)
    out: list[Finding] = []
    if len(rows) != n:
        out.append(error("tmem", table.src, f"the text divides the lanes into {n} chunks, the "
                         f"table lists {len(rows)} warps", counterexample={"rows": len(rows)}))
    for w, lo, hi in rows:
        if (lo, hi) != (size * w, size * w + size - 1):
            out.append(error("tmem", table.src, f"warp {w} of the warpgroup accesses lanes "
                             f"{lo}-{hi}, not its chunk {size * w}-{size * w + size - 1} of "
                             f"{n} equal chunks of {TMEM_LANES} lanes",
                             counterexample={"warp": w, "lanes": [lo, hi]}))
    return out


def check_tmem(parsed: Sequence[ParsedTmem]) -> list[Finding]:
    """Every tcgen05 tensor-memory section of one document, checked (the module's docstring)."""
    tables = [f for p in parsed for f in p.facts_of("num_table")]
    splits = {str(f.get("shape")): f for p in parsed for f in p.facts_of("split")}
    out: list[Finding] = []
    seen: set[tuple[tuple[tuple[str, int], int | None], ...]] = set()
    for t in tables:  # Table 47 and Table 48 state the same counts: each reported once
        key = tuple(sorted(_registers(t).items()))
        if key not in seen:
            seen.add(key)
            out.extend(_check_table(t))
    regs = _registers(tables[0] if tables else None)
    for p in parsed:
        if p.heading is not None and p.heading.kind == "shape_heading":
            out.extend(_check_shape(p, regs, splits))
        out.extend(_check_access(p))
    return out
