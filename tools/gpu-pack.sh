#!/usr/bin/env bash
# After ../shared/tools/gpu-stage: packs the binaries a device call runs into .gpu/bin.tgz (about 7.5 MB against
# 38 MB unpacked), so that they and the tracked tree fit what one call carries. On the device machine, before the
# tools/h200-*.sh scripts: `tar xzf .gpu/bin.tgz -C .gpu`. Usage, from the repository root: tools/gpu-pack.sh
set -euo pipefail
tar czf .gpu/bin.tgz -C .gpu ablations microbench gemm-ablate
ls -la .gpu/bin.tgz
