#!/usr/bin/env python3
"""Issue 38: the Triton peer timed by Triton's own tool, to set beside the harness's time of the same module.

On the device machine (its Triton is 3.6.0, the version kernels/ext/triton_persistent/build.sh pins): compiles
matmul_abt.py with build.py's own options, checks that the cubin is byte for byte the committed one (so both tools
time one module), launches that compiled kernel on random fp16 operands with the grid and scratch of kernel.toml,
and times it with triton.testing.do_bench (L2 flushed before each call, the median of the calls), printing the SM
clock nvidia-smi reads just before and after. Run the harness's time of the same module in the same call, each
kernel alone: `.gpu/gemm-ablate sustain SHAPE ext:triton_persistent --seconds 3`.

Each shape is timed three ways: operands drawn as torch.randn draws them (normal) and as the harness draws them
(uniform in [-1, 1), drawn in fp32 and rounded), each with do_bench's L2 flush, and uniform back to back without
the flush; then cuBLAS through torch.mm on the same operands, back to back. On two H100s the flush and the draw
moved do_bench by at most 1.2% (results/h100/ed840ea/do-bench/). With CLOCK_MARKS set to a file, each timing
appends its start and end (local time, as nvidia-smi stamps its samples) for tools/do-bench-clock-trace.sh.

Usage, from the repository root on the device: python3 tools/h200-do-bench.py [MxNxK ...]   (default 4096x4096x4096
and 8192x28672x8192, whose M, N, K are the standard square4096 and prefill_mlp_up)
"""
import hashlib
import json
import os
import subprocess
import sys
import time
from datetime import datetime

import torch
import triton
import triton.testing

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels", "ext", "triton_persistent")
sys.path.insert(0, HERE)
import build  # noqa: E402  (build.py: the AOT options, the one place they are written)

SMS = 132


def sm_clock():
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip()
    return out or "?"


def main(shapes):
    with open(os.path.join(HERE, "matmul_abt_persistent_fp16.json")) as fh:
        committed = json.load(fh)
    kernel = build.compile_module("fp16")
    sha = hashlib.sha256(kernel.asm["cubin"]).hexdigest()
    same = sha == committed["cubin_sha256"]
    print(f"triton {triton.__version__}; cubin {sha[:16]} {'==' if same else '!='} committed "
          f"{committed['cubin_sha256'][:16]}")
    if not same:
        sys.exit("not the committed module: the two tools would time different code")
    # The launcher asks this for the program's global scratch (its tensor descriptors), as kernel.toml's scratch.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    cfg = build.CONFIG
    for text in shapes:
        m, n, k = (int(x) for x in text.split("x"))
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        grid = (min(SMS, triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])), 1, 1)
        launch = kernel[grid]
        draws = {
            "normal": lambda rows: torch.randn(rows, k, device="cuda", dtype=torch.float16),
            "uniform": lambda rows: (torch.rand(rows, k, device="cuda") * 2 - 1).half(),  # drawn in fp32, as util.cu
        }
        for draw, flush in (("normal", True), ("uniform", True), ("uniform", False)):
            a, b = draws[draw](m), draws[draw](n)
            args = (a, b, c, m, n, k, n, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["GROUP_M"])
            launch(*args)
            torch.cuda.synchronize()
            err = (c.float() - (a.float() @ b.float().T)).abs().max().item()
            label = f"{text}:{draw}:{'flush' if flush else 'no-flush'}"
            before = sm_clock()
            mark(f"{label}-start")
            if flush:
                ms = triton.testing.do_bench(lambda: launch(*args), warmup=200, rep=2000, return_mode="median")
            else:
                ms = back_to_back(lambda: launch(*args))
            mark(f"{label}-end")
            after = sm_clock()
            flops = 2 * m * n * k / (ms * 1e-3) / 1e12
            print(f"{label}: median {ms * 1e3:.1f} us ({flops:.0f} TFLOP/s), max abs error {err:.4f} against torch"
                  f" in fp32, SM clock {before} before, {after} after")
            time.sleep(1)  # a gap in the clock trace between timings
        # cuBLAS through torch on the same operands, back to back: the vendor's kernel against the harness's
        # `sustain ... cublas` (the clock trace runs both), as for the Triton module.
        label = f"{text}:uniform:no-flush:torch.mm"
        mark(f"{label}-start")
        ms = back_to_back(lambda: torch.mm(a, b.t(), out=c))
        mark(f"{label}-end")
        print(f"{label}: median {ms * 1e3:.1f} us ({2 * m * n * k / (ms * 1e-3) / 1e12:.0f} TFLOP/s)")


def back_to_back(fn, warmup_ms=200, rep_ms=2000):
    """do_bench's timing without its L2 flush: per-call events, calls queued back to back, the median."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    while time.perf_counter() - start < warmup_ms / 1e3:
        fn()
        torch.cuda.synchronize()
    events = []
    start = time.perf_counter()
    while time.perf_counter() - start < rep_ms / 1e3:
        batch = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(20)]
        for begin, end in batch:
            begin.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        events += batch
    times = sorted(begin.elapsed_time(end) for begin, end in events)
    return times[len(times) // 2]


def mark(label):
    path = os.environ.get("CLOCK_MARKS")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{datetime.now().strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]} {label}\n")

if __name__ == "__main__":
    main(sys.argv[1:] or ["4096x4096x4096", "8192x28672x8192"])
