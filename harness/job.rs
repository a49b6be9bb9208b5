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
    Gemm { name: String, config: GemmConfig },
}

impl VariantSpec {
    pub fn gemm(name: impl Into<String>, config: GemmConfig) -> VariantSpec {
        VariantSpec::Gemm { name: name.into(), config }
    }
    pub fn name(&self) -> String {
        match self {
            VariantSpec::Cublas => "cuBLAS".into(),
            VariantSpec::Gemm { name, .. } => name.clone(),
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
}

impl Expect {
    pub fn describe(&self) -> String {
        match self {
            Expect::Verdict(v) => v.word().to_string(),
            Expect::SpeedAtLeast(x) => format!("at least {x:.2}x the baseline's speed"),
        }
    }
    pub fn holds(&self, e: &Estimate) -> bool {
        match self {
            Expect::Verdict(v) => e.verdict == *v,
            Expect::SpeedAtLeast(x) => e.pairs >= 2 && 1.0 / e.ci.1 >= *x,
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
    /// Correctness of one variant only.
    Check { variant: VariantSpec, shape: Shape, dtype: DType },
    /// cuBLAS against a float64 CPU GEMM on small shapes: validates the reference call itself.
    CublasVsCpu { dtype: DType },
    /// A deliberately broken variant: passes when the harness catches it as `caught`.
    Fault { config: GemmConfig, fault: Fault, shape: Shape, dtype: DType, caught: Caught },
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
            duration_s: 0.0,
        }
    }
}

impl Job {
    pub fn hypothesis(&self) -> String {
        match self {
            Job::Compare { baseline, candidate, shape, expect, .. } => {
                format!("{} vs {} on {}: {}", candidate.name(), baseline.name(), shape.name, expect.describe())
            }
            Job::Check { variant, shape, .. } => format!("{} on {}: matches cuBLAS", variant.name(), shape.name),
            Job::CublasVsCpu { dtype } => format!("cuBLAS ({}) matches a float64 CPU GEMM", dtype.name()),
            Job::Fault { fault, caught, .. } => format!("fault {fault:?} is caught as {caught:?}"),
        }
    }
}

/// The per-process state every GPU job starts from.
struct Bench {
    gpu: Gpu,
    hang: HangWatch,
}

fn variant_record(name: &str, label: String, k: Option<&GemmKernel>, check: Option<CheckReport>) -> VariantRecord {
    VariantRecord {
        name: name.to_string(),
        label,
        config: k.map(|k| k.config.clone()),
        resources: k.map(|k| k.report.clone()),
        check,
        median_us: None,
        tflops: None,
        gbps: None,
    }
}

fn with_time(mut r: VariantRecord, us: f64, shape: &Shape) -> VariantRecord {
    r.median_us = Some(us);
    r.tflops = Some(shape.flops() / (us * 1e-6) / 1e12);
    r.gbps = Some(shape.min_bytes(2) / (us * 1e-6) / 1e9);
    r
}

/// Picks the faster cuBLAS path for this problem, timing each once; the choice is remembered on disk.
pub fn choose_cublas_path(gpu: &Gpu, cublas: &Cublas, shape: &Shape, dtype: DType) -> Result<CublasPath> {
    let key = format!("{}|{}|{}x{}x{}|{}|{}", gpu.info.name, shape.name, shape.m, shape.n, shape.k, dtype.name(), cublas.version());
    let file = crate::compile::cache_dir().join("cublas-paths.json");
    let mut known: std::collections::BTreeMap<String, CublasPath> =
        std::fs::read_to_string(&file).ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
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
        Job::Compare { baseline, candidate, shape, dtype, expect, seed } => {
            compare_job(bench, name, job, baseline, candidate, shape, *dtype, *expect, seed.clone())
        }
        Job::Check { variant, shape, dtype } => {
            let gpu = &bench.gpu;
            let util = Util::new(gpu, *dtype)?;
            let ops = Operands::new(gpu, &util, shape, *dtype, 1)?;
            let cublas = Cublas::new(gpu, &ops)?;
            let (rec, passed) = match variant {
                VariantSpec::Cublas => {
                    let c = check::check(gpu, &util, &ops, &cublas, &bench.hang, &cublas)?;
                    let p = c.passed;
                    (variant_record("cuBLAS", cublas.label(), None, Some(c)), p)
                }
                VariantSpec::Gemm { name: vname, config } => {
                    let k = GemmKernel::new(gpu, vname, config, &ops, &bench.hang)?;
                    let c = check::check(gpu, &util, &ops, &cublas, &bench.hang, &k)?;
                    let p = c.passed;
                    (variant_record(vname, k.label(), Some(&k), Some(c)), p)
                }
            };
            let outcome = rec.check.as_ref().map(|c| c.summary()).unwrap_or_default();
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
        Job::Fault { config, fault, shape, dtype, caught } => {
            fault_job(bench, name, job, &config.clone().with_fault(*fault), shape, *dtype, *caught)
        }
    }
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
    let gpu = &bench.gpu;
    // Validate both configurations before any allocation or launch.
    for spec in [baseline, candidate] {
        if let VariantSpec::Gemm { config, .. } = spec {
            config.validate_shape(shape)?;
        }
    }
    let util = Util::new(gpu, dtype)?;
    let sets = rotation_sets(shape, gpu.info.l2_bytes);
    let ops = Operands::new(gpu, &util, shape, dtype, sets)?;
    let mut cublas = Cublas::new(gpu, &ops)?;
    if baseline == &VariantSpec::Cublas || candidate == &VariantSpec::Cublas {
        let path = choose_cublas_path(gpu, &cublas, shape, dtype)?;
        cublas = cublas.with_path(path);
    }
    let build = |spec: &VariantSpec| -> Result<Option<GemmKernel>> {
        match spec {
            VariantSpec::Cublas => Ok(None),
            VariantSpec::Gemm { name, config } => Ok(Some(GemmKernel::new(gpu, name, config, &ops, &bench.hang)?)),
        }
    };
    let (kb, kc) = (build(baseline)?, build(candidate)?);
    let mut records = Vec::new();
    let mut flags = Vec::new();
    for (spec, k) in [(baseline, &kb), (candidate, &kc)] {
        let check = match k {
            Some(k) if k.config.computes_gemm() => Some(check::check(gpu, &util, &ops, &cublas, &bench.hang, k)?),
            _ => None,
        };
        if let Some(k) = k {
            flags.extend(k.report.warnings.iter().filter(|w| !w.contains("Remark")).map(|w| format!("{}: ptxas {w}", k.label)));
        }
        let label = k.as_ref().map(|k| k.label()).unwrap_or_else(|| cublas.label());
        records.push(variant_record(&spec.name(), label, k.as_ref(), check));
    }
    let wrong: Vec<String> = records
        .iter()
        .filter_map(|r| r.check.as_ref().filter(|c| !c.passed).map(|c| format!("{}: {}", r.name, c.summary())))
        .collect();
    let base = TrialRecord {
        seed_finding: seed,
        shape: Some(shape.clone()),
        dtype: Some(dtype),
        ..TrialRecord::failed(name, &job.hypothesis(), String::new())
    };
    if !wrong.is_empty() {
        // A wrong kernel never gets a speed verdict.
        return Ok(TrialRecord { outcome: format!("wrong result, not timed: {}", wrong.join("; ")), variants: records, ..base });
    }
    let vb: &dyn Variant = kb.as_ref().map(|k| k as &dyn Variant).unwrap_or(&cublas);
    let vc: &dyn Variant = kc.as_ref().map(|k| k as &dyn Variant).unwrap_or(&cublas);
    let settings = TimingSettings::from_env();
    let cmp = timing::compare(gpu, vb, vc, sets, &settings, StatsSettings::from_env()).map_err(|e| bench.hang.explain(e))?;
    let e = &cmp.estimate;
    records[0] = with_time(records[0].clone(), cmp.baseline_median_us, shape);
    records[1] = with_time(records[1].clone(), cmp.candidate_median_us, shape);
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
    if cmp.throttle_reasons.iter().any(|r| r.contains("thermal") || r.contains("hardware")) {
        flags.push(format!("verdict reached under throttling: {}", cmp.throttle_reasons.join(", ")));
    }
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

fn cublas_vs_cpu(bench: &Bench, name: &str, job: &Job, dtype: DType) -> Result<TrialRecord> {
    let gpu = &bench.gpu;
    let util = Util::new(gpu, dtype)?;
    let mut lines = Vec::new();
    let mut passed = true;
    for shape in [Shape::new("small_a", 64, 128, 64), Shape::new("small_b", 192, 256, 320)] {
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
                let d = if got.is_finite() { (got - want).abs() } else { f64::INFINITY };
                max_err = max_err.max(d);
                sq_d += d * d;
                sq_r += want * want;
            }
            let rel = (sq_d / sq_r).sqrt();
            // Against exact arithmetic the only error is the output rounding: half an ulp, so rel ~ 2^-11 (fp16).
            let ok = rel <= dtype.tolerance().rel_fro;
            passed &= ok;
            lines.push(format!("{} {:?}: max abs error {max_err:.4}, relative Frobenius {rel:.2e}", shape.name, path));
        }
    }
    Ok(TrialRecord { passed, outcome: lines.join("; "), dtype: Some(dtype), ..TrialRecord::failed(name, &job.hypothesis(), String::new()) })
}

fn fault_job(bench: &Bench, name: &str, job: &Job, config: &GemmConfig, shape: &Shape, dtype: DType, caught: Caught) -> Result<TrialRecord> {
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
                outcome: format!("NOT caught: the faulty kernel passed the check ({})", c.summary()),
                ..TrialRecord::failed(name, &job.hypothesis(), String::new())
            })
        }
        Ok(c) if c.guard_damage > 0 => (Caught::OutOfBounds, c.summary()),
        Ok(c) if c.unwritten > 0 => (Caught::Unwritten, c.summary()),
        Ok(c) => (Caught::AnyDiagnosis, c.summary()),
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
