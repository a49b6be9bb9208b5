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

/// Where a failed check is the max-error clause alone, on FP8 operands accumulated in the tensor core alone over a
/// long K: what is known of that (H158), so that the reader does not take the hardware's accumulation for a bug.
fn unpromoted_fp8_at_long_k(
    config: &GemmConfig,
    dtype: DType,
    k: usize,
    report: &crate::measure::check::CheckReport,
) -> Option<&'static str> {
    let max_error_alone = report.unwritten == 0
        && report.guard_damage == 0
        && report.reference_non_finite == 0
        && report.rel_fro_err <= report.tolerance.rel_fro;
    (dtype.is_fp8() && config.promote == 0 && k >= 16384 && max_error_alone).then_some(
        " (this kernel does not promote its FP8 partial sums: at K of 16384 and more the tensor core's FP8 accumulation alone passes or fails the max-error clause by the inputs drawn, about one draw in 18 on Hopper, H158 in ablations/HYPOTHESES.md; `promote=4` keeps it 40 times inside)",
    )
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
            let mut report = check.against_cublas(self)?;
            let (dtype, k) = (check.ops.dtype, check.ops.shape.k);
            let why = unpromoted_fp8_at_long_k(&self.config, dtype, k, &report);
            if let (Some(problem), Some(why)) = (report.problem.as_mut(), why) {
                problem.push_str(why);
            }
            r.check = Some(report);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::problem::Scales;
    use crate::report::results::RunFile;

    /// 69beb33's failed check of the unpromoted top rung at K = 16384 (committed), with its configuration.
    fn long_k_failure() -> (GemmConfig, crate::measure::check::CheckReport) {
        let path = crate::replay::reference_dir()
            .join("69beb33/suite/runs/ablations-20261206T103225Z.json.xz");
        let run = RunFile::read(&path).unwrap();
        let t = run
            .trials
            .into_iter()
            .find(|t| t.name == "correct::fp8::e4m3::rung10_bn128::long_k")
            .unwrap();
        let v = t.variants.into_iter().next().unwrap();
        (v.config.unwrap(), v.check.unwrap())
    }

    #[test]
    fn an_unpromoted_fp8_failure_at_long_k_says_what_is_known_of_it() {
        let (config, report) = long_k_failure();
        let e4m3 = DType::E4M3(Scales::Tensor);
        assert!(!report.passed && report.rel_fro_err <= report.tolerance.rel_fro);
        let said = unpromoted_fp8_at_long_k(&config, e4m3, 16384, &report).unwrap();
        assert!(
            said.contains("H158") && said.contains("promote=4"),
            "{said}"
        );
        // Not where the kernel promotes, K is shorter, the operands are 16-bit, or the Frobenius clause failed too.
        let promoted = GemmConfig {
            promote: 4,
            ..config.clone()
        };
        assert!(unpromoted_fp8_at_long_k(&promoted, e4m3, 16384, &report).is_none());
        assert!(unpromoted_fp8_at_long_k(&config, e4m3, 8192, &report).is_none());
        assert!(unpromoted_fp8_at_long_k(&config, DType::BF16, 16384, &report).is_none());
        let wide = crate::measure::check::CheckReport {
            rel_fro_err: 0.1,
            ..report
        };
        assert!(unpromoted_fp8_at_long_k(&config, e4m3, 16384, &wide).is_none());
    }
}
