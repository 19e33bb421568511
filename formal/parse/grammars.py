"""The Lark parsers over ``grammar/*.lark``, their limits, and Lark's errors as findings.

``grammar/pseudocode.lark`` reads one pseudocode line, ``grammar/fragment.lark`` one piece of
prose (its start symbols are ``FRAGMENT_STARTS``).  A line the grammar refuses becomes one
``parse`` finding at the offending column, e.g. ``row = (groupID + 8`` -> "expected ')' at
column 17".  Lines over ``MAX_LINE`` characters or nested deeper than ``MAX_NESTING`` are refused
before Lark sees them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from ..base.grammar_files import build_parser
from ..base.lean_lalr import Declined
from ..base.lean_short import lean_reader
from ..base.memo import keep_bounded as _bounded
from ..base.source import Finding, SourceText, error
from . import syntax as S

MAX_LINE = 2000  # characters in one logical line of pseudocode or prose
MAX_NESTING = 64  # parenthesis depth
MAX_LITERAL_BITS = 64

FRAGMENT_STARTS = (
    "fragment_cell", "flat_row", "type_cell", "header", "element_list", "type_label",
    "section_title", "reference", "metadata_desc", "metadata_decl", "smem_note", "figure", "n_cell",
    "wmma_cells",
)


@cache
def pseudo_parser() -> Lark:
    return build_parser("pseudocode", "start")


@cache
def fragment_parser() -> Lark:
    return build_parser("fragment", list(FRAGMENT_STARTS))


# ---- a parse through the lean loop, Lark's where the loop declines ----------------------------
#
# A catalog's sections are some thousand short parses, and Lark spends most of each on its
# per-token machinery (a lexer thread, ``feed_token``) and on a tree the Transformer then walks.
# ``base/lean_short.lean_reader`` runs the same LALR tables and gives the Transformer's value
# as it reduces; whatever it would not do exactly as Lark does -- a syntax error, a method that
# raises (a ``Reject``), a tree too deep -- it declines, and the reader runs Lark itself, from
# the start, so every message, position and refusal is Lark's (tests/test_parse_lean.py).

ASK_LARK: Any = object()  # what ``lean_read`` gives where the loop declines: ask Lark


@cache
def _reader(parser: Lark, start: str, kind: type | None) -> Any:
    return lean_reader(parser, start, kind)


def lean_read(parser: Lark, start: str, transformer: Transformer[Token, Any] | None,
              text: str) -> Any:
    """``transformer.transform(parser.parse(text, start=start))`` (the tree where
    ``transformer`` is None) by the lean loop, or ``ASK_LARK``: the loop declined it (a text
    Lark refuses or a Transformer that raises among them), or does not run this parser; the
    caller then asks Lark as it would have.  A Transformer the loop does not run as it reduces
    (one asking for a node's ``meta``: the tcgen05 reader) transforms the loop's tree, which
    is Lark's, its places too: its value, or the very error it raises on Lark's.
    ``transformer`` keeps no state a parse changes (a Transformer of the parse stage: the one
    parse's source at most)."""
    kind = None if transformer is None else type(transformer)
    read = _reader(parser, start, kind)
    if read is None and transformer is not None:  # (a method of meta): Lark's tree, by the loop
        read = _reader(parser, start, None)
        if read is None:
            return ASK_LARK
        try:
            tree = read(text, None)
        except Declined:
            return ASK_LARK
        return transformer.transform(tree)  # what Lark's tree gives, errors too
    if read is None:
        return ASK_LARK
    try:
        return read(text, transformer)
    except Declined:
        return ASK_LARK


def transformed(parser: Lark, start: str, kind: Callable[..., Transformer[Token, Any]],
                text: str, *args: Any) -> Any:
    """``kind(*args).transform(parser.parse(text, start=start))``, by the lean loop where it
    reads ``text`` (``lean_read``), else exactly that: Lark's value, or its exception."""
    got = lean_read(parser, start, kind(*args), text)
    if got is ASK_LARK:
        return kind(*args).transform(parser.parse(text, start=start))
    return got


# ---- what a start symbol cannot read, asked of the grammar ------------------------------------


def required_terminals(parser: Lark, start: str) -> frozenset[str]:
    """The terminals every text ``parser`` reads as ``start`` holds a token of, found from the
    grammar's own rules (as Lark compiled them): a rule needs the union of what its symbols
    need, a symbol every one of its rules' needs (the greatest such sets: an expansion that can
    be empty needs nothing, a recursion what its way out needs).  For ``block_scale.lark``'s
    ``scale_title`` (``SECNUM? BLOCK SCALING FOR SCALE_INSTR KIND ...``) SECNUM is not needed,
    SCALE_INSTR is."""
    return _needs(parser).get(start, frozenset())


@cache
def _needs(parser: Lark) -> dict[str, frozenset[str]]:
    """``required_terminals`` of every symbol of ``parser``, once a parser: from "every
    terminal" (None) down to the greatest sets the rules allow."""
    rules: dict[str, list[tuple[frozenset[str], tuple[str, ...]]]] = {}
    for r in parser.rules:
        terms = frozenset(sym.name for sym in r.expansion if sym.is_term)
        symbols = tuple(sym.name for sym in r.expansion if not sym.is_term)
        rules.setdefault(r.origin.name, []).append((terms, symbols))
    need: dict[str, frozenset[str] | None] = dict.fromkeys(rules)
    changed = True
    while changed:
        changed = False
        for name, expansions in rules.items():
            got: frozenset[str] | None = None
            for terms, symbols in expansions:
                one = set(terms)
                bounded = True
                for sym in symbols:
                    more = need.get(sym, frozenset())
                    if more is None:  # a symbol not yet bounded: every terminal
                        bounded = False
                        break
                    one |= more
                if bounded:
                    got = frozenset(one) if got is None else got & one
            if got is not None and got != need[name]:
                need[name], changed = got, True
    return {name: got or frozenset() for name, got in need.items()}


@cache
def can_read(parser: Lark, start: str) -> Callable[[str], bool]:
    """A test that is False only for a text ``parser`` refuses as ``start``: one of the
    ``required_terminals`` whose pattern (the grammar's own, ``to_regexp()``) matches at no
    column of it, so the lexer can make no token of it there.  True means "ask Lark"; a
    refusal is Lark's where it is asked.  A reader that answers a refusal with a plain None
    (never Lark's message), and whose start symbols mostly refuse what they are asked (a
    heading tried as each kind of title), asks this first and skips the parse; the patterns
    are compiled at a start symbol's first test, each once a process."""
    needed = required_terminals(parser, start)
    searches = [_search(t.pattern.to_regexp()) for t in parser.terminals if t.name in needed]

    def near(text: str) -> bool:
        return all(search(text) is not None for search in searches)
    return near


@cache
def _search(regexp: str) -> Callable[[str], Any]:
    return re.compile(regexp).search


# ---- errors ---------------------------------------------------------------------------------

_READABLE = {
    "NAME": "a name", "INT": "a number", "SPECIAL": "a special register (%laneid)",
    "LPAR": "'('", "RPAR": "')'", "EQ": "'='", "REL": "a comparison", "FOR": "'for'",
    "WHERE": "'where'", "OTHERWISE": "'otherwise'", "ELEM": "an element name (ai)",
    "ELEM_REF": "an element (a0)", "ELLIPSIS": "'...'", "ADDOP": "'+' or '-'",
    "MULOP": "'*', '%' or '/'", "SHIFTOP": "'<<' or '>>'", "MINUS": "'-'", "PLUS": "'+'",
    "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "COMMA": "','",
    "$END": "end of line", "TYPE": "a type (.s8)",
    "COUNTWORD": "a count (two)", "ELEM_NAME": "an element name (a0)",
    "MATNAME": "a matrix name (A, B, C, D)", "ARRANGEMENT": "'.row' or '.col'",
}


def _describe_expected(expected: Iterable[str]) -> str:
    names = sorted({_READABLE.get(e, e.lower().replace("_", " ")) for e in expected})
    if len(names) > 8:
        names = names[:8] + ["..."]
    return ", ".join(names)


def parse_error(src: SourceText, exc: UnexpectedInput, what: str) -> Finding:
    pos = getattr(exc, "pos_in_stream", None)
    if pos is None:
        pos = len(src.text)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        got = "end of line" if tok.type == "$END" else repr(str(tok))
        exp = _describe_expected(exc.expected)
        msg = f"cannot read {what}: unexpected {got}; expected {exp}"
        pos = tok.start_pos if tok.start_pos is not None else len(src.text)
    elif isinstance(exc, UnexpectedCharacters):
        ch = src.text[pos] if pos < len(src.text) else ""
        msg = f"cannot read {what}: unexpected character {ch!r}"
        allowed = getattr(exc, "allowed", None)
        if allowed:
            msg += f"; expected {_describe_expected(allowed)}"
    elif isinstance(exc, UnexpectedEOF):
        msg = f"cannot read {what}: the line ends too early"
        pos = len(src.text)
    else:  # pragma: no cover - other UnexpectedInput subclasses
        msg = f"cannot read {what}"
    text = src.text.strip()
    if len(text) > 80:
        text = text[:77] + "..."
    return error("parse", src.span(pos or 0), f"{msg} in {text!r}")


def read_with(src: SourceText, what: str, run: Callable[[], Any],
              nested: str | None = None) -> tuple[Any, list[Finding]]:
    """``run()`` -- a Lark parse of ``src`` and its Transformer -- with every way it can
    refuse the text as one finding: a syntax error at its column (``parse_error``), a value
    the Transformer rejects (``Reject``, at its position), or nesting deeper than Python's
    stack (``limit``).  Any other exception is a defect of ptxlayout and propagates."""
    try:
        return run(), []
    except UnexpectedInput as exc:
        return None, [parse_error(src, exc, what)]
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, Reject):
            return None, [error("parse", src.span(orig.pos), orig.message)]
        raise
    except RecursionError:
        return None, [error("limit", src, f"{nested or what} is nested too deeply to read")]


def unread(src: SourceText, what: str, findings: list[Finding]) -> S.Unread | None:
    """A refusal of ``src`` as a value to remember: its one error finding, at an offset of
    the text (None where it is not that, so the text is parsed again next time)."""
    if len(findings) != 1 or findings[0].severity != "error":
        return None
    f = findings[0]
    for pos in range(len(src.text) + 1):
        if src.span(pos) == f.span:
            u = S.Unread(f.kind, pos, f.message, what)
            return u if unread_finding(src, u) == f else None
    return None


def unread_finding(src: SourceText, u: S.Unread) -> Finding:
    """The finding of a remembered refusal, on ``src``'s own place (``unread``)."""
    return error(u.kind, src.span(u.pos), u.message)


def guard_size(src: SourceText, what: str) -> Finding | None:
    if len(src.text) > MAX_LINE:
        return error("limit", src, f"{what} is {len(src.text)} characters long; the limit is "
                     f"{MAX_LINE}")
    depth = best = 0
    where = 0
    for k, ch in enumerate(src.text):
        if ch in "([{":
            depth += 1
            if depth > best:
                best, where = depth, k
        elif ch in ")]}":
            depth = max(0, depth - 1)
    if best > MAX_NESTING:
        return error("limit", src.span(where), f"{what} nests parentheses {best} deep; the "
                     f"limit is {MAX_NESTING}")
    return None


class RuleTransformer(Transformer[Token, Any]):
    """A Transformer of the parse stage: its methods are named after rules, never after a
    terminal, so a token is handed on as it is without a look for a method of its type
    (``visit_tokens=False``, what Lark's default ``__default_token__`` does for each token
    anyway, without a failed attribute look-up a token; tests/test_rule_transformers.py holds
    every such class free of a terminal's name)."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)


class Reject(Exception):
    """Raised inside a Transformer for a well-formed but unacceptable construct."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message



_MEMO_LIMIT = 8192
PSEUDO_MEMO: dict[str, S.PseudoLine | S.Unread] = {}
PROSE_MEMO: dict[tuple[str, str], Any] = {}


def clear_memo() -> None:
    """Forget every remembered parse (benchmarks measure cold runs with it)."""
    PSEUDO_MEMO.clear()
    PROSE_MEMO.clear()


def remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    _bounded(memo, key, value, _MEMO_LIMIT)
