#!/usr/bin/env bash
# The SASS a variant spec compiles to, here, without a GPU: NVRTC builds the cubin (as `gemm-ablate build` does) and
# nvdisasm prints it. Where the compiler put an instruction is a fact no source file states: this session found a
# 64-bit division inside the producer's k-block loop (H83's first form) and ptxas scheduling loads written before
# the MMAs after them (H87) this way.
# Needs libnvrtc.so.13 on LD_LIBRARY_PATH (README, "Hardware and software") and nvdisasm from
# `pip install --target ~/.cache/gemm-ablate-nvdisasm nvidia-cuda-nvdisasm` (or NVDISASM=path).
# Usage, from the repository root after `cargo build --release`:
#   tools/sass.sh SPEC [bf16]                 the whole disassembly
#   tools/sass.sh SPEC | grep -E 'LDG|UTMALDG|HMMA|HGMMA|CALL|BRA|^\.L_x'   loads, MMAs, calls and branches in order
set -euo pipefail
spec=${1:?usage: tools/sass.sh SPEC [bf16]}
nvdisasm=${NVDISASM:-$HOME/.cache/gemm-ablate-nvdisasm/nvidia/cu13/bin/nvdisasm}
[ -x "$nvdisasm" ] || { echo "no nvdisasm at $nvdisasm (pip install --target ~/.cache/gemm-ablate-nvdisasm nvidia-cuda-nvdisasm, or set NVDISASM)" >&2; exit 2; }
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
GEMM_ABLATE_CACHE="$cache" GEMM_ABLATE_REQUIRE_NVRTC=1 ./target/release/gemm-ablate build "$spec" ${2:-} >&2
cubin=$(ls "$cache"/*.cubin 2>/dev/null | head -1)
[ -n "$cubin" ] || { echo "no cubin was built for $spec" >&2; exit 1; }
"$nvdisasm" -c "$cubin"
