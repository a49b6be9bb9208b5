//! The load-path isolation kernel (kernels/load_path.cu): the TMA ring alone, no MMA, for the seed's step-4 table.
//! Built by the microbench's trials (no command-line spec); checked by the checksum of the bytes it staged.

pub mod bound;
pub mod config;

use super::{read_back, Bound, Check, Family, Kernel};
use crate::error::Result;
use crate::gpu::arch::Arch;
use crate::gpu::compile::{self, Compiled};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::measure::measures::{self, Measure};
use crate::measure::operands::Operands;
use crate::measure::record::VariantRecord;
use crate::measure::variant::Variant;
use bound::LoadPathKernel;
use config::LoadPathConfig;
use std::sync::Arc;

pub struct LoadPath;

impl Family for LoadPath {
    fn name(&self) -> &'static str {
        "loadpath"
    }
    fn parse(&self, _spec: &str) -> Option<Result<(String, serde_json::Value)>> {
        None
    }
    fn open(&self, config: &serde_json::Value) -> Result<Box<dyn Kernel>> {
        Ok(Box::new(read_back::<LoadPathConfig>(self.name(), config)?))
    }
}

impl Kernel for LoadPathConfig {
    /// TMA with multicast-free boxes, mbarriers: written for Hopper.
    fn needs(&self) -> Arch {
        Arch::HOPPER
    }
    fn validate_shape(&self, shape: &Shape) -> Result<()> {
        LoadPathConfig::validate_shape(self, shape)
    }
    fn programs(&self, name: &str, _dtype: DType) -> Option<Vec<(String, String)>> {
        Some(vec![
            (format!("{name}::timed"), self.program(false)),
            (format!("{name}::checksum"), self.program(true)),
        ])
    }
    fn build(&self, name: &str, _dtype: DType) -> Result<Arc<Compiled>> {
        compile::compile(name, &self.program(false))
    }
    fn shown(&self, name: &str, _dtype: DType, everything: bool) -> Result<String> {
        super::shown_program(
            name,
            &self.defines(false),
            source::LOAD_PATH,
            "load_path.cu",
            everything,
        )
    }
    fn bind<'a>(
        &self,
        name: &str,
        gpu: &'a Gpu,
        ops: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Box<dyn Bound + 'a>> {
        Ok(Box::new(LoadPathKernel::new(gpu, name, self, ops, hang)?))
    }
    /// The rate it fills shared memory at.
    fn measures(&self, us: f64, shape: &Shape) -> Vec<Measure> {
        measures::load_path(us, self.bytes_per_launch(shape))
    }
    fn profiled(&self) -> String {
        "load_path_kernel".into()
    }
}

impl Bound for LoadPathKernel<'_> {
    fn variant(&self) -> &dyn Variant {
        self
    }
    fn checked_record(&self, check: &Check) -> Result<VariantRecord> {
        Ok(VariantRecord {
            checksum: Some(self.check(check.gpu, check.util)?),
            ..check.record(self.label())
        })
    }
}
