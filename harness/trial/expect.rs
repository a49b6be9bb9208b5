//! The one judge that turns what a trial observed into pass or fail, against what it expects (expectation.rs).
//! The child process that runs a job never judges; the parent does, with this module, and the replay tests judge
//! the committed reference runs with the very same code.

use crate::measure::stats::chained_interval;
pub use crate::trial::expectation::{
    describe_expect, Caught, Expect, Expectation, Judgement, Source, SustainedCheck,
    SustainedFigure,
};
use crate::trial::job::{Observed, SweepRow, TrialRecord};

impl TrialRecord {
    /// Judges the record against `expectation` and keeps both.
    pub fn judged(mut self, expectation: &Expectation) -> TrialRecord {
        let Judgement { passed, line } =
            match crate::trial::pins::other_cublas_path(expectation, &self) {
                Some(why) => Judgement {
                    passed: false,
                    line: why,
                },
                None => judge(&expectation.expect, &self),
            };
        self.passed = passed;
        self.judgement = line;
        self.expectation = Some(expectation.clone());
        self
    }
}

/// Every check in every pass; the line gives each check's values pass by pass.
fn sustained_checks(
    runs: &[crate::measure::sustained::SustainedRun],
    checks: &[SustainedCheck],
) -> (bool, String) {
    let passes = runs.iter().map(|r| r.pass + 1).max().unwrap_or(0);
    let figure = |pass: usize, variant: &str, f: SustainedFigure| {
        runs.iter()
            .find(|r| r.pass == pass && r.variant == variant)
            .and_then(|r| r.settled.as_ref())
            .and_then(|s| f.of(s))
    };
    let mut passed = passes > 0;
    let mut parts = Vec::new();
    for c in checks {
        let values: Vec<Option<f64>> = (0..passes)
            .map(|p| {
                let v = figure(p, &c.variant, c.figure)?;
                match &c.over {
                    Some(o) => Some(v / figure(p, o, c.figure)?),
                    None => Some(v),
                }
            })
            .collect();
        let ok = values
            .iter()
            .all(|v| v.is_some_and(|v| v >= c.range.0 && v <= c.range.1));
        passed &= ok;
        let shown: Vec<String> = values
            .iter()
            .map(|v| v.map_or("missing".into(), |v| format!("{v:.3}")))
            .collect();
        parts.push(format!(
            "{}: {} ({})",
            c.describe(),
            shown.join(", "),
            if ok { "holds" } else { "DOES NOT hold" }
        ));
    }
    (passed, parts.join("; "))
}

fn verdict_word(passed: bool) -> &'static str {
    if passed {
        "confirmed"
    } else {
        "NOT confirmed"
    }
}

/// Judges a record against an expectation.
pub fn judge(expect: &Expect, record: &TrialRecord) -> Judgement {
    let done = |passed: bool, seen: String| Judgement {
        passed,
        line: format!(
            "{seen}; expected {} -> {}",
            describe_expect(expect),
            verdict_word(passed)
        ),
    };
    match (&record.observed, expect) {
        (_, Expect::Unpinned(why)) => done(false, format!("no pin to judge against: {why}")),
        (Observed::Compared(e), Expect::Verdict(v)) => done(
            e.verdict == *v,
            format!("{} ({:.4})", e.verdict.word(), e.ratio),
        ),
        (Observed::Compared(e), Expect::RatioNear { ratio, tolerance }) => {
            let (near, seen) = ratio_near(e, *ratio, *tolerance);
            done(near, seen)
        }
        (Observed::Compared(e), Expect::RatioAtClock { .. }) => {
            match record.comparison.as_ref().and_then(|c| c.sm_clock_median_mhz) {
                Some(clock) => {
                    let band = crate::measure::stats::StatsSettings::default().band;
                    let (ratio, tolerance) = expect.window_at_clock(clock, band).unwrap_or_default();
                    let (near, seen) = ratio_near(e, ratio, tolerance);
                    done(near, format!("at {clock:.0} MHz, {seen}"))
                }
                None => done(
                    false,
                    "no SM clock in the comparison's record: a pin on the clock has nothing to read".into(),
                ),
            }
        }
        (Observed::Compared(e), Expect::EffectNear { ratio, tolerance }) => {
            let (near, seen) = ratio_near(e, *ratio, *tolerance);
            let (kept, side) = if *ratio < 1.0 {
                (e.ci.1 < 1.0, "under")
            } else {
                (e.ci.0 > 1.0, "over")
            };
            let lost = if kept {
                String::new()
            } else {
                format!(": the effect not seen (the interval is not wholly {side} 1)")
            };
            done(near && kept, format!("{seen}{lost}"))
        }
        (Observed::Compared(e), Expect::TimeRatioBelow(x)) => done(
            e.rounds >= 2 && e.ci.1 < *x,
            format!("time ratio {:.4}, interval up to {:.4}", e.ratio, e.ci.1),
        ),
        (Observed::Compared(e), Expect::PairedClocks { lo, hi }) => {
            let probed = record.comparison.as_ref().and_then(|c| c.probed_median_mhz);
            match probed {
                Some([Some(base), Some(cand)]) => {
                    let r = cand / base;
                    done(
                        (*lo..=*hi).contains(&r),
                        format!(
                            "probed clocks {cand:.0} against {base:.0} MHz ({r:.4}), time ratio {:.4}",
                            e.ratio
                        ),
                    )
                }
                _ => done(
                    false,
                    "a kernel without its clock probe in the rounds".into(),
                ),
            }
        }
        (Observed::Swept, Expect::FastestAmong(names)) => {
            let (passed, seen) = fastest_among(&record.table, names);
            done(passed, seen)
        }
        (Observed::Sustained, Expect::Sustained(checks)) => {
            let (passed, seen) = sustained_checks(&record.sustained, checks);
            done(passed, seen)
        }
        (Observed::Correct, Expect::Correct) => done(true, "correct".into()),
        // A benchmark cell (a peer's row in the main job): both sides were checked before they were timed.
        (Observed::Compared(e), Expect::Correct) => done(
            true,
            format!("correct, then timed: {} ({:.4})", e.verdict.word(), e.ratio),
        ),
        (Observed::Wrong { caught, message }, Expect::Caught(want)) => {
            done(caught == want, format!("caught as {caught:?}: {message}"))
        }
        (Observed::Hang(m), Expect::Caught(want)) => {
            done(*want == Caught::Hang, format!("caught as Hang: {m}"))
        }
        (Observed::HostTimeout(m), Expect::Caught(want)) => done(
            *want == Caught::HostTimeout,
            format!("caught as HostTimeout: {m}"),
        ),
        (Observed::Correct, Expect::Caught(_)) => done(
            false,
            "NOT caught: the faulty kernel passed the check".into(),
        ),
        (Observed::Wrong { message, .. }, _) => {
            done(false, format!("wrong result, not timed: {message}"))
        }
        (Observed::Hang(m), _) => done(false, format!("hang: {m}")),
        (Observed::HostTimeout(m), _) => done(false, format!("timeout: {m}")),
        (Observed::Error(m), _) => done(false, format!("error: {m}")),
        (o, e) => done(
            false,
            format!(
                "observed {} where the expectation ({}) needs something else",
                o.kind(),
                describe_expect(e)
            ),
        ),
    }
}

/// `RatioNear`'s check: whether the estimate lies in the pin's window and the interval is narrow enough to tell,
/// and what was seen.
fn ratio_near(e: &crate::measure::stats::Estimate, ratio: f64, tolerance: f64) -> (bool, String) {
    let (lo, hi) = (ratio / (1.0 + tolerance), ratio * (1.0 + tolerance));
    let inside = (lo..=hi).contains(&e.ratio);
    let half_width = (e.ci.1 / e.ci.0).ln() / 2.0;
    let precise = half_width <= tolerance.ln_1p();
    let why = if !precise {
        format!(
            ": too noisy to check the pin (half-width {:.1}% over the {:.0}% tolerance)",
            half_width * 100.0,
            tolerance * 100.0
        )
    } else if e.ratio > hi {
        ": slower than the pin beyond the tolerance (a regression)".into()
    } else if e.ratio < lo {
        ": faster than the pin beyond the tolerance (re-pin it from a new reference run)".into()
    } else {
        String::new()
    };
    (
        inside && precise,
        format!(
            "ratio {:.4}, interval [{:.4}, {:.4}] against the window [{lo:.4}, {hi:.4}]{why}",
            e.ratio, e.ci.0, e.ci.1
        ),
    )
}

/// The sweep rule: take the best point of `names` (by chained estimate); for every other kernel point, the
/// 95% interval of time(best) / time(other), chained through the neighbour comparisons between them, must lie
/// under 1 + band. Ties within the band pass; a contender that may be faster by more than the band fails.
fn fastest_among(rows: &[SweepRow], names: &[String]) -> (bool, String) {
    let ran: Vec<(usize, &SweepRow)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.relative_time.is_some())
        .collect();
    let contenders: Vec<&(usize, &SweepRow)> =
        ran.iter().filter(|(_, r)| !r.is_reference).collect();
    let best = contenders
        .iter()
        .filter(|(_, r)| names.contains(&r.point))
        .min_by(|a, b| {
            a.1.relative_time
                .unwrap()
                .total_cmp(&b.1.relative_time.unwrap())
        });
    let Some(&&(bi, best)) = best else {
        return (false, format!("none of {} ran", names.join(", ")));
    };
    let overall = contenders
        .iter()
        .min_by(|a, b| {
            a.1.relative_time
                .unwrap()
                .total_cmp(&b.1.relative_time.unwrap())
        })
        .map(|(_, r)| r.point.clone())
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut band = 0.02;
    for &&(oi, other) in &contenders {
        if names.contains(&other.point) {
            continue;
        }
        // Estimates of the comparisons between the two points, in chain order.
        let (lo, hi) = (bi.min(oi), bi.max(oi));
        let parts: Vec<&crate::measure::stats::Estimate> = ran
            .iter()
            .filter(|(i, _)| *i > lo && *i <= hi)
            .filter_map(|(_, r)| r.vs_previous.as_ref())
            .collect();
        let Some(first) = parts.first() else { continue };
        band = first.settings.band;
        let confidence = first.settings.confidence;
        let (m, l, h) = chained_interval(&parts, confidence);
        // ln(time(best) / time(other)) = +/- the chained sum.
        let (upper, mean) = if bi > oi { (h, m) } else { (-l, -m) };
        if upper >= (1.0 + band).ln() {
            problems.push(format!(
                "{} may be faster than {} by more than the band (best/other {:.3}, upper {:.3})",
                other.point,
                best.point,
                mean.exp(),
                upper.exp()
            ));
        }
    }
    let seen = format!(
        "best of the expected points {} (overall point estimate: {overall})",
        best.point
    );
    if problems.is_empty() {
        (
            true,
            format!(
                "{seen}; within +-{:.0}% of or faster than every other point",
                band * 100.0
            ),
        )
    } else {
        (false, format!("{seen}; {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::{Estimate, StatsSettings, Verdict};

    #[test]
    fn paired_clocks_are_judged_from_the_rounds_probes() {
        // H104's first paired run: 256x192 against rung 10 on prefill_attn_out, both probing (1302.7 against
        // 1301.4 MHz).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/results/h200/029a7ba/h104-paired-clock/runs/compare-20261201T233305Z.json.xz"
        );
        let mut text = Vec::new();
        lzma_rs::xz_decompress(
            &mut std::io::BufReader::new(std::fs::File::open(path).unwrap()),
            &mut text,
        )
        .unwrap();
        let run: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let record: TrialRecord = serde_json::from_value(run["trials"][0].clone()).unwrap();
        let together = judge(&Expect::PairedClocks { lo: 0.99, hi: 1.01 }, &record);
        assert!(together.passed, "{}", together.line);
        assert!(together.line.contains("(1.0009)"), "{}", together.line);
        let apart = judge(&Expect::PairedClocks { lo: 1.02, hi: 1.05 }, &record);
        assert!(!apart.passed, "{}", apart.line);
        // A record without probes in its rounds cannot confirm it.
        let mut unprobed = record.clone();
        unprobed.comparison.as_mut().unwrap().probed_median_mhz = None;
        let judged = judge(&Expect::PairedClocks { lo: 0.99, hi: 1.01 }, &unprobed);
        assert!(
            !judged.passed && judged.line.contains("without its clock probe"),
            "{}",
            judged.line
        );
    }

    fn sustained_run(
        pass: usize,
        variant: &str,
        us: f64,
        probed: Option<f64>,
    ) -> crate::measure::sustained::SustainedRun {
        crate::measure::sustained::SustainedRun {
            pass,
            variant: variant.into(),
            label: variant.into(),
            seconds: 4.0,
            samples: Vec::new(),
            settled: Some(crate::measure::sustained::Settled {
                from_s: 2.0,
                batches: 100,
                us_per_launch: us,
                us_iqr_rel: 0.001,
                drift: 1.0,
                sm_clock_mhz: Some(1980.0),
                probed_mhz: probed,
                after_mhz: None,
                kcycles_per_launch: probed.map(|p| us * p / 1e3),
                power_w: Some(480.0),
                mj_per_launch: Some(200.0),
                power_capped_fraction: Some(0.0),
                busy_fraction: Some(0.96),
            }),
        }
    }

    #[test]
    fn sustained_checks_hold_in_every_pass_or_the_trial_fails() {
        // H75's shape at 4096-cubed: the whole kernel at 1527 MHz, its MMAs alone the same cycles at 1657.
        let runs = vec![
            sustained_run(0, "whole", 183.8, Some(1529.0)),
            sustained_run(0, "mma", 169.1, Some(1657.0)),
            sustained_run(1, "whole", 183.7, Some(1525.0)),
            sustained_run(1, "mma", 169.1, Some(1657.0)),
        ];
        let checks = vec![
            SustainedCheck::new(
                SustainedFigure::ProbedMhz,
                "mma",
                Some("whole"),
                (1.05, 1.12),
            ),
            SustainedCheck::new(SustainedFigure::Cycles, "mma", Some("whole"), (0.97, 1.03)),
            SustainedCheck::new(
                SustainedFigure::ProbedOverReported,
                "whole",
                None,
                (0.0, 0.9),
            ),
        ];
        let (ok, line) = sustained_checks(&runs, &checks);
        assert!(ok, "{line}");
        assert!(line.contains("1.084, 1.087"), "{line}");
        // A second pass outside the range fails the whole trial.
        let mut drifted = runs.clone();
        drifted[3] = sustained_run(1, "mma", 150.0, Some(1900.0));
        let (ok, line) = sustained_checks(&drifted, &checks);
        assert!(!ok && line.contains("DOES NOT hold"), "{line}");
        // A kernel without the probe has no cycles to judge: missing, and failed rather than passed.
        let unprobed = vec![
            sustained_run(0, "whole", 183.8, None),
            sustained_run(0, "mma", 169.1, None),
        ];
        let (ok, line) = sustained_checks(&unprobed, &checks[1..2]);
        assert!(!ok && line.contains("missing"), "{line}");
        // No runs at all is not a pass.
        assert!(!sustained_checks(&[], &checks).0);
    }

    fn compared(ratio: f64, ci: (f64, f64)) -> Estimate {
        Estimate {
            rounds: 8,
            pairs: 48,
            looks: 1,
            ratio,
            log_mean: ratio.ln(),
            log_se: 0.001,
            df: 7.0,
            ci,
            ci_equivalence: ci,
            pair_sd: 0.01,
            round_sd: 0.0,
            between_round_sd: 0.0,
            disturbed_pairs: 0,
            verdict: Verdict::NoChange,
            settings: StatsSettings::default(),
            processes: None,
        }
    }

    fn record(e: Estimate) -> TrialRecord {
        let mut r: TrialRecord = serde_json::from_value(serde_json::json!({
            "name": "t", "description": "", "expectation": null, "observed": "Correct", "passed": true,
            "judgement": "", "shape": null, "dtype": "F16", "variants": [], "comparison": null, "table": [],
            "flags": [], "duration_s": 0.0
        }))
        .expect("a minimal record parses");
        r.observed = Observed::Compared(e);
        r
    }

    #[test]
    fn a_benchmark_cell_passes_once_checked_and_timed_and_fails_on_a_wrong_answer() {
        let timed = record(compared(1.2, (1.18, 1.22)));
        let j = judge(&Expect::Correct, &timed);
        assert!(
            j.passed && j.line.contains("correct, then timed"),
            "{}",
            j.line
        );
        let mut wrong = timed.clone();
        wrong.observed = Observed::Wrong {
            caught: Caught::WrongValues,
            message: "off by one".into(),
        };
        assert!(!judge(&Expect::Correct, &wrong).passed);
    }

    /// A record of a comparison whose rounds ran at `clock` MHz (median).
    fn record_at_clock(e: Estimate, clock: Option<f64>) -> TrialRecord {
        let mut r = record(e.clone());
        r.comparison = Some(crate::measure::timing::Comparison {
            baseline: "b".into(),
            candidate: "c".into(),
            rounds: Vec::new(),
            estimate: e,
            baseline_median_us: 100.0,
            candidate_median_us: 100.0,
            sm_clock_median_mhz: clock,
            sm_clock_min_mhz: None,
            probed_median_mhz: None,
            low_clock_pairs: 0,
            set_aside_rounds: 0,
            throttle_reasons: Vec::new(),
            elapsed_s: 1.0,
            rotation_sets: 0,
        });
        r
    }

    #[test]
    fn a_pin_on_the_clock_follows_the_clock_and_still_cuts_at_the_band() {
        // H157's red: ping-pong on prefill_mlp_up, 1.319 at 1266 MHz, +4.48% per 100 MHz, +-7.7%.
        let pin = Expect::RatioAtClock {
            ratio: 1.3194,
            mhz: 1266.0,
            slope: 4.48e-4,
            tolerance: 0.077,
        };
        let band = StatsSettings::default().band;
        let (at_1065, tol) = pin.window_at_clock(1065.0, band).unwrap();
        assert!((at_1065 - 1.3194 * (-201.0f64 * 4.48e-4).exp()).abs() < 1e-9);
        assert!((tol - 0.077).abs() < 1e-12);
        // c1c2b83's read at its clock passes; the same read at the pin runs' clock does not.
        let read = compared(1.1783, (1.1447, 1.2128));
        assert!(judge(&pin, &record_at_clock(read.clone(), Some(1065.0))).passed);
        let j = judge(&pin, &record_at_clock(read.clone(), Some(1266.0)));
        assert!(!j.passed && j.line.contains("at 1266 MHz"), "{}", j.line);
        // No clock, no judgement.
        assert!(!judge(&pin, &record_at_clock(read, None)).passed);
        // A line that reaches 1 at a clock is cut there at the band's edge on the line's side: a 3% slowdown
        // fails where the centre is 0.99.
        let near_one = Expect::RatioAtClock {
            ratio: 0.99,
            mhz: 1200.0,
            slope: 0.0,
            tolerance: 0.05,
        };
        let (m, t) = near_one.window_at_clock(1200.0, band).unwrap();
        assert!((m * (1.0 + t) - (1.0 + band)).abs() < 1e-12, "{m} {t}");
        assert!(
            !judge(
                &near_one,
                &record_at_clock(compared(1.03, (1.02, 1.04)), Some(1200.0))
            )
            .passed
        );
        assert_eq!(crate::trial::pins::cannot_fail(&near_one), None);
    }

    #[test]
    fn a_pinned_effect_fails_when_the_effect_is_lost() {
        let pin = Expect::EffectNear {
            ratio: 0.977,
            tolerance: 0.03,
        };
        let window = Expect::RatioNear {
            ratio: 0.977,
            tolerance: 0.03,
        };
        // As pinned: both pass.
        let kept = record(compared(0.978, (0.975, 0.981)));
        assert!(judge(&pin, &kept).passed && judge(&window, &kept).passed);
        // The effect gone (the interval over 1.0): inside the window, so the ratio pin passes; the effect pin not.
        let lost = record(compared(1.0, (0.997, 1.003)));
        assert!(judge(&window, &lost).passed);
        let j = judge(&pin, &lost);
        assert!(
            !j.passed && j.line.contains("the effect not seen"),
            "{}",
            j.line
        );
        // A slower pin asserts the other side.
        let slower = Expect::EffectNear {
            ratio: 1.022,
            tolerance: 0.03,
        };
        assert!(judge(&slower, &record(compared(1.021, (1.019, 1.023)))).passed);
        assert!(!judge(&slower, &record(compared(1.004, (0.999, 1.009)))).passed);
    }
}
