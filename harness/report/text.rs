//! Every line of text a run prints, in one place: records and estimates hold data; this renders them.

use crate::kernel::ladder::Rung;
use crate::kernel::problem::Shape;
use crate::measure::check::CheckReport;
use crate::measure::measures::{self, Measure};
use crate::measure::stats::Estimate;
use crate::report::agreement::AgreementRow;
use crate::trial::calibration::CalibrationRow;
use crate::trial::job::{Observed, TrialRecord};

/// An estimate in one line: ratio, interval, design, the noises (pairs, rounds and, over worker processes, the
/// spread between processes with its prior), verdict.
pub fn estimate_line(e: &Estimate) -> String {
    let design = match &e.processes {
        None => format!(
            "over {} rounds x {} pairs ({} look{})",
            e.rounds,
            e.settings.pairs_per_round,
            e.looks,
            if e.looks == 1 { "" } else { "s" }
        ),
        Some(_) => format!(
            "over {} worker process{} x {} rounds x {} pairs (a look after each, at most {})",
            e.looks,
            if e.looks == 1 { "" } else { "es" },
            e.settings.rounds_per_look,
            e.settings.pairs_per_round,
            e.settings.looks
        ),
    };
    let between = match &e.processes {
        None => String::new(),
        Some(p) => format!(
            ", between processes {:.2}% ({}; {})",
            p.sd * 100.0,
            match p.observed_sd {
                Some(sd) => format!("seen {:.2}%", sd * 100.0),
                None => "one process: the prior alone".into(),
            },
            match &p.prior {
                Some(prior) => format!(
                    "prior {:.2}% on {:.1} df from {}",
                    prior.sd * 100.0,
                    prior.df,
                    prior.source
                ),
                None => "no prior for this GPU".into(),
            }
        ),
    };
    format!(
        "ratio {:.4} (candidate/baseline time), {:.1}% CI [{:.4}, {:.4}] {design}, noise: pair {:.2}%, between rounds {:.2}%{between} -> {} (band +-{:.1}%)",
        e.ratio,
        e.settings.look_confidence(e.looks) * 100.0,
        e.ci.0,
        e.ci.1,
        e.pair_sd * 100.0,
        e.between_round_sd * 100.0,
        e.verdict.word(),
        e.settings.band * 100.0
    )
}

/// Where the worker processes disagree far beyond what each stated: what that can mean and what to try.
pub fn disagreement_line(e: &Estimate) -> Option<String> {
    let (seen, stated) = e.processes.as_ref()?.disagreement()?;
    Some(format!(
        "the worker processes disagree: their estimates spread {:.2}% where each stated about {:.2}%. A process can \
         run in a state its rounds cannot show; on an H100 it was where the block scheduler starts a grid of under \
         one wave (docs/between-processes.md). GEMM_ABLATE_RANDOMIZE=scheduler starts every round from one fixed \
         state, a verdict at that placement",
        seen * 100.0,
        stated * 100.0
    ))
}

/// A correctness check in one line.
pub fn check_line(c: &CheckReport) -> String {
    match &c.problem {
        None => format!(
            "correct: max abs error {:.4}, relative Frobenius error {:.2e}",
            c.max_abs_err, c.rel_fro_err
        ),
        Some(p) => p.clone(),
    }
}

/// "190.5 us, throughput 722.1 TFLOP/s, effective bandwidth 1.06 TB/s (26% of the 4.09 TB/s read floor, 25% of the
/// 4.30 TB/s copy)": every measure with its unit, the bandwidth beside the floors it is measured against where
/// `gpu_name` is a GPU they were measured on (`measures::floors_for`).
pub fn measures_line(ms: &[Measure], gpu_name: Option<&str>) -> String {
    let floors = measures::floors_for(gpu_name);
    ms.iter()
        .map(|m| match (m.name.as_str(), floors) {
            (measures::TIME, _) => format!("{:.1} {}", m.value, m.unit),
            (measures::BANDWIDTH, Some((read, copy))) => format!(
                "{} {:.2} {} ({:.0}% of the {read:.2} TB/s read floor, {:.0}% of the {copy:.2} TB/s copy)",
                m.name,
                m.value,
                m.unit,
                100.0 * m.value / read,
                100.0 * m.value / copy,
            ),
            _ if m.value < 10.0 => format!("{} {:.2} {}", m.name, m.value, m.unit),
            _ => format!("{} {:.1} {}", m.name, m.value, m.unit),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A finished record the way every trial reports: what ran, what was expected and why, what was seen.
pub fn record_text(r: &TrialRecord) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "  ran: {}", r.description);
    if let Some(e) = &r.expectation {
        for line in e.describe() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for v in &r.variants {
        let timing = if v.measures.is_empty() {
            String::new()
        } else {
            format!(
                ", {}",
                measures_line(&v.measures, r.gpu.as_ref().map(|g| g.name.as_str()))
            )
        };
        let check = v
            .check
            .as_ref()
            .map(|c| format!(", {} (seed {})", check_line(c), c.seed))
            .unwrap_or_default();
        let _ = writeln!(out, "  {}: {}{timing}{check}", v.name, v.label);
    }
    if let Some(c) = &r.comparison {
        let _ = writeln!(
            out,
            "  timing: {} vs {}: {:.1} us vs {:.1} us (medians), SM clock median {} MHz, {:.1} s",
            c.candidate,
            c.baseline,
            c.candidate_median_us,
            c.baseline_median_us,
            c.sm_clock_median_mhz
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "unknown".into()),
            c.elapsed_s
        );
        if let Some(probed) = c.probed_median_mhz {
            let mhz =
                |m: Option<f64>| m.map_or_else(|| "no probe".into(), |m| format!("{m:.0} MHz"));
            let ratio = match probed {
                [Some(b), Some(c)] => format!(" ({:.3} of the baseline's)", c / b),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "  probed clock in the rounds (clock_probe=1, medians): {} {}, {} {}{ratio}",
                c.candidate,
                mhz(probed[1]),
                c.baseline,
                mhz(probed[0]),
            );
        }
        let _ = writeln!(out, "  estimate: {}", estimate_line(&c.estimate));
        if let Some(note) = disagreement_line(&c.estimate) {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    if !r.table.is_empty() {
        let _ = writeln!(
            out,
            "  {:<34} {:>11} {:>24} {:>14} {:>26}",
            "point", "median us", "rate", "time vs first", "vs previous (look CI)"
        );
        for row in &r.table {
            let _ = match &row.rejected {
                Some(why) => writeln!(out, "  {:<34} rejected: {why}", row.point),
                None => writeln!(
                    out,
                    "  {:<34} {:>11.1} {:>24} {:>14} {:>26}",
                    row.point,
                    row.median_us().unwrap_or(f64::NAN),
                    measures::headline(&row.measures)
                        .map(|m| format!("{:.1} {}", m.value, m.unit))
                        .unwrap_or_default(),
                    row.relative_time
                        .map(|t| format!("{t:.3}"))
                        .unwrap_or_default(),
                    row.vs_previous
                        .as_ref()
                        .map(|e| format!("{} [{:.3}, {:.3}]", e.verdict.word(), e.ci.0, e.ci.1))
                        .unwrap_or_else(|| "-".into())
                ),
            };
        }
    }
    if !r.sustained.is_empty() {
        out.push_str(&sustained_table(&r.sustained));
    }
    let _ = writeln!(out, "  outcome: {}", r.judgement);
    for f in &r.flags {
        let _ = writeln!(out, "  flag: {f}");
    }
    out
}

/// Sustained runs, one line each over its settled second half; time and clock also over the same pass's first
/// variant (runs one after another in one process: a steady state each, not a paired verdict). MHz is what NVML
/// reports, probed what a `clock_probe=1` kernel measured itself, after what one thread measured right after each
/// batch (any variant, cuBLAS too); kcycles are at the probed clock (none without it); busy% the share of the
/// time the card spent in the batches (below about 95% the run is not back to back, H135).
pub fn sustained_table(runs: &[crate::measure::sustained::SustainedRun]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<4} {:<34} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8} {:>5} {:>8} {:>6} {:>5} {:>7} {:>7}",
        "pass",
        "variant (settled half)",
        "us",
        "iqr%",
        "drift",
        "MHz",
        "probed",
        "after",
        "kcycles",
        "W",
        "mJ/GEMM",
        "capped",
        "busy%",
        "t/first",
        "f/first"
    );
    let opt = |x: Option<f64>, digits: usize| {
        x.map(|v| format!("{v:.digits$}"))
            .unwrap_or_else(|| "-".into())
    };
    for r in runs {
        let Some(s) = &r.settled else {
            let _ = writeln!(
                out,
                "  {:<4} {:<34} too few batches in the second half to summarize",
                r.pass, r.variant
            );
            continue;
        };
        let first = runs
            .iter()
            .find(|f| f.pass == r.pass)
            .and_then(|f| f.settled.as_ref());
        let _ = writeln!(
            out,
            "  {:<4} {:<34} {:>9.1} {:>6.2} {:>6.3} {:>6} {:>6} {:>6} {:>8} {:>5} {:>8} {:>6} {:>5} {:>7} {:>7}",
            r.pass,
            r.variant,
            s.us_per_launch,
            s.us_iqr_rel * 100.0,
            s.drift,
            opt(s.sm_clock_mhz, 0),
            opt(s.probed_mhz, 0),
            opt(s.after_mhz, 0),
            opt(s.kcycles_per_launch, 1),
            opt(s.power_w, 0),
            opt(s.mj_per_launch, 1),
            opt(s.power_capped_fraction.map(|f| f * 100.0), 0),
            opt(s.busy_fraction.map(|f| f * 100.0), 0),
            opt(first.map(|f| s.us_per_launch / f.us_per_launch), 3),
            opt(
                first.and_then(|f| Some(s.sm_clock_mhz? / f.sm_clock_mhz?)),
                3
            ),
        );
    }
    out
}

/// Prints `record_text` in one piece, so records of trials running side by side do not interleave.
pub fn print_record(r: &TrialRecord) {
    print!("{}", record_text(r));
}

/// One trial across its runs.
pub fn agreement_line(row: &AgreementRow) -> String {
    let lo = row.ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = row.ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{} runs, ratios {lo:.4} to {hi:.4}, verdicts {} ({}), intervals {}",
        row.runs,
        row.verdicts
            .iter()
            .map(|v| v.word())
            .collect::<Vec<_>>()
            .join(" / "),
        if row.verdicts_agree {
            "agree"
        } else {
            "DISAGREE"
        },
        if row.intervals_overlap {
            "overlap"
        } else {
            "do NOT overlap"
        }
    )
}

/// The agreement table, and a last line counting agreements.
pub fn print_agreement(rows: &[AgreementRow]) {
    println!("\nRun-to-run agreement (each run in its own process):");
    for row in rows {
        println!("  {:<48} {}", row.name, agreement_line(row));
    }
    let verdicts = rows.iter().filter(|r| r.verdicts_agree).count();
    let overlap = rows.iter().filter(|r| r.intervals_overlap).count();
    println!(
        "  {} trials: verdicts agree in {verdicts}, intervals overlap in {overlap}",
        rows.len()
    );
}

/// A calibration row: the truth and how the short comparisons judged it.
pub fn calibration_line(row: &CalibrationRow) -> String {
    let truth = row
        .true_ratio
        .map(|(r, lo, hi)| format!("true ratio {r:.4} [{lo:.4}, {hi:.4}]"))
        .unwrap_or_else(|| match row.real {
            true => "truth: the mean over the repetitions".into(),
            false => "true ratio 1 (A/A)".into(),
        });
    format!(
        "{:<34} {truth}: faster {}, slower {}, no change {}, inconclusive {}, failed {} of {}; interval +-{:.2}% (median), {:.1} s per comparison ({:.1} s timing)",
        row.what,
        row.faster,
        row.slower,
        row.no_change,
        row.inconclusive,
        row.failed,
        row.repetitions,
        row.median_half_width_pct,
        row.median_seconds,
        row.median_timing_seconds
    ) + &match (row.coverage, row.process_sd_pct, row.median_se_pct) {
        (Some(c), Some(sd), Some(se)) => format!(
            "; intervals holding the mean over processes {:.0}%, sd between processes {sd:.2}% against {se:.2}% stated",
            c * 100.0
        ),
        _ => String::new(),
    } + &match row.real {
        true => {
            let (c, all) = row.contradicting_pairs();
            format!("; pairs with contradicting decisive verdicts {c} of {all}")
        }
        false => String::new(),
    }
}

/// A ladder cell: "123.4 us 0.85x err 0.000", marked when it left its pin, or what went wrong.
pub fn ladder_cell(r: &TrialRecord) -> String {
    let kernel = r.variants.get(1);
    let err = kernel.and_then(|v| v.check.as_ref()).map(|c| c.max_abs_err);
    let mark = if r.passed { "" } else { " (!)" };
    match (kernel.and_then(|v| v.median_us()), r.speedup(), err) {
        (Some(us), Some(s), Some(e)) => format!("{us:.1} us {s:.2}x err {e:.3}{mark}"),
        _ => {
            let why = match &r.observed {
                Observed::Wrong { message, .. } => message.clone(),
                Observed::Hang(m) | Observed::HostTimeout(m) | Observed::Error(m) => m.clone(),
                o => o.kind().to_string(),
            };
            let first = why.lines().next().unwrap_or("");
            format!("FAILED: {}", first.chars().take(60).collect::<String>())
        }
    }
}

/// The main job's table: every rung against cuBLAS on every shape.
pub fn print_ladder(records: &[TrialRecord], shapes: &[Shape]) {
    println!("\nLadder vs cuBLAS (fp16; time per GEMM, speed relative to cuBLAS, max abs error vs cuBLAS;");
    println!("(!) marks a cell whose ratio to cuBLAS moved beyond its pinned value; ext: rows are peers, checked and");
    println!("timed, their verdicts against auto in their hypothesis files)\n");
    // The peers' rows (ext:NAME) after the ladder and `auto`, in the order they ran.
    let mut rows: Vec<String> = Rung::ALL.iter().map(|r| r.name()).collect();
    rows.push("auto".into());
    rows.extend(
        rows_after(records, "ladder::ext:")
            .into_iter()
            .map(|p| format!("ext:{p}")),
    );
    print_table(
        records,
        shapes,
        ("rung", "cuBLAS", "ladder::"),
        "ladder::",
        &rows,
    );
}

/// The main job's FP8 table: each FP8 row (`ladder::fp8::DTYPE:LABEL::SHAPE`) against cuBLASLt's FP8 path in the
/// row's scaling scheme, with cuBLASLt's per-tensor time and throughput on top.
pub fn print_fp8_ladder(records: &[TrialRecord], shapes: &[Shape]) {
    println!("\nFP8 vs cuBLASLt's FP8 (e4m3 operands, bf16 output; a row's baseline is cuBLASLt in the row's scaling");
    println!("scheme: e4m3 per tensor, e4m3-row per row of A and B, e4m3-block 1x128 and 128x128; time per GEMM, speed");
    println!(
        "relative to cuBLASLt, max abs error vs the fp32 reference on the dequantized operands)\n"
    );
    let rows = rows_after(records, "ladder::fp8::");
    let header = ("row", "cuBLASLt (e4m3)", "ladder::fp8::e4m3:");
    print_table(records, shapes, header, "ladder::fp8::", &rows);
}

/// The rows of the records named `{prefix}ROW::SHAPE`, in the order they ran.
fn rows_after(records: &[TrialRecord], prefix: &str) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    for r in records {
        let row = r
            .name
            .strip_prefix(prefix)
            .and_then(|rest| rest.rsplit_once("::"));
        if let Some((row, _)) = row.filter(|(row, _)| !rows.iter().any(|x| x == row)) {
            rows.push(row.to_string());
        }
    }
    rows
}

/// One table of the main job: the shapes; the baseline's time and throughput on each, from the first record named
/// `{baseline_cells}...` that timed it (a failed cell has none); then each row's cells, the records named
/// `{prefix}ROW::SHAPE`. `header`: the first column's title, the baseline row's name, `baseline_cells`.
fn print_table(
    records: &[TrialRecord],
    shapes: &[Shape],
    (title, baseline, baseline_cells): (&str, &str, &str),
    prefix: &str,
    rows: &[String],
) {
    // Peers' and FP8's row names (`e4m3:ext:triton_persistent_e4m3`) are longer than the rungs'.
    let width = rows.iter().map(String::len).max().unwrap_or(0).max(22);
    print!("{title:<width$}");
    for s in shapes {
        print!(" | {:<26}", s.name);
    }
    println!();
    print!("{baseline:<width$}");
    for s in shapes {
        let c = records
            .iter()
            .filter(|r| r.name.starts_with(baseline_cells) && r.shape.as_ref() == Some(s))
            .filter_map(|r| r.variants.first())
            .find_map(|v| {
                let tflops = v.measure(measures::THROUGHPUT).unwrap_or(0.0);
                v.median_us()
                    .map(|us| format!("{us:.1} us {tflops:.0} TF/s"))
            })
            .unwrap_or_default();
        print!(" | {c:<26}");
    }
    println!();
    for row in rows {
        print!("{row:<width$}");
        for s in shapes {
            let name = format!("{prefix}{row}::{}", s.name);
            let c = records
                .iter()
                .find(|r| r.name == name)
                .map(ladder_cell)
                .unwrap_or_default();
            print!(" | {c:<26}");
        }
        println!();
    }
}

/// "[12/133] 0:41 elapsed, about 6:30 left: ablation::swizzle::square4096"
pub fn progress_line(k: usize, total: usize, elapsed: std::time::Duration, name: &str) -> String {
    let clock = |s: f64| format!("{}:{:02}", (s / 60.0) as u64, (s % 60.0) as u64);
    let e = elapsed.as_secs_f64();
    let left = if k > 1 {
        format!(
            ", about {} left",
            clock(e / (k - 1) as f64 * (total + 1 - k) as f64)
        )
    } else {
        String::new()
    };
    format!("[{k}/{total}] {} elapsed{left}: {name}", clock(e))
}

/// A run against a baseline: every trial that changed, then counts.
pub fn print_baseline(c: &crate::report::baseline::BaselineComparison, name: &str) {
    use crate::measure::stats::Verdict;
    println!("\nAgainst the baseline {name:?} (ratio to each trial's in-run reference, this run / baseline):");
    println!("  ({})", c.between_runs);
    for ch in c
        .changes
        .iter()
        .filter(|ch| ch.verdict != Verdict::NoChange)
    {
        println!(
            "  {:<48} {:.4} -> {:.4}: x{:.4} [{:.4}, {:.4}] {}",
            ch.trial,
            ch.baseline_ratio,
            ch.ratio,
            ch.change,
            ch.interval.0,
            ch.interval.1,
            match ch.verdict {
                Verdict::Slower => "SLOWER (regressed)",
                Verdict::Faster => "faster (improved)",
                Verdict::Inconclusive => "inconclusive",
                Verdict::NoChange => "no change",
            }
        );
        if let Some(why) = &ch.reference_changed {
            println!("  {:<48} ({why})", "");
        }
    }
    let count = |v| c.changes.iter().filter(|ch| ch.verdict == v).count();
    println!(
        "  {} trials: {} slower, {} faster, {} no change, {} inconclusive; {} new, {} only in the baseline",
        c.changes.len(),
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::NoChange),
        count(Verdict::Inconclusive),
        c.only_now.len(),
        c.only_baseline.len()
    );
    println!(
        "  two runs carry the drift between them; to judge one external kernel across two commits without it, pair\n  \
         both builds in one process: compare SHAPE \"$(tools/kernel-at.sh COMMIT NAME)\" ext:NAME (docs/external-kernels.md)"
    );
}

/// `profile`: the variant's kernel and cuBLAS's, metric by metric, with their ratio.
pub fn profile_text(p: &crate::trial::profile::Profile) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "variant: {}", p.variant_kernel);
    let _ = writeln!(out, "cuBLAS:  {}", p.cublas_kernel);
    let _ = writeln!(
        out,
        "\n{:<34} {:>14} {:>14} {:>10}  unit",
        "metric", "variant", "cuBLAS", "ratio"
    );
    let show = |v: Option<f64>| match v {
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
        None => "n/a".into(),
    };
    for r in &p.rows {
        let ratio = match (r.variant, r.cublas) {
            (Some(a), Some(b)) if b != 0.0 => format!("{:.3}", a / b),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<34} {:>14} {:>14} {:>10}  {}",
            r.label,
            show(r.variant),
            show(r.cublas),
            ratio,
            r.unit
        );
    }
    let _ = writeln!(out, "\nreport: {}", p.report.display());
    out
}

/// `list`: every rung with what it adds and the seed's finding, then every switch.
pub fn list_text() -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for r in Rung::ALL {
        let _ = writeln!(
            out,
            "{:<22} {}\n{:<22} seed (B200): {}",
            r.name(),
            r.change(),
            "",
            r.seed_finding()
        );
    }
    let _ = writeln!(
        out,
        "\nSwitches (in specs like rung8:cluster=1,pingpong=0):"
    );
    for s in crate::kernel::switches::SWITCHES {
        let _ = writeln!(
            out,
            "  {:<12} {:<22} {}",
            s.key,
            s.define.unwrap_or("(launch side)"),
            s.doc
        );
    }
    // The other families, each as it describes itself (harness/families/; external kernels list their manifests).
    let _ = write!(
        out,
        "\nOutside the ladder (`auto` runs none of them):\n{}",
        crate::families::listing()
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_disagreement_between_processes_says_what_to_try() {
        use super::disagreement_line;
        use crate::measure::stats::{estimate, ProcessLevel, StatsSettings};
        let mut e = estimate(
            &[vec![0.01, 0.012], vec![0.011, 0.009]],
            StatsSettings::default(),
        );
        assert_eq!(disagreement_line(&e), None, "one process: nothing to say");
        e.processes = Some(Box::new(ProcessLevel {
            means: vec![0.0445, -0.0223, 0.0410],
            ses: vec![0.0017, 0.0018, 0.0017],
            observed_sd: Some(0.0376),
            sd: 0.0376,
            prior: None,
        }));
        let line = disagreement_line(&e).unwrap();
        assert!(
            line.contains("spread 3.76% where each stated about 0.17%"),
            "{line}"
        );
        assert!(line.contains("GEMM_ABLATE_RANDOMIZE=scheduler"), "{line}");
    }

    #[test]
    fn progress_says_where_the_run_stands() {
        let l = super::progress_line(3, 10, std::time::Duration::from_secs(20), "t");
        assert_eq!(l, "[3/10] 0:20 elapsed, about 1:20 left: t");
        assert_eq!(
            super::progress_line(1, 10, std::time::Duration::from_secs(0), "t"),
            "[1/10] 0:00 elapsed: t"
        );
    }

    #[test]
    fn bandwidth_is_shown_beside_its_floor_on_the_gpu_that_measured_it() {
        // 1x8192x8192 in 42.9 us: 134 MB of weights.
        let shape = crate::kernel::problem::Shape::new("m1", 1, 8192, 8192);
        let measures = crate::measure::measures::gemm(42.9, &shape);
        let line = super::measures_line(&measures, Some("NVIDIA H200"));
        assert!(
            line.contains(
                "effective bandwidth 3.13 TB/s (77% of the 4.09 TB/s read floor, 73% of the 4.30 TB/s copy)"
            ),
            "{line}"
        );
        for other in [Some("NVIDIA H100 80GB HBM3"), None] {
            let line = super::measures_line(&measures, other);
            assert!(
                line.ends_with("effective bandwidth 3.13 TB/s"),
                "{other:?}: {line}"
            );
        }
    }
}
