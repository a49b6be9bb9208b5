//! The ablations suite: the ladder against cuBLAS, each of the seed's steps as rung N vs rung N-1, the seed's
//! step-4 isolation table, feature switches on the top rung, fault injection, and your own hypotheses.
//! Every trial is a sentence: baseline, candidate, shape, and an expectation that says where it comes from:
//! a hypothesis written before measuring (the seed's B200 verdict, a reason), or a value pinned from the named
//! H200 reference runs (harness/trial/pins.rs), keeping any hypothesis those runs refuted.
//!
//! `cargo test --release --test ablations -- swizzle` runs every trial whose name contains "swizzle".
//!
//! The lists live by subject: `steps` (the seed's steps, its isolation table, switches on the top rung),
//! `past_seed` (rungs 9 and up), `epilogue_hiding` (hiding rung 10's epilogue, H97-H101), `small_m` (decode and `auto`'s kernels), `checks` (the harness checking itself);
//! the ladder against cuBLAS comes from the library (`harness::trial::hypothesis::ladder_trials`).

use harness::trial::hypothesis::{configs, expect_verdict};
use harness::{DType, GpuTrial, Raster, Rung, VariantSpec, Verdict};
use std::process::ExitCode;

mod checks;
mod epilogue_hiding;
mod past_seed;
mod small_m;
mod steps;

use checks::{any_m, faults, fp8_correct, noise, reference_and_dtypes, reliability, sanitize};
use epilogue_hiding::epilogue_hiding;
use past_seed::past_seed;
use small_m::{
    auto_correct, auto_small_m_vs_cublas, k_rotate, no_token_cluster, pdl, skinny, skinny_correct,
    skinny_interleave, skinny_ring, small_m,
};
use steps::{isolation, steps, switches};

/// Your own hypotheses: a configuration difference and an expected verdict with its reason. Add yours here, or as
/// a file in hypotheses/ (docs/external-kernels.md), which needs no Rust.
fn mine() -> Vec<GpuTrial> {
    let top = Rung::top();
    vec![configs(
        "mine::raster8::prefill_attn_out",
        (&top.name(), top.config()),
        ("top+raster8", top.config().with_raster(Raster::Group(8))),
        "prefill_attn_out",
        expect_verdict(
            Verdict::Faster,
            "seed (B200): groups of 8 are a real optimum at 8192^3",
        ),
    )]
}

fn gpu_trials(files: Vec<GpuTrial>) -> Vec<GpuTrial> {
    [
        reference_and_dtypes(),
        fp8_correct(),
        noise(),
        harness::trial::hypothesis::ladder_trials(),
        steps(),
        past_seed(),
        epilogue_hiding(),
        auto_correct(),
        pdl(),
        small_m(),
        skinny_correct(),
        skinny(),
        vec![skinny_interleave()],
        k_rotate(),
        no_token_cluster(),
        vec![skinny_ring()],
        auto_small_m_vs_cublas(),
        isolation(),
        switches(),
        reliability(),
        faults(),
        any_m(),
        mine(),
        files,
        sanitize(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn main() -> ExitCode {
    // A trial's child process runs its one job from the environment: it returns before building the trial lists
    // (0.3-0.6 s a process, once for every GPU trial).
    if let Some(code) = harness::trial::subprocess::child_entry() {
        return code;
    }
    // The hypothesis files (hypotheses/ and GEMM_ABLATE_HYPOTHESES): a broken file is one failing CPU trial.
    let hypotheses = harness::trial::hypothesis_files::load();
    let gpu = gpu_trials(hypotheses.trials);
    // Every kernel `auto` can pick, in every type, compiles too (a trial runs only some of them).
    let sms = harness::kernel::dispatch::H200_SMS;
    let mut auto_kernels: Vec<(VariantSpec, DType)> = harness::kernel::dispatch::auto_kernels(sms)
        .into_iter()
        .flat_map(|(label, config)| {
            [DType::F16, DType::BF16]
                .map(|dtype| (VariantSpec::gemm(label.clone(), config.clone()), dtype))
        })
        .collect();
    for dtype in harness::Scales::ALL.map(DType::E4M3) {
        auto_kernels.extend(
            harness::kernel::dispatch::auto_kernels_for(sms, dtype)
                .into_iter()
                .map(|(label, config)| (VariantSpec::gemm(label, config), dtype)),
        );
    }
    let mut cpu = harness::suite::compile_trials_with(&gpu, &auto_kernels);
    cpu.extend(harness::suite::show_trials());
    cpu.extend(harness::suite::portable_compile_trials());
    cpu.extend(harness::suite::fp8_compile_trials());
    cpu.extend(harness::suite::broken_hypothesis_trials(hypotheses.broken));
    cpu.extend(harness::replay::trials("ablations", &gpu));
    harness::suite::main("ablations", gpu, cpu)
}
