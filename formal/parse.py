"""Parse stage: Lark grammars in ``grammar/`` plus Transformers that build ``formal.syntax`` values.

The grammar files are the specification of the language; this module only turns their trees
into frozen values and Lark's errors into findings.  Nothing here evaluates document text:
an expression such as ``(threadID_in_group * 4) + (i & 0x3)`` becomes the value

    BinOp("+", BinOp("*", Name("threadID_in_group"), Num(4)), BinOp("&", Name("i"), Num(3)))

and only the model stage gives it meaning.

Every entry point takes a ``SourceText`` (a logical line with positions) and returns
``(value, findings)``: a line the grammar refuses yields ``None`` and one ``parse`` finding at
the offending column, so the caller goes on with the next line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from . import syntax as S
from .ingest import Document, OperandBlock, Section, TableRow, TypeBlock
from .source import Finding, SourceText, error, warning
from .variants import CONTAINER_BITS, COUNT_WORDS, REGISTER_BITS, TYPE_BITS, shapes

MAX_LINE = 2000  # characters in one logical line of pseudocode or prose
MAX_NESTING = 64  # parenthesis depth
MAX_LITERAL_BITS = 64

FRAGMENT_STARTS = (
    "fragment_cell", "flat_row", "type_cell", "header", "element_list", "type_label",
    "section_title", "reference", "metadata_desc", "metadata_decl", "figure",
)


def grammar_dir() -> Path:
    """Where the ``.lark`` files are: inside the installed package, or the repository root."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammar", here.parent / "grammar"):
        if (candidate / "pseudocode.lark").is_file():
            return candidate
    raise FileNotFoundError("grammar/pseudocode.lark not found next to the formal package")


def _table_cache(name: str, text: str) -> str | bool:
    """Where Lark keeps the built LALR tables of a grammar between runs (building them is
    about a third of a second), or False for no cache.

    ``PTXLAYOUT_CACHE_DIR`` names the directory (empty: no cache); by default the user's
    cache directory.  The file name carries a hash of the grammar text, and Lark itself
    checks a hash of the grammar, its options, its own version and Python's before it uses
    a file, so an edited grammar or another Lark never loads stale tables.  A directory that
    cannot be made or written means no cache, not an error."""
    import hashlib
    import os

    where = os.environ.get("PTXLAYOUT_CACHE_DIR")
    if where is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        where = os.path.join(base, "ptxlayout")
    if not where:
        return False
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError:
        return False
    if not os.access(where, os.W_OK | os.X_OK):
        return False
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return os.path.join(where, f"{name}-{digest}.lark-tables")


@cache
def _pseudo_parser() -> Lark:
    text = (grammar_dir() / "pseudocode.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", start="start", propagate_positions=True,
                maybe_placeholders=False, cache=_table_cache("pseudocode", text))


@cache
def _fragment_parser() -> Lark:
    text = (grammar_dir() / "fragment.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", start=list(FRAGMENT_STARTS), propagate_positions=True,
                maybe_placeholders=False, cache=_table_cache("fragment", text))


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


def _parse_error(src: SourceText, exc: UnexpectedInput, what: str) -> Finding:
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


def _guard_size(src: SourceText, what: str) -> Finding | None:
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


class _Reject(Exception):
    """Raised inside a Transformer for a well-formed but unacceptable construct."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


# ---- pseudocode -------------------------------------------------------------------------------


def _int_literal(tok: Token) -> int:
    text = str(tok)
    if text[:2] in ("0x", "0X"):
        value = int(text[2:], 16)
    elif text[:2] in ("0b", "0B"):
        value = int(text[2:], 2)
    else:
        value = int(text, 10)
    if value.bit_length() > MAX_LITERAL_BITS:
        shown = text[:20] + ("..." if len(text) > 20 else "")
        raise _Reject(tok.start_pos or 0, f"the literal {shown}"
                      f" needs {value.bit_length()} bits; at most {MAX_LITERAL_BITS} are accepted")
    return value


def _pos(node: Any) -> int:
    if isinstance(node, Token):
        return node.start_pos or 0
    pos = getattr(node, "pos", None)
    if isinstance(pos, int):
        return pos
    meta = getattr(node, "meta", None)
    return getattr(meta, "start_pos", 0) or 0


def _fold(items: Sequence[Any], op_of: Any) -> S.Expr:
    """Left-fold ``a op b op c`` where ops are tokens between operands or implied."""
    result: S.Expr = items[0]
    k = 1
    while k < len(items):
        item = items[k]
        if isinstance(item, Token):
            op, rhs = str(item), items[k + 1]
            k += 2
        else:
            op, rhs = op_of, item
            k += 1
        result = S.BinOp(op, result, rhs, _pos(result))
    return result


@v_args(inline=False)
class PseudoTransformer(Transformer[Token, Any]):
    """Lark tree of one pseudocode line -> ``syntax`` values (a ``PseudoLine`` at the top)."""

    def __init__(self, src: SourceText) -> None:
        super().__init__()
        self.src = src

    # lines
    def line(self, c: list[Any]) -> S.PseudoLine:
        return c[0] if c else S.PseudoLine("blank", self.src)

    def blank(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("blank", self.src)

    def assignment(self, c: list[Any]) -> S.PseudoLine:
        guard = c[3] if len(c) > 3 else None
        return S.PseudoLine("assign", self.src, name=str(c[0]), name_pos=_pos(c[0]),
                            expr=c[2], guard=guard)

    def predicate(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("predicate", self.src, name=str(c[0]), name_pos=_pos(c[0]),
                            cond=c[2])

    def range_assignment(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("range", self.src, name=str(c[0]), name_pos=_pos(c[0]), low=c[2],
                            high=c[4])

    def set_assignment(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("set", self.src, name=str(c[0]), name_pos=_pos(c[0]), items=c[2])

    def continuation(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("continuation", self.src, expr=c[0], guard=c[1])

    def where(self, c: list[Any]) -> S.PseudoLine:
        return S.PseudoLine("where", self.src)

    def where_assignment(self, c: list[Any]) -> S.PseudoLine:
        """``where X = ...``: a definition like any other."""
        guard = c[4] if len(c) > 4 else None
        return S.PseudoLine("assign", self.src, name=str(c[1]), name_pos=_pos(c[1]),
                            expr=c[3], guard=guard)

    # expressions
    def number(self, c: list[Token]) -> S.Num:
        return S.Num(_int_literal(c[0]), c[0].start_pos or 0, str(c[0]))

    def name(self, c: list[Token]) -> S.Name:
        return S.Name(str(c[0]), c[0].start_pos or 0)

    def special(self, c: list[Token]) -> S.Special:
        return S.Special(str(c[0]).lower(), c[0].start_pos or 0)

    def neg(self, c: list[Any]) -> S.Expr:
        inner = c[-1]
        if isinstance(inner, S.Num):
            return S.Num(-inner.value, inner.pos, "-" + inner.text)
        return S.Neg(inner, _pos(inner))

    def bor(self, c: list[Any]) -> S.Expr:
        return _fold(c, "|")

    def bxor(self, c: list[Any]) -> S.Expr:
        return _fold(c, "^")

    def band(self, c: list[Any]) -> S.Expr:
        return _fold(c, "&")

    def shift(self, c: list[Any]) -> S.Expr:
        return _fold(c, None)

    def sum(self, c: list[Any]) -> S.Expr:
        return _fold(c, None)

    def product(self, c: list[Any]) -> S.Expr:
        return _fold(c, None)

    # conditions
    def compare(self, c: list[Token]) -> Token:
        return c[0]

    def chain(self, c: list[Any]) -> S.Compare:
        operands = tuple(x for x in c if not isinstance(x, Token))
        ops = tuple("==" if str(x) in ("=", "==") else str(x) for x in c if isinstance(x, Token))
        return S.Compare(operands, ops, _pos(operands[0]))

    def set_value(self, c: list[Token]) -> tuple[str, int, int]:
        return ("value", _int_literal(c[0]), c[0].start_pos or 0)

    def set_ellipsis(self, c: list[Token]) -> tuple[str, int, int]:
        return ("ellipsis", 0, c[0].start_pos or 0)

    def set_items(self, c: list[tuple[str, int, int]]) -> tuple[tuple[int, int], ...]:
        ranges: list[tuple[int, int]] = []
        k = 0
        while k < len(c):
            kind, value, pos = c[k]
            if kind == "ellipsis":
                if not ranges or k + 1 >= len(c) or c[k + 1][0] != "value":
                    raise _Reject(pos, "an ellipsis in a set must stand between two numbers")
                lo = ranges.pop()[0]
                hi = c[k + 1][1]
                if hi < lo:
                    raise _Reject(c[k + 1][2], f"the range {{{lo},..,{hi}}} is empty")
                ranges.append((lo, hi))
                k += 2
                continue
            ranges.append((value, value))
            k += 1
        return tuple(ranges)

    def set_cond(self, c: list[Any]) -> S.InSet:
        expr = c[0]
        items = c[-1]
        return S.InSet(expr, items, _pos(expr))

    def or_cond(self, c: list[Any]) -> S.BoolOp:
        parts = tuple(x for x in c if not isinstance(x, Token))
        return S.BoolOp("or", parts, _pos(parts[0]))

    def and_cond(self, c: list[Any]) -> S.BoolOp:
        parts = tuple(x for x in c if not isinstance(x, Token))
        return S.BoolOp("and", parts, _pos(parts[0]))

    # guards
    def guard_where(self, c: list[Any]) -> S.Guard:
        elem = str(c[1])
        lane = c[4] if len(c) > 4 else None
        return S.Guard("where", letter=elem[0].lower(), cond=c[3], pos=_pos(c[0]), lane=lane)

    def elem_refs(self, c: list[Token]) -> tuple[tuple[str, int], ...]:
        return tuple((str(t)[0].lower(), int(str(t)[1:])) for t in c if t.type == "ELEM_REF")

    def guard_elems(self, c: list[Any]) -> S.Guard:
        elems = c[1]
        letter = elems[0][0] if elems else ""
        lane = c[2] if len(c) > 2 else None
        return S.Guard("elems", letter=letter, elems=elems, pos=_pos(c[0]), lane=lane)

    def guard_otherwise(self, c: list[Token]) -> S.Guard:
        return S.Guard("otherwise", pos=_pos(c[0]))

    def guard_if(self, c: list[Any]) -> S.Guard:
        return S.Guard("if", cond=c[1], pos=_pos(c[0]))


# Lines recur across sections (every block starts with 'groupID = %laneid >> 2'): a line's
# syntax tree holds only offsets into its own text, so a parse is reused for the same text
# with the new line's positions.  Bounded, so that a 10 MB document cannot grow it without end.
_MEMO_LIMIT = 8192
_PSEUDO_MEMO: dict[str, S.PseudoLine] = {}
_PROSE_MEMO: dict[tuple[str, str], Any] = {}


def clear_memo() -> None:
    """Forget every remembered parse (benchmarks measure cold runs with it)."""
    _PSEUDO_MEMO.clear()
    _PROSE_MEMO.clear()


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value


def parse_pseudo_line(src: SourceText) -> tuple[S.PseudoLine | None, list[Finding]]:
    """One line of pseudocode -> a PseudoLine, or None and a finding."""
    hit = _PSEUDO_MEMO.get(src.text)
    if hit is not None:
        return replace(hit, source=src), []
    value, findings = _parse_pseudo_line(src)
    if value is not None and not findings:
        _remember(_PSEUDO_MEMO, src.text, value)
    return value, findings


def _parse_pseudo_line(src: SourceText) -> tuple[S.PseudoLine | None, list[Finding]]:
    guard = _guard_size(src, "this line")
    if guard is not None:
        return None, [guard]
    if not src.text.strip():
        return S.PseudoLine("blank", src), []
    parser = _pseudo_parser()  # a broken grammar file is an internal error, not a finding
    try:
        tree = parser.parse(src.text)
        value = PseudoTransformer(src).transform(tree)
    except UnexpectedInput as exc:
        return None, [_parse_error(src, exc, "this formula")]
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, _Reject):
            return None, [error("parse", src.span(orig.pos), orig.message)]
        raise
    except RecursionError:
        return None, [error("limit", src, "this line is nested too deeply to read")]
    if not isinstance(value, S.PseudoLine):  # pragma: no cover - the grammar's start is line
        return S.PseudoLine("blank", src), []
    return value, []


def assemble(lines: Sequence[S.PseudoLine | SourceText],
             ) -> tuple[S.Program, list[Finding]]:
    """Join continuation lines to their assignment; report stray or conflicting lines.

    A ``SourceText`` in place of a line is a line that did not parse (already reported; the
    program records it as ``unparsed``).  A definition keeps the cases that did parse; the
    case lines after a definition line that did not parse belong to it and are passed over
    in silence, so one bad line gives one finding."""
    defs: list[S.Definition] = []
    findings: list[Finding] = []
    unparsed: list[SourceText] = []
    current: list[S.Case] | None = None
    name = kind = ""
    head: SourceText | None = None
    orphaned = False  # the definition line above did not parse

    def close() -> None:
        nonlocal current
        if current is not None and head is not None:
            defs.append(S.Definition(name, kind, tuple(current), head))
        current = None

    for ln in lines:
        if isinstance(ln, SourceText):
            unparsed.append(ln)
            if starts_definition(ln.text):
                close()
                orphaned = True
            continue
        if ln.kind in ("blank", "where"):
            continue
        if ln.kind == "continuation":
            if orphaned:
                continue  # a case of the definition that did not parse
            if current is None or kind != "expr":
                findings.append(error("parse", ln.source.strip(),
                                      "a case line with no assignment above it"))
                continue
            if current[0].guard is None:
                findings.append(error(
                    "cases", ln.source.strip(),
                    f"'{name}' has a case without a condition followed by a further case"))
            current.append(S.Case(ln.source, expr=ln.expr, guard=ln.guard))
            continue
        close()
        orphaned = False
        name, head = ln.name, ln.source
        if ln.kind == "assign":
            kind = "expr"
            current = [S.Case(ln.source, expr=ln.expr, guard=ln.guard)]
        elif ln.kind == "predicate":
            kind = "predicate"
            current = [S.Case(ln.source, cond=ln.cond)]
        elif ln.kind == "range":
            kind = "range"
            current = [S.Case(ln.source, low=ln.low, high=ln.high)]
        elif ln.kind == "set":
            kind = "set"
            current = [S.Case(ln.source, items=ln.items)]
    close()
    return S.Program(tuple(defs), tuple(unparsed)), findings


def starts_definition(text: str) -> bool:
    """Does a line that did not parse open a definition (``name = ...``)?"""
    t = text.lstrip()
    return t[:1].isalpha() and "=" in t.split(" for ")[0]


def parse_program(lines: Sequence[SourceText]) -> tuple[S.Program, list[Finding]]:
    parsed: list[S.PseudoLine | SourceText] = []
    findings: list[Finding] = []
    for src in lines:
        value, errs = parse_pseudo_line(src)
        findings.extend(errs)
        parsed.append(value if value is not None else src)
    program, more = assemble(parsed)
    return program, findings + more


# ---- prose ------------------------------------------------------------------------------------


def _count_from_words(words: Sequence[Token]) -> S.Count:
    text = " ".join(str(w).lower() for w in words)
    value = COUNT_WORDS.get(text)
    if value is None:
        if len(words) == 2 and str(words[0]).lower() in ("thirty", "sixty"):
            tens = 30 if str(words[0]).lower() == "thirty" else 60
            value = tens + COUNT_WORDS.get(str(words[1]).lower(), 0)
        else:
            raise _Reject(words[0].start_pos or 0, f"'{text}' is not a count")
    return S.Count(value, text, words[0].start_pos or 0)


# the words that may join the facts of a fragment sentence
_JOINING = frozenset({"CONTAINING", "OF", "WITH", "EACH", "REGWORD", "HOLDING", "CONSISTING",
                      "THEM"})
_INTROS = (("containing",), ("of",), ("consisting", "of"), ("with",), ("holding",))


def _intro_slips(words: Sequence[Token]) -> list[tuple[int, str]]:
    """``containing of two .s32 registers``: the meaning is clear, the wording is not."""
    said = tuple(str(w).lower() for w in words)
    if said in _INTROS:
        return []
    return [(words[0].start_pos or 0, f"'{' '.join(said)}' before the register count reads "
             "as a slip (one of 'containing' or 'of' is meant)")]


def _count_slips(count: S.Count) -> list[tuple[int, str]]:
    if count.text == "single":
        return [(count.pos, "'single' without 'a' reads as a slip ('a single' is meant)")]
    return []


def _filling(kind: str, types: tuple[str, ...], pos: int) -> S.Count | None:
    """Elements per register when the sentence leaves the count out: as many as fill it."""
    width = REGISTER_BITS.get(kind)
    if width is None or not types or any(t not in CONTAINER_BITS for t in types):
        return None
    # the narrowest container every type can take (.e4m3 / .e2m1 share 8-bit ones)
    common = set.intersection(*(set(CONTAINER_BITS[t]) for t in types))
    if not common or width % min(common):
        return None
    n = width // min(common)
    return S.Count(n, f"{n} (as many as fill a .{kind})", pos)


# an image name spells its shape as digits (16816) and its types as run-together words
_SHAPE_DIGITS = {sh.replace("m", "").replace("n", "").replace("k", ""): sh
                 for sh in sorted(shapes("mma") | shapes("mma.sp"))}
_IMAGE_TYPES = {"f16bf16": ("f16", "bf16"), "u8s8": ("u8", "s8"), "u4s4": ("u4", "s4"),
                "i8": ("s8", "u8"), "i4": ("s4", "u4")}


@v_args(inline=False)
class ProseTransformer(Transformer[Token, Any]):
    """Lark tree of a table cell or a sentence -> ``syntax`` values."""

    def count_number(self, c: list[Token]) -> S.Count:
        return S.Count(_int_literal(c[0]), str(c[0]), c[0].start_pos or 0)

    def count_single(self, c: list[Token]) -> S.Count:
        return S.Count(1, "a single", c[0].start_pos or 0)

    def count_single_bare(self, c: list[Token]) -> S.Count:
        return S.Count(1, "single", c[0].start_pos or 0)

    def count_one(self, c: list[Token]) -> S.Count:
        return S.Count(1, str(c[0]), c[0].start_pos or 0)

    def count_words(self, c: list[Token]) -> S.Count:
        return _count_from_words(c)

    def types(self, c: list[Token]) -> tuple[tuple[str, ...], int]:
        return tuple(str(t)[1:] for t in c if t.type == "TYPE"), c[0].start_pos or 0

    def out_of(self, c: list[Any]) -> tuple[str, S.Count]:
        return ("out_of", next(x for x in c if isinstance(x, S.Count)))

    def from_clause(self, c: list[Any]) -> tuple[str, tuple[str, ...], int]:
        names = [t for t in c if isinstance(t, Token) and t.type == "MATNAME"]
        return ("from", tuple(str(t) for t in names), (names[0].start_pos or 0) if names else 0)

    def sentence(self, c: list[Token]) -> str:
        return " ".join(str(t) for t in c)

    # -- the fragment sentence: its facts, and the words between them
    def frag_word(self, c: list[Token]) -> Token | None:
        return c[0] if c else None  # None: a comma

    def frag_intro(self, c: list[Token | None]) -> tuple[str, tuple[Token, ...]]:
        return ("intro", tuple(t for t in c if t is not None))

    def frag_per(self, c: list[Token]) -> tuple[str, bool]:
        return ("per", True)

    def frag_elements(self, c: list[Any]) -> dict[str, Any]:
        words = [t for t in c if isinstance(t, Token) and t.type in _JOINING]
        tagged: dict[str, Any] = dict(x for x in c if isinstance(x, tuple)
                                      and isinstance(x[0], str))
        return {"count": next((x for x in c if isinstance(x, S.Count)), None),
                "types": next(x for x in c if isinstance(x, tuple) and isinstance(x[0], tuple)),
                "nonzero": any(isinstance(t, Token) and t.type == "NONZERO" for t in c),
                "out_of": tagged.get("out_of"),
                "per": bool(tagged.get("per")) or any(str(t).lower() == "each" for t in words)}

    def fragment(self, c: list[Any]) -> S.FragmentDesc:
        regs = next(x for x in c if isinstance(x, S.Count))
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        kind = str(regkind)[1:]
        intro = next(x[1] for x in c if isinstance(x, tuple) and x[0] == "intro")
        elems = next((x for x in c if isinstance(x, dict)), None)
        frm = next((x for x in c if isinstance(x, tuple) and x[0] == "from"), ("from", (), 0))
        extra = tuple(x for x in c if isinstance(x, str) and not isinstance(x, Token))
        slips = _intro_slips(intro) + _count_slips(regs)
        per = total = None
        if elems is None:
            # "of eight .f32 registers.": one element of the register's own type each
            types, types_pos = ((kind,), regkind.start_pos or 0) if kind in TYPE_BITS \
                else ((), regkind.start_pos or 0)
            per = S.Count(1, "one (one element of the register's own type)",
                          regkind.start_pos or 0) if types else None
            nonzero, out_of = False, None
        else:
            types, types_pos = elems["types"]
            nonzero, out_of = elems["nonzero"], elems["out_of"]
            count = elems["count"]
            if count is None:
                # "containing .f64 elements": as many as fill the register
                per = _filling(kind, types, types_pos)
            else:
                slips += _count_slips(count)
                per, total = (count, None) if elems["per"] else (None, count)
        return S.FragmentDesc(
            registers=regs, register_kind=kind, register_kind_pos=regkind.start_pos or 0,
            per_register=per, total=total, nonzero=nonzero, types=types, types_pos=types_pos,
            out_of=out_of, matrices=frm[1], matrix_pos=frm[2], extra=extra,
            slips=tuple(slips))

    def fragment_terse(self, c: list[Any]) -> S.FragmentDesc:
        counts = [x for x in c if isinstance(x, S.Count)]
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        types, types_pos = next(x for x in c if isinstance(x, tuple) and isinstance(x[0], tuple))
        out_of = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "out_of"), None)
        nonzero = any(isinstance(t, Token) and t.type == "NONZERO" for t in c)
        return S.FragmentDesc(
            registers=counts[0], register_kind=str(regkind)[1:],
            register_kind_pos=regkind.start_pos or 0, per_register=counts[1], total=None,
            nonzero=nonzero, types=types, types_pos=types_pos,
            out_of=out_of, matrices=(), matrix_pos=0)

    def fragment_cell(self, c: list[Any]) -> S.FragmentDesc:
        return c[0]

    def list_name(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("name", str(c[0]), c[0].start_pos or 0)

    def list_ellipsis(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("ellipsis", str(c[0]), c[0].start_pos or 0)

    def list_sep(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("sep", str(c[0]), c[0].start_pos or 0)

    def element_list(self, c: list[S.ListItem]) -> S.ElementList:
        return S.ElementList(tuple(c))

    def flat_row(self, c: list[Any]) -> S.FlatRow:
        types, tpos = c[0]
        elements = c[2] if len(c) > 2 else None
        epos = elements.items[0].pos if elements is not None and elements.items else 0
        return S.FlatRow(types, tpos, c[1], elements, epos)

    def type_cell(self, c: list[Any]) -> tuple[tuple[str, ...], int]:
        return c[0]

    def header_types(self, c: list[Token]) -> tuple[tuple[str, ...], int]:
        return tuple(str(t)[1:] for t in c), c[0].start_pos or 0

    def header(self, c: list[Any]) -> S.Header:
        tv, pos = c[0]
        return S.Header(tv, pos, tuple(str(t) for t in c[1:]))

    def arrangement(self, c: list[Token]) -> tuple[str]:
        return (str(c[-1])[1:],)

    def shown_in(self, c: list[Any]) -> None:
        return None

    def major_label(self, c: list[Any]) -> S.TypeLabel:
        """``Fragment layout for Row Major matrix A ...``: the spec's m8n8k4 form."""
        word = next(str(t).lower() for t in c if isinstance(t, Token) and t.type == "MAJORWORD")
        return S.TypeLabel((), "row" if word == "row" else "col")

    def type_label(self, c: list[Any]) -> S.TypeLabel:
        types = tuple(str(t)[1:] for t in c if isinstance(t, Token) and t.type == "TYPE")
        arrangement = next((x[0] for x in c if isinstance(x, tuple)), "")
        return S.TypeLabel(types, arrangement)

    def qual_type(self, c: list[Token]) -> tuple[str, str, int]:
        return ("type", str(c[0])[1:], c[0].start_pos or 0)

    def qual_word(self, c: list[Token]) -> tuple[str, str, int]:
        return ("word", str(c[0]).lower(), c[0].start_pos or 0)

    def qual_sep(self, c: list[Token]) -> tuple[str, str, int]:
        return ("sep", "", 0)

    def qualifier(self, c: list[tuple[str, str, int]]) -> S.Qualifier:
        return S.Qualifier(tuple((v, p) for k, v, p in c if k == "type"),
                           tuple(v for k, v, _ in c if k == "word"))

    def section_title(self, c: list[Any]) -> S.SectionTitle:
        number = next((str(t).rstrip(".") for t in c if isinstance(t, Token)
                       and t.type == "SECNUM"), "")
        sparse = any(isinstance(t, Token) and t.type == "SPARSE" for t in c)
        instr = next(t for t in c if isinstance(t, Token) and t.type == "INSTR")
        qual = next((q for q in c if isinstance(q, S.Qualifier)), S.Qualifier())
        return S.SectionTitle(number, sparse, str(instr).split(".", 1)[1], qual)

    def ref_item(self, c: list[Token]) -> tuple[str, str]:
        word = next((str(t).lower() for t in c if t.type != "MATNAME"), "")
        return word, str(c[-1])

    def operand_refs(self, c: list[Any]) -> tuple[str, ...]:
        out: list[str] = []
        word = ""
        for part in c:
            if not isinstance(part, tuple):
                continue
            word = part[0] or word
            name = part[1]
            operand = "C/D" if word.startswith("accumulator") or name in "CD" else name
            if operand not in out:
                out.append(operand)
        return tuple(out)

    def target_types(self, c: list[Any]) -> tuple[tuple[str, int], ...]:
        types, pos = next(x for x in c if isinstance(x, tuple))
        # positions of each type: the types rule keeps only the first; recompute offsets
        out = []
        for t in c:
            if isinstance(t, tuple):
                continue
        offset = pos
        for name in types:
            out.append((name, offset))
            offset += len(name) + 2
        return tuple(out)

    def target(self, c: list[Any]) -> S.Target:
        sparse = any(isinstance(t, Token) and t.type == "SPARSE" for t in c)
        instr = next(t for t in c if isinstance(t, Token) and t.type == "INSTR")
        qual = next((q for q in c if isinstance(q, S.Qualifier)), S.Qualifier())
        fmt = next((x for x in c if isinstance(x, tuple)), ())
        return S.Target(sparse, str(instr).split(".", 1)[1], instr.start_pos or 0, qual, fmt)

    def target_head(self, c: list[Any]) -> S.Target:
        return self.target(c)

    def reference_terse(self, c: list[Any]) -> S.ReferenceSentence:
        return self.reference(c)

    def reference(self, c: list[Any]) -> S.ReferenceSentence:
        ops = next(x for x in c if isinstance(x, tuple))
        target = next(x for x in c if isinstance(x, S.Target))
        return S.ReferenceSentence(ops, target)

    # -- figures
    def fig_sparse(self, c: list[Token]) -> tuple[str, str]:
        return ("sparse", "")

    def fig_shape(self, c: list[Token]) -> tuple[str, str]:
        return ("shape", str(c[0]).lstrip("."))

    def fig_digits(self, c: list[Token]) -> tuple[str, str]:
        shape = _SHAPE_DIGITS.get(str(c[0]))
        return ("shape", shape) if shape else ("other", "")

    def fig_matrix(self, c: list[Token]) -> tuple[str, str]:
        names = {str(t) for t in c if t.type == "MATNAME"}
        return ("operand", "C/D" if names & {"C", "D"} else min(names))

    def fig_accumulator(self, c: list[Token]) -> tuple[str, str]:
        return ("operand", "C/D")

    def fig_metadata(self, c: list[Token]) -> tuple[str, str]:
        return ("operand", "metadata")

    def fig_letter(self, c: list[Token]) -> tuple[str, str]:
        return ("operand", {"C": "C/D"}.get(str(c[0]), str(c[0])))

    def fig_type(self, c: list[Token]) -> tuple[str, str]:
        t = str(c[0])[1:]
        t = {"f16x2": "f16", "bf16x2": "bf16"}.get(t, t)
        return ("type", t) if t in TYPE_BITS else ("other", "")

    def fig_typeword(self, c: list[Token]) -> tuple[str, str]:
        return ("types", str(c[0]))

    def fig_image(self, c: list[Token]) -> tuple[str, str]:
        return ("image", "")

    def fig_other(self, c: list[Token]) -> tuple[str, str]:
        return ("other", "")

    def figure(self, c: list[tuple[str, str]]) -> S.FigureFacts:
        types: list[str] = []
        for kind, value in c:
            if kind == "type":
                types.append(value)
            elif kind == "types":  # an image name's word: f16bf16, u8s8, i8
                types.extend(_IMAGE_TYPES.get(value, (value,)))
        return S.FigureFacts(
            sparse=any(k == "sparse" for k, _ in c),
            shapes=tuple(dict.fromkeys(v for k, v in c if k == "shape")),
            operands=tuple(dict.fromkeys(v for k, v in c if k == "operand")),
            types=tuple(dict.fromkeys(types)), image=any(k == "image" for k, _ in c))

    def group_one(self, c: list[Token]) -> int:
        return 1

    def group_pair(self, c: list[Token]) -> int:
        return 2

    def figure_ref(self, c: list[Token]) -> None:
        return None

    def metadata_desc(self, c: list[Any]) -> S.MetadataDesc:
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        ints = [t for t in c if isinstance(t, Token) and t.type == "INT"]
        bits = [t for t in c if isinstance(t, Token) and t.type == "FIELDBITS"]
        group = next(x for x in c if isinstance(x, int) and not isinstance(x, Token))
        count = next(x for x in c if isinstance(x, S.Count))
        chunk = next(t for t in c if isinstance(t, Token) and t.type == "CHUNKWIDTH")
        return S.MetadataDesc(str(regkind)[1:], int(str(ints[0])),
                              int(str(bits[0]).split("-")[0]), group, count.value,
                              int(str(chunk).split("-")[0]), c[0].start_pos or 0)

    def metadata_decl(self, c: list[Any]) -> S.MetadataDesc:
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        ints = [int(str(t)) for t in c if isinstance(t, Token) and t.type == "INT"]
        chunk = next(t for t in c if isinstance(t, Token) and t.type == "CHUNKWIDTH")
        fields, bits, indices = ints[0], ints[1], ints[2]
        # "2 indices per 4-wide chunk": a chunk is described by that many fields; how many
        # non-zeros they name depends on the type, so it is left unstated (0)
        return S.MetadataDesc(str(regkind)[1:], fields, bits, indices, 0,
                              int(str(chunk).split("-")[0]), c[0].start_pos or 0)


def parse_prose(src: SourceText, start: str, what: str) -> tuple[Any, list[Finding]]:
    """Parse a cell or sentence with one of the fragment grammar's start symbols."""
    key = (src.text, start)
    if key in _PROSE_MEMO:
        return _PROSE_MEMO[key], []
    value, findings = _parse_prose(src, start, what)
    if value is not None and not findings:
        _remember(_PROSE_MEMO, key, value)
    return value, findings


def _parse_prose(src: SourceText, start: str, what: str) -> tuple[Any, list[Finding]]:
    guard = _guard_size(src, what)
    if guard is not None:
        return None, [guard]
    parser = _fragment_parser()  # a broken grammar file is an internal error, not a finding
    try:
        tree = parser.parse(src.text, start=start)
        return ProseTransformer().transform(tree), []
    except UnexpectedInput as exc:
        return None, [_parse_error(src, exc, what)]
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, _Reject):
            return None, [error("parse", src.span(orig.pos), orig.message)]
        raise
    except RecursionError:
        return None, [error("limit", src, f"{what} is nested too deeply to read")]


def try_prose(src: SourceText, start: str) -> Any:
    """Parse if it fits the start symbol; None otherwise (no finding: used to classify)."""
    if len(src.text) > MAX_LINE:
        return None
    parser = _fragment_parser()
    try:
        tree = parser.parse(src.text, start=start)
        return ProseTransformer().transform(tree)
    except (UnexpectedInput, VisitError, RecursionError):
        return None


# ---- the document stage: every section's text parsed, for the model ------------------------------


@dataclass(frozen=True)
class ParsedPart:
    """One type block: its label, its table rows and its pseudocode, parsed."""

    part: TypeBlock
    label: S.TypeLabel | None
    rows: tuple[S.TableFacts, ...]
    program: S.Program
    figures: tuple[tuple[SourceText, S.FigureFacts], ...] = ()


@dataclass(frozen=True)
class ParsedBlock:
    block: OperandBlock
    parts: tuple[ParsedPart, ...]
    metadata: S.MetadataDesc | None = None
    metadata_src: SourceText | None = None


@dataclass(frozen=True)
class ParsedSection:
    section: Section
    title: S.SectionTitle | None
    blocks: tuple[ParsedBlock, ...] = ()
    references: tuple[tuple[SourceText, S.ReferenceSentence], ...] = ()


@dataclass(frozen=True)
class ParsedDocument:
    document: Document
    sections: tuple[ParsedSection, ...]
    findings: tuple[Finding, ...] = ()


def _header(header: TableRow | None,
            findings: list[Finding]) -> tuple[S.Header | None, SourceText | None]:
    if header is None or not header.cells:
        return None, None
    src = header.cells[0]
    value, errs = parse_prose(src, "header", "the table header")
    findings.extend(errs)
    return value, src


def unreadable(errs: Sequence[Finding], unchecked: str) -> list[Finding]:
    """A sentence the prose grammar cannot read is a warning naming what goes unchecked: the
    formulas are the primary data, the prose is cross-checked where it can be read."""
    return [replace(f, severity="warning", kind="unreadable",
                    message=f"{f.message}; {unchecked}") for f in errs]


def _slips(frag: S.FragmentDesc | None, src: SourceText | None, shift: int = 0,
           ) -> list[Finding]:
    if frag is None or src is None:
        return []
    return [warning("wording", src.span(pos + shift), f"the fragment sentence: {remark}")
            for pos, remark in frag.slips]


_ROW_UNCHECKED = "the register budget and element types of this row are not checked"


def parse_row(row: TableRow, header: TableRow | None,
              findings: list[Finding]) -> S.TableFacts | None:
    """One table row, flat (a text scrape's one line) or split into cells."""
    hdr, hdr_src = _header(header, findings)
    cells = list(row.cells)
    if row.flat or len(cells) == 1:
        src = cells[0]
        value, errs = parse_prose(src, "flat_row", "this table row")
        if value is None:
            # a row with no fragment sentence: the types alone
            tvalue = parse_prose(src, "type_cell", "this table row")[0]
            findings.extend(unreadable(errs, _ROW_UNCHECKED))
            if tvalue is None:
                return None
            return S.TableFacts(src, tvalue[0], None, None, None, None, hdr, hdr_src)
        fr: S.FlatRow = value
        findings.extend(_slips(fr.fragment, src))
        esrc = src.slice(fr.elements_pos) if fr.elements is not None else None
        elements = fr.elements
        if elements is not None:
            shift = fr.elements_pos
            elements = S.ElementList(tuple(replace(it, pos=it.pos - shift)
                                           for it in elements.items))
        return S.TableFacts(src, fr.types, fr.fragment, src, elements, esrc, hdr, hdr_src)
    tsrc = cells[0]
    tvalue, errs = parse_prose(tsrc, "type_cell", "the type cell")
    if tvalue is None:
        findings.extend(errs)
        return None
    frag = fsrc = None
    if len(cells) > 1 and cells[1].text.strip():
        fsrc = cells[1]
        frag, errs = parse_prose(fsrc, "fragment_cell", "the fragment cell")
        findings.extend(unreadable(errs, _ROW_UNCHECKED))
        findings.extend(_slips(frag, fsrc))
    elements = esrc = None
    if len(cells) > 2 and cells[2].text.strip():
        esrc = cells[2]
        if esrc.text.strip().lower().startswith("mapping"):
            esrc = None  # the sparse tables put a sentence in the Elements column
        else:
            elements, errs = parse_prose(esrc, "element_list", "the element list")
            findings.extend(unreadable(errs, "the element list is not checked"))
    return S.TableFacts(tsrc, tvalue[0], frag, fsrc, elements, esrc, hdr, hdr_src)


def _parse_part(part: TypeBlock, findings: list[Finding]) -> ParsedPart:
    label = None
    if part.label is not None:
        label, errs = parse_prose(part.label, "type_label", "the type label")
        findings.extend(errs)
    program, errs = parse_program(part.pseudo)
    findings.extend(errs)
    rows = [parse_row(r, part.header, findings) for r in part.rows]
    figures = tuple((f, v) for f in part.figures
                    if (v := parse_prose(f, "figure", "the figure")[0]) is not None)
    return ParsedPart(part, label, tuple(r for r in rows if r is not None), program, figures)


def _metadata_sentence(block: OperandBlock, findings: list[Finding],
                       ) -> tuple[S.MetadataDesc | None, SourceText | None]:
    for pr in block.prose:
        value, errs = parse_prose(pr, "metadata_desc", "the metadata sentence")
        if value is None:
            alt, _errs = parse_prose(pr, "metadata_decl", "the metadata declaration")
            if alt is not None:
                value = alt
            elif pr.text.strip().lower().startswith("metadata"):
                findings.extend(errs)
        if value is not None:
            return value, pr
    return None, None


def _parse_section(section: Section, findings: list[Finding]) -> ParsedSection:
    if not section.operands and not section.references:
        return ParsedSection(section, None)
    title, errs = parse_prose(section.title.strip(), "section_title", "the section title")
    if title is None:
        text = section.title.text.strip().lower()
        if "fragment" in text and "mma" in text:
            findings.extend(errs)
        return ParsedSection(section, None)
    blocks = []
    for block in section.operands:
        parts = tuple(_parse_part(p, findings) for p in block.parts)
        desc = src = None
        if block.operand == "metadata":
            desc, src = _metadata_sentence(block, findings)
        blocks.append(ParsedBlock(block, parts, desc, src))
    refs = []
    for r in section.references:
        value, errs = parse_prose(r, "reference", "the cross-reference")
        findings.extend(errs)
        if value is not None:
            refs.append((r, value))
    return ParsedSection(section, title, tuple(blocks), tuple(refs))


def parse_document(doc: Document) -> ParsedDocument:
    """Every title, table row, sentence and pseudocode line of a document, parsed."""
    findings: list[Finding] = []
    sections = tuple(_parse_section(s, findings) for s in doc.sections)
    return ParsedDocument(doc, sections, tuple(findings))
