"""A persistent Hopper GEMM in Triton, written for gemm-ablate: C = A B^T.

A is M x K row-major (lda = K), B is N x K row-major (ldb = K), C is M x N row-major with row stride `ldc`
(ldc >= N: the suite's correctness check pads every row with guard columns). fp32 accumulation; C takes the
operands' type (fp16 or bf16). `matmul_abt_persistent_scaled` is the same loop on FP8 (e4m3) operands with
per-tensor scales: C (bf16) = scale_a scale_b A B^T.

Persistent: the grid is at most one program per SM. Program p takes output tiles p, p + P, p + 2P, ... of the
`tile_count` tiles, P being the number of programs, so the grid's size changes how the work is shared, never
the result. The tiles are numbered in bands of GROUP_M tile rows: within a band, down a column of GROUP_M tiles
first, then the next column, so the programs working at one time read a few rows of A and a few rows of B
(which stay in L2) rather than one row of A and the whole of B.

Operands move through tensor descriptors (TMA on Hopper), built on the device from the raw pointers: the
descriptors live in Triton's global scratch (128 bytes each, per program), so the module takes no host-built
CUtensorMap. A load past M, N or K reads zeros and a store past M or N is clipped by the TMA unit, so no shape
needs to be a tile multiple; TMA needs 16-byte aligned bases and row strides (K and ldc multiples of 8 elements),
and the build promises more (multiples of 16: see build.py).
"""

import triton
import triton.language as tl


@triton.jit
def persistent_abt(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    ldc,
    scale,
    SCALED: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """The loop both kernels run; with SCALED, the fp32 sums are multiplied by `scale` before the store."""
    a_tiles = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_tiles = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_tiles = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[ldc, 1], block_shape=[BLOCK_M, BLOCK_N])

    rows_of_tiles = tl.cdiv(M, BLOCK_M)
    cols_of_tiles = tl.cdiv(N, BLOCK_N)
    tile_count = rows_of_tiles * cols_of_tiles
    k_steps = tl.cdiv(K, BLOCK_K)
    tiles_per_band = GROUP_M * cols_of_tiles

    # One flattened loop over (this program's tiles) x (k steps), so the software pipeline keeps loading the next
    # tile's first K slices while the last tile's epilogue runs.
    for tile in tl.range(tl.program_id(0), tile_count, tl.num_programs(0), flatten=True):
        band = tile // tiles_per_band
        band_row0 = band * GROUP_M
        band_rows = tl.minimum(rows_of_tiles - band_row0, GROUP_M)
        in_band = tile - band * tiles_per_band
        row0 = (band_row0 + in_band % band_rows) * BLOCK_M
        col0 = (in_band // band_rows) * BLOCK_N

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for step in range(k_steps):
            k0 = step * BLOCK_K
            a = a_tiles.load([row0, k0])
            b = b_tiles.load([col0, k0])
            acc = tl.dot(a, b.T, acc)
        if SCALED:
            acc = acc * scale
        c_tiles.store([row0, col0], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_abt_persistent(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    ldc,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    persistent_abt(a_ptr, b_ptr, c_ptr, M, N, K, ldc, 1.0, False, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def matmul_abt_persistent_scaled(
    a_ptr,
    b_ptr,
    c_ptr,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    ldc,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """matmul_abt_persistent on FP8 operands, each with one fp32 scale (read once, applied to the fp32 sums)."""
    scale = tl.load(a_scale_ptr) * tl.load(b_scale_ptr)
    persistent_abt(a_ptr, b_ptr, c_ptr, M, N, K, ldc, scale, True, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
