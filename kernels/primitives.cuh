// primitives.cuh: the Hopper building blocks every kernel here is made of, each a few lines of inline PTX.
// NVRTC has no CUDA headers on these machines, so nothing is included: 16-bit values travel as u16 and
// are converted with PTX cvt.
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// A CUtensorMap as the driver encodes it: 128 opaque bytes, 64-byte aligned, passed as __grid_constant__.
struct __align__(64) TmaDesc {
  u64 opaque[16];
};

// Written by the first thread whose bounded wait gives up; lives in mapped host memory so the host can read
// it after the kernel traps. The layout is mirrored by harness/gpu/diag.rs.
struct HangRecord {
  u32 claimed;   // 0 until a thread claims the record
  u32 site;      // role << 16 | barrier kind << 8 | barrier index
  u32 parity;    // the phase parity the thread waited for
  u32 block_x, block_y, block_z;
  u32 thread;
  u32 pad;
  u64 waited_ns;
};

// Barrier sites named in a hang diagnosis.
#define ROLE_PRODUCER 0
#define ROLE_CONSUMER 1
#define ROLE_EPILOGUE 2
#define BAR_FULL 0
#define BAR_EMPTY 1
#define BAR_TURN 2
#define BAR_PARTIAL 3
#define SITE(role, kind, index) (((role) << 16) | ((kind) << 8) | (index))

__device__ __forceinline__ u32 smem_u32(const void* p) {
  u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

__device__ __forceinline__ u64 global_timer_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---------------------------------------------------------------- mbarrier
// Calibration: a controlled amount of extra work, `cycles` SM clock cycles of spinning.
__device__ __forceinline__ void spin_cycles(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// Makes initialised barriers visible to the async proxy (TMA) and to the other CTAs of a cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// The same barrier offset in another CTA of the cluster.
__device__ __forceinline__ u32 cluster_peer_addr(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

__device__ __forceinline__ void mbar_arrive_cluster(u32 cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}

// True once the phase with this parity has completed (i.e. the barrier's current phase has the other parity).
// The wait acquires at cluster scope, or with WAIT_SCOPE at CTA scope, as CUTLASS's cluster barriers (H49).
// With WAIT_SUSPEND the thread may stay suspended up to 10 ms for the phase (CUTLASS's hint) instead of
// returning after the hardware's default limit (H51); it still returns when the phase completes.
#if WAIT_SUSPEND
#define MBAR_SUSPEND_OPERAND ", %3"
#else
#define MBAR_SUSPEND_OPERAND ""
#endif
#if WAIT_SCOPE
#define MBAR_WAIT_SCOPE "cta"
#else
#define MBAR_WAIT_SCOPE "cluster"
#endif
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{ .reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire." MBAR_WAIT_SCOPE ".shared::cta.b64 p, [%1], %2" MBAR_SUSPEND_OPERAND ";\n"
      "selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity), "n"(10000000)
      : "memory");
  return done != 0;
}

// Inlined: a call here would make every wait loop save live registers (the accumulators) around it.
__device__ __forceinline__ void report_hang(HangRecord* rec, u32 site, u32 parity, u64 waited_ns) {
  u32 old;
  asm volatile("atom.sys.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(&rec->claimed), "r"(0u), "r"(1u)
               : "memory");
  if (old == 0) {
    volatile HangRecord* v = rec;
    v->site = site;
    v->parity = parity;
    v->block_x = blockIdx.x;
    v->block_y = blockIdx.y;
    v->block_z = blockIdx.z;
    v->thread = threadIdx.x;
    v->waited_ns = waited_ns;
    asm volatile("fence.sc.sys;" ::: "memory");
  }
  asm volatile("trap;");
}

// Wait for the phase of the given parity. With BOUNDED the wait gives up after HANG_TIMEOUT_NS,
// records where it was stuck and traps, so a protocol bug becomes a diagnosis instead of a frozen GPU. The clock
// is read once per 64 failed polls, so a wait that is about to succeed is not slowed by reading it.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity, u32 site, HangRecord* rec) {
  if (mbar_try_wait(bar, parity)) return;
#if BOUNDED
  const u64 start = global_timer_ns();
  for (;;) {
#pragma unroll 1
    for (int i = 0; i < 64; i++)
      if (mbar_try_wait(bar, parity)) return;
    const u64 waited = global_timer_ns() - start;
    if (waited > HANG_TIMEOUT_NS) report_hang(rec, site, parity, waited);
  }
#else
  while (!mbar_try_wait(bar, parity)) {
  }
#endif
}

// ---------------------------------------------------------------- programmatic dependent launch
// Waits until the grids this one depends on have completed and their memory is visible (a no-op when launched
// without the programmatic-serialization attribute); everything before it overlaps the previous kernel's tail.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the next kernel in the stream launch once every CTA of this grid has said so (or exited).
__device__ __forceinline__ void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// ---------------------------------------------------------------- flags between CTAs (stream-K fix-up)
__device__ __forceinline__ void flag_release(u32* flag, u32 value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ u32 flag_acquire(const u32* flag) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// Waits until another CTA has set the flag (bounded like mbar_wait: a missing partial becomes a diagnosis).
__device__ __forceinline__ void flag_wait(const u32* flag, u32 site, HangRecord* rec) {
  if (flag_acquire(flag)) return;
#if BOUNDED
  const u64 start = global_timer_ns();
  for (;;) {
#pragma unroll 1
    for (int i = 0; i < 64; i++)
      if (flag_acquire(flag)) return;
    const u64 waited = global_timer_ns() - start;
    if (waited > HANG_TIMEOUT_NS) report_hang(rec, site, 1, waited);
  }
#else
  while (!flag_acquire(flag)) {
  }
#endif
}

// fp32 partial sums through L2 only: another SM wrote them, so this SM's L1 must not answer.
__device__ __forceinline__ void st_global_cg_f4(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

__device__ __forceinline__ void ld_global_cg_f4(const float* p, float& a, float& b, float& c, float& d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p) : "memory");
}

// ---------------------------------------------------------------- TMA (cp.async.bulk.tensor)
// Brings a descriptor (a __grid_constant__ parameter, by its generic address) into the cache TMA reads it from.
__device__ __forceinline__ void tensormap_prefetch(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

#ifdef AB_E4M3
// A plain bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory into shared
// memory, completing on `bar` as a tensor load does (FP8 block scales carried with a stage).
__device__ __forceinline__ void bulk_load(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
#endif

__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// Multicast: the box lands at the same offset in every CTA of the mask and signals each one's barrier.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1,
                                                      u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d_multicast(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1, int c2,
                                                      int c3, u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5, %6}], [%2], %7;"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(mask)
      : "memory");
}

// An L2 policy that marks what it loads as first to evict: data read once (streamed weights) then leaves room for
// what is read again.
__device__ __forceinline__ u64 l2_evict_first_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// tma_load_2d and tma_load_2d_multicast with an L2 cache policy.
__device__ __forceinline__ void tma_load_2d_hint(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1, u64 policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tma_load_2d_multicast_hint(u32 dst, const TmaDesc* map, u32 bar, int c0, int c1,
                                                           u16 mask, u64 policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5, %6;"
      ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tma_store_2d(const TmaDesc* map, u32 src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(src), "r"(c0), "r"(c1)
               : "memory");
}

__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Wait until at most N bulk stores still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Ordinary shared-memory stores must be fenced before the async proxy (a TMA store) reads them.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---------------------------------------------------------------- barriers, clusters, registers
__device__ __forceinline__ void named_barrier(u32 id, u32 threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// ---------------------------------------------------------------- wgmma
// Shared-memory matrix descriptor: start address, leading (K) and stride (M/N) byte offsets, layout mode
// (0 = no swizzle, 1 = 128B, 2 = 64B, 3 = 32B).
__device__ __forceinline__ u64 smem_desc(u32 addr, u32 lbo, u32 sbo, u32 layout) {
  return (u64)((addr & 0x3FFFF) >> 4) | ((u64)((lbo & 0x3FFFF) >> 4) << 16) |
         ((u64)((sbo & 0x3FFFF) >> 4) << 32) | ((u64)layout << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// An empty asm that reads and writes every register of an accumulator set, so that no use of them moves above the
// wgmma wait before it (CUTLASS fences its accumulators the same way).
template <int ROWS, int COLS>
__device__ __forceinline__ void fence_registers(float (&r)[ROWS][COLS]) {
#pragma unroll
  for (int i = 0; i < ROWS; i++)
#pragma unroll
    for (int j = 0; j < COLS; j++) asm volatile("" : "+f"(r[i][j])::"memory");
}

// The operands' type in the MMAs, the k of one wgmma (always 32 bytes of each operand row) and its transpose
// immediates. FP8 (e4m3: AB_E4M3, defined only in FP8 programs, whose output is 16-bit) takes k = 32 and K-major
// operands only: its wgmma has no transpose immediates (PTX ISA 9.7.15.5.2).
#ifdef AB_E4M3
#define WGMMA_AB "e4m3"
#define MMA_K 32
#define WGMMA_TRANSPOSE ""
#elif DTYPE_BF16
#define WGMMA_AB "bf16"
#define MMA_K 16
#define WGMMA_TRANSPOSE ", 0, 0"
#else
#define WGMMA_AB "f16"
#define MMA_K 16
#define WGMMA_TRANSPOSE ", 0, 0"
#endif

// An 8x8 matrix of 16-bit values held as mma fragments (lane l: row l/4, columns 2(l%4) and +1, the lower column
// in the low half) transposed across the warp into the same layout; every lane of the warp must execute it.
__device__ __forceinline__ u32 movmatrix_trans(u32 a) {
  u32 d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
  return d;
}

// One 16x8x16 MMA on the tensor cores from registers (mma.sync, a warp): d += a * b with fp32 accumulators. a: rows
// lane/4 and +8 of a 16x16 tile, b: column lane/4 of a 16x8 tile, each register two 16-bit values along k.
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." WGMMA_AB "." WGMMA_AB ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// 16 bytes from global memory through the read-only path, not kept in L1 (data read once); with `policy` from
// l2_evict_first_policy, also first to leave L2; `_cached` keeps them in L1 (data every warp reads). Volatile, so
// that loads written before the code that uses them are issued before it: the compiler would otherwise move each
// next to its use and leave one in flight at a time.
__device__ __forceinline__ uint4 ld_global_nc_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint4 ld_global_nc_v4_hint(const void* p, u64 policy) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ uint4 ld_global_nc_v4_cached(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ---------------------------------------------------------------- cp.async (16 bytes, global to shared)
// Each copies 16 bytes to shared address `dst`, or writes 16 zero bytes without reading `src` when `valid` is false
// (src-size 0; `src` must still be a global address). `.cg` bypasses L1 (data read once), `_hint` adds an L2 cache
// policy, `_ca` keeps the line in L1 (data every warp reads). An LDGSTS holds no register once issued, so the
// compiler has no reason to move it below the code after it, as it moves register loads (H87).
__device__ __forceinline__ void cp_async_16_hint(u32 dst, const void* src, bool valid, u64 policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0), "l"(policy)
               : "memory");
}

__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void cp_async_16_ca(u32 dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Until at most N of this thread's most recent groups are still in flight; what landed is visible to this thread.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Two fp32 values rounded to the 16-bit type and packed, the first in the low half.
__device__ __forceinline__ u32 pack2(float lo, float hi) {
  u32 r;
#if DTYPE_BF16
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
}

__device__ __forceinline__ void st_shared_u32(u32 addr, u32 v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

// Four 8x8 matrices of 16-bit elements stored at once: lanes 8i..8i+7 give the row addresses of matrix i, and
// each thread's register i holds its two elements of matrix i (row lane/4, columns 2*(lane%4) and +1), the same
// pattern as a wgmma accumulator fragment's 8-column block.
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// wgmma m64nWGNkMMA_K for the columns WG_N a consumer owns (the tile width BN, or its share under SPLIT_N: any
// multiple of 8 up to 256; swap-AB's token tiles are the small ones), fp32 accumulators: WG_N / 2 registers per thread. Inline PTX needs one operand per accumulator register, so the
// lists below grow by one 8-column block (4 registers) a line and the wrapper picks the one for WG_N. The
// descriptors and scale come first (%0-%2, read-write only so their numbers stay fixed), the accumulators after.
#ifdef WG_N
#define WGMMA_REGS_8 "%3, %4, %5, %6"
#define WGMMA_REGS_16 WGMMA_REGS_8 ", %7, %8, %9, %10"
#define WGMMA_REGS_24 WGMMA_REGS_16 ", %11, %12, %13, %14"
#define WGMMA_REGS_32 WGMMA_REGS_24 ", %15, %16, %17, %18"
#define WGMMA_REGS_40 WGMMA_REGS_32 ", %19, %20, %21, %22"
#define WGMMA_REGS_48 WGMMA_REGS_40 ", %23, %24, %25, %26"
#define WGMMA_REGS_56 WGMMA_REGS_48 ", %27, %28, %29, %30"
#define WGMMA_REGS_64 WGMMA_REGS_56 ", %31, %32, %33, %34"
#define WGMMA_REGS_72 WGMMA_REGS_64 ", %35, %36, %37, %38"
#define WGMMA_REGS_80 WGMMA_REGS_72 ", %39, %40, %41, %42"
#define WGMMA_REGS_88 WGMMA_REGS_80 ", %43, %44, %45, %46"
#define WGMMA_REGS_96 WGMMA_REGS_88 ", %47, %48, %49, %50"
#define WGMMA_REGS_104 WGMMA_REGS_96 ", %51, %52, %53, %54"
#define WGMMA_REGS_112 WGMMA_REGS_104 ", %55, %56, %57, %58"
#define WGMMA_REGS_120 WGMMA_REGS_112 ", %59, %60, %61, %62"
#define WGMMA_REGS_128 WGMMA_REGS_120 ", %63, %64, %65, %66"
#define WGMMA_REGS_136 WGMMA_REGS_128 ", %67, %68, %69, %70"
#define WGMMA_REGS_144 WGMMA_REGS_136 ", %71, %72, %73, %74"
#define WGMMA_REGS_152 WGMMA_REGS_144 ", %75, %76, %77, %78"
#define WGMMA_REGS_160 WGMMA_REGS_152 ", %79, %80, %81, %82"
#define WGMMA_REGS_168 WGMMA_REGS_160 ", %83, %84, %85, %86"
#define WGMMA_REGS_176 WGMMA_REGS_168 ", %87, %88, %89, %90"
#define WGMMA_REGS_184 WGMMA_REGS_176 ", %91, %92, %93, %94"
#define WGMMA_REGS_192 WGMMA_REGS_184 ", %95, %96, %97, %98"
#define WGMMA_REGS_200 WGMMA_REGS_192 ", %99, %100, %101, %102"
#define WGMMA_REGS_208 WGMMA_REGS_200 ", %103, %104, %105, %106"
#define WGMMA_REGS_216 WGMMA_REGS_208 ", %107, %108, %109, %110"
#define WGMMA_REGS_224 WGMMA_REGS_216 ", %111, %112, %113, %114"
#define WGMMA_REGS_232 WGMMA_REGS_224 ", %115, %116, %117, %118"
#define WGMMA_REGS_240 WGMMA_REGS_232 ", %119, %120, %121, %122"
#define WGMMA_REGS_248 WGMMA_REGS_240 ", %123, %124, %125, %126"
#define WGMMA_REGS_256 WGMMA_REGS_248 ", %127, %128, %129, %130"
#define WGMMA_ACC_8(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define WGMMA_ACC_16(d) WGMMA_ACC_8(d), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define WGMMA_ACC_24(d) WGMMA_ACC_16(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define WGMMA_ACC_32(d) WGMMA_ACC_24(d), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define WGMMA_ACC_40(d) WGMMA_ACC_32(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define WGMMA_ACC_48(d) WGMMA_ACC_40(d), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define WGMMA_ACC_56(d) WGMMA_ACC_48(d), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define WGMMA_ACC_64(d) WGMMA_ACC_56(d), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WGMMA_ACC_72(d) WGMMA_ACC_64(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define WGMMA_ACC_80(d) WGMMA_ACC_72(d), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define WGMMA_ACC_88(d) WGMMA_ACC_80(d), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define WGMMA_ACC_96(d) WGMMA_ACC_88(d), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define WGMMA_ACC_104(d) WGMMA_ACC_96(d), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define WGMMA_ACC_112(d) WGMMA_ACC_104(d), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define WGMMA_ACC_120(d) WGMMA_ACC_112(d), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define WGMMA_ACC_128(d) WGMMA_ACC_120(d), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WGMMA_ACC_136(d) WGMMA_ACC_128(d), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define WGMMA_ACC_144(d) WGMMA_ACC_136(d), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define WGMMA_ACC_152(d) WGMMA_ACC_144(d), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define WGMMA_ACC_160(d) WGMMA_ACC_152(d), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define WGMMA_ACC_168(d) WGMMA_ACC_160(d), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define WGMMA_ACC_176(d) WGMMA_ACC_168(d), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define WGMMA_ACC_184(d) WGMMA_ACC_176(d), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define WGMMA_ACC_192(d) WGMMA_ACC_184(d), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define WGMMA_ACC_200(d) WGMMA_ACC_192(d), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define WGMMA_ACC_208(d) WGMMA_ACC_200(d), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define WGMMA_ACC_216(d) WGMMA_ACC_208(d), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define WGMMA_ACC_224(d) WGMMA_ACC_216(d), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define WGMMA_ACC_232(d) WGMMA_ACC_224(d), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define WGMMA_ACC_240(d) WGMMA_ACC_232(d), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define WGMMA_ACC_248(d) WGMMA_ACC_240(d), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define WGMMA_ACC_256(d) WGMMA_ACC_248(d), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define WGMMA_PASTE_(a, b) a##b
#define WGMMA_PASTE(a, b) WGMMA_PASTE_(a, b)
#define WGMMA_STR_(x) #x
#define WGMMA_STR(x) WGMMA_STR_(x)
__device__ __forceinline__ void wgmma_m64nWGN(float* d, u64 desc_a, u64 desc_b, u32 scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n" WGMMA_STR(WG_N) "k" WGMMA_STR(MMA_K) ".f32." WGMMA_AB "." WGMMA_AB " "
      "{" WGMMA_PASTE(WGMMA_REGS_, WG_N) "}, %0, %1, p, 1, 1" WGMMA_TRANSPOSE ";\n}\n"
      : "+l"(desc_a), "+l"(desc_b), "+r"(scale_d), WGMMA_PASTE(WGMMA_ACC_, WG_N)(d));
}
#endif
