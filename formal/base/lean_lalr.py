"""Lark's LALR parse of a long text, run by one lean loop instead of Lark's per-token machinery.

``lean_parser(parser, "start", transformer)`` is a function ``text -> value`` that gives what
``transformer.transform(parser.parse(text))`` gives -- Lark's own tables, the same tokens from
each parser state's own terminals, Lark's own callback of each rule -- without Lark's lexer
thread, line counter and ``feed_token`` per token, and without a tree the Transformer walks
again.  For ``grammar/cute.lark`` and ``struct S { using A = B; };`` it makes the ``alias``
of ``A`` (the Transformer's method, called on ``[USING, A, Type(B)]`` as the reduction is made)
inside ``struct_decl``'s, as Lark would.  What it does not run as Lark does -- a token no state
takes, and with it Lark's error recovery and its warnings -- raises ``Declined``, and the
caller asks Lark (``formal/audit/header.py``: the CuTe header reader, CUTLASS's headers being
some millions of tokens).  ``collector_paused`` holds Python's cycle collector off while such a
reading makes its many small objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from lark import Lark, Tree

from .grammar_files import _compiled, _OneByOne, _Scanner

# ---- the loop ---------------------------------------------------------------------------------
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
    builder = _builder(parser)
    if builder is None:
        return None
    callbacks = builder.create_callback(transformer)
    kind = None if transformer is None else type(transformer)
    if transformer is not None and any(callable(getattr(transformer, t.name, None))
                                       for t in parser.terminals):
        return None  # a method of a token's name: a token callback
    return _loop(parser, start, callbacks, kind, max_depth)


def _builder(parser: Lark) -> Any:
    """Lark's tree builder of ``parser``, or None where this loop does not run it as Lark
    does (another lexer, a post-lexer, lexer callbacks, another tree class)."""
    from lark.lexer import ContextualLexer
    from lark.parse_tree_builder import ParseTreeBuilder
    from lark.parsers.lalr_parser import LALR_Parser

    frontend = parser.parser
    lexer = getattr(frontend, "lexer", None)
    lalr = getattr(frontend, "parser", None)
    opts = parser.options
    if opts.postlex is not None or parser.lexer_conf.callbacks \
            or not isinstance(lexer, ContextualLexer) or not isinstance(lalr, LALR_Parser) \
            or opts.ambiguity == "forest" or opts.tree_class not in (None, Tree):
        return None
    return ParseTreeBuilder(parser.rules, Tree, opts.propagate_positions, False,
                            opts.maybe_placeholders)


def _loop(parser: Lark, start: str, callbacks: dict[Any, Any], owner: type | None,
          max_depth: int) -> Any:
    """The loop of ``parser`` from ``start`` with a rule's ``callbacks``, or None."""
    from lark.parse_tree_builder import ExpandSingleChild
    from lark.parsers.lalr_analysis import Shift

    frontend = parser.parser
    lexer = frontend.lexer
    lalr = frontend.parser
    opts = parser.options
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
        _soup(table.states, parser.rules, callbacks, owner)
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
          owner: type | None) -> dict[Any, dict[Any, tuple[int, dict[str, Any]]]]:
    """S1 -> {S: (1 where K is appended to X's children and 0 where it is not, {L: (the state
    L shifts to from S, 1 where L will be appended and 0 where not)})}: what the lean loop may
    do in S1 with S under it."""
    from functools import partial

    from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders
    from lark.parsers.lalr_analysis import Shift
    from lark.visitors import Transformer

    if owner is not None and owner.__default__ is not Transformer.__default__:  # type: ignore[attr-defined]
        return {}

    def kids(rule: Any) -> list[tuple[int, bool]] | None:
        """The child filter of a rule whose node is a default tree (None: another node)."""
        user = rule.alias or rule.options.template_source or rule.origin.name
        if rule.options.expand1 or (owner is not None and hasattr(owner, user)):
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
            got = step(actions, stack, values, depths, kind, token, end_state, max_depth)
            if got is not SHIFTED:
                return got


SHIFTED: Any = object()  # ``lalr_step``'s answer where the token was shifted: read the next


def lalr_step(actions: Any, stack: list[Any], values: list[Any], depths: list[int], kind: str,
              token: Any, end_state: Any, max_depth: int) -> Any:
    """One token (``kind``; ``token`` None at the end of the text) given to Lark's LALR
    table as Lark's parser gives it: every reduction it causes (each rule's callback on its
    children's values, a ``?rule``'s one child kept as it is, each value's depth counted),
    then its shift (``SHIFTED``); at the end, the value of the start symbol once the end
    state is reached.  What Lark would answer otherwise is ``Declined``.  The loops of
    ``lean_parser`` and ``lean_short.lean_reader`` feed their tokens through it."""
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
            return SHIFTED
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
