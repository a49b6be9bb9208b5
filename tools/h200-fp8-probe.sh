#!/usr/bin/env bash
# H112 (issue 40) on the device machine: builds tools/fp8-probe/probe.cpp with the device's nvcc and cuBLASLt and
# runs it (about 20 s): which FP8 scale modes the installed cuBLASLt takes on this GPU, and how fast its first
# algorithm is, per shape. Writes $OUT/fp8-probe.txt. No Rust is needed; the binary is built where it runs.
# Usage, from the repository root on the device: tools/h200-fp8-probe.sh
set -euo pipefail
nvcc -O2 -std=c++17 -o /tmp/fp8-probe tools/fp8-probe/probe.cpp -lcublasLt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/fp8-probe.txt"
/tmp/fp8-probe | tee -a "$OUT/fp8-probe.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader >> "$OUT/fp8-probe.txt"
