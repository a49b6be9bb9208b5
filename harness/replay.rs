//! Replays the committed reference runs against the current expectations (CPU trials, so CI runs them): an
//! expectation that its own committed data contradicts fails here, without a GPU.

use crate::measure::processes::across_processes;
use crate::measure::stats::{Estimate, StatsSettings};
use crate::measure::timing::Comparison;
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

/// How each worker process's counted rounds become its estimate: `stats::estimate`, or
/// `stats::estimate_all_pairs` as records before H159 were judged.
pub type PerProcess = fn(&[Vec<f64>], StatsSettings) -> Estimate;

/// The estimate a comparison record's own rounds give under `per_process`: the rounds it counted (not set aside as
/// throttled), judged as the comparison judged them: in one process at the look they end, over several by
/// `across_processes` with the record's prior. With `estimate_all_pairs` it gives back what the record says.
pub fn re_estimate(cmp: &Comparison, per_process: PerProcess) -> Estimate {
    let s = cmp.estimate.settings;
    let counted = |p: Option<usize>| -> Vec<Vec<f64>> {
        cmp.rounds
            .iter()
            .filter(|r| !r.set_aside && p.is_none_or(|p| r.process == p))
            .map(|r| r.log_ratios.clone())
            .collect()
    };
    let Some(level) = &cmp.estimate.processes else {
        return per_process(&counted(None), s);
    };
    let processes: std::collections::BTreeSet<usize> =
        cmp.rounds.iter().map(|r| r.process).collect();
    // A worker runs one look of its rounds.
    let worker = StatsSettings { looks: 1, ..s };
    let parts: Vec<Estimate> = processes
        .into_iter()
        .map(|p| per_process(&counted(Some(p)), worker))
        .collect();
    across_processes(&parts, level.prior.as_ref(), s)
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

    /// Every comparison of the committed whole suites (results/h200/COMMIT/suite/runs), with its run's folder.
    fn whole_suite_comparisons() -> Vec<(String, String, Comparison)> {
        let mut out = Vec::new();
        let mut folders: Vec<_> = std::fs::read_dir(reference_dir())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path().join("suite/runs")))
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            let commit = folder.parent().unwrap().parent().unwrap();
            let commit = commit.file_name().unwrap().to_string_lossy().to_string();
            let mut files: Vec<_> = std::fs::read_dir(&folder)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(".json.xz"))
                .collect();
            files.sort();
            for f in files {
                for t in RunFile::read(&f).unwrap().trials {
                    if let Some(c) = t.comparison {
                        out.push((commit.clone(), t.name, c));
                    }
                }
            }
        }
        out
    }

    /// H159 on the committed records: setting disturbed pairs aside decides the two comparisons at 69beb33 that a
    /// disturbed stretch left inconclusive, and changes few of the verdicts of comparisons with no pair over 10%
    /// off its round's median (their rounds are what the rule was built for not to touch).
    #[test]
    fn disturbed_pairs_set_aside_on_the_committed_whole_suites() {
        use crate::measure::stats::{estimate, estimate_all_pairs, median};
        let all = whole_suite_comparisons();
        assert!(all.len() > 3000, "{} comparisons", all.len());
        let (mut given_back, mut clean, mut clean_changed, mut disturbed, mut disturbed_changed) =
            (0, 0, 0, 0, 0);
        for (commit, name, c) in &all {
            let before = re_estimate(c, estimate_all_pairs);
            if before.verdict != c.estimate.verdict {
                continue;
            }
            given_back += 1;
            let after = re_estimate(c, estimate);
            let far_off = c.rounds.iter().any(|r| {
                let m = median(&r.log_ratios);
                r.log_ratios.iter().any(|x| (x - m).abs() > 0.1)
            });
            let changed = after.verdict != before.verdict;
            if far_off {
                disturbed += 1;
                disturbed_changed += usize::from(changed);
            } else {
                clean += 1;
                clean_changed += usize::from(changed);
            }
            let reds = [
                "mma_only::k128::decode_m200",
                "mma_only::desc_advance::decode_m200",
            ];
            if commit == "69beb33" && reds.contains(&name.as_str()) {
                assert_eq!(before.verdict, Verdict::Inconclusive, "{name}");
                assert_eq!(after.verdict, Verdict::Faster, "{name}: {after:?}");
                assert!(
                    after.disturbed_pairs >= 3,
                    "{name}: {}",
                    after.disturbed_pairs
                );
            }
        }
        // The replay gives back nearly every record's own verdict (the rest were judged by rules since changed).
        assert!(
            given_back * 100 >= all.len() * 95,
            "{given_back} of {}",
            all.len()
        );
        assert!(
            clean_changed * 100 <= clean,
            "{clean_changed} of {clean} clean comparisons changed"
        );
        assert!(
            disturbed_changed >= 2,
            "{disturbed_changed} of {disturbed} disturbed ones changed"
        );
        eprintln!(
            "{given_back} of {} given back; changed: {clean_changed} of {clean} clean, {disturbed_changed} of {disturbed} with a pair over 10% off",
            all.len()
        );
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
