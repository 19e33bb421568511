"""``ptxlayout diff`` pairs each layout with its own counterpart, whatever the order of the
sections: a move's variant and m8n8k4's register arrangement are part of what pairs them."""

from __future__ import annotations

from formal.model.resolve import catalog_model
from formal.writers.diff import pair


def test_every_catalog_layout_pairs_with_itself_in_reverse_order() -> None:
    layouts = [lay for lay in catalog_model(False).layouts
               if lay.instruction in ("ldmatrix", "stmatrix", "movmatrix", "mma")]
    pairs = pair(layouts, list(reversed(layouts)))
    wrong = [(a.id, b.id) for a, b in pairs if a is None or b is None or a.id != b.id]
    # ldmatrix.m8n16.x2 (packed) and ldmatrix.m16n16.x1.trans share a 16 x 16 tile and a type
    # set; m8n8k4's .row and .col A layouts share everything but the arrangement
    assert wrong == []
    assert len(pairs) == len(layouts) == 97  # 68 mma, 18 ldmatrix, 9 stmatrix, 2 movmatrix
