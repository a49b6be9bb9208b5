"""Compiles gemm.py ahead of time for sm_90a, with no GPU: fake tensors stand for A and B, so M, N and K stay
dynamic. Writes DIR/cute_hopper_{fp16,bf16}.cubin (and .ptx) and prints each module's SHA-256.

Run by build.sh, with the pinned nvidia-cutlass-dsl on PYTHONPATH: python3 build.py OUT_DIR [--ir]
"""

import hashlib
import os
import shutil
import sys
import tempfile

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm  # noqa: E402

ARCH = "sm_90a"  # never left to the DSL: without a GPU it silently picks sm_100a
DTYPES = {"fp16": cutlass.Float16, "bf16": cutlass.BFloat16}


def operands(dtype):
    """A (M x K) and B (N x K), row-major with lda = ldb = K, 16-byte aligned; C's address, and ldc / 8."""
    m = cute.sym_int32(symbol="M")
    n = cute.sym_int32(symbol="N")
    k = cute.sym_int32(divisibility=8, symbol="K")
    a = make_fake_tensor(dtype, (m, k), stride=(k, 1), assumed_align=16)
    b = make_fake_tensor(dtype, (n, k), stride=(k, 1), assumed_align=16)
    c = cute.runtime.make_ptr(dtype, 0, cute.AddressSpace.gmem, assumed_align=16)
    return a, b, c, cutlass.Int32(1), make_fake_stream()


def build(name, dtype, out_dir, keep_ir):
    work = tempfile.mkdtemp(prefix=f"cute_hopper_{name}_")
    options = f"--gpu-arch {ARCH} --keep-ptx --keep-cubin --dump-dir {work}"
    if keep_ir:
        os.environ["CUTE_DSL_KEEP"] = "ir"
        os.environ["CUTE_DSL_DUMP_DIR"] = work
    kernel = gemm.AbtGemm(dtype)
    cute.compile(kernel, *operands(dtype), options=options)
    found = {}
    for root, _, files in os.walk(work):
        for f in files:
            for ext in ("cubin", "ptx"):
                if f.endswith("." + ext):
                    found.setdefault(ext, []).append(os.path.join(root, f))
    for ext in ("cubin", "ptx"):
        if len(found.get(ext, [])) != 1:
            sys.exit(f"{name}: expected one .{ext} under {work}, found {found.get(ext)}")
    with open(found["ptx"][0]) as f:
        ptx = f.read()
    if f".target {ARCH}" not in ptx:
        sys.exit(f"{name}: the PTX is not for {ARCH}")
    out = {}
    for ext in ("cubin", "ptx"):
        dest = os.path.join(out_dir, f"cute_hopper_{name}.{ext}")
        shutil.copyfile(found[ext][0], dest)
        out[ext] = dest
    with open(out["cubin"], "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print(f"{name}: {out['cubin']} sha256 {digest}; shared memory {kernel.shared_bytes()} bytes")
    if keep_ir:
        print(f"{name}: IR and other artifacts kept in {work}")
    else:
        shutil.rmtree(work)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: build.py OUT_DIR [--ir]")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, dtype in DTYPES.items():
        build(name, dtype, out_dir, "--ir" in sys.argv[2:])


if __name__ == "__main__":
    main()
