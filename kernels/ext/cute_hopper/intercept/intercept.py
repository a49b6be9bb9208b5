"""Runs the compiled host launcher of gemm.py once, on the CPU, against driver_stub.c (build.sh --intercept), so
that what it asks of the driver is recorded: the tensor maps it encodes (cuTensorMapEncodeTiled's arguments) and
the launch (grid, block, shared memory, attributes, every parameter's bytes). The record, with addresses replaced
by the operands' names, is intercept/record.txt; a CPU test in harness/families/external/manifest.rs checks kernel.toml
against it.

    python3 intercept.py fp16|bf16     (with STUB_LOG, LD_PRELOAD and LD_LIBRARY_PATH set by build.sh)
"""

import os
import re
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import cuda.bindings.driver as drv  # noqa: E402
import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
import cutlass.cutlass_dsl.cuda_jit_executor as executor  # noqa: E402
from cutlass.cute.runtime import from_dlpack, make_ptr  # noqa: E402

import build  # noqa: E402
import gemm  # noqa: E402

# M, N, K and C's row stride: not tile-square, K not a multiple of the 64-deep K tile, ldc wider than N.
M, N, K, LDC = 256, 512, 200, 768
C_ADDRESS = 0x7F0000001000


def main():
    name = sys.argv[1]
    dtype = build.DTYPES[name]
    log = os.environ["STUB_LOG"]
    ptx = open(os.path.join(os.path.dirname(HERE), f"cute_hopper_{name}.ptx")).read()
    sizes = []
    for p in re.findall(r"\.param ([^\n]*?)(?:,\n|\n\))", ptx):
        m = re.search(r"\[(\d+)\]$", p)
        sizes.append(int(m.group(1)) if m else (4 if ".u32" in p or ".b32" in p else 8))
    os.environ["STUB_PARAM_SIZES"] = ",".join(map(str, sizes))

    # The Python side asks cuda-bindings (not the stub) how many devices there are.
    rt = executor.cuda_runtime
    executor.cuda_runtime = types.SimpleNamespace(
        **{k: getattr(rt, k) for k in dir(rt) if not k.startswith("__")}
    )
    executor.cuda_runtime.cudaGetDeviceCount = lambda: (rt.cudaError_t.cudaSuccess, 1)

    compiled = cute.compile(gemm.AbtGemm(dtype), *build.operands(dtype), options=f"--gpu-arch {build.ARCH}")
    a_host = np.zeros((M, K), dtype=np.float16)
    b_host = np.zeros((N, K), dtype=np.float16)
    a = from_dlpack(a_host, assumed_align=16).mark_layout_dynamic(leading_dim=1)
    b = from_dlpack(b_host, assumed_align=16).mark_layout_dynamic(leading_dim=1)
    c = make_ptr(dtype, C_ADDRESS, cute.AddressSpace.gmem, assumed_align=16)
    compiled(a, b, c, cutlass.Int32(LDC // 8), drv.CUstream(0))

    names = {a_host.ctypes.data: "A", b_host.ctypes.data: "B", C_ADDRESS: "C"}
    lines = [f"problem {name} M={M} N={N} K={K} ldc={LDC}"]
    for line in open(log).read().splitlines():
        m = re.search(r"address=(0x[0-9a-f]+)", line)
        if m:
            line = line.replace(m.group(0), "operand=" + names.get(int(m.group(1), 16), "?"))
        if line.startswith("param "):
            words = line.split()
            raw = bytes(int(x, 16) for x in words[2:])
            if len(raw) == 128 and raw.startswith(b"encode "):
                line = f"param {words[1]} bytes=128 map={raw[7:raw.index(0)].decode()}"
            elif len(raw) == 8 and int.from_bytes(raw, "little") in names:
                line = f"param {words[1]} bytes=8 pointer={names[int.from_bytes(raw, 'little')]}"
            else:
                line = f"param {words[1]} bytes={len(raw)} value={int.from_bytes(raw, 'little')}"
        lines.append(line)
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
