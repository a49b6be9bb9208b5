//! Replays the committed reference runs against the current expectations (CPU trials, so CI runs them): an
//! expectation that its own committed data contradicts fails here, without a GPU.

use crate::report::results::RunFile;
use crate::trial::expect::judge;
use crate::trial::job::GpuTrial;
use libtest_mimic::{Failed, Trial};
use std::path::PathBuf;

/// The committed reference runs: results/h200/*.json (older formats live in subfolders, named by commit).
pub fn reference_dir() -> PathBuf {
    let here = PathBuf::from("results/h200");
    if here.is_dir() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results/h200")
    }
}

/// The reference runs of `suite`, oldest first.
pub fn reference_runs(suite: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(reference_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{suite}-")))
        })
        .collect();
    files.sort();
    files
}

/// Judges every record of a run against the current expectations; returns the disagreements.
pub fn replay(
    run: &RunFile,
    expectations: &[(String, crate::trial::expect::Expect)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for r in &run.trials {
        match expectations.iter().find(|(n, _)| *n == r.name) {
            None => problems.push(format!("{}: no such trial in the current list", r.name)),
            Some((_, expect)) => {
                let j = judge(expect, r);
                if !j.passed {
                    problems.push(format!("{}: {}", r.name, j.line));
                }
            }
        }
    }
    problems
}

/// One CPU trial per committed run of `suite`.
pub fn trials(suite: &str, gpu: &[GpuTrial]) -> Vec<Trial> {
    let expectations: Vec<(String, crate::trial::expect::Expect)> = gpu
        .iter()
        .map(|t| (t.name.clone(), t.expectation.expect.clone()))
        .collect();
    let files = reference_runs(suite);
    if files.is_empty() {
        let suite = suite.to_string();
        return vec![Trial::test(format!("replay::{suite}::none"), move || {
            Err(Failed::from(format!(
                "no committed reference run of {suite} under {}: nothing to replay the expectations against",
                reference_dir().display()
            )))
        })];
    }
    files
        .into_iter()
        .map(|path| {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            let expectations = expectations.clone();
            Trial::test(format!("replay::{stem}"), move || {
                let run = RunFile::read(&path)
                    .map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
                let problems = replay(&run, &expectations);
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(Failed::from(format!(
                        "{} of {} committed records contradict the current expectations:\n{}",
                        problems.len(),
                        run.trials.len(),
                        problems.join("\n")
                    )))
                }
            })
        })
        .collect()
}
