//! Shards of one run: a suite split over several processes (`GEMM_ABLATE_SHARD=i/n`) writes one results file per
//! shard; the report and the baseline comparison read them as the one run they were.

use crate::report::results::RunFile;
use std::path::PathBuf;

/// The shard a run was (`GEMM_ABLATE_SHARD=i/n`, read as the run read it): (i, n).
pub fn shard_of(run: &RunFile) -> Option<(usize, usize)> {
    crate::settings::shard(&run.environment.settings)
        .ok()
        .flatten()
}

/// What shards of one run share: the suite, commit, host, GPU, shard count and every other setting. Across
/// commits (a suite split over device calls, each shard run where the machine was), only the suite, the shard count
/// and the other settings.
fn shard_key(run: &RunFile, count: usize, across_commits: bool) -> String {
    let env = &run.environment;
    let mut settings: Vec<_> = env
        .settings
        .iter()
        .filter(|(k, _)| k != "GEMM_ABLATE_SHARD")
        .collect();
    settings.sort();
    if across_commits {
        return format!("{}|{count}|{settings:?}", run.suite);
    }
    format!(
        "{}|{}|{}|{:?}|{count}|{settings:?}",
        run.suite,
        env.commit,
        env.host,
        env.device.as_ref().map(|d| &d.pci_bus_id)
    )
}

/// A run's shard key (none: not a shard) and its parts: (shard index, file stem, run).
type ShardGroup = (Option<String>, Vec<(usize, String, RunFile)>);

/// Shards of one run (`GEMM_ABLATE_SHARD=i/n` with the same suite, commit, host, GPU and other settings) merged
/// into one run in shard order, so that a suite split over several processes reads as the run it was: one ladder,
/// one pass count. The merged run keeps the first shard's environment, its shard setting naming the shards merged
/// (`1,2/2`); runs that are not shards pass through unchanged.
pub fn merge_shards(runs: Vec<(String, RunFile)>) -> Vec<(String, RunFile)> {
    merge(runs, false)
}

/// As `merge_shards`, and shards of one suite whose commits or hosts differ merge too (`report --across-commits`:
/// a suite split over device calls at commits whose kernels and trials are the same). The merged run's commit and
/// host name every shard's, in shard order, joined by " + ".
pub fn merge_shards_across_commits(runs: Vec<(String, RunFile)>) -> Vec<(String, RunFile)> {
    merge(runs, true)
}

fn merge(runs: Vec<(String, RunFile)>, across_commits: bool) -> Vec<(String, RunFile)> {
    // Each entry: a run that is not a shard (no key), or the shards of one run so far, by shard index.
    let mut groups: Vec<ShardGroup> = Vec::new();
    for (stem, run) in runs {
        match shard_of(&run) {
            Some((index, count)) => {
                let key = shard_key(&run, count, across_commits);
                match groups
                    .iter_mut()
                    .find(|g| g.0.as_deref() == Some(key.as_str()))
                {
                    Some((_, shards)) => shards.push((index, stem, run)),
                    None => groups.push((Some(key), vec![(index, stem, run)])),
                }
            }
            None => groups.push((None, vec![(0, stem, run)])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut parts)| {
            parts.sort_by_key(|p| p.0);
            let mut parts = parts.into_iter();
            let (first_index, mut stem, mut run) = parts.next().expect("a group has a run");
            let mut merged = vec![first_index.to_string()];
            for (index, _, r) in parts {
                let env = &mut run.environment;
                for (mine, theirs) in [
                    (&mut env.commit, &r.environment.commit),
                    (&mut env.host, &r.environment.host),
                ] {
                    if !mine.split(" + ").any(|c| c == theirs) {
                        *mine = format!("{mine} + {theirs}");
                    }
                }
                run.trials.extend(r.trials);
                merged.push(index.to_string());
            }
            if merged.len() > 1 {
                // The first shard's name and the shards merged (`ablations-20261205T164443Z-shards-1_2_3`): a
                // chart's file name, and a heading, stay short however many shards a run had.
                stem = format!("{stem}-shards-{}", merged.join("_"));
                let count = shard_of(&run).map_or(0, |s| s.1);
                for (k, v) in run.environment.settings.iter_mut() {
                    if k == "GEMM_ABLATE_SHARD" {
                        *v = format!("{}/{count}", merged.join(","));
                    }
                }
            }
            (stem, run)
        })
        .collect()
}

/// One run from its results files: a single file, or the shards of one run, merged. Files that are not shards of
/// one run (another commit, host, GPU or setting, or a whole run beside a shard) are an error that names them.
pub fn read_one_run(files: &[PathBuf]) -> Result<RunFile, String> {
    let mut runs = Vec::new();
    for f in files {
        let run = RunFile::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        runs.push((f.display().to_string(), run));
    }
    let mut merged = merge_shards(runs);
    match merged.len() {
        1 => Ok(merged.remove(0).1),
        0 => Err("no results file given".into()),
        _ => Err(format!(
            "{} are not the shards of one run (GEMM_ABLATE_SHARD=i/n with the same suite, commit, host, GPU and settings)",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::committed_path as committed;

    #[test]
    fn shards_read_as_one_run_and_strangers_are_refused() {
        let shards = [
            committed("7baa087/ablations-20261130T190146Z.json"),
            committed("7baa087/ablations-20261130T185539Z.json"),
        ];
        let run = read_one_run(&shards).unwrap();
        assert_eq!(run.trials.len(), 294);
        let e = read_one_run(&[
            shards[0].clone(),
            committed("9a8c135/ablations-20261130T123530Z.json"),
        ])
        .unwrap_err();
        assert!(e.contains("not the shards of one run"), "{e}");
    }
}
