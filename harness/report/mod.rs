//! What a run leaves and how it reads: results files, run-to-run agreement, and every line of text a run
//! prints (text.rs: records hold data, this renders it).

pub mod agreement;
pub mod baseline;
pub mod charts;
pub mod markdown;
pub mod results;
pub mod shards;
pub mod text;
