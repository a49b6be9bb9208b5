//! `auto`: the variant the project runs for a shape, chosen by a small rule over the shape's tile counts. The rule
//! comes from paired measurements on the H200 (session of 2026-11-30, `results/h200/<commit>/explore/`), not from
//! a search at run time, so the same shape always runs the same kernel and every record names it.
//!
//! - M <= 128 (decode with few tokens): one consumer warpgroup on 64x256 tiles, no cluster, stream-K over every
//!   tile: the weights are streamed once by every SM, and no MMA rows are spent on an empty half cluster. Measured
//!   against rung 10 with stream-K and a 2x1 cluster at M = 1, 64, 128: 0.69-0.83x its time.
//! - fewer cluster tiles (256x256) than two waves of the SMs' clusters: rung 10 with stream-K over every tile.
//!   Measured against rung 10 on the four decode shapes (M = 256): 0.61-0.90x its time.
//! - otherwise rung 10 (whole tiles; stream-K on the last waves measured slower: H15 in ablations/HYPOTHESES.md).
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
            "rung10:streamk=1,cluster=1,consumers=1,wg_m=64",
            "M <= 128: 64x256 tiles, stream-K over every tile",
        )
    } else if cluster_tiles < 2 * clusters {
        (
            "rung10:streamk=1",
            "fewer tiles than two waves: stream-K over every tile",
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

/// The H200's SM count: `auto` resolved before a GPU is opened (trial lists, spec checks) assumes it.
pub const H200_SMS: u32 = 132;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::problem::{shape, Shape};

    #[test]
    fn auto_picks_by_token_count_and_tile_waves() {
        let pick = |s: &Shape| auto_spec(s, H200_SMS).0;
        assert_eq!(
            pick(&shape("decode_m1")),
            "rung10:streamk=1,cluster=1,consumers=1,wg_m=64"
        );
        assert_eq!(
            pick(&shape("decode_m128")),
            "rung10:streamk=1,cluster=1,consumers=1,wg_m=64"
        );
        // M = 256: 32-112 cluster tiles for 66 clusters.
        for s in [
            "decode_attn_out",
            "decode_qkv",
            "decode_mlp_up",
            "decode_mlp_down",
        ] {
            assert_eq!(pick(&shape(s)), "rung10:streamk=1", "{s}");
        }
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
