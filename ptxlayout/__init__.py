"""``import ptxlayout``: the public name of the package whose code lives in ``formal/``.

The folder is ``formal/`` (the project's design fixes the tree); the name users import and run
is ``ptxlayout``, as the distribution and the command are (a PyPI distribution called
``formal`` exists, so ``formal`` alone could clash).  This package is a door, nothing more::

    >>> import ptxlayout
    >>> ptxlayout.__version__                  # formal.__version__
    '0.1.0'
    >>> ptxlayout.analyze                      # formal.api.analyze, imported on first use
    <function analyze at ...>

and ``python -m ptxlayout prove`` is ``ptxlayout prove``.  Importing it imports none of z3,
sympy or lark, as importing ``formal`` does not: the names of ``formal.api`` load on first use.
"""

from __future__ import annotations

from typing import Any

from formal import __version__

# the pipeline as calls (formal.api): read, prove, find
API = ("analyze", "model_of", "find", "near", "current_catalog", "diff_documents", "Analysis")

__all__ = ["__version__", *API]


def __getattr__(name: str) -> Any:
    if name in API:
        from formal import api
        return getattr(api, name)
    raise AttributeError(f"module 'ptxlayout' has no attribute {name!r}")
