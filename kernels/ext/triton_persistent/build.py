"""Compiles matmul_abt.py ahead of time for sm_90a (no GPU needed) and writes the cubin, its PTX, its metadata
and its SHA-256. Run it through build.sh, which pins the compiler: triton==3.6.0, the GPU machine's version.

    python3 build.py OUT_DIR [--dtype fp16|bf16|e4m3]

The compile options below are the module's whole configuration: kernel.toml states the same numbers (its
`block`, `shared_memory`, scratch size and `requires`), and a test (harness/families/external/manifest.rs) checks the
manifest against the metadata file this writes.
"""

import argparse
import hashlib
import json
import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul_abt import matmul_abt_persistent, matmul_abt_persistent_scaled  # noqa: E402

TRITON_VERSION = "3.6.0"

# Tile and pipeline: 128 x 256 output tiles, 64-wide K slices, 3 stages of A and B slices in shared memory
# (3 x (128 + 256) x 64 x 2 bytes = 144 KiB) plus the epilogue's C tile (64 KiB); 8 warps (two warpgroups,
# each with a 64 x 256 half of the accumulator: 128 fp32 registers a thread). GROUP_M = 8 tile rows a band.
CONFIG = {
    "BLOCK_M": 128,
    "BLOCK_N": 256,
    "BLOCK_K": 64,
    "GROUP_M": 8,
}
NUM_WARPS = 8
NUM_STAGES = 3

# The scalar and pointer parameters in order. `D`: compiled with the promise that the value (or the address) is a
# multiple of 16, what Triton's JIT assumes when it sees one; the manifest's `requires` repeat it for K, N and ldc,
# and the suite's allocations are 256-byte aligned. M is left unhinted, so any token count runs.
PARAMS = [
    ("a_ptr", "ptr", "D"),
    ("b_ptr", "ptr", "D"),
    ("c_ptr", "ptr", "D"),
    ("M", "i32", ""),
    ("N", "i32", "D"),
    ("K", "i32", "D"),
    ("ldc", "i32", "D"),
]


# FP8 (e4m3, per-tensor scales; issue 40): the same tiles with 128-wide K slices, as many bytes a slice as the
# 16-bit build's 64; the scales are two fp32 pointers after C, and C is bf16.
CONFIG_E4M3 = dict(CONFIG, BLOCK_K=128)
PARAMS_E4M3 = PARAMS[:3] + [("a_scale_ptr", "ptr", "D"), ("b_scale_ptr", "ptr", "D")] + PARAMS[3:]


def compile_module(dtype):
    # No line information: with it, the cubin's .debug_line holds the source's and Triton's folders and the source
    # file's modification time, so the checksum would depend on where and when the repository was checked out.
    triton.knobs.compilation.disable_line_info = True
    if dtype == "e4m3":
        fn, config, params = matmul_abt_persistent_scaled, CONFIG_E4M3, PARAMS_E4M3
        pointee = {"a_ptr": "fp8e4nv", "b_ptr": "fp8e4nv", "c_ptr": "bf16", "a_scale_ptr": "fp32", "b_scale_ptr": "fp32"}
    else:
        fn, config, params = matmul_abt_persistent, CONFIG, PARAMS
        pointee = {name: dtype for name, kind, _ in PARAMS if kind == "ptr"}
    signature = {name: (f"*{pointee[name]}" if kind == "ptr" else kind) for name, kind, _ in params}
    signature.update({name: "constexpr" for name in config})
    attrs = {(i,): [["tt.divisibility", 16]] for i, (_, _, hint) in enumerate(params) if "D" in hint}
    src = ASTSource(fn=fn, signature=signature, constexprs=dict(config), attrs=attrs)
    return triton.compile(
        src,
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": NUM_WARPS, "num_stages": NUM_STAGES, "num_ctas": 1},
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", help="folder for the cubin, PTX and metadata")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16", "e4m3"])
    args = ap.parse_args()
    if triton.__version__ != TRITON_VERSION:
        sys.exit(f"error: triton {triton.__version__} is imported; this module is pinned to {TRITON_VERSION}")
    k = compile_module(args.dtype)
    md = k.metadata
    cubin = k.asm["cubin"]
    stem = f"matmul_abt_persistent_{args.dtype}"
    config, params = (CONFIG_E4M3, PARAMS_E4M3) if args.dtype == "e4m3" else (CONFIG, PARAMS)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".cubin"), "wb") as f:
        f.write(cubin)
    with open(os.path.join(args.out, stem + ".ptx"), "w") as f:
        f.write(k.asm["ptx"])
    facts = {
        "triton": triton.__version__,
        "target": "cuda sm_90a (GPUTarget('cuda', 90, 32))",
        "dtype": args.dtype,
        "entry": md.name,
        "config": config,
        "num_warps": md.num_warps,
        "num_stages": md.num_stages,
        "num_ctas": md.num_ctas,
        "shared": md.shared,
        "global_scratch_size": md.global_scratch_size,
        "global_scratch_align": md.global_scratch_align,
        "profile_scratch_size": md.profile_scratch_size,
        "profile_scratch_align": md.profile_scratch_align,
        "launch_cooperative_grid": md.launch_cooperative_grid,
        "launch_pdl": md.launch_pdl,
        "hinted_divisible_by_16": [name for name, _, hint in params if "D" in hint],
        "cubin_bytes": len(cubin),
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
    }
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(facts, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
