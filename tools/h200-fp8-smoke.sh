#!/usr/bin/env bash
# FP8 (issue 40) on the H200 for the first time, about 2 minutes: H112's probe of cuBLASLt's FP8 scale modes, then
# the top rung in FP8 (tile_k=128) checked and timed against cuBLASLt's FP8 path with per-tensor scales on the shapes
# H113 names, and one decode shape. Every comparison checks both variants first (the kernel against cublasGemmEx in
# bf16 on the same codes widened, cuBLASLt's FP8 path against the same): a wrong result is reported, never timed.
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh, with OUT set.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/fp8/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
tools/h200-fp8-probe.sh > "$OUT/fp8/probe.log" 2>&1 || echo "the probe failed: $OUT/fp8/probe.log"
tail -30 "$OUT/fp8/probe.log"
for shape in square4096 prefill_attn_out prefill_mlp_up decode_attn_out; do
  start=$(date +%s)
  .gpu/gemm-ablate compare "$shape" cublas 10:tile_k=128 e4m3 > "$OUT/fp8/compare-$shape.log" 2>&1
  echo "$shape: $(( $(date +%s) - start )) s"
  grep -E "ratio|verdict|wrong|error|Error|TFLOP|check" "$OUT/fp8/compare-$shape.log" | head -12
done
tar czf "$OUT/fp8.tgz" -C "$OUT" fp8 && rm -rf "$OUT/fp8"
