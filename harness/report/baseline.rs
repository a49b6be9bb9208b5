//! Baselines across commits: a run saved under a name, and a later run compared with it trial by trial.
//!
//! The metric that survives a change of process is each trial's ratio to its in-run reference (cuBLAS, or the
//! trial's baseline variant), never an absolute time. The change of a trial is the difference of the two runs'
//! mean log ratios. Two runs are two machine starts: on identical code a trial's ratio moves between them by more
//! than either run's interval says (pins/run-prior.json: measured on the pin runs, heavy-tailed), so each run's
//! variance is at least the GPU's between-run prior for the trial's kind (ours, or against cuBLAS), with the
//! prior's degrees of freedom; where the GPU has none, the two runs' own intervals combine (Welch-Satterthwaite)
//! and the comparison says so. The verdict uses the suite's band: regressed (slower) or improved (faster) when
//! the 95% interval lies beyond the band, no change when the 90% interval lies inside it, inconclusive otherwise.

use crate::measure::processes::{Kind, ProcessPrior};
use crate::measure::stats::{combined_half_width, decide, Estimate, Verdict};
use crate::report::results::RunFile;
use crate::trial::job::{Observed, TrialRecord};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One trial against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub trial: String,
    pub baseline_ratio: f64,
    pub ratio: f64,
    /// This run's ratio over the baseline's, with its 95% interval.
    pub change: f64,
    pub interval: (f64, f64),
    pub verdict: Verdict,
    /// The between-run sd each run was taken to carry at least (none without a prior for the GPU).
    pub between_runs_sd: Option<f64>,
    /// Where the two runs timed different cuBLAS paths: the ratio measures another reference (the change is
    /// still shown, and named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_changed: Option<String>,
}

/// The comparison of a run with a baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineComparison {
    pub changes: Vec<Change>,
    /// Trials of this run the baseline does not hold (new trials), and the other way round.
    pub only_now: Vec<String>,
    pub only_baseline: Vec<String>,
    /// What the intervals carry between runs, in words (the prior and its source, or why there is none).
    pub between_runs: String,
}

impl BaselineComparison {
    pub fn slower(&self) -> Vec<&Change> {
        self.changes
            .iter()
            .filter(|c| c.verdict == Verdict::Slower)
            .collect()
    }
}

fn estimate(r: &TrialRecord) -> Option<&Estimate> {
    match &r.observed {
        Observed::Compared(e) if e.log_se.is_finite() => Some(e),
        _ => None,
    }
}

/// The change of one trial between two runs, each run's log ratio taken to scatter between runs by at least
/// `between_runs` (sd on df degrees of freedom) where a prior is given.
pub fn change(
    trial: &str,
    base: &Estimate,
    now: &Estimate,
    between_runs: Option<&ProcessPrior>,
) -> Change {
    let band = now.settings.band;
    let d = now.log_mean - base.log_mean;
    let own = |c: f64| combined_half_width(&[base, now], c);
    // The difference of two runs' log ratios: at least twice the prior's variance, on the prior's degrees of
    // freedom (how far a run moves is heavy-tailed whatever the run's own interval says).
    let half = |c: f64| match between_runs {
        Some(p) => {
            let var = (2.0 * p.sd * p.sd).max(base.log_se.powi(2) + now.log_se.powi(2));
            crate::measure::processes::t_quantile(c, p.df) * var.sqrt()
        }
        None => own(c),
    };
    let (h, he) = (
        half(now.settings.confidence),
        half(now.settings.equivalence_confidence),
    );
    let verdict = decide(d, h, he, band);
    Change {
        trial: trial.to_string(),
        baseline_ratio: base.ratio,
        ratio: now.ratio,
        change: d.exp(),
        interval: ((d - h).exp(), (d + h).exp()),
        verdict,
        between_runs_sd: between_runs.map(|p| p.sd),
        reference_changed: None,
    }
}

/// The cuBLAS path a record timed (its label), if it compared against cuBLAS.
fn cublas_path(r: &TrialRecord) -> Option<&str> {
    r.variants
        .iter()
        .find(|v| v.label.starts_with("cuBLAS"))
        .map(|v| v.label.as_str())
}

/// The committed between-run priors, per GPU model.
pub const RUN_PRIOR_FILE: &str = "pins/run-prior.json";

/// The between-run prior of `kind` on the GPU named `gpu` (pins/run-prior.json), or why there is none.
pub fn run_prior_for(gpu: &str, kind: Kind) -> Result<ProcessPrior, String> {
    let text = crate::measure::committed::read(RUN_PRIOR_FILE)?;
    crate::measure::processes::prior_in(
        &text,
        RUN_PRIOR_FILE,
        "between-run prior",
        gpu,
        kind,
        |g, k| {
            format!(
                "{gpu} (driver {}), {} trials over the whole-suite runs {}",
                g["driver"].as_str().unwrap_or("?"),
                k["trials"].as_u64().unwrap_or(0),
                g["runs"]["ablations"]
                    .as_array()
                    .map(|r| r
                        .iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            )
        },
    )
}

/// Every comparison trial of `now` against the same trial in `baseline`.
pub fn compare(now: &RunFile, baseline: &RunFile) -> BaselineComparison {
    let gpu = now
        .environment
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_default();
    let priors = [Kind::Ours, Kind::Cublas].map(|k| run_prior_for(&gpu, k));
    let between_runs = match &priors {
        [Ok(o), Ok(c)] => format!(
            "each run's ratio taken to move between machine starts by at least {:.2}% (ours) or {:.2}% (against cuBLAS), as measured on {}",
            o.sd * 100.0,
            c.sd * 100.0,
            o.source
        ),
        [Err(e), _] | [_, Err(e)] => format!(
            "{e}: the intervals hold only the two runs' own, which do not carry the spread between machine starts"
        ),
    };
    let mut changes = Vec::new();
    let mut only_now = Vec::new();
    for r in &now.trials {
        let Some(e) = estimate(r) else { continue };
        let prior = priors[usize::from(cublas_path(r).is_some())].as_ref().ok();
        let before = baseline.trials.iter().find(|b| b.name == r.name);
        match before.and_then(|b| estimate(b).map(|e| (b, e))) {
            Some((b_record, b)) => {
                let mut ch = change(&r.name, b, e, prior);
                if cublas_path(b_record) != cublas_path(r) {
                    ch.reference_changed = Some(format!(
                        "the reference changed: {} then, {} now",
                        cublas_path(b_record).unwrap_or("no cuBLAS"),
                        cublas_path(r).unwrap_or("no cuBLAS")
                    ));
                }
                changes.push(ch);
            }
            None => only_now.push(r.name.clone()),
        }
    }
    let only_baseline = baseline
        .trials
        .iter()
        .filter(|b| estimate(b).is_some() && !now.trials.iter().any(|r| r.name == b.name))
        .map(|b| b.name.clone())
        .collect();
    BaselineComparison {
        changes,
        only_now,
        only_baseline,
        between_runs,
    }
}

/// A baseline name is a plain word: it becomes a folder name (settings.rs checks it where it is read).
pub use crate::settings::check_baseline_name as check_name;

/// Where the baseline `name` of `suite` is kept: `<results dir>/baselines/<name>/<suite>.json`.
pub fn path(results_dir: &Path, name: &str, suite: &str) -> PathBuf {
    results_dir
        .join("baselines")
        .join(name)
        .join(format!("{suite}.json"))
}

/// Where shard i of n of a sharded run keeps the baseline: beside the whole run's, `<suite>.shard-i-of-n.json`.
fn shard_path(results_dir: &Path, name: &str, suite: &str, (i, n): (usize, usize)) -> PathBuf {
    results_dir
        .join("baselines")
        .join(name)
        .join(format!("{suite}.shard-{i}-of-{n}.json"))
}

/// Saves a finished run as the baseline `name` (replacing an earlier one of that name); a shard of a run
/// (`GEMM_ABLATE_SHARD`) saves its own file, so that the shards of one run do not overwrite each other.
pub fn save(run: &RunFile, results_dir: &Path, name: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    let p = match crate::report::shards::shard_of(run) {
        Some(shard) => shard_path(results_dir, name, &run.suite, shard),
        None => path(results_dir, name, &run.suite),
    };
    std::fs::create_dir_all(p.parent().unwrap()).map_err(|e| format!("{}: {e}", p.display()))?;
    let text = run.to_text().map_err(|e| e.to_string())?;
    let tmp = p.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &p).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(p)
}

/// Loads the baseline `name` of `suite` for a run that is `shard` (if sharded): that shard's own baseline if
/// there is one, else the whole run's, else the shards of a sharded baseline merged into one run. A missing one is
/// an error naming where it was looked for.
pub fn load(
    results_dir: &Path,
    name: &str,
    suite: &str,
    shard: Option<(usize, usize)>,
) -> Result<RunFile, String> {
    check_name(name)?;
    if let Some(p) = shard
        .map(|s| shard_path(results_dir, name, suite, s))
        .filter(|p| p.is_file())
    {
        return RunFile::read(&p).map_err(|e| format!("{}: {e}", p.display()));
    }
    let p = path(results_dir, name, suite);
    let prefix = format!("{suite}.shard-");
    let mut shard_files: Vec<PathBuf> = std::fs::read_dir(results_dir.join("baselines").join(name))
        .map(|dir| {
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".json"))
                })
                .collect()
        })
        .unwrap_or_default();
    if !p.is_file() && !shard_files.is_empty() {
        shard_files.sort();
        return crate::report::shards::read_one_run(&shard_files);
    }
    if !p.is_file() {
        return Err(format!(
            "no baseline {name:?} for {suite}: {} does not exist (save one with GEMM_ABLATE_SAVE_BASELINE={name})",
            p.display()
        ));
    }
    RunFile::read(&p).map_err(|e| format!("{}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(name: &str) -> RunFile {
        RunFile::read(&crate::report::results::committed_path(name)).unwrap()
    }

    #[test]
    fn a_run_against_itself_has_no_change() {
        let run = committed("9a8c135/ablations-20261130T123530Z.json");
        let c = compare(&run, &run);
        assert!(!c.changes.is_empty());
        assert!(c
            .changes
            .iter()
            .all(|x| x.verdict == Verdict::NoChange || x.verdict == Verdict::Inconclusive));
        assert!(c.slower().is_empty());
    }

    #[test]
    fn the_two_reference_runs_show_what_moved_between_machines() {
        // 796511a's run as the baseline, 9a8c135's as the new run: rung 4 on prefill_mlp_up went from 1.297 to
        // 1.432 of cuBLAS's time (the other machine's cuBLAS ran at a higher clock): a slowdown relative to cuBLAS.
        let base = committed("796511a/ablations-20261130T122613Z.json");
        let now = committed("9a8c135/ablations-20261130T123530Z.json");
        let c = compare(&now, &base);
        let rung4 = c
            .changes
            .iter()
            .find(|x| x.trial == "ladder::rung4_swizzle::prefill_mlp_up")
            .unwrap();
        assert_eq!(rung4.verdict, Verdict::Slower, "{rung4:?}");
        let swizzle = c
            .changes
            .iter()
            .find(|x| x.trial == "ablation::swizzle::square4096")
            .unwrap();
        assert_ne!(swizzle.verdict, Verdict::Slower, "{swizzle:?}");
        assert!(c.only_now.is_empty() && c.only_baseline.is_empty());
    }

    /// 755a4f5's ablations on two machine starts, the same binaries: every change called slower or faster on the
    /// same reference is false (a trial whose cuBLAS path changed is named, not counted). With each run's
    /// between-run spread carried, at most 2.5% of the trials (one side of the 95% interval) may be; with the
    /// runs' own intervals alone, far more were. In sample: these runs are among those the prior was fitted to.
    #[test]
    fn identical_code_on_two_machine_starts_is_rarely_called_changed() {
        let pairs = [
            (
                "ablations-20261201T195904Z.json",
                "ablations-20261201T201253Z.json",
            ),
            (
                "ablations-20261201T200255Z.json",
                "ablations-20261201T201640Z.json",
            ),
            (
                "ablations-20261201T200659Z.json",
                "ablations-20261201T202058Z.json",
            ),
        ];
        let (mut called, mut called_before, mut total) = (0, 0, 0);
        for (a, b) in pairs {
            let (base, now) = (committed(a), committed(b));
            let c = compare(&now, &base);
            assert!(c.between_runs.contains("at least"), "{}", c.between_runs);
            for x in c
                .changes
                .iter()
                .filter(|x| x.reference_changed.is_none())
                .filter(|x| matches!(x.verdict, Verdict::Faster | Verdict::Slower))
            {
                println!("  called: {x:?}");
                called += 1;
            }
            total += c
                .changes
                .iter()
                .filter(|x| x.reference_changed.is_none())
                .count();
            for r in &now.trials {
                let Some(before) = base.trials.iter().find(|x| x.name == r.name) else {
                    continue;
                };
                let (Some(e), Some(b)) = (estimate(r), estimate(before)) else {
                    continue;
                };
                if cublas_path(r) != cublas_path(before) {
                    continue;
                }
                let old = change(&r.name, b, e, None);
                called_before +=
                    usize::from(matches!(old.verdict, Verdict::Faster | Verdict::Slower));
            }
        }
        println!("identical code: {called} of {total} changes called (runs' own intervals alone: {called_before})");
        assert!(total > 200, "{total}");
        assert!(
            (called as f64) <= 0.025 * total as f64,
            "{called} of {total}"
        );
        assert!(
            called_before > 3 * called.max(1),
            "{called_before} against {called}"
        );
    }

    #[test]
    fn names_and_missing_baselines_are_clear_errors() {
        assert!(check_name("main").is_ok());
        assert!(check_name("../etc").is_err());
        assert!(check_name("").is_err());
        let dir =
            std::env::temp_dir().join(format!("gemm-ablate-baseline-test-{}", std::process::id()));
        let e = load(&dir, "nope", "ablations", None).unwrap_err();
        assert!(e.contains("no baseline \"nope\""), "{e}");
        let run = committed("9a8c135/microbench-20261130T124018Z.json");
        let p = save(&run, &dir, "main").unwrap();
        assert!(p.ends_with("baselines/main/microbench.json"));
        assert_eq!(
            load(&dir, "main", "microbench", None).unwrap().trials.len(),
            run.trials.len()
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn shards_save_apart_and_load_as_their_shard_or_as_one_run() {
        let dir =
            std::env::temp_dir().join(format!("gemm-ablate-shard-test-{}", std::process::id()));
        let one = committed("7baa087/ablations-20261130T185539Z.json");
        let two = committed("7baa087/ablations-20261130T190146Z.json");
        let p1 = save(&one, &dir, "main").unwrap();
        let p2 = save(&two, &dir, "main").unwrap();
        assert!(p1.ends_with("baselines/main/ablations.shard-1-of-2.json"));
        assert!(p2.ends_with("baselines/main/ablations.shard-2-of-2.json"));
        // A shard compares with its own shard; an unsharded run with the shards merged.
        let mine = load(&dir, "main", "ablations", Some((2, 2))).unwrap();
        assert_eq!(mine.trials.len(), two.trials.len());
        let whole = load(&dir, "main", "ablations", None).unwrap();
        assert_eq!(whole.trials.len(), one.trials.len() + two.trials.len());
        let _ = std::fs::remove_dir_all(dir);
    }
}
