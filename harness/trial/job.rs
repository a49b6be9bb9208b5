//! What a GPU trial runs, as data (so it can run in a child process), and the records of what it observed; the code
//! that runs it is run.rs. A job holds no expectation: it returns what it observed, and the parent judges it
//! (expect.rs).
//!
//! A comparison checks both variants against cuBLAS on fresh random inputs, then times them in rounds: every
//! round allocates its own operands (held until the next round has allocated its own, so they land elsewhere),
//! warms up on them and times pairs of batches; the group-sequential rule in stats.rs decides when to stop.

use crate::error::{Error, Result};
use crate::families::{self, Family, Kernel};
use crate::gpu::arch::Arch;
use crate::kernel::config::GemmConfig;
use crate::kernel::problem::{DType, Shape};
use crate::measure::measures::{self, Measure};
pub use crate::measure::record::VariantRecord;
use crate::measure::stats::Estimate;
use crate::measure::timing::Comparison;
use crate::trial::expectation::{Caught, Expectation};
use serde::{Deserialize, Serialize};

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VariantSpec {
    /// The faster of cublasGemmEx and cuBLASLt's best algorithm for the shape.
    Cublas,
    /// The ladder's GEMM (harness/kernel/), the built-in family.
    Gemm { name: String, config: GemmConfig },
    /// A kernel of a family in harness/families/ (the read floor, the skinny GEMM, the load path, an external
    /// kernel): the family's name, the variant's label, and its configuration as the family stores it.
    Family {
        family: String,
        name: String,
        config: serde_json::Value,
    },
}

impl VariantSpec {
    pub fn gemm(name: impl Into<String>, config: GemmConfig) -> VariantSpec {
        VariantSpec::Gemm {
            name: name.into(),
            config,
        }
    }

    /// A variant of `family`'s kernel `config`, labelled `name`.
    pub fn of(
        family: &dyn Family,
        name: impl Into<String>,
        config: &impl Serialize,
    ) -> VariantSpec {
        VariantSpec::Family {
            family: family.name().to_string(),
            name: name.into(),
            config: families::stored(config),
        }
    }

    pub fn name(&self) -> String {
        match self {
            VariantSpec::Cublas => "cuBLAS".into(),
            VariantSpec::Gemm { name, .. } | VariantSpec::Family { name, .. } => name.clone(),
        }
    }

    /// A kernel outside the ladder named by a command-line spec (`stream...`, `skinny...`, `ext:...`: whatever a
    /// family in harness/families/ reads), labelled as its family labels it; None where no family takes it.
    pub fn outside_ladder(spec: &str) -> Option<Result<VariantSpec>> {
        families::parse(spec).map(|read| {
            read.map(|(family, name, config)| VariantSpec::Family {
                family: family.name().to_string(),
                name,
                config,
            })
        })
    }

    /// The kernel behind the variant (None for cuBLAS): every family's answers to what the suite asks of a
    /// variant (harness/families/mod.rs).
    pub fn kernel(&self) -> Option<Result<Box<dyn Kernel>>> {
        match self {
            VariantSpec::Cublas => None,
            VariantSpec::Gemm { config, .. } => Some(Ok(Box::new(config.clone()))),
            VariantSpec::Family { family, config, .. } => {
                Some(families::family(family).and_then(|f| f.open(config)))
            }
        }
    }

    /// The ladder's configuration, where the variant is the ladder's.
    pub fn gemm_config(&self) -> Option<&GemmConfig> {
        match self {
            VariantSpec::Gemm { config, .. } => Some(config),
            _ => None,
        }
    }

    /// The GPU architecture the variant runs on: cuBLAS any the suite takes; a kernel what its family says (one
    /// that cannot be opened fails where it is bound, saying why).
    pub fn needs(&self) -> Arch {
        match self.kernel() {
            Some(Ok(k)) => k.needs(),
            _ => Arch::OLDEST,
        }
    }

    /// `validate`, and the dtype too (an external kernel's manifest lists the ones it takes).
    pub fn validate_for(&self, shape: &Shape, dtype: DType) -> Result<()> {
        match self.kernel() {
            None => Ok(()),
            Some(k) => k?.validate(shape, dtype),
        }
    }

    /// Checks the variant can run this problem, before anything is allocated.
    pub fn validate(&self, shape: &Shape) -> Result<()> {
        match self.kernel() {
            None => Ok(()),
            Some(k) => k?.validate_shape(shape),
        }
    }
}

/// What a GPU trial runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Check each GEMM variant, then time candidate against baseline in rounds.
    Compare {
        baseline: VariantSpec,
        candidate: VariantSpec,
        shape: Shape,
        dtype: DType,
    },
    /// Neighbouring points timed against each other in turn (point i vs point i-1), as one table.
    Sweep {
        points: Vec<VariantSpec>,
        shape: Shape,
        dtype: DType,
    },
    /// Correctness of one variant (a deliberately broken one too: what the check finds is the observation).
    Check {
        variant: VariantSpec,
        shape: Shape,
        dtype: DType,
    },
    /// cuBLAS against a float64 CPU GEMM on small shapes: validates the reference call itself.
    CublasVsCpu { dtype: DType },
    /// Check each variant, then launch each alone, back to back, for `seconds`, the list `passes` times in turn:
    /// the time, SM clock, power and energy each settles at under the power cap (measure/sustained.rs).
    Sustain {
        variants: Vec<VariantSpec>,
        shape: Shape,
        dtype: DType,
        seconds: f64,
        passes: usize,
    },
    /// Check the variant, warm it and cuBLAS up, then launch each once inside a profiler range (for Nsight
    /// Compute's `--profile-from-start off`).
    Profile {
        variant: VariantSpec,
        shape: Shape,
        dtype: DType,
    },
}

impl Job {
    /// The variants the job runs, cuBLAS among them where it is timed or profiled beside one.
    pub fn variants(&self) -> Vec<&VariantSpec> {
        match self {
            Job::Compare {
                baseline,
                candidate,
                ..
            } => vec![baseline, candidate],
            Job::Sweep { points, .. } => points.iter().collect(),
            Job::Sustain { variants, .. } => variants.iter().collect(),
            Job::Check { variant, .. } => vec![variant],
            Job::Profile { variant, .. } => vec![variant, &VariantSpec::Cublas],
            Job::CublasVsCpu { .. } => vec![&VariantSpec::Cublas],
        }
    }

    /// The dtype of its operands.
    pub fn dtype(&self) -> DType {
        match self {
            Job::Compare { dtype, .. }
            | Job::Sweep { dtype, .. }
            | Job::Check { dtype, .. }
            | Job::CublasVsCpu { dtype }
            | Job::Sustain { dtype, .. }
            | Job::Profile { dtype, .. } => *dtype,
        }
    }

    /// Why the GPU `gpu` of compute capability `cc` cannot run the job (the first variant it cannot run, and what
    /// that needs), or None.
    pub fn refused_by(&self, gpu: &str, cc: (i32, i32)) -> Option<String> {
        self.variants().into_iter().find_map(|v| {
            v.needs()
                .refused_by(gpu, cc)
                .map(|why| format!("{} {why}", v.name()))
        })
    }

    /// What runs, in words.
    pub fn describe(&self) -> String {
        match self {
            Job::Compare {
                baseline,
                candidate,
                shape,
                dtype,
            } => format!(
                "{} vs {} on {} ({})",
                candidate.name(),
                baseline.name(),
                shape.name,
                dtype.name()
            ),
            Job::Sweep { points, shape, .. } => format!(
                "sweep {} on {}",
                points
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                shape.name
            ),
            Job::Check {
                variant,
                shape,
                dtype,
            } => format!(
                "{} on {} ({}) against cuBLAS",
                variant.name(),
                shape.name,
                dtype.name()
            ),
            Job::CublasVsCpu { dtype } => {
                format!("cuBLAS ({}) against a float64 CPU GEMM", dtype.name())
            }
            Job::Sustain {
                variants,
                shape,
                dtype,
                seconds,
                passes,
            } => format!(
                "{} on {} ({}), each alone for {seconds} s, {passes} passes",
                variants
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                shape.name,
                dtype.name()
            ),
            Job::Profile {
                variant,
                shape,
                dtype,
            } => format!(
                "{} and cuBLAS on {} ({}), one launch each under the profiler",
                variant.name(),
                shape.name,
                dtype.name()
            ),
        }
    }
}

/// What a trial saw: typed, so one judge decides pass or fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Observed {
    /// Both variants correct and timed (the whole comparison is in the record).
    Compared(Estimate),
    /// Every point of a sweep correct and timed (rows in the record's table).
    Swept,
    /// Every variant correct and run alone for its seconds (the runs in the record's `sustained`).
    Sustained,
    /// Every checked variant matches the reference.
    Correct,
    /// A check failed: wrong values, unwritten outputs or an out-of-bounds store. Never timed.
    Wrong { caught: Caught, message: String },
    /// A bounded wait gave up: the sentence naming barrier, phase and block.
    Hang(String),
    /// The host deadline killed the trial's process.
    HostTimeout(String),
    /// Anything else that stopped the trial (a CUDA error, a bad configuration, a process that died).
    Error(String),
}

impl Observed {
    pub fn kind(&self) -> &'static str {
        match self {
            Observed::Compared(_) => "a comparison",
            Observed::Swept => "a sweep",
            Observed::Sustained => "sustained runs",
            Observed::Correct => "a correct result",
            Observed::Wrong { .. } => "a wrong result",
            Observed::Hang(_) => "a hang",
            Observed::HostTimeout(_) => "a host timeout",
            Observed::Error(_) => "an error",
        }
    }
    pub(crate) fn from_error(e: Error) -> Observed {
        match e {
            Error::Hang(s) => Observed::Hang(s),
            Error::Timeout(s) => Observed::HostTimeout(s),
            other => Observed::Error(other.to_string()),
        }
    }
}

/// One row of a sweep's table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "SweepRowWire")]
pub struct SweepRow {
    pub point: String,
    /// A cuBLAS point is shown for reference and is not a contender.
    pub is_reference: bool,
    /// Why the point could not run (constraint violated), if it could not.
    pub rejected: Option<String>,
    pub measures: Vec<Measure>,
    /// Time relative to the first point that ran (chained through neighbour comparisons).
    pub relative_time: Option<f64>,
    /// The comparison against the previous point that ran.
    pub vs_previous: Option<Estimate>,
    pub max_abs_err: Option<f64>,
}

impl SweepRow {
    pub fn median_us(&self) -> Option<f64> {
        measures::find(&self.measures, measures::TIME)
    }
}

/// A sweep row as stored, also in the older form with `median_us`, `rate` and `rate_unit`.
#[derive(Deserialize)]
struct SweepRowWire {
    point: String,
    is_reference: bool,
    rejected: Option<String>,
    #[serde(flatten)]
    measures: measures::StoredMeasures,
    relative_time: Option<f64>,
    vs_previous: Option<Estimate>,
    max_abs_err: Option<f64>,
}

impl From<SweepRowWire> for SweepRow {
    fn from(w: SweepRowWire) -> SweepRow {
        SweepRow {
            point: w.point,
            is_reference: w.is_reference,
            rejected: w.rejected,
            measures: w.measures.into_measures(),
            relative_time: w.relative_time,
            vs_previous: w.vs_previous,
            max_abs_err: w.max_abs_err,
        }
    }
}

/// A GPU trial: a name (hierarchical, `ablation::swizzle::square4096`), what it runs, and what it expects.
pub struct GpuTrial {
    pub name: String,
    pub job: Job,
    pub expectation: Expectation,
    /// Overrides the default per-trial deadline.
    pub deadline_s: Option<f64>,
    /// Why this trial waits for its first run on a GPU: it is ignored with that reason unless
    /// GEMM_ABLATE_FIRST_RUNS=1, so that code no GPU has run yet cannot turn the whole suite red before anyone has
    /// seen it work (docs/running.md). None: an ordinary trial.
    pub waiting: Option<String>,
    /// The GPU model its expectation is about, where it was drawn from that model's measurements (a hypothesis
    /// file's `gpu`): on another model the trial is skipped with that reason. None: any GPU.
    pub gpu: Option<String>,
}

impl GpuTrial {
    pub fn new(name: impl Into<String>, job: Job, expectation: Expectation) -> GpuTrial {
        GpuTrial {
            name: name.into(),
            job,
            expectation,
            deadline_s: None,
            waiting: None,
            gpu: None,
        }
    }

    /// This trial waits for its first run on a GPU, for the reason given (`waiting`).
    pub fn waiting_for_first_run(mut self, why: impl Into<String>) -> GpuTrial {
        self.waiting = Some(why.into());
        self
    }
    /// This trial's expectation is about one GPU model (`gpu`), as `nvidia-smi` names it.
    pub fn about_gpu(mut self, model: impl Into<String>) -> GpuTrial {
        self.gpu = Some(model.into());
        self
    }
    pub fn with_deadline_s(mut self, seconds: f64) -> GpuTrial {
        self.deadline_s = Some(seconds);
        self
    }
}

/// Everything a trial measured and concluded; one element of a results file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub name: String,
    /// What ran.
    pub description: String,
    /// What was expected, with its provenance (attached by the trial list).
    pub expectation: Option<Expectation>,
    pub observed: Observed,
    pub passed: bool,
    /// The judge's line: what was seen against what was expected.
    pub judgement: String,
    pub shape: Option<Shape>,
    pub dtype: Option<DType>,
    pub variants: Vec<VariantRecord>,
    pub comparison: Option<Comparison>,
    /// Sweeps: one row per point.
    pub table: Vec<SweepRow>,
    /// Warnings a reader should weigh (throttling, noise far above the floor, ptxas warnings).
    pub flags: Vec<String>,
    pub duration_s: f64,
    /// The GPU the trial's process ran on (both sides of every pair ran there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<crate::gpu::device::GpuSeat>,
    /// Sustained runs: each variant alone, pass by pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sustained: Vec<crate::measure::sustained::SustainedRun>,
    /// Where a worker process's time went: seconds since its job started at the end of each phase (the GPU
    /// opened, the variants checked, the first warm-up, the rounds), each worker's marks prefixed with its number
    /// where a comparison was spread over several (tools/suite_cost.py sums them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<(String, f64)>,
}

impl TrialRecord {
    pub fn new(name: &str, job: &Job, observed: Observed) -> TrialRecord {
        TrialRecord {
            name: name.to_string(),
            description: job.describe(),
            expectation: None,
            observed,
            passed: false,
            judgement: String::new(),
            shape: None,
            dtype: None,
            variants: Vec::new(),
            comparison: None,
            table: Vec::new(),
            flags: Vec::new(),
            duration_s: 0.0,
            gpu: None,
            sustained: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// Candidate speed relative to the baseline (baseline time / candidate time), for comparisons.
    pub fn speedup(&self) -> Option<f64> {
        match &self.observed {
            Observed::Compared(e) => Some(e.speedup()),
            _ => None,
        }
    }
}
