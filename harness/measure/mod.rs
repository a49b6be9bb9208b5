//! Measuring: operands, the cuBLAS reference, correctness checks, timing in rounds, and the statistics that
//! turn rounds into a verdict (with the rule's simulated error rates).

pub mod check;
pub mod committed;
pub mod cublas_choice;
pub mod fp8;
pub mod measures;
pub mod oc;
pub mod operands;
pub mod processes;
pub mod record;
pub mod reference;
pub mod stats;
pub mod sustained;
pub mod timing;
pub mod variant;
