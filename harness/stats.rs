//! From paired timing samples to a verdict.
//!
//! The unit of replication is a pair of neighbouring batches (baseline, candidate) run back to back, in
//! alternating order (A B, B A, ...): their log time ratio cancels the clock drift both batches share. The mean
//! of the log ratios and its Student-t interval give the ratio and its uncertainty:
//! - Faster / Slower: the 95% interval lies entirely beyond the band (by default +-2%);
//! - NoChange: the 90% interval lies entirely inside the band (two one-sided tests at 5%), so "no change" means
//!   the measurement could see a change of the band's size and saw none;
//! - Inconclusive: neither, after the sampling budget ran out: the noise is reported with it.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
    Inconclusive,
}

impl Verdict {
    pub fn is_decisive(self) -> bool {
        self != Verdict::Inconclusive
    }
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsSettings {
    /// Half-width of the no-change band, as a fraction (0.02 = +-2%).
    pub band: f64,
    /// Confidence of the interval that must clear the band for Faster/Slower.
    pub confidence: f64,
    /// Confidence of the interval that must sit inside the band for NoChange (0.90 = TOST at 5%).
    pub equivalence_confidence: f64,
}

impl Default for StatsSettings {
    fn default() -> Self {
        StatsSettings {
            band: 0.02,
            confidence: 0.95,
            equivalence_confidence: 0.90,
        }
    }
}

impl StatsSettings {
    /// Defaults, overridden by GEMM_ABLATE_BAND, GEMM_ABLATE_CONFIDENCE, GEMM_ABLATE_EQUIV_CONFIDENCE.
    pub fn from_env() -> StatsSettings {
        let d = StatsSettings::default();
        StatsSettings {
            band: env_f64("GEMM_ABLATE_BAND", d.band),
            confidence: env_f64("GEMM_ABLATE_CONFIDENCE", d.confidence),
            equivalence_confidence: env_f64(
                "GEMM_ABLATE_EQUIV_CONFIDENCE",
                d.equivalence_confidence,
            ),
        }
    }
}

pub fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The estimate from a set of paired log ratios ln(candidate / baseline).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub pairs: usize,
    /// Candidate time over baseline time (geometric mean of the pair ratios).
    pub ratio: f64,
    /// Interval of the ratio at `confidence`.
    pub ci: (f64, f64),
    /// Interval of the ratio at `equivalence_confidence`.
    pub ci_equivalence: (f64, f64),
    /// Standard deviation of one pair's log ratio: the measured noise of a single comparison.
    pub pair_sd: f64,
    pub verdict: Verdict,
    pub settings: StatsSettings,
}

impl Estimate {
    /// Baseline time over candidate time: >1 means the candidate is faster.
    pub fn speedup(&self) -> f64 {
        1.0 / self.ratio
    }
    /// One line for a trial's output.
    pub fn summary(&self) -> String {
        format!(
            "ratio {:.4} (candidate/baseline time), {:.0}% CI [{:.4}, {:.4}], {} pairs, pair noise {:.2}% -> {} (band +-{:.1}%)",
            self.ratio,
            self.settings.confidence * 100.0,
            self.ci.0,
            self.ci.1,
            self.pairs,
            self.pair_sd * 100.0,
            self.verdict.word(),
            self.settings.band * 100.0
        )
    }
}

/// Mean and a two-sided interval of the mean at `confidence`, on the log scale.
fn interval(mean: f64, sd: f64, n: usize, confidence: f64) -> (f64, f64) {
    if sd == 0.0 {
        return (mean, mean);
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .expect("n >= 2 and sd > 0 give a valid t distribution");
    let p = (1.0 + confidence.clamp(0.5, 0.999_999)) / 2.0;
    let half = t.inverse_cdf(p) * sd / (n as f64).sqrt();
    (mean - half, mean + half)
}

pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Turns paired log ratios into an estimate and a verdict.
pub fn paired_estimate(log_ratios: &[f64], settings: StatsSettings) -> Estimate {
    let n = log_ratios.len();
    if n < 2 || log_ratios.iter().any(|x| !x.is_finite()) {
        let mean = if n == 1 { log_ratios[0] } else { 0.0 };
        return Estimate {
            pairs: n,
            ratio: mean.exp(),
            ci: (0.0, f64::INFINITY),
            ci_equivalence: (0.0, f64::INFINITY),
            pair_sd: f64::NAN,
            verdict: Verdict::Inconclusive,
            settings,
        };
    }
    let (mean, sd) = mean_sd(log_ratios);
    let (lo, hi) = interval(mean, sd, n, settings.confidence);
    let (elo, ehi) = interval(mean, sd, n, settings.equivalence_confidence);
    let (band_lo, band_hi) = ((1.0 - settings.band).ln(), (1.0 + settings.band).ln());
    let verdict = if hi < band_lo {
        Verdict::Faster
    } else if lo > band_hi {
        Verdict::Slower
    } else if elo > band_lo && ehi < band_hi {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    };
    Estimate {
        pairs: n,
        ratio: mean.exp(),
        ci: (lo.exp(), hi.exp()),
        ci_equivalence: (elo.exp(), ehi.exp()),
        pair_sd: sd,
        verdict,
        settings,
    }
}

/// Median of a sample (NaN for an empty one); does not reorder the input.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-normal noise (sum of uniforms) so the tests need no RNG crate and never flake.
    fn noise(seed: u64, n: usize, sd: f64) -> Vec<f64> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                let mut s = 0.0;
                for _ in 0..12 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    s += (state >> 11) as f64 / (1u64 << 53) as f64;
                }
                (s - 6.0) * sd
            })
            .collect()
    }

    fn pairs(shift: f64, sd: f64, n: usize, seed: u64) -> Vec<f64> {
        noise(seed, n, sd)
            .into_iter()
            .map(|e| shift.ln() + e)
            .collect()
    }

    #[test]
    fn a_ten_percent_faster_candidate_is_faster() {
        let e = paired_estimate(&pairs(0.90, 0.004, 20, 1), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::Faster, "{}", e.summary());
        assert!((e.ratio - 0.90).abs() < 0.01);
        assert!((e.speedup() - 1.0 / 0.9).abs() < 0.02);
    }

    #[test]
    fn a_ten_percent_slower_candidate_is_slower() {
        let e = paired_estimate(&pairs(1.10, 0.004, 20, 2), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::Slower, "{}", e.summary());
    }

    #[test]
    fn identical_distributions_give_no_change() {
        let e = paired_estimate(&pairs(1.0, 0.004, 20, 3), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::NoChange, "{}", e.summary());
        assert!(e.ci_equivalence.0 > 0.98 && e.ci_equivalence.1 < 1.02);
    }

    #[test]
    fn wide_noise_is_inconclusive_not_no_change() {
        // 10% noise per pair and few pairs: the interval is far wider than the band.
        let e = paired_estimate(&pairs(1.0, 0.10, 8, 4), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::Inconclusive, "{}", e.summary());
        assert!(e.pair_sd > 0.05);
    }

    #[test]
    fn a_change_inside_the_band_is_no_change() {
        let e = paired_estimate(&pairs(0.99, 0.002, 30, 5), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::NoChange, "{}", e.summary());
    }

    #[test]
    fn a_change_on_the_band_edge_is_inconclusive() {
        let e = paired_estimate(&pairs(0.98, 0.004, 30, 6), StatsSettings::default());
        assert_eq!(e.verdict, Verdict::Inconclusive, "{}", e.summary());
    }

    #[test]
    fn zero_variance_is_handled() {
        let same = paired_estimate(&[0.0; 10], StatsSettings::default());
        assert_eq!(same.verdict, Verdict::NoChange);
        let shifted = paired_estimate(&[(0.5f64).ln(); 10], StatsSettings::default());
        assert_eq!(shifted.verdict, Verdict::Faster);
    }

    #[test]
    fn too_few_or_non_finite_pairs_are_inconclusive() {
        assert_eq!(
            paired_estimate(&[], StatsSettings::default()).verdict,
            Verdict::Inconclusive
        );
        assert_eq!(
            paired_estimate(&[0.1], StatsSettings::default()).verdict,
            Verdict::Inconclusive
        );
        assert_eq!(
            paired_estimate(&[0.0, f64::NAN, 0.0], StatsSettings::default()).verdict,
            Verdict::Inconclusive
        );
    }

    #[test]
    fn a_wider_band_turns_a_small_change_into_no_change() {
        let data = pairs(0.96, 0.003, 20, 7);
        assert_eq!(
            paired_estimate(&data, StatsSettings::default()).verdict,
            Verdict::Faster
        );
        let wide = StatsSettings {
            band: 0.06,
            ..StatsSettings::default()
        };
        assert_eq!(paired_estimate(&data, wide).verdict, Verdict::NoChange);
    }

    #[test]
    fn median_does_not_reorder() {
        let xs = [3.0, 1.0, 2.0, 10.0];
        assert_eq!(median(&xs), 2.5);
        assert_eq!(xs, [3.0, 1.0, 2.0, 10.0]);
        assert!(median(&[]).is_nan());
    }
}
