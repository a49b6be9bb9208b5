//! A comparison spread over worker processes (measure/processes.rs says why): each worker is a child process of
//! its own (subprocess.rs) that checks both variants and times them for a fixed number of rounds; after each, the
//! rule over processes looks at every worker's estimate so far and ends the comparison or starts another worker.
//! The record that comes back holds every worker's rounds, each marked with its process, and the process-level
//! estimate. Any other job, and a worker that finds something wrong (a wrong answer, a hang, an error), end at once
//! with that worker's record: nothing wrong is ever timed on.

use crate::measure::processes::{prior_for, Kind, ProcessRule};
use crate::measure::stats::StatsSettings;
use crate::measure::timing::Comparison;
use crate::settings::WorkerProcesses;
use crate::trial::job::{Job, Observed, VariantSpec};
use crate::trial::subprocess::{self, ChildOutcome};
use std::time::{Duration, Instant};

/// How a comparison is spread: at most `processes` workers of `rounds_per_process` rounds each, in fresh or kept
/// processes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub processes: usize,
    pub rounds_per_process: usize,
    pub stats: StatsSettings,
    pub workers: WorkerProcesses,
}

impl Spread {
    pub fn from_settings(s: &crate::settings::Settings) -> Spread {
        Spread {
            processes: s.processes,
            rounds_per_process: s.rounds_per_process,
            stats: s.stats,
            workers: s.workers,
        }
    }

    /// The most workers a comparison that checks a pin may take to reach the precision the pin needs: twice the
    /// planned ones (the lost try at 5db9c5d failed two microbench pins as too noisy after three).
    pub fn precision_processes(&self) -> usize {
        2 * self.processes
    }

    /// The statistics settings of the process-level estimate: a look after each worker.
    pub fn process_settings(&self) -> StatsSettings {
        crate::measure::processes::process_settings(
            self.stats,
            self.processes,
            self.rounds_per_process,
        )
    }
}

/// The kind of comparison a job is, for the prior it takes.
pub fn kind_of(job: &Job) -> Kind {
    match job {
        Job::Compare {
            baseline,
            candidate,
            ..
        } if matches!(baseline, VariantSpec::Cublas)
            || matches!(candidate, VariantSpec::Cublas) =>
        {
            Kind::Cublas
        }
        _ => Kind::Ours,
    }
}

/// What an expectation asks of a comparison before a look may end it early.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Asks {
    /// A log half-width: a pinned ratio is checked to within its tolerance, so a comparison samples until its
    /// interval's half-width is comfortably under the window's.
    pub precision: Option<f64>,
    /// A ratio the expectation is judged against: a look ends early only with its interval clear of it.
    pub threshold: Option<f64>,
    /// The expectation is a verdict: a comparison still inconclusive after the planned processes runs on.
    pub decide: bool,
}

/// What `expectation` asks of the comparison that judges it.
pub fn asks_of(expectation: &crate::trial::expectation::Expectation) -> Asks {
    use crate::trial::expectation::Expect;
    match expectation.expect {
        Expect::RatioNear { tolerance, .. }
        | Expect::EffectNear { tolerance, .. }
        | Expect::RatioAtClock { tolerance, .. } => Asks {
            precision: Some(0.8 * tolerance.ln_1p()),
            ..Asks::default()
        },
        Expect::TimeRatioBelow(share) => Asks {
            threshold: Some(share),
            ..Asks::default()
        },
        Expect::Verdict(_) => Asks {
            decide: true,
            ..Asks::default()
        },
        _ => Asks::default(),
    }
}

/// Runs `job`: a comparison over worker processes, anything else in one child. `env` goes to every child;
/// `asks` keeps a decisive comparison going until its interval is as narrow as asked and clear of the threshold.
pub fn run(
    name: &str,
    job: &Job,
    deadline: Duration,
    env: &[(&str, &str)],
    spread: Spread,
    asks: Asks,
) -> ChildOutcome {
    // Worker `slot` of a comparison (1-based), in a fresh process or the run's kept one of that number.
    let in_worker = |slot: usize, deadline: Duration, env: &[(&str, &str)]| match spread.workers {
        WorkerProcesses::Fresh => subprocess::run_in_child_with_env(name, job, deadline, env),
        // Past the kept processes, fresh ones.
        WorkerProcesses::Kept if slot <= crate::trial::pool::MOST_KEPT => {
            crate::trial::pool::shared().run(slot, name, job, deadline, env)
        }
        WorkerProcesses::Kept => subprocess::run_in_child_with_env(name, job, deadline, env),
    };
    if !matches!(job, Job::Compare { .. }) {
        return in_worker(1, deadline, env);
    }
    // A worker runs one look of its rounds; what comes later in the list overrides what came before.
    let rounds = spread.rounds_per_process.to_string();
    let mut worker_env = env.to_vec();
    worker_env.extend([
        ("GEMM_ABLATE_LOOKS", "1"),
        ("GEMM_ABLATE_ROUNDS_PER_LOOK", rounds.as_str()),
    ]);
    let started = Instant::now();
    let mut rule = ProcessRule {
        precision: asks.precision,
        threshold: asks.threshold,
        decide: asks.decide,
        precision_processes: spread.precision_processes(),
        ..ProcessRule::new(spread.process_settings(), None)
    };
    let mut parts = Vec::new();
    let mut records = Vec::new();
    let mut output = String::new();
    let mut flags: Vec<String> = Vec::new();
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        let worker = records.len() + 1;
        let ChildOutcome {
            record,
            output: said,
        } = in_worker(worker, left, &worker_env);
        output.push_str(&said);
        output.push_str(&format!(
            "-- worker process {worker} of at most {}\n",
            spread.processes
        ));
        let estimate = match (&record.observed, &record.comparison) {
            (Observed::Compared(e), Some(_)) => e.clone(),
            _ => {
                // Nothing more is timed once a worker found something wrong; the record says which worker.
                let mut record = record;
                record.flags.push(format!(
                    "ended in worker process {worker} of at most {}",
                    spread.processes
                ));
                return ChildOutcome { record, output };
            }
        };
        if records.is_empty() {
            let gpu = record
                .gpu
                .as_ref()
                .map(|g| g.name.clone())
                .unwrap_or_default();
            match prior_for(&gpu, kind_of(job)) {
                Ok(p) => rule.prior = Some(p),
                Err(why) => flags.push(format!(
                    "{why}: the interval rests on the worker processes' own spread alone"
                )),
            }
        }
        for f in &record.flags {
            if !flags.contains(f) {
                flags.push(f.clone());
            }
        }
        parts.push(estimate);
        records.push(record);
        if let Some(e) = rule.after_process(&parts) {
            if parts.len() > spread.processes {
                // Past the plan, the record says why (a pin's precision, or a verdict still undecided).
                let why = match asks.precision {
                    Some(_) => "its pin's precision not reached".to_string(),
                    None => format!(
                        "its verdict still inconclusive, its processes within {}% of each other",
                        crate::measure::processes::DECIDE_MOST_SPREAD * 100.0
                    ),
                };
                flags.push(format!(
                    "ran on to {} worker processes past the {} planned: {why}",
                    parts.len(),
                    spread.processes
                ));
            }
            return ChildOutcome {
                record: merged(records, e, flags, started),
                output,
            };
        }
    }
}

/// The workers' records as one: the first's checks and variants, every worker's rounds, the process-level
/// estimate.
fn merged(
    records: Vec<crate::trial::job::TrialRecord>,
    estimate: crate::measure::stats::Estimate,
    flags: Vec<String>,
    started: Instant,
) -> crate::trial::job::TrialRecord {
    let phases: Vec<(String, f64)> = records
        .iter()
        .enumerate()
        .flat_map(|(k, r)| {
            r.phases
                .iter()
                .map(move |(p, t)| (format!("worker {}: {p}", k + 1), *t))
        })
        .collect();
    let mut records = records.into_iter();
    let mut first = records.next().expect("a worker's record");
    first.phases = phases;
    let mut comparisons: Vec<Comparison> = first.comparison.take().into_iter().collect();
    comparisons.extend(records.filter_map(|r| r.comparison));
    first.comparison = Comparison::across_processes(comparisons, estimate.clone());
    first.observed = Observed::Compared(estimate);
    first.flags = flags;
    first.duration_s = started.elapsed().as_secs_f64();
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::problem::{shape, DType};

    #[test]
    fn a_pin_asks_a_precision_and_a_threshold_its_edge() {
        use crate::trial::expectation::{Expect, Expectation};
        let asks = |expect| asks_of(&Expectation::hypothesis(expect, "a test"));
        assert_eq!(
            asks(Expect::TimeRatioBelow(0.15)),
            Asks {
                threshold: Some(0.15),
                ..Asks::default()
            }
        );
        assert!(asks(Expect::Verdict(crate::measure::stats::Verdict::NoChange)).decide);
        let pin = asks(Expect::RatioNear {
            ratio: 1.0,
            tolerance: 0.03,
        });
        assert!((pin.precision.unwrap() - 0.8 * 0.03f64.ln_1p()).abs() < 1e-12);
        assert_eq!(pin.threshold, None);
        assert_eq!(asks(Expect::Correct), Asks::default());
    }

    fn compare(baseline: VariantSpec, candidate: VariantSpec) -> Job {
        Job::Compare {
            baseline,
            candidate,
            shape: shape("square4096"),
            dtype: DType::F16,
        }
    }

    #[test]
    fn a_comparison_with_cublas_on_either_side_takes_the_cublas_prior() {
        let rung = crate::kernel::ladder::Rung::TwoConsumers;
        let ours = || VariantSpec::gemm(rung.name(), rung.config());
        assert_eq!(kind_of(&compare(VariantSpec::Cublas, ours())), Kind::Cublas);
        assert_eq!(kind_of(&compare(ours(), VariantSpec::Cublas)), Kind::Cublas);
        assert_eq!(kind_of(&compare(ours(), ours())), Kind::Ours);
    }

    #[test]
    fn the_process_level_settings_look_after_each_worker() {
        let s = Spread {
            processes: 3,
            rounds_per_process: 4,
            stats: StatsSettings::default(),
            workers: WorkerProcesses::Fresh,
        };
        let p = s.process_settings();
        assert_eq!((p.looks, p.rounds_per_look), (3, 4));
        assert_eq!(p.band, StatsSettings::default().band);
        assert_eq!(p.spending, crate::measure::processes::PROCESS_SPENDING);
        let d = Spread::from_settings(&crate::settings::Settings::default());
        assert_eq!((d.processes, d.rounds_per_process), (3, 4));
    }

    #[test]
    fn the_merged_record_keeps_every_workers_phases_under_its_number() {
        let job = compare(VariantSpec::Cublas, VariantSpec::Cublas);
        let estimate = crate::measure::stats::estimate(
            &[vec![0.0, 0.001], vec![0.001, 0.0]],
            StatsSettings::default(),
        );
        let worker = |opened: f64| crate::trial::job::TrialRecord {
            phases: vec![
                ("gpu opened".into(), opened),
                ("checked".into(), opened + 0.2),
            ],
            ..crate::trial::job::TrialRecord::new("t", &job, Observed::Compared(estimate.clone()))
        };
        let merged = merged(
            vec![worker(0.4), worker(0.5)],
            estimate.clone(),
            Vec::new(),
            Instant::now(),
        );
        let labels: Vec<&str> = merged.phases.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            labels,
            [
                "worker 1: gpu opened",
                "worker 1: checked",
                "worker 2: gpu opened",
                "worker 2: checked"
            ]
        );
        assert_eq!(merged.phases[2].1, 0.5);
    }
}
