//! The ladder: named configurations of the one GEMM kernel, each one change over the rung below. Rungs 1-8 follow
//! the seed's Blackwell worklog (each step's Hopper counterpart); rung 9 and up go past it (issue 10), their
//! hypotheses written before measuring in ablations/HYPOTHESES.md.

use crate::error::{config_err, Result};
use crate::kernel::config::{
    Epilogue, GemmConfig, Multicast, Raster, Swizzle, TileOrder, WaitScope,
};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Rung {
    KLoop = 1,
    Pipeline,
    WarpSpecialized,
    Swizzle128,
    TmaEpilogue,
    Multicast,
    TwoConsumers,
    PersistentPingPong,
    Cooperative,
    Stmatrix,
}

impl Rung {
    pub const ALL: [Rung; 10] = [
        Rung::KLoop,
        Rung::Pipeline,
        Rung::WarpSpecialized,
        Rung::Swizzle128,
        Rung::TmaEpilogue,
        Rung::Multicast,
        Rung::TwoConsumers,
        Rung::PersistentPingPong,
        Rung::Cooperative,
        Rung::Stmatrix,
    ];

    pub fn number(self) -> u32 {
        self as u32
    }

    /// Short name used in trial names and results: `rung4_swizzle`.
    pub fn name(self) -> String {
        let word = match self {
            Rung::KLoop => "kloop",
            Rung::Pipeline => "pipeline",
            Rung::WarpSpecialized => "warpspec",
            Rung::Swizzle128 => "swizzle",
            Rung::TmaEpilogue => "epilogue",
            Rung::Multicast => "multicast",
            Rung::TwoConsumers => "twoconsumers",
            Rung::PersistentPingPong => "pingpong",
            Rung::Cooperative => "cooperative",
            Rung::Stmatrix => "stmatrix",
        };
        format!("rung{}_{}", self.number(), word)
    }

    /// What this rung adds over the one below.
    pub fn change(self) -> &'static str {
        match self {
            Rung::KLoop => "K-loop baseline: one warpgroup, single buffer (load, wait, MMA, wait), core-matrix layout, tile_k 16, direct stores",
            Rung::Pipeline => "4-stage shared-memory ring: loads run ahead of the MMAs, one full barrier per stage",
            Rung::WarpSpecialized => "warp specialization: a producer warpgroup issues TMA, a consumer warpgroup issues wgmma; full and empty barrier per stage",
            Rung::Swizzle128 => "128B swizzle with tile_k = 64 (TMA SWIZZLE_128B, wgmma descriptors in 128B mode, 1024-byte aligned stages)",
            Rung::TmaEpilogue => "epilogue through shared memory and TMA bulk stores instead of per-thread global stores",
            Rung::Multicast => "2x1 cluster: each CTA loads half of the shared B tile and multicasts it to both",
            Rung::TwoConsumers => "two consumer warpgroups on a 128x256 tile, setmaxnreg moving registers from producer to consumers",
            Rung::PersistentPingPong => "persistent kernel (grid = SM count) with ping-pong consumers taking alternate 64x256 tiles",
            Rung::Cooperative => "persistent and cooperative: both consumers on one 128x256 tile again (no ping-pong), tiles walked in groups of up to 8 rows (the best configuration found on the seed's ladder)",
            Rung::Stmatrix => "the epilogue's staging written with stmatrix, four 8x8 blocks per instruction, instead of sixteen 32-bit shared stores per thread per 64x64 chunk",
        }
    }

    /// The seed's finding for the same step on a B200.
    pub fn seed_finding(self) -> &'static str {
        match self {
            Rung::KLoop => "baseline, 11% of cuBLAS",
            Rung::Pipeline => "1.87x at 4096^3, helps everywhere",
            Rung::WarpSpecialized => "no change (L1/TEX was the limit)",
            Rung::Swizzle128 => "4.1x, almost the whole story",
            Rung::TmaEpilogue => "no change: the epilogue was at most 13 of 109 us",
            Rung::Multicast => "no change; 6% worse at 8192^3",
            Rung::TwoConsumers => "small on square, 54 to 48 us on decode attention output",
            Rung::PersistentPingPong => "1.09x at 4096^3, nothing on decode",
            Rung::Cooperative | Rung::Stmatrix => "none: past the seed's eight steps",
        }
    }

    pub fn config(self) -> GemmConfig {
        let base = GemmConfig {
            stages: 1,
            warpspec: false,
            swizzle: Swizzle::None,
            tile_k: 16,
            epilogue: Epilogue::Direct,
            cluster: 1,
            consumers: 1,
            wg_m: 128,
            bn: 128,
            setmaxnreg: false,
            pingpong: false,
            persistent: false,
            raster: Raster::Group(1),
            bounded: true,
            timeout_ms: 2000,
            loads: true,
            mma: true,
            stream_only: false,
            fault: None,
            spin: 0,
            mma_wait: false,
            stmatrix: false,
            consumer_regs: 232,
            ctas: 0,
            streamk: 0,
            pdl: false,
            swap_ab: false,
            evict_first: false,
            early_weights: false,
            split_n: false,
            tile_order: TileOrder::Raster,
            swap_store: false,
            multicast: Multicast::B,
            wait_scope: WaitScope::Cluster,
            wait_suspend: false,
            tmap_prefetch: false,
            kb_per_wait: 1,
            desc_advance: false,
            k_rotate: false,
            early_turn: false,
            epi_buffers: 2,
            clock_probe: false,
            place_probe: false,
            promote: 0,
            scale_loads: false,
            scale_prefetch: false,
            one_b_block: false,
            promote_overlap: false,
            promote_stagger: false,
            promote_windows: false,
        };
        match self {
            Rung::KLoop => base,
            Rung::Pipeline => GemmConfig {
                stages: 4,
                ..Rung::KLoop.config()
            },
            Rung::WarpSpecialized => GemmConfig {
                warpspec: true,
                ..Rung::Pipeline.config()
            },
            Rung::Swizzle128 => Rung::WarpSpecialized
                .config()
                .with_swizzle(Swizzle::B128, 64),
            Rung::TmaEpilogue => Rung::Swizzle128.config().with_epilogue(Epilogue::Tma),
            Rung::Multicast => Rung::TmaEpilogue.config().with_cluster(2),
            Rung::TwoConsumers => GemmConfig {
                consumers: 2,
                wg_m: 64,
                bn: 256,
                setmaxnreg: true,
                ..Rung::Multicast.config()
            },
            Rung::PersistentPingPong => Rung::TwoConsumers
                .config()
                .with_persistent(true)
                .with_pingpong(true),
            Rung::Cooperative => Rung::PersistentPingPong
                .config()
                .with_pingpong(false)
                .with_raster(Raster::UpTo(8)),
            Rung::Stmatrix => GemmConfig {
                stmatrix: true,
                ..Rung::Cooperative.config()
            },
        }
    }

    /// The rung the `switch::` trials flip switches on: still rung 8, whose switch trials are pinned; moving it to
    /// the newest rung means pinning them again.
    pub fn top() -> Rung {
        Rung::PersistentPingPong
    }

    /// Looks a rung up by number (`4`), short word (`swizzle`) or full name (`rung4_swizzle`, `rung4`).
    pub fn parse(s: &str) -> Option<Rung> {
        let s = s.trim().to_ascii_lowercase();
        Rung::ALL.into_iter().find(|r| {
            let name = r.name();
            s == name
                || s == format!("rung{}", r.number())
                || s == r.number().to_string()
                || name.split_once('_').map(|(_, w)| w == s).unwrap_or(false)
        })
    }
}

/// Parses a variant spec: a rung, optionally followed by `:` and comma-separated switch changes, e.g.
/// `rung8:cluster=1,pingpong=0` or `4:stages=8`; the switches are those of `switches::SWITCHES`. The result is not
/// validated: a sweep lists the points that break a constraint as rejected.
pub fn parse_spec(spec: &str) -> Result<GemmConfig> {
    let rung = spec.split_once(':').map_or(spec, |(rung, _)| rung);
    let Some(rung) = Rung::parse(rung) else {
        return config_err(format!(
            "unknown rung `{rung}` in `{spec}`: use 1..10, a word like swizzle, or rung4_swizzle"
        ));
    };
    let mut c = rung.config();
    for (key, value) in crate::kernel::spec::changes(spec)? {
        let Some(switch) = crate::kernel::switches::find(key) else {
            let keys: Vec<&str> = crate::kernel::switches::SWITCHES
                .iter()
                .map(|s| s.key)
                .collect();
            return config_err(format!(
                "unknown switch `{key}` in `{spec}`: the switches are {}",
                keys.join(", ")
            ));
        };
        (switch.set)(&mut c, value)?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rungs_parse_by_number_word_and_name() {
        assert_eq!(Rung::parse("4"), Some(Rung::Swizzle128));
        assert_eq!(Rung::parse("swizzle"), Some(Rung::Swizzle128));
        assert_eq!(Rung::parse("rung4_swizzle"), Some(Rung::Swizzle128));
        assert_eq!(Rung::parse("rung8"), Some(Rung::PersistentPingPong));
        assert_eq!(Rung::parse("nine"), None);
    }

    #[test]
    fn each_rung_is_valid_and_one_change_over_the_last() {
        for r in Rung::ALL {
            r.config()
                .validate()
                .unwrap_or_else(|e| panic!("{}: {e}", r.name()));
        }
        let diff = |a: Rung, b: Rung| {
            let (x, y) = (
                serde_json::to_value(a.config()).unwrap(),
                serde_json::to_value(b.config()).unwrap(),
            );
            x.as_object()
                .unwrap()
                .iter()
                .filter(|(k, v)| y[k.as_str()] != **v)
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(diff(Rung::KLoop, Rung::Pipeline), ["stages"]);
        assert_eq!(diff(Rung::Pipeline, Rung::WarpSpecialized), ["warpspec"]);
        assert_eq!(
            diff(Rung::WarpSpecialized, Rung::Swizzle128),
            ["swizzle", "tile_k"]
        );
        assert_eq!(diff(Rung::Swizzle128, Rung::TmaEpilogue), ["epilogue"]);
        assert_eq!(diff(Rung::TmaEpilogue, Rung::Multicast), ["cluster"]);
        assert_eq!(
            diff(Rung::Multicast, Rung::TwoConsumers),
            ["bn", "consumers", "setmaxnreg", "wg_m"]
        );
        assert_eq!(
            diff(Rung::TwoConsumers, Rung::PersistentPingPong),
            ["persistent", "pingpong"]
        );
        // Rung 9 is the best configuration found on rung 8: ping-pong off and a grouped raster.
        assert_eq!(
            diff(Rung::PersistentPingPong, Rung::Cooperative),
            ["pingpong", "raster"]
        );
        assert_eq!(diff(Rung::Cooperative, Rung::Stmatrix), ["stmatrix"]);
    }

    #[test]
    fn specs_change_one_switch() {
        let c = parse_spec("rung8:cluster=1,pingpong=0").unwrap();
        assert_eq!(c.cluster, 1);
        assert!(!c.pingpong);
        assert_eq!(
            parse_spec("3:swizzle=128").unwrap(),
            Rung::Swizzle128.config()
        );
        assert_eq!(parse_spec("8:consumers=1").unwrap().consumers, 1);
        assert!(parse_spec("8:colour=red")
            .unwrap_err()
            .to_string()
            .contains("unknown switch"));
        let bad = parse_spec("3:swizzle=128,tile_k=16").unwrap();
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("needs tile_k to be a multiple of 64"));
        assert!(parse_spec("12").is_err());
        // A colon with nothing after it, or an empty change, is a typo, not the rung as it stands.
        let e = |s: &str| parse_spec(s).unwrap_err().to_string();
        assert!(e("8:").contains("nothing after its colon"), "{}", e("8:"));
        assert!(e("rung8:stages=4,,pingpong=0").contains("doubled or trailing comma"));
        assert!(e("rung8:stages=4,").contains("doubled or trailing comma"));
        // A switch given twice takes its last value (the trials extend a spec with overrides).
        assert_eq!(parse_spec("10:stages=4,stages=5").unwrap().stages, 5);
        // A cluster of 0 is refused before anything divides by it (it panicked `show` and `--list` at f6883b2).
        let zero = parse_spec("10:cluster=0").unwrap().validate().unwrap_err();
        assert!(zero.to_string().contains("cluster size must be 1, 2 or 4"));
        assert!(crate::kernel::spec::switches("stream:", "stream")
            .unwrap()
            .is_err());
    }
}
