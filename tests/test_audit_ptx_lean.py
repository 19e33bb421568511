"""The CuTe audit's asm reader (``formal.audit.ptx``): its C string literals joined by one
regular expression give what a character-by-character reading of C's escapes gives, and its
asm texts read through the lean LALR loop (``base.lean_lalr``) give Lark's instructions and
Lark's refusals.  (Every asm text of the CUTLASS wheel's atoms reads the same both ways: the
whole audit's report, tests/test_audit_gmma.py and the rest, holds what they give.)"""

from __future__ import annotations

import random
from typing import Any

import pytest

from formal.audit import ptx

from .test_audit_ptx_regs import TEXTS

ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r", "0": "\0"}


def _by_hand(literals: tuple[str, ...]) -> str:
    """C's escapes, a character at a time: a backslash and a newline are a continued line
    (dropped), a known escape its character, any other the character after the backslash,
    a lone backslash at the end itself."""
    out = []
    for lit in literals:
        body = lit[lit.index('"') + 1:-1]
        i = 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                nxt = body[i + 1]
                if nxt != "\n":
                    out.append(ESCAPES.get(nxt, nxt))
                i += 2
            else:
                out.append(body[i])
                i += 1
    return "".join(out)


@pytest.mark.parametrize("lits, want", [
    (('"mov.b32 %0, %1;\\n\\t"', '"ret;"'), "mov.b32 %0, %1;\n\tret;"),
    (('"a\\\\n"',), "a\\n"),  # an escaped backslash, then a plain n
    (('"a\\\nb"',), "ab"),  # a continued line
    (('"a\\q\\"b\\0"',), 'aq"b\0'),
    (('"ends in \\"',), "ends in \\"),  # a lone backslash at the end: kept
    (('L"wide"', 'u8"x\\ty"'), "widex\ty"),
])
def test_literals_join_as_c_reads_them(lits: tuple[str, ...], want: str) -> None:
    assert ptx.join_literals(lits) == want == _by_hand(lits)


def test_random_literals_join_as_by_hand() -> None:
    rng = random.Random(7)
    alphabet = ['\\', 'n', 't', '"', "'", '0', '\n', 'a', ' ', 'r', 'x']
    for _ in range(2000):
        lits = tuple('"' + "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
                     + '"' for _ in range(rng.randrange(1, 4)))
        assert ptx.join_literals(lits) == _by_hand(lits), lits


def _read(text: str) -> Any:
    got = ptx.statements(('"' + text.replace("\\", "\\\\").replace('"', '\\"')
                          .replace("\n", "\\n") + '"',))
    return got if isinstance(got, str) else [(str(op), ints) for op, ints in got]


def test_the_lean_loop_reads_every_text_as_lark() -> None:
    assert ptx._lean() is not None  # the loop runs this parser
    lean = [_read(t) for t in TEXTS]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ptx, "_lean", lambda: None)
        lark = [_read(t) for t in TEXTS]
    assert lean == lark
    assert sum(isinstance(x, str) for x in lark) >= 4  # refusals among them, alike
    assert lean[2] == [("tcgen05.ld.sync.aligned.16x32bx2.x1.b32", (1,))]
