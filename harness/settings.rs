//! Every `GEMM_ABLATE_*` setting, read once and checked: a value that does not parse, is out of range, or a
//! variable name nobody reads is an error naming the variable, never a silent default.

use crate::error::{Error, Result};
use crate::measure::stats::StatsSettings;
use serde::{Deserialize, Serialize};

/// How batches are timed inside a round.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingSettings {
    /// Aim for batches this long, so event resolution (~0.5 us) and launch gaps do not matter.
    pub target_batch_ms: f64,
    /// Warm-up before the first round: the card must leave idle clocks first.
    pub warmup_ms: f64,
    /// Warm-up before the first round in a kept worker process whose card is already at its working clock
    /// (ablations/HYPOTHESES.md H133): the previous worker's batches ran a few tens of milliseconds before.
    #[serde(default = "TimingSettings::before_kept_warmup")]
    pub kept_warmup_ms: f64,
    /// Warm-up of every round on its fresh operands.
    pub round_warmup_ms: f64,
    /// Batches wait behind a stream hold until the host has enqueued them (gpu/hold.rs, H94). Off by default until a
    /// whole suite has run held: held trials took 10-20% longer at 8743f5d. Records from before it read as unheld.
    #[serde(default)]
    pub hold_batches: bool,
}

impl Default for TimingSettings {
    fn default() -> Self {
        TimingSettings {
            target_batch_ms: 3.0,
            warmup_ms: 300.0,
            kept_warmup_ms: 100.0,
            round_warmup_ms: 40.0,
            hold_batches: false,
        }
    }
}

impl TimingSettings {
    /// Records written before H133 warmed up every worker for `warmup_ms`, 300 ms then.
    fn before_kept_warmup() -> f64 {
        300.0
    }
}

/// What each round draws afresh, beyond its operands' allocation (GEMM_ABLATE_RANDOMIZE; H106): `memory` maps
/// the operands onto physical chunks drawn at random from a pool held by the process, `code` loads a random
/// number of padding modules before the round's kernels, so that their code lands elsewhere. `scheduler` is the
/// opposite, a fixed start: a launch of 9 small blocks before each round, which put the block scheduler's rotation
/// (where a grid under one wave lands, H142) in one state from every state seen (H145); with it, an H100's
/// processes agreed to 0.2% on two pairs that scattered by 7-11% without (H146, H148). Off by default (H149).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Randomize {
    pub memory: bool,
    pub code: bool,
    #[serde(default)]
    pub scheduler: bool,
}

impl Randomize {
    pub fn parse(v: &str) -> Option<Randomize> {
        let mut r = Randomize::default();
        for part in v.split(',').map(str::trim) {
            match part {
                "none" => {}
                "memory" => r.memory = true,
                "code" => r.code = true,
                "scheduler" => r.scheduler = true,
                _ => return None,
            }
        }
        Some(r)
    }
    pub fn name(self) -> String {
        let parts: Vec<&str> = [
            (self.memory, "memory"),
            (self.code, "code"),
            (self.scheduler, "scheduler"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect();
        match parts.is_empty() {
            true => "none".into(),
            false => parts.join(","),
        }
    }
}

/// Which processes a comparison's workers run in (GEMM_ABLATE_WORKERS; H119).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorkerProcesses {
    /// A new process for every worker: start, CUDA context and libraries paid each time (0.5 s of the 1.4 s a
    /// worker took at 1d1f9c2).
    #[default]
    Fresh,
    /// The k-th worker of every comparison runs in the k-th of the run's kept processes, which opened the GPU for
    /// an earlier job; a kept process never serves one job twice and is replaced after anything went wrong in it.
    Kept,
}

impl WorkerProcesses {
    pub fn parse(v: &str) -> Option<WorkerProcesses> {
        match v.trim() {
            "fresh" => Some(WorkerProcesses::Fresh),
            "kept" => Some(WorkerProcesses::Kept),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            WorkerProcesses::Fresh => "fresh",
            WorkerProcesses::Kept => "kept",
        }
    }
}

/// All settings of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub stats: StatsSettings,
    pub timing: TimingSettings,
    /// Pair noise above 3x this is flagged.
    pub noise_floor: f64,
    /// Host deadline of one GPU trial, seconds.
    pub trial_timeout_s: f64,
    /// Each GPU trial runs this many times, each in its own process (run-to-run agreement).
    pub repeat: usize,
    /// A comparison is spread over at most this many worker processes, judged after each (measure/processes.rs).
    #[serde(default = "default_processes")]
    pub processes: usize,
    /// Rounds each worker process runs.
    #[serde(default = "default_rounds_per_process")]
    pub rounds_per_process: usize,
    /// Whether worker processes are new for each worker or kept between comparisons.
    #[serde(default)]
    pub workers: WorkerProcesses,
    /// Draw every random input from this seed (to replay a failed correctness check).
    pub seed: Option<u64>,
    /// Each round allocates its own operands (false only to diagnose what fresh allocations change).
    pub fresh_operands: bool,
    /// What else each round draws afresh (placement of operands and code).
    #[serde(default)]
    pub randomize: Randomize,
    /// A decisive look ends the comparison only once the interval's half-width (log scale) is under this; the
    /// suite sets it for trials that check a pinned ratio, which need precision more than a verdict.
    pub precision: Option<f64>,
    /// Baselines: save this run under a name, compare it with a saved one, fail when a trial got slower.
    pub save_baseline: Option<String>,
    pub baseline: Option<String>,
    pub fail_on_slower: bool,
    /// The GPUs (CUDA ordinals) the trials are spread over, one child process per GPU at a time; None: all.
    pub devices: Option<Vec<usize>>,
    /// Run only the GPU trials of shard i of n (1-based; trial k, in list order, belongs to shard k % n + 1), the
    /// others ignored with that reason: a suite longer than one sitting runs as n runs at the same commit.
    pub shard: Option<(usize, usize)>,
    /// A file of trial names, one a line: only those run (GEMM_ABLATE_ONLY).
    #[serde(default)]
    pub only: Option<String>,
}

fn default_processes() -> usize {
    3
}

fn default_rounds_per_process() -> usize {
    4
}

/// The variables the harness reads, with what they mean (the README's settings table says the same).
pub const KNOWN: [(&str, &str); 32] = [
    (
        "GEMM_ABLATE_BAND",
        "half-width of the no-change band (0.02)",
    ),
    (
        "GEMM_ABLATE_CONFIDENCE",
        "overall confidence for faster/slower (0.95)",
    ),
    (
        "GEMM_ABLATE_EQUIV_CONFIDENCE",
        "overall confidence for no change (0.90)",
    ),
    (
        "GEMM_ABLATE_PROCESSES",
        "a comparison is spread over at most this many worker processes, with a look after each (3); a trial checking a pin runs on to twice as many to reach its precision, and one expecting a verdict while still inconclusive",
    ),
    (
        "GEMM_ABLATE_ROUNDS_PER_PROCESS",
        "rounds each worker process of a comparison runs (4)",
    ),
    (
        "GEMM_ABLATE_WORKERS",
        "fresh: a new process for each worker of a comparison; kept: the k-th worker of every comparison runs in the run's k-th kept process, never twice for one job (fresh)",
    ),
    (
        "GEMM_ABLATE_ROUNDS_PER_LOOK",
        "inside one process: rounds between looks (8; a worker process runs one look of its rounds)",
    ),
    (
        "GEMM_ABLATE_LOOKS",
        "inside one process: planned looks (3; a worker process takes one)",
    ),
    (
        "GEMM_ABLATE_PAIRS_PER_ROUND",
        "pairs of batches per round (6)",
    ),
    ("GEMM_ABLATE_BATCH_MS", "batch length in ms (3)"),
    (
        "GEMM_ABLATE_WARMUP_MS",
        "warm-up before the first round in ms (300)",
    ),
    (
        "GEMM_ABLATE_KEPT_WARMUP_MS",
        "that warm-up in a kept worker process whose card is still at half its top clock or more, in ms (100; H133)",
    ),
    (
        "GEMM_ABLATE_ROUND_WARMUP_MS",
        "warm-up of each round in ms (40)",
    ),
    (
        "GEMM_ABLATE_HOLD_BATCHES",
        "1: each batch waits behind a stream hold until the host has enqueued it (H94) (0)",
    ),
    (
        "GEMM_ABLATE_NOISE_FLOOR",
        "pair noise above 3x this is flagged (0.01)",
    ),
    (
        "GEMM_ABLATE_TRIAL_TIMEOUT_S",
        "host deadline per GPU trial in s (300)",
    ),
    (
        "GEMM_ABLATE_REPEAT",
        "run each GPU trial this many times, each in its own process (1)",
    ),
    (
        "GEMM_ABLATE_SEED",
        "seed of every random input (replays a check)",
    ),
    (
        "GEMM_ABLATE_PRECISION",
        "a decisive look ends the comparison only once the interval's half-width is under this fraction (none)",
    ),
    (
        "GEMM_ABLATE_SAVE_BASELINE",
        "save the run as the baseline of this name (results/baselines/NAME/SUITE.json)",
    ),
    (
        "GEMM_ABLATE_BASELINE",
        "compare the run with the baseline of this name, trial by trial",
    ),
    (
        "GEMM_ABLATE_FAIL_ON_SLOWER",
        "1: the run fails when any trial got slower than the baseline (for CI gating)",
    ),
    (
        "GEMM_ABLATE_FRESH_OPERANDS",
        "0: every round reuses the first round's operands (diagnosis only) (1)",
    ),
    (
        "GEMM_ABLATE_RANDOMIZE",
        "what each round draws afresh besides its allocation: none, or any of memory (physical chunks), code (module placement) and scheduler (a fixed 9-block launch first, H146) joined by commas (none)",
    ),
    (
        "GEMM_ABLATE_DEVICES",
        "GPUs to spread the trials over, one process per GPU: all, or CUDA ordinals such as 0,1 (all)",
    ),
    (
        "GEMM_ABLATE_SHARD",
        "i/n: run only the GPU trials of shard i of n (trial k in list order is in shard k % n + 1) (all)",
    ),
    (
        "GEMM_ABLATE_ONLY",
        "a file of trial names, one a line (# starts a comment): only those run, in one process of the suite, so kept workers serve them all; a name no trial has is an error before anything runs",
    ),
    (
        "GEMM_ABLATE_RESULTS_DIR",
        "where runs are written (results)",
    ),
    (
        "GEMM_ABLATE_CACHE",
        "compiled kernels and cuBLAS path choices",
    ),
    (
        "GEMM_ABLATE_REQUIRE_NVRTC",
        "1: the compile trials fail instead of being ignored without NVRTC",
    ),
    (
        "GEMM_ABLATE_HYPOTHESES",
        "more folders of hypothesis files, colon-separated (docs/external-kernels.md)",
    ),
    (
        "GEMM_ABLATE_FIRST_RUNS",
        "1: also run the GPU trials that wait for their first run on a GPU (today FP8's correctness trials, issue 40: docs/fp8.md); 0: each is ignored with that reason, and the run's last line counts them (0)",
    ),
];

/// Variables the harness sets for its own child processes, and the commit build.rs hands to rustc (cargo also
/// exports it when it runs the tests).
const INTERNAL: [&str; 7] = [
    "GEMM_ABLATE_COMMIT",
    "GEMM_ABLATE_UNDER_PROFILER",
    "GEMM_ABLATE_CHILD_DEVICE",
    "GEMM_ABLATE_CHILD_JOB",
    "GEMM_ABLATE_CHILD_NAME",
    "GEMM_ABLATE_CHILD_RECORD",
    "GEMM_ABLATE_CHILD_SERVE",
];

/// Variables the external kernels' build recipes read (kernels/ext/*/build.sh), never the binary: a user who
/// exports one to build a peer must still be able to run every command in that shell.
const RECIPES: [&str; 3] = [
    "GEMM_ABLATE_CUTE_DSL",
    "GEMM_ABLATE_TRITON_DIR",
    "GEMM_ABLATE_TRITON_OUT",
];

/// The process's `GEMM_ABLATE_*` variables, by name, values as the OS holds them; every other variable is
/// skipped unread (`std::env::vars` panics on one that is not UTF-8, even one of another program).
pub fn own_vars() -> Vec<(String, std::ffi::OsString)> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            k.into_string()
                .ok()
                .filter(|k| k.starts_with("GEMM_ABLATE_"))
                .map(|k| (k, v))
        })
        .collect()
}

fn parse<T: std::str::FromStr>(
    vars: &[(String, String)],
    name: &str,
    default: T,
    valid: impl Fn(&T) -> bool,
    range: &str,
) -> Result<T> {
    match vars.iter().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, v)) => match v.trim().parse::<T>() {
            Ok(x) if valid(&x) => Ok(x),
            _ => Err(Error::Config(format!(
                "setting {name}={v:?} is not valid: it must be {range}"
            ))),
        },
    }
}

/// A setting that is one of some words, read by `word`; `words` says which, in the error.
fn parse_word<T>(
    vars: &[(String, String)],
    name: &str,
    default: T,
    word: fn(&str) -> Option<T>,
    words: &str,
) -> Result<T> {
    match vars.iter().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, v)) => word(v).ok_or_else(|| {
            Error::Config(format!(
                "setting {name}={v:?} is not valid: it must be {words}"
            ))
        }),
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            stats: StatsSettings::default(),
            timing: TimingSettings::default(),
            noise_floor: 0.01,
            trial_timeout_s: 300.0,
            repeat: 1,
            processes: default_processes(),
            rounds_per_process: default_rounds_per_process(),
            workers: WorkerProcesses::default(),
            seed: None,
            fresh_operands: true,
            randomize: Randomize::default(),
            precision: None,
            save_baseline: None,
            baseline: None,
            fail_on_slower: false,
            devices: None,
            shard: None,
            only: None,
        }
    }
}

impl Settings {
    /// Reads the process environment. Other programs' variables may hold any bytes and are never read; one of
    /// ours that is not UTF-8 is an error naming it.
    pub fn from_env() -> Result<Settings> {
        Settings::from_env_with(&[])
    }

    /// `from_env` with `first` read before the environment (a kept worker's settings for one request).
    pub fn from_env_with(first: &[(String, String)]) -> Result<Settings> {
        let mut vars = first.to_vec();
        for (k, v) in own_vars() {
            match v.into_string() {
                Ok(v) => vars.push((k, v)),
                Err(raw) => {
                    return Err(Error::Config(format!(
                        "setting {k}={raw:?} is not valid: it is not UTF-8 text"
                    )))
                }
            }
        }
        Settings::from_vars(&vars)
    }

    /// Reads the given variables (the testable core of `from_env`).
    pub fn from_vars(vars: &[(String, String)]) -> Result<Settings> {
        for (k, _) in vars {
            if k.starts_with("GEMM_ABLATE_")
                && !KNOWN.iter().any(|(n, _)| n == k)
                && !INTERNAL.contains(&k.as_str())
                && !RECIPES.contains(&k.as_str())
            {
                return Err(Error::Config(format!(
                    "unknown setting {k}: the settings are {}",
                    KNOWN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        let d = Settings::default();
        let (ds, dt) = (d.stats, d.timing);
        let frac = |x: &f64| *x > 0.0 && *x < 0.5;
        let conf = |x: &f64| *x >= 0.5 && *x < 1.0;
        let pos = |x: &f64| x.is_finite() && *x > 0.0;
        let nonneg = |x: &f64| x.is_finite() && *x >= 0.0;
        let stats = StatsSettings {
            band: parse(
                vars,
                "GEMM_ABLATE_BAND",
                ds.band,
                frac,
                "a fraction in (0, 0.5)",
            )?,
            confidence: parse(
                vars,
                "GEMM_ABLATE_CONFIDENCE",
                ds.confidence,
                conf,
                "in [0.5, 1)",
            )?,
            equivalence_confidence: parse(
                vars,
                "GEMM_ABLATE_EQUIV_CONFIDENCE",
                ds.equivalence_confidence,
                conf,
                "in [0.5, 1)",
            )?,
            rounds_per_look: parse(
                vars,
                "GEMM_ABLATE_ROUNDS_PER_LOOK",
                ds.rounds_per_look,
                |x| *x >= 2,
                "an integer of at least 2",
            )?,
            looks: parse(
                vars,
                "GEMM_ABLATE_LOOKS",
                ds.looks,
                |x| (1..=10).contains(x),
                "1 to 10",
            )?,
            pairs_per_round: parse(
                vars,
                "GEMM_ABLATE_PAIRS_PER_ROUND",
                ds.pairs_per_round,
                |x| *x >= 2 && x % 2 == 0,
                "an even integer of at least 2 (A B / B A cycles)",
            )?,
            spending: ds.spending,
        };
        let timing = TimingSettings {
            target_batch_ms: parse(
                vars,
                "GEMM_ABLATE_BATCH_MS",
                dt.target_batch_ms,
                pos,
                "a positive number",
            )?,
            warmup_ms: parse(
                vars,
                "GEMM_ABLATE_WARMUP_MS",
                dt.warmup_ms,
                nonneg,
                "a number >= 0",
            )?,
            kept_warmup_ms: parse(
                vars,
                "GEMM_ABLATE_KEPT_WARMUP_MS",
                dt.kept_warmup_ms,
                nonneg,
                "a number >= 0",
            )?,
            round_warmup_ms: parse(
                vars,
                "GEMM_ABLATE_ROUND_WARMUP_MS",
                dt.round_warmup_ms,
                nonneg,
                "a number >= 0",
            )?,
            hold_batches: parse(vars, "GEMM_ABLATE_HOLD_BATCHES", 0u8, |x| *x <= 1, "0 or 1")? == 1,
        };
        let seed = match vars.iter().find(|(k, _)| k == "GEMM_ABLATE_SEED") {
            None => None,
            Some((_, v)) => Some(v.trim().parse::<u64>().map_err(|_| {
                Error::Config(format!(
                    "setting GEMM_ABLATE_SEED={v:?} is not valid: it must be an unsigned 64-bit integer"
                ))
            })?),
        };
        for flag in ["GEMM_ABLATE_REQUIRE_NVRTC", "GEMM_ABLATE_FIRST_RUNS"] {
            if let Some((_, v)) = vars.iter().find(|(k, _)| k == flag) {
                if !matches!(v.as_str(), "0" | "1") {
                    return Err(Error::Config(format!(
                        "setting {flag}={v:?} is not valid: it must be 0 or 1"
                    )));
                }
            }
        }
        Ok(Settings {
            stats,
            timing,
            noise_floor: parse(
                vars,
                "GEMM_ABLATE_NOISE_FLOOR",
                d.noise_floor,
                pos,
                "a positive number",
            )?,
            trial_timeout_s: parse(
                vars,
                "GEMM_ABLATE_TRIAL_TIMEOUT_S",
                d.trial_timeout_s,
                |x| pos(x) && *x <= 86_400.0,
                "a positive number of seconds, at most 86400 (a day)",
            )?,
            repeat: parse(
                vars,
                "GEMM_ABLATE_REPEAT",
                d.repeat,
                |x| (1..=100).contains(x),
                "1 to 100",
            )?,
            processes: parse(
                vars,
                "GEMM_ABLATE_PROCESSES",
                d.processes,
                |x| (1..=16).contains(x),
                "1 to 16",
            )?,
            rounds_per_process: parse(
                vars,
                "GEMM_ABLATE_ROUNDS_PER_PROCESS",
                d.rounds_per_process,
                |x| (2..=64).contains(x),
                "2 to 64",
            )?,
            workers: parse_word(
                vars,
                "GEMM_ABLATE_WORKERS",
                d.workers,
                WorkerProcesses::parse,
                "fresh or kept",
            )?,
            seed,
            fresh_operands: parse(
                vars,
                "GEMM_ABLATE_FRESH_OPERANDS",
                1u8,
                |x| *x <= 1,
                "0 or 1",
            )? == 1,
            randomize: parse_word(
                vars,
                "GEMM_ABLATE_RANDOMIZE",
                d.randomize,
                Randomize::parse,
                "none, or any of memory, code and scheduler joined by commas",
            )?,
            precision: match vars.iter().any(|(k, _)| k == "GEMM_ABLATE_PRECISION") {
                false => None,
                true => Some(parse(
                    vars,
                    "GEMM_ABLATE_PRECISION",
                    0.0,
                    frac,
                    "a fraction in (0, 0.5)",
                )?),
            },
            save_baseline: baseline_name(vars, "GEMM_ABLATE_SAVE_BASELINE")?,
            baseline: baseline_name(vars, "GEMM_ABLATE_BASELINE")?,
            fail_on_slower: parse(
                vars,
                "GEMM_ABLATE_FAIL_ON_SLOWER",
                0u8,
                |x| *x <= 1,
                "0 or 1",
            )? == 1,
            devices: devices(vars)?,
            shard: shard(vars)?,
            only: match vars.iter().find(|(k, _)| k == "GEMM_ABLATE_ONLY") {
                Some((_, v)) if v.trim().is_empty() => {
                    return Err(Error::Config(
                        "setting GEMM_ABLATE_ONLY=\"\" is not valid: it must name a file of trial names".into(),
                    ))
                }
                found => found.map(|(_, v)| v.trim().to_string()),
            },
        })
    }

    /// The settings, or the process exits with the message (for binaries, before any trial runs).
    pub fn or_exit() -> Settings {
        Settings::from_env().unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })
    }
}

/// GEMM_ABLATE_DEVICES: `all`, or distinct CUDA ordinals separated by commas.
fn devices(vars: &[(String, String)]) -> Result<Option<Vec<usize>>> {
    let Some((_, v)) = vars.iter().find(|(k, _)| k == "GEMM_ABLATE_DEVICES") else {
        return Ok(None);
    };
    if v.trim() == "all" {
        return Ok(None);
    }
    let bad = || {
        Error::Config(format!(
            "setting GEMM_ABLATE_DEVICES={v:?} is not valid: it must be `all` or distinct CUDA ordinals separated by commas, such as 0,1"
        ))
    };
    let mut list = Vec::new();
    for part in v.split(',') {
        let i: usize = part.trim().parse().map_err(|_| bad())?;
        if list.contains(&i) {
            return Err(bad());
        }
        list.push(i);
    }
    Ok(Some(list))
}

/// GEMM_ABLATE_SHARD: `i/n` with 1 <= i <= n (also how a results file's recorded settings are read back).
pub(crate) fn shard(vars: &[(String, String)]) -> Result<Option<(usize, usize)>> {
    let Some((_, v)) = vars.iter().find(|(k, _)| k == "GEMM_ABLATE_SHARD") else {
        return Ok(None);
    };
    let parsed = v
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((i, n)) if i >= 1 && i <= n => Ok(Some((i, n))),
        _ => Err(Error::Config(format!(
            "setting GEMM_ABLATE_SHARD={v:?} is not valid: it must be i/n with 1 <= i <= n, such as 1/2"
        ))),
    }
}

/// A baseline name is a plain word: it becomes a folder name.
pub fn check_baseline_name(name: &str) -> std::result::Result<(), String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.')
    {
        Ok(())
    } else {
        Err(format!(
            "baseline name {name:?}: use letters, digits, '-', '_' and '.' (it names a folder)"
        ))
    }
}

fn baseline_name(vars: &[(String, String)], name: &str) -> Result<Option<String>> {
    match vars.iter().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, v)) => check_baseline_name(v)
            .map(|_| Some(v.clone()))
            .map_err(|e| Error::Config(format!("setting {name}: {e}"))),
    }
}

/// True when the GPU trials waiting for their first run are asked for (GEMM_ABLATE_FIRST_RUNS=1).
pub fn first_runs_included() -> bool {
    std::env::var("GEMM_ABLATE_FIRST_RUNS").is_ok_and(|v| v == "1")
}

/// True when CI asked for the NVRTC compile trials to fail rather than be ignored.
pub fn nvrtc_required() -> bool {
    std::env::var("GEMM_ABLATE_REQUIRE_NVRTC").is_ok_and(|v| v == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn randomize_takes_any_of_its_words_and_names_them_back() {
        let r = Randomize::parse("memory, scheduler").unwrap();
        assert!(r.memory && r.scheduler && !r.code);
        assert_eq!(r.name(), "memory,scheduler");
        assert_eq!(Randomize::parse("none").unwrap().name(), "none");
        assert_eq!(Randomize::parse("scheduler").unwrap().name(), "scheduler");
        assert!(Randomize::parse("memory,placement").is_none());
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_RANDOMIZE", "scheduler")])).unwrap();
        assert!(s.randomize.scheduler);
        assert_eq!(Settings::default().randomize, Randomize::default());
    }

    #[test]
    fn worker_processes_and_a_trial_list_are_read_and_bad_values_named() {
        let s = Settings::from_vars(&vars(&[
            ("GEMM_ABLATE_WORKERS", "kept"),
            ("GEMM_ABLATE_ONLY", " list.txt "),
        ]))
        .unwrap();
        assert_eq!(s.workers, WorkerProcesses::Kept);
        assert_eq!(s.only.as_deref(), Some("list.txt"));
        assert_eq!(Settings::default().workers, WorkerProcesses::Fresh);
        for (name, value, words) in [
            ("GEMM_ABLATE_WORKERS", "pooled", "fresh or kept"),
            ("GEMM_ABLATE_ONLY", " ", "a file of trial names"),
            ("GEMM_ABLATE_RANDOMIZE", "all", "joined by commas"),
        ] {
            let e = Settings::from_vars(&vars(&[(name, value)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(name) && e.contains(words), "{e}");
        }
    }

    /// H133: the short first warm-up of a kept worker is its own setting, never longer than the full one, and a
    /// record written before it reads as having warmed up for the full 300 ms.
    #[test]
    fn a_kept_workers_warm_up_is_read_and_old_records_read_as_the_full_one() {
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_KEPT_WARMUP_MS", "300")])).unwrap();
        assert_eq!(s.timing.kept_warmup_ms, 300.0);
        assert_eq!(Settings::default().timing.kept_warmup_ms, 100.0);
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_KEPT_WARMUP_MS", "-1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("GEMM_ABLATE_KEPT_WARMUP_MS"), "{e}");
        let old: TimingSettings = serde_json::from_str(
            r#"{"target_batch_ms": 3.0, "warmup_ms": 300.0, "round_warmup_ms": 40.0}"#,
        )
        .unwrap();
        assert_eq!(old.kept_warmup_ms, 300.0);
    }

    #[test]
    fn defaults_without_variables() {
        assert_eq!(Settings::from_vars(&[]).unwrap(), Settings::default());
    }

    #[test]
    fn a_value_that_does_not_parse_names_the_variable() {
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_BAND", "two percent")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("GEMM_ABLATE_BAND") && e.contains("two percent"),
            "{e}"
        );
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_PAIRS_PER_ROUND", "5")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("even"), "{e}");
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_CONFIDENCE", "95")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("GEMM_ABLATE_CONFIDENCE"), "{e}");
    }

    #[test]
    fn an_unknown_variable_is_an_error() {
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_MIN_PAIRS", "12")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown setting GEMM_ABLATE_MIN_PAIRS"), "{e}");
    }

    /// Every `GEMM_ABLATE_*` variable a script of the repository sets or reads is one the binary takes, sets for
    /// itself, or leaves to a build recipe: none makes every command stop with "unknown setting".
    #[test]
    fn every_variable_a_script_uses_is_a_setting_or_a_recipe_s() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut scripts = vec![root.join(".ci/run")];
        for folder in ["tools", "kernels/ext"] {
            let under = crate::test_files::files_under(&root.join(folder));
            scripts.extend(
                under
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|e| e == "sh" || e == "py")),
            );
        }
        let mut unknown = std::collections::BTreeSet::new();
        let mut seen = 0;
        for script in &scripts {
            let text = std::fs::read_to_string(script).unwrap();
            for (at, _) in text.match_indices("GEMM_ABLATE_") {
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                seen += 1;
                let known = KNOWN.iter().any(|(n, _)| *n == name)
                    || INTERNAL.contains(&name.as_str())
                    || RECIPES.contains(&name.as_str());
                if !known {
                    unknown.insert(format!("{}: {name}", script.display()));
                }
            }
        }
        assert!(seen > 50, "only {seen} uses found: the scan is broken");
        assert!(unknown.is_empty(), "{unknown:#?}");
        assert!(Settings::from_vars(&vars(&[("GEMM_ABLATE_TRITON_DIR", "/tmp/t")])).is_ok());
    }

    #[test]
    fn baseline_names_are_checked() {
        let s = Settings::from_vars(&vars(&[
            ("GEMM_ABLATE_BASELINE", "main"),
            ("GEMM_ABLATE_FAIL_ON_SLOWER", "1"),
        ]))
        .unwrap();
        assert_eq!(s.baseline.as_deref(), Some("main"));
        assert!(s.fail_on_slower);
        let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_SAVE_BASELINE", "../x")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("GEMM_ABLATE_SAVE_BASELINE"), "{e}");
    }

    #[test]
    fn devices_are_all_or_distinct_ordinals() {
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_DEVICES", "1, 0")])).unwrap();
        assert_eq!(s.devices, Some(vec![1, 0]));
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_SHARD", "2/3")])).unwrap();
        assert_eq!(s.shard, Some((2, 3)));
        for bad in ["0/2", "3/2", "1", "a/b"] {
            let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_SHARD", bad)])).unwrap_err();
            assert!(e.to_string().contains("1 <= i <= n"), "{bad}: {e}");
        }
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_DEVICES", "all")])).unwrap();
        assert_eq!(s.devices, None);
        for bad in ["0,0", "gpu1", "", "0,,1"] {
            let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_DEVICES", bad)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains("GEMM_ABLATE_DEVICES"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_readme_lists_every_setting() {
        let readme = include_str!("../docs/reference.md");
        for (name, _) in KNOWN {
            let suffix = format!("`{}`", name.trim_start_matches("GEMM_ABLATE"));
            assert!(
                readme.contains(&format!("`{name}`")) || readme.contains(&suffix),
                "the settings table in docs/reference.md does not name {name}"
            );
        }
    }

    #[test]
    fn the_build_commit_is_not_a_setting() {
        assert!(Settings::from_vars(&vars(&[("GEMM_ABLATE_COMMIT", "abc")])).is_ok());
    }

    #[test]
    fn other_programs_variables_that_are_not_utf8_are_not_read() {
        use std::os::unix::ffi::OsStrExt;
        // Another program's variable holding bytes that are not UTF-8: std::env::vars() panics on it.
        std::env::set_var(
            "GEMMABLATE_TEST_OTHER_PROGRAM",
            std::ffi::OsStr::from_bytes(b"\xff\xfe"),
        );
        assert!(Settings::from_env().is_ok());
        assert!(own_vars()
            .iter()
            .all(|(k, _)| k.starts_with("GEMM_ABLATE_")));
        let env = crate::report::results::Environment::capture();
        assert!(env
            .settings
            .iter()
            .all(|(k, _)| k.starts_with("GEMM_ABLATE_")));
    }

    #[test]
    fn a_deadline_past_a_day_is_refused_before_anything_runs() {
        for bad in ["1e300", "inf", "86401", "0", "-5"] {
            let e = Settings::from_vars(&vars(&[("GEMM_ABLATE_TRIAL_TIMEOUT_S", bad)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains("GEMM_ABLATE_TRIAL_TIMEOUT_S"), "{bad}: {e}");
        }
        let s = Settings::from_vars(&vars(&[("GEMM_ABLATE_TRIAL_TIMEOUT_S", "86400")])).unwrap();
        assert_eq!(s.trial_timeout_s, 86_400.0);
    }

    #[test]
    fn worker_processes_and_their_rounds_are_bounded() {
        let s = Settings::from_vars(&vars(&[
            ("GEMM_ABLATE_PROCESSES", "5"),
            ("GEMM_ABLATE_ROUNDS_PER_PROCESS", "6"),
        ]))
        .unwrap();
        assert_eq!((s.processes, s.rounds_per_process), (5, 6));
        for (k, bad) in [
            ("GEMM_ABLATE_PROCESSES", "0"),
            ("GEMM_ABLATE_PROCESSES", "17"),
            ("GEMM_ABLATE_ROUNDS_PER_PROCESS", "1"),
            ("GEMM_ABLATE_ROUNDS_PER_PROCESS", "65"),
        ] {
            let e = Settings::from_vars(&vars(&[(k, bad)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(k), "{k}={bad}: {e}");
        }
    }

    #[test]
    fn values_are_read() {
        let s = Settings::from_vars(&vars(&[
            ("GEMM_ABLATE_BAND", "0.05"),
            ("GEMM_ABLATE_LOOKS", "4"),
            ("GEMM_ABLATE_SEED", "42"),
            ("GEMM_ABLATE_REPEAT", "3"),
        ]))
        .unwrap();
        assert_eq!(s.stats.band, 0.05);
        assert_eq!(s.stats.looks, 4);
        assert!(s.fresh_operands);
        assert_eq!(s.seed, Some(42));
        assert_eq!(s.repeat, 3);
    }
}
