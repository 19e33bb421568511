"""Stage 3, model: parsed sections -> ``Layout`` values, and a layout's cells.

A ``Layout`` is one operand of one instruction shape for one group of types, with SymPy maps
from (lane, element) to a tile cell.  For a toy 4-lane, 2-element layout of a 2 x 4 tile,
``row = i`` and ``col = lane``, ``formal.model.cells`` gives the table

    (lane 0, i 0) -> (0, 0)   (lane 1, i 0) -> (0, 1)   ...   (lane 3, i 1) -> (1, 3)

``algebra`` is the symbolic vocabulary (bitwise SymPy functions, bounds, compilers to Python
and numpy), ``sections`` turns a section into layouts, ``resolve`` joins every document's layouts
and resolves "the same as" references, ``cells`` is the one place a layout becomes cells, and
``tv`` the (thread, value) view CuTe and Triton use.
"""

from .cells import CellMap, cells, cells_and_names, map_of
from .layout import LANES, MAX_TILE_CELLS, Case, Formula, Layout, MetadataFacts, Model
from .resolve import build, catalog_model, document_label, layouts_of

__all__ = ["LANES", "MAX_TILE_CELLS", "Case", "CellMap", "Formula", "Layout", "MetadataFacts",
           "Model", "build", "catalog_model", "cells", "cells_and_names", "document_label",
           "layouts_of", "map_of"]
