#!/usr/bin/env bash
# The Triton peer's recipe (docs/external-kernels.md, "Peers: a Triton matmul"). No GPU is needed.
#
#   kernels/ext/triton_persistent/build.sh          compile matmul_abt.py for sm_90a, fp16, bf16 and e4m3: the cubins
#                                                   and their metadata (.json) into this folder, the PTX into
#                                                   $GEMM_ABLATE_TRITON_OUT (a fresh temporary folder by default)
#   kernels/ext/triton_persistent/build.sh verify   compile into a temporary folder and compare with the
#                                                   committed cubins and metadata, byte for byte
#   kernels/ext/triton_persistent/build.sh check    run the kernel in Triton's interpreter against a float64
#                                                   reference (interpret_check.py; needs numpy, installed here)
#
# Pinned: triton==3.6.0 (the GPU machine's) and, for the check only, numpy==2.2.6, installed with pip --target
# outside the repository, in $GEMM_ABLATE_TRITON_DIR (default ~/.cache/gemm-ablate-triton-3.6.0; numpy beside it,
# with the suffix -numpy). The cubins carry no line information, so their checksums do not depend on where the
# repository or the packages are, nor on when the files were checked out: the same versions give the same bytes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
triton_version=3.6.0
numpy_version=2.2.6
pkgs="${GEMM_ABLATE_TRITON_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gemm-ablate-triton-$triton_version}"

install() { # DIR SPEC
  if [ ! -d "$1/${2%%==*}-${2##*==}.dist-info" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$1" "$2" || {
      echo "error: could not install $2 into $1" >&2
      exit 1
    }
  fi
}

# Only the pinned packages, never a triton installed elsewhere; a fresh cache, so the compiler really runs.
run_python() {
  TRITON_CACHE_DIR="$(mktemp -d)" PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$1" python3 "${@:2}"
}

compile_into() { # OUT
  for dtype in fp16 bf16 e4m3; do
    run_python "$pkgs" "$here/build.py" "$1" --dtype "$dtype" >/dev/null
  done
}

install "$pkgs" "triton==$triton_version"
case "${1:-build}" in
  build)
    out="${GEMM_ABLATE_TRITON_OUT:-$(mktemp -d)}"
    compile_into "$out"
    for dtype in fp16 bf16 e4m3; do
      cp "$out/matmul_abt_persistent_$dtype.cubin" "$out/matmul_abt_persistent_$dtype.json" "$here/"
    done
    (cd "$here" && sha256sum matmul_abt_persistent_*.cubin)
    echo "PTX and metadata in $out; kernel.toml (and ../triton_persistent_bf16/, ../triton_persistent_e4m3/) must name these checksums"
    ;;
  verify)
    out="$(mktemp -d)"
    compile_into "$out"
    status=0
    for f in matmul_abt_persistent_fp16.cubin matmul_abt_persistent_fp16.json \
      matmul_abt_persistent_bf16.cubin matmul_abt_persistent_bf16.json \
      matmul_abt_persistent_e4m3.cubin matmul_abt_persistent_e4m3.json; do
      if cmp -s "$out/$f" "$here/$f"; then
        echo "same: $f"
      else
        echo "DIFFERENT: $f (rebuilt in $out)"
        status=1
      fi
    done
    exit $status
    ;;
  check)
    install "$pkgs-numpy" "numpy==$numpy_version"
    TRITON_INTERPRET=1 run_python "$pkgs:$pkgs-numpy" "$here/interpret_check.py"
    ;;
  *)
    echo "usage: $0 [build|verify|check]" >&2
    exit 2
    ;;
esac
