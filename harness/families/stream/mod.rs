//! The read floor (kernels/stream_read.cu, H79): A and B read once and summed, no MMA: what reading a GEMM's bytes
//! takes. `stream[:SWITCH=VALUE,...]` on the command line (config.rs); checked by the sum of what it read.

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
use crate::measure::measures::{self, Measure};
use crate::measure::operands::Operands;
use crate::measure::record::VariantRecord;
use crate::measure::variant::Variant;
use bound::StreamKernel;
use config::StreamConfig;
use std::sync::Arc;

pub struct Stream;

impl Family for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }
    fn about(&self) -> String {
        format!(
            "  stream       the read floor: A and B read once, 16-byte loads, a sum (kernels/stream_read.cu, H79); \
             switches {}\n",
            config::SWITCHES
        )
    }
    fn parse(&self, spec: &str) -> Option<Result<(String, serde_json::Value)>> {
        StreamConfig::parse(spec).map(|c| c.map(|c| (c.label(), stored(&c))))
    }
    fn open(&self, config: &serde_json::Value) -> Result<Box<dyn Kernel>> {
        Ok(Box::new(read_back::<StreamConfig>(self.name(), config)?))
    }
}

impl Kernel for StreamConfig {
    /// With `pdl=1` it waits on the previous grid (griddepcontrol, sm_90); otherwise anything from sm_80.
    fn needs(&self) -> Arch {
        super::pdl_arch(self.pdl)
    }
    fn validate_shape(&self, shape: &Shape) -> Result<()> {
        StreamConfig::validate_shape(self, shape)
    }
    fn programs(&self, name: &str, _dtype: DType) -> Option<Vec<(String, String)>> {
        Some(vec![(name.to_string(), self.program())])
    }
    fn build(&self, name: &str, _dtype: DType) -> Result<Arc<Compiled>> {
        compile::compile(name, &self.program())
    }
    fn shown(&self, name: &str, _dtype: DType, everything: bool) -> Result<String> {
        super::shown_program(
            name,
            &self.defines(),
            source::STREAM_READ,
            "stream_read.cu",
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
        Ok(Box::new(StreamKernel::new(gpu, name, self, ops)?))
    }
    /// The rate it reads A and B at.
    fn measures(&self, us: f64, shape: &Shape) -> Vec<Measure> {
        measures::read_floor(us, StreamConfig::bytes_per_launch(shape))
    }
    fn profiled(&self) -> String {
        "stream_read_kernel".into()
    }
}

impl Bound for StreamKernel<'_> {
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
