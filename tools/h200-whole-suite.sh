#!/usr/bin/env bash
# The whole GPU suite on one H200, in as few device calls as fit: run the same command again, back to back, until it
# prints "whole suite: done". Each call runs the parts that fit in END_S seconds (default 560, inside a call's 600)
# and keeps where it stopped in .gpu/suite-next, which the working tree keeps between calls on a warm machine.
#   tools/h200-whole-suite.sh                 # first call, and every next call on the same machine
#   FROM=4 tools/h200-whole-suite.sh          # on a fresh machine (the last one went back): go on at part 4
#   SMOKE=0 tools/h200-whole-suite.sh         # kept workers without the 40 s smoke (its trials run in the suite too;
#                                             # 9d9b4bb's suite ran so, to fit the session's last device minutes)
# Parts, in order: the microbench, then the ablations in 6 shards. The first call on a machine runs the kept-worker
# smoke first (tools/h200-kept-smoke.sh, about 40 s): kept worker processes (H119) when it passes, fresh ones
# otherwise. A part starts only if its expected time still fits (at 1b4b713 with kept workers: microbench 195 s,
# a quarter of the ablations 145 s; at 1d1f9c2 with fresh ones: 259 s and 1082 s of ablations). With the suite done
# and time left in the call, TAIL runs next (default `fp8`: tools/h200-fp8-smoke.sh with FP8_STEPS=1 in what is
# left; `agree`: H110(a)'s agreement sweep; `placement`: H148-H149's tools/h200-placement.sh, about 150 s; `none`).
# Run from the repository root after ../shared/tools/gpu-stage and tools/gpu-pack.sh (the binaries unpacked), with
# OUT set; everything a call writes comes back as $OUT/whole-suite-call.tgz (each part's runs-*.tgz and log,
# kept-smoke*, fp8.tgz, agree.tgz). Give each call timeout_s 595.
set -uo pipefail
# A fresh machine holds only what was carried: unpack the binaries here, and stop before any part without them (at
# 8fb4f1b a call on a fresh machine "ran" every part in 0 s and called the suite done).
tools/gpu-unpack.sh
for bin in ablations microbench gemm-ablate; do
  [[ -x .gpu/$bin ]] || { echo "no .gpu/$bin on this machine: carry .gpu/bin.txz (tools/gpu-pack.sh)"; exit 2; }
done
# A call returns only a few files: everything this call writes under $OUT goes back as one archive at the end
# (at 8fb4f1b three parts' records were left on the machine for that).
pack_out() {
  local all=(); for f in "$OUT"/*; do
    [[ -e $f && $f != "$OUT/whole-suite-call.tgz" ]] && all+=("${f#"$OUT"/}")
  done
  ((${#all[@]})) && tar czf "$OUT/whole-suite-call.tgz" -C "$OUT" "${all[@]}" && (cd "$OUT" && rm -rf "${all[@]}")
}
trap pack_out EXIT
end_s=${END_S:-560}
parts=(microbench ablations@1/6 ablations@2/6 ablations@3/6 ablations@4/6 ablations@5/6 ablations@6/6)
began=$(date +%s)
elapsed() { echo $(( $(date +%s) - began )); }
mode_file=.gpu/workers-mode next_file=.gpu/suite-next
if [[ ! -f $mode_file && ${SMOKE:-1} == 0 ]]; then
  echo kept > "$mode_file"
elif [[ ! -f $mode_file ]]; then
  if tools/h200-kept-smoke.sh; then echo kept > "$mode_file"; else echo fresh > "$mode_file"; fi
fi
mode=$(cat "$mode_file")
echo "worker processes: $mode"
[[ $mode == kept ]] && export GEMM_ABLATE_WORKERS=kept
# Expected seconds of a part, with a fifth to spare.
expected() {
  case $mode:$1 in
    kept:microbench) echo 235 ;; kept:*) echo 120 ;;
    fresh:microbench) echo 310 ;; fresh:*) echo 220 ;;
  esac
}
next=${FROM:-$(cat "$next_file" 2>/dev/null || echo 1)}
rc=0
while (( next <= ${#parts[@]} )); do
  part=${parts[next - 1]}
  if (( $(elapsed) + $(expected "$part") > end_s )); then
    echo "part $next ($part) does not fit in this call ($(elapsed) s gone): call again"
    break
  fi
  echo "part $next of ${#parts[@]}: $part"
  tools/h200-suite.sh "$part" || rc=1
  shard=${part#*@}; log=$OUT/${part%@*}.log; [[ $part == *@* ]] && log=$OUT/${part%@*}-shard-${shard/\//-of-}.log
  if ! grep -q '^test result' "$log" 2>/dev/null; then
    echo "part $next ($part) ran no trials (see $log): stopping here, it stays next"
    rc=1; break
  fi
  # A machine whose GPU did not open skips every GPU trial and still ends `test result: ok`: not a part that ran.
  if grep -q 'ignored (needs a CUDA GPU' "$log"; then
    echo "part $next ($part) found no usable GPU (see $log): stopping here, it stays next"
    rc=1; break
  fi
  next=$(( next + 1 ))
  echo "$next" > "$next_file"
done
if (( next > ${#parts[@]} )); then
  echo "whole suite: done ($mode worker processes)"
  left=$(( end_s - $(elapsed) ))
  case ${TAIL:-fp8} in
    fp8) if (( left > 120 )); then FP8_STEPS=1 FP8_END_S=$left tools/h200-fp8-smoke.sh; fi ;;
    agree) if (( left > 120 )); then KEPT=$([[ $mode == kept ]] && echo 1 || echo 0) \
             tools/h200-agreement.sh 6 "$left" $(cat tools/sweeps/agreement-40.txt); fi ;;
    placement) if (( left > 150 )); then tools/h200-placement.sh; fi ;;
  esac
else
  echo "whole suite: not done; next part $next (${parts[next - 1]}); on a fresh machine: FROM=$next $0"
fi
exit $rc
