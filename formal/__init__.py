"""ptxlayout: formal verification of the PTX ISA's mma / mma.sp fragment layouts.

The pipeline (one module per stage, frozen values between them)::

    formal.ingest   document -> sections, operand blocks, table rows, pseudocode lines
    formal.parse    lines    -> syntax trees (grammar/*.lark + Transformers)
    formal.model    trees    -> Layout: SymPy maps (lane, i) -> (row, col)
    formal.prove    Layout   -> verdicts, decided by Z3 and re-checked by enumeration
    formal.report   verdicts -> text | markdown | json | sarif | junit

and beside it ``formal.execute`` (pack, emulate, generate PTX, run on a GPU).  Importing
this package imports none of z3, sympy or lark: the GPU path needs only numpy and CuPy.
"""

__version__ = "0.1.0"
