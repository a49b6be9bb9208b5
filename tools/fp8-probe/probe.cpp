// H112 (issue 40): what the installed cuBLASLt does with FP8 e4m3 on this GPU, before any FP8 code of ours exists.
// For each shape and each pair of scale modes (per-tensor; row-wise: one scale per row of A and per column of B;
// block: one per 128 k-elements of each row of A and one per 128x128 block of B, as DeepSeek-V3), asks the heuristic
// for algorithms (e4m3 x e4m3 -> bf16, fp32 accumulation, both operands K-major: the only FP8 layout Hopper takes),
// and times the first one it returns: CUDA events around 200 back-to-back launches after 20 warm-up launches, the
// operands left as they are in L2 (this states what the library can do, not a suite measurement; the suite's own
// reference path will time it paired, under its rules). Operands hold finite e4m3 values; the output is not checked.
//
// Build and run on the device (tools/h200-fp8-probe.sh): nvcc -O2 -o probe probe.cpp -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// The scale modes of our A (the tokens, M rows) and our B (the weights, N rows).
struct Modes {
  const char* name;
  cublasLtMatmulMatrixScale_t a, b;
};

static size_t scale_count(cublasLtMatmulMatrixScale_t mode, long rows, long k) {
  // `rows`: M for A, N for B; both operands are K-major.
  switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return 1;
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return rows;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return rows * ((k + 127) / 128);
    // Each row of k-blocks padded to a multiple of 4, as cuBLASLt reads them (harness/measure/fp8.rs).
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return ((rows + 127) / 128) * (((k + 127) / 128 + 3) / 4 * 4);
    default: return 0;
  }
}

static void probe(cublasLtHandle_t lt, long m, long n, long k, const Modes& modes, void* work, size_t work_bytes) {
  std::printf("%ldx%ldx%ld %-9s ", m, n, k, modes.name);
  uint8_t *a, *b;
  void* d;
  float *sa, *sb;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&a), m * k));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&b), n * k));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&d), m * n * 2));
  size_t na = scale_count(modes.a, m, k), nb = scale_count(modes.b, n, k);
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&sa), na * sizeof(float)));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&sb), nb * sizeof(float)));
  {
    // Finite e4m3 values: a random sign, exponent field 1..10, any mantissa (0x7f and 0xff, the NaNs, never occur).
    std::vector<uint8_t> h(std::max(m, n) * k);
    uint32_t x = 12345;
    for (auto& v : h) {
      x = x * 1664525u + 1013904223u;
      v = uint8_t(((x >> 24) & 0x80) | (((x >> 16) % 10 + 1) << 3) | ((x >> 8) & 7));
    }
    CHECK_CUDA(cudaMemcpy(a, h.data(), m * k, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, h.data(), n * k, cudaMemcpyHostToDevice));
    std::vector<float> ones(std::max(na, nb), 1.0f);
    CHECK_CUDA(cudaMemcpy(sa, ones.data(), na * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(sb, ones.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
  }
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  // As the harness asks (harness/measure/reference.rs): row-major C = A B^T is column-major C^T = B A^T, so
  // cuBLASLt's A is our B (the weights, K x N stored, transposed), its B our A (the tokens, K x M), D is N x M with
  // leading dimension N, and each operand's scale mode and buffer go with it.
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  cublasStatus_t sm = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &modes.b, sizeof(modes.b));
  cublasStatus_t sn = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &modes.a, sizeof(modes.a));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof(sb));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof(sa));
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, n, k);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, m, k);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, m, n);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes, sizeof(work_bytes));
  cublasLtMatmulHeuristicResult_t found[8];
  int count = 0;
  cublasStatus_t sh = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 8, found, &count);
  if (sm != CUBLAS_STATUS_SUCCESS || sn != CUBLAS_STATUS_SUCCESS || sh != CUBLAS_STATUS_SUCCESS || count == 0) {
    std::printf("not supported (scale modes %d/%d, heuristic status %d, %d algorithms)\n", int(sm), int(sn), int(sh),
                count);
  } else {
    float alpha = 1.0f, beta = 0.0f;
    auto launch = [&] {
      return cublasLtMatmul(lt, desc, &alpha, b, la, a, lb, &beta, d, ld, d, ld, &found[0].algo, work, work_bytes, 0);
    };
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 20 && s == CUBLAS_STATUS_SUCCESS; ++i) s = launch();
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    const int reps = 200;
    for (int i = 0; i < reps && s == CUBLAS_STATUS_SUCCESS; ++i) s = launch();
    cudaEventRecord(e1);
    CHECK_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    double us = 1e3 * ms / reps;
    double bytes = double(m) * k + double(n) * k + 2.0 * m * n;
    if (s != CUBLAS_STATUS_SUCCESS) {
      std::printf("%d algorithms, the first failed to run (status %d)\n", count, int(s));
    } else {
      std::printf("%d algorithms; the first: %.1f us, %.0f TFLOP/s, %.2f TB/s of operand and output bytes\n", count,
                  us, 2.0 * m * n * k / us / 1e6, bytes / us / 1e6);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaFree(sa));
  CHECK_CUDA(cudaFree(sb));
  CHECK_CUDA(cudaGetLastError());
}

int main() {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasLtCreate failed\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s (sm_%d%d), cuBLASLt %zu, CUDA runtime %d\n", prop.name, prop.major, prop.minor, cublasLtGetVersion(),
              CUDART_VERSION);
  size_t work_bytes = 32u << 20;
  void* work;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&work), work_bytes));
  const Modes modes[] = {
      {"tensor", CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F},
      {"row-wise", CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F},
      {"block", CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F},
  };
  // The standard square, the small-M points at N = K = 8192, two DeepSeek-V3 projections at M = 128.
  const long shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {1, 8192, 8192}, {16, 8192, 8192},
                            {128, 8192, 8192}, {128, 2112, 7168}, {128, 7168, 2048}};
  for (const auto& s : shapes)
    for (const auto& md : modes) probe(lt, s[0], s[1], s[2], md, work, work_bytes);
  CHECK_CUDA(cudaFree(work));
  cublasLtDestroy(lt);
  return 0;
}
