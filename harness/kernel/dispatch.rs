//! `auto`: the variant the project runs for a shape, chosen by a small rule over the token count and the tile
//! count. The rule comes from paired measurements against cuBLAS on the H200 (`compare SHAPE cublas ...`; sweeps
//! in tools/sweeps/, their records under results/h200/<commit>/), not from a search at run time, so a shape always
//! runs the same kernel and every record names it (`auto=SPEC`). Time against cuBLAS's, as measured:
//!
//! - M <= 32: swap-AB (the weights fill wgmma's 64-row side, the tokens an n of 8, 16 or 32), an evict-first policy
//!   on the weights, 4 stages (two CTAs' rings fit an SM, so the next launch's CTAs are resident before this one
//!   ends), programmatic dependent launch: 1.06 at M = 1, against 1.20 for the 64x128 kernel below without them
//!   (tools/sweeps/small-m-pdl.txt, results/h200/88c50c9/pdl/; results/h200/0af4cf4/explore/).
//! - M <= 64: one consumer warpgroup on 64x128 tiles, no cluster, 8 stages, stream-K over every tile, evict-first,
//!   PDL: 1.077 at M = 64 (swap-AB measured 1.09-1.11 there).
//! - M <= 96: swap-AB with 96-token tiles, 7 stages, evict-first, PDL: 1.14 at M = 96, against 1.20 with
//!   128-token tiles (tools/sweeps/token-tiles-2.txt, results/h200/e86dfb1/).
//! - M <= 128: swap-AB with 128-token tiles on two consumers of 64 weight rows, 6 stages, evict-first, PDL: 1.18 at
//!   M = 128, against 1.21 on one consumer and 1.38 for the 64x128 kernel.
//! - M <= 192 and fewer 256x256 cluster tiles than clusters: swap-AB with 192-token tiles (two consumers of 64
//!   weight rows), evict-first, PDL: 1.27 at M = 192 and 1.44 at M = 160, against 1.39 and 1.79 for the kernel
//!   below (ablations/HYPOTHESES.md H24, results/h200/5be6541/).
//! - M <= 256 and fewer 256x256 cluster tiles than clusters (decode_attn_out, decode_qkv, decode_mlp_down): rung 10
//!   with 128-wide tiles, 6 stages, stream-K over every tile, evict-first, PDL: 1.10 on decode_attn_out.
//! - fewer cluster tiles than two waves of clusters (decode_mlp_up; M = 384 to about 1000 at N = 8192): rung 10
//!   with stream-K over every tile, plus evict-first and PDL where one tile row holds every token (M <= 256: the
//!   weights are read once): 0.89 on decode_mlp_up; 1.31 at M = 777. Up to M = 384, 128-row tiles without a
//!   cluster instead: 1.12 at M = 384 against 1.39 (H24); at M = 777 they measured 1.79 against 1.31, so not there.
//! - otherwise rung 10 (whole tiles; stream-K on the last waves measured slower, H15 in ablations/HYPOTHESES.md).
//!
//! Only the project's kernels: cuBLAS is what `auto` is measured against, never what it falls back to.

use crate::kernel::config::GemmConfig;
use crate::kernel::ladder::parse_spec;
use crate::kernel::problem::Shape;

/// The smallest wgmma n-size of swap-AB's token tile that holds M tokens (128-token tiles past 128).
fn token_tile(m: usize) -> usize {
    [8usize, 16, 32, 64, 128]
        .into_iter()
        .find(|&n| n >= m)
        .unwrap_or(128)
}

/// Swap-AB with stream-K over every tile and no cluster: `consumers` warpgroups sharing 128 weight rows a tile,
/// `bn` tokens a tile, `stages` ring positions, the transposed direct epilogue.
fn swap_ab_kernel(consumers: u32, bn: usize, stages: u32) -> String {
    format!(
        "rung10:streamk=1,cluster=1,consumers={consumers},wg_m={},bn={bn},stages={stages},epilogue=direct,stmatrix=0,swap_ab=1",
        128 / consumers
    )
}

/// The spec `auto` runs for this shape on a GPU with this many SMs, and the rule that chose it.
pub fn auto_spec(shape: &Shape, sm_count: u32) -> (String, &'static str) {
    let clusters = (sm_count / 2).max(1) as usize;
    let cluster_tiles = shape.m.div_ceil(256) * shape.n.div_ceil(256);
    if shape.m <= 32 {
        (
            format!(
                "{},evict_first=1,pdl=1",
                swap_ab_kernel(1, token_tile(shape.m), 4)
            ),
            "M <= 32: swap-AB, evict-first weights, 4 stages, PDL",
        )
    } else if shape.m <= 64 {
        (
            format!("{SMALL_M_SPEC},evict_first=1,pdl=1"),
            "M <= 64: 64x128 tiles, stream-K over every tile, evict-first weights, PDL",
        )
    } else if shape.m <= 96 {
        (
            format!("{},evict_first=1,pdl=1", swap_ab_kernel(1, 96, 7)),
            "M <= 96: swap-AB with 96-token tiles, evict-first weights, PDL",
        )
    } else if shape.m <= 128 {
        (
            format!("{},evict_first=1,pdl=1", swap_ab_kernel(2, 128, 6)),
            "M <= 128: swap-AB with 128-token tiles on two consumers, evict-first weights, PDL",
        )
    } else if shape.m <= 192 && cluster_tiles < clusters {
        (
            format!("{},evict_first=1,pdl=1", swap_ab_kernel(2, 192, 5)),
            "M <= 192, under one wave of tiles: swap-AB with 192-token tiles, evict-first weights, PDL",
        )
    } else if shape.m <= 256 && cluster_tiles < clusters {
        (
            format!("{DECODE_SPEC},evict_first=1,pdl=1"),
            "M <= 256, under one wave of tiles: 128-wide tiles, stream-K over every tile, evict-first weights, PDL",
        )
    } else if cluster_tiles < 2 * clusters && shape.m <= 256 {
        (
            "rung10:streamk=1,evict_first=1,pdl=1".to_string(),
            "M <= 256, under two waves of tiles: stream-K over every tile, evict-first weights, PDL",
        )
    } else if shape.m <= 384 && cluster_tiles < 2 * clusters {
        (
            "rung10:cluster=1,streamk=1".to_string(),
            "M <= 384, under two waves of tiles: 128-row tiles without a cluster, stream-K over every tile",
        )
    } else if cluster_tiles < 2 * clusters {
        (
            "rung10:streamk=1".to_string(),
            "under two waves of tiles: stream-K over every tile",
        )
    } else {
        ("rung10".to_string(), "two waves or more: whole tiles")
    }
}

/// `auto` for this shape: the label records carry (`auto=SPEC`) and the configuration.
pub fn auto_variant(shape: &Shape, sm_count: u32) -> (String, GemmConfig) {
    let (spec, _) = auto_spec(shape, sm_count);
    let config = parse_spec(&spec).expect("auto's specs parse");
    (format!("auto={spec}"), config)
}

/// `auto`'s kernel for M <= 128 up to this session (64x128 tiles, stream-K): the baseline of the small-M trials
/// (H18-H21), named here so that those trials keep measuring the kernel their hypotheses were written about.
pub const SMALL_M_SPEC: &str = "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=128,stages=8";

/// `auto`'s kernel for 128 < M <= 256 under one wave of tiles (the decode shapes), named for the same reason.
pub const DECODE_SPEC: &str = "rung10:streamk=1,bn=128,stages=6";

/// Swap-AB for M tokens (H19): 128 weight rows a tile as in `SMALL_M_SPEC`, the tokens the smallest wgmma n-size
/// that holds them (at most 128, in 128-token tiles beyond), stream-K over every tile, 8 stages (6 at n = 128), the
/// transposed direct epilogue.
pub fn swap_ab_spec(m: usize) -> String {
    let n = token_tile(m);
    // 8 stages of 16 KB of weights as in SMALL_M_SPEC; at n = 128 a stage is 32 KB and 6 is what fits.
    let stages = if n == 128 { 6 } else { 8 };
    swap_ab_kernel(1, n, stages)
}

/// The kernel `auto` ran for each shape of the programmatic-dependent-launch trials when H18 was written (the
/// trials keep measuring it whatever `auto` runs now).
pub fn h18_spec(shape: &Shape) -> &'static str {
    match shape.m {
        m if m <= 128 => SMALL_M_SPEC,
        m if m <= 256 && shape.n <= 10240 => DECODE_SPEC,
        m if m <= 256 => "rung10:streamk=1",
        _ => "rung10",
    }
}

/// The H200's SM count: `auto` resolved before a GPU is opened (trial lists, spec checks) assumes it.
pub const H200_SMS: u32 = 132;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::problem::{shape, Shape};

    #[test]
    fn auto_picks_by_token_count_and_tile_waves() {
        let pick = |s: &Shape| auto_spec(s, H200_SMS).0;
        assert!(pick(&shape("decode_m1")).contains("bn=8,stages=4,"));
        assert!(pick(&shape("decode_m16")).contains("swap_ab=1"));
        assert!(pick(&shape("decode_m32")).contains("bn=32,"));
        assert_eq!(
            pick(&shape("decode_m64")),
            format!("{SMALL_M_SPEC},evict_first=1,pdl=1")
        );
        assert!(pick(&Shape::new("t", 96, 8192, 8192)).contains("bn=96,"));
        assert!(pick(&shape("decode_m128")).contains("consumers=2,wg_m=64,bn=128,stages=6,"));
        assert!(pick(&shape("decode_m192")).contains("bn=192,"));
        assert_eq!(pick(&shape("tokens_384")), "rung10:cluster=1,streamk=1");
        // M = 256: 32-40 cluster tiles for 66 clusters, or 112.
        for s in ["decode_attn_out", "decode_qkv", "decode_mlp_down"] {
            assert_eq!(
                pick(&shape(s)),
                format!("{DECODE_SPEC},evict_first=1,pdl=1"),
                "{s}"
            );
        }
        assert_eq!(
            pick(&shape("decode_mlp_up")),
            "rung10:streamk=1,evict_first=1,pdl=1"
        );
        assert_eq!(pick(&Shape::new("t", 777, 8192, 8192)), "rung10:streamk=1");
        // N = 28672: 448 cluster tiles.
        assert_eq!(pick(&shape("tokens_777")), "rung10");
        for s in ["square4096", "prefill_attn_out", "prefill_mlp_up", "long_k"] {
            assert_eq!(pick(&shape(s)), "rung10", "{s}");
        }
        // H18's kernels, as auto picked them then.
        assert_eq!(h18_spec(&shape("decode_m1")), SMALL_M_SPEC);
        assert_eq!(h18_spec(&shape("decode_attn_out")), DECODE_SPEC);
        assert_eq!(h18_spec(&shape("decode_mlp_up")), "rung10:streamk=1");
        assert_eq!(h18_spec(&shape("square4096")), "rung10");
        // Swap-AB's token tile: the smallest n-size that holds M, 128-token tiles past it.
        assert!(swap_ab_spec(1).contains("bn=8,"));
        assert!(swap_ab_spec(9).contains("bn=16,"));
        assert!(swap_ab_spec(64).contains("bn=64,"));
        assert!(swap_ab_spec(777).contains("bn=128,"));
        // Every choice is a valid configuration for every shape it can be given.
        for s in [
            shape("decode_m1"),
            shape("decode_m16"),
            shape("decode_m32"),
            shape("decode_m64"),
            shape("decode_m128"),
            shape("decode_m192"),
            shape("tokens_384"),
            shape("decode_mlp_up"),
            shape("tokens_777"),
            shape("prefill_1500"),
            shape("square1000"),
        ] {
            let (label, config) = auto_variant(&s, H200_SMS);
            config
                .validate_shape(&s)
                .unwrap_or_else(|e| panic!("{label} on {}: {e}", s.name));
            parse_spec(&swap_ab_spec(s.m))
                .unwrap()
                .validate_shape(&s)
                .unwrap_or_else(|e| panic!("swap-AB on {}: {e}", s.name));
        }
    }
}
