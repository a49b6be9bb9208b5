//! gemm-ablate's harness: everything a trial needs to turn "this change makes the GEMM faster" into a measured
//! verdict on a GPU (any from sm_80; the ladder's own kernels need Hopper). The folders are the layers, in the order data flows through them:
//! - `trial/`: a trial names what runs and what it expects (hypothesis.rs, expect.rs, pins.rs); each runs in its
//!   own process (subprocess.rs, suite.rs); one judge turns what it observed into pass or fail (expect.rs);
//! - `kernel/`: the kernel configuration is validated and its source resolved (config.rs, ladder.rs, source.rs);
//! - `gpu/`: compiled by NVRTC and launched (compile.rs, launch.rs, tma.rs) on the device (device.rs, nvml.rs);
//! - `measure/`: operands are allocated and filled (operands.rs), each variant is checked against cuBLAS
//!   (check.rs, reference.rs), the variants are timed in rounds (timing.rs), statistics give a verdict (stats.rs);
//! - `families/`: every kind of kernel beside cuBLAS behind one interface (the ladder's GEMM, the read floor, the
//!   skinny GEMM, the load path, external kernels), a folder each and one registration line;
//! - `report/`: the run is written out (results.rs) and runs are compared (agreement.rs).
//!
//! `settings.rs` reads every setting once; `error.rs` is the one error type.

pub mod error;
pub mod families;
pub mod gpu;
pub mod kernel;
pub mod measure;
pub mod replay;
pub mod report;
pub mod settings;
pub mod suite;
pub mod trial;
pub mod when;

#[cfg(test)]
mod doc_paths_tests;
#[cfg(test)]
mod layering_tests;
#[cfg(test)]
mod test_files;
#[cfg(test)]
mod validation_tests;

pub use families::loadpath::config::LoadPathConfig;
pub use kernel::config::{
    Epilogue, Fault, GemmConfig, Multicast, Raster, Swizzle, TileOrder, WaitScope,
};
pub use kernel::ladder::Rung;
pub use kernel::problem::{shape, DType, Scales, Shape};
pub use measure::stats::Verdict;
pub use trial::expect::{Caught, Expect, Expectation};
pub use trial::job::GpuTrial;
pub use trial::job::{Job, VariantSpec};
