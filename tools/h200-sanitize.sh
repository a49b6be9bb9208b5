#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over the sanitize:: trials on the H200 (device machine): every
# rung and each kernel family `auto` runs, on the 256x512x512 problem. Logs come back in $OUT/sanitizer.tgz.
# Usage, from the repository root after ../shared/tools/gpu-stage: tools/h200-sanitize.sh [FILTER, default sanitize::]
set -uo pipefail
filter=${1:-sanitize::}
mkdir -p "$OUT/sanitizer"
export GEMM_ABLATE_RESULTS_DIR="$OUT/sanitizer/runs"
rc=0
for tool in memcheck racecheck synccheck; do
  start=$(date +%s)
  timeout 150 compute-sanitizer --tool "$tool" --target-processes all .gpu/ablations "$filter" --skip replay:: \
    > "$OUT/sanitizer/sanitizer-$tool.log" 2>&1 || rc=1
  echo "$tool: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$OUT/sanitizer/sanitizer-$tool.log"); $(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$OUT/sanitizer/sanitizer-$tool.log" | sort | uniq -c | tr '\n' ' ')"
done
tar czf "$OUT/sanitizer.tgz" -C "$OUT" sanitizer && rm -rf "$OUT/sanitizer"
exit $rc
