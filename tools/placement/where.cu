// H143 (ablations/HYPOTHESES.md): where the block scheduler puts a grid of under one wave, and what moves it.
// Each block's first thread records its SM (%smid); a block takes enough shared memory that only one fits an SM
// (as rung 5 on decode_attn_out), and spins long enough that the whole grid is resident at once. Printed per
// launch: the SMs of blocks 0 and 8 and a hash of the whole map. Four ways of launching, one process:
//   primary  five launches in the runtime's primary context, back to back;
//   history  five launches in the primary context, each after a launch of a random number (1-131) of blocks;
//   steady   eight times: a scatter (one block an SM, each spinning a random time), then 40 launches back to
//            back, the last one's map printed (H144);
//   small    a launch of k blocks (k = 1-16, 24, 32, 48, 64, then 1 four times), then two probe launches (H145);
//   table    from the 9-block launch's state, k blocks, the probe, k blocks again, the probe, k = 1-40 (H147);
//   contexts five new contexts made one after another (cuCtxCreate), one launch each.
// Build on the device: nvcc -arch=sm_90 -o where tools/placement/where.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

__global__ void where(unsigned* sm_of_block, long long spin) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    sm_of_block[blockIdx.x] = sm;
    smem[0] = (unsigned char)sm;
  }
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
}

// One block an SM (shared memory as the probe's), each spinning its own random number of cycles, so that the SMs
// come free in a random order.
__global__ void scatter(unsigned seed, long long most) {
  extern __shared__ unsigned char smem[];
  unsigned x = seed ^ (blockIdx.x * 2654435761u);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  if (threadIdx.x == 0) smem[0] = (unsigned char)x;
  const long long start = clock64(), spin = (long long)(x % 1000u) * (most / 1000);
  while (clock64() - start < spin) {
  }
}

__global__ void shift(int* sink) {
  if (threadIdx.x == 0 && sink) sink[blockIdx.x] = blockIdx.x;
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static void check_drv(CUresult e, const char* what) {
  if (e != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(e, &s);
    fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    exit(1);
  }
}

// Launches the probe `launches` times back to back in the current context and prints the last map's signature.
static void probe(const char* mode, int index, int blocks, int smem, int launches = 1) {
  unsigned* d = nullptr;
  check(cudaMalloc(&d, blocks * sizeof(unsigned)), "cudaMalloc");
  check(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem attribute");
  for (int l = 0; l < launches; l++) where<<<blocks, 384, smem>>>(d, 200000);
  check(cudaGetLastError(), "launch");
  unsigned h[1024];
  check(cudaMemcpy(h, d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy back");
  unsigned hash = 2166136261u, used = 0;
  bool seen[1024] = {false};
  for (int b = 0; b < blocks; b++) {
    hash = (hash ^ h[b]) * 16777619u;
    if (h[b] < 1024 && !seen[h[b]]) {
      seen[h[b]] = true;
      used++;
    }
  }
  printf("%s %d: block0 sm %u, block8 sm %u, %u distinct SMs, map %08x\n", mode, index, h[0], h[8], used, hash);
  check(cudaFree(d), "cudaFree");
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? atoi(argv[1]) : 128;
  const int smem = 200 * 1024;
  if (blocks < 9 || blocks > 1024) {
    fprintf(stderr, "blocks: 9 to 1024\n");
    return 2;
  }
  srand((unsigned)getpid());
  check(cudaSetDevice(0), "cudaSetDevice");
  for (int i = 0; i < 5; i++) probe("primary", i, blocks, smem);
  for (int i = 0; i < 5; i++) {
    const int r = 1 + rand() % 131;
    shift<<<r, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "shift");
    printf("history %d: after %d blocks\n", i, r);
    probe("history", i, blocks, smem);
  }
  // steady: the SMs freed in a random order (scatter), then 40 launches back to back; the last one's map.
  check(cudaFuncSetAttribute(scatter, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem attribute");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  for (int i = 0; i < 8; i++) {
    scatter<<<sms, 384, smem>>>((unsigned)rand(), 400000);
    check(cudaDeviceSynchronize(), "scatter");
    probe("steady", i, blocks, smem, 40);
  }
  // small: a launch of k blocks of 32 threads, then two probe launches, for each k in turn (H145).
  const int ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 32, 48, 64, 1, 1, 1, 1};
  for (int k : ks) {
    shift<<<k, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "shift");
    printf("small: after %d blocks\n", k);
    probe("small", k, blocks, smem);
    probe("small", k, blocks, smem);
  }
  // table: from the 9-block launch's state, a launch of k blocks, a probe, k blocks again, a probe; for k = 1-40
  // (H147: which grids set which rotation).
  unsigned* d_map = nullptr;
  check(cudaMalloc(&d_map, blocks * sizeof(unsigned)), "cudaMalloc");
  auto rotation = [&]() {
    where<<<blocks, 384, smem>>>(d_map, 200000);
    unsigned h[1024];
    check(cudaMemcpy(h, d_map, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy back");
    return h[8];
  };
  for (int k = 1; k <= 40; k++) {
    shift<<<9, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "reset");
    const unsigned r0 = rotation();
    shift<<<k, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "shift");
    const unsigned r1 = rotation();
    shift<<<k, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "shift");
    const unsigned r2 = rotation();
    printf("table %d: %u -> %u -> %u\n", k, r0, r1, r2);
  }
  check(cudaFree(d_map), "cudaFree");
  check_drv(cuInit(0), "cuInit");
  CUdevice dev;
  check_drv(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext primary;
  check_drv(cuCtxGetCurrent(&primary), "cuCtxGetCurrent");
  for (int i = 0; i < 5; i++) {
    CUcontext ctx;
    check_drv(cuCtxCreate(&ctx, nullptr, 0, dev), "cuCtxCreate");
    probe("contexts", i, blocks, smem);
    check_drv(cuCtxDestroy(ctx), "cuCtxDestroy");
    check_drv(cuCtxSetCurrent(primary), "cuCtxSetCurrent");
  }
  return 0;
}
