//! `auto`'s rules as they stood when earlier hypotheses were written. Trials written then keep measuring the
//! kernels their pins and hypotheses were about, whatever `auto` (dispatch.rs) runs now; nothing else uses them.

use crate::kernel::config::GemmConfig;
use crate::kernel::dispatch::{
    labelled, rule_by_shape, swap_ab_kernel, token_tile, with_desc_advance, with_pair_stores,
    TokenCluster, DECODE_SPEC, SMALL_M_SPEC,
};
use crate::kernel::problem::Shape;

/// `auto`'s choice as it stood before H89: its swap-AB whole tiles at M <= 96 on 2-CTA clusters multicasting the
/// tokens. The trials written against `auto`'s small-M kernels before then (H79-H88) take their baselines from it,
/// so they keep measuring the kernels their pins were measured on.
pub fn auto_spec_before_h89(shape: &Shape, sm_count: u32) -> (String, &'static str) {
    let (spec, rule) = auto_spec_before_h64(shape, sm_count);
    (with_desc_advance(&spec), rule)
}

/// `auto_variant` for `auto_spec_before_h89`'s kernel, labelled as `auto` was then.
pub fn auto_variant_before_h89(shape: &Shape, sm_count: u32) -> (String, GemmConfig) {
    labelled(auto_spec_before_h89(shape, sm_count).0)
}

/// `auto`'s choice as it stood before H64: the trials written against `auto`'s kernels before then take their
/// baselines from it, so they keep measuring the kernels their pins were measured on.
pub fn auto_spec_before_h64(shape: &Shape, sm_count: u32) -> (String, &'static str) {
    let (spec, rule) = auto_spec_element_stores(shape, sm_count);
    (with_pair_stores(&spec), rule)
}

/// `auto`'s choice as it stood before H40: the rule by shape, swap-AB kernels with the element stores. The
/// `beyond::swap_store` trials take their baseline from it.
pub fn auto_spec_element_stores(shape: &Shape, sm_count: u32) -> (String, &'static str) {
    rule_by_shape(shape, sm_count, TokenCluster::UpToM96)
}

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
