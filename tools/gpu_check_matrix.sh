#!/usr/bin/env bash
# The hardware check of ldmatrix / stmatrix / movmatrix / wgmma / wgmma.sp, in one command, on a machine
# with a CUDA GPU, numpy and CuPy (no prover needed there).  From the repository root:
#
#     bash tools/gpu_check_matrix.sh LAYOUTS [EVIDENCE_DIR]
#
# LAYOUTS: the exported layouts JSON (formal.execute.gpu_matrix says which fields it reads).
# Checks every variant of formal.matrix_variants the device runs (fresh random data, every
# lane compared bit for bit), discovers the move maps and probes the wgmma descriptor layouts,
# runs the layout experiments, assembles the sm_100a forms with ptxas, and writes ONE
# evidence JSON to EVIDENCE_DIR (default proofs/evidence).  The short table comes last.
# Environment: TRIALS (8), DEADLINE (280 s), TIMEOUT (45 s a task), ONLY, PYTHON.
set -uo pipefail
cd "$(dirname "$0")/.."
layouts="${1:?usage: tools/gpu_check_matrix.sh LAYOUTS [EVIDENCE_DIR]}"
evidence="${2:-proofs/evidence}"
py="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$py" -c "import numpy, cupy" || { echo "gpu_check_matrix: needs numpy and CuPy" >&2; exit 2; }
only=()
if [ -n "${ONLY:-}" ]; then
    only=(--only "$ONLY")
fi
deadline="${DEADLINE:-280}"
exec timeout -k 10 $((deadline + 45)) "$py" -m formal.execute.gpu_matrix --layouts "$layouts" \
    --trials "${TRIALS:-8}" --record "$evidence" --timeout "${TIMEOUT:-45}" \
    --deadline "$deadline" "${only[@]}"
