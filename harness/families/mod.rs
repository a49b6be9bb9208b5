//! Kernel families: every kind of kernel the suite runs beside cuBLAS, behind one interface. A family is a folder
//! here (its configuration, its kernel bound to a problem, and the `Family` and `Kernel` impls that tie them to the
//! suite) and one line in `FAMILIES`; nothing else in the harness names it. The ladder's GEMM (harness/kernel/) is
//! the built-in family: the trials and `auto` build its configurations directly, and it answers the same
//! interface (gemm.rs).
//!
//! A variant of a family is stored as its family's name, its label and its configuration as JSON
//! (`VariantSpec::Family`), so a job sent to a worker process names any family the same way.

pub mod external;
pub mod gemm;
pub mod loadpath;
pub mod skinny;
pub mod stream;

use crate::error::{Error, Result};
use crate::gpu::arch::Arch;
use crate::gpu::compile::Compiled;
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::config::GemmConfig;
use crate::kernel::problem::{DType, Shape};
use crate::measure::check::{self, CheckReport};
use crate::measure::measures::{self, Measure};
use crate::measure::operands::{Operands, Seeds, UtilKernels};
use crate::measure::record::VariantRecord;
use crate::measure::reference::Cublas;
use crate::measure::variant::{IntoOutput, Variant};
use std::sync::Arc;

/// The families beside the ladder, as `list` shows them (their specs start with words of their own, so the order
/// does not decide which family reads a spec).
pub static FAMILIES: &[&dyn Family] = &[
    &stream::Stream,
    &skinny::Skinny,
    &loadpath::LoadPath,
    &external::External,
];

/// A kind of kernel: how a spec of it reads, and how a stored configuration of it opens.
pub trait Family: Sync {
    /// Its name in stored variants (`stream`).
    fn name(&self) -> &'static str;
    /// What `list` says of it (empty: nothing; a family without a spec of its own).
    fn about(&self) -> String {
        String::new()
    }
    /// A spec written on the command line or in a hypothesis file, read: its label and its configuration as
    /// stored; None where the spec is not this family's.
    fn parse(&self, spec: &str) -> Option<Result<(String, serde_json::Value)>>;
    /// A stored configuration, opened.
    fn open(&self, config: &serde_json::Value) -> Result<Box<dyn Kernel>>;
}

/// One configured kernel of a family: everything the suite asks of a variant that is not cuBLAS.
pub trait Kernel {
    /// The GPU architecture it runs on.
    fn needs(&self) -> Arch;
    /// Whether it can run this shape, whatever the dtype, before anything is allocated.
    fn validate_shape(&self, shape: &Shape) -> Result<()>;
    /// Whether it takes operands of `dtype`: fp16 and bf16, unless its family says more.
    fn takes(&self, dtype: DType) -> Result<()> {
        if dtype.is_fp8() {
            return Err(crate::error::Error::Config(
                "this kernel takes fp16 and bf16 operands: FP8 (e4m3) runs on the ladder's rungs with a k-block twice as deep (`10:tile_k=128`), and on external kernels whose manifest lists it".into(),
            ));
        }
        Ok(())
    }
    /// Whether it can run this problem, before anything is allocated.
    fn validate(&self, shape: &Shape, dtype: DType) -> Result<()> {
        self.takes(dtype)?;
        self.validate_shape(shape)
    }
    /// The NVRTC programs its compile trials build, each named (`NAME::fp16`); None where its module is not one
    /// program (`build` then builds it in a compile trial of its own).
    fn programs(&self, name: &str, dtype: DType) -> Option<Vec<(String, String)>>;
    /// Whether building it needs NVRTC.
    fn needs_nvrtc(&self) -> bool {
        true
    }
    /// Its module for `dtype`, built on the CPU (`build`, and the compile trial of a kernel without programs).
    fn build(&self, name: &str, dtype: DType) -> Result<Arc<Compiled>>;
    /// What `show` prints: only what it compiles and uses (`everything`: the whole program).
    fn shown(&self, name: &str, dtype: DType, everything: bool) -> Result<String>;
    /// Built, loaded and bound to a problem's operand sets, ready to be checked and timed.
    fn bind<'a>(
        &self,
        name: &str,
        gpu: &'a Gpu,
        ops: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Box<dyn Bound + 'a>>;
    /// Its figures at `us` a launch: a GEMM's throughput and effective bandwidth by default.
    fn measures(&self, us: f64, shape: &Shape) -> Vec<Measure> {
        measures::gemm(us, shape)
    }
    /// The kernel function a profile looks for among what ran.
    fn profiled(&self) -> String;
    /// Why a check job cannot judge it, where it cannot (a ladder isolation kernel computes no GEMM).
    fn checkable(&self, _name: &str) -> Result<()> {
        Ok(())
    }
    /// The ladder's configuration, which records keep.
    fn gemm_config(&self) -> Option<&GemmConfig> {
        None
    }
}

/// A kernel bound to a problem's operand sets.
pub trait Bound {
    fn variant(&self) -> &dyn Variant;
    /// Checks it (a GEMM against cuBLAS into a poisoned, guarded output; a kernel that computes none by the sum
    /// of what it read); the record says what was found.
    fn checked_record(&self, check: &Check) -> Result<VariantRecord>;
    /// What to warn of (ptxas's warnings, a grid that runs in waves).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What checking a bound kernel takes: the GPU, the utility kernels, the operands it is bound to, the reference,
/// the hang watch, the seeds of fresh inputs, and the variant's name.
pub struct Check<'a> {
    pub gpu: &'a Gpu,
    pub util: &'a UtilKernels,
    pub ops: &'a Operands,
    pub cublas: &'a Cublas<'a>,
    pub hang: &'a HangWatch,
    pub seeds: &'a Seeds,
    pub name: &'a str,
}

impl Check<'_> {
    /// Against cuBLAS on fresh inputs, into a poisoned and fenced output.
    pub fn against_cublas(&self, k: &dyn IntoOutput) -> Result<CheckReport> {
        check::check(
            self.gpu,
            self.util,
            self.ops,
            self.cublas,
            self.hang,
            k,
            self.seeds.next(),
        )
    }

    /// cuBLAS's timed path against the reference, where the two differ (FP8); None where cuBLAS is the reference.
    pub fn cublas_where_not_the_reference(&self) -> Result<Option<CheckReport>> {
        if !self.ops.dtype.is_fp8() {
            return Ok(None);
        }
        check::check_cublas(
            self.gpu,
            self.util,
            self.ops,
            self.cublas,
            self.seeds.next(),
        )
        .map(Some)
    }

    /// The record of a variant labelled `label`, with nothing checked or measured yet.
    pub fn record(&self, label: String) -> VariantRecord {
        VariantRecord {
            name: self.name.to_string(),
            label,
            config: None,
            resources: None,
            check: None,
            measures: Vec::new(),
            checksum: None,
        }
    }
}

/// The family named `name`.
pub fn family(name: &str) -> Result<&'static dyn Family> {
    FAMILIES
        .iter()
        .copied()
        .find(|f| f.name() == name)
        .ok_or_else(|| {
            Error::Config(format!(
                "no kernel family named `{name}` (there are {})",
                FAMILIES
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// A spec of a family outside the ladder (`stream...`, `skinny...`, `ext:...`), read: its family, label and
/// stored configuration; None where no family takes the spec.
pub fn parse(spec: &str) -> Option<Result<(&'static dyn Family, String, serde_json::Value)>> {
    FAMILIES.iter().copied().find_map(|f| {
        f.parse(spec)
            .map(|read| read.map(|(label, config)| (f, label, config)))
    })
}

/// A configuration as a family stores it.
pub fn stored(config: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(config).expect("a configuration serializes")
}

/// A stored configuration, read back as its family's type.
pub fn read_back<T: serde::de::DeserializeOwned>(
    family: &str,
    config: &serde_json::Value,
) -> Result<T> {
    serde_json::from_value(config.clone())
        .map_err(|e| Error::Config(format!("a stored `{family}` configuration: {e}")))
}

/// A kernel that waits on the previous grid when launched under PDL (`pdl=1`: griddepcontrol, sm_90) and otherwise
/// runs from sm_80.
pub fn pdl_arch(pdl: bool) -> Arch {
    if pdl {
        Arch::PDL
    } else {
        Arch::OLDEST
    }
}

/// What `show` prints of a kernel compiled from `file` (kernels/) with `defines`: its label, then only what it
/// compiles and uses (`everything`: the whole program).
pub fn shown_program(
    name: &str,
    defines: &[(&str, String)],
    kernel: &str,
    file: &str,
    everything: bool,
) -> Result<String> {
    let program = crate::kernel::source::resolved_program_of(defines, kernel, file, everything)?;
    Ok(format!("// {name}\n{program}"))
}

/// What `list` says of the families with a spec of their own.
pub fn listing() -> String {
    FAMILIES.iter().map(|f| f.about()).collect()
}
