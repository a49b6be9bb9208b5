//! What a trial expects and where that expectation comes from: the data a trial carries and a record keeps.
//! The judge that compares what a trial observed with it is expect.rs; the two are apart so that a trial's
//! record (job.rs) can hold its expectation without depending on the judge.

use crate::measure::stats::Verdict;
use serde::{Deserialize, Serialize};

/// How the harness catches a broken kernel (or a correct one: `Correct`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Caught {
    /// A bounded wait gave up and named the barrier.
    Hang,
    /// Outputs left holding the poison.
    Unwritten,
    /// Values over the tolerance, reported with the max error.
    WrongValues,
    /// A guard band, or the guard columns past N, overwritten.
    OutOfBounds,
    /// No diagnosis from inside (bounded waits off): the host's deadline killed the trial's process.
    HostTimeout,
}

/// What a trial asserts about what it observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expect {
    /// This verdict for candidate vs baseline.
    Verdict(Verdict),
    /// The time ratio is still the pinned value: the run's estimate lies in the window
    /// [ratio / (1 + tolerance), ratio * (1 + tolerance)], and its interval is narrow enough (half-width under the
    /// tolerance) that a move of twice the tolerance would have shown. A pin's window is the prediction interval of
    /// one more process's estimate (docs/pinning.md), so it is the estimate, not its interval, that must land in
    /// it: an interval that merely touches the window would let a move of up to twice the window through.
    RatioNear { ratio: f64, tolerance: f64 },
    /// A pinned ratio that follows the SM clock its comparison settled at (H157: under the power cap the clock
    /// moves between machine starts, and where the two kernels draw different power their ratio moves with it).
    /// The pin runs' log ratios on their clocks give the line ln(ratio) + slope (clock - mhz); a run is judged as
    /// `RatioNear` with the pin's fixed tolerance about the line at its own median clock, and where that window
    /// would hold the whole band, cut at the band's edge opposite the line (so that it can always fail).
    RatioAtClock {
        ratio: f64,
        mhz: f64,
        slope: f64,
        tolerance: f64,
    },
    /// A pinned effect: as `RatioNear`, and the interval on the pin's side of 1 (under 1 for a pin under 1, over 1
    /// for one over 1), so that a lost effect fails even where the window reaches past 1.0.
    EffectNear { ratio: f64, tolerance: f64 },
    /// Candidate time under this fraction of the baseline's, with confidence (a share: "the epilogue is < 15%").
    TimeRatioBelow(f64),
    /// Every variant matches the reference.
    Correct,
    /// A deliberately broken kernel is caught this way.
    Caught(Caught),
    /// A sweep: the best of these points is, with confidence, within the band of every other point that ran
    /// (a cuBLAS point is a reference, not a contender).
    FastestAmong(Vec<String>),
    /// Sustained runs (each variant alone): every check holds in every pass.
    Sustained(Vec<SustainedCheck>),
    /// In the paired rounds, the candidate's probed clock (`clock_probe=1`, median) over the baseline's within
    /// [lo, hi] (H104: kernels that alternate every few milliseconds run at one clock).
    PairedClocks { lo: f64, hi: f64 },
    /// A trial marked pinned whose pin is missing from the pin file (trial/pins.rs): it fails, naming why.
    Unpinned(String),
}

impl Expect {
    /// A `RatioAtClock` pin's window at `clock_mhz`, as `RatioNear`'s (ratio, tolerance), cut at the edge of
    /// the band (`band`, a fraction) where it would hold both; None for another kind.
    pub fn window_at_clock(&self, clock_mhz: f64, band: f64) -> Option<(f64, f64)> {
        let Expect::RatioAtClock {
            ratio,
            mhz,
            slope,
            tolerance,
        } = *self
        else {
            return None;
        };
        let centre = ratio * (slope * (clock_mhz - mhz)).exp();
        let (mut lo, mut hi) = (centre / (1.0 + tolerance), centre * (1.0 + tolerance));
        if lo <= 1.0 / (1.0 + band) && hi >= 1.0 + band {
            if centre >= 1.0 {
                lo = 1.0 / (1.0 + band);
            } else {
                hi = 1.0 + band;
            }
        }
        let middle = (lo * hi).sqrt();
        Some((middle, hi / middle - 1.0))
    }

    /// A time ratio from `lo` to `hi`, as a hypothesis writes it: `RatioNear` on their geometric middle, whose
    /// window [ratio / (1 + t), ratio * (1 + t)] is then exactly [lo, hi].
    pub fn time_ratio_between(lo: f64, hi: f64) -> Expect {
        assert!(0.0 < lo && lo < hi, "a range from {lo} to {hi}");
        let ratio = (lo * hi).sqrt();
        Expect::RatioNear {
            ratio,
            tolerance: hi / ratio - 1.0,
        }
    }
}

/// A figure of a sustained run's settled half.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SustainedFigure {
    /// The clock the kernel measured itself at (`clock_probe=1`), MHz.
    ProbedMhz,
    /// That clock over the one NVML reported in the same batches.
    ProbedOverReported,
    /// SM cycles a launch, at the probed clock.
    Cycles,
    /// Time a launch.
    Time,
}

impl SustainedFigure {
    pub fn name(self) -> &'static str {
        match self {
            SustainedFigure::ProbedMhz => "probed clock",
            SustainedFigure::ProbedOverReported => "probed clock over NVML's",
            SustainedFigure::Cycles => "cycles",
            SustainedFigure::Time => "time",
        }
    }
    pub fn of(self, s: &crate::measure::sustained::Settled) -> Option<f64> {
        match self {
            SustainedFigure::ProbedMhz => s.probed_mhz,
            SustainedFigure::ProbedOverReported => Some(s.probed_mhz? / s.sm_clock_mhz?),
            SustainedFigure::Cycles => s.probed_mhz.and(s.kcycles_per_launch),
            SustainedFigure::Time => Some(s.us_per_launch),
        }
    }
}

/// One figure of one variant (over the same figure of another in the same pass, where `over` names one) in a
/// range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SustainedCheck {
    pub figure: SustainedFigure,
    pub variant: String,
    pub over: Option<String>,
    pub range: (f64, f64),
}

impl SustainedCheck {
    pub fn new(
        figure: SustainedFigure,
        variant: &str,
        over: Option<&str>,
        range: (f64, f64),
    ) -> Self {
        SustainedCheck {
            figure,
            variant: variant.into(),
            over: over.map(Into::into),
            range,
        }
    }
    pub(crate) fn describe(&self) -> String {
        let what = match &self.over {
            Some(o) => format!("{} of {} over {o}'s", self.figure.name(), self.variant),
            None => format!("{} of {}", self.figure.name(), self.variant),
        };
        format!("{what} in [{:.3}, {:.3}]", self.range.0, self.range.1)
    }
}

/// Where an expectation comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// Written before measuring, with its source: the seed's B200 verdict, a published result, a reason.
    Hypothesis(String),
    /// A value measured in named reference runs. `refuted` keeps the hypothesis those runs contradicted, or could not
    /// settle at the band (ablations/HYPOTHESES.md H131).
    Pinned {
        runs: Vec<String>,
        measured: String,
        refuted: Option<String>,
        /// The cuBLAS path the runs timed, for a ratio against cuBLAS: a record on another path is not judged
        /// against the pin (a re-pin, docs/pinning.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cublas_path: Option<String>,
    },
}

/// An expectation and its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    pub expect: Expect,
    pub source: Source,
}

impl Expectation {
    pub fn hypothesis(expect: Expect, why: impl Into<String>) -> Expectation {
        Expectation {
            expect,
            source: Source::Hypothesis(why.into()),
        }
    }
    pub fn pinned(expect: Expect, runs: Vec<String>, measured: String) -> Expectation {
        Expectation {
            expect,
            source: Source::Pinned {
                runs,
                measured,
                refuted: None,
                cublas_path: None,
            },
        }
    }
    /// The same pinned expectation, with a note after what its reference runs measured.
    pub fn noting(mut self, note: &str) -> Expectation {
        if let Source::Pinned { measured, .. } = &mut self.source {
            measured.push_str(note);
        }
        self
    }
    /// The same expectation, recording the hypothesis its reference runs refuted.
    pub fn refuting(mut self, hypothesis: impl Into<String>) -> Expectation {
        if let Source::Pinned { refuted, .. } = &mut self.source {
            *refuted = Some(hypothesis.into());
        }
        self
    }

    /// "expected: faster (hypothesis: seed (B200) ...)" lines for a trial's output.
    pub fn describe(&self) -> Vec<String> {
        let what = describe_expect(&self.expect);
        match &self.source {
            Source::Hypothesis(why) => vec![format!(
                "expected: {what} (hypothesis, before measuring: {why})"
            )],
            Source::Pinned {
                runs,
                measured,
                refuted,
                ..
            } => {
                let mut lines = vec![format!(
                    "expected: {what} (pinned from reference run{} {}: {measured})",
                    if runs.len() == 1 { "" } else { "s" },
                    runs.join(", ")
                )];
                if let Some(h) = refuted {
                    lines.push(format!("hypothesis these runs did not confirm: {h}"));
                }
                lines
            }
        }
    }
}

pub fn describe_expect(e: &Expect) -> String {
    match e {
        Expect::Verdict(v) => v.word().to_string(),
        Expect::RatioNear { ratio, tolerance } => {
            format!("time ratio {ratio:.3} within +-{:.1}%", tolerance * 100.0)
        }
        Expect::RatioAtClock {
            ratio,
            mhz,
            slope,
            tolerance,
        } => format!(
            "time ratio {ratio:.3} at {mhz:.0} MHz, {:+.2}% per 100 MHz of the comparison's clock, within +-{:.1}%",
            slope * 1e4,
            tolerance * 100.0
        ),
        Expect::EffectNear { ratio, tolerance } => format!(
            "time ratio {ratio:.3} within +-{:.1}%, and {} than the baseline with confidence",
            tolerance * 100.0,
            if *ratio < 1.0 { "faster" } else { "slower" }
        ),
        Expect::TimeRatioBelow(x) => format!("under {:.0}% of the baseline's time", x * 100.0),
        Expect::Correct => "matches the reference".into(),
        Expect::Caught(c) => format!("caught as {c:?}"),
        Expect::FastestAmong(v) => format!("fastest (within the band) is one of {}", v.join(", ")),
        Expect::PairedClocks { lo, hi } => {
            format!("the candidate's probed clock in the rounds {lo:.3}-{hi:.3} of the baseline's")
        }
        Expect::Unpinned(why) => format!("a pinned value, missing: {why}"),
        Expect::Sustained(checks) => checks
            .iter()
            .map(SustainedCheck::describe)
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The judge's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub passed: bool,
    /// What was seen, against what was expected, in one line.
    pub line: String,
}
