//! The glue between a list of trials and libtest-mimic: GPU trials run one at a time, each in its own child
//! process, and are ignored (with the reason) where there is no Hopper GPU; CPU trials always run. At the end
//! the GPU trials' records are written as one results file.

use crate::device;
use crate::isolate;
use crate::job::{Caught, Job, TrialRecord, VariantSpec};
use crate::problem::DType;
use crate::results::{Environment, RunFile};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// A GPU trial: a name (hierarchical, `ablation::swizzle::square4096`) and the job it runs.
pub struct GpuTrial {
    pub name: String,
    pub job: Job,
    /// Overrides the default per-trial deadline.
    pub deadline_s: Option<f64>,
}

impl GpuTrial {
    pub fn new(name: impl Into<String>, job: Job) -> GpuTrial {
        GpuTrial {
            name: name.into(),
            job,
            deadline_s: None,
        }
    }
    pub fn with_deadline_s(mut self, seconds: f64) -> GpuTrial {
        self.deadline_s = Some(seconds);
        self
    }
}

/// True if a fault trial expects to be stopped by the host's deadline.
fn expects_host_timeout(job: &Job) -> bool {
    matches!(
        job,
        Job::Fault {
            caught: Caught::HostTimeout,
            ..
        }
    )
}

/// The NVRTC programs a variant compiles to (none for cuBLAS), with a name for its compile trial.
fn programs(spec: &VariantSpec, dtype: DType) -> Vec<(String, String)> {
    match spec {
        VariantSpec::Cublas => Vec::new(),
        VariantSpec::Gemm { name, config } => {
            if config.validate().is_err() {
                return Vec::new(); // a sweep point that is rejected by design is tested as a rejection, not compiled
            }
            vec![(
                format!("{name}::{}", dtype.name()),
                crate::source::gemm_program(config, dtype),
            )]
        }
        VariantSpec::LoadPath { name, config } => {
            vec![
                (format!("{name}::timed"), config.program(false)),
                (format!("{name}::checksum"), config.program(true)),
            ]
        }
    }
}

/// One CPU trial per distinct kernel program the GPU trials use: it must compile for sm_90a with NVRTC, without
/// register spills or local memory, and without ptxas warnings about wgmma or setmaxnreg.
pub fn compile_trials(gpu_trials: &[GpuTrial]) -> Vec<Trial> {
    let mut seen: Vec<String> = Vec::new();
    let mut trials = Vec::new();
    for t in gpu_trials {
        let found: Vec<(String, String)> = match &t.job {
            Job::Compare {
                baseline,
                candidate,
                dtype,
                ..
            } => [baseline, candidate]
                .iter()
                .flat_map(|v| programs(v, *dtype))
                .collect(),
            Job::Check { variant, dtype, .. } => programs(variant, *dtype),
            Job::Sweep { points, dtype, .. } => {
                points.iter().flat_map(|v| programs(v, *dtype)).collect()
            }
            Job::Fault {
                config,
                fault,
                dtype,
                ..
            } => programs(
                &VariantSpec::gemm(t.name.replace("::", "_"), config.clone().with_fault(*fault)),
                *dtype,
            ),
            Job::CublasVsCpu { .. } => Vec::new(),
        };
        for (name, program) in found {
            if seen.contains(&program) {
                continue;
            }
            seen.push(program.clone());
            trials.push(Trial::ignorable_test(format!("compile::{name}"), move || {
                if !crate::probe::nvrtc_available() {
                    return Ok(Completion::ignored_with(
                        "libnvrtc.so.13 not found: pip install nvidia-cuda-nvrtc==13.0.88 and put its lib folder on LD_LIBRARY_PATH",
                    ));
                }
                let compiled = crate::compile::compile(&name, &program).map_err(|e| Failed::from(e.to_string()))?;
                check_resources(&compiled.report).map_err(Failed::from)?;
                Ok(Completion::Completed)
            }));
        }
    }
    trials
}

/// A kernel's ptxas report is clean: no spills, no stack, no warning about wgmma serialization or setmaxnreg.
pub fn check_resources(report: &crate::compile::ResourceReport) -> std::result::Result<(), String> {
    if report.spills() > 0 {
        return Err(format!(
            "register spills or stack frame: {:?}",
            report.functions
        ));
    }
    let bad: Vec<&String> = report
        .warnings
        .iter()
        .filter(|w| w.contains("wgmma") || w.contains("setmaxnreg") || w.contains("C75"))
        .collect();
    if !bad.is_empty() {
        return Err(format!("ptxas warnings: {bad:?}"));
    }
    Ok(())
}

/// Prints a finished record the way every trial reports: hypothesis, outcome, flags, variants.
pub fn print_record(r: &TrialRecord) {
    println!("  hypothesis: {}", r.hypothesis);
    if let Some(seed) = &r.seed_finding {
        println!("  seed (B200): {seed}");
    }
    for v in &r.variants {
        let timing = v
            .median_us
            .map(|us| format!(", {us:.1} us, {:.0} TFLOP/s", v.tflops.unwrap_or(0.0)))
            .unwrap_or_default();
        let check = v
            .check
            .as_ref()
            .map(|c| format!(", {}", c.summary()))
            .unwrap_or_default();
        println!("  {}: {}{timing}{check}", v.name, v.label);
    }
    if !r.table.is_empty() {
        println!(
            "  {:<34} {:>11} {:>18} {:>14} {:>14}",
            "point", "median us", "rate", "time vs first", "vs previous"
        );
        for row in &r.table {
            match &row.rejected {
                Some(why) => println!("  {:<34} rejected: {why}", row.point),
                None => println!(
                    "  {:<34} {:>11.1} {:>18} {:>14} {:>14}",
                    row.point,
                    row.median_us.unwrap_or(f64::NAN),
                    row.rate
                        .map(|r| format!("{r:.1} {}", row.rate_unit))
                        .unwrap_or_default(),
                    row.relative_time
                        .map(|t| format!("{t:.3}"))
                        .unwrap_or_default(),
                    row.vs_previous.map(|v| v.word()).unwrap_or("-")
                ),
            }
        }
    }
    println!("  outcome: {}", r.outcome);
    for f in &r.flags {
        println!("  flag: {f}");
    }
}

/// Runs the target's trials and writes the results file; call from the target's `main`.
pub fn main(suite: &str, gpu_trials: Vec<GpuTrial>, cpu_trials: Vec<Trial>) -> ExitCode {
    if let Some(code) = isolate::child_entry() {
        return code;
    }
    let mut args = Arguments::from_args();
    // GPU trials must not overlap: one at a time, whatever the machine's core count.
    args.test_threads = Some(1);
    let available: Arc<std::result::Result<(), String>> =
        Arc::new(if gpu_trials.is_empty() || args.list {
            Ok(())
        } else {
            device::hopper_available().map(|_| ())
        });
    // The results file is rewritten after every GPU trial, so a run cut short still leaves what it measured.
    let run_file = Arc::new(Mutex::new(RunFile {
        suite: suite.to_string(),
        environment: Environment::capture(),
        trials: Vec::new(),
    }));
    let mut trials = cpu_trials;
    for t in gpu_trials {
        let (available, run_file) = (available.clone(), run_file.clone());
        let name = t.name.clone();
        let deadline = t
            .deadline_s
            .map(std::time::Duration::from_secs_f64)
            .unwrap_or_else(isolate::trial_deadline);
        trials.push(
            Trial::ignorable_test(t.name, move || {
                if let Err(reason) = available.as_ref() {
                    return Ok(Completion::ignored_with(format!(
                        "needs a Hopper GPU: {reason}"
                    )));
                }
                let outcome = isolate::run_in_child(&name, &t.job, deadline);
                let mut r = outcome.record;
                if expects_host_timeout(&t.job) {
                    r.passed = r.outcome.starts_with("timeout:");
                    r.outcome = format!("expected the host deadline to end it: {}", r.outcome);
                }
                let extra: Vec<&str> = outcome
                    .output
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect();
                for line in extra.iter().rev().take(20).rev() {
                    println!("  | {line}");
                }
                print_record(&r);
                let passed = r.passed;
                let outcome_line = r.outcome.clone();
                {
                    let mut file = run_file.lock().unwrap();
                    file.trials.push(r);
                    if let Err(e) = file.write() {
                        eprintln!("could not write the results file: {e}");
                    }
                }
                if passed {
                    Ok(Completion::Completed)
                } else {
                    Err(Failed::from(outcome_line))
                }
            })
            .with_kind("gpu"),
        );
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let file = run_file.lock().unwrap();
    if !file.trials.is_empty() {
        if let Ok(path) = file.path() {
            println!("results written to {}", path.display());
        }
    }
    conclusion.exit_code()
}
