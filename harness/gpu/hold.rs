//! Holding the stream while the host enqueues a timed batch (nvbench's blocking kernel, kernels/hold_stream.cu).
//!
//! Why. A batch is timed between two events after the previous batch was waited for, so its launches reach an
//! empty queue one by one. At M <= 64 cuBLASLt's algorithms 1-7 timed 37.5-57 us in the path chooser, differing by
//! process, while cublasGemmEx and algorithm 0 timed the same everywhere (ablations/HYPOTHESES.md H93). Held, the
//! whole batch is queued before its start event runs, and algorithm 1 timed 35.1-35.6 us at M = 1 in every process
//! (H94 at 8743f5d). H94 had expected the host to be the cause; it is not (8-20 us a call against 35-57 us on the
//! GPU), and what else differs in an unheld batch is not known yet.

use crate::error::{CudaContext as _, Error, Result};
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use cudarc::driver::{result, sys};
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::atomic::{fence, Ordering};
use std::sync::Mutex;

/// The hold kernel's source (self-contained; the compile trials build it too).
pub const SOURCE: &str = include_str!("../../kernels/hold_stream.cu");

/// The hold gives up after this long (a launch queue too short for the batch would otherwise wait forever).
const TIMEOUT_NS: u64 = 250_000_000;

/// A compiled hold kernel and its two flags in mapped host memory: [0] released by the host, [1] set by a hold
/// that timed out.
pub struct StreamHold {
    kernel: Kernel,
    flags: *mut u32,
    flags_on_device: u64,
    /// The variants that have run a batch in this process. A kernel's first launch loads its module (CUDA's lazy
    /// loading), which waits for the work before it, the hold too: a first batch runs unheld.
    launched: Mutex<HashSet<String>>,
}

// The flags are written by one host thread at a time (the trial's) and read by the GPU.
unsafe impl Send for StreamHold {}
unsafe impl Sync for StreamHold {}

/// From now on timed batches on `gpu` wait behind a stream hold until the host has enqueued them; the GPU keeps
/// the hold for its context's life.
pub fn hold_batches(gpu: &Gpu) -> Result<()> {
    gpu.keep(|| Ok(Box::new(StreamHold::new(gpu)?)))
}

/// The stream hold of `gpu`, where `hold_batches` made one.
pub fn stream_hold(gpu: &Gpu) -> Option<&StreamHold> {
    gpu.kept().and_then(|k| k.downcast_ref::<StreamHold>())
}

impl StreamHold {
    pub fn new(gpu: &Gpu) -> Result<StreamHold> {
        let compiled = compile::compile("hold_stream", SOURCE)?;
        let kernel = Kernel::load(gpu, &compiled, "hold_stream")?;
        gpu.ctx.bind_to_thread().during("binding the context")?;
        let flags = unsafe { result::malloc_host(8, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .during("allocating the hold's mapped flags")? as *mut u32;
        let mut on_device: sys::CUdeviceptr = 0;
        unsafe {
            std::ptr::write_volatile(flags, 0);
            std::ptr::write_volatile(flags.add(1), 0);
            sys::cuMemHostGetDevicePointer_v2(&mut on_device, flags as *mut c_void, 0)
                .result()
                .during("mapping the hold's flags")?;
        }
        Ok(StreamHold {
            kernel,
            flags,
            flags_on_device: on_device,
            launched: Mutex::new(HashSet::new()),
        })
    }

    /// Forgets which variants ran a batch: a new job loads its modules afresh, so its first batches run unheld.
    pub fn forget_launches(&self) {
        self.launched.lock().unwrap().clear();
    }

    /// Whether `variant` has run a batch in this process before; from now on it has.
    pub fn launched_before(&self, variant: &str) -> bool {
        !self.launched.lock().unwrap().insert(variant.to_string())
    }

    /// Enqueues the hold: the stream waits behind it until `release` (or the timeout).
    pub fn hold(&self, gpu: &Gpu) -> Result<Held<'_>> {
        unsafe {
            std::ptr::write_volatile(self.flags, 0);
            std::ptr::write_volatile(self.flags.add(1), 0);
        }
        fence(Ordering::SeqCst);
        let (mut flags, mut timeout) = (self.flags_on_device, TIMEOUT_NS);
        let mut params = crate::kernel_params![&mut flags, &mut timeout];
        let one = LaunchShape {
            grid: 1,
            block: 1,
            smem: 0,
            cluster: 1,
            pdl: false,
        };
        unsafe { launch(gpu, &self.kernel, one, &mut params)? };
        Ok(Held { hold: self })
    }

    fn release(&self) {
        fence(Ordering::SeqCst);
        unsafe { std::ptr::write_volatile(self.flags, 1) };
    }

    /// Whether the last hold gave up before the host released it (read after the stream was waited for).
    pub fn timed_out(&self) -> bool {
        unsafe { std::ptr::read_volatile(self.flags.add(1)) != 0 }
    }
}

impl Drop for StreamHold {
    fn drop(&mut self) {
        unsafe {
            let _ = result::free_host(self.flags as *mut c_void);
        }
    }
}

/// A hold in the stream; dropping it releases the stream, so an error while enqueueing never leaves it waiting.
pub struct Held<'a> {
    hold: &'a StreamHold,
}

impl Held<'_> {
    /// Releases the stream: everything enqueued since the hold runs back to back.
    pub fn release(self) {}
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.hold.release();
    }
}

/// The error of a batch whose hold timed out: the batch was timed at the host's pace after all.
pub fn timed_out_error(variant: &str, launches: u32) -> Error {
    Error::Other(format!(
        "a batch of {launches} launches of {variant} was not all enqueued within {} ms of its hold: the launch \
         queue is shorter than the batch, a launch waited for the work before it, or the host stalled; set \
         GEMM_ABLATE_HOLD_BATCHES=0 to time batches unheld",
        TIMEOUT_NS / 1_000_000
    ))
}
