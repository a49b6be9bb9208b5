// hold_stream.cu: keeps the stream waiting until the host has enqueued a whole timed batch behind it (nvbench's
// blocking kernel), so that a batch is timed at the GPU's pace even where one host call costs more than the kernel
// it launches (ablations/HYPOTHESES.md H94). One thread polls a flag in mapped host memory; past `timeout_ns` it
// gives up, marks flags[1] and lets the batch run at the host's pace, so a full launch queue cannot hang the run.

extern "C" __global__ void hold_stream(volatile unsigned int* flags, unsigned long long timeout_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    if (flags[0] != 0u) return;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      flags[1] = 1u;
      return;
    }
    __nanosleep(500);
  }
}
