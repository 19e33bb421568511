"""ptxlayout: formal verification of the PTX ISA's matrix fragment layouts.

The pipeline is one package per stage, frozen values between them, every import pointing down::

    formal.base     positions and findings, the one variant table, the two hashes
    formal.text     document (.txt | .md | .html) -> sections, operand blocks, rows, lines
    formal.parse    lines  -> syntax values (grammar/*.lark + Lark Transformers)
    formal.model    syntax -> Layout: SymPy maps (lane, i) -> (row, col); its cell table
    formal.prove    Layout -> verdicts, decided by Z3 and re-checked by enumeration
    formal.writers      verdicts and layouts -> reports, figures, exports, diff, ledger

and beside it ``formal.execute`` (numpy and CuPy only: pack, emulate, generate PTX, run on a
GPU), ``formal.catalog`` (the embedded chapter), ``formal.api`` (the pipeline as one call) and
``formal.cli`` (the one command line).  Importing this package imports none of z3, sympy or
lark: the GPU path needs only numpy and CuPy.
"""

__version__ = "0.1.0"
