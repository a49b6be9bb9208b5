"""Runs matmul_abt.py in Triton's interpreter (TRITON_INTERPRET=1) on the CPU, with numpy, and compares C with a
float64 reference (and matmul_abt_persistent_scaled on e4m3 codes against the decoded codes times the scales): the
tiling, the grouped tile order, the persistent loop, the descriptors' bounds (zero-filled
loads past M, N, K; stores clipped at M and N) and the row stride ldc > N: C is filled with a guard pattern,
with guard columns past N in every row and guard rows past M, and every guard word must be left as it was.

    TRITON_INTERPRET=1 python3 interpret_check.py        (build.sh check does this, with the pinned packages)

No torch: the interpreter wants tensors with data_ptr() and a storage; HostTensor below gives it numpy arrays in
that shape. What the interpreter does not show: the compiled pipeline (stages, wgmma, the TMA unit), which only a
GPU run checks.
"""

import os
import sys

import numpy as np

if os.environ.get("TRITON_INTERPRET") != "1":
    sys.exit("error: run with TRITON_INTERPRET=1 (the interpreter)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton.language as tl  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from build import CONFIG, CONFIG_E4M3  # noqa: E402
from matmul_abt import matmul_abt_persistent, matmul_abt_persistent_scaled  # noqa: E402

_dot = interpreter.InterpreterBuilder.create_dot


def _dot_widening_bf16(self, a, b, d, input_precision, max_num_imprecise_acc):
    """Triton 3.6's interpreter keeps bf16 as uint16 and multiplies those integers in tl.dot; the hardware (and the
    compiled module) multiplies the bf16 values, exactly representable in fp32: widen them first. The kernel's
    source is unchanged; only the interpreter's emulation of a bf16 dot is."""
    if a.dtype.scalar == tl.bfloat16 and b.dtype.scalar == tl.bfloat16:
        widen = lambda h: interpreter.TensorHandle(  # noqa: E731
            (h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)
        a, b = widen(a), widen(b)
    return _dot(self, a, b, d, input_precision, max_num_imprecise_acc)


interpreter.InterpreterBuilder.create_dot = _dot_widening_bf16


class _DType:
    """What Triton reads of a torch dtype: its name after the last dot, its size and kind."""

    def __init__(self, name, itemsize):
        self.name, self.itemsize, self.is_floating_point = name, itemsize, True

    def __str__(self):
        return "numpy." + self.name


class _Storage:
    def __init__(self, array):
        self.array = array

    def data_ptr(self):
        return self.array.ctypes.data

    def cpu(self):  # the interpreter copies "device" storage to the host: it already is on the host
        return self

    def copy_(self, other):
        if other.array.ctypes.data != self.array.ctypes.data:
            self.array[...] = other.array


class HostTensor:
    """A numpy array dressed as the interpreter's tensor (fp16 as float16, bf16 as the top half of float32)."""

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype

    def data_ptr(self):
        return self.array.ctypes.data

    def untyped_storage(self):
        return _Storage(self.array)

    def storage_offset(self):
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def new_empty(self, *_, **__):
        return HostTensor(None, self.dtype)

    def set_(self, storage, offset, size, stride):
        assert offset == 0
        self.array = storage.array
        return self


FP16 = _DType("float16", 2)
BF16 = _DType("bfloat16", 2)
E4M3 = _DType("float8_e4m3fn", 1)
F32 = _DType("float32", 4)


def e4m3_value(code):
    """The value of an e4m3 code (1 sign, 4 exponent bits of bias 7, 3 mantissa bits; S.1111.111 is NaN)."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 7
    if exponent == 15 and mantissa == 7:
        return float("nan")
    if exponent == 0:
        return sign * mantissa / 8.0 * 2.0**-6
    return sign * (1 + mantissa / 8.0) * 2.0 ** (exponent - 7)


E4M3_VALUES = np.array([e4m3_value(c) for c in range(256)])


# C is followed by this many rows of guard words: a tile stored past row M lands in them.
GUARD_ROWS = 256


def to_bf16_bits(x):
    """float64 -> bfloat16 bits (round to nearest even), as uint16."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def run_e4m3(m, n, k, ldc, programs, seed):
    """matmul_abt_persistent_scaled on e4m3 codes with per-tensor scales, a bf16 C: against float64 on the decoded
    codes times the scales, with bf16's tolerance (the suite's for FP8)."""
    rng = np.random.default_rng(seed)
    # Codes of magnitude below 2 (the exponent's top bit clear), never NaN.
    a = rng.integers(0, 256, size=(m, k), dtype=np.uint8) & 0xBF
    b = rng.integers(0, 256, size=(n, k), dtype=np.uint8) & 0xBF
    scale_a, scale_b = np.array([0.5], dtype=np.float32), np.array([0.75], dtype=np.float32)
    guard = 0x5A5A
    c = np.full((m + GUARD_ROWS, ldc), guard, dtype=np.uint16)
    tiles = -(-m // CONFIG_E4M3["BLOCK_M"]) * -(-n // CONFIG_E4M3["BLOCK_N"])
    grid = (min(programs, tiles),)
    matmul_abt_persistent_scaled[grid](
        HostTensor(a, E4M3), HostTensor(b, E4M3), HostTensor(c, BF16), HostTensor(scale_a, F32),
        HostTensor(scale_b, F32), m, n, k, ldc, **CONFIG_E4M3
    )
    untouched = int((c[:m, n:] == guard).sum()) + int((c[m:] == guard).sum())
    guards = m * (ldc - n) + GUARD_ROWS * ldc
    got = from_bf16_bits(c[:m, :n])
    ref = (E4M3_VALUES[a] @ E4M3_VALUES[b].T) * float(scale_a[0] * scale_b[0])
    rel_fro = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    rel_max = np.abs(got - ref).max() / np.abs(ref).max()
    ok = np.isfinite(got).all() and rel_fro < 1.6e-2 and rel_max < 6e-2 and untouched == guards
    print(
        f"e4m3 M={m} N={n} K={k} ldc={ldc} programs={grid[0]} of {tiles} tiles: rel_fro {rel_fro:.2e}, "
        f"rel_max {rel_max:.2e}, guard words {'intact' if untouched == guards else 'OVERWRITTEN'}: "
        f"{'ok' if ok else 'FAIL'}",
        flush=True,
    )
    return ok


def run(m, n, k, ldc, programs, dtype, seed):
    if dtype == "e4m3":
        return run_e4m3(m, n, k, ldc, programs, seed)
    rng = np.random.default_rng(seed)
    a64 = rng.uniform(-1, 1, size=(m, k))
    b64 = rng.uniform(-1, 1, size=(n, k))
    guard = 0x5A5A
    if dtype == "fp16":
        a = np.ascontiguousarray(a64.astype(np.float16))
        b = np.ascontiguousarray(b64.astype(np.float16))
        a_ref, b_ref = a.astype(np.float64), b.astype(np.float64)
        c = np.full((m + GUARD_ROWS, ldc), guard, dtype=np.uint16).view(np.float16)
        dt = FP16
    else:
        a, b = to_bf16_bits(a64), to_bf16_bits(b64)
        a_ref, b_ref = from_bf16_bits(a), from_bf16_bits(b)
        c = np.full((m + GUARD_ROWS, ldc), guard, dtype=np.uint16)
        dt = BF16
    tiles = -(-m // CONFIG["BLOCK_M"]) * -(-n // CONFIG["BLOCK_N"])
    grid = (min(programs, tiles),)
    matmul_abt_persistent[grid](
        HostTensor(a, dt), HostTensor(b, dt), HostTensor(c, dt), m, n, k, ldc, **CONFIG
    )
    bits = c.view(np.uint16)
    untouched = int((bits[:m, n:] == guard).sum()) + int((bits[m:] == guard).sum())
    guards = m * (ldc - n) + GUARD_ROWS * ldc
    got = c[:m, :n].astype(np.float64) if dtype == "fp16" else from_bf16_bits(bits[:m, :n])
    ref = a_ref @ b_ref.T
    rel_fro = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    rel_max = np.abs(got - ref).max() / np.abs(ref).max()
    tol = {"fp16": (2e-3, 1e-2), "bf16": (1.6e-2, 6e-2)}[dtype]  # the suite's (harness/kernel/problem.rs)
    ok = (
        np.isfinite(got).all()
        and rel_fro < tol[0]
        and rel_max < tol[1]
        and untouched == guards
    )
    print(
        f"{dtype} M={m} N={n} K={k} ldc={ldc} programs={grid[0]} of {tiles} tiles: rel_fro {rel_fro:.2e}, "
        f"rel_max {rel_max:.2e}, guard words {'intact' if untouched == guards else 'OVERWRITTEN'}: "
        f"{'ok' if ok else 'FAIL'}",
        flush=True,
    )
    return ok


def main():
    # (M, N, K, ldc, programs): non-square, M and N off the 128 x 256 tile, K off the 64-wide slice (but a multiple
    # of 16, as the module requires), ldc > N, fewer programs than tiles (the persistent loop takes several tiles,
    # crossing bands of GROUP_M tile rows), more programs than tiles (the grid is cut to the tile count), and
    # more than GROUP_M rows of tiles so a partial last band is reached; one token (M = 1, which Triton's JIT
    # would have made a constant: this module takes it as a value); bf16 (see _dot_widening_bf16).
    cases = [
        (256, 512, 128, 512, 132, "fp16"),
        (200, 272, 80, 272 + 16, 3, "fp16"),
        (1100, 528, 96, 528 + 256, 5, "fp16"),
        (64, 768, 192, 800, 2, "fp16"),
        (1, 256, 64, 256 + 16, 132, "fp16"),
        (300, 256, 48, 256 + 32, 4, "bf16"),
        # The FP8 build (per-tensor scales): K off its 128-wide slice, M and N off the tile, fewer programs than
        # tiles.
        (200, 272, 272, 272 + 16, 3, "e4m3"),
        (130, 512, 128, 512, 132, "e4m3"),
    ]
    only = os.environ.get("CHECK_CASES")
    if only:
        cases = [cases[int(i)] for i in only.split(",")]
    results = [run(*c, seed=i) for i, c in enumerate(cases)]
    if not all(results):
        sys.exit(f"error: {results.count(False)} of {len(results)} cases failed")
    print(f"all {len(results)} cases agree with the float64 reference")


if __name__ == "__main__":
    main()
