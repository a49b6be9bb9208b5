#!/usr/bin/env bash
# Is cuBLAS's choice a property of the process? (ablations/HYPOTHESES.md H92: at M = 1 and 8 the chooser took Lt(0)
# in one process and Lt(1) in another, and Lt(1)'s chooser median has been 36-37.5 us in some committed runs and
# 38.5-44 in others.) Runs `gemm-ablate compare SHAPE stream cublas` in N fresh processes, each with an empty cache
# (so each chooses anew, on operands of its own), and keeps each one's path medians and its paired ratio of cuBLAS's
# time to the read floor's. Results in $OUT/chooser.tgz.
# Usage, from the repository root after ../shared/tools/gpu-stage: tools/h200-cublas-chooser.sh N SHAPE...
set -uo pipefail
rm -rf "${OUT:?}/chooser"
mkdir -p "$OUT/chooser"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/chooser/gpu.txt" 2>&1
n=$1; shift
for shape in "$@"; do
  for i in $(seq 1 "$n"); do
    cache=$(mktemp -d)
    # The compiled kernels from the suite's cache, without its cuBLAS choices, so that only the chooser starts empty.
    cp "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}"/*.cubin "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}"/*.json "$cache/" 2>/dev/null
    rm -f "$cache"/cublas-*
    GEMM_ABLATE_CACHE=$cache GEMM_ABLATE_RESULTS_DIR="$OUT/chooser/runs" \
      timeout 120 .gpu/gemm-ablate compare "$shape" stream cublas > "$OUT/chooser/$shape-$i.log" 2>&1
    cp "$cache/cublas-path-times-v3.json" "$OUT/chooser/$shape-$i-path-times.txt" 2>/dev/null
    echo "$shape $i: $(grep -E '^  cuBLAS:' "$OUT/chooser/$shape-$i.log" | cut -c1-60) $(grep -E '^  estimate:' "$OUT/chooser/$shape-$i.log" | cut -c1-60)"
    rm -rf "$cache"
  done
done | tee "$OUT/chooser/summary.txt"
tar czf "$OUT/chooser.tgz" -C "$OUT" chooser && rm -rf "$OUT/chooser"
