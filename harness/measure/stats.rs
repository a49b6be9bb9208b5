//! From rounds of paired timing samples to a verdict, with error rates that hold from one run to the next.
//!
//! The unit of replication is a *round*: fresh operand allocations, its own warm-up, its own A/B order, then a
//! few pairs of neighbouring batches (baseline, candidate). Within a round the log time ratio of a pair cancels
//! the clock drift both batches share; between rounds, whatever is fixed for a stretch of time (where the
//! operands landed in memory, the launch count per batch, the clock state) changes. The estimate of a round is
//! the mean of its pairs' log ratios, and the interval is a Student-t interval over the round estimates. A pair
//! more than `DISTURBED_PAIR_SDS` robust standard deviations off its round's median (one batch of the pair hit by
//! an interrupt or a throttle: 15-90% off where the pairs agree to 1%, H159) is set aside and counted.
//!
//! Why a t-interval over round means rather than a random-effects fit: every round has the same number of pairs
//! (a balanced one-way design), so the variance of a round mean is exactly between-round variance plus
//! within-round variance over the pair count, and the t-interval over round means with rounds - 1 degrees of
//! freedom is the exact interval for the grand mean under that model. No variance component has to be
//! estimated (and none can come out negative), and the interval widens by itself when the rounds disagree.
//!
//! The stopping rule is group-sequential with planned looks (by default 3: after 8, 16 and 24 rounds). The
//! overall error rates are split evenly across the looks (Bonferroni), which keeps them at or under their
//! stated levels whatever the correlation between looks; `oc.rs` simulates the rule and the CPU tests assert
//! its operating characteristics. At each look:
//! - Faster / Slower: the (1 - alpha / looks) interval lies entirely beyond the band (by default +-2%);
//! - NoChange: the (1 - 2 alpha_eq / looks) interval lies entirely inside the band (two one-sided tests), so
//!   "no change" means the measurement could have seen a change of the band's size and did not;
//! - otherwise sample the next look; after the last look the verdict is Inconclusive, said with the noise.

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

/// The decision rule: band, overall error levels and the planned looks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsSettings {
    /// Half-width of the no-change band, as a fraction (0.02 = +-2%).
    pub band: f64,
    /// Overall confidence for Faster/Slower (0.95: a false "faster" or "slower" at most 5% of the time).
    pub confidence: f64,
    /// Overall confidence for NoChange (0.90 = two one-sided tests at 5%).
    pub equivalence_confidence: f64,
    /// Rounds between looks.
    pub rounds_per_look: usize,
    /// Planned looks; the last one ends the comparison.
    pub looks: usize,
    /// Pairs of batches per round.
    pub pairs_per_round: usize,
    /// How the error rates are shared out over the planned looks (records written before this field existed
    /// were judged with an even split).
    #[serde(default)]
    pub spending: Spending,
}

/// How a rule's overall error is shared out over its planned looks. Any shares summing to at most one keep the
/// overall rates at or under their stated levels whatever the correlation between looks (Bonferroni); where the
/// shares put the error decides which comparisons stop early and how often a comparison near a band edge ends
/// decisive rather than inconclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Spending {
    /// Every planned look gets the same share.
    #[default]
    Even,
    /// The first look gets `first`, the last planned look `last`, the looks between share what is left evenly
    /// (with two looks, the second gets all but `first`).
    Shares { first: f64, last: f64 },
}

impl Spending {
    /// The share of the overall error that look `look` (1-based) of `looks` planned may spend.
    pub fn share(self, look: usize, looks: usize) -> f64 {
        let looks = looks.max(1);
        let look = look.clamp(1, looks);
        match self {
            Spending::Even => 1.0 / looks as f64,
            Spending::Shares { .. } if looks == 1 => 1.0,
            Spending::Shares { first, .. } if looks == 2 => {
                if look == 1 {
                    first
                } else {
                    1.0 - first
                }
            }
            Spending::Shares { first, last } => match look {
                1 => first,
                l if l == looks => last,
                _ => (1.0 - first - last).max(0.0) / (looks - 2) as f64,
            },
        }
    }
}

impl Default for StatsSettings {
    fn default() -> Self {
        StatsSettings {
            band: 0.02,
            confidence: 0.95,
            equivalence_confidence: 0.90,
            rounds_per_look: 8,
            looks: 3,
            pairs_per_round: 6,
            spending: Spending::Even,
        }
    }
}

impl StatsSettings {
    /// Nominal two-sided confidence of the Faster/Slower interval at look `look` (1-based).
    pub fn look_confidence(&self, look: usize) -> f64 {
        1.0 - (1.0 - self.confidence) * self.spending.share(look, self.looks)
    }
    /// Nominal two-sided confidence of the NoChange interval at look `look`.
    pub fn look_equivalence_confidence(&self, look: usize) -> f64 {
        1.0 - (1.0 - self.equivalence_confidence) * self.spending.share(look, self.looks)
    }
    pub fn max_rounds(&self) -> usize {
        self.rounds_per_look * self.looks
    }
    /// True after the rounds that end a look.
    pub fn is_look(&self, rounds_done: usize) -> bool {
        rounds_done > 0 && rounds_done.is_multiple_of(self.rounds_per_look)
    }
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Two-sided Student-t quantile for `confidence` at `df` degrees of freedom.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df.max(1.0)).expect("df >= 1 gives a valid t distribution");
    t.inverse_cdf((1.0 + confidence.clamp(0.5, 0.999_999)) / 2.0)
}

/// The prior of a comparison's between-process variance: sd^2 on `df` degrees of freedom.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessPrior {
    /// Typical sd of one process's log ratio around the comparison's mean over processes.
    pub sd: f64,
    /// How much to trust `sd` for a comparison not yet seen: few degrees of freedom mean that comparisons differ
    /// widely in their spread.
    pub df: f64,
    /// Where it was measured (GPU, kind, runs).
    pub source: String,
}

/// What the processes of one comparison gave, and the between-process variance its interval carries
/// (measure/processes.rs builds it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessLevel {
    /// Each process's mean log ratio and the standard error it stated.
    pub means: Vec<f64>,
    pub ses: Vec<f64>,
    /// Sample sd of the processes' log ratios (none for one process).
    pub observed_sd: Option<f64>,
    /// The sd of one process's log ratio the interval used (`tau` in measure/processes.rs).
    pub sd: f64,
    /// The prior it was moderated towards (none where the GPU has none).
    pub prior: Option<ProcessPrior>,
}

/// Processes disagree beyond their rounds where their estimates spread by at least `DISAGREE_FLOOR` and by at
/// least `DISAGREE_FACTOR` times what each stated (root mean square of their standard errors): on an H100 the
/// multicast step's processes spread 3.4% against 0.17% stated, the A/A pairs' 0.08-0.11% against 0.08-0.11%
/// (H141, results/h100/11f24a0/).
pub const DISAGREE_FLOOR: f64 = 0.005;
pub const DISAGREE_FACTOR: f64 = 4.0;

impl ProcessLevel {
    /// The processes' observed spread and the spread each stated, where the first is past both thresholds above:
    /// a sign of a state that each process draws once and its rounds cannot show (H141-H148).
    pub fn disagreement(&self) -> Option<(f64, f64)> {
        let seen = self.observed_sd?;
        if self.ses.is_empty() {
            return None;
        }
        let stated = (self.ses.iter().map(|s| s * s).sum::<f64>() / self.ses.len() as f64).sqrt();
        (seen >= DISAGREE_FLOOR && seen >= DISAGREE_FACTOR * stated).then_some((seen, stated))
    }
}

/// Two-sided Student-t quantile at any positive degrees of freedom (infinite at none).
pub fn t_quantile_at_any_df(confidence: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if df > 0.0 => t.inverse_cdf((1.0 + confidence.clamp(0.5, 0.999_999)) / 2.0),
        _ => f64::INFINITY,
    }
}

/// The estimate from the rounds of one comparison, log ratios ln(candidate / baseline).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub rounds: usize,
    pub pairs: usize,
    /// Looks taken (1 = stopped at the first).
    pub looks: usize,
    /// Candidate time over baseline time (exp of the mean round estimate).
    pub ratio: f64,
    /// Mean log ratio, its standard error and degrees of freedom (for chaining sweep comparisons).
    pub log_mean: f64,
    pub log_se: f64,
    pub df: f64,
    /// Faster/Slower interval of the ratio, at the per-look confidence of the look that decided.
    pub ci: (f64, f64),
    /// NoChange interval of the ratio, likewise.
    pub ci_equivalence: (f64, f64),
    /// Standard deviation of one pair's log ratio within a round (pooled): the noise of neighbouring batches.
    pub pair_sd: f64,
    /// Standard deviation of the round estimates, and the part of it not explained by the pairs' noise.
    pub round_sd: f64,
    pub between_round_sd: f64,
    /// Pairs set aside as disturbed (`set_aside_disturbed_pairs`), not counted in `pairs`, the round estimates or
    /// `pair_sd`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub disturbed_pairs: usize,
    pub verdict: Verdict,
    pub settings: StatsSettings,
    /// Set where the comparison was spread over worker processes (`across_processes`): each process's estimate
    /// and the between-process variance the interval carries. Then `log_se`, `df` and both intervals are the
    /// process-level ones, `rounds` and `pairs` count every process's, `looks` is the number of processes, and
    /// the settings' `rounds_per_look` and `looks` are the rounds a process runs and the most processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Box<ProcessLevel>>,
}

impl Estimate {
    /// Baseline time over candidate time: >1 means the candidate is faster.
    pub fn speedup(&self) -> f64 {
        1.0 / self.ratio
    }
}

/// Estimate and verdict from rounds of paired log ratios, as judged at the look `rounds.len()` ends.
/// Rounds with a non-finite value, or fewer than two rounds, give Inconclusive.
pub fn estimate(rounds: &[Vec<f64>], settings: StatsSettings) -> Estimate {
    let (kept, disturbed_pairs) = set_aside_disturbed_pairs(rounds);
    Estimate {
        disturbed_pairs,
        ..estimate_all_pairs(&kept, settings)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A pair is set aside as disturbed where its log ratio lies more than this many robust standard deviations off
/// its round's median. Chosen on the committed whole suites' records (H159: `tools/disturbed_pairs.py` weighed
/// 6, 10 and 15, and a round's median or trimmed mean; `replay::tests::disturbed_pairs_set_aside_on_the_
/// committed_whole_suites` re-judges them through this code): at 15, 5 of the 98 comparisons holding a pair over
/// 10% off its round's median change verdict (each to a decisive one, 69beb33's two microbench reds among them)
/// and 7 of the other 3125, and of 2147 pinned judgements none that passed fails; Gaussian pairs are never this
/// far off.
pub const DISTURBED_PAIR_SDS: f64 = 15.0;

/// The rounds without their disturbed pairs, and how many were set aside. The robust standard deviation is
/// 1.4826 times the median absolute deviation of every pair from its round's median (the normal's sd where the
/// pairs are normal, whatever a few disturbed ones do); where it is 0 (pairs that agree exactly) nothing is set
/// aside. A round is never emptied (one whose every pair lies that far off is kept whole), and a value that is not
/// finite is never set aside.
pub fn set_aside_disturbed_pairs(rounds: &[Vec<f64>]) -> (Vec<Vec<f64>>, usize) {
    let medians: Vec<f64> = rounds.iter().map(|r| median(r)).collect();
    let deviations: Vec<f64> = rounds
        .iter()
        .zip(&medians)
        .flat_map(|(r, m)| r.iter().map(move |x| (x - m).abs()))
        .filter(|d| d.is_finite())
        .collect();
    let limit = DISTURBED_PAIR_SDS * 1.4826 * median(&deviations);
    if limit.is_nan() || limit <= 0.0 {
        return (rounds.to_vec(), 0);
    }
    let kept: Vec<Vec<f64>> = rounds
        .iter()
        .zip(&medians)
        // A value that is not finite stays: it makes the comparison inconclusive, as it should.
        .map(|(r, m)| {
            let left: Vec<f64> = r
                .iter()
                .copied()
                .filter(|x| !x.is_finite() || (x - m).abs() <= limit)
                .collect();
            // A round whose pairs all lie that far off its own median (split in two) is kept whole: its
            // disagreement is the round's, for the interval to carry.
            if left.is_empty() {
                r.clone()
            } else {
                left
            }
        })
        .collect();
    let dropped =
        rounds.iter().map(Vec::len).sum::<usize>() - kept.iter().map(Vec::len).sum::<usize>();
    (kept, dropped)
}

/// `estimate` with every pair counted, disturbed or not (how records before H159 were judged).
pub fn estimate_all_pairs(rounds: &[Vec<f64>], settings: StatsSettings) -> Estimate {
    let n = rounds.len();
    let pairs: usize = rounds.iter().map(Vec::len).sum();
    let looks = n.div_ceil(settings.rounds_per_look.max(1)).max(1);
    let means: Vec<f64> = rounds
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| mean_sd(r).0)
        .collect();
    let finite = means.len() == n && means.iter().all(|x| x.is_finite());
    // Pooled within-round sd of one pair.
    let (ss, dof) = rounds
        .iter()
        .filter(|r| r.len() >= 2)
        .fold((0.0, 0usize), |(ss, d), r| {
            let (m, _) = mean_sd(r);
            (
                ss + r.iter().map(|x| (x - m).powi(2)).sum::<f64>(),
                d + r.len() - 1,
            )
        });
    let pair_sd = if dof > 0 {
        (ss / dof as f64).sqrt()
    } else {
        f64::NAN
    };
    if n < 2 || !finite {
        let mean = means.first().copied().unwrap_or(0.0);
        return Estimate {
            rounds: n,
            pairs,
            looks,
            ratio: mean.exp(),
            log_mean: mean,
            log_se: f64::INFINITY,
            df: 1.0,
            ci: (0.0, f64::INFINITY),
            ci_equivalence: (0.0, f64::INFINITY),
            pair_sd,
            round_sd: f64::NAN,
            between_round_sd: f64::NAN,
            disturbed_pairs: 0,
            verdict: Verdict::Inconclusive,
            settings,
            processes: None,
        };
    }
    let (mean, round_sd) = mean_sd(&means);
    let per_round = pairs as f64 / n as f64;
    let between_round_sd = (round_sd.powi(2) - pair_sd.powi(2) / per_round)
        .max(0.0)
        .sqrt();
    let df = (n - 1) as f64;
    let se = round_sd / (n as f64).sqrt();
    let (h, he) = look_half_widths(se, df, settings, looks);
    let verdict = decide(mean, h, he, settings.band);
    Estimate {
        rounds: n,
        pairs,
        looks,
        ratio: mean.exp(),
        log_mean: mean,
        log_se: se,
        df,
        ci: ((mean - h).exp(), (mean + h).exp()),
        ci_equivalence: ((mean - he).exp(), (mean + he).exp()),
        pair_sd,
        round_sd,
        between_round_sd,
        disturbed_pairs: 0,
        verdict,
        settings,
        processes: None,
    }
}

/// The half-widths (log scale) of the faster/slower and the no-change interval at look `look` (1-based), for a
/// standard error `se` on `df` degrees of freedom (infinite without any).
pub fn look_half_widths(se: f64, df: f64, settings: StatsSettings, look: usize) -> (f64, f64) {
    let half = |c: f64| {
        if se == 0.0 {
            0.0
        } else {
            t_quantile_at_any_df(c, df) * se
        }
    };
    (
        half(settings.look_confidence(look)),
        half(settings.look_equivalence_confidence(look)),
    )
}

/// The decision from a mean log ratio and the half-widths of its two intervals: faster or slower when the
/// `half` interval lies beyond the band, no change when the `half_equivalence` interval lies inside it.
pub fn decide(mean: f64, half: f64, half_equivalence: f64, band: f64) -> Verdict {
    let (lo, hi) = ((1.0 - band).ln(), (1.0 + band).ln());
    if mean + half < lo {
        Verdict::Faster
    } else if mean - half > hi {
        Verdict::Slower
    } else if mean - half_equivalence > lo && mean + half_equivalence < hi {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

/// The group-sequential rule as a state machine: after every round, `after_round` gets the rounds that count
/// (a caller may set aside rounds measured in a disturbed state) and says whether the comparison ends. A look is
/// taken each time the counted rounds reach the next multiple of `rounds_per_look`; the comparison ends at a
/// decisive look or the last one. If set-aside rounds keep the count from reaching the last look, it ends after
/// `max_rounds + rounds_per_look` rounds in all, judged on what counts.
pub struct Sequential {
    settings: StatsSettings,
    next_look: usize,
    precision: Option<f64>,
}

impl Sequential {
    pub fn new(settings: StatsSettings) -> Sequential {
        Sequential {
            settings,
            next_look: settings.rounds_per_look,
            precision: None,
        }
    }

    /// A decisive look ends the comparison only once the interval's half-width (log scale) is at most
    /// `precision`. Stopping on the interval's width, not on where it lies, leaves the error rates as they are.
    pub fn with_precision(mut self, precision: Option<f64>) -> Sequential {
        self.precision = precision;
        self
    }

    /// The estimate that ends the comparison, or None to run another round.
    pub fn after_round(&mut self, counted: &[Vec<f64>], rounds_run: usize) -> Option<Estimate> {
        let s = self.settings;
        if counted.len() >= self.next_look {
            let e = estimate(counted, s);
            let precise = self
                .precision
                .is_none_or(|p| (e.ci.1 / e.ci.0).ln() / 2.0 <= p);
            if (e.verdict.is_decisive() && precise) || counted.len() >= s.max_rounds() {
                return Some(e);
            }
            while self.next_look <= counted.len() {
                self.next_look += s.rounds_per_look;
            }
        }
        (rounds_run >= s.max_rounds() + s.rounds_per_look).then(|| estimate(counted, s))
    }
}

/// The rule on rounds that all count: feeds rounds from `next_round` until it ends. Returns the rounds and the
/// estimate of the deciding (or last) look.
pub fn sequential<E>(
    settings: StatsSettings,
    mut next_round: impl FnMut(usize) -> Result<Vec<f64>, E>,
) -> Result<(Vec<Vec<f64>>, Estimate), E> {
    let mut rule = Sequential::new(settings);
    let mut rounds = Vec::new();
    loop {
        rounds.push(next_round(rounds.len())?);
        if let Some(e) = rule.after_round(&rounds, rounds.len()) {
            return Ok((rounds, e));
        }
    }
}

/// A difference of chained log ratios: the sum of independent comparisons' log means, its standard error and
/// Welch-Satterthwaite degrees of freedom, as an interval at `confidence` (for sweeps).
pub fn chained_interval(parts: &[&Estimate], confidence: f64) -> (f64, f64, f64) {
    if parts.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean: f64 = parts.iter().map(|e| e.log_mean).sum();
    let half = combined_half_width(parts, confidence);
    (mean, mean - half, mean + half)
}

/// Half-width at `confidence` of a sum or difference of independent estimates: their variances add, with
/// Welch-Satterthwaite degrees of freedom (infinite when a part has no interval).
pub fn combined_half_width(parts: &[&Estimate], confidence: f64) -> f64 {
    let var: f64 = parts.iter().map(|e| e.log_se.powi(2)).sum();
    if !var.is_finite() {
        return f64::INFINITY;
    }
    if var == 0.0 {
        return 0.0;
    }
    let denom: f64 = parts.iter().map(|e| e.log_se.powi(4) / e.df).sum();
    let df = if denom > 0.0 {
        var.powi(2) / denom
    } else {
        1e6
    };
    t_quantile(confidence, df) * var.sqrt()
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

/// Quantile `q` in [0, 1] of a sample, linear between neighbouring order statistics (NaN for an empty one).
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::oc::Rng;

    fn level(means: &[f64], ses: &[f64]) -> ProcessLevel {
        let n = means.len() as f64;
        let mean = means.iter().sum::<f64>() / n;
        let observed_sd = (means.len() > 1)
            .then(|| (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
        ProcessLevel {
            means: means.to_vec(),
            ses: ses.to_vec(),
            observed_sd,
            sd: observed_sd.unwrap_or(0.0),
            prior: None,
        }
    }

    #[test]
    fn processes_disagree_only_far_beyond_what_each_stated() {
        // The H100's multicast step (results/h100/11f24a0/, rep0): 1.045, 0.978, 1.042 at about 0.17% each.
        let two_states = level(&[0.0445, -0.0223, 0.0410], &[0.0017, 0.0018, 0.0017]);
        let (seen, stated) = two_states.disagreement().unwrap();
        assert!((seen - 0.0376).abs() < 1e-3 && (stated - 0.00174).abs() < 1e-4);
        // An A/A pair of the same run: spread as stated.
        assert_eq!(
            level(&[0.0010, -0.0006, -0.0016], &[0.0011, 0.0010, 0.0012]).disagreement(),
            None
        );
        // Ten times what each stated but under half a percent: not called.
        assert_eq!(
            level(&[0.002, -0.002, 0.0], &[0.0002; 3]).disagreement(),
            None
        );
        // Over half a percent but within four times what each stated: not called.
        assert_eq!(
            level(&[0.008, -0.008, 0.0], &[0.003; 3]).disagreement(),
            None
        );
        // One process has no spread of its own.
        assert_eq!(level(&[0.04], &[0.001]).disagreement(), None);
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&xs, 0.0), 1.0);
        assert_eq!(quantile(&xs, 1.0), 4.0);
        assert_eq!(quantile(&xs, 0.5), median(&xs));
        assert!((quantile(&xs, 0.25) - 1.75).abs() < 1e-12);
        assert!(quantile(&[], 0.5).is_nan());
    }

    /// `rounds` rounds of `per` pairs around ln(ratio) with pair noise `sd` and round offsets `between`.
    fn data(
        ratio: f64,
        sd: f64,
        between: f64,
        rounds: usize,
        per: usize,
        seed: u64,
    ) -> Vec<Vec<f64>> {
        let mut rng = Rng::new(seed);
        (0..rounds)
            .map(|_| {
                let b = rng.normal() * between;
                (0..per)
                    .map(|_| ratio.ln() + b + rng.normal() * sd)
                    .collect()
            })
            .collect()
    }

    fn s() -> StatsSettings {
        StatsSettings::default()
    }

    #[test]
    fn a_ten_percent_faster_candidate_is_faster() {
        let e = estimate(&data(0.90, 0.005, 0.002, 8, 6, 1), s());
        assert_eq!(
            e.verdict,
            Verdict::Faster,
            "{}",
            crate::report::text::estimate_line(&e)
        );
        assert!((e.ratio - 0.90).abs() < 0.01);
        assert!((e.speedup() - 1.0 / 0.9).abs() < 0.02);
    }

    #[test]
    fn a_ten_percent_slower_candidate_is_slower() {
        let e = estimate(&data(1.10, 0.005, 0.002, 8, 6, 2), s());
        assert_eq!(
            e.verdict,
            Verdict::Slower,
            "{}",
            crate::report::text::estimate_line(&e)
        );
    }

    #[test]
    fn identical_distributions_give_no_change() {
        let e = estimate(&data(1.0, 0.005, 0.001, 8, 6, 3), s());
        assert_eq!(
            e.verdict,
            Verdict::NoChange,
            "{}",
            crate::report::text::estimate_line(&e)
        );
        assert!(e.ci_equivalence.0 > 0.98 && e.ci_equivalence.1 < 1.02);
    }

    #[test]
    fn rounds_that_disagree_widen_the_interval() {
        // Tight pairs inside each round, but the rounds sit 3% apart: the interval must say so.
        let tight = estimate(&data(1.05, 0.002, 0.0, 8, 6, 4), s());
        let spread = estimate(&data(1.05, 0.002, 0.03, 8, 6, 4), s());
        let width = |e: &Estimate| e.ci.1 / e.ci.0;
        assert!(width(&spread) > 5.0 * (width(&tight) - 1.0) + 1.0);
        assert!(
            spread.between_round_sd > 0.015,
            "{}",
            crate::report::text::estimate_line(&spread)
        );
        assert!(
            tight.between_round_sd < 0.002,
            "{}",
            crate::report::text::estimate_line(&tight)
        );
    }

    #[test]
    fn wide_noise_is_inconclusive_not_no_change() {
        let e = estimate(&data(1.0, 0.10, 0.05, 8, 6, 5), s());
        assert_eq!(
            e.verdict,
            Verdict::Inconclusive,
            "{}",
            crate::report::text::estimate_line(&e)
        );
        assert!(e.pair_sd > 0.05);
    }

    #[test]
    fn a_change_on_the_band_edge_is_inconclusive() {
        let e = estimate(&data(0.98, 0.004, 0.001, 8, 6, 6), s());
        assert_eq!(
            e.verdict,
            Verdict::Inconclusive,
            "{}",
            crate::report::text::estimate_line(&e)
        );
    }

    #[test]
    fn zero_variance_is_handled() {
        let same = estimate(&vec![vec![0.0; 6]; 8], s());
        assert_eq!(same.verdict, Verdict::NoChange);
        let shifted = estimate(&vec![vec![(0.5f64).ln(); 6]; 8], s());
        assert_eq!(shifted.verdict, Verdict::Faster);
    }

    #[test]
    fn too_few_or_non_finite_rounds_are_inconclusive() {
        assert_eq!(estimate(&[], s()).verdict, Verdict::Inconclusive);
        assert_eq!(
            estimate(&[vec![0.1, 0.1]], s()).verdict,
            Verdict::Inconclusive
        );
        let mut d = data(1.0, 0.005, 0.0, 8, 6, 7);
        d[3][2] = f64::NAN;
        assert_eq!(estimate(&d, s()).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_wider_band_turns_a_small_change_into_no_change() {
        let d = data(0.96, 0.003, 0.001, 8, 6, 8);
        assert_eq!(estimate(&d, s()).verdict, Verdict::Faster);
        let wide = StatsSettings { band: 0.06, ..s() };
        assert_eq!(estimate(&d, wide).verdict, Verdict::NoChange);
    }

    #[test]
    fn the_sequential_rule_stops_at_a_deciding_look_or_the_last() {
        let settings = s();
        let mut rng = Rng::new(9);
        let (rounds, e) = sequential::<()>(settings, |_| {
            Ok((0..6).map(|_| 0.5f64.ln() + rng.normal() * 0.005).collect())
        })
        .unwrap();
        assert_eq!(rounds.len(), settings.rounds_per_look);
        assert_eq!((e.looks, e.verdict), (1, Verdict::Faster));
        let mut rng = Rng::new(10);
        let (rounds, e) = sequential::<()>(settings, |_| {
            Ok((0..6).map(|_| rng.normal() * 0.2).collect())
        })
        .unwrap();
        assert_eq!(rounds.len(), settings.max_rounds());
        assert_eq!((e.looks, e.verdict), (3, Verdict::Inconclusive));
    }

    #[test]
    fn set_aside_rounds_are_replaced_up_to_a_cap() {
        let settings = s();
        let mut rule = Sequential::new(settings);
        let clean: Vec<Vec<f64>> = vec![vec![0.0; 6]; 7];
        // Seven rounds count after twelve were run: no look yet.
        assert!(rule.after_round(&clean, 12).is_none());
        let mut eight = clean.clone();
        eight.push(vec![0.0; 6]);
        assert_eq!(
            rule.after_round(&eight, 13).unwrap().verdict,
            Verdict::NoChange
        );
        // A comparison whose rounds are nearly all set aside ends at the cap, inconclusive.
        let mut rule = Sequential::new(settings);
        let few = vec![vec![0.0; 6]; 1];
        assert!(rule.after_round(&few, 31).is_none());
        assert_eq!(
            rule.after_round(&few, 32).unwrap().verdict,
            Verdict::Inconclusive
        );
    }

    #[test]
    fn per_look_levels_split_the_overall_error() {
        let st = s();
        for look in 1..=3 {
            assert!((st.look_confidence(look) - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
            assert!((st.look_equivalence_confidence(look) - (1.0 - 0.10 / 3.0)).abs() < 1e-12);
        }
        assert!(st.is_look(8) && st.is_look(16) && st.is_look(24) && !st.is_look(9));
    }

    #[test]
    fn shares_spend_the_overall_error_once() {
        let shares = Spending::Shares {
            first: 0.3,
            last: 0.6,
        };
        for looks in 1..=5 {
            let total: f64 = (1..=looks).map(|l| shares.share(l, looks)).sum();
            assert!((total - 1.0).abs() < 1e-12, "{looks} looks: {total}");
            let even: f64 = (1..=looks).map(|l| Spending::Even.share(l, looks)).sum();
            assert!((even - 1.0).abs() < 1e-12);
        }
        let st = StatsSettings {
            spending: shares,
            ..s()
        };
        assert!((st.look_confidence(1) - (1.0 - 0.05 * 0.3)).abs() < 1e-12);
        assert!((st.look_confidence(2) - (1.0 - 0.05 * 0.1)).abs() < 1e-12);
        assert!((st.look_equivalence_confidence(3) - (1.0 - 0.10 * 0.6)).abs() < 1e-12);
    }

    #[test]
    fn chained_intervals_add_variances() {
        let a = estimate(&data(0.9, 0.005, 0.001, 8, 6, 11), s());
        let b = estimate(&data(1.1, 0.005, 0.001, 8, 6, 12), s());
        let (m, lo, hi) = chained_interval(&[&a, &b], 0.95);
        assert!((m - (a.log_mean + b.log_mean)).abs() < 1e-12);
        let (_, alo, ahi) = chained_interval(&[&a], 0.95);
        assert!(hi - lo > ahi - alo);
    }

    #[test]
    fn a_disturbed_pair_is_set_aside_and_the_verdict_is_the_undisturbed_ones() {
        // 12 rounds of 6 pairs 5% faster with 0.5% noise; one pair of one round took 1.65x (an interrupt).
        let mut rng = crate::measure::oc::Rng::new(7);
        let mut rounds: Vec<Vec<f64>> = (0..12)
            .map(|_| (0..6).map(|_| -0.05 + 0.005 * rng.normal()).collect())
            .collect();
        rounds[3][4] = 0.5;
        let all = estimate_all_pairs(&rounds, s());
        let kept = estimate(&rounds, s());
        assert_eq!(kept.disturbed_pairs, 1);
        assert_eq!(kept.pairs, 71);
        assert_eq!(kept.verdict, Verdict::Faster, "{kept:?}");
        assert!(
            (kept.ratio - (-0.05f64).exp()).abs() < 0.005,
            "{}",
            kept.ratio
        );
        assert!(
            all.ci.1 - all.ci.0 > 3.0 * (kept.ci.1 - kept.ci.0),
            "{all:?}"
        );
    }

    #[test]
    fn pairs_of_normal_noise_are_never_set_aside() {
        let mut rng = crate::measure::oc::Rng::new(11);
        let mut set_aside = 0;
        for _ in 0..2000 {
            let rounds: Vec<Vec<f64>> = (0..4)
                .map(|_| {
                    let shift = 0.01 * rng.normal();
                    (0..6).map(|_| shift + 0.01 * rng.normal()).collect()
                })
                .collect();
            set_aside += set_aside_disturbed_pairs(&rounds).1;
        }
        assert_eq!(set_aside, 0);
        // Pairs that agree exactly leave nothing to measure a deviation by: nothing is set aside.
        assert_eq!(
            set_aside_disturbed_pairs(&[vec![0.0; 6], vec![0.0, 0.0, 0.3]]).1,
            0
        );
        // A round split in two, among tight ones, is kept whole rather than emptied.
        let mut rounds = vec![vec![0.0, 0.001, -0.001, 0.0005, -0.0005, 0.0]; 7];
        rounds.push(vec![-0.5, -0.5, -0.5, 0.5, 0.5, 0.5]);
        let (kept, dropped) = set_aside_disturbed_pairs(&rounds);
        assert_eq!((kept[7].len(), dropped), (6, 0));
    }

    #[test]
    fn median_does_not_reorder() {
        let xs = [3.0, 1.0, 2.0, 10.0];
        assert_eq!(median(&xs), 2.5);
        assert_eq!(xs, [3.0, 1.0, 2.0, 10.0]);
        assert!(median(&[]).is_nan());
    }
}
