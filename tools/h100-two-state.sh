#!/usr/bin/env bash
# H141 (ablations/HYPOTHESES.md, issue 37): the multicast pair on decode_attn_out (rung 5 against rung 6) in seven
# `compare` runs of 3 worker processes for each of GEMM_ABLATE_RANDOMIZE none, memory and code, with every round kept
# in the records, so that `python3 tools/two_state.py two-state.tgz` can say which state each round of each process
# ran in (SPECS: the baseline and candidate, default `5 6`). Any GPU; the H100 is where the two states were seen. Run from the repository root with .gpu/bin.txz
# carried (tools/gpu-pack.sh) and OUT set; everything comes back as $OUT/two-state.tgz. Give the call timeout_s 595.
set -uo pipefail
if [[ ! -x .gpu/ablations && -f .gpu/bin.txz ]]; then
  python3 -c 'import tarfile; tarfile.open(".gpu/bin.txz").extractall(".gpu")'
fi
[[ -x .gpu/ablations ]] || { echo "no .gpu/ablations on this machine: carry .gpu/bin.txz (tools/gpu-pack.sh)"; exit 2; }
rm -rf "${OUT:?}/two-state"; mkdir -p "$OUT/two-state"
nvidia-smi --query-gpu=name,uuid,serial,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/two-state/gpu.txt" 2>&1
for arm in ${ARMS:-none memory code}; do
  export GEMM_ABLATE_RESULTS_DIR="$OUT/two-state/$arm"; mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
  start=$(date +%s)
  # `compare` rather than the trial: the trial's expectation is pinned on the H200 and skips elsewhere.
  for i in $(seq "${REPEAT:-7}"); do
    GEMM_ABLATE_RANDOMIZE=$arm timeout 60 .gpu/gemm-ablate compare decode_attn_out ${SPECS:-5 6} >> "$OUT/two-state/$arm.log" 2>&1
  done
  echo "$arm: $(( $(date +%s) - start )) s, $(grep -c -E "ratio" "$OUT/two-state/$arm.log") lines with a ratio"
done
tar czf "$OUT/two-state.tgz" -C "$OUT" two-state && rm -rf "$OUT/two-state"
