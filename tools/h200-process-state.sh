#!/usr/bin/env bash
# H106 and H107 (ablations/HYPOTHESES.md): the same trials in six processes each with and without drawing the
# operands' physical placement (and, on two trials, the modules' placement) afresh every round; then cuBLAS's
# reference path chosen afresh by the paired rule for every problem the suite compares against cuBLAS.
# Run from the repository root after ../shared/tools/gpu-stage; everything comes back in $OUT/state.tgz.
set -uo pipefail
rm -rf "${OUT:?}/state"; mkdir -p "$OUT/state"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/state/gpu.txt" 2>&1
run() { # ARM TRIAL
  export GEMM_ABLATE_RESULTS_DIR="$OUT/state/$1"; mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
  local start=$(date +%s)
  GEMM_ABLATE_RANDOMIZE=$1 GEMM_ABLATE_REPEAT=6 .gpu/ablations --exact "$2" > "$OUT/state/$1-${2//:/_}.log" 2>&1
  echo "$1 $2: $(( $(date +%s) - start )) s, $(grep -E 'agreement:' "$OUT/state/$1-${2//:/_}.log" | head -1)"
}
for t in ablation::multicast::decode_attn_out ablation::pipeline::decode_attn_out; do
  for arm in none memory code; do run $arm $t; done
done
for t in beyond::no_token_cluster::decode_m16 beyond::swap_ab::decode_m1 beyond::k_rotate::decode_m1 beyond::auto_vs_cublas::decode_m16; do
  for arm in none memory; do run $arm $t; done
done
start=$(date +%s)
.gpu/gemm-ablate cublas-paths 48x8192x8192 80x8192x8192 96x8192x8192 decode_attn_out decode_m1 decode_m16 \
  decode_m32 decode_m64 decode_m8 decode_mlp_down decode_mlp_up decode_qkv long_k prefill_attn_out prefill_mlp_up \
  square4096 --out "$OUT/state/cublas-paths.json" > "$OUT/state/cublas-paths.log" 2>&1
echo "cublas-paths: $(( $(date +%s) - start )) s"; cat "$OUT/state/cublas-paths.log"
tar czf "$OUT/state.tgz" -C "$OUT" state && rm -rf "$OUT/state"
