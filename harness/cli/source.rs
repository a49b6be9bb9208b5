//! The commands that print a kernel's source as it is compiled, without a GPU: `show` and `diff`.

use super::{emit, refuse};
use harness::kernel::source;
use harness::trial::job::VariantSpec;
use harness::{DType, Rung};
use std::process::ExitCode;

/// `show SPEC [DTYPE] [--all]`: a rung (or a rung with switches, `stream[:...]`, `skinny[:...]`) with its switches
/// resolved, only what it uses (`--all`: every primitive, as compiled).
pub(crate) fn show(args: &[String]) -> ExitCode {
    let everything = args.iter().any(|a| a == "--all");
    let words: Vec<String> = args.iter().filter(|a| *a != "--all").cloned().collect();
    let (dtype, words) = match super::dtype_and_words("show", &words) {
        Ok(found) => found,
        Err(e) => return refuse(&e),
    };
    let spec = match words[..] {
        [spec] => spec,
        [] => return refuse(&format!("a rung is missing: {RUNG_FORMS}")),
        [_, extra, ..] => {
            return refuse(&format!(
                "show takes one spec, a dtype and --all; `{extra}` is none of them"
            ))
        }
    };
    if spec.eq_ignore_ascii_case("auto") {
        return refuse(&super::auto_needs_a_shape("show"));
    }
    if spec.eq_ignore_ascii_case("cublas") {
        return refuse("cuBLAS's kernels are not ours to show: show takes a rung, a rung with switches, stream or skinny");
    }
    // `show stream...` and `show skinny...`: the kernels outside the ladder.
    let shown = match VariantSpec::outside_ladder(spec) {
        Some(variant) => variant
            .and_then(|v| {
                let kernel = v.kernel().expect("a kernel outside the ladder")?;
                kernel.shown(&v.name(), dtype, everything)
            })
            .map_err(|e| e.to_string()),
        // A rung with switches changed (`show 10:tile_k=128,bn=128,promote=1 e4m3-block`): its program for that
        // dtype, once the configuration is valid for it.
        None if spec.contains(':') => harness::kernel::ladder::parse_spec(spec)
            .and_then(|c| c.validate_for(dtype).map(|_| c))
            .and_then(|c| source::resolved_program(&c.defines(dtype), source::GEMM, everything))
            .map(|s| format!("// {spec} ({})\n{s}", dtype.name()))
            .map_err(|e| e.to_string()),
        None => rung(spec).and_then(|rung| resolved(rung, dtype, everything)),
    };
    match shown {
        Ok(s) => {
            emit(&s);
            ExitCode::SUCCESS
        }
        // Every error here is the input's: a spec, switch or dtype the kernel does not take.
        Err(e) => refuse(&e),
    }
}

/// `diff RUNG RUNG`: what changes between two rungs' kernels, as a unified diff of their resolved sources.
pub(crate) fn diff(args: &[String]) -> ExitCode {
    let (a, b) = match args {
        [a, b] => (a, b),
        [_] | [] => return refuse(&format!("a rung is missing: {RUNG_FORMS}")),
        [_, _, extra, ..] => return refuse(&format!("diff takes two rungs; `{extra}` is a third")),
    };
    let (a, b) = match (rung(a), rung(b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return refuse(&e),
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

/// How a rung is named, for the messages that ask for one.
const RUNG_FORMS: &str = "give a number (4), a word (swizzle) or a name (rung4_swizzle)";

fn rung(text: &str) -> Result<Rung, String> {
    Rung::parse(text).ok_or_else(|| format!("unknown rung {text:?}: {RUNG_FORMS}"))
}

/// A rung's program for `dtype`, headed by what the rung changes and what the seed found for that step.
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
