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

from dataclasses import dataclass, field, replace
from typing import Any

from ..base.ids import MoveInstr, TmemInstr
from ..base.source import SourceText

# ---- a line or piece of prose the grammar does not read -----------------------------------


@dataclass(frozen=True)
class Unread:
    """What the one finding of a line or cell the grammar refuses says, kept so that the same
    text is not parsed again (``formal.parse.grammars.unread`` / ``unread_finding``): its
    ``kind`` ('parse' or 'limit'), the offset ``pos`` in the text it points at, its
    ``message``, and ``what`` the text was read as ("the metadata sentence")."""

    kind: str
    pos: int
    message: str
    what: str = ""


@dataclass(frozen=True)
class Slice:
    """The characters ``start:end`` of the text a kept value was read from: placed back as
    that text's own ``SourceText.slice`` when the value is used again (``formal.parse.tmem``)."""

    start: int
    end: int


@dataclass(frozen=True)
class TmemFact:
    """One statement of a tcgen05 tensor-memory section (``formal.parse.tmem``): its kind
    (the grammar rule that read it), where it is, and its values by name (``get``)."""

    kind: str
    src: SourceText
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self.values if k == key), default)


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
class WrittenCase:
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
    cases: tuple[WrittenCase, ...]
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
    per_n: int = 0  # ``N/4``: the count is N / per_n, value 0 until N is chosen (wgmma)

    def at(self, n: int) -> Count:
        """The count for one N (``N/4`` at N = 64 is 16); a plain count is itself."""
        return Count(n // self.per_n, self.text, self.pos) if self.per_n else self


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
    kind: str  # "name" | "ellipsis" | "sep" | "param" (dX of a wgmma list)
    text: str
    pos: int


@dataclass(frozen=True)
class NSet:
    """The legal N of a wgmma element list (``N = 8*i where i = {1, 2, ... , 32}``)."""

    values: tuple[int, ...] = ()
    elsewhere: bool = False  # "N depends on .dtype, as described in the next column"


@dataclass(frozen=True)
class ElementList:
    """``a0, a1, ..., a7``; a wgmma list may end in ``dX, dY, dZ, dW where X = N/2 - 4 ...``:
    ``params`` maps each letter to (divisor, subtrahend), ``n`` holds the N set."""

    items: tuple[ListItem, ...]
    params: tuple[tuple[str, int, int], ...] = ()
    n: NSet | None = None

    def at(self, n: int) -> ElementList:
        """The list for one N: ``dX`` with X = N/2 - 4 at N = 16 is ``d4``."""
        if not self.params:
            return self
        value = {k: n // d - m for k, d, m in self.params}
        items = tuple(ListItem("name", f"{it.text[0]}{value[it.text[1]]}", it.pos)
                      if it.kind == "param" and it.text[1] in value else it
                      for it in self.items)
        names = [it for it in items if it.kind == "name"]
        if len({it.text for it in names}) == len(names):
            return ElementList(items)
        # the pattern's ends overlap at a small N (N = 8: d0..d3, ..., dX..dW is d0..d3):
        # the list is its distinct names, in order
        seen: dict[str, ListItem] = {}
        for it in names:
            seen.setdefault(it.text, it)
        out: list[ListItem] = []
        for it in seen.values():
            if out:
                out.append(ListItem("sep", ",", it.pos))
            out.append(it)
        return ElementList(tuple(out))


@dataclass(frozen=True)
class FlatRow:
    types: tuple[str, ...]
    types_pos: int
    fragment: FragmentDesc
    elements: ElementList | None
    elements_pos: int
    n_set: NSet | None = None  # a wgmma row's N column, flattened onto the row's line


@dataclass(frozen=True)
class Header:
    type_vars: tuple[str, ...]
    pos: int = 0
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class TypeLabel:
    """``.s4 or .u4:``; ``.f16 with .row:`` adds the operand's arrangement ("row" | "col").

    ``Fragment layout for accumulator matrix when .ctype is .f16 is shown in Figure 50.``
    (a sub-bullet under one table of several types) ``selects``: the part is the table's rows
    of these types, with the formulas that follow the sub-bullet."""

    types: tuple[str, ...]
    arrangement: str = ""
    selects: bool = False


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
    instruction: str = "mma"  # "mma" | "wgmma" (shape m64nNk16: N is a parameter)
    move: MoveInstr | None = None  # a matrix move's title: its parts (shape is its variant)
    tmem: TmemInstr | None = None  # a tcgen05.ld / tcgen05.st title: its parts, likewise


@dataclass(frozen=True)
class Target:
    sparse: bool
    shape: str
    shape_pos: int
    qualifier: Qualifier = field(default_factory=Qualifier)
    format_types: tuple[tuple[str, int], ...] = ()
    instruction: str = "mma"  # "mma" | "wgmma" (a sparse wgmma D names the dense section)


@dataclass(frozen=True)
class ReferenceSentence:
    operands: tuple[str, ...]  # "A" | "B" | "C/D"
    target: Target


@dataclass(frozen=True)
class SharedMemoryNote:
    """"Multiplicand A, from shared memory is documented in <target>": an operand a wgmma
    section keeps in shared memory.  ``target`` is set when it names a wgmma section."""

    operand: str
    target: Target | None
    pos: int = 0


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
    n_set: NSet | None = None  # a wgmma row's own N column ("N = 8*i where i = {...}")

    @property
    def legal_n(self) -> NSet | None:
        """The N this wgmma row stands for: its element list's set, else its N column."""
        if self.elements is not None and self.elements.n is not None \
                and self.elements.n.values:
            return self.elements.n
        return self.n_set

    def at(self, n: int) -> TableFacts:
        """The row for one N: ``N/4`` registers and ``dX`` element names made concrete."""
        frag = self.fragment
        if frag is not None:
            frag = replace(frag, registers=frag.registers.at(n),
                           per_register=frag.per_register.at(n) if frag.per_register else None,
                           total=frag.total.at(n) if frag.total else None)
        elements = self.elements.at(n) if self.elements is not None else None
        return replace(self, fragment=frag, elements=elements)
