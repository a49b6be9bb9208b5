//! What a GPU trial does, as data (so it can run in a child process), and the code that does it.
//!
//! A job opens the GPU, allocates the problem, checks every variant that computes a GEMM against cuBLAS, then
//! times the pair in interleaved batches and judges the hypothesis. It returns a record; it never panics on a
//! CUDA error (the record carries the diagnosis).

use crate::check::{self, CheckReport};
use crate::compile::ResourceReport;
use crate::config::{Fault, GemmConfig};
use crate::device::Gpu;
use crate::diag::HangWatch;
use crate::error::{Error, Result};
use crate::loadpath::{LoadPathConfig, LoadPathKernel};
use crate::operands::{rotation_sets, Operands, Util};
use crate::problem::{DType, Shape};
use crate::reference::{cpu_gemm, to_f64, Cublas, CublasPath};
use crate::stats::{Estimate, StatsSettings, Verdict};
use crate::timing::{self, Comparison, TimingSettings};
use crate::variant::{GemmKernel, Variant};
use serde::{Deserialize, Serialize};

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VariantSpec {
    /// The faster of cublasGemmEx and cuBLASLt's best algorithm for the shape.
    Cublas,
    Gemm {
        name: String,
        config: GemmConfig,
    },
    /// The load-path isolation kernel (no MMA).
    LoadPath {
        name: String,
        config: LoadPathConfig,
    },
}

impl VariantSpec {
    pub fn gemm(name: impl Into<String>, config: GemmConfig) -> VariantSpec {
        VariantSpec::Gemm {
            name: name.into(),
            config,
        }
    }
    pub fn name(&self) -> String {
        match self {
            VariantSpec::Cublas => "cuBLAS".into(),
            VariantSpec::Gemm { name, .. } | VariantSpec::LoadPath { name, .. } => name.clone(),
        }
    }
    /// Checks the variant can run this problem, before anything is allocated.
    pub fn validate(&self, shape: &Shape) -> Result<()> {
        match self {
            VariantSpec::Cublas => Ok(()),
            VariantSpec::Gemm { config, .. } => config.validate_shape(shape),
            VariantSpec::LoadPath { config, .. } => config.validate_shape(shape),
        }
    }
}

/// What a comparison trial asserts about candidate vs baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expect {
    /// This exact verdict.
    Verdict(Verdict),
    /// Candidate speed at least this fraction of the baseline's, with confidence (the interval's worst end).
    SpeedAtLeast(f64),
    /// Candidate time under this fraction of the baseline's, with confidence (a share: "the epilogue is < 15%").
    TimeRatioBelow(f64),
}

/// What a sweep asserts about its points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SweepExpect {
    /// Every neighbour comparison is NoChange.
    Flat,
    /// The fastest kernel point (by chained neighbour ratios; a cuBLAS point is a reference, not a contender) is
    /// one of these.
    FastestAmong(Vec<String>),
}

impl Expect {
    pub fn describe(&self) -> String {
        match self {
            Expect::Verdict(v) => v.word().to_string(),
            Expect::SpeedAtLeast(x) => format!("at least {x:.2}x the baseline's speed"),
            Expect::TimeRatioBelow(x) => format!("under {:.0}% of the baseline's time", x * 100.0),
        }
    }
    pub fn holds(&self, e: &Estimate) -> bool {
        match self {
            Expect::Verdict(v) => e.verdict == *v,
            Expect::SpeedAtLeast(x) => e.pairs >= 2 && 1.0 / e.ci.1 >= *x,
            Expect::TimeRatioBelow(x) => e.pairs >= 2 && e.ci.1 < *x,
        }
    }
}

/// How a fault-injection trial expects the harness to catch its bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Caught {
    /// A bounded wait gave up and named the barrier.
    Hang,
    /// Outputs left holding the poison.
    Unwritten,
    /// Values over the tolerance, reported with the max error.
    WrongValues,
    /// A guard band overwritten.
    OutOfBounds,
    /// Any failure with a diagnosis: a hang, a trap, wrong values or unwritten outputs.
    AnyDiagnosis,
    /// No diagnosis from inside (bounded waits off): the host's deadline must kill the trial's process.
    HostTimeout,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Check each GEMM variant, then time candidate against baseline and judge `expect`.
    Compare {
        baseline: VariantSpec,
        candidate: VariantSpec,
        shape: Shape,
        dtype: DType,
        expect: Expect,
        /// The seed's B200 finding for the same comparison, shown beside ours.
        seed: Option<String>,
    },
    /// Neighbouring points timed against each other in turn (point i vs point i-1), as one table.
    Sweep {
        points: Vec<VariantSpec>,
        shape: Shape,
        dtype: DType,
        expect: SweepExpect,
    },
    /// Correctness of one variant only.
    Check {
        variant: VariantSpec,
        shape: Shape,
        dtype: DType,
    },
    /// cuBLAS against a float64 CPU GEMM on small shapes: validates the reference call itself.
    CublasVsCpu { dtype: DType },
    /// A deliberately broken variant: passes when the harness catches it as `caught`.
    Fault {
        config: GemmConfig,
        fault: Fault,
        shape: Shape,
        dtype: DType,
        caught: Caught,
    },
}

/// Figures for one variant of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantRecord {
    pub name: String,
    pub label: String,
    pub config: Option<GemmConfig>,
    pub resources: Option<ResourceReport>,
    pub check: Option<CheckReport>,
    pub median_us: Option<f64>,
    pub tflops: Option<f64>,
    /// Minimum bytes moved (inputs once, output once) over the median time.
    pub gbps: Option<f64>,
    /// Load-path kernels: staged-bytes checksum (got, expected) and the rate bytes land in shared memory.
    pub checksum: Option<(u64, u64)>,
    pub smem_fill_tbps: Option<f64>,
}

/// Everything a trial measured and concluded; one element of a results file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub name: String,
    pub hypothesis: String,
    pub seed_finding: Option<String>,
    pub passed: bool,
    /// One line: the verdict and figures, or what went wrong.
    pub outcome: String,
    pub shape: Option<Shape>,
    pub dtype: Option<DType>,
    pub variants: Vec<VariantRecord>,
    pub comparison: Option<Comparison>,
    /// Speed of the candidate relative to the baseline (baseline time / candidate time).
    pub speedup: Option<f64>,
    /// Warnings a reader should weigh (throttling, noise far above the floor, ptxas warnings).
    pub flags: Vec<String>,
    /// Sweeps: one row per point.
    pub table: Vec<SweepRow>,
    pub duration_s: f64,
}

impl TrialRecord {
    pub fn failed(name: &str, hypothesis: &str, message: String) -> TrialRecord {
        TrialRecord {
            name: name.to_string(),
            hypothesis: hypothesis.to_string(),
            seed_finding: None,
            passed: false,
            outcome: message,
            shape: None,
            dtype: None,
            variants: Vec::new(),
            comparison: None,
            speedup: None,
            flags: Vec::new(),
            table: Vec::new(),
            duration_s: 0.0,
        }
    }
}

impl Job {
    pub fn hypothesis(&self) -> String {
        match self {
            Job::Compare {
                baseline,
                candidate,
                shape,
                expect,
                ..
            } => {
                format!(
                    "{} vs {} on {}: {}",
                    candidate.name(),
                    baseline.name(),
                    shape.name,
                    expect.describe()
                )
            }
            Job::Check { variant, shape, .. } => {
                format!("{} on {}: matches cuBLAS", variant.name(), shape.name)
            }
            Job::Sweep {
                points,
                shape,
                expect,
                ..
            } => format!(
                "sweep {} on {}: {}",
                points
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                shape.name,
                match expect {
                    SweepExpect::Flat => "flat (every neighbour no change)".to_string(),
                    SweepExpect::FastestAmong(v) => format!("fastest is one of {}", v.join(", ")),
                }
            ),
            Job::CublasVsCpu { dtype } => {
                format!("cuBLAS ({}) matches a float64 CPU GEMM", dtype.name())
            }
            Job::Fault { fault, caught, .. } => format!("fault {fault:?} is caught as {caught:?}"),
        }
    }
}

/// The per-process state every GPU job starts from.
struct Bench {
    gpu: Gpu,
    hang: HangWatch,
}

fn variant_record(
    name: &str,
    label: String,
    k: Option<&GemmKernel>,
    check: Option<CheckReport>,
) -> VariantRecord {
    VariantRecord {
        name: name.to_string(),
        label,
        config: k.map(|k| k.config.clone()),
        resources: k.map(|k| k.report.clone()),
        check,
        median_us: None,
        tflops: None,
        gbps: None,
        checksum: None,
        smem_fill_tbps: None,
    }
}

fn with_time(mut r: VariantRecord, us: f64, shape: &Shape) -> VariantRecord {
    r.median_us = Some(us);
    r.tflops = Some(shape.flops() / (us * 1e-6) / 1e12);
    r.gbps = Some(shape.min_bytes(2) / (us * 1e-6) / 1e9);
    r
}

/// Picks the faster cuBLAS path for this problem, timing each once; the choice is remembered on disk.
pub fn choose_cublas_path(
    gpu: &Gpu,
    cublas: &Cublas,
    shape: &Shape,
    dtype: DType,
) -> Result<CublasPath> {
    let key = format!(
        "{}|{}|{}x{}x{}|{}|{}",
        gpu.info.name,
        shape.name,
        shape.m,
        shape.n,
        shape.k,
        dtype.name(),
        cublas.version()
    );
    let file = crate::compile::cache_dir().join("cublas-paths.json");
    let mut known: std::collections::BTreeMap<String, CublasPath> = std::fs::read_to_string(&file)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    if let Some(p) = known.get(&key) {
        if cublas.paths().contains(p) {
            return Ok(*p);
        }
    }
    let c = cublas.operands_c();
    let mut best = (f64::INFINITY, CublasPath::GemmEx);
    for path in cublas.paths() {
        let time = |n: u32| -> Result<f64> {
            let start = std::time::Instant::now();
            for _ in 0..n {
                cublas.gemm_into(gpu, path, 0, c)?;
            }
            gpu.synchronize()?;
            Ok(start.elapsed().as_secs_f64() / f64::from(n))
        };
        if time(3).is_err() {
            continue; // an algorithm the heuristic offered but that cannot run here
        }
        let n = ((0.005 / time(3)?).ceil() as u32).clamp(3, 200);
        let t = time(n)?.min(time(n)?);
        if t < best.0 {
            best = (t, path);
        }
    }
    known.insert(key, best.1);
    let _ = std::fs::create_dir_all(crate::compile::cache_dir());
    let _ = std::fs::write(&file, serde_json::to_string_pretty(&known)?);
    Ok(best.1)
}

/// Runs a job in this process and returns its record (errors become failed records with the diagnosis).
pub fn run(name: &str, job: &Job) -> TrialRecord {
    let started = std::time::Instant::now();
    let hypothesis = job.hypothesis();
    let mut record = match Gpu::open().and_then(|gpu| {
        let hang = HangWatch::new(&gpu)?;
        let bench = Bench { gpu, hang };
        run_on(&bench, name, job)
    }) {
        Ok(r) => r,
        Err(e) => TrialRecord::failed(name, &hypothesis, e.to_string()),
    };
    record.duration_s = started.elapsed().as_secs_f64();
    record
}

fn run_on(bench: &Bench, name: &str, job: &Job) -> Result<TrialRecord> {
    match job {
        Job::Compare {
            baseline,
            candidate,
            shape,
            dtype,
            expect,
            seed,
        } => compare_job(
            bench,
            name,
            job,
            baseline,
            candidate,
            shape,
            *dtype,
            *expect,
            seed.clone(),
        ),
        Job::Check {
            variant,
            shape,
            dtype,
        } => {
            variant.validate(shape)?;
            let util = Util::new(&bench.gpu, *dtype)?;
            let ops = Operands::new(&bench.gpu, &util, shape, *dtype, 1)?;
            let cublas = Cublas::new(&bench.gpu, &ops)?;
            let built = Built::new(bench, variant, &ops, &bench.hang)?;
            let rec = built.checked_record(bench, &util, &ops, &cublas, variant)?;
            if rec.check.is_none() && rec.checksum.is_none() {
                return Err(Error::Config(format!(
                    "{} computes no GEMM to check against cuBLAS",
                    variant.name()
                )));
            }
            let passed = problem(&rec).is_none();
            let outcome = problem(&rec)
                .or_else(|| rec.check.as_ref().map(|c| c.summary()))
                .unwrap_or_else(|| "staged-bytes checksum matches".into());
            Ok(TrialRecord {
                passed,
                outcome,
                shape: Some(shape.clone()),
                dtype: Some(*dtype),
                variants: vec![rec],
                ..TrialRecord::failed(name, &job.hypothesis(), String::new())
            })
        }
        Job::CublasVsCpu { dtype } => cublas_vs_cpu(bench, name, job, *dtype),
        Job::Sweep {
            points,
            shape,
            dtype,
            expect,
        } => sweep_job(bench, name, job, points, shape, *dtype, expect),
        Job::Fault {
            config,
            fault,
            shape,
            dtype,
            caught,
        } => fault_job(
            bench,
            name,
            job,
            &config.clone().with_fault(*fault),
            shape,
            *dtype,
            *caught,
        ),
    }
}

/// One side of a comparison, built and bound to the problem's operands.
enum Built<'a> {
    Cublas,
    Gemm(GemmKernel<'a>),
    LoadPath(LoadPathKernel<'a>),
}

impl<'a> Built<'a> {
    fn new(
        bench: &Bench,
        spec: &VariantSpec,
        ops: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Built<'a>> {
        Ok(match spec {
            VariantSpec::Cublas => Built::Cublas,
            VariantSpec::Gemm { name, config } => {
                Built::Gemm(GemmKernel::new(&bench.gpu, name, config, ops, hang)?)
            }
            VariantSpec::LoadPath { name, config } => {
                Built::LoadPath(LoadPathKernel::new(&bench.gpu, name, config, ops, hang)?)
            }
        })
    }

    fn variant<'b>(&'b self, cublas: &'b Cublas) -> &'b dyn Variant {
        match self {
            Built::Cublas => cublas,
            Built::Gemm(k) => k,
            Built::LoadPath(k) => k,
        }
    }

    /// Checks the variant (GEMMs against cuBLAS, load paths by checksum); the record says what was found.
    fn checked_record(
        &self,
        bench: &Bench,
        util: &Util,
        ops: &Operands,
        cublas: &Cublas,
        spec: &VariantSpec,
    ) -> Result<VariantRecord> {
        let gpu = &bench.gpu;
        Ok(match self {
            Built::Cublas => variant_record(&spec.name(), cublas.label(), None, None),
            Built::Gemm(k) => {
                let check = if k.config.computes_gemm() {
                    Some(check::check(gpu, util, ops, cublas, &bench.hang, k)?)
                } else {
                    None
                };
                variant_record(&spec.name(), k.label(), Some(k), check)
            }
            Built::LoadPath(k) => {
                let mut r = variant_record(&spec.name(), k.label(), None, None);
                r.checksum = Some(k.check(gpu, util)?);
                r
            }
        })
    }

    fn bytes_landed(&self, shape: &Shape) -> Option<f64> {
        match self {
            Built::LoadPath(k) => Some(k.config.bytes_per_launch(shape)),
            _ => None,
        }
    }

    fn warnings(&self) -> Vec<String> {
        match self {
            Built::Gemm(k) => k
                .report
                .warnings
                .iter()
                .filter(|w| !w.contains("Remark"))
                .map(|w| format!("{}: ptxas {w}", k.label))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// What is wrong with a checked variant, if anything.
fn problem(r: &VariantRecord) -> Option<String> {
    if let Some(c) = r.check.as_ref().filter(|c| !c.passed) {
        return Some(format!("{}: {}", r.name, c.summary()));
    }
    match r.checksum {
        Some((got, want)) if got != want => Some(format!(
            "{}: staged-bytes checksum {got} differs from the expected {want}",
            r.name
        )),
        _ => None,
    }
}

/// The per-problem state shared by comparisons and sweeps.
struct Prepared<'a> {
    util: Util,
    ops: &'a Operands,
    cublas: Cublas<'a>,
}

fn prepare<'a>(
    bench: &Bench,
    util: Util,
    ops: &'a Operands,
    specs: &[&VariantSpec],
) -> Result<Prepared<'a>> {
    let mut cublas = Cublas::new(&bench.gpu, ops)?;
    if specs.iter().any(|s| **s == VariantSpec::Cublas) {
        let path = choose_cublas_path(&bench.gpu, &cublas, &ops.shape, ops.dtype)?;
        cublas = cublas.with_path(path);
    }
    Ok(Prepared { util, ops, cublas })
}

fn alloc(bench: &Bench, shape: &Shape, dtype: DType) -> Result<(Util, Operands)> {
    let util = Util::new(&bench.gpu, dtype)?;
    let sets = rotation_sets(shape, bench.gpu.info.l2_bytes);
    let ops = Operands::new(&bench.gpu, &util, shape, dtype, sets)?;
    Ok((util, ops))
}

/// Noise guards for a finished comparison.
fn flags_for(cmp: &Comparison) -> Vec<String> {
    let mut flags = Vec::new();
    let e = &cmp.estimate;
    if cmp.low_clock_pairs > 0 {
        flags.push(format!(
            "{} of {} pairs ran with the SM clock under 90% of the median ({:.0} MHz): throttled or disturbed",
            cmp.low_clock_pairs,
            cmp.log_ratios.len(),
            cmp.sm_clock_median_mhz.unwrap_or(0.0)
        ));
    }
    let noise_floor = crate::stats::env_f64("GEMM_ABLATE_NOISE_FLOOR", 0.01);
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

fn timed(mut r: VariantRecord, us: f64, shape: &Shape, landed: Option<f64>) -> VariantRecord {
    r = with_time(r, us, shape);
    if let Some(bytes) = landed {
        r.tflops = None;
        r.gbps = None;
        r.smem_fill_tbps = Some(bytes / (us * 1e-6) / 1e12);
    }
    r
}

#[allow(clippy::too_many_arguments)]
fn compare_job(
    bench: &Bench,
    name: &str,
    job: &Job,
    baseline: &VariantSpec,
    candidate: &VariantSpec,
    shape: &Shape,
    dtype: DType,
    expect: Expect,
    seed: Option<String>,
) -> Result<TrialRecord> {
    // Validate both variants before any allocation or launch.
    baseline.validate(shape)?;
    candidate.validate(shape)?;
    let (util, ops) = alloc(bench, shape, dtype)?;
    let p = prepare(bench, util, &ops, &[baseline, candidate])?;
    let (bb, bc) = (
        Built::new(bench, baseline, &ops, &bench.hang)?,
        Built::new(bench, candidate, &ops, &bench.hang)?,
    );
    let mut records = vec![
        bb.checked_record(bench, &p.util, &ops, &p.cublas, baseline)?,
        bc.checked_record(bench, &p.util, &ops, &p.cublas, candidate)?,
    ];
    let mut flags: Vec<String> = [bb.warnings(), bc.warnings()].concat();
    let base = TrialRecord {
        seed_finding: seed,
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        ..TrialRecord::failed(name, &job.hypothesis(), String::new())
    };
    let wrong: Vec<String> = records.iter().filter_map(problem).collect();
    if !wrong.is_empty() {
        // A wrong kernel never gets a speed verdict.
        return Ok(TrialRecord {
            outcome: format!("wrong result, not timed: {}", wrong.join("; ")),
            variants: records,
            ..base
        });
    }
    let settings = TimingSettings::from_env();
    let sets = p.ops.sets.len();
    let cmp = timing::compare(
        &bench.gpu,
        bb.variant(&p.cublas),
        bc.variant(&p.cublas),
        sets,
        &settings,
        StatsSettings::from_env(),
    )
    .map_err(|e| bench.hang.explain(e))?;
    let e = &cmp.estimate;
    records[0] = timed(
        records[0].clone(),
        cmp.baseline_median_us,
        shape,
        bb.bytes_landed(shape),
    );
    records[1] = timed(
        records[1].clone(),
        cmp.candidate_median_us,
        shape,
        bc.bytes_landed(shape),
    );
    flags.extend(flags_for(&cmp));
    let passed = expect.holds(e);
    let outcome = format!(
        "{}: {:.1} us vs {}: {:.1} us; {}; expected {} -> {}",
        records[1].name,
        cmp.candidate_median_us,
        records[0].name,
        cmp.baseline_median_us,
        e.summary(),
        expect.describe(),
        if passed { "confirmed" } else { "NOT confirmed" }
    );
    Ok(TrialRecord {
        passed,
        outcome,
        speedup: Some(e.speedup()),
        variants: records,
        comparison: Some(cmp),
        flags,
        ..base
    })
}

/// One row of a sweep's table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub point: String,
    /// Why the point could not run (constraint violated), if it could not.
    pub rejected: Option<String>,
    pub median_us: Option<f64>,
    /// TFLOP/s for GEMMs, TB/s landed in shared memory for load paths.
    pub rate: Option<f64>,
    pub rate_unit: String,
    /// Time relative to the first point that ran (chained through neighbour pairs).
    pub relative_time: Option<f64>,
    /// Verdict and speed against the previous point that ran.
    pub vs_previous: Option<Verdict>,
    pub speedup_vs_previous: Option<f64>,
    pub max_abs_err: Option<f64>,
}

fn sweep_job(
    bench: &Bench,
    name: &str,
    job: &Job,
    points: &[VariantSpec],
    shape: &Shape,
    dtype: DType,
    expect: &SweepExpect,
) -> Result<TrialRecord> {
    let (util, ops) = alloc(bench, shape, dtype)?;
    let refs: Vec<&VariantSpec> = points.iter().collect();
    let p = prepare(bench, util, &ops, &refs)?;
    let mut rows = Vec::new();
    let mut built = Vec::new();
    let mut records = Vec::new();
    for spec in points {
        let row = |rejected: Option<String>| SweepRow {
            point: spec.name(),
            rejected,
            median_us: None,
            rate: None,
            rate_unit: String::new(),
            relative_time: None,
            vs_previous: None,
            speedup_vs_previous: None,
            max_abs_err: None,
        };
        if let Err(e) = spec.validate(shape) {
            rows.push(row(Some(e.to_string())));
            continue;
        }
        let b = Built::new(bench, spec, &ops, &bench.hang)?;
        let r = b.checked_record(bench, &p.util, &ops, &p.cublas, spec)?;
        if let Some(problem) = problem(&r) {
            return Ok(TrialRecord {
                outcome: format!("wrong result, not timed: {problem}"),
                variants: vec![r],
                ..TrialRecord::failed(name, &job.hypothesis(), String::new())
            });
        }
        let mut rw = row(None);
        rw.max_abs_err = r.check.as_ref().map(|c| c.max_abs_err);
        rows.push(rw);
        records.push(r);
        built.push((rows.len() - 1, b));
    }
    let settings = TimingSettings::from_env();
    let mut flags = Vec::new();
    let mut relative = 1.0;
    for (i, (row, b)) in built.iter().enumerate() {
        if i == 0 {
            rows[*row].relative_time = Some(1.0);
            continue;
        }
        let (prev_row, prev) = &built[i - 1];
        let cmp = timing::compare(
            &bench.gpu,
            prev.variant(&p.cublas),
            b.variant(&p.cublas),
            ops.sets.len(),
            &settings,
            StatsSettings::from_env(),
        )
        .map_err(|e| bench.hang.explain(e))?;
        flags.extend(
            flags_for(&cmp)
                .into_iter()
                .map(|f| format!("{}: {f}", rows[*row].point)),
        );
        relative *= cmp.estimate.ratio;
        let fill = |r: &mut SweepRow, us: f64, b: &Built| {
            if r.median_us.is_none() {
                r.median_us = Some(us);
                match b.bytes_landed(shape) {
                    Some(bytes) => {
                        r.rate = Some(bytes / (us * 1e-6) / 1e12);
                        r.rate_unit = "TB/s".into();
                    }
                    None => {
                        r.rate = Some(shape.flops() / (us * 1e-6) / 1e12);
                        r.rate_unit = "TFLOP/s".into();
                    }
                }
            }
        };
        fill(&mut rows[*prev_row], cmp.baseline_median_us, prev);
        fill(&mut rows[*row], cmp.candidate_median_us, b);
        rows[*row].relative_time = Some(relative);
        rows[*row].vs_previous = Some(cmp.estimate.verdict);
        rows[*row].speedup_vs_previous = Some(cmp.estimate.speedup());
    }
    let ran: Vec<&SweepRow> = rows.iter().filter(|r| r.relative_time.is_some()).collect();
    let cublas = VariantSpec::Cublas.name();
    let fastest = ran
        .iter()
        .filter(|r| r.point != cublas)
        .min_by(|a, b| {
            a.relative_time
                .unwrap()
                .total_cmp(&b.relative_time.unwrap())
        })
        .map(|r| r.point.clone());
    let passed = match expect {
        SweepExpect::Flat => ran
            .iter()
            .skip(1)
            .all(|r| r.vs_previous == Some(Verdict::NoChange)),
        SweepExpect::FastestAmong(names) => fastest.as_ref().is_some_and(|f| names.contains(f)),
    };
    let verdicts: Vec<String> = ran
        .iter()
        .skip(1)
        .map(|r| {
            format!(
                "{}: {}",
                r.point,
                r.vs_previous.map(|v| v.word()).unwrap_or("-")
            )
        })
        .collect();
    Ok(TrialRecord {
        passed,
        outcome: format!(
            "fastest {}; against the previous point: {} -> {}",
            fastest.unwrap_or_default(),
            verdicts.join(", "),
            if passed { "confirmed" } else { "NOT confirmed" }
        ),
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        variants: records,
        flags,
        table: rows,
        ..TrialRecord::failed(name, &job.hypothesis(), String::new())
    })
}

fn cublas_vs_cpu(bench: &Bench, name: &str, job: &Job, dtype: DType) -> Result<TrialRecord> {
    let gpu = &bench.gpu;
    let util = Util::new(gpu, dtype)?;
    let mut lines = Vec::new();
    let mut passed = true;
    for shape in [
        Shape::new("small_a", 64, 128, 64),
        Shape::new("small_b", 192, 256, 320),
    ] {
        let ops = Operands::new(gpu, &util, &shape, dtype, 1)?;
        let cublas = Cublas::new(gpu, &ops)?;
        for path in [CublasPath::GemmEx, CublasPath::Lt(0)] {
            ops.sets[0].poison(gpu, dtype)?;
            cublas.gemm_into(gpu, path, 0, ops.sets[0].c())?;
            let a: Vec<u16> = ops.sets[0].a.read(gpu)?;
            let b: Vec<u16> = ops.sets[0].b.read(gpu)?;
            let c: Vec<u16> = crate::memory::read_raw(gpu, ops.sets[0].c(), shape.m * shape.n)?;
            let af: Vec<f64> = a.iter().map(|&x| to_f64(x, dtype)).collect();
            let bf: Vec<f64> = b.iter().map(|&x| to_f64(x, dtype)).collect();
            let want = cpu_gemm(&af, &bf, shape.m, shape.n, shape.k);
            let (mut max_err, mut sq_d, mut sq_r) = (0.0f64, 0.0, 0.0);
            for (got, want) in c.iter().map(|&x| to_f64(x, dtype)).zip(&want) {
                let d = if got.is_finite() {
                    (got - want).abs()
                } else {
                    f64::INFINITY
                };
                max_err = max_err.max(d);
                sq_d += d * d;
                sq_r += want * want;
            }
            let rel = (sq_d / sq_r).sqrt();
            // Against exact arithmetic the only error is the output rounding: half an ulp, so rel ~ 2^-11 (fp16).
            let ok = rel <= dtype.tolerance().rel_fro;
            passed &= ok;
            lines.push(format!(
                "{} {:?}: max abs error {max_err:.4}, relative Frobenius {rel:.2e}",
                shape.name, path
            ));
        }
    }
    Ok(TrialRecord {
        passed,
        outcome: lines.join("; "),
        dtype: Some(dtype),
        ..TrialRecord::failed(name, &job.hypothesis(), String::new())
    })
}

fn fault_job(
    bench: &Bench,
    name: &str,
    job: &Job,
    config: &GemmConfig,
    shape: &Shape,
    dtype: DType,
    caught: Caught,
) -> Result<TrialRecord> {
    let gpu = &bench.gpu;
    let util = Util::new(gpu, dtype)?;
    let ops = Operands::new(gpu, &util, shape, dtype, 1)?;
    let cublas = Cublas::new(gpu, &ops)?;
    let k = GemmKernel::new(gpu, name, config, &ops, &bench.hang)?;
    let started = std::time::Instant::now();
    let result = check::check(gpu, &util, &ops, &cublas, &bench.hang, &k);
    let waited = started.elapsed().as_secs_f64();
    let (what, diagnosis) = match &result {
        Err(Error::Hang(s)) => (Caught::Hang, format!("hang: {s}")),
        Err(e) => (Caught::AnyDiagnosis, e.to_string()),
        Ok(c) if c.passed => {
            return Ok(TrialRecord {
                outcome: format!(
                    "NOT caught: the faulty kernel passed the check ({})",
                    c.summary()
                ),
                ..TrialRecord::failed(name, &job.hypothesis(), String::new())
            })
        }
        Ok(c) if c.guard_damage > 0 => (Caught::OutOfBounds, c.summary()),
        Ok(c) if c.unwritten > 0 => (Caught::Unwritten, c.summary()),
        Ok(c) => (Caught::WrongValues, c.summary()),
    };
    let passed = caught == Caught::AnyDiagnosis || caught == what;
    Ok(TrialRecord {
        passed,
        outcome: format!(
            "caught as {what:?} after {waited:.2} s (expected {caught:?}): {diagnosis}"
        ),
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        variants: vec![variant_record(name, k.label(), Some(&k), result.ok())],
        ..TrialRecord::failed(name, &job.hypothesis(), String::new())
    })
}
