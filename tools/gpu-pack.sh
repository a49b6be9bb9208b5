#!/usr/bin/env bash
# After ../shared/tools/gpu-stage: packs the binaries a device call runs into .gpu/bin.txz (stripped, xz: about
# 7 MB against 40 MB as built), so that they and the tracked tree (about 30 MB) fit the 64 MiB one call carries.
# Where NVRTC loads here (LD_LIBRARY_PATH holding the PyPI wheel's libnvrtc.so.13, the same 13.0.88 as on the
# device machines: ../shared/notes/platform-facts.md), the kernels the CPU trials build go in too, as
# `kernels/`: a fresh device machine then finds them in its cache instead of compiling them in the first shard
# (about 38 s of 69beb33's shard 1 of 6, against under 1 s in each later shard). The cache key holds the source,
# the options, the target (sm_90a) and NVRTC's version, so a kernel built here is the one the device would build.
# Carry `.gpu/bin.txz`; on the device machine, before the tools/h200-*.sh scripts, `tools/gpu-unpack.sh`
# (python's tarfile reads xz whether or not the xz tool is installed there).
# Usage, from the repository root: tools/gpu-pack.sh
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp .gpu/ablations .gpu/microbench .gpu/gemm-ablate .gpu/calibration "$tmp/"
strip "$tmp"/*
parts=(ablations microbench gemm-ablate calibration)
# Every CPU trial, as the device runs them (tools/h200-suite.sh): the compile:: trials and the few others that build
# a kernel. Here the GPU trials are skipped for want of a GPU.
cpu_trials() { GEMM_ABLATE_CACHE="$tmp/kernels" GEMM_ABLATE_REQUIRE_NVRTC=1 ".gpu/$1" --skip replay:: >/dev/null 2>&1; }
if cpu_trials ablations && cpu_trials microbench && cpu_trials calibration; then
  parts+=(kernels)
  echo "kernels: $(find "$tmp/kernels" -type f | wc -l) files built for the device's cache"
else
  echo "kernels: NVRTC did not load here (or a compile trial failed): packed without them, the device compiles its own"
fi
rm -f .gpu/bin.tgz
tar cJf .gpu/bin.txz -C "$tmp" "${parts[@]}"
ls -la .gpu/bin.txz
