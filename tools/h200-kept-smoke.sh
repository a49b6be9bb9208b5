#!/usr/bin/env bash
# Kept worker processes (GEMM_ABLATE_WORKERS=kept, H119) on the H200 before a whole suite relies on them, about 40 s:
# four A/A comparisons in one run (the first worker of each after the first should find its kept process's GPU open),
# the fault trials (each wrong kernel, hang or trap must fail or pass as it does with fresh processes, and its kept
# process be replaced), and the cuBLAS-against-CPU checks. Prints where the workers' time went; exits non-zero when
# a trial failed or no worker found a kept process.
# Run from the repository root after ../shared/tools/gpu-stage (and tools/gpu-pack.sh), with OUT set to a folder
# that comes back.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/kept-smoke"
rm -rf "$GEMM_ABLATE_RESULTS_DIR"; mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
rc=0
for filter in noise::aa fault:: reference::cublas_vs_cpu; do
  start=$(date +%s)
  GEMM_ABLATE_WORKERS=kept .gpu/ablations "$filter" > "$OUT/kept-smoke-${filter//:/_}.log" 2>&1 || rc=1
  echo "$filter: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/kept-smoke-${filter//:/_}.log")"
  grep -E "^test .*FAILED" "$OUT/kept-smoke-${filter//:/_}.log" | head
done
python3 tools/suite_cost.py "$GEMM_ABLATE_RESULTS_DIR"/*.json | tee "$OUT/kept-smoke-cost.txt"
grep -q "found it open" "$OUT/kept-smoke-cost.txt" || { echo "no worker found a kept process"; rc=1; }
exit $rc
