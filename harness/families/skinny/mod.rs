//! The skinny GEMM for a few tokens (kernels/skinny.cu, H80): the weight stream's 16-byte loads fed straight to
//! mma.sync. `skinny[:SWITCH=VALUE,...]` on the command line (config.rs); checked against cuBLAS like every GEMM.

pub mod bound;
pub mod config;

use super::{read_back, stored, Bound, Check, Family, Kernel};
use crate::error::Result;
use crate::gpu::arch::Arch;
use crate::gpu::compile::{self, Compiled};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::measure::operands::Operands;
use crate::measure::record::VariantRecord;
use crate::measure::variant::Variant;
use bound::SkinnyKernel;
use config::SkinnyConfig;
use std::sync::Arc;

pub struct Skinny;

impl Family for Skinny {
    fn name(&self) -> &'static str {
        "skinny"
    }
    fn about(&self) -> String {
        format!(
            "  skinny       a GEMM for M <= 32 whose weight loads are its mma.sync fragments (kernels/skinny.cu, H80); \
             switches {}\n",
            config::SWITCHES
        )
    }
    fn parse(&self, spec: &str) -> Option<Result<(String, serde_json::Value)>> {
        SkinnyConfig::parse(spec).map(|c| c.map(|c| (c.label(), stored(&c))))
    }
    fn open(&self, config: &serde_json::Value) -> Result<Box<dyn Kernel>> {
        Ok(Box::new(read_back::<SkinnyConfig>(self.name(), config)?))
    }
}

impl Kernel for SkinnyConfig {
    /// With `pdl=1` it waits on the previous grid (griddepcontrol, sm_90); otherwise anything from sm_80.
    fn needs(&self) -> Arch {
        super::pdl_arch(self.pdl)
    }
    fn validate_shape(&self, shape: &Shape) -> Result<()> {
        SkinnyConfig::validate_shape(self, shape)
    }
    fn programs(&self, name: &str, dtype: DType) -> Option<Vec<(String, String)>> {
        Some(vec![(
            format!("{name}::{}", dtype.name()),
            self.program(dtype),
        )])
    }
    fn build(&self, name: &str, dtype: DType) -> Result<Arc<Compiled>> {
        compile::compile(name, &self.program(dtype))
    }
    fn shown(&self, name: &str, dtype: DType, everything: bool) -> Result<String> {
        super::shown_program(
            name,
            &self.defines(dtype),
            source::SKINNY,
            "skinny.cu",
            everything,
        )
    }
    fn bind<'a>(
        &self,
        name: &str,
        gpu: &'a Gpu,
        ops: &'a Operands,
        _hang: &'a HangWatch,
    ) -> Result<Box<dyn Bound + 'a>> {
        Ok(Box::new(SkinnyKernel::new(gpu, name, self, ops)?))
    }
    fn profiled(&self) -> String {
        "skinny_kernel".into()
    }
}

impl Bound for SkinnyKernel<'_> {
    fn variant(&self) -> &dyn Variant {
        self
    }
    fn checked_record(&self, check: &Check) -> Result<VariantRecord> {
        Ok(VariantRecord {
            resources: Some(self.report.clone()),
            check: Some(check.against_cublas(self)?),
            ..check.record(self.label())
        })
    }
}
