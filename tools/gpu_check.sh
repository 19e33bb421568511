#!/usr/bin/env bash
# The hardware check, in one command, on a machine with a CUDA GPU, numpy and CuPy (no z3,
# lark or sympy needed there).  Run it from the repository root:
#
#     bash tools/gpu_check.sh [LAYOUTS_JSON] [EVIDENCE_DIR]
#
# LAYOUTS_JSON (default build/layouts.json) is made beforehand where the prover is installed:
#     python -m formal export --format json -o build/layouts.json
# build/ is git-ignored: carry it to the GPU machine (or pass a tracked path).
# It checks every variant the device runs (fresh random trials, bit-exact D), then recovers
# every map and every sparse metadata layout from the hardware alone (--discover), and
# records the evidence under EVIDENCE_DIR (default proofs/evidence).  The table comes last.
# Exit status: 0 all executed checks match and discoveries agree, 1 otherwise, 2 usage.
set -uo pipefail
cd "$(dirname "$0")/.."
layouts="${1:-build/layouts.json}"
evidence="${2:-proofs/evidence}"
if [ ! -f "$layouts" ]; then
    echo "gpu_check: no $layouts; make it where the prover runs:" >&2
    echo "    python -m formal export --format json -o $layouts" >&2
    exit 2
fi
py="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$py" -c "import numpy, cupy" || { echo "gpu_check: needs numpy and CuPy" >&2; exit 2; }
exec timeout 540 "$py" -m formal.execute.gpu --layouts "$layouts" --trials "${TRIALS:-8}" \
    --discover --record "$evidence"
