"""Stage 4, prove: obligations on each layout, decided by Z3 and re-checked by enumeration.

A layout is correct when its map from (lane, element) to tile cells is a bijection onto the
tile and its tables agree with its formulas.  The toy 4-lane, 2-element layout ``row = i``,
``col = lane`` of a 2 x 4 tile is injective and, by counting (8 = 2 x 4), surjective; with
``col = lane >> 1`` lanes 0 and 1 collide on (0, 0), and ``injective`` is refuted with both
(lane, element) pairs and the cell.

``encode`` is the Z3 encoding, ``witness`` the enumeration finders, ``formula`` / ``table`` /
``sparse`` the obligation families, ``evidence`` the GPU's word (the ``hardware`` obligation),
``driver`` the entry points.  A Z3 verdict the enumeration does not confirm is an
``InternalError``, never a verdict.
"""

from .driver import clear_cache, prove, prove_layout
from .verdicts import (
    OBLIGATIONS,
    TEST_HOOKS,
    InternalError,
    LayoutResult,
    Options,
    Proof,
    Verdict,
)

__all__ = ["OBLIGATIONS", "TEST_HOOKS", "InternalError", "LayoutResult", "Options", "Proof",
           "Verdict", "clear_cache", "prove", "prove_layout"]
