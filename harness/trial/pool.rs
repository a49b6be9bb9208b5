//! Worker processes kept between comparisons (GEMM_ABLATE_WORKERS=kept, ablations/HYPOTHESES.md H119).
//!
//! Why. At 1d1f9c2 a worker process took about 1.4 s, of which about 0.5 s went to starting it, opening the GPU
//! (the CUDA context, cuBLAS, NVML) and ending it; 893 workers made that 7 of the whole suite's 22 minutes. A kept
//! process pays it once for the run.
//!
//! What stays as it was. The k-th worker of every comparison runs in a kept process of worker number k (one set per
//! GPU), so a comparison's workers are still as many distinct processes. A kept process never serves one job
//! twice: a repeat of a trial, or the next comparison of a calibration pair, gets a process that has not run that
//! job (another kept one of that number, or a new one).
//! One in which anything went wrong (a wrong answer, a hang, an error, a deadline) ends and is replaced, so
//! nothing a broken kernel left behind reaches the next job. Each job starts as in a fresh process: its own
//! settings, seeds, hang watch and allocations, its modules loaded afresh, no batch held before its first.
//!
//! The protocol. A request is one JSON line on the worker's stdin; the worker runs it (trial/run.rs), writes the
//! record whole to the request's path, then writes the request's token as a line of its own on stdout and on
//! stderr, so the parent knows where that job's output ends. A worker whose stdin closes (the run ended) exits.

use crate::gpu::device::Gpu;
use crate::trial::child::{self, ChildOutcome};
use crate::trial::job::{Job, Observed, TrialRecord};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The workers of a comparison that run in kept processes: those past this run in fresh ones.
pub const MOST_KEPT: usize = 8;

/// The most idle kept processes per GPU (each holds a CUDA context). A suite keeps one per worker number; repeats
/// (`GEMM_ABLATE_REPEAT`) keep one per repeat and worker number, up to this.
const MOST_IDLE: usize = 24;

/// How long a worker that said it is done, or was told to end, may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// One job for a kept worker.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    name: String,
    job: Job,
    /// The job's own settings (GEMM_ABLATE_* variables), read before the worker's environment.
    settings: Vec<(String, String)>,
    /// Where the worker writes the record.
    record: PathBuf,
    /// Written alone on a line of stdout and of stderr once the record is written.
    token: String,
}

/// A line a worker wrote, or the end of one of its streams.
enum Line {
    Out(String),
    Err(String),
    OutClosed,
    ErrClosed,
}

/// A kept worker process, idle between jobs.
struct Kept {
    slot: usize,
    /// What the process was started with beyond the parent's environment (the GPU it sees).
    env: Vec<(String, String)>,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    /// The jobs it has served (as JSON): it serves none of them again.
    served: HashSet<String>,
}

/// Kept workers, idle between jobs, and how a new one starts.
pub struct Pool {
    idle: Mutex<Vec<Kept>>,
    /// A new worker's command, before the run's own variables and pipes are added.
    command: fn() -> std::io::Result<Command>,
}

fn this_executable() -> std::io::Result<Command> {
    std::env::current_exe().map(Command::new)
}

/// Whether a job that observed `observed` leaves its process fit for the next job: only a job that ended as
/// planned does; a wrong answer may have written anywhere, and an error may be a sticky CUDA error.
pub fn leaves_process_clean(observed: &Observed) -> bool {
    matches!(
        observed,
        Observed::Compared(_) | Observed::Swept | Observed::Sustained | Observed::Correct
    )
}

/// Variables, name and value.
type Vars = Vec<(String, String)>;

/// Splits a child's variables into the process's own (the GPU it sees, fixed for its life) and the job's settings
/// (GEMM_ABLATE_* variables, which may differ from one job to the next).
fn split_env(env: &[(&str, &str)]) -> (Vars, Vars) {
    let (settings, process): (Vec<_>, Vec<_>) = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .partition(|(k, _)| k.starts_with("GEMM_ABLATE_") && k != child::DEVICE_ENV);
    (process, settings)
}

/// The run's kept workers: this executable, serving (child_entry sends it to `serve`).
pub fn shared() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool::new(this_executable))
}

impl Pool {
    pub fn new(command: fn() -> std::io::Result<Command>) -> Pool {
        Pool {
            idle: Mutex::new(Vec::new()),
            command,
        }
    }

    /// Runs `job` as worker `slot` (1-based, at most `MOST_KEPT`) in a kept process of that number.
    pub fn run(
        &self,
        slot: usize,
        name: &str,
        job: &Job,
        deadline: Duration,
        env: &[(&str, &str)],
    ) -> ChildOutcome {
        let (process_env, settings) = split_env(env);
        let key = serde_json::to_string(job).unwrap_or_default();
        let failed = |why: String| ChildOutcome {
            record: TrialRecord::new(name, job, Observed::Error(why)),
            output: String::new(),
        };
        // One file per request: two pools of one process (tests) may run a name at once.
        let token = token();
        let record = child::record_path(&format!("{name}\n{token}"));
        let _ = std::fs::remove_file(&record);
        let request = Request {
            name: name.to_string(),
            job: job.clone(),
            settings,
            record: record.clone(),
            token,
        };
        let line = match serde_json::to_string(&request) {
            Ok(l) => l,
            Err(e) => return failed(format!("cannot write the request for a kept worker: {e}")),
        };
        // An idle worker may have died since its last job (its stdin then refuses the request): one new try.
        let mut tries = 0;
        let mut worker = loop {
            tries += 1;
            let mut worker = match self.take(slot, &process_env, &key) {
                Some(w) => w,
                None => match self.spawn(slot, &process_env) {
                    Ok(w) => w,
                    Err(e) => return failed(e),
                },
            };
            let sent = writeln!(worker.stdin, "{line}").and_then(|_| worker.stdin.flush());
            match sent {
                Ok(()) => break worker,
                Err(e) if tries > 1 => {
                    end(worker);
                    return failed(format!("a new kept worker refused its request: {e}"));
                }
                Err(_) => end(worker),
            }
        };
        let (ended, output) = wait_for(&worker, &request.token, deadline);
        match ended {
            Ended::Done => match child::take_record(&record) {
                Some(r) => {
                    if leaves_process_clean(&r.observed) {
                        worker.served.insert(key);
                        self.give_back(worker);
                    } else {
                        end(worker);
                    }
                    ChildOutcome { record: r, output }
                }
                None => {
                    end(worker);
                    ChildOutcome {
                        record: TrialRecord::new(
                            name,
                            job,
                            Observed::Error(format!(
                                "the kept worker said it was done but left no record at {}",
                                record.display()
                            )),
                        ),
                        output,
                    }
                }
            },
            Ended::Deadline => {
                let _ = worker.child.kill();
                let _ = worker.child.wait();
                let _ = child::take_record(&record);
                ChildOutcome {
                    record: TrialRecord::new(name, job, child::killed_at(deadline)),
                    output,
                }
            }
            Ended::Died => {
                let status = exit_status(&mut worker.child);
                // A record written before the process died still says what it saw.
                let record = child::take_record(&record).unwrap_or_else(|| {
                    TrialRecord::new(name, job, child::died_without_record(&status, &output))
                });
                ChildOutcome { record, output }
            }
        }
    }

    /// The longest-idle worker of `slot` started with `env` that has not served `key`; None when there is none (a
    /// new one is to start: the longest-idle worker with `env` ends first where `MOST_IDLE` are kept).
    fn take(&self, slot: usize, env: &[(String, String)], key: &str) -> Option<Kept> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = idle
            .iter()
            .position(|k| k.slot == slot && k.env == env && !k.served.contains(key))
        {
            return Some(idle.remove(at));
        }
        let same_gpu: Vec<usize> = (0..idle.len()).filter(|&i| idle[i].env == env).collect();
        if same_gpu.len() >= MOST_IDLE {
            let oldest = idle.remove(same_gpu[0]);
            drop(idle);
            end(oldest);
        }
        None
    }

    fn give_back(&self, worker: Kept) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(worker);
    }

    /// Starts a kept worker: this executable with `env` and the serve flag, its streams read line by line on threads.
    fn spawn(&self, slot: usize, env: &[(String, String)]) -> Result<Kept, String> {
        let mut child = (self.command)()
            .map_err(|e| format!("cannot find the executable of a kept worker: {e}"))?
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(child::SERVE_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a kept worker process: {e}"))?;
        let (tx, lines) = mpsc::channel();
        let stdin = child.stdin.take().expect("a piped stdin");
        let stdout = child.stdout.take().expect("a piped stdout");
        let stderr = child.stderr.take().expect("a piped stderr");
        let out_tx = tx.clone();
        std::thread::spawn(move || {
            read_lines(stdout, |l| out_tx.send(l), Line::Out, Line::OutClosed)
        });
        std::thread::spawn(move || read_lines(stderr, |l| tx.send(l), Line::Err, Line::ErrClosed));
        Ok(Kept {
            slot,
            env: env.to_vec(),
            child,
            stdin,
            lines,
            served: HashSet::new(),
        })
    }

    /// Ends every idle worker of this pool and waits for them, so that no context of the run outlives it (a suite's
    /// next binary starts on a GPU these processes have left).
    pub fn end_all(&self) {
        let workers: Vec<Kept> =
            std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for w in workers {
            end(w);
        }
    }
}

/// How the wait for a job ended.
enum Ended {
    /// Both streams carried the token: the record is written.
    Done,
    Deadline,
    /// A stream closed before its token: the process died.
    Died,
}

/// Collects the worker's lines until its token has come on both streams, the deadline passes, or it dies; returns
/// how it ended and what it wrote (stdout, then stderr).
fn wait_for(worker: &Kept, token: &str, deadline: Duration) -> (Ended, String) {
    let started = Instant::now();
    let (mut out, mut err) = (String::new(), String::new());
    let (mut out_done, mut err_done) = (false, false);
    let ended = loop {
        if out_done && err_done {
            break Ended::Done;
        }
        let left = deadline.saturating_sub(started.elapsed());
        match worker.lines.recv_timeout(left) {
            // The token ends its line; whatever a job wrote before it without a line break stays its output.
            Ok(Line::Out(l)) => out_done |= take_line(&mut out, &l, token),
            Ok(Line::Err(l)) => err_done |= take_line(&mut err, &l, token),
            Ok(Line::OutClosed) if !out_done => break Ended::Died,
            Ok(Line::ErrClosed) if !err_done => break Ended::Died,
            Ok(Line::OutClosed | Line::ErrClosed) => {}
            Err(RecvTimeoutError::Timeout) => break Ended::Deadline,
            Err(RecvTimeoutError::Disconnected) => break Ended::Died,
        }
    };
    (ended, format!("{out}{err}"))
}

/// Adds a line of a job's output to `text`, less the token where it ends in it; whether it did.
fn take_line(text: &mut String, line: &str, token: &str) -> bool {
    let (own, done) = match line.strip_suffix(token) {
        Some(before) => (before, true),
        None => (line, false),
    };
    if !own.is_empty() || !done {
        text.push_str(own);
        text.push('\n');
    }
    done
}

/// A token no line of a job's own output will be: a process-wide counter with the parent's pid and the time.
fn token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "\u{1e}gemm-ablate kept worker done {}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Sends each line of `stream` (bytes that are not UTF-8 replaced), then its end; stops when nobody listens.
fn read_lines<E>(
    stream: impl Read,
    mut send: impl FnMut(Line) -> Result<(), E>,
    line: fn(String) -> Line,
    closed: Line,
) {
    let mut reader = BufReader::new(stream);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim_end_matches(['\n', '\r']).to_string();
                if send(line(text)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = send(closed);
}

/// Ends a worker: its stdin closes, which ends its loop; killed if it has not exited after the grace period.
fn end(worker: Kept) {
    let Kept {
        mut child, stdin, ..
    } = worker;
    drop(stdin);
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if started.elapsed() < EXIT_GRACE => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
        }
    }
}

/// How a dead worker ended, in words.
fn exit_status(child: &mut Child) -> String {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) if started.elapsed() < EXIT_GRACE => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return "its streams closed; killed after it did not exit".into();
            }
            Err(e) => return format!("cannot be waited on: {e}"),
        }
    }
}

/// A kept worker's loop (the child side): reads requests until its stdin closes, opening the GPU at the first and
/// keeping it; after a job that did not leave the process clean, it exits.
pub fn serve() -> std::process::ExitCode {
    let mut gpu: Option<Gpu> = None;
    serve_requests(|request, started| {
        if gpu.is_none() {
            let opened = crate::settings::Settings::from_env_with(&request.settings)
                .and_then(|_| Gpu::open());
            match opened {
                Ok(g) => gpu = Some(g),
                Err(e) => {
                    return TrialRecord::new(&request.name, &request.job, Observed::from_error(e))
                }
            }
        }
        match gpu.as_ref() {
            Some(open) => crate::trial::run::run_on_kept(
                open,
                &request.settings,
                &request.name,
                &request.job,
                started,
            ),
            None => TrialRecord::new(
                &request.name,
                &request.job,
                Observed::Error("the kept worker has no GPU".into()),
            ),
        }
    })
}

/// The loop of `serve`, with what runs a request (and when it came) as `run`.
fn serve_requests(mut run: impl FnMut(&Request, Instant) -> TrialRecord) -> std::process::ExitCode {
    use std::process::ExitCode;
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        // The job's time counts from its request: the first job's includes opening the GPU.
        let started = Instant::now();
        let request: Request = match serde_json::from_str(line.trim_end()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("a kept worker could not read its request: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut record = run(&request, started);
        record.duration_s = started.elapsed().as_secs_f64();
        if !finish(&request, &record) || !leaves_process_clean(&record.observed) {
            return ExitCode::SUCCESS;
        }
    }
}

/// Writes the record, then the token on both streams; false when the record could not be written (said on
/// stderr: the parent then reports these words).
fn finish(request: &Request, record: &TrialRecord) -> bool {
    let written = child::write_record(&request.record, record);
    if let Err(e) = &written {
        eprintln!("{e}");
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", request.token).and_then(|_| out.flush());
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", request.token).and_then(|_| err.flush());
    written.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_gpu_is_its_process_own_and_settings_are_the_jobs() {
        let (process, settings) = split_env(&[
            ("CUDA_VISIBLE_DEVICES", "3"),
            (child::DEVICE_ENV, "3"),
            ("GEMM_ABLATE_LOOKS", "1"),
            ("GEMM_ABLATE_ROUNDS_PER_LOOK", "4"),
        ]);
        assert_eq!(
            process,
            [
                ("CUDA_VISIBLE_DEVICES".to_string(), "3".to_string()),
                (child::DEVICE_ENV.to_string(), "3".to_string())
            ]
        );
        assert_eq!(
            settings,
            [
                ("GEMM_ABLATE_LOOKS".to_string(), "1".to_string()),
                ("GEMM_ABLATE_ROUNDS_PER_LOOK".to_string(), "4".to_string())
            ]
        );
    }

    #[test]
    fn only_a_job_that_ended_as_planned_keeps_its_process() {
        assert!(leaves_process_clean(&Observed::Correct));
        assert!(leaves_process_clean(&Observed::Swept));
        assert!(!leaves_process_clean(&Observed::Error("x".into())));
        assert!(!leaves_process_clean(&Observed::Hang("x".into())));
        assert!(!leaves_process_clean(&Observed::HostTimeout("x".into())));
        assert!(!leaves_process_clean(&Observed::Wrong {
            caught: crate::trial::expectation::Caught::OutOfBounds,
            message: "x".into()
        }));
    }

    /// Set in the fake worker's process (this test binary run again, `fake_worker` alone).
    const FAKE: &str = "GEMM_ABLATE_TEST_FAKE_WORKER";

    /// A kept worker without a GPU: this test binary serving requests, each answered by what its name asks
    /// ("clean", "chatty", "wrong", "die", "hang"), with the process id in the record's flags.
    #[test]
    #[ignore = "the fake kept worker: started by the pool tests, never alone"]
    fn fake_worker() {
        if std::env::var_os(FAKE).is_none() {
            return;
        }
        let code = serve_requests(|request, _| {
            let observed = match request.name.as_str() {
                "clean" => Observed::Correct,
                "chatty" => {
                    println!("a line of the job's own");
                    eprintln!("a line on stderr");
                    Observed::Correct
                }
                "wrong" => Observed::Error("a sticky CUDA error, say".into()),
                "die" => std::process::exit(3),
                _ => {
                    std::thread::sleep(Duration::from_secs(30));
                    Observed::Correct
                }
            };
            let mut record = TrialRecord::new(&request.name, &request.job, observed);
            record.flags = vec![format!("pid {}", std::process::id())];
            record
        });
        std::process::exit(if code == std::process::ExitCode::SUCCESS {
            0
        } else {
            1
        });
    }

    fn fake_command() -> std::io::Result<Command> {
        let mut c = Command::new(std::env::current_exe()?);
        c.args([
            "--exact",
            "trial::pool::tests::fake_worker",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FAKE, "1");
        Ok(c)
    }

    /// Distinct jobs (their JSON differs in the seconds).
    fn job(k: u32) -> Job {
        Job::Sustain {
            variants: Vec::new(),
            shape: crate::kernel::problem::shape("small"),
            dtype: crate::DType::F16,
            seconds: f64::from(k),
            passes: 1,
        }
    }

    const GPU0: [(&str, &str); 2] = [("CUDA_VISIBLE_DEVICES", "0"), (child::DEVICE_ENV, "0")];

    fn pid_of(outcome: &ChildOutcome) -> String {
        assert!(
            leaves_process_clean(&outcome.record.observed),
            "{:?}\n{}",
            outcome.record.observed,
            outcome.output
        );
        outcome.record.flags[0].clone()
    }

    #[test]
    fn a_kept_worker_serves_one_slot_and_never_one_job_twice() {
        let pool = Pool::new(fake_command);
        let long = Duration::from_secs(60);
        let first = pid_of(&pool.run(1, "clean", &job(1), long, &GPU0));
        assert_eq!(pid_of(&pool.run(1, "clean", &job(2), long, &GPU0)), first);
        let second = pid_of(&pool.run(2, "clean", &job(1), long, &GPU0));
        assert_ne!(second, first, "worker 2 of a comparison is another process");
        // The same job again (a repeat) gets a process that has not run it; both are kept, and the next job goes to
        // the one idle longest.
        let again = pid_of(&pool.run(1, "clean", &job(1), long, &GPU0));
        assert_ne!(again, first);
        assert_eq!(pid_of(&pool.run(1, "clean", &job(5), long, &GPU0)), first);
        assert_eq!(pid_of(&pool.run(1, "clean", &job(6), long, &GPU0)), again);
        // Another GPU, another process.
        let other_gpu = [("CUDA_VISIBLE_DEVICES", "1"), (child::DEVICE_ENV, "1")];
        assert_ne!(
            pid_of(&pool.run(1, "clean", &job(3), long, &other_gpu)),
            again
        );
        // The job's settings do not make another process (the one idle longest takes it).
        let with_settings = [GPU0[0], GPU0[1], ("GEMM_ABLATE_LOOKS", "1")];
        assert_eq!(
            pid_of(&pool.run(1, "clean", &job(4), long, &with_settings)),
            first
        );
        pool.end_all();
    }

    #[test]
    fn repeats_of_one_job_each_get_their_own_process_and_the_idle_ones_stay_bounded() {
        let pool = Pool::new(fake_command);
        let long = Duration::from_secs(60);
        let pids: HashSet<String> = (0..MOST_IDLE + 3)
            .map(|_| pid_of(&pool.run(1, "clean", &job(1), long, &GPU0)))
            .collect();
        assert_eq!(pids.len(), MOST_IDLE + 3);
        assert_eq!(pool.idle.lock().unwrap().len(), MOST_IDLE);
        pool.end_all();
        assert!(pool.idle.lock().unwrap().is_empty());
    }

    #[test]
    fn a_jobs_output_comes_back_without_the_token() {
        let pool = Pool::new(fake_command);
        let out = pool.run(1, "chatty", &job(1), Duration::from_secs(60), &GPU0);
        assert!(
            out.output.contains("a line of the job's own\n"),
            "{}",
            out.output
        );
        assert!(out.output.contains("a line on stderr\n"), "{}", out.output);
        assert!(!out.output.contains('\u{1e}'), "{}", out.output);
        let next = pool.run(1, "clean", &job(2), Duration::from_secs(60), &GPU0);
        assert!(
            !next.output.contains("a line of the job's own"),
            "{}",
            next.output
        );
        pool.end_all();
    }

    #[test]
    fn a_worker_that_went_wrong_died_or_hung_is_replaced() {
        let pool = Pool::new(fake_command);
        let long = Duration::from_secs(60);
        let first = pid_of(&pool.run(1, "clean", &job(1), long, &GPU0));
        let wrong = pool.run(1, "wrong", &job(2), long, &GPU0);
        assert!(matches!(wrong.record.observed, Observed::Error(ref e) if e.contains("sticky")));
        let after_wrong = pid_of(&pool.run(1, "clean", &job(3), long, &GPU0));
        assert_ne!(after_wrong, first);

        let died = pool.run(1, "die", &job(4), long, &GPU0);
        match &died.record.observed {
            Observed::Error(e) => assert!(e.contains("died") && e.contains('3'), "{e}"),
            other => panic!("{other:?}"),
        }
        let after_death = pid_of(&pool.run(1, "clean", &job(5), long, &GPU0));
        assert_ne!(after_death, after_wrong);

        let started = Instant::now();
        let hung = pool.run(1, "hang", &job(6), Duration::from_millis(500), &GPU0);
        assert!(matches!(hung.record.observed, Observed::HostTimeout(_)));
        assert!(started.elapsed() < Duration::from_secs(10));
        let after_hang = pid_of(&pool.run(1, "clean", &job(7), long, &GPU0));
        assert_ne!(after_hang, after_death);
        pool.end_all();
    }

    #[test]
    fn tokens_differ_and_hold_no_line_break() {
        let (a, b) = (token(), token());
        assert_ne!(a, b);
        assert!(!a.contains('\n'));
    }
}
