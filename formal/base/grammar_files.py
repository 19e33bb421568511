"""Where the grammar files are, and their LALR parsers with the built tables kept between runs.

``grammar_dir()`` is ``grammar/`` beside the package (an installed wheel carries it inside);
``build_parser("fragment", starts)`` is the LALR parser of ``grammar/fragment.lark``, its tables
loaded from the checked cache folder (``formal.base.cache``) as JSON -- never pickle -- when a
file there carries the right key (a hash of the grammar, its start symbols and the versions of
ptxlayout, Lark and Python), else built and stored, e.g. ``~/.cache/ptxlayout/tables/
fragment-3f2a....json``.  It is the one place that builds a Lark parser: the text stage
(``grammar/lines.lark``), the parse stage (``pseudocode.lark``, ``fragment.lark``), CuTe's
printed layouts and headers (``cute.lark``) and the audit's PTX (``ptx_asm.lark``) all load
their grammars through here, so every cached table passes the same checks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lark import Lark


def grammar_dir() -> Path:
    """Where the ``.lark`` files are: inside the installed package, or the repository root."""
    package = Path(__file__).resolve().parents[1]  # formal/
    for candidate in (package / "grammar", package.parent / "grammar"):
        if (candidate / "pseudocode.lark").is_file():
            return candidate
    raise FileNotFoundError("grammar/pseudocode.lark not found next to the formal package")


TABLES_SCHEMA = "ptxlayout-lark-tables/2"


def _encode(x: Any) -> Any:
    """Lark's serialized tables as JSON: every dict as a list of pairs (its keys are often
    integers), tuples as lists."""
    if isinstance(x, dict):
        return {"d": [[_encode(k), _encode(v)] for k, v in x.items()]}
    if isinstance(x, (list, tuple)):
        return [_encode(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    raise TypeError(f"cannot write {type(x).__name__} into the table cache")


def _decode_object(o: dict[str, Any]) -> Any:
    """``_encode`` undone, as json.loads's ``object_hook``: each ``{"d": pairs}`` a dict again
    (list keys as tuples)."""
    if set(o) != {"d"} or not isinstance(o["d"], list):
        return o
    return {(tuple(k) if isinstance(k, list) else k): v for k, v in o["d"]}


def _digest(text: str) -> str:
    import hashlib
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tables_key(text: str, start: Any) -> str:
    import hashlib
    import sys

    import lark

    from .. import __version__
    what = json.dumps([TABLES_SCHEMA, __version__, lark.__version__, sys.version_info[:2],
                       text, start])
    return hashlib.sha256(what.encode("utf-8")).hexdigest()


def _check_entry(entry: Any, key: str, grammar: str) -> str:
    """The tables' JSON text of a cached entry, or ValueError naming what is wrong with it:
    another key (grammar, start symbols, versions), another grammar text, or tables whose hash
    is not the one stored beside them (an edited or damaged file)."""
    if not isinstance(entry, dict) or entry.get("schema") != TABLES_SCHEMA \
            or entry.get("key") != key:
        raise ValueError("another grammar's or another version's tables")
    if entry.get("grammar") != grammar:
        raise ValueError("built from another grammar text")
    tables = entry.get("tables")
    if not isinstance(tables, str) or entry.get("content") != _digest(tables):
        raise ValueError("the tables do not match their hash (edited or damaged)")
    return tables


def build_parser(name: str, start: Any, positions: bool = True) -> Lark:
    """The LALR parser of ``grammar/<name>.lark`` -- the one place ptxlayout builds a Lark
    parser -- its tables loaded from the cache folder when they are there and sound
    (``base.cache``), else built (about 0.1-0.2 s each) and stored.

    The tables are stored as JSON, never pickle, with three hashes checked on every load:
    the key the file is named after (the grammar, the start symbols, this tool's, Lark's and
    Python's versions), the hash of the grammar text they were built from, and the hash of
    the tables themselves.  A file that does not parse, fails a hash (its COMMENT pattern
    edited to swallow ``>> 1``, say) or that Lark cannot load is ignored with a warning and
    rebuilt."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    from . import cache as disk

    text = (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
    options = {"parser": "lalr", "start": start, "propagate_positions": positions,
               "maybe_placeholders": False}
    key = _tables_key(text, [start, positions])
    grammar = _digest(text)
    fname = f"{name}-{key[:16]}.json"
    with disk.folder("tables") as fd:
        if fd is None:
            return Lark(text, **options)
        where = os.path.join(disk.root() or "", "tables")
        entry = disk.read_json(fd, fname, where)
        if entry is not None:
            try:
                tables = json.loads(_check_entry(entry, key, grammar),
                                    object_hook=_decode_object)
                return Lark._load_from_dict(tables["data"], tables["memo"])  # type: ignore
            except Exception as exc:  # noqa: BLE001 - any defect of a cached file: rebuild
                disk.warn(os.path.join(where, fname),
                          f"not usable tables ({str(exc)[:80] or type(exc).__name__}); "
                          "rebuilt")
        parser = Lark(text, **options)
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        # the tables as JSON text inside the entry: their hash is of the very text loaded
        tables = json.dumps(_encode({"data": data, "memo": memo}), separators=(",", ":"),
                            sort_keys=True)
        disk.write_json(fd, fname, {"schema": TABLES_SCHEMA, "key": key, "grammar": grammar,
                                     "content": _digest(tables), "tables": tables})
        return parser
