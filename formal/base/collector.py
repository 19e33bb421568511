"""Fewer passes of Python's cycle collector while a run makes its many short-lived objects.

CPython collects its youngest objects every 700 allocations of containers and, every 100 of
those passes, walks *every* object of the process -- SymPy's caches, Lark's tables, Z3's
terms: about 10^6 objects once the prover is imported.  A proof of the embedded catalog makes
millions of short-lived tuples and dicts, so it paid for about 15 such full walks, some 0.4 s
of CPU on the 2-core machine (measured with ``gc.callbacks``).  Inside ``few_collections()``
the youngest generation is collected every 20,000 allocations instead: the same garbage is
found, in fewer and larger passes, and a full walk comes about 30 times less often.  For
example ``gc.get_threshold()`` is ``(700, 10, 10)`` before, ``(20000, 10, 10)`` inside and
``(700, 10, 10)`` again after.  Nothing a run reports depends on when garbage is collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FEW_COLLECTIONS = 20000


@contextmanager
def few_collections() -> Iterator[None]:
    """Inside: the collector's first threshold at least ``FEW_COLLECTIONS`` (restored after)."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], FEW_COLLECTIONS), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
