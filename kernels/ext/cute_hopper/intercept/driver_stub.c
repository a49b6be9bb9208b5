// A stand-in for libcuda.so.1 (and, preloaded, for the CuTe DSL runtime's driver wrappers) that records what the
// DSL's compiled host launcher asks of the driver: the tensor maps it encodes and the launch it makes, with the
// kernel's parameter bytes. No GPU, nothing runs. Used by build.sh --intercept; intercept.py reads its log.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE* out(void) {
  static FILE* f;
  if (!f) {
    const char* p = getenv("STUB_LOG");
    f = p ? fopen(p, "w") : stderr;
  }
  return f;
}
#define LOG(...) (fprintf(out(), __VA_ARGS__), fflush(out()))

// ---- libcuda.so.1: enough for the DSL's Python side and runtime to believe an sm_90 device is there ----
static char handle[64];
int cuInit(unsigned flags) { return 0; }
int cuDriverGetVersion(int* v) { *v = 13090; return 0; }
int cuDeviceGetCount(int* n) { *n = 1; return 0; }
int cuDeviceGet(int* d, int ordinal) { *d = 0; return 0; }
static int attribute(int attr) {
  switch (attr) {
    case 75: return 9;       // compute capability major
    case 76: return 0;       // minor
    case 97: return 232448;  // max shared memory per block (opt-in)
    case 16: return 132;     // SMs
    default: return 1;
  }
}
int cuDeviceGetAttribute(int* v, int attr, int dev) { *v = attribute(attr); return 0; }
int cuCtxGetCurrent(void** c) { *c = handle; return 0; }
int cuCtxGetDevice(int* d) { *d = 0; return 0; }
int cuDevicePrimaryCtxRetain(void** c, int d) { *c = handle; return 0; }
int cuGetErrorString(int e, const char** s) { *s = "driver stub"; return 0; }
int cuGetErrorName(int e, const char** s) { *s = "driver stub"; return 0; }
static int generic(void) { return 0; }
struct entry { const char* name; void* fn; };
#define E(n) { #n, (void*)n }
static const struct entry table[] = {
  E(cuInit), E(cuDriverGetVersion), E(cuDeviceGetCount), E(cuDeviceGet), E(cuDeviceGetAttribute),
  E(cuCtxGetCurrent), E(cuCtxGetDevice), E(cuDevicePrimaryCtxRetain), E(cuGetErrorString), E(cuGetErrorName),
  { 0, 0 } };
int cuGetProcAddress_v2(const char* sym, void** pfn, int ver, uint64_t flags, int* status) {
  *pfn = (void*)generic;  // anything else succeeds and does nothing
  for (const struct entry* e = table; e->name; e++)
    if (!strcmp(e->name, sym)) *pfn = e->fn;
  if (status) *status = 0;
  return 0;
}
int cuGetProcAddress(const char* sym, void** pfn, int ver, uint64_t flags) {
  return cuGetProcAddress_v2(sym, pfn, ver, flags, 0);
}

// ---- the DSL runtime's wrappers (libcute_dsl_runtime.so), overridden by LD_PRELOAD ----
static char library[64], kernel[64];
int _cudaLibraryLoadData(void** l, const void* code, void* a, void* b, unsigned n, void* c, void* d, unsigned m) {
  *l = library;
  return 0;
}
int _cudaLibraryGetKernel(void** k, void* l, const char* name) {
  *k = kernel;
  LOG("kernel %s\n", name);
  return 0;
}
int _cudaLibraryUnload(void* l) { return 0; }
int _cudaGetDevice(int* d) { *d = 0; return 0; }
int _cudaSetDevice(int d) { return 0; }
int _cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int _cudaGetLastError(void) { return 0; }
int _cudaDeviceGetAttribute(int* v, int attr, int dev) { *v = attribute(attr); return 0; }
int _cudaKernelSetAttributeForDevice(void* k, int attr, int v, int dev) { LOG("kernel_attribute %d %d\n", attr, v); return 0; }
int _cudaFuncSetAttribute(void* f, int attr, int v) { LOG("func_attribute %d %d\n", attr, v); return 0; }
int _cuKernelGetAttribute(int* v, int attr, void* k, int dev) { *v = 0; return 0; }

// The same twelve arguments as cuTensorMapEncodeTiled, which the runtime's wrapper forwards unchanged.
static int encodes;
int _cuTensorMapEncodeTiled(void* map, int dtype, uint32_t rank, void* addr, const uint64_t* dims,
                            const uint64_t* strides, const uint32_t* box, const uint32_t* element_strides,
                            int interleave, int swizzle, int l2_promotion, int oob_fill) {
  LOG("encode %d dtype=%d rank=%u address=%p dims=", encodes, dtype, rank, addr);
  for (uint32_t i = 0; i < rank; i++) LOG("%s%llu", i ? "," : "", (unsigned long long)dims[i]);
  LOG(" strides=");
  for (uint32_t i = 0; i + 1 < rank; i++) LOG("%s%llu", i ? "," : "", (unsigned long long)strides[i]);
  LOG(" box=");
  for (uint32_t i = 0; i < rank; i++) LOG("%s%u", i ? "," : "", box[i]);
  LOG(" element_strides=");
  for (uint32_t i = 0; i < rank; i++) LOG("%s%u", i ? "," : "", element_strides[i]);
  LOG(" interleave=%d swizzle=%d l2_promotion=%d oob_fill=%d\n", interleave, swizzle, l2_promotion, oob_fill);
  // A recognisable map: "encode N" followed by 0xee, to find verbatim among the launch's parameters.
  memset(map, 0xee, 128);
  snprintf((char*)map, 16, "encode %d", encodes++);
  return 0;
}

typedef struct { unsigned gx, gy, gz, bx, by, bz; size_t smem; void* stream; void* attrs; unsigned nattrs; } Config;
typedef struct { int id; int pad; unsigned value[16]; } Attribute;
int _cudaLaunchKernelEx(const Config* c, const void* f, void** params) {
  LOG("launch grid=%u,%u,%u block=%u,%u,%u shared=%zu\n", c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem);
  const Attribute* a = c->attrs;
  // The first word of each value: cooperative (2) and programmatic stream serialization (6) are 0 or 1.
  for (unsigned i = 0; i < c->nattrs; i++) LOG("attribute %d %u\n", a[i].id, a[i].value[0]);
  // The parameter sizes come from the PTX (intercept.py reads them there).
  const char* sizes = getenv("STUB_PARAM_SIZES");
  char buf[256];
  strncpy(buf, sizes ? sizes : "", sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  int i = 0;
  for (char* t = strtok(buf, ","); t; t = strtok(NULL, ","), i++) {
    const unsigned char* p = params[i];
    LOG("param %d", i);
    for (int j = 0; j < atoi(t); j++) LOG(" %02x", p[j]);
    LOG("\n");
  }
  return 0;
}
