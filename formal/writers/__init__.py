"""Stage 5, out: writers.  Each module turns proof results or layouts into one kind of output.

* ``report`` -- a ``Proof`` as text, Markdown (erratum-ready), JSON (DESIGN.md's contract),
  SARIF 2.1.0 or JUnit XML;
* ``figures`` / ``drawing`` -- a layout redrawn as the spec's figures draw it (ASCII, SVG, PNG);
* ``export`` (JSON cell tables, C headers), ``export_cute`` (shape:stride), ``export_f2``
  (Triton-style F2 bases);
* ``diff`` -- two revisions compared layout by layout; ``ledger`` -- what was proven, for CI;
  ``evidence`` -- whether the GPU evidence still covers the layouts.

For the toy layout ``row = i``, ``col = lane`` (4 lanes) the JSON export lists eight cells,
CuTe writes ``(4,2):(2,1)``, and the figure is a 2 x 4 grid ``T0:a0 T1:a0 T2:a0 T3:a0 / T0:a1 ...``.
A new format is a new module here, never a change to an earlier stage.
"""
