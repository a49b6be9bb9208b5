//! Something that computes C = A * B^T on an operand set: a ladder kernel or cuBLAS. Timing and checking see
//! only this trait.

use crate::error::Result;
use crate::gpu::compile::{self, ResourceReport};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::tma::{self, TmaDesc};
use crate::kernel::config::GemmConfig;
use crate::kernel::source;
use crate::measure::operands::Operands;

pub trait Variant {
    fn label(&self) -> String;
    /// Enqueues one GEMM on operand set `set` (no synchronization).
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()>;
}

/// A ladder configuration, compiled, loaded and bound to a problem's operand sets.
pub struct GemmKernel<'a> {
    pub label: String,
    pub config: GemmConfig,
    pub report: ResourceReport,
    kernel: Kernel,
    operands: &'a Operands,
    maps: Vec<[TmaDesc; 3]>,
    shape: LaunchShape,
    raster: i32,
    hang: &'a HangWatch,
}

impl<'a> GemmKernel<'a> {
    /// Validates the config against the shape and device, compiles it, and encodes the tensor maps of every set.
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &GemmConfig,
        operands: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape(shape)?;
        let raster = config.raster_group(shape)? as i32;
        let compiled = compile::compile(label, &source::gemm_program(config, operands.dtype))?;
        let kernel = Kernel::load(gpu, &compiled, "gemm_kernel")?;
        kernel.set_dynamic_smem(gpu, config.smem_bytes())?;
        let a_params = tma::operand(shape.m, shape.k, config.bm(), config.tile_k, config.swizzle)?;
        let b_params = tma::operand(
            shape.n,
            shape.k,
            config.bn / config.cluster_m,
            config.tile_k,
            config.swizzle,
        )?;
        let c_params = tma::output(shape.m, shape.n)?;
        let maps = operands
            .sets
            .iter()
            .map(|s| -> Result<[TmaDesc; 3]> {
                Ok([
                    tma::encode(&a_params, s.a.ptr(), operands.dtype)?,
                    tma::encode(&b_params, s.b.ptr(), operands.dtype)?,
                    tma::encode(&c_params, s.c(), operands.dtype)?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let launch_shape = LaunchShape {
            grid: config.grid(shape, gpu.info.sm_count),
            block: config.threads(),
            smem: config.smem_bytes(),
            cluster: config.cluster_m,
        };
        Ok(GemmKernel {
            label: label.to_string(),
            config: config.clone(),
            report: compiled.report.clone(),
            kernel,
            operands,
            maps,
            shape: launch_shape,
            raster,
            hang,
        })
    }
}

impl Variant for GemmKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        let shape = &self.operands.shape;
        let [mut ta, mut tb, mut tc] = self.maps[set];
        let mut c = self.operands.sets[set].c();
        let (mut m, mut n, mut k, mut raster) =
            (shape.m as i32, shape.n as i32, shape.k as i32, self.raster);
        let mut rec = self.hang.device_ptr();
        let mut params = crate::kernel_params![
            &mut ta,
            &mut tb,
            &mut tc,
            &mut c,
            &mut m,
            &mut n,
            &mut k,
            &mut raster,
            &mut rec
        ];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}
