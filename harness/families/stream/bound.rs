//! The read-floor kernel bound to a problem's operand sets: timed, and checked by the sum of what it read.

use super::config::StreamConfig;
use crate::error::Result;
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::measure::operands::{Operands, UtilKernels};
use crate::measure::variant::Variant;

/// The read-floor kernel bound to a problem's operands; `check` compares the sum of what it read with the operands'.
pub struct StreamKernel<'a> {
    pub label: String,
    pub config: StreamConfig,
    kernel: Kernel,
    operands: &'a Operands,
    shape: LaunchShape,
    checksum: DeviceBuffer,
}

impl<'a> StreamKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &StreamConfig,
        operands: &'a Operands,
    ) -> Result<Self> {
        config.validate_shape(&operands.shape)?;
        let compiled = compile::compile(label, &config.program())?;
        Ok(StreamKernel {
            label: label.to_string(),
            config: config.clone(),
            kernel: Kernel::load(gpu, &compiled, "stream_read_kernel")?,
            operands,
            shape: LaunchShape {
                grid: config.grid(&operands.shape, gpu.info.sm_count),
                block: config.threads,
                smem: 0,
                cluster: 1,
                pdl: config.pdl,
            },
            checksum: DeviceBuffer::new(gpu, 8)?,
        })
    }

    /// Runs once on set 0 from a zeroed sum; returns (what the kernel summed, what A and B sum to).
    pub fn check(&self, gpu: &Gpu, util: &UtilKernels) -> Result<(u64, u64)> {
        let s = &self.operands.shape;
        let set = &self.operands.sets[0];
        self.checksum.zero(gpu)?;
        self.launch(gpu, 0)?;
        gpu.synchronize()?;
        let got = self.checksum.read::<u64>(gpu)?[0];
        let want = util.sum_u16(gpu, set.a.ptr(), s.m * s.k)?
            + util.sum_u16(gpu, set.b.ptr(), s.n * s.k)?;
        Ok((got, want))
    }
}

impl Variant for StreamKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        let s = &self.operands.shape;
        let ops = &self.operands.sets[set];
        let (mut a, mut a16, mut b, mut b16, mut row16, mut sum) = (
            ops.a.ptr(),
            (s.m * s.k / 8) as u64,
            ops.b.ptr(),
            (s.n * s.k / 8) as u64,
            (s.k / 8) as u64,
            self.checksum.ptr(),
        );
        let mut params =
            crate::kernel_params![&mut a, &mut a16, &mut b, &mut b16, &mut row16, &mut sum];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}
