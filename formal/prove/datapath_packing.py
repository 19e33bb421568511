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

from functools import partial
from typing import Any

import z3

from ..base.source import Finding, error, warning
from ..model.datapath import PackFormat
from .cache import z3_unsat
from .datapath import HARDWARE, DataPathResult, _sat
from .verdicts import InternalError, Verdict


def _pack_z3(pf: PackFormat, what: str) -> bool:
    k, j = z3.Ints("k j")
    s = z3.Solver()
    first = pf.first[0] * k + pf.first[1]
    s.add(k >= 0, k < pf.count)
    if what == "slot-fit":
        s.add(z3.Or(first < pf.slot * k, first + pf.bits > pf.slot * (k + 1)))
    elif what == "unit-fit":  # the slots in the unit (the bits in their slots: slot-fit)
        s.add(z3.BoolVal(pf.count * pf.slot > pf.unit or pf.count < 1))
    else:
        other = pf.first[0] * j + pf.first[1]
        s.add(j >= 0, j < pf.count, j != k, first < other + pf.bits, other < first + pf.bits)
    return _sat(s)


def _pack_unsat(pf: PackFormat, what: str) -> bool:
    return not _pack_z3(pf, what)


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


def prove_packing(pf: PackFormat, evidence: Any = None) -> tuple[DataPathResult, list[Finding]]:
    """A packing format: every element inside its slot (``slot-fit``), the slots inside the
    unit (``unit-fit``), no bit held by two elements (``bit-injective``); Z3 over the element
    index, every element enumerated again."""
    vs: list[Verdict] = []
    for what, why in (("slot-fit", "an element's bits leave its slot"),
                      ("unit-fit", "the elements' slots do not fit the unit"),
                      ("bit-injective", "two elements share a bit")):
        if what == "bit-injective" and vs[0].status != "proved":
            vs.append(Verdict(what, "error", "not checked: an element leaves its slot"))
            continue
        found = _pack_enum(pf, what)
        # where the enumeration found nothing, an earlier run's unsat to the same statement
        # stands for Z3's (``z3_unsat``); a counterexample always asks Z3 itself
        z = _pack_z3(pf, what) if found is not None else not z3_unsat(
            [what, list(pf.first), pf.count, pf.slot, pf.bits, pf.unit], "datapath-packing",
            partial(_pack_unsat, pf, what))
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
