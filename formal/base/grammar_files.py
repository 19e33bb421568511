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

The package also ships the tables of every parser it builds, as the very entries the cache
would hold, gzipped: ``grammar/tables/fragment-3f2a....json.gz``, written by
``tools/ship_tables.py`` and held by tests/test_shipped_tables.py equal to what Lark builds
from the grammars today (as canonical forms: Lark numbers states and tokens afresh in each
process).  They pass the same three checks as a cached file and are looked up by the same key
where the cache folder has no sound entry (and then stored there), so an edited grammar,
another Lark or another Python finds no file and builds (and caches) its own.  They are
package data, not state kept from an earlier run: ``--no-cache`` reads them.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark
from lark.lexer import BasicLexer, ContextualLexer, PatternRE, PatternStr, UnlessCallback


def grammar_dir() -> Path:
    """Where the ``.lark`` files are: inside the installed package, or the repository root."""
    package = Path(__file__).resolve().parents[1]  # formal/
    for candidate in (package / "grammar", package.parent / "grammar"):
        if (candidate / "pseudocode.lark").is_file():
            return candidate
    raise FileNotFoundError("grammar/pseudocode.lark not found next to the formal package")


TABLES_SCHEMA = "ptxlayout-lark-tables/3"


def shipped_dir() -> Path:
    """Where the package's own tables are (``grammar/tables``)."""
    return grammar_dir() / "tables"


def _encode(x: Any) -> Any:
    """Lark's serialized tables as JSON: a dict whose keys are all texts, none beginning with
    ``#``, as a JSON object (a rule's ``{"@": 12}``, its options); any other dict -- a parse
    table's states and actions are keyed by integers -- as ``{"#d": [[key, value], ...]}``;
    tuples as lists.  ``{0: {"@": 5}}`` is ``{"#d": [[0, {"@": 5}]]}``: a fifth less text
    than every dict as pairs (schema 2), and a fifth less time for ``json.loads`` to read."""
    if isinstance(x, dict):
        if all(type(k) is str and not k.startswith("#") for k in x):
            return {k: _encode(v) for k, v in x.items()}
        return {"#d": [[_encode(k), _encode(v)] for k, v in x.items()]}
    if isinstance(x, (list, tuple)):
        return [_encode(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    raise TypeError(f"cannot write {type(x).__name__} into the table cache")


def _decode_object(o: dict[str, Any]) -> Any:
    """``_encode`` undone, as json.loads's ``object_hook``: each ``{"#d": pairs}`` a dict again
    (list keys as tuples); any other object is the dict it reads as (no key of such an
    object begins with ``#``, so ``#d`` is never a key of Lark's own)."""
    pairs = o.get("#d")
    if pairs is None or len(o) != 1 or type(pairs) is not list:
        return o
    return {(tuple(k) if type(k) is list else k): v for k, v in pairs}


# the classes of Lark's serialized grammar that hold no reference to its memo (a rule, its
# symbols and options, a terminal and its pattern): name -> (class, fields, whether it has a
# ``_deserialize`` to call), filled on the first load (``_lark_objects``)
_LARK: dict[str, tuple[Any, tuple[str, ...], bool]] = {}


def _lark_objects() -> dict[str, tuple[Any, tuple[str, ...], bool]]:
    if not _LARK:
        from lark.grammar import NonTerminal, Rule, RuleOptions, Terminal
        from lark.lexer import PatternRE, PatternStr, TerminalDef
        _LARK.update({c.__name__: (c, tuple(c.__serialize_fields__), hasattr(c, "_deserialize"))
                      for c in (Terminal, NonTerminal, RuleOptions, Rule, PatternStr, PatternRE,
                                TerminalDef)})
    return _LARK


def _decode_for_lark(o: dict[str, Any]) -> Any:
    """``_decode_object``, and each object Lark marks as one of ``_lark_objects`` (``{"__type__":
    "Terminal", "name": "INT", "filter_out": false}``) made here as Lark's own
    ``Serialize.deserialize`` makes it -- the instance, its fields set, its ``_deserialize``
    called -- from the values this hook has already made (innermost first), so that Lark's
    walk of the tables finds them made: about a quarter of loading a parser saved.  An object
    of any other mark is left to Lark."""
    kind = o.get("__type__")
    made = _LARK.get(kind) if type(kind) is str else None
    if made is None:
        pairs = o.get("#d")
        if pairs is None or len(o) != 1 or type(pairs) is not list:
            return o
        return {(tuple(k) if type(k) is list else k): v for k, v in pairs}
    cls, fields, after = made
    inst = cls.__new__(cls)
    for f in fields:
        setattr(inst, f, o[f])  # a missing field: KeyError, as Lark's own
    if after:
        inst._deserialize()
    return inst


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


def build_parser(name: str, start: Any, positions: bool = False) -> Lark:
    """The LALR parser of ``grammar/<name>.lark`` -- the one place ptxlayout builds a Lark
    parser -- its tables loaded from the package's own (``grammar/tables``) or from the cache
    folder (``base.cache``) when they are there and sound, else built (about 0.1-0.3 s each);
    the cache folder is looked in first, and what it lacks is stored there.

    The tables are stored as JSON, never pickle, with three hashes checked on every load:
    the key the file is named after (the grammar, the start symbols, this tool's, Lark's and
    Python's versions), the hash of the grammar text they were built from, and the hash of
    the tables themselves.  A file that does not parse, fails a hash (its COMMENT pattern
    edited to swallow ``>> 1``, say) or that Lark cannot load is ignored with a warning and
    rebuilt.

    ``positions``: whether Lark gives every rule's node its place (``propagate_positions``:
    a walk of each reduction's children, about a tenth of a parse).  Tokens carry their
    offsets either way; only a Transformer that asks for ``meta`` (``v_args(meta=True)``)
    needs it, and only the tcgen05 reader does (tests/test_shipped_tables.py)."""
    from . import cache as disk

    text = (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
    options = {"parser": "lalr", "start": start, "propagate_positions": positions,
               "maybe_placeholders": False}
    key = _tables_key(text, [start, positions])
    grammar = _digest(text)
    fname = f"{name}-{key[:16]}.json"
    with disk.folder("tables") as fd:
        where = os.path.join(disk.root() or "", "tables")
        entry = None if fd is None else disk.read_json(fd, fname, where)
        if entry is not None:
            try:
                return _loaded(entry, key, grammar)
            except Exception as exc:  # noqa: BLE001 - any defect of a cached file: rebuild
                disk.warn(os.path.join(where, fname),
                          f"not usable tables ({str(exc)[:80] or type(exc).__name__}); "
                          "rebuilt")
        shipped = _shipped(shipped_dir() / f"{fname}.gz", key, grammar)
        if shipped is not None:
            entry, parser = shipped
        else:  # built, then loaded from its entry as a shipped or cached one is
            entry = tables_entry(Lark(text, **options), key, grammar)
            parser = _loaded(entry, key, grammar)
        if fd is not None:
            disk.write_json(fd, fname, entry)
        return parser


def tables_entry(parser: Lark, key: str, grammar: str) -> dict[str, Any]:
    """The entry that keeps ``parser``'s tables: the tables as JSON text inside it, so that
    their hash is of the very text loaded."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    tables = json.dumps(_encode({"data": data, "memo": memo}), separators=(",", ":"),
                        sort_keys=True)
    return {"schema": TABLES_SCHEMA, "key": key, "grammar": grammar,
            "content": _digest(tables), "tables": tables}


def _loaded(entry: Any, key: str, grammar: str) -> Lark:
    """The parser of a checked entry (ValueError, or Lark's own error, where it is not one)."""
    _lark_objects()
    tables = json.loads(_check_entry(entry, key, grammar), object_hook=_decode_for_lark)
    return Lark._load_from_dict(tables["data"], tables["memo"],  # type: ignore
                                _plugins={"ContextualLexer": _Contextual})


def _shipped(path: Path, key: str, grammar: str) -> tuple[dict[str, Any], Lark] | None:
    """The package's own entry under this key and its parser, or None where the package ships
    none (another grammar text, Lark or Python: a key it was not built for).  A shipped file
    that fails a check is ignored with a warning, and the tables are built."""
    import gzip

    from . import cache as disk

    try:
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        entry = json.loads(gzip.decompress(raw))
        return entry, _loaded(entry, key, grammar)
    except Exception as exc:  # noqa: BLE001 - any defect of a shipped file: build instead
        disk.warn(str(path), f"not usable tables ({str(exc)[:80] or type(exc).__name__}); "
                  "built")
        return None


# ---- the lexer's scanners: each state's terminals tried one by one ---------------------------
#
# Lark's contextual lexer gives each parser state the terminals it accepts and, on the state's
# first token, compiles them into one regular expression, ``(?P<NAME>...)|(?P<INT>...)|...``,
# whose first alternative that matches is the token.  A catalog run meets some 280 such states
# (3.6 terminals each) and compiles each, although most read a handful of tokens: about 0.07 s
# of compiling.  ``_Scanner`` gives the same answer without the alternation: it tries the
# state's terminals in Lark's order, each its own compiled expression (compiled once a
# process, ``_compiled``), and the first that matches is the token -- exactly the alternation's
# answer, since nothing follows the alternatives (tests/test_grammar_scanner.py holds every
# state of every parser to Lark's own scanner).

@lru_cache(maxsize=4096)
def _compiled(regexp: str, flags: int) -> Any:
    import re
    return re.compile(regexp, flags)


# A state asked more than this many times is a busy one (a C++ header's tokens, a long
# document's prose: thousands through a few states): from then on it scans with the
# alternation itself, compiled once, one match in the regular-expression engine instead of
# a Python call per terminal -- the very expression Lark compiles (``(?P<NAME>...)|...``),
# whose first alternative that matches is the token, so the answer is the same.
HOT = 64


class _Scanner:
    """One lexer state's terminals (in Lark's order), each tried alone: ``match`` is the
    first that matches at ``pos`` (its text and name), ``fullmatch`` the first that matches
    the whole text -- what Lark's ``Scanner`` answers from their alternation.  A state asked
    more than ``HOT`` times asks the alternation itself (``hot``)."""

    def __init__(self, terminals: list[Any], flags: int) -> None:
        self.allowed_types = {t.name for t in terminals}
        self._tries = [(_compiled(t.pattern.to_regexp(), flags), t.name) for t in terminals]
        self._flags = flags
        self._asked = 0
        self.hot: Any = None

    def match(self, text: Any, pos: int) -> tuple[str, str] | None:
        whole, end = (text, len(text)) if isinstance(text, str) else (text.text, text.end)
        hot = self.hot
        if hot is None:
            self._asked += 1
            if self._asked > HOT and self._tries:  # (no terminal: no alternation, no token)
                hot = self.hot = _compiled("|".join(
                    f"(?P<{name}>{pattern.pattern})" for pattern, name in self._tries),
                    self._flags)
        if hot is not None:
            m = hot.match(whole, pos, end)
            return (m.group(0), str(m.lastgroup)) if m else None
        for pattern, name in self._tries:
            m = pattern.match(whole, pos, end)
            if m:
                return m.group(0), name
        return None

    def fullmatch(self, text: str) -> str | None:
        for pattern, name in self._tries:
            if pattern.fullmatch(text):
                return name
        return None


class _OneByOne(BasicLexer):
    """Lark's lexer of one state with ``_Scanner`` for its scanner.  Its keywords are
    Lark's: a string terminal that a regular one of the same priority reads whole (``for``,
    read by NAME) is not tried on its own where its flags allow, and a token of the regular
    one whose text is such a string takes the string's name (``UnlessCallback``)."""

    def _build_scanner(self) -> Any:
        import re
        if self.use_bytes or self.user_callbacks or self.re is not re:  # pragma: no cover
            return super()._build_scanner()  # none of ours: Lark's own
        flags = self.g_regex_flags
        strings = [t for t in self.terminals if isinstance(t.pattern, PatternStr)]
        embedded = set()
        self.callback = {}
        self.keywords: dict[str, tuple[tuple[str, tuple[str, ...], str], ...]] = {}
        for t in self.terminals:
            if not isinstance(t.pattern, PatternRE):
                continue
            pattern = _compiled(t.pattern.to_regexp(), flags)
            unless = []
            for s in strings:
                m = pattern.match(s.pattern.value) if s.priority == t.priority else None
                if m and m.group(0) == s.pattern.value:
                    unless.append(s)
                    # Lark's own test, on the flags as its tables hold them (lists)
                    if s.pattern.flags <= t.pattern.flags:  # type: ignore[operator]
                        embedded.add(s.name)
            if unless:
                self.callback[t.name] = UnlessCallback(_Scanner(unless, flags))  # type: ignore
                # the same strings as (text, its flags, name), for the lean loop (``lean_lalr``)
                self.keywords[t.name] = tuple((s.pattern.value, tuple(s.pattern.flags), s.name)
                                              for s in unless)
        return _Scanner([t for t in self.terminals if t.name not in embedded], flags)


class _Contextual(ContextualLexer):
    """Lark's contextual lexer, each state's lexer a ``_OneByOne``."""

    BasicLexer = _OneByOne
