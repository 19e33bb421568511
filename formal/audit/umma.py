"""SM100 UMMA accumulators: CuTe's TMEM placement of D against the spec's data-path layouts.

CuTe does not state where a ``tcgen05.mma`` leaves D as a (thread, value) layout: its traits
name a fragment type, ``using FrgTypeC = UMMA::tmem_frg_2sm<c_type>;``, and the fragment's
``make`` picks a layout by ``if constexpr`` on the SMs of the instruction (``N_SM``), the
rows one SM holds (``M_MMA``) and an allocation mode.  ``formal.audit.header`` reads each
``Layout tmem_atom = Layout<...>{};`` of ``make`` with the conditions around it; this module
picks the branch, evaluates the layout at (M, N) and compares it with the catalog's data-path
layout (``formal/catalog/tcgen05-datapath.md``) cell by cell.  A worked example, M = 128 with
cta_group::2 (``tmem_frg_2sm``, so ``M_MMA`` = 64 rows a CTA) at N = 16:

    if constexpr (M_MMA == 64 && TmemAlloc == Interleaved)
        tmem_atom = Layout<Shape<_64, Shape<Int<N_MMA/2>, _2>>, Stride<_1, Stride<_128, _64>>>
    D(5, 11), CTA 0: n = 3 + 8 * 1 -> address 5 + 128 * 3 + 64 * 1 = 453
                     -> lane 453 % 128 = 69, column 453 // 128 = 3

(CuTe's "virtual" TMEM address: one lane a unit, 128 lanes a column, the ``tmem_restride``
of ``make``).  Layout B (dense) puts D(5, 11) at lane 64 + 5 = 69, column 11 - 8 = 3: equal.
Layout C (sparse A) puts it at lane 5, column 11, so a sparse 2-SM atom at M = 128 differs.
Rows of CTA c of the pair are ``c * M_MMA + m`` (the atom's ThrID is the CTA); a cell is
reported as (lane, column) with lane ``128 * cta + lane`` across the pair.  Columns are 32-bit
TMEM columns: CuTe's ``COL_ADDR`` scales element addresses of a value narrower than its
32-bit storage back to one element a column, as the spec's packing of D has it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .atoms import Atom, Env, _Unreadable
from .compare import Counterexample, index_array
from .header import CppBinOp, LocalLayout, Struct, Type, read_header
from .project import DATAPATH_ROWS, datapath_cells, spec_datapaths

DP_LANES = 128  # lanes of a CTA's tensor memory


@dataclass(frozen=True)
class UmmaD:
    """One verdict on an atom's D: equal / differs / unreadable, with the cells."""

    verdict: str
    message: str
    spec_layout: str = ""
    counterexample: Counterexample | None = None


def _struct(env: Env, name: str) -> Struct | None:
    """The struct ``name`` (``tmem_frg``, an arch struct) with its local layouts and
    static_asserts.  The header cache keeps neither, so where they are missing the struct's
    own text (from its ``struct`` keyword to the next struct's) is read again, once a
    process."""
    for h in env.headers:
        for s in h.structs:
            if s.name == name and s.type is not None and s.type.last.args is None:
                if s.locals or s.asserts or s.at < 0:
                    return s
                later = [t.at for t in h.structs if t.at > s.at]
                return _reread(h.path, s.at, min(later, default=-1), name)
    return None


def with_body(env: Env, st: Struct) -> Struct:
    """``st`` with what the header cache does not keep (its local layouts, asserts and
    constants: ``constexpr static int K = 96;``), re-read from its own text where missing."""
    if st.locals or st.asserts or st.constants or st.at < 0 or st.type is None:
        return st
    for h in env.headers:
        if any(t is st for t in h.structs):
            later = [t.at for t in h.structs if t.at > st.at]
            got = _reread(h.path, st.at, min(later, default=-1), st.name)
            return got if got is not None else st
    return st


@cache
def _reread(path: str, start: int, end: int, name: str) -> Struct | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    chunk = text[start:end if end >= 0 else len(text)]
    # up to the struct's closing "};": what follows (the next struct's "template <...>")
    # is no declaration on its own
    h = read_header(path, chunk[:chunk.rfind("};") + 2])
    return next((s for s in h.structs if s.name == name), None)


def traited_mma_atoms(env: Env, atoms: Sequence[Atom], member: str) -> list[tuple[Atom, str]]:
    """The mma atoms whose ``MMA_Traits`` name ``member`` (``FrgTypeSFA``: the block-scaled
    UMMA atoms; ``FrgTypeE``: the sparse ones), each with the header that states its traits
    (else the atom's own)."""
    out = []
    for atom in atoms:
        if atom.kind != "mma" or env.member("MMA_Traits", atom.name, member) is None:
            continue
        tr = env.traits.get(("MMA_Traits", atom.name))
        out.append((atom, str(tr[1]) if tr else atom.file))
    return out


def m_values(env: Env, atom: Atom) -> tuple[int, ...] | None:
    """The M an atom takes, from its arch struct's ``static_assert(M == 64 || M == 128, ..)``
    (None: no such assert read)."""
    arch = _struct(env, atom.name)
    for terms in arch.asserts if arch is not None else ():
        ms = [t.b for t in terms if isinstance(t, CppBinOp) and t.op == "=="
              and isinstance(t.a, Type) and str(t.a) == "M" and isinstance(t.b, int)]
        if ms and len(ms) == len(terms):
            return tuple(ms)
    return None


def _term(env: Env, e: Any, ints: dict[str, int], enums: dict[str, str]) -> bool:
    """One ``a == b`` of an ``if constexpr``: an enumerator (``UMMA::TmemAllocMode::X``) is
    compared by its name, everything else evaluated as a constant."""
    if isinstance(e, CppBinOp) and e.op in ("==", "!="):
        sides = []
        for x in (e.a, e.b):
            if isinstance(x, Type) and len(x.parts) == 1 and x.last.name in enums:
                sides.append(enums[x.last.name])
            elif isinstance(x, Type) and len(x.parts) > 1 and x.last.args is None:
                sides.append(x.last.name)
            else:
                sides.append(str(env.scalar(x, ints)))
        return (sides[0] == sides[1]) == (e.op == "==")
    return bool(env.scalar(e, ints))


def pick_branch(env: Env, frg: Struct, name: str, ints: dict[str, int],
                enums: dict[str, str]) -> LocalLayout | None:
    """The local layout ``name`` whose enclosing conditions all hold."""
    for loc in frg.locals:
        if loc.name != name:
            continue
        if any(c is None for c in loc.conditions):
            raise _Unreadable(f"{frg.name}: a plain 'else' branch the reader does not negate")
        if all(_term(env, t, ints, enums) for c in loc.conditions if c is not None for t in c):
            return loc
    return None


def fragment_of(env: Env, atom: Atom) -> tuple[str, int, str] | str:
    """(fragment struct, N_SM, allocation mode) of the atom's ``FrgTypeC``, or why not."""
    m = env.member("MMA_Traits", atom.name, "FrgTypeC")
    if m is None or not isinstance(m.type, Type):
        return f"{atom.name} names no FrgTypeC (its D fragment in TMEM)"
    t = m.type.last
    args = list(t.args or ())
    alias = env.aliases.get(t.name)
    if alias is not None and isinstance(alias.type, Type):  # tmem_frg_2sm<...> -> tmem_frg
        bound = dict(zip(alias.params, args))
        target = alias.type.last
        args = [bound.get(a.last.name, a) if isinstance(a, Type) and len(a.parts) == 1
                else a for a in target.args or ()]
        t = target
    frg = t.name
    if frg == "tmem_frg" and len(args) >= 3:
        n_sm = env.scalar(args[2], {})
        mode = args[3] if len(args) > 3 else None
    elif frg == "tmem_frg_ws" and len(args) >= 3:
        n_sm, mode = env.scalar(args[2], {}), None
    else:
        return f"FrgTypeC = {m.type}: not a tmem_frg the audit reads"
    # the reader drops template defaults: tmem_frg's TmemAlloc defaults to Interleaved
    alloc = mode.last.name if isinstance(mode, Type) and len(mode.parts) > 1 else "Interleaved"
    return frg, n_sm, alloc


def umma_cute_cells(env: Env, frg: Struct, n_sm: int, alloc: str, m: int, n: int) \
        -> np.ndarray | str:
    """CuTe's (global lane, column) of every D(row, col), an M x N x 2 array, or why not."""
    m_mma = m // n_sm
    ints = {"N_SM": n_sm, "M_MMA": m_mma, "N_MMA": n}
    loc = pick_branch(env, frg, "tmem_atom", ints, {"TmemAlloc": alloc})
    if loc is None:
        return (f"{frg.name}::make has no branch for N_SM = {n_sm}, M_MMA = {m_mma} "
                f"({alloc})")
    lay = env.layout(loc.type, ints)
    if lay.rank != 2 or lay.mode(0).size != m_mma or lay.mode(1).size != n:
        return f"{frg.name}'s tmem_atom (line {loc.line}) {lay} is not {m_mma} x {n}"
    addr = index_array(lay)
    out = np.zeros((m, n, 2), dtype=np.int64)
    for cta in range(n_sm):
        rows = slice(cta * m_mma, (cta + 1) * m_mma)
        out[rows, :, 0] = DP_LANES * cta + addr % DP_LANES
        out[rows, :, 1] = addr // DP_LANES
    return out


@cache
def datapath_spec_cells(letter: str, m: int, n: int) -> np.ndarray | None:
    """The spec's (global lane, column) of every D(row, col) of data-path Layout ``letter``
    at M = ``m``, N = ``n``, an M x N x 2 array (-1: no cell), or None where the catalog has
    no such layout.  Made once a process for each (letter, M, N) -- the UMMA atoms of one
    fragment ask for the same ones -- so the array is read-only."""
    dp = next((d for d in spec_datapaths() if d.layout == letter), None)
    if dp is None:
        return None
    c = datapath_cells(dp, n)
    out = np.full((m, n, 2), -1, dtype=np.int64)
    out[c["row"], c["dcol"], 0] = DP_LANES * c["cta"] + c["lane"]
    out[c["row"], c["dcol"], 1] = c["tcol"]
    out.flags.writeable = False
    return out


def spec_rows(cta: int, sparse: bool, ws: bool) -> list[tuple[str, int, tuple[int, ...]]]:
    """(layout letter, M, the N values) of every data-path row for this instruction."""
    out = []
    for letter, m, group, sparsity, wsm, ns in DATAPATH_ROWS:
        if group != cta or sparsity not in ("either", "sparse" if sparse else "dense"):
            continue
        if wsm not in ("either", "n/a", "yes" if ws else "no"):
            continue
        out.append((letter, m, ns))
    return out


def compare_d(env: Env, atom: Atom, cta: int, sparse: bool, ws: bool) -> UmmaD:
    """D of one UMMA atom at every M it takes (its static_assert's, else every M of the
    data-path table) and every N of the mma, against the catalog's layout."""
    try:
        ms = m_values(env, atom)
        got = fragment_of(env, atom)
        if isinstance(got, str):
            return UmmaD("unreadable", got)
        name, n_sm, alloc = got
        frg = _struct(env, name)
        if frg is None:
            return UmmaD("unreadable", f"no struct {name} with local layouts in the headers "
                         "read")
        key = (id(frg), n_sm, alloc, ms, cta, sparse, ws)
        hit = _SAID.get(key)
        if hit is None or hit[0] is not frg:  # the atoms of one fragment share the verdict
            hit = _SAID[key] = (frg, _compare(env, frg, name, n_sm, alloc, ms, cta, sparse, ws))
        return hit[1]
    except _Unreadable as e:
        return UmmaD("unreadable", str(e))


# (the fragment struct's identity, N_SM, mode, the M values, cta_group, sparse, ws) -> verdict
_SAID: dict[tuple[Any, ...], tuple[Struct, UmmaD]] = {}


def _compare(env: Env, frg: Struct, name: str, n_sm: int, alloc: str,
             ms: tuple[int, ...] | None, cta: int, sparse: bool, ws: bool) -> UmmaD:
    try:
        said, ids = [], []
        for letter, m, ns in spec_rows(cta, sparse, ws):
            if ms is not None and m not in ms:
                continue
            ids.append(f"tcgen05.datapath.{letter}")
            for n in ns:
                mine = umma_cute_cells(env, frg, n_sm, alloc, m, n)
                if isinstance(mine, str):
                    return UmmaD("unreadable", f"M = {m}, N = {n}: {mine}", ", ".join(ids))
                want = datapath_spec_cells(letter, m, n)
                if want is None:
                    return UmmaD("not-in-spec", f"the catalog has no data-path Layout {letter}")
                bad = np.argwhere((mine != want).any(axis=2))
                if len(bad):
                    r, c = (int(x) for x in bad[0])
                    g, w = tuple(map(int, mine[r, c])), tuple(map(int, want[r, c]))
                    return UmmaD(
                        "differs",
                        f"M = {m}, N = {n} ({name}, N_SM = {n_sm}, {alloc}; Layout {letter}): "
                        f"D(row {r}, col {c}): CuTe says (lane {g[0]}, column {g[1]}), the "
                        f"spec says (lane {w[0]}, column {w[1]}) (lane = 128 * CTA + lane); "
                        f"{int(len(bad))} of {m * n} cells differ",
                        ", ".join(ids), Counterexample(r, c, (g[0], g[1]), (w[0], w[1])))
            said.append(f"M = {m}: Layout {letter}, N = {ns[0]}..{ns[-1]}")
        if not said:
            return UmmaD("not-in-spec", "no data-path layout of the spec serves the M values "
                         f"{list(ms or ())} of this atom")
        return UmmaD("equal", f"D in tensor memory ({name}, N_SM = {n_sm}, {alloc}): every "
                     f"cell where the spec's data-path layout puts it, {'; '.join(said)} "
                     "(lane alignment 0)", ", ".join(ids))
    except _Unreadable as e:
        return UmmaD("unreadable", str(e))
