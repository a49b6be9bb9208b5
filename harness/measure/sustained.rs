//! One variant launched back to back for seconds, alone: the time, SM clock, power and energy it settles at under
//! sustained load. Paired rounds (timing.rs) keep both sides in one clock state on purpose, so they cannot show one
//! kernel holding a higher clock than another; this can (issue 10: a kernel that moves fewer bytes per FLOP may run
//! at a higher clock, and that is part of its speed). NVML's SM clock is not the clock a tensor-bound kernel runs at
//! (H75), so a `clock_probe=1` kernel's own reading is kept beside it. Not a paired verdict: two sustained runs
//! compare only within one process, one after the other, and a second pass shows the drift.

use crate::error::Result;
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::source;
use crate::measure::stats;
use crate::measure::timing::{batch_then, launches_for};
use crate::measure::variant::Variant;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One timed batch and what NVML read right after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the sustained run began, at the batch's end.
    pub at_s: f64,
    pub launches: u32,
    pub us_per_launch: f64,
    pub sm_clock_mhz: Option<u32>,
    /// The clock the batch's last launch measured itself (`clock_probe=1` kernels): cycles over nanoseconds.
    #[serde(default)]
    pub probed_mhz: Option<f64>,
    /// The clock one thread measured right after the batch, back to back with it (kernels/clock_after.cu), for any
    /// variant, cuBLAS too. Not the clock the batch ran at: the slowdown lifts within microseconds (H77).
    #[serde(default)]
    pub after_mhz: Option<f64>,
    pub power_w: Option<f64>,
    /// NVML's energy counter (millijoules since the driver loaded).
    pub energy_mj: Option<u64>,
    /// NVML's clock-event reasons bitmask.
    pub throttle: Option<u64>,
}

/// The settled part of a sustained run (its second half), summarized.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    /// The window summarized: from this many seconds to the end.
    pub from_s: f64,
    pub batches: usize,
    pub us_per_launch: f64,
    /// Quartile spread of the batches' times, relative to the median.
    pub us_iqr_rel: f64,
    /// The window's last quarter over its first quarter, in median time: near 1 when the run has settled.
    pub drift: f64,
    pub sm_clock_mhz: Option<f64>,
    /// The clock the kernel measured itself at (`clock_probe=1`), where it differs from what NVML reports.
    #[serde(default)]
    pub probed_mhz: Option<f64>,
    /// The clock measured right after each batch (`Sample::after_mhz`), median.
    #[serde(default)]
    pub after_mhz: Option<f64>,
    /// Median over batches of time x the probed clock (none without a probe: NVML's clock is not the one a
    /// tensor-bound kernel runs at, H75): the launch's length in SM cycles, thousands.
    pub kcycles_per_launch: Option<f64>,
    pub power_w: Option<f64>,
    /// From the energy counter over the window, divided by the launches in it.
    pub mj_per_launch: Option<f64>,
    /// Batches read with the software power cap among the clock-event reasons.
    pub power_capped_fraction: Option<f64>,
    /// The share of the window's wall time the card spent in the batches (their events' time over the time between
    /// the reading before the window and its last): what the host's reads after each batch leave idle (H135).
    /// Records before it lack it.
    #[serde(default)]
    pub busy_fraction: Option<f64>,
}

/// One variant's sustained run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SustainedRun {
    pub pass: usize,
    pub variant: String,
    pub label: String,
    pub seconds: f64,
    pub samples: Vec<Sample>,
    pub settled: Option<Settled>,
}

const POWER_CAP_BIT: u64 = 0x4;

/// A batch's length in a sustained run, in ms. After each batch the host waits for it and reads NVML and the
/// probes, which leaves the card idle about 4 ms (3.9-4.4 ms a batch in e9f627a's clock trials on the H200): with
/// the rounds' 3 ms batches the card was busy 38-46% of the time, its average power under the cap, so the clock
/// it "settled" at was a part-time one and the kernel ran 9-12% faster than back to back (H135). 100 ms batches
/// keep it busy about 96%; a run shorter than 4 s takes shorter batches, so that its settled half still holds
/// about 20.
pub fn batch_ms(seconds: f64) -> f64 {
    (seconds * 1e3 / 40.0).min(100.0)
}

/// The one-thread kernel that reads the SM clock right after the work before it in the stream.
pub struct ClockAfter {
    kernel: Kernel,
    out: DeviceBuffer,
}

/// The timer span the probe counts cycles over, edge to edge.
const PROBE_SPAN_NS: u64 = 1000;

impl ClockAfter {
    pub fn new(gpu: &Gpu) -> Result<ClockAfter> {
        let compiled = compile::compile("clock_after", &program())?;
        Ok(ClockAfter {
            kernel: Kernel::load(gpu, &compiled, "clock_after")?,
            out: DeviceBuffer::new(gpu, 16)?,
        })
    }

    /// Enqueues the probe (one thread) on the stream.
    pub fn enqueue(&self, gpu: &Gpu) -> Result<()> {
        let (mut out, mut span) = (self.out.ptr(), PROBE_SPAN_NS);
        let mut params = crate::kernel_params![&mut out, &mut span];
        let one = LaunchShape {
            grid: 1,
            block: 1,
            smem: 0,
            cluster: 1,
            pdl: false,
        };
        unsafe { launch(gpu, &self.kernel, one, &mut params) }
    }

    /// The last probe's clock in MHz (after the stream has been waited for).
    pub fn read_mhz(&self, gpu: &Gpu) -> Result<Option<f64>> {
        let v: Vec<u64> = self.out.read(gpu)?;
        Ok((v[1] > 0).then(|| v[0] as f64 * 1e3 / v[1] as f64))
    }
}

/// The probe's program: the primitives header (for the timer) and kernels/clock_after.cu.
pub fn program() -> String {
    source::program(
        &source::util_defines(crate::kernel::problem::DType::F16),
        source::CLOCK_AFTER,
    )
}

/// Launches `v` in batches of about `batch_ms` for `seconds`, reading NVML after each batch, and the clock probe
/// right after it on the GPU where one is given.
pub fn run(
    gpu: &Gpu,
    v: &dyn Variant,
    sets: usize,
    seconds: f64,
    batch_ms: f64,
    probe: Option<&ClockAfter>,
) -> Result<Vec<Sample>> {
    let mut set = 0;
    let launches = launches_for(gpu, v, sets, &mut set, batch_ms)?;
    let t0 = Instant::now();
    let mut samples = Vec::new();
    while t0.elapsed().as_secs_f64() < seconds {
        let ms = batch_then(gpu, v, launches, sets, &mut set, || match probe {
            Some(p) => p.enqueue(gpu),
            None => Ok(()),
        })?;
        let after_mhz = match probe {
            Some(p) => p.read_mhz(gpu)?,
            None => None,
        };
        samples.push(Sample {
            after_mhz,
            at_s: t0.elapsed().as_secs_f64(),
            launches,
            us_per_launch: ms * 1e3 / f64::from(launches),
            sm_clock_mhz: gpu.sm_clock_mhz(),
            probed_mhz: v.probed_clock_mhz(gpu)?,
            power_w: gpu.power_w(),
            energy_mj: gpu.energy_mj(),
            throttle: gpu.throttle_reasons(),
        });
    }
    Ok(samples)
}

fn median_of(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// Summarizes the second half of a run (by time); None when it has fewer than 8 batches there.
pub fn settle(samples: &[Sample], seconds: f64) -> Option<Settled> {
    let from_s = seconds / 2.0;
    let w: Vec<&Sample> = samples.iter().filter(|s| s.at_s >= from_s).collect();
    if w.len() < 8 {
        return None;
    }
    let times: Vec<f64> = w.iter().map(|s| s.us_per_launch).collect();
    let us = stats::median(&times);
    let quarter = w.len() / 4;
    let drift = stats::median(&times[w.len() - quarter..]) / stats::median(&times[..quarter]);
    let (q1, q3) = (stats::quantile(&times, 0.25), stats::quantile(&times, 0.75));
    // Energy over the window: from the reading just before it (the counter at the window's start) to its end.
    let before = samples.iter().rev().find(|s| s.at_s < from_s);
    let mj_per_launch = match (
        before.and_then(|s| s.energy_mj),
        w.last().and_then(|s| s.energy_mj),
    ) {
        (Some(e0), Some(e1)) if e1 > e0 => {
            let launches: u32 = w.iter().map(|s| s.launches).sum();
            Some((e1 - e0) as f64 / f64::from(launches))
        }
        _ => None,
    };
    let throttles: Vec<u64> = w.iter().filter_map(|s| s.throttle).collect();
    // Without a reading before the window its first batch has no start to count from: it is left out.
    let counted = if before.is_some() { &w[..] } else { &w[1..] };
    let busy_s: f64 = counted
        .iter()
        .map(|s| f64::from(s.launches) * s.us_per_launch / 1e6)
        .sum();
    let span_s = w[w.len() - 1].at_s - before.map_or(w[0].at_s, |b| b.at_s);
    Some(Settled {
        from_s,
        batches: w.len(),
        us_per_launch: us,
        us_iqr_rel: (q3 - q1) / us,
        drift,
        sm_clock_mhz: median_of(w.iter().filter_map(|s| s.sm_clock_mhz.map(f64::from))),
        probed_mhz: median_of(w.iter().filter_map(|s| s.probed_mhz)),
        after_mhz: median_of(w.iter().filter_map(|s| s.after_mhz)),
        kcycles_per_launch: median_of(
            w.iter()
                .filter_map(|s| s.probed_mhz.map(|c| s.us_per_launch * c / 1e3)),
        ),
        power_w: median_of(w.iter().filter_map(|s| s.power_w)),
        mj_per_launch,
        power_capped_fraction: (!throttles.is_empty()).then(|| {
            throttles
                .iter()
                .filter(|&&t| t & POWER_CAP_BIT != 0)
                .count() as f64
                / throttles.len() as f64
        }),
        busy_fraction: (span_s > 0.0).then(|| busy_s / span_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, us: f64, mhz: u32, energy_mj: u64, throttle: u64) -> Sample {
        Sample {
            at_s,
            launches: 10,
            us_per_launch: us,
            sm_clock_mhz: Some(mhz),
            probed_mhz: None,
            after_mhz: None,
            power_w: Some(600.0),
            energy_mj: Some(energy_mj),
            throttle: Some(throttle),
        }
    }

    #[test]
    fn the_settled_window_is_the_second_half_and_energy_is_counted_over_it() {
        // Twenty batches over 2 s: a fast boosted first half (100 us at 1980 MHz), then 120 us at 1650 MHz.
        let samples: Vec<Sample> = (0..20)
            .map(|i| {
                let at = 0.1 * (i + 1) as f64;
                let (us, mhz) = if at < 1.0 {
                    (100.0, 1980)
                } else {
                    (120.0, 1650)
                };
                sample(
                    at,
                    us,
                    mhz,
                    1000 + 50 * i as u64,
                    if at < 1.0 { 0 } else { 0x4 },
                )
            })
            .collect();
        let s = settle(&samples, 2.0).expect("enough batches");
        assert_eq!(s.batches, 11); // at_s from 1.0 (index 9, floating 1.0 counts) to 2.0
        assert_eq!(s.us_per_launch, 120.0);
        assert_eq!(s.sm_clock_mhz, Some(1650.0));
        // Without the kernel's own clock there are no cycles to give.
        assert_eq!(s.kcycles_per_launch, None);
        assert!((s.drift - 1.0).abs() < 1e-12);
        assert_eq!(s.us_iqr_rel, 0.0);
        // The counter before the window read 1000 + 50 * 8; its end 1000 + 50 * 19: 550 mJ over 110 launches.
        assert!((s.mj_per_launch.unwrap() - 5.0).abs() < 1e-9);
        assert_eq!(s.power_capped_fraction, Some(1.0));
        // 11 batches of 10 launches of 120 us (13.2 ms) between the readings at 0.9 s and 2.0 s.
        assert!((s.busy_fraction.unwrap() - 0.0132 / 1.1).abs() < 1e-9);
    }

    #[test]
    fn a_run_busy_back_to_back_reads_busy_all_the_time() {
        // Batches of 10 launches of 10 ms each, one every 100 ms: the card never idles.
        let samples: Vec<Sample> = (0..40)
            .map(|i| sample(0.1 * (i + 1) as f64, 10_000.0, 1400, 0, 0x4))
            .collect();
        let s = settle(&samples, 4.0).unwrap();
        assert!((s.busy_fraction.unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn batches_are_long_enough_to_keep_the_card_busy_and_many_enough_to_settle() {
        assert_eq!(batch_ms(4.0), 100.0);
        assert_eq!(batch_ms(60.0), 100.0);
        // A 1 s run: 25 ms batches, 20 of them in its settled half.
        assert_eq!(batch_ms(1.0), 25.0);
    }

    #[test]
    fn cycles_use_the_clock_the_kernel_measured_where_it_did() {
        let samples: Vec<Sample> = (0..16)
            .map(|i| Sample {
                probed_mhz: Some(1600.0),
                after_mhz: Some(1590.0 + (i % 3) as f64),
                ..sample(1.0 + 0.1 * i as f64, 100.0, 1980, 0, 0)
            })
            .collect();
        let s = settle(&samples, 2.0).unwrap();
        assert_eq!(s.sm_clock_mhz, Some(1980.0));
        assert_eq!(s.probed_mhz, Some(1600.0));
        assert_eq!(s.after_mhz, Some(1591.0));
        assert!((s.kcycles_per_launch.unwrap() - 160.0).abs() < 1e-9);
    }

    #[test]
    fn a_short_run_is_not_summarized_and_a_drifting_one_says_so() {
        let few: Vec<Sample> = (0..6)
            .map(|i| sample(0.5 + 0.1 * i as f64, 100.0, 1700, 0, 0))
            .collect();
        assert!(settle(&few, 1.0).is_none());
        let drifting: Vec<Sample> = (0..16)
            .map(|i| sample(1.0 + 0.1 * i as f64, 100.0 + i as f64, 1700, 0, 0))
            .collect();
        let s = settle(&drifting, 2.0).unwrap();
        assert!(s.drift > 1.05, "{}", s.drift);
        // A counter that did not move gives no energy figure rather than zero.
        assert_eq!(s.mj_per_launch, None);
    }
}
