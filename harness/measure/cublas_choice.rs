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
use crate::measure::stats;
use crate::measure::timing;
use crate::measure::variant::Variant;
use crate::settings::TimingSettings;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Set (to anything) in a process that runs under a profiler: its timings are not the GPU's, so it never
/// chooses a cuBLAS path for the machine (`profile` chooses one in a plain child first).
pub const UNDER_PROFILER_ENV: &str = "GEMM_ABLATE_UNDER_PROFILER";

/// Rounds in which every cuBLAS path is timed once, in turn.
const CHOOSER_ROUNDS: usize = 5;

/// The GPU is kept busy this long before the first timing, so that its clock has left idle.
const WARM_UP: Duration = Duration::from_millis(100);

/// Cache files; v3 since H50 (choices made on one hot operand set are not read back). The host's enqueue time a
/// launch beside each path's time since H94 (a path whose host call is slower than its kernel was timed at the
/// host's pace before batches were held).
const CHOICES_FILE: &str = "cublas-paths-v3.json";
const TIMES_FILE: &str = "cublas-path-times-v3.json";
const HOST_TIMES_FILE: &str = "cublas-path-host-times-v3.json";

/// The cuBLAS path for `reference`'s problem: the one remembered for this GPU, shape, dtype and cuBLAS version,
/// or the fastest in the rounds' conditions on operands of its own (then remembered, unless this process runs
/// under a profiler).
pub fn choose_cublas_path(
    gpu: &Gpu,
    util: &UtilKernels,
    reference: &Cublas,
    seeds: &Seeds,
    timing_settings: &TimingSettings,
) -> Result<CublasPath> {
    let (shape, dtype) = (reference.shape(), reference.dtype());
    let key = format!(
        "{}|{}|{}x{}x{}|{}|{}",
        gpu.info.name,
        shape.name,
        shape.m,
        shape.n,
        shape.k,
        dtype.name(),
        reference.version()
    );
    let dir = crate::gpu::compile::cache_dir();
    let _ = std::fs::create_dir_all(&dir);
    // Trials on other GPUs of this host choose at the same time: one chooser at a time, so each shape gets
    // one path for the whole machine.
    let lock = std::fs::File::create(dir.join("cublas-paths.lock"));
    let _held = lock.as_ref().ok().and_then(|f| f.lock().ok());
    let file = dir.join(CHOICES_FILE);
    let mut known: BTreeMap<String, CublasPath> = read_json_or_default(&file);
    if let Some(p) = known.get(&key) {
        if reference.paths().contains(p) {
            return Ok(*p);
        }
    }
    let sets = rotation_sets(shape, gpu.info.l2_bytes);
    let ops = Operands::new(gpu, util, shape, dtype, sets, seeds.next())?;
    let cublas = Cublas::new(gpu, &ops)?;
    let (times, host_times) = time_paths_as_rounds_do(gpu, &cublas, sets, timing_settings)?;
    let best = fastest_by_median(&times).unwrap_or(CublasPath::GemmEx);
    if std::env::var_os(UNDER_PROFILER_ENV).is_some() {
        return Ok(best); // good enough for this process; not a choice for the machine
    }
    known.insert(key.clone(), best);
    write_json_atomically(&file, &known)?;
    // What each path measured, beside the choice, so that a choice can be checked afterwards.
    let times_file = dir.join(TIMES_FILE);
    let mut all: BTreeMap<String, Vec<(String, f64)>> = read_json_or_default(&times_file);
    let medians = |times: &[(CublasPath, Vec<f64>)]| {
        times
            .iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(p, t)| (format!("{p:?}"), stats::median(t)))
            .collect::<Vec<_>>()
    };
    all.insert(key.clone(), medians(&times));
    write_json_atomically(&times_file, &all)?;
    let host_file = dir.join(HOST_TIMES_FILE);
    let mut all: BTreeMap<String, Vec<(String, f64)>> = read_json_or_default(&host_file);
    all.insert(key, medians(&host_times));
    write_json_atomically(&host_file, &all)?;
    Ok(best)
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
    let gemm_ex = OnPath {
        cublas,
        path: CublasPath::GemmEx,
    };
    while Instant::now() < warm_until {
        timing::batch(gpu, &gemm_ex, 3, sets, &mut next_set)?;
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
