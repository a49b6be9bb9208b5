//! Event-timed batches, interleaved so that neighbouring batches share the card's clock state: one *round* is a
//! short warm-up on the round's own operands, a fresh launch count per batch, then pairs of batches in
//! alternating order (A B, B A, ...; odd rounds start with B), the SM clock read after every pair. Operand sets
//! are rotated against L2 reuse. How rounds are combined into a verdict is stats.rs's business.

use crate::error::{CudaContext as _, Result};
use crate::gpu::device::Gpu;
use crate::measure::stats::{self, Estimate};
use crate::measure::variant::Variant;
use crate::settings::TimingSettings;
use cudarc::driver::sys::CUevent_flags;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One round of paired batches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub index: usize,
    pub baseline_first: bool,
    /// Launches per batch: baseline, candidate (chosen afresh each round from a trial batch).
    pub launches: [u32; 2],
    /// ln(candidate / baseline) per pair.
    pub log_ratios: Vec<f64>,
    pub baseline_us: Vec<f64>,
    pub candidate_us: Vec<f64>,
    /// SM clock read right after each pair.
    pub sm_clock_mhz: Vec<Option<u32>>,
    /// The seed the round's operands were drawn from, and where A and B of each rotation set landed.
    pub seed: u64,
    pub operand_addresses: Vec<u64>,
    /// Set aside: a pair of this round read the SM clock under 80% of the comparison's median (a throttle
    /// event, a different machine state); the round is kept in the record but not in the estimate.
    #[serde(default)]
    pub set_aside: bool,
    /// The clock each kernel measured itself at (`clock_probe=1`), baseline and candidate, read after each pair:
    /// empty where neither probes. NVML's reading misses what tensor-core load does to the clock (H75).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probed_mhz: Vec<[Option<f64>; 2]>,
    /// GEMM_ABLATE_RANDOMIZE=memory: the pool chunks the round's buffers were mapped onto, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<u32>,
    /// GEMM_ABLATE_RANDOMIZE=code: padding modules loaded before the round's kernels.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code_padding: u32,
    /// The SM each CTA of the round's last launch ran on, baseline and candidate (`place_probe=1`; H142): empty
    /// where neither records it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<Vec<u32>>,
    /// The worker process (0-based) the round ran in, where the comparison was spread over processes.
    #[serde(default, skip_serializing_if = "is_first")]
    pub process: usize,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

fn is_first(x: &usize) -> bool {
    *x == 0
}

/// A round is set aside when one of its pairs read the SM clock under this fraction of the comparison's median.
pub const THROTTLED_FRACTION: f64 = 0.8;

/// Marks the rounds measured in a throttled state, against the median clock of every pair so far; returns how
/// many are set aside. Without clock readings nothing is set aside.
pub fn set_aside_throttled(rounds: &mut [Round]) -> usize {
    let clocks: Vec<f64> = rounds
        .iter()
        .flat_map(|r| r.sm_clock_mhz.iter().flatten().map(|&c| f64::from(c)))
        .collect();
    if clocks.is_empty() {
        return 0;
    }
    let median = stats::median(&clocks);
    for r in rounds.iter_mut() {
        r.set_aside = r
            .sm_clock_mhz
            .iter()
            .flatten()
            .any(|&c| f64::from(c) < THROTTLED_FRACTION * median);
    }
    rounds.iter().filter(|r| r.set_aside).count()
}

/// A finished comparison: every round, the estimate and the noise guards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    pub rounds: Vec<Round>,
    pub estimate: Estimate,
    pub baseline_median_us: f64,
    pub candidate_median_us: f64,
    pub sm_clock_median_mhz: Option<f64>,
    pub sm_clock_min_mhz: Option<u32>,
    /// Median of the probed clocks (`clock_probe=1`), baseline and candidate, over the estimate's rounds: none
    /// where neither kernel probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probed_median_mhz: Option<[Option<f64>; 2]>,
    /// Pairs whose clock read under 90% of the comparison's median.
    pub low_clock_pairs: usize,
    /// Rounds set aside as throttled (under 80% of the median clock) and replaced.
    #[serde(default)]
    pub set_aside_rounds: usize,
    /// What the driver gave as throttle reasons at the end.
    pub throttle_reasons: Vec<String>,
    /// Wall time of the whole comparison (allocations, checks and warm-ups included).
    pub elapsed_s: f64,
    pub rotation_sets: usize,
}

impl Comparison {
    pub fn pairs(&self) -> usize {
        self.rounds.iter().map(|r| r.log_ratios.len()).sum()
    }

    /// Gathers rounds and their estimate into the record, with medians and clock guards.
    pub fn new(
        gpu: &Gpu,
        names: [String; 2],
        rounds: Vec<Round>,
        estimate: Estimate,
        started: Instant,
        rotation_sets: usize,
    ) -> Comparison {
        let throttle_reasons = gpu
            .throttle_reasons()
            .map(|m| {
                crate::gpu::nvml::describe_throttle(m)
                    .into_iter()
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        Comparison::gathered(
            names,
            rounds,
            estimate,
            throttle_reasons,
            started.elapsed().as_secs_f64(),
            rotation_sets,
        )
    }

    /// The comparisons of the worker processes a comparison was spread over, as one: every process's rounds
    /// (each marked with its process), medians and clock guards over all of them, the throttle reasons any
    /// process saw, the time they took together, and the process-level `estimate`. None for no part.
    pub fn across_processes(parts: Vec<Comparison>, estimate: Estimate) -> Option<Comparison> {
        let first = parts.first()?;
        let names = [first.baseline.clone(), first.candidate.clone()];
        let rotation_sets = first.rotation_sets;
        let elapsed: f64 = parts.iter().map(|c| c.elapsed_s).sum();
        let mut reasons: Vec<String> = Vec::new();
        let mut rounds = Vec::new();
        for (process, part) in parts.into_iter().enumerate() {
            for reason in part.throttle_reasons {
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            }
            rounds.extend(part.rounds.into_iter().map(|r| Round { process, ..r }));
        }
        Some(Comparison::gathered(
            names,
            rounds,
            estimate,
            reasons,
            elapsed,
            rotation_sets,
        ))
    }

    fn gathered(
        names: [String; 2],
        rounds: Vec<Round>,
        estimate: Estimate,
        throttle_reasons: Vec<String>,
        elapsed_s: f64,
        rotation_sets: usize,
    ) -> Comparison {
        let clocks: Vec<f64> = rounds
            .iter()
            .flat_map(|r| r.sm_clock_mhz.iter().filter_map(|c| c.map(f64::from)))
            .collect();
        let clock_median = (!clocks.is_empty()).then(|| stats::median(&clocks));
        let low_clock_pairs = clock_median
            .map(|m| clocks.iter().filter(|&&c| c < 0.9 * m).count())
            .unwrap_or(0);
        let all = |f: fn(&Round) -> &Vec<f64>| -> f64 {
            stats::median(
                &rounds
                    .iter()
                    .flat_map(|r| f(r).iter().copied())
                    .collect::<Vec<_>>(),
            )
        };
        let [baseline, candidate] = names;
        Comparison {
            baseline,
            candidate,
            baseline_median_us: all(|r| &r.baseline_us),
            candidate_median_us: all(|r| &r.candidate_us),
            sm_clock_median_mhz: clock_median,
            probed_median_mhz: probed_medians(&rounds),
            sm_clock_min_mhz: rounds
                .iter()
                .flat_map(|r| r.sm_clock_mhz.iter().flatten().copied())
                .min(),
            low_clock_pairs,
            set_aside_rounds: rounds.iter().filter(|r| r.set_aside).count(),
            throttle_reasons,
            rounds,
            estimate,
            elapsed_s,
            rotation_sets,
        }
    }
}

/// The median probed clock of each side over the rounds kept in the estimate, where any pair read a probe.
fn probed_medians(rounds: &[Round]) -> Option<[Option<f64>; 2]> {
    let side = |i: usize| {
        let mhz: Vec<f64> = rounds
            .iter()
            .filter(|r| !r.set_aside)
            .flat_map(|r| r.probed_mhz.iter().filter_map(move |p| p[i]))
            .collect();
        (!mhz.is_empty()).then(|| stats::median(&mhz))
    };
    let medians = [side(0), side(1)];
    medians.iter().any(Option::is_some).then_some(medians)
}

/// Launches `v` `launches` times between two events, rotating over `sets` operand sets from `next_set`; returns
/// the elapsed milliseconds.
pub fn batch(
    gpu: &Gpu,
    v: &dyn Variant,
    launches: u32,
    sets: usize,
    next_set: &mut usize,
) -> Result<f64> {
    batch_timed(gpu, v, launches, sets, next_set).map(|t| t.gpu_ms)
}

/// `batch`, with `then` enqueued after the batch's end event and before the wait: work that runs back to back with
/// the batch on the GPU and is not timed with it (sustain's clock probe). Never held: `then` may launch a kernel
/// for the first time.
pub fn batch_then(
    gpu: &Gpu,
    v: &dyn Variant,
    launches: u32,
    sets: usize,
    next_set: &mut usize,
    then: impl FnOnce() -> Result<()>,
) -> Result<f64> {
    timed(gpu, v, launches, sets, next_set, then, false).map(|t| t.gpu_ms)
}

/// Batches of at most this many launches wait behind the stream hold, where the GPU has one: the launch queue
/// holds them all (a longer batch would fill it and wait for the hold's timeout). Longer batches are of kernels
/// under 12 us at the 3 ms target, timed as before.
pub const HOLD_MAX_LAUNCHES: u32 = 256;

/// A batch's time on the GPU (between its events) and the host's wall time enqueueing its launches.
#[derive(Clone, Copy, Debug)]
pub struct BatchTime {
    pub gpu_ms: f64,
    pub host_ms: f64,
}

/// `batch`, returning the host's enqueue time beside the events'. Where the GPU holds batches
/// (`gpu::hold::hold_batches`, with GEMM_ABLATE_HOLD_BATCHES=1), the batch is short enough and not the variant's first in this process, the stream waits
/// until all of it is enqueued, so the events time the GPU's pace even where the host is slower than the kernels
/// (H94).
pub fn batch_timed(
    gpu: &Gpu,
    v: &dyn Variant,
    launches: u32,
    sets: usize,
    next_set: &mut usize,
) -> Result<BatchTime> {
    timed(gpu, v, launches, sets, next_set, || Ok(()), true)
}

fn timed(
    gpu: &Gpu,
    v: &dyn Variant,
    launches: u32,
    sets: usize,
    next_set: &mut usize,
    then: impl FnOnce() -> Result<()>,
    may_hold: bool,
) -> Result<BatchTime> {
    let hold = crate::gpu::hold::stream_hold(gpu)
        .filter(|h| may_hold && launches <= HOLD_MAX_LAUNCHES && h.launched_before(&v.label()));
    let held = hold.map(|h| h.hold(gpu)).transpose()?;
    let start = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .during("creating an event")?;
    let end = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .during("creating an event")?;
    start.record(&gpu.stream).during("recording an event")?;
    let enqueue = Instant::now();
    for _ in 0..launches {
        v.launch(gpu, *next_set % sets)?;
        *next_set += 1;
    }
    let host_ms = enqueue.elapsed().as_secs_f64() * 1e3;
    end.record(&gpu.stream).during("recording an event")?;
    then()?;
    if let Some(held) = held {
        held.release();
    }
    gpu.synchronize()?;
    if hold.is_some_and(|h| h.timed_out()) {
        return Err(crate::gpu::hold::timed_out_error(&v.label(), launches));
    }
    let gpu_ms = start
        .elapsed_ms(&end)
        .map(f64::from)
        .during("reading an event")?;
    Ok(BatchTime { gpu_ms, host_ms })
}

/// Runs both variants alternately for `ms` milliseconds.
pub fn warm_up(gpu: &Gpu, vs: [&dyn Variant; 2], sets: usize, ms: f64) -> Result<()> {
    let t0 = Instant::now();
    let mut set = 0;
    while t0.elapsed().as_secs_f64() * 1e3 < ms {
        for v in vs {
            batch(gpu, v, 2, sets, &mut set)?;
        }
    }
    Ok(())
}

/// Launches of `v` that fill a batch of `target_ms`, from a trial batch of 3 (the rounds' rule; cuBLAS's path
/// chooser sizes its batches with it too).
pub fn launches_for(
    gpu: &Gpu,
    v: &dyn Variant,
    sets: usize,
    next_set: &mut usize,
    target_ms: f64,
) -> Result<u32> {
    let ms = batch(gpu, v, 3, sets, next_set)? / 3.0;
    Ok(((target_ms / ms.max(1e-4)).round() as u32).clamp(1, 2000))
}

/// Launches per batch for each variant, from a trial batch of 3.
fn launches_per_batch(
    gpu: &Gpu,
    vs: [&dyn Variant; 2],
    sets: usize,
    target_ms: f64,
) -> Result<[u32; 2]> {
    let mut set = 0;
    Ok([
        launches_for(gpu, vs[0], sets, &mut set, target_ms)?,
        launches_for(gpu, vs[1], sets, &mut set, target_ms)?,
    ])
}

/// Where a round's operands came from, recorded with it.
pub struct RoundOperands {
    pub seed: u64,
    pub addresses: Vec<u64>,
    pub sets: usize,
    pub chunks: Vec<u32>,
    pub code_padding: u32,
}

/// One round: its warm-up, a fresh launch count, then `pairs` pairs in alternating order.
pub fn round(
    gpu: &Gpu,
    baseline: &dyn Variant,
    candidate: &dyn Variant,
    operands: RoundOperands,
    index: usize,
    pairs: usize,
    settings: &TimingSettings,
) -> Result<Round> {
    let sets = operands.sets;
    warm_up(gpu, [baseline, candidate], sets, settings.round_warmup_ms)?;
    let launches = launches_per_batch(gpu, [baseline, candidate], sets, settings.target_batch_ms)?;
    let baseline_first = index.is_multiple_of(2);
    let mut r = Round {
        index,
        baseline_first,
        launches,
        log_ratios: Vec::with_capacity(pairs),
        baseline_us: Vec::with_capacity(pairs),
        candidate_us: Vec::with_capacity(pairs),
        sm_clock_mhz: Vec::with_capacity(pairs),
        seed: operands.seed,
        operand_addresses: operands.addresses,
        set_aside: false,
        probed_mhz: Vec::new(),
        chunks: operands.chunks,
        code_padding: operands.code_padding,
        placement: Vec::new(),
        process: 0,
    };
    let mut set = 0;
    for pair in 0..pairs {
        let a_first = baseline_first == (pair % 2 == 0);
        let (ta, tb) = if a_first {
            let ta = batch(gpu, baseline, launches[0], sets, &mut set)?;
            (ta, batch(gpu, candidate, launches[1], sets, &mut set)?)
        } else {
            let tb = batch(gpu, candidate, launches[1], sets, &mut set)?;
            (batch(gpu, baseline, launches[0], sets, &mut set)?, tb)
        };
        let (ua, ub) = (
            ta * 1e3 / f64::from(launches[0]),
            tb * 1e3 / f64::from(launches[1]),
        );
        r.sm_clock_mhz.push(gpu.sm_clock_mhz());
        // Each probe holds its kernel's last launch, read after both batches (outside the timed spans).
        let probes = [
            baseline.probed_clock_mhz(gpu)?,
            candidate.probed_clock_mhz(gpu)?,
        ];
        if probes.iter().any(Option::is_some) {
            r.probed_mhz.push(probes);
        }
        r.baseline_us.push(ua);
        r.candidate_us.push(ub);
        r.log_ratios.push((ub / ua).ln());
    }
    // Where the round's last launch of each side ran (outside the timed spans).
    let places = [baseline.placement(gpu)?, candidate.placement(gpu)?];
    if places.iter().any(Option::is_some) {
        r.placement = places.into_iter().map(Option::unwrap_or_default).collect();
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(probes: Vec<[Option<f64>; 2]>, set_aside: bool) -> Round {
        Round {
            index: 0,
            baseline_first: true,
            launches: [1, 1],
            log_ratios: vec![0.0; probes.len()],
            baseline_us: vec![1.0; probes.len()],
            candidate_us: vec![1.0; probes.len()],
            sm_clock_mhz: vec![None; probes.len()],
            seed: 0,
            operand_addresses: Vec::new(),
            set_aside,
            probed_mhz: probes,
            chunks: Vec::new(),
            code_padding: 0,
            placement: Vec::new(),
            process: 0,
        }
    }

    #[test]
    fn probed_medians_take_each_side_over_the_kept_rounds() {
        let rounds = [
            round(
                vec![[Some(1500.0), Some(1600.0)], [Some(1510.0), Some(1620.0)]],
                false,
            ),
            round(vec![[Some(1520.0), Some(1640.0)]], false),
            // A throttled round is not in the estimate, nor in its clocks.
            round(vec![[Some(900.0), Some(900.0)]], true),
        ];
        assert_eq!(probed_medians(&rounds), Some([Some(1510.0), Some(1620.0)]));
        // One side probing (cuBLAS has no probe): the other side's median alone.
        let one = [round(vec![[None, Some(1600.0)]], false)];
        assert_eq!(probed_medians(&one), Some([None, Some(1600.0)]));
        // Neither probing: nothing recorded, so records without probes are unchanged.
        assert_eq!(probed_medians(&[round(Vec::new(), false)]), None);
    }

    #[test]
    fn a_round_without_probes_serializes_as_before() {
        let json = serde_json::to_value(round(Vec::new(), false)).unwrap();
        assert!(json.get("probed_mhz").is_none(), "{json}");
        let back: Round = serde_json::from_value(json).unwrap();
        assert!(back.probed_mhz.is_empty());
    }
}
