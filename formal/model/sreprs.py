"""SymPy's ``srepr`` texts kept between runs: ``sreprs/texts.json`` of the cache folder.

A layout's ``formula_hash`` (the ledger's ``"formula"``, the views' keys) hashes the
``srepr`` of every case value and condition, and SymPy's printer is slow: it orders each sum's
and product's terms again (``as_ordered_terms``) for every node.  The text is a pure function of
the expression tree, so it is kept by the tree written out cheaply: each node as its class
(module and name) and its arguments' texts, each atom (a symbol, a number, ``true``) as its own
``srepr``.  For ``floor(lane/4) + 8`` the tree reads::

    sympy.core.add.Add(sympy.core.numbers.Integer(8),sympy.functions.elementary.integers.floor(
      sympy.core.mul.Mul(sympy.core.numbers.Rational(1, 4),Symbol('lane', integer=True))))

(on one line; ``Integer(8)`` is the atom's own ``srepr``), its key is the SHA-256 of that text,
and the value kept is SymPy's ``srepr``, ``Add(floor(Mul(Rational(1, 4), Symbol('lane',
integer=True))), Integer(8))``.  Two expressions with the same tree are the same expression
(a SymPy expression is its class and its arguments), so they print alike.

One file, ``{"schema", "code", "texts": {key: text}, "digest"}`` (``base.cache.KeptFile``):
the code key is a SHA-256 of every file of the package (``base.hashes.code_key``, Python's
version with it) and SymPy's version, so another printer or another algebra is another file,
replaced silently; a file whose schema or digest does not check, or whose texts are not
strings, is ignored with a warning and written again.  The texts are only ever hashed: none is
parsed, evaluated or sympified.  Kept only while ``kept`` holds the store open (the prover's
run); elsewhere ``srepr_of`` is SymPy's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import Any

import sympy as sp

from ..base import cache as disk
from ..base.hashes import code_key

SCHEMA = "ptxlayout-sreprs/1"


@cache
def _code() -> str:
    return hashlib.sha256(json.dumps([SCHEMA, code_key(), sp.__version__]).encode())\
        .hexdigest()


def _is_text(v: Any) -> bool:
    return isinstance(v, str)


STORE = disk.KeptFile("sreprs", "texts.json", SCHEMA, "texts", _code, _is_text)
_OPEN: list[disk.Kept] = []  # the store ``kept`` holds open, innermost last


@lru_cache(maxsize=8192, typed=True)  # (typed: ``True == Integer(1)``, not the same tree)
def tree(e: Any) -> str | None:
    """The expression tree written out: each node as its class and its arguments' trees,
    each atom as its ``srepr``; None where an argument is not a SymPy value (not kept)."""
    if not isinstance(e, sp.Basic):
        return None
    if not e.args:
        return str(sp.srepr(e))
    parts = []
    for a in e.args:
        t = tree(a)
        if t is None:
            return None
        parts.append(t)
    cls = type(e)
    return f"{cls.__module__}.{cls.__qualname__}({','.join(parts)})"


def tree_key(e: Any) -> str | None:
    t = tree(e)
    return None if t is None else hashlib.sha256(t.encode()).hexdigest()


def srepr_of(e: Any) -> str:
    """``sympy.srepr(e)``: the kept text where the store is open and holds it (else SymPy's,
    then kept)."""
    store = _OPEN[-1] if _OPEN else None
    key = tree_key(e) if store is not None else None
    if store is None or key is None:
        return str(sp.srepr(e))
    hit = store.get(key)
    if hit is None:
        hit = str(sp.srepr(e))
        store.put(key, hit)
    return hit  # type: ignore[no-any-return]


@contextmanager
def kept(on: bool = True) -> Iterator[None]:
    """Inside, ``srepr_of`` reads and adds to the kept texts (read once, written back once
    at the end where any was added); ``on`` False, or no cache folder: SymPy's every time."""
    store = disk.Kept.of(STORE) if on else None
    if store is None:
        yield
        return
    _OPEN.append(store)
    try:
        yield
    finally:
        _OPEN.pop()
        store.close()
