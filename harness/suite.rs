//! The glue between a list of trials and libtest-mimic: each GPU trial runs in its own child process, one at a
//! time per GPU (spread over every GPU chosen, both sides of a pair always on the same one), and is ignored
//! (with the reason) where there is no GPU, or where this GPU cannot run its kernels or is not the model its pin
//! was measured on; CPU trials always run. The parent judges every record
//! against the trial's expectation, prints it, and writes the run as one results file.

use crate::gpu::device;
use crate::kernel::problem::DType;
use crate::report::agreement;
use crate::report::results::{Environment, RunFile};
use crate::settings::Settings;
use crate::trial::expect::Expectation;
use crate::trial::job::GpuTrial;
use crate::trial::job::{Job, TrialRecord, VariantSpec};
use crate::trial::subprocess;
use crate::trial::workers;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// The NVRTC programs a variant compiles to (none for cuBLAS, nor for a kernel built otherwise), each with a name
/// for its compile trial.
fn programs_of(spec: &VariantSpec, dtype: DType) -> Vec<(String, String)> {
    match spec.kernel() {
        Some(Ok(k)) => k.programs(&spec.name(), dtype).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Whether a variant's module is built otherwise than from one NVRTC program (an external kernel's).
fn built_alone(spec: &VariantSpec, dtype: DType) -> bool {
    match spec.kernel() {
        Some(Ok(k)) => k.programs(&spec.name(), dtype).is_none(),
        Some(Err(_)) => true, // its compile trial says why it cannot be opened
        None => false,
    }
}

/// The variants a job builds, and its dtype.
fn specs(job: &Job) -> (Vec<&VariantSpec>, DType) {
    (job.variants(), job.dtype())
}

/// One CPU trial per distinct kernel program the GPU trials use: it must compile for sm_90a with NVRTC, without
/// register spills or local memory, and without a compiler warning (check_resources). Without NVRTC they
/// are ignored with the reason, unless GEMM_ABLATE_REQUIRE_NVRTC=1 (CI), where they fail.
pub fn compile_trials(gpu_trials: &[GpuTrial]) -> Vec<Trial> {
    compile_trials_with(gpu_trials, &[])
}

/// `compile_trials`, plus kernels no trial runs but a user can get (every kernel `auto` picks for some shape).
pub fn compile_trials_with(gpu_trials: &[GpuTrial], more: &[(VariantSpec, DType)]) -> Vec<Trial> {
    let mut seen: Vec<String> = Vec::new();
    let mut trials = Vec::new();
    let jobs = gpu_trials
        .iter()
        .map(|t| specs(&t.job))
        .chain(more.iter().map(|(v, dtype)| (vec![v], *dtype)));
    // Sustained runs also launch the clock probe after every batch.
    let probe = gpu_trials
        .iter()
        .any(|t| matches!(t.job, Job::Sustain { .. }))
        .then(|| {
            (
                "clock_after".to_string(),
                crate::measure::sustained::program(),
            )
        });
    let all = jobs
        .flat_map(|(specs, dtype)| {
            specs
                .into_iter()
                .flat_map(move |s| programs_of(s, dtype))
                .collect::<Vec<_>>()
        })
        .chain(probe)
        // Every timed batch waits behind the stream hold.
        .chain(std::iter::once((
            "hold_stream".to_string(),
            crate::gpu::hold::SOURCE.to_string(),
        )));
    let mut programs: Vec<(String, String)> = Vec::new();
    for (name, program) in all {
        if seen.contains(&program) {
            continue;
        }
        seen.push(program.clone());
        programs.push((name, program));
    }
    let built_alone: Vec<(&VariantSpec, DType)> = gpu_trials
        .iter()
        .map(|t| specs(&t.job))
        .flat_map(|(specs, dtype)| specs.into_iter().map(move |s| (s, dtype)))
        .chain(more.iter().map(|(v, dtype)| (v, *dtype)))
        .filter(|(s, dtype)| built_alone(s, *dtype))
        .collect();
    trials.extend(build_trials(&built_alone));
    trials.push(jobs_reach_their_workers(gpu_trials));
    let programs = Arc::new(programs);
    let ahead: Arc<OnceLock<()>> = Arc::default();
    for index in 0..programs.len() {
        let (programs, ahead) = (programs.clone(), ahead.clone());
        let name = programs[index].0.clone();
        trials.push(Trial::ignorable_test(
            format!("compile::{name}"),
            move || {
                ahead.get_or_init(|| compile_ahead(&programs));
                let program = &programs[index].1;
                if let Some(skip) = nvrtc_missing()? {
                    return Ok(skip);
                }
                let compiled = crate::gpu::compile::compile(&name, program)
                    .map_err(|e| Failed::from(e.to_string()))?;
                check_resources(&compiled.report).map_err(Failed::from)?;
                Ok(Completion::Completed)
            },
        ));
    }
    trials
}

/// The ladder's rungs with FP8 (e4m3) operands and a bf16 output (issue 40, H113, H114): each rung, its k-block
/// twice as many elements so that a stage holds the same bytes (the unswizzled rungs' core matrices too),
/// with per-tensor scales; then the top rung's other FP8 variants: row-wise scales (H116), two-level accumulation
/// (H115) and block scales (H117). One CPU trial each (`compile::fp8::rung10_stmatrix`,
/// `compile::fp8::block::rung10_bn128`): NVRTC builds it, with wgmma k32 on e4m3 operands, clean in ptxas's report
/// (no spills) as every compiled kernel must be. A variant that fails validation fails its trial.
pub fn fp8_compile_trials() -> Vec<Trial> {
    use crate::kernel::ladder::Rung;
    use crate::kernel::problem::Scales;
    // The utility program of FP8 problems: its fill (e4m3 codes) and reference (dequantize, round) kernels.
    let util = Trial::ignorable_test("compile::fp8::util", || {
        if let Some(skip) = nvrtc_missing()? {
            return Ok(skip);
        }
        let program = crate::kernel::source::program(
            &crate::kernel::source::util_defines(DType::FP8),
            crate::kernel::source::UTIL,
        );
        let compiled = crate::gpu::compile::compile("util_e4m3", &program)
            .map_err(|e| Failed::from(e.to_string()))?;
        let entries: Vec<&str> = compiled.entries.iter().map(|(n, _)| n.as_str()).collect();
        for kernel in [
            "fill_uniform_e4m3",
            "dequantize_e4m3",
            "round_f32",
            "compare",
        ] {
            if !entries.contains(&kernel) {
                return Err(Failed::from(format!(
                    "util_e4m3 has no {kernel}: {entries:?}"
                )));
            }
        }
        Ok(Completion::Completed)
    });
    // Each variant as a spec, parsed inside its trial: a spec that does not parse fails that trial alone.
    let rungs = Rung::ALL.iter().filter_map(|rung| {
        let config = rung.config();
        config
            .clone()
            .with_tile_k(2 * config.tile_k)
            .validate_fp8(Scales::Tensor)
            .ok()?;
        let spec = format!("{}:tile_k={}", rung.name(), 2 * config.tile_k);
        Some((rung.name().to_string(), spec, DType::FP8))
    });
    let spec = |changes: &str| format!("10:tile_k=128{changes}");
    let variants = [
        ("row::rung10_stmatrix", "", DType::E4M3(Scales::Row)),
        ("row_f16::rung10_stmatrix", "", DType::E4M3F16(Scales::Row)),
        ("promote::rung10_bn128", ",bn=128,promote=1", DType::FP8),
        ("promote4::rung10_bn128", ",bn=128,promote=4", DType::FP8),
    ]
    .map(|(name, changes, dtype)| (name.to_string(), spec(changes), dtype));
    // Block scales: A's read by every thread, carried by the stage, or loaded a k-block ahead (H120, H136); B's one
    // value a warpgroup (H138).
    let block = [
        ("block", ""),
        ("block_stage", ",scale_loads=stage"),
        ("block_prefetch", ",scale_prefetch=1"),
        ("block_one_b", ",one_b_block=1"),
        ("block_one_b_overlap", ",one_b_block=1,promote_overlap=1"),
        (
            "block_stage_prefetch",
            ",scale_loads=stage,scale_prefetch=1",
        ),
    ]
    .map(|(name, more)| {
        let changes = format!(",bn=128,promote=1{more}");
        (
            format!("{name}::rung10_bn128"),
            spec(&changes),
            DType::E4M3(Scales::Block),
        )
    });
    let compiles = rungs
        .chain(variants)
        .chain(block)
        .map(|(name, spec, dtype)| {
            Trial::ignorable_test(format!("compile::fp8::{name}"), move || {
                let defines = crate::kernel::ladder::parse_spec(&spec)
                    .and_then(|config| config.fp8_defines(dtype))
                    .map_err(|e| Failed::from(format!("{spec} ({}): {e}", dtype.name())))?;
                // The FP8 path is the one compiled: the header's type section resolves to e4m3 and k32.
                let types = crate::kernel::source::resolve_conditionals(
                    crate::kernel::source::PRIMITIVES,
                    &defines,
                )
                .map_err(|e| Failed::from(e.to_string()))?;
                if !types.contains("#define WGMMA_AB \"e4m3\"")
                    || !types.contains("#define MMA_K 32")
                {
                    return Err(Failed::from(
                        "the FP8 defines did not select the e4m3 wgmma",
                    ));
                }
                if let Some(skip) = nvrtc_missing()? {
                    return Ok(skip);
                }
                let program = crate::kernel::source::program(&defines, crate::kernel::source::GEMM);
                let label = format!("fp8_{}", name.replace("::", "_"));
                let compiled = crate::gpu::compile::compile(&label, &program)
                    .map_err(|e| Failed::from(e.to_string()))?;
                check_resources(&compiled.report).map_err(Failed::from)?;
                Ok(Completion::Completed)
            })
        });
    std::iter::once(util).chain(compiles).collect()
}

/// The GPUs besides Hopper that the portable kernels are compiled for on the CPU: the oldest the suite takes, an
/// Ada card, and both Blackwell generations.
pub const PORTABLE_TARGETS: [&str; 4] = ["sm_80", "sm_89", "sm_100", "sm_120"];

/// What runs on any GPU the suite takes: the utility kernels (fill, compare, guard check, sum), the stream hold, the
/// clock probe, and the read floor and skinny GEMM with `pdl` off. One CPU trial per program and target
/// (`compile::portable::util_fp16::sm_89`) checks that NVRTC builds it, so that a change which needs a newer GPU
/// fails here rather than on a user's.
pub fn portable_compile_trials() -> Vec<Trial> {
    use crate::families::{skinny::config::SkinnyConfig, stream::config::StreamConfig};
    use crate::kernel::source;
    let skinny = SkinnyConfig {
        pdl: false,
        ..Default::default()
    };
    let programs: Vec<(&str, String)> = vec![
        (
            "util_fp16",
            source::program(&source::util_defines(DType::F16), source::UTIL),
        ),
        (
            "util_bf16",
            source::program(&source::util_defines(DType::BF16), source::UTIL),
        ),
        ("hold_stream", crate::gpu::hold::SOURCE.to_string()),
        ("clock_after", crate::measure::sustained::program()),
        (
            "stream_pdl0",
            StreamConfig {
                pdl: false,
                ..Default::default()
            }
            .program(),
        ),
        ("skinny_pdl0_fp16", skinny.program(DType::F16)),
        ("skinny_pdl0_bf16", skinny.program(DType::BF16)),
    ];
    let mut trials = Vec::new();
    for (name, program) in programs {
        let program = Arc::new(program);
        for target in PORTABLE_TARGETS {
            let (program, label) = (program.clone(), format!("{name}_{target}"));
            let arch = crate::gpu::arch::Arch::parse(target).expect("a valid target");
            trials.push(Trial::ignorable_test(
                format!("compile::portable::{name}::{target}"),
                move || {
                    if let Some(skip) = nvrtc_missing()? {
                        return Ok(skip);
                    }
                    crate::gpu::compile::compile_for(arch, &label, &program, &[], &[])
                        .map(|_| Completion::Completed)
                        .map_err(|e| Failed::from(e.to_string()))
                },
            ));
        }
    }
    trials
}

/// Without NVRTC a compile trial is ignored with how to get it, or fails where GEMM_ABLATE_REQUIRE_NVRTC=1 (CI).
fn nvrtc_missing() -> std::result::Result<Option<Completion>, Failed> {
    if crate::gpu::probe::nvrtc_available() {
        return Ok(None);
    }
    let why = "libnvrtc.so.13 not found: pip install nvidia-cuda-nvrtc==13.0.88 and put its lib folder on LD_LIBRARY_PATH";
    if crate::settings::nvrtc_required() {
        return Err(Failed::from(format!(
            "GEMM_ABLATE_REQUIRE_NVRTC=1 and {why}"
        )));
    }
    Ok(Some(Completion::ignored_with(why)))
}

/// One failing trial per hypothesis file that could not become trials (trial/hypothesis_files.rs): its message
/// names the file and the field; the other trials, and the listing, are untouched.
pub fn broken_hypothesis_trials(broken: Vec<crate::trial::hypothesis_files::Broken>) -> Vec<Trial> {
    broken
        .into_iter()
        .map(|b| {
            let message = b.message;
            Trial::test(b.name, move || Err(Failed::from(message)))
        })
        .collect()
}

/// A CPU trial: every GPU trial's job reaches a worker process as it was built (a worker reads it back from JSON),
/// and every kernel it names opens there as its family stored it.
fn jobs_reach_their_workers(gpu_trials: &[GpuTrial]) -> Trial {
    let jobs: Vec<(String, Job)> = gpu_trials
        .iter()
        .map(|t| (t.name.clone(), t.job.clone()))
        .collect();
    Trial::test("jobs::reach_their_workers", move || {
        for (name, job) in &jobs {
            let text = serde_json::to_string(job).map_err(|e| format!("{name}: {e}"))?;
            let back: Job = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
            if back != *job {
                return Err(format!("{name}: the job read back differs from the one sent").into());
            }
            for v in back.variants() {
                if let Some(Err(e)) = v.kernel() {
                    return Err(format!("{name}: {}: {e}", v.name()).into());
                }
            }
        }
        Ok(())
    })
}

/// One compile trial per distinct kernel and dtype whose module is not one NVRTC program (an external kernel's,
/// `compile::ext:NAME...::fp16`): its family builds it on the CPU as `build` would (an external kernel's manifest
/// read and checked, its switches and dtype against it, the module built: NVRTC for a source, the checksum and
/// entry for a cubin), so a bad configuration fails on a machine without a GPU.
fn build_trials(kernels: &[(&VariantSpec, DType)]) -> Vec<Trial> {
    let mut seen: Vec<(String, DType)> = Vec::new();
    let mut trials = Vec::new();
    for (variant, dtype) in kernels {
        let name = variant.name();
        if seen.contains(&(name.clone(), *dtype)) {
            continue;
        }
        seen.push((name.clone(), *dtype));
        let (variant, dtype) = ((*variant).clone(), *dtype);
        trials.push(Trial::ignorable_test(
            format!("compile::{name}::{}", dtype.name()),
            move || {
                let Some(kernel) = variant.kernel() else {
                    return Ok(Completion::Completed);
                };
                let kernel = kernel.map_err(|e| Failed::from(e.to_string()))?;
                if kernel.needs_nvrtc() {
                    if let Some(skip) = nvrtc_missing()? {
                        return Ok(skip);
                    }
                }
                kernel
                    .build(&name, dtype)
                    .map_err(|e| Failed::from(e.to_string()))?;
                Ok(Completion::Completed)
            },
        ));
    }
    trials
}

/// with its log, in its own trial. Nothing is timed while this runs: the compile trials come before the GPU trials.
fn compile_ahead(programs: &[(String, String)]) {
    if !crate::gpu::probe::nvrtc_available() {
        return;
    }
    let args = Arguments::from_args();
    let chosen: Vec<&(String, String)> = programs
        .iter()
        .filter(|(name, _)| selected(&args, &format!("compile::{name}")))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(chosen.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some((name, program)) =
                    chosen.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let _ = crate::gpu::compile::compile(name, program);
                }
            });
        }
    });
}

/// One CPU trial per rung, and one for each kernel outside the ladder (`stream`, `skinny`): what `show` prints
/// (only the primitives and helpers the kernel uses) must itself compile with NVRTC, so nothing the kernel needs was
/// left out of the listing.
pub fn show_trials() -> Vec<Trial> {
    let rungs = crate::kernel::ladder::Rung::ALL.iter().map(|&rung| {
        let shown = move |everything| {
            let defines = rung.config().defines(DType::F16);
            crate::kernel::source::resolved_program(
                &defines,
                crate::kernel::source::GEMM,
                everything,
            )
        };
        (rung.name(), "gemm_kernel", Box::new(shown) as Box<Shown>)
    });
    // The two kernels' defaults, and the switches that add code paths of their own (H90, H91).
    let outside = [
        "stream",
        "skinny",
        "stream:mmas=8",
        "skinny:ring=4,unroll=2,split=4",
    ]
    .map(|spec| {
        let shown = move |everything| {
            let v = VariantSpec::outside_ladder(spec).expect("a kernel outside the ladder")?;
            let kernel = v.kernel().expect("a kernel outside the ladder")?;
            kernel.shown(&v.name(), DType::F16, everything)
        };
        let entry = if spec.starts_with("stream") {
            "stream_read_kernel"
        } else {
            "skinny_kernel"
        };
        (spec.to_string(), entry, Box::new(shown) as Box<Shown>)
    });
    // FP8's code paths: row-wise scales in the TMA epilogue, and block scales promoted with the scales carried by
    // the stages (the header's bulk copy, the promotion's shared loads).
    let fp8 = [
        (
            "fp8::row::rung10",
            "10:tile_k=128",
            crate::kernel::problem::Scales::Row,
        ),
        (
            "fp8::block_stage::rung10",
            "10:tile_k=128,bn=128,promote=1,scale_loads=stage",
            crate::kernel::problem::Scales::Block,
        ),
    ]
    .map(|(name, spec, scales)| {
        let shown = move |everything| {
            let dtype = DType::E4M3(scales);
            let config = crate::kernel::ladder::parse_spec(spec)?;
            crate::kernel::source::resolved_program(
                &config.fp8_defines(dtype)?,
                crate::kernel::source::GEMM,
                everything,
            )
        };
        (
            name.to_string(),
            "gemm_kernel",
            Box::new(shown) as Box<Shown>,
        )
    });
    rungs
        .chain(outside)
        .chain(fp8)
        .map(|(name, entry, shown)| {
            Trial::ignorable_test(format!("show::{name}"), move || {
                let listed = shown(false).map_err(|e| Failed::from(e.to_string()))?;
                let full = shown(true).map_err(|e| Failed::from(e.to_string()))?;
                if listed.lines().count() >= full.lines().count() || !listed.contains(entry) {
                    return Err(Failed::from("show printed no less than the whole program"));
                }
                if !crate::gpu::probe::nvrtc_available() {
                    if crate::settings::nvrtc_required() {
                        return Err(Failed::from(
                            "GEMM_ABLATE_REQUIRE_NVRTC=1 and libnvrtc.so.13 not found",
                        ));
                    }
                    return Ok(Completion::ignored_with("libnvrtc.so.13 not found"));
                }
                crate::gpu::compile::compile(&format!("show_{name}"), &listed)
                    .map_err(|e| Failed::from(e.to_string()))?;
                Ok(Completion::Completed)
            })
        })
        .collect()
}

/// What `show` prints for one kernel: only what it uses (false) or the whole program (true).
type Shown = dyn Fn(bool) -> crate::error::Result<String> + Send + Sync;

/// A kernel's compile report is clean: it was read at all, no spills, no stack, and no warning at all, the
/// source's (NVRTC's front end) or ptxas's (wgmma serialization, an ignored setmaxnreg).
pub fn check_resources(
    report: &crate::gpu::compile::ResourceReport,
) -> std::result::Result<(), String> {
    if report.functions.is_empty() {
        return Err(
            "the ptxas resource report could not be read (no function lines in the NVRTC log): spills and registers are unknown"
                .into(),
        );
    }
    if report.spills() > 0 {
        return Err(format!(
            "register spills or stack frame: {:?}",
            report.functions
        ));
    }
    if !report.warnings.is_empty() {
        return Err(format!("compiler warnings: {:?}", report.warnings));
    }
    Ok(())
}

/// Whether libtest will run this trial: the filter (substring, or exact) and no `--skip` match.
fn selected(args: &Arguments, name: &str) -> bool {
    let matches = |f: &str| {
        if args.exact {
            name == f
        } else {
            name.contains(f)
        }
    };
    args.filter.as_deref().is_none_or(matches) && !args.skip.iter().any(|s| matches(s))
}

/// Trial k of n, elapsed time and an estimate of what is left, on stderr.
pub struct Progress {
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    started: std::time::Instant,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        Progress {
            total,
            done: std::sync::atomic::AtomicUsize::new(0),
            started: std::time::Instant::now(),
        }
    }

    /// Marks the start of the next trial and prints where the run stands.
    pub fn start(&self, name: &str) {
        let k = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        eprintln!(
            "{}",
            crate::report::text::progress_line(k, self.total, self.started.elapsed(), name)
        );
    }
}

/// The GPUs the trials run on. A trial takes one for as long as its processes run and gives it back, so no
/// two trials ever share a GPU.
pub struct DevicePool {
    free: Mutex<Vec<usize>>,
    freed: Condvar,
}

impl DevicePool {
    pub fn new(devices: &[usize]) -> DevicePool {
        DevicePool {
            free: Mutex::new(devices.iter().rev().copied().collect()),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free GPU and holds it until the returned guard is dropped.
    pub fn take(&self) -> DeviceGuard<'_> {
        let mut free = self.free.lock().unwrap();
        loop {
            if let Some(d) = free.pop() {
                return DeviceGuard {
                    pool: self,
                    device: d,
                };
            }
            free = self.freed.wait(free).unwrap();
        }
    }
}

pub struct DeviceGuard<'a> {
    pool: &'a DevicePool,
    pub device: usize,
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        self.pool.free.lock().unwrap().push(self.device);
        self.pool.freed.notify_one();
    }
}

/// The GPUs to spread the trials over: GEMM_ABLATE_DEVICES, else every device this process sees; each must exist,
/// be supported (compute capability 8.0 or later) and be of one model, so that a trial's verdict does not depend
/// on which of them it drew.
fn choose_devices(settings: &Settings) -> std::result::Result<Vec<device::GpuSeat>, String> {
    let count = device::count().map_err(|e| e.to_string())?;
    let chosen = settings
        .devices
        .clone()
        .unwrap_or_else(|| (0..count).collect());
    let mut seats: Vec<device::GpuSeat> = Vec::new();
    for d in chosen {
        if d >= count {
            return Err(format!(
                "GEMM_ABLATE_DEVICES names device {d}, but this process sees {count} CUDA devices (0 to {})",
                count.saturating_sub(1)
            ));
        }
        let info = device::query(d).map_err(|e| e.to_string())?;
        device::check_supported(&info).map_err(|e| format!("device {d}: {e}"))?;
        if let Some(first) = seats.first().filter(|s| s.name != info.name) {
            return Err(format!(
                "device {} is {} and device {d} is {}: a run spreads its trials over GPUs of one model \
                 (choose them with GEMM_ABLATE_DEVICES)",
                first.index, first.name, info.name
            ));
        }
        seats.push(device::GpuSeat {
            index: d,
            name: info.name,
            pci_bus_id: info.pci_bus_id,
        });
    }
    Ok(seats)
}

/// Why a GPU trial does not run on this GPU, where it does not: a kernel it runs needs another architecture, or
/// its expectation is a value pinned on another GPU model (a pin is a measurement of one model: docs/pinning.md).
#[derive(Clone, Debug, PartialEq)]
enum Skip {
    Arch(String),
    PinnedElsewhere(String),
    /// Its expectation is about another GPU model (a hypothesis file's `gpu`).
    AboutOtherGpu(String),
    /// It waits for its first run on a GPU (GpuTrial::waiting), and GEMM_ABLATE_FIRST_RUNS is not 1.
    Waiting(String),
}

impl Skip {
    fn reason(&self) -> &str {
        match self {
            Skip::Arch(why)
            | Skip::PinnedElsewhere(why)
            | Skip::AboutOtherGpu(why)
            | Skip::Waiting(why) => why,
        }
    }

    /// The skip of a trial waiting for its first run, unless those are asked for.
    fn waiting(why: Option<&str>, first_runs: bool) -> Option<Skip> {
        why.filter(|_| !first_runs).map(|why| {
            Skip::Waiting(format!(
                "waiting for its first run on a GPU ({why}): GEMM_ABLATE_FIRST_RUNS=1 runs it"
            ))
        })
    }
}

fn skip_on(
    job: &Job,
    expectation: &Expectation,
    about: Option<&str>,
    gpu: &device::DeviceInfo,
    pinned_on: Option<&str>,
) -> Option<Skip> {
    if let Some(why) = job.refused_by(&gpu.name, gpu.compute_capability) {
        return Some(Skip::Arch(format!("skipped: {why}")));
    }
    if let Some(model) = about.filter(|m| *m != gpu.name) {
        return Some(Skip::AboutOtherGpu(format!(
            "skipped: its hypothesis is about the {model} (its file's `gpu`), and this GPU is the {}: write one \
             for this GPU, or leave `gpu` out for any GPU",
            gpu.name
        )));
    }
    let pinned = matches!(
        expectation.source,
        crate::trial::expectation::Source::Pinned { .. }
    );
    match pinned_on {
        Some(model) if pinned && model != gpu.name => Some(Skip::PinnedElsewhere(format!(
            "skipped: its expectation is a value pinned on the {model} ({}), and this GPU is the {}: pin it \
             here first (docs/pinning.md)",
            crate::trial::pins::PIN_FILE,
            gpu.name
        ))),
        _ => None,
    }
}

/// One line at the end of a run that says what it did not run, and how to run it: the compile trials without
/// NVRTC, the GPU trials without a GPU, and those this GPU skips (libtest counts them as ignored, which reads like
/// a choice).
fn print_not_run(
    compile: usize,
    gpu: usize,
    available: &std::result::Result<Option<device::DeviceInfo>, String>,
    skipped: &[Skip],
) {
    let mut not_run = Vec::new();
    if compile > 0 && !crate::gpu::probe::nvrtc_available() && !crate::settings::nvrtc_required() {
        not_run.push(format!(
            "{compile} compile trials (NVRTC not found: pip install --target DIR nvidia-cuda-nvrtc==13.0.88 and put DIR/nvidia/cu13/lib on LD_LIBRARY_PATH)"
        ));
    }
    if let (true, Err(reason)) = (gpu > 0, available) {
        not_run.push(format!(
            "{gpu} GPU trials (they need a CUDA GPU of compute capability 8.0 or later: {reason})"
        ));
    }
    if let Ok(Some(info)) = available {
        let count = |kind: fn(&Skip) -> bool| skipped.iter().filter(|s| kind(s)).count();
        let arch = count(|s| matches!(s, Skip::Arch(_)));
        let waiting = count(|s| matches!(s, Skip::Waiting(_)));
        let pinned = count(|s| matches!(s, Skip::PinnedElsewhere(_)));
        let about_other = count(|s| matches!(s, Skip::AboutOtherGpu(_)));
        if arch > 0 {
            not_run.push(format!(
                "{arch} GPU trials whose kernels this GPU ({}, sm_{}{}) cannot run (the ladder's need sm_90a)",
                info.name, info.compute_capability.0, info.compute_capability.1
            ));
        }
        if pinned > 0 {
            not_run.push(format!(
                "{pinned} GPU trials pinned on another GPU model ({}: pin them on this one, docs/pinning.md)",
                crate::trial::pins::PIN_FILE
            ));
        }
        if about_other > 0 {
            not_run.push(format!(
                "{about_other} GPU trials whose hypothesis file names another GPU model (its `gpu` field)"
            ));
        }
        if waiting > 0 {
            not_run.push(format!(
                "{waiting} GPU trials waiting for their first run on a GPU (GEMM_ABLATE_FIRST_RUNS=1 runs them)"
            ));
        }
    }
    if !not_run.is_empty() {
        println!("not run: {}", not_run.join("; "));
    }
}

/// Keeps only the trials named in the file at `path` (GEMM_ABLATE_ONLY), one name a line; a name no trial has is
/// an error naming it, before anything runs.
fn keep_only(path: &str, gpu: &mut Vec<GpuTrial>, cpu: &mut Vec<Trial>) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("GEMM_ABLATE_ONLY={path:?}: cannot read the file: {e}"))?;
    let names = only_names(&text);
    let unknown: Vec<&str> = names
        .iter()
        .filter(|n| !gpu.iter().any(|t| t.name == **n) && !cpu.iter().any(|t| t.name() == **n))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "GEMM_ABLATE_ONLY={path:?} names {} trial{} this suite does not have: {}",
            unknown.len(),
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", ")
        ));
    }
    gpu.retain(|t| names.contains(&t.name));
    cpu.retain(|t| names.iter().any(|n| n == t.name()));
    Ok(())
}

/// The trial names of a GEMM_ABLATE_ONLY file: one a line, blank lines and `#` comments skipped.
fn only_names(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs one GPU trial `repeat` times, each in its own process on `device`, judges each record, and prints
/// them in one piece; returns the records.
fn run_trial(
    name: &str,
    job: &Job,
    expectation: &Expectation,
    (deadline, repeat, spread): (Duration, usize, workers::Spread),
    device: usize,
    seat: Option<&device::GpuSeat>,
) -> Vec<TrialRecord> {
    let asks = workers::asks_of(expectation);
    let precision_text = asks.precision.map(|p| format!("{p:.4}"));
    let visible = device::visible_devices_for(
        device,
        std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref(),
    );
    let index = device.to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("CUDA_VISIBLE_DEVICES", &visible),
        (subprocess::DEVICE_ENV, &index),
    ];
    // A job that is not a comparison (a sweep) takes the precision inside its one process.
    if let (Some(p), false) = (
        precision_text.as_deref(),
        matches!(job, Job::Compare { .. }),
    ) {
        env.push(("GEMM_ABLATE_PRECISION", p));
    }
    let mut text = String::new();
    let records = (0..repeat)
        .map(|i| {
            let outcome = workers::run(name, job, deadline, &env, spread, asks);
            let extra: Vec<&str> = outcome
                .output
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect();
            for line in extra.iter().rev().take(20).rev() {
                text.push_str(&format!("  | {line}\n"));
            }
            if repeat > 1 {
                text.push_str(&format!("  -- process {} of {repeat}\n", i + 1));
            }
            let mut record = outcome.record;
            // A process that was killed or died wrote no record of its GPU: the parent knows which it was.
            if record.gpu.is_none() {
                record.gpu = Some(seat.cloned().unwrap_or(device::GpuSeat {
                    index: device,
                    ..Default::default()
                }));
            }
            let r = record.judged(expectation);
            text.push_str(&crate::report::text::record_text(&r));
            r
        })
        .collect();
    print!("{text}");
    records
}

/// Runs the target's trials and writes the results file; call from the target's `main`.
pub fn main(suite: &str, gpu_trials: Vec<GpuTrial>, cpu_trials: Vec<Trial>) -> ExitCode {
    if let Some(code) = subprocess::child_entry() {
        return code;
    }
    let mut gpu_trials = gpu_trials;
    crate::trial::pins::apply(&mut gpu_trials);
    let settings = Settings::or_exit();
    let mut cpu_trials = cpu_trials;
    if let Some(path) = &settings.only {
        if let Err(e) = keep_only(path, &mut gpu_trials, &mut cpu_trials) {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    let mut args = Arguments::from_args();
    // A baseline to compare with must exist before anything runs.
    let baseline = match &settings.baseline {
        Some(name) => {
            match crate::report::baseline::load(
                &crate::report::results::results_dir(),
                name,
                suite,
                settings.shard,
            ) {
                Ok(b) => Some(b),
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    let in_shard = |index: usize| settings.shard.is_none_or(|(i, n)| index % n + 1 == i);
    let gpu_selected = gpu_trials
        .iter()
        .enumerate()
        .filter(|(k, t)| in_shard(*k) && selected(&args, &t.name))
        .count();
    let progress = Arc::new(Progress::new(gpu_selected));
    let available: Arc<std::result::Result<Option<device::DeviceInfo>, String>> = Arc::new(
        if gpu_trials.is_empty() || args.list {
            Ok(None)
        } else {
            device::gpu_available().map(|info| {
                if info.max_sm_clock_mhz.is_none() {
                    eprintln!("warning: NVML (libnvidia-ml) is not available: no SM clock readings, so the clock guards (low-clock pairs, throttling) are off");
                }
                Some(info)
            })
        },
    );
    // One trial at a time per GPU: as many test threads as GPUs, whatever the machine's core count.
    let seats = match available.as_ref() {
        // Listing the trials (libtest's --list, which nextest relies on) needs no GPU.
        Ok(Some(_)) => match choose_devices(&settings) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        },
        _ => Vec::new(),
    };
    let pinned_on = crate::trial::pins::pinned_on();
    let mut skipped = Vec::new();
    let devices: Vec<usize> = match seats.is_empty() {
        true => vec![0],
        false => seats.iter().map(|s| s.index).collect(),
    };
    args.test_threads = Some(devices.len());
    let pool = Arc::new(DevicePool::new(&devices));
    let mut environment = Environment::capture();
    environment.gpus = seats.clone();
    let seats = Arc::new(seats);
    // The results file is rewritten after every GPU trial, so a run cut short still leaves what it measured.
    let run_file = Arc::new(Mutex::new(RunFile {
        suite: suite.to_string(),
        environment,
        trials: Vec::new(),
        calibration: Vec::new(),
    }));
    let mut trials = cpu_trials;
    for (index, t) in gpu_trials.into_iter().enumerate() {
        let other_shard = settings
            .shard
            .filter(|_| !in_shard(index))
            .map(|(i, n)| (index % n + 1, i, n));
        let (available, run_file, progress, pool, seats) = (
            available.clone(),
            run_file.clone(),
            progress.clone(),
            pool.clone(),
            seats.clone(),
        );
        let deadline = Duration::from_secs_f64(t.deadline_s.unwrap_or(settings.trial_timeout_s));
        let repeat = settings.repeat;
        let spread = workers::Spread::from_settings(&settings);
        let GpuTrial {
            name,
            job,
            expectation,
            waiting,
            gpu: about,
            ..
        } = t;
        let skip = match available.as_ref() {
            Ok(Some(info)) => skip_on(
                &job,
                &expectation,
                about.as_deref(),
                info,
                pinned_on.as_deref(),
            )
            .or_else(|| Skip::waiting(waiting.as_deref(), crate::settings::first_runs_included())),
            _ => None,
        };
        if let Some(s) = skip
            .as_ref()
            .filter(|_| in_shard(index) && selected(&args, &name))
        {
            skipped.push(s.clone());
        }
        trials.push(
            Trial::ignorable_test(name.clone(), move || {
                if let Some((theirs, mine, n)) = other_shard {
                    return Ok(Completion::ignored_with(format!(
                        "GEMM_ABLATE_SHARD={mine}/{n}: shard {theirs} runs it"
                    )));
                }
                if let Err(reason) = available.as_ref() {
                    return Ok(Completion::ignored_with(format!(
                        "needs a CUDA GPU of compute capability 8.0 or later: {reason}"
                    )));
                }
                if let Some(skip) = &skip {
                    return Ok(Completion::ignored_with(skip.reason()));
                }
                progress.start(&name);
                let seat = pool.take();
                let known = seats.iter().find(|s| s.index == seat.device);
                let records = run_trial(
                    &name,
                    &job,
                    &expectation,
                    (deadline, repeat, spread),
                    seat.device,
                    known,
                );
                drop(seat);
                let mut failed: Vec<String> = records
                    .iter()
                    .filter(|r| !r.passed)
                    .map(|r| r.judgement.clone())
                    .collect();
                if repeat > 1 {
                    let row = agreement::agree(&records);
                    println!("  agreement: {}", crate::report::text::agreement_line(&row));
                    // Each repetition's interval carries the spread between processes: repetitions whose
                    // intervals share no ratio disagree beyond it, and the trial says so.
                    if row.runs > 1 && !row.intervals_overlap {
                        failed.push(format!(
                            "the {} repeated comparisons disagree beyond what their intervals allow: {}",
                            row.runs,
                            crate::report::text::agreement_line(&row)
                        ));
                    }
                }
                {
                    let mut file = run_file.lock().unwrap();
                    file.trials.extend(records);
                    if let Err(e) = file.write() {
                        eprintln!("could not write the results file: {e}");
                    }
                }
                match failed.first() {
                    None => Ok(Completion::Completed),
                    Some(first) => Err(Failed::from(first.clone())),
                }
            })
            .with_kind("gpu"),
        );
    }
    let compile_selected = trials
        .iter()
        .filter(|t| t.name().starts_with("compile::") && selected(&args, t.name()))
        .count();
    let conclusion = libtest_mimic::run(&args, trials);
    // Kept worker processes end with the run, before anything after it uses the GPU.
    crate::trial::pool::shared().end_all();
    if !args.list {
        print_not_run(compile_selected, gpu_selected, available.as_ref(), &skipped);
    }
    let file = run_file.lock().unwrap();
    if !file.trials.is_empty() {
        if settings.repeat > 1 {
            crate::report::text::print_agreement(&agreement::by_trial(&file.trials));
        }
        if let Ok(path) = file.path() {
            println!("results written to {}", path.display());
        }
        if let Some(name) = &settings.save_baseline {
            match crate::report::baseline::save(&file, &crate::report::results::results_dir(), name)
            {
                Ok(p) => println!("baseline {name:?} saved to {}", p.display()),
                Err(e) => eprintln!("could not save the baseline: {e}"),
            }
        }
        if let Some(base) = &baseline {
            let cmp = crate::report::baseline::compare(&file, base);
            crate::report::text::print_baseline(&cmp, settings.baseline.as_deref().unwrap_or(""));
            if settings.fail_on_slower && !cmp.slower().is_empty() {
                eprintln!(
                    "GEMM_ABLATE_FAIL_ON_SLOWER=1: {} trials got slower than the baseline",
                    cmp.slower().len()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    conclusion.exit_code()
}

#[cfg(test)]
mod tests {
    use super::{keep_only, skip_on, DevicePool, Skip};
    use crate::families::skinny::{config::SkinnyConfig, Skinny};
    use crate::families::stream::{config::StreamConfig, Stream};
    use crate::gpu::device::DeviceInfo;
    use crate::kernel::ladder::Rung;
    use crate::kernel::problem::{shape, DType};
    use crate::measure::stats::Verdict;
    use crate::trial::expectation::{Expect, Expectation};
    use crate::trial::job::{Job, VariantSpec};
    use std::sync::Arc;

    /// A skip's reason says each of `parts`.
    fn assert_says(skip: &Skip, parts: &[&str]) {
        let reason = skip.reason();
        for part in parts {
            assert!(reason.contains(part), "{reason:?} does not say {part:?}");
        }
    }

    fn gpu(name: &str, cc: (i32, i32)) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            compute_capability: cc,
            ..Default::default()
        }
    }

    fn compare(baseline: VariantSpec, candidate: VariantSpec) -> Job {
        Job::Compare {
            baseline,
            candidate,
            shape: shape("decode_attn_out"),
            dtype: DType::F16,
        }
    }

    #[test]
    fn a_list_of_trials_keeps_only_those_and_names_the_ones_no_trial_has() {
        use crate::trial::job::GpuTrial;
        let gpu_trial = |name: &str| {
            GpuTrial::new(
                name,
                compare(VariantSpec::Cublas, VariantSpec::Cublas),
                Expectation::hypothesis(Expect::Verdict(Verdict::NoChange), "a test"),
            )
        };
        let cpu_trial = |name: &str| libtest_mimic::Trial::test(name, || Ok(()));
        let file = std::env::temp_dir().join(format!("only-{}.txt", std::process::id()));
        let (mut gpu, mut cpu) = (
            vec![
                gpu_trial("a::one"),
                gpu_trial("a::two"),
                gpu_trial("b::one"),
            ],
            vec![cpu_trial("compile::x"), cpu_trial("compile::y")],
        );
        std::fs::write(
            &file,
            "# the H110 sweep\na::two\n\nb::one  # against cuBLAS\ncompile::y\n",
        )
        .unwrap();
        keep_only(file.to_str().unwrap(), &mut gpu, &mut cpu).unwrap();
        let names: Vec<&str> = gpu.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a::two", "b::one"]);
        assert_eq!(cpu.len(), 1);
        assert_eq!(cpu[0].name(), "compile::y");
        std::fs::write(&file, "a::two\na::three\n").unwrap();
        let e = keep_only(file.to_str().unwrap(), &mut gpu, &mut cpu).unwrap_err();
        assert!(e.contains("a::three") && !e.contains("a::two"), "{e}");
        let missing = keep_only("/no/such/list.txt", &mut gpu, &mut cpu).unwrap_err();
        assert!(missing.contains("/no/such/list.txt"), "{missing}");
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_trial_waiting_for_its_first_run_is_skipped_with_how_to_run_it_unless_asked_for() {
        let skip = Skip::waiting(Some("FP8, issue 40"), false).unwrap();
        assert!(matches!(skip, Skip::Waiting(_)));
        assert_says(&skip, &["FP8, issue 40", "GEMM_ABLATE_FIRST_RUNS=1"]);
        assert_eq!(Skip::waiting(Some("FP8, issue 40"), true), None);
        assert_eq!(Skip::waiting(None, false), None);
        let t = crate::trial::job::GpuTrial::new(
            "a::b",
            Job::CublasVsCpu { dtype: DType::F16 },
            Expectation::hypothesis(Expect::Correct, "why"),
        );
        assert_eq!(t.waiting, None);
        assert_eq!(
            t.waiting_for_first_run("new").waiting.as_deref(),
            Some("new")
        );
    }

    #[test]
    fn each_gpu_skips_the_trials_whose_kernels_it_cannot_run_and_says_why() {
        let hypothesis = Expectation::hypothesis(Expect::Verdict(Verdict::NoChange), "a reason");
        let top = VariantSpec::gemm("rung10", Rung::top().config());
        let stream = |pdl| {
            let config = StreamConfig {
                pdl,
                ..Default::default()
            };
            VariantSpec::of(&Stream, format!("stream pdl={pdl}"), &config)
        };
        let skinny = SkinnyConfig {
            pdl: false,
            ..Default::default()
        };
        let skinny = VariantSpec::of(&Skinny, "skinny pdl=0", &skinny);
        let (l40s, a100, h200, b200) = (
            gpu("NVIDIA L40S", (8, 9)),
            gpu("NVIDIA A100", (8, 0)),
            gpu("NVIDIA H200", (9, 0)),
            gpu("NVIDIA B200", (10, 0)),
        );
        let ladder = compare(VariantSpec::Cublas, top.clone());
        let skip =
            |job: &Job, on: &DeviceInfo| skip_on(job, &hypothesis, None, on, Some("NVIDIA H200"));
        assert_eq!(
            skip(&ladder, &l40s),
            Some(Skip::Arch(
                "skipped: rung10 needs exactly sm_90a, this GPU is sm_89 (NVIDIA L40S)".into()
            ))
        );
        assert!(matches!(skip(&ladder, &b200), Some(Skip::Arch(_))));
        assert_eq!(skip(&ladder, &h200), None);
        // cuBLAS and the portable kernels run anywhere from sm_80; `pdl=1` needs sm_90.
        let portable = compare(VariantSpec::Cublas, skinny);
        for on in [&l40s, &a100, &h200, &b200] {
            assert_eq!(skip(&portable, on), None, "{}", on.name);
            assert_eq!(skip(&compare(stream(false), VariantSpec::Cublas), on), None);
        }
        let why = skip(&compare(VariantSpec::Cublas, stream(true)), &a100).unwrap();
        assert_eq!(
            why.reason(),
            "skipped: stream pdl=true needs sm_90, this GPU is sm_80 (NVIDIA A100)"
        );
        assert_eq!(skip(&Job::CublasVsCpu { dtype: DType::BF16 }, &a100), None);
    }

    #[test]
    fn a_pinned_trial_runs_only_on_the_gpu_model_it_was_pinned_on() {
        let job = compare(VariantSpec::Cublas, VariantSpec::Cublas);
        let pinned = crate::trial::pins::pinned();
        let on = |g: &DeviceInfo| skip_on(&job, &pinned, None, g, Some("NVIDIA H200"));
        assert_eq!(on(&gpu("NVIDIA H200", (9, 0))), None);
        let why = on(&gpu("NVIDIA H100 80GB HBM3", (9, 0))).unwrap();
        assert!(matches!(why, Skip::PinnedElsewhere(_)));
        assert_says(
            &why,
            &[
                "pinned on the NVIDIA H200",
                "this GPU is the NVIDIA H100 80GB HBM3",
            ],
        );
        // A hypothesis is a statement about kernels, not a figure of one GPU: unless it names the GPU model it is
        // about (a file's `gpu`), it runs wherever its kernels do.
        let hypothesis = Expectation::hypothesis(Expect::Verdict(Verdict::NoChange), "a reason");
        let l4 = gpu("NVIDIA L4", (8, 9));
        assert_eq!(
            skip_on(&job, &hypothesis, None, &l4, Some("NVIDIA H200")),
            None
        );
    }

    #[test]
    fn a_hypothesis_about_one_gpu_model_runs_only_there_and_says_why() {
        let job = compare(VariantSpec::Cublas, VariantSpec::Cublas);
        let hypothesis = Expectation::hypothesis(Expect::Verdict(Verdict::NoChange), "a reason");
        let (h100, h200) = (
            gpu("NVIDIA H100 80GB HBM3", (9, 0)),
            gpu("NVIDIA H200", (9, 0)),
        );
        let about_h200 =
            |on: &DeviceInfo| skip_on(&job, &hypothesis, Some("NVIDIA H200"), on, None);
        assert_eq!(about_h200(&h200), None);
        let why = about_h200(&h100).unwrap();
        assert!(matches!(why, Skip::AboutOtherGpu(_)));
        assert_says(
            &why,
            &[
                "about the NVIDIA H200",
                "this GPU is the NVIDIA H100 80GB HBM3",
            ],
        );
        // A kernel the GPU cannot run is the first reason given.
        let ladder = compare(
            VariantSpec::Cublas,
            VariantSpec::gemm("rung10", Rung::top().config()),
        );
        let l4 = gpu("NVIDIA L4", (8, 9));
        let first = skip_on(&ladder, &hypothesis, Some("NVIDIA H200"), &l4, None);
        assert!(matches!(first, Some(Skip::Arch(_))), "{first:?}");
    }

    #[test]
    fn no_two_trials_share_a_gpu() {
        let pool = Arc::new(DevicePool::new(&[0, 1]));
        let a = pool.take();
        let b = pool.take();
        assert_ne!(a.device, b.device);
        let waiter = {
            let pool = pool.clone();
            std::thread::spawn(move || pool.take().device)
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "a third trial waited for a GPU");
        let freed = b.device;
        drop(b);
        assert_eq!(waiter.join().unwrap(), freed);
        drop(a);
    }
}
