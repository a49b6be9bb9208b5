#!/usr/bin/env bash
# A smoke run on the H200 (device machine): a few trials of each kind, the multicast investigation, timings.
# Run from the repository root after ../shared/tools/gpu-stage, with OUT set to a folder that comes back.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
run() {
  local start; start=$(date +%s.%N)
  "$@" >> "$OUT/log.txt" 2>&1
  echo "$(date +%s.%N) $start $*" | awk '{printf "[%.1f s] ", $1-$2; for(i=3;i<=NF;i++) printf "%s ", $i; print ""}' | tee -a "$OUT/times.txt"
}
run .gpu/ablations compile::
GEMM_ABLATE_REPEAT=4 GEMM_ABLATE_ROUNDS_PER_LOOK=16 GEMM_ABLATE_LOOKS=1 run .gpu/ablations ablation::multicast::decode_attn_out
run .gpu/ablations noise::
run .gpu/ablations isolation::stages8
run .gpu/ablations ablation::warpspec::
run .gpu/ablations switch::raster8_on::square
run .gpu/ablations fault::missing
run .gpu/ablations ladder::rung8
run .gpu/microbench stages::top::square
run .gpu/microbench same_tile
grep -E "^test |outcome:|agreement:|estimate:" "$OUT/log.txt" | cut -c1-400
tar czf "$OUT/runs.tgz" -C "$OUT" runs && rm -rf "$OUT/runs"
