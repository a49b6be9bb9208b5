// gemm.cu: the ladder's one GEMM kernel. C[M,N] = A[M,K] * B[N,K]^T, A and B row-major (K-major), C row-major,
// fp16 or bf16 in, fp32 accumulation, output in the input type; or FP8 e4m3 in (AB_E4M3), dequantized by the scales
// of the problem's scheme (SCALES), a bf16 output.
//
// Every ladder step is a compile-time switch, declared in harness/kernel/switches.rs (its defines come first):
//   STAGES            shared-memory ring depth (rung 1: 1, a single buffer)
//   WARPSPEC          a producer warpgroup issues TMA, consumer warpgroups issue wgmma
//   SWIZZLE, TILE_K   shared-memory layout: 0 = core-matrix layout (8-row x 16-byte blocks), or 32/64/128-byte swizzle;
//                     k-depth of a stage (swizzled: one or more swizzle spans, a TMA box each)
//   EPILOGUE          1 (tma): accumulators staged in shared memory and written by TMA stores; 0 (direct): stores
//                     from registers
//   CLUSTER           2 or 4: a 2x1 or 4x1 cluster; the B tile is split between the CTAs and multicast to all
//   CONSUMERS, WG_M, BN, SETMAXNREG   consumer warpgroups, rows each one owns, tile width, register rebalancing
//   SPLIT_N, WG_N     1: the consumers split the tile's columns instead of its rows (each owns all WG_M rows and
//                     WG_N = BN / CONSUMERS columns); 0: WG_N = BN
//   PINGPONG          the consumers take alternate tiles so one's epilogue overlaps the other's mainloop
//   EPI_BUFFERS       the TMA epilogue's 64x64 staging chunks a consumer: 2 (double-buffered) or 4 (H99)
//   EARLY_TURN        1 (with PINGPONG): the turn passes once a tile's last MMAs are issued (CUTLASS's order), not
//                     once they are complete (H98)
//   MMA_WAIT          1: wait for every MMA of a k-block before releasing its stage (default: one batch in flight)
//   STMATRIX          the TMA epilogue's staging written with stmatrix (four 8x8 blocks per instruction)
//   CONSUMER_REGS     registers per consumer thread under setmaxnreg: 232 (producer 40) or 240 (producer 24)
//   PDL               1: launched with programmatic stream serialization: set-up overlaps the previous kernel, and
//                     every thread waits for it (griddepcontrol.wait) before its first global memory access
//   STREAMK           0: whole tiles round robin; 1: every tile's k-blocks shared evenly by the clusters (stream-K);
//                     2: whole tiles, then the last partial wave plus one full wave shared as in 1 (hybrid);
//                     3: as 2, each share reordered so every cluster walks k in step (H95): its whole tiles, then
//                     the head of its last tile (a partial), then the tail of its first (the owner)
//   SWAP_AB           1: the host computes C^T = B A^T: the weights (B) are this kernel's A operand, filling wgmma's
//                     64-row side, the tokens its B operand (BN = 8..256), and the direct epilogue stores transposed
//   EVICT_FIRST       1: the weights' TMA loads carry an L2 evict-first policy (read once, they leave L2 first)
//   TILE_ORDER        1 (hilbert): tiles are taken in the order of tile_order_table, a Hilbert curve over the tile
//                     grid the host writes into the module after loading it; 0 (raster): the grouped raster computed
//                     here
//   EARLY_WEIGHTS     1 (with PDL): the first ring lap's weights are loaded before griddepcontrol.wait; weights are
//                     read-only in a server, the activations, output and workspace still wait for the previous kernel
//   SWAP_STORE        1 (with SWAP_AB): the direct epilogue transposes each 8x8 block in registers (movmatrix) and
//                     stores 4-byte pairs along C's rows; 0: single 2-byte elements
//   MULTICAST         1 (a; with CLUSTER = 2): the cluster's CTAs take adjacent tiles along N with the same rows and
//                     share the A tile instead (each loads half of it and multicasts it to both), as cuBLAS's 1x2
//                     clusters; 0: adjacent along M, sharing B
//   WAIT_SCOPE        1 (cta): every mbarrier wait acquires at CTA scope, as CUTLASS's cluster barriers do (a peer's
//                     multicast and remote arrives included); 0: at cluster scope (primitives.cuh, H49)
//   WAIT_SUSPEND      1: every mbarrier wait passes a 10 ms suspend-time hint, as CUTLASS's, so the thread may sleep
//                     until the phase completes; 0: it polls with the hardware's default limit (H51)
//   KB_PER_WAIT       consumers take this many ring positions (k-blocks) per batch of MMAs: one fence, commit,
//                     wait and release round per batch instead of per k-block (H60); 1 by default
//   TMAP_PREFETCH     1: the producer thread prefetches the TMA descriptors first thing (under PDL, while the
//                     previous kernel still runs), so the first loads do not fetch them on demand (H57)
//   DESC_ADVANCE      1: each consumer builds its operands' shared-memory descriptors once, from a consumer index
//                     broadcast from lane 0 (so they stay in uniform registers), and advances them by constants per
//                     k-step and per stage; its ring stage and phase are counted, not divided out (H64)
//   K_ROTATE          1: each work item takes its k-blocks from an offset spread evenly over the tiles (wrapping
//                     round), so the clusters' loads in flight sit at different columns of the weight rows instead
//                     of all at the same one (H83); 0: from its first k-block
//   PLACE_PROBE       instrumentation: each CTA's thread 0 writes the SM it runs on into place_probe (H142)
//   CLOCK_PROBE       instrumentation: CTA 0's last thread writes its SM's cycles and the global timer's nanoseconds
//                     from its start to its end into clock_probe: the SM clock the launch actually ran at
//   PROMOTE           FP8: every PROMOTE k-blocks the wgmma partial sums are added into a second set of fp32
//                     accumulators (two-level accumulation, as DeepGEMM; under block scales, dequantized on the way);
//                     0: one set, the tensor core's own accumulation throughout
//   SCALE_LOADS       FP8 block scales: 1 (stage): the producer copies A's scales of each k-block's tile rows into a slot
//                     of their own beside the ring, on the stage's barrier (as DeepGEMM); 0 (ldg): every consumer
//                     thread reads its rows' scales from global memory
//   SCALE_PREFETCH    FP8 block scales: 1: the scales of the next k-block are loaded one k-block ahead (B's, and A's
//                     under SCALE_LOADS 0), so each load has a whole k-block's loop to land (H136); 0: each k-block's
//                     loads are issued with its own MMAs
//   ONE_B_BLOCK       FP8 block scales: 1: a warpgroup's WG_N columns (WG_N divides 128, from a multiple of WG_N) lie
//                     in one 128-column scale block, so B's scale is one value a k-block and the promotion one product
//                     a row (H138); 0: a scale chosen per eight columns, with a test of N, at every k-block
//   PROMOTE_OVERLAP   FP8, with PROMOTE 1: k-block kb's MMAs accumulate into one of two sets of partial sums while
//                     k-block kb-1's set is promoted, so the promotion's FMAs run under the tensor core's work
//                     instead of between k-blocks with the pipe drained (H156); 0: one set, promoted after a wait
//                     for every MMA
//   PROMOTE_STAGGER   FP8, with PROMOTE >= 2 and two consumers on one tile: the second consumer's windows start
//                     PROMOTE/2 k-blocks later (its first window is that short), so while one consumer waits for its
//                     MMAs and promotes, the other's keep the tensor cores busy (H163); 0: both at the same k-block
//   PROMOTE_WINDOWS   FP8, with PROMOTE: 1: a loop over windows, each an inner loop over its k-blocks but the last
//                     (one batch of MMAs left in flight, no partial sum read) then the last, waited for and promoted
//                     (H165); 0: one loop over the k-blocks with the window's end a branch inside it, after which
//                     ptxas waits for every MMA at every k-block (H164's SASS)
//   STREAM_ONLY       isolation (H56): the producers release each stage once its previous lap's bytes have landed
//                     (their full barriers, in every CTA of the cluster) instead of the consumers; the consumers
//                     do nothing and nothing reads the data
// The tile loop below always runs; a non-persistent launch simply gives each CTA one tile.
// Any M >= 1, and N and K multiples of 8 (TMA's 16-byte row strides): the tile counts are rounded up, the tensor
// maps have the problem's true shape, so loads past M, N or K land as zeros and TMA stores past them are dropped;
// the direct epilogue checks each row and column pair itself.
// Isolation switches (LOADS, MMA) and fault injections (FAULT_*) reuse the same code;
// BOUNDED makes every mbarrier wait give up after HANG_TIMEOUT_NS and report where it hung, and
// SPIN (calibration) spins before each tile's epilogue.

// The tile geometry (BM, THREADS, A_STAGE_BYTES, B_STAGE_BYTES, STAGE_BYTES, EPI_BYTES, SMEM_BYTES) comes from
// harness/kernel/config.rs, computed there once; only what follows from it is derived here.
#define WG_ATOMS (WG_M / 64)
#define EPI_CHUNK_BYTES (64 * 64 * 2)
static_assert(EPI_BYTES == (EPILOGUE ? CONSUMERS * EPI_BUFFERS * EPI_CHUNK_BYTES : 0), "epilogue staging size");
// FP8 block scales carried by the stages (SCALE_LOADS): BM fp32 scales of A a stage, in SCALE_BYTES after the
// epilogue staging (the ring's stages stay 1024-byte multiples for the swizzle).
#define SCALE_STAGE_BYTES (SCALE_LOADS ? BM * 4 : 0)
#define SCALE_OFFSET (STAGES * STAGE_BYTES + EPI_BYTES)
#define BAR_OFFSET (SCALE_OFFSET + SCALE_BYTES)
#define NUM_BARRIERS (2 * STAGES + 2)
static_assert(1024 + BAR_OFFSET + 8 * NUM_BARRIERS <= SMEM_BYTES, "shared memory plan exceeds SMEM_BYTES");

// The operand layout's descriptor fields (DESC_LBO, DESC_SBO, DESC_LAYOUT) and the k-step (K_STEP_BYTES)
// come from harness/kernel/config.rs (OperandLayout), where they are tested against the layouts verified on the H200.
// Both layouts keep row r of an operand tile at byte r * ROW_BYTES (in 8-row groups for the core-matrix one). A
// swizzled k-block wider than one swizzle span is K_BOXES boxes side by side along K, each BM (or BN) rows of one
// span: more contiguous bytes of every row are requested at once.
// Bytes of an operand element: 2 (fp16, bf16) or 1 (FP8). A wgmma k-step is
// MMA_K elements, 32 bytes of a row either way.
#ifdef AB_E4M3
#define AB_BYTES 1
#else
#define AB_BYTES 2
#endif
#define K_BOXES (SWIZZLE ? TILE_K * AB_BYTES / SWIZZLE : 1)
#define ROW_BYTES (TILE_K * AB_BYTES / K_BOXES)
#define K_STEPS_PER_BOX (TILE_K / MMA_K / K_BOXES)
// Unswizzled, a core matrix is 8 rows of 16 bytes: CORE_K elements of a row.
#define CORE_K (16 / AB_BYTES)

// Epilogue-only isolation (neither loads nor MMAs) skips the mainloop altogether.
#if LOADS || MMA
#define MAINLOOP_K_BLOCKS k_blocks
#define ITEM_K_END(w) ((w).k_end)
#else
#define MAINLOOP_K_BLOCKS 0
#define ITEM_K_END(w) ((w).k_begin)
#endif

// setmaxnreg: what the consumers take, the producer gives (384 threads x 168 registers = the 64K register file).
#define PRODUCER_REGS (CONSUMER_REGS == 240 ? 24 : 40)

#if STAGES > 1 && !MMA_WAIT
#define MMA_IN_FLIGHT 1
#else
#define MMA_IN_FLIGHT 0
#endif

// Wait sites are only compared and printed; reading which barrier hung needs no more than this.
#define STAGE_SITE(role, kind, s) SITE(role, kind, s)

#if CLOCK_PROBE
// Cycles and nanoseconds of CTA 0's last thread over its lifetime, written by every launch (read by the host).
__device__ u64 clock_probe[2];
#endif

#if PLACE_PROBE
// The SM each CTA of the last launch ran on, by CTA index (H142: which SMs a grid under one wave lands on), read
// by the host after a round; CTAs past its end are not recorded.
#define PLACE_PROBE_CTAS 1024
__device__ u64 place_probe[PLACE_PROBE_CTAS];
#endif

#ifdef AB_E4M3
// FP8: the accumulators hold sums of products of the FP8 codes; the output is their dequantized value. SCALES picks
// how (the problem's scheme, harness/kernel/problem.rs): 0, per tensor; 1, per row of A and of B; 2, DeepSeek-V3's
// 1x128 scales of A and 128x128 of B, applied as each k-block is promoted (below). The host writes the scales (or
// where they are) before the first launch.
// Fragment layout of m64nN: warp w, lane l holds rows w*16 + l/4 (+8), columns 8j + 2*(l%4) (+1).
#if SCALES == 0
// The product of A's and B's per-tensor scales.
__device__ float ab_scale;
__device__ __forceinline__ void scale_accumulators(float (&acc)[WG_ATOMS][WG_N / 2], int, int, int, int) {
  const float s = ab_scale;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int i = 0; i < WG_N / 2; i++) acc[a][i] *= s;
}
#elif SCALES == 1
// One scale per row of this kernel's A (M of them) and per row of its B (N): under swap-AB the host hands the
// problem's B scales as row_scales. The host pads both with zeros past the last whole tile, so rows and columns past
// M and N (never stored) read without a bound check.
__device__ const float* row_scales;
__device__ const float* col_scales;
// Atom a's columns 8 j_begin .. 8 j_end of the tile at (row0, col0), dequantized: the row scales first (two), then
// the column scales a pair at a time.
__device__ __forceinline__ void scale_rows_and_columns(float (&acc)[WG_ATOMS][WG_N / 2], int a, int j_begin,
                                                       int j_end, int row0, int col0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int r = row0 + a * 64 + warp * 16 + lane / 4;
  const float rs[2] = {__ldg(row_scales + r), __ldg(row_scales + r + 8)};
#pragma unroll
  for (int j = j_begin; j < j_end; j++) {
    const float2 cs = __ldg((const float2*)(col_scales + col0 + j * 8 + 2 * (lane % 4)));
#pragma unroll
    for (int h = 0; h < 2; h++) {
      acc[a][4 * j + 2 * h] *= rs[h] * cs.x;
      acc[a][4 * j + 2 * h + 1] *= rs[h] * cs.y;
    }
  }
}

// The TMA epilogue scales each 64-column chunk as it stages it (epilogue_tma): scaling the whole tile at once here
// held too many scales beside the accumulators and spilled rung 10's registers.
__device__ __forceinline__ void scale_accumulators(float (&acc)[WG_ATOMS][WG_N / 2], int row0, int col0, int, int) {
#if !EPILOGUE
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++) scale_rows_and_columns(acc, a, 0, WG_N / 8, row0, col0);
#else
  (void)acc, (void)row0, (void)col0;
#endif
}
#else
// Block scales: A's [K/128][M] (a token's scales one per 128 k-elements, M-major as cuBLASLt takes them), B's
// [ceil(N/128)][K/128 rounded up to a multiple of 4] (one per 128x128 block, rows padded as cuBLASLt reads them). Each k-block of 128 is one scale block: promote_partials
// dequantizes its partial sums as it adds them. The accumulators leave the mainloop dequantized. All scales are
// read through the read-only path (__ldg): nothing writes them while a kernel runs.
__device__ const float* a_block_scales;
__device__ const float* b_block_scales;
// The two pointers, read once a tile into registers: read in the k-block loop, each scale load waited on a reload
// of its pointer from global memory (the loop's asm volatile "memory" clobbers make every read of a __device__
// variable a new load; 8fb4f1b's SASS, H130).
struct BlockScalePtrs {
  const float* a;
  const float* b;
};
__device__ __forceinline__ BlockScalePtrs block_scale_ptrs() { return {a_block_scales, b_block_scales}; }
__device__ __forceinline__ void scale_accumulators(float (&)[WG_ATOMS][WG_N / 2], int, int, int, int) {}
#endif
#endif

#if PROMOTE
// Two-level accumulation: the k-blocks of a promotion window accumulate in `part` (wgmma's own FP8 accumulation),
// then `part` is added into `acc` in fp32; under block scales, dequantized on the way by the scales of the window's
// k-block, loaded while its MMAs run.
#if SCALES != 2
struct BlockScalePtrs {};
__device__ __forceinline__ BlockScalePtrs block_scale_ptrs() { return {}; }
#endif

struct PromoteScales {
#if SCALES == 2
  float a[WG_ATOMS][2];
  float b[WG_N / 8];
#endif
};

// The scales of one k-block as loaded, before B's are spread over this thread's columns.
// The tile's columns [col0, col0 + WG_N) meet at most B_SPAN 128-column scale blocks: one load each, where there
// was one for every eight columns (16 a k-block at WG_N = 128, all but one or two the same scale; H130).
struct ScaleLoads {
#if SCALES == 2
#if ONE_B_BLOCK
  static_assert(128 % WG_N == 0, "one_b_block=1 needs WG_N dividing 128");
  static constexpr int B_SPAN = 1;
#else
  static constexpr int B_SPAN = (WG_N + 127) / 128 + 1;
#endif
  float a[WG_ATOMS][2];
  float b_blocks[B_SPAN];
#endif
};

// A's scales of k-block kb (in K's order) for this thread's rows of the tile at row0; with SCALE_LOADS, from the
// stage's slot `slot`, whose first row is the tile's row row0 - local_row0.
__device__ __forceinline__ void load_a_scales(ScaleLoads& l, const BlockScalePtrs& ptrs, int row0, int M, int kb,
                                              u32 slot, int local_row0) {
#if SCALES == 2
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int local = a * 64 + warp * 16 + lane / 4 + h * 8;
#if SCALE_LOADS
      // Rows past M hold what the copy brought (never stored).
      (void)M;
      asm volatile("ld.shared.f32 %0, [%1];" : "=f"(l.a[a][h]) : "r"(slot + 4 * (local_row0 + local)));
#else
      (void)slot, (void)local_row0;
      const int r = row0 + local;
      l.a[a][h] = r < M ? __ldg(ptrs.a + (size_t)kb * M + r) : 0.f;
#endif
    }
#else
  (void)l, (void)ptrs, (void)row0, (void)M, (void)kb, (void)slot, (void)local_row0;
#endif
}

// B's scales of k-block kb for the 128-column blocks the tile's columns from col0 meet.
__device__ __forceinline__ void load_b_scales(ScaleLoads& l, const BlockScalePtrs& ptrs, int col0, int N, int kb,
                                              int k_blocks) {
#if SCALES == 2
  const int first_block = col0 / 128;
  // B's rows of k-blocks are padded to a multiple of 4 (cuBLASLt's layout, harness/measure/fp8.rs).
  const size_t b_row = (size_t)((k_blocks + 3) & ~3);
#pragma unroll
  for (int i = 0; i < ScaleLoads::B_SPAN; i++) {
    const int c = (first_block + i) * 128;
    l.b_blocks[i] = c < N && c < col0 + WG_N ? __ldg(ptrs.b + (size_t)(first_block + i) * b_row + kb) : 0.f;
  }
#else
  (void)l, (void)ptrs, (void)col0, (void)N, (void)kb, (void)k_blocks;
#endif
}

// The loaded scales as the promotion reads them: A's per row, B's per eight columns.
__device__ __forceinline__ PromoteScales spread_scales(const ScaleLoads& l, int col0, int N) {
  PromoteScales s;
#if SCALES == 2
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int h = 0; h < 2; h++) s.a[a][h] = l.a[a][h];
#if ONE_B_BLOCK
  // One block holds every column of the warpgroup; columns past N hold zero partial sums (TMA fills B's rows past
  // N with zeros), so they need no zero scale.
  (void)col0, (void)N;
#pragma unroll
  for (int j = 0; j < WG_N / 8; j++) s.b[j] = l.b_blocks[0];
#else
  const int first_block = col0 / 128;
#pragma unroll
  for (int j = 0; j < WG_N / 8; j++) {
    // Eight columns from a multiple of 8 share one 128-column block; chosen by selects (an index into b_blocks
    // computed at run time would put it in local memory).
    const int c = col0 + j * 8;
    float b = l.b_blocks[0];
#pragma unroll
    for (int i = 1; i < ScaleLoads::B_SPAN; i++)
      if (c / 128 == first_block + i) b = l.b_blocks[i];
    s.b[j] = c < N ? b : 0.f;
  }
#endif
#else
  (void)l, (void)col0, (void)N;
#endif
  return s;
}

// The scales of k-block kb (in K's order) for this thread's rows and columns of the tile at (row0, col0).
__device__ __forceinline__ PromoteScales promote_scales(const BlockScalePtrs& ptrs, int row0, int col0, int M, int N,
                                                        int kb, int k_blocks, u32 slot, int local_row0) {
  ScaleLoads l;
  load_a_scales(l, ptrs, row0, M, kb, slot, local_row0);
  load_b_scales(l, ptrs, col0, N, kb, k_blocks);
  return spread_scales(l, col0, N);
}

__device__ __forceinline__ void promote_partials(float (&acc)[WG_ATOMS][WG_N / 2],
                                                 const float (&part)[WG_ATOMS][WG_N / 2], const PromoteScales& s) {
#if SCALES == 2
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[a][4 * j + e] += part[a][4 * j + e] * (s.a[a][e / 2] * s.b[j]);
#else
  (void)s;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int i = 0; i < WG_N / 2; i++) acc[a][i] += part[a][i];
#endif
}
#endif

#if TILE_ORDER
// Tile t's coordinates as tm | tn << 16, in Hilbert-curve order (harness/kernel/tile_order.rs); the host has
// checked that the tiles fit and writes the table before the first launch.
__device__ u32 tile_order_table[65536];
#endif

// Tile order: groups of RASTER tile rows are walked down M before stepping along N, so neighbouring CTAs share
// B tiles in L2. The host has checked that the group divides the tile rows (a partial last tile counts as one).
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
#if TILE_ORDER
  (void)tiles_m;
  (void)tiles_n;
  (void)group;
  const u32 v = tile_order_table[t];
  tm = (int)(v & 0xFFFF);
  tn = (int)(v >> 16);
#else
  const int per_group = group * tiles_n;
  const int g = t / per_group;
  const int in_group = t - g * per_group;
  tm = g * group + in_group % group;
  tn = in_group / group;
#endif
}

// One unit of a cluster's work: k-blocks [k_begin, k_end) of one tile (tile index in raster order).
struct Work {
  int tile;
  int k_begin;
  int k_end;
};

// Tiles whose k-blocks are shared between clusters (stream-K); the others are done whole, round robin, first.
__device__ __forceinline__ int stream_k_tiles(int num_tiles, int num_clusters) {
#if STREAMK == 1
  return num_tiles;
#elif STREAMK == 2 || STREAMK == 3
  // The last partial wave plus one full wave: every cluster's share is then more than one tile's k-blocks.
  const int rem = num_tiles % num_clusters;
  return rem == 0 ? 0 : min(num_tiles, rem + num_clusters);
#else
  (void)num_clusters;
  return 0 * num_tiles;
#endif
}

// Cluster c's share of the stream-K iterations (tile-major k-blocks of the shared tiles): [begin, end).
__device__ __forceinline__ long long stream_k_begin(int c, int num_clusters, long long iters) {
  return iters * c / num_clusters;
}

// The i-th unit of cluster c's work, or false when it has none left. Whole tiles come first; then the cluster's
// stream-K share, which starts anywhere in a tile (a partial, handed to the tile's owner) and ends anywhere in a
// tile (the owner: it holds that tile's first k-block and adds the later clusters' partials to its own).
__device__ __forceinline__ bool work_item(int i, int c, int num_clusters, int num_tiles, int k_blocks, Work& w) {
  const int shared = stream_k_tiles(num_tiles, num_clusters);
  const int whole = num_tiles - shared;
  const int my_whole = c < whole ? (whole - 1 - c) / num_clusters + 1 : 0;
  if (i < my_whole) {
    w.tile = c + i * num_clusters;
    w.k_begin = 0;
    w.k_end = k_blocks;
    return true;
  }
#if STREAMK
  const long long iters = (long long)shared * k_blocks;
  const long long begin = stream_k_begin(c, num_clusters, iters), end = stream_k_begin(c + 1, num_clusters, iters);
  const int j = i - my_whole;
#if STREAMK == 3
  // H95: the share [begin, end) spans at least one tile's k-blocks (the grid never exceeds the tiles, so the shared
  // tiles number at least the clusters): the tail [a, K) of its first tile when it starts inside one, whole tiles,
  // the head [0, b) of its last when it ends inside one. Whole tiles first, then the head, then the tail: every
  // cluster starts each unit at k-block 0 or at a, which is 2K - L (mod K) from its neighbours' units.
  const int t0 = (int)(begin / k_blocks), a = (int)(begin - (long long)t0 * k_blocks);
  const int t1 = (int)((end - 1) / k_blocks), b = (int)(end - (long long)t1 * k_blocks);
  const int first_whole = a > 0 ? t0 + 1 : t0, n_whole = (b < k_blocks ? t1 - 1 : t1) - first_whole + 1;
  const bool head = b < k_blocks, tail = a > 0;
  if (j < n_whole) {
    w.tile = whole + first_whole + j;
    w.k_begin = 0;
    w.k_end = k_blocks;
  } else if (head && j == n_whole) {
    w.tile = whole + t1;
    w.k_begin = 0;
    w.k_end = b;
  } else if (tail && j == n_whole + (int)head) {
    w.tile = whole + t0;
    w.k_begin = a;
    w.k_end = k_blocks;
  } else {
    return false;
  }
  return true;
#else
  const long long g = j == 0 ? begin : (begin / k_blocks + j) * k_blocks;
  if (g >= end) return false;
  const int t = (int)(g / k_blocks);
  w.tile = whole + t;
  w.k_begin = (int)(g - (long long)t * k_blocks);
  w.k_end = (int)min((long long)k_blocks, end - (long long)t * k_blocks);
  return true;
#endif
#else
  return false;
#endif
}

#if STREAMK
// A consumer's partial accumulators in its workspace slot, laid out as the fragments are (thread-fastest float4s,
// so every warp writes and reads whole 512-byte lines).
#define SLOT_FLOATS (128 * WG_ATOMS * (WG_N / 2))

__device__ __forceinline__ void store_partial(const float (&acc)[WG_ATOMS][WG_N / 2], float* slot) {
  const int t = threadIdx.x % 128;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++)
      st_global_cg_f4(slot + ((a * (WG_N / 8) + j) * 128 + t) * 4, acc[a][4 * j], acc[a][4 * j + 1], acc[a][4 * j + 2],
                      acc[a][4 * j + 3]);
}

__device__ __forceinline__ void add_partial(float (&acc)[WG_ATOMS][WG_N / 2], const float* slot) {
  const int t = threadIdx.x % 128;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
      float x, y, z, u;
      ld_global_cg_f4(slot + ((a * (WG_N / 8) + j) * 128 + t) * 4, x, y, z, u);
      acc[a][4 * j] += x;
      acc[a][4 * j + 1] += y;
      acc[a][4 * j + 2] += z;
      acc[a][4 * j + 3] += u;
    }
}
#endif

// The weights are B, or A when the host swapped the operands (SWAP_AB); EVICT_FIRST puts an L2 policy on their loads.

// Loads one k-block of A (BM rows) into stage s.
__device__ __forceinline__ void load_a(const TmaDesc* tmA, u32 stage_addr, u32 bar, int m_row, int k0, u64 policy) {
  (void)policy;
#if SWIZZLE
#pragma unroll
  for (int i = 0; i < K_BOXES; i++) {
#if EVICT_FIRST && SWAP_AB
    tma_load_2d_hint(stage_addr + i * BM * ROW_BYTES, tmA, bar, k0 + i * (ROW_BYTES / AB_BYTES), m_row, policy);
#else
    tma_load_2d(stage_addr + i * BM * ROW_BYTES, tmA, bar, k0 + i * (ROW_BYTES / AB_BYTES), m_row);
#endif
  }
#else
  // Core-matrix layout through a 4-D map {CORE_K elements, 8 rows, K/CORE_K slices, rows/8 groups}: each 8-row
  // group holds its K slices side by side, so a contiguous range of groups is a contiguous range of rows.
  tma_load_4d(stage_addr, tmA, bar, 0, 0, k0 / CORE_K, m_row / 8);
#endif
}

#if MULTICAST
// Loads this CTA's BM / CLUSTER rows of one k-block of A and multicasts them into the same place of both CTAs'
// stage s: the cluster shares the A tile (swizzled layout only: a half is whole 8-row swizzle atoms).
__device__ __forceinline__ void load_a_shared(const TmaDesc* tmA, u32 stage_addr, u32 bar, int m_row, int k0, u32 rank,
                                              u64 policy) {
  (void)policy;
  const int half = BM / CLUSTER;
#pragma unroll
  for (int i = 0; i < K_BOXES; i++) {
    const u32 box = stage_addr + i * BM * ROW_BYTES + rank * half * ROW_BYTES;
    const int k = k0 + i * (ROW_BYTES / AB_BYTES);
#if EVICT_FIRST && SWAP_AB
    tma_load_2d_multicast_hint(box, tmA, bar, k, m_row + rank * half, (u16)((1 << CLUSTER) - 1), policy);
#else
    tma_load_2d_multicast(box, tmA, bar, k, m_row + rank * half, (u16)((1 << CLUSTER) - 1));
#endif
  }
}
#endif

// Loads one k-block of B (BN rows, or this CTA's half of them when multicast) into stage s.
__device__ __forceinline__ void load_b(const TmaDesc* tmB, u32 stage_addr, u32 bar, int n_col, int k0, u32 rank,
                                       u64 policy) {
  (void)policy;
  (void)rank;
#if SWIZZLE
#pragma unroll
  for (int i = 0; i < K_BOXES; i++) {
    const u32 box = stage_addr + A_STAGE_BYTES + i * BN * ROW_BYTES;
    const int k = k0 + i * (ROW_BYTES / AB_BYTES);
#if CLUSTER > 1 && !MULTICAST
    const int half = BN / CLUSTER;
#if EVICT_FIRST && !SWAP_AB
    tma_load_2d_multicast_hint(box + rank * half * ROW_BYTES, tmB, bar, k, n_col + rank * half,
                               (u16)((1 << CLUSTER) - 1), policy);
#else
    tma_load_2d_multicast(box + rank * half * ROW_BYTES, tmB, bar, k, n_col + rank * half, (u16)((1 << CLUSTER) - 1));
#endif
#elif EVICT_FIRST && !SWAP_AB
    tma_load_2d_hint(box, tmB, bar, k, n_col, policy);
#else
    tma_load_2d(box, tmB, bar, k, n_col);
#endif
  }
#else
#if CLUSTER > 1 && !MULTICAST
  const int half = BN / CLUSTER;
  tma_load_4d_multicast(stage_addr + A_STAGE_BYTES + rank * half * ROW_BYTES, tmB, bar, 0, 0, k0 / CORE_K,
                        (n_col + rank * half) / 8, (u16)((1 << CLUSTER) - 1));
#else
  tma_load_4d(stage_addr + A_STAGE_BYTES, tmB, bar, 0, 0, k0 / CORE_K, n_col / 8);
#endif
#endif
}

// The half of a stage that is the weights, or the other half (EARLY_WEIGHTS issues them apart).
__device__ __forceinline__ void load_part(bool weights, const TmaDesc* tmA, const TmaDesc* tmB, u32 stage_addr, u32 bar,
                                          int m_row, int n_col, int k0, u32 rank, u64 policy) {
  if (weights == (bool)SWAP_AB)
#if MULTICAST
    load_a_shared(tmA, stage_addr, bar, m_row, k0, rank, policy);
#else
    load_a(tmA, stage_addr, bar, m_row, k0, policy);
#endif
  else
    load_b(tmB, stage_addr, bar, n_col, k0, rank, policy);
}

#if K_ROTATE
// Where a work item's k-loop starts: an offset into its range proportional to its tile, the same in every CTA of a
// cluster (a multicast stage must hold the same k-block in each). Once per item: it divides in 64 bits.
__device__ __forceinline__ int item_k_rotation(const Work& w, int num_tiles) {
  return (int)((long long)w.tile * (w.k_end - w.k_begin) / num_tiles);
}

// The k-block a work item loads at its kb-th step: the same k-blocks, summed in another order.
__device__ __forceinline__ int item_k_block(const Work& w, int kb, int rotation) {
  const int r = kb + rotation;
  return r >= w.k_end ? r - (w.k_end - w.k_begin) : r;
}
#define ITEM_K_ROTATION(w) const int rotation = item_k_rotation(w, num_tiles)
#define ITEM_K_BLOCK(w, kb) item_k_block(w, kb, rotation)
#else
// Without K_ROTATE the producer's code is textually what it was before the switch existed (the same cubins).
#define ITEM_K_ROTATION(w)
#define ITEM_K_BLOCK(w, kb) (kb)
#endif

// Producer side of one ring position: claim the bytes on the full barrier, then issue the loads.
// STAGE_BYTES is every box in full even when a box reaches past M, N or K: TMA writes the whole bounding box into
// shared memory, the elements outside the tensor set to zero (PTX ISA 5.5.3.3, "Out of Boundary Access"), and
// cp.async.bulk.tensor completes the transaction with the amount of data copied into shared memory. CUTLASS's
// sm90 mainloops rely on the same: their TmaTransactionBytes is the shared-memory tile size, whatever the shape.
__device__ __forceinline__ void fill_stage(const TmaDesc* tmA, const TmaDesc* tmB, u32 stages, u32 full_bar, u32 pos,
                                           int m_row, int n_col, int kb, u32 rank, u64 policy, bool weights_loaded) {
  const u32 s = pos % STAGES;
  const u32 stage_addr = stages + s * STAGE_BYTES, bar = full_bar + 8 * s;
  if (weights_loaded) {
    // EARLY_WEIGHTS: the barrier has claimed the whole stage and the weights are on their way; the rest follows.
    load_part(false, tmA, tmB, stage_addr, bar, m_row, n_col, kb * TILE_K, rank, policy);
    return;
  }
#if !LOADS
  // MMA-only isolation: the first lap loads real data, later laps reuse what is resident.
  if (pos >= STAGES) {
    mbar_arrive(bar);
    return;
  }
#endif
#if FAULT_NO_EXPECT_TX
  mbar_arrive(bar);
#else
  mbar_arrive_expect_tx(bar, STAGE_BYTES + SCALE_STAGE_BYTES);
#endif
#if MULTICAST
  load_a_shared(tmA, stage_addr, bar, m_row, kb * TILE_K, rank, policy);
#else
  load_a(tmA, stage_addr, bar, m_row, kb * TILE_K, policy);
#endif
  load_b(tmB, stage_addr, bar, n_col, kb * TILE_K, rank, policy);
}

// One k-block's MMAs for one consumer warpgroup, issued without a fence or a commit: TILE_K/MMA_K steps, WG_ATOMS m64
// row blocks each.
__device__ __forceinline__ void mma_issue(float (&acc)[WG_ATOMS][WG_N / 2], u32 stage_addr, int a_row0, int b_row0,
                                          bool accumulate) {
#pragma unroll
  for (int kk = 0; kk < TILE_K / MMA_K; kk++) {
    // k-step kk is step kk % K_STEPS_PER_BOX of box kk / K_STEPS_PER_BOX.
    const u32 box = kk / K_STEPS_PER_BOX, step = (kk % K_STEPS_PER_BOX) * K_STEP_BYTES;
    const u64 db =
        smem_desc(stage_addr + A_STAGE_BYTES + (box * BN + b_row0) * ROW_BYTES + step, DESC_LBO, DESC_SBO, DESC_LAYOUT);
#pragma unroll
    for (int a = 0; a < WG_ATOMS; a++) {
      const u64 da = smem_desc(stage_addr + box * BM * ROW_BYTES + (a_row0 + a * 64) * ROW_BYTES + step, DESC_LBO,
                               DESC_SBO, DESC_LAYOUT);
      const u32 scale_d = (accumulate || kk > 0) ? 1u : 0u;
      wgmma_m64nWGN(acc[a], da, db, scale_d);
    }
  }
}

#if DESC_ADVANCE
// mma_issue with the descriptors given: da and db address this consumer's rows of the stage's A and B (box 0, k-step
// 0). A descriptor's address field is the byte address / 16, so an offset within shared memory is added as is.
__device__ __forceinline__ void mma_issue_desc(float (&acc)[WG_ATOMS][WG_N / 2], u64 da, u64 db, bool accumulate) {
#if MMA
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < TILE_K / MMA_K; kk++) {
    const u32 box = kk / K_STEPS_PER_BOX, step = (kk % K_STEPS_PER_BOX) * K_STEP_BYTES;
    const u64 b = db + ((box * BN * ROW_BYTES + step) >> 4);
#pragma unroll
    for (int a = 0; a < WG_ATOMS; a++) {
      const u32 scale_d = (accumulate || kk > 0) ? 1u : 0u;
      wgmma_m64nWGN(acc[a], da + ((box * BM * ROW_BYTES + a * 64 * ROW_BYTES + step) >> 4), b, scale_d);
    }
  }
  wgmma_commit();
#endif
}
#endif

// One k-block of MMAs for one consumer warpgroup, fenced and committed as one batch.
__device__ __forceinline__ void mma_stage(float (&acc)[WG_ATOMS][WG_N / 2], u32 stage_addr, int a_row0, int b_row0,
                                          bool accumulate) {
#if MMA
  wgmma_fence();
  mma_issue(acc, stage_addr, a_row0, b_row0, accumulate);
  wgmma_commit();
#endif
}

// A consumer warp's release of a ring stage: in every CTA of the cluster (a peer's multicast fills it too).
__device__ __forceinline__ void release_stage(u32 empty) {
#if CLUSTER > 1
  for (u32 r = 0; r < CLUSTER; r++) mbar_arrive_cluster(cluster_peer_addr(empty, r));
#else
  mbar_arrive(empty);
#endif
}

// Direct epilogue: every thread converts its accumulator fragment and stores 4-byte pairs straight to C, rows
// before `rows` and columns before `cols` only (a partial tile at the bottom or right edge).
// Fragment layout of m64nN: warp w, lane l holds rows w*16 + l/4 (+8), columns 8j + 2*(l%4) (+1).
// A pair starts at an even column and N is a multiple of 8, so a pair is wholly before N or wholly past it.
__device__ __forceinline__ void epilogue_direct(float (&acc)[WG_ATOMS][WG_N / 2], u16* C, int ldc, int rows, int cols,
                                                int row0, int col0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#if SWAP_AB && SWAP_STORE
  // The tile is a tile of C^T. Each 8x8 block (rows r0..r0+7 of C^T, columns c0..c0+7) is transposed in registers,
  // so lane l holds C's row c0 + l/4 at columns r0 + 2(l%4) and +1: one 4-byte store where the element path takes
  // two, four lanes writing 16 contiguous bytes of one C row. A pair starts at an even column of C and N is a
  // multiple of 8, so it is wholly before N or wholly past it. The transpose runs in every lane; the stores check.
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++) {
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
      const int cc = col0 + j * 8 + lane / 4;
#pragma unroll
      for (int half = 0; half < 2; half++) {
        const u32 t = movmatrix_trans(pack2(acc[a][4 * j + 2 * half], acc[a][4 * j + 2 * half + 1]));
        const int rr = row0 + a * 64 + warp * 16 + half * 8 + 2 * (lane % 4);
        if (rr < rows && cc < cols) *(u32*)(C + (size_t)cc * ldc + rr) = t;
      }
    }
  }
#elif SWAP_AB
  // The tile is a tile of C^T: element (r, c) is C's (c, r). Rows here are C's columns (N, a multiple of 8) and
  // columns are C's rows (the tokens); eight lanes with consecutive r write 16 contiguous bytes of one C row.
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++) {
    const int r = row0 + a * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
      const int c = col0 + j * 8 + 2 * (lane % 4);
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int rr = r + (e / 2) * 8, cc = c + e % 2;
        if (rr < rows && cc < cols) C[(size_t)cc * ldc + rr] = (u16)(pack2(acc[a][4 * j + e], 0.f) & 0xFFFF);
      }
    }
  }
#else
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++) {
    const int r = row0 + a * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
      const int c = col0 + j * 8 + 2 * (lane % 4);
      if (c >= cols) continue;
      if (r < rows) *(u32*)(C + (size_t)r * ldc + c) = pack2(acc[a][4 * j], acc[a][4 * j + 1]);
      if (r + 8 < rows) *(u32*)(C + (size_t)(r + 8) * ldc + c) = pack2(acc[a][4 * j + 2], acc[a][4 * j + 3]);
    }
  }
#endif
}

// Where the direct epilogue of the tile at (row0, col0) may store: rows before M, columns before N; the faults move
// the tile (and its row bound with it) a matrix down, or drop the column bound.
__device__ __forceinline__ void store_tile_direct(float (&acc)[WG_ATOMS][WG_N / 2], u16* C, int ldc, int M, int N,
                                                  int row0, int col0, int t) {
#if FAULT_OOB_STORE
  const int shift = t == 0 ? M : 0;
#else
  const int shift = 0;
#endif
#if FAULT_NO_COLUMN_GUARD
  const int cols = col0 + WG_N;
#else
  const int cols = N;
#endif
  (void)t;
  epilogue_direct(acc, C, ldc, M + shift, cols, row0 + shift, col0);
}

// TMA epilogue: 64x64 chunks written to a double-buffered staging area in the 128B-swizzled layout (conflict-free
// for the fragment pattern, and what the store map expects), then stored by one thread with a bulk tensor store.
__device__ __forceinline__ void epilogue_tma(float (&acc)[WG_ATOMS][WG_N / 2], const TmaDesc* tmC, u32 staging,
                                             u32 barrier_id, u32& chunk_count, int row0, int col0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const bool lead = (threadIdx.x % 128) == 0;
#pragma unroll
  for (int a = 0; a < WG_ATOMS; a++) {
#pragma unroll
    for (int jc = 0; jc < WG_N / 64; jc++) {
      // The store issued EPI_BUFFERS chunks ago read from this buffer: it must be done reading (with 4, H99, a
      // half-tile's stores queue without waiting for each other).
      const u32 buf = staging + (chunk_count % EPI_BUFFERS) * EPI_CHUNK_BYTES;
      if (lead && chunk_count >= EPI_BUFFERS) bulk_wait_read<EPI_BUFFERS - 1>();
      named_barrier(barrier_id, 128);
#ifdef AB_E4M3
#if SCALES == 1
      // Row-wise FP8 scales, this chunk's only.
      scale_rows_and_columns(acc, a, jc * 8, jc * 8 + 8, row0, col0);
#endif
#endif
#if STMATRIX
      // Two 8-column blocks per instruction: matrices (rows 0-7, block jj), (rows 8-15, jj), (rows 0-7, jj+1),
      // (rows 8-15, jj+1) of this warp's 16 rows; lane l addresses row l%8 of matrix l/8.
      const u32 my_row = warp * 16 + ((lane / 8) & 1) * 8 + lane % 8;
#pragma unroll
      for (int jj = 0; jj < 8; jj += 2) {
        const int j = jc * 8 + jj;
        const u32 my_block = jj + lane / 16;
        stmatrix_x4(buf + my_row * 128 + ((my_block ^ (my_row & 7)) << 4), pack2(acc[a][4 * j], acc[a][4 * j + 1]),
                    pack2(acc[a][4 * j + 2], acc[a][4 * j + 3]), pack2(acc[a][4 * j + 4], acc[a][4 * j + 5]),
                    pack2(acc[a][4 * j + 6], acc[a][4 * j + 7]));
      }
#else
#pragma unroll
      for (int jj = 0; jj < 8; jj++) {
        const int j = jc * 8 + jj;
        const u32 r = warp * 16 + lane / 4;
        const u32 in_chunk = 4 * (lane % 4);
        st_shared_u32(buf + r * 128 + ((jj ^ (r & 7)) << 4) + in_chunk, pack2(acc[a][4 * j], acc[a][4 * j + 1]));
        st_shared_u32(buf + (r + 8) * 128 + ((jj ^ ((r + 8) & 7)) << 4) + in_chunk,
                      pack2(acc[a][4 * j + 2], acc[a][4 * j + 3]));
      }
#endif
      fence_proxy_async();
      named_barrier(barrier_id, 128);
      if (lead) {
        tma_store_2d(tmC, buf, col0 + jc * 64, row0 + a * 64);
        bulk_commit();
      }
      chunk_count++;
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_kernel(const __grid_constant__ TmaDesc tmA, const __grid_constant__ TmaDesc tmB,
                const __grid_constant__ TmaDesc tmC, u16* C, int ldc, int M, int N, int K, int raster, HangRecord* rec,
                float* workspace, u32* partial_flags) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // Swizzled stages need 1024-byte alignment; the host adds 1024 bytes of slack for this.
  const u32 smem = (smem_u32(smem_raw) + 1023) & ~1023u;
  const u32 stages = smem;
  const u32 full_bar = smem + BAR_OFFSET;
  const u32 empty_bar = full_bar + 8 * STAGES;
  const u32 turn_bar = empty_bar + 8 * STAGES;
  const int wg = threadIdx.x / 128;
#if PLACE_PROBE
  if (threadIdx.x == 0 && blockIdx.x < PLACE_PROBE_CTAS) {
    u32 sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    place_probe[blockIdx.x] = sm;
  }
#endif
#if CLOCK_PROBE
  const bool probe = blockIdx.x == 0 && threadIdx.x == THREADS - 1;
  u64 probe_ns = 0, probe_cycles = 0;
  if (probe) {
    probe_ns = global_timer_ns();
    probe_cycles = clock64();
  }
#endif
#if TMAP_PREFETCH
  // The descriptors are kernel parameters, not the previous kernel's output: fetching them may start before the
  // dependency wait.
  if (threadIdx.x == 0) {
    tensormap_prefetch(&tmA);
    tensormap_prefetch(&tmB);
#if EPILOGUE
    tensormap_prefetch(&tmC);
#endif
  }
#endif

#if CLUSTER > 1
  const u32 rank = cluster_rank();
#else
  const u32 rank = 0;
#endif
  const int cluster_id = blockIdx.x / CLUSTER;
  const int num_clusters = gridDim.x / CLUSTER;
  // Rounded up (M, N, K >= 1, so without overflow): the last tile row, column and k-block may reach past M, N, K.
#if MULTICAST
  // A cluster's CTAs sit side by side along N: a tile column is CLUSTER tiles wide.
  const int tiles_m = (M - 1) / BM + 1, tiles_n = (N - 1) / (BN * CLUSTER) + 1;
#else
  const int tiles_m = (M - 1) / (BM * CLUSTER) + 1, tiles_n = (N - 1) / BN + 1;
#endif
  const int num_tiles = tiles_m * tiles_n;
  const int k_blocks = (K - 1) / TILE_K + 1;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      mbar_init(full_bar + 8 * s, 1);
      // Released by every consumer warp that read the stage, in this CTA and (multicast) in the peer CTA.
#if STREAM_ONLY
      // Released by every producer of the cluster once its own copy of the stage has landed.
      mbar_init(empty_bar + 8 * s, CLUSTER);
#elif PINGPONG
      mbar_init(empty_bar + 8 * s, 4 * CLUSTER);
#else
      mbar_init(empty_bar + 8 * s, 4 * CONSUMERS * CLUSTER);
#endif
    }
    mbar_init(turn_bar, 1);
    mbar_init(turn_bar + 8, 1);
    fence_barrier_init();
  }
#if CLUSTER > 1
  cluster_sync();
#else
  __syncthreads();
#endif
#if PDL
  // Barriers are initialised; from here on global memory is read and written (EARLY_WEIGHTS: the producer thread
  // loads the first lap's weights first and waits in its own branch).
  if (!(EARLY_WEIGHTS && threadIdx.x == 0)) {
    grid_dependency_wait();
    launch_dependents();
  }
#endif

#if WARPSPEC
  if (wg == 0) {
    // ------------------------------------------------------------ producer warpgroup: one thread issues TMA
#if SETMAXNREG
    setmaxnreg_dec<PRODUCER_REGS>();
#endif
    if (threadIdx.x == 0) {
#if EVICT_FIRST
      const u64 policy = l2_evict_first_policy();
#else
      const u64 policy = 0;
#endif
      u32 pos = 0;
      Work w;
#if EARLY_WEIGHTS
      // The first lap's weights, before waiting for the previous kernel (the other threads wait above): each
      // stage's barrier claims the whole stage now, its other half is loaded below.
      u32 early = 0;
      for (int i = 0; early < STAGES && work_item(i, cluster_id, num_clusters, num_tiles, k_blocks, w); i++) {
        int tm, tn;
        tile_coords(w.tile, tiles_m, tiles_n, raster, tm, tn);
#if MULTICAST
        const int m_row = tm * BM, n_col = (tn * CLUSTER + rank) * BN;
#else
        const int m_row = (tm * CLUSTER + rank) * BM, n_col = tn * BN;
#endif
        ITEM_K_ROTATION(w);
        for (int kb = w.k_begin; kb < w.k_end && early < STAGES; kb++, early++) {
          mbar_arrive_expect_tx(full_bar + 8 * early, STAGE_BYTES);
          load_part(true, &tmA, &tmB, stages + early * STAGE_BYTES, full_bar + 8 * early, m_row, n_col,
                    ITEM_K_BLOCK(w, kb) * TILE_K, rank, policy);
        }
      }
      grid_dependency_wait();
      launch_dependents();
#endif
      for (int i = 0; work_item(i, cluster_id, num_clusters, num_tiles, k_blocks, w); i++) {
        int tm, tn;
        tile_coords(w.tile, tiles_m, tiles_n, raster, tm, tn);
#if MULTICAST
        const int m_row = tm * BM, n_col = (tn * CLUSTER + rank) * BN;
#else
        const int m_row = (tm * CLUSTER + rank) * BM, n_col = tn * BN;
#endif
        ITEM_K_ROTATION(w);
        for (int kb = w.k_begin; kb < ITEM_K_END(w); kb++, pos++) {
          const u32 s = pos % STAGES, lap = pos / STAGES;
          // Empty barriers start released: waiting on the parity before phase 0 returns at once.
#if STREAM_ONLY
          // Nobody reads the stage: it is free once the previous lap's bytes have landed in every CTA of the
          // cluster. Each producer releases it in every CTA when its own copy has landed; re-arming on its own
          // copy alone let a peer's next-lap multicast land in a phase that had all its bytes, which then never
          // completed (the first form of this switch hung at cfb0bff).
          if (lap > 0) {
            mbar_wait(full_bar + 8 * s, (lap - 1) & 1, STAGE_SITE(ROLE_PRODUCER, BAR_FULL, s), rec);
            release_stage(empty_bar + 8 * s);
          }
#endif
#if FAULT_WRONG_PHASE
          mbar_wait(empty_bar + 8 * s, lap & 1, STAGE_SITE(ROLE_PRODUCER, BAR_EMPTY, s), rec);
#else
          mbar_wait(empty_bar + 8 * s, (lap & 1) ^ 1, STAGE_SITE(ROLE_PRODUCER, BAR_EMPTY, s), rec);
#endif
#if EARLY_WEIGHTS
          const bool weights_loaded = pos < early;
#else
          const bool weights_loaded = false;
#endif
          fill_stage(&tmA, &tmB, stages, full_bar, pos, m_row, n_col, ITEM_K_BLOCK(w, kb), rank, policy, weights_loaded);
#if SCALE_LOADS
          // A's block scales of this k-block for the tile's rows, with the stage (its barrier expects their bytes).
          bulk_load(stages + SCALE_OFFSET + s * SCALE_STAGE_BYTES, a_block_scales + (size_t)ITEM_K_BLOCK(w, kb) * M + m_row,
                    SCALE_STAGE_BYTES, full_bar + 8 * s);
#endif
        }
      }
#if STREAM_ONLY
      // Every load has landed (this CTA's and the peer's multicast) before the CTA may leave.
      for (u32 p = pos > STAGES ? pos - STAGES : 0; p < pos; p++)
        mbar_wait(full_bar + 8 * (p % STAGES), (p / STAGES) & 1, STAGE_SITE(ROLE_PRODUCER, BAR_FULL, p % STAGES), rec);
#endif
    }
  } else {
    // ------------------------------------------------------------ consumer warpgroups: wgmma, then the epilogue
#if SETMAXNREG
    setmaxnreg_inc<CONSUMER_REGS>();
#endif
#if DESC_ADVANCE
    // Broadcast from lane 0: the compiler then knows it is warp-uniform and keeps the descriptors built from it
    // in uniform registers.
    const int c = __shfl_sync(0xffffffffu, wg - 1, 0);
#else
    const int c = wg - 1;
#endif
    const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
    float acc[WG_ATOMS][WG_N / 2];
#pragma unroll
    for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
      for (int i = 0; i < WG_N / 2; i++) acc[a][i] = 0.f;
#if EPILOGUE
    u32 chunk_count = 0;  // the TMA epilogue's staging chunks, counted across this consumer's tiles
#endif
    u32 pos = 0;
    Work w;
    // STREAM_ONLY: the consumers take no tiles; they only meet the producer at the final cluster barrier.
    for (int local = 0; !STREAM_ONLY && work_item(local, cluster_id, num_clusters, num_tiles, k_blocks, w); local++) {
      // This unit's k-blocks sit at ring positions item_pos, item_pos + 1, ...
      const int item_k_blocks = ITEM_K_END(w) - w.k_begin;
      const u32 item_pos = pos;
      pos += item_k_blocks;
#if PINGPONG
      // Tiles alternate between the two consumers, and so do their mainloops: a consumer starts its mainloop
      // only when the other has finished waiting for its stages (so no wait runs a ring lap ahead).
      if ((local & 1) != c) continue;
      const int mine = local >> 1;
      if (c == 1 || mine > 0) mbar_wait(turn_bar + 8 * c, (c == 1 ? mine : mine - 1) & 1, SITE(ROLE_CONSUMER, BAR_TURN, c), rec);
      const int a_row0 = 0, b_row0 = 0;
#else
      // Each consumer owns WG_M rows of the tile, or with SPLIT_N every row and WG_N of its columns.
      const int a_row0 = SPLIT_N ? 0 : c * WG_M, b_row0 = SPLIT_N ? c * WG_N : 0;
#endif
      int tm, tn;
      tile_coords(w.tile, tiles_m, tiles_n, raster, tm, tn);
#if MULTICAST
      const int m_row = tm * BM, n_col = (tn * CLUSTER + rank) * BN;
#else
      const int m_row = (tm * CLUSTER + rank) * BM, n_col = tn * BN;
#endif

#if PROMOTE
      {
        // Two-level accumulation (H115, H117): each window of PROMOTE k-blocks accumulates in a set of partial sums;
        // once its MMAs are complete it is added into acc (dequantized under block scales).
#pragma unroll
        for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
          for (int i = 0; i < WG_N / 2; i++) acc[a][i] = 0.f;
        const int prow0 = m_row + a_row0, pcol0 = n_col + b_row0;
        const BlockScalePtrs scale_ptrs = block_scale_ptrs();
#if PROMOTE_OVERLAP
        // Every k-block promoted under the next one's MMAs (H156): k-block kb accumulates in part[kb % 2], and while
        // its MMAs run, k-block kb-1's set is promoted and its ring stage released.
        static_assert(PROMOTE == 1 && !SCALE_PREFETCH && !FAULT_SKIP_K_BLOCK,
                      "promote_overlap=1 promotes every k-block, its scales loaded with its own MMAs");
        float part0[WG_ATOMS][WG_N / 2], part1[WG_ATOMS][WG_N / 2];
        PromoteScales scales0, scales1;
        // One k-block: its scales asked for; every MMA before it waited for (ptxas serializes every wgmma of a
        // kernel that reads a set whose MMAs a wait<1> left in flight); its MMAs issued into `cur`, the other set
        // (`prev`, now complete) left for the promotion while they run.
        auto issue = [&](int kb, float (&cur)[WG_ATOMS][WG_N / 2], PromoteScales& cur_scales,
                         float (&prev)[WG_ATOMS][WG_N / 2]) {
          const u32 p = item_pos + kb, s = p % STAGES;
          mbar_wait(full_bar + 8 * s, (p / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
          cur_scales = promote_scales(scale_ptrs, prow0, pcol0, M, N, w.k_begin + kb, k_blocks,
                                      stages + SCALE_OFFSET + s * SCALE_STAGE_BYTES, a_row0);
#if MMA
          wgmma_wait<0>();
          // The partial sums reach the compiler only as the wgmma asm's outputs: pin their reads after the wait.
          fence_registers(prev);
#endif
          mma_stage(cur, stages + s * STAGE_BYTES, a_row0, b_row0, false);
        };
        // The k-block before kb, complete in `prev`: its stage released, its partial sums promoted.
        auto retire = [&](int kb, const float (&prev)[WG_ATOMS][WG_N / 2], const PromoteScales& prev_scales) {
#if SCALE_LOADS
          // Every lane read A's scales from the stage's slot before the producer may refill it (as below).
          __syncwarp();
#endif
          if (lane == 0) release_stage(empty_bar + 8 * ((item_pos + kb - 1) % STAGES));
          promote_partials(acc, prev, prev_scales);
        };
        // The first k-block goes into part0 alone; then each k-block is issued into one set while the other,
        // the k-block before's, is promoted.
        if (item_k_blocks > 0) issue(0, part0, scales0, part1);
        int kb = 1;
        for (; kb + 1 < item_k_blocks; kb += 2) {
          issue(kb, part1, scales1, part0);
          retire(kb, part0, scales0);
          issue(kb + 1, part0, scales0, part1);
          retire(kb + 1, part1, scales1);
        }
        if (kb < item_k_blocks) {
          issue(kb, part1, scales1, part0);
          retire(kb, part0, scales0);
          kb++;
        }
        // The last k-block's set: every MMA waited for, then retired as the others.
#if MMA
        wgmma_wait<0>();
        fence_registers(part0);
        fence_registers(part1);
#endif
        if (item_k_blocks > 0) {
          if (item_k_blocks & 1) retire(kb, part0, scales0);
          else retire(kb, part1, scales1);
        }
#else
        // Inside a window one batch stays in flight as in the plain loop below; at a window's end none does.
        float part[WG_ATOMS][WG_N / 2];
        bool held = false;  // the ring stage of the k-block before is still to be released
#if SCALE_PREFETCH
        // The first k-block's scales; each k-block then asks for the next one's (H136).
        ScaleLoads ahead;
        load_b_scales(ahead, scale_ptrs, pcol0, N, w.k_begin, k_blocks);
#if !SCALE_LOADS
        load_a_scales(ahead, scale_ptrs, prow0, M, w.k_begin, 0, a_row0);
#endif
#endif
        // The second consumer's windows start PROMOTE/2 k-blocks later (H163). Broadcast from lane 0, so that ptxas
        // knows the window edges are warp-uniform (computed from the consumer alone, they made it serialize every
        // wgmma: C7518).
#if PROMOTE_STAGGER
        const int shift = __shfl_sync(0xffffffffu, (c % 2) * (PROMOTE / 2), 0);
#else
        constexpr int shift = 0;
#endif
        // One k-block of the promoting loop; `last` closes its window: every MMA waited for, the partial sums
        // promoted.
        auto step = [&](const int kb, const bool first, const bool last) {
          const u32 p = item_pos + kb, s = p % STAGES;
          mbar_wait(full_bar + 8 * s, (p / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
          // Block scales of the window's last k-block (in K's order), asked for before its MMAs are issued so that
          // their loads run under them (ptxas places them after the second of the four QGMMAs; H130).
          PromoteScales scales;
#if SCALE_PREFETCH
          // Block scales promote every k-block (PROMOTE 1): this one's were asked for a k-block ago; A's from the
          // stage's slot only now that the stage has landed.
#if SCALE_LOADS
          load_a_scales(ahead, scale_ptrs, prow0, M, w.k_begin + kb, stages + SCALE_OFFSET + s * SCALE_STAGE_BYTES,
                        a_row0);
#endif
          scales = spread_scales(ahead, pcol0, N);
          if (kb + 1 < item_k_blocks) {
            load_b_scales(ahead, scale_ptrs, pcol0, N, w.k_begin + kb + 1, k_blocks);
#if !SCALE_LOADS
            load_a_scales(ahead, scale_ptrs, prow0, M, w.k_begin + kb + 1, 0, a_row0);
#endif
          }
#else
          if (last)
            scales = promote_scales(scale_ptrs, prow0, pcol0, M, N, w.k_begin + kb, k_blocks,
                                    stages + SCALE_OFFSET + s * SCALE_STAGE_BYTES, a_row0);
#endif
#if FAULT_SKIP_K_BLOCK
          if (kb != item_k_blocks - 1)
#endif
            mma_stage(part, stages + s * STAGE_BYTES, a_row0, b_row0, !first);
          if (last) {
#if MMA
            wgmma_wait<0>();
            // The partial sums reach the compiler only as the wgmma asm's outputs: pin their reads after the wait.
            fence_registers(part);
#endif
#if SCALE_LOADS
            // Every lane read A's scales from this stage's slot; lane 0's release orders only its own reads, so the
            // warp meets first and the producer's next copy into the slot waits for all of them (racecheck found
            // the copy racing the other lanes' loads).
            __syncwarp();
#endif
            if (lane == 0) {
              if (held) release_stage(empty_bar + 8 * ((p - 1) % STAGES));
              release_stage(empty_bar + 8 * s);
            }
            held = false;
            promote_partials(acc, part, scales);
          } else {
#if MMA
            wgmma_wait<MMA_IN_FLIGHT>();
#endif
            // The MMAs of the k-block before (one batch in flight) or of this one are complete in this warp.
            if (lane == 0) {
              if (!MMA_IN_FLIGHT) release_stage(empty_bar + 8 * s);
              else if (held) release_stage(empty_bar + 8 * ((p - 1) % STAGES));
            }
            held = MMA_IN_FLIGHT > 0;
          }
        };
#if PROMOTE_WINDOWS
        // A loop over windows, each with a loop over its k-blocks but the last that reads no partial sum: there
        // ptxas keeps a batch of MMAs in flight from one k-block to the next (H165).
        for (int kb = 0; kb < item_k_blocks;) {
          // A window: k-blocks kb + shift from one multiple of PROMOTE to the next, cut at the item's end.
          const int start = kb, end = min(kb + PROMOTE - (kb + shift) % PROMOTE, item_k_blocks);
          for (; kb < end - 1; kb++) step(kb, kb == start, false);
          step(kb, kb == start, true);
          kb++;
        }
#else
        // One loop over the k-blocks, the window's end a branch inside it: ptxas then waits for every MMA at each
        // k-block's end, the branch's two sides rejoined (SASS: `WARPGROUP.DEPBAR.LE gsb0, 0x0`; H164, H165).
        for (int kb = 0; kb < item_k_blocks; kb++)
          step(kb, (kb + shift) % PROMOTE == 0 || kb == 0,
               (kb + shift) % PROMOTE == PROMOTE - 1 || kb == item_k_blocks - 1);
#endif
#endif
#if PINGPONG && EARLY_TURN
        // Every MMA of the tile is complete here: the turn passes as in the plain loop's order.
        if (threadIdx.x % 128 == 0) mbar_arrive(turn_bar + 8 * (c ^ 1));
#endif
      }
#elif KB_PER_WAIT > 1
      // KB_PER_WAIT ring positions a batch (H60): one fence, commit and wait for MMAs per batch, the ring's stages
      // as small and as many as before, so the loads still run STAGES deep. Released a batch at a time. Whole
      // batches first, then the item's last k-blocks one at a time: a batch's MMAs are issued without a branch
      // among them (a branch splits the batch in two scoreboarded halves: the switch's first form, 37d5995).
      const int batched = item_k_blocks - item_k_blocks % KB_PER_WAIT;
      int held = 0, held_count = 0;  // the batch whose MMAs may still run: its first k-block, its size
      for (int kb = 0; kb < item_k_blocks;) {
        const int count = kb < batched ? KB_PER_WAIT : 1;
        if (count == KB_PER_WAIT) {
#pragma unroll
          for (int j = 0; j < KB_PER_WAIT; j++) {
            const u32 p = item_pos + kb + j, s = p % STAGES;
            mbar_wait(full_bar + 8 * s, (p / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
          }
#if MMA
          wgmma_fence();
#pragma unroll
          for (int j = 0; j < KB_PER_WAIT; j++) {
#if FAULT_SKIP_K_BLOCK
            if (kb + j == item_k_blocks - 1) continue;
#endif
            mma_issue(acc, stages + ((item_pos + kb + j) % STAGES) * STAGE_BYTES, a_row0, b_row0, kb + j > 0);
          }
          wgmma_commit();
#endif
        } else {
          const u32 p = item_pos + kb, s = p % STAGES;
          mbar_wait(full_bar + 8 * s, (p / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
#if FAULT_SKIP_K_BLOCK
          if (kb != item_k_blocks - 1)
#endif
            mma_stage(acc, stages + s * STAGE_BYTES, a_row0, b_row0, kb > 0);
        }
#if MMA
        wgmma_wait<MMA_IN_FLIGHT>();
#endif
        // The batch whose MMAs are now complete in this warp: the one before (one batch in flight), or this one.
        const int done = MMA_IN_FLIGHT ? held : kb, done_count = MMA_IN_FLIGHT ? held_count : count;
        if (lane == 0)
          for (int j = 0; j < done_count; j++) release_stage(empty_bar + 8 * ((item_pos + done + j) % STAGES));
        held = kb;
        held_count = count;
        kb += count;
      }
#if MMA
      wgmma_wait<0>();
#endif
      if (MMA_IN_FLIGHT > 0 && lane == 0)
        for (int j = 0; j < held_count; j++) release_stage(empty_bar + 8 * ((item_pos + held + j) % STAGES));
#elif DESC_ADVANCE
      {
        // H64: this consumer's descriptors for stage 0, moved by a stage's bytes a k-block; the ring position
        // divided once a tile, then counted.
        const u64 da0 = smem_desc(stages + a_row0 * ROW_BYTES, DESC_LBO, DESC_SBO, DESC_LAYOUT);
        const u64 db0 = smem_desc(stages + A_STAGE_BYTES + b_row0 * ROW_BYTES, DESC_LBO, DESC_SBO, DESC_LAYOUT);
        u32 s = item_pos % STAGES, phase = (item_pos / STAGES) & 1, held = s;
        for (int kb = 0; kb < item_k_blocks; kb++) {
          mbar_wait(full_bar + 8 * s, phase, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
#if FAULT_SKIP_K_BLOCK
          if (kb != item_k_blocks - 1)
#endif
            mma_issue_desc(acc, da0 + s * (STAGE_BYTES >> 4), db0 + s * (STAGE_BYTES >> 4), kb > 0);
#if MMA
          wgmma_wait<MMA_IN_FLIGHT>();
#endif
          // The MMAs of the stage before (one batch in flight) or of this one are complete in this warp.
          if (kb >= MMA_IN_FLIGHT && lane == 0) release_stage(empty_bar + 8 * (MMA_IN_FLIGHT ? held : s));
          held = s;
          if (++s == STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
#if PINGPONG && EARLY_TURN
        // CUTLASS's order (H98): the other consumer may issue now; this tile's last batch completes ahead of it.
        if (threadIdx.x % 128 == 0) mbar_arrive(turn_bar + 8 * (c ^ 1));
#endif
#if MMA
        wgmma_wait<0>();
#endif
        if (MMA_IN_FLIGHT > 0 && item_k_blocks > 0 && lane == 0) release_stage(empty_bar + 8 * held);
      }
#else
      for (int kb = 0; kb < item_k_blocks; kb++) {
        const u32 p = item_pos + kb, s = p % STAGES;
        mbar_wait(full_bar + 8 * s, (p / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
#if FAULT_SKIP_K_BLOCK
        // Every tile drops its last k-block: the result is wrong by a partial sum.
        if (kb != item_k_blocks - 1)
#endif
          mma_stage(acc, stages + s * STAGE_BYTES, a_row0, b_row0, kb > 0);
#if MMA
        wgmma_wait<MMA_IN_FLIGHT>();
#endif
        // The MMAs that read ring position p - MMA_IN_FLIGHT are complete in this warp: release it.
        if (kb >= MMA_IN_FLIGHT && lane == 0) release_stage(empty_bar + 8 * ((p - MMA_IN_FLIGHT) % STAGES));
      }
#if PINGPONG && EARLY_TURN
      // CUTLASS's order (H98): the other consumer may issue now; this tile's last batch completes ahead of it.
      if (threadIdx.x % 128 == 0) mbar_arrive(turn_bar + 8 * (c ^ 1));
#endif
#if MMA
      wgmma_wait<0>();
#endif
      if (MMA_IN_FLIGHT > 0 && item_k_blocks > 0 && lane == 0)
        release_stage(empty_bar + 8 * ((item_pos + item_k_blocks - 1) % STAGES));
#endif
#if PINGPONG && !EARLY_TURN
      if (threadIdx.x % 128 == 0) mbar_arrive(turn_bar + 8 * (c ^ 1));
#endif
      (void)warp;
#if SPIN
      // Calibration only: extra work of a known size before each tile's epilogue.
      spin_cycles(SPIN);
#endif
#if STREAMK
      {
        // Workspace slot and flag of (cluster, rank, consumer): each cluster hands on at most one partial.
        const auto slot_of = [&](int cluster) { return (cluster * CLUSTER + (int)rank) * CONSUMERS + c; };
        const bool lead = (threadIdx.x % 128) == 0;
#if STREAMK == 3
        // H95: a head (k-blocks 0 to b) goes to the next cluster, whose share holds the rest of the tile as its
        // last unit; a tail (a to K) is the owner's, and the previous cluster computed its head a unit earlier.
        if (w.k_begin == 0 && w.k_end < k_blocks) {
          store_partial(acc, workspace + (size_t)slot_of(cluster_id) * SLOT_FLOATS);
          named_barrier(2 + c, 128);
          if (lead) flag_release(partial_flags + slot_of(cluster_id), 1);
          continue;
        }
        if (w.k_begin > 0) {
          const int prev = cluster_id - 1;
          if (lead) flag_wait(partial_flags + slot_of(prev), SITE(ROLE_EPILOGUE, BAR_PARTIAL, prev & 0xFF), rec);
          named_barrier(2 + c, 128);
          add_partial(acc, workspace + (size_t)slot_of(prev) * SLOT_FLOATS);
          // Consumed: cleared for the next launch (each flag is set once per launch).
          if (lead) flag_release(partial_flags + slot_of(prev), 0);
        }
#else
        if (w.k_begin > 0) {
          // A partial: the tile's owner (an earlier cluster) adds it to its own.
          store_partial(acc, workspace + (size_t)slot_of(cluster_id) * SLOT_FLOATS);
          named_barrier(2 + c, 128);
          if (lead) flag_release(partial_flags + slot_of(cluster_id), 1);
          continue;
        }
        if (w.k_end < k_blocks) {
          // The owner: the clusters after this one hold the rest of the tile, each as its first unit.
          const long long iters = (long long)stream_k_tiles(num_tiles, num_clusters) * k_blocks;
          const long long tile_end = (long long)(w.tile - (num_tiles - stream_k_tiles(num_tiles, num_clusters)) + 1) * k_blocks;
          for (int cc = cluster_id + 1; cc < num_clusters; cc++) {
            const long long b = stream_k_begin(cc, num_clusters, iters), e = stream_k_begin(cc + 1, num_clusters, iters);
            if (e > b) {
              if (lead) flag_wait(partial_flags + slot_of(cc), SITE(ROLE_EPILOGUE, BAR_PARTIAL, cc & 0xFF), rec);
              named_barrier(2 + c, 128);
              add_partial(acc, workspace + (size_t)slot_of(cc) * SLOT_FLOATS);
              // Consumed: cleared for the next launch (each flag is set once per launch).
              if (lead) flag_release(partial_flags + slot_of(cc), 0);
            }
            if (e >= tile_end) break;
          }
        }
#endif
      }
#else
      (void)workspace;
      (void)partial_flags;
#endif
#if FAULT_SKIP_EPILOGUE
      if (w.tile == 0) continue;
#endif
      const int row0 = m_row + a_row0, col0 = n_col + b_row0;
#ifdef AB_E4M3
      // After stream-K's partials are in: they are added unscaled (dequantized already under block scales).
      scale_accumulators(acc, row0, col0, M, N);
#endif
#if EPILOGUE
      epilogue_tma(acc, &tmC, stages + STAGES * STAGE_BYTES + c * EPI_BUFFERS * EPI_CHUNK_BYTES, 2 + c, chunk_count, row0,
                   col0);
#else
      store_tile_direct(acc, C, ldc, M, N, row0, col0, w.tile);
#endif
    }
#if EPILOGUE
    if (threadIdx.x % 128 == 0) bulk_wait<0>();
#endif
  }
#else
  // ------------------------------------------------------------ one warpgroup does everything (rungs 1 and 2)
  // Thread 0 issues the loads; the whole warpgroup issues the MMAs. One tile per CTA (checked by the host).
  {
    (void)wg;
    (void)rank;
    (void)cluster_id;
    (void)num_clusters;
    (void)num_tiles;
    float acc[WG_ATOMS][WG_N / 2];
#pragma unroll
    for (int a = 0; a < WG_ATOMS; a++)
#pragma unroll
      for (int i = 0; i < WG_N / 2; i++) acc[a][i] = 0.f;
    const int t = blockIdx.x;
    int tm, tn;
    tile_coords(t, tiles_m, tiles_n, raster, tm, tn);
    const int m_row = tm * BM, n_col = tn * BN;
    if (threadIdx.x == 0) {
      for (int kb = 0; kb < STAGES && kb < k_blocks; kb++) fill_stage(&tmA, &tmB, stages, full_bar, kb, m_row, n_col, kb, 0, 0, false);
    }
    for (int kb = 0; kb < k_blocks; kb++) {
      const u32 s = kb % STAGES;
      mbar_wait(full_bar + 8 * s, (kb / STAGES) & 1, STAGE_SITE(ROLE_CONSUMER, BAR_FULL, s), rec);
      mma_stage(acc, stages + s * STAGE_BYTES, 0, 0, kb > 0);
      wgmma_wait<MMA_IN_FLIGHT>();
      const int done = kb - MMA_IN_FLIGHT;
      if (done >= 0 && done + STAGES < k_blocks) {
        // Every warp's MMAs on that stage are complete before it is overwritten.
        named_barrier(1, 128);
        if (threadIdx.x == 0) fill_stage(&tmA, &tmB, stages, full_bar, done + STAGES, m_row, n_col, done + STAGES, 0, 0, false);
      }
    }
    wgmma_wait<0>();
#if FAULT_SKIP_EPILOGUE
    if (t == 0) return;
#endif
#ifdef AB_E4M3
    scale_accumulators(acc, m_row, n_col, M, N);
#endif
#if EPILOGUE
    u32 chunk_count = 0;
    epilogue_tma(acc, &tmC, stages + STAGES * STAGE_BYTES, 2, chunk_count, m_row, n_col);
    if (threadIdx.x == 0) bulk_wait<0>();
#else
    store_tile_direct(acc, C, ldc, M, N, m_row, n_col, t);
#endif
  }
#endif

#if CLOCK_PROBE
  if (probe) {
    clock_probe[0] = clock64() - probe_cycles;
    clock_probe[1] = global_timer_ns() - probe_ns;
  }
#endif
#if CLUSTER > 1
  // No CTA may exit while its peer can still arrive on its barriers or multicast into its shared memory.
  cluster_sync();
#endif
}
