#!/usr/bin/env bash
# Issue 37's calibration across processes on the H200 (device machine), in one call: the A/A pairs (60
# comparisons), the separately compiled copy and the 3% slowdown (`aim0.0`, `aim3.0`, 20 comparisons each) and the
# real pairs, every comparison over its own worker processes. CALIBRATION_ALL=1 runs the other four slowdowns too
# (about 11 minutes in all: two calls, or a call of its own with the rest left out). CALIBRATION_PART=pairs runs
# the A/A and real pairs only, CALIBRATION_PART=slowdowns the slowdowns only: one call each where a comparison
# takes longer than planned (on an H100 at 11f24a0, 4.0-4.3 s a comparison over three fresh workers: the A/A and
# real pairs alone took about 510 s, and the 570 s ran out in `aim0.0`; a fourth real pair, the multicast step
# from the fixed start, came after: about 85 s more there).
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh (.gpu/bin.txz carried), with
# OUT set; everything comes back as $OUT/calibration.tgz. Give the call timeout_s 595.
set -uo pipefail
tools/gpu-unpack.sh
[[ -x .gpu/calibration ]] || { echo "no .gpu/calibration on this machine: carry .gpu/bin.txz (tools/gpu-pack.sh)"; exit 2; }
rm -rf "${OUT:?}/calibration"; mkdir -p "$OUT/calibration"
export GEMM_ABLATE_RESULTS_DIR="$OUT/calibration/runs"
nvidia-smi --query-gpu=name,uuid,serial,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/calibration/gpu.txt" 2>&1
skip=(); [[ ${CALIBRATION_ALL:-0} == 1 ]] || skip=(--skip aim1.5 --skip aim2.0 --skip aim2.5 --skip aim5.0)
case ${CALIBRATION_PART:-all} in
  pairs) skip+=(--skip calibration::slowdown) ;;
  slowdowns) skip+=(--skip calibration::aa --skip calibration::real) ;;
  all) ;;
  *) echo "CALIBRATION_PART: all, pairs or slowdowns"; exit 2 ;;
esac
start=$(date +%s)
timeout "${CALIBRATION_S:-570}" .gpu/calibration "${skip[@]}" > "$OUT/calibration/calibration.log" 2>&1
echo "calibration: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/calibration/calibration.log")"
grep -E "^test .*FAILED|spin|A/A|held the mean" "$OUT/calibration/calibration.log" | head -30
tar czf "$OUT/calibration.tgz" -C "$OUT" calibration && rm -rf "$OUT/calibration"
