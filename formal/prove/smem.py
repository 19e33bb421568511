"""The shared-memory obligations: every shared-memory layout, swizzle, worked example and
descriptor table the sections state is checked, each failure with its counterexample.

Everything here is finite, so every verdict is decided by enumeration; Z3 proves the swizzles
for every 32-bit address besides.  A tiny example of a refutation: the layout
``((8,2),(4,4)):((8,64),(1,4))`` (K-major, tf32) sends (row 1, column 0) to element 8 and
(row 0, column 8) to element 8 too -- its K mode spans 16 elements where a row holds 8 -- so
``injective`` is refuted with both coordinates and the address they share.

Obligations (``SMEM_OBLIGATIONS``):

- ``exact-layout``  an example's exact layout equals its canonical layout at the example's
  parameters (LBO, SBO in bytes / the element size); else a coordinate and both addresses, and
  the parameter or stride entry where they part
- ``injective``     no two elements at one address (two coordinates and the address)
- ``in-atom``       each swizzle atom's elements fill one aligned atom (8 rows of 16c bytes), so
  the swizzle, a permutation of each aligned block, keeps them in it
- ``swizzle``       a bijection that keeps 16-byte chunks whole, of the mode's size
- ``atom-shape``    the atom table's shape (in 16-byte units) is the canonical layout's
- ``definitions``   LBO and SBO stride in the canonical layout where the definition tables say:
  K-major SBO "from the first 8 rows to the next 8 rows" is the stride of m in ``(8,m)``
- ``encoding``      a stated encoding is the value >> 4, and the value is 16-byte aligned and fits
  the descriptor's 14-bit field (after matrix-descriptor-encode)
- ``field-fit``     a descriptor table's fields: size = high - low + 1, no overlap, inside 64 bits,
  each fixed constant fits its field
- ``descriptor``    a catalog layout's descriptor makes the instruction read every (mn, k) of its
  tile where the layout puts it (``formal.prove.smem_descriptor``)
- ``tma-swizzle``   the TMA's swizzle of the layout's mode writes the atoms its descriptor reads
- ``k-slice``       the K one instruction reads, by type: 32 bytes of each row dense, twice the
  K sparse (``formal.prove.smem_kslice``)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from ..base.hashes import cell_table_hash_of_texts, formula_hash
from ..base.source import Finding, Span
from ..model.smem import (
    CHUNKS,
    DESCRIPTORS,
    ELEMENT_BITS,
    SWIZZLE_CODES,
    CanonicalRow,
    Example,
    SmemInstance,
    SmemText,
    Swizzle,
    SwizzledLayout,
    SymEntry,
    at_params,
    atom_of,
    descriptor_encode,
    descriptor_of,
    instances,
    names_in,
    smem_hash,
)
from .cache import z3_unsat
from .repeats import distinct
from .smem_descriptor import DescriptorGroup, descriptor_core, hardware_verdict, tma_core
from .smem_kslice import k_slice_verdict
from .verdicts import Core, Verdict

SMEM_OBLIGATIONS = ("exact-layout", "injective", "in-atom", "swizzle", "atom-shape", "definitions",
                    "encoding", "field-fit", "descriptor", "tma-swizzle", "k-slice")
FIELD_BITS = 14  # LBO, SBO and start address fields hold 14 bits
# tcgen05's 128-byte swizzle with 32-byte atomicity (descriptor code 1): CuTe's
# SWIZZLE_128B_BASE32B, the two bits 7-8 XORed into bits 5-6 (32-byte units of a 128-byte row)
ATOM32 = Swizzle(2, 5, 2)


@dataclass(frozen=True)
class SmemResult:
    """One checked thing (an example, a catalog layout, a table) and its verdicts; ``shape``
    says which (``K-major 128B``, ``descriptor``), ``tile`` is MN x K elements of a layout."""

    id: str
    instruction: str  # wgmma.smem | tcgen05.smem
    span: Span
    verdicts: tuple[Verdict, ...]
    shape: str = ""
    types: tuple[str, ...] = ()
    tile: tuple[int, ...] = ()
    # what the proof ledger keeps of it (``formal.writers.ledger``): the hash of what the text
    # states (layout, swizzle, parameters, fields), and of the bit address of every element
    # where there is one (the ``smem`` hash a GPU run names)
    formula: str = ""
    map: str | None = None

    @property
    def ok(self) -> bool:
        return all(v.status in ("proved", "not-applicable", "unconfirmed")
                   for v in self.verdicts)


@dataclass(frozen=True)
class SmemProof:
    results: tuple[SmemResult, ...]
    findings: tuple[Finding, ...]


# ---- layouts -----------------------------------------------------------------------------------


def _coord(c: tuple[int, int]) -> dict[str, int]:
    return {"mn": c[0], "k": c[1]}


def injective_core(lay: SwizzledLayout) -> Core:
    """No two coordinates at one (bit) address."""
    addrs = lay.bit_address_array
    if distinct(addrs).size == len(addrs):
        return Core("proved", f"{len(addrs)} elements at {len(addrs)} addresses",
                    method="enumeration")
    seen: dict[int, tuple[int, int]] = {}
    rows = lay.extent[0]
    for i, a in enumerate(lay.bit_addresses):
        c = (i % rows, i // rows)
        if a in seen:
            p = seen[a]
            return Core("refuted", f"(mn {p[0]}, k {p[1]}) and (mn {c[0]}, k {c[1]}) are both "
                        f"at byte {a // 8}", {"a": _coord(p), "b": _coord(c), "byte": a // 8},
                        method="enumeration")
        seen[a] = c
    return Core("proved", f"{len(seen)} elements at {len(seen)} addresses", method="enumeration")


def _atom_keys(lay: SwizzledLayout, major: str, mode: str) -> Any:
    """Each element's atom, as one integer per element (``in_atom_core``'s key (a, b) as
    a * big + b), in the order of ``lay.offsets``."""
    import numpy as np
    c, t, rows = CHUNKS[mode], 128 // lay.bits, lay.extent[0]
    i = np.arange(len(lay.offset_array), dtype=np.int64)
    mn, k = i % rows, i // rows
    a, b = (mn // 8, k // (c * t)) if major == "K" else (mn // (c * t), k // 8)
    return a * (int(b.max(initial=0)) + 1) + b


def _atoms_whole(lay: SwizzledLayout, major: str, mode: str) -> int | None:
    """``in_atom_core``'s test over every atom at once (numpy): the number of atoms where each
    atom's lowest and highest byte lie in one aligned block, else None, which sends the caller
    to its loop, which finds the first atom that does not, with its coordinates.  The
    elements sorted by atom, each atom's bytes one run of the sorted order."""
    import numpy as np
    if not len(lay.offset_array):
        return 0
    atom_bytes = 128 * CHUNKS[mode]
    keys = _atom_keys(lay, major, mode)
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    byte = (lay.offset_array * lay.bits // 8)[order]
    starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1])))
    lo = np.minimum.reduceat(byte, starts)
    hi = np.maximum.reduceat(byte, starts)
    base = lo - lo % (atom_bytes if mode != "none" else 16)
    bad = hi >= base + atom_bytes
    if mode == "none":
        bad |= lo % 16 != 0
    return None if bool(bad.any()) else len(starts)


def in_atom_core(lay: SwizzledLayout, major: str, mode: str) -> Core:
    """The elements of each atom (8 rows x 16c bytes; without swizzle the 8 x 16-byte core
    matrix) lie in one block of the atom's size: aligned to it where a swizzle permutes that
    block, 16-byte aligned and contiguous without one."""
    c = CHUNKS[mode]
    t = 128 // lay.bits  # elements in 16 bytes
    atom_bytes = 128 * c
    count = _atoms_whole(lay, major, mode)
    if count is not None:
        return Core("proved", f"{count} atoms of {atom_bytes} bytes", method="enumeration")
    blocks: dict[tuple[int, int], list[tuple[int, tuple[int, int]]]] = {}
    rows = lay.extent[0]
    for i, off in enumerate(lay.offsets):
        mn, k = i % rows, i // rows
        key = (mn // 8, k // (c * t)) if major == "K" else (mn // (c * t), k // 8)
        blocks.setdefault(key, []).append((off * lay.bits // 8, (mn, k)))
    for key, items in blocks.items():
        lo_b, lo_c = min(items)
        hi_b, hi_c = max(items)
        base = lo_b - lo_b % (atom_bytes if mode != "none" else 16)
        if hi_b >= base + atom_bytes or (mode == "none" and lo_b % 16):
            return Core("refuted", f"atom {key}: (mn {lo_c[0]}, k {lo_c[1]}) at byte {lo_b} and "
                        f"(mn {hi_c[0]}, k {hi_c[1]}) at byte {hi_b} are not in one aligned "
                        f"{atom_bytes}-byte atom", {"a": _coord(lo_c), "b": _coord(hi_c),
                                                    "bytes": [lo_b, hi_b],
                                                    "atom_bytes": atom_bytes},
                        method="enumeration")
    return Core("proved", f"{len(blocks)} atoms of {atom_bytes} bytes", method="enumeration")


@cache
def swizzle_core(sw: Swizzle, mode: str | None = None) -> Core:
    """A bijection on every 32-bit address (it is its own inverse) that moves no byte within
    its 16-byte chunk, and whose row holds the mode's bytes; Z3 for all addresses, enumeration
    over two periods."""
    if mode is not None and mode != "none" and 16 << sw.bits != int(mode[:-1]):
        return Core("refuted", f"{sw} swizzles {16 << sw.bits}-byte rows, the mode is {mode}",
                    {"swizzle": str(sw), "mode": mode}, method="arithmetic")
    if sw.base < 4:
        return Core("refuted", f"{sw} moves bits below 4: a 16-byte chunk is split",
                    {"swizzle": str(sw)}, method="arithmetic")
    if sw.bits > sw.shift:
        return Core("refuted", f"{sw}: its {sw.bits} bits overlap the bits they are XORed into",
                    {"swizzle": str(sw)}, method="arithmetic")
    import numpy as np
    every = np.arange(2 * sw.period, dtype=np.int64)  # every byte of two periods, at once
    to = sw(every)
    wrong = np.flatnonzero((sw(to) != every) | (to & 15 != every & 15)
                           | (to // sw.period != every // sw.period))
    if len(wrong):
        a = int(wrong[0])
        return Core("refuted", f"{sw} at byte {a} gives {sw(a)}", {"byte": a, "to": sw(a)},
                    method="enumeration")
    import z3
    mask = ((1 << sw.bits) - 1) << (sw.base + sw.shift)

    def f(v: Any) -> Any:
        return v ^ z3.LShR(v & mask, sw.shift)

    @cache
    def solver() -> tuple[Any, Any]:  # built only where Z3 is asked (a warm run makes none)
        x = z3.BitVec("x", 32)
        s = z3.Solver()
        s.add(z3.Or(f(f(x)) != x, f(x) & 15 != x & 15))
        return s, x

    # Z3's unsat from an earlier run (the enumeration above ran all the same); sat: asked again
    if not z3_unsat([sw.bits, sw.base, sw.shift], "swizzle",
                    lambda: solver()[0].check() == z3.unsat):
        s, x = solver()
        s.check()
        return Core("refuted", f"{sw} is not a chunk-preserving involution",
                    {"byte": s.model()[x].as_long()}, method="z3")
    return Core("proved", f"{sw}: an involution keeping 16-byte chunks, period {sw.period} bytes",
                method="z3+enumeration")


def _verdict(name: str, core: Core, span: Span) -> Verdict:
    return Verdict(name, core.status, core.message, core.cex, span, "error", core.method)


def _skipped(name: str, why: str, span: Span) -> Verdict:
    return Verdict(name, "not-applicable", f"not checked: {why}", None, span)


# ---- worked examples ------------------------------------------------------------------------


def _row_for(ex: Example, rows: tuple[CanonicalRow, ...]) -> CanonicalRow | None:
    for r in rows:
        if r.major == ex.major and r.mode == ex.mode:
            return r
    return None


def _params(ex: Example) -> tuple[dict[str, int], dict[str, Span], list[str]]:
    """The example's parameters in elements (LBO, SBO from bytes), where each was stated, and
    the names stated as not applicable."""
    sizes = {t: b // 8 for t, b in ELEMENT_BITS.items() if b >= 8}
    bits = ELEMENT_BITS.get(ex.type, 0)
    out, where, na = {}, {}, []
    for p in ex.params:
        where[p.name] = p.span
        v = p.value.bytes(sizes)
        if v is None:
            na.append(p.name)
        elif p.name in ("LBO", "SBO"):
            out[p.name] = v * 8 // bits if bits else v
        else:
            out[p.name] = v
    return out, where, na


def _entry_names(sym: Any, val: Any, out: list[tuple[str, int]]) -> None:
    if isinstance(sym, SymEntry):
        out.append((str(sym), val))
        return
    if isinstance(val, int) or len(sym) != len(val):
        out.append((str(sym), val))
        return
    for a, b in zip(sym, val, strict=True):
        _entry_names(a, b, out)


def exact_core(ex: Example, row: CanonicalRow | None) -> tuple[Core, str | None]:
    """The exact layout against the canonical layout at the example's parameters; the second
    value names the parameter (or written entry) where they part, if one does."""
    assert ex.exact is not None and ex.canonical is not None
    params, _, na = _params(ex)
    bits = ELEMENT_BITS.get(ex.type)
    if bits is None:
        return Core("error", f"not checked: no element size for type '{ex.type}'"), None
    missing = names_in(ex.canonical.shape) | names_in(ex.canonical.stride)
    used_na = sorted(n for n in na if n in missing)
    if used_na:
        return Core("refuted", f"{', '.join(used_na)} is stated as not applicable, the canonical "
                    "layout uses it", {"parameters": used_na}), used_na[0]
    try:
        canon = at_params(ex.canonical, params, bits)
    except KeyError as e:
        return Core("error", f"not checked: no value for {e.args[0]}"), None
    exact = at_params(ex.exact, params, bits)
    if canon.swizzle != exact.swizzle:
        return Core("refuted", f"the exact layout's {exact.swizzle} is not the canonical "
                    f"{canon.swizzle}", {"exact": str(exact.swizzle),
                                         "canonical": str(canon.swizzle)}), None
    for part, name in ((0, "shape"), (1, "stride")):
        sym = ex.canonical.shape if part == 0 else ex.canonical.stride
        ev = canon.layout.shape if part == 0 else canon.layout.stride
        ex_v = exact.layout.shape if part == 0 else exact.layout.stride
        got: list[tuple[str, int]] = []
        want: list[tuple[str, int]] = []
        _entry_names(sym, ev, got)
        _entry_names(sym, ex_v, want)
        for (written, v), (_, w) in zip(got, want, strict=False):
            if v != w:
                who = written.lstrip("0123456789") or written
                core = Core("refuted", f"the canonical {name} entry {written} = {v} at the "
                            f"parameters, the exact layout has {w}",
                            {"entry": written, "canonical": v, "exact": w})
                return _with_cex(core, canon, exact), who
    return Core("proved", f"equal at {len(list(canon.coords()))} coordinates",
                method="enumeration"), None


def _with_cex(core: Core, canon: SwizzledLayout, exact: SwizzledLayout) -> Core:
    """The first coordinate where the two layouts give different addresses, added."""
    if canon.extent != exact.extent:
        return Core(core.status, core.message + f" (extents {canon.extent} and {exact.extent})",
                    core.cex, method="enumeration")
    for c in canon.coords():
        a, b = canon.address(c), exact.address(c)
        if a != b:
            cex = dict(core.cex or {})
            cex.update(coordinate=_coord(c), canonical_byte=a, exact_byte=b)
            return Core(core.status, core.message + f"; (mn {c[0]}, k {c[1]}) is at byte {b}, "
                        f"the canonical layout puts it at {a}", cex, method="enumeration")
    return Core("proved", "equal at every coordinate (written differently)", method="enumeration")


def _range_note(ex: Example) -> str:
    """Where a K-major swizzled canonical layout stops being a layout: 2k*T elements per row
    must fit the atom's c*T."""
    if ex.major != "K" or ex.mode == "none":
        return ""
    c = CHUNKS[ex.mode]
    return (f"; K-major {ex.mode} is a layout only for 2k <= {c}, k <= {max(1, c // 2)} "
            f"(a row of the atom holds {c} 16-byte units)")


def encoding_core(ex: Example, name: str, kind: str, shift: int, stated: int) -> Core:
    params = {p.name: p for p in ex.params}
    p = params.get(name)
    sizes = {t: b // 8 for t, b in ELEMENT_BITS.items() if b >= 8}
    if kind == "assumed":
        used = ex.canonical is not None and name in (names_in(ex.canonical.shape) |
                                                     names_in(ex.canonical.stride))
        if used:
            return Core("refuted", f"{name} is assumed ({stated}) but the canonical layout "
                        "uses it", {"parameter": name})
        return Core("proved", f"{name} is not used by the canonical layout; {stated} assumed",
                    method="arithmetic")
    if p is None:
        return Core("error", f"not checked: no value stated for {name}")
    try:
        v = p.value.bytes(sizes)
    except KeyError as e:
        return Core("error", f"not checked: no size for type '{e.args[0]}'")
    if v is None:
        return Core("refuted", f"{name} is stated as not applicable and encoded as {stated}",
                    {"parameter": name, "stated": stated})
    got = v >> shift
    if got != stated:
        return Core("refuted", f"{name} = {v} bytes: {v} >> {shift} = {got}, the text says "
                    f"{stated}", {"parameter": name, "bytes": v, "encoded": got,
                                  "stated": stated}, method="arithmetic")
    if v % 16:
        return Core("refuted", f"{name} = {v} bytes is not 16-byte aligned",
                    {"parameter": name, "bytes": v}, method="arithmetic")
    if descriptor_encode(v) != got or got >= 1 << FIELD_BITS:
        return Core("refuted", f"{name} = {v} bytes does not fit the {FIELD_BITS}-bit field "
                    f"(matrix-descriptor-encode gives {descriptor_encode(v)})",
                    {"parameter": name, "bytes": v}, method="arithmetic")
    return Core("proved", f"{name} = {v} bytes, {v} >> {shift} = {stated}", method="arithmetic")


def stated_hash(kind: str, *parts: Any) -> str:
    """The ledger's ``formula`` of a shared-memory entry: each part as written (a layout's
    text, its swizzle, a parameter, a field), so an edit of any of them changes it."""
    return formula_hash(f"smem|{kind}", [(kind, [(repr(p), "") for p in parts])])


def addresses_hash(kind: str, lay: SwizzledLayout) -> str:
    """The ledger's ``map`` of a layout at its parameters: every element's bit address."""
    return cell_table_hash_of_texts("smem", kind, "", "addresses",
                                    [lay.addresses_text])


def _example_hashes(ex: Example, params: dict[str, int], bits: int) -> tuple[str, str | None]:
    parts = (ex.exact.text if ex.exact else None, ex.canonical.text if ex.canonical else None,
             sorted(params.items()),
             [(e.name, e.kind, e.shift, e.stated) for e in ex.encodings])
    lay = None
    if ex.exact is not None and bits:
        try:
            lay = addresses_hash("example", at_params(ex.exact, params, bits))
        except KeyError:  # a name the parameters lack: no map, the verdicts say why
            lay = None
    return stated_hash("example", *parts), lay


def prove_example(ex: Example, rows: tuple[CanonicalRow, ...], family: str) -> SmemResult:
    rid = f"{family}.smem.example.{ex.major}-major.{ex.mode}.{ex.type}"
    shape = f"{ex.major}-major {ex.mode}"
    vs: list[Verdict] = []
    if ex.exact is None or ex.canonical is None:
        vs.append(Verdict("exact-layout", "error", "not checked: the example states no "
                          f"{'exact' if ex.exact is None else 'canonical'} layout", None, ex.span))
        return SmemResult(rid, f"{family}.smem", ex.span, tuple(vs), shape, (ex.type,),
                          formula=_example_hashes(ex, {}, 0)[0])
    _, where, _ = _params(ex)
    core, who = exact_core(ex, _row_for(ex, rows))
    span = ex.exact.span
    if core.status == "refuted" and who in where and who in ("T", "m", "k"):
        span = where[who]
    vs.append(_verdict("exact-layout", core, span))
    params, _, _ = _params(ex)
    bits = ELEMENT_BITS.get(ex.type, 0)
    if core.status != "proved":  # one root cause, one error: the example contradicts itself
        for name in ("injective", "in-atom"):
            vs.append(_skipped(name, "the exact layout is not the canonical one", ex.exact.span))
    elif bits:
        exact = at_params(ex.exact, params, bits)
        inj = injective_core(exact)
        if inj.status == "refuted":
            inj = Core(inj.status, inj.message + _range_note(ex), inj.cex, method=inj.method)
            k_span = where.get("k", ex.exact.span)
            vs.append(_verdict("injective", inj, k_span if _range_note(ex) else ex.exact.span))
            vs.append(_skipped("in-atom", "the layout is not injective", ex.exact.span))
        else:
            vs.append(_verdict("injective", inj, ex.exact.span))
            vs.append(_verdict("in-atom", in_atom_core(exact, ex.major, ex.mode),
                               ex.exact.span))
    for e in ex.encodings:
        vs.append(_verdict("encoding", encoding_core(ex, e.name, e.kind, e.shift, e.stated),
                           e.span))
    tile: tuple[int, ...] = ()
    if bits:
        tile = at_params(ex.exact, params, bits).extent
    formula, addresses = _example_hashes(ex, params, bits)
    return SmemResult(rid, f"{family}.smem", ex.span, tuple(vs), shape, (ex.type,), tile,
                      formula, addresses)


# ---- tables ----------------------------------------------------------------------------------


def prove_tables(text: SmemText, family: str) -> list[SmemResult]:
    out = []
    by_key = {(a.mode, a.major): a for a in text.atoms}
    for row in text.canonical:
        vs = [_verdict("swizzle", swizzle_core(Swizzle(*row.swizzle), row.mode),
                       row.swizzle_span)]
        atom = by_key.get((row.mode, row.major))
        derived = atom_of(row)
        if atom is None:
            vs.append(_skipped("atom-shape", "the atom table has no row for it", row.layout.span))
        elif atom.dims != derived or (row.mode != "none" and 1 << row.swizzle[0] !=
                                      CHUNKS[row.mode]):
            vs.append(Verdict("atom-shape", "refuted",
                              f"the atom table says {atom.dims[0]}x{atom.dims[1]} (line "
                              f"{atom.span.line}), the canonical layout {row.layout.text} has "
                              f"{derived[0]}x{derived[1]} atoms with {row.swizzle}",
                              {"table": list(atom.dims), "canonical": list(derived)},
                              row.layout.span, "error", "arithmetic"))
        else:
            vs.append(Verdict("atom-shape", "proved", f"{derived[0]}x{derived[1]}", None,
                              row.layout.span, "error", "arithmetic"))
        if text.definitions:
            vs.append(_verdict("definitions", definitions_core(row, list(text.definitions)),
                               row.layout.span))
        out.append(SmemResult(f"{family}.smem.canonical.{row.major}-major.{row.mode}",
                              f"{family}.smem", row.layout.span, tuple(vs),
                              f"{row.major}-major {row.mode}",
                              formula=stated_hash("canonical", row.layout.text, row.swizzle,
                                                  atom.dims if atom else None)))
    for atom in text.atoms:  # a mode no canonical layout has: tcgen05's 32-byte atomicity
        if atom.mode in CHUNKS:
            continue
        n = ATOM32.period // 128  # 128-byte rows of 8 units, the pattern repeats after 4
        want = (8, n) if atom.major == "MN" else (n, 8)
        ok = atom.dims == want
        out.append(SmemResult(
            f"{family}.smem.atom.{atom.major}-major.{atom.mode}", f"{family}.smem", atom.span,
            (Verdict("atom-shape", "proved" if ok else "refuted",
                     f"{ATOM32} repeats every {ATOM32.period} bytes: {want[0]}x{want[1]}"
                     + ("" if ok else f", the table says {atom.dims[0]}x{atom.dims[1]}"),
                     None if ok else {"table": list(atom.dims), "swizzle": list(want)},
                     atom.span, "error", "arithmetic"),),
            f"{atom.major}-major {atom.mode}", formula=stated_hash("atom", atom.dims)))
    for fam in sorted({f.family for f in text.fields}):
        rows = [f for f in text.fields if f.family == fam]
        out.append(SmemResult(f"{fam}.smem.descriptor", f"{fam}.smem", rows[0].span,
                              (_fields_verdict(fam, rows),), "descriptor",
                              formula=stated_hash("descriptor", *(
                                  (r.lo, r.hi, r.size, r.constant, r.description) for r in rows))))
    return out


def _position(row: CanonicalRow, quantity: str) -> tuple[str, int] | None:
    """Where ``quantity`` (LBO, SBO) strides in a canonical layout: ("row", n) for the step
    over n rows (M/N), ("column", n) over n columns (K), counted in 16-byte units along the
    leading dimension (K for K-major, M/N for MN-major) and in elements across it; None where
    the layout does not use it."""
    lead = 1 if row.major == "K" else 0
    for i, (shape, stride) in enumerate(zip(row.layout.shape, row.layout.stride, strict=True)):
        shapes = shape if isinstance(shape, tuple) else (shape,)
        strides = stride if isinstance(stride, tuple) else (stride,)
        for j, e in enumerate(strides):
            if isinstance(e, SymEntry) and e.name == quantity:
                n, ts = 1, 0
                for x in shapes[:j]:
                    if x.name == "T":
                        ts += 1
                    n *= x.scale
                if i == lead and ts == 1 or i != lead and ts == 0:
                    return ("row" if i == 0 else "column", n)
                return ("row" if i == 0 else "column", -1)
    return None


def definitions_core(row: CanonicalRow, defs: list[Any]) -> Core:
    """The canonical layout strides LBO and SBO where the definition tables say they step."""
    swizzled = row.mode != "none"
    checked = 0
    for d in defs:
        if d.major != row.major or d.swizzled not in (None, swizzled):
            continue
        checked += 1
        got = _position(row, d.quantity)
        count = CHUNKS[row.mode] if d.count == "c" else d.count
        said = "not used" if d.unit == "unused" else f"{count} {d.unit}s"
        has = "not used" if got is None else f"{got[1]} {got[0]}s"
        if said != has:
            return Core("refuted", f"{d.quantity} steps over {has} in {row.layout.text}; the "
                        f"definition (line {d.span.line}) says {said}",
                        {"quantity": d.quantity, "definition": said, "layout": has},
                        method="arithmetic")
    if not checked:
        return Core("not-applicable", "no definition of LBO or SBO read for it")
    return Core("proved", f"{checked} definitions", method="arithmetic")


def _fields_verdict(family: str, rows: list[Any]) -> Verdict:
    owner: dict[int, Any] = {}
    for r in rows:
        if r.size != r.hi - r.lo + 1:
            return Verdict("field-fit", "refuted", f"bits {r.lo}-{r.hi} are {r.hi - r.lo + 1} "
                           f"bits, the table says {r.size}", {"field": [r.lo, r.hi],
                                                              "size": r.size}, r.span)
        if r.hi > 63:
            return Verdict("field-fit", "refuted", f"bits {r.lo}-{r.hi} leave the 64-bit "
                           "descriptor", {"field": [r.lo, r.hi]}, r.span)
        for b in range(r.lo, r.hi + 1):
            if b in owner:
                o = owner[b]
                return Verdict("field-fit", "refuted", f"bit {b} is in the fields at lines "
                               f"{o.span.line} and {r.span.line}", {"bit": b}, r.span)
            owner[b] = r
        if r.constant:
            v = _constant(r.constant)
            if v is None or v >= 1 << r.size:
                return Verdict("field-fit", "refuted", f"the fixed constant {r.constant} = "
                               f"{v if v is not None else '?'} does not fit the {r.size}-bit field "
                               f"{r.lo}-{r.hi}", {"constant": r.constant, "bits": r.size},
                               r.span)
    widest = max(SWIZZLE_CODES[family].values())
    sw = [f for f in DESCRIPTORS[family] if f.name == "swizzling mode"][0]
    if widest >= 1 << sw.width:
        return Verdict("field-fit", "refuted", f"swizzle code {widest} does not fit",
                       None, rows[-1].span)
    return Verdict("field-fit", "proved", f"{len(rows)} fields in 64 bits", None, rows[0].span,
                   "error", "arithmetic")


def _constant(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


# ---- catalog and documents -------------------------------------------------------------------


def prove_instance(inst: SmemInstance, together: DescriptorGroup | None = None) -> SmemResult:
    """A catalog layout's obligations; ``together``: the group its descriptor query is asked
    of Z3 in (``smem_descriptor.DescriptorGroup``)."""
    span = inst.row.layout.span
    inj = injective_core(inst.layout)
    vs = [_verdict("injective", inj, span)]
    if inj.status == "refuted":
        vs.append(_skipped("in-atom", "the layout is not injective", span))
    else:
        vs.append(_verdict("in-atom", in_atom_core(inst.layout, inst.major, inst.mode), span))
    vs.append(_verdict("descriptor", descriptor_core(inst, descriptor_of(inst),
                                                     together=together), span))
    vs.append(_verdict("tma-swizzle", tma_core(inst.mode, inst.mode), span)
              if inst.mode != "none" else
              _skipped("tma-swizzle", "no swizzle: the TMA writes the box as it is", span))
    return SmemResult(inst.id, f"{inst.family}.smem", span, tuple(vs),
                      f"{inst.major}-major {inst.mode}", inst.types, inst.layout.extent,
                      stated_hash("layout", inst.row.layout.text, inst.row.swizzle,
                                  sorted(inst.params.items()), inst.bits),
                      smem_hash(inst))


def family_of(text: SmemText) -> str:
    """Whose sections these are: the descriptor table's family, else tcgen05 where the text
    names tcgen05 and never wgmma (its canonical layouts, 9.7.16.3), else wgmma."""
    fams = {f.family for f in text.fields} or set(text.mentions)
    return "tcgen05" if fams == {"tcgen05"} else "wgmma"


def prove_smem(text: SmemText, family: str | None = None,
               catalog_families: tuple[str, ...] = (), evidence: Any = None) -> SmemProof:
    """Every obligation of a document's shared-memory sections (and, for the catalog, every
    family's layouts at every width, with the GPU ``evidence``'s verdict on each); findings
    are the refuted and unchecked verdicts."""
    fam = family or family_of(text)
    results = [prove_example(ex, text.canonical, fam) for ex in text.examples]
    results += prove_tables(text, fam)
    results += [SmemResult(f"{r.family}.smem.k-slice.{r.type}", f"{r.family}.smem", r.span,
                           (k_slice_verdict(r),), "k-slice", (r.type,),
                           formula=stated_hash("k-slice", r.bits, r.k, r.sparse_k))
                for r in text.k_slices]
    # every entry of the report answers 'hardware': the catalog's layouts from the runs built
    # from them, the examples and tables none (the runs read the catalog's layouts)
    results = [replace(r, verdicts=(*r.verdicts, Verdict(
        "hardware", "not-applicable", "the GPU runs read the catalog's layouts, not this entry",
        None, r.span))) for r in results]
    insts = [i for f in catalog_families for i in instances(f, text.canonical)]
    # Z3, as disjunctions where it is asked: every family's descriptors in one group (the
    # catalog's 48, 24 a family, 32 terms: two disjunctions of 16, not two a family)
    together = DescriptorGroup([(i, descriptor_of(i)) for i in insts])
    for i in insts:
        r = prove_instance(i, together)
        results.append(replace(r, verdicts=(*r.verdicts, hardware_verdict(i, evidence, r.span))))
    findings = list(text.findings)
    for r in results:
        for v in r.verdicts:
            if v.status in ("refuted", "error") and v.span is not None:
                findings.append(Finding("error", f"smem-{v.name}", v.span, f"{r.id}: {v.message}",
                                        counterexample=v.counterexample, layout=r.id))
            elif v.status == "unconfirmed" and v.span is not None:  # as a register layout's
                findings.append(Finding("warning", "hardware", v.span, f"{r.id}: {v.message}",
                                        layout=r.id))
    return SmemProof(tuple(results), tuple(findings))
