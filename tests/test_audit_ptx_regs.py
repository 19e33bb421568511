"""grammar/ptx_asm.lark reads a run of registers ``%0, %1, ..., %127`` as one ``REGS`` token,
where it was ``REG "," REG ...`` (every one an ``_arg``): formal.audit.ptx.statements gives
the same instructions (opcodes and integer operands) and the same refusals (its message names
the error's type) as the grammar without ``REGS`` gives, on the asm texts of CuTe's atoms and
on texts made to sit at the token's edges.  (Every asm text of the CUTLASS wheel's atoms
reads the same both ways too; the whole audit's report, tests/test_audit_gmma.py and the rest,
holds what they give.)"""

from __future__ import annotations

from typing import Any

import pytest
from lark import Lark
from lark.exceptions import LarkError

from formal.audit import ptx
from formal.base.grammar_files import grammar_dir

TEXTS = [
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
    "{%8, %9}, {%10, %11, %12, %13};",
    "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\nwgmma.mma_async.sync.aligned.m64n80k8.f32.tf32"
    ".tf32 {%0,  %1,  %2,\n %3,  %4}, %40, %41, p,   %43, %44;\n}\n",
    "tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%0}, [%1], 1;",
    "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%0, %1}, [%2], 0x10;",
    "ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];",
    "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1 ,%2 , %3},{%4},{%5},{%6, 0};",
    "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0, // first\n %1}, {%2, %3}, {%4}, "
    "{%5};",
    "st.shared.v2.b32 [%0], {%r1.x, %r2.y};",
    "mov.b32 %0, %1,;",  # a trailing comma after the run
    "%0, %1;",  # a run where no instruction starts: refused as before
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1} {%2, %3}",  # no ';'
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2 %3};",
    "@p wgmma.fence.sync.aligned; %0, %1",
    "{ %0, %1 }",
    "",
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
    + ", ".join(f"%{i}" for i in range(128)) + "}, %128, %129, p, 1, 1, 0, 1;",
]


def _without_regs() -> Lark:
    """The parser of the grammar with the REGS token taken out (its rule alternative and
    its definition), as the package builds parsers."""
    text = (grammar_dir() / "ptx_asm.lark").read_text(encoding="utf-8")
    assert "_arg: REGS | REG |" in text
    text = text.replace("_arg: REGS | REG |", "_arg: REG |")
    lines = [ln for ln in text.splitlines() if not ln.startswith("REGS")]
    assert len(lines) == len(text.splitlines()) - 1
    return Lark("\n".join(lines), parser="lalr", start="start", propagate_positions=False,
                maybe_placeholders=False)


def _plain(parser: Lark, text: str) -> Any:
    try:
        got = ptx._Opcodes().transform(parser.parse(text))
    except LarkError as e:
        return type(e).__name__
    return [(str(op), ints) for op, ints in got]


def _read(text: str) -> Any:
    got = ptx.statements(('"' + text.replace("\\", "\\\\").replace('"', '\\"')
                          .replace("\n", "\\n") + '"',))
    if isinstance(got, str):
        return got.rsplit("(", 1)[-1].rstrip(")")  # the error's type the message names
    return [(str(op), ints) for op, ints in got]


@pytest.fixture(scope="module")
def plain() -> Lark:
    return _without_regs()


@pytest.mark.parametrize("text", TEXTS)
def test_a_run_of_registers_reads_as_its_registers_did(plain: Lark, text: str) -> None:
    assert _read(text) == _plain(plain, text)


def test_the_edges_are_what_they_say() -> None:
    assert _read(TEXTS[3]) == [("tcgen05.ld.sync.aligned.16x32bx2.x2.b32", (16,))]
    assert _read(TEXTS[5]) == [("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", (0,))]
    assert _read(TEXTS[-1])[0][1] == (1, 1, 0, 1)
    assert isinstance(_read(TEXTS[9]), str) and isinstance(_read(TEXTS[10]), str)
