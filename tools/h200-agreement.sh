#!/usr/bin/env bash
# Issue 37's between-process figures: each listed trial in N separate processes (GEMM_ABLATE_REPEAT), one
# machine start; every process's record lands in the results folder, and `agreement:` lines in the logs say how
# the processes agreed. Records and logs come back in $OUT/agree.tgz.
# With KEPT=1 the trials run in one invocation (GEMM_ABLATE_ONLY) with kept worker processes (H119): a repeat still
# gets processes that never ran its trial, but they are processes kept from the trials before, so the sweep costs
# about 0.45 s less a worker; the invocation is ended at BUDGET_S seconds (what it measured by then is in its
# results file, rewritten after every trial). Without it, one invocation a trial, and no trial starts after
# BUDGET_S seconds.
# Run from the repository root after ../shared/tools/gpu-stage (and tools/gpu-pack.sh).
# Usage: [KEPT=1] tools/h200-agreement.sh N BUDGET_S TRIAL...
set -uo pipefail
n=$1; budget=$2; shift 2
rm -rf "${OUT:?}/agree"; mkdir -p "$OUT/agree/logs"
export GEMM_ABLATE_RESULTS_DIR="$OUT/agree/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/agree/gpu.txt" 2>&1
began=$(date +%s)
if [[ ${KEPT:-0} == 1 ]]; then
  printf '%s\n' "$@" > "$OUT/agree/trials.txt"
  GEMM_ABLATE_WORKERS=kept GEMM_ABLATE_REPEAT=$n GEMM_ABLATE_ONLY="$OUT/agree/trials.txt" \
    timeout "$budget" .gpu/ablations > "$OUT/agree/logs/all.log" 2>&1
  echo "$# trials, kept workers: $(( $(date +%s) - began )) s"
  grep -E "^test |agreement:" "$OUT/agree/logs/all.log" | head -100
else
  for t in "$@"; do
    if (( $(date +%s) - began > budget )); then echo "budget spent: $t and after not run"; break; fi
    start=$(date +%s)
    GEMM_ABLATE_REPEAT=$n .gpu/ablations --exact "$t" > "$OUT/agree/logs/${t//:/_}.log" 2>&1
    echo "$t: $(( $(date +%s) - start )) s; $(grep -E 'agreement:' "$OUT/agree/logs/${t//:/_}.log" | head -1)"
  done
fi
for f in cublas-paths cublas-path-times cublas-path-host-times; do cp "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}/$f-v4.json" "$OUT/agree/$f.txt" 2>/dev/null; done
tar czf "$OUT/agree.tgz" -C "$OUT" agree && rm -rf "$OUT/agree"
