#!/usr/bin/env bash
# What makes ablation::multicast::decode_attn_out land in two clusters: the same trial with fresh operands in every
# round (the default) and with every round reusing the first round's operands, three processes each.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/diag"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
for fresh in 1 0; do
  GEMM_ABLATE_FRESH_OPERANDS=$fresh GEMM_ABLATE_REPEAT=3 GEMM_ABLATE_ROUNDS_PER_LOOK=16 GEMM_ABLATE_LOOKS=1 \
    .gpu/ablations ablation::multicast::decode_attn_out > "$OUT/diag-fresh$fresh.log" 2>&1
  grep -E "agreement:" "$OUT/diag-fresh$fresh.log"
  sleep 1
done
tar czf "$OUT/diag.tgz" -C "$OUT" diag && rm -rf "$OUT/diag"
