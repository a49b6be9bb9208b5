//! The load-path isolation kernel (kernels/load_path.cu): the GEMM's TMA pipeline without MMAs, so that the rate
//! at which bytes land in shared memory can be measured per layout and box width.

use crate::error::{config_err, Result};
use crate::kernel::config::Swizzle;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::kernel::tma::TmaParams;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadPathConfig {
    pub swizzle: Swizzle,
    /// Width of one TMA box in bytes: 16, 32, 64 or 128.
    pub box_bytes: u32,
    pub stages: u32,
    pub same_tile: bool,
}

/// Rows of A and of B per tile (the GEMM's 128x128 tile).
pub const ROWS: u32 = 128;
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
                "{}: the load path needs M and N multiples of 128 and K a multiple of 64 (an isolation kernel: it \
                 has no partial tiles, unlike the GEMM)",
                shape.name
            ));
        }
        Ok(())
    }
    pub fn defines(&self, checksum: bool) -> Vec<(&'static str, String)> {
        let mut d = source::util_defines(DType::F16);
        d.retain(|(k, _)| *k != "BOUNDED" && *k != "HANG_TIMEOUT_NS");
        d.extend([
            ("BOUNDED", "1".to_string()),
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
            elem_bytes: 2,
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
