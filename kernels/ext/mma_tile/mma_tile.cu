// A plain Ampere-style GEMM, the worked example of an external kernel (docs/external-kernels.md):
// C = A B^T with A M x K, B N x K and C M x N, all row-major fp16, fp32 accumulation.
// Each block computes a BM x BN tile with 4 warps (2 x 2), stepping K by 32 through shared memory
// (16-byte loads, no cp.async, no pipelining) and mma.sync.m16n8k16. Written for clarity, not speed.
// BM and BN come from the manifest's switches as -D defines; its `requires` keep M, N and K whole tiles.

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#define BK 32
#define PAD 8  // halves added to each shared row so the fragment reads spread over the banks

typedef unsigned short half_bits;
typedef unsigned int u32;

__device__ __forceinline__ u32 pack_f16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(128)
mma_tile_gemm(const half_bits* __restrict__ A, const half_bits* __restrict__ B, half_bits* __restrict__ C,
              int M, int N, int K, int ldc) {
  constexpr int WM = BM / 2, WN = BN / 2;          // a warp's tile
  constexpr int TM = WM / 16, TN = WN / 8;         // mma tiles per warp
  __shared__ __align__(16) half_bits As[BM][BK + PAD];
  __shared__ __align__(16) half_bits Bs[BN][BK + PAD];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, quad = lane & 3;
  const int warp_m = (warp >> 1) * WM, warp_n = (warp & 1) * WN;
  const long row0 = (long)blockIdx.y * BM, col0 = (long)blockIdx.x * BN;

  float acc[TM][TN][4];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Each row of a tile is BK halves = 4 chunks of 16 bytes.
#pragma unroll
    for (int c = tid; c < BM * 4; c += 128) {
      const int r = c >> 2, q = (c & 3) * 8;
      *(uint4*)&As[r][q] = *(const uint4*)&A[(row0 + r) * K + k0 + q];
    }
#pragma unroll
    for (int c = tid; c < BN * 4; c += 128) {
      const int r = c >> 2, q = (c & 3) * 8;
      *(uint4*)&Bs[r][q] = *(const uint4*)&B[(col0 + r) * K + k0 + q];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      u32 a[TM][4], b[TN][2];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int r = warp_m + i * 16 + group, c = kk + quad * 2;
        a[i][0] = *(const u32*)&As[r][c];
        a[i][1] = *(const u32*)&As[r + 8][c];
        a[i][2] = *(const u32*)&As[r][c + 8];
        a[i][3] = *(const u32*)&As[r + 8][c + 8];
      }
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int n = warp_n + j * 8 + group, c = kk + quad * 2;
        b[j][0] = *(const u32*)&Bs[n][c];
        b[j][1] = *(const u32*)&Bs[n][c + 8];
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) mma_16x8x16(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const long r = row0 + warp_m + i * 16 + group;
      const long c = col0 + warp_n + j * 8 + quad * 2;
      *(u32*)&C[r * ldc + c] = pack_f16x2(acc[i][j][0], acc[i][j][1]);
      *(u32*)&C[(r + 8) * ldc + c] = pack_f16x2(acc[i][j][2], acc[i][j][3]);
    }
}
