//! Calibration: the error rates of the suite's own verdicts, measured on the GPU. Each repetition is a full
//! comparison under the default rule, over its own worker processes (trial/workers.rs). Not part of the everyday
//! suite (about eight minutes on an H200 before the real pairs, which add about three): `cargo test --release --test calibration`.
//!
//! - `calibration::aa::<shape>`: cuBLAS against itself, 20 times on a square, a prefill and a decode shape;
//! - `calibration::slowdown::square4096::aimP`: rung 7 against a separately compiled copy (a one-cycle spin,
//!   `aim0.0`) and against itself plus a spin of about 1.5%, 2%, 2.5%, 3% and 5% (`aim1.5` ... `aim5.0`), one
//!   trial an aim, each true effect measured at length, then 20 short comparisons of each, every one in its own
//!   process, with how often one process's interval holds the mean over the processes. Issue 37's targets need
//!   the A/A pairs, `aim0.0`, `aim3.0` and the real pairs: `--skip aim1.5 --skip aim2.0 --skip aim2.5 --skip
//!   aim5.0` leaves the other four aims out (each a run at length and 20 comparisons);
//! - `calibration::real::<pair>`: real pairs whose truth is the mean over 20 repetitions (an ablation that moved
//!   between processes, as a user runs it and from the fixed start of H146, `auto` against cuBLAS at M = 16 and on
//!   4096³): how often one comparison's interval holds that mean (its pairs of contradicting decisive verdicts
//!   printed);
//! - `calibration::simulated`: the rule's operating characteristics by simulation (CPU), for comparison.

use harness::measure::oc::{
    simulate, simulate_processes, ProcessOffset, ProcessScenario, Scenario,
};
use harness::report::results::{Environment, RunFile};
use harness::settings::Settings;
use harness::trial::calibration::{
    a_a, expectation, judge_row, real_pair, real_pairs, slowdown, slowdown_trial, CalibrationRow,
    SLOWDOWNS,
};
use harness::trial::job::TrialRecord;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

const REPETITIONS: usize = 20;

fn main() -> ExitCode {
    if let Some(code) = harness::trial::subprocess::child_entry() {
        return code;
    }
    let settings = Settings::or_exit();
    let spread = harness::trial::workers::Spread::from_settings(&settings);
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let available = Arc::new(if args.list {
        Ok(None)
    } else {
        harness::gpu::device::gpu_available().map(Some)
    });
    let file = Arc::new(Mutex::new(RunFile {
        suite: "calibration".into(),
        environment: Environment::capture(),
        trials: Vec::new(),
        calibration: Vec::new(),
    }));
    // Each GPU trial returns its rows and the records of every comparison it ran.
    type Body =
        Box<dyn Fn(&mut Vec<TrialRecord>) -> Result<Vec<CalibrationRow>, String> + Send + Sync>;
    let mut gpu: Vec<(String, Body)> = Vec::new();
    for shape in ["square4096", "prefill_attn_out", "decode_attn_out"] {
        let name = format!("calibration::aa::{shape}");
        let n = name.clone();
        gpu.push((
            name,
            Box::new(move |records| Ok(vec![a_a(&n, shape, spread, REPETITIONS, records)])),
        ));
    }
    for pair in real_pairs() {
        let name = format!("calibration::real::{}", pair.what);
        let n = name.clone();
        gpu.push((
            name,
            Box::new(move |records| {
                Ok(vec![real_pair(
                    &n,
                    pair.clone(),
                    spread,
                    REPETITIONS,
                    records,
                )])
            }),
        ));
    }
    for target in SLOWDOWNS {
        let name = slowdown_trial(target);
        let n = name.clone();
        gpu.push((
            name,
            Box::new(move |records| {
                slowdown(&n, target, spread, REPETITIONS, records).map(|row| vec![row])
            }),
        ));
    }

    // The spin kernel compiles on the CPU like every other program (its cycle count is chosen at run time).
    let rung = harness::Rung::TwoConsumers;
    let spin = harness::GpuTrial::new(
        "calibration::slowdown::square4096",
        harness::Job::Compare {
            baseline: harness::VariantSpec::gemm(rung.name(), rung.config()),
            candidate: harness::VariantSpec::gemm(
                format!("{}+spin", rung.name()),
                rung.config().with_spin(2000),
            ),
            shape: harness::shape("square4096"),
            dtype: harness::DType::F16,
        },
        expectation(),
    );
    let mut trials: Vec<Trial> = harness::suite::compile_trials(&[spin]);
    for (name, body) in gpu {
        let (available, file) = (available.clone(), file.clone());
        // The slowdowns and the real pairs time the ladder's Hopper kernels; the A/A pairs are cuBLAS's and run
        // on any GPU.
        let needs = match name.contains("::slowdown::") || name.contains("::real::") {
            true => harness::gpu::arch::Arch::HOPPER,
            false => harness::gpu::arch::Arch::OLDEST,
        };
        trials.push(
            Trial::ignorable_test(name, move || {
                let info = match available.as_ref() {
                    Err(reason) => {
                        return Ok(Completion::ignored_with(format!(
                            "needs a CUDA GPU of compute capability 8.0 or later: {reason}"
                        )))
                    }
                    Ok(info) => info,
                };
                if let Some(why) = info
                    .as_ref()
                    .and_then(|i| needs.refused_by(&i.name, i.compute_capability))
                {
                    return Ok(Completion::ignored_with(format!("skipped: {why}")));
                }
                for line in expectation().describe() {
                    println!("  {line}");
                }
                let mut records = Vec::new();
                let rows = body(&mut records);
                let mut f = file.lock().unwrap();
                f.trials.extend(records);
                let rows = match rows {
                    Ok(rows) => rows,
                    Err(e) => {
                        let _ = f.write();
                        return Err(Failed::from(e));
                    }
                };
                let mut problems = Vec::new();
                for row in &rows {
                    println!("  {}", harness::report::text::calibration_line(row));
                    if let Err(e) = judge_row(row) {
                        problems.push(e);
                    }
                }
                f.calibration.extend(rows);
                if let Err(e) = f.write() {
                    eprintln!("could not write the results file: {e}");
                }
                if problems.is_empty() {
                    Ok(Completion::Completed)
                } else {
                    Err(Failed::from(problems.join("; ")))
                }
            })
            .with_kind("gpu"),
        );
    }
    trials.push(Trial::test("calibration::simulated", move || {
        // The same rule on simulated noise like the H200's (pair 0.7%, between rounds 0.3%), over worker
        // processes with the H200's prior, each process adding an offset of 0, 0.3% or 1%.
        let prior = harness::measure::processes::prior_for(
            "NVIDIA H200",
            harness::measure::processes::Kind::Ours,
        )
        .map_err(Failed::from)?;
        for process_sd in [0.0, 0.003, 0.01] {
            for ratio in [1.0, 1.01, 1.02, 1.03, 1.04, 1.05] {
                let scenario = ProcessScenario {
                    rounds: Scenario::normal(ratio, 0.007, 0.003),
                    process: ProcessOffset::Normal(process_sd),
                };
                let r = simulate_processes(&harness::measure::processes::ProcessRule::new(spread.process_settings(), Some(prior.clone())), scenario, 2000, 7);
                println!(
                    "  between processes {:.1}%, true ratio {ratio:.2}: faster {:.3}, slower {:.3}, no change {:.3}, inconclusive {:.3}; interval held the truth {:.3}; two comparisons agree {:.3}, contradict {:.4}; {:.2} processes",
                    process_sd * 100.0, r.rates.faster, r.rates.slower, r.rates.no_change, r.rates.inconclusive, r.coverage, r.rates.agreement(), r.rates.contradiction(), r.mean_processes
                );
            }
        }
        // Inside one process, as before the rule over processes (for comparison).
        for ratio in [1.0, 1.03] {
            let r = simulate(settings.stats, Scenario::normal(ratio, 0.007, 0.003), 2000, 7);
            println!(
                "  one process, true ratio {ratio:.2}: faster {:.3}, slower {:.3}, no change {:.3}, inconclusive {:.3}, mean rounds {:.1}",
                r.faster, r.slower, r.no_change, r.inconclusive, r.mean_rounds
            );
        }
        Ok(())
    }));
    let replay_file = harness::replay::reference_runs("calibration");
    trials.push(Trial::test("replay::calibration", move || {
        if replay_file.is_empty() {
            return Err(Failed::from(
                "no committed calibration run under results/h200/",
            ));
        }
        for path in &replay_file {
            let run = RunFile::read(path).map_err(|e| Failed::from(e.to_string()))?;
            if run.calibration.is_empty() {
                return Err(Failed::from(format!(
                    "{}: no calibration rows",
                    path.display()
                )));
            }
            for row in &run.calibration {
                judge_row(row).map_err(|e| Failed::from(format!("{}: {e}", path.display())))?;
            }
        }
        Ok(())
    }));
    let conclusion = libtest_mimic::run(&args, trials);
    let f = file.lock().unwrap();
    if !f.calibration.is_empty() {
        println!("\nCalibration (each comparison in its own process):");
        for row in &f.calibration {
            println!("  {}", harness::report::text::calibration_line(row));
        }
        if let Ok(p) = f.path() {
            println!("results written to {}", p.display());
        }
    }
    conclusion.exit_code()
}
