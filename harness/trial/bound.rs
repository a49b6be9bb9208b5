//! A variant spec bound to a kernel and one set of operands: the one place that knows every family of kernel
//! (the ladder's GEMM, the load path, the read floor, the skinny GEMM, an external kernel, cuBLAS), how to check
//! each before it is timed, and what a check that failed says.

use crate::error::{Error, Result};
use crate::measure::check;
use crate::measure::external::ExternalKernel;
use crate::measure::operands::{Operands, UtilKernels};
use crate::measure::reference::Cublas;
use crate::measure::variant::{
    GemmKernel, IntoOutput, LoadPathKernel, SkinnyKernel, StreamKernel, Variant,
};
use crate::trial::context::TrialContext;
use crate::trial::expectation::Caught;
use crate::trial::job::{VariantRecord, VariantSpec};

/// One side of a comparison, built and bound to one set of operands.
pub(crate) enum BoundVariant<'a> {
    Cublas,
    Gemm(GemmKernel<'a>),
    LoadPath(LoadPathKernel<'a>),
    Stream(StreamKernel<'a>),
    Skinny(SkinnyKernel<'a>),
    /// Boxed: it carries its manifest, larger than the other variants.
    External(Box<ExternalKernel<'a>>),
}

impl<'a> BoundVariant<'a> {
    pub(crate) fn new(
        ctx: &'a TrialContext,
        spec: &VariantSpec,
        ops: &'a Operands,
    ) -> Result<BoundVariant<'a>> {
        let gpu = &ctx.gpu.info;
        if !spec.needs().runs_on(gpu.compute_capability) {
            let (major, minor) = gpu.compute_capability;
            return Err(Error::WrongArch {
                found: format!("sm_{major}{minor} ({})", gpu.name),
                needed: format!("{} ({})", spec.needs().name(), spec.name()),
            });
        }
        Ok(match spec {
            VariantSpec::Cublas => BoundVariant::Cublas,
            VariantSpec::Gemm { name, config } => {
                BoundVariant::Gemm(GemmKernel::new(&ctx.gpu, name, config, ops, &ctx.hang)?)
            }
            VariantSpec::LoadPath { name, config } => {
                BoundVariant::LoadPath(LoadPathKernel::new(&ctx.gpu, name, config, ops, &ctx.hang)?)
            }
            VariantSpec::Stream { name, config } => {
                BoundVariant::Stream(StreamKernel::new(&ctx.gpu, name, config, ops)?)
            }
            VariantSpec::Skinny { name, config } => {
                BoundVariant::Skinny(SkinnyKernel::new(&ctx.gpu, name, config, ops)?)
            }
            VariantSpec::External { name, spec } => {
                BoundVariant::External(Box::new(ExternalKernel::new(&ctx.gpu, name, spec, ops)?))
            }
        })
    }

    /// The variant, where cuBLAS is only built when one side needs it.
    pub(crate) fn variant<'b>(&'b self, cublas: Option<&'b Cublas>) -> Result<&'b dyn Variant> {
        match (self, cublas) {
            (BoundVariant::Cublas, Some(c)) => Ok(c),
            (BoundVariant::Cublas, None) => Err(Error::Other(
                "internal: a cuBLAS side without a cuBLAS handle".into(),
            )),
            (BoundVariant::Gemm(k), _) => Ok(k),
            (BoundVariant::LoadPath(k), _) => Ok(k),
            (BoundVariant::Stream(k), _) => Ok(k),
            (BoundVariant::Skinny(k), _) => Ok(k),
            (BoundVariant::External(k), _) => Ok(k.as_ref()),
        }
    }

    /// Checks the variant (GEMMs against cuBLAS, load paths by checksum); the record says what was found.
    pub(crate) fn checked_record(
        &self,
        ctx: &TrialContext,
        util: &UtilKernels,
        ops: &Operands,
        cublas: &Cublas,
        spec: &VariantSpec,
    ) -> Result<VariantRecord> {
        let gpu = &ctx.gpu;
        let record = |label: String, k: Option<&GemmKernel>| VariantRecord {
            name: spec.name(),
            label,
            config: k.map(|k| k.config.clone()),
            resources: k.map(|k| k.report.clone()),
            check: None,
            measures: Vec::new(),
            checksum: None,
        };
        // GEMMs are checked against cuBLAS on fresh inputs, into a poisoned and fenced output.
        let against_cublas = |k: &dyn IntoOutput| {
            check::check(gpu, util, ops, cublas, &ctx.hang, k, ctx.seeds.next())
        };
        Ok(match self {
            BoundVariant::Cublas => record(cublas.label(), None),
            BoundVariant::Gemm(k) => {
                let mut r = record(k.label(), Some(k));
                if k.config.computes_gemm() || k.config.fault.is_some() {
                    r.check = Some(against_cublas(k)?);
                }
                r
            }
            BoundVariant::LoadPath(k) => {
                let mut r = record(k.label(), None);
                r.checksum = Some(k.check(gpu, util)?);
                r
            }
            BoundVariant::Stream(k) => {
                let mut r = record(k.label(), None);
                r.checksum = Some(k.check(gpu, util)?);
                r
            }
            BoundVariant::Skinny(k) => {
                let mut r = record(k.label(), None);
                r.resources = Some(k.report.clone());
                r.check = Some(against_cublas(k)?);
                r
            }
            // Checked like every GEMM, into the poisoned and guarded output, before it is ever timed.
            BoundVariant::External(k) => {
                let mut r = record(k.label(), None);
                r.resources = Some(k.report.clone());
                r.check = Some(against_cublas(k.as_ref())?);
                r
            }
        })
    }

    pub(crate) fn warnings(&self) -> Vec<String> {
        match self {
            BoundVariant::Gemm(k) => k
                .report
                .warnings
                .iter()
                .filter(|w| !w.contains("Remark"))
                .map(|w| format!("{}: ptxas {w}", k.label))
                .chain(k.placement.clone())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// What is wrong with a checked variant, if anything, as the way it was caught.
pub(crate) fn problem(r: &VariantRecord) -> Option<(Caught, String)> {
    if let Some(c) = r.check.as_ref().filter(|c| !c.passed) {
        let caught = if c.guard_damage > 0 {
            Caught::OutOfBounds
        } else if c.unwritten > 0 {
            Caught::Unwritten
        } else {
            Caught::WrongValues
        };
        return Some((
            caught,
            format!(
                "{}: {} (inputs from seed {}: GEMM_ABLATE_SEED={} replays it)",
                r.name,
                c.problem.clone().unwrap_or_default(),
                c.seed,
                c.seed
            ),
        ));
    }
    match r.checksum {
        Some((got, want)) if got != want => Some((
            Caught::WrongValues,
            format!(
                "{}: the checksum of the bytes it loaded, {got}, differs from the expected {want}",
                r.name
            ),
        )),
        _ => None,
    }
}
