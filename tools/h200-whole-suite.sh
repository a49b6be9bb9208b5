#!/usr/bin/env bash
# The whole GPU suite on one warm H200 in three device calls, with kept worker processes (H119) when they pass their
# smoke test, fresh ones otherwise. Call it three times back to back (the machine is released after 30 s idle):
#   tools/h200-whole-suite.sh 1   # kept-worker smoke (about 40 s), then microbench and ablations shard 1
#   tools/h200-whole-suite.sh 2   # the next ablations shards
#   tools/h200-whole-suite.sh 3   # the last shard; with kept workers, then H110(a)'s agreement sweep in what is left
# Shards: kept, 4 (240-296 s each with fresh workers on 1d1f9c2's trial times, so each call fits even if kept
# workers saved nothing: call 2 leaves shard 3 to call 3 when shard 2 alone took 270 s or more); fresh, 5 (1d1f9c2's
# calls: 492, 419 and 430 s). Call 1 writes the mode to .gpu/workers-mode, which the working tree
# keeps between calls on a warm machine; a fresh machine between calls would start the suite over (say so).
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh (the binaries unpacked), with
# OUT set; every call's records come back under $OUT (runs-*.tgz, kept-smoke*, agree.tgz). Give each call
# timeout_s 595.
set -uo pipefail
call=${1:?call 1, 2 or 3}
mode_file=.gpu/workers-mode
if [[ $call == 1 ]]; then
  if tools/h200-kept-smoke.sh; then echo kept > "$mode_file"; else echo fresh > "$mode_file"; fi
fi
mode=$(cat "$mode_file" 2>/dev/null) || { echo "no $mode_file: this machine did not run call 1 (a fresh start?): run call 1 first"; exit 2; }
echo "worker processes: $mode"
if [[ $mode == kept ]]; then
  export GEMM_ABLATE_WORKERS=kept
  began=$(date +%s)
  elapsed() { echo $(( $(date +%s) - began )); }
  case $call in
    1) tools/h200-suite.sh microbench ablations@1/4 ;;
    # A 4-shard of 1d1f9c2's ablations took 240-296 s with fresh workers: shard 3 runs here only if shard 2 left
    # room for it inside the call (kept workers saving what H119 expects), else in call 3.
    2) tools/h200-suite.sh ablations@2/4
       if (( $(elapsed) < 270 )); then tools/h200-suite.sh ablations@3/4; echo 4 > .gpu/next-shard; else echo 3 > .gpu/next-shard; fi ;;
    3) for i in $(seq "$(cat .gpu/next-shard 2>/dev/null || echo 3)" 4); do tools/h200-suite.sh "ablations@$i/4"; done
       # AGREE_END_S (default 560) ends the agreement sweep earlier, to leave the call's rest to another step.
       left=$(( ${AGREE_END_S:-560} - $(elapsed) ))
       if (( left > 120 )); then KEPT=1 tools/h200-agreement.sh 6 "$left" $(cat tools/sweeps/agreement-40.txt); fi ;;
  esac
else
  case $call in
    1) tools/h200-suite.sh microbench ablations@1/5 ;;
    2) tools/h200-suite.sh ablations@2/5 ablations@3/5 ;;
    3) tools/h200-suite.sh ablations@4/5 ablations@5/5 ;;
  esac
fi
