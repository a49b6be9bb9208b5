// clock_after.cu: the SM clock right after the kernels before it in the stream, measured by one thread: its SM's
// cycles between two edges of the global timer SPAN_NS or more apart. Counting from edge to edge keeps the timer's
// update step out of the ratio. Launched back to back after a GEMM batch (sustain), it was meant to read the clock
// state the batch left, cuBLAS's too, whose kernels carry no probe; H77 found it reads 19-27% above the clock the
// batch ran at (the slowdown under tensor-core load lifts within microseconds), so it shows that, and no more.

extern "C" __global__ void clock_after(u64* out, u64 span_ns) {
  const u64 t0 = global_timer_ns();
  u64 t1 = t0;
  while (t1 == t0) t1 = global_timer_ns();
  const u64 c1 = clock64();
  u64 t2 = t1;
  for (;;) {
    const u64 t = global_timer_ns();
    if (t != t2 && t - t1 >= span_ns) {
      t2 = t;
      break;
    }
    t2 = t;
  }
  const u64 c2 = clock64();
  out[0] = c2 - c1;
  out[1] = t2 - t1;
}
