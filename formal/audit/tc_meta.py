"""CuTe's SM100 sparse UMMA atoms: where their sparsity metadata sits in tensor memory,
against the catalog's tcgen05 metadata layouts, bit by bit.

CuTe states the placement only as a fragment type: ``using FrgTypeE =
UMMA::tmem_e_frg<a_type>;`` (or ``<uint8_t>``), whose ``make`` picks ``Layout tmem_atom =
Layout<...>{};`` by ``if constexpr (sizeof_bits<ValueType>::value == 16)`` and so on.  The atom
maps (row, k) of the metadata matrix to a "virtual" tensor-memory address ``v``: lane ``v %
128``, element ``v // 128`` of that lane, an element being the ``sparse_elem<S, uint8_t>`` of
``make``'s tensor pointer, 8 / S bits.  ``formal.audit.header`` keeps the branches and their
conditions but not the ``return`` that names the pointer, so the element's bits are stated
below per branch (``ELEMENT_BITS``; a test finds each ``sparse_elem`` in the wheel's text).
For ``.kind::f16`` at M = 128, K = 32 (elements of one bit):

    ((8, 2, 8), (16, 2)) : ((1, 2048, 16), (128, 8))
    (row 8, k 20): row 8 = 0 + 8 * 1 -> 2048, k 20 = 4 + 16 * 1 -> 128 * 4 + 8
        -> v = 2568: lane 2568 % 128 = 8, element 2568 // 128 = 20 -> column 0, bit 20

k 20 lies in chunk 5 (a 4-bit field for each four of K), so CuTe holds the field of (row 8,
chunk 5) at lane 8, bits 20-23 of the first column; at selector s CuTe's metadata address
starts s columns on.  The catalog's ``.kind::f16`` program at ``sel = 0`` gives lane ``8 %
8 + 8 * (5 / 4) + 16 * (8 / 16)`` = 8, column 0, bit ``4 * 1 + 16 * 1`` = 20: equal.  Each
comparison is one (atom, M, kind, selector): every (lane, column, bit) cell with the
(row, chunk) that CuTe puts there and the one the catalog does, and the first cell where they
differ is the counterexample.  The catalog states only one CTA's M = 128 forms without
``.ws`` for an atom to meet (a pair's M = 128 or 256, and M = 64 without ``.ws``, are
figures only): those are ``not-in-spec``, each with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .atoms import Atom, Env, _Unreadable
from .header import CppBinOp, LocalLayout, Struct, Type
from .ptx import opcodes
from .umma import _struct, m_values, traited_mma_atoms

FRAGMENT = "tmem_e_frg"
LANES, WORD = 128, 32
# the bits of one element of make's tensor pointer, by the branch's sizeof_bits<ValueType>:
# make_tmem_ptr<sparse_elem<4, uint8_t>> (TF32), <8> (FP16 and the 8-bit kinds), <16> (F4)
ELEMENT_BITS = {32: Fraction(2), 16: Fraction(1), 8: Fraction(1), 4: Fraction(1, 2)}
# the width of A's element each kind names, for a fragment typed by the atom's a_type
KIND_BITS = {"tf32": 32, "f16": 16, "i8": 8, "mxf4": 4, "mxf4nvf4": 4}
BUILTIN_BITS = {"uint8_t": 8, "int8_t": 8, "uint16_t": 16, "uint32_t": 32}

Cell = tuple[int, int, int]  # (lane, column, bit)
Owner = tuple[int, int]  # (row, chunk)


@dataclass(frozen=True)
class TcMetaComparison:
    """One sparse atom's metadata at one M, kind and selector against one catalog layout
    (``spec``, its selector's id)."""

    atom: str
    file: str
    line: int
    m: int
    kind: str
    selector: int | None
    cute: str  # the fragment, its branch and the layout evaluated
    spec: str
    verdict: str  # equal | differs | not-in-spec | unreadable
    difference: dict[str, Any] | None = None  # the first differing cell
    differing: int = 0  # bits whose (row, chunk) differ
    why: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"atom": self.atom, "file": self.file, "line": self.line, "m": self.m,
                "kind": self.kind, "selector": self.selector, "cute": self.cute,
                "spec_layout": self.spec or None, "verdict": self.verdict,
                "differing_bits": self.differing, "difference": self.difference,
                "message": self.why}


def _sizeof(e: Any) -> bool:
    """Is ``e`` ``sizeof_bits<ValueType>::value``?"""
    return isinstance(e, Type) and len(e.parts) == 2 and e.parts[0].name == "sizeof_bits" \
        and e.parts[1].name == "value"


def _holds(env: Env, term: Any, bits: int, ints: dict[str, int]) -> bool:
    if isinstance(term, CppBinOp) and term.op in ("==", "!=") and _sizeof(term.a):
        return (bits == env.scalar(term.b, ints)) == (term.op == "==")
    return bool(env.scalar(term, ints))


def pick_meta_branch(env: Env, frg: Struct, bits: int, m_mma: int) -> LocalLayout | None:
    """The ``tmem_atom`` of ``make`` whose ``if constexpr`` conditions hold for a value of
    ``bits`` and ``M_MMA`` rows."""
    for loc in frg.locals:
        if loc.name != "tmem_atom" or any(c is None for c in loc.conditions):
            continue
        if all(_holds(env, t, bits, {"M_MMA": m_mma}) for c in loc.conditions
               if c is not None for t in c):
            return loc
    return None


def cute_meta_cells(atom: Any, rows: int, k: int, per: int, bits: Fraction, sel: int) \
        -> dict[Cell, set[Owner]] | str:
    """CuTe's (lane, column, bit) -> the (row, chunk) of every field bit its fragment
    ``atom`` gives, a chunk being ``per`` elements of K, the metadata address ``sel``
    columns on; or why the atom is not a (rows, K) layout."""
    if atom.rank != 2 or atom.mode(0).size != rows or atom.mode(1).size != k:
        return f"{atom} is not a ({rows}, {k}) layout of (row, k)"
    first, second = atom.mode(0), atom.mode(1)
    out: dict[Cell, set[Owner]] = {}
    col_of = [second(j) for j in range(k)]
    for r in range(rows):
        ro = first(r)
        for j in range(k):
            v = ro + col_of[j]
            lo = Fraction(v // LANES) * bits
            for b in range(int(lo), max(int(lo + bits), int(lo) + 1)):
                out.setdefault((v % LANES, b // WORD + sel, b % WORD), set()).add((r, j // per))
    return out


def spec_meta_cells(lay: Any, sel: int) -> dict[Cell, set[Owner]]:
    """The catalog's (lane, column, bit) -> (row, chunk) at selector ``sel``."""
    out: dict[Cell, set[Owner]] = {}
    for row, chunk, lane, col, bit, _copy in lay.placed(sel):
        for b in range(bit, bit + lay.width):
            out.setdefault((lane, col, b), set()).add((row, chunk))
    return out


def _first_difference(got: dict[Cell, set[Owner]], want: dict[Cell, set[Owner]]) \
        -> tuple[int, dict[str, Any] | None]:
    cells = sorted(c for c in set(got) | set(want) if got.get(c) != want.get(c))
    if not cells:
        return 0, None
    lane, col, bit = cells[0]
    return len(cells), {"lane": lane, "column": col, "bit": bit,
                        "cute": [list(o) for o in sorted(got.get(cells[0], ()))],
                        "spec": [list(o) for o in sorted(want.get(cells[0], ()))]}


def _owners(os: list[list[int]]) -> str:
    return " and ".join(f"(row {o[0]}, chunk {o[1]})" for o in os) or "nothing"


def _value_bits(arg: Any, kind: str) -> int:
    """sizeof_bits of the fragment's ValueType: a named integer type's, else (the atom's
    ``a_type``) the width of A's element the asm's kind names."""
    if isinstance(arg, Type) and len(arg.parts) == 1 and arg.last.name in BUILTIN_BITS:
        return BUILTIN_BITS[arg.last.name]
    if kind in KIND_BITS:
        return KIND_BITS[kind]
    raise _Unreadable(f"the width of '{arg}' for .kind::{kind} is not one the reader knows")


def sparse_forms(env: Env, atom: Atom) -> list[tuple[int, str]]:
    """(cta_group, kind) of each sparse ``tcgen05.mma`` of the atom's asm, in order."""
    arch = _struct(env, atom.name)
    out: list[tuple[int, str]] = []
    for lits in arch.asm if arch is not None else ():
        got = opcodes(lits)
        for op in got if not isinstance(got, str) else []:
            row = (int(op.qualifier("cta_group") or 1), op.qualifier("kind"))
            if op.name == "tcgen05" and "sp" in op.words and row not in out:
                out.append(row)
    return out


def compare_meta_atom(env: Env, atom: Atom, file: str, layouts: Sequence[Any]) \
        -> list[TcMetaComparison]:
    """One sparse UMMA atom's metadata at every M its arch struct admits, every kind its asm
    names and every selector the catalog states, against the catalog's layout."""
    mem = env.member("MMA_Traits", atom.name, "FrgTypeE")
    if mem is None or not isinstance(mem.type, Type):
        return []
    line = mem.line
    frg = _struct(env, FRAGMENT)
    forms = sparse_forms(env, atom)
    args = mem.type.last.args or ()
    if frg is None or not forms or mem.type.last.name != FRAGMENT or len(args) != 1:
        why = (f"no struct {FRAGMENT}" if frg is None else
               "no sparse tcgen05.mma in its asm" if not forms else
               f"FrgTypeE is {mem.type}, not {FRAGMENT}<ValueType>")
        return [TcMetaComparison(atom.name, file, line, 0, "", None, str(mem.type), "",
                                 "unreadable", why=why)]
    out: list[TcMetaComparison] = []
    for cta, kind in forms:
        ms = m_values(env, atom) or (0,)
        for m in ms:
            out.extend(_one(env, atom.name, file, line, str(mem.type), frg, args[0], cta,
                            kind, m, layouts))
    return out


def _one(env: Env, name: str, file: str, line: int, said: str, frg: Struct, arg: Any,
         cta: int, kind: str, m: int, layouts: Sequence[Any]) -> list[TcMetaComparison]:
    mine = [x for x in layouts if x.instruction == "tcgen05.mma.sp" and x.kind == kind
            and x.m == m] if cta == 1 else []
    if not mine:
        where = ("any M (its arch struct states none the reader reads)" if not m
                 else f"M = {m}")
        pair = (f"; CuTe gives each CTA of the pair its {m // 2} rows in tmem_e_frg"
                if cta == 2 and m else "")
        return [TcMetaComparison(
            name, file, line, m, kind, None, said, "", "not-in-spec",
            why=f"the catalog states no tcgen05.mma.sp .kind::{kind} metadata at {where}, "
                f"cta_group::{cta} (it states one CTA's M = 128 without .ws; the text gives "
                f"the others as figures only){pair}")]
    out = []
    for lay in mine:
        try:
            bits = _value_bits(arg, kind)
            loc = pick_meta_branch(env, frg, bits, m // cta)
            if loc is None or bits not in ELEMENT_BITS:
                raise _Unreadable(f"{FRAGMENT}::make has no branch for sizeof_bits "
                                  f"{bits}, M_MMA {m // cta}")
            atom = env.layout(loc.type, {"M_MMA": m // cta})
        except _Unreadable as e:
            out.append(TcMetaComparison(name, file, line, m, kind, None, said, lay.id,
                                        "unreadable", why=str(e)))
            continue
        cute = f"{said}: the sizeof_bits {bits} branch, {atom}, {ELEMENT_BITS[bits]} bit " \
               "an element"
        for sel in lay.sels:
            got = cute_meta_cells(atom, lay.rows, lay.k, lay.k // lay.chunks,
                                  ELEMENT_BITS[bits], sel)
            sid = lay.selector_id(sel)
            if isinstance(got, str):
                out.append(TcMetaComparison(name, file, line, m, kind, sel, cute, sid,
                                            "unreadable", why=got))
                continue
            want = spec_meta_cells(lay, sel)
            n, d = _first_difference(got, want)
            if d is None:
                out.append(TcMetaComparison(
                    name, file, line, m, kind, sel, cute, sid, "equal",
                    why=f"every bit of the {lay.rows} x {lay.chunks} fields where the catalog "
                        f"puts it ({len(want)} bits)"))
                continue
            out.append(TcMetaComparison(
                name, file, line, m, kind, sel, cute, sid, "differs", d, n,
                f"{n} bits differ; lane {d['lane']}, column {d['column']}, bit {d['bit']}: "
                f"CuTe holds {_owners(d['cute'])}, the spec {_owners(d['spec'])}"))
    return out


def audit_tc_meta_env(env: Env, atoms: Sequence[Atom], layouts: Sequence[Any]) \
        -> list[TcMetaComparison]:
    """Every SM100 sparse UMMA atom (its traits name ``FrgTypeE``) the headers define,
    against the catalog's tcgen05 sparse-metadata layouts."""
    out: list[TcMetaComparison] = []
    for atom, file in traited_mma_atoms(env, atoms, "FrgTypeE"):
        out.extend(compare_meta_atom(env, atom, file, layouts))
    return out
