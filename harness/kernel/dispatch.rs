//! `auto`: the variant the project runs for a shape, chosen by a small rule over the token count and the tile
//! count. The rule comes from paired measurements against cuBLAS on the H200 (`compare SHAPE cublas ...`,
//! results/h200/c8e3b11/explore/ and f45a873/explore/), not from a search at run time, so a shape always runs the
//! same kernel and every record names it (`auto=SPEC`). Time against cuBLAS's, the best of each row measured:
//!
//! - M <= 128: one consumer warpgroup on 64x128 tiles, no cluster, 8 stages, stream-K over every tile (the weights
//!   are streamed once by all 132 SMs; no MMA rows spent on an empty second CTA): 1.23 at M = 1, 1.16 at M = 64,
//!   against 1.35 and 1.31 with 64x256 tiles and 1.95 and 1.72 with rung 10's 256x256 cluster tiles.
//! - M <= 256 and fewer 256x256 cluster tiles than clusters (decode_attn_out, decode_qkv, decode_mlp_down): rung 10
//!   with 128-wide tiles, 6 stages, stream-K over every tile: 1.18 and 1.07 on decode_attn_out and decode_mlp_down,
//!   against 1.25 and 1.12 with 256-wide tiles.
//! - fewer cluster tiles than two waves of clusters (decode_mlp_up; M = 384 to about 1000 at N = 8192): rung 10 with
//!   stream-K over every tile: 0.91 on decode_mlp_up, 1.31-1.39 at M = 384 and 777.
//! - otherwise rung 10 (whole tiles; stream-K on the last waves measured slower, H15 in ablations/HYPOTHESES.md).
//!
//! Only the project's kernels: cuBLAS is what `auto` is measured against, never what it falls back to.

use crate::kernel::config::GemmConfig;
use crate::kernel::ladder::parse_spec;
use crate::kernel::problem::Shape;

/// The spec `auto` runs for this shape on a GPU with this many SMs, and the rule that chose it.
pub fn auto_spec(shape: &Shape, sm_count: u32) -> (&'static str, &'static str) {
    let clusters = (sm_count / 2).max(1) as usize;
    let cluster_tiles = shape.m.div_ceil(256) * shape.n.div_ceil(256);
    if shape.m <= 128 {
        (
            "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=128,stages=8",
            "M <= 128: 64x128 tiles, stream-K over every tile",
        )
    } else if shape.m <= 256 && cluster_tiles < clusters {
        (
            "rung10:streamk=1,bn=128,stages=6",
            "M <= 256, under one wave of tiles: 128-wide tiles, stream-K over every tile",
        )
    } else if cluster_tiles < 2 * clusters {
        (
            "rung10:streamk=1",
            "under two waves of tiles: stream-K over every tile",
        )
    } else {
        ("rung10", "two waves or more: whole tiles")
    }
}

/// `auto` for this shape: the label records carry (`auto=SPEC`) and the configuration.
pub fn auto_variant(shape: &Shape, sm_count: u32) -> (String, GemmConfig) {
    let (spec, _) = auto_spec(shape, sm_count);
    let config = parse_spec(spec).expect("auto's specs parse");
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
    let n = [8usize, 16, 32, 64, 128]
        .into_iter()
        .find(|&n| n >= m)
        .unwrap_or(128);
    // 8 stages of 16 KB of weights as in SMALL_M_SPEC; at n = 128 a stage is 32 KB and 6 is what fits.
    let stages = if n == 128 { 6 } else { 8 };
    format!("rung10:streamk=1,cluster=1,consumers=1,wg_m=128,bn={n},stages={stages},epilogue=direct,stmatrix=0,swap_ab=1")
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
        let small = "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=128,stages=8";
        assert_eq!(pick(&shape("decode_m1")), small);
        assert_eq!(pick(&shape("decode_m128")), small);
        assert_eq!(small, SMALL_M_SPEC);
        // Swap-AB's token tile: the smallest n-size that holds M, 128-token tiles past it.
        assert!(swap_ab_spec(1).contains("bn=8,"));
        assert!(swap_ab_spec(9).contains("bn=16,"));
        assert!(swap_ab_spec(64).contains("bn=64,"));
        assert!(swap_ab_spec(777).contains("bn=128,"));
        for s in [
            "decode_m1",
            "decode_m16",
            "decode_m128",
            "tokens_777",
            "square1000",
        ] {
            let s = shape(s);
            parse_spec(&swap_ab_spec(s.m))
                .unwrap()
                .validate_shape(&s)
                .unwrap_or_else(|e| panic!("swap-AB on {}: {e}", s.name));
        }
        // M = 256: 32-40 cluster tiles for 66 clusters, or 112.
        for s in ["decode_attn_out", "decode_qkv", "decode_mlp_down"] {
            assert_eq!(pick(&shape(s)), "rung10:streamk=1,bn=128,stages=6", "{s}");
        }
        assert_eq!(pick(&shape("decode_mlp_up")), "rung10:streamk=1");
        assert_eq!(pick(&Shape::new("t", 777, 8192, 8192)), "rung10:streamk=1");
        // N = 28672: 448 cluster tiles.
        assert_eq!(pick(&shape("tokens_777")), "rung10");
        for s in ["square4096", "prefill_attn_out", "prefill_mlp_up", "long_k"] {
            assert_eq!(pick(&shape(s)), "rung10", "{s}");
        }
        // Every choice is a valid configuration for every shape it can be given.
        for s in [
            shape("decode_m1"),
            shape("tokens_777"),
            shape("prefill_1500"),
            shape("square1000"),
        ] {
            let (label, config) = auto_variant(&s, H200_SMS);
            config
                .validate_shape(&s)
                .unwrap_or_else(|e| panic!("{label} on {}: {e}", s.name));
        }
    }
}
