"""The PTX instruction of an atom, read from its own ``asm`` statement.

A CuTe atom's ``fma`` / ``copy`` holds ``asm volatile("mma.sync.aligned.m16n8k8.row.col"
".f32.f16.f16.f32 " "{%0, %1, %2, %3}," ...)``.  The C string literals are joined and
unescaped, the PTX is parsed with ``grammar/ptx_asm.lark`` and the last instruction is the
atom's (a wgmma asm sets a predicate first).  The grammar reads an opcode into its name and
its modifiers (``Opcode``); ``instruction_of`` then matches the modifiers against the variants
table:

    mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32
      -> head "mma", shape m16n8k8, types d=f32 a=f16 b=f16 c=f32, .row.col
      -> the variants row mma.m16n8k8.f32.f16.f16.f32

An opcode the table has no row for (``ldmatrix``, ``wgmma``) keeps ``variant = None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from .project import (
    MOVE_SHAPES,
    MOVES,
    PTX_TYPES,
    TMEM_VARIANTS,
    VARIANTS,
    Declined,
    Shape,
    Variant,
    build_parser,
    lean_parser,
)


@dataclass(frozen=True)
class Modifier:
    """One dotted modifier of an opcode: ``sp::ordered_metadata`` is Modifier("sp",
    ("ordered_metadata",))."""

    name: str
    qualifiers: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "::".join((self.name, *self.qualifiers))


@dataclass(frozen=True)
class Opcode:
    """An opcode as the grammar reads it: ``mma.sync.aligned.m8n8k4`` is the name ``mma`` and
    the modifiers sync, aligned, m8n8k4; it prints itself back."""

    name: str
    modifiers: tuple[Modifier, ...]

    def __str__(self) -> str:
        return ".".join((self.name, *(str(m) for m in self.modifiers)))

    @property
    def words(self) -> tuple[str, ...]:
        """The modifiers' names, in order (``kind::f8f6f4`` is ``kind``)."""
        return tuple(m.name for m in self.modifiers)

    def qualifier(self, name: str) -> str:
        """The first qualifier of modifier ``name`` (``kind`` -> ``f8f6f4``), else ''."""
        return next((m.qualifiers[0] for m in self.modifiers
                     if m.name == name and m.qualifiers), "")


@dataclass(frozen=True)
class Instruction:
    opcode: Opcode
    variant: Variant | None = None
    # the instruction's integer operands in order (``tcgen05.ld...16x32bx2.x1.b32 {%0},
    # [%1], 1``: the half-split offset 1)
    immediates: tuple[int, ...] = ()

    @property
    def head(self) -> str:
        """``mma``, ``mma.sp``, ``wgmma``, ``ldmatrix``, ``tcgen05.ld``, ``tcgen05.mma`` ..."""
        if self.opcode.name in ("mma", "wgmma") and "sp" in self.opcode.words:
            return f"{self.opcode.name}.sp"
        if self.opcode.name == "tcgen05" and self.opcode.words:
            return f"tcgen05.{self.opcode.words[0]}"
        return self.opcode.name


class _Opcodes(Transformer):  # type: ignore[type-arg]
    """The tree of ``grammar/ptx_asm.lark`` -> the opcodes of its instructions, in order."""

    def modifier(self, c: list[Token]) -> Modifier:
        # each token carries its punctuation: ".sp", "::ordered_metadata"
        return Modifier(str(c[0])[1:], tuple(str(q)[2:] for q in c[1:]))

    def opcode(self, c: list[Any]) -> Opcode:
        return Opcode(str(c[0]), tuple(c[1:]))

    def instr(self, c: list[Any]) -> list[tuple[Opcode, tuple[int, ...]]]:
        op = next(x for x in c if isinstance(x, Opcode))  # a guard comes first
        ints = tuple(int(str(x), 0) for x in c if isinstance(x, Token) and x.type == "INT")
        return [(op, ints)]

    def directive(self, c: list[Any]) -> list[tuple[Opcode, tuple[int, ...]]]:
        return []

    def block(self, c: list[Any]) -> list[tuple[Opcode, tuple[int, ...]]]:
        return [op for x in c if isinstance(x, list) for op in x]

    start = block


@cache
def _parser() -> Lark:
    return build_parser("ptx_asm", "start", positions=False)


@cache
def _lean() -> Any:
    """``_Opcodes().transform`` of Lark's tree, made as the parser reduces (``lean_parser``),
    or None where the loop cannot run this parser."""
    return lean_parser(_parser(), "start", _Opcodes())


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r", "0": "\0"}


def join_literals(literals: tuple[str, ...]) -> str:
    """The text of adjacent C string literals (quotes removed, escapes applied: a backslash
    and a newline are dropped, a lone backslash at the end is kept)."""
    return "".join(_ESCAPE.sub(_unescape, lit[lit.index('"') + 1:-1]) for lit in literals)


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _unescape(m: re.Match[str]) -> str:
    nxt = m.group(1)
    return "" if nxt == "\n" else _ESCAPES.get(nxt, nxt)


def statements(literals: tuple[str, ...]) -> list[tuple[Opcode, tuple[int, ...]]] | str:
    """The instructions of one asm statement (each its opcode and integer operands), or why
    they cannot be read."""
    text = join_literals(literals)
    lean = _lean()
    if lean is not None:
        try:
            got = lean(text)
            assert isinstance(got, list)
            return got
        except Declined:  # a text Lark refuses, or one the loop does not run: Lark's parse
            pass
    try:
        got = _Opcodes().transform(_parser().parse(text))
    except LarkError as e:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return f"the asm text {first[:60]!r} is not PTX the reader knows ({type(e).__name__})"
    assert isinstance(got, list)
    return got


def opcodes(literals: tuple[str, ...]) -> list[Opcode] | str:
    """The opcodes of the instructions in one asm statement, or why they cannot be read."""
    got = statements(literals)
    return got if isinstance(got, str) else [op for op, _ints in got]


def instruction_of(asms: tuple[tuple[str, ...], ...]) -> Instruction | str:
    """The atom's instruction: the last instruction of its asm statements."""
    found: list[tuple[Opcode, tuple[int, ...]]] = []
    for lits in asms:
        got = statements(lits)
        if isinstance(got, str):
            return got
        found.extend(got)
    if not found:
        return "its asm statement holds no instruction"
    op, ints = found[-1]
    return Instruction(op, match_variant(op), ints)


def match_variant(opcode: Opcode) -> Variant | None:
    """The variants-table row an ``mma`` / ``mma.sp`` / ``wgmma`` / ``wgmma.sp`` opcode names,
    else None (a wgmma row is made from the opcode: its N is any the spec allows)."""
    words = opcode.words
    head = Instruction(opcode).head
    if head in ("wgmma", "wgmma.sp"):
        return _wgmma_variant(head, words)
    if head in MOVES:
        return _move_variant(head, words)
    if head in ("tcgen05.ld", "tcgen05.st"):
        return next((v for v in TMEM_VARIANTS if v.opcode == str(opcode)), None)
    if head not in ("mma", "mma.sp"):
        return None
    shape = next((p for p in words if Shape.parse(p) is not None), None)
    if shape is None:
        return None
    after = words[words.index(shape) + 1:]
    types = [p for p in after if p in PTX_TYPES]
    arrangement = [p for p in after if p in ("row", "col")]
    kind = opcode.qualifier("kind")
    op = ""
    for a, b in zip(after, after[1:]):
        if b == "popc":
            op = f".{a}.popc"
    if "block_scale" in words and len(types) == 5:  # .f32.e2m1.e2m1.f32.ue8m0: the scale's
        types = types[:4]
    if len(types) != 4:
        return None
    d, a, b, c = types
    for v in VARIANTS:
        if (v.instruction, v.shape, v.d, v.a, v.b, v.c, v.kind) != (head, shape, d, a, b, c,
                                                                     kind):
            continue
        if v.op and v.op != op:
            continue
        if (v.alayout or v.blayout) and arrangement and \
                (v.alayout, v.blayout) != tuple(arrangement[:2]):
            continue
        if v.scale and "block_scale" not in words:
            continue
        return v
    return None


def _wgmma_variant(head: str, words: tuple[str, ...]) -> Variant | None:
    """``wgmma.mma_async.sp.sync.aligned.m64n8k32.f16.f16.f16`` -> the row (dtype, atype,
    btype after the shape; ``.and.popc`` for ``.b1``)."""
    shape = next((p for p in words if Shape.parse(p) is not None), None)
    if shape is None:
        return None
    after = words[words.index(shape) + 1:]
    types = [p for p in after if p in PTX_TYPES]
    if len(types) != 3:
        return None
    d, a, b = types
    op = ".and.popc" if "popc" in after else ""
    return Variant(head, shape, a, b, d, d, op=op, min_sm=90, arch_suffix="a")


def _move_variant(head: str, words: tuple[str, ...]) -> Variant | None:
    """``ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16`` -> the row (CuTe writes ``.x4``
    before the shape; the spec after it: either order is read)."""
    shape = next((p for p in words if p in MOVE_SHAPES), None)
    if shape is None:
        return None
    num = next((int(p[1:]) for p in words if p[:1] == "x" and p[1:].isdigit()), 0)
    last = words[-1]
    a = f"{words[-2]}.{last}" if words[-2:-1] and words[-2].startswith("b8x16") else last
    return Variant(head, shape, a, num=num, trans="trans" in words)
