#!/usr/bin/env bash
# The hardware check, in one command, on a machine with a CUDA GPU, numpy and CuPy (no z3,
# lark or sympy needed there).  Run it from the repository root:
#
#     bash tools/gpu_check.sh [LAYOUTS] [EVIDENCE_DIR]
#
# LAYOUTS (default build) is a folder holding layouts.json, or the JSON file itself, made
# beforehand where the prover is installed:
#     python -m formal export --format json --corrections -o build/layouts.json
# That file holds the catalog as corrections.md fixes it (the maps the hardware must confirm)
# and, under "errata", the spec's layouts as written wherever a correction changes the map;
# under "smem", "scale" and "datapath" the shared-memory layouts, the block-scale factor maps
# and the tcgen05.mma data paths the runs build on.  build/ is git-ignored: carry it to the
# GPU machine.  On a Blackwell device the same command runs the Blackwell families too
# (tcgen05.ld/st on sm_100, block-scaled mma.sync on sm_120: docs/gpu.md says which).
#
# In one run it checks every variant of every family the device runs -- mma and mma.sp
# (every sparsity selector), ldmatrix / stmatrix / movmatrix, wgmma and wgmma.sp -- with
# fresh random data, TRIALS trials a selector, D (or the moved registers and images)
# compared bit for bit; recovers every mma map and sparse metadata layout and every move map
# from the hardware alone (discovery); probes the wgmma descriptor layouts and runs the
# layout experiments; runs each erratum layout on the variants it serves (the hardware must
# disagree); assembles with ptxas the variants the device cannot run; and writes ONE evidence
# JSON to EVIDENCE_DIR (default proofs/evidence).  A variant that faults or hangs is an error
# of its own and a fresh process takes the rest; past DEADLINE seconds (default 480) nothing
# new starts and the evidence is still written.  The short table comes last.
# Exit status: 0 every executed check matches, every discovery agrees, every erratum is
# refuted and every experiment is as expected; 1 otherwise; 2 usage.
# Environment: TRIALS (8), DEADLINE (480 s), TIMEOUT (60 s a variant), ONLY (a substring of
# the variant keys to run: 'wgmma.sp.', 'ldmatrix', 'mma.m16n8k16'), DEVICE (cuda; "fake"
# emulates mma and wgmma, for the tests), PYTHON.
set -uo pipefail
cd "$(dirname "$0")/.."
layouts="${1:-build}"
evidence="${2:-proofs/evidence}"
if [ -d "$layouts" ]; then
    layouts="$layouts/layouts.json"
fi
if [ ! -f "$layouts" ]; then
    echo "gpu_check: no $layouts; make it where the prover runs:" >&2
    echo "    python -m formal export --format json --corrections -o $layouts" >&2
    exit 2
fi
py="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
device="${DEVICE:-cuda}"
case "$device" in
    fake*) "$py" -c "import numpy" || { echo "gpu_check: needs numpy" >&2; exit 2; } ;;
    *) "$py" -c "import numpy, cupy" || { echo "gpu_check: needs numpy and CuPy: pip install" \
        "'.[gpu-cuda13]' (CUDA 13) or '.[gpu-cuda12]' (CUDA 12) from the repository root" >&2
        exit 2; } ;;
esac
deadline="${DEADLINE:-480}"
only=()
if [ -n "${ONLY:-}" ]; then
    only=(--only "$ONLY")
fi
# the outer limit only guards against the supervisor itself hanging
exec timeout -k 10 $((deadline + 45)) "$py" -m formal gpu --layouts "$layouts" \
    --device "$device" --trials "${TRIALS:-8}" --discover --record "$evidence" \
    --timeout "${TIMEOUT:-60}" --deadline "$deadline" "${only[@]}"
