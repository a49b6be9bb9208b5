#!/usr/bin/env bash
# The whole GPU suite on the H200 (device machine), as committed under results/h200/: every trial of both test
# targets. The replay:: trials are CPU tests of the committed runs (CI runs them) and are skipped here, where the
# runs being made are not committed yet.
# Run from the repository root after ../shared/tools/gpu-stage, with OUT set to a folder that comes back.
# Arguments: the targets to run (default both), each optionally TARGET@i/n to run shard i of n of its GPU trials
# (GEMM_ABLATE_SHARD). With every comparison over worker processes the whole suite took 1341 s of trials at 1d1f9c2
# on one H200 (results/h200/1d1f9c2/), run as three calls back to back on the warm machine, each well inside a
# call's 10 minutes: `microbench ablations@1/5` (259 s + 233 s), `ablations@2/5 ablations@3/5` (209 s + 210 s),
# `ablations@4/5 ablations@5/5` (231 s + 199 s); the later calls find the first call's compiled kernels in the cache.
set -uo pipefail
# A device machine has handed back an $OUT holding an earlier session's files (stale records once came back with
# e7f7856's sweep): start from an empty folder.
rm -rf "${OUT:?}/runs"
export GEMM_ABLATE_RESULTS_DIR="$OUT/runs"
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
# What might tell two kinds of machine apart (H132: same cubins and driver, decode kernels 2-6% apart): the board's
# firmware, memory and host, in full.
nvidia-smi -q > "$OUT/gpu-q.txt" 2>&1; { lscpu; cat /proc/meminfo | head -3; uname -a; } > "$OUT/host.txt" 2>&1
rc=0
for arg in ${@:-ablations microbench}; do
  target=${arg%@*}; shard=""; log="$OUT/$target.log"
  if [[ $arg == *@* ]]; then shard=${arg#*@}; log="$OUT/$target-shard-${shard/\//-of-}.log"; fi
  start=$(date +%s)
  env ${shard:+GEMM_ABLATE_SHARD=$shard} .gpu/$target --skip replay:: > "$log" 2>&1 || rc=1
  echo "$arg: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$log")"
  grep -E "^test .*FAILED|^failures:" "$log" | head -20
done
# The cuBLAS chooser's choices and per-path medians (a cache; .txt, so that results/*.json stay run records).
for f in cublas-paths cublas-path-times cublas-path-host-times; do cp "${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}/$f-v4.json" "$OUT/runs/$f.txt" 2>/dev/null; done
tar czf "$OUT/runs-$(echo "${1:-all}" | tr -c "A-Za-z0-9_\n" "-").tgz" -C "$OUT" runs && rm -rf "$OUT/runs"
exit $rc
