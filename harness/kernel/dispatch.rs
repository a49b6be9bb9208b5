//! `auto`: the variant the project runs for a shape, chosen by a small rule over the token count and the tile
//! count. The rule comes from paired measurements against cuBLAS on the H200 (`compare SHAPE cublas ...`; sweeps
//! in tools/sweeps/, their records under results/h200/<commit>/), not from a search at run time, so a shape always
//! runs the same kernel and every record names it (`auto=SPEC`). Time against cuBLAS's, as measured:
//!
//! - M <= 96 with the weights in one wave of 64-row tiles that fills under 90% of the SMs (N = 1024-7600 on 132
//!   SMs): swap-AB with stream-K over 64-row weight tiles (every SM streams weights), one consumer, no cluster, the
//!   token tile M rounded up to 16 (8 up to M = 8), evict-first, PDL, 8 stages (H35-H37): 0.998, 0.989, 0.975, 1.08,
//!   1.06, 1.01 of cuBLAS's time at M = 1, 8, 32, 64, 80, 96 with N = 4096, against 1.25-1.41 with whole tiles on
//!   64 CTAs; 1.09 and 1.15 at M = 64 and 96 with N = 6144, 1.32 at 16x1024 (whole tiles 2.06)
//!   (results/h200/65530ed/h34-h35/, d280913/h36-refit/, 7baa087/h37-refit/). Past M = 96 whole tiles (next rule)
//!   up to M = 160 at any fill: 0.99 at 112 and 144 x 4096, 1.08 at 128x4096; past 160 the weights-shared form
//!   where K <= 4096 (below), else the two-consumer stream-K kernel (1.10 at 176x4096 against 1.27).
//! - M <= 192 with the weights in one wave of 64-row tiles (N <= 64 x SMs, as N = 8192 on 132 SMs): swap-AB (the
//!   weights fill wgmma's 64-row side, the tokens its n) with the token tile M rounded up to 16, one consumer of 64
//!   weight rows, whole tiles, an evict-first policy on the weights, programmatic dependent launch, 8 stages (7 at
//!   192 tokens). Up to M = 96 on 2-CTA clusters multicasting the tokens: 1.00 at M = 1, 1.03 at 8, 1.01 at 16,
//!   1.00 at 32, 1.01 at 48, 1.03 at 64, 1.04 at 80 and 96, against 1.06-1.16 for the kernels `auto` ran before
//!   (below; ablations/HYPOTHESES.md H25; results/h200/35f8a86/auto-small-m/, results/h200/ee42796/auto-after-h26/).
//!   Past M = 96 without the cluster: 1.01 at M = 128 and 1.08 at 192, against 1.13 and 1.20 with it
//!   (tools/sweeps/ring-and-512.txt, results/h200/347b0c9/ring-and-512/; 1.18 and 1.28 before H25/H26). Since H89
//!   without the cluster at every M: paired against the same kernel on the pair, 0.963, 0.981, 0.948, 0.982, 0.982,
//!   0.982, 0.967, 0.958 of its time at M = 1, 8, 16, 32, 48, 64, 80, 96 (results/h200/697fd3a/h89-cluster-over-m/).
//! - With more weight rows than that (the MLP's N = 28672), as before H25:
//! - M <= 32: swap-AB with stream-K over every tile, no cluster, 128 weight rows a CTA, an evict-first policy on the
//!   weights, 4 stages (two CTAs' rings fit an SM, so the next launch's CTAs are resident before this one ends),
//!   PDL: 1.06 at M = 1 (N = 8192), against 1.20 for the 64x128 kernel below without them
//!   (tools/sweeps/small-m-pdl.txt, results/h200/88c50c9/pdl/; results/h200/0af4cf4/explore/).
//! - M <= 64: one consumer warpgroup on 64x128 tiles, no cluster, 8 stages, stream-K over every tile, evict-first,
//!   PDL: 1.077 at M = 64 (swap-AB measured 1.09-1.11 there).
//! - M <= 96: swap-AB with 96-token tiles, 7 stages, evict-first, PDL: 1.14 at M = 96, against 1.20 with
//!   128-token tiles (tools/sweeps/token-tiles-2.txt, results/h200/e86dfb1/).
//! - M <= 192: the token tile M rounded up to 16 on two consumers of 64 weight rows, tokens multicast, stream-K.
//! - 192 < M <= 240 where two token tiles of 128-row weight tiles fill 90-100% of the SMs in one wave (N = 8192 on
//!   132 SMs): the weights-shared form (`weights_shared_kernel`, H44, H46, H47): swap-AB whole tiles of 128 weight
//!   rows in two consumers of 64, the tokens in two tiles of M / 2 rounded up to 8, 2-CTA clusters along the token
//!   tiles that share the weight tile (`multicast=a`: it crosses L2 once per cluster), evict-first, PDL. Paired
//!   against what `auto` ran before (the split token tile below M = 225, cuBLAS's tiling past it): 0.965 at 196,
//!   0.984 and 0.983 at 200 and 208 (no change), 0.951 at 216, 0.946 at 224, 0.966 at 232, 0.957 at 236 and 240,
//!   0.930 at 216x8192x28672; against cuBLAS 1.105, 1.045, 1.063, 0.960, 1.035, 1.018, 1.023 at M = 200, 208, 216,
//!   224, 232, 236, 240 (results/h200/cf3b52f/h44-multicast-a/, cf3b52f/h46-weights-shared/,
//!   1442f58/h47-out-of-sample/, c810a3f/auto-after-h47/). Not at M <= 192 with N = 8192, where `auto`'s one consumer
//!   over the whole token tile was 9-30% faster (H46(b)), nor at M = 256 (no change, H46(c)).
//! - 160 < M <= 192 with K <= 4096 where four token tiles of 128-row weight tiles fill 90-100% of the SMs
//!   (N = 4096): the same form with four token tiles (M / 4 rounded up to 8, 128 CTAs): 0.899, 0.895, 0.843, 0.841
//!   against two-consumer stream-K at M = 168, 176, 184, 192 (K = 4096), 1.08-1.15 of cuBLAS's time against
//!   1.23-1.35. At K = 8192 and 14336 it was 1.18 and 1.48 *slower* (H47, refuted there: stream-K's fix-up is
//!   amortized over the longer K), so the rule stops at K = 4096 (fitted to that refutation; the boundary between
//!   4096 and 8192 is not located).
//! - 224 < M <= 256 where one wave of 256x128 cluster tiles fills at least 95% of the clusters (N = 8192 on 132
//!   SMs: decode_attn_out, decode_mlp_down): cuBLAS's own tiling, whole 128x128 tiles on 2x1 clusters, 6 stages,
//!   evict-first, PDL (`WHOLE_DECODE_SPEC`, H31): 1.018 on decode_attn_out, 1.026 on decode_mlp_down, 1.068 at
//!   M = 240, against 1.101, 1.032 and 1.112 for the kernels below (results/h200/869f58b/decode-whole/). Not at
//!   M <= 192 (1.30 against 1.07) nor on decode_qkv (80 tiles: 1.57 against 1.04).
//! - M <= 256 and fewer 256x256 cluster tiles than clusters (decode_qkv; decode_attn_out and decode_mlp_down before H31): rung 10
//!   with 128-wide tiles, 6 stages, stream-K over every tile, evict-first, PDL: 1.10 on decode_attn_out (swap-AB
//!   with 224- and 256-token tiles measured 1.00 and 1.16-1.23 against 0.99 and 1.10).
//! - M > 256 where splitting the tokens into T tiles of M / T (rounded up to 16) wastes less than 256-row tiles:
//!   swap-AB with that token tile, two consumers of 64 weight rows, 2-CTA clusters multicasting the tokens, whole
//!   tiles, PDL (no evict-first: the weights are read once per token tile). T is the split with the least waves of
//!   cluster tiles times tile cost (`token_split`), taken when that is at least 10% under rung 10's: 1.04 at
//!   M = 320, 1.03 at 384, 0.92 at 448, 1.06 at 640, 1.08 at 777, 1.05 at 896, 1.14 on tokens_777, against 1.35,
//!   1.13, 1.10, 1.26, 1.30, 1.18 and 1.31 (H26; results/h200/6b2f830/token-split/,
//!   results/h200/ee42796/auto-after-h26/). At M = 1000 the split saves nothing (1.03 either way) and rung 10 stays.
//!   Where T is even and M / T rounded up to 8 pads less than rounded up to 16 (tokens_777: 4 x 200 against
//!   4 x 208; 1100: 6 x 184 against 6 x 192; 1280: 6 x 216 against 6 x 224), the clusters share the weight tile
//!   instead (`multicast=a`) and the tiles are rounded up to 8 (`token_split_kernel`, H54, H55): 0.962, 0.959 and
//!   0.965 of the kernel before at those three (results/h200/62a0efe/h54-token-tiles-of-8/). Rounding to 8 without
//!   a cluster measured no change, and the tokens-shared tiles without their cluster 4.6% slower: sharing either
//!   tile is worth about the same, so the gain is the padding.
//!   Where 256-row weight tiles (two consumers of 128) of 96-128 tokens, M / T rounded up to 16, take at most 0.97
//!   of the split's waves of CTA tiles times tile area (`wide_weights_split`; no fixed cost a tile), `auto` runs
//!   them instead, the token tile shared by 2-CTA clusters along the weights: cuBLAS's own form on tokens_777
//!   (Nsight Compute, cfb0bff). 0.960 of the split's time on tokens_777, 1.123 at 777x8192 (H61, the model 0.96 and
//!   1.12; results/h200/21d2e6f/h61-cublas-777-tiling/); out of that sample 0.931-0.979 at eight points with
//!   N = 8192-57344, each within 3% of the model (H62, results/h200/df0bbad/h62-wide-weights/).
//! - between two and three waves of cluster tiles, more than 10% of their slots idle, and no token split that pays
//!   (1000x10240, 768x14336): rung 10 with stream-K on the last partial wave plus one (`streamk=2`): 1.03 and 1.04
//!   against 1.19 and 1.16 with whole tiles (H29, results/h200/c52a6c7/auto-h29/). Where the token split pays it
//!   stays: `streamk=2` was 1.13 against its 1.05 at M = 1152, 1.18 against 1.09 at 1100, 1.14 against 1.10 at
//!   800x10240 (H30, refuted), though 1.02 against 1.08 at 1280.
//! - under two waves of cluster tiles filling less than 95% of the slots (decode_mlp_up; 768x10240): rung 10 with
//!   stream-K over every tile, plus evict-first and PDL where one tile row holds every token (M <= 256: the
//!   weights are read once): 0.89 on decode_mlp_up, 0.97 at 768x10240 (whole tiles 1.00).
//! - where rung 10 would run whole tiles (the next rule), a token split whose modelled cost is at most 95% of rung
//!   10's (H32, H34, H36): 240-token tiles at M = 480, 960, 1440, 1920, 2400, 3840, 4800, 7920 with N = 8192 ran
//!   1.03, 1.04, 1.03, 1.02, 1.02, 1.03, 0.96, 1.03 against rung 10's 1.07, 1.08, 1.06, 1.05, 1.06, 1.06, 0.99,
//!   1.05; faster by 2-9% at all 17 such points measured on five widths (results/h200/6060352/h32-h33/,
//!   65530ed/h34-h35/, d280913/h36-refit/). Against stream-K it lost (720x10240, 720x14336, 7000x1024: H34), so
//!   the stream-K rules above keep the 10% threshold.
//! - where whole tiles would run (the next rule) and H100's model of `streamk=3` gives 1.5% or more (the last
//!   wave's idle share of the cluster slots, less a 16 us hand-off over rung 10's time at 650 TFLOP/s;
//!   `streamk_in_step_gain`): rung 10 with stream-K on the last waves, the clusters walking k in step. Measured
//!   against whole tiles: 0.977 on prefill_attn_out (H95, 9e055dd), 0.980 at 6144x8192x8192, 0.975 at
//!   8192x8192x16384, 0.978 at 10240x8192x8192 (H100, results/h200/fa65945/h100-streamk-model/); at the four
//!   shapes of H100 where the model says less (0.5-1.1%) it measured 0.7-1.6%, inside the suite's band.
//! - otherwise rung 10 with whole tiles: where one or two waves are at least 95% full (M = 480-512 and 897-1024 at
//!   N = 8192, 960 and 2048 at N = 4096): 1.06, 1.01, 1.00, 1.01, 1.00 against 1.15, 1.09, 1.03, 1.10, 1.04 with
//!   stream-K over every tile (H29, H30); and at three waves or more (stream-K on the last waves measured slower
//!   at 3.9 waves, H15 in ablations/HYPOTHESES.md).
//!
//! - every swap-AB kernel above stores through the transposed epilogue (`swap_store=pairs`, H39, H40): paired
//!   against the same kernel with the element stores, 0.980-0.991 at M = 176-1280 and on tokens_480 and tokens_777
//!   with N = 8192, 0.973 at 176x4096, 0.994-1.002 at M = 1 and 64 and at M = 288 and 352: never slower
//!   (results/h200/36011d7/h40-pairs-paired/, results/h200/393d4ef/h41-h40-rest/).
//! - every swap-AB kernel above advances its consumers' wgmma descriptors instead of rebuilding them
//!   (`desc_advance=1`, H64): 0.929 at M = 200, 0.912 at 192, no change at M = 1 and on tokens_777
//!   (results/h200/3c8fceb/h64-desc-advance/); against cuBLAS M = 192 went from 1.055 to 0.960 and M = 200 from
//!   1.087 to 1.022 (results/h200/2cdc39c/auto-after-h64/). Rung 10's tiles and the decode kernels measured no
//!   change with it and run as before.
//!
//! Measured and not taken (ablations/HYPOTHESES.md H68-H72): four CTAs sharing the weight tile at M = 256
//! (`cluster=4`: 2.0x slower on decode_attn_out, where only 30 of its 32 clusters are resident, 1.08 where all
//! fit); 128 weight rows with stream-K at M = 64-128 (1.09-1.18). At M = 256 the whole decode_attn_out kernel takes
//! the cycles of its MMAs alone, the tensor pipe 87.6% busy against cuBLAS's 88.9% (H71); at M = 128 its loads alone
//! take its whole time (H72).
//!
//! Only the project's kernels: cuBLAS is what `auto` is measured against, never what it falls back to. The rules
//! `auto` followed before (which the trials written then still measure against) are kept apart, in
//! frozen_rules.rs.

use crate::kernel::config::GemmConfig;
use crate::kernel::ladder::parse_spec;
use crate::kernel::problem::{DType, Scales, Shape};

/// The smallest wgmma n-size of swap-AB's token tile that holds M tokens (128-token tiles past 128).
pub(crate) fn token_tile(m: usize) -> usize {
    [8usize, 16, 32, 64, 128]
        .into_iter()
        .find(|&n| n >= m)
        .unwrap_or(128)
}

/// Swap-AB with stream-K over every tile and no cluster: `consumers` warpgroups sharing 128 weight rows a tile,
/// `bn` tokens a tile, `stages` ring positions, the transposed direct epilogue.
pub(crate) fn swap_ab_kernel(consumers: u32, bn: usize, stages: u32) -> String {
    format!(
        "rung10:streamk=1,cluster=1,consumers={consumers},wg_m={},bn={bn},stages={stages},epilogue=direct,stmatrix=0,swap_ab=1",
        128 / consumers
    )
}

/// The spec `auto` runs for this shape on a GPU with this many SMs, and the rule that chose it.
pub fn auto_spec(shape: &Shape, sm_count: u32) -> (String, &'static str) {
    let (spec, rule) = rule_by_shape(shape, sm_count, TokenCluster::Never);
    (with_desc_advance(&with_pair_stores(&spec)), rule)
}

/// A swap-AB spec with the consumers' descriptors advanced instead of rebuilt (H64: 7-9% faster at M = 192 and
/// 200, where the token tile makes short wgmmas; no change on tokens_777 and at M = 1); any other spec unchanged
/// (no change measured on rung 10's tiles at 4096-cubed and on the decode kernels, whose trials keep their pins).
pub(crate) fn with_desc_advance(spec: &str) -> String {
    if spec.contains("swap_ab=1") {
        format!("{spec},desc_advance=1")
    } else {
        spec.to_string()
    }
}

/// A swap-AB spec with the direct epilogue made to store through the in-register transpose (H40: never slower
/// than the element stores, 1-2.7% faster with token tiles of 176 columns or more); any other spec unchanged.
pub(crate) fn with_pair_stores(spec: &str) -> String {
    if spec.contains("swap_ab=1") && spec.contains("epilogue=direct") {
        format!("{spec},swap_store=pairs")
    } else {
        spec.to_string()
    }
}

/// Whether the swap-AB whole tiles of 64 weight rows multicast the tokens over 2-CTA clusters at M <= 96 (H25's
/// choice), or never (H89: without the cluster 1.8-5.2% faster at every M from 1 to 96, never slower).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum TokenCluster {
    UpToM96,
    Never,
}

/// The rule by shape, before the store path and descriptor advance are chosen (`auto_spec`).
pub(crate) fn rule_by_shape(
    shape: &Shape,
    sm_count: u32,
    token_cluster: TokenCluster,
) -> (String, &'static str) {
    let clusters = (sm_count / 2).max(1) as usize;
    let cluster_tiles = shape.m.div_ceil(256) * shape.n.div_ceil(256);
    // The token split that saves 10% against rung 10's modelled cost (taken ahead of stream-K), if any.
    let split_90 = token_split(shape, clusters, 90);
    // 64-row weight tiles in one wave, and the share of the SMs they fill.
    let weight_rows_64 = shape.n.div_ceil(64);
    let fill_64 = weight_rows_64 as f64 / sm_count as f64;
    let one_wave_64 = weight_rows_64 <= sm_count as usize;
    if one_wave_64 && shape.m <= 96 && fill_64 < 0.9 {
        // Whole tiles would leave SMs idle (N = 4096: 64 of 132); stream-K spreads the weights over every SM
        // (H35, H36).
        let bn = if shape.m <= 8 {
            8
        } else {
            shape.m.next_multiple_of(16)
        };
        (
            deepest_ring(&format!(
                "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn={bn},epilogue=direct,stmatrix=0,swap_ab=1,evict_first=1,pdl=1"
            )),
            "M <= 96, 64-row weight tiles filling under 90% of the SMs: swap-AB, stream-K over 64-row tiles, token tile M rounded up to 16 (8 up to M = 8), evict-first weights, PDL",
        )
    } else if one_wave_64 && (shape.m <= 192 && fill_64 >= 0.9 || shape.m <= 160) {
        // The token tile is M rounded up to 16: with H25's cluster each CTA loaded half of it, a whole 8-row
        // swizzle atom; alone, an 8-row box at M = 1 gained less than the 16-row one (H88(b)).
        let bn = shape.m.next_multiple_of(16);
        let (cluster, rule) = if shape.m <= 96 && token_cluster == TokenCluster::UpToM96 {
            (2, "M <= 96, the weights in one wave of 64-row tiles filling at least 90% of the SMs: swap-AB, token tile M rounded up to 16, 64 weight rows a CTA, tokens multicast, whole tiles, evict-first weights, PDL")
        } else if shape.m <= 96 {
            (1, "M <= 96, the weights in one wave of 64-row tiles filling at least 90% of the SMs: swap-AB, token tile M rounded up to 16, 64 weight rows a CTA, no cluster (H89), whole tiles, evict-first weights, PDL")
        } else {
            (1, "96 < M <= 192, the weights in one wave of 64-row tiles (up to M = 160 where they fill under 90% of the SMs): swap-AB, token tile M rounded up to 16, 64 weight rows a CTA, no cluster, whole tiles, evict-first weights, PDL")
        };
        (
            deepest_ring(&format!(
                "{},evict_first=1,pdl=1",
                swap_ab_whole_kernel(cluster, 1, bn)
            )),
            rule,
        )
    } else if shape.m <= 32 {
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
    } else if shape.m > 160
        && shape.m <= 192
        && shape.k <= 4096
        && weights_shared_fits(shape, 4, sm_count)
    {
        // Only up to K = 4096: at K = 8192 and 14336 stream-K's fix-up is amortized and it won by 18% and 48%
        // (H47, refuted there).
        (
            weights_shared_kernel(shape, 4),
            "160 < M <= 192 and K <= 4096, four token tiles of 128 weight rows filling 90-100% of the SMs (N = 4096): swap-AB, the weight tile shared by 2-CTA clusters along the token tiles, M / 4 tokens a tile rounded up to 8, whole tiles, evict-first weights, PDL",
        )
    } else if shape.m <= 192 {
        let bn = shape.m.next_multiple_of(16);
        (
            deepest_ring(&format!(
                "{},streamk=1,evict_first=1,pdl=1",
                swap_ab_whole_kernel(2, 2, bn)
            )),
            "96 < M <= 192: swap-AB, token tile M rounded up to 16, 128 weight rows a CTA, tokens multicast, stream-K, evict-first weights, PDL",
        )
    } else if shape.m > 192 && shape.m <= 240 && weights_shared_fits(shape, 2, sm_count) {
        (
            weights_shared_kernel(shape, 2),
            "192 < M <= 240, two token tiles of 128 weight rows filling 90-100% of the SMs (N = 8192): swap-AB, the weight tile shared by 2-CTA clusters along the token tiles, M / 2 tokens a tile rounded up to 8, whole tiles, evict-first weights, PDL",
        )
    } else if shape.m > 224
        && shape.m <= 256
        && waves(shape.n.div_ceil(128), clusters) == 1
        && wave_fill(shape.n.div_ceil(128), clusters) >= 0.95
    {
        (
            format!("{WHOLE_DECODE_SPEC},evict_first=1,pdl=1"),
            "224 < M <= 256, one wave of 256x128 cluster tiles at least 95% full: cuBLAS's tiling, whole 128x128 tiles on 2x1 clusters, evict-first weights, PDL",
        )
    } else if shape.m <= 256 && cluster_tiles < clusters {
        (
            format!("{DECODE_SPEC},evict_first=1,pdl=1"),
            "M <= 256, under one wave of tiles: 128-wide tiles, stream-K over every tile, evict-first weights, PDL",
        )
    } else if shape.m > 256
        && waves(cluster_tiles, clusters) == 3
        && wave_fill(cluster_tiles, clusters) < 0.9
        && split_90.is_none()
    {
        (
            "rung10:streamk=2".to_string(),
            "between two and three waves of tiles, more than 10% of the slots idle, no token split that pays: whole tiles, then stream-K on the last partial wave plus one",
        )
    } else if let Some(bn) = split_90 {
        token_split_kernel(
            shape,
            bn,
            sm_count,
            "M > 256, split into token tiles that waste less than 256-row tiles: swap-AB, tokens multicast, whole tiles, PDL",
        )
    } else if cluster_tiles < 2 * clusters && shape.m <= 256 {
        (
            "rung10:streamk=1,evict_first=1,pdl=1".to_string(),
            "M <= 256, under two waves of tiles: stream-K over every tile, evict-first weights, PDL",
        )
    } else if cluster_tiles < 2 * clusters && wave_fill(cluster_tiles, clusters) < 0.95 {
        (
            "rung10:streamk=1".to_string(),
            "under two waves of tiles, more than 5% of their slots idle: stream-K over every tile",
        )
    } else if let Some(bn) = token_split(shape, clusters, 95) {
        // Where rung 10 would run whole tiles, a split saving 5% pays too (H32, H34, H36); against stream-K it
        // did not (H34).
        token_split_kernel(
            shape,
            bn,
            sm_count,
            "M > 256, where whole tiles would run: token tiles that waste 5% less than 256-row tiles: swap-AB, tokens multicast, whole tiles, PDL",
        )
    } else if streamk_in_step_gain(shape, clusters) >= 0.015 {
        (
            "rung10:streamk=3".to_string(),
            "whole tiles would leave the last wave's idle share worth 1.5% or more after stream-K's hand-off (H100's model): whole tiles, then stream-K on the last waves with the clusters walking k in step",
        )
    } else {
        (
            "rung10".to_string(),
            "whole tiles: one or two waves at least 95% filled, or more waves",
        )
    }
}

/// The share of rung 10's time that stream-K on the last waves with the clusters in step (`streamk=3`) saves, by
/// H100's model fitted to H95's four shapes: the last wave's idle share of the cluster slots, less a hand-off of
/// 16 us a launch (the fit's upper end: 12-16 us) over rung 10's time taken at 650 TFLOP/s. Out of sample it was
/// within 0.15 points of its 12-16 us range at all seven shapes of H100 (results/h200/fa65945/h100-streamk-model/);
/// the 16 us end keeps `auto` off the shapes where the gain could sit under the 1.5% that pays for a new kernel.
fn streamk_in_step_gain(shape: &Shape, clusters: usize) -> f64 {
    const HANDOFF_S: f64 = 16e-6;
    const RUNG10_FLOPS: f64 = 650e12;
    let tiles = shape.m.div_ceil(256) * shape.n.div_ceil(256);
    let idle = 1.0 - wave_fill(tiles, clusters);
    let rung10_s = 2.0 * (shape.m * shape.n * shape.k) as f64 / RUNG10_FLOPS;
    idle - HANDOFF_S / rung10_s
}

/// Waves of `tiles` on `clusters` (a partial last one counted).
fn waves(tiles: usize, clusters: usize) -> usize {
    tiles.div_ceil(clusters)
}

/// The share of the waves' cluster slots that hold a tile.
fn wave_fill(tiles: usize, clusters: usize) -> f64 {
    tiles as f64 / (waves(tiles, clusters) * clusters) as f64
}

/// Swap-AB with whole tiles on `cluster` CTAs along the weights (with 2, the token tile multicast to both):
/// `consumers` warpgroups of 64 weight rows each, `bn` tokens a tile, the transposed direct epilogue; the ring depth
/// is left to `deepest_ring`.
fn swap_ab_whole_kernel(cluster: u32, consumers: u32, bn: usize) -> String {
    format!(
        "rung10:cluster={cluster},consumers={consumers},wg_m=64,bn={bn},epilogue=direct,stmatrix=0,swap_ab=1"
    )
}

/// The kernel for a token split into tiles of `bn` tokens (M / T rounded up to 16, so that each CTA of a 2-CTA
/// cluster loads a whole-atom half of the shared token tile), described by `rule`. Where T is even and M / T
/// rounded up to 8 pads less, the clusters share the weight tile instead, whose tiles may be any multiple of 8
/// (H54: 3.5-4.1% faster at tokens_777, 1100 and 1280 x 8192; sharing either tile is worth about the same, so
/// the gain is the padding; H55 the rule).
fn token_split_kernel(
    shape: &Shape,
    bn: usize,
    sm_count: u32,
    rule: &'static str,
) -> (String, &'static str) {
    let token_tiles = shape.m.div_ceil(bn);
    let bn_8 = shape.m.div_ceil(token_tiles).next_multiple_of(8);
    let weights_shared = token_tiles.is_multiple_of(2) && bn_8 < bn;
    let width = if weights_shared { bn_8 } else { bn };
    if let Some(wide_bn) = wide_weights_split(shape, width, sm_count) {
        return (
            deepest_ring(&format!(
                "rung10:cluster=2,consumers=2,wg_m=128,bn={wide_bn},epilogue=direct,stmatrix=0,swap_ab=1,pdl=1"
            )),
            "M > 256, a token split where 256-row weight tiles with 96-128 tokens (rounded up to 16) take at most 0.97 of its waves x tile area: cuBLAS's tokens_777 form, two consumers of 128 weight rows, the token tile shared by 2-CTA clusters along the weights, whole tiles, PDL (H61, H62)",
        );
    }
    if weights_shared {
        (
            deepest_ring(&format!(
                "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn={bn_8},epilogue=direct,stmatrix=0,swap_ab=1,pdl=1"
            )),
            "M > 256, split into an even number of token tiles that pad less rounded up to 8 than to 16: swap-AB, the weight tile shared by 2-CTA clusters along the token tiles, M / T tokens a tile rounded up to 8, whole tiles, PDL (H54, H55)",
        )
    } else {
        (
            deepest_ring(&format!("{},pdl=1", swap_ab_whole_kernel(2, 2, bn))),
            rule,
        )
    }
}

/// For a token split into tiles of `width` tokens on 128-row weight tiles: the token tile of 96-128 tokens (M / T
/// rounded up to 16, so that each CTA of the cluster loads a whole-atom half) on 256-row weight tiles whose waves
/// (of CTAs on `sm_count` SMs) times tile area is least, if that is at most 0.97 of the split's. No fixed cost a
/// tile: with none, this model gives 0.96 on tokens_777 and 1.12 at 777x8192x8192, where the form measured 0.960
/// and 1.123 against the split (H61); the 96-token floor keeps it off the short wgmmas that H58-H60 found slow.
fn wide_weights_split(shape: &Shape, width: usize, sm_count: u32) -> Option<usize> {
    let area = |weight_rows: usize, tokens: usize| {
        let tiles = shape.m.div_ceil(tokens) * shape.n.div_ceil(weight_rows);
        tiles.div_ceil(sm_count as usize) * weight_rows * tokens
    };
    let split = area(128, width);
    let first = shape.m.div_ceil(128);
    let (wide, bn) = (first..first + 4)
        .map(|t| shape.m.div_ceil(t).next_multiple_of(16))
        .filter(|bn| (96..=128).contains(bn))
        .map(|bn| (area(256, bn), bn))
        .min_by_key(|&(cost, _)| cost)?;
    (wide * 100 <= split * 97).then_some(bn)
}

/// Whether `token_tiles` token tiles of 128-row weight tiles make one wave that fills 90-100% of the SMs: where the
/// weights-shared form runs (H44, H46, H47).
fn weights_shared_fits(shape: &Shape, token_tiles: usize, sm_count: u32) -> bool {
    let ctas = token_tiles * shape.n.div_ceil(128);
    ctas <= sm_count as usize && wave_fill(ctas, sm_count as usize) >= 0.9
}

/// Swap-AB whole tiles of 128 weight rows (two consumers of 64), the tokens cut into `token_tiles` tiles of M / T
/// rounded up to 8, 2-CTA clusters along the token tiles that share the weight tile (`multicast=a`): each weight
/// tile crosses L2 once per cluster instead of once per CTA. Evict-first (no change either way, H46(a)), PDL.
fn weights_shared_kernel(shape: &Shape, token_tiles: usize) -> String {
    let bn = shape.m.div_ceil(token_tiles).next_multiple_of(8);
    deepest_ring(&format!(
        "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn={bn},epilogue=direct,stmatrix=0,swap_ab=1,evict_first=1,pdl=1"
    ))
}

/// The spec with the most ring stages (up to 8) whose shared memory fits a CTA.
fn deepest_ring(spec: &str) -> String {
    (2..=8u32)
        .rev()
        .map(|stages| format!("{spec},stages={stages}"))
        .find(|s| parse_spec(s).is_ok_and(|c| c.validate().is_ok()))
        .expect("two stages of any swap-AB tile fit")
}

/// For M > 256: the token tile of the split into T tiles (T from ceil(M / 256) to 3 more, M / T rounded up to 16)
/// whose waves of 256-weight-row cluster tiles times tile cost is least, if that is at most `percent_of_rung10` of rung 10's
/// 256x256 cluster tiles. A tile's cost is taken as its width plus 32 rows for what every tile pays whatever its
/// width (filling the ring, the epilogue): a model, checked at the token counts the module notes list. None:
/// rung 10 wastes no more.
fn token_split(shape: &Shape, clusters: usize, percent_of_rung10: usize) -> Option<usize> {
    const FIXED_ROWS: usize = 32;
    if shape.m <= 256 {
        return None;
    }
    let weight_tiles = shape.n.div_ceil(256);
    let cost = |token_tiles: usize, width: usize| {
        (token_tiles * weight_tiles).div_ceil(clusters) * (width + FIXED_ROWS)
    };
    let first = shape.m.div_ceil(256);
    let rung10 = cost(first, 256);
    let (best, bn) = (first..first + 4)
        .map(|t| {
            let bn = shape.m.div_ceil(t).next_multiple_of(16);
            (cost(t, bn), bn)
        })
        .min_by_key(|&(cost, _)| cost)?; // on a tie, the fewer, wider tiles
    (best * 100 <= rung10 * percent_of_rung10).then_some(bn)
}

/// Every kernel `auto` picks on a GPU with this many SMs for some token count up to 8192 on the model widths a
/// server runs (N = 1024 to 57344, K = 8192) with operands of `dtype`: the list the CPU tests compile, so a rule
/// change cannot hand a user a kernel that does not build or spills.
pub fn auto_kernels_for(sm_count: u32, dtype: DType) -> Vec<(String, GemmConfig)> {
    let mut specs: Vec<String> = Vec::new();
    for n in [1024, 4096, 8192, 10240, 14336, 28672, 57344] {
        for m in 1..=8192 {
            let spec = auto_spec_for(&Shape::new("auto", m, n, 8192), sm_count, dtype).0;
            if !specs.contains(&spec) {
                specs.push(spec);
            }
        }
    }
    specs.into_iter().map(labelled).collect()
}

/// `auto_kernels_for` in fp16 (bf16 picks the same kernels).
pub fn auto_kernels(sm_count: u32) -> Vec<(String, GemmConfig)> {
    auto_kernels_for(sm_count, DType::F16)
}

/// `auto`'s picks for every token count from 1 to `max_m` at this N and K with operands of `dtype`, as runs of
/// consecutive M with the same kernel: (first M, last M, spec, rule). What `gemm-ablate auto --ranges NxK` prints,
/// and how a rule change is checked for the token counts it moves.
pub fn auto_ranges(
    n: usize,
    k: usize,
    sm_count: u32,
    max_m: usize,
    dtype: DType,
) -> Vec<(usize, usize, String, &'static str)> {
    let mut ranges: Vec<(usize, usize, String, &'static str)> = Vec::new();
    for m in 1..=max_m {
        let (spec, rule) = auto_spec_for(&Shape::new("auto", m, n, k), sm_count, dtype);
        match ranges.last_mut() {
            Some(last) if last.2 == spec && last.3 == rule => last.1 = m,
            _ => ranges.push((m, m, spec, rule)),
        }
    }
    ranges
}

/// `auto` for this shape: the label records carry (`auto=SPEC`) and the configuration.
pub fn auto_variant(shape: &Shape, sm_count: u32) -> (String, GemmConfig) {
    labelled(auto_spec(shape, sm_count).0)
}

/// The spec `auto` runs for this shape with operands of `dtype`, and its rule. In 16-bit, `auto_spec`. In FP8
/// (issue 40, not yet measured: H118 is its first hypothesis), the same kernel with k-blocks of 128 one-byte
/// elements, so that every stage holds the bytes the 16-bit kernel's does and the ring as many stages; under block
/// scales, whose promotion needs a second set of accumulators and the problem's own A and B, the top rung on
/// 128x128 tiles promoted every k-block, one B scale a warpgroup (H138: 0.70-0.76 of the time without, on an
/// H100, results/h100/4845290/), at any M.
pub fn auto_spec_for(shape: &Shape, sm_count: u32, dtype: DType) -> (String, &'static str) {
    match dtype.scales() {
        None => auto_spec(shape, sm_count),
        Some(Scales::Block) => (
            FP8_BLOCK_SPEC.to_string(),
            "FP8 with block scales: the top rung with 128x128 tiles, k-blocks of 128, promotion every k-block and one B scale a warpgroup",
        ),
        // H158, H161: unpromoted, the tensor core's FP8 sums pass or fail the check by the inputs drawn from
        // K = 16384 on; promoting costs 1.03-1.39x (not yet the rule), so the rule says it where it applies.
        Some(_) => (
            with_switch(&auto_spec(shape, sm_count).0, "tile_k=128"),
            if shape.k >= 16384 {
                "FP8: the 16-bit rule's kernel with k-blocks of 128 one-byte elements, unpromoted: at K >= 16384 its largest error passes or fails the check by the inputs drawn (H158); promote=4 holds it 20x inside at 1.12-1.35x the time on 128-wide tiles (H161), 1.03-1.39x on the swap-AB kernels from M = 1 to 128 (H162)"
            } else {
                "FP8: the 16-bit rule's kernel with k-blocks of 128 one-byte elements (a stage of the same bytes)"
            },
        ),
    }
}

/// `spec` with one more switch (`rung10` becomes `rung10:key=value`, `rung10:a=1` becomes `rung10:a=1,key=value`).
fn with_switch(spec: &str, switch: &str) -> String {
    if spec.contains(':') {
        format!("{spec},{switch}")
    } else {
        format!("{spec}:{switch}")
    }
}

/// `auto` for this shape and dtype: its label (`auto=SPEC`) and configuration.
pub fn auto_variant_for(shape: &Shape, sm_count: u32, dtype: DType) -> (String, GemmConfig) {
    labelled(auto_spec_for(shape, sm_count, dtype).0)
}

/// `auto`'s FP8 kernel under block scales.
pub const FP8_BLOCK_SPEC: &str = "rung10:tile_k=128,bn=128,promote=1,one_b_block=1";

/// One of `auto`'s specs as a variant: its label (`auto=SPEC`) and configuration.
pub(crate) fn labelled(spec: String) -> (String, GemmConfig) {
    let config = parse_spec(&spec).expect("auto's specs parse");
    (format!("auto={spec}"), config)
}

/// `auto`'s kernel for M <= 128 up to this session (64x128 tiles, stream-K): the baseline of the small-M trials
/// (H18-H21), named here so that those trials keep measuring the kernel their hypotheses were written about.
pub const SMALL_M_SPEC: &str = "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=128,stages=8";

/// `auto`'s kernel for 128 < M <= 256 under one wave of tiles (the decode shapes), named for the same reason.
pub const DECODE_SPEC: &str = "rung10:streamk=1,bn=128,stages=6";

/// cuBLAS's tiling at M = 256 (Nsight Compute, results/h200/2948404/profiles/): whole 128x128 tiles on 2x1
/// clusters, 6 stages; `auto` runs it with evict-first and PDL where one wave of them fills the SMs (H31).
pub const WHOLE_DECODE_SPEC: &str = "rung10:bn=128,stages=6";

/// The H200's SM count: `auto` resolved before a GPU is opened (trial lists, spec checks) assumes it.
pub const H200_SMS: u32 = 132;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::frozen_rules::*;
    use crate::kernel::problem::{shape, Shape};

    #[test]
    fn ranges_cover_every_token_count_once_in_order() {
        let r = auto_ranges(8192, 8192, H200_SMS, 8192, DType::F16);
        assert_eq!(r.first().unwrap().0, 1);
        assert_eq!(r.last().unwrap().1, 8192);
        assert!(r.windows(2).all(|w| w[1].0 == w[0].1 + 1));
        // Neighbouring ranges differ in kernel or rule; M = 480 runs 240-token tiles (H36).
        assert!(r.windows(2).all(|w| (&w[0].2, w[0].3) != (&w[1].2, w[1].3)));
        let at_480 = r.iter().find(|x| x.0 <= 480 && 480 <= x.1).unwrap();
        assert!(at_480.2.contains("bn=240,"));
    }

    #[test]
    fn every_swap_ab_kernel_auto_runs_stores_pairs() {
        for m in (1..=8192).step_by(7) {
            for n in [1024, 4096, 8192, 28672] {
                let s = Shape::new("t", m, n, 8192);
                let (spec, rule) = auto_spec_before_h64(&s, H200_SMS);
                let (before, rule_before) = auto_spec_element_stores(&s, H200_SMS);
                assert_eq!(rule, rule_before);
                if before.contains("swap_ab=1") {
                    assert_eq!(spec, format!("{before},swap_store=pairs"));
                    assert!(
                        parse_spec(&spec).is_ok_and(|c| c.validate().is_ok()),
                        "{spec}"
                    );
                } else {
                    assert_eq!(spec, before);
                }
            }
        }
    }

    #[test]
    fn auto_advances_descriptors_in_its_swap_ab_kernels_only() {
        for m in (1..=8192).step_by(7) {
            for n in [1024, 4096, 8192, 28672] {
                let s = Shape::new("t", m, n, 8192);
                let (spec, rule) = auto_spec_before_h89(&s, H200_SMS);
                let (before, rule_before) = auto_spec_before_h64(&s, H200_SMS);
                assert_eq!(rule, rule_before);
                if before.contains("swap_ab=1") {
                    assert_eq!(spec, format!("{before},desc_advance=1"));
                    assert!(
                        parse_spec(&spec).is_ok_and(|c| c.validate().is_ok() && c.desc_advance),
                        "{spec}"
                    );
                } else {
                    assert_eq!(spec, before);
                }
            }
        }
    }

    #[test]
    fn auto_drops_the_token_cluster_at_small_m_only() {
        let mut dropped = 0;
        for m in 1..=512 {
            for n in [1024, 4096, 7680, 8192, 8448, 10240, 28672] {
                let s = Shape::new("t", m, n, 8192);
                let (spec, rule) = auto_spec(&s, H200_SMS);
                let (before, rule_before) = auto_spec_before_h89(&s, H200_SMS);
                if spec == before {
                    assert_eq!(rule, rule_before);
                    continue;
                }
                // Only H25's token multicast on 64-row swap-AB whole tiles, and only that switch.
                assert!(m <= 96, "{s:?}: {before} -> {spec}");
                assert!(before.starts_with("rung10:cluster=2,consumers=1,wg_m=64,"));
                assert_eq!(spec, before.replacen("cluster=2,", "cluster=1,", 1));
                assert!(rule.contains("no cluster (H89)"), "{rule}");
                dropped += 1;
            }
        }
        // M = 1 to 96 at the three N whose 64-row tiles fill 90-100% of 132 SMs.
        assert_eq!(dropped, 96 * 3);
        let m1 = auto_spec(&shape("decode_m1"), H200_SMS).0;
        assert_eq!(m1, "rung10:cluster=1,consumers=1,wg_m=64,bn=16,epilogue=direct,stmatrix=0,swap_ab=1,evict_first=1,pdl=1,stages=8,swap_store=pairs,desc_advance=1");
    }

    #[test]
    fn auto_picks_by_token_count_and_tile_waves() {
        // The rule by shape; the store path every swap-AB pick takes is the test above.
        let pick = |s: &Shape| auto_spec_element_stores(s, H200_SMS).0;
        // M <= 192 at N = 8192: whole tiles of 64 weight rows and M rounded up to 16 tokens, the tokens multicast.
        let whole = "rung10:cluster=2,consumers=1,wg_m=64,bn=";
        assert_eq!(
            pick(&shape("decode_m1")),
            format!("{whole}16,epilogue=direct,stmatrix=0,swap_ab=1,evict_first=1,pdl=1,stages=8")
        );
        assert!(pick(&shape("decode_m16")).starts_with(&format!("{whole}16,")));
        assert!(pick(&shape("decode_m32")).starts_with(&format!("{whole}32,")));
        assert!(pick(&shape("decode_m64")).starts_with(&format!("{whole}64,")));
        assert!(pick(&Shape::new("t", 96, 8192, 8192)).starts_with(&format!("{whole}96,")));
        // Past M = 96 the same tiles without the cluster.
        let alone = "rung10:cluster=1,consumers=1,wg_m=64,bn=";
        assert!(pick(&shape("decode_m128")).starts_with(&format!("{alone}128,")));
        assert!(pick(&shape("decode_m160")).starts_with(&format!("{alone}160,")));
        assert!(pick(&Shape::new("t", 97, 8192, 8192)).starts_with(&format!("{alone}112,")));
        assert!(pick(&shape("decode_m192")).starts_with(&format!("{alone}192,")));
        assert!(pick(&shape("decode_m192")).ends_with("stages=7"));
        // The MLP's N = 28672 holds more weight rows than one wave of those tiles: the kernels from before H25.
        let mlp = |m| pick(&Shape::new("t", m, 28672, 8192));
        assert!(mlp(1).contains("bn=8,stages=4,") && mlp(1).contains("streamk=1"));
        assert_eq!(mlp(64), format!("{SMALL_M_SPEC},evict_first=1,pdl=1"));
        assert!(mlp(96).contains("bn=96,"));
        // More weight rows than one wave of such tiles: two consumers and stream-K.
        let wide = pick(&Shape::new("t", 128, 28672, 8192));
        assert!(wide.contains("consumers=2,wg_m=64,bn=128,") && wide.contains("streamk=1"));
        // Where 64-row weight tiles fill under 90% of the SMs (N = 4096: 64 of 132): stream-K over them up to
        // M = 96, whole tiles up to 160 at any fill, the kernels from before H25 past that (H35-H37).
        let n4096 = |m| pick(&Shape::new("t", m, 4096, 8192));
        let streamk_64 = "rung10:streamk=1,cluster=1,consumers=1,wg_m=64,bn=";
        assert!(n4096(1).starts_with(&format!("{streamk_64}8,")));
        assert!(n4096(64).starts_with(&format!("{streamk_64}64,")));
        assert!(n4096(128).starts_with(&format!("{alone}128,")));
        assert!(n4096(160).starts_with(&format!("{alone}160,")));
        let n1024 = |m| pick(&Shape::new("t", m, 1024, 8192));
        assert!(n1024(16).starts_with(&format!("{streamk_64}16,")));
        assert!(n1024(128).starts_with(&format!("{alone}128,")));
        assert!(n4096(96).starts_with(&format!("{streamk_64}96,")));
        // 160 < M <= 192 at N = 4096 and K <= 4096: four token tiles of 48 on 128 CTAs, the weights shared (H46,
        // H47) ...
        let shared = "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn=";
        let n4096_k4096 = |m| pick(&Shape::new("t", m, 4096, 4096));
        assert!(n4096_k4096(161).starts_with(&format!("{shared}48,")));
        assert!(n4096_k4096(192).starts_with(&format!("{shared}48,")));
        // ... and past 160 elsewhere (longer K, or where four token tiles do not fill the SMs), two-consumer
        // stream-K.
        assert!(n4096(192).contains("consumers=2,") && n4096(192).contains("streamk=1"));
        let n6144 = pick(&Shape::new("t", 192, 6144, 8192));
        assert!(n6144.contains("consumers=2,") && n6144.contains("streamk=1"));
        // M > 256: the token split with the least waves x (width + 32), when 10% under rung 10's; where rung 10
        // would run whole tiles, when 5% under (H34, H36: 240-token tiles at M = 480, not where stream-K runs).
        let at = |m, n| pick(&Shape::new("t", m, n, 8192));
        assert!(at(480, 8192).contains("swap_ab=1,") && at(480, 8192).contains("bn=240,"));
        assert!(at(7920, 8192).contains("bn=240,"));
        assert_eq!(at(720, 10240), "rung10:streamk=1");
        assert_eq!(at(720, 14336), "rung10:streamk=2");
        let split = "rung10:cluster=2,consumers=2,wg_m=64,bn=";
        assert!(pick(&shape("tokens_384")).starts_with(&format!("{split}192,")));
        assert!(pick(&Shape::new("t", 640, 8192, 8192)).starts_with(&format!("{split}160,")));
        // Where the split has an even number of tiles and rounding to 8 pads less than to 16, the weights are
        // shared instead and the tiles rounded to 8 (H54, H55): 4 x 200 for 777 tokens, 6 x 184 for 1100, 6 x 216
        // for 1280; with an odd number (777 at N = 14336: 7 tiles) or no padding saved (640: 4 x 160), as before.
        let shared_split = "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn=";
        assert!(pick(&shape("attn_out_777")).starts_with(&format!("{shared_split}200,")));
        assert!(at(1100, 8192).starts_with(&format!("{shared_split}184,")));
        assert!(at(1280, 8192).starts_with(&format!("{shared_split}216,")));
        assert!(at(777, 14336).starts_with(&format!("{split}112,")));
        // Where 256-row weight tiles of 96-128 tokens take at most 0.97 of the split's waves x tile area (H61,
        // H62): tokens_777 in 7 tiles of 112 (0.96), not 777x8192 (1.12: two waves of the larger tile either way).
        let wide = "rung10:cluster=2,consumers=2,wg_m=128,bn=";
        assert!(pick(&shape("tokens_777")).starts_with(&format!("{wide}112,")));
        assert!(!pick(&shape("tokens_777")).contains("evict_first"));
        assert!(at(4200, 8192).starts_with(&format!("{wide}128,")));
        assert!(!at(777, 8192).contains("wg_m=128"));
        assert_eq!(
            token_split(&Shape::new("t", 1000, 8192, 8192), 66, 90),
            None
        );
        // 192 < M <= 240 where two token tiles of 128-row weight tiles fill one wave (N = 8192): the weights
        // shared, M / 2 tokens a tile rounded up to 8 (H44, H46, H47), with evict-first and the pair stores.
        let t = |m, n| pick(&Shape::new("t", m, n, 8192));
        assert!(t(193, 8192).starts_with(&format!("{shared}104,")));
        assert!(t(224, 8192).starts_with(&format!("{shared}112,")));
        assert!(t(240, 8192).starts_with(&format!("{shared}120,")));
        assert!(t(240, 8192).contains("evict_first=1"));
        assert!(auto_spec(&Shape::new("t", 240, 8192, 8192), H200_SMS)
            .0
            .ends_with("swap_store=pairs,desc_advance=1"));
        assert!(pick(&Shape::new("t", 216, 8192, 28672)).starts_with(&format!("{shared}112,")));
        // ... not where they leave SMs idle (N = 4096: 64 CTAs on 132 SMs; 64-row tiles ran 1.44 there, H30).
        assert_eq!(t(224, 4096), format!("{DECODE_SPEC},evict_first=1,pdl=1"));
        // 224 < M <= 256 where one wave of 256x128 cluster tiles fills 95% of the clusters: cuBLAS's tiling (H31).
        let whole_decode = format!("{WHOLE_DECODE_SPEC},evict_first=1,pdl=1");
        assert_eq!(t(241, 8192), whole_decode);
        assert_eq!(pick(&shape("decode_attn_out")), whole_decode);
        assert_eq!(pick(&shape("decode_mlp_down")), whole_decode);
        assert_eq!(t(241, 4096), format!("{DECODE_SPEC},evict_first=1,pdl=1"));
        // Whole tiles under two waves where they fill 95% of the slots (64 and 128 tiles on 66 clusters), stream-K
        // over every tile where they fill less (768x10240: 120 tiles, 91%)...
        assert_eq!(t(512, 8192), "rung10");
        assert_eq!(t(1000, 8192), "rung10");
        assert_eq!(t(768, 10240), "rung10:streamk=1");
        // ... the token split where it pays (M = 300, 576, 1100, 1152, 1280; H30: it beat stream-K out of sample) ...
        assert!(t(300, 8192).contains("multicast=a,") && t(300, 8192).contains("bn=152,"));
        assert!(t(576, 8192).contains("bn=144,") && !t(576, 8192).contains("multicast=a"));
        assert!(t(1152, 8192).contains("swap_ab=1,") && t(1152, 8192).contains("bn=192,"));
        assert!(t(1280, 8192).contains("swap_ab=1,") && t(1100, 8192).contains("swap_ab=1,"));
        // ... and where it does not, between two and three waves filled under 90%, stream-K on the last wave plus
        // one instead of whole tiles.
        assert_eq!(t(1000, 10240), "rung10:streamk=2");
        assert_eq!(t(768, 14336), "rung10:streamk=2");
        assert!(t(1500, 8192).starts_with("rung10"));
        assert!(!t(1500, 8192).contains("streamk"));
        assert_eq!(token_split(&Shape::new("t", 512, 8192, 8192), 66, 90), None);
        // A tie goes to the fewer, wider tiles (M = 384, N = 28672: 2 x 192 and 4 x 96 cost the same).
        assert_eq!(
            token_split(&Shape::new("t", 384, 28672, 8192), 66, 90),
            Some(192)
        );
        // Every ring is as deep as shared memory allows, up to 8 stages.
        assert!(pick(&shape("attn_out_777")).ends_with("stages=5"));
        // M = 256 with 80 or 224 tiles of 256x128 for 66 clusters (decode_qkv, decode_mlp_up): stream-K.
        assert_eq!(
            pick(&shape("decode_qkv")),
            format!("{DECODE_SPEC},evict_first=1,pdl=1")
        );
        assert_eq!(
            pick(&shape("decode_mlp_up")),
            "rung10:streamk=1,evict_first=1,pdl=1"
        );
        assert_eq!(pick(&shape("prefill_1500")), "rung10");
        for s in ["square4096", "prefill_mlp_up", "long_k"] {
            assert_eq!(pick(&shape(s)), "rung10", "{s}");
        }
        // H100's model: 15.5 waves leave 3.0% of the slots idle, and the 16 us hand-off is 0.9% of 8192 cubed.
        assert_eq!(pick(&shape("prefill_attn_out")), "rung10:streamk=3");
        let gain = |m, n, k| streamk_in_step_gain(&Shape::new("t", m, n, k), 66);
        assert!((gain(8192, 8192, 8192) - 0.0208).abs() < 0.0005);
        // 3.88 waves at 4096 cubed: the hand-off costs more than the idle share.
        assert!(gain(4096, 4096, 4096) < 0.0);
        // H100's shapes: taken at 1.8-2.6%, not at 1.1% (8192x8192x4096, where 1.6% was measured).
        assert!(gain(6144, 8192, 8192) >= 0.015 && gain(8192, 8192, 4096) < 0.015);
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
            shape("decode_m160"),
            shape("decode_m192"),
            shape("decode_m224"),
            shape("tokens_384"),
            shape("tokens_1280"),
            shape("attn_out_777"),
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

    #[test]
    fn every_token_count_gets_a_valid_kernel() {
        // The rule's branches meet at many edges (M = 96, 192, 224, 240, 256, wave fills): whatever it picks for
        // any M up to 4096 on the model widths a server runs must be a configuration that validates.
        for n in [1024, 4096, 8192, 10240, 14336, 28672, 57344] {
            for m in 1..=4096 {
                let s = Shape::new("t", m, n, 8192);
                let (label, config) = auto_variant(&s, H200_SMS);
                config
                    .validate_shape(&s)
                    .unwrap_or_else(|e| panic!("{label} on {m}x{n}x8192: {e}"));
            }
        }
    }
}
