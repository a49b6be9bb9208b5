#!/usr/bin/env bash
# Nsight Compute profiles on the H200 (device machine): the variant against cuBLAS, side by side, with the
# .ncu-rep kept. Run from the repository root after ../shared/tools/gpu-stage, with OUT set. PROFILES lists the
# `SPEC SHAPE` pairs, separated by ';' (default: the three profiled at 92fd282). SOURCE=1 adds each report's
# source page (below).
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/profile-runs"
rc=0
IFS=';' read -ra pairs <<< "${PROFILES:-rung7 square4096;rung8:pingpong=0,raster=upto8 square4096;rung8:pingpong=0,raster=upto8 decode_attn_out}"
for args in "${pairs[@]}"; do
  echo "== gemm-ablate profile $args"
  start=$(date +%s)
  timeout 90 .gpu/gemm-ablate profile $args || rc=1
  echo "($(( $(date +%s) - start )) s)"
done > "$OUT/profile.log" 2>&1
# SOURCE=1: each report's source page too (SASS with its warp-stall samples per instruction, every kernel in the
# report, cuBLAS's included), as CSV beside the log: where in the loop the warps wait.
if [ "${SOURCE:-0}" = 1 ]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for rep in "$GEMM_ABLATE_RESULTS_DIR"/profiles/*/profile.ncu-rep; do
    name=$(basename "$(dirname "$rep")" | cut -c1-60 | tr -c 'A-Za-z0-9_\n' '_')
    "$ncu" --import "$rep" --page source --csv --print-source sass > "$OUT/source-$name.csv" 2> "$OUT/source-$name.err" \
      || "$ncu" --import "$rep" --page source --csv > "$OUT/source-$name.csv" 2>> "$OUT/source-$name.err"
  done
fi
# The reports sit three folders down, deeper than what comes back from the device: one archive.
tar czf "$OUT/profiles.tgz" -C "$GEMM_ABLATE_RESULTS_DIR" profiles && rm -rf "$GEMM_ABLATE_RESULTS_DIR"
tail -60 "$OUT/profile.log"
exit $rc
