//! The GEMM kernel's switches, one field per ladder step, their validation (each error names the constraint) and
//! the defines that turn them into code. The switches are read once, in kernels/gemm.cu.

use crate::error::{config_err, Result};
use crate::kernel::problem::Shape;
use serde::{Deserialize, Serialize};

/// Shared-memory operand layout: the plain core-matrix layout or one of TMA's swizzles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    pub fn bytes(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }
}

/// Deliberate bugs, built from the real kernel by a switch, that the harness must catch and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// The producer waits on the empty barrier without flipping the phase: it waits for a release that
    /// can only follow its own load.
    WrongPhase,
    /// The producer arrives on the full barrier without announcing the bytes (no expect_tx).
    NoExpectTx,
    /// The CTA that owns tile 0 skips its epilogue.
    SkipEpilogueTile,
    /// Tile 0 is stored a whole matrix too far down, past the end of C.
    OobStore,
    /// The consumers skip the MMAs of the last k-block: every output is wrong by a partial sum.
    SkipKBlock,
    /// The direct epilogue stores every column of a tile, past N too: on a partial last tile column the extra
    /// columns land beyond the end of each row (what the check's padded rows must catch).
    NoColumnGuard,
}

impl Fault {
    pub fn define(self) -> &'static str {
        match self {
            Fault::WrongPhase => "FAULT_WRONG_PHASE",
            Fault::NoExpectTx => "FAULT_NO_EXPECT_TX",
            Fault::SkipEpilogueTile => "FAULT_SKIP_EPILOGUE",
            Fault::OobStore => "FAULT_OOB_STORE",
            Fault::SkipKBlock => "FAULT_SKIP_K_BLOCK",
            Fault::NoColumnGuard => "FAULT_NO_COLUMN_GUARD",
        }
    }
    pub const ALL: [Fault; 6] = [
        Fault::WrongPhase,
        Fault::NoExpectTx,
        Fault::SkipEpilogueTile,
        Fault::OobStore,
        Fault::SkipKBlock,
        Fault::NoColumnGuard,
    ];
}

/// Threadblock rasterization: how many tile rows are walked down M before stepping along N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Raster {
    /// Exactly this group; a group that does not divide the tile rows (a partial last row counted) is an error.
    Group(u32),
    /// The largest power of two up to this that divides the tile rows (so one config serves every shape; 1 when
    /// the tile rows are odd).
    UpTo(u32),
}

/// Bytes of an operand element: the ladder's fp16 and bf16.
pub const SIXTEEN_BIT: u32 = 2;
/// Bytes of an operand element: FP8 (e4m3), whose output is bf16.
pub const FP8: u32 = 1;

/// How an operand tile sits in shared memory, in the terms of a wgmma shared-memory descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OperandLayout {
    /// Leading-dimension byte offset: between core matrices adjacent in K (ignored by swizzled K-major layouts).
    pub lbo: u32,
    /// Stride-dimension byte offset: between adjacent 8-row groups.
    pub sbo: u32,
    /// Descriptor layout field: 0 = none, 1 = 128B, 2 = 64B, 3 = 32B (TMA's enum numbers them differently).
    pub mode: u32,
    /// Bytes the descriptor's start address advances per wgmma k-step (k16 in fp16 and bf16, k32 in FP8).
    pub k_step: u32,
}

/// A switch that picks one of two named ways (`epilogue=tma|direct`). The kernel's define is 0 for the first way and
/// 1 for the second; a record written while the switch was a flag (`epilogue_tma: true`) still reads.
macro_rules! two_ways {
    ($(#[$doc:meta])* $name:ident { $(#[$first_doc:meta])* $first:ident, $(#[$second_doc:meta])* $second:ident }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $(#[$first_doc])*
            #[default]
            $first,
            $(#[$second_doc])*
            $second,
        }

        impl $name {
            /// The define's value: 0 for the first way, 1 for the second.
            pub fn define(self) -> u32 {
                u32::from(self == $name::$second)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Stored {
                    Flag(bool),
                    Word(String),
                }
                match Stored::deserialize(d)? {
                    Stored::Flag(second) => Ok(if second { $name::$second } else { $name::$first }),
                    Stored::Word(w) if w.eq_ignore_ascii_case(stringify!($first)) => Ok($name::$first),
                    Stored::Word(w) if w.eq_ignore_ascii_case(stringify!($second)) => Ok($name::$second),
                    Stored::Word(w) => Err(serde::de::Error::custom(format!(
                        "`{w}` is neither {} nor {}",
                        stringify!($first).to_lowercase(),
                        stringify!($second).to_lowercase()
                    ))),
                }
            }
        }
    };
}

two_ways!(
    /// How a tile leaves the kernel (`epilogue`).
    Epilogue {
        /// Stores from registers.
        Direct,
        /// Accumulators staged in shared memory and written by TMA stores.
        Tma
    }
);

two_ways!(
    /// Which tile the CTAs of a 2-CTA cluster share (`multicast`).
    Multicast {
        /// They sit along M and each loads half of B.
        B,
        /// They sit along N and each loads half of A (cuBLAS's 1x2 clusters).
        A
    }
);

two_ways!(
    /// The scope at which every mbarrier wait acquires (`wait_scope`).
    WaitScope {
        /// The cluster's.
        Cluster,
        /// The CTA's, as CUTLASS's cluster barriers (H49).
        Cta
    }
);

two_ways!(
    /// The order a persistent kernel takes its tiles in (`tile_order`).
    TileOrder {
        /// The grouped raster computed on the device.
        Raster,
        /// A Hilbert curve over the tile grid, a table the host writes into the module.
        Hilbert
    }
);

/// Every compile-time switch of kernels/gemm.cu plus the launch-side choices (persistence, raster).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GemmConfig {
    pub stages: u32,
    #[serde(alias = "warp_specialized")]
    pub warpspec: bool,
    pub swizzle: Swizzle,
    pub tile_k: u32,
    #[serde(alias = "epilogue_tma")]
    pub epilogue: Epilogue,
    #[serde(alias = "cluster_m")]
    pub cluster: u32,
    pub consumers: u32,
    /// Rows of the output tile each consumer warpgroup owns (64 or 128: one or two m64 wgmma row blocks).
    pub wg_m: u32,
    pub bn: u32,
    pub setmaxnreg: bool,
    pub pingpong: bool,
    /// Grid = SM count with a tile loop, instead of one CTA per tile.
    pub persistent: bool,
    pub raster: Raster,
    #[serde(alias = "bounded_waits")]
    pub bounded: bool,
    #[serde(alias = "hang_timeout_ms")]
    pub timeout_ms: u32,
    /// Isolation: issue the TMA loads (false: the first lap loads, later laps reuse resident data).
    #[serde(alias = "mainloop_loads")]
    pub loads: bool,
    /// Isolation: issue the wgmma (false: loads only).
    #[serde(alias = "mainloop_mma")]
    pub mma: bool,
    /// Isolation (H56): the producers stream the operands through the ring alone, each stage released once its
    /// bytes have landed in every CTA of the cluster; the consumers wait for nothing and issue nothing.
    #[serde(default)]
    pub stream_only: bool,
    pub fault: Option<Fault>,
    /// Calibration: SM clock cycles each consumer warpgroup spins before each tile's epilogue (0 = none): a
    /// known slowdown for measuring the verdicts' error rates.
    #[serde(alias = "epilogue_spin_cycles")]
    pub spin: u32,
    /// Every k-block's MMAs waited for (wait_group 0) before its stage is released, instead of keeping one batch
    /// in flight: the ablation of what rung 2 onwards do.
    #[serde(alias = "mma_wait_all")]
    #[serde(default)]
    pub mma_wait: bool,
    /// The TMA epilogue's staging written with stmatrix (four 8x8 blocks per instruction) instead of 32-bit stores.
    #[serde(alias = "stmatrix_epilogue")]
    #[serde(default)]
    pub stmatrix: bool,
    /// Registers per consumer thread under setmaxnreg: 232 (the producer keeps 40) or 240 (the producer keeps 24).
    #[serde(default = "default_consumer_regs")]
    pub consumer_regs: u32,
    /// Persistent kernels: at most this many CTAs (0: one per SM), so a shape's tiles can divide evenly.
    #[serde(default)]
    pub ctas: u32,
    /// How tiles are shared between the persistent clusters: 0 whole tiles round robin; 1 every tile's k-blocks
    /// split evenly between the clusters (stream-K, partials added by each tile's owner); 2 whole tiles, then the
    /// last partial wave plus one full wave as in 1; 3 as 2, each cluster's share taken as its whole tiles, the
    /// head of its last tile (handed on), the tail of its first (the owner), so the clusters walk k in step (H95).
    #[serde(alias = "stream_k")]
    #[serde(default)]
    pub streamk: u32,
    /// Programmatic dependent launch: the launch lets this kernel start while the previous one in the stream
    /// finishes, and the kernel waits for it before touching global memory.
    #[serde(default)]
    pub pdl: bool,
    /// Swap-AB: the host computes C^T = B A^T, so the weights fill wgmma's 64-row side and the tokens are its
    /// n-side (`bn` = 8..256); the direct epilogue stores the tile transposed.
    #[serde(default)]
    pub swap_ab: bool,
    /// The weights' TMA loads carry an L2 evict-first policy.
    #[serde(default)]
    pub evict_first: bool,
    /// With `pdl`: the first ring lap's weights are loaded before waiting for the previous kernel.
    #[serde(default)]
    pub early_weights: bool,
    /// The consumers split the tile's columns (each owns every one of its `wg_m` rows and `bn / consumers` columns)
    /// instead of its rows.
    #[serde(default)]
    pub split_n: bool,
    /// The order a persistent kernel takes its tiles in.
    #[serde(default, alias = "hilbert_order")]
    pub tile_order: TileOrder,
    /// Swap-AB's direct epilogue transposes each 8x8 block of the accumulator fragment in registers (movmatrix)
    /// and stores 4-byte pairs of one C row, instead of single 2-byte elements (H39).
    #[serde(alias = "swap_store_pairs")]
    #[serde(default)]
    pub swap_store: bool,
    /// With a 2-CTA cluster, the tile its CTAs share: with A, they take adjacent tiles along N with the same rows
    /// (each loads half of A and multicasts it), as cuBLAS's 1x2 clusters; with B, adjacent along M.
    #[serde(default, alias = "multicast_a")]
    pub multicast: Multicast,
    /// The scope at which every mbarrier wait acquires (H49).
    #[serde(default, alias = "wait_cta_scope")]
    pub wait_scope: WaitScope,
    /// Every mbarrier wait passes a suspend-time hint (CUTLASS's 10 ms), so a waiting thread may sleep until the
    /// phase completes instead of polling (H51).
    #[serde(default)]
    pub wait_suspend: bool,
    /// The producer thread prefetches the TMA descriptors (`prefetch.tensormap`) before the barrier set-up and
    /// the dependency wait, instead of the first load fetching them on demand (H57).
    #[serde(default)]
    pub tmap_prefetch: bool,
    /// Ring positions (k-blocks) a consumer takes per batch of MMAs: one fence, commit, wait and release round per
    /// batch (H60). 1: a round per k-block.
    #[serde(default = "default_kb_per_wait")]
    pub kb_per_wait: u32,
    /// Consumers build their operands' descriptors once (warp-uniform) and advance them by constants, and count
    /// their ring stage and phase instead of dividing (H64).
    #[serde(default)]
    pub desc_advance: bool,
    /// Each work item takes its k-blocks from an offset spread evenly over the tiles, wrapping round, so the
    /// clusters' loads in flight sit at different columns of the weight rows (H83).
    #[serde(default)]
    pub k_rotate: bool,
    /// Ping-pong only: a consumer passes the turn to the other once its tile's last MMAs are issued, as CUTLASS's
    /// ordered barrier does, instead of once they are complete (H98).
    #[serde(default)]
    pub early_turn: bool,
    /// TMA epilogue: 64x64 staging chunks a consumer owns, 2 (double-buffered) or 4 (a 64x256 half-tile staged at
    /// once, so its stores queue without waiting on each other; H99).
    #[serde(default = "default_epi_buffers")]
    pub epi_buffers: u32,
    /// Instrumentation: CTA 0's last thread reads its SM's cycle counter and the global nanosecond timer at its
    /// start and end into the module's `clock_probe`: the SM clock a launch actually ran at (`sustain`).
    #[serde(default)]
    pub clock_probe: bool,
    /// Instrumentation: each CTA's first thread writes the SM it runs on into the module's `place_probe`, read
    /// after every round (H142: where a grid of under one wave lands).
    #[serde(default)]
    pub place_probe: bool,
    /// FP8 only: every this many k-blocks the wgmma partial sums are added into fp32 accumulators held apart
    /// (two-level accumulation: the tensor core's own FP8 accumulation keeps fewer bits); 0: never, one set of
    /// accumulators. Block scales need 1 (their scales change every k-block of 128).
    #[serde(default)]
    pub promote: u32,
    /// FP8 block scales only: the producer copies A's scales of each k-block's tile rows into shared memory with
    /// the stage (as DeepGEMM), instead of every consumer thread reading its rows' scales from global memory.
    #[serde(default)]
    pub scale_loads: bool,
    /// FP8 block scales only: each k-block's scales are loaded one k-block ahead (B's, and A's unless the stage
    /// carries them), so each load has a whole k-block's loop to land in (H136).
    #[serde(default)]
    pub scale_prefetch: bool,
    /// FP8 block scales only: a warpgroup's columns lie in one 128-column scale block (its width divides 128), so
    /// B's scale is one value a k-block and the promotion one product a row (H138).
    #[serde(default)]
    pub one_b_block: bool,
    /// FP8 with `promote = 1`: two sets of partial sums, k-block kb's MMAs accumulating into one while k-block
    /// kb-1's is promoted, so the promotion runs under the tensor core's work (H156). Three sets of accumulators.
    #[serde(default)]
    pub promote_overlap: bool,
    /// FP8 with `promote >= 2` and two consumers on one tile: the second consumer's promotion windows start half a
    /// window later, so that one consumer drains and promotes while the other's MMAs run (H163).
    #[serde(default)]
    pub promote_stagger: bool,
    /// FP8 with `promote`: the promoting loop as a loop over windows, each an inner loop over its k-blocks but the
    /// last, which keeps a batch of MMAs in flight where the one loop waited for every MMA at each k-block (H165).
    #[serde(default)]
    pub promote_windows: bool,
}

fn default_consumer_regs() -> u32 {
    232
}

fn default_kb_per_wait() -> u32 {
    1
}

fn default_epi_buffers() -> u32 {
    2
}

/// Largest dynamic shared memory a Hopper CTA may opt into (227 KB); the device's own figure is checked too.
pub const HOPPER_SMEM_OPTIN: u32 = 232_448;

impl GemmConfig {
    /// Rows of the tile a CTA computes at once (one consumer's rows under ping-pong; every consumer's under
    /// `split_n`).
    pub fn bm(&self) -> u32 {
        if self.pingpong || self.split_n {
            self.wg_m
        } else {
            self.wg_m * self.consumers
        }
    }
    /// CTAs of a cluster along the kernel's M (sharing the B tile) and along its N (sharing the A tile).
    pub fn cluster_along_m(&self) -> u32 {
        if self.multicast == Multicast::A {
            1
        } else {
            self.cluster
        }
    }
    pub fn cluster_along_n(&self) -> u32 {
        if self.multicast == Multicast::A {
            self.cluster
        } else {
            1
        }
    }
    /// Rows of A and of B each CTA loads per k-block: a shared tile is split between the cluster's CTAs.
    pub fn a_box_rows(&self) -> u32 {
        self.bm() / self.cluster_along_n()
    }
    pub fn b_box_rows(&self) -> u32 {
        self.bn / self.cluster_along_m()
    }
    pub fn threads(&self) -> u32 {
        128 * (self.consumers + u32::from(self.warpspec))
    }
    pub fn stage_bytes(&self) -> u32 {
        self.stage_bytes_of(SIXTEEN_BIT)
    }
    /// A stage's bytes for operands of `operand_bytes` an element (`SIXTEEN_BIT` or `FP8`).
    pub fn stage_bytes_of(&self, operand_bytes: u32) -> u32 {
        (self.bm() + self.bn) * self.tile_k * operand_bytes
    }
    pub fn epilogue_bytes(&self) -> u32 {
        if self.epilogue == Epilogue::Tma {
            self.consumers * self.epi_buffers * 64 * 64 * 2
        } else {
            0
        }
    }
    /// FP8 block scales carried by the stages (`scale_loads`): BM fp32 scales of A a stage, beside the ring.
    pub fn scale_bytes(&self) -> u32 {
        if self.scale_loads {
            self.stages * self.bm() * 4
        } else {
            0
        }
    }
    /// Dynamic shared memory: the stage ring, epilogue staging, barriers, and 1 KB of alignment slack.
    pub fn smem_bytes(&self) -> u32 {
        self.smem_bytes_of(SIXTEEN_BIT)
    }
    /// `smem_bytes` for operands of `operand_bytes` an element (the output, and so the epilogue, stays 16-bit).
    pub fn smem_bytes_of(&self, operand_bytes: u32) -> u32 {
        1024 + self.stages * self.stage_bytes_of(operand_bytes)
            + self.epilogue_bytes()
            + self.scale_bytes()
            + 8 * (2 * self.stages + 2)
    }
    /// The descriptor fields for this config's operand layout. Swizzled: rows of one swizzle span, 8-row atoms
    /// (SBO = 8 spans), 32 bytes per k16 step. Unswizzled: the core-matrix layout the 4-D tensor map writes
    /// (tma.rs): K-adjacent core matrices 128 B apart, 8-row groups tile_k * 16 B apart, two core matrices per k16.
    pub fn operand_layout(&self) -> OperandLayout {
        self.operand_layout_of(SIXTEEN_BIT)
    }
    /// `operand_layout` for operands of `operand_bytes` an element: the same bytes, so only the unswizzled 8-row
    /// group's stride (a k-block's row bytes, times 8) depends on it. A k-step (k16 or FP8's k32) is 32 bytes of a
    /// row either way.
    pub fn operand_layout_of(&self, operand_bytes: u32) -> OperandLayout {
        match self.swizzle {
            Swizzle::None => OperandLayout {
                lbo: 128,
                sbo: self.tile_k * operand_bytes * 8,
                mode: 0,
                k_step: 256,
            },
            s => OperandLayout {
                lbo: 16,
                sbo: 8 * s.bytes(),
                mode: match s {
                    Swizzle::B128 => 1,
                    Swizzle::B64 => 2,
                    _ => 3,
                },
                k_step: 32,
            },
        }
    }

    /// TMA boxes per operand per stage: a swizzled k-block wider than one swizzle span is that many spans side
    /// by side (each box its own swizzle atoms); unswizzled, one.
    pub fn k_boxes(&self) -> u32 {
        self.k_boxes_of(SIXTEEN_BIT)
    }
    /// `k_boxes` for operands of `operand_bytes` an element.
    pub fn k_boxes_of(&self, operand_bytes: u32) -> u32 {
        match self.swizzle.bytes() {
            0 => 1,
            span => (self.tile_k * operand_bytes / span).max(1),
        }
    }

    /// `validate` for operands of `dtype`: `validate_fp8` for FP8.
    pub fn validate_for(&self, dtype: crate::kernel::problem::DType) -> Result<()> {
        match dtype.scales() {
            Some(scales) => self.validate_fp8(scales),
            None => self.validate(),
        }
    }

    /// Checks that this configuration can take FP8 (e4m3) operands dequantized by `scales`: `validate` at one byte
    /// an operand element (a k-block of whole swizzle spans, at most 4, its stages in shared memory), a k-block of
    /// whole FP8 k-steps (32 elements: 32 bytes of a row, or two core matrices unswizzled), and what promotion and
    /// block scales need (`validate_promotion`). Every layout takes FP8: in bytes a k-block of FP8 is laid out as one
    /// of 16-bit elements half as deep.
    pub fn validate_fp8(&self, scales: crate::kernel::problem::Scales) -> Result<()> {
        // A 16-bit rung's tile_k is half what its layout needs in FP8: say what to write.
        let need = self.swizzle.bytes().max(32);
        if !self.tile_k.is_multiple_of(need) {
            return config_err(format!(
                "FP8 operands need tile_k a multiple of {need} ({}), got {}: a k-block of FP8 holds the bytes of a 16-bit one twice as deep, so write `tile_k={}` after the rung and any swizzle switch, which sets tile_k for 16-bit elements (`10:tile_k=128` for rung 10)",
                if self.swizzle == Swizzle::None {
                    "one wgmma k-step of one-byte elements".to_string()
                } else {
                    format!("one {need}-byte swizzle span of one-byte elements")
                },
                self.tile_k,
                (2 * self.tile_k).next_multiple_of(need)
            ));
        }
        self.validate_of(FP8)?;
        self.validate_promotion(scales)
    }

    /// Two-level accumulation (`promote`) and block scales: the promotion is built into the warp-specialized
    /// consumer loop of one k-block a round; a second set of accumulators must fit beside the first; block scales
    /// promote every k-block of exactly one scale block (128), in the order k runs, on the problem's own A and B.
    fn validate_promotion(&self, scales: crate::kernel::problem::Scales) -> Result<()> {
        use crate::kernel::problem::Scales;
        if scales == Scales::Block {
            if self.promote != 1 {
                return config_err(format!(
                    "block scales change every k-block of 128: they are applied as each k-block's partial sums are promoted, so e4m3-block needs promote=1 (got promote={}; `10:tile_k=128,bn=128,promote=1`)",
                    self.promote
                ));
            }
            if self.tile_k != 128 {
                return config_err(format!(
                    "block scales cover 128 k-elements: e4m3-block needs tile_k=128, one scale block a k-block (got {})",
                    self.tile_k
                ));
            }
            if self.swap_ab || self.k_rotate {
                return config_err("block scales are read by the problem's A rows and B blocks in k order: e4m3-block takes neither swap_ab nor k_rotate");
            }
        }
        if self.scale_prefetch && scales != Scales::Block {
            return config_err(
                "scale_prefetch=1 loads FP8 block scales ahead: it needs the dtype e4m3-block",
            );
        }
        if self.one_b_block {
            if scales != Scales::Block {
                return config_err(
                    "one_b_block=1 reads one FP8 block scale of B a warpgroup: it needs the dtype e4m3-block",
                );
            }
            if !128u32.is_multiple_of(self.wg_n()) {
                return config_err(format!(
                    "one_b_block=1 needs a warpgroup's columns inside one 128-column scale block: its width ({}) must divide 128",
                    self.wg_n()
                ));
            }
        }
        if self.scale_loads {
            if scales != Scales::Block {
                return config_err(
                    "scale_loads=stage carries FP8 block scales: it needs the dtype e4m3-block",
                );
            }
            if self.multicast == Multicast::A
                || self.early_weights
                || !self.loads
                || self.stream_only
            {
                return config_err("scale_loads=stage copies each CTA's own A scales with every stage it loads: not with multicast=a, early_weights or the load isolations (loads=0, stream_only=1)");
            }
        }
        // Measured with ptxas (NVRTC 13.0) at bn=128: per tensor the third set spilled 372 bytes and serialized every
        // wgmma; under block scales with a B scale per eight columns it spilled 24; with one_b_block=1, none (H156).
        if self.promote_overlap
            && (scales != Scales::Block
                || !self.one_b_block
                || self.promote != 1
                || self.scale_prefetch
                || self.fault == Some(Fault::SkipKBlock))
        {
            return config_err(format!(
                "promote_overlap=1 promotes each k-block's block-scaled partial sums under the next one's MMAs: it needs the dtype e4m3-block, promote=1, one_b_block=1 and scale_prefetch=0, and takes no skipped k-block fault (got e4m3{}, promote={}, one_b_block={}, scale_prefetch={}; elsewhere a third set of accumulators spills)",
                scales.suffix(),
                self.promote,
                u32::from(self.one_b_block),
                u32::from(self.scale_prefetch)
            ));
        }
        if self.promote_stagger
            && (self.promote < 2 || self.consumers != 2 || self.pingpong || self.promote_overlap)
        {
            return config_err(format!(
                "promote_stagger=1 shifts the second of two consumers' promotion windows by half a window: it needs FP8 with promote >= 2, consumers=2 on one tile (pingpong=0) and promote_overlap=0 (got promote={}, consumers={}, pingpong={}, promote_overlap={})",
                self.promote,
                self.consumers,
                u32::from(self.pingpong),
                u32::from(self.promote_overlap)
            ));
        }
        if self.promote_windows && (self.promote == 0 || self.promote_overlap) {
            return config_err(format!(
                "promote_windows=1 reshapes the promoting loop: it needs FP8 with promote >= 1 and promote_overlap=0 (got promote={}, promote_overlap={})",
                self.promote,
                u32::from(self.promote_overlap)
            ));
        }
        if self.promote == 0 {
            return Ok(());
        }
        if self.promote > 64 {
            return config_err(format!(
                "promote is a number of k-blocks from 1 to 64 (0: off), got {}",
                self.promote
            ));
        }
        if !self.warpspec || self.kb_per_wait != 1 || self.desc_advance {
            return config_err("promote is built into the warp-specialized consumer loop of one k-block a round: it needs warpspec=1, kb_per_wait=1 and desc_advance=0");
        }
        // Measured with ptxas (NVRTC 13.0): two sets of 64 fit rung 10's 168 registers without a spill; two of 96
        // (bn=192) spilled 264 bytes.
        let cap = 128;
        if self.promote_overlap && 3 * self.accumulator_registers() > 3 * cap / 2 {
            return config_err(format!(
                "promote_overlap=1 holds three sets of accumulators: a {}x{} tile per warpgroup needs 3 x {} fp32 registers per thread, at most {} fit beside the rest; a 64x128 tile per warpgroup fits (`bn=128`)",
                self.wg_m,
                self.wg_n(),
                self.accumulator_registers(),
                3 * cap / 2
            ));
        }
        if 2 * self.accumulator_registers() > cap {
            return config_err(format!(
                "promote holds two sets of accumulators: a {}x{} tile per warpgroup needs 2 x {} fp32 registers per thread, at most {cap} fit beside the rest (at bn=192 ptxas spilled); a 64x128 tile per warpgroup fits (`bn=128`)",
                self.wg_m,
                self.wg_n(),
                self.accumulator_registers()
            ));
        }
        Ok(())
    }

    /// Columns of the tile each consumer owns: all of them, or its share under `split_n`.
    pub fn wg_n(&self) -> u32 {
        if self.split_n {
            self.bn / self.consumers
        } else {
            self.bn
        }
    }

    /// fp32 accumulator registers per consumer thread.
    pub fn accumulator_registers(&self) -> u32 {
        (self.wg_m / 64) * (self.wg_n() / 2)
    }

    /// Checks that the switches make a kernel that can exist, independent of the problem (16-bit operands).
    pub fn validate(&self) -> Result<()> {
        self.validate_of(SIXTEEN_BIT)
    }

    /// `validate` for operands of `operand_bytes` an element.
    fn validate_of(&self, operand_bytes: u32) -> Result<()> {
        if operand_bytes != FP8 && self.promote != 0 {
            return config_err(format!(
                "promote applies to FP8's accumulation only (a dtype e4m3, e4m3-row or e4m3-block), got promote={} with 16-bit operands",
                self.promote
            ));
        }
        if operand_bytes != FP8 && self.scale_loads {
            return config_err(
                "scale_loads=stage carries FP8 block scales: it needs the dtype e4m3-block",
            );
        }
        if operand_bytes != FP8 && self.promote_windows {
            return config_err(
                "promote_windows=1 reshapes FP8's promoting loop: it needs a dtype e4m3 with promote >= 1",
            );
        }
        if operand_bytes != FP8 && self.promote_stagger {
            return config_err(
                "promote_stagger=1 staggers FP8 promotion windows: it needs a dtype e4m3 or e4m3-row with promote >= 2",
            );
        }
        if operand_bytes != FP8 && self.promote_overlap {
            return config_err(
                "promote_overlap=1 promotes FP8 block-scaled partial sums: it needs the dtype e4m3-block",
            );
        }
        if operand_bytes != FP8 && self.scale_prefetch {
            return config_err(
                "scale_prefetch=1 loads FP8 block scales ahead: it needs the dtype e4m3-block",
            );
        }
        if operand_bytes != FP8 && self.one_b_block {
            return config_err(
                "one_b_block=1 reads one FP8 block scale of B a warpgroup: it needs the dtype e4m3-block",
            );
        }
        if self.stages == 0 || self.stages > 16 {
            return config_err(format!("stages must be 1..=16, got {}", self.stages));
        }
        if self.tile_k < 16 || !self.tile_k.is_multiple_of(16) {
            return config_err(format!(
                "tile_k must be a multiple of 16 (one wgmma k-step), got {}",
                self.tile_k
            ));
        }
        let span = self.swizzle.bytes();
        if span != 0 && !(self.tile_k * operand_bytes).is_multiple_of(span) {
            return config_err(format!(
                "a {span}B swizzle needs tile_k to be a multiple of {} (one swizzle span of {}-bit values per row; a stage holds one box per span), got tile_k = {}",
                span / operand_bytes,
                8 * operand_bytes,
                self.tile_k
            ));
        }
        if span != 0 && self.k_boxes_of(operand_bytes) > 4 {
            return config_err(format!(
                "tile_k = {} is {} boxes of a {span}B swizzle span per stage: at most 4",
                self.tile_k,
                self.k_boxes_of(operand_bytes)
            ));
        }
        if self.bn == 0 || self.bn > 256 || !self.bn.is_multiple_of(8) {
            return config_err(format!(
                "tile width bn must be a wgmma n-size: a multiple of 8 from 8 to 256, got {}",
                self.bn
            ));
        }
        if self.epilogue == Epilogue::Tma && !matches!(self.bn, 128 | 192 | 256) {
            return config_err(format!(
                "a tile {} wide needs epilogue=direct: the TMA epilogue stores 64x64 chunks of 128-, 192- or 256-wide tiles",
                self.bn
            ));
        }
        // Before the cluster divides the tiles (a cluster of 0 divided by zero here: found by fuzzing the specs).
        if !matches!(self.cluster, 1 | 2 | 4) {
            return config_err(format!(
                "cluster size must be 1, 2 or 4 CTAs along M, got {}",
                self.cluster
            ));
        }
        if !self.b_box_rows().is_multiple_of(8) {
            return config_err(format!(
                "each CTA of a {}-CTA cluster loads bn / {} = {} rows of B: it must be a multiple of 8 (one swizzle atom)",
                self.cluster,
                self.cluster,
                self.b_box_rows()
            ));
        }
        if !matches!(self.wg_m, 64 | 128) {
            return config_err(format!(
                "rows per consumer warpgroup wg_m must be 64 or 128, got {}",
                self.wg_m
            ));
        }
        if !matches!(self.consumers, 1 | 2) {
            return config_err(format!(
                "consumers must be 1 or 2 warpgroups, got {}",
                self.consumers
            ));
        }
        // Under setmaxnreg a consumer thread gets 232 or 240 registers (cuBLAS's ping-pong 128x176 tiles hold 176
        // accumulators); otherwise 65536 / 384 leaves 168. ptxas's report says whether the rest still fits.
        let accumulator_cap = if self.setmaxnreg { 192 } else { 128 };
        if self.accumulator_registers() > accumulator_cap {
            return config_err(format!(
                "a {}x{} tile per warpgroup needs {} fp32 accumulator registers per thread; at most {accumulator_cap} fit beside the rest{}",
                self.wg_m,
                self.bn,
                self.accumulator_registers(),
                if self.setmaxnreg { "" } else { " without setmaxnreg" }
            ));
        }
        if !self.warpspec {
            if self.consumers != 1 || self.persistent || self.cluster != 1 {
                return config_err(
                    "without warp specialization the kernel has one warpgroup, one tile per CTA and no cluster",
                );
            }
            if !self.loads || !self.mma || self.stream_only {
                return config_err("the isolation switches (loads only, MMA only, stream only) need the warp-specialized kernel");
            }
            if matches!(self.fault, Some(Fault::WrongPhase | Fault::SkipKBlock)) {
                return config_err("the wrong-phase and skipped-k-block faults are injected in the warp-specialized kernel");
            }
        }
        if self.pingpong && (self.consumers != 2 || !self.persistent) {
            return config_err("ping-pong needs two consumer warpgroups and a persistent kernel");
        }
        if self.setmaxnreg && (self.consumers != 2 || !self.warpspec) {
            return config_err(
                "setmaxnreg rebalancing needs a producer and two consumer warpgroups (384 threads)",
            );
        }
        if matches!(self.fault, Some(Fault::OobStore | Fault::NoColumnGuard))
            && self.epilogue == Epilogue::Tma
        {
            return config_err("the out-of-bounds store faults need the direct epilogue (TMA stores clip at the edge)");
        }
        if self.bounded && self.timeout_ms == 0 {
            return config_err("a bounded wait needs a positive hang timeout");
        }
        if self.spin > 0 && !self.warpspec {
            return config_err(
                "the epilogue spin (calibration) is built into the warp-specialized kernel",
            );
        }
        if self.stmatrix && self.epilogue != Epilogue::Tma {
            return config_err(
                "the stmatrix epilogue writes the TMA epilogue's staging: it needs epilogue=tma",
            );
        }
        if self.kb_per_wait != 1 {
            // A consumer holds the batch in flight and waits for the next: both must fit the ring at once.
            let held = if self.mma_wait { 1 } else { 2 };
            if !matches!(self.kb_per_wait, 2..=4) || !self.warpspec {
                return config_err(format!(
                    "kb_per_wait must be 1, or 2 to 4 with warp specialization, got {}",
                    self.kb_per_wait
                ));
            }
            if self.stages < held * self.kb_per_wait {
                return config_err(format!(
                    "kb_per_wait = {} needs at least {} stages (the batch in flight and the next), got {}",
                    self.kb_per_wait,
                    held * self.kb_per_wait,
                    self.stages
                ));
            }
        }
        if self.desc_advance && (!self.warpspec || self.kb_per_wait != 1) {
            return config_err(
                "desc_advance is built into the warp-specialized consumer loop of one k-block a round (kb_per_wait=1)",
            );
        }
        if !matches!(self.epi_buffers, 2 | 4)
            || (self.epi_buffers != 2 && self.epilogue != Epilogue::Tma)
        {
            return config_err(format!(
                "epi_buffers is the TMA epilogue's staging chunks a consumer: 2 (default) or 4, with epilogue=tma; got {}",
                self.epi_buffers
            ));
        }
        if self.early_turn && (!self.pingpong || self.kb_per_wait != 1) {
            return config_err(
                "early_turn passes ping-pong's turn after the last MMAs are issued: it needs pingpong=1 and kb_per_wait=1",
            );
        }
        if self.k_rotate && !self.warpspec {
            return config_err("k_rotate orders the producer's k-blocks: it needs warp specialization (rung 3 and up)");
        }
        if !matches!(self.consumer_regs, 232 | 240) {
            return config_err(format!(
                "consumer_regs must be 232 (producer 40) or 240 (producer 24), got {}",
                self.consumer_regs
            ));
        }
        if self.ctas > 0 && (!self.persistent || !self.ctas.is_multiple_of(self.cluster)) {
            return config_err(format!(
                "ctas = {} caps a persistent grid and must be a multiple of the cluster size {}",
                self.ctas, self.cluster
            ));
        }
        if self.streamk > 3 {
            return config_err(format!(
                "streamk must be 0 (whole tiles), 1 (stream-K), 2 (whole tiles, stream-K on the last waves) or 3 (as 2, every cluster walking k in step), got {}",
                self.streamk
            ));
        }
        if self.streamk > 0 && (!self.warpspec || !self.persistent || self.pingpong) {
            return config_err(
                "stream-K shares tiles between persistent CTAs: it needs warp specialization, a persistent grid and no ping-pong",
            );
        }
        if self.swap_ab {
            if self.epilogue == Epilogue::Tma {
                return config_err(
                    "swap_ab stores the tile transposed from registers: it needs epilogue=direct",
                );
            }
            if matches!(self.fault, Some(Fault::OobStore | Fault::NoColumnGuard)) {
                return config_err("the out-of-bounds store faults move or unbound the unswapped tile: not with swap_ab");
            }
        }
        if self.evict_first && self.swizzle == Swizzle::None {
            return config_err(
                "evict_first is built on the swizzled layouts' 2-D loads: it needs a swizzle",
            );
        }
        if self.stream_only && (!self.loads || self.streamk > 0 || self.pingpong) {
            return config_err(
                "stream_only streams every k-block of whole tiles through the ring: it needs loads on, no stream-K and no ping-pong",
            );
        }
        if self.early_weights
            && (!self.pdl || !self.warpspec || !self.loads || !self.mma || self.fault.is_some())
        {
            return config_err(
                "early_weights loads weights before the dependency wait of pdl=1: it needs pdl, warp specialization, both isolation switches on and no fault",
            );
        }
        if self.split_n
            && (self.consumers != 2
                || self.pingpong
                || self.epilogue == Epilogue::Tma
                || !self.warpspec
                || !self.wg_n().is_multiple_of(8))
        {
            return config_err(format!(
                "split_n gives each of two consumers half the tile's columns (a multiple of 8): it needs consumers=2, no ping-pong, epilogue=direct and bn a multiple of 16 (bn = {}, consumers = {})",
                self.bn, self.consumers
            ));
        }
        if self.swap_store && (!self.swap_ab || self.epilogue == Epilogue::Tma) {
            return config_err(
                "swap_store=pairs transposes swap-AB's direct epilogue in registers: it needs swap_ab=1 and epilogue=direct",
            );
        }
        if self.multicast == Multicast::A
            && (self.cluster != 2
                || self.swizzle == Swizzle::None
                || self.streamk != 0
                || self.early_weights
                || self.pingpong)
        {
            return config_err(
                "multicast=a shares the A tile between the two CTAs of a cluster along N: it needs cluster=2, a swizzled layout, whole tiles (streamk=0), no early_weights and no ping-pong",
            );
        }
        if let Raster::Group(0) | Raster::UpTo(0) = self.raster {
            return config_err("raster group must be at least 1");
        }
        if self.tile_order == TileOrder::Hilbert && (!self.persistent || !self.warpspec) {
            return config_err(
                "tile_order=hilbert orders a persistent kernel's tile loop: it needs persistent=1 and warpspec=1",
            );
        }
        let smem = self.smem_bytes_of(operand_bytes);
        if smem > HOPPER_SMEM_OPTIN {
            return config_err(format!(
                "shared memory over the limit: {} stages x {} B + {} B epilogue staging = {} B, more than the {} B a Hopper CTA can opt into",
                self.stages,
                self.stage_bytes_of(operand_bytes),
                self.epilogue_bytes(),
                smem,
                HOPPER_SMEM_OPTIN
            ));
        }
        Ok(())
    }

    /// Checks that this kernel can run this problem, before anything is allocated or launched. Any M works, and
    /// any N and K that TMA can address: partial tiles are zero-filled on load and bounded on store.
    pub fn validate_shape(&self, shape: &Shape) -> Result<()> {
        self.validate_shape_for(shape, crate::kernel::problem::DType::F16)
    }

    /// `validate_shape` with operands of `dtype` (FP8 rows are K bytes: K a multiple of 16).
    pub fn validate_shape_for(
        &self,
        shape: &Shape,
        dtype: crate::kernel::problem::DType,
    ) -> Result<()> {
        self.validate_for(dtype)?;
        if dtype.is_fp8() && !shape.k.is_multiple_of(16) {
            return config_err(format!(
                "{}: TMA needs 16-byte aligned row strides: FP8's K must be a multiple of 16 (K = {})",
                shape.name, shape.k
            ));
        }
        if self.scale_loads && !shape.m.is_multiple_of(4) {
            return config_err(format!(
                "{}: scale_loads=stage copies A's scales of a k-block from row M x k-block on, which a bulk copy reads only 16-byte aligned: M must be a multiple of 4 (M = {})",
                shape.name, shape.m
            ));
        }
        if shape.m == 0 || shape.n == 0 || shape.k == 0 {
            return config_err(format!(
                "{}: M, N and K must each be at least 1 (M = {}, N = {}, K = {})",
                shape.name, shape.m, shape.n, shape.k
            ));
        }
        if self.tile_order == TileOrder::Hilbert {
            crate::kernel::tile_order::check_fits(self.tile_rows(shape), self.tile_cols(shape))?;
        }
        // TMA: global strides are multiples of 16 bytes.
        if !shape.k.is_multiple_of(8) || !shape.n.is_multiple_of(8) {
            return config_err(format!(
                "{}: TMA needs 16-byte aligned row strides: K and N must be multiples of 8 (K = {}, N = {})",
                shape.name, shape.k, shape.n
            ));
        }
        // The kernel's coordinates are 32-bit: the last tile's far edge (M, N and K rounded up to whole tiles)
        // and the tile count must fit.
        let shape = &self.kernel_shape(shape);
        let rows_per_tile = (self.bm() * self.cluster_along_m()) as usize;
        let cols_per_tile = (self.bn * self.cluster_along_n()) as usize;
        let reach = [
            shape.m.div_ceil(rows_per_tile) * rows_per_tile,
            shape.n.div_ceil(cols_per_tile) * cols_per_tile,
            shape.k.div_ceil(self.tile_k as usize) * self.tile_k as usize,
        ];
        let tiles = shape.m.div_ceil(rows_per_tile) * shape.n.div_ceil(cols_per_tile);
        if reach.iter().any(|&d| d > i32::MAX as usize) || tiles > i32::MAX as usize {
            return config_err(format!(
                "{}: dimensions must fit in 32-bit coordinates once rounded up to whole tiles (M = {}, N = {}, K = {})",
                shape.name, shape.m, shape.n, shape.k
            ));
        }
        self.raster_group(shape)?;
        Ok(())
    }

    /// The problem the kernel computes: this one, or with swap-AB its transpose (M and N exchanged: the kernel's
    /// rows are the weights' rows, its columns the tokens).
    pub fn kernel_shape(&self, shape: &Shape) -> Shape {
        if self.swap_ab {
            Shape::new(&shape.name, shape.n, shape.m, shape.k)
        } else {
            shape.clone()
        }
    }

    /// Tile rows along the kernel's M in units the scheduler walks (a cluster's rows), a partial last one included.
    pub fn tile_rows(&self, shape: &Shape) -> u32 {
        let shape = &self.kernel_shape(shape);
        shape
            .m
            .div_ceil((self.bm() * self.cluster_along_m()) as usize) as u32
    }
    /// Tile columns along the kernel's N in units the scheduler walks (a cluster's columns with multicast=a), a
    /// partial last one included.
    pub fn tile_cols(&self, shape: &Shape) -> u32 {
        let shape = &self.kernel_shape(shape);
        shape
            .n
            .div_ceil((self.bn * self.cluster_along_n()) as usize) as u32
    }
    /// k-blocks along K, a partial last one included (its tail is loaded as zeros).
    pub fn k_blocks(&self, shape: &Shape) -> u32 {
        shape.k.div_ceil(self.tile_k as usize) as u32
    }

    /// The raster group this shape runs with, or an error naming why it cannot.
    pub fn raster_group(&self, shape: &Shape) -> Result<u32> {
        let rows = self.tile_rows(shape);
        match self.raster {
            Raster::Group(g) if !rows.is_multiple_of(g) => config_err(format!(
                "{}: raster group {g} does not divide the {rows} tile rows of M = {} (tile {} rows, a partial last one counted): choose a divisor of {rows}, or upto{g}",
                shape.name,
                self.kernel_shape(shape).m,
                self.bm() * self.cluster_along_m()
            )),
            Raster::Group(g) => Ok(g),
            Raster::UpTo(g) => {
                let mut group = 1u32 << (31 - g.leading_zeros());
                while group > 1 && !rows.is_multiple_of(group) {
                    group /= 2;
                }
                Ok(group.max(1))
            }
        }
    }

    /// Launch grid (CTAs): one per cluster tile times the cluster, or the SM count (rounded to whole clusters; with
    /// stream-K over every tile, the SM count even when there are fewer tiles).
    pub fn grid(&self, shape: &Shape, sm_count: u32) -> u32 {
        let ctas = self.tile_rows(shape) * self.tile_cols(shape) * self.cluster;
        if self.persistent {
            let sms = if self.ctas > 0 {
                // Up to 4 CTAs per SM: with small stages several can be resident (stream-K caps the grid at what
                // is, gpu::launch::max_active_clusters).
                self.ctas.min(4 * sm_count)
            } else {
                sm_count
            };
            let fit = (sms / self.cluster) * self.cluster;
            if self.streamk == 1 {
                // Stream-K shares k-blocks, not tiles: every SM gets a share however few the tiles.
                return fit.max(self.cluster);
            }
            ctas.min(fit.max(self.cluster))
        } else {
            ctas
        }
    }

    /// Bytes of the stream-K workspace: one slot of fp32 partial accumulators per CTA and consumer warpgroup
    /// (each cluster hands on at most one partial per launch), and one flag per slot.
    pub fn stream_k_workspace(&self, grid: u32) -> (usize, usize) {
        if self.streamk == 0 {
            return (0, 0);
        }
        let slots = (grid * self.consumers) as usize;
        let floats_per_slot = 128 * self.accumulator_registers() as usize;
        (slots * floats_per_slot * 4, slots * 4)
    }

    // ---- one-switch modifiers, so an ablation reads as "rung N with X changed"
    pub fn with_stages(mut self, stages: u32) -> Self {
        self.stages = stages;
        self
    }
    pub fn with_swizzle(mut self, swizzle: Swizzle, tile_k: u32) -> Self {
        self.swizzle = swizzle;
        self.tile_k = tile_k;
        self
    }
    pub fn with_tile_k(mut self, tile_k: u32) -> Self {
        self.tile_k = tile_k;
        self
    }
    pub fn with_cluster(mut self, cluster: u32) -> Self {
        self.cluster = cluster;
        self
    }
    /// Rows per consumer warpgroup and tile width: `with_tile_shape(128, 128)` on two consumers is a 256x128 tile.
    pub fn with_tile_shape(mut self, wg_m: u32, bn: u32) -> Self {
        self.wg_m = wg_m;
        self.bn = bn;
        self
    }
    pub fn with_pingpong(mut self, on: bool) -> Self {
        self.pingpong = on;
        self
    }
    pub fn with_persistent(mut self, on: bool) -> Self {
        self.persistent = on;
        self
    }
    pub fn with_epilogue(mut self, epilogue: Epilogue) -> Self {
        self.epilogue = epilogue;
        self
    }
    pub fn with_raster(mut self, raster: Raster) -> Self {
        self.raster = raster;
        self
    }
    pub fn with_bounded(mut self, on: bool) -> Self {
        self.bounded = on;
        self
    }
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }
    /// A known slowdown: `cycles` of spinning before each tile's epilogue (calibration).
    pub fn with_spin(mut self, cycles: u32) -> Self {
        self.spin = cycles;
        self
    }
    pub fn with_timeout_ms(mut self, ms: u32) -> Self {
        self.timeout_ms = ms;
        self
    }
    /// One consumer warpgroup (and so no ping-pong and no register rebalancing).
    pub fn with_one_consumer(mut self) -> Self {
        self.consumers = 1;
        self.pingpong = false;
        self.setmaxnreg = false;
        self
    }
    pub fn loads_only(mut self) -> Self {
        self.mma = false;
        self
    }
    pub fn mma_only(mut self) -> Self {
        self.loads = false;
        self
    }
    /// No loads and no MMAs: launch, barriers and the epilogue of a zero accumulator.
    pub fn epilogue_only(mut self) -> Self {
        self.loads = false;
        self.mma = false;
        self
    }
    /// True if the variant computes C (isolation variants do not, and get no correctness check).
    pub fn computes_gemm(&self) -> bool {
        self.loads && self.mma && !self.stream_only && self.fault.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ladder::Rung;

    #[test]
    fn descriptor_fields_match_the_layouts_verified_on_the_h200() {
        // platform-facts.md: core-matrix layout with K slices side by side per 8-row group: LBO 128, SBO 256 (k16).
        let plain = Rung::KLoop.config().operand_layout();
        assert_eq!(
            plain,
            OperandLayout {
                lbo: 128,
                sbo: 256,
                mode: 0,
                k_step: 256
            }
        );
        // 128B swizzle: SBO 1024, descriptor mode 1, 32 bytes per k16 step along the 128-byte row.
        let sw = Rung::Swizzle128.config().operand_layout();
        assert_eq!(
            sw,
            OperandLayout {
                lbo: 16,
                sbo: 1024,
                mode: 1,
                k_step: 32
            }
        );
        assert_eq!(
            Rung::KLoop
                .config()
                .with_swizzle(Swizzle::B64, 32)
                .operand_layout()
                .mode,
            2
        );
        assert_eq!(
            Rung::KLoop
                .config()
                .with_swizzle(Swizzle::B32, 16)
                .operand_layout()
                .sbo,
            256
        );
    }

    #[test]
    fn shared_memory_plan_and_grid() {
        let top = Rung::top().config();
        assert_eq!(top.stage_bytes(), (64 + 256) * 64 * 2);
        assert_eq!(top.smem_bytes(), 1024 + 4 * 40960 + 2 * 2 * 8192 + 8 * 10);
        assert_eq!(
            top.grid(&crate::kernel::problem::shape("square4096"), 132),
            132
        );
        let r5 = Rung::TmaEpilogue.config();
        assert_eq!(
            r5.grid(&crate::kernel::problem::shape("square4096"), 132),
            32 * 32
        );
        assert_eq!(
            Rung::Multicast
                .config()
                .grid(&crate::kernel::problem::shape("decode_attn_out"), 132),
            2 * 64
        );
        // Rung 10 on decode_attn_out: 32 cluster tiles fill 64 SMs; stream-K over every tile takes all 132.
        let r10 = Rung::Stmatrix.config();
        let decode = crate::kernel::problem::shape("decode_attn_out");
        assert_eq!(r10.grid(&decode, 132), 64);
        let sk = GemmConfig {
            streamk: 1,
            ..r10.clone()
        };
        assert_eq!(sk.grid(&decode, 132), 132);
        let sk_capped = GemmConfig { ctas: 100, ..sk };
        assert_eq!(sk_capped.grid(&decode, 132), 100);
    }

    #[test]
    fn partial_tiles_round_up() {
        use crate::kernel::problem::Shape;
        // Rung 1: 128x128 tiles, tile_k 16, one CTA per tile.
        let r1 = Rung::KLoop.config();
        let s = Shape::new("square1000", 1000, 1000, 1000);
        assert_eq!(
            (r1.tile_rows(&s), r1.tile_cols(&s), r1.k_blocks(&s)),
            (8, 8, 63)
        );
        assert_eq!(r1.grid(&s, 132), 64);
        // M = 1: one tile row; rung 6's 2x1 cluster still launches both CTAs of it.
        let m1 = Shape::new("decode_m1", 1, 8192, 8192);
        assert_eq!(r1.grid(&m1, 132), 64);
        assert_eq!(Rung::Multicast.config().grid(&m1, 132), 2 * 64);
        // Rung 9: 256-row cluster tiles of width 256, persistent: 777 x 28672 is 4 x 112 tiles on 132 SMs.
        let r9 = Rung::Cooperative.config();
        let t = Shape::new("tokens_777", 777, 28672, 8192);
        assert_eq!((r9.tile_rows(&t), r9.tile_cols(&t)), (4, 112));
        assert_eq!(r9.grid(&t, 132), 132);
        assert_eq!(r9.grid(&m1, 132), 2 * 32);
        // Exact multiples are unchanged.
        let sq = crate::kernel::problem::shape("square4096");
        assert_eq!(
            (r1.tile_rows(&sq), r1.tile_cols(&sq), r1.k_blocks(&sq)),
            (32, 32, 256)
        );
    }

    #[test]
    fn column_fault_needs_the_direct_epilogue() {
        assert!(Rung::Swizzle128
            .config()
            .with_fault(Fault::NoColumnGuard)
            .validate()
            .is_ok());
        let e = Rung::TmaEpilogue
            .config()
            .with_fault(Fault::NoColumnGuard)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("need the direct epilogue"), "{e}");
    }

    #[test]
    fn defines_name_every_switch_once() {
        let d = Rung::top()
            .config()
            .defines(crate::kernel::problem::DType::BF16);
        let mut names: Vec<&str> = d.iter().map(|(k, _)| *k).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), d.len());
        assert!(d.contains(&("DTYPE_BF16", "1".to_string())));
        assert!(d.contains(&("HANG_TIMEOUT_NS", "2000000000ull".to_string())));
    }
}
