//! Each GPU trial runs in a child process of the test binary, with a host-side deadline: a kernel that hangs,
//! traps or leaves a sticky CUDA error takes down only its own process, and the run goes on.

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
/// Set in a child: the parent's CUDA ordinal of the one device the child sees (as its device 0).
pub const DEVICE_ENV: &str = "GEMM_ABLATE_CHILD_DEVICE";

/// If this process is a child, runs its job, writes the record and returns the exit code; else None.
pub fn child_entry() -> Option<std::process::ExitCode> {
    let job_json = std::env::var(JOB_ENV).ok()?;
    let name = std::env::var(NAME_ENV).unwrap_or_default();
    let mut record = match serde_json::from_str::<Job>(&job_json) {
        Ok(job) => crate::trial::run::run(&name, &job),
        Err(e) => TrialRecord::new(
            &name,
            &Job::CublasVsCpu {
                dtype: crate::DType::F16,
            },
            Observed::Error(format!("the child could not read its job: {e}")),
        ),
    };
    record.gpu = crate::gpu::device::query(0)
        .ok()
        .map(|info| crate::gpu::device::GpuSeat {
            index: std::env::var(DEVICE_ENV)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            name: info.name,
            pci_bus_id: info.pci_bus_id,
        });
    if let Ok(path) = std::env::var(RECORD_ENV) {
        // A record that cannot be written is said, and the exit status says it too: the parent then reports the
        // child's own words instead of a silent death.
        if let Err(e) = std::fs::write(&path, serde_json::to_string(&record).unwrap_or_default()) {
            eprintln!("the child could not write its record to {path}: {e}");
            return Some(std::process::ExitCode::FAILURE);
        }
    }
    Some(std::process::ExitCode::SUCCESS)
}

/// Where a child writes the record of trial `name`: one file per process and name, its length fixed. The name
/// itself cannot be the file name: a `compare` of two written-out specs makes names past the 255-byte limit of a
/// file name (the record was then lost, at 13a7135).
fn record_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "gemm-ablate-{}-{}.json",
        std::process::id(),
        name_key(name)
    ))
}

/// A short key for a name, fixed in length, for file names the name itself cannot be: the first 8 bytes of its
/// SHA-256 in hex.
pub fn name_key(name: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(name.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What came back from a child.
pub struct ChildOutcome {
    pub record: TrialRecord,
    /// The child's stdout and stderr, for the trial's output.
    pub output: String,
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
    let record = std::fs::read_to_string(&record_path)
        .ok()
        .and_then(|s| serde_json::from_str::<TrialRecord>(&s).ok());
    let _ = std::fs::remove_file(&record_path);
    match (ended, record) {
        (Ended::Exited(_), Some(record)) => ChildOutcome { record, output },
        (Ended::Killed, _) => failed(
            Observed::HostTimeout(format!(
                "the trial ran past its {:.0} s deadline and its process was killed",
                deadline.as_secs_f64()
            )),
            output,
        ),
        (Ended::WaitFailed(e), _) => failed(
            Observed::Error(format!("waiting on the trial's process failed: {e}")),
            output,
        ),
        (Ended::Exited(status), None) => {
            let tail: String = output
                .lines()
                .rev()
                .take(6)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            failed(
                Observed::Error(format!(
                    "the trial's process died ({status}) without a record:\n{tail}"
                )),
                output,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::record_path;

    #[test]
    fn record_file_names_stay_short_and_distinct_for_long_trial_names() {
        let spec = "rung10:cluster=1,consumers=2,wg_m=64,bn=208,epilogue=direct,stmatrix=0,swap_ab=1,split_n=1,evict_first=1,pdl=1,stages=6";
        let long = format!("compare::{spec},swap_store=pairs::{spec}::208x8192x8192");
        assert!(
            long.len() > 255,
            "the case that lost records: {} bytes",
            long.len()
        );
        let path = record_path(&long);
        let file = path.file_name().unwrap().to_str().unwrap();
        assert!(file.len() < 64, "{file}");
        assert_ne!(record_path(&long), record_path(&format!("{long}x")));
        assert_eq!(record_path(&long), record_path(&long));
        // A file at that path can be written (the temp dir takes it).
        std::fs::write(&path, "{}").unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}
