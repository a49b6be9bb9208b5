//! `gemm-ablate report FILE...`: a markdown report with SVG charts from one or more results files, grouped by
//! GPU model and host (so files from several machines merge into one report). Everything is built in memory
//! first: an unreadable or foreign file is an error and nothing is written.

use crate::kernel::ladder::Rung;
use crate::measure::stats::chained_interval;
use crate::report::charts::{self, ForestRow, LadderLine, SweepPoint};
use crate::report::results::RunFile;
use crate::report::shards::merge_shards;
use crate::trial::expect::Source;
use crate::trial::job::{Observed, TrialRecord};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A report: the markdown and its charts (file name, SVG text).
pub struct Report {
    pub markdown: String,
    pub charts: Vec<(String, String)>,
}

/// Reads results files; a file that is not one is an error naming it.
pub fn read_runs(files: &[PathBuf]) -> Result<Vec<(String, RunFile)>, String> {
    if files.is_empty() {
        return Err("report needs at least one results file".into());
    }
    files
        .iter()
        .map(|f| {
            let text = crate::report::results::read_text(f)
                .map_err(|e| format!("{}: cannot read it: {e}", f.display()))?;
            if let Some(why) = crate::report::results::summary_instead(&text) {
                return Err(format!("{}: {why}", f.display()));
            }
            let run: RunFile = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: not a gemm-ablate results file of this version ({e}); older runs live in a folder per commit and have another format",
                    f.display()
                )
            })?;
            run.validate().map_err(|e| format!("{}: {e}", f.display()))?;
            Ok((crate::report::results::run_name(f), run))
        })
        .collect()
}

/// The seed's verdict word from an expectation's source, and whether the H200 refuted it.
fn seed_note(r: &TrialRecord) -> Option<String> {
    let word = |text: &str| {
        text.split("seed (B200): ")
            .nth(1)
            .map(|rest| rest.split(" (").next().unwrap_or(rest).to_string())
    };
    match &r.expectation.as_ref()?.source {
        Source::Hypothesis(h) => word(h).map(|w| format!("seed: {w}")),
        Source::Pinned {
            refuted: Some(h), ..
        } => word(h).map(|w| format!("seed, not confirmed: {w}")),
        _ => None,
    }
}

fn verdict_of(r: &TrialRecord) -> Option<&crate::measure::stats::Estimate> {
    match &r.observed {
        Observed::Compared(e) => Some(e),
        _ => None,
    }
}

fn safe(name: &str) -> String {
    crate::report::results::file_stem(name)
}

/// Builds the report of these runs (shards of one run merged first).
pub fn build(runs: &[(String, RunFile)]) -> Result<Report, String> {
    build_merged(merge_shards(runs.to_vec()))
}

/// As `build`, with the shards of one suite merged across commits and hosts (`merge_shards_across_commits`).
pub fn build_across_commits(runs: &[(String, RunFile)]) -> Result<Report, String> {
    build_merged(crate::report::shards::merge_shards_across_commits(
        runs.to_vec(),
    ))
}

fn build_merged(merged: Vec<(String, RunFile)>) -> Result<Report, String> {
    let runs = &merged;
    let mut md = String::from("# gemm-ablate report\n\n");
    let mut charts = Vec::new();
    // Group by GPU model and host, in first-seen order.
    let mut groups: Vec<(String, Vec<&(String, RunFile)>)> = Vec::new();
    for run in runs {
        let env = &run.1.environment;
        let key = format!(
            "{} on {}",
            env.device
                .as_ref()
                .map(|d| d.name.clone())
                .unwrap_or_else(|| "an unknown GPU".into()),
            if env.host.is_empty() {
                "an unknown host"
            } else {
                &env.host
            }
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    for (key, group) in &groups {
        let _ = writeln!(md, "## {key}\n");
        for (stem, run) in group {
            section(&mut md, &mut charts, stem, run)?;
        }
    }
    Ok(Report {
        markdown: md,
        charts,
    })
}

fn section(
    md: &mut String,
    charts: &mut Vec<(String, String)>,
    stem: &str,
    run: &RunFile,
) -> Result<(), String> {
    let env = &run.environment;
    let passed = run.trials.iter().filter(|t| t.passed).count();
    let _ = writeln!(
        md,
        "### {stem} ({}): {passed} of {} trials passed\n",
        run.suite,
        run.trials.len()
    );
    let _ = writeln!(md, "| environment | |\n|---|---|");
    if let Some(d) = &env.device {
        let _ =
            writeln!(
            md,
            "| GPU | {} ({} SMs, {:.0} MB L2, max SM clock {} MHz, memory clock {} MHz, bus {}{}) |",
            d.name,
            d.sm_count,
            d.l2_bytes as f64 / 1e6,
            d.max_sm_clock_mhz.map(|c| c.to_string()).unwrap_or("?".into()),
            d.mem_clock_mhz.map(|c| c.to_string()).unwrap_or("?".into()),
            d.pci_bus_id,
            d.uuid.as_deref().map(|u| format!(", {u}")).unwrap_or_default()
        );
        let _ = writeln!(
            md,
            "| driver, CUDA | {}, {} |",
            d.driver_version, d.cuda_driver_api
        );
    }
    if env.gpus.len() > 1 {
        let seats: Vec<String> = env
            .gpus
            .iter()
            .map(|g| {
                let trials = run
                    .trials
                    .iter()
                    .filter(|t| t.gpu.as_ref().is_some_and(|s| s.index == g.index))
                    .count();
                format!(
                    "{}: {} ({}, {trials} trials)",
                    g.index, g.name, g.pci_bus_id
                )
            })
            .collect();
        let _ = writeln!(md, "| trials spread over | {} |", seats.join("; "));
    }
    let _ = writeln!(md, "| commit | `{}` |", env.commit);
    let _ = writeln!(md, "| date, host | {}, {} |", env.date, env.host);
    let settings: Vec<String> = env
        .settings
        .iter()
        .filter(|(k, _)| k != "GEMM_ABLATE_RESULTS_DIR")
        .map(|(k, v)| format!("`{k}={v}`"))
        .collect();
    let _ = writeln!(
        md,
        "| settings | {} |\n",
        if settings.is_empty() {
            "defaults".into()
        } else {
            settings.join(", ")
        }
    );

    ladder(md, charts, stem, &run.trials)?;
    forest(md, charts, stem, &run.trials)?;
    sweeps(md, charts, stem, &run.trials)?;
    sustained(md, &run.trials);
    noise_table(md, &run.trials);
    if !run.calibration.is_empty() {
        let _ = writeln!(
            md,
            "#### Calibration (each comparison in its own process)\n\n| truth | faster | slower | no change | inconclusive | failed | median interval | time per comparison |\n|---|---|---|---|---|---|---|---|"
        );
        for r in &run.calibration {
            let truth = r
                .true_ratio
                .map(|(t, lo, hi)| format!("{}: true ratio {t:.4} [{lo:.4}, {hi:.4}]", r.what))
                .unwrap_or_else(|| r.what.clone());
            let _ = writeln!(
                md,
                "| {truth} | {} | {} | {} | {} | {} | +-{:.2}% | {:.1} s |",
                r.faster,
                r.slower,
                r.no_change,
                r.inconclusive,
                r.failed,
                r.median_half_width_pct,
                r.median_seconds
            );
        }
        md.push('\n');
    }
    let failed: Vec<&TrialRecord> = run.trials.iter().filter(|t| !t.passed).collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "#### Trials that failed\n");
        for t in failed {
            let _ = writeln!(md, "- `{}`: {}", t.name, t.judgement);
        }
        md.push('\n');
    }
    Ok(())
}

fn ladder(
    md: &mut String,
    charts: &mut Vec<(String, String)>,
    stem: &str,
    trials: &[TrialRecord],
) -> Result<(), String> {
    let cells: Vec<&TrialRecord> = trials
        .iter()
        .filter(|t| t.name.starts_with("ladder::"))
        .collect();
    if cells.is_empty() {
        return Ok(());
    }
    let mut shapes: Vec<String> = Vec::new();
    for t in &cells {
        if let Some(s) = &t.shape {
            if !shapes.contains(&s.name) {
                shapes.push(s.name.clone());
            }
        }
    }
    let rungs: Vec<String> = Rung::ALL.iter().map(|r| r.name()).collect();
    // The record of one row (a rung, or `auto`) on one shape.
    let cell = |row: &str, s: &str| {
        cells
            .iter()
            .find(|t| t.name == format!("ladder::{row}::{s}"))
            .copied()
    };
    let rate = |t: &TrialRecord, i: usize| {
        t.variants
            .get(i)
            .and_then(|v| v.measure(crate::measure::measures::THROUGHPUT))
    };
    let lines: Vec<LadderLine> = shapes
        .iter()
        .map(|s| {
            let of = |rung: &str| cell(rung, s);
            let cublas: Vec<f64> = rungs
                .iter()
                .filter_map(|r| of(r).and_then(|t| rate(t, 0)))
                .collect();
            LadderLine {
                shape: s.clone(),
                tflops: rungs
                    .iter()
                    .map(|r| of(r).and_then(|t| rate(t, 1)))
                    .collect(),
                cublas_tflops: (!cublas.is_empty()).then(|| crate::measure::stats::median(&cublas)),
            }
        })
        .collect();
    let short: Vec<String> = rungs
        .iter()
        .map(|r| r.split('_').next().unwrap_or(r).to_string())
        .collect();
    let file = format!("{stem}-ladder.svg");
    charts.push((file.clone(), charts::ladder(&short, &lines)?));
    let _ = writeln!(
        md,
        "#### The ladder against cuBLAS\n\n![ladder]({file})\n\nEach cell: the rung's time per GEMM; its speed \
         relative to cuBLAS (cuBLAS's time over the rung's: 1.00x is parity, 0.25x takes four times as long; this \
         table's one ratio, where the comparison charts give time ratios); `err`, the largest absolute difference \
         from cuBLAS's output on the check's random inputs (in fp16, 0.125 is one step of the output's \
         last bit at magnitudes 128-256).\n"
    );
    let _ = writeln!(
        md,
        "| rung | {} |\n|---|{}",
        shapes.join(" | "),
        "---|".repeat(shapes.len())
    );
    for r in &rungs {
        let row: Vec<String> = shapes
            .iter()
            .map(|s| {
                cell(r, s)
                    .map(crate::report::text::ladder_cell)
                    .unwrap_or_default()
            })
            .collect();
        let _ = writeln!(md, "| {r} | {} |", row.join(" | "));
    }
    // `auto`'s row, with the kernel it picked for each shape (the main job shows it the same way).
    let auto: Vec<String> = shapes
        .iter()
        .map(|s| {
            cell("auto", s)
                .map(|t| {
                    let picked = t
                        .variants
                        .get(1)
                        .map(|v| v.name.trim_start_matches("auto="));
                    format!(
                        "{} `{}`",
                        crate::report::text::ladder_cell(t),
                        picked.unwrap_or("?")
                    )
                })
                .unwrap_or_default()
        })
        .collect();
    if auto.iter().any(|c| !c.is_empty()) {
        let _ = writeln!(md, "| auto | {} |", auto.join(" | "));
    }
    // The rows after the ladder's, in the order they ran: the peers (`ext:NAME`), then FP8's (`fp8::DTYPE:LABEL`),
    // which get a table of their own because their baseline is cuBLASLt's FP8 path in the row's scheme.
    let mut extra: Vec<&str> = Vec::new();
    for t in &cells {
        let row = t
            .name
            .strip_prefix("ladder::")
            .and_then(|r| r.rsplit_once("::"))
            .map(|(row, _)| row);
        if let Some(row) =
            row.filter(|r| (r.starts_with("ext:") || r.starts_with("fp8::")) && !extra.contains(r))
        {
            extra.push(row);
        }
    }
    let line = |row: &str| -> String {
        shapes
            .iter()
            .map(|s| {
                cell(row, s)
                    .map(crate::report::text::ladder_cell)
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    for row in extra.iter().filter(|r| r.starts_with("ext:")) {
        let _ = writeln!(md, "| {row} | {} |", line(row));
    }
    md.push('\n');
    let fp8: Vec<&&str> = extra.iter().filter(|r| r.starts_with("fp8::")).collect();
    if !fp8.is_empty() {
        let _ = writeln!(
            md,
            "#### FP8 against cuBLASLt's FP8\n\nEach cell: the kernel's time per GEMM; its speed relative to \
             cuBLASLt's FP8 path in the row's scaling scheme (e4m3: per tensor; e4m3-row: per row of A and of B; \
             e4m3-block: 1x128 and 128x128 blocks), cuBLASLt's time over the kernel's; `err`, the largest absolute \
             difference from the fp32 reference on the dequantized operands.\n"
        );
        let _ = writeln!(
            md,
            "| row | {} |\n|---|{}",
            shapes.join(" | "),
            "---|".repeat(shapes.len())
        );
        for row in fp8 {
            let _ = writeln!(
                md,
                "| {} | {} |",
                row.trim_start_matches("fp8::"),
                line(row)
            );
        }
        md.push('\n');
    }
    Ok(())
}

/// The group a trial's comparison is drawn in: its name's first part (`ablation`, `read_floor`, ...).
fn group_of(name: &str) -> &str {
    name.split("::").next().unwrap_or(name)
}

/// One forest plot per group of trials, rows sorted by ratio, each plot's axis spanning its own group.
fn forest(
    md: &mut String,
    charts: &mut Vec<(String, String)>,
    stem: &str,
    trials: &[TrialRecord],
) -> Result<(), String> {
    let mut groups: Vec<(&str, Vec<ForestRow>)> = Vec::new();
    for t in trials
        .iter()
        .filter(|t| !t.name.starts_with("ladder::") && !t.name.contains("::rep"))
    {
        let Some(e) = verdict_of(t) else { continue };
        let seed = seed_note(t).map(|s| format!("; {s}")).unwrap_or_default();
        let row = ForestRow {
            label: t.name.clone(),
            ratio: e.ratio,
            interval: e.ci,
            note: format!("{} ({:.3}){seed}", e.verdict.word(), e.ratio),
            passed: t.passed,
        };
        let group = group_of(&t.name);
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((group, vec![row])),
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    let band = trials
        .iter()
        .find_map(verdict_of)
        .map(|e| e.settings.band)
        .unwrap_or(0.02);
    groups.sort_by(|a, b| a.0.cmp(b.0));
    let _ = writeln!(
        md,
        "#### Comparisons (time ratio = candidate / baseline time: under 1 is faster; the bar is the interval, \
         the shaded strip the no-change band; red: the trial failed; one chart per group, each on its own axis)\n"
    );
    for (group, mut rows) in groups {
        rows.sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
        let file = format!("{stem}-comparisons-{group}.svg");
        charts.push((
            file.clone(),
            charts::forest(
                &format!("{group} ({} comparisons)", rows.len()),
                &rows,
                band,
            )?,
        ));
        let _ = writeln!(md, "![{group}]({file})\n");
    }
    Ok(())
}

fn sweeps(
    md: &mut String,
    charts: &mut Vec<(String, String)>,
    stem: &str,
    trials: &[TrialRecord],
) -> Result<(), String> {
    for t in trials.iter().filter(|t| !t.table.is_empty()) {
        // Each ran point's time relative to the first, its interval chained through the neighbour comparisons.
        let mut parts = Vec::new();
        let mut started = false;
        let points: Vec<SweepPoint> = t
            .table
            .iter()
            .map(|row| {
                let relative = match (&row.vs_previous, row.relative_time) {
                    (_, None) => None,
                    (None, Some(_)) if !started => {
                        started = true;
                        Some((1.0, 1.0, 1.0))
                    }
                    (Some(e), Some(_)) => {
                        parts.push(e);
                        let confidence = e.settings.confidence;
                        let (m, lo, hi) = chained_interval(&parts, confidence);
                        Some((m.exp(), lo.exp(), hi.exp()))
                    }
                    (None, Some(r)) => Some((r, r, r)),
                };
                SweepPoint {
                    label: row.point.clone(),
                    relative,
                }
            })
            .collect();
        let file = format!("{stem}-{}.svg", safe(&t.name));
        charts.push((file.clone(), charts::sweep(&t.name, &points)?));
        let _ = writeln!(
            md,
            "#### {}\n\n![{}]({file})\n\n{}\n",
            t.name, t.name, t.judgement
        );
    }
    Ok(())
}

/// Sustained runs (each kernel alone, `sustain` and the `clock::` trials): one row per run, over its settled half.
fn sustained(md: &mut String, trials: &[TrialRecord]) {
    let opt = |x: Option<f64>, digits: usize| x.map_or("-".into(), |v| format!("{v:.digits$}"));
    for t in trials.iter().filter(|t| !t.sustained.is_empty()) {
        let _ = writeln!(
            md,
            "#### {} (each kernel alone)\n\n| pass | variant | us a launch | NVML MHz | probed MHz | MHz right after | cycles (K) | W | mJ a GEMM | batches power-capped | card busy |\n|---|---|---|---|---|---|---|---|---|---|---|",
            t.name
        );
        for r in &t.sustained {
            match &r.settled {
                Some(s) => {
                    let _ = writeln!(
                        md,
                        "| {} | `{}` | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} |",
                        r.pass,
                        r.variant,
                        s.us_per_launch,
                        opt(s.sm_clock_mhz, 0),
                        opt(s.probed_mhz, 0),
                        opt(s.after_mhz, 0),
                        opt(s.kcycles_per_launch, 1),
                        opt(s.power_w, 0),
                        opt(s.mj_per_launch, 1),
                        opt(s.power_capped_fraction.map(|f| f * 100.0), 0) + "%",
                        opt(s.busy_fraction.map(|f| f * 100.0), 0) + "%"
                    );
                }
                None => {
                    let _ = writeln!(
                        md,
                        "| {} | `{}` | too few batches to summarize | | | | | | | | |",
                        r.pass, r.variant
                    );
                }
            }
        }
        let _ = writeln!(md, "\n{}\n", t.judgement);
    }
}

fn noise_table(md: &mut String, trials: &[TrialRecord]) {
    let aa: Vec<&TrialRecord> = trials
        .iter()
        .filter(|t| t.name.starts_with("noise::"))
        .collect();
    if aa.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "#### Noise (A/A)\n\n| trial | verdict | ratio | interval | pair noise | between rounds | rounds |\n|---|---|---|---|---|---|---|"
    );
    for t in aa {
        if let Some(e) = verdict_of(t) {
            let _ = writeln!(
                md,
                "| `{}` | {} | {:.4} | [{:.4}, {:.4}] | {:.2}% | {:.2}% | {} |",
                t.name,
                e.verdict.word(),
                e.ratio,
                e.ci.0,
                e.ci.1,
                e.pair_sd * 100.0,
                e.between_round_sd * 100.0,
                e.rounds
            );
        }
    }
    md.push('\n');
}

/// Where a report goes by default: beside the first results file, in a folder named after it.
pub fn default_dir(first: &Path) -> PathBuf {
    let stem = crate::report::results::run_name(first);
    first
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{stem}-report"))
}

/// Writes the report (report.md and the charts) into `dir`.
pub fn write(report: &Report, dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, svg) in &report.charts {
        std::fs::write(dir.join(name), svg).map_err(|e| format!("{name}: {e}"))?;
    }
    let path = dir.join("report.md");
    std::fs::write(&path, &report.markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::committed_path as committed;

    #[test]
    fn shards_at_two_commits_merge_only_when_asked() {
        // 93711e8's first shard and c810a3f's second: the same kernels and trials, two device calls.
        // Given second shard first: shard order decides, as for shards of one commit.
        let runs = read_runs(&[
            committed("c810a3f/ablations-20261130T211640Z.json"),
            committed("93711e8/ablations-20261130T210632Z.json"),
        ])
        .unwrap();
        let total = runs[0].1.trials.len() + runs[1].1.trials.len();
        assert_eq!(merge_shards(runs.clone()).len(), 2, "two commits: two runs");
        let merged = crate::report::shards::merge_shards_across_commits(runs.clone());
        assert_eq!(merged.len(), 1);
        let run = &merged[0].1;
        assert_eq!(run.trials.len(), total);
        assert!(run.environment.commit.starts_with("93711e8"));
        assert!(run.environment.commit.contains(" + c810a3f"));
        // One ladder, every cell of both shards in it.
        let r = build_across_commits(&runs).unwrap();
        assert_eq!(r.markdown.matches("The ladder against cuBLAS").count(), 1);
    }

    #[test]
    fn shards_of_one_run_merge_into_one_section() {
        let runs = read_runs(&[
            committed("7baa087/ablations-20261130T190146Z.json"),
            committed("7baa087/ablations-20261130T185539Z.json"),
            committed("9a8c135/ablations-20261130T123530Z.json"),
        ])
        .unwrap();
        let (first, second) = (runs[1].1.trials.len(), runs[0].1.trials.len());
        let merged = merge_shards(runs);
        assert_eq!(merged.len(), 2, "two shards and one whole run");
        let (stem, run) = &merged[0];
        // Shard 1 first whatever the order given, every trial of both, the shard setting naming both.
        assert_eq!(stem, "ablations-20261130T185539Z-shards-1_2");
        assert_eq!(run.trials.len(), first + second);
        assert!(run
            .environment
            .settings
            .contains(&("GEMM_ABLATE_SHARD".to_string(), "1,2/2".to_string())));
        let r = build(&merged).unwrap();
        assert_eq!(r.markdown.matches("The ladder against cuBLAS").count(), 2);
        // The merged ladder has `auto`'s row with the kernels it picked.
        assert!(r.markdown.contains("| auto | "));
        assert!(r
            .markdown
            .contains("`rung10:bn=128,stages=6,evict_first=1,pdl=1`"));
    }

    #[test]
    fn a_report_of_the_committed_runs_has_every_section() {
        let runs = read_runs(&[
            committed("9a8c135/ablations-20261130T123530Z.json"),
            committed("9a8c135/microbench-20261130T124018Z.json"),
            committed("calibration-20261130T124145Z.json"),
        ])
        .unwrap();
        let r = build(&runs).unwrap();
        for part in [
            "## NVIDIA H200 on",
            "The ladder against cuBLAS",
            "Comparisons",
            "stages::rung3::square4096",
            "Noise (A/A)",
            "Calibration",
            "driver, CUDA | 580.159.04",
        ] {
            assert!(r.markdown.contains(part), "missing {part}");
        }
        assert!(r.charts.iter().any(|(n, _)| n.ends_with("-ladder.svg")));
        assert!(r.charts.len() >= 10);
        // The seed's verdict is printed beside the H200's.
        let forest = &r
            .charts
            .iter()
            .find(|(n, _)| n.starts_with("ablations") && n.ends_with("-comparisons-ablation.svg"))
            .unwrap()
            .1;
        assert!(forest.contains("seed: faster") && forest.contains("seed, not confirmed: "));
    }

    #[test]
    fn a_foreign_or_old_file_is_a_clear_error() {
        let e = read_runs(&[committed("b9d1c9c/ablations-full-20261130T010413Z.json")])
            .err()
            .unwrap();
        assert!(
            e.contains("not a gemm-ablate results file of this version"),
            "{e}"
        );
        let e = read_runs(&[committed("no-such-file.json")]).err().unwrap();
        assert!(e.contains("cannot read it"), "{e}");
        assert!(read_runs(&[]).is_err());
    }

    #[test]
    fn a_sustained_run_gets_its_table() {
        let text = crate::report::results::read_text(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("results/h200/f32970e/h75-clock-probe/runs/sustain-20261201T032537Z.json"),
        )
        .expect("the committed sustained run (kept as .json.xz)");
        let run: RunFile = serde_json::from_str(&text).expect("the committed sustained run parses");
        let report = build(&[("sustain-20261201T032537Z".into(), run)]).expect("a report");
        assert!(
            report.markdown.contains("(each kernel alone)")
                && report.markdown.contains("| 1433 | - | 75.8 |"),
            "{}",
            report.markdown
        );
    }

    #[test]
    fn runs_from_several_hosts_are_grouped() {
        let mut runs = read_runs(&[committed("9a8c135/ablations-20261130T123530Z.json")]).unwrap();
        let mut other = runs[0].clone();
        other.0 = "other".into();
        other.1.environment.host = "another-host".into();
        runs.push(other);
        let r = build(&runs).unwrap();
        assert_eq!(r.markdown.matches("\n## NVIDIA H200 on").count(), 2);
    }

    /// The main job's rows after the ladder's: a peer's in the ladder's table, FP8's in a table of their own.
    #[test]
    fn peers_and_fp8_rows_are_reported() {
        let mut runs = read_runs(&[committed("9a8c135/ablations-20261130T123530Z.json")]).unwrap();
        let trials = &mut runs[0].1.trials;
        let cell = trials
            .iter()
            .find(|t| t.name.starts_with("ladder::") && t.name.ends_with("::square4096"))
            .unwrap()
            .clone();
        for name in [
            "ladder::ext:peer::square4096",
            "ladder::fp8::e4m3:auto::square4096",
        ] {
            let mut t = cell.clone();
            t.name = name.into();
            trials.push(t);
        }
        let md = build(&runs).unwrap().markdown;
        let fp8 = md
            .find("#### FP8 against cuBLASLt's FP8")
            .expect("an FP8 table");
        let peer = md.find("| ext:peer | ").expect("the peer's row");
        assert!(peer < fp8 && md[fp8..].contains("| e4m3:auto | "), "{md}");
    }
}
