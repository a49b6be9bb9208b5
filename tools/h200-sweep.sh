#!/usr/bin/env bash
# A sweep of `gemm-ablate compare` on the H200 (device machine): each line of the sweep file is
# `SHAPE BASE CANDIDATE...` (# starts a comment). Records and the log come back in $OUT/sweep.tgz.
# Usage, from the repository root after ../shared/tools/gpu-stage: tools/h200-sweep.sh tools/sweeps/NAME.txt
# Each candidate is paired with BASE only: to compare two kernels with each other, make one of them the BASE (with
# `cublas` as BASE, two candidates are each paired with cuBLAS in their own rounds, and their ratio to each other is
# not a paired estimate: H39's first sweep, 13a7135).
set -uo pipefail
# A device machine has handed back an $OUT holding an earlier session's files (stale records once came back with
# e7f7856's sweep): start from an empty folder.
rm -rf "${OUT:?}/sweep"
export GEMM_ABLATE_RESULTS_DIR="$OUT/sweep/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/sweep/gpu.txt" 2>&1
cp "$1" "$OUT/sweep/"
grep -v '^\s*#' "$1" | grep -v '^\s*$' | while read -r shape base cands; do
  echo "== compare $shape $base $cands"
  # shellcheck disable=SC2086
  timeout 200 .gpu/gemm-ablate compare "$shape" "$base" $cands 2>&1 | grep -v '^  round'
done > "$OUT/sweep/sweep.log"
# The cuBLAS chooser's choices and per-path medians (a cache; .txt, so that results/*.json stay run records).
for f in cublas-paths cublas-path-times; do cp "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}/$f-v3.json" "$OUT/sweep/$f.txt" 2>/dev/null; done
tar czf "$OUT/sweep.tgz" -C "$OUT" sweep && rm -rf "$OUT/sweep"
