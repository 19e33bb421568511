"""The layouts stated for every N (wgmma's accumulator): ``prove.every_n.every_n_core``
finds the first N whose tile the layout does not fill with every N's arrays at once, then
names the fault N by N from there; it answers as the loop over every N does, on the
catalog's layouts and on maps broken at a small N, a large N and the last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from formal.model.cells import map_of
from formal.model.resolve import catalog_model
from formal.prove import every_n


@dataclass
class _Map:
    """What ``every_n_core`` reads of a ``CellMap``, its out column editable."""

    lay: Any
    names: tuple[str, ...]
    pts: Any
    out: Any
    defined: Any

    def point(self, p: int) -> tuple[int, int, int]:
        s, t, i = self.pts[p]
        return int(s), int(t), int(i)


def _stated_for_every_n() -> list[Any]:
    return [lay for lay in catalog_model(False).layouts if lay.n_values]


def _by_loop(m: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as mp:
        mp.setattr(every_n, "_first_fault", lambda *_a: 0)  # the loop over every N
        return every_n.every_n_core(m)


def test_the_catalog_is_proved_as_the_loop_proves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    lays = _stated_for_every_n()
    assert len(lays) >= 2
    for lay in lays:
        m = map_of(lay)
        got = every_n.every_n_core(m)
        assert got.status == "proved" and got == _by_loop(m, monkeypatch)
        assert every_n._first_fault(lay, m.pts[:, 2], m.out[:, 0], m.out[:, 1]) == \
            len(lay.n_values)


AT = {"outside at N = 8": 8, "hole at a middle N": 64, "count at the last": 256,
      "negative row": 32, "an element moved past every tile": 16}


@pytest.mark.parametrize("how", ["outside at N = 8", "hole at a middle N", "count at the last",
                                 "negative row", "an element moved past every tile"])
def test_a_broken_map_is_refuted_as_the_loop_refutes_it(
        how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lay = next(x for x in _stated_for_every_n() if x.operand == "C/D")
    real = map_of(lay)
    out = np.array(real.out)
    elem = real.pts[:, 2]
    ns = lay.n_values
    if how == "outside at N = 8":  # an element of N = 8 one column right: outside its tile
        p = int(np.flatnonzero(elem == 0)[0])
        out[p, 1] += 8
    elif how == "hole at a middle N":  # two elements of N = 64 on one cell
        e = lay.at(64).elements - 1
        p, q = np.flatnonzero(elem == e)[:2]
        out[q] = out[p]
    elif how == "count at the last":  # the last element of the last N on an earlier cell
        p = int(np.flatnonzero(elem == elem.max())[0])
        out[p] = out[int(np.flatnonzero(elem == 0)[0])]
    elif how == "negative row":
        p = int(np.flatnonzero(elem == lay.at(ns[3]).elements - 1)[-1])
        out[p, 0] = -1
    else:
        p = int(np.flatnonzero(elem == 5)[0])
        out[p] = (10 ** 6, 10 ** 6)
    m = _Map(lay, real.names, real.pts, out, real.defined)
    got = every_n.every_n_core(m)  # type: ignore[arg-type]
    want = _by_loop(m, monkeypatch)
    assert got.status == "refuted" and got == want, (got, want)
    assert got.message.startswith(f"at N = {AT[how]}:")
