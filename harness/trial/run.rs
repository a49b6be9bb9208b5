//! The code that runs a job (job.rs holds what runs, as data): the checks against cuBLAS, the timed rounds, sweeps,
//! profiles and the cuBLAS-against-CPU check, each returning what it observed for the parent to judge (expect.rs).
//! Which kernel a spec means, and how each is checked, is bound.rs's.

use crate::error::{Error, Result};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::kernel::problem::{DType, Shape};
use crate::measure::cublas_choice::choose_cublas_path;
use crate::measure::measures::{self, Measure};
use crate::measure::operands::{rotation_sets, Operands, Seeds, UtilKernels};
use crate::measure::reference::{cpu_gemm, to_f64, Cublas, CublasPath};
use crate::measure::stats;
use crate::measure::timing::{self, Comparison, RoundOperands};
use crate::measure::variant::Variant;
use crate::settings::Settings;
use crate::trial::bound::{problem, BoundVariant};
use crate::trial::context::TrialContext;
use crate::trial::expectation::Caught;
use crate::trial::job::{Job, Observed, SweepRow, TrialRecord, VariantRecord, VariantSpec};
use std::time::{Duration, Instant};

/// Runs a job in this process, opening the GPU for it, and returns its (unjudged) record; errors become the
/// observation.
pub fn run(name: &str, job: &Job) -> TrialRecord {
    let started = Instant::now();
    let opened = Settings::from_env().and_then(|settings| Gpu::open().map(|gpu| (settings, gpu)));
    let mut record = match opened {
        Ok((settings, gpu)) => run_on_gpu(&gpu, settings, name, job, started, false),
        Err(e) => TrialRecord::new(name, job, Observed::from_error(e)),
    };
    record.duration_s = started.elapsed().as_secs_f64();
    record
}

/// Runs a job on a GPU this process opened for an earlier one (a kept worker process, trial/pool.rs), with
/// `settings` (variable, value) read before the environment's, from `started` (when the request came). The context
/// and what it keeps (the stream hold) outlive the job; everything the job allocates is freed when it ends.
pub fn run_on_kept(
    gpu: &Gpu,
    settings: &[(String, String)],
    name: &str,
    job: &Job,
    started: Instant,
) -> TrialRecord {
    // The card ran the previous worker's batches moments ago unless it has since dropped towards its idle clock
    // (345 MHz on the H200, against 1980 at the top and 1500-1700 under the power cap on the heavy GEMMs: H75).
    let card_warm = match (gpu.sm_clock_mhz(), gpu.info.max_sm_clock_mhz) {
        (Some(now), Some(top)) => u64::from(now) * 2 >= u64::from(top),
        _ => false,
    };
    let mut record = match Settings::from_env_with(settings) {
        Ok(settings) => run_on_gpu(gpu, settings, name, job, started, card_warm),
        Err(e) => TrialRecord::new(name, job, Observed::from_error(e)),
    };
    record.duration_s = started.elapsed().as_secs_f64();
    record
}

/// A job on an open GPU: the per-job state (hang watch, seeds, phases), the job, and the seat it ran on.
fn run_on_gpu(
    gpu: &Gpu,
    settings: Settings,
    name: &str,
    job: &Job,
    started: Instant,
    card_warm: bool,
) -> TrialRecord {
    let ran = (|| {
        if settings.timing.hold_batches {
            crate::gpu::hold::hold_batches(gpu)?;
        }
        // A job starts as in a fresh process: no variant has run a batch yet (its first runs unheld).
        if let Some(hold) = crate::gpu::hold::stream_hold(gpu) {
            hold.forget_launches();
        }
        let hang = HangWatch::new(gpu)?;
        let seeds = Seeds::new(settings.seed);
        let ctx = TrialContext {
            gpu,
            hang,
            settings,
            seeds,
            pool: std::sync::OnceLock::new(),
            started,
            phases: std::sync::Mutex::new(Vec::new()),
            card_warm,
        };
        ctx.mark("gpu opened");
        run_on(&ctx, name, job).map(|mut record| {
            record.phases = ctx.phases.lock().map(|p| p.clone()).unwrap_or_default();
            record
        })
    })();
    let mut record = ran.unwrap_or_else(|e| TrialRecord::new(name, job, Observed::from_error(e)));
    record.gpu = Some(crate::gpu::device::GpuSeat {
        index: crate::trial::child::parent_device_index(),
        name: gpu.info.name.clone(),
        pci_bus_id: gpu.info.pci_bus_id.clone(),
    });
    record
}

fn run_on(ctx: &TrialContext, name: &str, job: &Job) -> Result<TrialRecord> {
    match job {
        Job::Compare {
            baseline,
            candidate,
            shape,
            dtype,
        } => compare_job(ctx, name, job, [baseline, candidate], shape, *dtype),
        Job::Sweep {
            points,
            shape,
            dtype,
        } => sweep_job(ctx, name, job, points, shape, *dtype),
        Job::Check {
            variant,
            shape,
            dtype,
        } => check_job(ctx, name, job, variant, shape, *dtype),
        Job::CublasVsCpu { dtype } => cublas_vs_cpu(ctx, name, job, *dtype),
        Job::Sustain {
            variants,
            shape,
            dtype,
            seconds,
            passes,
        } => sustain_job(ctx, name, job, variants, shape, *dtype, *seconds, *passes),
        Job::Profile {
            variant,
            shape,
            dtype,
        } => profile_job(ctx, name, job, variant, shape, *dtype),
    }
}

/// Checks every spec on one fresh set of operands; returns the records, the cuBLAS path to time with, and what
/// is wrong (if anything).
#[allow(clippy::type_complexity)]
fn check_all(
    ctx: &TrialContext,
    util: &UtilKernels,
    shape: &Shape,
    dtype: DType,
    specs: &[&VariantSpec],
) -> Result<(
    Vec<VariantRecord>,
    CublasPath,
    Vec<String>,
    Option<(Caught, String)>,
)> {
    let ops = Operands::new(ctx.gpu, util, shape, dtype, 1, ctx.seeds.next())?;
    let mut cublas = Cublas::new(ctx.gpu, &ops)?;
    let (path, path_event) = if specs.iter().any(|s| **s == VariantSpec::Cublas) {
        choose_cublas_path(ctx.gpu, util, &cublas, &ctx.seeds, &ctx.settings)?
    } else {
        (cublas.path, None)
    };
    cublas = cublas.with_path(path);
    let mut records = Vec::new();
    let mut warnings: Vec<String> = path_event.into_iter().collect();
    let mut wrong = None;
    for spec in specs {
        let built = BoundVariant::new(ctx, spec, &ops)?;
        let r = built.checked_record(ctx, util, &ops, &cublas, spec)?;
        warnings.extend(built.warnings());
        if wrong.is_none() {
            wrong = problem(&r);
        }
        records.push(r);
    }
    Ok((records, path, warnings, wrong))
}

/// A round's operands: a spacer of random size (so the allocator does not hand back the same range every
/// other round), then the rotation sets; with GEMM_ABLATE_RANDOMIZE=memory, the sets on physical chunks drawn
/// at random from the process's pool instead, and with `code`, padding modules loaded before the round's kernels
/// (held until the round's memory is dropped) so that their code lands at another address.
struct RoundMemory {
    _spacer: Option<crate::gpu::memory::DeviceBuffer>,
    ops: Operands,
    chunks: Vec<u32>,
    _padding: Vec<crate::gpu::launch::Kernel>,
}

/// Padding modules a round loads at most (GEMM_ABLATE_RANDOMIZE=code): each is the utility program's module.
const MAX_CODE_PADDING: u64 = 8;

fn round_memory(
    ctx: &TrialContext,
    util: &UtilKernels,
    shape: &Shape,
    dtype: DType,
    sets: usize,
) -> Result<RoundMemory> {
    let seed = ctx.seeds.next();
    let randomize = ctx.settings.randomize;
    let pool = if randomize.memory {
        if ctx.pool.get().is_none() {
            let _ = ctx.pool.set(crate::gpu::memory::ChunkPool::new(ctx.gpu)?);
        }
        ctx.pool.get()
    } else {
        None
    };
    let spacer_mb = 2 * (crate::measure::operands::mix(seed, 99) % 32) as usize;
    let spacer = if spacer_mb > 0 && pool.is_none() {
        Some(crate::gpu::memory::DeviceBuffer::new(
            ctx.gpu,
            spacer_mb << 20,
        )?)
    } else {
        None
    };
    let padding = if randomize.code {
        let n = crate::measure::operands::mix(seed, 98) % (MAX_CODE_PADDING + 1);
        (0..n)
            .map(|_| util.padding_module(ctx.gpu))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let (ops, chunks) = Operands::new_on(ctx.gpu, util, shape, dtype, sets, seed, pool)?;
    Ok(RoundMemory {
        _spacer: spacer,
        ops,
        chunks,
        _padding: padding,
    })
}

/// Times `specs[1]` against `specs[0]` in rounds on fresh operands until the rule decides.
fn compare_in_rounds(
    ctx: &TrialContext,
    util: &UtilKernels,
    shape: &Shape,
    dtype: DType,
    specs: [&VariantSpec; 2],
    path: CublasPath,
) -> Result<Comparison> {
    let gpu = ctx.gpu;
    let settings = &ctx.settings;
    let sets = rotation_sets(shape, gpu.info.l2_bytes, dtype);
    let needs_cublas = specs.iter().any(|s| **s == VariantSpec::Cublas);
    let started = Instant::now();
    let mut rounds: Vec<timing::Round> = Vec::new();
    let mut held: Option<RoundMemory> = None;
    let mut rule = stats::Sequential::new(settings.stats).with_precision(settings.precision);
    let estimate = loop {
        let index = rounds.len();
        let fresh = match (&held, settings.fresh_operands) {
            (Some(_), false) => None,
            _ => Some(round_memory(ctx, util, shape, dtype, sets)?),
        };
        let mem = fresh
            .as_ref()
            .or(held.as_ref())
            .expect("a round has operands");
        let ops = &mem.ops;
        let round = {
            let cublas = if needs_cublas {
                Some(Cublas::new(gpu, ops)?.with_path(path))
            } else {
                None
            };
            let (a, b) = (
                BoundVariant::new(ctx, specs[0], ops)?,
                BoundVariant::new(ctx, specs[1], ops)?,
            );
            let (va, vb) = (a.variant(cublas.as_ref())?, b.variant(cublas.as_ref())?);
            if index == 0 {
                let warm_up_ms = if ctx.card_warm {
                    settings
                        .timing
                        .kept_warmup_ms
                        .min(settings.timing.warmup_ms)
                } else {
                    settings.timing.warmup_ms
                };
                timing::warm_up(gpu, [va, vb], sets, warm_up_ms)
                    .map_err(|e| ctx.hang.explain(e))?;
                ctx.mark("warmed up");
                if ctx.card_warm {
                    // H133: an empty phase right after, so that the phases' times stay as they were and a record
                    // says its worker took the short warm-up.
                    ctx.mark("short warm-up (the card at its working clock, H133)");
                }
            }
            if settings.randomize.scheduler {
                util.reset_scheduler(gpu)?;
            }
            let where_ = RoundOperands {
                seed: ops.seed,
                addresses: ops.addresses(),
                sets,
                chunks: mem.chunks.clone(),
                code_padding: mem._padding.len() as u32,
            };
            timing::round(
                gpu,
                va,
                vb,
                where_,
                index,
                settings.stats.pairs_per_round,
                &settings.timing,
            )
            .map_err(|e| ctx.hang.explain(e))?
        };
        // The previous round's operands are freed only now, after this round's were allocated elsewhere.
        if fresh.is_some() {
            held = fresh;
        }
        rounds.push(round);
        timing::set_aside_throttled(&mut rounds);
        let counted: Vec<Vec<f64>> = rounds
            .iter()
            .filter(|r| !r.set_aside)
            .map(|r| r.log_ratios.clone())
            .collect();
        if let Some(e) = rule.after_round(&counted, rounds.len()) {
            break e;
        }
    };
    drop(held);
    Ok(Comparison::new(
        gpu,
        [specs[0].name(), specs[1].name()],
        rounds,
        estimate,
        started,
        sets,
    ))
}

/// Noise guards for a finished comparison.
fn flags_for(cmp: &Comparison, noise_floor: f64) -> Vec<String> {
    let mut flags = Vec::new();
    let e = &cmp.estimate;
    if cmp.sm_clock_median_mhz.is_none() {
        flags.push(
            "no SM clock readings (NVML missing): the clock guards are off for this comparison"
                .into(),
        );
    }
    if cmp.set_aside_rounds > 0 {
        flags.push(format!(
            "{} of {} rounds set aside and replaced: a pair read the SM clock under {:.0}% of the median ({:.0} MHz), a throttle event",
            cmp.set_aside_rounds,
            cmp.rounds.len(),
            timing::THROTTLED_FRACTION * 100.0,
            cmp.sm_clock_median_mhz.unwrap_or(0.0)
        ));
    }
    if e.disturbed_pairs > 0 {
        flags.push(format!(
            "{} of {} pairs set aside as disturbed: more than {} robust sd off their round's median (one batch hit by an interrupt or a throttle)",
            e.disturbed_pairs,
            e.pairs + e.disturbed_pairs,
            crate::measure::stats::DISTURBED_PAIR_SDS
        ));
    }
    if cmp.low_clock_pairs > 0 {
        flags.push(format!(
            "{} of {} pairs ran with the SM clock under 90% of the median ({:.0} MHz): throttled or disturbed",
            cmp.low_clock_pairs,
            cmp.pairs(),
            cmp.sm_clock_median_mhz.unwrap_or(0.0)
        ));
    }
    if e.pair_sd > 3.0 * noise_floor {
        flags.push(format!(
            "pair noise {:.2}% is over 3x the noise floor ({:.2}%): the run was disturbed or the kernel is erratic",
            e.pair_sd * 100.0,
            noise_floor * 100.0
        ));
    }
    if cmp
        .throttle_reasons
        .iter()
        .any(|r| r.contains("thermal") || r.contains("hardware"))
    {
        flags.push(format!(
            "verdict reached under throttling: {}",
            cmp.throttle_reasons.join(", ")
        ));
    }
    flags
}

/// What a variant that takes `us` per launch achieved: GEMMs their throughput and effective bandwidth (at the
/// operands' bytes: one an FP8 element), load paths the rate they fill shared memory, the read floor the rate it
/// reads A and B.
fn measures_of(us: f64, shape: &Shape, spec: &VariantSpec, dtype: DType) -> Vec<Measure> {
    match spec.kernel() {
        Some(Ok(k)) if !dtype.is_fp8() => k.measures(us, shape),
        _ => measures::gemm_of(us, shape, dtype),
    }
}

fn with_time(r: &mut VariantRecord, us: f64, shape: &Shape, spec: &VariantSpec, dtype: DType) {
    r.measures = measures_of(us, shape, spec, dtype);
}

fn compare_job(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    specs: [&VariantSpec; 2],
    shape: &Shape,
    dtype: DType,
) -> Result<TrialRecord> {
    // Both variants are validated before any allocation or launch.
    specs[0].validate_for(shape, dtype)?;
    specs[1].validate_for(shape, dtype)?;
    let util = UtilKernels::new(ctx.gpu, dtype)?;
    let (mut records, path, warnings, wrong) = check_all(ctx, &util, shape, dtype, &specs)?;
    ctx.mark("checked");
    let base = |observed| TrialRecord {
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        flags: warnings.clone(),
        ..TrialRecord::new(name, job, observed)
    };
    if let Some((caught, message)) = wrong {
        // A wrong kernel never gets a speed verdict.
        return Ok(TrialRecord {
            variants: records,
            ..base(Observed::Wrong { caught, message })
        });
    }
    let cmp = compare_in_rounds(ctx, &util, shape, dtype, specs, path)?;
    ctx.mark("rounds timed");
    with_time(
        &mut records[0],
        cmp.baseline_median_us,
        shape,
        specs[0],
        dtype,
    );
    with_time(
        &mut records[1],
        cmp.candidate_median_us,
        shape,
        specs[1],
        dtype,
    );
    let mut record = base(Observed::Compared(cmp.estimate.clone()));
    record
        .flags
        .extend(flags_for(&cmp, ctx.settings.noise_floor));
    record.variants = records;
    record.comparison = Some(cmp);
    Ok(record)
}

fn sweep_job(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    points: &[VariantSpec],
    shape: &Shape,
    dtype: DType,
) -> Result<TrialRecord> {
    let util = UtilKernels::new(ctx.gpu, dtype)?;
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut runnable: Vec<(usize, &VariantSpec)> = Vec::new();
    for spec in points {
        let rejected = spec.validate_for(shape, dtype).err().map(|e| e.to_string());
        if rejected.is_none() {
            runnable.push((rows.len(), spec));
        }
        rows.push(SweepRow {
            point: spec.name(),
            is_reference: *spec == VariantSpec::Cublas,
            rejected,
            measures: Vec::new(),
            relative_time: None,
            vs_previous: None,
            max_abs_err: None,
        });
    }
    let specs: Vec<&VariantSpec> = runnable.iter().map(|(_, s)| *s).collect();
    let (records, path, mut flags, wrong) = check_all(ctx, &util, shape, dtype, &specs)?;
    for ((row, _), r) in runnable.iter().zip(&records) {
        rows[*row].max_abs_err = r.check.as_ref().map(|c| c.max_abs_err);
    }
    let base = |observed| TrialRecord {
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        ..TrialRecord::new(name, job, observed)
    };
    if let Some((caught, message)) = wrong {
        return Ok(TrialRecord {
            variants: records,
            table: rows,
            ..base(Observed::Wrong { caught, message })
        });
    }
    let mut relative = 0.0f64;
    for (i, pair) in runnable.windows(2).enumerate() {
        let [(prev_row, prev), (row, spec)] = [pair[0], pair[1]];
        if i == 0 {
            rows[prev_row].relative_time = Some(1.0);
        }
        let cmp = compare_in_rounds(ctx, &util, shape, dtype, [prev, spec], path)?;
        flags.extend(
            flags_for(&cmp, ctx.settings.noise_floor)
                .into_iter()
                .map(|f| format!("{}: {f}", rows[row].point)),
        );
        relative += cmp.estimate.log_mean;
        for (r, us, s) in [
            (prev_row, cmp.baseline_median_us, prev),
            (row, cmp.candidate_median_us, spec),
        ] {
            if rows[r].measures.is_empty() {
                rows[r].measures = measures_of(us, shape, s, dtype);
            }
        }
        rows[row].relative_time = Some(relative.exp());
        rows[row].vs_previous = Some(cmp.estimate);
    }
    if runnable.len() == 1 {
        rows[runnable[0].0].relative_time = Some(1.0);
    }
    Ok(TrialRecord {
        variants: records,
        table: rows,
        flags,
        ..base(Observed::Swept)
    })
}

/// Every variant checked, then each launched alone for `seconds` (batches of the rounds' length on rotating
/// operand sets, as timed everywhere else), the list `passes` times in turn; after a 300 ms warm-up of the first.
#[allow(clippy::too_many_arguments)]
fn sustain_job(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    specs: &[VariantSpec],
    shape: &Shape,
    dtype: DType,
    seconds: f64,
    passes: usize,
) -> Result<TrialRecord> {
    for s in specs {
        s.validate_for(shape, dtype)?;
    }
    let util = UtilKernels::new(ctx.gpu, dtype)?;
    let refs: Vec<&VariantSpec> = specs.iter().collect();
    let (records, path, flags, wrong) = check_all(ctx, &util, shape, dtype, &refs)?;
    let base = |observed| TrialRecord {
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        variants: records.clone(),
        flags: flags.clone(),
        ..TrialRecord::new(name, job, observed)
    };
    if let Some((caught, message)) = wrong {
        // A wrong kernel's speed is never reported.
        return Ok(base(Observed::Wrong { caught, message }));
    }
    let gpu = ctx.gpu;
    let sets = rotation_sets(shape, gpu.info.l2_bytes, dtype);
    let mem = round_memory(ctx, &util, shape, dtype, sets)?;
    let cublas = Cublas::new(gpu, &mem.ops)?.with_path(path);
    let bound: Vec<BoundVariant> = specs
        .iter()
        .map(|s| BoundVariant::new(ctx, s, &mem.ops))
        .collect::<Result<_>>()?;
    let probe = crate::measure::sustained::ClockAfter::new(gpu)?;
    let mut runs = Vec::new();
    for pass in 0..passes {
        for (spec, b) in specs.iter().zip(&bound) {
            let v = b.variant(Some(&cublas))?;
            if runs.is_empty() {
                timing::warm_up(gpu, [v, v], sets, ctx.settings.timing.warmup_ms)
                    .map_err(|e| ctx.hang.explain(e))?;
            }
            let samples = crate::measure::sustained::run(
                gpu,
                v,
                sets,
                seconds,
                crate::measure::sustained::batch_ms(seconds),
                Some(&probe),
            )
            .map_err(|e| ctx.hang.explain(e))?;
            runs.push(crate::measure::sustained::SustainedRun {
                pass,
                variant: spec.name(),
                label: v.label(),
                seconds,
                settled: crate::measure::sustained::settle(&samples, seconds),
                samples,
            });
        }
    }
    Ok(TrialRecord {
        sustained: runs,
        ..base(Observed::Sustained)
    })
}

fn check_job(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    variant: &VariantSpec,
    shape: &Shape,
    dtype: DType,
) -> Result<TrialRecord> {
    variant.validate_for(shape, dtype)?;
    if let Some(kernel) = variant.kernel() {
        kernel?.checkable(&variant.name())?;
    }
    let util = UtilKernels::new(ctx.gpu, dtype)?;
    let base = |observed| TrialRecord {
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        ..TrialRecord::new(name, job, observed)
    };
    let started = Instant::now();
    match check_all(ctx, &util, shape, dtype, &[variant]) {
        Ok((records, _, flags, wrong)) => {
            let observed = match wrong {
                Some((caught, message)) => Observed::Wrong { caught, message },
                None => Observed::Correct,
            };
            Ok(TrialRecord {
                variants: records,
                flags,
                ..base(observed)
            })
        }
        // A hang is an observation (the fault trials expect one), named with how long it took to be caught.
        Err(Error::Hang(s)) => Ok(base(Observed::Hang(format!(
            "{s} (caught after {:.2} s)",
            started.elapsed().as_secs_f64()
        )))),
        Err(e) => Err(e),
    }
}

/// Launches checked to be correct, warmed up (so clocks and caches are as the suite times them), then one
/// launch of the variant and one of cuBLAS inside the profiler range: exactly the two kernels ncu profiles.
fn profile_job(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    variant: &VariantSpec,
    shape: &Shape,
    dtype: DType,
) -> Result<TrialRecord> {
    variant.validate_for(shape, dtype)?;
    let util = UtilKernels::new(ctx.gpu, dtype)?;
    let (records, path, flags, wrong) =
        check_all(ctx, &util, shape, dtype, &[&VariantSpec::Cublas, variant])?;
    let base = |observed| TrialRecord {
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        variants: records.clone(),
        flags: flags.clone(),
        ..TrialRecord::new(name, job, observed)
    };
    if let Some((caught, message)) = wrong {
        return Ok(base(Observed::Wrong { caught, message }));
    }
    let ops = Operands::new(ctx.gpu, &util, shape, dtype, 1, ctx.seeds.next())?;
    let cublas = Cublas::new(ctx.gpu, &ops)?.with_path(path);
    let bound = BoundVariant::new(ctx, variant, &ops)?;
    let kernel = bound.variant(Some(&cublas))?;
    let warm_until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < warm_until {
        for _ in 0..5 {
            kernel.launch(ctx.gpu, 0)?;
            cublas.launch(ctx.gpu, 0)?;
        }
        ctx.gpu.synchronize()?;
    }
    ctx.gpu.profiled(|| {
        kernel.launch(ctx.gpu, 0)?;
        ctx.gpu.synchronize()?;
        cublas.launch(ctx.gpu, 0)?;
        ctx.gpu.synchronize()
    })?;
    Ok(base(Observed::Correct))
}

/// Relative Frobenius and max absolute error of 16-bit outputs of `dtype` against float64 values (a non-finite output
/// counts as an infinite error).
fn error_against(got: &[u16], want: &[f64], dtype: DType) -> (f64, f64) {
    let (mut max_err, mut sq_d, mut sq_r) = (0.0f64, 0.0, 0.0);
    for (got, want) in got.iter().map(|&x| to_f64(x, dtype)).zip(want) {
        let d = if got.is_finite() {
            (got - want).abs()
        } else {
            f64::INFINITY
        };
        max_err = max_err.max(d);
        sq_d += d * d;
        sq_r += want * want;
    }
    ((sq_d / sq_r).sqrt(), max_err)
}

/// The record of a check against float64 on the CPU: its lines as flags when it passed, as the message when not.
fn against_cpu_record(
    name: &str,
    job: &Job,
    dtype: DType,
    passed: bool,
    lines: Vec<String>,
) -> TrialRecord {
    let observed = if passed {
        Observed::Correct
    } else {
        Observed::Wrong {
            caught: Caught::WrongValues,
            message: lines.join("; "),
        }
    };
    TrialRecord {
        dtype: Some(dtype),
        flags: if passed { lines } else { Vec::new() },
        ..TrialRecord::new(name, job, observed)
    }
}

/// FP8's reference (the operands dequantized on the GPU, multiplied in fp32, rounded to bf16) against float64 on
/// the CPU over the same codes and scales, read back (`fp8::reference_gemm`), on small shapes that leave a partial
/// 128-row, 128-column and 128-deep block; and cuBLASLt's FP8 path, where its heuristic offers one, against the same.
/// Both may differ from float64 by the output's rounding only: half a bf16 ulp, a relative Frobenius error near
/// 2^-9, far inside bf16's tolerance. A shape cuBLASLt offers no algorithm for is said in the record (H112), not
/// failed: the reference does not need it.
fn fp8_reference_vs_cpu(
    ctx: &TrialContext,
    name: &str,
    job: &Job,
    dtype: DType,
) -> Result<TrialRecord> {
    use crate::measure::fp8::{reference_gemm, Quantized};
    let gpu = ctx.gpu;
    let util = UtilKernels::new(gpu, dtype)?;
    let mut lines = Vec::new();
    let mut passed = true;
    for shape in [
        Shape::new("small_a", 128, 256, 256),
        Shape::new("small_b", 200, 392, 400),
    ] {
        let ops = Operands::new(gpu, &util, &shape, dtype, 1, ctx.seeds.next())?;
        let scales = ops.fp8_scales()?;
        let operand = |codes: &crate::gpu::memory::DeviceBuffer,
                       scale_buffer: &crate::gpu::memory::DeviceBuffer,
                       scaling: crate::measure::fp8::Scaling,
                       rows: usize|
         -> Result<Quantized> {
            let mut codes: Vec<u8> = codes.read(gpu)?;
            codes.truncate(rows * shape.k);
            let mut scales: Vec<f32> = scale_buffer.read(gpu)?;
            scales.truncate(scaling.scale_count(rows, shape.k));
            Ok(Quantized {
                rows,
                k: shape.k,
                codes,
                scales,
                scaling,
            })
        };
        let a = operand(&ops.sets[0].a, &scales.a, scales.a_scaling, shape.m)?;
        let b = operand(&ops.sets[0].b, &scales.b, scales.b_scaling, shape.n)?;
        let want = reference_gemm(&a, &b);
        let cublas = Cublas::new(gpu, &ops)?;
        let c = ops.sets[0].c();
        let read_c = || crate::gpu::memory::read_raw(gpu, c, shape.m * shape.n);
        ops.sets[0].c.fill_u16(gpu, dtype.nan_bits())?;
        cublas.reference_into(gpu, &util, 0, c)?;
        let (rel, max_err) = error_against(&read_c()?, &want, dtype);
        let ok = rel <= dtype.tolerance().rel_fro;
        passed &= ok;
        lines.push(format!(
            "{} reference (fp32 on the dequantized operands): max abs error {max_err:.4}, relative Frobenius {rel:.2e} (inputs from seed {})",
            shape.name, ops.seed
        ));
        if cublas.paths().is_empty() {
            lines.push(format!(
                "{}: cuBLASLt {} offers no {} algorithm",
                shape.name,
                cublas.version(),
                dtype.name()
            ));
            continue;
        }
        ops.sets[0].c.fill_u16(gpu, dtype.nan_bits())?;
        cublas.gemm_into(gpu, CublasPath::Lt(0), 0, c)?;
        let (rel, max_err) = error_against(&read_c()?, &want, dtype);
        let ok = rel <= dtype.tolerance().rel_fro;
        passed &= ok;
        lines.push(format!(
            "{} cuBLASLt's FP8 path: max abs error {max_err:.4}, relative Frobenius {rel:.2e}",
            shape.name
        ));
    }
    Ok(against_cpu_record(name, job, dtype, passed, lines))
}

fn cublas_vs_cpu(ctx: &TrialContext, name: &str, job: &Job, dtype: DType) -> Result<TrialRecord> {
    if dtype.is_fp8() {
        return fp8_reference_vs_cpu(ctx, name, job, dtype);
    }
    let gpu = ctx.gpu;
    let util = UtilKernels::new(gpu, dtype)?;
    let mut lines = Vec::new();
    let mut passed = true;
    for shape in [
        Shape::new("small_a", 64, 128, 64),
        Shape::new("small_b", 192, 256, 320),
    ] {
        let ops = Operands::new(gpu, &util, &shape, dtype, 1, ctx.seeds.next())?;
        let cublas = Cublas::new(gpu, &ops)?;
        for path in [CublasPath::GemmEx, CublasPath::Lt(0)] {
            ops.sets[0].c.fill_u16(gpu, dtype.nan_bits())?;
            cublas.gemm_into(gpu, path, 0, ops.sets[0].c())?;
            let a: Vec<u16> = ops.sets[0].a.read(gpu)?;
            let b: Vec<u16> = ops.sets[0].b.read(gpu)?;
            let c: Vec<u16> =
                crate::gpu::memory::read_raw(gpu, ops.sets[0].c(), shape.m * shape.n)?;
            let af: Vec<f64> = a.iter().map(|&x| to_f64(x, dtype)).collect();
            let bf: Vec<f64> = b.iter().map(|&x| to_f64(x, dtype)).collect();
            let want = cpu_gemm(&af, &bf, shape.m, shape.n, shape.k);
            let (rel, max_err) = error_against(&c, &want, dtype);
            // Against exact arithmetic the only error is the output rounding: half an ulp, so rel ~ 2^-11 (fp16).
            let ok = rel <= dtype.tolerance().rel_fro;
            passed &= ok;
            lines.push(format!(
                "{} {:?}: max abs error {max_err:.4}, relative Frobenius {rel:.2e} (inputs from seed {})",
                shape.name, path, ops.seed
            ));
        }
    }
    Ok(against_cpu_record(name, job, dtype, passed, lines))
}
