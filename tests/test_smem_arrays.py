"""The shared-memory swizzles enumerated over whole address arrays say what the byte-by-byte
loop says: a ``Swizzle`` of an array is the swizzle of each address, and the TMA check's
counterexample is the first byte where the TMA and the descriptor part."""

from __future__ import annotations

import numpy as np
import pytest

from formal.model.smem import Swizzle
from formal.prove.smem_descriptor import SWIZZLES, tma_core, tma_swizzle


@pytest.mark.parametrize("sw", [Swizzle(0, 4, 3), Swizzle(1, 4, 3), Swizzle(2, 4, 3),
                                Swizzle(3, 4, 3), Swizzle(3, 3, 3), Swizzle(2, 5, 2)])
def test_a_swizzle_of_an_array_is_each_address_swizzled(sw: Swizzle) -> None:
    every = np.arange(4096, dtype=np.int64)
    assert sw(every).tolist() == [sw(a) for a in range(4096)]
    assert tma_swizzle("64B", every).tolist() == [tma_swizzle("64B", a) for a in range(4096)]


@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_the_tma_counterexample_is_the_first_byte_that_parts(mode: str) -> None:
    for other in ("none", "32B", "64B", "128B"):
        core = tma_core(mode, other)
        loop = next((a for a in range(2048) if tma_swizzle(mode, a) != SWIZZLES[other](a)),
                    None)
        if other == mode:
            assert loop is None and core.status == "proved"
        else:
            assert loop is not None and core.cex == {
                "byte": loop, "tma": tma_swizzle(mode, loop), "descriptor": SWIZZLES[other](loop)}


def test_in_atom_at_once_is_the_loops_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """in_atom_core's pass over every atom at once (elements sorted by atom) gives the verdict
    and message its loop gives, for every catalog layout read under its own swizzle mode and
    under each other mode (wider modes' atoms do not fit: refuted, with the same atom)."""
    import formal.prove.smem as P
    from formal import catalog
    from formal.model.smem import instances
    from formal.parse.smem import read_smem
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    sm = read_smem(text, "t")
    insts = [i for f in ("wgmma", "tcgen05") for i in instances(f, sm.canonical)]
    cases = [(i.layout, i.major, m) for i in insts for m in ("none", "32B", "64B", "128B")]
    fast = [P.in_atom_core(*c) for c in cases]
    monkeypatch.setattr(P, "_atoms_whole", lambda *_a: None)
    walked = [P.in_atom_core(*c) for c in cases]
    assert fast == walked
    assert {c.status for c in fast} == {"proved", "refuted"}
