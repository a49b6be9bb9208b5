//! What the parent and its child processes (fresh ones, subprocess.rs, and kept ones, pool.rs) share: the variables
//! a child is started with, where it writes its record and how the parent reads it, and what the parent says of a
//! child that ended without one.

use crate::trial::job::{Observed, TrialRecord};
use std::time::Duration;

/// Set in a child: the parent's CUDA ordinal of the one device the child sees (as its device 0).
pub const DEVICE_ENV: &str = "GEMM_ABLATE_CHILD_DEVICE";

/// Set in a kept worker process (pool.rs): it serves requests read from its stdin, one JSON line each, until its
/// stdin closes.
pub const SERVE_ENV: &str = "GEMM_ABLATE_CHILD_SERVE";

/// The suite's number (the parent's CUDA ordinal) of the one GPU this child sees.
pub fn parent_device_index() -> usize {
    std::env::var(DEVICE_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// What came back from a child.
pub struct ChildOutcome {
    pub record: TrialRecord,
    /// The child's stdout and stderr, for the trial's output.
    pub output: String,
}

/// Where a child writes the record of trial `name`: one file per process and name, its length fixed. The name
/// itself cannot be the file name: a `compare` of two written-out specs makes names past the 255-byte limit of a
/// file name (the record was then lost, at 13a7135).
pub fn record_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "gemm-ablate-{}-{}.json",
        std::process::id(),
        name_key(name)
    ))
}

/// A short key for a name, fixed in length, for file names the name itself cannot be: the first 8 bytes of its
/// SHA-256 in hex.
pub fn name_key(name: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(name.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `record` where the parent reads it: whole or not at all (written aside, then renamed), so a parent that
/// reads it as soon as the child says it is done never reads half of it.
pub(crate) fn write_record(path: &std::path::Path, record: &TrialRecord) -> Result<(), String> {
    let aside = path.with_extension("part");
    std::fs::write(&aside, serde_json::to_string(record).unwrap_or_default())
        .and_then(|_| std::fs::rename(&aside, path))
        .map_err(|e| {
            format!(
                "the child could not write its record to {}: {e}",
                path.display()
            )
        })
}

/// Reads and removes the record a child wrote at `path`, if it wrote one.
pub(crate) fn take_record(path: &std::path::Path) -> Option<TrialRecord> {
    let record = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str::<TrialRecord>(&s).ok());
    let _ = std::fs::remove_file(path);
    record
}

/// What the parent says of a child that was killed at its deadline.
pub(crate) fn killed_at(deadline: Duration) -> Observed {
    Observed::HostTimeout(format!(
        "the trial ran past its {:.0} s deadline and its process was killed",
        deadline.as_secs_f64()
    ))
}

/// What the parent says of a child that ended without a record: how it ended and the last lines it wrote.
pub(crate) fn died_without_record(status: &str, output: &str) -> Observed {
    let tail: String = output
        .lines()
        .rev()
        .take(6)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    Observed::Error(format!(
        "the trial's process died ({status}) without a record:\n{tail}"
    ))
}

#[cfg(test)]
mod tests {
    use super::record_path;

    #[test]
    fn record_file_names_stay_short_and_distinct_for_long_trial_names() {
        let spec = "rung10:cluster=1,consumers=2,wg_m=64,bn=208,epilogue=direct,stmatrix=0,swap_ab=1,split_n=1,evict_first=1,pdl=1,stages=6";
        let long = format!("compare::{spec},swap_store=pairs::{spec}::208x8192x8192");
        assert!(
            long.len() > 255,
            "the case that lost records: {} bytes",
            long.len()
        );
        let path = record_path(&long);
        let file = path.file_name().unwrap().to_str().unwrap();
        assert!(file.len() < 64, "{file}");
        assert_ne!(record_path(&long), record_path(&format!("{long}x")));
        assert_eq!(record_path(&long), record_path(&long));
        // A file at that path can be written (the temp dir takes it).
        std::fs::write(&path, "{}").unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}
