#!/usr/bin/env bash
# On the device machine: unpacks the binaries carried as .gpu/bin.txz (tools/gpu-pack.sh) into .gpu/, and puts the
# kernels built with them into the kernel cache (GEMM_ABLATE_CACHE, by default /tmp/gemm-ablate-kernels), never
# over a file already there. Run from the repository root; doing it twice is harmless.
set -euo pipefail
if [[ ! -x .gpu/ablations && -f .gpu/bin.txz ]]; then
  python3 -c 'import tarfile; tarfile.open(".gpu/bin.txz").extractall(".gpu")'
fi
if [[ -d .gpu/kernels ]]; then
  cache=${GEMM_ABLATE_CACHE:-/tmp/gemm-ablate-kernels}
  mkdir -p "$cache"
  cp -n .gpu/kernels/* "$cache/" 2>/dev/null || true
fi
