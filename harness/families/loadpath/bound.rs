//! The load-path isolation kernel bound to a problem's operand sets (no MMA): timed, and checked by the checksum of
//! the bytes it staged.

use super::config::{LoadPathConfig, ROWS};
use crate::error::Result;
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::tma::{self, TmaDesc};
use crate::measure::operands::{Operands, UtilKernels};
use crate::measure::variant::Variant;

/// A load-path variant bound to a problem's operands; `check` verifies the staged bytes by checksum.
pub struct LoadPathKernel<'a> {
    pub label: String,
    pub config: LoadPathConfig,
    timed: Kernel,
    checked: Kernel,
    operands: &'a Operands,
    maps: Vec<[TmaDesc; 2]>,
    shape: LaunchShape,
    checksum: DeviceBuffer,
    hang: &'a HangWatch,
}

impl<'a> LoadPathKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &LoadPathConfig,
        operands: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape(shape)?;
        let load = |checksum: bool| -> Result<Kernel> {
            let c = compile::compile(label, &config.program(checksum))?;
            let k = Kernel::load(gpu, &c, "load_path_kernel")?;
            k.set_dynamic_smem(gpu, config.smem_bytes())?;
            Ok(k)
        };
        let (pa, pb) = (
            config.tma_params(shape.m, shape.k)?,
            config.tma_params(shape.n, shape.k)?,
        );
        let maps = operands
            .sets
            .iter()
            .map(|s| {
                Ok([
                    tma::encode(&pa, s.a.ptr(), operands.dtype)?,
                    tma::encode(&pb, s.b.ptr(), operands.dtype)?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let grid = ((shape.m / ROWS as usize) * (shape.n / ROWS as usize)) as u32;
        Ok(LoadPathKernel {
            label: label.to_string(),
            config: config.clone(),
            timed: load(false)?,
            checked: load(true)?,
            operands,
            maps,
            shape: LaunchShape {
                grid,
                block: 64,
                smem: config.smem_bytes(),
                cluster: 1,
                pdl: false,
            },
            checksum: DeviceBuffer::new(gpu, 8)?,
            hang,
        })
    }

    fn run(&self, gpu: &Gpu, kernel: &Kernel, set: usize) -> Result<()> {
        let s = &self.operands.shape;
        let [mut ta, mut tb] = self.maps[set];
        let (mut m, mut n, mut k) = (s.m as i32, s.n as i32, s.k as i32);
        let (mut sum, mut rec) = (self.checksum.ptr(), self.hang.device_ptr());
        let mut params =
            crate::kernel_params![&mut ta, &mut tb, &mut m, &mut n, &mut k, &mut sum, &mut rec];
        unsafe { launch(gpu, kernel, self.shape, &mut params) }
    }

    /// Runs the checksum build once on set 0 and compares with what the tiles it loads must sum to.
    pub fn check(&self, gpu: &Gpu, util: &UtilKernels) -> Result<(u64, u64)> {
        let s = &self.operands.shape;
        let set = &self.operands.sets[0];
        self.checksum.zero(gpu)?;
        self.hang.reset();
        self.run(gpu, &self.checked, 0)
            .map_err(|e| self.hang.explain(e))?;
        gpu.synchronize().map_err(|e| self.hang.explain(e))?;
        let got = self.checksum.read::<u64>(gpu)?[0];
        let (tiles_m, tiles_n) = ((s.m / ROWS as usize) as u64, (s.n / ROWS as usize) as u64);
        let want = if self.config.same_tile {
            let rows = ROWS as usize * s.k;
            tiles_m
                * tiles_n
                * (util.sum_u16(gpu, set.a.ptr(), rows)? + util.sum_u16(gpu, set.b.ptr(), rows)?)
        } else {
            tiles_n * util.sum_u16(gpu, set.a.ptr(), s.m * s.k)?
                + tiles_m * util.sum_u16(gpu, set.b.ptr(), s.n * s.k)?
        };
        Ok((got, want))
    }
}

impl Variant for LoadPathKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.run(gpu, &self.timed, set)
    }
}
