"""CuTe's shared-memory layout atoms for UMMA / GMMA against the catalog's canonical layouts.

CuTe states each swizzle atom once, in bits, as a composed layout

    using Layout_K_SW64_Atom_Bits = ComposedLayout<Swizzle<2,4,3>, smem_ptr_flag,
                                                   Layout<Shape<_8,_512>,Stride<_512,_1>>>;

and ``Layout_K_SW64_Atom<T>`` is it ``upcast`` by T's bits: for 16-bit elements the layout
(8,32):(32,1) in elements, the swizzle on the byte address (``smem_ptr_flag``: CuTe swizzles
the pointer).  Element (row 1, col 9) -> offset 32 + 9 = 41 -> byte 82 = 0b0101_0010: the
64B swizzle XORs bits 7-8 (0) into bits 4-5 -> byte 82.  The catalog's K-major 64B canonical
layout ``((8,m),(T,2k)):((4T,SBO),(1,T))`` with T = 8 puts (row 1, col 9) at 1*32 + 1 + 8 = 41
too, the same swizzle on the byte: equal.  Every (row, col) of the atom is compared for every
element width tcgen05 takes with that majorness; a difference names the first coordinate
(MN, K) and both byte addresses (bit addresses for 4-bit elements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.cute import CuteLayout
from .atoms import Atom, Env, _Unreadable
from .header import Type
from .project import smem_canonical_rows, smem_layout_at

# CuTe's atom (the alias of its bits) -> (majorness, the catalog's swizzle mode)
CUTE_SMEM_ATOMS = {
    "Layout_MN_INTER_Atom_Bits": ("MN", "none"), "Layout_MN_SW32_Atom_Bits": ("MN", "32B"),
    "Layout_MN_SW64_Atom_Bits": ("MN", "64B"), "Layout_MN_SW128_Atom_Bits": ("MN", "128B"),
    "Layout_K_INTER_Atom_Bits": ("K", "none"), "Layout_K_SW32_Atom_Bits": ("K", "32B"),
    "Layout_K_SW64_Atom_Bits": ("K", "64B"), "Layout_K_SW128_Atom_Bits": ("K", "128B"),
    "Layout_MN_SW128_32B_Atom_Bits": ("MN", "128B with 32B atomicity"),
}
# the element widths tcgen05 reads from shared memory, by majorness (formal.model.smem.WIDTHS)
TCGEN05_WIDTHS = {"K": (32, 16, 8, 4), "MN": (32, 16, 8)}


@dataclass(frozen=True)
class SmemVerdict:
    bits: int
    verdict: str
    message: str
    spec_layout: str = ""
    cute: str = ""


def upcast(lay: CuteLayout, n: int) -> CuteLayout:
    """CuTe's ``upcast<n>`` of a flat layout in bits: a stride-1 mode's extent and every other
    stride divided by ``n`` (bits -> ``n``-bit elements)."""
    shape, stride = [], []
    for s, d in zip(lay.shape, lay.stride):
        if not isinstance(s, int) or not isinstance(d, int):
            raise _Unreadable(f"{lay}: a nested mode the audit does not upcast")
        if d == 1:
            if s % n:
                raise _Unreadable(f"{lay}: extent {s} is not a multiple of {n} bits")
            shape.append(s // n)
            stride.append(1)
        else:
            if d % n:
                raise _Unreadable(f"{lay}: stride {d} is not a multiple of {n} bits")
            shape.append(s)
            stride.append(d // n)
    return CuteLayout(tuple(shape), tuple(stride))


def _swizzle(b: int, m: int, s: int, x: int) -> int:
    """CuTe's Swizzle<B,M,S>: the B bits at M + S XORed into the B bits at M."""
    return x ^ ((x >> s) & (((1 << b) - 1) << m))


def read_atom(env: Env, name: str) -> tuple[tuple[int, int, int], CuteLayout] | str:
    """(swizzle B, M, S) and the layout in bits of CuTe's atom alias ``name``, or why not."""
    alias = env.aliases.get(name)
    if alias is None or not isinstance(alias.type, Type):
        return f"no alias {name} in the headers read"
    t = alias.type.last
    args = t.args or ()
    if t.name != "ComposedLayout" or len(args) != 3 or not isinstance(args[0], Type) \
            or args[0].last.name != "Swizzle" or len(args[0].last.args or ()) != 3:
        return f"{name} = {alias.type}: not ComposedLayout<Swizzle<B,M,S>, flag, Layout>"
    b, m, s = (env.scalar(a, {}) for a in args[0].last.args or ())
    return (b, m, s), env.layout(args[2], {})


def compare_atom(env: Env, name: str) -> list[SmemVerdict]:
    major, mode = CUTE_SMEM_ATOMS[name]
    try:
        got = read_atom(env, name)
    except _Unreadable as e:
        got = str(e)
    if isinstance(got, str):
        return [SmemVerdict(0, "unreadable", got)]
    (b, m, s), bits_layout = got
    rows = {(r.major, r.mode): r for r in smem_canonical_rows()}
    row = rows.get((major, mode))
    out = []
    for bits in TCGEN05_WIDTHS[major]:
        try:
            lay = upcast(bits_layout, bits)
        except _Unreadable as e:
            out.append(SmemVerdict(bits, "unreadable", str(e)))
            continue
        cute = f"Swizzle<{b},{m},{s}> o {lay}"
        if row is None:
            out.append(SmemVerdict(bits, "not-in-spec", f"the catalog's canonical layouts "
                                   f"(formal/catalog/smem/layouts.md) have no {major}-major "
                                   f"{mode} row", "", cute))
            continue
        spec = smem_layout_at(row, bits, lay.shape[0], lay.shape[1])
        sid = f"tcgen05.smem.{major}-major.{mode}.b{bits}"
        out.append(_cells(bits, lay, (b, m, s), spec, sid, cute))
    return out


def _cells(bits: int, lay: CuteLayout, sw: tuple[int, int, int], spec: Any, sid: str,
           cute: str) -> SmemVerdict:
    unit, div = ("bit", 1) if bits < 8 else ("byte", 8)
    rows, cols = lay.shape[0], lay.shape[1]
    assert isinstance(rows, int) and isinstance(cols, int)
    for k in range(cols):
        for mn in range(rows):
            off = lay((mn, k)) * bits
            mine = _swizzle(*sw, off // 8) * 8 + off % 8
            want = spec.bit_address((mn, k))
            if mine != want:
                return SmemVerdict(bits, "differs", f"(MN {mn}, K {k}): CuTe's {unit} "
                                   f"{mine // div}, the spec's {unit} {want // div}", sid, cute)
    return SmemVerdict(bits, "equal", f"every element of the {rows} x {cols} (MN x K) atom "
                       f"at the spec's {unit} address, {bits}-bit elements", sid, cute)


def smem_atoms(env: Env) -> list[tuple[Atom, list[SmemVerdict]]]:
    """Every CuTe smem atom the headers define, as a pseudo-atom (kind ``smem``) and its
    verdict per element width."""
    where = {a.name: h.path for h in env.headers for a in h.aliases}
    out = []
    for name in CUTE_SMEM_ATOMS:
        alias = env.aliases.get(name)
        if alias is None:
            continue
        atom = Atom(name.removesuffix("_Bits"), "smem", where.get(name, ""), alias.line, None,
                    ())
        out.append((atom, compare_atom(env, name)))
    return out
