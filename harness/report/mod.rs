//! What a run leaves: results files, and run-to-run agreement.

pub mod agreement;
pub mod results;
