"""Ground truth on a GPU: ``cpu`` (pack, unpack, exact reference, emulation), ``ptx`` (one
kernel module per variant), ``discover`` (maps and metadata from the hardware alone) and
``gpu`` (the runner; CuPy is its only dependency beyond numpy).  None of them imports z3,
lark or sympy."""
