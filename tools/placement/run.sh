#!/usr/bin/env bash
# H143 (ablations/HYPOTHESES.md): builds tools/placement/where.cu with the device's nvcc and runs it in PROCESSES
# separate processes (default 6), 128 blocks each; everything comes back in $OUT/placement.txt. About 10 s.
set -uo pipefail
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
out=$OUT/placement.txt
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > "$out" 2>&1
"$nvcc" -arch=sm_90 -o /tmp/where tools/placement/where.cu -lcuda >> "$out" 2>&1 || { cat "$out"; exit 1; }
for p in $(seq "${PROCESSES:-6}"); do
  echo "process $p" >> "$out"
  /tmp/where "${BLOCKS:-128}" >> "$out" 2>&1
done
cat "$out"
