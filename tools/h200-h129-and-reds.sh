#!/usr/bin/env bash
# One device call after 8fb4f1b's whole suite (results/h200/8fb4f1b/), in what a session had left (about 7 minutes):
#  1. 8fb4f1b's reds again, three worker-process sets each (GEMM_ABLATE_REPEAT=3), with kept workers as that run and
#     then with fresh ones, on a machine whose GPU UUID is now in gpu.txt and in every record: whether cuBLAS's
#     shorter decode times and skinny_ring's faster decode_m1 follow the machine or the kept processes;
#  2. H129 (ablations/HYPOTHESES.md): every correctness trial (fp16, bf16 and FP8, the FP8 ones past their first-run
#     wait), the fp32 reference and cuBLASLt's FP8 paths against the CPU, and the comparisons that 8fb4f1b's FP8 run
#     left without a verdict (prefill_attn_out unpromoted and Triton, square4096 row-wise);
#  3. compute-sanitizer memcheck over the FP8 sanitize trials (never run), in what is left.
# On an H100 (ONLY=h129) parts 2 and 3 only. Every step has a timeout and starts only if it can end by END_S (default 300) seconds; everything comes back as
# $OUT/h129-and-reds.tgz. Run from the repository root with .gpu/bin.txz carried (tools/gpu-pack.sh).
set -uo pipefail
T0=$(date +%s)
fits() { [ $(( $(date +%s) - T0 + $1 )) -le "${END_S:-300}" ] || { echo "skipped (out of time): $2"; return 1; }; }
tools/gpu-unpack.sh
W=$OUT/h129-and-reds && mkdir -p "$W/runs"
export GEMM_ABLATE_RESULTS_DIR=$W/runs
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit \
  --format=csv > "$W/gpu.txt" 2>&1; cat "$W/gpu.txt"
nvidia-smi -q > "$W/gpu-q.txt" 2>&1; { lscpu; head -3 /proc/meminfo; uname -a; } > "$W/host.txt" 2>&1  # H132
step() { # SECONDS NAME COMMAND...: run COMMAND with a timeout into NAME.log
  local s=$1 name=$2; shift 2
  fits "$s" "$name" || return 0
  local start=$(date +%s)
  timeout "$s" "$@" > "$W/$name.log" 2>&1
  echo "$name: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$W/$name.log" | tail -1)"
  grep -E "^test .*FAILED|^    [a-z_]+::" "$W/$name.log" | head -12
}
printf '%s\n' ladder::rung1_kloop::decode_attn_out ladder::rung1_kloop::decode_mlp_down \
  ladder::rung5_epilogue::decode_mlp_down ladder::rung3_warpspec::decode_attn_out beyond::skinny_ring::decode_m1 \
  beyond::auto_vs_cublas::decode_m64 > "$W/reds-ablations.txt"
printf '%s\n' same_tile::none16::square4096 stages::two_ctas_an_sm::decode_m1 > "$W/reds-microbench.txt"
# ONLY=h129 leaves the reds out: on an H100 (the pins are the H200's) only the checks mean anything.
if [[ ${ONLY:-} != h129 ]]; then
step 80 reds-ablations env GEMM_ABLATE_WORKERS=kept GEMM_ABLATE_REPEAT=3 GEMM_ABLATE_ONLY="$W/reds-ablations.txt" \
  .gpu/ablations --skip replay::
step 80 reds-ablations-fresh env GEMM_ABLATE_REPEAT=3 GEMM_ABLATE_ONLY="$W/reds-ablations.txt" \
  .gpu/ablations --skip replay::
step 40 reds-microbench env GEMM_ABLATE_WORKERS=kept GEMM_ABLATE_REPEAT=3 GEMM_ABLATE_ONLY="$W/reds-microbench.txt" \
  .gpu/microbench
fi
step 80 correct env GEMM_ABLATE_FIRST_RUNS=1 .gpu/ablations correct:: --skip replay::
step 30 cublas-vs-cpu env GEMM_ABLATE_FIRST_RUNS=1 .gpu/ablations reference::cublas_vs_cpu
for c in "prefill_attn_out cublas 10:tile_k=128 e4m3" "prefill_attn_out cublas ext:triton_persistent_e4m3 e4m3" \
         "square4096 cublas 10:tile_k=128 e4m3-row"; do
  step 30 "compare-${c// /_}" .gpu/gemm-ablate compare $c
  grep -E "correct|over the|outcome" "$W/compare-${c// /_}.log" | cut -c1-240
done
if fits 100 "memcheck over sanitize::fp8"; then
  left=$(( ${END_S:-300} - ($(date +%s) - T0) ))
  start=$(date +%s)
  GEMM_ABLATE_FIRST_RUNS=1 timeout "$left" compute-sanitizer --tool memcheck --target-processes all \
    .gpu/ablations sanitize::fp8 --skip replay:: > "$W/sanitize-fp8-memcheck.log" 2>&1
  echo "memcheck sanitize::fp8: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$W/sanitize-fp8-memcheck.log"); $(grep -E '^========= ERROR SUMMARY' "$W/sanitize-fp8-memcheck.log" | sort | uniq -c | tr '\n' ' ')"
fi
tar czf "$OUT/h129-and-reds.tgz" -C "$OUT" h129-and-reds && rm -rf "$W"
