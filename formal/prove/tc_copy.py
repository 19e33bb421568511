"""``tcgen05.cp`` proved: every 32-bit piece of the source lands on exactly the stated number
of places, no two on one TMEM word, inside the stated lanes and columns, each multicast onto
the warps its qualifier pairs, and the decompressing formats' widths fit.

For ``.32x128b.warpx4`` (32 rows x 4 pieces, 4 places each, 4 columns of 128 lanes, ``lane =
row + 32 * copy``) the 512 landings fill the 512 words once: ``copy-coverage`` enumerates them
and refutes with the two pieces that share a word, the word left empty, or the landing
outside the stated region.  A rewrite ``lane = row + 32 * (copy % 3)`` drops warp 3's quarter
-- row 0's copies 0 and 3 both land on lane 0, column 0 (``{"a": [0, 0, 0], "b": [0, 0, 3],
"place": {"lane": 0, "column": 0}}``) -- and ``warp-pairs`` says row 0 reaches warps {0, 1,
2}, not the group {0, 1, 2, 3} of .warpx4.  ``copy-shape`` checks the stated numbers against
the variant table (``base.matrix_variants.TCGEN05_CP_SHAPES``: rows and bits of the shape,
the places its multicast makes, the columns its pieces fill).  ``decompression`` checks a
packed source format: ``.b6x16_p32`` is 16 x 6 = 96 bits and 32 of padding, 128 bits, as
wide as the 16 bytes it is written to.  Every map here has at most 128 x 8 x 4 points:
enumeration is the proof.
"""

from __future__ import annotations

from ..base.matrix_variants import (
    PACKED_FORMATS,
    TCGEN05_CP_SHAPES,
    TCGEN05_CP_WARPS,
    TMEM_LANE_COUNT,
    TMEM_SUBPARTITION,
)
from ..base.source import Finding, error, warning
from ..model.tc_copy import CopyFormat, CopyLayout, Landing
from .block_scale import ScaleResult, faults_core
from .verdicts import Core, Verdict

COPY_OBLIGATIONS = ("copy-coverage", "warp-pairs", "copy-shape", "hardware")
WORD_BITS = 32
COPY_NO_DEVICE = ("not run: tcgen05.cp needs sm_100a and no lent device has it; the text "
                  "states the shapes and multicasts, not the placement (this layout follows "
                  "the plain reading and CuTe's pairing; ptxas assembles every form)")


def _place(p: Landing) -> dict[str, int]:
    return {"lane": p[3], "column": p[4]}


def copy_coverage_core(lay: CopyLayout) -> Core:
    """Each piece on ``places`` words, no two pieces (or copies) on one word, all inside the
    stated lanes and columns, and every word of them held."""
    if len(lay.copies) != lay.places:
        return Core("refuted", f"the program lists {len(lay.copies)} copies "
                    f"({', '.join(map(str, lay.copies))}); each piece is stated to land on "
                    f"{lay.places} places", {"copies": list(lay.copies), "places": lay.places,
                                             "name": "copy"}, method="enumeration")
    seen: dict[tuple[int, int], tuple[int, int, int]] = {}
    top = min(lay.lanes, TMEM_LANE_COUNT)
    for p in lay.landings:
        who = (p[0], p[1], p[2])
        for name, got, bound in (("lane", p[3], top), ("column", p[4], lay.columns)):
            if not 0 <= got < bound:
                return Core("refuted", f"copy {p[2]} of row {p[0]}, piece {p[1]} lands on "
                            f"{name} {got}, outside the {bound} {name}s",
                            {"a": list(who), "place": _place(p), "name": name},
                            method="enumeration")
        at = (p[3], p[4])
        if at in seen:
            o = seen[at]
            return Core("refuted", f"row {o[0]}, piece {o[1]} (copy {o[2]}) and row {p[0]}, "
                        f"piece {p[1]} (copy {p[2]}) both land on lane {at[0]}, column {at[1]}",
                        {"a": list(o), "b": list(who), "place": _place(p), "name": "lane"},
                        method="enumeration")
        seen[at] = who
    for lane in range(top):
        for col in range(lay.columns):
            if (lane, col) not in seen:
                return Core("refuted", f"no piece lands on lane {lane}, column {col} of the "
                            f"{top} lanes x {lay.columns} columns the copy is stated to fill",
                            {"place": {"lane": lane, "column": col}, "name": "lane"},
                            method="enumeration")
    return Core("proved", method="enumeration")


def warp_pairs_core(lay: CopyLayout) -> Core:
    """Each piece's copies reach one group of warps the multicast names (warp = lane / 32),
    at the same lane of each warp's quarter."""
    groups = {tuple(sorted(g)) for g in TCGEN05_CP_WARPS.get(lay.multicast, ())}
    if not groups:
        return Core("refuted", f"no multicast .{lay.multicast} in the variant table",
                    {"multicast": lay.multicast, "name": "copy"}, method="table")
    mine: dict[tuple[int, int], list[Landing]] = {}
    for p in lay.landings:
        mine.setdefault((p[0], p[1]), []).append(p)
    for (row, piece), ps in mine.items():
        warps = tuple(sorted(p[3] // TMEM_SUBPARTITION for p in ps))
        offsets = {p[3] % TMEM_SUBPARTITION for p in ps}
        if warps not in groups or len(offsets) != 1:
            want = " or ".join("{" + ", ".join(map(str, g)) + "}" for g in sorted(groups))
            why = (f"warps {{{', '.join(map(str, warps))}}}, not {want}" if warps not in groups
                   else f"lanes {sorted(p[3] for p in ps)}, not one lane of each warp's quarter")
            return Core("refuted", f"row {row}, piece {piece} reaches {why}"
                        f"{' (.' + lay.multicast + ')' if lay.multicast else ''}",
                        {"a": [row, piece], "lanes": sorted(p[3] for p in ps),
                         "warps": list(warps), "name": "lane"}, method="enumeration")
    return Core("proved", method="enumeration")


def copy_shape_core(lay: CopyLayout) -> Core:
    faults = []
    row = TCGEN05_CP_SHAPES.get(lay.shape)
    if row is None:
        return Core("refuted", f".{lay.shape} is not a shape of tcgen05.cp "
                    f"({', '.join(TCGEN05_CP_SHAPES)})", {"shape": lay.shape}, method="table")
    rows, bits, multicasts = row
    if lay.multicast not in multicasts:
        takes = " or ".join("." + m if m else "no multicast" for m in multicasts)
        faults.append(f".{lay.shape} takes {takes}, not "
                      f"{'.' + lay.multicast if lay.multicast else 'none'}")
    if lay.rows != rows:
        faults.append(f"{lay.rows} rows; the shape moves {rows}")
    if lay.width != WORD_BITS or lay.pieces * lay.width != bits:
        faults.append(f"{lay.pieces} pieces of {lay.width} bits a row; the shape moves {bits} "
                      f"bits a row in {WORD_BITS}-bit TMEM words")
    group = len(TCGEN05_CP_WARPS.get(lay.multicast, ((0,),))[0])
    if lay.places != group:
        faults.append(f"{lay.places} places a piece; .{lay.multicast or 'no multicast'} "
                      f"sends each to {group} warp(s)")
    if lay.columns != lay.pieces:
        faults.append(f"{lay.columns} columns for {lay.pieces} pieces a row")
    if lay.lanes > TMEM_LANE_COUNT:
        faults.append(f"{lay.lanes} lanes: tensor memory has {TMEM_LANE_COUNT}")
    if lay.rows * lay.pieces * lay.places != lay.columns * lay.lanes:
        faults.append(f"{lay.rows} x {lay.pieces} pieces x {lay.places} places is not the "
                      f"{lay.lanes} lanes x {lay.columns} columns stated")
    return faults_core(faults)


def decompression_core(f: CopyFormat) -> Core:
    faults = []
    name = f"b{f.bits}x{f.count}_p{f.padding}"
    if f.src != name:
        faults.append(f"the stated {f.count} x {f.bits} bits and {f.padding} of padding "
                      f"spell .{name}, not .{f.src}")
    packed = PACKED_FORMATS.get(f.src)
    if packed is not None and packed != (f.bits, f.padding):
        faults.append(f".{f.src} is {packed[0]}-bit elements and {packed[1]} bits of padding "
                      "in the variant table")
    if f.count * f.bits + f.padding != f.unit:
        faults.append(f"{f.count} x {f.bits} + {f.padding} = {f.count * f.bits + f.padding} "
                      f"bits, not the {f.unit}-bit group stated")
    if f.out_count * f.out_bits != f.unit or f.dst != f"b{f.out_bits}x{f.out_count}":
        faults.append(f"{f.out_count} x {f.out_bits} bits written as .{f.dst}: the group is "
                      f"{f.unit} bits")
    if f.out_count != f.count or f.out_bits < f.bits:
        faults.append(f"{f.count} {f.bits}-bit elements cannot become {f.out_count} "
                      f"{f.out_bits}-bit ones")
    return faults_core(faults)


def prove_copy(lay: CopyLayout, evidence: bool = False) \
        -> tuple[list[ScaleResult], list[Finding]]:
    """Every obligation of one tcgen05.cp form (id ``tcgen05.cp.32x128b.warpx4``); an error
    finding for each refuted one, on the line of the definition it is about.  ``hardware`` is
    unconfirmed (a warning) when GPU evidence is read -- none can hold an sm_100a run --, not
    applicable without it, as for every tcgen05 layout."""
    findings = list(lay.faults)
    if evidence:
        findings.append(warning("hardware", lay.span, f"{lay.id}: {COPY_NO_DEVICE}",
                                layout=lay.id))
    if lay.faults:
        verdicts = [Verdict(n, "error", "not checked: the program is incomplete", None,
                            lay.span) for n in COPY_OBLIGATIONS[:-1]]
    else:
        cores = {"copy-coverage": copy_coverage_core(lay), "warp-pairs": warp_pairs_core(lay),
                 "copy-shape": copy_shape_core(lay)}
        verdicts = [Verdict(n, c.status, c.message, c.cex,
                            lay.line_of((c.cex or {}).get("name", "lane"))
                            if n != "copy-shape" else lay.span, method=c.method)
                    for n, c in cores.items()]
    verdicts.append(Verdict("hardware", "unconfirmed", COPY_NO_DEVICE, None, lay.span,
                            severity="warning") if evidence else
                    Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)"))
    for v in verdicts:
        if v.status == "refuted" and v.span is not None:
            findings.append(error(v.name, v.span, f"{lay.id}: {v.message}",
                                  counterexample=v.counterexample, layout=lay.id))
    shape = ".".join(p for p in (lay.shape, lay.multicast) if p)
    return [ScaleResult(lay.id, "tcgen05.cp", lay.span, tuple(verdicts), shape, ("b32",),
                        (lay.rows, lay.pieces), "source")], findings


def prove_copy_format(f: CopyFormat, evidence: bool = False) \
        -> tuple[list[ScaleResult], list[Finding]]:
    """The decompression obligation of one packed source format, and ``hardware`` as a
    copy's (unconfirmed with evidence read, not applicable without)."""
    c = decompression_core(f)
    v = Verdict("decompression", c.status, c.message, c.cex, f.span, method=c.method)
    findings = [error("decompression", f.span, f"{f.id}: {c.message}", counterexample=c.cex,
                      layout=f.id)] if c.status == "refuted" else []
    if evidence:
        hw = Verdict("hardware", "unconfirmed", COPY_NO_DEVICE, None, f.span, severity="warning")
        findings.append(warning("hardware", f.span, f"{f.id}: {COPY_NO_DEVICE}", layout=f.id))
    else:
        hw = Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)")
    return [ScaleResult(f.id, "tcgen05.cp", f.span, (v, hw), f"{f.dst}.{f.src}", (f.src,),
                        (f.count, f.bits), "source")], findings
