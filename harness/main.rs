//! `cargo run --release` runs the main job: every ladder rung against cuBLAS on the seven standard shapes, as a
//! table (time, TFLOP/s, ratio to cuBLAS, max error), written to results/ as JSON.
//!
//!   gemm-ablate [ladder] [FILTER...]   the ladder table (filters match `rungN_name::shape`)
//!   gemm-ablate show RUNG [bf16] [--all]  the rung's kernel with its switches resolved: only what it uses
//!                                       (--all: every primitive, as compiled); `stream[:...]`, `skinny[:...]` too
//!   gemm-ablate diff RUNG RUNG          what changes between two rungs' kernels
//!   gemm-ablate compare SHAPE BASE CAND  check both, time CAND against BASE (specs like `rung8:cluster=1`, or cublas)
//!   gemm-ablate build SPEC... [bf16]    compile each variant with NVRTC (no GPU needed): registers, spills, warnings
//!   gemm-ablate list                    the rungs and what each adds
//!   gemm-ablate device                  what the GPU is
//!   gemm-ablate agree FILE...           run-to-run agreement of the comparisons in results files
//!   gemm-ablate report FILE... [--out DIR] [--across-commits]  a markdown report with SVG charts (grouped by GPU and host)
//!   gemm-ablate baseline NOW BASE [--fail-on-slower]  every trial of a run against the same trial in another
//!   gemm-ablate profile SPEC SHAPE [bf16] [--full]  Nsight Compute on the variant and on cuBLAS, side by side

use harness::gpu::device;
use harness::kernel::source;
use harness::report::results::{Environment, RunFile};
use harness::settings::Settings;
use harness::trial::job::{Job, Observed, TrialRecord, VariantSpec};
use harness::trial::subprocess;
use harness::{DType, Rung};
use std::process::ExitCode;
use std::time::Duration;

fn usage() -> ExitCode {
    eprintln!("usage: gemm-ablate [ladder [FILTER...] | show RUNG|stream[:...]|skinny[:...] [bf16] [--all] | diff RUNG RUNG | compare SHAPE BASE CAND... | build SPEC... [bf16] | auto SHAPE... | auto --ranges NxK | list | device | agree FILE... | report FILE... [--out DIR] [--across-commits] | baseline NOW BASE [--fail-on-slower] | profile SPEC SHAPE [bf16] [--full] | sustain SHAPE SPEC... [--seconds S] [--passes P] | stalls SOURCE.csv [TOP]]");
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
    source::resolved_program(&rung.config().defines(dtype), source::GEMM, everything)
        .map(|s| header + &s)
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    if let Some(code) = subprocess::child_entry() {
        return code;
    }
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
            let dtype = args[2.min(args.len())..]
                .iter()
                .find_map(|d| DType::parse(d))
                .unwrap_or(DType::F16);
            let everything = args[2.min(args.len())..].iter().any(|a| a == "--all");
            // `show stream...` and `show skinny...`: the kernels outside the ladder.
            let outside = args.get(1).and_then(|s| VariantSpec::outside_ladder(s));
            let shown = match outside {
                Some(spec) => spec
                    .and_then(|v| {
                        v.outside_ladder_shown(dtype, everything)
                            .expect("a kernel outside the ladder can be shown")
                    })
                    .map_err(|e| e.to_string()),
                None => {
                    let Some(rung) = rung_arg(args.get(1)) else {
                        return usage();
                    };
                    resolved(rung, dtype, everything)
                }
            };
            match shown {
                Ok(s) => {
                    print!("{s}");
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
                    print!(
                        "{}",
                        diff.unified_diff()
                            .context_radius(3)
                            .header(&a.name(), &b.name())
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
            print!("{}", harness::report::text::list_text());
            print!("{}", harness::kernel::external::listing());
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

/// `cublas-paths SHAPE... [bf16] [--out FILE]`: chooses cuBLAS's reference path for each shape afresh by the
/// paired rule (measure/cublas_choice.rs), prints each choice and why, and writes them as JSON (the entries of
/// pins/cublas-paths.json).
fn cublas_paths(args: &[String], settings: &Settings) -> ExitCode {
    let mut dtype = DType::F16;
    let mut out = None;
    let mut shapes = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            match it.next() {
                Some(f) => out = Some(f.clone()),
                None => {
                    eprintln!("--out needs a file");
                    return ExitCode::from(2);
                }
            }
        } else if let Some(d) = DType::parse(a) {
            dtype = d;
        } else {
            match harness::kernel::problem::parse_shape(a) {
                Ok(s) => shapes.push((s, dtype)),
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    for s in &mut shapes {
        s.1 = dtype;
    }
    let chosen = harness::measure::cublas_choice::choose_afresh(&shapes, settings, |c| {
        println!("{}: {}", c.key, c.describe())
    });
    match chosen {
        Ok(choices) => {
            if let Some(f) = out {
                let text = serde_json::to_string_pretty(&choices).unwrap_or_default();
                if let Err(e) = std::fs::write(&f, text) {
                    eprintln!("{f}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Nsight Compute on one variant and on cuBLAS: `profile SPEC SHAPE [bf16] [--full]`; the report is kept under
/// results/profiles/ (with `--full`, ncu's full section set, its details page, details.txt, and its source page,
/// source.csv, summarized: where each kernel's warps wait).
fn profile(args: &[String]) -> ExitCode {
    let dtype = args[2..]
        .iter()
        .find_map(|d| DType::parse(d))
        .unwrap_or(DType::F16);
    let Some(shape) = shape_arg(&args[1]) else {
        return ExitCode::from(2);
    };
    let variant = match spec(&args[0], &shape) {
        Ok(VariantSpec::Cublas) => {
            eprintln!("profile compares a kernel with cuBLAS: give a kernel spec such as rung7 or rung8:pingpong=0");
            return ExitCode::from(2);
        }
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = variant.validate(&shape) {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    if let Err(e) = harness::trial::profile::find_ncu() {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    if let Err(reason) = device::hopper_available() {
        eprintln!("profile needs a Hopper GPU: {reason}");
        return ExitCode::FAILURE;
    }
    let name = format!("profile::{}::{}", variant.name(), shape.name);
    let stamp = harness::report::results::utc_now().replace([':', '-'], "");
    let safe = harness::report::results::file_stem(&name);
    let dir = harness::report::results::results_dir()
        .join("profiles")
        .join(format!("{safe}-{stamp}"));
    let job = Job::Profile {
        variant,
        shape,
        dtype,
    };
    let full = args[2..].iter().any(|a| a == "--full");
    match harness::trial::profile::run(&name, &job, &dir, full) {
        Ok(p) => {
            print!("{}", harness::report::text::profile_text(&p));
            if let Ok(summary) = std::fs::read_to_string(dir.join("source-summary.txt")) {
                print!(
                    "\nwhere the warps wait (Nsight Compute's source page, source.csv):\n{summary}"
                );
            }
            println!("saved in {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "{e}\n(what ncu printed is in {})",
                dir.join("ncu.log").display()
            );
            ExitCode::FAILURE
        }
    }
}

/// Where each kernel's warps wait, from a source page `profile --full` wrote (source.csv): `stalls FILE [TOP]`.
fn stalls(args: &[String]) -> ExitCode {
    let top = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(12);
    let parsed = std::fs::read_to_string(&args[0])
        .map_err(|e| format!("{}: {e}", args[0]))
        .and_then(|text| harness::trial::source_page::parse(&text).map_err(|e| e.to_string()));
    match parsed {
        Ok(kernels) => {
            print!("{}", harness::trial::source_page::summary(&kernels, top));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// A named shape or MxNxK, or the error printed.
fn shape_arg(text: &str) -> Option<harness::kernel::problem::Shape> {
    harness::kernel::problem::parse_shape(text)
        .map_err(|e| eprintln!("{e}"))
        .ok()
}

/// One results file against another taken as the baseline: `baseline NOW.json BASE.json [--fail-on-slower]`.
fn baseline(args: &[String]) -> ExitCode {
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

/// What `auto` runs, without a GPU: `auto SHAPE...` (the spec and the rule for each shape) or `auto --ranges NxK`
/// (the kernel for every token count from 1 to 8192, as ranges), for the H200's SM count or `--sms N`.
fn auto(args: &[String]) -> ExitCode {
    use harness::kernel::dispatch::{auto_ranges, auto_spec, H200_SMS};
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
    if args.is_empty() {
        eprintln!("usage: gemm-ablate auto [--sms N] SHAPE... | auto [--sms N] --ranges NxK");
        return ExitCode::from(2);
    }
    // A closed pipe (`| head`) ends the listing quietly.
    let mut out = std::io::stdout().lock();
    if args[0] == "--ranges" {
        let Some(nk) = args.get(1) else {
            eprintln!("usage: gemm-ablate auto --ranges NxK (such as 8192x8192)");
            return ExitCode::from(2);
        };
        let shape = match parse_shape(&format!("1x{nk}")) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let _ = writeln!(
            out,
            "auto on {sms} SMs, N = {}, K = {}, M = 1 to 8192:",
            shape.n, shape.k
        );
        for (first, last, spec, rule) in auto_ranges(shape.n, shape.k, sms, 8192) {
            if writeln!(out, "  M = {first}-{last}: {spec}\n      {rule}").is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    for text in &args {
        match parse_shape(text) {
            Ok(shape) => {
                let (spec, rule) = auto_spec(&shape, sms);
                let _ = writeln!(
                    out,
                    "{text} ({}x{}x{}) on {sms} SMs: {spec}\n  {rule}",
                    shape.m, shape.n, shape.k
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
fn report(args: &[String]) -> ExitCode {
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
fn agree(files: &[String]) -> ExitCode {
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

/// Every rung against cuBLAS on every standard shape, each pair in its own process, as one table.
fn ladder(filters: &[String], deadline: Duration, settings: &Settings) -> ExitCode {
    if let Err(reason) = device::hopper_available() {
        eprintln!("gemm-ablate needs a Hopper GPU (H100/H200) for the ladder: {reason}");
        eprintln!("(Without a GPU: show, diff, build, auto, list, report, baseline, agree and stalls work; `cargo test --release` runs the CPU tests.)");
        return ExitCode::FAILURE;
    }
    let shapes = harness::kernel::problem::standard_shapes();
    let mut records: Vec<TrialRecord> = Vec::new();
    let mut all = harness::trial::hypothesis::ladder_trials();
    harness::trial::pins::apply(&mut all);
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|t| {
            let name = t.name.trim_start_matches("ladder::");
            filters.is_empty() || filters.iter().any(|f| name.contains(f))
        })
        .collect();
    let progress = harness::suite::Progress::new(chosen.len());
    let spread = harness::trial::workers::Spread::from_settings(settings);
    for trial in chosen {
        let name = trial.name.trim_start_matches("ladder::").to_string();
        progress.start(&name);
        let precision = harness::trial::workers::precision_for(&trial.expectation);
        let r =
            harness::trial::workers::run(&trial.name, &trial.job, deadline, &[], spread, precision)
                .record
                .judged(&trial.expectation);
        eprintln!(
            "{name}: {} ({})",
            harness::report::text::ladder_cell(&r),
            r.judgement
        );
        records.push(r);
    }
    harness::report::text::print_ladder(&records, &shapes);
    let file = RunFile {
        suite: "ladder".into(),
        environment: Environment::capture(),
        trials: records,
        calibration: Vec::new(),
    };
    match file.write() {
        Ok(p) => println!("results written to {}", p.display()),
        Err(e) => eprintln!("could not write results: {e}"),
    }
    ExitCode::SUCCESS
}

/// A variant spec on the command line: `cublas`, `auto` (resolved for the shape, see harness/kernel/dispatch.rs),
/// `stream` (the read floor, harness/kernel/stream.rs) or `skinny` (harness/kernel/skinny.rs) with their switches, or
/// a rung with switches.
/// The SM count `auto` resolves for: the visible GPU's, or the H200's where there is none (a listing or a build
/// without a GPU), said once where it is not the H200's.
fn auto_sms() -> u32 {
    use harness::kernel::dispatch::H200_SMS;
    static SMS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *SMS.get_or_init(|| match device::query(0) {
        Ok(info) if info.sm_count != H200_SMS => {
            eprintln!(
                "note: auto is resolved for this GPU's {} SMs ({}); its rules were measured on the H200's {H200_SMS}",
                info.sm_count, info.name
            );
            info.sm_count
        }
        _ => H200_SMS,
    })
}

fn spec(s: &str, shape: &harness::Shape) -> Result<VariantSpec, String> {
    if s.eq_ignore_ascii_case("cublas") {
        return Ok(VariantSpec::Cublas);
    }
    if let Some(outside) = VariantSpec::outside_ladder(s) {
        return outside.map_err(|e| e.to_string());
    }
    if s.eq_ignore_ascii_case("auto") {
        let (label, config) = harness::kernel::dispatch::auto_variant(shape, auto_sms());
        return Ok(VariantSpec::gemm(label, config));
    }
    harness::kernel::ladder::parse_spec(s)
        .and_then(|c| c.validate().map(|_| VariantSpec::gemm(s, c)))
        .map_err(|e| e.to_string())
}

/// Each candidate against the baseline on one shape, each pair in its own process; the verdicts printed.
fn compare(
    shape_name: &str,
    specs: &[String],
    deadline: Duration,
    settings: &Settings,
) -> ExitCode {
    let Some(shape) = shape_arg(shape_name) else {
        return ExitCode::from(2);
    };
    let parsed: Result<Vec<VariantSpec>, String> = specs.iter().map(|s| spec(s, &shape)).collect();
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // A spec that cannot run this shape is said before anything starts.
    for p in &parsed {
        if let Err(e) = p.validate(&shape) {
            eprintln!("{}: {e}", p.name());
            return ExitCode::from(2);
        }
    }
    if let Err(reason) = device::hopper_available() {
        eprintln!("compare needs a Hopper GPU: {reason}");
        return ExitCode::FAILURE;
    }
    let spread = harness::trial::workers::Spread::from_settings(settings);
    let mut records = Vec::new();
    for cand in &parsed[1..] {
        let job = Job::Compare {
            baseline: parsed[0].clone(),
            candidate: cand.clone(),
            shape: shape.clone(),
            dtype: DType::F16,
        };
        let name = format!(
            "compare::{}::{}::{}",
            cand.name(),
            parsed[0].name(),
            shape.name
        );
        let mut r = harness::trial::workers::run(&name, &job, deadline, &[], spread, None).record;
        r.judgement = match &r.observed {
            Observed::Compared(e) => harness::report::text::estimate_line(e),
            Observed::Wrong { message: m, .. }
            | Observed::Hang(m)
            | Observed::HostTimeout(m)
            | Observed::Error(m) => format!("no verdict, {}: {m}", r.observed.kind()),
            o => format!("no verdict: {}", o.kind()),
        };
        r.passed = matches!(r.observed, Observed::Compared(_));
        println!("{name}");
        harness::report::text::print_record(&r);
        records.push(r);
    }
    let file = RunFile {
        suite: "compare".into(),
        environment: Environment::capture(),
        trials: records,
        calibration: Vec::new(),
    };
    if let Ok(p) = file.write() {
        println!("results written to {}", p.display());
    }
    ExitCode::SUCCESS
}

/// `sustain`'s arguments after the shape: the specs, `--seconds S` (above 0, at most 60; default 4) and
/// `--passes P` (1 to 10; default 2).
fn sustain_options(args: &[String]) -> Result<(Vec<String>, f64, usize), String> {
    let (mut seconds, mut passes, mut specs) = (4.0, 2, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => match it.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(s) if s > 0.0 && s <= 60.0 => seconds = s,
                _ => return Err("--seconds takes a number of seconds above 0 and at most 60 (a run this long settles; more costs device time)".into()),
            },
            "--passes" => match it.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(p) if (1..=10).contains(&p) => passes = p,
                _ => return Err("--passes takes a whole number from 1 to 10".into()),
            },
            _ => specs.push(a.clone()),
        }
    }
    if specs.is_empty() {
        return Err("sustain needs at least one variant spec (a rung, `auto` or `cublas`)".into());
    }
    Ok((specs, seconds, passes))
}

/// Each variant (or `cublas`) alone, back to back, for some seconds, the list twice by default: the time, SM clock
/// (NVML's and, with `clock_probe=1`, the kernel's own), power and energy each settles at under sustained load.
/// `sustain SHAPE SPEC... [--seconds S] [--passes P]`.
fn sustain(args: &[String]) -> ExitCode {
    let (specs, seconds, passes) = match sustain_options(&args[1..]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(shape) = shape_arg(&args[0]) else {
        return ExitCode::from(2);
    };
    let parsed: Result<Vec<VariantSpec>, String> = specs.iter().map(|s| spec(s, &shape)).collect();
    let variants = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    for v in &variants {
        if let Err(e) = v.validate(&shape) {
            eprintln!("{}: {e}", v.name());
            return ExitCode::from(2);
        }
    }
    if let Err(reason) = device::hopper_available() {
        eprintln!("sustain needs a Hopper GPU: {reason}");
        return ExitCode::FAILURE;
    }
    let job = Job::Sustain {
        variants,
        shape: shape.clone(),
        dtype: DType::F16,
        seconds,
        passes,
    };
    let name = format!("sustain::{}", shape.name);
    // Compilation, checks and the runs themselves, with room to spare.
    let deadline = Duration::from_secs_f64(120.0 + seconds * (passes * specs.len()) as f64 * 1.5);
    let mut r = subprocess::run_in_child(&name, &job, deadline).record;
    r.passed = matches!(r.observed, Observed::Sustained);
    r.judgement = if r.passed {
        "every variant correct; each run alone (not a paired verdict)".into()
    } else {
        format!("no figures, {}", r.observed.kind())
    };
    println!("{name}");
    harness::report::text::print_record(&r);
    let passed = r.passed;
    let file = RunFile {
        suite: "sustain".into(),
        environment: Environment::capture(),
        trials: vec![r],
        calibration: Vec::new(),
    };
    if let Ok(p) = file.write() {
        println!("results written to {}", p.display());
    }
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Compiles each variant (its switches checked first) and prints what ptxas reports: a spec that does not build,
/// or spills, is found here rather than on a lent GPU. Fails if any does not compile or spills.
fn build(args: &[String]) -> ExitCode {
    let dtypes: Vec<DType> = args.iter().filter_map(|a| DType::parse(a)).collect();
    if dtypes.len() > 1 {
        eprintln!(
            "build takes one dtype, got {}: run it once per dtype",
            dtypes
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(" and ")
        );
        return ExitCode::from(2);
    }
    let dtype = dtypes.first().copied().unwrap_or(DType::F16);
    let mut ok = true;
    for spec in args.iter().filter(|a| DType::parse(a).is_none()) {
        let built = match VariantSpec::outside_ladder(spec) {
            // An external kernel: its manifest checked for this dtype, its module built as the manifest says.
            Some(Ok(VariantSpec::External { name, spec: ext })) => ext
                .load()
                .and_then(|(m, _)| {
                    if m.dtypes.contains(&dtype) {
                        Ok(())
                    } else {
                        Err(harness::error::Error::Config(format!(
                            "{}: dtypes: {} is not supported",
                            m.path.display(),
                            dtype.name()
                        )))
                    }
                })
                .and_then(|_| ext.build(&name, dtype))
                .map(|b| b.compiled),
            Some(outside) => outside
                .map(|v| {
                    v.outside_ladder_program(dtype)
                        .expect("a kernel outside the ladder has a program")
                })
                .and_then(|p| harness::gpu::compile::compile(spec, &p)),
            None => harness::kernel::ladder::parse_spec(spec)
                .and_then(|config| config.validate().map(|_| config))
                .map(|config| source::gemm_program(&config, dtype))
                .and_then(|p| harness::gpu::compile::compile(spec, &p)),
        };
        match built {
            Ok(compiled) => {
                let r = &compiled.report;
                let regs = r.functions.iter().map(|f| f.registers).max().unwrap_or(0);
                let spills = r.spills();
                ok &= spills == 0;
                println!(
                    "{spec} ({}): {regs} registers, {spills} bytes spilled{}",
                    dtype.name(),
                    r.warnings
                        .iter()
                        .map(|w| format!("; ptxas: {w}"))
                        .collect::<String>()
                );
            }
            Err(e) => {
                ok = false;
                println!("{spec} ({}): {e}", dtype.name());
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::sustain_options;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn sustain_options_default_and_name_their_limits() {
        assert_eq!(
            sustain_options(&args("cublas rung10")).unwrap(),
            (args("cublas rung10"), 4.0, 2)
        );
        assert_eq!(
            sustain_options(&args("rung10 --seconds 2.5 --passes 3")).unwrap(),
            (args("rung10"), 2.5, 3)
        );
        for (bad, says) in [
            ("rung10 --seconds 0", "above 0 and at most 60"),
            ("rung10 --seconds 61", "at most 60"),
            ("rung10 --seconds", "--seconds takes"),
            ("rung10 --passes 0", "from 1 to 10"),
            ("rung10 --passes 1.5", "whole number"),
            ("--seconds 3", "at least one variant spec"),
        ] {
            let e = sustain_options(&args(bad)).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
