"""Sparse metadata: coverage per selector, selector range, quad locality, encodability.

For 2:4 ``.f16`` with selector 0 the holders are lanes 0, 4, .., 28; their 16 two-bit fields
must index every (row, chunk, slot) of the 16 x 16 A tile exactly once, and a field that
describes a chunk whose values another quad holds is refuted.
"""

from __future__ import annotations

from typing import Any

from ..model.cells import CellMap, map_of
from ..model.layout import Layout
from .verdicts import Core, Options

# ---- metadata ------------------------------------------------------------------------------------


def metadata_cores(m: CellMap, opts: Options, inj: Core, sur: Core) -> tuple[Core, Core]:
    """(metadata-coverage, selector-range)."""
    lay = m.lay
    md = lay.metadata
    assert md is not None
    sparsity = lay.sparsity
    faults = []
    if md.desc is not None and sparsity is not None:
        d = md.desc
        units = sparsity.units_per_chunk
        need = max(1, (units - 1).bit_length())  # bits of one index into a chunk
        if d.chunk != sparsity.chunk:
            faults.append(f"the sentence speaks of {d.chunk}-wide chunks; "
                          f"{'/'.join(lay.types)} is {sparsity.nonzeros}:{sparsity.chunk} sparse")
        if need != sparsity.index_bits:
            faults.append(f"a {units}-unit chunk needs {need}-bit indices, not "
                          f"{sparsity.index_bits}")
        if d.field_bits % sparsity.index_bits or \
                d.field_bits // sparsity.index_bits not in (1, sparsity.slots):
            faults.append(f"{d.field_bits}-bit fields cannot hold whole {need}-bit indices of a "
                          f"{units}-unit chunk")
        else:
            per_field = d.field_bits // sparsity.index_bits
            stated = d.indices_per_group
            implied = d.fields_per_group * per_field * sparsity.unit_elements
            if stated == 0 and d.fields_per_group * per_field != sparsity.slots:
                faults.append(f"{d.fields_per_group} field{'s' if d.fields_per_group > 1 else ''}"
                              f" of {d.field_bits} bits per chunk hold "
                              f"{d.fields_per_group * per_field} indices; a "
                              f"{sparsity.nonzeros}:{sparsity.chunk} chunk needs "
                              f"{sparsity.slots}")
            elif stated and stated != implied:
                faults.append(f"{d.fields_per_group} field{'s' if d.fields_per_group > 1 else ''}"
                              f" of {d.field_bits} bits index {implied:g} non-zero element"
                              f"{'s' if implied != 1 else ''} of a {d.chunk}-wide chunk, not "
                              f"{stated}")
    if sparsity is not None:
        bad = ordered_encodings(sparsity)
        if bad:
            faults.append(bad)
    cover_ok = inj.status == "proved" and sur.status == "proved"
    if inj.status == "refuted":
        cov = Core("refuted", inj.message, inj.cex, inj.where)
    elif sur.status == "refuted":
        cov = Core("refuted", sur.message, sur.cex, sur.where)
    elif faults:
        cov = Core("refuted", "; ".join(faults), {"faults": faults}, None, "table+enumeration")
    elif cover_ok:
        cov = Core("proved", method="z3+enumeration")
    else:
        cov = Core("unknown", "coverage undecided")
    # selector range: lanes per quad -> 4 / that many selectors
    per_quad = set()
    for s in m.selectors:
        for q in range(lay.lanes // 4):
            per_quad.add(sum(1 for t in range(4 * q, 4 * q + 4) if m.holder_fn(t, 0, s)))
    if len(per_quad) != 1 or 0 in per_quad:
        sel = Core("refuted", f"the number of metadata lanes per group of four varies "
                    f"({sorted(per_quad)})", {"lanes_per_group": sorted(per_quad)},
                    None, "enumeration")
    else:
        k = per_quad.pop()
        implied = tuple(range(4 // k)) if 4 % k == 0 else ()
        if tuple(m.selectors) != implied:
            sel = Core("refuted", f"{k} lane{'s' if k > 1 else ''} per group of four hold "
                        f"metadata, which allows selector {_fmt_range(implied)}; the layout "
                        f"states {_fmt_range(tuple(m.selectors))}",
                        {"lanes_per_group": k, "implied": list(implied),
                         "stated": list(m.selectors)}, None, "enumeration")
        else:
            sel = Core("proved", method="enumeration")
    return cov, sel


def ordered_encodings(sparsity: Any) -> str:
    """'' when every placement of a chunk's non-zeros has a legal ``::ordered_metadata``
    encoding; else why not.

    A chunk of ``units`` index units with ``slots`` indices: each placement is a set of
    strictly increasing unit indices, written slot 0 in the low bits.  With 2-bit indices a
    4-bit nibble is legal unless both indices are equal (0b0000, 0b0101, 0b1010, 0b1111);
    ``.tf32`` may only use 0b0100 and 0b1110 (one element = two halves, indices (0,1) or
    (2,3)).  Decided by enumerating the placements: 6 for 2:4, 2 for 1:2, 6 for 4:8 in pairs.
    """
    from itertools import combinations
    units, bits = sparsity.units_per_chunk, sparsity.index_bits
    if sparsity.meaningful_fields:
        placements = [tuple(range(2 * k, 2 * k + 2)) for k in range(units // 2)]
    else:
        placements = list(combinations(range(units), sparsity.slots))
    for p in placements:
        if list(p) != sorted(set(p)):
            return f"placement {p} has no strictly increasing encoding"
        word = sum(idx << (bits * slot) for slot, idx in enumerate(p))
        nibbles = [(word >> (4 * k)) & 0xF for k in range((bits * len(p) + 3) // 4)]
        if any(n in sparsity.invalid_nibbles for n in nibbles):
            return f"placement {p} encodes as an invalid metadata nibble {word:#06b}"
        if sparsity.meaningful_fields and word not in sparsity.meaningful_fields:
            return f"placement {p} encodes as {word:#06b}, not one of the meaningful values"
    return ""


def _fmt_range(vals: tuple[int, ...]) -> str:
    if not vals:
        return "(none)"
    if len(vals) == 1:
        return str(vals[0])
    return f"{vals[0]}..{vals[-1]}"



def quad_fault(m: CellMap, a_layout: Layout) -> tuple[str, Any] | None:
    """The metadata of (row, chunk) must come from the quad of the lane holding its values."""
    am = map_of(a_layout)
    sparsity = m.lay.sparsity
    if am is None or sparsity is None or not bool(am.defined.all()):
        return None  # the A layout's own 'cases' finding says why
    owner: dict[tuple[int, int], int] = {}
    cols = a_layout.tile[1]
    for (_s, t, _i), out in am.table().items():
        r, fc, lc = out  # defined everywhere: checked above
        # only the tile's own columns: a range running off the tile is the A layout's
        # 'in-range' finding, and must not be walked (lastcol may be 2**64 away)
        for c in range(max(fc, 0), min(lc, cols - 1) + 1, sparsity.chunk):
            owner[(r, c // sparsity.chunk)] = t
    for (s, t, i), out in m.table().items():
        if None in out:
            continue
        r, ch, _slot = out
        holder = owner.get((r, ch))
        if holder is not None and holder // 4 != t // 4:
            return (f"selector {s}: lane {t} field {i} describes row {r}, chunk {ch}, whose "
                    f"values lane {holder} holds, in another group of four",
                    {"selector": s, "lane": t, "field": i, "row": r, "chunk": ch,
                     "value_lane": holder})
    return None
