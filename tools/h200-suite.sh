#!/usr/bin/env bash
# The whole GPU suite on the H200 (device machine), as committed under results/h200/: every trial of both test
# targets. The replay:: trials are CPU tests of the committed runs (CI runs them) and are skipped here, where the
# runs being made are not committed yet.
# Run from the repository root after ../shared/tools/gpu-stage, with OUT set to a folder that comes back.
# Arguments: the targets to run (default both; on a one-GPU host each fits one 10-minute device call alone).
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
rc=0
for target in ${@:-ablations microbench}; do
  start=$(date +%s)
  .gpu/$target --skip replay:: > "$OUT/$target.log" 2>&1 || rc=1
  echo "$target: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/$target.log")"
  grep -E "^test .*FAILED|^failures:" "$OUT/$target.log" | head -20
done
tar czf "$OUT/runs-${1:-all}.tgz" -C "$OUT" runs && rm -rf "$OUT/runs"
exit $rc
