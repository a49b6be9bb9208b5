#!/usr/bin/env bash
# FP8 (issue 40) on the H200 for the first time, about 4 minutes, before any whole suite (its FP8 trials are
# correctness only, and new): H112's probe of cuBLASLt's FP8 scale modes; the FP8 correctness trials (the fp32
# reference and cuBLASLt's FP8 paths against float64 on the CPU, then the top rung in each scaling scheme, promoted
# or not, and rung 4, on whole and partial tiles); then first timings: the top rung (tile_k=128) against cuBLASLt's
# FP8 path with per-tensor scales on the shapes H113 names and one decode shape, with row-wise scales (H116's
# shapes), with block scales (H117), and promotion every k-block against none (H115). Every comparison checks both
# variants first: a wrong result is reported, never timed.
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh, with OUT set.
set -uo pipefail
# Every step has a timeout, and a step starts only if it can end within 570 s of the start, so that the archive is
# packed inside one device call's 600 s whatever hangs. FP8_END_S (default 570) moves that end earlier, for a call
# that ran something before this script.
T0=$(date +%s)
fits() { # SECONDS: can a step of at most this long still end in time?
  if [ $(( $(date +%s) - T0 + $1 )) -le "${FP8_END_S:-570}" ]; then return 0; fi
  echo "skipped (out of time): $2"; return 1
}
export GEMM_ABLATE_RESULTS_DIR="$OUT/fp8/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
if fits 90 "H112's probe"; then
  timeout 90 tools/h200-fp8-probe.sh > "$OUT/fp8/probe.log" 2>&1 || echo "the probe failed: $OUT/fp8/probe.log"
  tail -30 "$OUT/fp8/probe.log"
fi
for filter in cublas_vs_cpu::e4m3 correct::fp8; do
  log="$OUT/fp8/trials-${filter//:/_}.log"
  fits 150 "$filter" || continue
  start=$(date +%s)
  GEMM_ABLATE_FIRST_RUNS=1 timeout 150 .gpu/ablations "$filter" > "$log" 2>&1
  echo "$filter: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$log")"
  grep -E "^test .*FAILED" "$log" | head -20
done
compare() { # SHAPE BASELINE CANDIDATE DTYPE
  local log="$OUT/fp8/compare-$1-$3-$4.log" start=$(date +%s)
  fits 40 "compare $*" || return 0
  timeout 40 .gpu/gemm-ablate compare "$1" "$2" "$3" "$4" > "$log" 2>&1
  echo "$1 $2 vs $3 ($4): $(( $(date +%s) - start )) s"
  grep -E "ratio|verdict|wrong|error|Error|TFLOP|check" "$log" | head -12
}
for shape in square4096 prefill_attn_out prefill_mlp_up decode_attn_out; do
  compare "$shape" cublas 10:tile_k=128 e4m3
done
for shape in square4096 decode_attn_out; do
  compare "$shape" cublas 10:tile_k=128 e4m3-row
done
# The Triton peer's FP8 build against cuBLASLt (per-tensor scales).
for shape in square4096 prefill_attn_out; do
  compare "$shape" cublas ext:triton_persistent_e4m3 e4m3
done
for shape in square4096 dsv3_o_m128 dsv3_qkv_a_m64; do
  compare "$shape" cublas 10:tile_k=128,bn=128,promote=1 e4m3-block
done
compare square4096 10:tile_k=128,bn=128 10:tile_k=128,bn=128,promote=1 e4m3
# The FP8 hypotheses that wait for this run (ablations/fp8-hypotheses: H115, H117, H118), as trials.
start=$(date +%s)
fits 120 "FP8 hypotheses" &&
GEMM_ABLATE_HYPOTHESES=ablations/fp8-hypotheses timeout 120 .gpu/ablations hypothesis:: > "$OUT/fp8/hypotheses.log" 2>&1
echo "FP8 hypotheses: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/fp8/hypotheses.log")"
grep -E "^test " "$OUT/fp8/hypotheses.log" | head -10
# With FP8_STEPS=1, the seed's steps in FP8 too (H114, H121-H127, about a minute more).
if [ "${FP8_STEPS:-0}" = 1 ] && fits 120 "FP8 steps"; then
  GEMM_ABLATE_HYPOTHESES=ablations/fp8-hypotheses/steps timeout 120 .gpu/ablations hypothesis:: > "$OUT/fp8/steps.log" 2>&1
  echo "FP8 steps: $(grep -E '^test result' "$OUT/fp8/steps.log")"
  grep -E "^test " "$OUT/fp8/steps.log" | head -10
fi
# compute-sanitizer over FP8's kernels takes up to 450 s: a call of its own,
# `GEMM_ABLATE_FIRST_RUNS=1 tools/h200-sanitize.sh sanitize::fp8`.
tar czf "$OUT/fp8.tgz" -C "$OUT" fp8 && rm -rf "$OUT/fp8"
