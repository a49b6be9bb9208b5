//! The seed's eight steps on Hopper: each step as rung N against rung N-1 (with the seed's B200 verdict, or the
//! H200's where its reference runs refuted it), the seed's step-4 isolation table, and switches on the top rung.

use crate::past_seed::past;
use harness::trial::hypothesis::configs;
use harness::{GemmConfig, GpuTrial, Raster, Rung, Swizzle, Verdict};

/// The seed's verdict for each step on each of its table shapes, as its worklog states it (before any H200
/// measurement), or None where the worklog gives no figure for that shape.
pub(crate) fn seed_step_verdict(rung: Rung, shape: &str) -> Option<(Verdict, &'static str)> {
    use Verdict::*;
    let decode = shape.starts_with("decode");
    Some(match rung {
        Rung::Pipeline => (
            Faster,
            "1.87x at 4096^3, 1.95x prefill, 1.93x decode MLP up: helps at every shape",
        ),
        Rung::WarpSpecialized => (
            NoChange,
            "449 against 448 us; prefill and decode did not move either",
        ),
        Rung::Swizzle128 => (Faster, "4.1x at 4096^3, 3.55x prefill, 3.56x decode MLP up"),
        Rung::TmaEpilogue => (
            NoChange,
            "108.8-110.5 against 109.3 us; steps 5 and 6 barely register",
        ),
        Rung::Multicast if shape == "prefill_mlp_up" => {
            (Slower, "the 8192^3 prefill shape got about 6% worse")
        }
        Rung::Multicast => (
            NoChange,
            "109.4 against 110.2 us; decode flat on every shape",
        ),
        Rung::TwoConsumers => match shape {
            "square4096" => (NoChange, "109.4 to 107.3 us at 4096^3 (2%)"),
            "decode_attn_out" => (Faster, "54 to 48 us"),
            "decode_mlp_up" => (Faster, "127 to 117 us"),
            _ => return None,
        },
        Rung::PersistentPingPong if decode => {
            (NoChange, "on decode this step does close to nothing")
        }
        Rung::PersistentPingPong => (Faster, "1.09x at 4096^3, 848 to 816 us at 8192^3"),
        // Rung 1 has no step below it; rungs past the seed have no seed verdict.
        Rung::KLoop | Rung::Cooperative | Rung::Stmatrix => return None,
    })
}

/// The rungs past the seed: each step's hypothesis, written before measuring (ablations/HYPOTHESES.md), on the
/// seed's table shapes plus prefill_attn_out and long_k.
pub(crate) fn past_seed_step_verdict(rung: Rung, shape: &str) -> Option<(Verdict, &'static str)> {
    use Verdict::*;
    Some(match (rung, shape) {
        (Rung::Cooperative, "square4096") => (
            Faster,
            "on rung 8 at 4096^3, ping-pong off measured 1.14x and a raster of 8 1.04x (9a8c135 switch trials)",
        ),
        (Rung::Cooperative, "prefill_mlp_up") => (
            Faster,
            "on rung 8, ping-pong off measured 1.42x and a raster of 8 1.33x on prefill_mlp_up (9a8c135)",
        ),
        (Rung::Cooperative, "prefill_attn_out") => (
            Faster,
            "rung 7's cooperative tile ran at 0.97x cuBLAS here against ping-pong's 0.84x (9a8c135 ladder)",
        ),
        (Rung::Cooperative, "long_k") => (
            Faster,
            "the cooperative 128x256 tile moves half the shared-memory bytes per FLOP of ping-pong's 64x256",
        ),
        (Rung::Cooperative, "decode_attn_out") => (
            Slower,
            "on rung 8, ping-pong off measured 0.68x on decode_attn_out (9a8c135): ping-pong's 64-row tiles give \
             twice the tiles to 132 SMs",
        ),
        (Rung::Cooperative, "decode_mlp_up") => (
            Faster,
            "rung 7 ran at 0.98x cuBLAS here against ping-pong's 0.77x (9a8c135 ladder): 224 tiles fill the SMs",
        ),
        (Rung::Stmatrix, "long_k") => (
            NoChange,
            "H11: K = 16384 makes the epilogue a quarter as large a share of the run as at 4096^3",
        ),
        (Rung::Stmatrix, _) => (
            NoChange,
            "H11: a quarter of the shared-store instructions in the epilogue gains 0.5-1.5% at 4096^3 (fast.cu's \
             kernel 12): inside the 2% band, so the verdict is no change and the ratio is the finding",
        ),
        _ => return None,
    })
}

/// Each step: rung N against rung N-1, on the seed's table shapes (and, past the seed, prefill_attn_out and long_k).
pub(crate) fn steps() -> Vec<GpuTrial> {
    let mut out = Vec::new();
    for pair in Rung::ALL.windows(2) {
        let (below, rung) = (pair[0], pair[1]);
        if rung > Rung::PersistentPingPong {
            let word = rung.name().split_once('_').unwrap().1.to_string();
            let shapes = [
                "square4096",
                "prefill_mlp_up",
                "decode_attn_out",
                "decode_mlp_up",
                "prefill_attn_out",
                "long_k",
            ];
            for s in shapes {
                let (v, why) = past_seed_step_verdict(rung, s)
                    .unwrap_or_else(|| panic!("{}: no hypothesis for {s}", rung.name()));
                let name = format!("ablation::{word}::{s}");
                let expectation = past(v, &format!("ablations/HYPOTHESES.md: {why}"));
                out.push(configs(
                    &name,
                    (&below.name(), below.config()),
                    (&rung.name(), rung.config()),
                    s,
                    expectation,
                ));
            }
            continue;
        }
        let word = rung.name().split_once('_').unwrap().1.to_string();
        for shape in harness::kernel::problem::seed_table_shapes() {
            let s = shape.name.as_str();
            let name = format!("ablation::{word}::{s}");
            let expectation = match seed_step_verdict(rung, s) {
                Some((v, says)) => harness::trial::pins::seed_hypothesis(v, says),
                None => harness::trial::pins::pinned(),
            };
            out.push(configs(
                &name,
                (&below.name(), below.config()),
                (&rung.name(), rung.config()),
                s,
                expectation,
            ));
        }
    }
    out
}

/// The seed's step-4 isolation table, on the rung-3 kernel at 4096^3: the seed's numbers are the hypotheses.
pub(crate) fn isolation() -> Vec<GpuTrial> {
    let r3 = || Rung::WarpSpecialized.config();
    use Verdict::*;
    [
        (
            "mma_only",
            r3().mma_only(),
            Faster,
            "MMA only: 96.4 us against 449",
        ),
        (
            "loads_only",
            r3().loads_only(),
            Faster,
            "loads only: 417.3 us against 449",
        ),
        (
            "tile_k64_unswizzled",
            r3().with_tile_k(64),
            NoChange,
            "tile_k 64 without swizzle: 448.5 us against 449",
        ),
        (
            "stages8",
            r3().with_stages(8),
            NoChange,
            "8 stages: 454.6 us against 449",
        ),
    ]
    .into_iter()
    .map(|(word, cfg, v, says)| {
        let name = format!("isolation::{word}::square4096");
        configs(
            &name,
            ("rung3_warpspec", r3()),
            (&format!("rung3+{word}"), cfg),
            "square4096",
            harness::trial::pins::seed_hypothesis(v, says),
        )
    })
    .collect()
}

/// Each mechanism switched off (or, for raster, on) on the top rung. The seed has a verdict for three of them;
/// the others are pinned from the reference runs.
pub(crate) fn switches() -> Vec<GpuTrial> {
    let top = || Rung::top().config();
    let shapes = ["square4096", "prefill_mlp_up", "decode_attn_out"];
    let seed = |word: &str, s: &str| -> Option<(Verdict, &'static str)> {
        use Verdict::*;
        match (word, s) {
            ("swizzle_off", _) => Some((Slower, "the swizzle is almost the whole story (4.1x)")),
            ("multicast_off", _) => Some((NoChange, "multicast did nothing at 4096^3 or decode")),
            ("raster8_on", "square4096") => Some((
                NoChange,
                "does nothing at 4096^3: not enough waves for ordering to matter",
            )),
            ("raster8_on", "prefill_mlp_up") => {
                Some((Faster, "groups of 8 are a real optimum at 8192^3"))
            }
            _ => None,
        }
    };
    let switches: [(&str, GemmConfig); 5] = [
        ("swizzle_off", top().with_swizzle(Swizzle::None, 64)),
        ("multicast_off", top().with_cluster(1)),
        ("pingpong_off", top().with_pingpong(false)),
        ("one_consumer", top().with_one_consumer()),
        ("raster8_on", top().with_raster(Raster::UpTo(8))),
    ];
    let mut out = Vec::new();
    for (word, cfg) in switches {
        for s in shapes {
            let name = format!("switch::{word}::{s}");
            let expectation = match seed(word, s) {
                Some((v, says)) => harness::trial::pins::seed_hypothesis(v, says),
                None => harness::trial::pins::pinned(),
            };
            out.push(configs(
                &name,
                (&Rung::top().name(), top()),
                (&format!("top+{word}"), cfg.clone()),
                s,
                expectation,
            ));
        }
    }
    out
}
