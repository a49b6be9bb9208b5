//! Kernels brought in by a TOML manifest (`ext:NAME[:SWITCH=VALUE,...]`): a GEMM written anywhere (CUDA C++, PTX,
//! a cubin from nvcc, Triton or the CuTe DSL). manifest.rs reads and checks the manifest and builds the module,
//! expr.rs evaluates its expressions, bound.rs binds it to a problem; docs/external-kernels.md is the user's guide.
//! Checked against cuBLAS like every GEMM.

pub mod bound;
pub mod expr;
pub mod manifest;

use super::{read_back, stored, Bound, Check, Family, Kernel};
use crate::error::{config_err, Result};
use crate::gpu::arch::Arch;
use crate::gpu::compile::Compiled;
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::problem::{DType, Shape};
use crate::measure::operands::Operands;
use crate::measure::record::VariantRecord;
use crate::measure::variant::Variant;
use bound::ExternalKernel;
use manifest::{ExternalSpec, Module};
use std::sync::Arc;

pub struct External;

impl Family for External {
    fn name(&self) -> &'static str {
        "ext"
    }
    fn about(&self) -> String {
        manifest::listing()
    }
    fn parse(&self, spec: &str) -> Option<Result<(String, serde_json::Value)>> {
        ExternalSpec::parse(spec).map(|e| e.map(|e| (spec.trim().to_string(), stored(&e))))
    }
    fn open(&self, config: &serde_json::Value) -> Result<Box<dyn Kernel>> {
        Ok(Box::new(read_back::<ExternalSpec>(self.name(), config)?))
    }
}

impl Kernel for ExternalSpec {
    /// What its manifest's `arch` says (an unreadable manifest fails where the variant is bound, saying why).
    fn needs(&self) -> Arch {
        self.load().map_or(Arch::OLDEST, |(m, _)| m.arch)
    }
    /// The shape against the manifest, in the first dtype it lists.
    fn validate_shape(&self, shape: &Shape) -> Result<()> {
        let (m, values) = self.load()?;
        let dtype = m.dtypes[0];
        m.plan(&values, shape, dtype, shape.n).map(|_| ())
    }
    /// Its manifest says which dtypes it takes (`validate`, `build`).
    fn takes(&self, _dtype: DType) -> Result<()> {
        Ok(())
    }
    fn validate(&self, shape: &Shape, dtype: DType) -> Result<()> {
        ExternalSpec::validate(self, shape, dtype)
    }
    /// None: its module is built as its manifest says (`build`), in a compile trial of its own.
    fn programs(&self, _name: &str, _dtype: DType) -> Option<Vec<(String, String)>> {
        None
    }
    /// Only a source module: a PTX or a cubin is read as it is.
    fn needs_nvrtc(&self) -> bool {
        self.load()
            .is_ok_and(|(m, _)| matches!(m.module, Module::Source { .. }))
    }
    /// The manifest checked for this dtype, then the module built as it says.
    fn build(&self, name: &str, dtype: DType) -> Result<Arc<Compiled>> {
        let (m, _) = self.load()?;
        if !m.dtypes.contains(&dtype) {
            return config_err(format!(
                "{}: dtypes: {} is not supported",
                m.path.display(),
                dtype.name()
            ));
        }
        Ok(ExternalSpec::build(self, name, dtype)?.compiled)
    }
    fn shown(&self, name: &str, dtype: DType, _everything: bool) -> Result<String> {
        ExternalSpec::shown(self, name, dtype)
    }
    fn bind<'a>(
        &self,
        name: &str,
        gpu: &'a Gpu,
        ops: &'a Operands,
        _hang: &'a HangWatch,
    ) -> Result<Box<dyn Bound + 'a>> {
        Ok(Box::new(ExternalKernel::new(gpu, name, self, ops)?))
    }
    /// Its entry point.
    fn profiled(&self) -> String {
        self.load()
            .map(|(m, _)| m.entry)
            .unwrap_or_else(|_| "gemm_kernel".into())
    }
}

impl Bound for ExternalKernel<'_> {
    fn variant(&self) -> &dyn Variant {
        self
    }
    /// Checked like every GEMM, into the poisoned and guarded output, before it is ever timed.
    fn checked_record(&self, check: &Check) -> Result<VariantRecord> {
        Ok(VariantRecord {
            resources: Some(self.report.clone()),
            check: Some(check.against_cublas(self)?),
            ..check.record(self.label())
        })
    }
}
