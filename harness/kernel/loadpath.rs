//! The load-path isolation kernel (kernels/load_path.cu): the GEMM's TMA pipeline without MMAs, so that the rate
//! at which bytes land in shared memory can be measured per layout and box width.

use crate::error::{config_err, Result};
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::gpu::tma::{self, TmaDesc, TmaParams};
use crate::kernel::config::Swizzle;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::kernel::variant::Variant;
use crate::measure::operands::{Operands, UtilKernels};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadPathConfig {
    pub swizzle: Swizzle,
    /// Width of one TMA box in bytes: 16, 32, 64 or 128.
    pub box_bytes: u32,
    pub stages: u32,
    pub same_tile: bool,
}

const ROWS: u32 = 128;
const STAGE_BYTES: u32 = 2 * ROWS * 128;

impl LoadPathConfig {
    pub fn new(swizzle: Swizzle, box_bytes: u32) -> LoadPathConfig {
        LoadPathConfig {
            swizzle,
            box_bytes,
            stages: 4,
            same_tile: false,
        }
    }
    pub fn smem_bytes(&self) -> u32 {
        1024 + self.stages * STAGE_BYTES + 16 * self.stages
    }
    pub fn validate(&self) -> Result<()> {
        if !matches!(self.box_bytes, 16 | 32 | 64 | 128) {
            return config_err(format!(
                "load-path box width must be 16, 32, 64 or 128 bytes, got {}",
                self.box_bytes
            ));
        }
        let span = self.swizzle.bytes();
        if span != 0 && self.box_bytes != span {
            return config_err(format!(
                "a {span}B swizzle needs {span}-byte boxes here (got {}): the swizzle span is the box width",
                self.box_bytes
            ));
        }
        if self.stages == 0 || self.smem_bytes() > crate::kernel::config::HOPPER_SMEM_OPTIN {
            return config_err(format!(
                "{} load-path stages do not fit in shared memory",
                self.stages
            ));
        }
        Ok(())
    }
    pub fn validate_shape(&self, shape: &Shape) -> Result<()> {
        self.validate()?;
        if !shape.m.is_multiple_of(ROWS as usize)
            || !shape.n.is_multiple_of(ROWS as usize)
            || !shape.k.is_multiple_of(64)
        {
            return config_err(format!(
                "{}: the load path needs M and N multiples of 128 and K a multiple of 64",
                shape.name
            ));
        }
        Ok(())
    }
    fn defines(&self, checksum: bool) -> Vec<(&'static str, String)> {
        let mut d = source::util_defines(DType::F16);
        d.retain(|(k, _)| *k != "BOUNDED_WAITS" && *k != "HANG_TIMEOUT_NS");
        d.extend([
            ("BOUNDED_WAITS", "1".to_string()),
            ("HANG_TIMEOUT_NS", "2000000000ull".to_string()),
            ("LP_SWIZZLE", self.swizzle.bytes().to_string()),
            ("LP_BOX_BYTES", self.box_bytes.to_string()),
            ("LP_STAGES", self.stages.to_string()),
            ("LP_SAME_TILE", u32::from(self.same_tile).to_string()),
            ("LP_CHECKSUM", u32::from(checksum).to_string()),
            ("SMEM_BYTES", self.smem_bytes().to_string()),
        ]);
        d
    }
    pub fn program(&self, checksum: bool) -> String {
        source::program(&self.defines(checksum), source::LOAD_PATH)
    }
    /// The 2-D map each box is cut from: {K, rows}, box {box_bytes / 2, 128}.
    pub fn tma_params(&self, rows: usize, k: usize) -> Result<TmaParams> {
        let p = TmaParams {
            dims: vec![k as u64, rows as u64],
            strides: vec![(k * 2) as u64],
            box_dims: vec![self.box_bytes / 2, ROWS],
            swizzle: self.swizzle,
        };
        p.validate()?;
        Ok(p)
    }
    /// Bytes one launch lands in shared memory.
    pub fn bytes_per_launch(&self, shape: &Shape) -> f64 {
        let ctas = (shape.m / ROWS as usize) * (shape.n / ROWS as usize);
        ctas as f64 * (shape.k / 64) as f64 * f64::from(STAGE_BYTES)
    }
}

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
