//! What a GPU trial runs, as data (so it can run in a child process), and the records of what it observed; the code
//! that runs it is run.rs. A job holds no expectation: it returns what it observed, and the parent judges it
//! (expect.rs).
//!
//! A comparison checks both variants against cuBLAS on fresh random inputs, then times them in rounds: every
//! round allocates its own operands (held until the next round has allocated its own, so they land elsewhere),
//! warms up on them and times pairs of batches; the group-sequential rule in stats.rs decides when to stop.

use crate::error::{Error, Result};
use crate::gpu::arch::Arch;
use crate::gpu::compile::ResourceReport;
use crate::kernel::config::GemmConfig;
use crate::kernel::external::ExternalSpec;
use crate::kernel::loadpath::LoadPathConfig;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::skinny::SkinnyConfig;
use crate::kernel::stream::StreamConfig;
use crate::measure::check::CheckReport;
use crate::measure::measures::{self, Measure};
use crate::measure::stats::Estimate;
use crate::measure::timing::Comparison;
use crate::trial::expectation::{Caught, Expectation};
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
    /// The read-floor kernel (A and B read once, no MMA, no shared memory).
    Stream {
        name: String,
        config: StreamConfig,
    },
    /// The skinny GEMM for a few tokens (mma.sync fed straight from 16-byte loads).
    Skinny {
        name: String,
        config: SkinnyConfig,
    },
    /// A kernel brought in through a manifest (`ext:NAME[:SWITCH=VALUE,...]`, harness/kernel/external.rs).
    External {
        name: String,
        spec: ExternalSpec,
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
            VariantSpec::Gemm { name, .. }
            | VariantSpec::LoadPath { name, .. }
            | VariantSpec::Stream { name, .. }
            | VariantSpec::Skinny { name, .. }
            | VariantSpec::External { name, .. } => name.clone(),
        }
    }
    /// A kernel outside the ladder named by a command-line spec (`stream...`, `skinny...`, `ext:...`), labelled by
    /// its full spec; None for anything else.
    pub fn outside_ladder(spec: &str) -> Option<Result<VariantSpec>> {
        if let Some(external) = ExternalSpec::parse(spec) {
            return Some(external.map(|e| VariantSpec::External {
                name: spec.trim().to_string(),
                spec: e,
            }));
        }
        if let Some(skinny) = SkinnyConfig::parse(spec) {
            return Some(skinny.map(|config| VariantSpec::Skinny {
                name: config.label(),
                config,
            }));
        }
        StreamConfig::parse(spec).map(|stream| {
            stream.map(|config| VariantSpec::Stream {
                name: config.label(),
                config,
            })
        })
    }

    /// The program a kernel outside the ladder compiles to (the ladder's: `source::gemm_program`; cuBLAS: none).
    pub fn outside_ladder_program(&self, dtype: DType) -> Option<String> {
        match self {
            VariantSpec::Stream { config, .. } => Some(config.program()),
            VariantSpec::Skinny { config, .. } => Some(config.program(dtype)),
            _ => None,
        }
    }

    /// A kernel outside the ladder as `show` prints it: only what it compiles and uses (`everything`: the whole
    /// program), with the `#if`s on its switches resolved.
    pub fn outside_ladder_shown(&self, dtype: DType, everything: bool) -> Option<Result<String>> {
        let (defines, kernel, file) = match self {
            VariantSpec::External { name, spec } => return Some(spec.shown(name, dtype)),
            VariantSpec::Stream { config, .. } => (
                config.defines(),
                crate::kernel::source::STREAM_READ,
                "stream_read.cu",
            ),
            VariantSpec::Skinny { config, .. } => (
                config.defines(dtype),
                crate::kernel::source::SKINNY,
                "skinny.cu",
            ),
            _ => return None,
        };
        let header = format!("// {}\n", self.name());
        Some(
            crate::kernel::source::resolved_program_of(&defines, kernel, file, everything)
                .map(|s| header + &s),
        )
    }

    /// The GPU architecture the variant runs on: cuBLAS any the suite takes; the ladder's kernels and the load
    /// path Hopper's specific one; the read floor and the skinny GEMM any, but sm_90 with their `pdl` switch on; an
    /// external kernel what its manifest says (an unreadable manifest fails where the variant is bound, saying why).
    pub fn needs(&self) -> Arch {
        match self {
            VariantSpec::Cublas => Arch::OLDEST,
            VariantSpec::Gemm { .. } | VariantSpec::LoadPath { .. } => Arch::HOPPER,
            VariantSpec::Stream { config, .. } if config.pdl => Arch::PDL,
            VariantSpec::Skinny { config, .. } if config.pdl => Arch::PDL,
            VariantSpec::Stream { .. } | VariantSpec::Skinny { .. } => Arch::OLDEST,
            VariantSpec::External { spec, .. } => spec.load().map_or(Arch::OLDEST, |(m, _)| m.arch),
        }
    }

    /// `validate`, and for an external kernel also that its manifest lists the dtype.
    pub fn validate_for(&self, shape: &Shape, dtype: DType) -> Result<()> {
        match self {
            VariantSpec::External { spec, .. } => spec.validate(shape, dtype),
            other => other.validate(shape),
        }
    }

    /// Checks the variant can run this problem, before anything is allocated.
    pub fn validate(&self, shape: &Shape) -> Result<()> {
        match self {
            VariantSpec::Cublas => Ok(()),
            VariantSpec::Gemm { config, .. } => config.validate_shape(shape),
            VariantSpec::LoadPath { config, .. } => config.validate_shape(shape),
            VariantSpec::Stream { config, .. } => config.validate_shape(shape),
            VariantSpec::Skinny { config, .. } => config.validate_shape(shape),
            // The dtype is checked where the variant is bound (ExternalSpec::validate takes it).
            VariantSpec::External { spec, .. } => {
                let (m, values) = spec.load()?;
                let dtype = m.dtypes[0];
                m.plan(&values, shape, dtype, shape.n).map(|_| ())
            }
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

/// Figures for one variant of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "VariantRecordWire")]
pub struct VariantRecord {
    pub name: String,
    /// What actually ran: the kernel label, or the cuBLAS path chosen.
    pub label: String,
    pub config: Option<GemmConfig>,
    pub resources: Option<ResourceReport>,
    pub check: Option<CheckReport>,
    /// Timed variants: time, throughput and bandwidth (GEMMs) or fill rate (load paths).
    pub measures: Vec<Measure>,
    /// Load-path and read-floor kernels: the checksum of the bytes loaded (got, expected).
    pub checksum: Option<(u64, u64)>,
}

impl VariantRecord {
    pub fn measure(&self, name: &str) -> Option<f64> {
        measures::find(&self.measures, name)
    }
    pub fn median_us(&self) -> Option<f64> {
        self.measure(measures::TIME)
    }
}

/// A variant record as stored, also in the older form with `median_us`, `rate` and `rate_unit`.
#[derive(Deserialize)]
struct VariantRecordWire {
    name: String,
    label: String,
    config: Option<GemmConfig>,
    resources: Option<ResourceReport>,
    check: Option<CheckReport>,
    #[serde(flatten)]
    measures: measures::StoredMeasures,
    checksum: Option<(u64, u64)>,
}

impl From<VariantRecordWire> for VariantRecord {
    fn from(w: VariantRecordWire) -> VariantRecord {
        VariantRecord {
            name: w.name,
            label: w.label,
            config: w.config,
            resources: w.resources,
            check: w.check,
            measures: w.measures.into_measures(),
            checksum: w.checksum,
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
}

impl GpuTrial {
    pub fn new(name: impl Into<String>, job: Job, expectation: Expectation) -> GpuTrial {
        GpuTrial {
            name: name.into(),
            job,
            expectation,
            deadline_s: None,
        }
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
