"""The ground floor: what every stage shares and nothing of a stage.

* ``source`` -- positions and findings.  A ``SourceText`` is a string whose every character
  remembers its (document, line, column): ``SourceText("row = groupID", "a.txt", ((0, 12, 5),))``
  puts the ``g`` of ``groupID`` at a.txt:12:11.  A ``Finding`` is a problem as a value
  (severity, kind, span, message, counterexample), never an exception.
* ``variants`` -- the one table of PTX facts: element types and widths, shapes, sparsity
  patterns, and every instruction variant (``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``
  is one row); the parser, the model, the prover and the GPU runner all read it.
* ``ids`` -- names as values: ``MoveInstr`` (``ldmatrix.m8n8.x4.trans.b16`` as the grammar
  reads it: instruction, m, n, .xN, .trans, type) and ``LayoutId``
  (``catalog:mma.m16n8k16.CD.f32@u8-s8#2`` as document, instruction, shape, operand, types,
  the multiplicand types after ``@`` and the copy after ``#``), each printing itself.
* ``hashes`` -- the two hashes written down: ``formula_hash`` of a layout's normalized formulas
  (changes when the text's math changes) and ``cell_table_hash`` of its (lane, element) -> cell
  table (what the GPU confirms; equal for ``i & 0x3`` and ``i % 4``).
* ``progress`` -- the one-line progress bar on stderr (only on a terminal, only after a second)
  that the command lines hand the stages as a ``(done, total)`` callback.
* ``junit`` -- one JUnit ``<testcase>`` line (passed, failure, error, skipped), for the prove
  report and the audit report alike.

Every other package may import this one; it imports none of them.
"""
