//! The ladder's kernel and its switches: configurations and their validation, the ladder of rungs, `auto`, the
//! shapes, tensor maps, and the kernel sources as compiled (and as `show` prints them). The other kernel families
//! live in harness/families/.

pub mod config;
pub mod dispatch;
pub mod frozen_rules;
pub mod ladder;
pub mod problem;
pub mod source;
pub mod spec;
pub mod switches;
pub mod tile_order;
pub mod tma;
