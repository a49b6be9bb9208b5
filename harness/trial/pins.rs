//! Pinned expectations, as data. A trial's expectation is a hypothesis written before measuring, or a value
//! pinned from named runs: the pinned values, their windows and their provenance live in one file per GPU model
//! (`pins/h200.json`), distilled from the runs by `tools/pins.py` under the rules written in docs/pinning.md, read
//! at run time. Trial lists say only *that* a trial is pinned (`pinned()`) or what it hypothesizes; `apply` puts
//! each pin in its place. A pin names the runs it was built from, so that no run judges a pin it built
//! (`replay.rs`), and a re-pin is a change to the data file in a commit of its own that names its cause.

use crate::measure::stats::Verdict;
use crate::trial::expectation::{describe_expect, Expect, Expectation, Source};
use crate::trial::job::GpuTrial;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The pins of the GPU model the committed runs were measured on.
pub const PIN_FILE: &str = "pins/h200.json";

/// What a run's estimates scatter by from one run to the next, for one kind of comparison, and where that was
/// measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Standard deviation of a run's log ratio around the trial's mean over runs.
    pub sd: f64,
    /// What it was measured on.
    pub from: String,
}

/// One trial's pin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pin {
    pub trial: String,
    pub expect: Expect,
    /// The runs the value came from (results/h200/..., without `.json`).
    pub runs: Vec<String>,
    /// What those runs measured, in words.
    pub measured: String,
    /// The hypothesis the runs refuted or could not settle, where there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuted: Option<String>,
    /// The between-run spread the window was derived from (log scale), and its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// Set where the trial's own between-run spread is larger than a window may be (docs/pinning.md): what the
    /// trial asserts instead, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_state: Option<String>,
    /// The cuBLAS path the pin's runs timed (pins/cublas-paths.json), for a pin against cuBLAS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cublas_path: Option<String>,
}

/// The pin file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PinFile {
    pub about: String,
    pub gpu: String,
    /// The rules the windows follow (z, caps), as written by the distiller.
    pub rules: serde_json::Value,
    /// Kind (`ours`, `cublas`) -> the between-run spread measured for it.
    pub spreads: std::collections::BTreeMap<String, Spread>,
    pub pins: Vec<Pin>,
    /// Suite -> the committed runs of the pinned code that built no pin (results/h200/..., without `.json`):
    /// what the replay tests judge. Listing a run here changes no expectation.
    #[serde(default)]
    pub held_out: std::collections::BTreeMap<String, Vec<String>>,
}

impl PinFile {
    pub fn parse(text: &str) -> Result<PinFile, String> {
        let file: PinFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut names: Vec<&str> = file.pins.iter().map(|p| p.trial.as_str()).collect();
        names.sort();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("two pins for {}", w[0]));
        }
        for p in &file.pins {
            if p.runs.is_empty() {
                return Err(format!("the pin of {} names no run", p.trial));
            }
        }
        Ok(file)
    }
    pub fn get(&self, trial: &str) -> Option<&Pin> {
        self.pins.iter().find(|p| p.trial == trial)
    }
}

/// `pins/h200.json` in the working directory, else the source tree's.
pub fn pin_file_path() -> PathBuf {
    crate::measure::committed::path(PIN_FILE)
}

/// The pin file, read once (an unreadable file is an error every pinned trial reports).
pub fn pin_file() -> &'static Result<PinFile, String> {
    static FILE: OnceLock<Result<PinFile, String>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = pin_file_path();
        std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| PinFile::parse(&t))
            .map_err(|e| format!("{}: {e}", path.display()))
    })
}

/// The GPU model the pins were measured on (the pin file's `gpu` up to its driver: `NVIDIA H200`), where the file
/// can be read.
pub fn pinned_on() -> Option<String> {
    let file = pin_file().as_ref().ok()?;
    let model = file.gpu.split(", driver").next().unwrap_or_default().trim();
    (!model.is_empty()).then(|| model.to_string())
}

/// A trial whose expectation is a pinned value: `apply` puts the pin from the pin file in its place. Chain
/// `.refuting(..)` to keep the hypothesis its runs refuted.
pub fn pinned() -> Expectation {
    Expectation {
        expect: Expect::Unpinned("not applied yet".into()),
        source: Source::Pinned {
            runs: Vec::new(),
            measured: String::new(),
            refuted: None,
            cublas_path: None,
        },
    }
}

/// The pin of `trial` in place of its expectation: a hypothesis the pin file holds a pin for was refuted by the
/// pin's runs (kept as such); a trial marked `pinned()` without a pin in the file fails when judged, naming what
/// is missing.
pub fn apply_one(file: Result<&PinFile, &str>, trial: &mut GpuTrial) {
    apply_to(file, &trial.name, &mut trial.expectation);
}

/// `apply_one` on a trial's name and expectation.
pub fn apply_to(file: Result<&PinFile, &str>, name: &str, expectation: &mut Expectation) {
    let pin = match file {
        Ok(f) => f.get(name),
        Err(_) => None,
    };
    let written = match &expectation.source {
        Source::Hypothesis(why) => {
            Some(format!("{} ({why})", describe_expect(&expectation.expect)))
        }
        Source::Pinned { refuted, .. } => refuted.clone(),
    };
    match (pin, &expectation.source) {
        (Some(p), _) => {
            let mut measured = p.measured.clone();
            if let Some(s) = &p.process_state {
                measured.push_str(&format!("; depends on process state: {s}"));
            }
            *expectation = Expectation {
                expect: p.expect.clone(),
                source: Source::Pinned {
                    runs: p.runs.clone(),
                    measured,
                    refuted: p.refuted.clone().or(written),
                    cublas_path: p.cublas_path.clone(),
                },
            };
        }
        (None, Source::Pinned { .. }) => {
            let why = match file {
                Ok(_) => format!("{} holds no pin for this trial", pin_file_path().display()),
                Err(e) => e.to_string(),
            };
            expectation.expect = Expect::Unpinned(why);
        }
        (None, Source::Hypothesis(_)) => {}
    }
}

/// Puts every trial's pin in place (see `apply_one`).
pub fn apply(trials: &mut [GpuTrial]) {
    let file = pin_file().as_ref().map_err(String::as_str);
    for t in trials.iter_mut() {
        apply_one(file, t);
    }
}

/// The cuBLAS path a record timed (`cuBLAS (PATH)` among its variants' labels).
pub fn cublas_path_of(record: &crate::trial::job::TrialRecord) -> Option<&str> {
    record
        .variants
        .iter()
        .find_map(|v| v.label.strip_prefix("cuBLAS (")?.strip_suffix(')'))
}

/// Why a record is not judged against its pin: it timed another cuBLAS path than the pin's runs did, so its ratio
/// measures another reference (a re-pin, docs/pinning.md).
pub fn other_cublas_path(
    expectation: &Expectation,
    record: &crate::trial::job::TrialRecord,
) -> Option<String> {
    let Source::Pinned {
        cublas_path: Some(pinned),
        ..
    } = &expectation.source
    else {
        return None;
    };
    match cublas_path_of(record) {
        Some(timed) if timed != pinned => Some(format!(
            "timed cuBLAS on {timed}, but the pin was measured on {pinned}: the ratio measures another reference \
             (re-pin on the new path, docs/pinning.md)"
        )),
        _ => None,
    }
}

/// Why an expectation could not fail, or None: a time-ratio window that holds both edges of the +-2% band passes
/// every verdict, and a trial marked pinned without a pin has nothing to judge against.
pub fn cannot_fail(expect: &Expect) -> Option<String> {
    let band = crate::measure::stats::StatsSettings::default().band;
    match expect {
        Expect::RatioNear { ratio, tolerance } | Expect::EffectNear { ratio, tolerance } => {
            let (lo, hi) = (ratio / (1.0 + tolerance), ratio * (1.0 + tolerance));
            (lo < 1.0 / (1.0 + band) && hi > 1.0 + band).then(|| {
                format!(
                    "the window [{lo:.4}, {hi:.4}] holds the whole +-{:.0}% band: any verdict passes",
                    band * 100.0
                )
            })
        }
        // Cut at the band's edge at whatever clock a run reads (Expect::window_at_clock): it fails a lost direction.
        Expect::RatioAtClock { .. } => None,
        Expect::Unpinned(why) => Some(format!("marked pinned, but {why}")),
        _ => None,
    }
}

/// The smallest change of a ratio expectation's true ratio that fails it nine times in ten, as a fraction: a
/// run's estimate scatters about the truth by `sd` (log scale) and must land inside the window, so a move of the
/// window's half-width plus 1.28 sd leaves it nine times in ten. None for an expectation that is not a window.
pub fn caught_with_90_percent_power(expect: &Expect, sd: f64) -> Option<f64> {
    match expect {
        Expect::RatioNear { tolerance, .. } | Expect::EffectNear { tolerance, .. } => {
            Some((tolerance.ln_1p() + 1.2816 * sd).exp() - 1.0)
        }
        Expect::RatioAtClock { tolerance, .. } => {
            Some((tolerance.ln_1p() + 1.2816 * sd).exp() - 1.0)
        }
        _ => None,
    }
}

/// A CPU trial over a suite's expectations, with the pins in place: every one of them can fail, and it prints the
/// smallest change each window catches nine times in ten at its measured between-run spread (the pin's own, else
/// its kind's).
pub fn can_fail_trial(suite: &str, gpu: &[GpuTrial]) -> libtest_mimic::Trial {
    let file = pin_file().as_ref().map_err(String::as_str);
    let mut caught: Vec<(String, f64)> = Vec::new();
    let problems: Vec<String> = gpu
        .iter()
        .filter_map(|t| {
            let mut e = t.expectation.clone();
            apply_to(file, &t.name, &mut e);
            if let Ok(f) = file {
                let kind = crate::trial::workers::kind_of(&t.job).key();
                let sd = f
                    .get(&t.name)
                    .and_then(|p| p.spread.as_ref())
                    .or_else(|| f.spreads.get(kind))
                    .map_or(0.0, |s| s.sd);
                if let Some(c) = caught_with_90_percent_power(&e.expect, sd) {
                    caught.push((t.name.clone(), c));
                }
            }
            cannot_fail(&e.expect).map(|why| format!("{}: {why}", t.name))
        })
        .collect();
    let n = gpu.len();
    libtest_mimic::Trial::test(
        format!("pins::{suite}::every_expectation_can_fail"),
        move || {
            if !problems.is_empty() {
                return Err(format!(
                    "{} of {n} expectations cannot fail:\n{}",
                    problems.len(),
                    problems.join("\n")
                )
                .into());
            }
            let sizes: Vec<f64> = caught.iter().map(|(_, c)| *c).collect();
            if let Some((name, c)) = caught.iter().find(|(_, c)| !c.is_finite()) {
                return Err(format!("{name}: no finite change fails its window ({c})").into());
            }
            if !sizes.is_empty() {
                let q = |p: f64| crate::measure::stats::quantile(&sizes, p) * 100.0;
                println!(
                    "  {n} expectations can fail; {} ratio windows catch a change of {:.1}% (median), {:.1}% (90th percentile), {:.1}% (largest) nine times in ten",
                    sizes.len(),
                    q(0.5),
                    q(0.9),
                    q(1.0)
                );
            }
            Ok(())
        },
    )
}

/// The verdict the seed's B200 worklog gave a step, as a hypothesis.
pub fn seed_hypothesis(seed: Verdict, seed_says: &str) -> Expectation {
    Expectation::hypothesis(
        Expect::Verdict(seed),
        format!("seed (B200): {} ({seed_says})", seed.word()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::job::Job;

    fn trial(name: &str, expectation: Expectation) -> GpuTrial {
        GpuTrial::new(
            name,
            Job::CublasVsCpu {
                dtype: crate::DType::F16,
            },
            expectation,
        )
    }

    fn file() -> PinFile {
        PinFile {
            pins: vec![Pin {
                trial: "a".into(),
                expect: Expect::RatioNear {
                    ratio: 1.05,
                    tolerance: 0.02,
                },
                runs: vec!["r1".into()],
                measured: "ratio 1.05".into(),
                refuted: None,
                spread: None,
                process_state: None,
                cublas_path: None,
            }],
            ..PinFile::default()
        }
    }

    #[test]
    fn a_window_catches_its_half_width_plus_1_28_spreads_nine_times_in_ten() {
        let w = Expect::RatioNear {
            ratio: 1.0,
            tolerance: 0.02,
        };
        let c = caught_with_90_percent_power(&w, 0.005).unwrap();
        assert!((c - ((0.02f64).ln_1p() + 1.2816 * 0.005).exp() + 1.0).abs() < 1e-12);
        assert!(c > 0.02 && c < 0.03, "{c}");
        assert_eq!(
            caught_with_90_percent_power(&Expect::Verdict(Verdict::NoChange), 0.005),
            None
        );
    }

    #[test]
    fn a_pin_replaces_a_refuted_hypothesis_and_keeps_it() {
        let mut t = trial(
            "a",
            Expectation::hypothesis(Expect::Verdict(Verdict::NoChange), "a reason"),
        );
        apply_one(Ok(&file()), &mut t);
        assert!(matches!(t.expectation.expect, Expect::RatioNear { .. }));
        let Source::Pinned { runs, refuted, .. } = &t.expectation.source else {
            panic!("pinned")
        };
        assert_eq!(runs, &["r1"]);
        assert_eq!(refuted.as_deref(), Some("no change (a reason)"));
    }

    #[test]
    fn a_hypothesis_without_a_pin_stands_and_a_missing_pin_is_named() {
        let h = Expectation::hypothesis(Expect::Verdict(Verdict::Faster), "why");
        let mut t = trial("b", h.clone());
        apply_one(Ok(&file()), &mut t);
        assert_eq!(t.expectation, h);
        let mut t = trial("b", pinned());
        apply_one(Ok(&file()), &mut t);
        assert!(matches!(&t.expectation.expect, Expect::Unpinned(w) if w.contains("no pin")));
    }

    #[test]
    fn a_pin_file_with_two_pins_for_one_trial_or_none_of_its_runs_is_refused() {
        let mut f = file();
        f.pins.push(f.pins[0].clone());
        let text = serde_json::to_string(&f).unwrap();
        assert!(PinFile::parse(&text)
            .unwrap_err()
            .contains("two pins for a"));
        let mut f = file();
        f.pins[0].runs.clear();
        let text = serde_json::to_string(&f).unwrap();
        assert!(PinFile::parse(&text).unwrap_err().contains("names no run"));
    }

    #[test]
    fn a_window_across_the_band_or_a_missing_pin_cannot_fail_and_is_named() {
        let wide = Expect::RatioNear {
            ratio: 1.0,
            tolerance: 0.03,
        };
        assert!(cannot_fail(&wide).unwrap().contains("whole"));
        let one_sided = Expect::time_ratio_between(1.0 / 1.02, 1.05);
        assert_eq!(cannot_fail(&one_sided), None);
        assert!(cannot_fail(&Expect::Unpinned("gone".into())).is_some());
        assert_eq!(cannot_fail(&Expect::Verdict(Verdict::NoChange)), None);
    }

    #[test]
    fn every_committed_pin_can_fail_and_names_runs_of_the_h200() {
        let f = pin_file().as_ref().expect("pins/h200.json parses");
        for p in &f.pins {
            assert_eq!(cannot_fail(&p.expect), None, "{}", p.trial);
            for r in &p.runs {
                // Plain, or kept compressed beside its name (tools/archive-results.py).
                let path = crate::replay::reference_dir().join(format!("{r}.json"));
                assert!(
                    path.is_file() || path.with_extension("json.xz").is_file(),
                    "{}: run {r} is not committed",
                    p.trial
                );
            }
        }
        for (suite, runs) in &f.held_out {
            for r in runs {
                assert!(
                    f.pins.iter().all(|p| !p.runs.contains(r)),
                    "{suite}: held-out run {r} built a pin"
                );
            }
        }
    }

    #[test]
    fn the_committed_pin_file_parses() {
        let f = pin_file().as_ref().expect("pins/h200.json parses");
        assert!(!f.pins.is_empty());
    }
}
