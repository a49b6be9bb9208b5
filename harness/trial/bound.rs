//! A variant spec bound to one set of operands: cuBLAS, or a kernel of any family (harness/families/), each
//! checked before it is timed as its family checks it; and what a check that failed says.

use crate::error::{Error, Result};
use crate::families::{Bound, Check};
use crate::measure::operands::{Operands, UtilKernels};
use crate::measure::reference::Cublas;
use crate::measure::variant::Variant;
use crate::trial::context::TrialContext;
use crate::trial::expectation::Caught;
use crate::trial::job::{VariantRecord, VariantSpec};

/// One side of a comparison, built and bound to one set of operands.
pub(crate) enum BoundVariant<'a> {
    Cublas,
    Kernel(Box<dyn Bound + 'a>),
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
        Ok(match spec.kernel() {
            None => BoundVariant::Cublas,
            Some(kernel) => {
                BoundVariant::Kernel(kernel?.bind(&spec.name(), ctx.gpu, ops, &ctx.hang)?)
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
            (BoundVariant::Kernel(k), _) => Ok(k.variant()),
        }
    }

    /// Checks the variant as its family does (GEMMs against cuBLAS on fresh inputs, into a poisoned and fenced
    /// output; kernels that compute none by checksum); the record says what was found.
    pub(crate) fn checked_record(
        &self,
        ctx: &TrialContext,
        util: &UtilKernels,
        ops: &Operands,
        cublas: &Cublas,
        spec: &VariantSpec,
    ) -> Result<VariantRecord> {
        let name = spec.name();
        let check = Check {
            gpu: ctx.gpu,
            util,
            ops,
            cublas,
            hang: &ctx.hang,
            seeds: &ctx.seeds,
            name: &name,
        };
        match self {
            BoundVariant::Cublas => Ok(VariantRecord {
                check: check.cublas_where_not_the_reference()?,
                ..check.record(cublas.label())
            }),
            BoundVariant::Kernel(k) => k.checked_record(&check),
        }
    }

    pub(crate) fn warnings(&self) -> Vec<String> {
        match self {
            BoundVariant::Kernel(k) => k.warnings(),
            BoundVariant::Cublas => Vec::new(),
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
