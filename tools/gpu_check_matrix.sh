#!/usr/bin/env bash
# Kept only while README.md still names it: tools/gpu_check.sh runs every family in one
# invocation (delete this file once the front page names gpu_check.sh alone).  This forwards
# to it with the move and wgmma families selected, as the old script ran them.
#
#     bash tools/gpu_check_matrix.sh LAYOUTS [EVIDENCE_DIR]
export ONLY="${ONLY:-ldmatrix,stmatrix,movmatrix,wgmma}"
exec bash "$(dirname "$0")/gpu_check.sh" "$@"
