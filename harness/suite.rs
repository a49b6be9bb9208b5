//! The glue between a list of trials and libtest-mimic: GPU trials run one at a time, each in its own child
//! process, and are ignored (with the reason) where there is no Hopper GPU; CPU trials always run. At the end
//! the GPU trials' records are written as one results file.

use crate::device;
use crate::isolate;
use crate::config::GemmConfig;
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
        GpuTrial { name: name.into(), job, deadline_s: None }
    }
    pub fn with_deadline_s(mut self, seconds: f64) -> GpuTrial {
        self.deadline_s = Some(seconds);
        self
    }
}

/// True if a fault trial expects to be stopped by the host's deadline.
fn expects_host_timeout(job: &Job) -> bool {
    matches!(job, Job::Fault { caught: Caught::HostTimeout, .. })
}

/// One CPU trial per distinct kernel variant the GPU trials use: it must compile for sm_90a with NVRTC, without
/// register spills or local memory, and without ptxas warnings about wgmma or setmaxnreg.
pub fn compile_trials(gpu_trials: &[GpuTrial]) -> Vec<Trial> {
    let mut seen: Vec<(GemmConfig, DType)> = Vec::new();
    let mut trials = Vec::new();
    for t in gpu_trials {
        let found: Vec<(String, GemmConfig, DType)> = match &t.job {
            Job::Compare { baseline, candidate, dtype, .. } => [baseline, candidate]
                .into_iter()
                .filter_map(|v| match v {
                    VariantSpec::Gemm { name, config } => Some((name.clone(), config.clone(), *dtype)),
                    VariantSpec::Cublas => None,
                })
                .collect(),
            Job::Check { variant: VariantSpec::Gemm { name, config }, dtype, .. } => vec![(name.clone(), config.clone(), *dtype)],
            Job::Fault { config, fault, dtype, .. } => {
                vec![(t.name.replace("::", "_"), config.clone().with_fault(*fault), *dtype)]
            }
            _ => Vec::new(),
        };
        for (name, config, dtype) in found {
            if seen.contains(&(config.clone(), dtype)) {
                continue;
            }
            seen.push((config.clone(), dtype));
            trials.push(Trial::ignorable_test(format!("compile::{name}::{}", dtype.name()), move || {
                if !crate::probe::nvrtc_available() {
                    return Ok(Completion::ignored_with(
                        "libnvrtc.so.13 not found: pip install nvidia-cuda-nvrtc==13.0.88 and put its lib folder on LD_LIBRARY_PATH",
                    ));
                }
                config.validate().map_err(|e| Failed::from(e.to_string()))?;
                let compiled = crate::compile::compile(&name, &crate::source::gemm_program(&config, dtype))
                    .map_err(|e| Failed::from(e.to_string()))?;
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
        return Err(format!("register spills or stack frame: {:?}", report.functions));
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
        let timing = v.median_us.map(|us| format!(", {us:.1} us, {:.0} TFLOP/s", v.tflops.unwrap_or(0.0))).unwrap_or_default();
        let check = v.check.as_ref().map(|c| format!(", {}", c.summary())).unwrap_or_default();
        println!("  {}: {}{timing}{check}", v.name, v.label);
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
    let available: Arc<std::result::Result<(), String>> = Arc::new(if gpu_trials.is_empty() || args.list {
        Ok(())
    } else {
        device::hopper_available().map(|_| ())
    });
    let records: Arc<Mutex<Vec<TrialRecord>>> = Arc::default();
    let mut trials = cpu_trials;
    for t in gpu_trials {
        let (available, records) = (available.clone(), records.clone());
        let name = t.name.clone();
        let deadline = t.deadline_s.map(std::time::Duration::from_secs_f64).unwrap_or_else(isolate::trial_deadline);
        trials.push(
            Trial::ignorable_test(t.name, move || {
                if let Err(reason) = available.as_ref() {
                    return Ok(Completion::ignored_with(format!("needs a Hopper GPU: {reason}")));
                }
                let outcome = isolate::run_in_child(&name, &t.job, deadline);
                let mut r = outcome.record;
                if expects_host_timeout(&t.job) {
                    r.passed = r.outcome.starts_with("timeout:");
                    r.outcome = format!("expected the host deadline to end it: {}", r.outcome);
                }
                let extra: Vec<&str> = outcome.output.lines().filter(|l| !l.trim().is_empty()).collect();
                for line in extra.iter().rev().take(20).rev() {
                    println!("  | {line}");
                }
                print_record(&r);
                let passed = r.passed;
                let outcome_line = r.outcome.clone();
                records.lock().unwrap().push(r);
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
    let records = std::mem::take(&mut *records.lock().unwrap());
    if !records.is_empty() {
        let file = RunFile { suite: suite.to_string(), environment: Environment::capture(), trials: records };
        match file.write() {
            Ok(path) => println!("results written to {}", path.display()),
            Err(e) => eprintln!("could not write the results file: {e}"),
        }
    }
    conclusion.exit_code()
}
