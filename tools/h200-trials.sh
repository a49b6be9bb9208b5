#!/usr/bin/env bash
# Some trials of the GPU suite on the H200 (device machine): each argument is a TARGET:FILTER pair run as
# `.gpu/TARGET FILTER --skip replay::`, e.g. `ablations:beyond::` `microbench:stages`. Records and logs come back in
# $OUT/trials.tgz (the device returns at most 8 files).
# Run from the repository root after ../shared/tools/gpu-stage.
set -uo pipefail
# A device machine has handed back an $OUT holding an earlier session's files (stale records once came back with
# e7f7856's sweep): start from an empty folder.
rm -rf "${OUT:?}/trials"
export GEMM_ABLATE_RESULTS_DIR="$OUT/trials/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/trials/gpu.txt" 2>&1
rc=0
for pair in "$@"; do
  target=${pair%%:*}; filter=${pair#*:}
  log="$OUT/trials/$target-$(echo "$filter" | tr -c 'A-Za-z0-9_\n' '_').log"
  start=$(date +%s)
  ".gpu/$target" "$filter" --skip replay:: > "$log" 2>&1 || rc=1
  echo "$target $filter: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$log")"
  grep -E "^test .*FAILED" "$log" | head -20
done
# The cuBLAS chooser's choices and per-path medians (a cache; .txt, so that results/*.json stay run records).
for f in cublas-paths cublas-path-times cublas-path-host-times; do cp "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}/$f-v3.json" "$OUT/trials/$f.txt" 2>/dev/null; done
tar czf "$OUT/trials.tgz" -C "$OUT" trials && rm -rf "$OUT/trials"
exit $rc
