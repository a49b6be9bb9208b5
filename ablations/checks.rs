//! Trials that check the harness itself: noise (A/A), the cuBLAS reference and dtypes, fault injection, any M,
//! reliability (bounded waits), and what compute-sanitizer runs.

use harness::families::skinny::Skinny;
use harness::trial::expect::{Caught, Expect, Expectation};
use harness::trial::hypothesis::{compare, configs, correct, expect_verdict};
use harness::{
    shape, DType, Fault, GemmConfig, GpuTrial, Job, Rung, Scales, Swizzle, VariantSpec, Verdict,
};

/// A/A comparisons: the noise floor, which must come out as no change.
pub(crate) fn noise() -> Vec<GpuTrial> {
    let why = "the same variant against itself: anything but no change is an error of the rule";
    let mut out: Vec<GpuTrial> = ["square4096", "decode_attn_out", "prefill_attn_out"]
        .iter()
        .map(|s| {
            compare(
                &format!("noise::aa::cublas::{s}"),
                VariantSpec::Cublas,
                VariantSpec::Cublas,
                s,
                expect_verdict(Verdict::NoChange, why),
            )
        })
        .collect();
    let top = Rung::top();
    out.push(configs(
        "noise::aa::top::square4096",
        (&top.name(), top.config()),
        (&top.name(), top.config()),
        "square4096",
        expect_verdict(Verdict::NoChange, why),
    ));
    out
}

/// cuBLAS itself against float64, and every rung's correctness in bf16.
pub(crate) fn reference_and_dtypes() -> Vec<GpuTrial> {
    let cpu = |dtype: DType| {
        GpuTrial::new(
            format!("reference::cublas_vs_cpu::{}", dtype.name()),
            Job::CublasVsCpu { dtype },
            Expectation::hypothesis(
                Expect::Correct,
                "cuBLAS's output is the exact product rounded once: within half an ulp of float64",
            ),
        )
    };
    let mut out = vec![cpu(DType::F16), cpu(DType::BF16)];
    // FP8 in each scheme with a bf16 output, and per-tensor with an fp16 one.
    let fp8 = Scales::ALL
        .map(DType::E4M3)
        .into_iter()
        .chain([DType::E4M3F16(Scales::Tensor)]);
    // Ran on the H200 under H129's check at e9f627a (results/h200/e9f627a/reds-again): in the suite since.
    out.extend(fp8.map(cpu));
    for rung in Rung::ALL {
        out.push(correct(
            &format!("dtype::bf16::{}::square4096", rung.name()),
            VariantSpec::gemm(rung.name(), rung.config()),
            "square4096",
            DType::BF16,
        ));
    }
    out
}

/// Why the FP8 sanitizer trials wait out of the default suite (GpuTrial::waiting): tools/h200-h129-and-reds.sh runs
/// them under compute-sanitizer's memcheck, which has not yet had the time to run. The FP8 correctness trials and
/// cuBLASLt's FP8 paths against the CPU ran at e9f627a under the check H129 describes (results/h200/e9f627a/
/// reds-again: 32 FP8 correctness trials and 4 references, all passed) and are in the suite since.
const FP8_FIRST_RUN: &str =
    "FP8, issue 40: compute-sanitizer memcheck over FP8 has not run yet (tools/h200-h129-and-reds.sh)";

/// FP8 (issue 40): the top rung in each scaling scheme, with and without two-level accumulation, and rung 4 (the
/// direct epilogue), against the fp32 reference on the dequantized operands; on a whole-tile shape, 777 tokens
/// (a partial last tile row) and 1000x1000x1008 (partial tiles along N, and a partial last k-block and 128-column
/// scale block). Correctness only; all passed on the H200 at e9f627a (H129).
pub(crate) fn fp8_correct() -> Vec<GpuTrial> {
    let (tensor, row, block) = (
        DType::E4M3(Scales::Tensor),
        DType::E4M3(Scales::Row),
        DType::E4M3(Scales::Block),
    );
    let whole_and_partial = ["square4096", "attn_out_777", "1000x1000x1008"];
    // Block scales' switches, also on a shape of one partial tile each way.
    let block_shapes = [
        "square4096",
        "attn_out_777",
        "1000x1000x1008",
        "256x384x640",
    ];
    // A stage of 128 one-byte k-elements holds what a 16-bit stage of 64 holds.
    let top = || Rung::Stmatrix.config().with_tile_k(128);
    let promoted = |every: u32| GemmConfig {
        bn: 128,
        promote: every,
        ..top()
    };
    let rung4 = || Rung::Swizzle128.config().with_tile_k(128);
    let variants: [(&str, GemmConfig, DType, &[&str]); 16] = [
        ("rung10_k128", top(), tensor, &whole_and_partial),
        ("rung10_k128", top(), row, &whole_and_partial),
        (
            "rung10_k128",
            top(),
            DType::E4M3F16(Scales::Row),
            &["square4096"],
        ),
        // The top rung promoted every 4 k-blocks and every one at K = 16384, and every one at K = 28672 (H115).
        // Unpromoted at these K it is no suite trial: the tensor core's FP8 accumulation alone passes or fails
        // the max-error clause by the inputs drawn (H158: 2 of 36 draws over it), so its verdict would be a draw.
        ("rung10_bn128_promote4", promoted(4), tensor, &["long_k"]),
        (
            "rung10_bn128_promote1",
            promoted(1),
            tensor,
            &["square4096", "1000x1000x1008", "long_k", "decode_mlp_down"],
        ),
        // 640 = 5 k-blocks: B's rows of block scales padded to 8, over three 128-column blocks.
        ("rung10_bn128_promote1", promoted(1), block, &block_shapes),
        (
            "rung10_bn128_promote1_stage",
            GemmConfig {
                scale_loads: true,
                ..promoted(1)
            },
            block,
            &["square4096", "tokens_384", "1000x1000x1008"],
        ),
        // H136: each k-block's scales loaded one k-block ahead, from global memory and beside the stage's copy.
        (
            "rung10_bn128_promote1_prefetch",
            GemmConfig {
                scale_prefetch: true,
                ..promoted(1)
            },
            block,
            &block_shapes,
        ),
        (
            "rung10_bn128_promote1_stage_prefetch",
            GemmConfig {
                scale_loads: true,
                scale_prefetch: true,
                ..promoted(1)
            },
            block,
            &["tokens_384", "1000x1000x1008"],
        ),
        // H138: B's block scale one value a warpgroup; 1000x1000x1008 leaves columns past N in its last tiles.
        (
            "rung10_bn128_promote1_one_b",
            GemmConfig {
                one_b_block: true,
                ..promoted(1)
            },
            block,
            &block_shapes,
        ),
        // H156: each k-block promoted under the next one's MMAs.
        (
            "rung10_bn128_promote1_one_b_overlap",
            GemmConfig {
                one_b_block: true,
                promote_overlap: true,
                ..promoted(1)
            },
            block,
            &block_shapes,
        ),
        ("rung4_k128", rung4(), tensor, &["attn_out_777"]),
        ("rung4_k128", rung4(), row, &["attn_out_777"]),
        // The other layouts (H114): core matrices of 16 one-byte elements, and two 64-byte spans a k-block; the
        // K-loop rung, core matrices without warp specialization.
        (
            "rung10_k128_unswizzled",
            top().with_swizzle(Swizzle::None, 128),
            tensor,
            &["attn_out_777", "1000x1000x1008"],
        ),
        (
            "rung10_k128_swizzle64",
            top().with_swizzle(Swizzle::B64, 128),
            tensor,
            &["1000x1000x1008"],
        ),
        (
            "rung1_k32",
            Rung::KLoop.config().with_tile_k(32),
            tensor,
            &["attn_out_777"],
        ),
    ];
    let mut out = Vec::new();
    // `auto` in FP8: the 16-bit rule's kernels (swap-AB and stream-K at small M) with k-blocks of 128.
    for (dtype, s) in [
        (tensor, "decode_m1"),
        (tensor, "decode_m64"),
        (tensor, "decode_attn_out"),
        (row, "decode_m16"),
        (row, "tokens_777"),
    ] {
        let (label, config) = harness::kernel::dispatch::auto_variant_for(
            &shape(s),
            harness::kernel::dispatch::H200_SMS,
            dtype,
        );
        out.push(correct(
            &format!("correct::fp8::{}::auto::{s}", dtype.name()),
            VariantSpec::gemm(label, config),
            s,
            dtype,
        ));
    }
    for (label, config, dtype, shapes) in variants {
        for s in shapes {
            out.push(correct(
                &format!("correct::fp8::{}::{label}::{s}", dtype.name()),
                VariantSpec::gemm(label, config.clone()),
                s,
                dtype,
            ));
        }
    }
    out
}

/// Deliberately broken kernels: each passes when the harness catches the bug the way its mechanism predicts.
pub(crate) fn faults() -> Vec<GpuTrial> {
    let fault = |word: &str, cfg: GemmConfig, f: Fault, caught: Caught, why: &str| {
        GpuTrial::new(
            format!("fault::{word}"),
            Job::Check {
                variant: VariantSpec::gemm(format!("fault_{word}"), cfg.with_fault(f)),
                shape: shape("decode_attn_out"),
                dtype: DType::F16,
            },
            Expectation::hypothesis(Expect::Caught(caught), why),
        )
    };
    let r4 = || Rung::Swizzle128.config();
    vec![
        fault(
            "wrong_phase",
            r4(),
            Fault::WrongPhase,
            Caught::Hang,
            "the producer waits for a release only its own load can cause: a hang on an empty barrier",
        ),
        fault(
            "missing_expect_tx",
            r4(),
            Fault::NoExpectTx,
            Caught::Hang,
            "without expect_tx the first phase completes on the arrival alone and the bytes land in the next: the consumers wait on a full barrier forever",
        ),
        fault(
            "skipped_epilogue",
            Rung::top().config(),
            Fault::SkipEpilogueTile,
            Caught::Unwritten,
            "tile 0 is never stored: its outputs keep the NaN poison",
        ),
        fault(
            "oob_store",
            r4(),
            Fault::OobStore,
            Caught::OutOfBounds,
            "tile 0 is stored a matrix too far down: into the guard band after C",
        ),
        fault(
            "skipped_k_block",
            Rung::top().config(),
            Fault::SkipKBlock,
            Caught::WrongValues,
            "every output misses one k-block's partial sum",
        ),
        GpuTrial::new(
            "fault::no_column_guard",
            Job::Check {
                variant: VariantSpec::gemm(
                    "fault_no_column_guard",
                    r4().with_fault(Fault::NoColumnGuard),
                ),
                shape: shape("square1000"),
                dtype: DType::F16,
            },
            Expectation::hypothesis(
                Expect::Caught(Caught::OutOfBounds),
                "the last tile column (896-1023 of N = 1000, rung 4 tiles are 128 wide) is stored in full: its 24 extra columns land in the \
                 guard columns after each row of the checked output (with ldc = N they would land in the next row, \
                 inside C, and go unseen)",
            ),
        ),
        fault(
            "wrong_phase_unbounded",
            r4().with_bounded(false),
            Fault::WrongPhase,
            Caught::HostTimeout,
            "with bounded waits off nothing inside reports the hang: the host deadline must end it",
        )
        .with_deadline_s(15.0),
    ]
}

/// Any M (issue 11, part 1): correctness only, no timing, on the token-count shapes (harness/kernel/problem.rs).
/// Three rungs cover the kernel's paths: rung 1 (one warpgroup, core-matrix layout: A's partial last 8-row group,
/// direct stores), rung 4 (warp-specialized, swizzled, direct stores) and rung 9 (2x1 cluster, TMA stores,
/// persistent with a grouped raster), on M = 1, 777 and 1500 and on 1000^3 (N and K off the tiles too), in fp16
/// and bf16; the other rungs on 1000^3 in fp16. The check's guard columns catch a store past column N.
pub(crate) fn any_m() -> Vec<GpuTrial> {
    let why = "any M: loads past M, N and K are zero-filled by TMA and stores past them dropped (TMA) or skipped \
               (direct epilogue), so every output matches cuBLAS and nothing lands outside C";
    let check = |rung: Rung, shape_name: &str, dtype: DType| {
        GpuTrial::new(
            format!(
                "correct::any_m::{}::{}::{shape_name}",
                dtype.name(),
                rung.name()
            ),
            Job::Check {
                variant: VariantSpec::gemm(rung.name(), rung.config()),
                shape: shape(shape_name),
                dtype,
            },
            Expectation::hypothesis(Expect::Correct, why),
        )
    };
    let paths = [Rung::KLoop, Rung::Swizzle128, Rung::Cooperative];
    let mut out = Vec::new();
    for dtype in [DType::F16, DType::BF16] {
        for rung in paths {
            for s in ["decode_m1", "tokens_777", "prefill_1500", "square1000"] {
                out.push(check(rung, s, dtype));
            }
        }
    }
    for rung in Rung::ALL.into_iter().filter(|r| !paths.contains(r)) {
        out.push(check(rung, "square1000", DType::F16));
    }
    out
}

/// What the bounded waits cost where the kernel is fastest (they are on in every trial). The cost was 3.5-4.3% in
/// every run from b9d1c9c to 8428745 (pinned "faster" then); the any-M and stream-K restructuring of the tile loop
/// halved it (0.979 at b774589, 0.980 at 9c40536, a run that called it inconclusive on the band edge), so it is
/// pinned as a ratio from the b774589 run.
pub(crate) fn reliability() -> Vec<GpuTrial> {
    let top = Rung::top();
    let name = "reliability::bounded_wait_cost::square4096";
    vec![configs(
        name,
        (&format!("{} (bounded waits)", top.name()), top.config()),
        (
            &format!("{} (unbounded waits)", top.name()),
            top.config().with_bounded(false),
        ),
        "square4096",
        harness::trial::pins::pinned().refuting("no change (issue 5's design: a wait reads the clock only after a failed poll, so the fast path should cost nothing)"),
    )]
}

/// Every rung on a small shape: what compute-sanitizer runs (memcheck, racecheck, synccheck; see the README).
pub(crate) fn sanitize() -> Vec<GpuTrial> {
    use harness::kernel::dispatch::{auto_variant, H200_SMS};
    let rungs = Rung::ALL.iter().map(|r| {
        correct(
            &format!("sanitize::{}::small", r.name()),
            VariantSpec::gemm(r.name(), r.config()),
            "small",
            DType::F16,
        )
    });
    // Each kernel family `auto` runs, as chosen for the token count and N given, run on the small problem
    // (256x512x512: partial token tiles for the token splits, whole tiles or stream-K for the rest).
    let auto_kernels = [
        ("swap_ab_whole", 1, 8192, 8192),
        ("swap_ab_whole_no_cluster", 128, 8192, 8192),
        ("swap_ab_streamk", 1, 28672, 8192),
        ("small_m_streamk", 64, 28672, 8192),
        ("swap_ab_two_consumers_streamk", 128, 28672, 8192),
        ("token_split", 640, 8192, 8192),
        ("weights_shared_token_split", 777, 8192, 8192),
        ("wide_weights_token_split", 777, 28672, 8192),
        ("decode_streamk", 256, 10240, 8192),
        ("decode_whole", 256, 8192, 8192),
        ("weights_shared_two_token_tiles", 224, 8192, 8192),
        ("weights_shared_four_token_tiles", 192, 4096, 4096),
        ("last_wave_streamk", 1000, 10240, 8192),
        ("swap_ab_streamk_64_rows", 1, 4096, 8192),
    ]
    .into_iter()
    .map(|(family, m, n, k)| {
        let (label, config) = auto_variant(
            &harness::kernel::problem::Shape::new("chooser", m, n, k),
            H200_SMS,
        );
        correct(
            &format!("sanitize::auto::{family}::small"),
            VariantSpec::gemm(label, config),
            "small",
            DType::F16,
        )
    });
    // Switches that no rung and no `auto` kernel turns on, but whose barrier protocol is new: four CTAs sharing the
    // B tile (H68), with whole tiles and with stream-K.
    let four_cta =
        "rung10:cluster=4,consumers=2,split_n=1,wg_m=64,bn=256,epilogue=direct,stmatrix=0,stages=5";
    // And each tile's k-loop rotated (H83), on a shape whose last k-block is partial (K = 520), so that the wrapped
    // order reaches the zero-filled block in the middle of the loop.
    let switches = [
        ("cluster4", four_cta.to_string(), "small"),
        ("cluster4_streamk", format!("{four_cta},streamk=1"), "small"),
        ("k_rotate", "rung10:k_rotate=1".to_string(), "27x520x520"),
        // Stream-K in step (H95), its hand-off exercised: two clusters (ctas=4) for five cluster tiles, so each
        // share holds whole tiles, a head and a tail, and a partial last k-block (K = 520).
        (
            "streamk_in_step",
            "rung10:streamk=3,ctas=4".to_string(),
            "256x1280x520",
        ),
    ]
    .into_iter()
    .map(|(name, spec, shape)| {
        let config =
            harness::kernel::ladder::parse_spec(&spec).expect("the sanitizer's specs parse");
        correct(
            &format!("sanitize::switch::{name}::{shape}"),
            VariantSpec::gemm(&spec, config),
            shape,
            DType::F16,
        )
    });
    // The skinny kernel (H80) takes at most 32 tokens: four token tiles, a partial one, a partial block of weight
    // rows (N = 520) and a last k-step of one chunk (K = 520).
    let skinny = {
        let config = harness::families::skinny::config::SkinnyConfig {
            token_tiles: 4,
            ..Default::default()
        };
        correct(
            "sanitize::skinny::27x520x520",
            VariantSpec::of(&Skinny, config.label(), &config),
            "27x520x520",
            DType::F16,
        )
    };
    rungs
        .chain(auto_kernels)
        .chain(switches)
        .chain(std::iter::once(skinny))
        .chain(fp8_sanitize())
        .collect()
}

/// FP8's kernels under the sanitizer (issue 40): the top rung in each scaling scheme, promoted, with A's block
/// scales copied with the stage (and the next k-block's loaded ahead, H136), unswizzled, the direct epilogue with row scales, `auto`'s swap-AB kernel with
/// row scales (the scales handed over crosswise) and `auto`'s block-scaled kernel. Block scales on K = 640: five k-blocks, B's rows of scales
/// padded to eight. Each waits for FP8's first run (`GEMM_ABLATE_FIRST_RUNS=1 tools/h200-sanitize.sh sanitize::fp8`).
fn fp8_sanitize() -> Vec<GpuTrial> {
    let (tensor, row, block) = (
        DType::E4M3(Scales::Tensor),
        DType::E4M3(Scales::Row),
        DType::E4M3(Scales::Block),
    );
    let top = || Rung::Stmatrix.config().with_tile_k(128);
    let promoted = GemmConfig {
        bn: 128,
        promote: 1,
        ..top()
    };
    let (swap_label, swap_ab) = harness::kernel::dispatch::auto_variant_for(
        &shape("decode_m1"),
        harness::kernel::dispatch::H200_SMS,
        row,
    );
    let gemm = |label: &str, config: GemmConfig| VariantSpec::gemm(label, config);
    let variants = [
        ("rung10_k128", top(), tensor, "small"),
        ("rung10_k128", top(), row, "small"),
        (
            "rung4_k128",
            Rung::Swizzle128.config().with_tile_k(128),
            row,
            "small",
        ),
        (
            "rung10_k128_unswizzled",
            top().with_swizzle(Swizzle::None, 128),
            tensor,
            "small",
        ),
        (
            "rung10_bn128_promote1",
            promoted.clone(),
            block,
            "256x384x640",
        ),
        (
            "rung10_bn128_promote1_stage",
            GemmConfig {
                scale_loads: true,
                ..promoted.clone()
            },
            block,
            "256x384x640",
        ),
        // H136: the next k-block's scales loaded while this one's are read from the stage's slot.
        (
            "rung10_bn128_promote1_stage_prefetch",
            GemmConfig {
                scale_loads: true,
                scale_prefetch: true,
                ..promoted
            },
            block,
            "256x384x640",
        ),
    ]
    .map(|(label, config, dtype, s)| (label, gemm(label, config), dtype, s));
    // `auto`'s kernels keep the names `auto` gives them in records: the swap-AB one, and the block-scaled one
    // (`one_b_block` since H138).
    let (block_label, block_auto) = harness::kernel::dispatch::auto_variant_for(
        &shape("256x384x640"),
        harness::kernel::dispatch::H200_SMS,
        block,
    );
    let autos = [
        ("auto_swap_ab", gemm(&swap_label, swap_ab), row, "small"),
        (
            "auto_block",
            gemm(&block_label, block_auto),
            block,
            "256x384x640",
        ),
    ];
    variants
        .into_iter()
        .chain(autos)
        .map(|(label, variant, dtype, s)| {
            correct(
                &format!("sanitize::fp8::{}::{label}::{s}", dtype.name()),
                variant,
                s,
                dtype,
            )
            .waiting_for_first_run(FP8_FIRST_RUN)
        })
        .collect()
}
