#!/usr/bin/env bash
# Issue 37's calibration across processes on the H200 (device machine), in one call: the A/A pairs (60
# comparisons), the separately compiled copy and the 3% slowdown (`aim0.0`, `aim3.0`, 20 comparisons each) and the
# real pairs, every comparison over its own worker processes. CALIBRATION_ALL=1 runs the other four slowdowns too
# (about 11 minutes in all: two calls, or a call of its own with the rest left out).
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh (.gpu/bin.txz carried), with
# OUT set; everything comes back as $OUT/calibration.tgz. Give the call timeout_s 595.
set -uo pipefail
if [[ ! -x .gpu/calibration && -f .gpu/bin.txz ]]; then
  python3 -c 'import tarfile; tarfile.open(".gpu/bin.txz").extractall(".gpu")'
fi
[[ -x .gpu/calibration ]] || { echo "no .gpu/calibration on this machine: carry .gpu/bin.txz (tools/gpu-pack.sh)"; exit 2; }
rm -rf "${OUT:?}/calibration"; mkdir -p "$OUT/calibration"
export GEMM_ABLATE_RESULTS_DIR="$OUT/calibration/runs"
nvidia-smi --query-gpu=name,uuid,serial,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/calibration/gpu.txt" 2>&1
skip=(); [[ ${CALIBRATION_ALL:-0} == 1 ]] || skip=(--skip aim1.5 --skip aim2.0 --skip aim2.5 --skip aim5.0)
start=$(date +%s)
timeout "${CALIBRATION_S:-570}" .gpu/calibration "${skip[@]}" > "$OUT/calibration/calibration.log" 2>&1
echo "calibration: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/calibration/calibration.log")"
grep -E "^test .*FAILED|spin|A/A|held the mean" "$OUT/calibration/calibration.log" | head -30
tar czf "$OUT/calibration.tgz" -C "$OUT" calibration && rm -rf "$OUT/calibration"
