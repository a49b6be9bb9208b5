//! Each GPU trial runs in a child process of the test binary, with a host-side deadline: a kernel that hangs,
//! traps or leaves a sticky CUDA error takes down only its own process, and the run goes on.

use crate::trial::child::{
    died_without_record, killed_at, parent_device_index, record_path, take_record, write_record,
    SERVE_ENV,
};
pub use crate::trial::child::{name_key, ChildOutcome, DEVICE_ENV};
use crate::trial::job::{Job, Observed, TrialRecord};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in a child: the JSON job to run.
pub const JOB_ENV: &str = "GEMM_ABLATE_CHILD_JOB";
/// Set in a child: the trial's name.
pub const NAME_ENV: &str = "GEMM_ABLATE_CHILD_NAME";
/// Set in a child: where to write the record.
pub const RECORD_ENV: &str = "GEMM_ABLATE_CHILD_RECORD";
/// If this process is a child, runs its job (or, a kept worker, its requests), writes the record and returns the
/// exit code; else None.
pub fn child_entry() -> Option<std::process::ExitCode> {
    if std::env::var_os(SERVE_ENV).is_some() {
        return Some(crate::trial::pool::serve());
    }
    let job_json = std::env::var(JOB_ENV).ok()?;
    let name = std::env::var(NAME_ENV).unwrap_or_default();
    let mut record = match serde_json::from_str::<Job>(&job_json) {
        Ok(job) => crate::trial::run::run(&name, &job),
        Err(e) => unreadable_job(&name, &e.to_string()),
    };
    if record.gpu.is_none() {
        // The GPU did not open (the record says why); what the driver says of it, where it says anything.
        record.gpu = crate::gpu::device::query(0)
            .ok()
            .map(|info| crate::gpu::device::GpuSeat {
                index: parent_device_index(),
                name: info.name,
                pci_bus_id: info.pci_bus_id,
            });
    }
    if let Ok(path) = std::env::var(RECORD_ENV) {
        // A record that cannot be written is said, and the exit status says it too: the parent then reports the
        // child's own words instead of a silent death.
        if let Err(e) = write_record(std::path::Path::new(&path), &record) {
            eprintln!("{e}");
            return Some(std::process::ExitCode::FAILURE);
        }
    }
    Some(std::process::ExitCode::SUCCESS)
}

/// The record of a child that could not read the job it was given.
fn unreadable_job(name: &str, why: &str) -> TrialRecord {
    TrialRecord::new(
        name,
        &Job::CublasVsCpu {
            dtype: crate::DType::F16,
        },
        Observed::Error(format!("the child could not read its job: {why}")),
    )
}

/// Runs `job` in a child process of the current executable; kills it at the deadline.
pub fn run_in_child(name: &str, job: &Job, deadline: Duration) -> ChildOutcome {
    run_in_child_with_env(name, job, deadline, &[])
}

/// `run_in_child` with extra environment variables for the child (settings for this job only).
pub fn run_in_child_with_env(
    name: &str,
    job: &Job,
    deadline: Duration,
    env: &[(&str, &str)],
) -> ChildOutcome {
    let failed = |observed: Observed, output: String| ChildOutcome {
        record: TrialRecord::new(name, job, observed),
        output,
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return failed(
                Observed::Error(format!("cannot find the test executable: {e}")),
                String::new(),
            )
        }
    };
    let record_path = record_path(name);
    let _ = std::fs::remove_file(&record_path);
    let spawned = Command::new(exe)
        .envs(env.iter().copied())
        .env(JOB_ENV, serde_json::to_string(job).unwrap_or_default())
        .env(NAME_ENV, name)
        .env(RECORD_ENV, &record_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return failed(
                Observed::Error(format!("cannot start the child process: {e}")),
                String::new(),
            )
        }
    };
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    enum Ended {
        Exited(std::process::ExitStatus),
        Killed,
        WaitFailed(String),
    }
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ended::Exited(status),
            Ok(None) if start.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Ended::Killed;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                break Ended::WaitFailed(e.to_string());
            }
        }
    };
    let output = format!(
        "{}{}",
        out_thread.join().unwrap_or_default(),
        err_thread.join().unwrap_or_default()
    );
    let record = take_record(&record_path);
    match (ended, record) {
        (Ended::Exited(_), Some(record)) => ChildOutcome { record, output },
        (Ended::Killed, _) => failed(killed_at(deadline), output),
        (Ended::WaitFailed(e), _) => failed(
            Observed::Error(format!("waiting on the trial's process failed: {e}")),
            output,
        ),
        (Ended::Exited(status), None) => {
            let observed = died_without_record(&status.to_string(), &output);
            failed(observed, output)
        }
    }
}
