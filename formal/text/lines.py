"""What kind of line a document line is: grammar/lines.lark read by Lark, its tree turned into a
``LineKind`` by a Transformer.  The readers and the structure pass decide with these facts.

    >>> kind_of("lastcol = firstcol + 3Matrix fragments for ...").glued_at
    22
    >>> kind_of("groupID + 8    for ai where i >= 4").case
    True
    >>> kind_of("Multiplicand A:").operand
    'A'
    >>> kind_of(".s4 or .u4:").type_label
    True

Nothing here reads the content of a line (formal/parse does that); the facts are about its
shape: which phrase opens it, whether it holds a case word, whether a scrape glued an opener
to the end of a formula.  Lines are short and repeat (every block has the same two
definitions), so each distinct text is read once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedInput

from ..base.grammar_files import build_parser

# the phrases of the PHRASE terminal that open a new block of prose (glued or not)
_OPENERS = ("Matrix fragments", "Matrix Fragments", "Multiplicand A", "Multiplicand B",
            "Accumulators", "Metadata:", "The layout of", "The row and column",
            "Same as Matrix", "Fragment layout for", "Accumulator D", "Source registers",
            "Destination registers")
_OTHER = ("Figure", "A warp", "Elements of", "In this section", "Tk:", "For matrix")
_OPERANDS = {"Multiplicand A": "A", "Multiplicand B": "B", "Accumulators": "C/D",
             "Accumulator D": "C/D", "Source registers": "A", "Destination registers": "C/D",
             "Metadata": "metadata", "Metadata:": "metadata"}


@dataclass(frozen=True)
class LineKind:
    """The facts of one line (the text given, white space included)."""

    # heading | titled | assignment | phrase | header_type | dotted | bang | comment | where
    head: str = ""
    phrase: str = ""  # the words of a PHRASE head, as written
    first: str = ""  # the first character
    length: int = 0
    case_word: bool = False
    vector_expression: bool = False
    terse_fragment: bool = False  # the catalog's "four .b32 registers of ..." (a flat row's)
    vector: bool = False  # the word "vector" (lower case) anywhere
    same_as: bool = False
    major_matrix: bool = False
    figure_layout: bool = False
    type_is: bool = False  # "when .ctype is" (a sub-bullet naming its type)
    move_title: bool = False  # "Warp-level matrix load instruction" (a move section's heading)
    tmem_title: bool = False  # "Matrix fragments for shape .16x64b" (a tcgen05 TMEM section)
    wmma_title: bool = False  # a heading that ends "Matrix Fragments for WMMA"
    sentence_break: bool = False  # ". " or ": "
    last: str = ""  # the last token's kind: colon | bar | ...
    glued_at: int = -1  # offset of an opener glued to the character before it

    # -- what the readers ask
    @property
    def section_number(self) -> bool:
        return self.head == "heading"

    @property
    def heading(self) -> bool:
        """A section's title: numbered (``9.7.14.5.9. ...``) or known by its words
        (``Matrix Fragments for mma.m16n8k16 ...``, ``Warp-level matrix load instruction:
        ldmatrix``) where a mirror dropped the numbers."""
        return self.head in ("heading", "titled")

    @property
    def assignment(self) -> bool:
        return self.head == "assignment"

    @property
    def case(self) -> bool:
        """A case line: ``groupID + 8   for ai where i >= 4``."""
        return (self.first.isalnum() or self.first in "(%_-") and self.case_word

    @property
    def continues_expression(self) -> bool:
        """A bare continuation such as ``groupID + 8`` with its guard on the next line."""
        return bool(self.first) and (self.first.isalnum() or self.first in "(%") \
            and not self.sentence_break and self.length < 200

    @property
    def opener(self) -> bool:
        return self.head == "phrase" and self.phrase.startswith(_OPENERS)

    @property
    def prose_opener(self) -> bool:
        return self.opener or self.head in ("bang", "heading", "titled") or \
            (self.head == "phrase" and self.phrase.startswith(_OTHER))

    @property
    def operand(self) -> str | None:
        return _OPERANDS.get(self.phrase) if self.head == "phrase" else None

    @property
    def reference(self) -> bool:
        p = self.phrase.lower()
        return self.head == "phrase" and (p == "same as matrix fragments for" or
                                          (p == "matrix fragments for" and self.same_as))

    @property
    def major_label(self) -> bool:
        return self.head == "phrase" and self.phrase.lower() == "fragment layout for" \
            and self.major_matrix

    @property
    def type_select(self) -> bool:
        """``Fragment layout for accumulator matrix when .ctype is .f16 is shown in ...``:
        the formulas below are for the rows of that type of the table above."""
        return self.head == "phrase" and self.phrase.lower() == "fragment layout for" \
            and self.type_is

    @property
    def type_label(self) -> bool:
        return self.head in ("dotted", "header_type") and self.last == "colon" \
            and not self.vector

    @property
    def header_row(self) -> bool:
        return self.head == "header_type"

    @property
    def row_head(self) -> bool:
        """The head a flat row opens with (its tail says whether the line is one)."""
        return self.head in ("dotted", "header_type")

    @property
    def flat_row(self) -> bool:
        return self.row_head and (self.vector_expression or self.terse_fragment)

    @property
    def move_heading(self) -> bool:
        """``9.7.14.5.15. Warp-level matrix load instruction: ldmatrix``."""
        return self.heading and self.move_title

    @property
    def wmma_heading(self) -> bool:
        """``9.7.14.4.1. Matrix Fragments for WMMA`` (numbered or not)."""
        return self.heading and self.wmma_title

    @property
    def tmem_heading(self) -> bool:
        """``9.7.16.2.3.1.2. Matrix fragments for shape .16x64b`` (formal/parse/tmem.py)."""
        return self.heading and self.tmem_title

    @property
    def figure(self) -> bool:
        return self.head == "bang"

    @property
    def figure_caption(self) -> bool:
        return self.head == "phrase" and self.phrase == "Figure" and self.figure_layout

    @property
    def table_cell(self) -> bool:
        """A cell line of a split table: ends with ``|`` and is not a formula."""
        return self.last == "bar" and not self.assignment


@cache
def _parser() -> Lark:
    return build_parser("lines", "line", positions=False)


_HEADS = ("heading", "titled", "assignment", "phrase", "header_type", "dotted", "bang", "comment",
          "where")
_FLAGS = ("case_word", "vector_expression", "terse_fragment", "same_as", "major_matrix",
          "figure_layout", "sentence_break", "move_title", "tmem_title", "type_is")


class _Facts(Transformer[Token, Any]):
    """The tree of one line -> a LineKind."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def __default__(self, data: str, children: list[Any], meta: Any) -> Any:
        tok = children[0] if children else None
        return (str(data), tok)

    def line(self, c: list[tuple[str, Token]]) -> LineKind:
        facts: dict[str, Any] = {"first": self.text[:1], "length": len(self.text)}
        items = c
        if c and c[0][0] in _HEADS:
            facts["head"], tok = c[0]
            facts["phrase"] = str(tok) if facts["head"] == "phrase" else ""
            items = c[1:]
            if facts["phrase"].startswith("For "):  # "For matrix A, ...": a case word too
                facts["case_word"] = True
        elif c and c[0][0] == "move_title" and c[0][1].start_pos == 0 and len(c) <= 4 \
                and len(self.text) < 80:
            # "Warp-level matrix load instruction: ldmatrix" without its number
            facts["head"] = "titled"
        for kind, tok in items:
            if kind in _FLAGS:
                facts[kind] = True
            if kind == "vector" or (kind == "vector_expression" and "vector" in tok):
                facts["vector"] = True
            if kind == "glued" and "glued_at" not in facts:
                facts["glued_at"] = tok.start_pos
        # where a phrase token holds the mark itself: "9.7.14.5.9. Title", "Metadata: A",
        # "Fragment layout for x" (a sentence break, a case word across two tokens)
        texts = [str(tok) for _kind, tok in c]
        for k, text in enumerate(texts):
            after = texts[k + 1] if k + 1 < len(texts) else None
            if text[-1:] in ".:" and after is not None and after.startswith(" "):
                facts["sentence_break"] = True
            if text.endswith((" for", " For")) and (after is None or after.startswith(" ")):
                facts["case_word"] = True
            if "same as" in text.lower():
                facts["same_as"] = True
        if texts:
            facts["last"] = "colon" if texts[-1].endswith(":") else c[-1][0]
            if facts["last"] == "sentence_break" and len(texts[-1]) > 1:
                facts["last"] = "fill"  # the break took the words after it: they end the line
        if facts.get("head") in ("heading", "titled"):
            facts["wmma_title"] = _wmma_title(self.text)
        return LineKind(**facts)


def _wmma_title(text: str) -> bool:
    """A title's words end with "Matrix Fragments for WMMA" (any case, any spacing)."""
    return " ".join(text.split()).lower().endswith("matrix fragments for wmma")


# characters: a longer line is not tokenized (a 4 MB line of one word took 3 GB: a token
# object a character); read_text names it in a warning.  The spec's longest is under 500.
MAX_LINE = 16384


# The kinds of lines read in an earlier run (``formal.text.line_memo``), and where the kinds
# of the lines a document asks for are written down while it is read (None: nowhere)
_KNOWN: dict[str, LineKind] = {}
_ASKED: list[dict[str, LineKind]] = []
# the kinds this process has read whole (``kind_of``), which ``head_of`` answers from too: a
# reader that asks a line's kind and another that asks its head tokenize it once
_READ: dict[str, LineKind] = {}


def known_kinds(kinds: dict[str, LineKind]) -> None:
    """Kinds of lines read before (by this same grammar and reader): not read again."""
    if len(_KNOWN) + len(kinds) > 65536:  # bounded, as the reading's own memo
        _KNOWN.clear()
    _KNOWN.update(kinds)


@contextmanager
def recording(into: dict[str, LineKind]) -> Iterator[None]:
    """Inside, every line's kind asked for is also put ``into`` the dict."""
    _ASKED.append(into)
    try:
        yield
    finally:
        _ASKED.remove(into)


def kind_of(text: str) -> LineKind:
    """The facts of a line (each distinct text is read once, and not at all where a kept
    reading of its document knows it); a line over ``MAX_LINE`` has none."""
    kind = _KNOWN.get(text)
    if kind is None:
        kind = _READ.get(text)
        if kind is None:
            kind = _read_kind(text)
            if len(_READ) >= 65536:  # bounded, as the reading's own memo
                _READ.clear()
            _READ[text] = kind
    for into in _ASKED:
        into[text] = kind
    return kind


@cache
def _may_hold_title() -> Callable[[str], bool]:
    """Whether a MOVE_TITLE or TMEM_TITLE token can be in a line: one of the two matches it
    at some column (``text.terminals``; False: no token of the line is either)."""
    from .terminals import terminals_search
    return terminals_search(_parser(), ("MOVE_TITLE", "TMEM_TITLE"))


def heading_kinds(text: str) -> tuple[bool, bool, bool]:
    """``(kind.move_heading, kind.tmem_heading, kind.wmma_heading)`` of ``kind =
    kind_of(text)``, the very same, for a section's title.  A line in which neither a
    MOVE_TITLE nor a TMEM_TITLE token can stand (neither terminal matches it anywhere) is not
    read whole: it has neither title fact, and its head is its first token's (``head_of``:
    only a move title makes a line's head ``titled`` otherwise), so it is a WMMA heading
    where that head is a title's and its words end as one (``_wmma_title``).  The catalog's
    titles are some 220 of the 400 lines its documents have read whole.

        heading_kinds("9.7.14.5.15. Warp-level matrix load instruction: ldmatrix")
            -> (True, False, False)   read whole: MOVE_TITLE matches
        heading_kinds("9.7.14.4.1. Matrix Fragments for WMMA")
            -> (False, False, True)   its first token alone (SECNUM, a heading)
    """
    if text in _KNOWN or text in _READ or len(text) > MAX_LINE or _may_hold_title()(text):
        kind = kind_of(text)
        return kind.move_heading, kind.tmem_heading, kind.wmma_heading
    head = head_of(text).head
    return False, False, head in ("heading", "titled") and _wmma_title(text)


# ---- Lark's own tables and lexers, run without its per-token machinery -----------------------
#
# A line is a few tokens (about four in the catalog), and Lark spends more on each token's
# bookkeeping -- a lexer thread, line counting, a parser state, a tree node and its callback
# -- than on matching it.  ``_lean_pairs`` runs the same parse: each token is the first of
# the contextual lexer's terminals for the parser's current state that matches (Lark's own
# scanner of that state), each fed to Lark's own LALR table (shifts, reductions, the end), and
# what it gives is the ``(rule name, token)`` of every reduction of a rule that is one
# terminal -- the pairs ``_read_kind`` reads off Lark's flat tree.  Whatever Lark would do
# otherwise (a keyword callback, an ignored terminal, a post-lexer, no terminal matching, an
# action the table lacks, a tree that is not flat) makes it answer None, and Lark reads the
# line (tests/test_lines.py holds the two to each other on every line of the catalog and on
# lines made of every terminal).


@cache
def _lean_tables() -> tuple[Any, ...] | None:
    """(states, start state, end state, scanner's ``match`` per state, name per
    one-terminal rule, the class ``Shift``, the head's name per terminal), or None where the
    parser is not one ``_lean_pairs`` runs as Lark does.  A state's lexer matches by asking
    its scanner (``BasicLexer.match``), so its scanner is asked here directly."""
    from lark.lexer import BasicLexer, ContextualLexer
    from lark.parsers.lalr_analysis import Shift

    lark_parser = _parser()
    frontend = lark_parser.parser
    lexer = getattr(frontend, "lexer", None)
    if lark_parser.options.postlex is not None or lark_parser.lexer_conf.ignore \
            or lark_parser.lexer_conf.callbacks or not isinstance(lexer, ContextualLexer):
        return None  # pragma: no cover - not lines.lark's parser
    table = frontend.parser.parser.parse_table
    scanners = {}
    for state, state_lexer in lexer.lexers.items():
        if not isinstance(state_lexer, BasicLexer):  # pragma: no cover
            return None
        # (building the state's scanner builds its callbacks too)
        scanners[state] = state_lexer.scanner.match
        if state_lexer.callback or state_lexer.ignore_types:  # pragma: no cover
            return None
    one = {r: str(r.alias or r.origin.name) for r in lark_parser.rules
           if len(r.expansion) == 1 and r.expansion[0].is_term}
    # the rule name of each terminal that is a head (SECNUM -> heading)
    heads = {r.expansion[0].name: name for r, name in one.items() if r.origin.name == "head"}
    return (table.states, table.start_states["line"], table.end_states["line"],
            scanners, one, Shift, heads)


def _lean_pairs(text: str) -> list[tuple[str, Token]] | None:
    """The pairs of ``text``'s flat tree, from Lark's tables (None: ask Lark itself)."""
    tables = _lean_tables()
    if tables is None:  # pragma: no cover
        return None
    states, start, end, scanners, one, shift, _heads = tables
    stack = [start]
    values: list[Token | None] = []
    pairs: list[tuple[str, Token]] = []
    pos, n = 0, len(text)
    while True:
        if pos < n:
            scan = scanners.get(stack[-1])
            got = scan(text, pos) if scan is not None else None
            if not got or not got[0]:
                return None
            value, kind = got
            token: Token | None = Token(kind, value, pos)
            pos += len(value)
        else:
            kind, token = "$END", None
        while True:
            action = states[stack[-1]].get(kind)
            if action is None:
                return None
            if action[0] is shift:
                if token is None or action[1] == end:
                    return None  # pragma: no cover - Lark's table never shifts these
                stack.append(action[1])
                values.append(token)
                break
            rule = action[1]
            size = len(rule.expansion)
            taken = values[-size:] if size else []
            if size:
                del stack[-size:]
                del values[-size:]
            name = one.get(rule)
            if name is not None:
                if taken[0] is None:  # pragma: no cover
                    return None
                pairs.append((name, taken[0]))
            elif any(v is not None for v in taken):
                return None  # a token under a rule of its own: not a flat tree
            goto = states[stack[-1]].get(rule.origin.name)
            if goto is None or goto[0] is not shift:  # pragma: no cover
                return None
            stack.append(goto[1])
            values.append(None)
            if token is None and stack[-1] == end:
                return pairs


@lru_cache(maxsize=65536)
def head_of(text: str) -> LineKind:
    """The facts of a line's head alone -- ``head``, ``phrase``, ``first``, ``length``; every
    other fact a blank line's -- read off its first token only: the token the start state's
    lexer reads at offset 0 (``line: head? item*``: a head is a line's first token or none).
    Its ``assignment``, ``operand``, ``opener`` and ``row_head`` are those of
    ``kind_of(text)``, for less than reading the whole line; its ``head`` is
    ``kind_of(text).head`` except where that is ``titled`` (a fact of the whole line).  A line
    this process (or a kept reading) has read whole is answered with its whole kind."""
    kind = _KNOWN.get(text)
    if kind is None:
        kind = _READ.get(text)  # read whole already: its head is known
    if kind is not None:
        return kind
    if len(text) > MAX_LINE:
        return LineKind(first=text[:1], length=len(text))
    tables = _lean_tables()
    got = tables[3][tables[1]](text, 0) if tables is not None and text else None
    if tables is None or not got or not got[0]:
        return kind_of(text)  # an empty line (or one Lark itself must read)
    value, terminal = got
    name = tables[6].get(terminal, "")
    return LineKind(head=name, phrase=value if name == "phrase" else "", first=text[:1],
                    length=len(text))


@lru_cache(maxsize=65536)
def _read_kind(text: str) -> LineKind:
    if len(text) > MAX_LINE:
        return LineKind(first=text[:1], length=len(text))
    pairs = _lean_pairs(text)
    if pairs is not None:
        return _Facts(text).line(pairs)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput:  # pragma: no cover - ANY takes any character the rest do not
        return LineKind(first=text[:1], length=len(text))
    # the tree is flat -- line(head?, item*), each a node of one token (grammar/lines.lark) --
    # so its pairs are read off directly, as _Facts.__default__ would make them
    flat = [(str(t.data), t.children[0] if t.children else None) for t in tree.children
            if isinstance(t, Tree)]
    if len(flat) != len(tree.children):  # pragma: no cover - not a tree lines.lark makes
        return _Facts(text).transform(tree)  # type: ignore[no-any-return]
    return _Facts(text).line(flat)  # type: ignore[arg-type]
