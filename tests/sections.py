"""Small sections of our own in the spec's language (the spec's facts, our text), shared by the
tests: the m16n8k16 ``.s8``/``.u8`` Multiplicand A block, whole or with its row and col
formulas swapped for others."""

from __future__ import annotations


def section(number: str, shape: str, body: str, qualifier: str = "integer type") -> str:
    return f"{number}. Matrix Fragments for mma.{shape} with {qualifier}\n{body}"


ROW_TEXT = (".u8 / .s8 A vector expression containing two .b32 registers, with each register "
            "containing four .u8 / .s8 elements from the matrix A. a0, a1, a2, a3, a4, a5, a6, a7")
A_BLOCK = """Multiplicand A:
.atype Fragment Elements (low to high)
ROW_TEXT
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
ROW
COL
""".replace("ROW_TEXT", ROW_TEXT)
ROW = "row = groupID for ai where i < 4\n      groupID + 8 for ai where i >= 4"
COL = "col = (threadID_in_group * 4) + (i & 0x3) for ai where i = {0,..,7}"


def a_section(row: str = ROW, col: str = COL, number: str = "9.7.14.5.9") -> str:
    """The section with its A block; ``row``/``col`` replace the two formulas."""
    return section(number, "m16n8k16", A_BLOCK.replace("ROW", row).replace("COL", col))


S8_A = a_section()  # the correct map: lane 13 a5 -> row 11, col 5


# m8n8k4 .f16 A written on %laneid: lanes 0-15 hold rows 0-3, lanes 16-31 rows 4-7
M8N8K4 = """9.7.14.5.1. Matrix Fragments for mma.m8n8k4 with .f16 floating point type
Multiplicand A:
.atype Fragment Elements (low to high)
.f16 A vector expression containing two .f16x2 registers, with each register containing \
two .f16 elements from the matrix A. a0, a1, a2, a3
row = %laneid % 4 for ai where %laneid < 16
      (%laneid % 4) + 4 for ai where %laneid >= 16
col = i for ai where i = {0,..,3}
"""
