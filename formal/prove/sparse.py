"""Sparse metadata: coverage per selector, selector range, quad locality, encodability.

For 2:4 ``.f16`` with selector 0 the holders are lanes 0, 4, .., 28; their 16 two-bit fields
must index every (row, chunk, slot) of the 16 x 16 A tile exactly once, and a field that
describes a chunk whose values another quad holds is refuted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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


def placement_words(sparsity: Any) -> list[tuple[tuple[int, ...], int]]:
    """Every placement of a chunk's non-zeros (strictly increasing index units; ``.tf32``'s
    element k is the halves (2k, 2k+1)) with its metadata word, slot 0 in the low bits: for
    2:4, ((0, 1), 0b0100), ((0, 2), 0b1000), ... ((2, 3), 0b1110)."""
    from itertools import combinations
    units, bits = sparsity.units_per_chunk, sparsity.index_bits
    if sparsity.meaningful_fields:
        placements = [tuple(range(2 * k, 2 * k + 2)) for k in range(units // 2)]
    else:
        placements = list(combinations(range(units), sparsity.slots))
    return [(p, sum(idx << (bits * slot) for slot, idx in enumerate(p))) for p in placements]


def ordered_encodings(sparsity: Any) -> str:
    """'' when every placement of a chunk's non-zeros has a legal ``::ordered_metadata``
    encoding; else why not.

    A chunk of ``units`` index units with ``slots`` indices: each placement is a set of
    strictly increasing unit indices, written slot 0 in the low bits.  With 2-bit indices a
    4-bit nibble is legal unless both indices are equal (0b0000, 0b0101, 0b1010, 0b1111);
    ``.tf32`` may only use 0b0100 and 0b1110 (one element = two halves, indices (0,1) or
    (2,3)).  Decided by enumerating the placements: 6 for 2:4, 2 for 1:2, 6 for 4:8 in pairs.
    """
    bits = sparsity.index_bits
    for p, word in placement_words(sparsity):
        if list(p) != sorted(set(p)):
            return f"placement {p} has no strictly increasing encoding"
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
    """The metadata of (row, chunk) must come from the quad of the lane holding its values:
    the first metadata point (in the table's order) whose (row, chunk) is held by a lane of
    another group of four -- the holder being the last lane in the A table's order to hold
    a column of that chunk.  With numpy over every point at once where both maps are int64
    (``_quad_owner``), else walked point by point (``quad_fault_walked``)."""
    am = map_of(a_layout)
    sparsity = m.lay.sparsity
    if am is None or sparsity is None or not bool(am.defined.all()):
        return None  # the A layout's own 'cases' finding says why
    found = _quad_owner(m, am, a_layout.tile[1], sparsity.chunk)
    if found is None:
        return quad_fault_walked(m, a_layout)
    if found < 0:
        return None
    holder = found >> 32
    (s, t, i), out = m.pts[found & 0xFFFFFFFF].tolist(), m.out[found & 0xFFFFFFFF, :2].tolist()
    return _quad_said(int(s), int(t), int(i), int(out[0]), int(out[1]), holder)


def _quad_said(s: int, t: int, i: int, r: int, ch: int, holder: int) -> tuple[str, Any]:
    return (f"selector {s}: lane {t} field {i} describes row {r}, chunk {ch}, whose "
            f"values lane {holder} holds, in another group of four",
            {"selector": s, "lane": t, "field": i, "row": r, "chunk": ch, "value_lane": holder})


def _quad_owner(m: CellMap, am: CellMap, cols: int, chunk: int) -> int | None:
    """The first faulty metadata point, as ``holder << 32 | point`` (-1: none), or None where
    a map is not int64 or the keys would not fit.  Each A point's columns max(firstcol, 0),
    .., min(lastcol, cols - 1) step ``chunk`` (only the tile's own: a range off the tile is
    the A layout's 'in-range' finding) name (row, column // chunk) pairs, keyed in one int64
    with the metadata's (row, chunk) pairs; the owner of a key is its last A point's lane."""
    if am.out.dtype != np.int64 or m.out.dtype != np.int64 or len(m.pts) >= 1 << 32:
        return None
    t, r, fc, lc = am.pts[:, 1], am.out[:, 0], am.out[:, 1], am.out[:, 2]
    lo, hi = np.maximum(fc, 0), np.minimum(lc, cols - 1)
    steps = np.where(hi >= lo, (hi - lo) // chunk + 1, 0)
    which = np.repeat(np.arange(len(t)), steps)
    first = np.cumsum(steps) - steps
    cells = lo[which] + (np.arange(len(which)) - first[which]) * chunk
    ok = m.defined[:, :3].all(axis=1)
    a_rows, a_chunks = r[which], cells // chunk
    m_rows, m_chunks = m.out[:, 0], m.out[:, 1]
    rows = np.concatenate([a_rows, m_rows])
    chunks = np.concatenate([a_chunks, m_chunks])
    if not len(rows):
        return -1
    r_lo, c_lo = int(rows.min()), int(chunks.min())
    r_span, c_span = int(rows.max()) - r_lo + 1, int(chunks.max()) - c_lo + 1
    if r_span * c_span >= 1 << 62:
        return None
    a_keys = (a_rows - r_lo) * c_span + (a_chunks - c_lo)
    m_keys = (m_rows - r_lo) * c_span + (m_chunks - c_lo)
    # the last A point of each key: the first in reversed order
    keys, at = np.unique(a_keys[::-1], return_index=True)
    owners = t[which][::-1][at]
    pos = np.minimum(np.searchsorted(keys, m_keys), max(len(keys) - 1, 0))
    held = ok & (keys[pos] == m_keys) if len(keys) else np.zeros(len(m_keys), dtype=bool)
    lanes = m.pts[:, 1]
    bad = held & (owners[pos] // 4 != lanes // 4) if len(keys) else held
    if not bad.any():
        return -1
    p = int(np.argmax(bad))
    return int(owners[pos[p]]) << 32 | p


def quad_fault_walked(m: CellMap, a_layout: Layout) -> tuple[str, Any] | None:
    """``quad_fault`` point by point, for maps held as Python ints (and tests)."""
    am = map_of(a_layout)
    sparsity = m.lay.sparsity
    if am is None or sparsity is None or not bool(am.defined.all()):
        return None
    owner: dict[tuple[int, int], int] = {}
    cols = a_layout.tile[1]
    for t, (r, fc, lc) in zip(am.pts[:, 1].tolist(), am.out[:, :3].tolist()):
        r, fc, lc = int(r), int(fc), int(lc)  # defined everywhere: checked above
        for c in range(max(fc, 0), min(lc, cols - 1) + 1, sparsity.chunk):
            owner[(r, c // sparsity.chunk)] = t
    defined = m.defined[:, :3].all(axis=1).tolist()
    for (s, t, i), out, ok in zip(m.pts.tolist(), m.out[:, :3].tolist(), defined):
        if not ok:
            continue
        r, ch = int(out[0]), int(out[1])
        holder = owner.get((r, ch))
        if holder is not None and holder // 4 != t // 4:
            return _quad_said(s, t, i, r, ch, holder)
    return None


# ---- tcgen05.mma.sp: the kinds, granularity and index values its text states --------------------

TC_SPARSE_OBLIGATIONS = ("type-names", "sparse-chunks", "metadata-coverage", "hardware")


def _decode(word: int, sparsity: Any) -> list[int]:
    mask = (1 << sparsity.index_bits) - 1
    return [(word >> (sparsity.index_bits * k)) & mask for k in range(sparsity.slots)]


def listed_values_core(listed: list[int], sparsity: Any) -> Core:
    """The index values a text lists as the only meaningful ones, against the words of every
    placement of a chunk's non-zeros (``placement_words``): each listed value must be one,
    and each placement listed."""
    words = {w: p for p, w in placement_words(sparsity)}
    extra = [v for v in listed if v not in words]
    missing = sorted(w for w in words if w not in listed)
    if not extra and not missing:
        return Core("proved", method="enumeration")
    parts = []
    cex: dict[str, Any] = {}
    if extra:
        v = extra[0]
        idx = _decode(v, sparsity)
        same = next((w for w, p in words.items() if sorted(p) == sorted(idx)), None)
        parts.append(f"{v:#06b} names index units {tuple(idx)}, which no placement of "
                     f"{sparsity.nonzeros} non-zeros of a {sparsity.chunk}-wide chunk encodes "
                     "as (indices increase from the low bits)" +
                     (f"; the same units are listed as {same:#06b}" if same is not None else ""))
        cex.update({"value": f"{v:#06b}", "indices": idx,
                    "same_as": None if same is None else f"{same:#06b}"})
    if missing:
        parts.append(f"{', '.join(f'{w:#06b}' for w in missing)} (placement "
                     f"{words[missing[0]]}) is not listed")
        cex["missing"] = [f"{w:#06b}" for w in missing]
    return Core("refuted", "; ".join(parts), cex, method="enumeration")


def prove_tc_sparse(section: Any, document: str) -> tuple[Any, list[Any]]:
    """One sparse tcgen05 sub-section (``formal.parse.tc_sparse.SparseKinds``): every kind it
    names is a kind of tcgen05.mma.sp (``type-names``), its granularity is that kind's
    sparsity row (``sparse-chunks``), and its meaningful index values are exactly the words
    of the chunk's placements (``metadata-coverage``); the metadata's tensor-memory layout
    is a figure only, so the hardware obligation is unconfirmed."""
    import difflib

    from ..base.matrix_variants import TCGEN05_SPARSITY
    from ..base.source import error, warning
    from ..base.variants import SPARSITY
    from .block_scale import ScaleResult
    from .verdicts import Verdict
    span = section.source.span(0)
    names = [k for k, _ in section.kinds]
    lid = f"{document}:tcgen05.mma.sp.{'-'.join(dict.fromkeys(names))}.metadata"
    findings: list[Any] = []
    verdicts: list[Verdict] = []
    bad = [(k, src) for k, src in section.kinds if k not in TCGEN05_SPARSITY]
    if bad:
        k, src = bad[0]
        near = difflib.get_close_matches(k, list(TCGEN05_SPARSITY), 1, 0.6)
        msg = (f".kind::{k} is not a kind of tcgen05.mma.sp ({', '.join(TCGEN05_SPARSITY)})"
               + (f"; .kind::{near[0]} is meant?" if near else ""))
        cex = {"kind": k, "nearest": near[0] if near else None}
        verdicts.append(Verdict("type-names", "refuted", msg, cex, src.span(0), method="table"))
        findings.append(error("type-names", src, f"{lid}: {msg}", counterexample=cex, layout=lid))
    else:
        verdicts.append(Verdict("type-names", "proved", "", None, span, method="table"))
    rows = {TCGEN05_SPARSITY[k] for k in names if k in TCGEN05_SPARSITY}
    sp = SPARSITY[sorted(rows)[0]] if len({SPARSITY[r] for r in rows}) == 1 else None
    grain_span = section.grain_source.span(0) if section.grain_source is not None else span
    if sp is None:
        msg = ("the kinds compress A differently: " + ", ".join(sorted(rows)) if rows else
               "no kind of tcgen05.mma.sp named")
        verdicts.append(Verdict("sparse-chunks", "refuted", msg, {"rows": sorted(rows)}, span,
                                method="table"))
        findings.append(error("sparse-chunks", section.source, f"{lid}: {msg}", layout=lid))
    elif section.grain is None:
        verdicts.append(Verdict("sparse-chunks", "not-applicable", "no granularity stated",
                                None, span))
    elif section.grain != (sp.nonzeros, sp.chunk):
        msg = (f"granularity {section.grain[0]}:{section.grain[1]}; "
               f"{'/'.join(names)} is {sp.nonzeros}:{sp.chunk} sparse")
        cex = {"stated": list(section.grain), "expected": [sp.nonzeros, sp.chunk]}
        verdicts.append(Verdict("sparse-chunks", "refuted", msg, cex, grain_span,
                                method="table"))
        findings.append(error("sparse-chunks", grain_span, f"{lid}: {msg}", counterexample=cex,
                              layout=lid))
    else:
        verdicts.append(Verdict("sparse-chunks", "proved", "", None, grain_span, method="table"))
    if sp is None or not section.values:
        verdicts.append(Verdict("metadata-coverage", "not-applicable",
                                "no index values listed" if sp is not None else
                                "not checked: the kinds' sparsity is not one row", None, span))
    else:
        core = listed_values_core([v for v, _ in section.values], sp)
        at = section.values[0][1].span(0)
        if core.status == "refuted" and core.cex and "value" in core.cex:
            at = next(src.span(0) for v, src in section.values
                      if f"{v:#06b}" == core.cex["value"])
        verdicts.append(Verdict("metadata-coverage", core.status, core.message, core.cex, at,
                                method=core.method))
        if core.status == "refuted":
            findings.append(error("metadata-coverage", at, f"{lid}: {core.message}",
                                  counterexample=core.cex, layout=lid))
    why = ("not run: tcgen05.mma.sp needs sm_100a and no lent device has it; its metadata's "
           "tensor-memory layout is given as figures only (Figures 262-267 in PTX ISA 9.1)")
    verdicts.append(Verdict("hardware", "unconfirmed", why, None, span, severity="warning"))
    findings.append(warning("hardware", span, f"{lid}: {why}", layout=lid))
    return ScaleResult(lid, "tcgen05.mma.sp", span, tuple(verdicts), "chunks",
                       tuple(dict.fromkeys(names)), (), "metadata"), findings
