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
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Tree
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
                # the same strings as (text, its flags, name), for the lean loop (``lean_parser``)
                self.keywords[t.name] = tuple((s.pattern.value, tuple(s.pattern.flags), s.name)
                                              for s in unless)
        return _Scanner([t for t in self.terminals if t.name not in embedded], flags)


class _Contextual(ContextualLexer):
    """Lark's contextual lexer, each state's lexer a ``_OneByOne``."""

    BasicLexer = _OneByOne


# ---- Lark's LALR parse, run without its per-token machinery ---------------------------------
#
# A C++ header is some 100,000 tokens, and Lark spends more on each token's bookkeeping -- a
# lexer thread and its generator, a line counter object, ``feed_token``'s look-ups, a tree node
# per reduction that a Transformer then walks again -- than on matching it.  ``lean_parser``
# runs the same parse: each token is the first of the current state's terminals that matches
# (the state's own scanner's alternation, as ``_Scanner`` asks it), ignored terminals passed
# over in the same state, a keyword retyped as its ``UnlessCallback`` would, lines and columns
# counted as Lark's ``LineCounter`` counts them; each token fed to Lark's own LALR table, and
# each reduction's children given to Lark's own callback of that rule (its child filter, its
# inlining of ``_rules`` and ``?rules``, and the Transformer's method or a ``Tree``): what
# ``Lark(..., transformer=t).parse(text)`` gives, which is ``t.transform(parser.parse(text))``.
# Whatever Lark would do otherwise -- a character no terminal of the state matches, a token
# the table has no action for (Lark's error recovery and its warnings), a callback that
# raises, a tree deeper than ``max_depth`` (where the Transformer's recursion could fail) --
# raises ``Declined``, and the caller asks Lark itself, from the start
# (tests/test_grammar_lean.py holds the two equal).


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector held off while the body runs (and on again after, where it
    was on).  Reading a header makes a million small objects, none of them in a cycle --
    tokens, trees, lists, the frozen syntax -- and each few hundred of them wake the
    collector, whose every tenth pass of a tenth walks the whole heap (the catalog's layouts,
    SymPy's and Z3's modules): a tenth of reading the CUTLASS headers, and most of writing
    them as JSON.  Acyclic garbage is freed by reference counts all the same; what the body
    leaves in a cycle is collected on the next pass after it."""
    import gc
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Declined(Exception):
    """The lean loop met what it does not run as Lark does: ask Lark itself."""


def lean_parser(parser: Lark, start: str, transformer: Any = None,
                max_depth: int = 200) -> Any:
    """A function ``text -> value`` giving what ``parser`` (a parser of ``build_parser``) parses
    ``text`` to from ``start``, each node made by ``transformer`` where it has the rule's method
    (as Lark's ``transformer=`` option makes them: ``transformer.transform`` of the tree), or
    ``Declined``; None where ``parser`` is not one this loop runs as Lark does (another
    lexer, a post-lexer, lexer callbacks, a Transformer of tokens)."""
    from lark.lexer import ContextualLexer
    from lark.parse_tree_builder import ExpandSingleChild, ParseTreeBuilder
    from lark.parsers.lalr_analysis import Shift
    from lark.parsers.lalr_parser import LALR_Parser

    frontend = parser.parser
    lexer = getattr(frontend, "lexer", None)
    lalr = getattr(frontend, "parser", None)
    opts = parser.options
    if opts.postlex is not None or parser.lexer_conf.callbacks \
            or not isinstance(lexer, ContextualLexer) or not isinstance(lalr, LALR_Parser) \
            or opts.ambiguity == "forest" or opts.tree_class not in (None, Tree):
        return None
    builder = ParseTreeBuilder(parser.rules, Tree, opts.propagate_positions, False,
                               opts.maybe_placeholders)
    callbacks = builder.create_callback(transformer)
    if transformer is not None and any(callable(getattr(transformer, t.name, None))
                                       for t in parser.terminals):
        return None  # a method of a token's name: a token callback
    table = lalr.parser.parse_table
    if start not in table.start_states:
        return None
    # each state's actions, a reduction as (size, callback, the rule's name, its depth step)
    actions: dict[Any, dict[str, tuple[bool, Any]]] = {}
    for state, acts in table.states.items():
        row: dict[str, tuple[bool, Any]] = {}
        for sym, (action, arg) in acts.items():
            if action is Shift:
                row[sym] = (True, arg)
            else:
                rule = arg
                cb = callbacks[rule]
                # a ``?rule`` of one child kept as it is: its value is that child (Lark's
                # ExpandSingleChild of the one child, no filter), no call needed
                if len(rule.expansion) == 1 and type(cb) is ExpandSingleChild:
                    cb = None
                row[sym] = (False, (len(rule.expansion), cb, rule.origin.name,
                                    0 if rule.origin.name.startswith("_") else 1))
        actions[state] = row
    scanners: dict[Any, tuple[Any, frozenset[str], dict[str, dict[str, str]],
                              frozenset[str], Any]] = {}
    for state, state_lexer in lexer.lexers.items():
        if not isinstance(state_lexer, _OneByOne):
            return None
        scanner = state_lexer.scanner
        keywords = getattr(state_lexer, "keywords", None)
        if not isinstance(scanner, _Scanner) or keywords is None \
                or set(state_lexer.callback) != set(keywords) \
                or set(keywords) & set(state_lexer.ignore_types):
            return None
        retype: dict[str, dict[str, str]] = {}
        for kind, strings in keywords.items():
            if any(flags for _, flags, _ in strings):
                return None  # a string of flags matches more than its own text
            retype[kind] = {}
            for value, _, name in strings:
                retype[kind].setdefault(value, name)  # the first that matches, as fullmatch
        alternation = _compiled(_passing(scanner._tries, scanner._flags,
                                         state_lexer.ignore_types, state_lexer.newline_types),
                                scanner._flags)
        scanners[state] = (alternation.match, state_lexer.ignore_types, retype,
                           state_lexer.newline_types, alternation)
    soup = {} if opts.propagate_positions or opts.maybe_placeholders else \
        _soup(table.states, parser.rules, callbacks, transformer)
    lexing = {state: (*scan[:4], soup.get(state)) for state, scan in scanners.items()}
    return _LeanLoop(actions, table.start_states[start], table.end_states[start], lexing,
                     soup, max_depth)


# ---- a run of soup: tokens that each only grow the list a star holds --------------------------
#
# Most of a header is tokens a ``( ... )*`` takes one by one (a function's parameters, an asm
# statement's operands: ``braces``' and ``other``'s stars).  Lark's EBNF makes such a star a
# left-recursive helper rule, ``__braces_star_7: __braces_star_7 NAME | ...``: in state S,
# the star X's tree on top, a token K shifts to S1, and on the next token L the parser
# reduces ``X: X K`` (or first ``_t: K`` and then, from ``goto(S, _t)``, ``X: X _t``), whose
# child filter extends X's list in place (``children[0].children``: the same list, K
# appended, or not where the rule filters it out) under a new tree, and is back in S, where L
# shifts again.  ``_soup`` finds those (S, S1) pairs -- every lookahead of S1 (and of
# ``goto(S, _t)``) reduces that one rule, each rule's node a default tree (no Transformer
# method, no ``?``) -- and the tokens L that S shifts to such a state again, and that S1 (and
# ``goto(S, _t)``) accept.  For those the lean loop appends K to X's children (or not) and puts
# L in K's place: the same list, the same states, what Lark does less a tree and a reduction or
# two; L is lexed in S1, as Lark lexes it.  Any other token takes the parse's own path.


def _soup(states: Any, rules: Any, callbacks: Any,
          transformer: Any) -> dict[Any, dict[Any, tuple[int, dict[str, Any]]]]:
    """S1 -> {S: (1 where K is appended to X's children and 0 where it is not, {L: (the state
    L shifts to from S, 1 where L will be appended and 0 where not)})}: what the lean loop may
    do in S1 with S under it."""
    from functools import partial

    from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders
    from lark.parsers.lalr_analysis import Shift
    from lark.visitors import Transformer

    if transformer is not None and type(transformer).__default__ is not Transformer.__default__:
        return {}

    def kids(rule: Any) -> list[tuple[int, bool]] | None:
        """The child filter of a rule whose node is a default tree (None: another node)."""
        user = rule.alias or rule.options.template_source or rule.origin.name
        if rule.options.expand1 or (transformer is not None and hasattr(transformer, user)):
            return None
        cb = callbacks[rule]
        if type(cb) is ChildFilterLALR_NoPlaceholders:
            return list(cb.to_include)
        if isinstance(cb, partial) and cb.args == (user,) and not cb.keywords:
            return [(i, False) for i in range(len(rule.expansion))]
        return None  # pragma: no cover - a wrapper this loop does not know

    trees: dict[str, bool] = {}  # a rule name -> whether every rule of it makes a default tree
    for rule in rules:
        trees[rule.origin.name] = trees.get(rule.origin.name, True) and kids(rule) is not None

    def terminals(state: Any) -> set[str]:
        return {k for k in states[state] if k.isupper()}

    def only_reduce(state: Any) -> Any:
        """The one rule every lookahead of ``state`` reduces (None: not one)."""
        acts = {v for k, v in states[state].items() if k.isupper()}
        if len(acts) != 1:
            return None
        action, rule = next(iter(acts))
        return None if action is Shift else rule

    def grows(rule: Any, last: Any) -> list[tuple[int, bool]] | None:
        """``X: X last`` with X's tree extended in place: its child filter's other entries."""
        x = rule.origin
        if len(rule.expansion) != 2 or rule.expansion[0] != x or rule.expansion[1] != last \
                or not trees.get(x.name):
            return None
        k = kids(rule)
        return k[1:] if k and k[0] == (0, True) else None

    def pending(state: Any, kind: str, s1: Any) -> tuple[int, set[str]] | None:
        """What S1 (``kind`` shifted from ``state``) reduces for any lookahead: (whether K is
        kept, the lookaheads every state on the way accepts), or None: not soup."""
        r1 = only_reduce(s1)
        if r1 is None or r1.expansion[-1].name != kind:
            return None
        rest = grows(r1, r1.expansion[-1])
        if rest is not None:
            how = {(): 0, ((1, False),): 1}.get(tuple(rest))
            return None if how is None else (how, terminals(s1))
        if len(r1.expansion) != 1 or not r1.origin.name.startswith("_"):
            return None
        unit = kids(r1)
        goto = states[state].get(r1.origin.name)
        if unit not in ([(0, False)], []) or goto is None or goto[0] is not Shift:
            return None
        r2 = only_reduce(goto[1])
        if r2 is None or grows(r2, r1.origin) != [(1, True)]:
            return None
        return len(unit), terminals(s1) & terminals(goto[1])

    soup: dict[Any, dict[Any, tuple[int, dict[str, Any]]]] = {}
    for state, acts in states.items():
        found = {}
        for kind, (action, s1) in acts.items():
            if action is Shift and kind.isupper() and kind != "$END":
                got = pending(state, kind, s1)
                if got is not None:
                    found[kind] = (s1, got)
        for s1, (how, accepted) in found.values():
            soup.setdefault(s1, {})[state] = (
                how, {kind: (t, got[0]) for kind, (t, got) in found.items() if kind in accepted})
    return soup


def _passing(tries: list[tuple[Any, str]], flags: int, ignore: frozenset[str],
             newline: frozenset[str]) -> str:
    """One state's scanner as one expression: the ignored text Lark's scanner passes over
    before a token, then the token -- the alternation ``(?P<NAME>...)|...`` of the state's
    terminals in Lark's order, whose first alternative that matches is the token -- or the
    end of the text: ``(?:WS|COMMENT|...)*+(?:(?P<NAME>...)|...|\\Z)``.  So ``m.lastgroup``
    is Lark's next token, ``m.start(it)`` where it begins, None at the end.

    The passing is Lark's only where, at a place an ignored terminal matches, no terminal
    before it in Lark's order can: each terminal before an ignored one begins with other
    characters (``_first_chars``: WS's are blanks, NAME's letters).  Where that is not known
    to hold, or an ignored terminal's newlines are not counted by Lark (what is passed over
    counts its lines as a whole), or the expression cannot be possessive (``*+``, Python 3.11),
    the alternation alone: each ignored token is then read as one of its own, as Lark reads
    it.  No terminal: ``(?!)``, which never matches."""
    import sys
    tokens = "|".join(f"(?P<{name}>{pattern.pattern})" for pattern, name in tries) or "(?!)"
    if sys.version_info < (3, 11) or flags or not ignore or not ignore <= newline:
        return tokens
    firsts = [_first_chars(pattern.pattern) for pattern, _ in tries]
    passes = []
    for i, (pattern, name) in enumerate(tries):
        if name not in ignore:
            continue
        mine = firsts[i]
        if mine is None or any(other is None or other & mine
                               for other, (_, n) in zip(firsts[:i], tries[:i])
                               if n not in ignore):
            return tokens
        passes.append(f"(?:{pattern.pattern})")
    if not passes:
        return tokens
    return f"(?:{'|'.join(passes)})*+(?:{tokens}|\\Z)"


@lru_cache(maxsize=1024)
def _first_chars(regexp: str) -> frozenset[str] | None:
    """Every character a match of ``regexp`` can begin with (a superset: a lookaround or an
    anchor is taken as matching), or None where that is not a short list of characters (a
    class by category or negated, any character, case folded) or where it matches the empty
    text.  ``(?:[ \\t\\n])+`` -> {' ', '\\t', '\\n'}; ``[LuU]?"`` -> {'L', 'u', 'U', '"'}."""
    import re
    import re._parser as sre  # type: ignore[import-not-found]

    def seq(items: Any) -> tuple[set[str], bool] | None:
        out: set[str] = set()
        for item in items:
            got = one(*item)
            if got is None:
                return None
            out |= got[0]
            if not got[1]:
                return out, False
        return out, True

    def one(op: Any, arg: Any) -> tuple[set[str], bool] | None:
        name = str(op)
        if name == "LITERAL":
            return {chr(arg)}, False
        if name == "IN":
            out: set[str] = set()
            for iop, iarg in arg:
                if str(iop) == "LITERAL":
                    out.add(chr(iarg))
                elif str(iop) == "RANGE" and iarg[1] - iarg[0] < 256:
                    out.update(chr(c) for c in range(iarg[0], iarg[1] + 1))
                else:
                    return None
            return out, False
        if name == "SUBPATTERN":
            return None if arg[1] & re.IGNORECASE else seq(arg[3])
        if name == "BRANCH":
            outs = [seq(b) for b in arg[1]]
            if any(o is None for o in outs):
                return None
            return (set().union(*(o[0] for o in outs)),  # type: ignore[index]
                    any(o[1] for o in outs))  # type: ignore[index]
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            got = seq(arg[2])
            return None if got is None else (got[0], got[1] or arg[0] == 0)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            return set(), True
        return None

    try:
        got = seq(sre.parse(regexp))
    except Exception:  # noqa: BLE001 - an expression this reading does not know
        return None
    return None if got is None or got[1] else frozenset(got[0])


class _LeanLoop:
    """``lean_parser``'s parse of one grammar from one start symbol (its tables made once)."""

    def __init__(self, actions: Any, start: Any, end: Any, scanners: Any, soup: Any,
                 max_depth: int) -> None:
        self.actions, self.start, self.end = actions, start, end
        self.scanners, self.soup, self.max_depth = scanners, soup, max_depth

    def __call__(self, text: str) -> Any:
        try:
            return self._parse(text)
        except Declined:
            raise
        except Exception as exc:  # noqa: BLE001 - a callback's error: Lark reports it its way
            raise Declined(type(exc).__name__) from exc

    def _parse(self, text: str) -> Any:
        from lark import Token
        new_token = Token._future_new  # Token(...) without its keyword check
        actions, scanners, end_state = self.actions, self.scanners, self.end
        max_depth = self.max_depth
        stack = [self.start]
        values: list[Any] = []
        depths: list[int] = []
        pos, n, line, line_start = 0, len(text), 1, 0
        while True:
            token: Any = None
            kind = "$END"
            while pos < n:
                match, ignore, retype, newline, soup = scanners[stack[-1]]
                m = match(text, pos)
                if m is None:
                    raise Declined("no terminal matches")
                kind = m.lastgroup
                begin = m.start(kind) if kind is not None else n
                if begin > pos:  # ignored text passed over: its lines
                    k = text.count("\n", pos, begin)
                    if k:
                        line += k
                        line_start = text.rindex("\n", pos, begin) + 1
                    pos = begin
                if kind is None:  # the end of the text
                    kind = "$END"
                    break
                value, end = m.group(kind), m.end()
                if end == pos:
                    raise Declined("an empty token")
                if kind in ignore:
                    if kind in newline:
                        k = value.count("\n")
                        if k:
                            line += k
                            line_start = pos + value.rindex("\n") + 1
                    pos = end
                    kind = "$END"
                    continue
                first, column = line, pos - line_start + 1
                if kind in newline:
                    k = value.count("\n")
                    if k:
                        line += k
                        line_start = pos + value.rindex("\n") + 1
                lexed = kind
                if kind in retype:
                    kind = retype[kind].get(value, kind)
                if soup is not None:
                    under = soup.get(stack[-2])
                    if under is not None:
                        then = under[1].get(kind)
                        if then is not None:  # the star takes the token on top; this one on
                            if under[0]:
                                values[-2].children.append(values[-1])
                            stack[-1] = then[0]
                            # a token its star will drop is never read: no Token made
                            values[-1] = new_token(lexed, value, pos, first, column, line,
                                                   end - line_start + 1, end) if then[1] else None
                            if then[1] and kind != lexed:
                                values[-1].type = kind
                            pos = end
                            kind = "$END"
                            continue
                token = new_token(lexed, value, pos, first, column, line, end - line_start + 1,
                                  end)
                if kind != lexed:
                    token.type = kind
                pos = end
                break
            while True:
                act = actions[stack[-1]].get(kind)
                if act is None:
                    raise Declined("no action")
                if act[0]:
                    if token is None:
                        raise Declined("the end shifted")
                    stack.append(act[1])
                    values.append(token)
                    depths.append(0)
                    break
                size, callback, origin, step = act[1]
                if callback is None:  # a ?rule's one child: itself, in the rule's state
                    depth = depths[-1] + step
                    if depth > max_depth:
                        raise Declined("too deep")
                    goto = actions[stack[-2]].get(origin)
                    if goto is None or not goto[0]:
                        raise Declined("no goto")
                    stack[-1] = goto[1]
                    depths[-1] = depth
                    if token is None and stack[-1] == end_state:
                        return values[-1]
                    continue
                if size == 1:
                    taken = values[-1:]
                    depth = depths[-1] + step
                    del stack[-1], values[-1], depths[-1]
                elif size:
                    taken = values[-size:]
                    depth = max(depths[-size:]) + step
                    del stack[-size:], values[-size:], depths[-size:]
                else:
                    taken, depth = [], step
                if depth > max_depth:
                    raise Declined("too deep")
                goto = actions[stack[-1]].get(origin)
                if goto is None or not goto[0]:
                    raise Declined("no goto")
                stack.append(goto[1])
                values.append(callback(taken))
                depths.append(depth)
                if token is None and stack[-1] == end_state:
                    return values[-1]
