#!/usr/bin/env bash
# Issue 40, after H136: where the block-scaled top rung's extra time goes. Nsight Compute's full set on the
# block-scaled kernel (e4m3-block), on the same kernel with per-tensor scales (e4m3: the promotion without the
# scales), and on it with scale_prefetch=1, each beside cuBLASLt, at square4096. About 2-4 minutes on a device.
# Run on the device machine from the repository root, after ../shared/tools/gpu-stage and tools/gpu-pack.sh (carry
# .gpu/bin.txz), with OUT set; everything comes back as $OUT/fp8-block-profile.tgz.
set -uo pipefail
tools/gpu-unpack.sh
export GEMM_ABLATE_RESULTS_DIR=$OUT/fp8-block-profile
mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
base=10:tile_k=128,bn=128,promote=1
for run in "$base e4m3-block" "$base e4m3" "$base,scale_prefetch=1 e4m3-block"; do
  read -r spec dtype <<< "$run"
  log=$GEMM_ABLATE_RESULTS_DIR/profile-${spec//[:,=]/_}-$dtype.log
  timeout 150 .gpu/gemm-ablate profile "$spec" square4096 "$dtype" --full > "$log" 2>&1
  echo "== $spec $dtype: rc $?"; tail -30 "$log" | cut -c1-200
done
tar czf "$OUT/fp8-block-profile.tgz" -C "$OUT" fp8-block-profile && rm -rf "$GEMM_ABLATE_RESULTS_DIR"
