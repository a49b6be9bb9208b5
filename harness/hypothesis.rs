//! Builders that make a trial read as a sentence: "rung 4 vs rung 3 on square4096: faster".

use crate::config::GemmConfig;
use crate::job::{Expect, Job, VariantSpec};
use crate::ladder::Rung;
use crate::problem::{shape, DType};
use crate::stats::Verdict;
use crate::suite::GpuTrial;

/// `candidate` vs `baseline` on the named shape (fp16), expecting `expect`.
pub fn compare(
    name: &str,
    baseline: VariantSpec,
    candidate: VariantSpec,
    shape_name: &str,
    expect: Expect,
) -> GpuTrial {
    GpuTrial::new(
        name,
        Job::Compare {
            baseline,
            candidate,
            shape: shape(shape_name),
            dtype: DType::F16,
            expect,
            seed: None,
        },
    )
}

/// Two configurations of the kernel: the everyday way to state a hypothesis.
pub fn configs(
    name: &str,
    baseline: (&str, GemmConfig),
    candidate: (&str, GemmConfig),
    shape_name: &str,
    expect: Verdict,
) -> GpuTrial {
    compare(
        name,
        VariantSpec::gemm(baseline.0, baseline.1),
        VariantSpec::gemm(candidate.0, candidate.1),
        shape_name,
        Expect::Verdict(expect),
    )
}

/// A rung against cuBLAS on a shape.
pub fn rung_vs_cublas(rung: Rung, shape_name: &str, expect: Expect) -> GpuTrial {
    compare(
        &format!("ladder::{}::{}", rung.name(), shape_name),
        VariantSpec::Cublas,
        VariantSpec::gemm(rung.name(), rung.config()),
        shape_name,
        expect,
    )
}

/// Attaches the seed's B200 finding to a comparison trial.
pub fn with_seed(mut t: GpuTrial, finding: &str) -> GpuTrial {
    if let Job::Compare { seed, .. } = &mut t.job {
        *seed = Some(finding.to_string());
    }
    t
}
