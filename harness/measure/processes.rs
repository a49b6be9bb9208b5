//! Between processes (issue 37). What a process fixes for its whole life (where its operands and modules land,
//! the state the card is in when it starts) moves a comparison's ratio by more than the rounds inside that process
//! can see: measured on the H200 (results/h200/f66c017/agreement/), the same comparison in six processes scattered
//! up to 15 times the standard error one process stated, and by how much differs from one comparison to the next
//! (a heavy-tailed spread: most comparisons scatter about as their rounds say, a few memory-bound ones by 1-2%).
//!
//! So a comparison is spread over worker processes, each running a few rounds, and its interval is built over the
//! processes' estimates. The between-process variance is moderated towards a prior measured per GPU and kind of
//! comparison (empirical Bayes, Smyth 2004): with q processes whose log ratios have sample variance s^2,
//!
//!   tau^2 = (d0 s0^2 + (q - 1) s^2) / (d0 + q - 1), and at least the processes' mean squared standard error,
//!   se = tau / sqrt(q), on d0 + q - 1 degrees of freedom,
//!
//! where (s0, d0) is the prior: a scaled inverse chi-square fitted to many comparisons' spreads
//! (tools/process_spread.py, pins/process-prior.json). One process is judged on the prior alone, which is wide
//! where the prior's few degrees of freedom say that comparisons differ; each further process brings the
//! comparison's own spread in; from the last planned process on, the comparison's own sample variance is a floor
//! under tau^2 (past the planned processes, on its own q - 1 degrees of freedom where it binds). A look follows each process, the error rates shared out over the planned processes as
//! `PROCESS_SPENDING` (0.3, 0.1, 0.6: Bonferroni, so the overall rates hold whatever the looks' correlation), and
//! the comparison stops at a decisive look. Without a prior for the GPU, only the processes' own spread counts (a
//! look needs two processes).

use crate::measure::stats::{decide, mean_sd, Estimate, Spending, StatsSettings, Verdict};

pub use crate::measure::stats::{t_quantile_at_any_df as t_quantile, ProcessLevel, ProcessPrior};

/// How the rule over processes shares its error out over the looks after processes 1, 2 and 3 (H109, decided by
/// simulation in `oc.rs` and by replay on f66c017's records with tools/process_spread.py): the first look, on the
/// prior alone, keeps enough to stop at once on a large effect (a third of the suite's comparisons); the last
/// takes the most, so that a comparison near a band edge ends decisive more often and two comparisons of it agree
/// more often than under an even split; the second, on two processes whose own spread has one degree of freedom,
/// decides least.
pub const PROCESS_SPENDING: Spending = Spending::Shares {
    first: 0.3,
    last: 0.6,
};

/// The settings of the rule over processes: a look after each of at most `processes` workers of
/// `rounds_per_process` rounds, the error shared out as `PROCESS_SPENDING`; band and levels from `stats`.
pub fn process_settings(
    stats: StatsSettings,
    processes: usize,
    rounds_per_process: usize,
) -> StatsSettings {
    StatsSettings {
        rounds_per_look: rounds_per_process,
        looks: processes,
        spending: PROCESS_SPENDING,
        ..stats
    }
}

/// The estimate over the worker processes' own estimates (each from its rounds), as judged at the look the last
/// of them ends. `settings.looks` is the most processes planned (the error split), `settings.rounds_per_look`
/// the rounds a process runs.
pub fn across_processes(
    parts: &[Estimate],
    prior: Option<&ProcessPrior>,
    settings: StatsSettings,
) -> Estimate {
    let q = parts.len();
    let means: Vec<f64> = parts.iter().map(|e| e.log_mean).collect();
    let ses: Vec<f64> = parts.iter().map(|e| e.log_se).collect();
    let (mean, observed) = if q == 0 { (0.0, 0.0) } else { mean_sd(&means) };
    let (d0, s0) = prior.map_or((0.0, 0.0), |p| (p.df, p.sd));
    let mut dof = d0 + q as f64 - 1.0;
    let within = ses.iter().map(|s| s * s).sum::<f64>() / q.max(1) as f64;
    let mut tau2 = ((d0 * s0 * s0 + (q as f64 - 1.0) * observed * observed) / dof).max(within);
    // From the last planned process on, the comparison's own spread is a floor: the prior's few degrees of
    // freedom would otherwise shrink a widely scattered comparison towards the typical one and state too narrow an
    // interval (simulated at a 2% process spread: the interval holds the truth 90-92% of the time without it,
    // 93-94% with it; a true 1.02 is called no change 6.4% of the time without it, 4.7% with it). Past the plan
    // (a pinned trial going on for precision, its spread wide by then) the floor, where it binds, is judged on its
    // own q - 1 degrees of freedom: on the prior's it let a true 1.02 be called no change 6.7% of the time.
    if q >= 2 && q >= settings.looks && observed * observed > tau2 {
        tau2 = observed * observed;
        if q > settings.looks {
            dof = q as f64 - 1.0;
        }
    }
    let finite = q > 0 && dof > 0.0 && tau2.is_finite() && mean.is_finite();
    let se = if finite {
        (tau2 / q as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let (h, he) = crate::measure::stats::look_half_widths(se, dof, settings, q);
    let verdict = if finite {
        decide(mean, h, he, settings.band)
    } else {
        Verdict::Inconclusive
    };
    // The noise inside the processes, pooled (each process ran the same number of rounds).
    let pooled = |f: fn(&Estimate) -> f64| {
        let v: Vec<f64> = parts.iter().map(f).filter(|x| x.is_finite()).collect();
        (v.iter().map(|x| x * x).sum::<f64>() / v.len().max(1) as f64).sqrt()
    };
    Estimate {
        rounds: parts.iter().map(|e| e.rounds).sum(),
        pairs: parts.iter().map(|e| e.pairs).sum(),
        looks: q,
        ratio: mean.exp(),
        log_mean: mean,
        log_se: se,
        df: dof.max(0.0),
        ci: ((mean - h).exp(), (mean + h).exp()),
        ci_equivalence: ((mean - he).exp(), (mean + he).exp()),
        pair_sd: pooled(|e| e.pair_sd),
        round_sd: pooled(|e| e.round_sd),
        between_round_sd: pooled(|e| e.between_round_sd),
        disturbed_pairs: parts.iter().map(|e| e.disturbed_pairs).sum(),
        verdict,
        settings,
        processes: Some(Box::new(ProcessLevel {
            means,
            ses,
            observed_sd: (q >= 2).then_some(observed),
            sd: if finite { tau2.sqrt() } else { f64::INFINITY },
            prior: prior.cloned(),
        })),
    }
}

/// The rule over processes: after each worker process, `after_process` gets every process's estimate so far and
/// says whether the comparison ends: a decisive look (precise enough where a precision is asked) before the last
/// planned process, or the last planned process. A comparison that asks for a precision (a pinned ratio is
/// checked to within its tolerance) and has not reached it there runs on to `precision_processes`, whatever it
/// finds on the way: whether it goes on depends on the spread, not on where the estimate lies, and the one verdict
/// taken at the end spends the last look's share (simulated in `oc.rs`: the rates stay as planned). A comparison
/// whose expectation is a threshold ("under 15% of the baseline's time") ends before the last planned process only
/// once its interval lies wholly on one side of that threshold: the threshold is one more edge, like the band's,
/// that a look must clear to decide (at 1d1f9c2 a comparison stopped on its first, decisive look with an interval
/// of +-10% that still reached over its 0.15).
pub struct ProcessRule {
    pub settings: StatsSettings,
    pub prior: Option<ProcessPrior>,
    /// A decisive look ends the comparison only once the interval's half-width (log scale) is at most this.
    pub precision: Option<f64>,
    /// The most processes a comparison that asks for a precision may take to reach it.
    pub precision_processes: usize,
    /// A ratio the expectation is judged against: a look ends early only with its interval clear of it.
    pub threshold: Option<f64>,
    /// The expectation is a verdict: a comparison still inconclusive at the last planned process, its processes
    /// within `DECIDE_MOST_SPREAD` of each other, runs on to `precision_processes`, as one short of a precision
    /// does, and is judged once there.
    pub decide: bool,
}

impl ProcessRule {
    /// The rule of `settings` with `prior`, no precision asked.
    pub fn new(settings: StatsSettings, prior: Option<ProcessPrior>) -> ProcessRule {
        ProcessRule {
            settings,
            prior,
            precision: None,
            precision_processes: settings.looks,
            threshold: None,
            decide: false,
        }
    }

    /// The estimate that ends the comparison, or None to run another process.
    pub fn after_process(&self, parts: &[Estimate]) -> Option<Estimate> {
        let e = across_processes(parts, self.prior.as_ref(), self.settings);
        let precise = self
            .precision
            .is_none_or(|p| (e.ci.1 / e.ci.0).ln() / 2.0 <= p);
        let clear = self.threshold.is_none_or(|t| e.ci.1 < t || e.ci.0 > t);
        let (q, planned) = (parts.len(), self.settings.looks);
        let ends = if q < planned {
            e.verdict.is_decisive() && precise && clear
        } else if q == planned {
            let undecided = self.decide
                && !e.verdict.is_decisive()
                && e.processes
                    .as_ref()
                    .and_then(|p| p.observed_sd)
                    .is_some_and(|sd| sd <= DECIDE_MOST_SPREAD);
            (precise && !undecided) || self.precision_processes <= planned
        } else {
            // Stopping at the first narrow enough look would favour spreads that came out small by chance and
            // state too narrow an interval: once past the plan, the comparison runs to its cap.
            q >= self.precision_processes
        };
        ends.then_some(e)
    }
}

/// A verdict still undecided at the last planned process runs on only where its processes agree to within this
/// (log sd): there three more processes can decide it, while a comparison whose processes scatter more gains
/// little and would add to the false "no change" on the band's edge (simulated in `oc.rs`).
pub const DECIDE_MOST_SPREAD: f64 = 0.005;

/// The kind of comparison a prior is measured for: between two of the suite's (or a user's) kernels, or against
/// cuBLAS, whose own between-process spread (its path, its workspace) adds to the kernel's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ours,
    Cublas,
}

impl Kind {
    pub fn key(self) -> &'static str {
        match self {
            Kind::Ours => "ours",
            Kind::Cublas => "cublas",
        }
    }
}

/// The committed priors, per GPU model.
pub const PRIOR_FILE: &str = "pins/process-prior.json";

/// The prior of `kind` for `gpu` in a prior file's text, laid out as
/// `{"gpus": {GPU: {"driver": .., "kinds": {KIND: {"sd": .., "df": .., ..}}, ..}}}` (the between-process and the
/// between-run priors both are), with `source` describing the GPU's and the kind's entries; or why there is none.
/// `file` and `what` name the file and the prior in messages.
pub fn prior_in(
    text: &str,
    file: &str,
    what: &str,
    gpu: &str,
    kind: Kind,
    source: impl Fn(&serde_json::Value, &serde_json::Value) -> String,
) -> Result<ProcessPrior, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{file} does not parse: {e}"))?;
    let gpus = v["gpus"]
        .as_object()
        .ok_or_else(|| format!("{file} holds no \"gpus\""))?;
    let g = gpus.get(gpu).ok_or_else(|| {
        format!(
            "no {what} measured for the {gpu} (only for {})",
            gpus.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    })?;
    let k = &g["kinds"][kind.key()];
    match (k["sd"].as_f64(), k["df"].as_f64()) {
        (Some(sd), Some(df)) if sd.is_finite() && sd > 0.0 && df.is_finite() && df > 0.0 => {
            Ok(ProcessPrior {
                sd,
                df,
                source: source(g, k),
            })
        }
        _ => Err(format!(
            "the {} {what} for the {gpu} is not a positive sd and df",
            kind.key()
        )),
    }
}

/// The prior of `kind` on the GPU named `gpu` from the committed file's text, or why there is none.
pub fn prior_from(text: &str, gpu: &str, kind: Kind) -> Result<ProcessPrior, String> {
    let fitted = prior_in(
        text,
        PRIOR_FILE,
        "between-process prior",
        gpu,
        kind,
        |g, k| {
            let commit = g["commit"].as_str().unwrap_or("?");
            let run = g["runs"][0].as_str().unwrap_or("");
            format!(
            "{gpu} (driver {}), {} comparisons, {} of our kernels' or cuBLAS's processes of {} rounds, at {} ({})",
            g["driver"].as_str().unwrap_or("?"),
            k["trials"].as_u64().unwrap_or(0),
            k["processes"].as_u64().unwrap_or(0),
            g["rounds_per_process"].as_u64().unwrap_or(0),
            &commit[..commit.len().min(7)],
            run.rsplit_once('/').map_or(run, |(d, _)| d)
        )
        },
    )?;
    Ok(if fitted.df > MOST_PRIOR_DF {
        ProcessPrior {
            source: format!(
                "{}; fitted on {:.2} df, trusted with {MOST_PRIOR_DF}",
                fitted.source, fitted.df
            ),
            df: MOST_PRIOR_DF,
            ..fitted
        }
    } else {
        fitted
    })
}

/// The most degrees of freedom a between-process prior is trusted with. A prior fitted on a few tens of
/// comparisons can come out sure of itself (against cuBLAS, 3.5 df at f66c017), and a comparison that scatters
/// more than it says is then judged on too narrow an interval: at 3.5 df, simulated (`oc.rs`) at a process spread
/// of 0.75% (0.72% was seen), a true 1.02 was called no change 10% of the time; at 2 df, 4.4-5.8% (1.02 or
/// 0.98). The price: a comparison against cuBLAS no longer ends on its first process with "no change" (about 30 of
/// the suite's 88).
pub const MOST_PRIOR_DF: f64 = 2.0;

/// The committed prior for this GPU and kind (`pins/process-prior.json`), or why there is none.
pub fn prior_for(gpu: &str, kind: Kind) -> Result<ProcessPrior, String> {
    prior_from(&crate::measure::committed::read(PRIOR_FILE)?, gpu, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::oc::Rng;
    use crate::measure::stats::estimate;

    fn settings() -> StatsSettings {
        StatsSettings {
            rounds_per_look: 3,
            looks: 3,
            ..StatsSettings::default()
        }
    }

    /// One worker process: `rounds` rounds of 6 pairs around ln(ratio) + offset, pair noise `sd`.
    fn process(ratio: f64, offset: f64, sd: f64, rounds: usize, rng: &mut Rng) -> Estimate {
        let data: Vec<Vec<f64>> = (0..rounds)
            .map(|_| {
                (0..6)
                    .map(|_| ratio.ln() + offset + rng.normal() * sd)
                    .collect()
            })
            .collect();
        estimate(
            &data,
            StatsSettings {
                rounds_per_look: rounds,
                looks: 1,
                ..StatsSettings::default()
            },
        )
    }

    fn h200_ours() -> ProcessPrior {
        prior_for("NVIDIA H200", Kind::Ours).unwrap()
    }

    #[test]
    fn the_committed_priors_read_for_the_h200_and_name_their_runs() {
        for kind in [Kind::Ours, Kind::Cublas] {
            let p = prior_for("NVIDIA H200", kind).unwrap();
            assert!(p.sd > 0.0005 && p.sd < 0.02, "{p:?}");
            assert!(p.df > 0.5 && p.df < 50.0, "{p:?}");
            assert!(p.source.contains("f66c017"), "{}", p.source);
            assert!(p.df <= MOST_PRIOR_DF, "{p:?}");
        }
        // The prior against cuBLAS was fitted surer than it is trusted, and says so.
        let cublas = prior_for("NVIDIA H200", Kind::Cublas).unwrap();
        assert!(
            cublas.source.contains("trusted with 2"),
            "{}",
            cublas.source
        );
        let e = prior_for("NVIDIA GeForce RTX 4090", Kind::Ours).unwrap_err();
        assert!(e.contains("no between-process prior"), "{e}");
    }

    #[test]
    fn one_process_is_judged_on_the_prior_alone() {
        let mut rng = Rng::new(1);
        let p = h200_ours();
        let one = process(1.0, 0.0, 0.004, 3, &mut rng);
        let e = across_processes(std::slice::from_ref(&one), Some(&p), settings());
        let level = e.processes.as_ref().unwrap();
        assert_eq!(level.observed_sd, None);
        assert!((level.sd - p.sd.max(one.log_se)).abs() < 1e-12);
        assert!((e.df - p.df).abs() < 1e-12);
        // Far wider than the process's own interval: one process cannot show its own spread.
        assert!(e.ci.1 / e.ci.0 > 3.0 * (one.ci.1 / one.ci.0 - 1.0) + 1.0);
        // A large effect is still decided by one process.
        let big = process(0.5, 0.0, 0.004, 3, &mut rng);
        assert_eq!(
            across_processes(&[big], Some(&p), settings()).verdict,
            Verdict::Faster
        );
    }

    #[test]
    fn processes_that_disagree_widen_the_interval_beyond_what_each_states() {
        let mut rng = Rng::new(2);
        let p = h200_ours();
        let agree: Vec<Estimate> = (0..3)
            .map(|_| process(1.03, 0.0, 0.003, 3, &mut rng))
            .collect();
        let apart: Vec<Estimate> = [-0.02, 0.0, 0.02]
            .iter()
            .map(|&o| process(1.03, o, 0.003, 3, &mut rng))
            .collect();
        let a = across_processes(&agree, Some(&p), settings());
        let b = across_processes(&apart, Some(&p), settings());
        assert_eq!(a.verdict, Verdict::Slower, "{a:?}");
        assert_ne!(b.verdict, Verdict::Slower, "{b:?}");
        assert!(b.processes.unwrap().sd > 0.01);
        // Without a prior a single process says nothing, two say something.
        let one = across_processes(&agree[..1], None, settings());
        assert_eq!(one.verdict, Verdict::Inconclusive);
        assert!(one.ci.1.is_infinite());
        assert!(across_processes(&agree[..2], None, settings())
            .ci
            .1
            .is_finite());
    }

    #[test]
    fn the_rule_stops_at_a_decisive_look_or_the_last_process() {
        let mut rng = Rng::new(3);
        let rule = ProcessRule::new(settings(), Some(h200_ours()));
        let big = [process(0.5, 0.0, 0.004, 3, &mut rng)];
        assert_eq!(rule.after_process(&big).unwrap().looks, 1);
        let near: Vec<Estimate> = (0..3)
            .map(|_| process(1.0, 0.0, 0.004, 3, &mut rng))
            .collect();
        assert!(rule.after_process(&near[..1]).is_none());
        let last = rule.after_process(&near).unwrap();
        assert_eq!((last.looks, last.rounds), (3, 9));
        // A precision keeps a decisive but wide comparison going, past the planned processes up to its own cap,
        // where it ends whatever it found.
        let precise = ProcessRule {
            precision: Some(0.001),
            precision_processes: 5,
            ..rule
        };
        assert!(precise.after_process(&big).is_none());
        assert!(precise.after_process(&near).is_none());
        let more: Vec<Estimate> = (0..5)
            .map(|_| process(1.0, 0.0, 0.004, 3, &mut rng))
            .collect();
        assert!(precise.after_process(&more[..4]).is_none());
        assert_eq!(precise.after_process(&more).unwrap().looks, 5);
        // At the last planned process, a precise look ends it even when it is not decisive; past it, only the cap.
        let loose = ProcessRule {
            precision: Some(1.0),
            ..precise
        };
        assert_eq!(loose.after_process(&near).unwrap().looks, 3);
        assert!(loose.after_process(&more[..4]).is_none());
    }

    #[test]
    fn a_prior_file_without_the_gpu_or_with_a_bad_value_is_named() {
        let text = r#"{"gpus": {"NVIDIA H200": {"driver": "580", "commit": "abcdef0123", "rounds_per_process": 3,
            "runs": ["results/h200/x/agreement/a.tgz"], "kinds": {"ours": {"sd": 0.002, "df": 1.1, "trials": 27,
            "processes": 176}, "cublas": {"sd": -1, "df": 2, "trials": 1, "processes": 6}}}}}"#;
        let p = prior_from(text, "NVIDIA H200", Kind::Ours).unwrap();
        assert!(p.source.contains("abcdef0") && p.source.contains("results/h200/x/agreement"));
        assert!(prior_from(text, "NVIDIA H200", Kind::Cublas)
            .unwrap_err()
            .contains("not a positive"));
        assert!(prior_from(text, "NVIDIA H100", Kind::Ours)
            .unwrap_err()
            .contains("NVIDIA H200"));
        assert!(prior_from("{", "NVIDIA H200", Kind::Ours)
            .unwrap_err()
            .contains("does not parse"));
    }
}
