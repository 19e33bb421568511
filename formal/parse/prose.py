"""Prose -> facts (a Lark Transformer over ``grammar/fragment.lark``).

"A vector expression containing four .b32 registers, with each register containing two .f16
elements" becomes ``FragmentDesc(registers=Count(4), register_kind="b32", per_register=Count(2),
types=("f16",))``; "a0, a1, a2, a3" an ``ElementList``; a section title its instruction, shape
and types; "the same as in case of Matrix Fragments for ..." a ``ReferenceSentence``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lark import Token, UnexpectedInput, v_args
from lark.exceptions import VisitError

from ..base.ids import MoveInstr, TmemInstr
from ..base.source import Finding, SourceText
from ..base.variants import CONTAINER_BITS, COUNT_WORDS, REGISTER_BITS, TYPE_BITS, shapes
from . import syntax as S
from .grammars import (
    MAX_LINE,
    PROSE_MEMO,
    Reject,
    RuleTransformer,
    fragment_parser,
    guard_size,
    read_with,
    remember,
    transformed,
    unread,
    unread_finding,
)
from .kept import noted_prose
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
    if count.text.startswith("a ") and count.text != "a single":
        return [(count.pos, f"'{count.text}' reads as a slip ('{count.text[2:]}' is meant)")]
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
class ProseTransformer(RuleTransformer):
    """Lark tree of a table cell or a sentence -> ``syntax`` values."""

    def count_number(self, c: list[Token]) -> S.Count:
        return S.Count(int_literal(c[0]), str(c[0]), c[0].start_pos or 0)

    def count_single(self, c: list[Token]) -> S.Count:
        return S.Count(1, "a single", c[0].start_pos or 0)

    def count_single_bare(self, c: list[Token]) -> S.Count:
        return S.Count(1, "single", c[0].start_pos or 0)

    def count_one(self, c: list[Token]) -> S.Count:
        return S.Count(1, str(c[0]), c[0].start_pos or 0)

    def count_words(self, c: list[Token]) -> S.Count:
        return _count_from_words(c)

    def count_article_words(self, c: list[Token]) -> S.Count:
        """``a two .b32 registers``: the count, and the 'a' a slip (see _count_slips)."""
        n = _count_from_words(c[1:])
        return S.Count(n.value, f"a {n.text}", c[0].start_pos or 0)

    def count(self, c: list[Any]) -> S.Count:
        return c[0]  # the ``count_per_n`` alternative

    def count_per_n(self, c: list[Token]) -> S.Count:
        d = int_literal(c[1])
        if d <= 0:
            raise Reject(c[1].start_pos or 0, f"'N/{d}' is not a count")
        return S.Count(0, f"N/{d}", c[0].start_pos or 0, d)

    def list_param(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("param", str(c[0]), c[0].start_pos or 0)

    def n_def(self, c: list[Token]) -> tuple[str, int, int]:
        return (str(c[0]), int_literal(c[2]), int_literal(c[3]))

    def n_items(self, c: list[Token]) -> tuple[int, ...]:
        """``1, 2, ... , 32`` / ``1,..,4``: the integers, an ellipsis continuing the step of
        the two before it (or 1)."""
        out: list[int] = []
        gap = False
        for t in c:
            if t.type == "ELLIPSIS":
                gap = True
            elif t.type == "INT":
                v = int_literal(t)
                if gap and out:
                    step = out[-1] - out[-2] if len(out) > 1 else 1
                    if step <= 0 or v < out[-1] or (v - out[-1]) // step > 4096:
                        raise Reject(t.start_pos or 0, "this '...' does not count up")
                    out.extend(range(out[-1] + step, v, step))
                    gap = False
                out.append(v)
        return tuple(out)

    def n_alt(self, c: list[Any]) -> tuple[int, ...]:
        k = int_literal(c[0])
        items = next(x for x in c if isinstance(x, tuple))
        return tuple(k * i for i in items)

    def n_values(self, c: list[Any]) -> S.NSet:
        return S.NSet(tuple(sorted({n for alt in c if isinstance(alt, tuple) for n in alt})))

    def n_cell(self, c: list[Any]) -> S.NSet:
        return c[0]

    def n_elsewhere(self, c: list[Token]) -> S.NSet:
        return S.NSet((), True)

    def n_where(self, c: list[Any]) -> tuple[tuple[tuple[str, int, int], ...], S.NSet | None]:
        params = tuple(x for x in c if isinstance(x, tuple))
        nset = next((x for x in c if isinstance(x, S.NSet)), None)
        return params, nset

    def element_list_n(self, c: list[Any]) -> S.ElementList:
        params, nset = c[-1]
        return S.ElementList(tuple(x for x in c[:-1] if isinstance(x, S.ListItem)), params,
                             nset)

    def wgmma_title(self, c: list[Any]) -> S.SectionTitle:
        number = next((str(t).rstrip(".") for t in c if isinstance(t, Token)
                       and t.type == "SECNUM"), "")
        sparse = any(isinstance(t, Token) and t.type == "SPARSE" for t in c)
        instr = next(t for t in c if isinstance(t, Token) and t.type == "WGMMA_INSTR")
        return S.SectionTitle(number, sparse, str(instr).rsplit(".", 1)[1], S.Qualifier(),
                              "wgmma")

    def move_instr(self, c: list[Token]) -> tuple[MoveInstr, int]:
        """``ldmatrix.m8n8.x4.trans.b16`` from its tokens, and where its type starts."""
        tok = {t.type: t for t in c}
        dst = tok["MOVE_DST"]
        src = tok.get("MOVE_SRC")
        num = tok.get("MOVE_NUM")
        return MoveInstr(str(tok["MOVE_OP"]), int(str(tok["MOVE_M"])[2:]),
                         int(str(tok["MOVE_N"])[1:]), int(str(num)[2:]) if num else 0,
                         "MOVE_TRANS" in tok, str(dst)[1:], str(src)[1:] if src else "",
                         ), (dst.start_pos or 0) + 1

    def move_title(self, c: list[Any]) -> S.SectionTitle:
        """``ldmatrix.m8n8.x4.trans.b16``: the shape is the variant (``m8n8.x4.trans``) and
        the element type is the title's type, a destination format with its packed source
        format staying one type (``ldmatrix.m8n16.x2.b8x16.b6x16_p32``: variant
        ``m8n16.x2``, type ``b8x16.b6x16_p32``)."""
        number = next((str(t).rstrip(".") for t in c if isinstance(t, Token)
                       and t.type == "SECNUM"), "")
        move, at = next(x for x in c if isinstance(x, tuple))
        return S.SectionTitle(number, False, move.variant, S.Qualifier(((move.type, at),)),
                              move.instruction, move)

    def tmem_instr(self, c: list[Token]) -> tuple[TmemInstr, int]:
        """``tcgen05.ld`` ``.16x256b`` ``.x2`` ``.pack::16b`` ``.b16``, each a token: the
        parts as values, and where the element type starts."""
        tok = {t.type: t for t in c}
        elem = tok["TMEM_ELEM"]
        return TmemInstr(str(tok["TMEM_OP"]), str(tok["TMEM_SHAPE"])[1:],
                         int(str(tok["TMEM_NUM"])[2:]), "TMEM_PACK" in tok,
                         str(elem)[1:]), (elem.start_pos or 0) + 1

    def tmem_title(self, c: list[Any]) -> S.SectionTitle:
        """``tcgen05.ld.16x256b.x2.pack::16b.b16``: the instruction ``tcgen05.ld``, the
        variant ``16x256b.x2.pack::16b`` and the element type ``b16``."""
        number = next((str(t).rstrip(".") for t in c if isinstance(t, Token)
                       and t.type == "SECNUM"), "")
        instr, at = next(x for x in c if isinstance(x, tuple))
        return S.SectionTitle(number, False, instr.variant, S.Qualifier(((instr.elem, at),)),
                              instr.instruction, tmem=instr)

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
        said = [str(t).lower() for t in words]
        # "with containing two elements": 'with' opens a per-register clause whose 'each
        # register' was lost (a slip, read as per register)
        lost_each = "with" in said and "containing" in said and "each" not in said
        elem = next(t for t in c if isinstance(t, Token) and t.type == "ELEMWORD")
        return {"count": next((x for x in c if isinstance(x, S.Count)), None),
                # no element type named ("four elements from the matrix"): the row's
                "types": next((x for x in c if isinstance(x, tuple) and isinstance(x[0], tuple)),
                              ((), elem.start_pos or 0)),
                "nonzero": any(isinstance(t, Token) and t.type == "NONZERO" for t in c),
                "out_of": tagged.get("out_of"),
                "per": bool(tagged.get("per")) or "each" in said or lost_each,
                "slips": [(words[said.index("with")].start_pos or 0,
                           "'with containing' reads as a slip ('with each register "
                           "containing' is meant)")] if lost_each else []}

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
            slips += elems["slips"]
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

    # -- the wmma tables' cells
    def wmma_types(self, c: list[Any]) -> tuple[str, tuple[str, ...]]:
        return ("types", c[0][0])

    def wmma_shape(self, c: list[Token]) -> tuple[str, str]:
        return ("shape", str(c[0]).lstrip("."))

    def wmma_matrix(self, c: list[Token]) -> tuple[str, tuple[str, ...]]:
        return ("matrix", tuple(str(t) for t in c if t.type in ("MATNAME", "A")))

    def wmma_cells(self, c: list[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
        return tuple(c)

    def list_name(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("name", str(c[0]), c[0].start_pos or 0)

    def list_ellipsis(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("ellipsis", str(c[0]), c[0].start_pos or 0)

    def list_sep(self, c: list[Token]) -> S.ListItem:
        return S.ListItem("sep", str(c[0]), c[0].start_pos or 0)

    def element_list(self, c: list[Any]) -> S.ElementList:
        # a sparse wgmma cell's "Non-zero elements:" and its closing "Mapping of the
        # non-zero elements is as described in ..." are words around the list, not items
        return S.ElementList(tuple(x for x in c if isinstance(x, S.ListItem)))

    def nonzero_head(self, c: list[Token]) -> None:
        return None

    def mapping_note(self, c: list[Token]) -> None:
        return None

    def flat_row(self, c: list[Any]) -> S.FlatRow:
        types, tpos = c[0]
        elements = next((x for x in c[2:] if isinstance(x, S.ElementList)), None)
        n_set = next((x for x in c[2:] if isinstance(x, S.NSet)), None)
        epos = elements.items[0].pos if elements is not None and elements.items else 0
        return S.FlatRow(types, tpos, c[1], elements, epos, n_set)

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

    def select_label(self, c: list[Any]) -> S.TypeLabel:
        """``Fragment layout for accumulator matrix when .ctype is .f16 ...``: the rows of
        the table above whose type it names."""
        types = next(x for x in c if isinstance(x, tuple) and isinstance(x[0], tuple))[0]
        return S.TypeLabel(types, "", selects=True)

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
        if len(c) == 1 and isinstance(c[0], S.SectionTitle):
            return c[0]
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
        instr = next(t for t in c if isinstance(t, Token) and t.type in ("INSTR", "WGMMA_INSTR"))
        if instr.type == "WGMMA_INSTR":  # wgmma.mma_async.m64nNk32: the shape is the last part
            return S.Target(sparse, str(instr).rsplit(".", 1)[1],
                            (instr.start_pos or 0) + len(str(instr).rsplit(".", 1)[0]) + 1,
                            instruction="wgmma")
        qual = next((q for q in c if isinstance(q, S.Qualifier)), S.Qualifier())
        fmt = next((x for x in c if isinstance(x, tuple)), ())
        return S.Target(sparse, str(instr).split(".", 1)[1], instr.start_pos or 0, qual, fmt)

    def same_type(self, c: list[Token]) -> None:
        return None  # "for the same .dtype format": every type the target states

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

    def smem_section(self, c: list[Token]) -> S.Target:
        return self.target(c)

    def smem_other(self, c: list[Token]) -> None:
        return None

    def smem_sentence(self, c: list[Any]) -> S.SharedMemoryNote:
        name = next(t for t in c if isinstance(t, Token) and t.type == "MATNAME")
        target = next((x for x in c if isinstance(x, S.Target)), None)
        return S.SharedMemoryNote(str(name), target, c[0].start_pos or 0)

    def smem_note(self, c: list[Any]) -> S.SharedMemoryNote:
        return c[-1]

    def field_count(self, c: list[Token]) -> Token:
        t = c[0]
        if t.type == "COUNTWORD":  # "eight 4-bit vectors"
            return Token("INT", str(_count_from_words([t]).value), t.start_pos)
        return t

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
    hit = PROSE_MEMO.get(key)
    if hit is not None and not (isinstance(hit, S.Unread) and hit.what != what):
        noted_prose(src.text, start, hit)
        if isinstance(hit, S.Unread):  # refused before: the same finding, on this place
            return None, [unread_finding(src, hit)]
        return hit, []
    value, findings = _parse_prose(src, start, what)
    kept = value if value is not None and not findings else \
        unread(src, what, findings) if value is None else None
    if kept is not None:
        remember(PROSE_MEMO, key, kept)
        noted_prose(src.text, start, kept)
    return value, findings


def _parse_prose(src: SourceText, start: str, what: str) -> tuple[Any, list[Finding]]:
    guard = guard_size(src, what)
    if guard is not None:
        return None, [guard]
    parser = fragment_parser()  # a broken grammar file is an internal error, not a finding
    return read_with(src, what, lambda: transformed(parser, start, ProseTransformer, src.text))


def try_prose(src: SourceText, start: str) -> Any:
    """Parse if it fits the start symbol; None otherwise (no finding: used to classify)."""
    if len(src.text) > MAX_LINE:
        return None
    parser = fragment_parser()
    try:
        return transformed(parser, start, ProseTransformer, src.text)
    except (UnexpectedInput, VisitError, RecursionError):
        return None
