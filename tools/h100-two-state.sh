#!/usr/bin/env bash
# H141-H148, H152 (ablations/HYPOTHESES.md, issue 37): a pair on SHAPE (default decode_attn_out; SPECS, the
# baseline and candidate; default `5 6`, the multicast step) in REPEAT `compare` runs (default 7) of 3 worker processes, for each
# GEMM_ABLATE_RANDOMIZE word in ARMS (default `none memory code`), every round kept in the records, so that
# `python3 tools/two_state.py two-state.tgz 0.01 ""` can say which state each round of each process ran in (with
# `place_probe=1` in SPECS, also its CTA-to-SM maps). Any GPU. Run from the repository root with .gpu/bin.txz
# carried (tools/gpu-pack.sh) and OUT set; everything comes back as $OUT/two-state.tgz. Give the call timeout_s 595.
set -uo pipefail
tools/gpu-unpack.sh
[[ -x .gpu/ablations ]] || { echo "no .gpu/ablations on this machine: carry .gpu/bin.txz (tools/gpu-pack.sh)"; exit 2; }
rm -rf "${OUT:?}/two-state"; mkdir -p "$OUT/two-state"
nvidia-smi --query-gpu=name,uuid,serial,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/two-state/gpu.txt" 2>&1
for arm in ${ARMS:-none memory code}; do
  export GEMM_ABLATE_RESULTS_DIR="$OUT/two-state/$arm"; mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
  start=$(date +%s)
  # `compare` rather than the trial: the trial's expectation is pinned on the H200 and skips elsewhere.
  for i in $(seq "${REPEAT:-7}"); do
    GEMM_ABLATE_RANDOMIZE=$arm timeout 60 .gpu/gemm-ablate compare ${SHAPE:-decode_attn_out} ${SPECS:-5 6} >> "$OUT/two-state/$arm.log" 2>&1
  done
  echo "$arm: $(( $(date +%s) - start )) s, $(grep -c -E "ratio" "$OUT/two-state/$arm.log") lines with a ratio"
done
tar czf "$OUT/two-state.tgz" -C "$OUT" two-state && rm -rf "$OUT/two-state"
