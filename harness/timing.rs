//! Event-timed batches, interleaved A B / B A so that neighbouring batches share the card's clock state, with
//! operand rotation against L2 reuse, the SM clock read after every pair, and sampling until the statistics
//! reach a verdict or the budget runs out.

use crate::device::Gpu;
use crate::error::{CudaContext as _, Result};
use crate::stats::{self, env_f64, paired_estimate, Estimate, StatsSettings};
use crate::variant::Variant;
use cudarc::driver::sys::CUevent_flags;
use serde::{Deserialize, Serialize};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingSettings {
    /// Aim for batches this long, so event resolution (~0.5 us) and launch gaps do not matter.
    pub target_batch_ms: f64,
    /// Warm-up before timing: the card must leave idle clocks first.
    pub warmup_ms: f64,
    pub min_pairs: usize,
    pub max_pairs: usize,
    /// Seconds of sampling after which an undecided comparison is reported as inconclusive.
    pub budget_s: f64,
}

impl Default for TimingSettings {
    fn default() -> Self {
        TimingSettings {
            target_batch_ms: 3.0,
            warmup_ms: 1000.0,
            min_pairs: 12,
            max_pairs: 400,
            budget_s: 12.0,
        }
    }
}

impl TimingSettings {
    /// Defaults, overridden by GEMM_ABLATE_BATCH_MS, _WARMUP_MS, _MIN_PAIRS, _MAX_PAIRS, _BUDGET_S.
    pub fn from_env() -> TimingSettings {
        let d = TimingSettings::default();
        TimingSettings {
            target_batch_ms: env_f64("GEMM_ABLATE_BATCH_MS", d.target_batch_ms),
            warmup_ms: env_f64("GEMM_ABLATE_WARMUP_MS", d.warmup_ms),
            min_pairs: env_f64("GEMM_ABLATE_MIN_PAIRS", d.min_pairs as f64) as usize,
            max_pairs: env_f64("GEMM_ABLATE_MAX_PAIRS", d.max_pairs as f64) as usize,
            budget_s: env_f64("GEMM_ABLATE_BUDGET_S", d.budget_s),
        }
    }
}

/// One timed batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub us_per_launch: f64,
    pub launches: u32,
    /// SM clock read right after the pair this batch belongs to.
    pub sm_clock_mhz: Option<u32>,
    /// True if this batch ran first in its pair.
    pub ran_first: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    pub baseline_batches: Vec<Batch>,
    pub candidate_batches: Vec<Batch>,
    /// ln(candidate / baseline) per pair.
    pub log_ratios: Vec<f64>,
    pub estimate: Estimate,
    pub baseline_median_us: f64,
    pub candidate_median_us: f64,
    pub sm_clock_median_mhz: Option<f64>,
    pub sm_clock_min_mhz: Option<u32>,
    /// Noise guards: pairs whose clock read under 90% of the comparison's median, and what the driver
    /// gave as throttle reasons at the end.
    pub low_clock_pairs: usize,
    pub throttle_reasons: Vec<String>,
    pub elapsed_s: f64,
    pub rotation_sets: usize,
}

/// Launches `v` `launches` times between two events; returns the elapsed milliseconds.
fn batch(
    gpu: &Gpu,
    v: &dyn Variant,
    launches: u32,
    sets: usize,
    next_set: &mut usize,
) -> Result<f64> {
    let start = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .during("creating an event")?;
    let end = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .during("creating an event")?;
    start.record(&gpu.stream).during("recording an event")?;
    for _ in 0..launches {
        v.launch(gpu, *next_set % sets)?;
        *next_set += 1;
    }
    end.record(&gpu.stream).during("recording an event")?;
    gpu.synchronize()?;
    start
        .elapsed_ms(&end)
        .map(f64::from)
        .during("reading an event")
}

/// Runs both variants for the warm-up time, then picks each one's launches per batch from a trial batch.
fn calibrate(
    gpu: &Gpu,
    vs: [&dyn Variant; 2],
    sets: usize,
    settings: &TimingSettings,
) -> Result<[u32; 2]> {
    let t0 = Instant::now();
    let mut set = 0;
    while t0.elapsed().as_secs_f64() * 1e3 < settings.warmup_ms {
        for v in vs {
            batch(gpu, v, 2, sets, &mut set)?;
        }
    }
    let mut out = [1u32; 2];
    for (i, v) in vs.into_iter().enumerate() {
        let ms = batch(gpu, v, 3, sets, &mut set)? / 3.0;
        out[i] = ((settings.target_batch_ms / ms.max(1e-4)).round() as u32).clamp(1, 2000);
    }
    Ok(out)
}

/// Times `candidate` against `baseline` in interleaved pairs until a decisive verdict (checked after whole
/// A B B A cycles, once `min_pairs` are in) or the budget is spent.
pub fn compare(
    gpu: &Gpu,
    baseline: &dyn Variant,
    candidate: &dyn Variant,
    sets: usize,
    settings: &TimingSettings,
    stats_settings: StatsSettings,
) -> Result<Comparison> {
    let started = Instant::now();
    let launches = calibrate(gpu, [baseline, candidate], sets, settings)?;
    let (mut a_batches, mut b_batches, mut log_ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut set = 0;
    let sampling = Instant::now();
    let estimate = loop {
        let pair = log_ratios.len();
        let baseline_first = pair % 2 == 0;
        let (ta, tb) = if baseline_first {
            let ta = batch(gpu, baseline, launches[0], sets, &mut set)?;
            (ta, batch(gpu, candidate, launches[1], sets, &mut set)?)
        } else {
            let tb = batch(gpu, candidate, launches[1], sets, &mut set)?;
            (batch(gpu, baseline, launches[0], sets, &mut set)?, tb)
        };
        let clock = gpu.sm_clock_mhz();
        let (ua, ub) = (
            ta * 1e3 / f64::from(launches[0]),
            tb * 1e3 / f64::from(launches[1]),
        );
        a_batches.push(Batch {
            us_per_launch: ua,
            launches: launches[0],
            sm_clock_mhz: clock,
            ran_first: baseline_first,
        });
        b_batches.push(Batch {
            us_per_launch: ub,
            launches: launches[1],
            sm_clock_mhz: clock,
            ran_first: !baseline_first,
        });
        log_ratios.push((ub / ua).ln());
        let n = log_ratios.len();
        if n >= settings.min_pairs && n % 2 == 0 {
            let estimate = paired_estimate(&log_ratios, stats_settings);
            if estimate.verdict.is_decisive() {
                break estimate;
            }
        }
        if sampling.elapsed().as_secs_f64() > settings.budget_s || n >= settings.max_pairs {
            // Whole A B / B A cycles only, so the order effect cancels.
            let even = n - n % 2;
            break paired_estimate(&log_ratios[..even.max(n.min(2))], stats_settings);
        }
    };
    let clocks: Vec<f64> = a_batches
        .iter()
        .filter_map(|b| b.sm_clock_mhz.map(f64::from))
        .collect();
    let clock_median = (!clocks.is_empty()).then(|| stats::median(&clocks));
    let low_clock_pairs = clock_median
        .map(|m| clocks.iter().filter(|&&c| c < 0.9 * m).count())
        .unwrap_or(0);
    let us = |bs: &[Batch]| stats::median(&bs.iter().map(|b| b.us_per_launch).collect::<Vec<_>>());
    Ok(Comparison {
        baseline: baseline.label(),
        candidate: candidate.label(),
        baseline_median_us: us(&a_batches),
        candidate_median_us: us(&b_batches),
        sm_clock_median_mhz: clock_median,
        sm_clock_min_mhz: a_batches.iter().filter_map(|b| b.sm_clock_mhz).min(),
        low_clock_pairs,
        throttle_reasons: gpu
            .throttle_reasons()
            .map(|m| {
                crate::nvml::describe_throttle(m)
                    .into_iter()
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        baseline_batches: a_batches,
        candidate_batches: b_batches,
        log_ratios,
        estimate,
        elapsed_s: started.elapsed().as_secs_f64(),
        rotation_sets: sets,
    })
}

/// Median time of one variant alone (for figures where no comparison is asked): `batches` batches.
pub fn time_alone(
    gpu: &Gpu,
    v: &dyn Variant,
    sets: usize,
    settings: &TimingSettings,
    batches: usize,
) -> Result<Vec<f64>> {
    let launches = calibrate(gpu, [v, v], sets, settings)?[0];
    let mut set = 0;
    (0..batches)
        .map(|_| Ok(batch(gpu, v, launches, sets, &mut set)? * 1e3 / f64::from(launches)))
        .collect()
}
