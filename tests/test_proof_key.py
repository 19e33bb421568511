"""The proof cache's keys name a layout's formulas by their expression trees
(``Layout.proof_key``, formal/model/layout.py), not by SymPy's printer: the same formulas give
the same key in any layout object; a changed case value, condition, symbol assumption,
``otherwise``, formula name, metadata holder or header gives another; and no formula is
printed to write one."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import pytest
import sympy as sp

from formal.model import layout as L
from formal.model.algebra import LANE
from formal.model.resolve import catalog_model
from formal.prove.cache import entry_key

ID = "mma.m16n8k16.A.f16-bf16"


def _layout() -> Any:
    return next(x for x in catalog_model(False).layouts if x.short_id == ID)


def _with_case(lay: Any, **change: Any) -> Any:
    f = lay.formulas[0]
    return replace(lay, formulas=(replace(f, cases=(replace(f.cases[0], **change),
                                                    *f.cases[1:])), *lay.formulas[1:]))


def test_the_same_formulas_give_the_same_key_in_any_layout_object() -> None:
    lay = _layout()
    again = replace(lay)  # another object, the same formulas
    assert again is not lay and again.proof_key() == lay.proof_key()
    assert entry_key(again, "injective", None, 5000) == entry_key(lay, "injective", None, 5000)
    assert len(lay.proof_key()) == 64


def test_any_change_of_a_formula_is_another_key() -> None:
    lay = _layout()
    case = lay.formulas[0].cases[0]
    changed = [
        _with_case(lay, value=case.value + 1),
        _with_case(lay, value=case.value.subs(LANE, sp.Symbol("lane"))),  # assumptions
        _with_case(lay, cond=sp.Not(case.cond)),
        _with_case(lay, otherwise=not case.otherwise),
        replace(lay, formulas=(replace(lay.formulas[0], name="other"), *lay.formulas[1:])),
        replace(lay, lanes=lay.lanes * 2),
        replace(lay, formulas=lay.formulas[::-1]),
    ]
    keys = {lay.proof_key(), *(x.proof_key() for x in changed)}
    assert len(keys) == len(changed) + 1
    assert len({entry_key(x, "injective", None, 5000) for x in (lay, *changed)}) == len(keys)


def test_a_key_is_written_without_printing_a_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    lay = replace(_layout())
    L.srepr.cache_clear()

    def refused(e: Any) -> str:
        raise AssertionError(f"printed {e}")

    monkeypatch.setattr(L, "srepr_of", refused)
    assert len(lay.proof_key()) == 64


def test_an_expression_that_is_no_sympy_value_is_keyed_by_its_srepr() -> None:
    assert L.expression_key(3) == ("srepr", "3")
    assert L.expression_key(sp.Integer(3)) == \
        hashlib.sha256(sp.srepr(sp.Integer(3)).encode()).hexdigest()
    assert L.expression_key(LANE + 1) != L.expression_key(sp.Symbol("lane") + 1)
    assert L.expression_key(sp.Integer(1)) != L.expression_key(True)  # equal, not the same
