// stream_read.cu: reads A and B once, and nothing else: the floor a weight stream is held against (H79). No shared
// memory, no TMA, no MMA: each thread keeps SR_UNROLL 16-byte loads in flight, SR_CTAS CTAs of SR_THREADS threads
// an SM. Every 16-bit word read is summed, so no load can be elided, and the sum is the check: it must equal the
// operands' own sum (one atomic a warp at the end).
//   SR_HINT   0 plain ld.global; 1 ld.global.nc with L1::no_allocate; 2 that with an L2 evict-first cache policy
//   SR_PDL    1: launched as the GEMMs are under PDL: wait for the previous grid, then let the next one start its
//             set-up

__device__ __forceinline__ uint4 stream_load(const uint4* p, u64 policy) {
#if SR_HINT == 0
  (void)policy;
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
#elif SR_HINT == 1
  (void)policy;
  return ld_global_nc_v4(p);
#else
  return ld_global_nc_v4_hint(p, policy);
#endif
}

__device__ __forceinline__ u32 halves(u32 w) { return (w & 0xFFFFu) + (w >> 16); }

// a16 and b16: the operands' sizes in 16-byte chunks (K a multiple of 8 makes every row a whole number of them).
// Chunk i of the concatenation A ++ B is read by thread i mod T of a lap of T x SR_UNROLL chunks: consecutive
// threads read consecutive chunks, and a thread's SR_UNROLL loads are issued before any is used.
extern "C" __global__ void __launch_bounds__(SR_THREADS) stream_read_kernel(const uint4* __restrict__ a, u64 a16,
                                                                          const uint4* __restrict__ b, u64 b16,
                                                                          u64* checksum) {
#if SR_PDL
  grid_dependency_wait();
  launch_dependents();
#endif
#if SR_HINT == 2
  const u64 policy = l2_evict_first_policy();
#else
  const u64 policy = 0;
#endif
  const u64 total = a16 + b16;
  const u64 threads = (u64)gridDim.x * SR_THREADS;
  const u64 me = (u64)blockIdx.x * SR_THREADS + threadIdx.x;
  u64 sum = 0;
  for (u64 lap = 0; lap < total; lap += threads * SR_UNROLL) {
    uint4 v[SR_UNROLL];
#pragma unroll
    for (int u = 0; u < SR_UNROLL; u++) {
      const u64 i = lap + u * threads + me;
      v[u] = i < total ? stream_load(i < a16 ? a + i : b + (i - a16), policy) : make_uint4(0, 0, 0, 0);
    }
    u32 lap_sum = 0;  // at most 8 x SR_UNROLL words of 65535: no overflow up to SR_UNROLL = 16
#pragma unroll
    for (int u = 0; u < SR_UNROLL; u++) lap_sum += halves(v[u].x) + halves(v[u].y) + halves(v[u].z) + halves(v[u].w);
    sum += lap_sum;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, off);
  if (threadIdx.x % 32 == 0) asm volatile("red.global.add.u64 [%0], %1;" ::"l"(checksum), "l"(sum) : "memory");
}
