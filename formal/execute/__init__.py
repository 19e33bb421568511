"""Ground truth on a GPU: every family of the variant table run bit exact, numpy + CuPy only.

A worked example, the smallest run there is.  Take ``ldmatrix.m8n8.x1.b16`` and its catalog
map: lane l's register holds the two cells ``(l // 4, 2 (l % 4))`` and ``(l // 4, 2 (l % 4)
+ 1)`` of one 8 x 8 matrix of 16-bit elements.  The executor writes random halfwords into a
shared-memory image, puts the 8 rows at random 16-byte slots, gives lanes 0..7 the rows'
addresses (lanes 8..31 point at decoy rows the instruction must ignore), launches one warp,
and compares each lane's register with the two halfwords the map names.  Lane 5 must return
row 1, columns 2 and 3; a map that said columns 3 and 2 would show up as ``lane 5 element 0
(cell 1, 3): got 0x..., want 0x...`` -- a ``mismatch`` run.  A ``discover`` run then fills the
image with numbers that name their own cell and reads the map back from the hardware alone.
mma is the same with A, B and C packed by their maps and D compared with the exact
``A x B + C``; wgmma with 128 threads and B (and A) in shared memory through a descriptor.

The modules, by stage of one run: ``maps`` (the one map type of every family, read from a
layout record), ``cpu`` (pack, unpack, exact reference, the mma emulation), ``matrix`` (the
moves' and wgmma's operands, trials and comparisons), ``smem``
(shared-memory layouts and descriptors), ``ptx`` / ``ptx_matrix`` (one kernel module per
variant), ``devices`` (the CUDA device and the fake one, for every family), ``discover``
(mma maps and metadata from the hardware alone), ``gpu`` / ``gpu_matrix`` (the tasks of the mma
and of the move / wgmma families, one row each of ``supervisor.FAMILIES``), ``runs`` (a task,
a run, a job, an outcome, a report), ``supervisor`` (one task list, one worker, one watchdog
for every family), ``record`` (``ptxlayout gpu``: one invocation, one evidence file, one
table).  None of them imports z3, lark or sympy, and execute never imports the prover.
"""
