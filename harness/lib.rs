//! gemm-ablate's harness: everything a trial needs to turn "this change makes the GEMM faster" into a measured
//! verdict on a Hopper GPU. The way through it: a trial names a hypothesis (hypothesis.rs) -> the kernel
//! configuration is validated and compiled (config.rs, source.rs, compile.rs) -> operands are allocated and
//! filled (operands.rs) -> each variant is checked against cuBLAS (check.rs, reference.rs) -> the variants are
//! timed interleaved (timing.rs) -> statistics give a verdict (stats.rs) -> the trial passes or fails and the run
//! is written out (results.rs). Each GPU trial runs in its own process (subprocess.rs, suite.rs).

pub mod agreement;
pub mod calibration;
pub mod check;
pub mod compile;
pub mod config;
pub mod device;
pub mod diag;
pub mod error;
pub mod expect;
pub mod hypothesis;
pub mod job;
pub mod ladder;
pub mod launch;
pub mod loadpath;
pub mod memory;
pub mod nvml;
pub mod oc;
pub mod operands;
pub mod pins;
pub mod probe;
pub mod problem;
pub mod reference;
pub mod replay;
pub mod results;
pub mod settings;
pub mod source;
pub mod stats;
pub mod subprocess;
pub mod suite;
pub mod timing;
pub mod tma;
pub mod variant;

#[cfg(test)]
mod validation_tests;

pub use config::{Fault, GemmConfig, Raster, Swizzle};
pub use expect::{Caught, Expect, Expectation};
pub use job::{Job, VariantSpec};
pub use ladder::Rung;
pub use loadpath::LoadPathConfig;
pub use problem::{shape, DType, Shape};
pub use stats::Verdict;
pub use suite::GpuTrial;
