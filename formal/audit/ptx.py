"""The PTX instruction of an atom, read from its own ``asm`` statement.

A CuTe atom's ``fma`` / ``copy`` holds ``asm volatile("mma.sync.aligned.m16n8k8.row.col"
".f32.f16.f16.f32 " "{%0, %1, %2, %3}," ...)``.  The C string literals are joined and
unescaped, the PTX is parsed with ``grammar/ptx_asm.lark`` and the last instruction is the
atom's (a wgmma asm sets a predicate first).  ``instruction_of`` then reads its dotted
modifiers against the variants table:

    mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32
      -> head "mma", shape m16n8k8, types d=f32 a=f16 b=f16 c=f32, .row.col
      -> the variants row mma.m16n8k8.f32.f16.f16.f32

An opcode the table has no row for (``ldmatrix``, ``wgmma``) keeps ``variant = None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from lark import Lark, Token
from lark.exceptions import LarkError

from .project import PTX_TYPES, VARIANTS, Shape, Variant, build_parser


@dataclass(frozen=True)
class Instruction:
    opcode: str  # the full dotted opcode
    variant: Variant | None = None

    @property
    def head(self) -> str:
        """``mma``, ``mma.sp``, ``wgmma``, ``ldmatrix``, ..."""
        parts = self.opcode.split(".")
        if parts[0] == "mma" and any(p == "sp" or p.startswith("sp::") for p in parts[1:]):
            return "mma.sp"
        return parts[0]


@cache
def _parser() -> Lark:
    return build_parser("ptx_asm", "start", positions=False)


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r", "0": "\0"}


def join_literals(literals: tuple[str, ...]) -> str:
    """The text of adjacent C string literals (quotes removed, escapes applied)."""
    out: list[str] = []
    for lit in literals:
        body = lit[lit.index('"') + 1:-1]
        i = 0
        while i < len(body):
            ch = body[i]
            if ch == "\\" and i + 1 < len(body):
                nxt = body[i + 1]
                if nxt == "\n":
                    i += 2
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
                continue
            out.append(ch)
            i += 1
    return "".join(out)


def opcodes(literals: tuple[str, ...]) -> list[str] | str:
    """The opcodes of the instructions in one asm statement, or why they cannot be read."""
    text = join_literals(literals)
    try:
        tree = _parser().parse(text)
    except LarkError as e:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return f"the asm text {first[:60]!r} is not PTX the reader knows ({type(e).__name__})"
    return [str(t) for node in tree.iter_subtrees_topdown() if node.data == "instr"
            for t in node.children if isinstance(t, Token) and t.type == "OPCODE"]


def instruction_of(asms: tuple[tuple[str, ...], ...]) -> Instruction | str:
    """The atom's instruction: the last opcode of its asm statements."""
    found: list[str] = []
    for lits in asms:
        got = opcodes(lits)
        if isinstance(got, str):
            return got
        found.extend(got)
    if not found:
        return "its asm statement holds no instruction"
    return Instruction(found[-1], match_variant(found[-1]))


def match_variant(opcode: str) -> Variant | None:
    """The variants-table row an ``mma`` / ``mma.sp`` opcode names, else None."""
    parts = opcode.split(".")
    head = Instruction(opcode).head
    if head not in ("mma", "mma.sp"):
        return None
    shape = next((p for p in parts if Shape.parse(p) is not None), None)
    if shape is None:
        return None
    after = parts[parts.index(shape) + 1:]
    types = [p for p in after if p in PTX_TYPES]
    arrangement = [p for p in after if p in ("row", "col")]
    kind = next((p.split("::", 1)[1] for p in parts if p.startswith("kind::")), "")
    op = ""
    for a, b in zip(after, after[1:]):
        if b == "popc":
            op = f".{a}.popc"
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
        if v.scale and "block_scale" not in parts:
            continue
        return v
    return None
