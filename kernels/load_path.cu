// load_path.cu: the GEMM's TMA load pipeline and nothing else. Same grid (one CTA per 128x128 output tile), same
// stage ring (LP_STAGES stages of 128 rows x 64 fp16 of A and of B, 32 KB), no MMA: one consumer warp waits for each
// stage and releases it. What differs between variants is only how the bytes land:
//   LP_SWIZZLE     0 (none), 32, 64 or 128: TMA's swizzle of the shared-memory rows
//   LP_BOX_BYTES   width of one TMA box in bytes (16 ... 128): a 128-byte K slice of a row is 128 / LP_BOX_BYTES boxes
//   LP_SAME_TILE   every CTA loads tile (0, 0) instead of its own (L2 traffic nearly vanishes)
//   LP_CHECKSUM    the consumer sums every staged 16-bit word (for the check launch only: it reads shared memory)

#define LP_ROWS 128
#define LP_OPERAND_BYTES (LP_ROWS * 128)
#define LP_STAGE_BYTES (2 * LP_OPERAND_BYTES)
#define LP_BOXES (128 / LP_BOX_BYTES)
#define LP_BOX_ELEMS (LP_BOX_BYTES / 2)
static_assert(1024 + LP_STAGES * LP_STAGE_BYTES + 16 * LP_STAGES <= SMEM_BYTES, "shared memory plan exceeds SMEM_BYTES");

// One operand's 128 rows x 64 columns, as LP_BOXES boxes side by side in K; each box lands as a contiguous
// 128-row block (the 16-byte case is the core-matrix layout of rungs 1-3).
__device__ __forceinline__ void load_operand(u32 dst, const TmaDesc* map, u32 bar, int k0, int row0) {
#pragma unroll
  for (int j = 0; j < LP_BOXES; j++) tma_load_2d(dst + j * LP_ROWS * LP_BOX_BYTES, map, bar, k0 + j * LP_BOX_ELEMS, row0);
}

extern "C" __global__ void __launch_bounds__(64, 1)
    load_path_kernel(const __grid_constant__ TmaDesc tmA, const __grid_constant__ TmaDesc tmB, int M, int N, int K,
                     u64* checksum, HangRecord* rec) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const u32 smem = (smem_u32(smem_raw) + 1023) & ~1023u;
  const u32 full_bar = smem + LP_STAGES * LP_STAGE_BYTES;
  const u32 empty_bar = full_bar + 8 * LP_STAGES;
  const int k_blocks = K / 64;
#if LP_SAME_TILE
  const int m_row = 0, n_row = 0;
  (void)N;
#else
  const int tiles_n = N / LP_ROWS;
  const int m_row = (blockIdx.x / tiles_n) * LP_ROWS, n_row = (blockIdx.x % tiles_n) * LP_ROWS;
#endif
  (void)M;
  if (threadIdx.x == 0) {
    for (int s = 0; s < LP_STAGES; s++) {
      mbar_init(full_bar + 8 * s, 1);
      mbar_init(empty_bar + 8 * s, 1);
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // Producer: the same ring protocol as the GEMM (empty barriers start released).
    for (int kb = 0; kb < k_blocks; kb++) {
      const u32 s = kb % LP_STAGES, lap = kb / LP_STAGES;
      mbar_wait(empty_bar + 8 * s, (lap & 1) ^ 1, SITE(ROLE_PRODUCER, BAR_EMPTY, s), rec);
      mbar_arrive_expect_tx(full_bar + 8 * s, LP_STAGE_BYTES);
      const u32 stage = smem + s * LP_STAGE_BYTES;
      load_operand(stage, &tmA, full_bar + 8 * s, kb * 64, m_row);
      load_operand(stage + LP_OPERAND_BYTES, &tmB, full_bar + 8 * s, kb * 64, n_row);
    }
  } else if (threadIdx.x >= 32) {
    // Consumer warp: wait for each stage, optionally checksum it, release it.
    const int lane = threadIdx.x % 32;
#if LP_CHECKSUM
    u64 sum = 0;
#endif
    for (int kb = 0; kb < k_blocks; kb++) {
      const u32 s = kb % LP_STAGES;
      mbar_wait(full_bar + 8 * s, (kb / LP_STAGES) & 1, SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
#if LP_CHECKSUM
      for (u32 off = lane * 4; off < LP_STAGE_BYTES; off += 128) {
        u32 w;
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w) : "r"(smem + s * LP_STAGE_BYTES + off));
        sum += (w & 0xFFFF) + (w >> 16);
      }
      __syncwarp();
#endif
      if (lane == 0) mbar_arrive(empty_bar + 8 * s);
    }
#if LP_CHECKSUM
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(checksum), "l"(sum) : "memory");
#else
    (void)checksum;
#endif
  }
}
