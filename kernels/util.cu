// util.cu: the harness's own device helpers (random fill, correctness statistics, guard bands).
// Compiled with DTYPE_BF16 set like the output of the GEMM it serves, and AB_E4M3 defined for FP8 operands.

__device__ __forceinline__ float to_float(u16 v) {
  float f;
#if DTYPE_BF16
  f = __uint_as_float(((u32)v) << 16);
#else
  asm("{ .reg .f16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(v));
#endif
  return f;
}

__device__ __forceinline__ u16 from_float(float f) {
  u16 r;
#if DTYPE_BF16
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
#else
  asm("{ .reg .f16 h; cvt.rn.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r) : "f"(f));
#endif
  return r;
}

// SplitMix64 of (seed, index): independent uniform values without any state.
__device__ __forceinline__ u64 mix64(u64 z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform values in [-1, 1), never all zero, rounded to the 16-bit type.
extern "C" __global__ void fill_uniform(u16* out, u64 n, u64 seed) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const u64 h = mix64(seed ^ mix64(i));
    const float u = (float)(h >> 40) * (1.0f / 16777216.0f);
    out[i] = from_float(2.0f * u - 1.0f);
  }
}

#ifdef AB_E4M3
// FP8 operands: uniform values in [-1, 1) rounded to e4m3 (saturating: never a NaN code), one byte each. The
// conversion packs two values, the second argument in the low byte.
extern "C" __global__ void fill_uniform_e4m3(unsigned char* out, u64 n, u64 seed) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const u64 h = mix64(seed ^ mix64(i));
    const float u = (float)(h >> 40) * (1.0f / 16777216.0f);
    u16 pair;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(2.0f * u - 1.0f));
    out[i] = (unsigned char)(pair & 0xFF);
  }
}

// The dequantized value of a `rows` x `k` operand of FP8 codes (row-major), in fp32: the reference GEMM's operands.
// Where each element's scale sits, by `layout` (harness/measure/fp8.rs, `Scaling::scale_index`): 0, one scale; 1,
// one a row; 2, one a row per 128 k-elements, stored [ceil(k/128)][rows]; 3, one per 128x128 block, stored
// [ceil(rows/128)][ceil(k/128) rounded up to a multiple of 4] (cuBLASLt's stride).
extern "C" __global__ void dequantize_e4m3(const unsigned char* in, const float* scales, u32 layout, u64 rows, u64 k,
                                           float* out) {
  const u64 n = rows * k, k_blocks = (k + 127) / 128, block_stride = (k_blocks + 3) / 4 * 4;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const u64 r = i / k, c = i - r * k;
    const u64 s = layout == 0 ? 0 : layout == 1 ? r : layout == 2 ? (c / 128) * rows + r : (r / 128) * block_stride + c / 128;
    // Every e4m3 value is an f16 value: widened exactly, then scaled in fp32.
    const u16 pair = in[i];
    u32 halves;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(pair));
    float f;
    asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(halves));
    out[i] = f * scales[s];
  }
}

// fp32 values rounded to the output type (bf16 for FP8 problems): the reference GEMM's fp32 result made comparable.
extern "C" __global__ void round_f32(const float* in, u16* out, u64 n) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    out[i] = from_float(in[i]);
}
#endif

// Correctness statistics of out against ref, accumulated into stats (zeroed by the host). ref holds n values in
// rows of `cols`; out holds the same rows `ld_out` apart (its row padding is not compared). Indices are ref's:
//   [0] sum of squared differences (f64), [1] sum of squared reference values (f64),
//   [2] max |out - ref| as float bits, [3] count of non-finite outputs, [4] count of non-finite references,
//   [5] first index with a non-finite output (starts at ~0), [6] index of the max error (racy, indicative),
//   [7] max of |out - ref| - rtol * |ref| (at least 0) as float bits: the error beyond what rounding both to the
//   output type may give (rtol: one unit in the last place of the output type, relative), [8] its index (racy).
extern "C" __global__ void compare(const u16* out, u64 ld_out, const u16* ref, u64 cols, u64 n, u64* stats,
                                   float rtol) {
  double sq_diff = 0.0, sq_ref = 0.0;
  float max_err = 0.0f, max_excess = 0.0f;
  u64 max_idx = 0, excess_idx = 0;
  u64 bad_out = 0, bad_ref = 0, first_bad = ~0ull;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const u64 row = i / cols;
    const float o = to_float(out[row * ld_out + (i - row * cols)]), r = to_float(ref[i]);
    const bool o_ok = (o - o == 0.0f), r_ok = (r - r == 0.0f);
    if (!r_ok) {
      bad_ref++;
      continue;
    }
    if (!o_ok) {
      bad_out++;
      if (i < first_bad) first_bad = i;
      continue;
    }
    const float d = fabsf(o - r);
    sq_diff += (double)d * d;
    sq_ref += (double)r * r;
    if (d > max_err) {
      max_err = d;
      max_idx = i;
    }
    const float excess = d - rtol * fabsf(r);
    if (excess > max_excess) {
      max_excess = excess;
      excess_idx = i;
    }
  }
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"(stats + 0), "d"(sq_diff) : "memory");
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"(stats + 1), "d"(sq_ref) : "memory");
  const u32 bits = __float_as_uint(max_err);
  u32 prev;
  asm volatile("atom.global.max.u32 %0, [%1], %2;" : "=r"(prev) : "l"(stats + 2), "r"(bits) : "memory");
  if (bits > prev && bits > 0) stats[6] = max_idx;
  const u32 excess_bits = __float_as_uint(max_excess);
  asm volatile("atom.global.max.u32 %0, [%1], %2;" : "=r"(prev) : "l"(stats + 7), "r"(excess_bits) : "memory");
  if (excess_bits > prev && excess_bits > 0) stats[8] = excess_idx;
  if (bad_out) asm volatile("red.global.add.u64 [%0], %1;" ::"l"(stats + 3), "l"(bad_out) : "memory");
  if (bad_ref) asm volatile("red.global.add.u64 [%0], %1;" ::"l"(stats + 4), "l"(bad_ref) : "memory");
  if (first_bad != ~0ull) asm volatile("red.global.min.u64 [%0], %1;" ::"l"(stats + 5), "l"(first_bad) : "memory");
}

// Counts the 16-bit words of a guarded allocation of n words that no longer hold the pattern written before the
// launch: every word but the matrix itself (`rows` rows of `cols` words, `ld` apart, from word `first`), so the
// bands before and after it and the padding past the last column of each row.
extern "C" __global__ void check_guard(const u16* p, u64 n, u16 pattern, u64 first, u64 rows, u64 ld, u64 cols,
                                       u64* changed) {
  u64 count = 0;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const bool in_matrix = i >= first && i - first < rows * ld && (i - first) % ld < cols;
    count += !in_matrix && p[i] != pattern;
  }
  if (count) asm volatile("red.global.add.u64 [%0], %1;" ::"l"(changed), "l"(count) : "memory");
}

// Sum of the raw 16-bit words of a buffer (layout-agnostic checksum of what the load-path kernel stages).
extern "C" __global__ void sum_u16(const u16* p, u64 n, u64* out) {
  u64 sum = 0;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) sum += p[i];
  asm volatile("red.global.add.u64 [%0], %1;" ::"l"(out), "l"(sum) : "memory");
}
