"""The two hashes ptxlayout writes down, each named after what it hashes.

* ``formula_hash`` -- the normalized formulas of a layout: SymPy's ``srepr`` of every case's
  value and condition, after the header ``instruction|shape|operand|lanes``.  It changes when the
  text's math changes, even if the map does not (``i & 0x3`` -> ``i % 4`` changes it).  The
  ledger stores it as ``"formula"``.
* ``cell_table_hash`` -- the (lane, element) -> cell table, row by row in (selector, lane,
  element) order, each row written as ``json.dumps(row, sort_keys=True)`` would write it.  It is
  what the GPU confirms: ``i & 0x3`` and ``i % 4`` give the same table and the same hash.  The
  exports and the GPU evidence store it as ``map_hash``, the ledger as ``"map"``.

A toy table of two rows ``{"lane": 0, "element": 0, "row": 0, "col": 0}`` and
``{"lane": 0, "element": 1, "row": 1, "col": 0}`` hashes the text
``mma|m2n4k1|C/D|cells|{"col": 0, "element": 0, "lane": 0, "row": 0}{"col": 0, ...}``.
Both are the first 16 hex digits of a SHA-256.

A table stated for every N (wgmma's accumulator, written once at the largest N) has at one N
the map of each thread's first E elements, hashed as the layout at that N: ``first_elements``
is that rule, the one place it is written (the export's reader, the executor and the prover's
hardware verdict all call it).  Of the toy table above, ``first_elements(..., "m2n2k1", ...,
1)`` keeps the row of element 0 and hashes it under ``mma|m2n2k1|C/D|cells|``.

This module needs nothing but the standard library, so the GPU runner (numpy and CuPy only)
computes the same ``cell_table_hash``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from .memo import keep_bounded

Row = TypeVar("Row")


def formula_hash(header: str, formulas: Iterable[tuple[str, Iterable[tuple[str, str]]]],
                 metadata: tuple[str, str] | None = None) -> str:
    """``header`` as ``instruction|shape|operand|lanes``; each formula as (name, [(value,
    condition or 'otherwise')]) in srepr form; ``metadata`` as (selectors repr, holder srepr)."""
    h = hashlib.sha256()
    h.update(header.encode())
    for name, cases in formulas:
        h.update(name.encode())
        for value, cond in cases:
            h.update(value.encode())
            h.update(cond.encode())
    if metadata is not None:
        h.update(metadata[0].encode())
        h.update(metadata[1].encode())
    return h.hexdigest()[:16]


def cell_table_hash(instruction: str, shape: str, operand: str, kind: str,
                    rows: Sequence[Mapping[str, Any]]) -> str:
    """The hash of a cell table (``kind`` 'cells' or 'fields'), computed from the table."""
    return cell_table_hash_of_texts(instruction, shape, operand, kind, row_texts(rows))


def cell_table_hash_of_tuples(instruction: str, shape: str, operand: str, kind: str,
                              names: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``cell_table_hash`` of the rows ``dict(zip(names, row))``, without building them: each
    row of integers written by one %-format in the keys' sorted order (``_row_format``); a row
    holding anything else as ``row_text`` writes it.  The same hash, to the bit."""
    how = _row_format(tuple(names))
    if how is None:
        return cell_table_hash(instruction, shape, operand, kind,
                               [dict(zip(names, r, strict=True)) for r in rows])
    order, fmt = how
    rows = list(rows)
    at = [list(names).index(k) for k in order]
    texts: list[str] | None = None
    if len(at) > 1 and set(map(len, rows)) <= {len(at)}:  # the common case, at once
        texts = int_rows_written(fmt, list(map(itemgetter(*at), rows)))
    if texts is None:
        texts = []
        for r in rows:
            values = tuple([r[i] for i in at]) if len(r) == len(at) else ()
            if values and all(type(v) is int for v in values):
                texts.append(fmt % values)
            else:
                texts.append(_row_text(dict(zip(names, r, strict=True))))
    return cell_table_hash_of_texts(instruction, shape, operand, kind, texts)


def cell_table_hash_of_texts(instruction: str, shape: str, operand: str, kind: str,
                             texts: Iterable[str]) -> str:
    """``cell_table_hash`` of the rows whose ``row_text`` are ``texts``: a caller that hashes
    many sub-tables of one table (wgmma's accumulator at every N) writes each row once."""
    h = hashlib.sha256()
    h.update(f"{instruction}|{shape}|{operand}|{kind}|".encode())
    h.update("".join(texts).encode())
    return h.hexdigest()[:16]


def cell_table_hash_of_bytes(instruction: str, shape: str, operand: str, kind: str,
                             data: bytes) -> str:
    """``cell_table_hash_of_texts`` of rows already joined and encoded (``data``: the rows'
    ``row_text`` one after another, as UTF-8)."""
    return cell_table_hash_of_chunks(instruction, shape, operand, kind, (data,))


def cell_table_hash_of_chunks(instruction: str, shape: str, operand: str, kind: str,
                              chunks: Iterable[Any]) -> str:
    """``cell_table_hash_of_bytes`` of the chunks' bytes one after another (each a bytes-like
    buffer: a slice of a NumPy array of the rows' bytes is hashed where it lies, uncopied)."""
    h = hashlib.sha256()
    h.update(f"{instruction}|{shape}|{operand}|{kind}|".encode())
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()[:16]


def first_elements(instruction: str, shape: str, operand: str, rows: Sequence[Row],
                   elements: Iterable[int], e: int,
                   text: Callable[[Row], str]) -> tuple[list[Row], str]:
    """(the rows of each thread's first ``e`` elements, their ``cell_table_hash`` under
    ``shape``): the map at one N of a table stated for every N.  ``elements`` gives each
    row's element, ``text`` its ``row_text`` (``row_text`` itself for a row as a dict, the
    identity for rows already written)."""
    kept = [r for r, k in zip(rows, elements, strict=True) if k < e]
    return kept, cell_table_hash_of_texts(instruction, shape, operand, "cells",
                                          [text(r) for r in kept])


def cells_at(instruction: str, shape: str, operand: str, cells: Sequence[Mapping[str, Any]],
             e: int, texts: Sequence[str] | None = None) -> tuple[list[Mapping[str, Any]], str]:
    """``first_elements`` of a table of cells as dicts (an export's ``cells``); ``texts``, when
    given, are the ``row_text`` of ``cells`` (``row_texts``), so that a caller taking the
    table at many N writes each row once."""
    elements = [int(c["element"]) for c in cells]
    if texts is None:
        return first_elements(instruction, shape, operand, cells, elements, e, row_text)
    kept = [r for r, k in zip(cells, elements, strict=True) if k < e]
    return kept, cell_table_hash_of_texts(
        instruction, shape, operand, "cells",
        [t for t, k in zip(texts, elements, strict=True) if k < e])


def row_texts(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``row_text`` of every row of a table.  A table whose rows all hold the same keys (as
    many, and each of the first row's) and only integers is written by one %-format mapped
    over the rows, without a Python step a row; any other table row by row.  The same texts."""
    rows = rows if isinstance(rows, list) else list(rows)
    if len(rows) > 1 and all(type(r) is dict for r in rows):
        how = _row_format(tuple(rows[0]))
        if how is not None and len(how[0]) > 1 and set(map(len, rows)) == {len(how[0])}:
            try:
                values = list(map(itemgetter(*how[0]), rows))
            except KeyError:  # a row of as many keys, not the same ones
                values = None
            texts = None if values is None else int_rows_written(how[1], values)
            if texts is not None:
                return texts
    return [_row_text(r) for r in rows]


def object_format(keys: Sequence[str]) -> str:
    """The %-format that writes an object of ``keys`` (in this order) holding integers as
    ``json.dumps`` writes it: ``{"lane": %d, "row": %d}``."""
    return "{" + ", ".join(json.dumps(k).replace("%", "%%") + ": %d" for k in keys) + "}"


def int_rows_written(fmt: str, values: Sequence[tuple[Any, ...]]) -> list[str] | None:
    """``fmt % row`` of every row of ``values`` when every value is a plain int (not a bool,
    a float or a name: json writes those otherwise); None when one is not."""
    if not set(map(type, chain.from_iterable(values))) <= {int}:
        return None
    return list(map(fmt.__mod__, values))


def row_text(r: Mapping[str, Any]) -> str:
    """One row of a cell table as ``cell_table_hash`` writes it."""
    return _row_text(r)


# the keys of a row as it is written (in order) -> (those keys sorted, the %-format that writes
# a row of those keys holding integers): a table has one or two kinds of row
_FORMATS: dict[tuple[Any, ...], tuple[tuple[str, ...], str]] = {}


def _row_format(keys: tuple[Any, ...]) -> tuple[tuple[str, ...], str] | None:
    hit = _FORMATS.get(keys)
    if hit is None:
        if not all(type(k) is str for k in keys):
            return None
        order = tuple(sorted(keys))
        hit = keep_bounded(_FORMATS, keys, (order, object_format(order)), 256)
    return hit


def _row_text(r: Mapping[str, Any]) -> str:
    """``json.dumps(r, sort_keys=True)`` for a row of plain names and integers, faster: the
    keys' order and format are worked out once per kind of row (``_row_format``)."""
    how = _row_format(tuple(r))
    if how is not None:
        values = tuple([r[k] for k in how[0]])
        for v in values:
            if type(v) is not int:  # a bool, a float, a name: json writes it
                break
        else:
            return how[1] % values
    return json.dumps(dict(r), sort_keys=True)


def code_key() -> str:
    """SHA-256 of every file of the package (code, catalog, grammars) and of Python's version:
    whatever could change a layout, how it is drawn or how it is judged changes the key (the
    views of ``writers/views.py`` and the kept hardware verdicts of ``prove/kept_verdicts.py``
    are keyed by it).  Worked out once a process (some 190 files, about 7 ms)."""
    if "key" not in _CODE:
        package = Path(__file__).resolve().parents[1]  # formal/ (a wheel carries grammar/)
        beside = package.parent / "grammar"  # a source tree's grammars (base.grammar_files)
        _CODE["key"] = tree_hash([package, *((beside,) if beside.is_dir() else ())])
    return _CODE["key"]


_CODE: dict[str, str] = {}


def tree_hash(tops: Sequence[Path]) -> str:
    """SHA-256 of Python's version and of each file's path and content under ``tops``
    (compiled ``__pycache__`` left out)."""
    h = hashlib.sha256(sys.version.encode())
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, top).encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()
