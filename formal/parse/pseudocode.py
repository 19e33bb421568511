"""Pseudocode lines -> ``formal.parse.syntax`` values (a Lark Transformer).

``col = (threadID_in_group * 4) + (i & 0x3)`` becomes

    BinOp("+", BinOp("*", Name("threadID_in_group"), Num(4)), BinOp("&", Name("i"), Num(3)))

and ``assemble_program`` joins the lines of a block into a ``Program``: each definition with
its cases (``row = groupID for ai where i < 4`` / ``groupID + 8 for ai where i >= 4``).
Nothing is evaluated here; only the model stage gives the values meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lark import Token, v_args

from ..base.source import Finding, SourceText, error
from ..text.lines import kind_of
from . import syntax as S
from .grammars import (
    MAX_LITERAL_BITS,
    PSEUDO_MEMO,
    Reject,
    RuleTransformer,
    guard_size,
    pseudo_parser,
    read_with,
    remember,
    transformed,
    unread,
    unread_finding,
)
from .kept import noted_pseudo, remembered_read

# ---- pseudocode -------------------------------------------------------------------------------


def int_literal(tok: Token) -> int:
    text = str(tok)
    if text[:2] in ("0x", "0X"):
        value = int(text[2:], 16)
    elif text[:2] in ("0b", "0B"):
        value = int(text[2:], 2)
    else:
        value = int(text, 10)
    if value.bit_length() > MAX_LITERAL_BITS:
        shown = text[:20] + ("..." if len(text) > 20 else "")
        raise Reject(tok.start_pos or 0, f"the literal {shown}"
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
class PseudoTransformer(RuleTransformer):
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
        return S.Num(int_literal(c[0]), c[0].start_pos or 0, str(c[0]))

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
        return ("value", int_literal(c[0]), c[0].start_pos or 0)

    def set_ellipsis(self, c: list[Token]) -> tuple[str, int, int]:
        return ("ellipsis", 0, c[0].start_pos or 0)

    def set_items(self, c: list[tuple[str, int, int]]) -> tuple[tuple[int, int], ...]:
        ranges: list[tuple[int, int]] = []
        k = 0
        while k < len(c):
            kind, value, pos = c[k]
            if kind == "ellipsis":
                if not ranges or k + 1 >= len(c) or c[k + 1][0] != "value":
                    raise Reject(pos, "an ellipsis in a set must stand between two numbers")
                lo = ranges.pop()[0]
                hi = c[k + 1][1]
                if hi < lo:
                    raise Reject(c[k + 1][2], f"the range {{{lo},..,{hi}}} is empty")
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

def parse_pseudo_line(src: SourceText) -> tuple[S.PseudoLine | None, list[Finding]]:
    """One line of pseudocode -> a PseudoLine, or None and a finding."""
    hit = PSEUDO_MEMO.get(src.text)
    if hit is not None:
        noted_pseudo(src.text, hit)
        if isinstance(hit, S.Unread):  # refused before: the same finding, on this place
            return None, [unread_finding(src, hit)]
        return replace(hit, source=src), []
    value, findings = _parse_pseudo_line(src)
    kept = value if value is not None and not findings else \
        unread(src, "this formula", findings) if value is None else None
    if kept is not None:
        remember(PSEUDO_MEMO, src.text, kept)
        noted_pseudo(src.text, kept)
    return value, findings


def _parse_pseudo_line(src: SourceText) -> tuple[S.PseudoLine | None, list[Finding]]:
    guard = guard_size(src, "this line")
    if guard is not None:
        return None, [guard]
    if not src.text.strip():
        return S.PseudoLine("blank", src), []
    parser = pseudo_parser()  # a broken grammar file is an internal error, not a finding
    value, findings = read_with(src, "this formula",
                                lambda: transformed(parser, "start", PseudoTransformer, src.text,
                                                    src),
                                nested="this line")
    if findings:
        return None, findings
    if not isinstance(value, S.PseudoLine):  # pragma: no cover - the grammar's start is line
        return S.PseudoLine("blank", src), []
    return value, []


def assemble_program(lines: Sequence[S.PseudoLine | SourceText],
             ) -> tuple[S.Program, list[Finding]]:
    """Join continuation lines to their assignment; report stray or conflicting lines.

    A ``SourceText`` in place of a line is a line that did not parse (already reported; the
    program records it as ``unparsed``).  A definition keeps the cases that did parse; the
    case lines after a definition line that did not parse belong to it and are passed over
    in silence, so one bad line gives one finding."""
    defs: list[S.Definition] = []
    findings: list[Finding] = []
    unparsed: list[SourceText] = []
    current: list[S.WrittenCase] | None = None
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
            current.append(S.WrittenCase(ln.source, expr=ln.expr, guard=ln.guard))
            continue
        close()
        orphaned = False
        name, head = ln.name, ln.source
        if ln.kind == "assign":
            kind = "expr"
            current = [S.WrittenCase(ln.source, expr=ln.expr, guard=ln.guard)]
        elif ln.kind == "predicate":
            kind = "predicate"
            current = [S.WrittenCase(ln.source, cond=ln.cond)]
        elif ln.kind == "range":
            kind = "range"
            current = [S.WrittenCase(ln.source, low=ln.low, high=ln.high)]
        elif ln.kind == "set":
            kind = "set"
            current = [S.WrittenCase(ln.source, items=ln.items)]
    close()
    return S.Program(tuple(defs), tuple(unparsed)), findings


def starts_definition(text: str) -> bool:
    """Does a line that did not parse open a definition (``name = ...``)?  The text stage's
    line grammar says; its answer is kept with the document's parses (``remembered_read``),
    so that a warm run, whose documents come whole from the text stage's cache, asks no
    grammar."""
    t = text.strip()
    return bool(remembered_read(t, "lines:assignment", lambda: kind_of(t).assignment))


def parse_program(lines: Sequence[SourceText]) -> tuple[S.Program, list[Finding]]:
    parsed: list[S.PseudoLine | SourceText] = []
    findings: list[Finding] = []
    for src in lines:
        value, errs = parse_pseudo_line(src)
        findings.extend(errs)
        parsed.append(value if value is not None else src)
    program, more = assemble_program(parsed)
    return program, findings + more
