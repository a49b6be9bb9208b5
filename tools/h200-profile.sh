#!/usr/bin/env bash
# Nsight Compute profiles on the H200 (device machine): the variant against cuBLAS, side by side, with the
# .ncu-rep kept. Run from the repository root after ../shared/tools/gpu-stage, with OUT set. PROFILES lists the
# `SPEC SHAPE` pairs, separated by ';' (default: the three profiled at 92fd282). With `--full` in a pair, `profile`
# itself writes the source page (source.csv) and prints where the warps wait (before 7bed81e this script's SOURCE=1
# exported it: the runs at c204b16 and 3c8fceb).
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
# The reports sit three folders down, deeper than what comes back from the device: one archive.
tar czf "$OUT/profiles.tgz" -C "$GEMM_ABLATE_RESULTS_DIR" profiles && rm -rf "$GEMM_ABLATE_RESULTS_DIR"
tail -60 "$OUT/profile.log"
exit $rc
