#!/usr/bin/env bash
# After ../shared/tools/gpu-stage: packs the binaries a device call runs into .gpu/bin.txz (stripped, xz: about
# 7 MB against 40 MB as built), so that they and the tracked tree (about 30 MB) fit the 64 MiB one call carries.
# Carry `.gpu/bin.txz`; on the device machine, before the tools/h200-*.sh scripts (python's tarfile reads xz
# whether or not the xz tool is installed there):
#   python3 -c 'import tarfile; tarfile.open(".gpu/bin.txz").extractall(".gpu")'
# Usage, from the repository root: tools/gpu-pack.sh
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp .gpu/ablations .gpu/microbench .gpu/gemm-ablate .gpu/calibration "$tmp/"
strip "$tmp"/*
rm -f .gpu/bin.tgz
tar cJf .gpu/bin.txz -C "$tmp" ablations microbench gemm-ablate calibration
ls -la .gpu/bin.txz
