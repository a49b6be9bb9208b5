//! Builders that make a trial read as a sentence: "rung 4 vs rung 3 on square4096, expected faster because the
//! seed measured 4.1x". What runs (a Job) and what is expected (an Expectation) stay separate.

use crate::kernel::config::GemmConfig;
use crate::kernel::ladder::Rung;
use crate::kernel::problem::{shape, DType};
use crate::measure::stats::Verdict;
use crate::trial::expect::{Expect, Expectation};
use crate::trial::job::GpuTrial;
use crate::trial::job::{Job, VariantSpec};

/// A verdict stated before measuring, with its source.
pub fn expect_verdict(v: Verdict, why: &str) -> Expectation {
    Expectation::hypothesis(Expect::Verdict(v), why)
}

/// `candidate` vs `baseline` on the named shape (fp16).
pub fn compare(
    name: &str,
    baseline: VariantSpec,
    candidate: VariantSpec,
    shape_name: &str,
    expectation: Expectation,
) -> GpuTrial {
    GpuTrial::new(
        name,
        Job::Compare {
            baseline,
            candidate,
            shape: shape(shape_name),
            dtype: DType::F16,
        },
        expectation,
    )
}

/// Two configurations of the kernel: the everyday way to state a hypothesis.
pub fn configs(
    name: &str,
    baseline: (&str, GemmConfig),
    candidate: (&str, GemmConfig),
    shape_name: &str,
    expectation: Expectation,
) -> GpuTrial {
    compare(
        name,
        VariantSpec::gemm(baseline.0, baseline.1),
        VariantSpec::gemm(candidate.0, candidate.1),
        shape_name,
        expectation,
    )
}

/// The name of a ladder cell: `ladder::rung4_swizzle::square4096`.
pub fn ladder_name(rung: Rung, shape_name: &str) -> String {
    format!("ladder::{}::{}", rung.name(), shape_name)
}

/// The job of a ladder cell: a rung against cuBLAS on a shape.
pub fn ladder_job(rung: Rung, shape_name: &str) -> Job {
    Job::Compare {
        baseline: VariantSpec::Cublas,
        candidate: VariantSpec::gemm(rung.name(), rung.config()),
        shape: shape(shape_name),
        dtype: DType::F16,
    }
}

/// The ladder: every rung against cuBLAS on the seven standard shapes, each cell pinned to its reference ratio.
/// The ablations suite and the main job (`cargo run --release`) both build it here.
pub fn ladder_trials() -> Vec<GpuTrial> {
    Rung::ALL
        .iter()
        .flat_map(|&rung| {
            crate::kernel::problem::standard_shapes()
                .into_iter()
                .map(move |s| {
                    let name = ladder_name(rung, &s.name);
                    let pin = crate::trial::pins::pinned_ratio(&name);
                    GpuTrial::new(&name, ladder_job(rung, &s.name), pin)
                })
        })
        .collect()
}

/// Correctness of one variant: it must match cuBLAS.
pub fn correct(name: &str, variant: VariantSpec, shape_name: &str, dtype: DType) -> GpuTrial {
    GpuTrial::new(
        name,
        Job::Check {
            variant,
            shape: shape(shape_name),
            dtype,
        },
        Expectation::hypothesis(
            Expect::Correct,
            "every rung computes the same GEMM as cuBLAS, within the dtype's tolerance",
        ),
    )
}
