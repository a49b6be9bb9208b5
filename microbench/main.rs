//! Isolation microbenchmarks and sweeps: what the seed found by taking the kernel apart, as repeatable trials.
//!
//! `cargo test --release --test microbench -- <word>` with word one of load_path, same_tile, mma_only,
//! epilogue_only, stages, raster.

use harness::hypothesis::{compare, configs, with_seed};
use harness::ladder::parse_spec;
use harness::{
    shape, DType, Expect, GpuTrial, Job, LoadPathConfig, Rung, SweepExpect, Swizzle, VariantSpec,
    Verdict,
};
use std::process::ExitCode;

fn load_path(name: &str, swizzle: Swizzle, box_bytes: u32) -> VariantSpec {
    VariantSpec::LoadPath {
        name: name.into(),
        config: LoadPathConfig::new(swizzle, box_bytes),
    }
}

fn spec(s: &str) -> VariantSpec {
    VariantSpec::gemm(s, parse_spec(s).unwrap_or_else(|e| panic!("{s}: {e}")))
}

fn sweep(name: &str, points: Vec<VariantSpec>, shape_name: &str, expect: SweepExpect) -> GpuTrial {
    GpuTrial::new(
        name,
        Job::Sweep {
            points,
            shape: shape(shape_name),
            dtype: DType::F16,
            expect,
        },
    )
}

fn fastest(names: &[&str]) -> SweepExpect {
    SweepExpect::FastestAmong(names.iter().map(|s| s.to_string()).collect())
}

/// 1. The load path alone: layout and box width separated, same bytes.
fn load_path_trials() -> Vec<GpuTrial> {
    let none16 = || load_path("none/16B-boxes", Swizzle::None, 16);
    let none128 = || load_path("none/128B-boxes", Swizzle::None, 128);
    let sw128 = || load_path("swizzle128/128B-boxes", Swizzle::B128, 128);
    vec![
        with_seed(
            compare("load_path::box_width::none", none128(), none16(), "square4096", Expect::Verdict(Verdict::Slower)),
            "not separated: 3.85 TB/s unswizzled (16-byte requests) against 18.5 TB/s swizzled, blamed on bank conflicts",
        ),
        compare("load_path::layout::box128", none128(), sw128(), "square4096", Expect::Verdict(Verdict::NoChange)),
        sweep(
            "load_path::swizzle_sweep::square4096",
            vec![
                none16(),
                none128(),
                load_path("swizzle32/32B-boxes", Swizzle::B32, 32),
                load_path("swizzle64/64B-boxes", Swizzle::B64, 64),
                sw128(),
            ],
            "square4096",
            fastest(&["none/128B-boxes", "swizzle64/64B-boxes", "swizzle128/128B-boxes"]),
        ),
    ]
}

/// 2. Every CTA loading the same tile against each its own: is L2 traffic the limit?
fn same_tile_trials() -> Vec<GpuTrial> {
    let mut same = LoadPathConfig::new(Swizzle::None, 16);
    same.same_tile = true;
    vec![with_seed(
        compare(
            "same_tile::none16::square4096",
            load_path("own tiles", Swizzle::None, 16),
            VariantSpec::LoadPath {
                name: "same tile".into(),
                config: same,
            },
            "square4096",
            // On the H200 every CTA hammering the same lines is a little slower, not the same.
            Expect::Verdict(Verdict::Slower),
        ),
        "406.5 us against 403.8: L2 traffic was not the limit, filling shared memory was",
    )]
}

/// 3. MMAs from resident shared memory: the tensor-core ceiling of each tile, plain against swizzled.
fn mma_only_trials() -> Vec<GpuTrial> {
    let r4 = Rung::Swizzle128.config();
    vec![
        with_seed(
            configs(
                "mma_only::plain_vs_swizzled::square4096",
                ("rung4 MMA only (128B swizzle)", r4.clone().mma_only()),
                ("rung4 MMA only (core-matrix layout)", r4.with_swizzle(Swizzle::None, 64).mma_only()),
                "square4096",
                // Not so on the H200: wgmma reads the core-matrix layout about a fifth slower.
                Verdict::Slower,
            ),
            "the MMA reads were never the problem: MMA only with the plain layout ran at cuBLAS speed",
        ),
        sweep(
            "mma_only::ceiling::square4096",
            vec![
                VariantSpec::Cublas,
                VariantSpec::gemm("128x128 MMA only", Rung::Swizzle128.config().mma_only()),
                VariantSpec::gemm("128x256 MMA only", Rung::TwoConsumers.config().mma_only()),
                VariantSpec::gemm("ping-pong 64x256 MMA only", Rung::top().config().mma_only()),
            ],
            "square4096",
            fastest(&["128x256 MMA only", "ping-pong 64x256 MMA only"]),
        ),
    ]
}

/// 4. The epilogue alone: its share of the whole kernel, the size of the prize before optimizing it.
fn epilogue_only_trials() -> Vec<GpuTrial> {
    [Rung::Swizzle128, Rung::TmaEpilogue, Rung::top()]
        .into_iter()
        .map(|rung| {
            with_seed(
                compare(
                    &format!("epilogue_only::{}::square4096", rung.name()),
                    VariantSpec::gemm(rung.name(), rung.config()),
                    VariantSpec::gemm(
                        format!("{} epilogue only", rung.name()),
                        rung.config().epilogue_only(),
                    ),
                    "square4096",
                    Expect::TimeRatioBelow(0.15),
                ),
                "at most 13 of 109 us",
            )
        })
        .collect()
}

/// 5. Stage count, 2 to 8, where the kernel is latency-bound and where it is not.
fn stage_trials() -> Vec<GpuTrial> {
    let points = |rung: &str, max: u32| {
        (2..=max)
            .map(|s| spec(&format!("{rung}:stages={s}")))
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    for s in ["square4096", "prefill_attn_out"] {
        // Not flat on the H200: 2 -> 3 -> 4 stages each help, then flat.
        out.push(sweep(
            &format!("stages::rung3::{s}"),
            points("rung3", 8),
            s,
            fastest(&[
                "rung3:stages=4",
                "rung3:stages=5",
                "rung3:stages=6",
                "rung3:stages=7",
                "rung3:stages=8",
            ]),
        ));
        out.push(sweep(
            &format!("stages::rung5::{s}"),
            points("rung5", 6),
            s,
            fastest(&["rung5:stages=4", "rung5:stages=5", "rung5:stages=6"]),
        ));
        // The seed saturated at 5 on its 2-CTA kernel; a 40 KB ping-pong stage allows at most 4 here.
        out.push(sweep(
            &format!("stages::top::{s}"),
            points("rung8", 8),
            s,
            fastest(&["rung8:stages=4"]),
        ));
    }
    out
}

/// 6. Threadblock rasterization group sizes, on the top rung, against cuBLAS.
fn raster_trials() -> Vec<GpuTrial> {
    let points = || {
        std::iter::once(VariantSpec::Cublas)
            .chain(
                [1, 2, 4, 8, 16, 32]
                    .iter()
                    .map(|g| spec(&format!("rung8:raster={g}"))),
            )
            .collect()
    };
    vec![
        sweep(
            "raster::top::prefill_attn_out",
            points(),
            "prefill_attn_out",
            fastest(&["rung8:raster=8", "rung8:raster=16", "rung8:raster=32"]),
        ),
        sweep(
            "raster::top::long_k",
            points(),
            "long_k",
            fastest(&[
                "rung8:raster=2",
                "rung8:raster=4",
                "rung8:raster=8",
                "rung8:raster=16",
                "rung8:raster=32",
            ]),
        ),
    ]
}

fn main() -> ExitCode {
    let gpu: Vec<GpuTrial> = [
        load_path_trials(),
        same_tile_trials(),
        mma_only_trials(),
        epilogue_only_trials(),
        stage_trials(),
        raster_trials(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let cpu = harness::suite::compile_trials(&gpu);
    harness::suite::main("microbench", gpu, cpu)
}
