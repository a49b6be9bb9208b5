#!/usr/bin/env bash
# H94 (ablations/HYPOTHESES.md): is the path chooser's slow cuBLASLt at M <= 8 the host? Runs
# `gemm-ablate compare SHAPE stream cublas` in fresh processes, each with an empty cuBLAS cache so that it chooses
# anew, alternately with batches unheld (GEMM_ABLATE_HOLD_BATCHES=0, as before H94) and held (1), and keeps each
# one's per-path GPU and host medians and its paired ratio. Results in $OUT/hold-SHAPES.tgz.
# Usage, from the repository root after ../shared/tools/gpu-stage: tools/h200-hold-check.sh N SHAPE...
set -uo pipefail
rm -rf "${OUT:?}/hold"
mkdir -p "$OUT/hold"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/hold/gpu.txt" 2>&1
kernels=${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}
n=$1; shift
for shape in "$@"; do
  for i in $(seq 1 "$n"); do
    for held in 0 1; do
      cache=$(mktemp -d)
      cp "$kernels"/*.cubin "$kernels"/*.json "$cache/" 2>/dev/null
      rm -f "$cache"/cublas-*
      tag=$shape-$i-held$held
      GEMM_ABLATE_HOLD_BATCHES=$held GEMM_ABLATE_CACHE=$cache GEMM_ABLATE_RESULTS_DIR="$OUT/hold/runs" \
        timeout 120 .gpu/gemm-ablate compare "$shape" stream cublas > "$OUT/hold/$tag.log" 2>&1
      cp "$cache/cublas-path-times-v3.json" "$OUT/hold/$tag-path-times.txt" 2>/dev/null
      cp "$cache/cublas-path-host-times-v3.json" "$OUT/hold/$tag-path-host-times.txt" 2>/dev/null
      # Keep the compiled kernels for the next process (not the cuBLAS choices: each process chooses anew).
      mkdir -p "$kernels"
      for f in "$cache"/*.cubin "$cache"/*.json; do
        case $(basename "$f") in cublas-*) ;; *) cp -n "$f" "$kernels/" 2>/dev/null ;; esac
      done
      echo "$tag: $(grep -E '^  cuBLAS:' "$OUT/hold/$tag.log" | cut -c1-60) $(grep -E '^  estimate:' "$OUT/hold/$tag.log" | cut -c1-60)"
      rm -rf "$cache"
    done
  done
done | tee "$OUT/hold/summary.txt"
tar czf "$OUT/hold-$(echo "$*" | tr -c "A-Za-z0-9_\n" "-").tgz" -C "$OUT" hold && rm -rf "$OUT/hold"
