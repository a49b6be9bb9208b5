//! Every switch of the GEMM kernel, declared once: its key in variant specs (`rung8:stages=3`), the define the
//! kernel reads, what it does, and how it is read from and written to a configuration. The defines handed to
//! NVRTC, spec parsing and `gemm-ablate list` come from this table; CPU tests check that the README and the
//! kernel's header comment name every entry.
//!
//! Adding a switch: a field in `GemmConfig`, an entry here, and the code in kernels/gemm.cu that reads it.

use crate::error::{config_err, Error, Result};
use crate::kernel::config::{
    Epilogue, Fault, GemmConfig, Multicast, Raster, Swizzle, TileOrder, WaitScope, FP8, SIXTEEN_BIT,
};
use crate::kernel::problem::DType;

/// One switch.
pub struct Switch {
    /// Its key in variant specs.
    pub key: &'static str,
    /// The define kernels/gemm.cu reads (None for launch-side switches).
    pub define: Option<&'static str>,
    pub doc: &'static str,
    /// The define's value.
    pub value: fn(&GemmConfig) -> u32,
    /// Applies a spec's value.
    pub set: fn(&mut GemmConfig, &str) -> Result<()>,
}

/// Stores a parsed value, or passes the parse error on.
fn assign<T>(slot: &mut T, value: Result<T>) -> Result<()> {
    *slot = value?;
    Ok(())
}

fn number(key: &str, value: &str) -> Result<u32> {
    value
        .parse()
        .map_err(|_| Error::Config(format!("`{key}` wants a number, got `{value}`")))
}

fn flag(key: &str, value: &str) -> Result<bool> {
    match value {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => config_err(format!("`{key}` wants 0 or 1, got `{value}`")),
    }
}

/// A two-way switch spelled by name: `first` or `second`, each a list of accepted words (the first is the name the
/// error gives) and the value it sets.
fn either<T: Copy>(key: &str, value: &str, first: (&[&str], T), second: (&[&str], T)) -> Result<T> {
    match [first, second]
        .iter()
        .find(|(words, _)| words.contains(&value))
    {
        Some(&(_, on)) => Ok(on),
        None => config_err(format!(
            "{key} must be {} or {}, got `{value}`",
            first.0[0], second.0[0]
        )),
    }
}

/// The switches, in the order their defines are handed to the kernel.
pub const SWITCHES: &[Switch] = &[
    Switch {
        key: "stages",
        define: Some("STAGES"),
        doc: "shared-memory ring depth (1: a single buffer)",
        value: |c| c.stages,
        set: |c, v| assign(&mut c.stages, number("stages", v)),
    },
    Switch {
        key: "warpspec",
        define: Some("WARPSPEC"),
        doc: "a producer warpgroup issues TMA, consumer warpgroups issue wgmma (0/1)",
        value: |c| u32::from(c.warpspec),
        set: |c, v| assign(&mut c.warpspec, flag("warpspec", v)),
    },
    Switch {
        key: "swizzle",
        define: Some("SWIZZLE"),
        doc: "shared-memory layout: none (core matrices) or a 32/64/128-byte swizzle; sets tile_k to one swizzle span",
        value: |c| c.swizzle.bytes(),
        set: |c, v| {
            let (s, k) = match v {
                "none" | "0" => (Swizzle::None, c.tile_k),
                "32" => (Swizzle::B32, 16),
                "64" => (Swizzle::B64, 32),
                "128" => (Swizzle::B128, 64),
                _ => return config_err(format!("swizzle must be none, 32, 64 or 128, got `{v}`")),
            };
            c.swizzle = s;
            c.tile_k = k;
            Ok(())
        },
    },
    Switch {
        key: "tile_k",
        define: Some("TILE_K"),
        doc: "k-depth of a stage (a multiple of 16)",
        value: |c| c.tile_k,
        set: |c, v| assign(&mut c.tile_k, number("tile_k", v)),
    },
    Switch {
        key: "epilogue",
        define: Some("EPILOGUE"),
        doc: "tma: accumulators staged in shared memory and written by TMA stores; direct: stores from registers",
        value: |c| c.epilogue.define(),
        set: |c, v| {
            let way = either("epilogue", v, (&["tma"], Epilogue::Tma), (&["direct"], Epilogue::Direct));
            assign(&mut c.epilogue, way)
        },
    },
    Switch {
        key: "cluster",
        define: Some("CLUSTER"),
        doc: "2: a 2-CTA cluster; the B tile is split between the two CTAs and multicast to both (along M), or the A tile with multicast=a (along N); 4: four CTAs along M share the B tile in quarters (H68)",
        value: |c| c.cluster,
        set: |c, v| assign(&mut c.cluster, number("cluster", v)),
    },
    Switch {
        key: "consumers",
        define: Some("CONSUMERS"),
        doc: "consumer warpgroups (1 also drops ping-pong and setmaxnreg)",
        value: |c| c.consumers,
        set: |c, v| {
            match number("consumers", v)? {
                1 => *c = c.clone().with_one_consumer(),
                n => c.consumers = n,
            }
            Ok(())
        },
    },
    Switch {
        key: "wg_m",
        define: Some("WG_M"),
        doc: "output rows each consumer warpgroup owns (64 or 128)",
        value: |c| c.wg_m,
        set: |c, v| assign(&mut c.wg_m, number("wg_m", v)),
    },
    Switch {
        key: "bn",
        define: Some("BN"),
        doc: "tile width: 128, 192 or 256; any multiple of 8 up to 256 with epilogue=direct (swap-AB's token tiles)",
        value: |c| c.bn,
        set: |c, v| assign(&mut c.bn, number("bn", v)),
    },
    Switch {
        key: "setmaxnreg",
        define: Some("SETMAXNREG"),
        doc: "registers moved from the producer to the consumers, 40/232 (0/1)",
        value: |c| u32::from(c.setmaxnreg),
        set: |c, v| assign(&mut c.setmaxnreg, flag("setmaxnreg", v)),
    },
    Switch {
        key: "pingpong",
        define: Some("PINGPONG"),
        doc: "the consumers take alternate tiles so one's epilogue overlaps the other's mainloop (0/1)",
        value: |c| u32::from(c.pingpong),
        set: |c, v| assign(&mut c.pingpong, flag("pingpong", v)),
    },
    Switch {
        key: "bounded",
        define: Some("BOUNDED"),
        doc: "every mbarrier wait gives up after timeout_ms and reports where it hung (0/1)",
        value: |c| u32::from(c.bounded),
        set: |c, v| assign(&mut c.bounded, flag("bounded", v)),
    },
    Switch {
        key: "loads",
        define: Some("LOADS"),
        doc: "isolation: 0 loads only the first ring lap and reuses it (MMA only)",
        value: |c| u32::from(c.loads),
        set: |c, v| assign(&mut c.loads, flag("loads", v)),
    },
    Switch {
        key: "mma",
        define: Some("MMA"),
        doc: "isolation: 0 issues no wgmma (loads only)",
        value: |c| u32::from(c.mma),
        set: |c, v| assign(&mut c.mma, flag("mma", v)),
    },
    Switch {
        key: "stream_only",
        define: Some("STREAM_ONLY"),
        doc: "isolation: 1 streams the operands through the ring with the producers alone, each stage released once its bytes have landed in every CTA of the cluster; the consumers issue nothing (H56)",
        value: |c| u32::from(c.stream_only),
        set: |c, v| assign(&mut c.stream_only, flag("stream_only", v)),
    },
    Switch {
        key: "spin",
        define: Some("SPIN"),
        doc: "calibration: cycles each consumer spins before each tile's epilogue, a known slowdown",
        value: |c| c.spin,
        set: |c, v| assign(&mut c.spin, number("spin", v)),
    },
    Switch {
        key: "mma_wait",
        define: Some("MMA_WAIT"),
        doc: "1: every k-block's MMAs are waited for before its stage is released (wait_group 0), instead of one batch kept in flight (0/1)",
        value: |c| u32::from(c.mma_wait),
        set: |c, v| assign(&mut c.mma_wait, flag("mma_wait", v)),
    },
    Switch {
        key: "stmatrix",
        define: Some("STMATRIX"),
        doc: "the TMA epilogue's staging written with stmatrix, four 8x8 blocks per instruction, instead of 32-bit stores (0/1)",
        value: |c| u32::from(c.stmatrix),
        set: |c, v| assign(&mut c.stmatrix, flag("stmatrix", v)),
    },
    Switch {
        key: "consumer_regs",
        define: Some("CONSUMER_REGS"),
        doc: "registers per consumer thread under setmaxnreg: 232 (producer 40) or 240 (producer 24)",
        value: |c| c.consumer_regs,
        set: |c, v| assign(&mut c.consumer_regs, number("consumer_regs", v)),
    },
    Switch {
        key: "streamk",
        define: Some("STREAMK"),
        doc: "0: whole tiles round robin; 1: stream-K, every tile's k-blocks shared evenly by the clusters; 2: whole tiles, then stream-K on the last partial wave plus one; 3: as 2, each share ordered whole tiles, head, tail so every cluster walks k in step (H95)",
        value: |c| c.streamk,
        set: |c, v| assign(&mut c.streamk, number("streamk", v)),
    },
    Switch {
        key: "pdl",
        define: Some("PDL"),
        doc: "1: programmatic dependent launch: set-up overlaps the previous kernel in the stream, global memory waits for it (0/1)",
        value: |c| u32::from(c.pdl),
        set: |c, v| assign(&mut c.pdl, flag("pdl", v)),
    },
    Switch {
        key: "swap_ab",
        define: Some("SWAP_AB"),
        doc: "computes C^T = B A^T: the weights fill wgmma's 64-row side, the tokens are the n-size bn = 8..256; needs epilogue=direct (0/1)",
        value: |c| u32::from(c.swap_ab),
        set: |c, v| assign(&mut c.swap_ab, flag("swap_ab", v)),
    },
    Switch {
        key: "evict_first",
        define: Some("EVICT_FIRST"),
        doc: "the weights' TMA loads carry an L2 evict-first policy (0/1)",
        value: |c| u32::from(c.evict_first),
        set: |c, v| assign(&mut c.evict_first, flag("evict_first", v)),
    },
    Switch {
        key: "early_weights",
        define: Some("EARLY_WEIGHTS"),
        doc: "with pdl=1: the first ring lap's weights are loaded before waiting for the previous kernel (weights read-only) (0/1)",
        value: |c| u32::from(c.early_weights),
        set: |c, v| assign(&mut c.early_weights, flag("early_weights", v)),
    },
    Switch {
        key: "split_n",
        define: Some("SPLIT_N"),
        doc: "the two consumers split the tile's columns instead of its rows (each owns all wg_m rows and bn/2 columns); needs epilogue=direct (0/1)",
        value: |c| u32::from(c.split_n),
        set: |c, v| assign(&mut c.split_n, flag("split_n", v)),
    },
    Switch {
        key: "swap_store",
        define: Some("SWAP_STORE"),
        doc: "swap-AB's direct epilogue: element (2-byte stores of C^T) or pairs (each 8x8 block transposed in registers by movmatrix, 4-byte stores along C's rows; H39, H40: auto's since 51898b3)",
        value: |c| u32::from(c.swap_store),
        set: |c, v| {
            let pairs = either("swap_store", v, (&["element", "0"], false), (&["pairs", "1"], true));
            assign(&mut c.swap_store, pairs)
        },
    },
    Switch {
        key: "multicast",
        define: Some("MULTICAST"),
        doc: "with cluster=2, the tile the two CTAs share: b (they sit along M, each loads half of B; the default) or a (along N, each loads half of A: cuBLAS's 1x2 clusters; whole tiles only; H44-H47)",
        value: |c| c.multicast.define(),
        set: |c, v| {
            let way = either("multicast", v, (&["b"], Multicast::B), (&["a"], Multicast::A));
            assign(&mut c.multicast, way)
        },
    },
    Switch {
        key: "wait_scope",
        define: Some("WAIT_SCOPE"),
        doc: "the scope at which every mbarrier wait acquires: cluster (the default) or cta (as CUTLASS's cluster barriers; H49)",
        value: |c| c.wait_scope.define(),
        set: |c, v| {
            let way = either(
                "wait_scope",
                v,
                (&["cluster", "0"], WaitScope::Cluster),
                (&["cta", "1"], WaitScope::Cta),
            );
            assign(&mut c.wait_scope, way)
        },
    },
    Switch {
        key: "wait_suspend",
        define: Some("WAIT_SUSPEND"),
        doc: "1: every mbarrier wait passes a suspend-time hint of 10 ms (as CUTLASS's cluster barriers), so a waiting thread may sleep until the phase completes; 0 (the default): it polls (H51)",
        value: |c| u32::from(c.wait_suspend),
        set: |c, v| assign(&mut c.wait_suspend, flag("wait_suspend", v)),
    },
    Switch {
        key: "tmap_prefetch",
        define: Some("TMAP_PREFETCH"),
        doc: "1: the producer thread prefetches the TMA descriptors (prefetch.tensormap) first thing, before the barrier set-up and the dependency wait; 0 (default): the first load fetches them (H57)",
        value: |c| u32::from(c.tmap_prefetch),
        set: |c, v| assign(&mut c.tmap_prefetch, flag("tmap_prefetch", v)),
    },
    Switch {
        key: "kb_per_wait",
        define: Some("KB_PER_WAIT"),
        doc: "ring positions (k-blocks) a consumer takes per batch of MMAs: one fence, commit, wait and release round per batch; 1 (default) a round per k-block (H60)",
        value: |c| c.kb_per_wait,
        set: |c, v| assign(&mut c.kb_per_wait, number("kb_per_wait", v)),
    },
    Switch {
        key: "desc_advance",
        define: Some("DESC_ADVANCE"),
        doc: "1: each consumer builds its operands' shared-memory descriptors once (warp-uniform) and advances them by constants per k16 step and stage, counting its ring stage and phase; 0 (default): rebuilt before every wgmma from the ring position (H64)",
        value: |c| u32::from(c.desc_advance),
        set: |c, v| assign(&mut c.desc_advance, flag("desc_advance", v)),
    },
    Switch {
        key: "k_rotate",
        define: Some("K_ROTATE"),
        doc: "1: each work item takes its k-blocks from an offset spread evenly over the tiles, wrapping round, so the clusters' loads in flight sit at different columns of the weight rows; 0 (default): from its first k-block (H83)",
        value: |c| u32::from(c.k_rotate),
        set: |c, v| assign(&mut c.k_rotate, flag("k_rotate", v)),
    },
    Switch {
        key: "early_turn",
        define: Some("EARLY_TURN"),
        doc: "1 (with pingpong=1): a consumer passes the turn once its tile's last MMAs are issued, as CUTLASS orders ping-pong, so the other's MMAs queue behind them; 0 (default): once they are complete (H98)",
        value: |c| u32::from(c.early_turn),
        set: |c, v| assign(&mut c.early_turn, flag("early_turn", v)),
    },
    Switch {
        key: "epi_buffers",
        define: Some("EPI_BUFFERS"),
        doc: "the TMA epilogue's 64x64 staging chunks a consumer: 2 (default, double-buffered: each chunk's store waits for the one two before to have read its buffer) or 4 (a 64x256 half-tile staged at once; H99)",
        value: |c| c.epi_buffers,
        set: |c, v| assign(&mut c.epi_buffers, number("epi_buffers", v)),
    },
    Switch {
        key: "clock_probe",
        define: Some("CLOCK_PROBE"),
        doc: "instrumentation: 1 records CTA 0's SM cycles and nanoseconds from its start to its end, the clock a launch actually ran at (sustain); 0 (default)",
        value: |c| u32::from(c.clock_probe),
        set: |c, v| assign(&mut c.clock_probe, flag("clock_probe", v)),
    },
    Switch {
        key: "place_probe",
        define: Some("PLACE_PROBE"),
        doc: "instrumentation: 1 records the SM each CTA of a round's last launch ran on (its first 1024 CTAs; H142); 0 (default)",
        value: |c| u32::from(c.place_probe),
        set: |c, v| assign(&mut c.place_probe, flag("place_probe", v)),
    },
    Switch {
        key: "tile_order",
        define: Some("TILE_ORDER"),
        doc: "raster: the grouped raster computed on the device; hilbert: a Hilbert curve over the tile grid, a table the host writes into the module (persistent kernels)",
        value: |c| c.tile_order.define(),
        set: |c, v| {
            let way = either(
                "tile_order",
                v,
                (&["raster", "0"], TileOrder::Raster),
                (&["hilbert", "1"], TileOrder::Hilbert),
            );
            assign(&mut c.tile_order, way)
        },
    },
    Switch {
        key: "promote",
        define: Some("PROMOTE"),
        doc: "FP8 only: every N k-blocks the wgmma partial sums are added into fp32 accumulators held apart (two-level accumulation); 0 (default): one set of accumulators; e4m3-block needs 1 (H115, H117)",
        value: |c| c.promote,
        set: |c, v| assign(&mut c.promote, number("promote", v)),
    },
    Switch {
        key: "scale_loads",
        define: Some("SCALE_LOADS"),
        doc: "FP8 block scales (e4m3-block): stage, the producer copies A's scales of each k-block's tile rows into shared memory with the stage, as DeepGEMM; ldg (default), every consumer thread reads its rows' scales from global memory (H120)",
        value: |c| u32::from(c.scale_loads),
        set: |c, v| {
            let way = either("scale_loads", v, (&["ldg", "0"], false), (&["stage", "1"], true));
            assign(&mut c.scale_loads, way)
        },
    },
    Switch {
        key: "scale_prefetch",
        define: Some("SCALE_PREFETCH"),
        doc: "FP8 block scales (e4m3-block): 1, each k-block's scales are loaded one k-block ahead (B's, and A's under scale_loads=ldg), so each load has a whole k-block to land; 0 (default), with the k-block's own MMAs (H136)",
        value: |c| u32::from(c.scale_prefetch),
        set: |c, v| assign(&mut c.scale_prefetch, flag("scale_prefetch", v)),
    },
    Switch {
        key: "one_b_block",
        define: Some("ONE_B_BLOCK"),
        doc: "FP8 block scales (e4m3-block), a warpgroup's width dividing 128: 1, B's scale is one value a k-block and the promotion one product a row; 0 (default), a scale chosen per eight columns with a test of N at every k-block (H138)",
        value: |c| u32::from(c.one_b_block),
        set: |c, v| assign(&mut c.one_b_block, flag("one_b_block", v)),
    },
    Switch {
        key: "promote_overlap",
        define: Some("PROMOTE_OVERLAP"),
        doc: "FP8 block scales (e4m3-block) with promote=1 and one_b_block=1: 1, two sets of partial sums, k-block kb's MMAs accumulating into one while k-block kb-1's is promoted, so the promotion runs under the tensor core's work; 0 (default), one set, promoted after every MMA is waited for (H156)",
        value: |c| u32::from(c.promote_overlap),
        set: |c, v| assign(&mut c.promote_overlap, flag("promote_overlap", v)),
    },
    Switch {
        key: "promote_stagger",
        define: Some("PROMOTE_STAGGER"),
        doc: "FP8 with promote >= 2 and two consumers on one tile (consumers=2, pingpong=0): 1, the second consumer's promotion windows start half a window later, so one drains and promotes while the other's MMAs run; 0 (default), both at the same k-block (H163: no change measured at long_k)",
        value: |c| u32::from(c.promote_stagger),
        set: |c, v| assign(&mut c.promote_stagger, flag("promote_stagger", v)),
    },
    Switch {
        key: "promote_windows",
        define: Some("PROMOTE_WINDOWS"),
        doc: "FP8 with promote (and promote_overlap=0): 1, the promoting loop is a loop over windows, each an inner loop over its k-blocks but the last, so a batch of MMAs stays in flight between them; 0 (default), one loop with the window's end a branch inside it, where ptxas waits for every MMA at every k-block (H164, H165)",
        value: |c| u32::from(c.promote_windows),
        set: |c, v| assign(&mut c.promote_windows, flag("promote_windows", v)),
    },
    Switch {
        key: "persistent",
        define: None,
        doc: "grid = SM count with a tile loop, instead of one CTA per tile (0/1)",
        value: |c| u32::from(c.persistent),
        set: |c, v| assign(&mut c.persistent, flag("persistent", v)),
    },
    Switch {
        key: "raster",
        define: None,
        doc: "tile rows walked down M before stepping along N: a group that must divide the tile rows, or upto8",
        value: |c| match c.raster {
            Raster::Group(g) | Raster::UpTo(g) => g,
        },
        set: |c, v| {
            c.raster = match v.strip_prefix("upto") {
                Some(g) => Raster::UpTo(
                    g.parse()
                        .map_err(|_| Error::Config(format!("bad raster `{v}`")))?,
                ),
                None => Raster::Group(number("raster", v)?),
            };
            Ok(())
        },
    },
    Switch {
        key: "ctas",
        define: None,
        doc: "persistent grid capped at this many CTAs (0: one per SM), so the tiles can divide evenly",
        value: |c| c.ctas,
        set: |c, v| assign(&mut c.ctas, number("ctas", v)),
    },
    Switch {
        key: "timeout_ms",
        define: None,
        doc: "how long a bounded wait waits before it reports a hang (the kernel reads HANG_TIMEOUT_NS)",
        value: |c| c.timeout_ms,
        set: |c, v| assign(&mut c.timeout_ms, number("timeout_ms", v)),
    },
];

/// The switch with this spec key.
pub fn find(key: &str) -> Option<&'static Switch> {
    SWITCHES.iter().find(|s| s.key == key)
}

impl GemmConfig {
    /// The preprocessor defines that select this variant's code in kernels/gemm.cu, in a fixed order.
    /// FP8 (e4m3) operands take `AB_E4M3`, a bf16 output and the geometry of one-byte elements (whether the
    /// configuration can take them is `validate_fp8`'s to say).
    pub fn defines(&self, dtype: DType) -> Vec<(&'static str, String)> {
        match dtype.scales() {
            Some(scales) => {
                let mut defines = vec![
                    ("AB_E4M3", "1".to_string()),
                    ("SCALES", scales.define().to_string()),
                ];
                defines.extend(self.defines_of(dtype.output(), FP8));
                defines
            }
            None => self.defines_of(dtype, SIXTEEN_BIT),
        }
    }

    /// The defines of this variant with FP8 operands of `dtype` and a bf16 output, after `validate_for`.
    pub fn fp8_defines(&self, dtype: DType) -> Result<Vec<(&'static str, String)>> {
        if !dtype.is_fp8() {
            return config_err(format!("{} is not an FP8 type", dtype.name()));
        }
        self.validate_for(dtype)?;
        Ok(self.defines(dtype))
    }

    /// `defines` with the geometry of operands `operand_bytes` an element.
    fn defines_of(&self, dtype: DType, operand_bytes: u32) -> Vec<(&'static str, String)> {
        let b = u32::from;
        let fault = |f: Fault| b(self.fault == Some(f));
        let layout = self.operand_layout_of(operand_bytes);
        // The switches, from the one table, then each fault, then the geometry computed here once (the kernel
        // reads it instead of deriving it again).
        let mut defines: Vec<(&'static str, String)> =
            vec![("DTYPE_BF16", b(dtype == DType::BF16).to_string())];
        for s in SWITCHES {
            if let Some(d) = s.define {
                if d == "SPIN" {
                    for f in Fault::ALL {
                        defines.push((f.define(), fault(f).to_string()));
                    }
                }
                defines.push((d, (s.value)(self).to_string()));
            }
        }
        let geometry = [
            ("BM", self.bm()),
            ("WG_N", self.wg_n()),
            ("THREADS", self.threads()),
            ("A_STAGE_BYTES", self.bm() * self.tile_k * operand_bytes),
            ("B_STAGE_BYTES", self.bn * self.tile_k * operand_bytes),
            ("STAGE_BYTES", self.stage_bytes_of(operand_bytes)),
            ("EPI_BYTES", self.epilogue_bytes()),
            ("SCALE_BYTES", self.scale_bytes()),
            ("SMEM_BYTES", self.smem_bytes_of(operand_bytes)),
            ("DESC_LBO", layout.lbo),
            ("DESC_SBO", layout.sbo),
            ("DESC_LAYOUT", layout.mode),
            ("K_STEP_BYTES", layout.k_step),
        ];
        defines.extend(geometry.iter().map(|(k, v)| (*k, v.to_string())));
        let timeout_ns = u64::from(self.timeout_ms) * 1_000_000;
        defines.push(("HANG_TIMEOUT_NS", format!("{timeout_ns}ull")));
        defines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_defines_are_unique() {
        let mut keys: Vec<&str> = SWITCHES.iter().map(|s| s.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), SWITCHES.len());
        let mut defines: Vec<&str> = SWITCHES.iter().filter_map(|s| s.define).collect();
        let n = defines.len();
        defines.sort();
        defines.dedup();
        assert_eq!(defines.len(), n);
    }

    /// A switch goes by one name: its spec key is its field in `GemmConfig` (and in every record) and, upper-cased,
    /// the define kernels/gemm.cu reads.
    #[test]
    fn each_switch_goes_by_one_name() {
        let fields = serde_json::to_value(crate::kernel::ladder::Rung::top().config()).unwrap();
        for s in SWITCHES {
            assert!(
                fields.get(s.key).is_some(),
                "switch `{}` has no field of that name in GemmConfig",
                s.key
            );
            if let Some(d) = s.define {
                assert_eq!(d, s.key.to_ascii_uppercase(), "switch `{}`", s.key);
            }
        }
    }

    #[test]
    fn every_switch_is_documented_in_the_readme_and_the_kernel() {
        let readme = include_str!("../../docs/reference.md");
        let kernel = crate::kernel::source::GEMM;
        let header: String = kernel
            .lines()
            .take_while(|l| l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for s in SWITCHES {
            assert!(
                readme.contains(&format!("`{}`", s.key)),
                "docs/reference.md does not name switch `{}`",
                s.key
            );
            if let Some(d) = s.define {
                assert!(
                    header.contains(d),
                    "kernels/gemm.cu's header comment does not describe {d}"
                );
            }
        }
    }

    #[test]
    fn setting_a_switch_then_reading_it_round_trips() {
        let mut c = crate::kernel::ladder::Rung::top().config();
        (find("stages").unwrap().set)(&mut c, "3").unwrap();
        assert_eq!((find("stages").unwrap().value)(&c), 3);
        (find("swizzle").unwrap().set)(&mut c, "64").unwrap();
        assert_eq!((c.swizzle.bytes(), c.tile_k), (64, 32));
        assert!((find("pingpong").unwrap().set)(&mut c, "maybe")
            .unwrap_err()
            .to_string()
            .contains("0 or 1"));
    }
}
