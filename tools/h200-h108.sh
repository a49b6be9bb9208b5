#!/usr/bin/env bash
# H108 (ablations/HYPOTHESES.md): the design over worker processes on a fresh machine start. Part a: the 40
# trials of tools/sweeps/agreement-40.txt, each as six comparisons (every comparison its own workers), through
# tools/h200-agreement.sh; part b: calibration::slowdown::square4096 (a separately compiled copy and five
# slowdowns, 20 comparisons each). Judge afterwards with tools/process_spread.py (part a) and the calibration
# rows (part b). Run from the repository root after ../shared/tools/gpu-stage and packing the calibration binary
# too; one part per call keeps each call inside its 10 minutes: `tools/h200-h108.sh a` then `tools/h200-h108.sh b`.
set -uo pipefail
case "${1:-}" in
  a) exec tools/h200-agreement.sh 6 520 $(cat tools/sweeps/agreement-40.txt) ;;
  b)
    rm -rf "${OUT:?}/calibration"; mkdir -p "$OUT/calibration"
    export GEMM_ABLATE_RESULTS_DIR="$OUT/calibration/runs"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/calibration/gpu.txt" 2>&1
    start=$(date +%s)
    .gpu/calibration calibration::slowdown > "$OUT/calibration/calibration.log" 2>&1
    echo "calibration::slowdown: $(( $(date +%s) - start )) s"; grep -E "spin|test result" "$OUT/calibration/calibration.log" | tail -12
    tar czf "$OUT/calibration.tgz" -C "$OUT" calibration && rm -rf "$OUT/calibration"
    ;;
  *) echo "usage: tools/h200-h108.sh a|b" >&2; exit 2 ;;
esac
