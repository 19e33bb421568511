"""Two relations of the shared-memory layouts: the descriptor that names a catalog layout makes
the instruction read exactly that layout's tile, and the TMA's swizzle writes exactly the atoms
the descriptor's swizzle reads.

**Descriptor.**  A catalog layout (``formal.model.smem.SmemInstance``) puts element (mn, k) of
the A/B tile at a byte address.  Its descriptor holds LBO and SBO >> 4 and a swizzle code
(``descriptor_of``); the instruction decodes it (``DescriptorRead``) and, by the spec's LBO/SBO
definitions, reads element (mn, k) somewhere.  The relation holds when the two addresses agree
for every (mn, k) of the tile the register layouts and D assume (MN rows x the instruction's K
slice).  A worked example, K-major, no swizzle, f16, m = 2: the layout
``((8,2),(8,2)):((8,128),(1,64))`` puts (mn 9, k 10) at element 8 + 128 + 2 + 64 = 202, byte
404; its descriptor holds LBO 128 >> 4 = 8 and SBO 256 >> 4 = 16, and the read rule gives
(9 % 8) * 16 + (9 // 8) * 256 + (20 // 16) * 128 + 20 % 16 = 404.  With LBO and SBO written
into each other's field it reads byte 16 + 128 + 256 + 4 = 404 -- the same by chance -- but
(mn 8, k 0) at 128 instead of 256: refuted with that coordinate and both addresses.  An
instruction reading one atom more of K than the layout holds is refuted too: the coordinate
the layout lacks, and what the descriptor reads there.

Z3 decides over 32-bit vectors (no (mn, k) in the tile whose addresses differ) and the
enumeration of every coordinate re-checks; they must agree.

**TMA.**  ``CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B`` as the CUDA driver describes them: within
each 256 / 512 / 1024-byte span, the 16-byte chunk index (of the 2 / 4 / 8 chunks of a mode
row) is XORed with the index of the 128-byte row modulo 2 / 4 / 8.  Stated with that chunk and
row arithmetic (not with Swizzle's bits), it equals the descriptor's ``Swizzle<B,4,3>`` on every
32-bit address: an operand the TMA stores with a mode is read back whole by a descriptor with
the same mode, and refuted (an address and both images) with another.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import z3

from ..model.smem import (
    CHUNKS,
    K_SLICE_BYTES,
    DescriptorRead,
    SmemInstance,
    Swizzle,
    layout_bit_address,
    smem_hash,
)
from .cache import query_key, z3_unsat
from .encode import address_solver, bv_consts, bv_val, ops, unsat_together
from .verdicts import TEST_HOOKS, Core, InternalError, Verdict

TMA_MODES = ("32B", "64B", "128B")
SWIZZLES = {"none": Swizzle(0, 4, 3), "32B": Swizzle(1, 4, 3), "64B": Swizzle(2, 4, 3),
            "128B": Swizzle(3, 4, 3)}


def _plain(a: Any) -> bool:
    """A bit-vector term of Z3's main context (where ``bv_val`` makes its numbers)."""
    return type(a) is z3.BitVecRef and a.ctx is z3.main_ctx()


def _udiv(a: Any, b: int) -> Any:
    """``z3.UDiv(a, b)`` of a bit-vector term (the number made a term of its width, as
    ``z3.UDiv`` makes it: ``encode.ops``, without the coercion), else ``a // b``."""
    return ops.udiv(a, bv_val(b, a.size())) if _plain(a) else \
        z3.UDiv(a, b) if isinstance(a, z3.ExprRef) else a // b


def _urem(a: Any, b: int) -> Any:
    """``z3.URem(a, b)``, as ``_udiv``."""
    return ops.urem(a, bv_val(b, a.size())) if _plain(a) else \
        z3.URem(a, b) if isinstance(a, z3.ExprRef) else a % b


def read_extent(inst: SmemInstance) -> tuple[int, int]:
    """MN x K of the tile one instruction reads: the layout's MN and the K slice's elements
    (``K_SLICE_BYTES`` of each row)."""
    return (inst.layout.extent[0], K_SLICE_BYTES * 8 // inst.bits)


def _first_misread(read: DescriptorRead, inst: SmemInstance, rows: int,
                   cols: int) -> tuple[int, int] | None:
    """The first (mn, k) of a ``rows`` x ``cols`` tile (k slowest, mn fastest) that ``read``
    reads somewhere other than the layout puts it, or that the layout does not hold; None when
    every one is read in place.  The whole tile at once: the read rule runs on numpy arrays of
    every mn and k (``bit_address`` takes any values with ``//``, ``%`` and the swizzle's
    ``^``, ``&``, ``>>``), the layout's addresses are one array."""
    lay = inst.layout
    have_rows, have_cols = lay.extent
    mn = np.tile(np.arange(rows, dtype=np.int64), cols)
    k = np.repeat(np.arange(cols, dtype=np.int64), rows)
    got = np.asarray(read.bit_address(inst.major, inst.bits, mn, k), dtype=np.int64)
    held = (mn < have_rows) & (k < have_cols)
    want = np.full(got.shape, -1, dtype=np.int64)
    have = lay.bit_address_array
    want[held] = have[mn[held] + have_rows * k[held]]
    bad = ~held | (got != want)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return int(mn[i]), int(k[i])


def descriptor_core(inst: SmemInstance, descriptor: int,
                    extent: tuple[int, int] | None = None,
                    together: DescriptorGroup | None = None) -> Core:
    """Every (mn, k) of the tile (``extent``: the instruction's, by default) is read where the
    layout put it; else the first coordinate that is not, with both addresses.  ``together``:
    the group whose disjunctions Z3 is asked first (``DescriptorGroup``)."""
    read = DescriptorRead.of(inst.family, descriptor)
    rows, cols = extent or read_extent(inst)
    lay = inst.layout
    have_rows, have_cols = lay.extent
    first = together.first_misread(read, inst, rows, cols) if together is not None \
        else _first_misread(read, inst, rows, cols)
    if first is not None:  # the first (mn, k), k slowest, read elsewhere or not held
        mn, k = first
        got = read.bit_address(inst.major, inst.bits, mn, k)
        if mn >= have_rows or k >= have_cols:
            held = {a: (i % have_rows, i // have_rows)
                    for i, a in enumerate(lay.bit_addresses)}.get(got)
            return Core("refuted", f"the instruction reads (mn {mn}, k {k}), which the "
                        f"{have_rows} x {have_cols} layout does not hold, at byte {got // 8}"
                        + (f", where the layout keeps (mn {held[0]}, k {held[1]})" if held
                           else ""),
                        {"mn": mn, "k": k, "descriptor_byte": got // 8,
                         "layout_holds": None if held is None else
                         {"mn": held[0], "k": held[1]}}, method="enumeration")
        want = lay.bit_addresses[mn + have_rows * k]
        return Core("refuted", f"(mn {mn}, k {k}) is at byte {want // 8} of the layout; "
                    f"the descriptor (LBO {read.lbo}, SBO {read.sbo}, {read.mode}) "
                    f"reads byte {got // 8}",
                    {"mn": mn, "k": k, "layout_byte": want // 8,
                     "descriptor_byte": got // 8}, method="enumeration")

    what = _descriptor_query(inst, read, rows, cols)

    def unsat() -> bool:
        if together is not None and together.says_unsat(query_key(what, "descriptor")):
            return True
        s = address_solver()
        s.add(_misread(inst, read, rows, cols))
        return bool(s.check() == z3.unsat)

    # Z3's answer from an earlier run where the same query was asked, else from this run's
    # disjunction of several (``together``), else asked alone (the enumeration above ran all
    # the same): the descriptor as decoded, the layout's value, the tile read
    if not z3_unsat(what, "descriptor", unsat):
        raise InternalError(f"{inst.id}: Z3 finds a coordinate read elsewhere, enumeration none")
    return Core("proved", f"descriptor (LBO {read.lbo}, SBO {read.sbo}, {read.mode}) reads all "
                f"{rows} x {cols} elements where the layout puts them", method="z3+enumeration")


def _descriptor_query(inst: SmemInstance, read: DescriptorRead, rows: int,
                      cols: int) -> list[Any]:
    """What names ``descriptor_core``'s Z3 query in full (its proof-cache key's values)."""
    return [repr(read), repr(inst.layout), inst.major, inst.bits, rows, cols]


class _Bits:
    """A 32-bit term whose operators (``+``, ``*``, ``^``, ``&``, ``>>``, a Python number
    on either side) each make the very term z3's operators make, by one call of Z3's C API
    (``encode.ops``; the numbers made once, ``bv_val``): the model's address rules
    (``DescriptorRead.bit_address``, ``layout_bit_address``), written for any values with
    those operators, state the descriptor query through it without z3's coercion of every
    argument.  The catalog's 48 queries, CPU: about 25 -> 13 ms to state."""

    __slots__ = ("term",)

    def __init__(self, term: Any) -> None:
        self.term = term

    @staticmethod
    def _of(v: Any) -> Any:
        return v.term if type(v) is _Bits else bv_val(v, 32)

    def __add__(self, o: Any) -> _Bits:
        return _Bits(ops.add(self.term, _Bits._of(o)))

    def __radd__(self, o: Any) -> _Bits:
        return _Bits(ops.add(_Bits._of(o), self.term))

    def __mul__(self, o: Any) -> _Bits:
        return _Bits(ops.mul(self.term, _Bits._of(o)))

    def __rmul__(self, o: Any) -> _Bits:
        return _Bits(ops.mul(_Bits._of(o), self.term))

    def __xor__(self, o: Any) -> _Bits:
        return _Bits(ops.bxor(self.term, _Bits._of(o)))

    def __and__(self, o: Any) -> _Bits:
        return _Bits(ops.band(self.term, _Bits._of(o)))

    def __rshift__(self, o: Any) -> _Bits:
        return _Bits(ops.ashr(self.term, _Bits._of(o)))


def _bits_udiv(a: _Bits, b: int) -> _Bits:
    return _Bits(ops.udiv(a.term, bv_val(b, 32)))


def _bits_urem(a: _Bits, b: int) -> _Bits:
    return _Bits(ops.urem(a.term, bv_val(b, 32)))


def _misread(inst: SmemInstance, read: DescriptorRead, rows: int, cols: int) -> Any:
    """Some (mn, k) of the rows x cols tile that the descriptor reads elsewhere than the layout
    puts it (32-bit vectors ``mn`` and ``k``, shared by every such query): the term
    ``And(ULT(mn, rows), ULT(k, cols), read != put)`` with z3's ``UDiv`` and ``URem`` for the
    rules' ``//`` and ``%``, made through ``_Bits``."""
    mn_v, k_v = bv_consts("mn k", 32)
    mn, k = _Bits(mn_v), _Bits(k_v)
    got = read.bit_address(inst.major, inst.bits, mn, k, _bits_udiv, _bits_urem)
    put = layout_bit_address(inst.layout, mn, k, _bits_udiv, _bits_urem)
    return z3.And(z3.ULT(mn_v, rows), z3.ULT(k_v, cols), _Bits._of(got) != _Bits._of(put))


TOGETHER_MS = 60_000  # a group Z3 does not answer in time is asked query by query


class DescriptorGroup:
    """Z3's descriptor queries of these (instance, descriptor) pairs asked as disjunctions
    (``encode.unsat_together``, the address solver), the first time one of them is not in the
    proof cache (``descriptor_core`` asks ``says_unsat``; a warm run states, enumerates and
    asks nothing here): each pair's query whose enumeration finds no misread is a member, and
    a group's *unsat* stands for each of its members' -- ``descriptor_core`` takes it (and
    keeps it) instead of asking Z3 alone; what a group leaves open, it asks alone as before.
    Queries that are one term (Z3 shares equal terms: wgmma's and tcgen05's descriptor of a
    layout read alike) are one member, its answer each one's.  The catalog's 48 queries are
    32 terms, in two groups of 16 (CPU in a fresh process, against three groups of the 48:
    about 50 -> 30 ms to solve); asked alone, Z3 took some 160 ms."""

    def __init__(self, pairs: list[tuple[SmemInstance, int]]) -> None:
        self.pairs = pairs
        self.unsat: set[str] | None = None
        # each pair's enumeration (``_first_misread``), made once a run: the group's query
        # and the pair's own ``descriptor_core`` both read it (keyed by the instance's
        # identity: the group holds every instance it is asked of, so none is reused)
        self._enumerated: dict[tuple[int, DescriptorRead, int, int],
                               tuple[SmemInstance, tuple[int, int] | None]] = {}

    def first_misread(self, read: DescriptorRead, inst: SmemInstance, rows: int,
                      cols: int) -> tuple[int, int] | None:
        """``_first_misread(read, inst, rows, cols)``, enumerated once for the group."""
        key = (id(inst), read, rows, cols)
        hit = self._enumerated.get(key)
        if hit is None or hit[0] is not inst:
            hit = self._enumerated[key] = (inst, _first_misread(read, inst, rows, cols))
        return hit[1]

    def says_unsat(self, key: str) -> bool:
        """Is the query of this key (``query_key``) a member of a group Z3 found *unsat*?"""
        if self.unsat is None:
            self.unsat = set() if TEST_HOOKS else self._asked()  # a planted encoding: alone
        return key in self.unsat

    def _asked(self) -> set[str]:
        keys: dict[int, list[str]] = {}  # each term (by its id in Z3) -> the queries it states
        todo = []
        stated: dict[tuple[Any, ...], Any] = {}
        for inst, descriptor in self.pairs:
            try:
                read = DescriptorRead.of(inst.family, descriptor)
            except ValueError:
                continue
            rows, cols = read_extent(inst)
            if self.first_misread(read, inst, rows, cols) is not None:
                continue
            # the term is a function of these alone (what ``bit_address`` and
            # ``layout_bit_address`` read): a pair stating one already made takes it, the
            # very term Z3 would hand back for it
            made = (read.lbo, read.sbo, read.mode, inst.major, inst.bits, repr(inst.layout),
                    rows, cols)
            term = stated.get(made)
            if term is None:
                term = stated[made] = _misread(inst, read, rows, cols)
            same = keys.setdefault(term.get_id(), [])
            if not same:
                todo.append((term.get_id(), term))
            same.append(query_key(_descriptor_query(inst, read, rows, cols), "descriptor"))
        return {k for t in unsat_together("descriptor", todo, TOGETHER_MS, make=address_solver)
                for k in keys[t]}


def tma_swizzle(mode: str, addr: Any) -> Any:
    """The TMA's store address of byte ``addr`` of a box under ``CU_TENSOR_MAP_SWIZZLE_<mode>``:
    chunk index XOR (128-byte row index mod c) within each 128c-byte span."""
    c = CHUNKS[mode]
    span = 128 * c
    base = addr - _urem(addr, span)
    within = _urem(addr, span)
    row = _udiv(within, 128)
    chunk = _udiv(_urem(within, 128), 16)
    low = _urem(chunk, c)
    return base + row * 128 + (chunk - low + (low ^ _urem(row, c))) * 16 + _urem(within, 16)


def tma_solver() -> Any:
    """The solver of a TMA swizzle query: the simplifier writes each division and remainder
    by a power of two as bits (``mul2concat``: each product by one as a shift), then Z3's SMT
    core, whose bit-vector theory meets the query's 32-bit sums and differences without
    blasting each into a circuit first.  The catalog's three queries (32B, 64B, 128B), CPU in a
    fresh process: 71-74 ms with ``encode.address_solver`` -> 23 ms; a model comes back
    through the simplifier's model converter (tests/test_smem.py)."""
    return z3.Then(z3.With("simplify", mul2concat=True), "smt").solver()


@cache  # a pure function of two mode names: each pair enumerated and solved once a process
def tma_core(tma_mode: str, descriptor_mode: str) -> Core:
    """The TMA's swizzle of ``tma_mode`` equals the descriptor's of ``descriptor_mode`` on every
    32-bit address; else the first address where they part (enumeration over two 1024-byte
    spans first, then Z3 for all)."""
    import numpy as np
    sw = SWIZZLES[descriptor_mode]
    every = np.arange(2048, dtype=np.int64)  # every address of the two spans, at once
    parts = np.flatnonzero(tma_swizzle(tma_mode, every) != sw(every))
    if len(parts):
        a = int(parts[0])
        t = tma_swizzle(tma_mode, a)
        return Core("refuted", f"the TMA ({tma_mode}) stores byte {a} at {t}; the "
                    f"descriptor's {sw} ({descriptor_mode}) reads it from {sw(a)}",
                    {"byte": a, "tma": t, "descriptor": sw(a)}, method="enumeration")
    @cache
    def solver() -> tuple[Any, Any]:  # built only where Z3 is asked (a warm run makes none)
        x = z3.BitVec("x", 32)
        s = tma_solver()
        s.add(tma_swizzle(tma_mode, x) != sw(x))
        return s, x

    # Z3's unsat from an earlier run (the enumeration above ran all the same); sat: asked again
    if not z3_unsat([tma_mode, str(sw)], "tma-swizzle",
                    lambda: solver()[0].check() == z3.unsat):
        s, x = solver()
        s.check()
        m = s.model()[x].as_long()
        return Core("refuted", f"the TMA ({tma_mode}) stores byte {m} at "
                    f"{tma_swizzle(tma_mode, m)}; the descriptor reads it from {sw(m)}",
                    {"byte": m, "tma": tma_swizzle(tma_mode, m), "descriptor": sw(m)},
                    method="z3")
    return Core("proved", f"CU_TENSOR_MAP_SWIZZLE_{tma_mode} stores every byte where {sw} reads "
                "it", method="z3+enumeration")


def hardware_verdict(inst: SmemInstance, evidence: Any, span: Any) -> Verdict:
    """What the GPU evidence says of a catalog layout: the runs built from it (their
    ``layout_hashes["smem"]`` is its hash) -- every check bit-exact and every planted edit
    mismatched: proved; a check that mismatched or a plant that matched: refuted with the run;
    none: not applicable.  tcgen05: unconfirmed (a warning), no lent device runs sm_100a.
    Without evidence (``evidence`` None): not applicable, as for a register layout."""
    if evidence is None:  # as a register layout's
        return Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)",
                       None, span)
    if inst.family != "wgmma":
        return Verdict("hardware", "unconfirmed", "unconfirmed: tcgen05.mma needs sm_100a, which "
                       "no lent device runs; not executed (a kernel with this layout's "
                       "descriptor is assembled for sm_100a by ptxas in the tests: "
                       "formal.execute.ptx_tcgen05)", None, span, "warning", "gpu")
    h = smem_hash(inst)
    runs = evidence.runs_with("smem", h) if hasattr(evidence, "runs_with") else \
        [r for r in evidence.runs if r.layout_hashes.get("smem") == h]
    if not runs:
        return Verdict("hardware", "not-applicable", "no GPU run of this layout in the evidence",
                       None, span)
    checks = [r for r in runs if r.mode == "check"]
    plants = [r for r in runs if r.mode == "experiment"]
    bad = [r for r in checks if r.result != "match"] + \
        [r for r in plants if r.result != "mismatch"]
    if bad:
        r = bad[0]
        return Verdict("hardware", "refuted", f"{r.key} on {r.file.where}: {r.mode} "
                       f"{r.result}: {r.detail}", {"key": r.key, "mode": r.mode,
                                                    "result": r.result}, span)
    if not checks:
        return Verdict("hardware", "not-applicable", "no check of this layout in the evidence",
                       None, span)
    last = max((r.file for r in checks), key=lambda f: f.date)
    keys = sorted({r.key for r in checks})
    return Verdict("hardware", "proved", f"confirmed on {last.where}: {len(checks)} runs of "
                   f"{', '.join(keys)} bit-exact with the descriptor built from this layout, "
                   f"{len(plants)} planted edits (LBO/SBO swapped, another swizzle, K one atom "
                   "wider) mismatched", None, span, method="gpu")
