"""Map hashes kept by what they hash: ``maps/`` of the cache folder.

The ``hardware`` verdict matches a layout with the GPU runs by its map hash
(``base.hashes.cell_table_hash``): every row of its cell table written as JSON text and the
text hashed -- for the catalog some 170,000 rows and, for wgmma's accumulators, the table
again at each N a run used (32 N of 16,384 rows).  The rows are a pure function of the
enumerated arrays, so the hash can be kept by a digest of those arrays.  A toy: the 2 x 4
layout of ``model/cells.py`` enumerates ``pts`` = [[0, 0, 0], [0, 0, 1], ...] and ``out`` =
[[0, 0], [1, 0], ...]; ``cells.table_digest`` hashes those arrays' bytes (with the outputs'
names, the kind, the metadata's bit width and the replication group's expression) to, say,
``3f1c...``; the entry's key is a SHA-256 of that digest, the header
``mma|m2n4k1|C/D|cells`` and the element count (``all`` for the whole table, ``E`` for each
thread's first E elements, the map at one N), and its value the 16-digit map hash.

Why this is sound: the enumeration runs every time (the digest is of this run's arrays), and
the hash is a function of those arrays and of the code that writes and hashes rows, whose
files (``model/cells.py``, ``model/layout.py``, ``model/algebra.py``, ``base/hashes.py``, this
module) and ptxlayout's, NumPy's and Python's versions are in every key: an edited formula
gives other arrays, an edited writer another key.  The ``hardware`` verdicts are not kept
here (``kept_verdicts`` keeps them by the evidence's bytes, the code and the arrays).  One
file, ``maps/hashes.json``: ``{"schema", "code", "hashes": {key: hash}, "digest"}`` with a
SHA-256 of the hashes; a file whose schema or digest does not match, or whose hashes are not
16 hex digits, is ignored with a warning and written again; one written by other code is
replaced without a word.
Bounded: past ``LIMIT`` keys it keeps the newest half.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk

FOLDER = "maps"
NAME = "hashes.json"
SCHEMA = "ptxlayout-map-hashes/1"
LIMIT = 4096
_HASH = re.compile(r"[0-9a-f]{16}")


@cache
def _code_key() -> str:
    import numpy as np
    h = hashlib.sha256(json.dumps([SCHEMA, __version__, np.__version__,
                                   list(sys.version_info[:3])]).encode())
    top = Path(__file__).resolve().parents[1]
    for rel in ("model/cells.py", "model/layout.py", "model/algebra.py", "base/hashes.py",
                "prove/kept_hashes.py"):
        h.update(rel.encode() + b"\0" + hashlib.sha256((top / rel).read_bytes()).digest())
    return h.hexdigest()


def hash_key(digest: str, header: str, elements: int | None) -> str:
    """The key of a map hash: the table's ``cells.table_digest``, the header it is hashed
    under (``instruction|shape|operand|kind``) and the element count kept (None: all)."""
    return hashlib.sha256(f"{_code_key()}|{digest}|{header}|"
                          f"{'all' if elements is None else elements}".encode()).hexdigest()


def _is_hash(v: Any) -> bool:
    return isinstance(v, str) and _HASH.fullmatch(v) is not None


STORE = disk.KeptFile(FOLDER, NAME, SCHEMA, "hashes", _code_key, _is_hash, LIMIT)


def _digest(hashes: dict[str, str]) -> str:
    return STORE.digest(hashes)


class KeptHashes(disk.Kept):
    """The kept map hashes of one run: read once (``open``), added to as hashes are computed
    (``put``), written back once (``close``) where anything was added (``base.cache.Kept``;
    ``open``: none kept is empty, None where no cache folder is in use)."""

    SPEC = STORE

    @property
    def hashes(self) -> dict[str, str]:
        return self.values


def _valid(entry: Any) -> dict[str, str] | None:
    return STORE.valid(entry)
