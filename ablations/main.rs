//! The ablations suite: the ladder against cuBLAS, each of the seed's steps as rung N vs rung N-1, the seed's
//! step-4 isolation table, feature switches on the top rung, fault injection, and your own hypotheses.
//! Every trial is a sentence: baseline, candidate, shape, expected verdict.
//!
//! `cargo test --release --test ablations -- swizzle` runs every trial whose name contains "swizzle".

use harness::hypothesis::{compare, configs, rung_vs_cublas, with_seed};
use harness::{shape, Caught, DType, Expect, Fault, GemmConfig, GpuTrial, Job, Raster, Rung, Swizzle, VariantSpec, Verdict};
use std::process::ExitCode;

/// The seed's four per-step table shapes.
const STEP_SHAPES: [&str; 4] = ["square4096", "prefill_mlp_up", "decode_attn_out", "decode_mlp_up"];
const ALL_SHAPES: [&str; 7] = [
    "square4096",
    "prefill_attn_out",
    "prefill_mlp_up",
    "decode_attn_out",
    "decode_qkv",
    "decode_mlp_up",
    "decode_mlp_down",
];

/// What each rung is expected to reach against cuBLAS on the H200.
fn ladder_expectation(rung: Rung, shape: &str) -> Expect {
    match (rung, shape) {
        (Rung::PersistentPingPong, "square4096" | "prefill_attn_out" | "prefill_mlp_up") => Expect::SpeedAtLeast(0.9),
        _ => Expect::Verdict(Verdict::Slower),
    }
}

/// The verdict each step (rung N vs rung N-1) gets on the H200, per shape.
fn step_expectation(rung: Rung, _shape: &str) -> Verdict {
    match rung {
        Rung::Pipeline | Rung::Swizzle128 => Verdict::Faster,
        _ => Verdict::NoChange,
    }
}

fn ladder() -> Vec<GpuTrial> {
    Rung::ALL
        .iter()
        .flat_map(|&rung| ALL_SHAPES.iter().map(move |&s| rung_vs_cublas(rung, s, ladder_expectation(rung, s))))
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
        ("mma_only", r3().mma_only(), Verdict::Faster, "MMA only: 96.4 us against 449 (the tensor cores were fine)"),
        ("loads_only", r3().loads_only(), Verdict::Faster, "loads only: 417.3 us against 449 (the loads were the whole cost)"),
        ("tile_k64_unswizzled", r3().with_tile_k(64), Verdict::NoChange, "tile_k 64 without swizzle: 448.5 us, no change"),
        ("stages8", r3().with_stages(8), Verdict::NoChange, "8 stages: 454.6 us, no change"),
    ]
    .into_iter()
    .map(|(word, cfg, expect, seed)| {
        with_seed(
            configs(&format!("isolation::{word}::square4096"), base.clone(), (&format!("rung3+{word}"), cfg), "square4096", expect),
            seed,
        )
    })
    .collect()
}

/// Each mechanism switched off on the top rung, where the kernel is fastest.
fn switches() -> Vec<GpuTrial> {
    let top = || Rung::top().config();
    let switches: [(&str, GemmConfig); 4] = [
        ("swizzle_off", top().with_swizzle(Swizzle::None, 64)),
        ("multicast_off", top().with_cluster(1)),
        ("pingpong_off", top().with_pingpong(false)),
        ("one_consumer", top().with_one_consumer()),
    ];
    let mut out = Vec::new();
    for (word, cfg) in switches {
        for s in ["square4096", "prefill_mlp_up", "decode_attn_out"] {
            let expect = if word == "swizzle_off" { Verdict::Slower } else { Verdict::NoChange };
            out.push(configs(&format!("switch::{word}::{s}"), (&Rung::top().name(), top()), (&format!("top+{word}"), cfg.clone()), s, expect));
        }
    }
    out
}

/// A/A comparisons: the noise floor, which must come out as no change.
fn noise() -> Vec<GpuTrial> {
    let mut out: Vec<GpuTrial> = ["square4096", "decode_attn_out", "prefill_attn_out"]
        .iter()
        .map(|s| compare(&format!("noise::aa::cublas::{s}"), VariantSpec::Cublas, VariantSpec::Cublas, s, Expect::Verdict(Verdict::NoChange)))
        .collect();
    let top = Rung::top();
    out.push(configs("noise::aa::top::square4096", (&top.name(), top.config()), (&top.name(), top.config()), "square4096", Verdict::NoChange));
    out
}

/// cuBLAS itself against float64, and every rung's correctness in bf16.
fn reference_and_dtypes() -> Vec<GpuTrial> {
    let mut out = vec![
        GpuTrial::new("reference::cublas_vs_cpu::fp16", Job::CublasVsCpu { dtype: DType::F16 }),
        GpuTrial::new("reference::cublas_vs_cpu::bf16", Job::CublasVsCpu { dtype: DType::BF16 }),
    ];
    for rung in Rung::ALL {
        out.push(GpuTrial::new(
            format!("dtype::bf16::{}::square4096", rung.name()),
            Job::Check { variant: VariantSpec::gemm(rung.name(), rung.config()), shape: shape("square4096"), dtype: DType::BF16 },
        ));
    }
    out
}

/// Deliberately broken kernels: each passes when the harness catches the bug and names it.
fn faults() -> Vec<GpuTrial> {
    let fault = |word: &str, cfg: GemmConfig, f: Fault, caught: Caught| {
        GpuTrial::new(
            format!("fault::{word}"),
            Job::Fault { config: cfg, fault: f, shape: shape("decode_attn_out"), dtype: DType::F16, caught },
        )
    };
    let r4 = || Rung::Swizzle128.config();
    vec![
        fault("wrong_phase", r4(), Fault::WrongPhase, Caught::Hang),
        fault("missing_expect_tx", r4(), Fault::NoExpectTx, Caught::AnyDiagnosis),
        fault("skipped_epilogue", Rung::top().config(), Fault::SkipEpilogueTile, Caught::Unwritten),
        fault("oob_store", r4(), Fault::OobStore, Caught::OutOfBounds),
        fault("wrong_phase_unbounded", r4().with_bounded_waits(false), Fault::WrongPhase, Caught::HostTimeout)
            .with_deadline_s(15.0),
    ]
}

/// What the bounded waits cost where the kernel is fastest (they are on in every trial).
fn reliability() -> Vec<GpuTrial> {
    let top = Rung::top();
    vec![configs(
        "reliability::bounded_wait_cost::square4096",
        (&format!("{} (bounded waits)", top.name()), top.config()),
        (&format!("{} (unbounded waits)", top.name()), top.config().with_bounded_waits(false)),
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
        Verdict::NoChange,
    )]
}

fn main() -> ExitCode {
    let gpu: Vec<GpuTrial> = [reference_and_dtypes(), noise(), ladder(), steps(), isolation(), switches(), reliability(), faults(), mine()]
        .into_iter()
        .flatten()
        .collect();
    let cpu = harness::suite::compile_trials(&gpu);
    harness::suite::main("ablations", gpu, cpu)
}
