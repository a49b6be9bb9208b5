//! The ablations suite: the ladder against cuBLAS, each of the seed's steps as rung N vs rung N-1, the seed's
//! step-4 isolation table, feature switches on the top rung, fault injection, and your own hypotheses.
//! Every trial is a sentence: baseline, candidate, shape, expected verdict.
//!
//! `cargo test --release --test ablations -- swizzle` runs every trial whose name contains "swizzle".

use harness::hypothesis::{compare, configs, rung_vs_cublas, with_seed};
use harness::{
    shape, Caught, DType, Expect, Fault, GemmConfig, GpuTrial, Job, Raster, Rung, Swizzle,
    VariantSpec, Verdict,
};
use std::process::ExitCode;

/// The seed's four per-step table shapes.
const STEP_SHAPES: [&str; 4] = [
    "square4096",
    "prefill_mlp_up",
    "decode_attn_out",
    "decode_mlp_up",
];
const ALL_SHAPES: [&str; 7] = [
    "square4096",
    "prefill_attn_out",
    "prefill_mlp_up",
    "decode_attn_out",
    "decode_qkv",
    "decode_mlp_up",
    "decode_mlp_down",
];

/// What each rung reaches against cuBLAS on the H200 (measured on three separate runs; see results/h200/).
/// Only the 128x256 two-consumer rung comes within 2-3% of cuBLAS on the prefill shapes; everything else is slower.
fn ladder_expectation(rung: Rung, shape: &str) -> Expect {
    match (rung, shape) {
        (Rung::TwoConsumers, "prefill_attn_out" | "prefill_mlp_up") => Expect::SpeedAtLeast(0.95),
        _ => Expect::Verdict(Verdict::Slower),
    }
}

/// The verdict each step (rung N vs rung N-1) gets on the H200, per shape: measured on three separate runs.
/// Where it differs from the seed's B200 finding (printed beside it), that is a finding about Hopper.
fn step_expectation(rung: Rung, shape: &str) -> Verdict {
    use Verdict::*;
    let decode = shape.starts_with("decode");
    match rung {
        // Loads running ahead only pay where the single-buffer kernel leaves the SM idle: at M = 256.
        Rung::Pipeline => {
            if decode {
                Faster
            } else {
                NoChange
            }
        }
        // A producer warpgroup changes nothing except on decode MLP up.
        Rung::WarpSpecialized => {
            if shape == "decode_mlp_up" {
                Faster
            } else {
                NoChange
            }
        }
        Rung::Swizzle128 | Rung::TmaEpilogue => Faster,
        // Multicast helps the wide shapes, hurts square and decode attention output.
        Rung::Multicast => {
            if shape == "square4096" || shape == "decode_attn_out" {
                Slower
            } else {
                Faster
            }
        }
        // The 128x256 tile halves the tile count: decode attention output loses its SM fill.
        Rung::TwoConsumers => {
            if shape == "decode_attn_out" {
                Slower
            } else {
                Faster
            }
        }
        // 64-row ping-pong tiles fill the SMs at M = 256 but halve the FLOP per shared-memory byte.
        Rung::PersistentPingPong => {
            if shape == "decode_attn_out" {
                Faster
            } else {
                Slower
            }
        }
        Rung::KLoop => NoChange,
    }
}

fn ladder() -> Vec<GpuTrial> {
    Rung::ALL
        .iter()
        .flat_map(|&rung| {
            ALL_SHAPES
                .iter()
                .map(move |&s| rung_vs_cublas(rung, s, ladder_expectation(rung, s)))
        })
        .collect()
}

/// Each of the seed's steps: rung N against rung N-1 on the seed's table shapes.
fn steps() -> Vec<GpuTrial> {
    let mut out = Vec::new();
    for pair in Rung::ALL.windows(2) {
        let (below, rung) = (pair[0], pair[1]);
        let word = rung.name().split_once('_').unwrap().1.to_string();
        for s in STEP_SHAPES {
            let t = configs(
                &format!("ablation::{word}::{s}"),
                (&below.name(), below.config()),
                (&rung.name(), rung.config()),
                s,
                step_expectation(rung, s),
            );
            out.push(with_seed(t, rung.seed_finding()));
        }
    }
    out
}

/// The seed's step-4 isolation table, on the rung-3 kernel at 4096^3.
fn isolation() -> Vec<GpuTrial> {
    let r3 = || Rung::WarpSpecialized.config();
    let base = ("rung3_warpspec", r3());
    [
        (
            "mma_only",
            r3().mma_only(),
            Verdict::Faster,
            "MMA only: 96.4 us against 449 (the tensor cores were fine)",
        ),
        (
            "loads_only",
            r3().loads_only(),
            Verdict::Faster,
            "loads only: 417.3 us against 449 (the loads were the whole cost)",
        ),
        // On the H200 the core-matrix layout with 64-wide k-blocks is a third slower (MMA reads of that layout).
        (
            "tile_k64_unswizzled",
            r3().with_tile_k(64),
            Verdict::Slower,
            "tile_k 64 without swizzle: 448.5 us, no change",
        ),
        (
            "stages8",
            r3().with_stages(8),
            Verdict::Faster,
            "8 stages: 454.6 us, no change",
        ),
    ]
    .into_iter()
    .map(|(word, cfg, expect, seed)| {
        with_seed(
            configs(
                &format!("isolation::{word}::square4096"),
                base.clone(),
                (&format!("rung3+{word}"), cfg),
                "square4096",
                expect,
            ),
            seed,
        )
    })
    .collect()
}

/// Each mechanism switched off on the top rung, where the kernel is fastest.
fn switches() -> Vec<GpuTrial> {
    let top = || Rung::top().config();
    use Verdict::*;
    // (switch, config, verdict on square4096, prefill_mlp_up, decode_attn_out), as measured on the H200.
    let switches: [(&str, GemmConfig, [Verdict; 3]); 5] = [
        (
            "swizzle_off",
            top().with_swizzle(Swizzle::None, 64),
            [Slower, Slower, Slower],
        ),
        (
            "multicast_off",
            top().with_cluster(1),
            [Slower, Slower, Slower],
        ),
        (
            "pingpong_off",
            top().with_pingpong(false),
            [Faster, Faster, Slower],
        ),
        (
            "one_consumer",
            top().with_one_consumer(),
            [Slower, NoChange, NoChange],
        ),
        (
            "raster8_on",
            top().with_raster(Raster::UpTo(8)),
            [NoChange, Faster, NoChange],
        ),
    ];
    let mut out = Vec::new();
    for (word, cfg, verdicts) in switches {
        for (s, expect) in ["square4096", "prefill_mlp_up", "decode_attn_out"]
            .into_iter()
            .zip(verdicts)
        {
            out.push(configs(
                &format!("switch::{word}::{s}"),
                (&Rung::top().name(), top()),
                (&format!("top+{word}"), cfg.clone()),
                s,
                expect,
            ));
        }
    }
    out
}

/// A/A comparisons: the noise floor, which must come out as no change.
fn noise() -> Vec<GpuTrial> {
    let mut out: Vec<GpuTrial> = ["square4096", "decode_attn_out", "prefill_attn_out"]
        .iter()
        .map(|s| {
            compare(
                &format!("noise::aa::cublas::{s}"),
                VariantSpec::Cublas,
                VariantSpec::Cublas,
                s,
                Expect::Verdict(Verdict::NoChange),
            )
        })
        .collect();
    let top = Rung::top();
    out.push(configs(
        "noise::aa::top::square4096",
        (&top.name(), top.config()),
        (&top.name(), top.config()),
        "square4096",
        Verdict::NoChange,
    ));
    out
}

/// cuBLAS itself against float64, and every rung's correctness in bf16.
fn reference_and_dtypes() -> Vec<GpuTrial> {
    let mut out = vec![
        GpuTrial::new(
            "reference::cublas_vs_cpu::fp16",
            Job::CublasVsCpu { dtype: DType::F16 },
        ),
        GpuTrial::new(
            "reference::cublas_vs_cpu::bf16",
            Job::CublasVsCpu { dtype: DType::BF16 },
        ),
    ];
    for rung in Rung::ALL {
        out.push(GpuTrial::new(
            format!("dtype::bf16::{}::square4096", rung.name()),
            Job::Check {
                variant: VariantSpec::gemm(rung.name(), rung.config()),
                shape: shape("square4096"),
                dtype: DType::BF16,
            },
        ));
    }
    out
}

/// Deliberately broken kernels: each passes when the harness catches the bug and names it.
fn faults() -> Vec<GpuTrial> {
    let fault = |word: &str, cfg: GemmConfig, f: Fault, caught: Caught| {
        GpuTrial::new(
            format!("fault::{word}"),
            Job::Fault {
                config: cfg,
                fault: f,
                shape: shape("decode_attn_out"),
                dtype: DType::F16,
                caught,
            },
        )
    };
    let r4 = || Rung::Swizzle128.config();
    vec![
        fault("wrong_phase", r4(), Fault::WrongPhase, Caught::Hang),
        fault(
            "missing_expect_tx",
            r4(),
            Fault::NoExpectTx,
            Caught::AnyDiagnosis,
        ),
        fault(
            "skipped_epilogue",
            Rung::top().config(),
            Fault::SkipEpilogueTile,
            Caught::Unwritten,
        ),
        fault("oob_store", r4(), Fault::OobStore, Caught::OutOfBounds),
        fault(
            "skipped_k_block",
            Rung::top().config(),
            Fault::SkipKBlock,
            Caught::WrongValues,
        ),
        fault(
            "wrong_phase_unbounded",
            r4().with_bounded_waits(false),
            Fault::WrongPhase,
            Caught::HostTimeout,
        )
        .with_deadline_s(15.0),
    ]
}

/// What the bounded waits cost where the kernel is fastest (they are on in every trial).
fn reliability() -> Vec<GpuTrial> {
    let top = Rung::top();
    vec![configs(
        "reliability::bounded_wait_cost::square4096",
        (&format!("{} (bounded waits)", top.name()), top.config()),
        (
            &format!("{} (unbounded waits)", top.name()),
            top.config().with_bounded_waits(false),
        ),
        "square4096",
        Verdict::NoChange,
    )]
}

/// Your own hypotheses: a configuration difference and an expected verdict. Add yours here.
fn mine() -> Vec<GpuTrial> {
    let top = Rung::top();
    vec![configs(
        "mine::raster8::prefill_attn_out",
        (&top.name(), top.config()),
        ("top+raster8", top.config().with_raster(Raster::Group(8))),
        "prefill_attn_out",
        Verdict::Faster,
    )]
}

/// Every rung on a small shape: what compute-sanitizer runs (memcheck, racecheck, synccheck; see the README).
fn sanitize() -> Vec<GpuTrial> {
    Rung::ALL
        .iter()
        .map(|r| {
            GpuTrial::new(
                format!("sanitize::{}::small", r.name()),
                Job::Check {
                    variant: VariantSpec::gemm(r.name(), r.config()),
                    shape: shape("small"),
                    dtype: DType::F16,
                },
            )
        })
        .collect()
}

fn main() -> ExitCode {
    let gpu: Vec<GpuTrial> = [
        reference_and_dtypes(),
        noise(),
        ladder(),
        steps(),
        isolation(),
        switches(),
        reliability(),
        faults(),
        mine(),
        sanitize(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let cpu = harness::suite::compile_trials(&gpu);
    harness::suite::main("ablations", gpu, cpu)
}
