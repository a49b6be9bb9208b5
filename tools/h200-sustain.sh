#!/usr/bin/env bash
# Sustained runs on the H200 (device machine): each line of the file is `SHAPE SPEC... [--seconds S] [--passes P]`
# (# starts a comment), run as `gemm-ablate sustain`; records and the log come back in $OUT/sustain.tgz.
# Usage, from the repository root after ../shared/tools/gpu-stage: tools/h200-sustain.sh tools/sweeps/NAME.txt
set -uo pipefail
# A device machine has handed back an $OUT holding an earlier session's files (stale records once came back with
# e7f7856's sweep): start from an empty folder.
rm -rf "${OUT:?}/sustain"
export GEMM_ABLATE_RESULTS_DIR="$OUT/sustain/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,enforced.power.limit,temperature.gpu --format=csv > "$OUT/sustain/gpu.txt" 2>&1
cp "$1" "$OUT/sustain/"
rc=0
while read -r line; do
  echo "== sustain $line"
  # shellcheck disable=SC2086
  timeout 300 .gpu/gemm-ablate sustain $line 2>&1 || rc=1
done < <(grep -v '^\s*#' "$1" | grep -v '^\s*$') > "$OUT/sustain/sustain.log"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/sustain/gpu.txt" 2>&1
tar czf "$OUT/sustain.tgz" -C "$OUT" sustain && rm -rf "$OUT/sustain"
exit $rc
