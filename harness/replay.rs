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

/// A current trial as replay sees it: its name, its expectation, and the candidate a comparison times now.
type Current = (String, crate::trial::expect::Expect, Option<String>);

/// What one run's replay found: disagreements, and the comparisons not judged because the trial's candidate is
/// another kernel now (`ladder::auto::*` after `auto`'s rule changed: the record measured the kernel it replaced).
#[derive(Debug, Default)]
pub struct Replayed {
    pub problems: Vec<String>,
    pub other_kernel: Vec<String>,
}

/// Judges every record of a run against the current expectations.
pub fn replay(run: &RunFile, expectations: &[Current]) -> Replayed {
    let mut out = Replayed::default();
    for r in &run.trials {
        match expectations.iter().find(|(n, ..)| *n == r.name) {
            None => out
                .problems
                .push(format!("{}: no such trial in the current list", r.name)),
            Some((_, expect, candidate)) => {
                let recorded = r.comparison.as_ref().map(|c| &c.candidate);
                if let (Some(now), Some(then)) = (candidate, recorded) {
                    if now != then {
                        out.other_kernel
                            .push(format!("{} (recorded {then}, now {now})", r.name));
                        continue;
                    }
                }
                let j = judge(expect, r);
                if !j.passed {
                    out.problems.push(format!("{}: {}", r.name, j.line));
                }
            }
        }
    }
    out
}

/// One CPU trial per committed run of `suite`.
pub fn trials(suite: &str, gpu: &[GpuTrial]) -> Vec<Trial> {
    let expectations: Vec<Current> = gpu
        .iter()
        .map(|t| {
            let candidate = match &t.job {
                crate::trial::job::Job::Compare { candidate, .. } => Some(candidate.name()),
                _ => None,
            };
            (t.name.clone(), t.expectation.expect.clone(), candidate)
        })
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
                let Replayed {
                    problems,
                    other_kernel,
                } = replay(&run, &expectations);
                if !other_kernel.is_empty() {
                    // Said, not skipped silently: these records measured a kernel the trial no longer runs.
                    eprintln!(
                        "replay::{stem}: {} of {} records not judged, their trial runs another kernel now: {}",
                        other_kernel.len(),
                        run.trials.len(),
                        other_kernel.join("; ")
                    );
                }
                if other_kernel.len() == run.trials.len() {
                    Err(Failed::from(format!(
                        "{}: every record measured a kernel its trial no longer runs: nothing replayed",
                        path.display()
                    )))
                } else if problems.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::expect::Expect;
    use crate::Verdict;

    /// The b774589 run (committed), with one trial's record relabelled.
    fn run_with_candidate(trial: &str, candidate: &str) -> RunFile {
        let mut run =
            RunFile::read(&reference_dir().join("b774589/ablations-20261130T143838Z.json"))
                .unwrap();
        run.trials.retain(|t| t.name == trial);
        run.trials[0].comparison.as_mut().unwrap().candidate = candidate.to_string();
        run
    }

    #[test]
    fn a_record_of_another_kernel_is_named_not_judged() {
        let trial = "ladder::rung10_stmatrix::square4096";
        // An expectation the record contradicts (rung 10 was not 1.3x faster than cuBLAS).
        let expect = Expect::Verdict(Verdict::Faster);
        let judged = replay(
            &run_with_candidate(trial, "rung10_stmatrix"),
            &[(trial.into(), expect.clone(), Some("rung10_stmatrix".into()))],
        );
        assert_eq!((judged.problems.len(), judged.other_kernel.len()), (1, 0));
        let other = replay(
            &run_with_candidate(trial, "rung10_stmatrix"),
            &[(trial.into(), expect, Some("auto=rung10:bn=128".into()))],
        );
        assert_eq!((other.problems.len(), other.other_kernel.len()), (0, 1));
        assert!(other.other_kernel[0].contains("recorded rung10_stmatrix, now auto=rung10:bn=128"));
    }
}
