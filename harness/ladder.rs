//! The ladder: eight named configurations of the one GEMM kernel, each one change over the rung below, in the
//! order the seed's Blackwell worklog took them (with each step's Hopper counterpart).

use crate::config::{GemmConfig, Raster, Swizzle};
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
}

impl Rung {
    pub const ALL: [Rung; 8] = [
        Rung::KLoop,
        Rung::Pipeline,
        Rung::WarpSpecialized,
        Rung::Swizzle128,
        Rung::TmaEpilogue,
        Rung::Multicast,
        Rung::TwoConsumers,
        Rung::PersistentPingPong,
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
        }
    }

    pub fn config(self) -> GemmConfig {
        let base = GemmConfig {
            stages: 1,
            warp_specialized: false,
            swizzle: Swizzle::None,
            tile_k: 16,
            epilogue_tma: false,
            cluster_m: 1,
            consumers: 1,
            wg_m: 128,
            bn: 128,
            setmaxnreg: false,
            pingpong: false,
            persistent: false,
            raster: Raster::Group(1),
            bounded_waits: true,
            hang_timeout_ms: 2000,
            mainloop_loads: true,
            mainloop_mma: true,
            fault: None,
        };
        match self {
            Rung::KLoop => base,
            Rung::Pipeline => GemmConfig { stages: 4, ..Rung::KLoop.config() },
            Rung::WarpSpecialized => GemmConfig { warp_specialized: true, ..Rung::Pipeline.config() },
            Rung::Swizzle128 => Rung::WarpSpecialized.config().with_swizzle(Swizzle::B128, 64),
            Rung::TmaEpilogue => Rung::Swizzle128.config().with_epilogue_tma(true),
            Rung::Multicast => Rung::TmaEpilogue.config().with_cluster(2),
            Rung::TwoConsumers => GemmConfig {
                consumers: 2,
                wg_m: 64,
                bn: 256,
                setmaxnreg: true,
                ..Rung::Multicast.config()
            },
            Rung::PersistentPingPong => Rung::TwoConsumers.config().with_persistent(true).with_pingpong(true),
        }
    }

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
