"""Whether a line can hold a token of some of a grammar's terminals, asked of the terminals
themselves, before any parse: a reader that cares about a few terminals skips Lark on a line
where none of them matches anywhere.

Lark's lexer makes a token of terminal T at column c only where T's pattern matches the line at
c (its regular expression, in the whole line: look-behinds and ``$`` see what they see in the
lexer).  So where no column of a line matches any of a set of terminals, no token of the line is
one of them, whatever the lexer chooses elsewhere.  For ``grammar/smem.lark``'s terminals
``TABLE_CANONICAL`` (``(?i:canonical layouts)``) and ``FAMILY`` (``tcgen05`` or ``wgmma`` as a
word):

    the Canonical Layouts of wgmma        matches: the line is parsed
    a register of the warp, the lane      matches none: no token of the line is either

The converse does not hold (``tcgen05x`` is searched, and is no FAMILY token), so a match only
means "ask the grammar"; the answer is always Lark's.  The patterns are the grammar's own
(``TerminalDef.pattern.to_regexp()``, inline flags included): a terminal edited in the ``.lark``
file is edited here too.

Most of those patterns ignore case, and a search for such a pattern tries it at every column
(the regular-expression engine skips ahead only to a literal of fixed case).  So each pattern's
*literal starts* are read off its own parse (``literal_starts``): the texts one of which every
match begins with -- ``(?i:(?:m\\/n|mn|k)-\\s*major)`` starts with ``m/n``, ``mn`` or ``k``, in
either case.  In an ASCII line a letter matches a pattern's ASCII letter regardless of case
exactly where their lower cases are equal, so a pattern none of whose starts is in the line
(its lower case, for a start that ignores case) matches nowhere in it and is not searched: a
substring test instead of a search a column.  A line with other characters is searched as
before, as is a pattern whose parse gives no literal start.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from lark import Lark

# a literal every match begins with, and whether it matches regardless of case
Start = tuple[str, bool]


def _parser_module() -> tuple[Any, Any] | None:
    """Python's own parser of regular expressions and its op codes (``re._parser`` from 3.11,
    ``sre_parse`` before), or None where neither is there (no pattern then has a start)."""
    try:
        import re._constants as constants  # type: ignore[import-not-found,unused-ignore]
        import re._parser as parser  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import sre_constants as constants  # type: ignore[no-redef,unused-ignore]
            import sre_parse as parser  # type: ignore[no-redef,unused-ignore]
        except ImportError:
            return None
    return parser, constants


def literal_starts(regexp: str) -> tuple[Start, ...] | None:
    """The literals one of which every match of ``regexp`` begins with at its column, each with
    whether it is compared regardless of case; None where its parse gives none (a class, a
    repeat, an empty alternative before any literal) or is not one this reads (a flag other
    than ``i``, ``s``, ``m``, ``x``; a start that ignores case and is not ASCII).

        >>> literal_starts("(?i:canonical layouts)")
        (('canonical layouts', True),)
        >>> literal_starts("(?<![A-Za-z0-9_])(?:tcgen05|wgmma)(?![A-Za-z0-9])")
        (('tcgen05', False), ('wgmma', False))
        >>> literal_starts("[0-9]+") is None
        True
    """
    mod = _parser_module()
    if mod is None:  # pragma: no cover
        return None
    parser, c = mod
    try:
        parsed = parser.parse(regexp, 0)
    except Exception:  # noqa: BLE001 - a pattern this cannot read: no start
        return None
    flags = parsed.state.flags
    if flags & ~(re.IGNORECASE | re.DOTALL | re.MULTILINE | re.VERBOSE | re.UNICODE):
        return None
    got = _starts(list(parsed), bool(flags & re.IGNORECASE), c)
    return None if got is None else tuple(got)


def _starts(items: list[Any], icase: bool, c: Any) -> list[Start] | None:
    """The literal starts of a sequence of parsed items (``literal_starts``)."""
    text: list[str] = []
    for op, av in items:
        if op is c.LITERAL:
            ch = chr(av)
            if icase and not ch.isascii():
                break  # its other cases are not ASCII's: the start ends before it
            text.append(ch)
            continue
        if text:
            break  # the literal run ends here
        if op in (c.ASSERT, c.ASSERT_NOT, c.AT):
            continue  # takes no character: the match's first is still to come
        if op is c.SUBPATTERN:
            _group, add, remove, sub = av
            if (add | remove) & ~(re.IGNORECASE | re.DOTALL | re.MULTILINE | re.VERBOSE):
                return None
            inner = (icase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            return _starts(list(sub), inner, c)
        if op is c.BRANCH:
            out: list[Start] = []
            for alternative in av[1]:
                got = _starts(list(alternative), icase, c)
                if got is None:
                    return None
                out += got
            return out
        return None
    if not text:
        return None
    word = "".join(text)
    return [(word.lower() if icase else word, icase)]


def terminals_search(parser: Lark, prefixes: Iterable[str]) -> Callable[[str], bool]:
    """A test of a line: whether one of ``parser``'s terminals whose name starts with one of
    ``prefixes`` matches it at some column (False: no token of the line is one of them).
    ValueError when no terminal is named so (a renamed terminal must not pass silently)."""
    want = tuple(prefixes)
    chosen = [t for t in parser.terminals if t.name.startswith(want)]
    for p in want:
        if not any(t.name.startswith(p) for t in chosen):
            raise ValueError(f"no terminal of the grammar is named {p}...")
    # one search a terminal: each keeps its literal prefix, which makes the search skip to
    # where it can start (one alternation of them all has none, and is tried at every column)
    regexps = [t.pattern.to_regexp() for t in chosen]
    searches = [re.compile(rx).search for rx in regexps]
    # each search behind its literal starts (None: searched in every line)
    gated = [(literal_starts(rx), search) for rx, search in zip(regexps, searches)]

    @lru_cache(maxsize=65536)  # a document's lines repeat: each distinct one searched once
    def near(text: str) -> bool:
        if not text.isascii():
            return any(search(text) is not None for search in searches)
        low = text.lower()
        for starts, search in gated:
            if starts is not None and not any(s in (low if icase else text)
                                              for s, icase in starts):
                continue  # none of its starts is in the line: it matches at no column
            if search(text) is not None:
                return True
        return False
    return near
