//! Run-to-run agreement: the same trial measured in separate processes must give intervals that overlap and the
//! same verdict. Fed by `GEMM_ABLATE_REPEAT=N` (each GPU trial in N processes) or by `gemm-ablate agree FILE...`
//! (records of the same trial across results files).

use crate::measure::stats::Verdict;
use crate::trial::job::{Observed, TrialRecord};
use serde::Serialize;

/// One trial across its runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgreementRow {
    pub name: String,
    pub runs: usize,
    pub verdicts: Vec<Verdict>,
    pub ratios: Vec<f64>,
    pub intervals: Vec<(f64, f64)>,
    /// Some ratio lies inside every run's interval.
    pub intervals_overlap: bool,
    pub verdicts_agree: bool,
}

/// Agreement of the comparison records of one trial (other records are skipped).
pub fn agree(records: &[TrialRecord]) -> AgreementRow {
    let estimates: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.observed {
            Observed::Compared(e) => Some(e),
            _ => None,
        })
        .collect();
    let intervals: Vec<(f64, f64)> = estimates.iter().map(|e| e.ci).collect();
    let common_lo = intervals
        .iter()
        .map(|i| i.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let common_hi = intervals.iter().map(|i| i.1).fold(f64::INFINITY, f64::min);
    let verdicts: Vec<Verdict> = estimates.iter().map(|e| e.verdict).collect();
    AgreementRow {
        name: records.first().map(|r| r.name.clone()).unwrap_or_default(),
        runs: estimates.len(),
        verdicts_agree: verdicts.windows(2).all(|w| w[0] == w[1]),
        verdicts,
        ratios: estimates.iter().map(|e| e.ratio).collect(),
        intervals_overlap: common_lo <= common_hi,
        intervals,
    }
}

/// One row per comparison trial that ran more than once, in first-seen order.
pub fn by_trial(records: &[TrialRecord]) -> Vec<AgreementRow> {
    let mut names: Vec<&str> = Vec::new();
    for r in records {
        if matches!(r.observed, Observed::Compared(_)) && !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    names
        .into_iter()
        .map(|n| {
            let same: Vec<TrialRecord> = records.iter().filter(|r| r.name == n).cloned().collect();
            agree(&same)
        })
        .filter(|row| row.runs > 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::{estimate, StatsSettings};
    use crate::trial::job::Job;

    fn record(shift: f64) -> TrialRecord {
        let mut rng = crate::measure::oc::Rng::new(shift.to_bits());
        let rounds: Vec<Vec<f64>> = (0..8)
            .map(|_| (0..6).map(|_| shift + 0.005 * rng.normal()).collect())
            .collect();
        let e = estimate(&rounds, StatsSettings::default());
        TrialRecord::new(
            "ablation::x::square4096",
            &Job::CublasVsCpu {
                dtype: crate::DType::F16,
            },
            Observed::Compared(e),
        )
    }

    #[test]
    fn close_runs_agree_and_distant_ones_do_not() {
        let same = agree(&[record(0.05), record(0.0501)]);
        assert!(
            same.verdicts_agree && same.intervals_overlap,
            "{}",
            crate::report::text::agreement_line(&same)
        );
        let apart = agree(&[record(0.036), record(0.09)]);
        assert!(
            apart.verdicts_agree && !apart.intervals_overlap,
            "{}",
            crate::report::text::agreement_line(&apart)
        );
        let rows = by_trial(&[record(0.0), record(0.05)]);
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].verdicts_agree);
    }
}
