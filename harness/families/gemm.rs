//! The ladder's GEMM as a family: its configurations (harness/kernel/config.rs) answer the interface every family
//! answers. Built in: the trials, the rungs and `auto` build `GemmConfig`s directly (`VariantSpec::Gemm`).

use super::{Bound, Check, Kernel};
use crate::error::{Error, Result};
use crate::gpu::arch::Arch;
use crate::gpu::compile::{self, Compiled};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::config::GemmConfig;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::measure::operands::Operands;
use crate::measure::record::VariantRecord;
use crate::measure::variant::{GemmKernel, Variant};
use std::sync::Arc;

impl Kernel for GemmConfig {
    fn needs(&self) -> Arch {
        Arch::HOPPER
    }
    fn validate_shape(&self, shape: &Shape) -> Result<()> {
        GemmConfig::validate_shape(self, shape)
    }
    fn takes(&self, dtype: DType) -> Result<()> {
        self.validate_for(dtype)
    }
    fn validate(&self, shape: &Shape, dtype: DType) -> Result<()> {
        self.validate_shape_for(shape, dtype)
    }
    fn programs(&self, name: &str, dtype: DType) -> Option<Vec<(String, String)>> {
        if self.validate_for(dtype).is_err() {
            return Some(Vec::new()); // a sweep point that is rejected by design is tested as a rejection, not compiled
        }
        Some(vec![(
            format!("{name}::{}", dtype.name()),
            source::gemm_program(self, dtype),
        )])
    }
    fn build(&self, name: &str, dtype: DType) -> Result<Arc<Compiled>> {
        self.validate_for(dtype)?;
        compile::compile(name, &source::gemm_program(self, dtype))
    }
    fn shown(&self, name: &str, dtype: DType, everything: bool) -> Result<String> {
        let program = source::resolved_program(&self.defines(dtype), source::GEMM, everything)?;
        Ok(format!("// {name}\n{program}"))
    }
    fn bind<'a>(
        &self,
        name: &str,
        gpu: &'a Gpu,
        ops: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Box<dyn Bound + 'a>> {
        Ok(Box::new(GemmKernel::new(gpu, name, self, ops, hang)?))
    }
    fn profiled(&self) -> String {
        "gemm_kernel".into()
    }
    fn checkable(&self, name: &str) -> Result<()> {
        if !self.computes_gemm() && self.fault.is_none() {
            return Err(Error::Config(format!(
                "{name} computes no GEMM to check against cuBLAS"
            )));
        }
        Ok(())
    }
    fn gemm_config(&self) -> Option<&GemmConfig> {
        Some(self)
    }
}

impl Bound for GemmKernel<'_> {
    fn variant(&self) -> &dyn Variant {
        self
    }
    fn checked_record(&self, check: &Check) -> Result<VariantRecord> {
        let mut r = VariantRecord {
            config: Some(self.config.clone()),
            resources: Some(self.report.clone()),
            ..check.record(self.label())
        };
        // The isolation kernels compute no GEMM: checked only where they inject a fault.
        if self.config.computes_gemm() || self.config.fault.is_some() {
            r.check = Some(check.against_cublas(self)?);
        }
        Ok(r)
    }
    fn warnings(&self) -> Vec<String> {
        self.report
            .warnings
            .iter()
            .filter(|w| !w.contains("Remark"))
            .map(|w| format!("{}: ptxas {w}", self.label))
            .chain(self.placement.clone())
            .collect()
    }
}
