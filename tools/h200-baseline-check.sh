#!/usr/bin/env bash
# Baselines on the H200 (device machine): save the swizzle trials as baseline "h200", then run them again against
# it with GEMM_ABLATE_FAIL_ON_SLOWER=1. Run from the repository root after ../shared/tools/gpu-stage, with OUT set.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/baseline-check"
GEMM_ABLATE_SAVE_BASELINE=h200 .gpu/ablations ablation::swizzle > "$OUT/baseline-save.log" 2>&1
echo "save: rc=$?"
GEMM_ABLATE_BASELINE=h200 GEMM_ABLATE_FAIL_ON_SLOWER=1 .gpu/ablations ablation::swizzle > "$OUT/baseline-compare.log" 2>&1
rc=$?
echo "compare with fail-on-slower: rc=$rc"
grep -A12 -i "baseline" "$OUT/baseline-compare.log" | tail -14
tar czf "$OUT/baseline-check.tgz" -C "$OUT" baseline-check && rm -rf "$OUT/baseline-check"
exit $rc
