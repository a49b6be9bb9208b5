//! The commands that need no GPU: `build`, `auto`, `report`, `baseline`, `agree` and `stalls`.

use super::refuse;
use harness::report::results::RunFile;
use harness::trial::job::VariantSpec;
use std::process::ExitCode;

/// Where each kernel's warps wait, from a source page `profile --full` wrote (source.csv): `stalls FILE [TOP]`.
pub(crate) fn stalls(args: &[String]) -> ExitCode {
    let top = match &args[1..] {
        [] => 12,
        [top] => match top.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                return refuse(&format!(
                    "stalls: TOP is how many lines to print, a whole number above 0; got `{top}`"
                ))
            }
        },
        [_, extra, ..] => {
            return refuse(&format!(
                "stalls takes a source page and TOP; `{extra}` is extra"
            ))
        }
    };
    let parsed = std::fs::read_to_string(&args[0])
        .map_err(|e| format!("{}: {e}", args[0]))
        .and_then(|text| harness::trial::source_page::parse(&text).map_err(|e| e.to_string()));
    match parsed {
        Ok(kernels) => {
            print!("{}", harness::trial::source_page::summary(&kernels, top));
            ExitCode::SUCCESS
        }
        // A file that cannot be read or is not a source page: the input's.
        Err(e) => refuse(&e),
    }
}

/// One results file against another taken as the baseline: `baseline NOW.json BASE.json [--fail-on-slower]`.
pub(crate) fn baseline(args: &[String]) -> ExitCode {
    if let Some(flag) = args
        .iter()
        .find(|a| a.starts_with("--") && *a != "--fail-on-slower")
    {
        return refuse(&format!(
            "baseline takes one option, --fail-on-slower; `{flag}` is not it"
        ));
    }
    let fail = args.iter().any(|a| a == "--fail-on-slower");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [now, base] = files[..] else {
        eprintln!("usage: gemm-ablate baseline NOW.json BASELINE.json [--fail-on-slower] (the shards of one run: comma-separated files)");
        return ExitCode::from(2);
    };
    // A sharded run (GEMM_ABLATE_SHARD) is its shard files, comma-separated, read as one run.
    let read = |list: &str| {
        if list.split(',').any(|f| f.trim().is_empty()) {
            return Err(format!(
                "{list:?}: an empty file name in the list (a trailing or doubled comma?)"
            ));
        }
        let files: Vec<std::path::PathBuf> =
            list.split(',').map(std::path::PathBuf::from).collect();
        harness::report::shards::read_one_run(&files)
    };
    let (now, base) = match (read(now), read(base)) {
        (Ok(n), Ok(b)) => (n, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if now.suite != base.suite {
        eprintln!(
            "{} is a run of {} and {} of {}: a baseline compares runs of one suite",
            files[0], now.suite, files[1], base.suite
        );
        return ExitCode::from(2);
    }
    let cmp = harness::report::baseline::compare(&now, &base);
    if cmp.changes.is_empty() {
        eprintln!(
            "{} and {} share no comparison trial: nothing to compare",
            files[0], files[1]
        );
        return ExitCode::from(2);
    }
    harness::report::text::print_baseline(&cmp, &files[1].to_string());
    if fail && !cmp.slower().is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// What `auto` runs, without a GPU: `auto SHAPE... [DTYPE]` (the spec and the rule for each shape) or `auto --ranges
/// NxK [DTYPE]` (the kernel for every token count from 1 to 8192, as ranges), for the H200's SM count or `--sms N`;
/// fp16 unless a dtype is given (bf16 picks the same kernels, FP8 its own).
pub(crate) fn auto(args: &[String]) -> ExitCode {
    use harness::kernel::dispatch::{auto_ranges, auto_spec_for, H200_SMS};
    use harness::kernel::problem::parse_shape;
    use std::io::Write;
    // `--sms N` resolves for another GPU's SM count (the rules were measured on the H200's 132).
    let (sms, args) = match args.iter().position(|a| a == "--sms") {
        Some(i) => match args.get(i + 1).and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if (1..=1024).contains(&n) => {
                let mut rest = args.to_vec();
                rest.drain(i..i + 2);
                (n, rest)
            }
            _ => {
                eprintln!("--sms needs an SM count from 1 to 1024 (the H200 has {H200_SMS})");
                return ExitCode::from(2);
            }
        },
        None => (H200_SMS, args.to_vec()),
    };
    let (dtype, args) = match super::dtype_and_words("auto", &args) {
        Ok((dtype, rest)) => (dtype, rest.into_iter().cloned().collect::<Vec<String>>()),
        Err(e) => return refuse(&e),
    };
    if args.is_empty() {
        eprintln!("usage: gemm-ablate auto [--sms N] SHAPE... [DTYPE] | auto [--sms N] --ranges NxK [DTYPE]");
        return ExitCode::from(2);
    }
    // A closed pipe (`| head`) ends the listing quietly.
    let mut out = std::io::stdout().lock();
    if args[0] == "--ranges" {
        let nk = match &args[1..] {
            [nk] if nk.split('x').count() == 2 => nk,
            [nk] => {
                return refuse(&format!(
                    "auto --ranges takes N and K as NxK (such as 8192x8192); got `{nk}`"
                ))
            }
            [] => return refuse("usage: gemm-ablate auto --ranges NxK (such as 8192x8192)"),
            [_, extra, ..] => {
                return refuse(&format!("auto --ranges takes one NxK; `{extra}` is extra"))
            }
        };
        let shape = match parse_shape(&format!("1x{nk}")) {
            Ok(s) => s,
            Err(e) => return refuse(&format!("auto --ranges {nk}: {e}")),
        };
        let _ = writeln!(
            out,
            "auto on {sms} SMs, N = {}, K = {}, M = 1 to 8192, {}:",
            shape.n,
            shape.k,
            dtype.name()
        );
        for (first, last, spec, rule) in auto_ranges(shape.n, shape.k, sms, 8192, dtype) {
            if writeln!(out, "  M = {first}-{last}: {spec}\n      {rule}").is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    if let Some(extra) = args.iter().find(|a| a.starts_with("--")) {
        return refuse(&format!(
            "auto takes shapes, or --ranges NxK alone, and --sms N; `{extra}` does not fit here"
        ));
    }
    for text in &args {
        match parse_shape(text) {
            Ok(shape) => {
                let (spec, rule) = auto_spec_for(&shape, sms, dtype);
                let _ = writeln!(
                    out,
                    "{text} ({}x{}x{}, {}) on {sms} SMs: {spec}\n  {rule}",
                    shape.m,
                    shape.n,
                    shape.k,
                    dtype.name()
                );
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

/// A markdown report with SVG charts from results files: `report FILE... [--out DIR] [--across-commits]`.
pub(crate) fn report(args: &[String]) -> ExitCode {
    let mut files = Vec::new();
    let mut out = None;
    let mut across_commits = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--across-commits" {
            across_commits = true;
        } else if a == "--out" {
            match it.next() {
                Some(d) => out = Some(std::path::PathBuf::from(d)),
                None => {
                    eprintln!("--out needs a folder");
                    return ExitCode::from(2);
                }
            }
        } else if a.starts_with("--") {
            return refuse(&format!(
                "report takes --out DIR and --across-commits; `{a}` is neither"
            ));
        } else {
            files.push(std::path::PathBuf::from(a));
        }
    }
    let built = harness::report::markdown::read_runs(&files).and_then(|runs| {
        if across_commits {
            harness::report::markdown::build_across_commits(&runs)
        } else {
            harness::report::markdown::build(&runs)
        }
    });
    let report = match built {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let dir = out.unwrap_or_else(|| harness::report::markdown::default_dir(&files[0]));
    match harness::report::markdown::write(&report, &dir) {
        Ok(p) => {
            println!(
                "report written to {} ({} charts)",
                p.display(),
                report.charts.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Run-to-run agreement of every comparison trial that appears in more than one of the files (or more than
/// once in one file).
pub(crate) fn agree(files: &[String]) -> ExitCode {
    let mut records = Vec::new();
    for f in files {
        match RunFile::read(std::path::Path::new(f)) {
            Ok(run) => records.extend(run.trials),
            Err(e) => {
                eprintln!("{f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let rows = harness::report::agreement::by_trial(&records);
    if rows.is_empty() {
        eprintln!("no comparison trial appears more than once in these files");
        return ExitCode::from(2);
    }
    harness::report::text::print_agreement(&rows);
    if rows.iter().all(|r| r.verdicts_agree && r.intervals_overlap) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Compiles each variant (its switches checked first) and prints what ptxas reports: a spec that does not build,
/// spills or warns, is found here rather than on a lent GPU. Exits 1 if any does not compile, spills or warns (the
/// compile trials' judgement), 2 if any is not a valid spec.
pub(crate) fn build(args: &[String]) -> ExitCode {
    let (dtype, specs) = match super::dtype_and_words("build", args) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // A spec that is not valid is the input's fault (exit 2); one that does not compile, spills or warns is the
    // answer (exit 1).
    let (mut ok, mut bad_input) = (true, false);
    for spec in specs {
        // A kernel outside the ladder or a rung with switches, built on the CPU as its family builds it (an external
        // kernel's manifest checked for this dtype, its module built as the manifest says).
        let variant = match VariantSpec::outside_ladder(spec) {
            Some(outside) => outside,
            None if spec.eq_ignore_ascii_case("cublas") => Ok(VariantSpec::Cublas),
            None if spec.eq_ignore_ascii_case("auto") => Err(harness::error::Error::Config(
                super::auto_needs_a_shape("build"),
            )),
            None => harness::kernel::ladder::parse_spec(spec).map(|c| VariantSpec::gemm(spec, c)),
        };
        let built = variant.and_then(|v| match v.kernel() {
            Some(kernel) => {
                let kernel = kernel?;
                kernel.takes(dtype)?;
                kernel.build(spec, dtype)
            }
            None => Err(harness::error::Error::Config(
                "cuBLAS is not built: give a kernel spec".into(),
            )),
        });
        match built {
            // A prebuilt module (PTX or a cubin) comes without ptxas's report: no figures to invent.
            Ok(compiled) if compiled.report.functions.is_empty() => println!(
                "{spec} ({}): prebuilt module read and checked against its manifest (no ptxas report: registers and spills unknown)",
                dtype.name()
            ),
            Ok(compiled) => {
                let r = &compiled.report;
                let regs = r.functions.iter().map(|f| f.registers).max().unwrap_or(0);
                let spills = r.spills();
                // The compile trials' judgement: no spill, no stack, no warning.
                ok &= harness::suite::check_resources(r).is_ok();
                println!(
                    "{spec} ({}): {regs} registers, {spills} bytes spilled{}",
                    dtype.name(),
                    r.warnings
                        .iter()
                        .map(|w| format!("; {w}"))
                        .collect::<String>()
                );
            }
            Err(e) => {
                ok = false;
                bad_input |= matches!(e, harness::error::Error::Config(_));
                println!("{spec} ({}): {e}", dtype.name());
            }
        }
    }
    match (ok, bad_input) {
        (_, true) => ExitCode::from(2),
        (false, false) => ExitCode::FAILURE,
        (true, false) => ExitCode::SUCCESS,
    }
}
