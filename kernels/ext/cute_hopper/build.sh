#!/usr/bin/env bash
# Rebuilds the CuTe DSL GEMM's cubins ahead of time, with no GPU (docs/external-kernels.md, "Peers: a CuTe DSL GEMM").
#
#   kernels/ext/cute_hopper/build.sh            # writes cute_hopper_{fp16,bf16}.{cubin,ptx} here, prints the SHA-256s
#   kernels/ext/cute_hopper/build.sh --check    # rebuilds into a scratch folder and compares with the committed cubins
#   kernels/ext/cute_hopper/build.sh --intercept  # also records the host launcher's driver calls (intercept/record.txt)
#
# The DSL and its dependencies are pinned and installed outside the repository (GEMM_ABLATE_CUTE_DSL, default
# ~/.cache/gemm-ablate-cute-dsl-4.8.1). The [cu13] extra brings the CUDA 13 libraries beside the CUDA 12 ones; with
# no driver present the DSL loads the newest flavour installed (cu13; PTX 9.x, for a CUDA 13 driver). The
# architecture is always passed: without a GPU the DSL would silently compile for sm_100a.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dsl="${GEMM_ABLATE_CUTE_DSL:-$HOME/.cache/gemm-ablate-cute-dsl-4.8.1}"
pins=(
  "nvidia-cutlass-dsl[cu13]==4.8.1"
  "nvidia-cutlass-dsl-libs-base==4.8.1"
  "nvidia-cutlass-dsl-libs-core==4.8.1"
  "nvidia-cutlass-dsl-libs-cu12==4.8.1"
  "nvidia-cutlass-dsl-libs-cu13==4.8.1"
  "cuda-bindings==13.5.0"
  "cuda-pathfinder==1.9.1"
  "protobuf==7.36.2"
  "typing-extensions==4.16.0"
)
if [ ! -f "$dsl/.installed-4.8.1" ]; then
  python3 -m pip install --quiet --target "$dsl" "${pins[@]}"
  touch "$dsl/.installed-4.8.1"
fi
export PYTHONPATH="$dsl:$dsl/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"

case "${1:-}" in
  --check)
    out="$(mktemp -d)"
    python3 "$here/build.py" "$out"
    for d in fp16 bf16; do
      cmp "$out/cute_hopper_$d.cubin" "$here/cute_hopper_$d.cubin" \
        || { echo "cute_hopper_$d.cubin differs from the committed one (rebuilt in $out)"; exit 1; }
    done
    echo "the committed cubins are what this recipe builds"
    ;;
  --intercept)
    python3 "$here/build.py" "$here"
    np="$dsl/numpy-2.2.6"
    [ -d "$np/numpy" ] || python3 -m pip install --quiet --target "$np" "numpy==2.2.6"
    lib="$(mktemp -d)"
    gcc -shared -fPIC -O1 -o "$lib/libcuda.so.1" "$here/intercept/driver_stub.c"
    for d in fp16 bf16; do
      STUB_LOG="$lib/$d.txt" LD_PRELOAD="$lib/libcuda.so.1" LD_LIBRARY_PATH="$lib" PYTHONPATH="$PYTHONPATH:$np" \
        python3 "$here/intercept/intercept.py" "$d"
    done
    cat "$lib/fp16.txt" "$lib/bf16.txt" > "$here/intercept/record.txt"
    echo "wrote $here/intercept/record.txt"
    ;;
  *)
    python3 "$here/build.py" "$here"
    ;;
esac
