"""Stage 1, text: a document (plain text, Markdown or HTML) -> sections and operand blocks.

The PTX ISA reaches users in several renderings of one page.  Each reader (``plain``,
``markdown``, ``html``) turns its rendering into one stream of blocks -- heading, pseudocode
line, table row, prose, figure -- with the markup stripped and every character's position kept;
``structure`` then groups the stream:

    9.7.14.5.9. Matrix Fragments for mma.m16n8k16 ...   -> Section
      Multiplicand A:                                    -> OperandBlock("A")
        .s8 | A vector expression ... | a0, a1, a2, a3   -> TableRow
        groupID = %laneid >> 2                           -> a pseudocode line

Nothing here interprets a formula or a table cell: that is ``formal.parse``'s job.
"""

from .blocks import MAX_BYTES, Block, Document, OperandBlock, Section, TableRow, TypeBlock
from .read import detect_format, read_bytes, read_path, read_text

__all__ = ["MAX_BYTES", "Block", "Document", "OperandBlock", "Section", "TableRow", "TypeBlock",
           "detect_format", "read_bytes", "read_path", "read_text"]
