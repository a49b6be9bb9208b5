//! Trials: what runs (jobs), what is expected and where that comes from (expect, pins, hypothesis), the child
//! processes, Nsight Compute profiles, the libtest glue, the replay of committed runs, and calibration.

pub mod bound;
pub mod calibration;
pub mod child;
pub mod context;
pub mod expect;
pub mod expectation;
pub mod hypothesis;
pub mod hypothesis_files;
pub mod job;
pub mod pins;
pub mod pool;
pub mod profile;
pub mod run;
pub mod source_page;
pub mod subprocess;
pub mod workers;
