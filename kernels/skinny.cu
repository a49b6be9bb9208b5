// skinny.cu: C = A * B^T for a few tokens (M <= 8 * SK_TOKEN_TILES), where the GEMM is the weight stream (H80). The
// read floor's loads (stream_read.cu) fed straight to mma.sync: no shared-memory ring, no TMA, no barrier between
// the stream and the tensor cores.
//
// The weights B (N x K) take mma's 16-row side, the tokens A (M x K) its 8-column side. Within each k-step of 32,
// k is visited in an order permuted alike for both operands, so that each thread's fragments are one 16-byte load
// per row: thread (g = lane / 4, q = lane % 4) loads elements 8q..8q+7 of weight rows g and g + 8 and of token g,
// and its two MMAs take elements 8q + {0..3} and 8q + {4..7} as their k = 2q, 2q + 1, 2q + 8, 2q + 9.
//
// Each CTA owns 16 weight rows; its SK_SPLIT warps each own a slice of the k-steps and keep SK_UNROLL k-steps of
// loads in flight a thread. The warps' fp32 partial sums meet in shared memory, and the CTA writes its 16 x M block.
//   SK_SPLIT        warps a CTA, each a slice of K
//   SK_UNROLL       k-steps of 32 whose loads are issued before any MMA uses them
//   SK_TOKEN_TILES  tiles of 8 tokens (M <= 8 * SK_TOKEN_TILES)
//   SK_EVICT_FIRST  1: the weights' loads carry an L2 evict-first policy
//   SK_PDL          1: launched under PDL: wait for the previous grid, then let the next one start its set-up
//   SK_INTERLEAVE   1: the k-steps dealt to the warps in turns of SK_UNROLL, so that the CTA's warps read one long
//                   run of each row together (H81); 0: each warp a contiguous slice of K
//   SK_RING         0: each turn's loads go to registers, and the MMAs wait for them. R >= 2: they go through a
//                   ring of R turns in shared memory, each thread its own slots, copied by cp.async: the loads of
//                   the next R - 1 turns are in flight while a turn's MMAs run (H91)
// DTYPE_BF16 picks the MMA's input type.

#define SK_ROWS 16
#define SK_THREADS (32 * SK_SPLIT)
// 16-byte slots a thread fills per turn: SK_UNROLL k-steps of two weight chunks and SK_TOKEN_TILES token chunks.
#define SK_SLOTS (SK_UNROLL * (2 + SK_TOKEN_TILES))

// One turn's MMAs: two m16n8k16 a k-step and token tile (k = 2q, 2q + 1, 2q + 8, 2q + 9, then the rest).
__device__ __forceinline__ void sk_mma_turn(float (&acc)[SK_TOKEN_TILES][4], const uint4 (&lo)[SK_UNROLL],
                                            const uint4 (&hi)[SK_UNROLL],
                                            const uint4 (&x)[SK_UNROLL][SK_TOKEN_TILES]) {
#pragma unroll
  for (int u = 0; u < SK_UNROLL; u++) {
#pragma unroll
    for (int t = 0; t < SK_TOKEN_TILES; t++) {
      mma_16x8x16(acc[t], lo[u].x, hi[u].x, lo[u].y, hi[u].y, x[u][t].x, x[u][t].y);
      mma_16x8x16(acc[t], lo[u].z, hi[u].z, lo[u].w, hi[u].w, x[u][t].z, x[u][t].w);
    }
  }
}

extern "C" __global__ void __launch_bounds__(SK_THREADS) skinny_kernel(const u16* __restrict__ a,
                                                                      const u16* __restrict__ b, u16* c, int ldc,
                                                                      int M, int N, int K) {
  __shared__ float partial[SK_SPLIT][SK_TOKEN_TILES][4][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, q = lane % 4;
  const int row0 = blockIdx.x * SK_ROWS;
#if SK_PDL
  grid_dependency_wait();
  launch_dependents();
#endif
#if SK_EVICT_FIRST
  const u64 policy = l2_evict_first_policy();
#endif
  // This warp's k-steps: from s_begin to s_end in strides of s_stride (each SK_UNROLL k-steps at once).
  const int steps = (K + 31) / 32;
#if SK_INTERLEAVE
  const int s_begin = warp * SK_UNROLL, s_end = steps, s_stride = SK_SPLIT * SK_UNROLL;
#else
  const int s_begin = (int)((long long)steps * warp / SK_SPLIT);
  const int s_end = (int)((long long)steps * (warp + 1) / SK_SPLIT);
  const int s_stride = SK_UNROLL;
#endif
  // Rows past N and tokens past M read nothing and contribute zeros.
  const bool row_lo = row0 + g < N, row_hi = row0 + g + 8 < N;
  const u16* w_lo = b + (long long)(row0 + g) * K + 8 * q;
  const u16* w_hi = w_lo + 8LL * K;
  const u16* x_at[SK_TOKEN_TILES];
  bool token[SK_TOKEN_TILES];
#pragma unroll
  for (int t = 0; t < SK_TOKEN_TILES; t++) {
    token[t] = 8 * t + g < M;
    x_at[t] = a + (long long)(8 * t + g) * K + 8 * q;
  }
  float acc[SK_TOKEN_TILES][4];
#pragma unroll
  for (int t = 0; t < SK_TOKEN_TILES; t++) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;

#if SK_RING
  // Slot j of ring turn r of this thread: (r * SK_SLOTS + j) * SK_THREADS + threadIdx.x, so a warp's 32 slots are
  // 512 contiguous bytes (conflict-free). Each turn is one cp.async group; a turn past the warp's k-steps copies
  // nothing and writes zeros.
  extern __shared__ __align__(16) uint4 sk_ring[];
  const u32 ring0 = smem_u32(sk_ring + threadIdx.x);
  const u32 slot_stride = SK_THREADS * 16;
  auto issue = [&](int r, int s0) {
#pragma unroll
    for (int u = 0; u < SK_UNROLL; u++) {
      const int k = (s0 + u) * 32 + 8 * q;
      const bool in = s0 + u < s_end && k < K;
      const long long off = in ? (long long)(s0 + u) * 32 : 0;
      const u32 at = ring0 + (u32)(r * SK_SLOTS + 2 * u) * slot_stride;
#if SK_EVICT_FIRST
      cp_async_16_hint(at, in && row_lo ? w_lo + off : b, in && row_lo, policy);
      cp_async_16_hint(at + slot_stride, in && row_hi ? w_hi + off : b, in && row_hi, policy);
#else
      cp_async_16(at, in && row_lo ? w_lo + off : b, in && row_lo);
      cp_async_16(at + slot_stride, in && row_hi ? w_hi + off : b, in && row_hi);
#endif
#pragma unroll
      for (int t = 0; t < SK_TOKEN_TILES; t++) {
        const u32 x_slot = ring0 + (u32)(r * SK_SLOTS + 2 * SK_UNROLL + u * SK_TOKEN_TILES + t) * slot_stride;
        cp_async_16_ca(x_slot, in && token[t] ? x_at[t] + off : a, in && token[t]);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int r = 0; r < SK_RING - 1; r++) issue(r, s_begin + r * s_stride);
  int r_read = 0, r_write = SK_RING - 1;
  for (int s0 = s_begin; s0 < s_end; s0 += s_stride) {
    // Groups committed so far: SK_RING - 1 + the turns before this one; this turn's has landed when at most
    // SK_RING - 2 are still in flight.
    cp_async_wait<SK_RING - 2>();
    uint4 lo[SK_UNROLL], hi[SK_UNROLL], x[SK_UNROLL][SK_TOKEN_TILES];
    const uint4* turn = sk_ring + r_read * SK_SLOTS * SK_THREADS + threadIdx.x;
#pragma unroll
    for (int u = 0; u < SK_UNROLL; u++) {
      lo[u] = turn[(2 * u) * SK_THREADS];
      hi[u] = turn[(2 * u + 1) * SK_THREADS];
#pragma unroll
      for (int t = 0; t < SK_TOKEN_TILES; t++) x[u][t] = turn[(2 * SK_UNROLL + u * SK_TOKEN_TILES + t) * SK_THREADS];
    }
    // The turn SK_RING - 1 ahead goes into the slots read one turn ago (their values are in registers by now).
    issue(r_write, s0 + (SK_RING - 1) * s_stride);
    sk_mma_turn(acc, lo, hi, x);
    r_read = r_read + 1 == SK_RING ? 0 : r_read + 1;
    r_write = r_write + 1 == SK_RING ? 0 : r_write + 1;
  }
  // The turns issued past the end wrote zeros into the ring: none may land after the CTA has left.
  cp_async_wait<0>();
#else
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int s0 = s_begin; s0 < s_end; s0 += s_stride) {
    uint4 lo[SK_UNROLL], hi[SK_UNROLL], x[SK_UNROLL][SK_TOKEN_TILES];
#pragma unroll
    for (int u = 0; u < SK_UNROLL; u++) {
      const int k = (s0 + u) * 32 + 8 * q;  // K is a multiple of 8: a chunk is wholly in or wholly out
      const bool in = s0 + u < s_end && k < K;
      const long long off = (long long)(s0 + u) * 32;
#if SK_EVICT_FIRST
      lo[u] = in && row_lo ? ld_global_nc_v4_hint(w_lo + off, policy) : zero;
      hi[u] = in && row_hi ? ld_global_nc_v4_hint(w_hi + off, policy) : zero;
#else
      lo[u] = in && row_lo ? ld_global_nc_v4(w_lo + off) : zero;
      hi[u] = in && row_hi ? ld_global_nc_v4(w_hi + off) : zero;
#endif
#pragma unroll
      for (int t = 0; t < SK_TOKEN_TILES; t++)
        x[u][t] = in && token[t] ? ld_global_nc_v4_cached(x_at[t] + off) : zero;
    }
    sk_mma_turn(acc, lo, hi, x);
  }
#endif

  // The warps' partial sums meet in shared memory; thread i of the CTA then sums entry i (and i + SK_THREADS ...)
  // over the warps. Entry (t, r, lane) is accumulator r of that lane: weight row g (+8 for r >= 2), token
  // 8t + 2q + (r & 1).
#pragma unroll
  for (int t = 0; t < SK_TOKEN_TILES; t++)
#pragma unroll
    for (int r = 0; r < 4; r++) partial[warp][t][r][lane] = acc[t][r];
  __syncthreads();
  for (int e = threadIdx.x; e < SK_TOKEN_TILES * 4 * 32; e += SK_THREADS) {
    const int t = e / 128, r = (e / 32) % 4, l = e % 32;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < SK_SPLIT; w++) sum += partial[w][t][r][l];
    const int n = row0 + l / 4 + (r >= 2 ? 8 : 0);
    const int m = 8 * t + 2 * (l % 4) + (r & 1);
    if (n < N && m < M) c[(long long)m * ldc + n] = (u16)(pack2(sum, 0.f) & 0xFFFFu);
  }
}
