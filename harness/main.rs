//! `cargo run --release` runs the main job: every ladder rung against cuBLAS on the seven standard shapes, as a
//! table (time, TFLOP/s, ratio to cuBLAS, max error), written to results/ as JSON.
//!
//!   gemm-ablate [ladder] [FILTER...]   the ladder table (filters match `rungN_name::shape`)
//!   gemm-ablate show RUNG[:SWITCHES] [DTYPE] [--all]  the rung's kernel with its switches resolved: only what it uses
//!                                       (--all: every primitive, as compiled); `stream[:...]`, `skinny[:...]` too
//!   gemm-ablate diff RUNG RUNG          what changes between two rungs' kernels
//!   gemm-ablate compare SHAPE BASE CAND  check both, time CAND against BASE (specs like `rung8:cluster=1`, or cublas)
//!   gemm-ablate build SPEC... [bf16]    compile each variant with NVRTC (no GPU needed): registers, spills, warnings
//!   gemm-ablate list                    the rungs and what each adds
//!   gemm-ablate device                  what the GPU is
//!   gemm-ablate agree FILE...           run-to-run agreement of the comparisons in results files
//!   gemm-ablate report FILE... [--out DIR] [--across-commits]  a markdown report with SVG charts (grouped by GPU and host)
//!   gemm-ablate baseline NOW BASE [--fail-on-slower]  every trial of a run against the same trial in another
//!   gemm-ablate profile SPEC SHAPE [DTYPE] [--full]  Nsight Compute on the variant and on cuBLAS, side by side

use harness::gpu::device;
use harness::kernel::source;
use harness::settings::Settings;
use harness::trial::job::VariantSpec;
use harness::trial::subprocess;
use harness::{DType, Rung};
use std::process::ExitCode;
use std::time::Duration;

mod cli;
use cli::offline::{agree, auto, baseline, build, report, stalls};
use cli::on_gpu::{compare, cublas_paths, ladder, profile, sustain};

/// Writes a command's text to standard output; a reader that stopped early (`| head`) ends it quietly.
fn emit(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn usage() -> ExitCode {
    eprintln!("usage: gemm-ablate [ladder [FILTER...] | show RUNG[:SWITCHES]|stream[:...]|skinny[:...] [DTYPE] [--all] | diff RUNG RUNG | compare SHAPE BASE CAND... [bf16|e4m3|e4m3-row|e4m3-block[-f16]] | build SPEC... [bf16|e4m3|e4m3-row|e4m3-block[-f16]] | auto SHAPE... | auto --ranges NxK | list | device | agree FILE... | report FILE... [--out DIR] [--across-commits] | baseline NOW BASE [--fail-on-slower] | profile SPEC SHAPE [DTYPE] [--full] | sustain SHAPE SPEC... [DTYPE] [--seconds S] [--passes P] | stalls SOURCE.csv [TOP]]");
    ExitCode::from(2)
}

fn rung_arg(s: Option<&String>) -> Option<Rung> {
    let Some(s) = s else {
        eprintln!(
            "a rung is missing: give a number (4), a word (swizzle) or a name (rung4_swizzle)"
        );
        return None;
    };
    let r = Rung::parse(s);
    if r.is_none() {
        eprintln!(
            "unknown rung {s:?}: give a number (4), a word (swizzle) or a name (rung4_swizzle)"
        );
    }
    r
}

fn resolved(rung: Rung, dtype: DType, everything: bool) -> Result<String, String> {
    let header = format!(
        "// {}: {}\n// seed (B200): {}\n",
        rung.name(),
        rung.change(),
        rung.seed_finding()
    );
    let config = rung.config();
    config
        .validate_for(dtype)
        .and_then(|_| source::resolved_program(&config.defines(dtype), source::GEMM, everything))
        .map(|s| header + &s)
        .map_err(|e| e.to_string())
}

/// A reader that stops early (`gemm-ablate baseline A B | head`) ends the command as it ends any Unix tool,
/// quietly, instead of a panic on the next line printed: Rust ignores SIGPIPE unless told otherwise.
#[cfg(unix)]
fn end_quietly_on_a_closed_pipe() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: restoring the default disposition of one signal, before any thread is started.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn end_quietly_on_a_closed_pipe() {}

fn main() -> ExitCode {
    if let Some(code) = subprocess::child_entry() {
        return code;
    }
    end_quietly_on_a_closed_pipe();
    let settings = Settings::or_exit();
    let deadline = Duration::from_secs_f64(settings.trial_timeout_s);
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(|s| s.as_str()) {
        None | Some("ladder") => ladder(
            if args.is_empty() { &[] } else { &args[1..] },
            deadline,
            &settings,
        ),
        Some("show") => {
            let rest: Vec<String> = (args[2.min(args.len())..].iter())
                .filter(|a| *a != "--all")
                .cloned()
                .collect();
            let dtype = match cli::dtype_and_words("show", &rest) {
                Ok((dtype, _)) => dtype,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            let everything = args[2.min(args.len())..].iter().any(|a| a == "--all");
            // `show stream...` and `show skinny...`: the kernels outside the ladder.
            let outside = args.get(1).and_then(|s| VariantSpec::outside_ladder(s));
            let shown = match outside {
                Some(spec) => spec
                    .and_then(|v| {
                        let kernel = v.kernel().expect("a kernel outside the ladder")?;
                        kernel.shown(&v.name(), dtype, everything)
                    })
                    .map_err(|e| e.to_string()),
                // A rung with switches changed (`show 10:tile_k=128,bn=128,promote=1 e4m3-block`): its program
                // for that dtype, once the configuration is valid for it.
                None if args.get(1).is_some_and(|s| s.contains(':')) => {
                    let spec = &args[1];
                    harness::kernel::ladder::parse_spec(spec)
                        .and_then(|c| c.validate_for(dtype).map(|_| c))
                        .and_then(|c| {
                            source::resolved_program(&c.defines(dtype), source::GEMM, everything)
                        })
                        .map(|s| format!("// {spec} ({})\n{s}", dtype.name()))
                        .map_err(|e| e.to_string())
                }
                None => {
                    let Some(rung) = rung_arg(args.get(1)) else {
                        return usage();
                    };
                    resolved(rung, dtype, everything)
                }
            };
            match shown {
                Ok(s) => {
                    emit(&s);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("diff") => {
            let (Some(a), Some(b)) = (rung_arg(args.get(1)), rung_arg(args.get(2))) else {
                return usage();
            };
            match (
                resolved(a, DType::F16, false),
                resolved(b, DType::F16, false),
            ) {
                (Ok(x), Ok(y)) => {
                    let diff = similar::TextDiff::from_lines(&x, &y);
                    emit(
                        &diff
                            .unified_diff()
                            .context_radius(3)
                            .header(&a.name(), &b.name())
                            .to_string(),
                    );
                    ExitCode::SUCCESS
                }
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("compare") if args.len() >= 4 => compare(&args[1], &args[2..], deadline, &settings),
        Some("agree") if args.len() >= 2 => agree(&args[1..]),
        Some("report") => report(&args[1..]),
        Some("baseline") if args.len() >= 3 => baseline(&args[1..]),
        Some("profile") if args.len() >= 3 => profile(&args[1..]),
        Some("sustain") if args.len() >= 3 => sustain(&args[1..]),
        Some("stalls") if args.len() >= 2 => stalls(&args[1..]),
        Some("build") if args.len() >= 2 => build(&args[1..]),
        Some("auto") if args.len() >= 2 => auto(&args[1..]),
        Some("cublas-paths") if args.len() >= 2 => cublas_paths(&args[1..], &settings),
        Some("list") => {
            emit(&harness::report::text::list_text());
            ExitCode::SUCCESS
        }
        Some("device") => match device::query(0) {
            Ok(info) => {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&info).unwrap_or_default()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Some(_) => usage(),
    }
}

/// A named shape or MxNxK, or the error printed.
fn shape_arg(text: &str) -> Option<harness::kernel::problem::Shape> {
    harness::kernel::problem::parse_shape(text)
        .map_err(|e| eprintln!("{e}"))
        .ok()
}

/// The SM count `auto` resolves for: the visible GPU's, or the H200's where there is none (a listing or a build
/// without a GPU), said once where it is not the H200's.
fn auto_sms() -> u32 {
    use harness::kernel::dispatch::H200_SMS;
    static NOTED: std::sync::Once = std::sync::Once::new();
    match device::visible_sm_count() {
        Some((sms, name)) if sms != H200_SMS => {
            NOTED.call_once(|| {
                eprintln!(
                    "note: auto is resolved for this GPU's {sms} SMs ({name}); its rules were measured on the H200's {H200_SMS}"
                )
            });
            sms
        }
        _ => H200_SMS,
    }
}

/// A variant spec on the command line, read for `shape` with operands of `dtype`: `cublas`, `auto` (resolved for
/// the shape, see harness/kernel/dispatch.rs), `stream` (the read floor, harness/families/stream/) or `skinny`
/// (harness/families/skinny/) with their switches, `ext:NAME`, or a rung with switches (checked for that type).
fn spec(s: &str, shape: &harness::Shape, dtype: DType) -> Result<VariantSpec, String> {
    if s.eq_ignore_ascii_case("cublas") {
        return Ok(VariantSpec::Cublas);
    }
    if let Some(outside) = VariantSpec::outside_ladder(s) {
        return outside.map_err(|e| e.to_string());
    }
    if s.eq_ignore_ascii_case("auto") {
        let (label, config) = harness::kernel::dispatch::auto_variant_for(shape, auto_sms(), dtype);
        return config
            .validate_for(dtype)
            .map(|_| VariantSpec::gemm(label, config))
            .map_err(|e| e.to_string());
    }
    harness::kernel::ladder::parse_spec(s)
        .and_then(|c| c.validate_for(dtype).map(|_| VariantSpec::gemm(s, c)))
        .map_err(|e| e.to_string())
}
