#!/usr/bin/env bash
# H148 (a, b) and H149 on the H200 in one call (about 2-3 minutes): the stand-alone placement probe
# (tools/placement/run.sh, 4 processes), then the multicast and swizzle steps on decode_attn_out with and without
# the fixed start (GEMM_ABLATE_RANDOMIZE=scheduler), six comparisons of three worker processes each, every round's
# CTA-to-SM maps recorded (place_probe=1). Run from the repository root with .gpu/bin.txz carried and OUT set;
# everything comes back as $OUT/placement.tgz. Read with `python3 tools/two_state.py DIR 0.01 ""` on each arm.
set -uo pipefail
mkdir -p "$OUT/placement"
PROCESSES=4 tools/placement/run.sh > /dev/null 2>&1; mv "$OUT/placement.txt" "$OUT/placement/probe.txt" 2>/dev/null
for pair in "5 6 multicast" "3 4 swizzle"; do
  set -- $pair
  ARMS="none scheduler" REPEAT=${REPEAT:-6} SPECS="$1:place_probe=1 $2:place_probe=1" tools/h100-two-state.sh
  mv "$OUT/two-state.tgz" "$OUT/placement/$3-two-state.tgz"
done
tar czf "$OUT/placement.tgz" -C "$OUT" placement && rm -rf "$OUT/placement"
