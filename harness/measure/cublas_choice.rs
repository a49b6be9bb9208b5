//! Which cuBLAS path a problem is compared against: every path cuBLAS offers is timed the way a trial's rounds
//! time it (batches of the rounds' length over the rounds' rotation sets, after a warm-up), in interleaved
//! rounds, and the lowest median wins. The choice is remembered on disk, so every process on the machine
//! compares against the same algorithm.
//!
//! History. Until bda6421 each path was timed once, in a row, possibly on a cold GPU: at 4e3a90c, under ncu, that
//! chose cuBLASLt's algorithm 6 at 63.9 us where cublasGemmEx took 47.9 us (200x8192x8192,
//! results/h200/4e3a90c/h48-one-consumer/). From bda6421 to H50 (5bc64c4) the paths were timed in interleaved rounds
//! but back to back on one operand set, whose 14.7 MB of activations stay in L2: on decode_mlp_down that took
//! cublasGemmEx on some hosts and algorithm 2 on others, and in the rounds (operands from DRAM) cublasGemmEx ran
//! 202 us against algorithm 2's 198-202 us (ablations/HYPOTHESES.md H50).

use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::measure::operands::{rotation_sets, Operands, Seeds, UtilKernels};
use crate::measure::reference::{Cublas, CublasPath};
use crate::measure::stats::{self, Estimate, Verdict};
use crate::measure::timing;
use crate::measure::variant::Variant;
use crate::settings::{Settings, TimingSettings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Set (to anything) in a process that runs under a profiler: its timings are not the GPU's, so it never
/// chooses a cuBLAS path for the machine (`profile` chooses one in a plain child first).
pub const UNDER_PROFILER_ENV: &str = "GEMM_ABLATE_UNDER_PROFILER";

/// Rounds in which every cuBLAS path is timed once, in turn.
const CHOOSER_ROUNDS: usize = 5;

/// The GPU is kept busy this long before the first timing, so that its clock has left idle.
const WARM_UP: Duration = Duration::from_millis(100);

/// The local cache of choices made on this machine (v4: chosen by the paired rule below, keyed by GPU, driver,
/// cuBLAS version, dtype and dimensions).
const CHOICES_FILE: &str = "cublas-paths-v4.json";

/// The committed choices, per GPU, driver and cuBLAS version (pins/cublas-paths.json).
pub const COMMITTED_FILE: &str = "pins/cublas-paths.json";

/// The heuristic's own choice: what cuBLASLt's heuristic ranks first for the shape, which is what a framework's
/// matmul runs.
pub const HEURISTIC: CublasPath = CublasPath::Lt(0);

/// How the reference path of one problem was chosen, kept with the choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathChoice {
    /// GPU|driver|cuBLAS version|dtype|MxNxK.
    pub key: String,
    /// The path every comparison against cuBLAS times.
    pub path: CublasPath,
    /// Median microseconds a launch of each path in the screen (interleaved rounds, the rounds' batches).
    pub screen: Vec<(String, f64)>,
    /// The screen's fastest path against the heuristic's, paired in rounds (candidate over heuristic), where
    /// the screen's fastest is not the heuristic's.
    pub paired: Option<PairedPaths>,
    pub date: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedPaths {
    pub candidate: CublasPath,
    pub ratio: f64,
    pub ci: (f64, f64),
    pub verdict: Verdict,
    pub rounds: usize,
}

impl PathChoice {
    /// One line: which path, and why.
    pub fn describe(&self) -> String {
        match &self.paired {
            None => format!(
                "{}, the heuristic's choice and the screen's fastest",
                path_name(self.path)
            ),
            Some(p) if self.path == p.candidate => format!(
                "{}, faster than the heuristic's {} by the paired rule ({:.4} [{:.4}, {:.4}])",
                path_name(self.path),
                path_name(HEURISTIC),
                p.ratio,
                p.ci.0,
                p.ci.1
            ),
            Some(p) => format!(
                "{}, the heuristic's choice: the screen's fastest, {}, was {} against it ({:.4} [{:.4}, {:.4}]), so the tie goes to the heuristic",
                path_name(self.path),
                path_name(p.candidate),
                p.verdict.word(),
                p.ratio,
                p.ci.0,
                p.ci.1
            ),
        }
    }
}

pub fn path_name(p: CublasPath) -> String {
    match p {
        CublasPath::GemmEx => "cublasGemmEx".into(),
        CublasPath::Lt(i) => format!("cublasLt[algo {i}]"),
    }
}

/// The committed choices file: `pins/cublas-paths.json` in the working directory, else the source tree's.
pub fn committed_file() -> PathBuf {
    crate::measure::committed::path(COMMITTED_FILE)
}

/// The committed file's contents: choices by key.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CommittedPaths {
    pub about: String,
    pub choices: Vec<PathChoice>,
}

impl CommittedPaths {
    pub fn read(file: &Path) -> std::result::Result<CommittedPaths, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let parsed: CommittedPaths =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut keys: Vec<&str> = parsed.choices.iter().map(|c| c.key.as_str()).collect();
        keys.sort();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("{}: two choices for {}", file.display(), w[0]));
        }
        Ok(parsed)
    }
    pub fn get(&self, key: &str) -> Option<&PathChoice> {
        self.choices.iter().find(|c| c.key == key)
    }
}

/// The key of a problem's choice.
pub fn choice_key(gpu: &Gpu, reference: &Cublas) -> String {
    let (shape, dtype) = (reference.shape(), reference.dtype());
    format!(
        "{}|{}|{}|{}|{}x{}x{}",
        gpu.info.name,
        gpu.info.driver_version,
        reference.version(),
        dtype.name(),
        shape.m,
        shape.n,
        shape.k
    )
}

/// The reference path for `reference`'s problem, and a line for the record where it did not come from the
/// committed file (a named event, never silent): the committed choice for this GPU, driver and cuBLAS version;
/// else one made earlier on this machine; else one made now by the rule (`choose`) and remembered on this
/// machine (unless this process runs under a profiler).
pub fn choose_cublas_path(
    gpu: &Gpu,
    util: &UtilKernels,
    reference: &Cublas,
    seeds: &Seeds,
    settings: &Settings,
) -> Result<(CublasPath, Option<String>)> {
    let key = choice_key(gpu, reference);
    let offered = reference.paths();
    if offered.is_empty() {
        // FP8 where cuBLASLt's heuristic returned nothing (H112): there is no cuBLAS to time, and nothing to choose.
        return Err(crate::error::Error::Other(format!(
            "cuBLASLt {} offers no algorithm for {} in {} (its heuristic returned none): no cuBLAS path to time",
            reference.version(),
            reference.shape().name,
            reference.dtype().name()
        )));
    }
    let committed = committed_file();
    let mut event = None;
    match CommittedPaths::read(&committed) {
        Ok(c) => {
            if let Some(choice) = c.get(&key) {
                if offered.contains(&choice.path) {
                    return Ok((choice.path, None));
                }
                event = Some(format!(
                    "the committed cuBLAS path for {key}, {}, is not offered by this cuBLAS",
                    path_name(choice.path)
                ));
            }
        }
        Err(e) => event = Some(format!("no committed cuBLAS paths ({e})")),
    }
    let dir = crate::gpu::compile::cache_dir();
    let _ = std::fs::create_dir_all(&dir);
    // Trials on other GPUs of this host choose at the same time: one chooser at a time, so each shape gets
    // one path for the whole machine.
    let lock = std::fs::File::create(dir.join("cublas-paths.lock"));
    let _held = lock.as_ref().ok().and_then(|f| f.lock().ok());
    let file = dir.join(CHOICES_FILE);
    let mut known: BTreeMap<String, PathChoice> = read_json_or_default(&file);
    let lead = event
        .map(|e| format!("{e}; "))
        .unwrap_or_else(|| format!("{key} is not in {}; ", committed.display()));
    if let Some(p) = known.get(&key).filter(|p| offered.contains(&p.path)) {
        return Ok((
            p.path,
            Some(format!(
                "{lead}cuBLAS path chosen earlier on this machine: {}",
                p.describe()
            )),
        ));
    }
    let choice = choose(gpu, util, reference, seeds, settings, &key)?;
    let line = format!("{lead}cuBLAS path chosen now: {}", choice.describe());
    if std::env::var_os(UNDER_PROFILER_ENV).is_none() {
        known.insert(key, choice.clone());
        write_json_atomically(&file, &known)?;
    }
    Ok((choice.path, Some(line)))
}

/// The rule: a screen times every path in interleaved rounds; where its fastest is not the heuristic's choice,
/// the two are compared in paired rounds on fresh operands under the suite's sequential rule, and the screen's
/// fastest is taken only if it is faster beyond the band with confidence. Anything else (no change,
/// inconclusive) is a tie, and a tie goes to the heuristic: a choice that two machines would make alike.
pub fn choose(
    gpu: &Gpu,
    util: &UtilKernels,
    reference: &Cublas,
    seeds: &Seeds,
    settings: &Settings,
    key: &str,
) -> Result<PathChoice> {
    let (shape, dtype) = (reference.shape().clone(), reference.dtype());
    let sets = rotation_sets(&shape, gpu.info.l2_bytes, dtype);
    let ops = Operands::new(gpu, util, &shape, dtype, sets, seeds.next())?;
    let cublas = Cublas::new(gpu, &ops)?;
    let (times, _) = time_paths_as_rounds_do(gpu, &cublas, sets, &settings.timing)?;
    let screen: Vec<(String, f64)> = times
        .iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(p, t)| (format!("{p:?}"), stats::median(t)))
        .collect();
    let fastest = fastest_by_median(&times).unwrap_or(HEURISTIC);
    let offered = cublas.paths();
    drop(cublas);
    drop(ops);
    let date = crate::when::utc_now();
    if fastest == HEURISTIC || !offered.contains(&HEURISTIC) {
        return Ok(PathChoice {
            key: key.into(),
            path: fastest,
            screen,
            paired: None,
            date,
        });
    }
    let e = paired_paths(
        gpu, util, &shape, dtype, seeds, settings, HEURISTIC, fastest,
    )?;
    let path = if e.verdict == Verdict::Faster {
        fastest
    } else {
        HEURISTIC
    };
    Ok(PathChoice {
        key: key.into(),
        path,
        screen,
        paired: Some(PairedPaths {
            candidate: fastest,
            ratio: e.ratio,
            ci: e.ci,
            verdict: e.verdict,
            rounds: e.rounds,
        }),
        date,
    })
}

/// Chooses afresh, by the rule, for each problem (`gemm-ablate cublas-paths`): what a committed file is made from.
pub fn choose_afresh(
    problems: &[(crate::kernel::problem::Shape, crate::kernel::problem::DType)],
    settings: &Settings,
    mut each: impl FnMut(&PathChoice),
) -> Result<Vec<PathChoice>> {
    let gpu = Gpu::open()?;
    let seeds = Seeds::new(settings.seed);
    let mut out = Vec::new();
    for (shape, dtype) in problems {
        let util = UtilKernels::new(&gpu, *dtype)?;
        let ops = Operands::new(&gpu, &util, shape, *dtype, 1, seeds.next())?;
        let cublas = Cublas::new(&gpu, &ops)?;
        let key = choice_key(&gpu, &cublas);
        let choice = choose(&gpu, &util, &cublas, &seeds, settings, &key)?;
        each(&choice);
        out.push(choice);
    }
    Ok(out)
}

/// `candidate` against `baseline`, both cuBLAS paths, in the suite's rounds: fresh operands every round, paired
/// batches, the sequential rule.
#[allow(clippy::too_many_arguments)]
fn paired_paths(
    gpu: &Gpu,
    util: &UtilKernels,
    shape: &crate::kernel::problem::Shape,
    dtype: crate::kernel::problem::DType,
    seeds: &Seeds,
    settings: &Settings,
    baseline: CublasPath,
    candidate: CublasPath,
) -> Result<Estimate> {
    let sets = rotation_sets(shape, gpu.info.l2_bytes, dtype);
    let mut rule = stats::Sequential::new(settings.stats);
    let mut counted: Vec<Vec<f64>> = Vec::new();
    let mut run = 0;
    loop {
        let ops = Operands::new(gpu, util, shape, dtype, sets, seeds.next())?;
        let cublas = Cublas::new(gpu, &ops)?;
        let (a, b) = (
            OnPath {
                cublas: &cublas,
                path: baseline,
            },
            OnPath {
                cublas: &cublas,
                path: candidate,
            },
        );
        if run == 0 {
            timing::warm_up(gpu, [&a, &b], sets, settings.timing.warmup_ms)?;
        }
        let where_ = timing::RoundOperands {
            seed: ops.seed,
            addresses: ops.addresses(),
            sets,
            chunks: Vec::new(),
            code_padding: 0,
        };
        let round = timing::round(
            gpu,
            &a,
            &b,
            where_,
            run,
            settings.stats.pairs_per_round,
            &settings.timing,
        )?;
        run += 1;
        counted.push(round.log_ratios);
        if let Some(e) = rule.after_round(&counted, run) {
            return Ok(e);
        }
    }
}

/// One cuBLAS path as a `Variant`, so that it is timed by the rounds' own batch code.
struct OnPath<'a> {
    cublas: &'a Cublas<'a>,
    path: CublasPath,
}

impl Variant for OnPath<'_> {
    fn label(&self) -> String {
        format!("{:?}", self.path)
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.cublas.launch_on_path(gpu, self.path, set)
    }
}

/// A path's times, in microseconds a launch.
type PathTimes = Vec<(CublasPath, Vec<f64>)>;

/// Times every path that runs here in `CHOOSER_ROUNDS` rounds, each path one batch of the rounds' length a
/// round over the `sets` rotation sets, in an order that reverses every other round: each path's times on the GPU,
/// and the host's enqueue times, in microseconds a launch.
fn time_paths_as_rounds_do(
    gpu: &Gpu,
    cublas: &Cublas,
    sets: usize,
    settings: &TimingSettings,
) -> Result<(PathTimes, PathTimes)> {
    let mut next_set = 0;
    let warm_until = Instant::now() + WARM_UP;
    // The warm-up runs the first path (cublasGemmEx, or for FP8 cuBLASLt's first algorithm).
    let first = OnPath {
        cublas,
        path: cublas
            .paths()
            .first()
            .copied()
            .unwrap_or(CublasPath::GemmEx),
    };
    while Instant::now() < warm_until {
        timing::batch(gpu, &first, 3, sets, &mut next_set)?;
    }
    // Launches a batch for each path that runs here (the heuristic may offer one that cannot).
    let mut runnable = Vec::new();
    for path in cublas.paths() {
        let v = OnPath { cublas, path };
        if let Ok(launches) =
            timing::launches_for(gpu, &v, sets, &mut next_set, settings.target_batch_ms)
        {
            runnable.push((v, launches));
        }
    }
    let mut times: PathTimes = runnable.iter().map(|(v, _)| (v.path, Vec::new())).collect();
    let mut host_times = times.clone();
    for round in 0..CHOOSER_ROUNDS {
        for i in interleaved_order(runnable.len(), round) {
            let (v, launches) = &runnable[i];
            let t = timing::batch_timed(gpu, v, *launches, sets, &mut next_set)?;
            times[i].1.push(t.gpu_ms * 1e3 / f64::from(*launches));
            host_times[i].1.push(t.host_ms * 1e3 / f64::from(*launches));
        }
    }
    Ok((times, host_times))
}

/// The order in which `n` paths are timed in round `round`: forward in even rounds, backward in odd ones, so
/// that no path always follows the same one.
fn interleaved_order(n: usize, round: usize) -> Vec<usize> {
    if round.is_multiple_of(2) {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

/// The path whose median time is lowest (the first of equals).
fn fastest_by_median(times: &[(CublasPath, Vec<f64>)]) -> Option<CublasPath> {
    times
        .iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(p, t)| (*p, stats::median(t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(p, _)| p)
}

/// What `file` holds, or the empty value where it is missing or unreadable (a cache: it is rebuilt).
fn read_json_or_default<T: serde::de::DeserializeOwned + Default>(file: &Path) -> T {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

/// Writes `value` to `file` through a temporary file and a rename, so that a reader never sees half of it.
fn write_json_atomically(file: &Path, value: &impl serde::Serialize) -> Result<()> {
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    let _ = std::fs::write(&tmp, serde_json::to_string_pretty(value)?)
        .and_then(|_| std::fs::rename(&tmp, file));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cublas_path_with_the_lowest_median_wins_not_the_lowest_single_time() {
        // GemmEx timed slow once (a cold clock), fastest in the other rounds: its median wins.
        let times = vec![
            (CublasPath::GemmEx, vec![64.0, 48.0, 48.5, 47.9, 48.2]),
            (CublasPath::Lt(6), vec![63.9, 63.5, 47.0, 64.2, 63.8]),
            (CublasPath::Lt(0), vec![]),
        ];
        assert_eq!(fastest_by_median(&times), Some(CublasPath::GemmEx));
        assert_eq!(fastest_by_median(&[]), None);
    }

    #[test]
    fn every_path_is_timed_once_a_round_and_the_order_reverses_every_other_round() {
        assert_eq!(interleaved_order(3, 0), vec![0, 1, 2]);
        assert_eq!(interleaved_order(3, 1), vec![2, 1, 0]);
        assert_eq!(interleaved_order(3, 4), vec![0, 1, 2]);
        assert!(interleaved_order(0, 1).is_empty());
    }
}
