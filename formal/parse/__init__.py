"""Stage 2, parse: Lark grammars (``grammar/*.lark``) and Transformers -> syntax values.

The grammar files are the specification of the language; this package only turns their trees
into frozen values (``formal.parse.syntax``) and Lark's errors into findings.  Nothing is
evaluated: ``row = groupID + 8 for ai where i >= 4`` becomes

    Definition("row", [WrittenCase(BinOp("+", Name("groupID"), Num(8)),
                            Guard(Compare([">="], [Name("i"), Num(4)])))])

and a fragment sentence its facts (register count and kind, elements per register, element
type).  Every entry point takes a ``SourceText`` and returns ``(value, findings)``.
"""

from .document import ParsedBlock, ParsedDocument, ParsedPart, ParsedSection, parse_document
from .grammars import FRAGMENT_STARTS, clear_memo
from .prose import parse_prose, try_prose
from .pseudocode import assemble_program, parse_program, parse_pseudo_line

__all__ = ["FRAGMENT_STARTS", "ParsedBlock", "ParsedDocument", "ParsedPart", "ParsedSection",
           "assemble_program", "clear_memo", "parse_document", "parse_program", "parse_prose",
           "parse_pseudo_line", "try_prose"]
