//! Builders that make a trial read as a sentence: "rung 4 vs rung 3 on square4096, expected faster because the
//! seed measured 4.1x". What runs (a Job) and what is expected (an Expectation) stay separate.

use crate::kernel::config::GemmConfig;
use crate::kernel::ladder::Rung;
use crate::kernel::problem::{shape, DType};
use crate::measure::stats::Verdict;
use crate::trial::expectation::{Expect, Expectation};
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
                    // The seed's rungs are pinned from the runs (pins/h200.json); rungs past the seed carry their
                    // hypothesis, which a pin replaces where the runs refuted it.
                    let expectation = if rung > Rung::PersistentPingPong {
                        ladder_hypothesis(rung, &s.name)
                    } else {
                        crate::trial::pins::pinned()
                    };
                    GpuTrial::new(&name, ladder_job(rung, &s.name), expectation)
                })
        })
        .chain(auto_row())
        .collect()
}

/// The `auto` row: the variant harness/kernel/dispatch.rs picks for each standard shape, against cuBLAS.
fn auto_row() -> Vec<GpuTrial> {
    use crate::kernel::dispatch::{auto_variant, H200_SMS, WHOLE_DECODE_SPEC};
    crate::kernel::problem::standard_shapes()
        .into_iter()
        .map(|s| {
            let (label, config) = auto_variant(&s, H200_SMS);
            let name = format!("ladder::auto::{}", s.name);
            // Before auto's kernel for the shape was measured as auto: what it measured against cuBLAS in
            // `compare` (rung 10 cells at deeab76; the decode kernels with evict-first and PDL in the 88c50c9
            // sweeps, results/h200/88c50c9/). Only runs of this same kernel can confirm or pin it.
            let (v, why) = match s.name.as_str() {
                "prefill_attn_out" => (Verdict::Faster, "rung 10 measured 0.972 against cuBLAS (deeab76)"),
                "decode_attn_out" => (
                    Verdict::Slower,
                    "128-wide stream-K with evict-first and PDL measured 1.101 against cuBLAS (88c50c9)",
                ),
                "decode_mlp_down" => (
                    Verdict::Slower,
                    "128-wide stream-K with evict-first measured 1.046 against cuBLAS (88c50c9); PDL took 3.4% off \
                     decode_attn_out: 1.02-1.04",
                ),
                "decode_mlp_up" => (
                    Verdict::Faster,
                    "stream-K with evict-first measured 0.929 against cuBLAS (88c50c9); PDL 0.992 on it (da17df3)",
                ),
                "decode_qkv" => (
                    Verdict::Slower,
                    "128-wide stream-K with evict-first measured 1.073 against cuBLAS (88c50c9); PDL took 3.4% off \
                     decode_attn_out: 1.03-1.05",
                ),
                _ => (Verdict::NoChange, "rung 10 measured 0.99 against cuBLAS (deeab76)"),
            };
            let whole_decode = format!("{WHOLE_DECODE_SPEC},evict_first=1,pdl=1");
            // H100's rule (`streamk=3`) and H31's whole decode tiles were measured against cuBLAS in sweeps before
            // `auto` ran them (9e055dd, 869f58b): pinned from those runs and the suite runs since.
            let expectation = if label == "auto=rung10:streamk=3" || label == format!("auto={whole_decode}") {
                crate::trial::pins::pinned()
            } else {
                crate::trial::hypothesis::expect_verdict(v, &format!("auto: {why}"))
            };
            let job = Job::Compare {
                baseline: VariantSpec::Cublas,
                candidate: VariantSpec::gemm(label, config),
                shape: s.clone(),
                dtype: DType::F16,
            };
            GpuTrial::new(&name, job, expectation)
        })
        .collect()
}

/// A ladder cell past the seed's rungs: the rung's hypothesis against cuBLAS, written before measuring
/// (ablations/HYPOTHESES.md).
fn ladder_hypothesis(rung: Rung, shape_name: &str) -> Expectation {
    let measured = "ablations/HYPOTHESES.md H9: rung8:pingpong=0,raster=upto8 measured 0.986-0.994 against cuBLAS on \
                    square4096, prefill_attn_out, prefill_mlp_up and long_k, 1.68x slower on decode_attn_out \
                    (92fd282 compare runs)";
    let measured = match rung {
        Rung::Stmatrix => "ablations/HYPOTHESES.md H9 and H11: rung 9's configuration measured 0.986-0.994 against \
                           cuBLAS on the compute shapes, 1.68x slower on decode_attn_out (92fd282 compare runs), and \
                           stmatrix is expected to add 0.5-1.5%, which stays inside the band"
            .to_string(),
        _ => measured.to_string(),
    };
    let measured = measured.as_str();
    let v = if shape_name.starts_with("decode") {
        Verdict::Slower
    } else {
        Verdict::NoChange
    };
    expect_verdict(v, measured)
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
