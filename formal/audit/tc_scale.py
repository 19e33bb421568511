"""CuTe's SM100 block-scaled UMMA atoms: where their scale factors sit in tensor memory,
against the catalog's tcgen05 block-scale layouts.

CuTe states the placement only as a fragment type: ``using FrgTypeSFA =
UMMA::tmem_sf_frg<sf_type, SFVecSize, 2, true, TmemAlloc>;`` (``TmemAlloc`` a constant of the
traits, ``M == 128 ? ScaleFactorDuplicated2by2 : ScaleFactorDuplicated4by1``), whose ``make``
picks ``auto tmem_atom = Layout<...>{};`` by ``if constexpr (Is_SFA || (!Is_SFA && TmemAlloc
== ...4by1))`` / ``else``.  ``formal.audit.header`` reads the branches, their conditions and
the constants (``REP = _4``, ``SUBPART_DPs = 32``, the traits' ``K`` and ``SFVecSize``); this
module picks the branch, evaluates it at ``MMA_MN`` (rows of A a CTA holds, M / N_SM; all N
columns of B), ``MMA_VS`` and ``MMA_NSF = K / VS``, and compares every factor's places with
the catalog's.  The 4x1 branch for scale_A at M = 128, one CTA, VS = 32, K = 64:

    ((((32, 4), 4), (32, 2)) : (((1, 512), 32), (0, 128)))
    factor (row 33, block 1): mn 33 = 1 + 32 * 1, rep r, block 1
        -> address 1 + 512 + 32 r + 128 = lane 1 + 32 r, byte-address 5
        -> lanes 1, 33, 65, 97 (every partition), column 5 // 4 = 1, byte 5 % 4 = 1

(CuTe's virtual address: a lane a unit, 128 lanes a step along the lane's bytes; an 8-bit
factor's ``tmem_ptr`` counts bytes, four a 32-bit column).  The catalog's
``.scale_vec::2X`` at ID 0 puts (33, 1) at lane 1, column 1, byte 1, copied into all four
partitions: equal.  Each place is (CTA, lane 0-127, column, byte); CTA c of a pair holds rows
``c * MMA_MN + mn`` of scale_A and all of scale_B.  A factor whose places differ is reported
with both sets, the places only CuTe has and the ones only the spec has.

SM103's K = 96 atoms (``SM103_*``) are sized by their own collective
(``cutlass/gemm/collective/sm103_blockscaled_mma_warpspecialized.hpp``), not at NSF = K / VS:
it makes the fragment on its scale-factor atom's shape, ``Sm103BlockScaledBasicChunk``'s
``Blk_SF = _4`` factors a row (one 32-bit word), tiled along K (``tiled_product``: the next
four at the atom's cosize, ``16 * MMA_MN`` -- M / 32 columns on), and hands the k-th MMA the
address of its first factor (``sf_stride`` 6 or 3 blocks a K = 96 step: byte 0 or 2 of a
word).  So at M = 128, VS = 16 factor (row 0, block 4) sits at lane 0, column 4, byte 0 --
``512 * 0 + 128 * 0 + 2048 * 1`` -- and (row 32, block 0) at column 1: no two on one byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .atoms import Atom, Env, _Unreadable
from .header import CppBinOp, CppBool, CppChoice, CppParen, Struct, Type
from .ptx import opcodes
from .umma import _struct, m_values, traited_mma_atoms, with_body

FRAGMENT = "tmem_sf_frg"
DEFAULT_ALLOC = "ScaleFactorDuplicated4by1"  # tmem_sf_frg's default (the reader drops it)
LANES, PARTITION, WORD = 128, 32, 4
MAX_LISTED = 16  # differing factors listed in full; the count says how many differ
# SM103's collective: the fragment holds Blk_SF = 4 factors a row (a word), tiled along K
SM103_PREFIX, SM103_WORD = "SM103_", 4
# the block a factor scales, by the form the asm names (block32 is scale_vec::1X / 2X, block16
# scale_vec::4X: PTX's aliases), so each asm of an atom pairs with its SFVecSize
FORM_BLOCK = {"block32": 32, "block16": 16, "scale_vec::1X": 32, "scale_vec::2X": 32,
              "scale_vec::4X": 16, "": 32}

Place = tuple[int, int, int, int]  # (CTA, lane 0-127, column, byte)


@dataclass(frozen=True)
class TcScaleComparison:
    """One scale operand of one SM100 atom at one M and vector size against one catalog
    layout (``spec``, its id)."""

    atom: str
    file: str
    line: int
    operand: str  # "A" | "B"
    m: int
    vs: int
    cute: str  # the fragment, its branch and the layout evaluated
    spec: str
    verdict: str  # equal | differs | not-in-spec | unreadable
    differences: tuple[dict[str, Any], ...] = ()
    differing: int = 0  # factors whose places differ (differences lists MAX_LISTED)
    why: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"atom": self.atom, "file": self.file, "line": self.line,
                "operand": self.operand, "m": self.m, "vector_size": self.vs,
                "cute": self.cute, "spec_layout": self.spec or None, "verdict": self.verdict,
                "differing_factors": self.differing, "differences": list(self.differences),
                "message": self.why}


def _constants(env: Env, st: Struct, ints: dict[str, int]) -> dict[str, Any]:
    """A struct's constants by name, the integer ones evaluated (``REP = _4`` -> 4), the
    others (an enumerator, a choice) kept as written."""
    out: dict[str, Any] = {}
    for c in st.constants:
        try:
            out[c.name] = env.scalar(c.value, {**ints, **{k: v for k, v in out.items()
                                                         if isinstance(v, int)}})
        except (_Unreadable, AssertionError):
            out.setdefault(c.name, c.value)
    return out


def _truth(e: Any, flags: dict[str, Any]) -> bool:
    """A branch condition (``CppBool``, ``a == b``, a flag) at ``flags`` (``Is_SFA``: a bool,
    ``TmemAlloc``: an enumerator's name); enumerators compare by their last name."""
    if isinstance(e, CppParen):
        return _truth(e.a, flags)
    if isinstance(e, CppBool):
        vals = [_truth(a, flags) for a in e.args]
        return not vals[0] if e.op == "!" else (any(vals) if e.op == "||" else all(vals))
    if isinstance(e, CppBinOp) and e.op in ("==", "!="):
        a, b = (_word(x, flags) for x in (e.a, e.b))
        return (a == b) == (e.op == "==")
    got = _word(e, flags)
    if not isinstance(got, bool):
        raise _Unreadable(f"'{e}' is not a condition the reader evaluates")
    return got


def _word(e: Any, flags: dict[str, Any]) -> Any:
    if isinstance(e, int):
        return e
    if isinstance(e, Type):
        name = e.last.name
        if len(e.parts) == 1 and name in flags:
            return flags[name]
        if len(e.parts) == 1 and name in ("true", "false"):
            return name == "true"
        return name  # UMMA::TmemAllocMode::X -> X
    raise _Unreadable(f"'{e}' is not a condition the reader evaluates")


def pick_sf_branch(frg: Struct, flags: dict[str, Any]) -> Any:
    """The ``tmem_atom`` whose ``if constexpr`` holds, else the ``else`` after it."""
    for loc in frg.locals:
        if loc.name != "tmem_atom":
            continue
        if any(c is None for c in loc.conditions):
            return loc  # the plain else: every branch before it was false
        if all(_truth(t, flags) for c in loc.conditions if c is not None for t in c):
            return loc
    return None


def cute_factor_places(env: Env, frg: Struct, n_sm: int, is_a: bool, alloc: str, mn: int, vs: int,
                       nsf: int, word: int | None = None) \
        -> dict[tuple[int, int], set[Place]] | str:
    """CuTe's places of every factor (mn, block) -- of scale_A for ``is_a``, over the pair's
    rows -- or why not.  ``word``: the fragment is made with that many factors a row and
    tiled along K (SM103's collective), block b at the atom's block ``b % word`` plus ``b //
    word`` times its cosize; else it is made with all ``nsf``."""
    per_cta = mn // n_sm if is_a else mn
    made = word or nsf
    ints = {"MMA_MN": per_cta, "MMA_VS": vs, "MMA_NSF": made, "N_SM": n_sm}
    ints.update({k: v for k, v in _constants(env, frg, ints).items() if isinstance(v, int)})
    loc = pick_sf_branch(frg, {"Is_SFA": is_a, "TmemAlloc": alloc, "N_SM": n_sm})
    if loc is None:
        return f"{FRAGMENT}::make has no branch for Is_SFA = {is_a}, {alloc}"
    lay = env.layout(loc.type, ints)
    if lay.rank != 2 or lay.mode(1).size != vs * made or lay.mode(0).size % per_cta:
        return f"{FRAGMENT}'s tmem_atom (line {loc.line}) {lay} is not ({per_cta}, rep) x " \
               f"({vs}, {made})"
    first, second = lay.mode(0), lay.mode(1)
    rep = first.size // per_cta
    # address[r, m] of mode 0 (i = m + per_cta * r) plus address[block, v] of mode 1 (j = v
    # + vs * block), evaluated once each; a factor's places are the distinct sums
    fi = np.array([first(i) for i in range(first.size)], dtype=np.int64).reshape(rep, per_cta)
    sj = np.array([second(j) for j in range(second.size)], dtype=np.int64).reshape(made, vs)
    if made < nsf:  # tiled along K: the next ``made`` blocks one cosize on
        image = np.unique(fi[:, :, None] + sj.reshape(-1)[None, None, :])
        cosize = int(image[-1]) + 1
        if len(image) != cosize:  # tiled_product's complement is then not one stride
            return f"{FRAGMENT}'s tmem_atom {lay} does not fill [0, {cosize}): its tiling " \
                   "along K is not read"
        sj = np.concatenate([sj + t * cosize for t in range(-(-nsf // made))])
    sj = sj[:nsf]
    out: dict[tuple[int, int], set[Place]] = {}
    for m in range(per_cta):
        for b in range(nsf):
            addrs = set((fi[:, m][:, None] + sj[b][None, :]).ravel().tolist())
            for cta in range(n_sm):  # each CTA's TMEM: its rows of A, all of B
                who = cta * per_cta + m if is_a else m
                out.setdefault((who, b), set()).update(
                    (cta, a % LANES, a // LANES // WORD, a // LANES % WORD) for a in addrs)
    return out


def spec_factor_places(lay: Any) -> dict[tuple[int, int], set[Place]]:
    """The catalog's places of every factor at ID 0, (mn, block) -> places, each copied into
    the partitions the layout names (its half's two, else all four) and, where its program
    states no CTA, into every CTA of the pair."""
    out: dict[tuple[int, int], set[Place]] = {}
    for p in lay.placed(0):
        who, block = (p[0], p[1]) if lay.operand == "A" else (p[1], p[0])
        ctas = [p[5]] if lay.states("cta") else list(range(lay.cta_group))
        parts = [2 * p[6], 2 * p[6] + 1] if lay.states("half") else [0, 1, 2, 3]
        out.setdefault((who, block), set()).update(
            (c, PARTITION * k + p[2], p[3], p[4]) for c in ctas for k in parts)
    return out


def _forms(env: Env, atom: Atom) -> list[tuple[bool, int, str, str]]:
    """(sparse, cta_group, kind, the scale form as written) of each asm of the atom's arch
    struct."""
    arch = _struct(env, atom.name)
    out: list[tuple[bool, int, str, str]] = []
    for lits in arch.asm if arch is not None else ():
        got = opcodes(lits)
        for op in got if not isinstance(got, str) else []:
            if op.name != "tcgen05" or "block_scale" not in op.words:
                continue
            form = next((str(m) for m in op.modifiers
                         if m.name in ("block16", "block32", "scale_vec")), "")
            row = ("sp" in op.words, int(op.qualifier("cta_group") or 1), op.qualifier("kind"),
                   form)
            if row not in out:
                out.append(row)
    return out


def _named_values(terms: Any, name: str) -> set[int]:
    """Every ``name == n`` inside a static_assert's terms (``((VS == 32) & ...) || (VS ==
    16)``: {32, 16})."""
    if isinstance(terms, tuple):
        return set().union(*(_named_values(t, name) for t in terms)) if terms else set()
    if isinstance(terms, CppParen):
        return _named_values(terms.a, name)
    if isinstance(terms, CppBinOp):
        if terms.op == "==" and isinstance(terms.a, Type) and str(terms.a) == name \
                and isinstance(terms.b, int):
            return {terms.b}
        return _named_values(terms.a, name) | _named_values(terms.b, name)
    return set()


def vector_sizes(env: Env, atom: Atom, consts: dict[str, Any]) -> list[int]:
    """The traits' ``SFVecSize`` where it is a number, else the values its arch struct's
    static_assert names for the parameter it is (``VS``)."""
    v = consts.get("SFVecSize")
    if isinstance(v, int):
        return [v]
    arch = _struct(env, atom.name)
    name = str(v) if isinstance(v, Type) else "VS"
    return sorted(set().union(*(_named_values(t, name) for t in arch.asserts))
                  if arch is not None and arch.asserts else set())


def _alloc(env: Env, consts: dict[str, Any], arg: Any, m: int) -> str:
    """The allocation mode a fragment argument names (``TmemAlloc``: the traits' constant,
    a choice on M), else the fragment's default."""
    if arg is None:
        return DEFAULT_ALLOC
    if isinstance(arg, Type) and len(arg.parts) == 1 and arg.last.name in consts:
        v = consts[arg.last.name]
        if isinstance(v, CppChoice):
            v = v.a if env.scalar(v.cond, {"M": m}) else v.b
        arg = v
    if isinstance(arg, Type):
        return arg.last.name
    raise _Unreadable(f"'{arg}' is not an allocation mode the reader reads")


def compare_scale_atom(env: Env, atom: Atom, file: str, layouts: Sequence[Any]) \
        -> list[TcScaleComparison]:
    """Every scale operand of one block-scaled UMMA atom at every M its arch struct admits
    and every vector size its asm names, against each catalog layout of that form."""
    out: list[TcScaleComparison] = []
    tr = env.traits.get(("MMA_Traits", atom.name))
    if tr is None:
        return out
    traits = with_body(env, tr[0])
    try:
        consts = _constants(env, traits, {})
        k = consts.get("K")
        frg = _struct(env, FRAGMENT)
        forms = _forms(env, atom)
        if not isinstance(k, int) or frg is None or not forms:
            why = ("no constexpr K in its traits" if not isinstance(k, int) else
                   f"no struct {FRAGMENT}" if frg is None else
                   "no block-scaled tcgen05.mma in its asm")
            return [TcScaleComparison(atom.name, file, atom.line, "A", 0, 0, "", "",
                                      "unreadable", why=why)]
    except _Unreadable as e:
        return [TcScaleComparison(atom.name, file, atom.line, "A", 0, 0, "", "", "unreadable",
                                  why=str(e))]
    # the vector sizes the arch struct admits, else (an assert the reader cannot read) the
    # ones its asm forms name
    vss = vector_sizes(env, atom, consts) or sorted(
        {FORM_BLOCK.get(f[3], 32) * (2 if f[0] else 1) for f in forms})
    for operand, member in (("A", "FrgTypeSFA"), ("B", "FrgTypeSFB")):
        mem = env.member("MMA_Traits", atom.name, member)
        if mem is None or not isinstance(mem.type, Type) or not mem.type.last.args:
            continue
        args = list(mem.type.last.args)
        for vs in vss:
            # the asm of this vector size: its form's block (twice the elements for .sp, whose
            # K counts A before compression), else the atom's one asm
            pick = [f for f in forms if FORM_BLOCK.get(f[3], 0) * (2 if f[0] else 1) == vs]
            # one of the spellings a preprocessor branch picks (.block16 or .scale_vec::4X)
            pick = [f for i, f in enumerate(pick)
                    if all((g[:3], FORM_BLOCK.get(g[3])) != (f[:3], FORM_BLOCK.get(f[3]))
                           for g in pick[:i])]
            for sparse, cta, kind, form in pick or forms[:1]:
                ms = m_values(env, atom) or tuple(sorted({x.m for x in layouts
                                                          if x.cta_group == cta}))
                for m in ms:
                    out.extend(_one(env, atom, file, mem, args, consts, frg, operand, m, vs, k,
                                    (sparse, cta, kind, form), layouts))
    return out


def _one(env: Env, atom: Atom, file: str, mem: Any, args: list[Any], consts: dict[str, Any],
         frg: Struct, operand: str, m: int, vs: int, k: int, form: tuple[bool, int, str, str],
         layouts: Sequence[Any]) -> list[TcScaleComparison]:
    """One operand at one M and vector size against the catalog layouts of the asm's form:
    the sparse ones where the catalog states them (a pair's M = 128), else the dense form of
    half the K (a data path that serves either)."""
    sparse, cta, kind, written = form
    line = mem.line
    dense_k = k // 2 if sparse else k
    vec = dense_k // FORM_BLOCK.get(written, 32)
    nsf = k // vs
    try:
        n_sm = env.scalar(args[2], {})
        is_a = _word(args[3], {}) is True
        alloc = _alloc(env, consts, args[4] if len(args) > 4 else None, m)
        mine = [x for x in layouts if x.operand == operand and x.kind == kind and x.m == m
                and x.cta_group == cta and x.vec == vec and x.sparse == sparse and x.k == k]
        if not mine and sparse:
            mine = [x for x in layouts if x.operand == operand and x.kind == kind and x.m == m
                    and x.cta_group == cta and x.vec == vec and not x.sparse
                    and x.k == dense_k]
        if not mine:
            return [TcScaleComparison(
                atom.name, file, line, operand, m, vs, str(mem.type), "", "not-in-spec",
                why=f"the catalog states no tcgen05 scale_{operand} of .kind::{kind}"
                    f"{' (sparse)' if sparse else ''} .{written or 'block32'} at M = {m}, "
                    f"cta_group::{cta}")]
        out = []
        for lay in mine:
            mn = m if operand == "A" else lay.n
            word = SM103_WORD if atom.name.startswith(SM103_PREFIX) else None
            got = cute_factor_places(env, frg, n_sm, is_a, alloc, mn, vs, nsf, word)
            if isinstance(got, str):
                out.append(TcScaleComparison(atom.name, file, line, operand, m, vs,
                                             str(mem.type), lay.id, "unreadable", why=got))
                continue
            said = (f"{mem.type}: {alloc}, MMA_MN {mn // n_sm if is_a else mn}, VS {vs}, "
                    + (f"NSF {word} a word, tiled along K, {nsf} an MMA (SM103's collective)"
                       if word else f"NSF {nsf}"))
            out.append(_compare(atom.name, file, line, operand, m, vs, said, lay, got))
        return out
    except _Unreadable as e:
        return [TcScaleComparison(atom.name, file, line, operand, m, vs, str(mem.type), "",
                                  "unreadable", why=str(e))]


def _compare(atom: str, file: str, line: int, operand: str, m: int, vs: int, cute: str,
             lay: Any, got: dict[tuple[int, int], set[Place]]) -> TcScaleComparison:
    want = spec_factor_places(lay)
    diffs: list[dict[str, Any]] = []
    for key in sorted(set(got) | set(want)):
        a, b = got.get(key, set()), want.get(key, set())
        if a != b:
            diffs.append({"factor": list(key), "cute_only": [list(p) for p in sorted(a - b)],
                          "spec_only": [list(p) for p in sorted(b - a)]})
    name = "row" if operand == "A" else "column"
    if not diffs:
        return TcScaleComparison(atom, file, line, operand, m, vs, cute, lay.id, "equal",
                                 why=f"every factor of scale_{operand} where the catalog puts "
                                     f"it ({len(want)} factors, sf_id 0)")
    d = diffs[0]
    first = (f"factor ({name} {d['factor'][0]}, block {d['factor'][1]}): CuTe alone has "
             f"{_places(d['cute_only'])}, the spec alone {_places(d['spec_only'])}")
    return TcScaleComparison(atom, file, line, operand, m, vs, cute, lay.id, "differs",
                             tuple(diffs[:MAX_LISTED]), len(diffs),
                             f"{len(diffs)} of {len(set(got) | set(want))} factors differ; "
                             + first)


def _places(ps: list[list[int]]) -> str:
    if not ps:
        return "no place"
    shown = ", ".join(f"(CTA {p[0]}, lane {p[1]}, column {p[2]}, byte {p[3]})" for p in ps[:4])
    return shown + (f" and {len(ps) - 4} more" if len(ps) > 4 else "")


def audit_tc_scale_env(env: Env, atoms: Sequence[Atom], layouts: Sequence[Any]) \
        -> list[TcScaleComparison]:
    """Every SM100 block-scaled UMMA atom (its traits name ``FrgTypeSFA``) the headers
    define, against the catalog's tcgen05 block-scale layouts."""
    out: list[TcScaleComparison] = []
    for atom, file in traited_mma_atoms(env, atoms, "FrgTypeSFA"):
        out.extend(compare_scale_atom(env, atom, file, layouts))
    return out
