"""The lean LALR loop of ``lean_lalr`` for the parse stage's short texts, one Transformer a parse.

``lean_reader(parser, "start", PseudoTransformer)`` is a function ``(text, transformer) ->
value`` that gives what ``transformer.transform(parser.parse(text, start="start"))`` gives, or
raises ``Declined`` (and the caller asks Lark): ``lean_lalr``'s loop over Lark's own tables and
callbacks, made for a catalog run's thousand short lines rather than one long header -- the
tables shared by a parser's start symbols and made per state on first use (a run meets a few
hundred of a parser's states), each rule's callback bound to the one parse's Transformer (a
reader makes one a line: ``PseudoTransformer(src)`` holds the line's source), and each token
tried only against the state's terminals that can begin with its first character, in Lark's
order (``_by_first_char``).  tests/test_parse_lean.py holds it to Lark over the catalog.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from lark import Lark, Token, Tree

from .grammar_files import _OneByOne, _Scanner
from .lean_lalr import SHIFTED, Declined, _LeanLoop, lalr_step


def lean_reader(parser: Lark, start: str, kind: type | None = None,
                max_depth: int = 200) -> Any:
    """``lean_parser`` made once for every Transformer of one class: a function ``(text,
    transformer) -> value`` giving ``transformer.transform(parser.parse(text, start=start))``
    (the tree where ``kind`` is None), or ``Declined``.  The parse stage reads a thousand short
    lines through some twenty start symbols, each line with a Transformer of its own
    (``PseudoTransformer(src)``, its source's offsets): so the tables are the parser's and
    ``kind``'s, shared by every start symbol, each state's row and each rule's callback made
    on its first use, and the transformer is bound for the one parse.  Each token is the
    state's own scanner's (``_Scanner``, the very object Lark's lexer asks, compiled as Lark
    compiles it), passed over where Lark ignores it.  A transformer of another class, or
    whose own attributes shadow a rule's method, is declined; None where ``lean_parser``
    would be, where a method asks for ``meta`` (``v_args(meta=True)``, a node's place, which
    this loop does not follow), or the parser propagates positions to a Transformer's nodes
    (its trees it gives, each node's place set by Lark's own ``PropagatePositions``)."""
    shared = _shared(parser, kind)
    table = parser.parser.parser.parser.parse_table if shared is not None else None
    if shared is None or table is None or start not in table.start_states:
        return None
    actions, lexing, box, names = shared
    loop = _ShortLoop(actions, table.start_states[start], table.end_states[start], lexing, {},
                      max_depth)
    return _Bound(loop, box, kind, names)


class _Lazy(dict):  # type: ignore[type-arg]
    """A dict whose missing entry is made, and kept, on its first look-up."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.make(key)
        return value


@lru_cache(maxsize=64)
def _shared(parser: Lark, kind: type | None) -> Any:
    """``lean_reader``'s tables of ``parser`` and ``kind``: (each state's actions, each state's
    lexing, the box the parse's transformer is put in, the names an instance may not shadow),
    rows made on first use; None where the loop cannot run them."""
    from lark.lexer import ContextualLexer
    from lark.parse_tree_builder import ExpandSingleChild, ParseTreeBuilder
    from lark.parsers.lalr_analysis import Shift
    from lark.parsers.lalr_parser import LALR_Parser
    from lark.visitors import Transformer, Transformer_InPlace

    frontend = parser.parser
    lexer = getattr(frontend, "lexer", None)
    lalr = getattr(frontend, "parser", None)
    opts = parser.options
    if opts.postlex is not None or parser.lexer_conf.callbacks \
            or (opts.propagate_positions and kind is not None) \
            or not isinstance(lexer, ContextualLexer) or not isinstance(lalr, LALR_Parser) \
            or opts.ambiguity == "forest" or opts.tree_class not in (None, Tree):
        return None
    if kind is not None and (issubclass(kind, Transformer_InPlace) or any(
            callable(getattr(kind, t.name, None)) for t in parser.terminals)):
        return None  # a Transformer in place, or of tokens
    box: list[Any] = [None]
    default_callback: Any = Tree  # Tree(data, children, None), as Transformer's makes it
    if kind is not None:
        default = getattr(kind, "__default__", None)
        if default is not Transformer.__default__:
            import inspect
            if not inspect.isfunction(default):
                return None

            def default_callback(data: Any, children: list[Any]) -> Any:
                from lark.tree import Meta
                return default(box[0], data, children, Meta())  # tree.meta: an empty Meta
    users = {r.alias or r.options.template_source or r.origin.name for r in parser.rules}
    if kind is not None and not all(_method_ok(kind, user) for user in users):
        return None  # a method asking for what this loop does not give: Lark's
    builder = ParseTreeBuilder([], Tree, opts.propagate_positions, False,
                               opts.maybe_placeholders)
    callbacks = _Lazy(lambda rule: _callback(builder, rule, kind, box, default_callback))

    def row(state: Any) -> dict[str, tuple[bool, Any]]:
        out: dict[str, tuple[bool, Any]] = {}
        for sym, (action, arg) in table.states[state].items():
            if action is Shift:
                out[sym] = (True, arg)
                continue
            cb = callbacks[arg]
            if len(arg.expansion) == 1 and type(cb) is ExpandSingleChild:
                cb = None  # a ?rule's one child, itself (as ``_loop`` makes it)
            out[sym] = (False, (len(arg.expansion), cb, arg.origin.name,
                                0 if arg.origin.name.startswith("_") else 1))
        return out

    def scanning(state: Any) -> Any:
        """(the scanner's terminals by first character and those of no known first
        character, ignored, keyword retyping, newline terminals), or None: a lexer this loop
        does not run as Lark does (the parse is then declined)."""
        state_lexer = lexer.lexers.get(state)
        if not isinstance(state_lexer, _OneByOne):
            return None
        scanner = state_lexer.scanner
        keywords = getattr(state_lexer, "keywords", None)
        if not isinstance(scanner, _Scanner) or keywords is None \
                or set(state_lexer.callback) != set(keywords) \
                or set(keywords) & set(state_lexer.ignore_types):
            return None
        retype: dict[str, dict[str, str]] = {}
        for name, strings in keywords.items():
            if any(flags for _, flags, _ in strings):
                return None  # a string of flags matches more than its own text
            retype[name] = {}
            for value, _, string in strings:
                retype[name].setdefault(value, string)  # the first that matches, as fullmatch
        by_char, rest = _by_first_char(scanner)
        every = tuple((pattern.match, name) for pattern, name in scanner._tries)
        return by_char, rest, state_lexer.ignore_types, retype, state_lexer.newline_types, every

    table = lalr.parser.parse_table
    names = frozenset({"__default__", *(t.name for t in parser.terminals), *users})
    return _Lazy(row), _Lazy(scanning), box, names


@lru_cache(maxsize=1024)
def _by_first_char(scanner: _Scanner) -> tuple[dict[str, tuple[Any, ...]], tuple[Any, ...]]:
    """A state's terminals as its scanner tries them (``_Scanner._tries``: Lark's order), as
    (each character -> the ``(match, name)`` of those a match can begin with it, every other
    character -> those of no known first character): ``_first_chars`` is a superset of what
    a match can begin with, so the first of a character's list that matches at a place is
    the first of all the terminals that matches there -- Lark's token -- in a try or two
    rather than one a terminal.  The characters are ASCII ones (``_first_ascii``: a case
    folded terminal too), and a place of another character tries them all (the loop's
    ``rest`` for it).  Under flags (case folded) every character tries them all."""
    tries = [(pattern.match, name) for pattern, name in scanner._tries]
    if scanner._flags:
        return {}, tuple(tries)
    lists: dict[str, list[Any]] = {}
    rest: list[Any] = []
    for (pattern, _), one in zip(scanner._tries, tries):
        firsts = _first_ascii(pattern.pattern)
        if firsts is None:
            rest.append(one)
            for kept in lists.values():
                kept.append(one)
            continue
        for ch in firsts:
            have = lists.get(ch)
            if have is None:
                have = lists[ch] = list(rest)
            have.append(one)
    return {ch: tuple(kept) for ch, kept in lists.items()}, tuple(rest)


_ASCII = frozenset(map(chr, range(128)))
_ASCII_CLASSES = {  # each category's ASCII characters, as a str pattern matches them
    "CATEGORY_DIGIT": frozenset("0123456789"),
    "CATEGORY_SPACE": frozenset(" \t\n\r\f\v\x1c\x1d\x1e\x1f"),
    "CATEGORY_WORD": frozenset(c for c in _ASCII if c.isalnum() or c == "_"),
}
for _name, _chars in list(_ASCII_CLASSES.items()):
    _ASCII_CLASSES[_name.replace("CATEGORY_", "CATEGORY_NOT_")] = _ASCII - _chars


@lru_cache(maxsize=4096)
def _first_ascii(regexp: str) -> frozenset[str] | None:
    """The ASCII characters a match of ``regexp`` can begin with (a superset: a lookaround or
    an anchor is taken as matching, what is not known is every ASCII character), or None
    where it can match the empty text.  A case-folded part (``(?i:for)``) begins with either
    case of its ASCII letters ({'f', 'F'}); a folded character outside ASCII may fold to an
    ASCII one (the Kelvin sign to 'k'): every ASCII character.  ``(?i:if\\b)`` -> {'i', 'I'};
    ``\\d+`` -> the digits."""
    import re
    import re._parser as sre  # type: ignore[import-not-found]

    def chars(c: int, fold: bool) -> frozenset[str]:
        ch = chr(c)
        if c >= 128:
            return _ASCII if fold else frozenset()
        return frozenset({ch, ch.lower(), ch.upper()}) & _ASCII if fold else frozenset(ch)

    def seq(items: Any, fold: bool) -> tuple[frozenset[str], bool]:
        out: frozenset[str] = frozenset()
        for item in items:
            got, empty = one(item[0], item[1], fold)
            out |= got
            if not empty:
                return out, False
        return out, True

    def one(op: Any, arg: Any, fold: bool) -> tuple[frozenset[str], bool]:
        name = str(op)
        if name == "LITERAL":
            return chars(arg, fold), False
        if name == "IN":
            out: frozenset[str] = frozenset()
            for iop, iarg in arg:
                kind = str(iop)
                if kind == "LITERAL":
                    out |= chars(iarg, fold)
                elif kind == "RANGE":
                    if iarg[1] >= 128 and fold:
                        return _ASCII, False
                    for c in range(iarg[0], min(iarg[1], 127) + 1):
                        out |= chars(c, fold)
                elif kind == "CATEGORY" and str(iarg) in _ASCII_CLASSES and not fold:
                    out |= _ASCII_CLASSES[str(iarg)]
                else:  # a negated class, or another: any ASCII character
                    return _ASCII, False
            return out, False
        if name == "SUBPATTERN":
            return seq(arg[3], fold or bool(arg[1] & re.IGNORECASE) and not arg[2] & re.IGNORECASE)
        if name == "BRANCH":
            outs = [seq(b, fold) for b in arg[1]]
            return frozenset().union(*(o[0] for o in outs)), any(o[1] for o in outs)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            got, empty = seq(arg[2], fold)
            return got, empty or arg[0] == 0
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            return frozenset(), True
        return _ASCII, False  # any character, a group reference, ...: every ASCII one

    try:
        got, empty = seq(sre.parse(regexp), False)
    except Exception:  # noqa: BLE001 - an expression this reading does not know
        return None
    return None if empty else got


class _Bound:
    """``lean_reader``'s function: the loop with the one parse's transformer in its box."""

    def __init__(self, loop: _LeanLoop, box: list[Any], kind: type | None,
                 names: frozenset[str]) -> None:
        self.loop, self.box, self.kind, self.names = loop, box, kind, names

    def __call__(self, text: str, transformer: Any = None) -> Any:
        if type(transformer) is not (self.kind or type(None)):
            raise Declined("another transformer")
        if transformer is not None and not self.names.isdisjoint(vars(transformer)):
            raise Declined("an attribute of the instance")
        box = self.box
        was = box[0]  # a reading inside a callback's, with its own transformer
        box[0] = transformer
        try:
            return self.loop(text)
        finally:
            box[0] = was


def _method_ok(kind: type, user: str) -> bool:
    """Whether ``kind``'s attribute ``user`` (a rule's name) is none, or a method ``_callback``
    calls as Lark would: a plain function, or ``v_args``' wrapper of one that asks no
    ``meta``."""
    import inspect

    from lark.visitors import _vargs_meta, _vargs_meta_inline, _VArgsWrapper

    attr = _class_attr(kind, user)
    if attr is _NONE:
        return True
    wrapper = getattr(attr, "visit_wrapper", None)
    if isinstance(attr, _VArgsWrapper):
        return inspect.isfunction(attr.base_func) and wrapper not in (_vargs_meta,
                                                                     _vargs_meta_inline)
    return inspect.isfunction(attr) and wrapper is None


_NONE: Any = object()


def _callback(builder: Any, rule: Any, kind: type | None, box: list[Any],
              default_callback: Any) -> Any:
    """Lark's ``create_callback`` of one rule for whichever instance of ``kind`` is in
    ``box[0]`` when it is reduced: the rule's method (a plain function, or ``v_args``' wrapper
    of one) called with that instance, else ``default_callback`` (its ``__default__``),
    inside the rule's own wrappers (child filter, single child)."""
    from functools import partial

    from lark.visitors import _VArgsWrapper

    user = rule.alias or rule.options.template_source or rule.origin.name
    attr: Any = _NONE if kind is None else _class_attr(kind, user)
    if attr is _NONE:  # (``_method_ok`` holds every other attribute to what follows)
        f: Any = partial(default_callback, user)
    elif isinstance(attr, _VArgsWrapper):
        base, wrapper = attr.base_func, attr.visit_wrapper
        if wrapper is None:
            f = lambda children: base(box[0], children)  # noqa: E731
        else:
            f = lambda children: wrapper(getattr(box[0], user), user,  # noqa: E731
                                         children, None)
    else:
        f = lambda children: attr(box[0], children)  # noqa: E731
    for _, chain in builder._init_builders([rule]):
        for w in chain:
            f = w(f)
    return f


_new_token = Token._future_new  # Token(...) without its keyword check


def _class_attr(kind: type, name: str) -> Any:
    """``name`` as an instance of ``kind`` finds it in its class (the first class of the MRO
    whose ``__dict__`` holds it, as stored: ``v_args``' wrapper without a bound copy made), or
    ``_NONE``."""
    for klass in kind.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _NONE


class _ShortLoop(_LeanLoop):
    """``lean_reader``'s loop: ``_LeanLoop``'s parse of a short text, each token the one the
    state's own scanner answers (``_Scanner``'s terminals tried in Lark's order, each
    compiled as Lark's lexer compiles it, those that cannot begin with the place's character
    passed over: ``_by_first_char``), an ignored one passed over as Lark's ``next_token``
    passes it; no soup.  A state whose lexer the loop does not run as Lark does declines the
    parse."""

    def _parse(self, text: str) -> Any:
        new_token = _new_token  # Token(...) without its keyword check
        step = lalr_step
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
                lexing = scanners[stack[-1]]
                if lexing is None:
                    raise Declined("a lexer the loop does not run")
                by_char, rest, ignore, retype, newline, every = lexing
                tries = by_char.get(text[pos])
                if tries is None:
                    tries = rest if text[pos] < "\x80" else every
                for match, name in tries:
                    m = match(text, pos)
                    if m is not None:
                        kind = name
                        break
                else:
                    raise Declined("no terminal matches")
                value = m.group(0)
                end = m.end()
                if end == pos:
                    raise Declined("an empty token")
                first, column = line, pos - line_start + 1
                if kind in newline:
                    k = value.count("\n")
                    if k:
                        line += k
                        line_start = pos + value.rindex("\n") + 1
                if kind in ignore:
                    pos = end
                    kind = "$END"
                    continue
                lexed = kind
                if kind in retype:
                    kind = retype[kind].get(value, kind)
                token = new_token(lexed, value, pos, first, column, line, end - line_start + 1,
                                  end)
                if kind != lexed:
                    token.type = kind
                pos = end
                break
            got = step(actions, stack, values, depths, kind, token, end_state, max_depth)
            if got is not SHIFTED:
                return got
