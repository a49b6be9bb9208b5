//! The skinny GEMM bound to a problem's operand sets: timed, and checked against cuBLAS like every GEMM.

use super::config::SkinnyConfig;
use crate::error::Result;
use crate::gpu::compile::{self, ResourceReport};
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::measure::operands::{GuardedOutput, Operands};
use crate::measure::variant::{IntoOutput, Variant};

/// The skinny GEMM bound to a problem's operand sets.
pub struct SkinnyKernel<'a> {
    pub label: String,
    pub config: SkinnyConfig,
    pub report: ResourceReport,
    kernel: Kernel,
    operands: &'a Operands,
    shape: LaunchShape,
}

impl<'a> SkinnyKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &SkinnyConfig,
        operands: &'a Operands,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape(shape)?;
        let compiled = compile::compile(label, &config.program(operands.dtype))?;
        let kernel = Kernel::load(gpu, &compiled, "skinny_kernel")?;
        let ring = config.ring_bytes();
        if ring > 0 {
            kernel.set_dynamic_smem(gpu, ring)?;
        }
        Ok(SkinnyKernel {
            label: label.to_string(),
            config: config.clone(),
            report: compiled.report.clone(),
            kernel,
            operands,
            shape: LaunchShape {
                grid: config.grid(shape),
                block: config.threads(),
                smem: ring,
                cluster: 1,
                pdl: config.pdl,
            },
        })
    }

    fn enqueue(&self, gpu: &Gpu, set: usize, c: u64, ldc: usize) -> Result<()> {
        let s = &self.operands.shape;
        let ops = &self.operands.sets[set];
        let (mut a, mut b, mut c, mut ldc) = (ops.a.ptr(), ops.b.ptr(), c, ldc as i32);
        let (mut m, mut n, mut k) = (s.m as i32, s.n as i32, s.k as i32);
        let mut params =
            crate::kernel_params![&mut a, &mut b, &mut c, &mut ldc, &mut m, &mut n, &mut k];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}

impl Variant for SkinnyKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.enqueue(gpu, set, self.operands.sets[set].c(), self.operands.shape.n)
    }
}

impl IntoOutput for SkinnyKernel<'_> {
    fn launch_into(&self, gpu: &Gpu, set: usize, out: &GuardedOutput) -> Result<()> {
        self.enqueue(gpu, set, out.c(), out.ldc)
    }
}
