//! The kernels and their switches: configurations and their validation, the ladder of rungs, the shapes, the
//! kernel source as compiled (and as `show` prints it), and the variants a trial times (GEMM, load path, read
//! floor, skinny GEMM).

pub mod config;
pub mod dispatch;
pub mod expr;
pub mod external;
pub mod frozen_rules;
pub mod ladder;
pub mod loadpath;
pub mod problem;
pub mod skinny;
pub mod source;
pub mod spec;
pub mod stream;
pub mod switches;
pub mod tile_order;
pub mod tma;
