"""Prose -> facts (a Lark Transformer over ``grammar/fragment.lark``).

"A vector expression containing four .b32 registers, with each register containing two .f16
elements" becomes ``FragmentDesc(registers=Count(4), register_kind="b32", per_register=Count(2),
types=("f16",))``; "a0, a1, a2, a3" an ``ElementList``; a section title its instruction, shape
and types; "the same as in case of Matrix Fragments for ..." a ``ReferenceSentence``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lark import Token, Transformer, UnexpectedInput, v_args
from lark.exceptions import VisitError

from ..base.source import Finding, SourceText, error
from ..base.variants import COUNT_WORDS
from . import syntax as S
from .grammars import (
    MAX_LINE,
    PROSE_MEMO,
    Reject,
    fragment_parser,
    guard_size,
    parse_error,
    remember,
)
from .pseudocode import int_literal

# ---- prose ------------------------------------------------------------------------------------


def _count_from_words(words: Sequence[Token]) -> S.Count:
    text = " ".join(str(w).lower() for w in words)
    value = COUNT_WORDS.get(text)
    if value is None:
        if len(words) == 2 and str(words[0]).lower() in ("thirty", "sixty"):
            tens = 30 if str(words[0]).lower() == "thirty" else 60
            value = tens + COUNT_WORDS.get(str(words[1]).lower(), 0)
        else:
            raise Reject(words[0].start_pos or 0, f"'{text}' is not a count")
    return S.Count(value, text, words[0].start_pos or 0)


@v_args(inline=False)
class ProseTransformer(Transformer[Token, Any]):
    """Lark tree of a table cell or a sentence -> ``syntax`` values."""

    def count_number(self, c: list[Token]) -> S.Count:
        return S.Count(int_literal(c[0]), str(c[0]), c[0].start_pos or 0)

    def count_single(self, c: list[Token]) -> S.Count:
        return S.Count(1, "a single", c[0].start_pos or 0)

    def count_one(self, c: list[Token]) -> S.Count:
        return S.Count(1, str(c[0]), c[0].start_pos or 0)

    def count_words(self, c: list[Token]) -> S.Count:
        return _count_from_words(c)

    def types(self, c: list[Token]) -> tuple[tuple[str, ...], int]:
        return tuple(str(t)[1:] for t in c if t.type == "TYPE"), c[0].start_pos or 0

    def out_of(self, c: list[Any]) -> S.Count:
        return next(x for x in c if isinstance(x, S.Count))

    def from_clause(self, c: list[Any]) -> tuple[tuple[str, ...], int]:
        names = [t for t in c if isinstance(t, Token) and t.type == "MATNAME"]
        return tuple(str(t) for t in names), (names[0].start_pos or 0) if names else 0

    def sentence(self, c: list[Token]) -> str:
        return " ".join(str(t) for t in c)

    def _elem_clause(self, c: list[Any], per: bool) -> dict[str, Any]:
        counts = [x for x in c if isinstance(x, S.Count)]
        types = next(x for x in c if isinstance(x, tuple))
        nonzero = any(isinstance(x, Token) and x.type == "NONZERO" for x in c)
        return {"count": counts[0], "out_of": counts[1] if len(counts) > 1 else None,
                "types": types, "nonzero": nonzero, "per": per}

    def per_register(self, c: list[Any]) -> dict[str, Any]:
        return self._elem_clause(c, True)

    def in_total(self, c: list[Any]) -> dict[str, Any]:
        return self._elem_clause(c, False)

    def fragment(self, c: list[Any]) -> S.FragmentDesc:
        counts = [x for x in c if isinstance(x, S.Count)]
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        clause = next(x for x in c if isinstance(x, dict))
        frm = next((x for x in c if isinstance(x, tuple)), ((), 0))
        extra = tuple(x for x in c if isinstance(x, str) and not isinstance(x, Token))
        (types, types_pos) = clause["types"]
        return S.FragmentDesc(
            registers=counts[0], register_kind=str(regkind)[1:],
            register_kind_pos=regkind.start_pos or 0,
            per_register=clause["count"] if clause["per"] else None,
            total=None if clause["per"] else clause["count"],
            nonzero=clause["nonzero"], types=types, types_pos=types_pos,
            out_of=clause["out_of"], matrices=frm[0], matrix_pos=frm[1], extra=extra)

    def fragment_terse(self, c: list[Any]) -> S.FragmentDesc:
        counts = [x for x in c if isinstance(x, S.Count)]
        regkind = next(t for t in c if isinstance(t, Token) and t.type == "TYPE")
        types, types_pos = next(x for x in c if isinstance(x, tuple))
        nonzero = any(isinstance(t, Token) and t.type == "NONZERO" for t in c)
        return S.FragmentDesc(
            registers=counts[0], register_kind=str(regkind)[1:],
            register_kind_pos=regkind.start_pos or 0, per_register=counts[1], total=None,
            nonzero=nonzero, types=types, types_pos=types_pos,
            out_of=counts[2] if len(counts) > 2 else None, matrices=(), matrix_pos=0)

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
    if key in PROSE_MEMO:
        return PROSE_MEMO[key], []
    value, findings = _parse_prose(src, start, what)
    if value is not None and not findings:
        remember(PROSE_MEMO, key, value)
    return value, findings


def _parse_prose(src: SourceText, start: str, what: str) -> tuple[Any, list[Finding]]:
    guard = guard_size(src, what)
    if guard is not None:
        return None, [guard]
    parser = fragment_parser()  # a broken grammar file is an internal error, not a finding
    try:
        tree = parser.parse(src.text, start=start)
        return ProseTransformer().transform(tree), []
    except UnexpectedInput as exc:
        return None, [parse_error(src, exc, what)]
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, Reject):
            return None, [error("parse", src.span(orig.pos), orig.message)]
        raise
    except RecursionError:
        return None, [error("limit", src, f"{what} is nested too deeply to read")]


def try_prose(src: SourceText, start: str) -> Any:
    """Parse if it fits the start symbol; None otherwise (no finding: used to classify)."""
    if len(src.text) > MAX_LINE:
        return None
    parser = fragment_parser()
    try:
        tree = parser.parse(src.text, start=start)
        return ProseTransformer().transform(tree)
    except (UnexpectedInput, VisitError, RecursionError):
        return None
