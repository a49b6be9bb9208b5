//! Replays the committed reference runs against the current expectations (CPU trials, so CI runs them): an
//! expectation that its own committed data contradicts fails here, without a GPU.

use crate::report::results::RunFile;
use crate::trial::expect::{judge, Source};
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

/// The reference runs of `suite`, oldest first, plain or kept compressed (`NAME.json.xz`).
pub fn reference_runs(suite: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(reference_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{suite}-"))
                    && (n.ends_with(".json") || n.ends_with(".json.xz"))
            })
        })
        .collect();
    files.sort();
    files
}

/// A current trial as replay sees it: its name, its expectation, and the candidate a comparison times now.
type Current = (String, crate::trial::expect::Expectation, Option<String>);

/// Trials that left the suite, and why: their committed records are named, not judged (any other record of a
/// trial not in the current list is a problem: a renamed trial must not slip out of its pins' replay).
pub const RETIRED: &[(&str, &str)] = &[
    (
        "correct::fp8::e4m3::rung10_bn128::long_k",
        "left the suite at 491c698: unpromoted, its max-error verdict is a draw of the inputs, H158",
    ),
    (
        "correct::fp8::e4m3::rung10_bn128::decode_mlp_down",
        "left the suite at 491c698: unpromoted, its max-error verdict is a draw of the inputs, H158",
    ),
];

/// What one run's replay found: disagreements, and the records not judged, with why: the trial's candidate is
/// another kernel now (`ladder::auto::*` after `auto`'s rule changed), the record timed another cuBLAS path than
/// the pin's runs, or the run built the trial's pin.
#[derive(Debug, Default)]
pub struct Replayed {
    pub judged: usize,
    pub problems: Vec<String>,
    pub other_kernel: Vec<String>,
    pub retired: Vec<String>,
    pub other_path: Vec<String>,
    pub built_the_pin: Vec<String>,
}

/// Judges every record of `run` (named as the pins name runs) against the current expectations, except where the
/// run built the trial's pin: a pin is never judged by its own runs.
pub fn replay(run_name: &str, run: &RunFile, expectations: &[Current]) -> Replayed {
    let mut out = Replayed::default();
    for r in &run.trials {
        let Some((_, expectation, candidate)) = expectations.iter().find(|(n, ..)| *n == r.name)
        else {
            if let Some((_, why)) = RETIRED.iter().find(|(n, _)| *n == r.name) {
                out.retired.push(format!("{} ({why})", r.name));
                continue;
            }
            out.problems
                .push(format!("{}: no such trial in the current list", r.name));
            continue;
        };
        let recorded = r.comparison.as_ref().map(|c| &c.candidate);
        if let (Some(now), Some(then)) = (candidate, recorded) {
            if now != then {
                out.other_kernel
                    .push(format!("{} (recorded {then}, now {now})", r.name));
                continue;
            }
        }
        if let Source::Pinned { runs, .. } = &expectation.source {
            if runs.iter().any(|p| p == run_name) {
                out.built_the_pin.push(r.name.clone());
                continue;
            }
        }
        if let Some(why) = crate::trial::pins::other_cublas_path(expectation, r) {
            out.other_path.push(format!("{}: {why}", r.name));
            continue;
        }
        out.judged += 1;
        let j = judge(&expectation.expect, r);
        if !j.passed {
            out.problems.push(format!("{}: {}", r.name, j.line));
        }
    }
    out
}

/// The CPU trials over `suite`'s expectations: every one can fail, and one trial per held-out run (the pin file's
/// `held_out`: committed runs of the pinned code that built no pin), judged against the current expectations with
/// their pins in place.
pub fn trials(suite: &str, gpu: &[GpuTrial]) -> Vec<Trial> {
    let mut out = vec![crate::trial::pins::can_fail_trial(suite, gpu)];
    out.extend(held_out_trials(suite, gpu));
    out
}

fn held_out_trials(suite: &str, gpu: &[GpuTrial]) -> Vec<Trial> {
    let file = crate::trial::pins::pin_file()
        .as_ref()
        .map_err(String::as_str);
    let expectations: Vec<Current> = gpu
        .iter()
        .map(|t| {
            let candidate = match &t.job {
                crate::trial::job::Job::Compare { candidate, .. } => Some(candidate.name()),
                _ => None,
            };
            let mut expectation = t.expectation.clone();
            crate::trial::pins::apply_to(file, &t.name, &mut expectation);
            (t.name.clone(), expectation, candidate)
        })
        .collect();
    // A retired trial that is back in the list would be skipped by its own replay.
    let back: Vec<&str> = RETIRED
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| expectations.iter().any(|(m, ..)| m == n))
        .collect();
    if !back.is_empty() {
        let back = back.join(", ");
        return vec![Trial::test(
            format!("replay::{suite}::retired"),
            move || {
                Err(Failed::from(format!(
                    "listed as retired in harness/replay.rs but trials again: {back}"
                )))
            },
        )];
    }
    let held_out = match crate::trial::pins::pin_file() {
        Ok(f) => f.held_out.get(suite).cloned().unwrap_or_default(),
        Err(e) => {
            let e = e.clone();
            return vec![Trial::test(format!("replay::{suite}::pins"), move || {
                Err(Failed::from(e.clone()))
            })];
        }
    };
    if held_out.is_empty() {
        // Said, not passed: no committed run of the pinned code is left to judge the pins with.
        return vec![Trial::test(format!("replay::{suite}::none"), || Ok(()))
            .with_ignored_flag(true)
            .with_kind(format!(
                "no held-out run of {suite} in {} yet: every committed run of the pinned code built a pin",
                crate::trial::pins::pin_file_path().display()
            ))];
    }
    held_out
        .into_iter()
        .map(|name| {
            let path = reference_dir().join(format!("{name}.json"));
            let expectations = expectations.clone();
            Trial::test(format!("replay::{name}"), move || {
                let run = RunFile::read(&path)
                    .map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
                let r = replay(&name, &run, &expectations);
                for (what, list) in [
                    ("their trial runs another kernel now", &r.other_kernel),
                    ("their trial left the suite", &r.retired),
                    ("they timed another cuBLAS path than the pin", &r.other_path),
                    ("the run built their pin", &r.built_the_pin),
                ] {
                    if !list.is_empty() {
                        // Said, not skipped silently.
                        eprintln!(
                            "replay::{name}: {} of {} records not judged, {what}: {}",
                            list.len(),
                            run.trials.len(),
                            list.join("; ")
                        );
                    }
                }
                if r.judged == 0 {
                    Err(Failed::from(format!(
                        "{}: no record judged: nothing replayed",
                        path.display()
                    )))
                } else if r.problems.is_empty() {
                    Ok(())
                } else {
                    Err(Failed::from(format!(
                        "{} of {} judged records contradict the current expectations:\n{}",
                        r.problems.len(),
                        r.judged,
                        r.problems.join("\n")
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
        let expect = crate::trial::expect::Expectation::hypothesis(expect, "a test");
        let judged = replay(
            "b774589",
            &run_with_candidate(trial, "rung10_stmatrix"),
            &[(trial.into(), expect.clone(), Some("rung10_stmatrix".into()))],
        );
        assert_eq!((judged.problems.len(), judged.other_kernel.len()), (1, 0));
        let other = replay(
            "b774589",
            &run_with_candidate(trial, "rung10_stmatrix"),
            &[(trial.into(), expect, Some("auto=rung10:bn=128".into()))],
        );
        assert_eq!((other.problems.len(), other.other_kernel.len()), (0, 1));
        assert!(other.other_kernel[0].contains("recorded rung10_stmatrix, now auto=rung10:bn=128"));
    }
}
