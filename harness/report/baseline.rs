//! Baselines across commits: a run saved under a name, and a later run compared with it trial by trial.
//!
//! The metric that survives a change of process is each trial's ratio to its in-run reference (cuBLAS, or the
//! trial's baseline variant), never an absolute time. The change of a trial is the difference of the two runs'
//! mean log ratios; its standard error combines the two runs' own (each already carries its between-round
//! variance) with Welch-Satterthwaite degrees of freedom; the verdict uses the suite's band: regressed (slower)
//! or improved (faster) when the 95% interval lies beyond the band, no change when the 90% interval lies inside
//! it, inconclusive otherwise.

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
}

/// The comparison of a run with a baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineComparison {
    pub changes: Vec<Change>,
    /// Trials of this run the baseline does not hold (new trials), and the other way round.
    pub only_now: Vec<String>,
    pub only_baseline: Vec<String>,
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

/// The change of one trial between two runs.
pub fn change(trial: &str, base: &Estimate, now: &Estimate) -> Change {
    let band = now.settings.band;
    let d = now.log_mean - base.log_mean;
    let half = |c: f64| combined_half_width(&[base, now], c);
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
    }
}

/// Every comparison trial of `now` against the same trial in `baseline`.
pub fn compare(now: &RunFile, baseline: &RunFile) -> BaselineComparison {
    let mut changes = Vec::new();
    let mut only_now = Vec::new();
    for r in &now.trials {
        let Some(e) = estimate(r) else { continue };
        match baseline
            .trials
            .iter()
            .find(|b| b.name == r.name)
            .and_then(estimate)
        {
            Some(b) => changes.push(change(&r.name, b, e)),
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
    }
}

/// A baseline name is a plain word: it becomes a folder name.
pub fn check_name(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.')
    {
        Ok(())
    } else {
        Err(format!(
            "baseline name {name:?}: use letters, digits, '-', '_' and '.' (it names a folder)"
        ))
    }
}

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
    let text = serde_json::to_string_pretty(run).map_err(|e| e.to_string())?;
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
