//! `cargo run --release` runs the main job: every ladder rung against cuBLAS on the seven standard shapes, as a
//! table (time, TFLOP/s, ratio to cuBLAS, max error), written to results/ as JSON. The other commands are listed
//! in `USAGE` below (`gemm-ablate help` prints it); each lives in cli/, by where it runs.

use harness::gpu::device;
use harness::settings::Settings;
use harness::trial::job::VariantSpec;
use harness::trial::subprocess;
use harness::DType;
use std::process::ExitCode;
use std::time::Duration;

mod cli;
use cli::offline::{agree, auto, baseline, build, report, stalls};
use cli::on_gpu::{compare, cublas_paths, ladder, profile, sustain};
use cli::{emit, refuse};

/// Every command, a line each: printed by `help`, and the line of a command given too little.
const USAGE: &str = "\
usage: gemm-ablate [COMMAND]   (no command: the main job, as `ladder`)
  gemm-ablate ladder [FILTER...]                                every rung and `auto` against cuBLAS on the standard shapes (a GPU)
  gemm-ablate ladder fp8                                        the FP8 table alone
  gemm-ablate show SPEC [DTYPE] [--all]                         a kernel's source with its switches resolved (SPEC: RUNG[:SWITCHES], stream[:...], skinny[:...])
  gemm-ablate diff RUNG RUNG                                    what changes between two rungs' kernels
  gemm-ablate build SPEC... [DTYPE]                             compile each variant with NVRTC (no GPU needed): registers, spills, warnings
  gemm-ablate compare SHAPE BASE CAND... [DTYPE]                check each variant, then time each candidate against the baseline (a GPU)
  gemm-ablate sustain SHAPE SPEC... [DTYPE] [--seconds S] [--passes P]   each variant alone under sustained load: time, clock, power (a GPU)
  gemm-ablate profile SPEC SHAPE [DTYPE] [--full]               Nsight Compute on the variant and on cuBLAS, side by side (a GPU)
  gemm-ablate cublas-paths SHAPE... [DTYPE] [--out FILE]        choose cuBLAS's reference path for each shape afresh (a GPU)
  gemm-ablate auto [--sms N] SHAPE... [DTYPE]                   what `auto` runs for each shape, and by which rule
  gemm-ablate auto [--sms N] --ranges NxK [DTYPE]               what `auto` runs for every M from 1 to 8192
  gemm-ablate list                                              the rungs, the switches and the kernels outside the ladder
  gemm-ablate device                                            what the GPU is
  gemm-ablate agree FILE...                                     run-to-run agreement of the comparisons in results files
  gemm-ablate report FILE... [--out DIR] [--across-commits]     a markdown report with SVG charts
  gemm-ablate baseline NOW BASE [--fail-on-slower]              every trial of a run against the same trial in another (a sharded run: its files, comma-separated)
  gemm-ablate stalls SOURCE.csv [TOP]                           where each kernel's warps wait, from `profile --full`'s source page
  gemm-ablate help                                              this
DTYPE: fp16 (the default), bf16, e4m3, e4m3-row, e4m3-block (FP8; -f16 for an fp16 output). SHAPE: a standard shape's name or MxNxK.
";

/// `command` was given too little: its usage line, exit 2.
fn usage_of(command: &str) -> ExitCode {
    let line = USAGE
        .lines()
        .filter(|l| {
            l.trim_start()
                .starts_with(&format!("gemm-ablate {command} "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    refuse(&format!("{command} needs more:\n{line}"))
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
    let rest = if args.is_empty() { &[][..] } else { &args[1..] };
    match args.first().map(|s| s.as_str()) {
        None | Some("ladder") => ladder(rest, deadline, &settings),
        Some("help" | "--help" | "-h") => {
            emit(USAGE);
            ExitCode::SUCCESS
        }
        Some("show") => cli::source::show(rest),
        Some("diff") => cli::source::diff(rest),
        Some("compare") if rest.len() >= 3 => compare(&rest[0], &rest[1..], deadline, &settings),
        Some("agree") if !rest.is_empty() => agree(rest),
        Some("report") if !rest.is_empty() => report(rest),
        Some("baseline") if rest.len() >= 2 => baseline(rest),
        Some("profile") if rest.len() >= 2 => profile(rest),
        Some("sustain") if rest.len() >= 2 => sustain(rest),
        Some("stalls") if !rest.is_empty() => stalls(rest),
        Some("build") if !rest.is_empty() => build(rest),
        Some("auto") if !rest.is_empty() => auto(rest),
        Some("cublas-paths") if !rest.is_empty() => cublas_paths(rest, &settings),
        Some(command @ ("list" | "device")) if !rest.is_empty() => {
            refuse(&format!("{command} takes nothing; `{}` is extra", rest[0]))
        }
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
        Some(
            command @ ("compare" | "agree" | "report" | "baseline" | "profile" | "sustain"
            | "stalls" | "build" | "auto" | "cublas-paths"),
        ) => usage_of(command),
        Some(other) => refuse(&format!("unknown command `{other}`\n{USAGE}")),
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
