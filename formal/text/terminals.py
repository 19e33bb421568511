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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from lark import Lark


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
    searches = [re.compile(t.pattern.to_regexp()).search for t in chosen]

    @lru_cache(maxsize=65536)  # a document's lines repeat: each distinct one searched once
    def near(text: str) -> bool:
        return any(search(text) is not None for search in searches)
    return near
