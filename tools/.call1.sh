set -uo pipefail
SMALL="rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=128,stages=8"
swap() { local n=$1 st=8; [ "$n" = 128 ] && st=6; echo "rung10:streamk=1,cluster=1,consumers=1,wg_m=128,bn=$n,stages=$st,epilogue=direct,stmatrix=0,swap_ab=1"; }
mkdir -p $OUT/c
( for pair in "1 8" "8 8" "32 32" "64 64" "128 128"; do set -- $pair; S=$(swap $2)
  echo "== decode_m$1"; timeout 150 .gpu/gemm-ablate compare decode_m$1 cublas $SMALL $S "$S,evict_first=1" "$S,pdl=1,early_weights=1" 2>&1 | grep -v "^  round"
done ) > $OUT/c/compare.log 2>&1 &
wait
tools/h200-trials.sh "ablations:beyond::swap_ab" "ablations:beyond::evict_first" "ablations:beyond::early_weights"
