#!/usr/bin/env bash
# `gemm-ablate compare SHAPE BASE CANDIDATE...` on the H200 (device machine) for each shape in $SHAPES, the same
# base and candidates each time. Records and the log come back in $OUT/compare.tgz.
# Usage: SHAPES="decode_attn_out decode_m1" tools/h200-compare.sh cublas rung10 rung10:streamk=1
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/compare/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/compare/gpu.txt" 2>&1
for shape in $SHAPES; do
  echo "== compare $shape $*"
  .gpu/gemm-ablate compare "$shape" "$@" 2>&1
done > "$OUT/compare/compare.log"
tar czf "$OUT/compare.tgz" -C "$OUT" compare && rm -rf "$OUT/compare"
