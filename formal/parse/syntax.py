"""The abstract syntax of fragment pseudocode and fragment prose (frozen values, no behaviour).

``formal.parse`` builds these from Lark trees; ``formal.model`` turns them into layouts.
Every node keeps ``pos``, its character offset in the logical line it came from, so a later
stage can point at the exact column of, say, the ``4`` in ``for ai where i < 4``.

For the line ``row = groupID + 8   for ai where i >= 4`` the parser yields::

    PseudoLine(kind="assign", name="row",
               expr=BinOp("+", Name("groupID"), Num(8)),
               guard=Guard("where", letter="a",
                           cond=Compare((Name("i"), Num(4)), (">=",))))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.source import SourceText

# ---- expressions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    value: int
    pos: int = 0
    text: str = ""


@dataclass(frozen=True)
class Name:
    name: str
    pos: int = 0


@dataclass(frozen=True)
class Special:
    """A PTX special register such as ``%laneid``."""

    name: str
    pos: int = 0


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * % / & | ^ << >>
    left: Expr
    right: Expr
    pos: int = 0


@dataclass(frozen=True)
class Neg:
    operand: Expr
    pos: int = 0


Expr = Num | Name | Special | BinOp | Neg

# ---- conditions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    """A comparison chain: ``0 <= i < 4`` is operands (0, i, 4), ops ("<=", "<")."""

    operands: tuple[Expr, ...]
    ops: tuple[str, ...]
    pos: int = 0


@dataclass(frozen=True)
class InSet:
    """``i = {0,..,7}``: ranges ((0, 7),); ``i = {0, 1}``: ((0, 0), (1, 1))."""

    expr: Expr
    ranges: tuple[tuple[int, int], ...]
    pos: int = 0


@dataclass(frozen=True)
class BoolOp:
    op: str  # "or" | "and"
    parts: tuple[Cond, ...]
    pos: int = 0


Cond = Compare | InSet | BoolOp


@dataclass(frozen=True)
class Guard:
    """Which elements a case applies to.

    kind "where": ``for ai where <cond>`` (letter "a");
    kind "elems": ``for a0 and a1`` (elems ((a, 0), (a, 1)));
    kind "otherwise"; kind "if": ``if <cond>`` (a condition on lanes).

    A "where" or "elems" guard may go on with a lane condition, ``lane``: the m8n8k4 .f16
    section writes ``for ai where i = {0,..,3}  if %laneid < 16`` and, for the next case,
    ``... otherwise`` (the same elements on the lanes no earlier case took).
    """

    kind: str
    letter: str = ""
    cond: Cond | None = None
    elems: tuple[tuple[str, int], ...] = ()
    pos: int = 0
    lane: Guard | None = None  # kind "if" or "otherwise"


# ---- pseudocode lines ------------------------------------------------------------------------


@dataclass(frozen=True)
class PseudoLine:
    """One parsed line of pseudocode.

    kind: "assign" (``name = expr [guard]``), "predicate" (``name = a == b``), "range"
    (``col = [firstcol ... lastcol]``), "set" (``selector = {0,..,3}``), "continuation"
    (``expr guard``, a further case of the assignment above), "where", "blank".
    """

    kind: str
    source: SourceText
    name: str = ""
    name_pos: int = 0
    expr: Expr | None = None
    guard: Guard | None = None
    cond: Cond | None = None
    low: Expr | None = None
    high: Expr | None = None
    items: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Case:
    """One case of a definition, with the line it was written on."""

    source: SourceText
    expr: Expr | None = None
    guard: Guard | None = None
    cond: Cond | None = None
    low: Expr | None = None
    high: Expr | None = None
    items: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # "expr" | "predicate" | "range" | "set"
    cases: tuple[Case, ...]
    source: SourceText


@dataclass(frozen=True)
class Program:
    """The definitions of one pseudocode block, in order (a later one shadows an earlier)."""

    definitions: tuple[Definition, ...] = ()
    # lines of the block that did not parse (each is one parse finding already): the block's
    # formulas are incomplete, and nothing is concluded from them
    unparsed: tuple[SourceText, ...] = ()

    def get(self, name: str) -> Definition | None:
        for d in reversed(self.definitions):
            if d.name == name:
                return d
        return None

    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.definitions)


# ---- prose ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    value: int
    text: str
    pos: int = 0


@dataclass(frozen=True)
class FragmentDesc:
    """``A vector expression containing <registers> <kind> registers, <elements> ...``."""

    registers: Count
    register_kind: str
    register_kind_pos: int
    per_register: Count | None
    total: Count | None
    nonzero: bool
    types: tuple[str, ...]
    types_pos: int
    out_of: Count | None
    matrices: tuple[str, ...]
    matrix_pos: int
    extra: tuple[str, ...] = ()
    # wording that leaves the meaning clear but reads as a slip: (offset, remark)
    slips: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class FigureFacts:
    """What a figure's caption, alt text or image name says it draws (empty: not said)."""

    sparse: bool = False
    shapes: tuple[str, ...] = ()
    operands: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    image: bool = False  # an image file name, not a caption


@dataclass(frozen=True)
class ListItem:
    kind: str  # "name" | "ellipsis" | "sep"
    text: str
    pos: int


@dataclass(frozen=True)
class ElementList:
    items: tuple[ListItem, ...]


@dataclass(frozen=True)
class FlatRow:
    types: tuple[str, ...]
    types_pos: int
    fragment: FragmentDesc
    elements: ElementList | None
    elements_pos: int


@dataclass(frozen=True)
class Header:
    type_vars: tuple[str, ...]
    pos: int = 0
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class TypeLabel:
    """``.s4 or .u4:``; ``.f16 with .row:`` adds the operand's arrangement ("row" | "col")."""

    types: tuple[str, ...]
    arrangement: str = ""


@dataclass(frozen=True)
class Qualifier:
    types: tuple[tuple[str, int], ...] = ()
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class SectionTitle:
    number: str
    sparse: bool
    shape: str
    qualifier: Qualifier = field(default_factory=Qualifier)


@dataclass(frozen=True)
class Target:
    sparse: bool
    shape: str
    shape_pos: int
    qualifier: Qualifier = field(default_factory=Qualifier)
    format_types: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ReferenceSentence:
    operands: tuple[str, ...]  # "A" | "B" | "C/D"
    target: Target


@dataclass(frozen=True)
class MetadataDesc:
    """What the prose says of one lane's metadata register."""

    register_kind: str
    fields: int
    field_bits: int
    fields_per_group: int  # 1 ("each ... vector") or 2 ("each pair of ... vectors")
    indices_per_group: int
    chunk: int
    pos: int = 0


@dataclass(frozen=True)
class TableFacts:
    """What one fragment-table row says."""

    source: SourceText  # the row (its first cell)
    types: tuple[str, ...]
    fragment: FragmentDesc | None
    fragment_src: SourceText | None
    elements: ElementList | None
    elements_src: SourceText | None
    header: Header | None
    header_src: SourceText | None
