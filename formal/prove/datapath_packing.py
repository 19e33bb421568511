"""The packing formats of tcgen05's data: where element k of a unit sits, proved by Z3 over k
and enumerated again (split out of ``formal.prove.datapath``, whose data paths they serve).

A format packs ``count`` elements of ``bits`` bits each into a ``unit``-bit word, element k
in a ``slot``-bit slot, its first bit at ``first[0] * k + first[1]``.  Two 6-bit elements
packed in 8-bit slots of a 16-bit unit, first bits 0 and 8::

    bits 15..8: element 1 (bits 13..8, 2 padding)   bits 7..0: element 0 (bits 5..0)

slot-fit holds (bits 5..0 lie in slot 0's bits 7..0), unit-fit holds (2 x 8 <= 16),
bit-injective holds.  State the first bit as ``6 * k + 4`` instead and element 0 takes bits
9..4, leaving its slot: ``slot-fit`` is refuted with element 0, its bits [9, 4] and the slot
[7, 0]; bit-injective is then not checked.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import z3

from ..base.source import Finding, error, warning
from ..model.datapath import PackFormat
from .cache import z3_unsat
from .datapath import HARDWARE, TOGETHER_MS, DataPathResult
from .datapath_statements import _sat, linear_solver
from .datapath_statements import ints as _i
from .encode import unsat_together
from .verdicts import TEST_HOOKS, InternalError, Verdict

WHATS = ("slot-fit", "unit-fit", "bit-injective")


def _pack_statement(pf: PackFormat, what: str) -> Any:
    """The statement Z3 is asked of ``pf`` (satisfiable exactly where ``what`` fails), over
    the element indices k (and j), made by one call of Z3's C API a term
    (``datapath_statements.ints``): ``And(k >= 0, k < count, ...)``."""
    k, j = z3.Ints("k j")
    count = _i.val(pf.count)
    first = _i.sum(_i.mul(_i.val(pf.first[0]), k), _i.val(pf.first[1]))
    parts = [_i.ge(k, _i.val(0)), _i.lt(k, count)]
    if what == "slot-fit":
        parts.append(_i.any(_i.lt(first, _i.mul(_i.val(pf.slot), k)),
                            _i.gt(_i.sum(first, _i.val(pf.bits)),
                                  _i.mul(_i.val(pf.slot), _i.sum(k, _i.val(1))))))
    elif what == "unit-fit":  # the slots in the unit (the bits in their slots: slot-fit)
        parts.append(_i.truth(pf.count * pf.slot > pf.unit or pf.count < 1))
    else:
        other = _i.sum(_i.mul(_i.val(pf.first[0]), j), _i.val(pf.first[1]))
        bits = _i.val(pf.bits)
        parts += [_i.ge(j, _i.val(0)), _i.lt(j, count), _i.ne(j, k),
                  _i.lt(first, _i.sum(other, bits)), _i.lt(other, _i.sum(first, bits))]
    return _i.all(*parts)


def _pack_z3(pf: PackFormat, what: str) -> bool:
    s = z3.Solver()
    s.add(_pack_statement(pf, what))
    return _sat(s)


def _pack_unsat(pf: PackFormat, what: str) -> bool:
    return not _pack_z3(pf, what)


def _query(pf: PackFormat, what: str) -> list[Any]:
    """What the statement depends on, as JSON values (the proof cache's key)."""
    return [what, list(pf.first), pf.count, pf.slot, pf.bits, pf.unit]


class PackingGroup:
    """The packing formats of one document, their statements asked of Z3 together: the
    first time one is not in the proof cache, every statement the enumeration found no
    counterexample for (``bit-injective`` where ``slot-fit`` held) is asked as disjunctions
    (``encode.unsat_together``, the data paths' linear solver: the catalog's 24 queries,
    CPU about 50 -> 5 ms), and their *unsat* stands for each one's; a statement the
    disjunctions leave open is asked alone (``_pack_z3``), and one with a counterexample
    always is.  Each enumeration runs once (``found``)."""

    def __init__(self, formats: list[PackFormat]) -> None:
        self.formats = formats
        self._found: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.unsat: set[str] | None = None

    def found(self, pf: PackFormat, what: str) -> dict[str, Any] | None:
        """``_pack_enum(pf, what)``, enumerated once."""
        key = (id(pf), what)
        if key not in self._found:
            self._found[key] = _pack_enum(pf, what)
        return self._found[key]

    def _asked(self, pf: PackFormat, what: str) -> bool:
        return self.found(pf, what) is None and (
            what != "bit-injective" or self.found(pf, "slot-fit") is None)

    def says_unsat(self, pf: PackFormat, what: str) -> bool:
        if self.unsat is None:
            todo = {json.dumps(_query(f, w)): (f, w) for f in self.formats for w in WHATS
                    if self._asked(f, w)}
            self.unsat = set() if TEST_HOOKS else unsat_together(
                "datapath-packing", [(k, _pack_statement(f, w)) for k, (f, w) in todo.items()],
                TOGETHER_MS, general=True, make=linear_solver)
        return json.dumps(_query(pf, what)) in self.unsat or _pack_unsat(pf, what)


def _pack_enum(pf: PackFormat, what: str) -> dict[str, Any] | None:
    owner: dict[int, int] = {}
    for k in range(pf.count):
        lo, hi = pf.first_bit(k), pf.first_bit(k) + pf.bits - 1
        if what == "slot-fit" and not (pf.slot * k <= lo and hi < pf.slot * (k + 1)):
            return {"element": k, "bits": [hi, lo], "slot": [pf.slot * (k + 1) - 1, pf.slot * k]}
        if what == "unit-fit" and pf.count * pf.slot > pf.unit:
            return {"element": pf.count - 1, "slot": [pf.slot * pf.count - 1,
                                                      pf.slot * (pf.count - 1)],
                    "unit_bits": pf.unit}
        if what == "bit-injective":
            for b in range(lo, hi + 1):
                if b in owner:
                    return {"elements": [owner[b], k], "bit": b}
                owner[b] = k
    return None


def prove_packing(pf: PackFormat, evidence: Any = None, together: PackingGroup | None = None,
                  ) -> tuple[DataPathResult, list[Finding]]:
    """A packing format: every element inside its slot (``slot-fit``), the slots inside the
    unit (``unit-fit``), no bit held by two elements (``bit-injective``); Z3 over the element
    index, every element enumerated again.  ``together``: the group of the document's
    formats whose statements Z3 is asked together (``PackingGroup``)."""
    vs: list[Verdict] = []
    for what, why in (("slot-fit", "an element's bits leave its slot"),
                      ("unit-fit", "the elements' slots do not fit the unit"),
                      ("bit-injective", "two elements share a bit")):
        if what == "bit-injective" and vs[0].status != "proved":
            vs.append(Verdict(what, "error", "not checked: an element leaves its slot"))
            continue
        found = _pack_enum(pf, what) if together is None else together.found(pf, what)
        # where the enumeration found nothing, an earlier run's unsat to the same statement
        # stands for Z3's (``z3_unsat``), else the group's or its own; a counterexample
        # always asks Z3 itself
        z = _pack_z3(pf, what) if found is not None else not z3_unsat(
            _query(pf, what), "datapath-packing",
            partial(_pack_unsat, pf, what) if together is None else
            partial(together.says_unsat, pf, what))
        if z != (found is not None):
            raise InternalError(f"{pf.id} {what}: Z3 and the enumeration disagree")
        vs.append(Verdict(what, "proved", method="z3+enumeration") if found is None else
                  Verdict(what, "refuted", f"{pf.id}: {why}", found, pf.src.span(0),
                          method="z3+enumeration"))
    if evidence is None:
        vs.append(Verdict("hardware", "not-applicable", "no GPU evidence given (--evidence)"))
    else:
        vs.append(Verdict("hardware", "unconfirmed", HARDWARE, severity="warning"))
    findings = [error("packing", v.span or pf.src.span(0), v.message,
                      counterexample=v.counterexample) for v in vs if v.status == "refuted"]
    if evidence is not None:
        findings += [warning("hardware", pf.src.span(0), f"{pf.id}: {HARDWARE}", layout=pf.id)]
    operand = "D" if pf.matrices == ("D",) else "/".join(pf.matrices)
    return DataPathResult(pf.id, "tcgen05.mma", pf.src.span(0), tuple(vs),
                          f"{pf.memory} memory, {pf.count} x {pf.bits} bits in {pf.unit}",
                          (pf.type,), (pf.count, pf.unit), operand,
                          (pf.src.text,)), findings
