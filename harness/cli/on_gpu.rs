//! The commands that measure on a GPU: the main job (the ladder against cuBLAS), `compare`, `sustain`, `profile`
//! and `cublas-paths`. Each says so and stops where there is no GPU to run on.

use crate::{shape_arg, spec};
use harness::gpu::arch::Arch;
use harness::gpu::device;
use harness::report::results::{Environment, RunFile};
use harness::settings::Settings;
use harness::trial::job::{Job, Observed, TrialRecord, VariantSpec};
use harness::trial::subprocess;
use harness::DType;
use std::process::ExitCode;
use std::time::Duration;

/// `cublas-paths SHAPE... [bf16] [--out FILE]`: chooses cuBLAS's reference path for each shape afresh by the
/// paired rule (measure/cublas_choice.rs), prints each choice and why, and writes them as JSON (the entries of
/// pins/cublas-paths.json).
pub(crate) fn cublas_paths(args: &[String], settings: &Settings) -> ExitCode {
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

/// The GPU `what` runs on, checked before anything starts: one of compute capability 8.0 or later with NVRTC and
/// cuBLAS, which runs every variant of `jobs`; else what is missing, said, and the exit code.
fn gpu_for<'a>(what: &str, jobs: impl IntoIterator<Item = &'a Job>) -> Result<(), ExitCode> {
    let info = device::gpu_available().map_err(|reason| {
        eprintln!("{what} needs a CUDA GPU of compute capability 8.0 or later: {reason}");
        ExitCode::FAILURE
    })?;
    for job in jobs {
        if let Some(why) = job.refused_by(&info.name, info.compute_capability) {
            eprintln!("{what}: {why}");
            return Err(ExitCode::from(2));
        }
    }
    Ok(())
}

/// Nsight Compute on one variant and on cuBLAS: `profile SPEC SHAPE [bf16] [--full]`; the report is kept under
/// results/profiles/ (with `--full`, ncu's full section set, its details page, details.txt, and its source page,
/// source.csv, summarized: where each kernel's warps wait).
pub(crate) fn profile(args: &[String]) -> ExitCode {
    let dtype = match super::dtype_and_words("profile", &args[2..]) {
        Ok((_, rest)) if rest.iter().any(|w| *w != "--full") => {
            let extra = rest.iter().find(|w| **w != "--full").unwrap();
            return super::refuse(&format!(
                "profile takes a spec, a shape, a dtype and --full; `{extra}` is none of them"
            ));
        }
        Ok((dtype, _)) => dtype,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(shape) = shape_arg(&args[1]) else {
        return ExitCode::from(2);
    };
    let variant = match spec(&args[0], &shape, dtype) {
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
    if let Err(e) = variant.validate_for(&shape, dtype) {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    if let Err(e) = harness::trial::profile::find_ncu() {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    let name = format!("profile::{}::{}", variant.name(), shape.name);
    let job = Job::Profile {
        variant,
        shape,
        dtype,
    };
    if let Err(code) = gpu_for("profile", [&job]) {
        return code;
    }
    let stamp = harness::report::results::utc_now().replace([':', '-'], "");
    let safe = harness::report::results::file_stem(&name);
    let dir = harness::report::results::results_dir()
        .join("profiles")
        .join(format!("{safe}-{stamp}"));
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

/// Every rung against cuBLAS on every standard shape, each pair in its own process, as one table.
pub(crate) fn ladder(filters: &[String], deadline: Duration, settings: &Settings) -> ExitCode {
    match device::gpu_available() {
        Err(reason) => {
            eprintln!("gemm-ablate needs a GPU for the ladder (its kernels need a Hopper GPU, H100/H200): {reason}");
            eprintln!("(Without a GPU: show, diff, build, auto, list, report, baseline, agree and stalls work; `cargo test --release` runs the CPU tests.)");
            return ExitCode::FAILURE;
        }
        Ok(info) if !Arch::HOPPER.runs_on(info.compute_capability) => {
            let (major, minor) = info.compute_capability;
            eprintln!(
                "the ladder's kernels need a Hopper GPU (sm_90a); this GPU is sm_{major}{minor} ({}). cuBLAS and \
                 kernels of your own run here: `gemm-ablate compare SHAPE cublas ext:NAME` (docs/external-kernels.md)",
                info.name
            );
            return ExitCode::FAILURE;
        }
        Ok(_) => {}
    }
    let shapes = harness::kernel::problem::standard_shapes();
    let mut records: Vec<TrialRecord> = Vec::new();
    let mut all = harness::trial::hypothesis::ladder_trials();
    harness::trial::pins::apply(&mut all);
    all.extend(peer_rows(&shapes));
    all.extend(fp8_rows(&shapes));
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
        let asks = harness::trial::workers::asks_of(&trial.expectation);
        let r = harness::trial::workers::run(&trial.name, &trial.job, deadline, &[], spread, asks)
            .record
            .judged(&trial.expectation);
        eprintln!(
            "{name}: {} ({})",
            harness::report::text::ladder_cell(&r),
            r.judgement
        );
        records.push(r);
    }
    // The FP8 rows are a table of their own: their baseline is cuBLASLt's FP8 path in each row's scheme.
    let (fp8, sixteen): (Vec<TrialRecord>, Vec<TrialRecord>) = records
        .iter()
        .cloned()
        .partition(|r| r.name.starts_with(FP8_ROW_PREFIX));
    harness::report::text::print_ladder(&sixteen, &shapes);
    if !fp8.is_empty() {
        harness::report::text::print_fp8_ladder(&fp8, &shapes);
    }
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

/// The peers' rows (manifests with `peer = true`): each against cuBLAS on every standard shape its manifest takes
/// in fp16, checked, then timed. A benchmark beside the ladder; their hypotheses against `auto` are trials.
fn peer_rows(shapes: &[harness::Shape]) -> Vec<harness::GpuTrial> {
    let mut rows = Vec::new();
    for peer in harness::families::external::manifest::peers() {
        let Some(Ok(candidate)) = VariantSpec::outside_ladder(&peer) else {
            continue;
        };
        for shape in shapes {
            if candidate.validate_for(shape, DType::F16).is_err() {
                continue;
            }
            let job = Job::Compare {
                baseline: VariantSpec::Cublas,
                candidate: candidate.clone(),
                shape: shape.clone(),
                dtype: DType::F16,
            };
            let correct = harness::Expectation::hypothesis(
                harness::Expect::Correct,
                "a peer's cell: checked against cuBLAS, then timed (its verdicts are its hypothesis files')",
            );
            rows.push(harness::GpuTrial::new(
                format!("ladder::{peer}::{}", shape.name),
                job,
                correct,
            ));
        }
    }
    rows
}

/// The FP8 rows' trial names start with this; `ladder fp8` runs them alone.
const FP8_ROW_PREFIX: &str = "ladder::fp8::";

/// The FP8 rows (issue 40): the top rung with k-blocks of 128 one-byte elements and `auto`, in each scaling
/// scheme, and the peers whose manifest takes e4m3, each against cuBLASLt's FP8 path in the same scheme on every
/// standard shape: checked against the fp32 reference on the dequantized operands, then timed. A benchmark, as the
/// peers' rows are: the FP8 verdicts are hypothesis files' (ablations/fp8-hypotheses).
fn fp8_rows(shapes: &[harness::Shape]) -> Vec<harness::GpuTrial> {
    use harness::Scales;
    let (tensor, row, block) = (
        DType::E4M3(Scales::Tensor),
        DType::E4M3(Scales::Row),
        DType::E4M3(Scales::Block),
    );
    let ours = [
        ("rung10", "10:tile_k=128", tensor),
        ("auto", "auto", tensor),
        ("auto", "auto", row),
        ("auto", "auto", block),
    ];
    let peers = harness::families::external::manifest::peers()
        .into_iter()
        .map(|p| (p.clone(), p, tensor));
    let mut rows = Vec::new();
    for (label, word, dtype) in ours
        .map(|(l, w, d)| (l.to_string(), w.to_string(), d))
        .into_iter()
        .chain(peers)
    {
        for shape in shapes {
            // A peer that does not take FP8 (or this shape) has no FP8 row.
            let Ok(candidate) = spec(&word, shape, dtype) else {
                continue;
            };
            if candidate.validate_for(shape, dtype).is_err() {
                continue;
            }
            let job = Job::Compare {
                baseline: VariantSpec::Cublas,
                candidate,
                shape: shape.clone(),
                dtype,
            };
            let correct = harness::Expectation::hypothesis(
                harness::Expect::Correct,
                "an FP8 cell: checked against the fp32 reference, then timed (its verdicts are in ablations/fp8-hypotheses)",
            );
            rows.push(harness::GpuTrial::new(
                format!("{FP8_ROW_PREFIX}{}:{label}::{}", dtype.name(), shape.name),
                job,
                correct,
            ));
        }
    }
    rows
}

/// Each candidate against the baseline on one shape, each pair in its own process; the verdicts printed.
pub(crate) fn compare(
    shape_name: &str,
    specs: &[String],
    deadline: Duration,
    settings: &Settings,
) -> ExitCode {
    let Some(shape) = shape_arg(shape_name) else {
        return ExitCode::from(2);
    };
    // A dtype among the words (fp16 unless one is given: bf16, or for FP8 e4m3, e4m3-row or e4m3-block), the rest specs.
    let (dtype, specs) = match super::dtype_and_words("compare", specs) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if specs.len() < 2 {
        eprintln!("compare needs a baseline and at least one candidate");
        return ExitCode::from(2);
    }
    let parsed: Result<Vec<VariantSpec>, String> =
        specs.iter().map(|s| spec(s, &shape, dtype)).collect();
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // A spec that cannot run this problem is said before anything starts.
    for p in &parsed {
        if let Err(e) = p.validate_for(&shape, dtype) {
            eprintln!("{}: {e}", p.name());
            return ExitCode::from(2);
        }
    }
    let jobs: Vec<Job> = parsed[1..]
        .iter()
        .map(|cand| Job::Compare {
            baseline: parsed[0].clone(),
            candidate: cand.clone(),
            shape: shape.clone(),
            dtype,
        })
        .collect();
    if let Err(code) = gpu_for("compare", &jobs) {
        return code;
    }
    let spread = harness::trial::workers::Spread::from_settings(settings);
    let mut records = Vec::new();
    for (cand, job) in parsed[1..].iter().zip(jobs) {
        let name = format!(
            "compare::{}::{}::{}",
            cand.name(),
            parsed[0].name(),
            shape.name
        );
        let mut r =
            harness::trial::workers::run(&name, &job, deadline, &[], spread, Default::default())
                .record;
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
pub(crate) fn sustain_options(args: &[String]) -> Result<(Vec<String>, f64, usize), String> {
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
pub(crate) fn sustain(args: &[String]) -> ExitCode {
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
    // A dtype among the specs (fp16 unless one is given).
    let (dtype, specs) = match super::dtype_and_words("sustain", &specs) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let parsed: Result<Vec<VariantSpec>, String> =
        specs.iter().map(|s| spec(s, &shape, dtype)).collect();
    let variants = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    for v in &variants {
        if let Err(e) = v.validate_for(&shape, dtype) {
            eprintln!("{}: {e}", v.name());
            return ExitCode::from(2);
        }
    }
    let job = Job::Sustain {
        variants,
        shape: shape.clone(),
        dtype,
        seconds,
        passes,
    };
    if let Err(code) = gpu_for("sustain", [&job]) {
        return code;
    }
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

#[cfg(test)]
mod tests {
    use super::{fp8_rows, sustain_options, FP8_ROW_PREFIX};
    use harness::trial::job::{Job, VariantSpec};

    /// The main job's FP8 table: the top rung and `auto` in each scheme, and the Triton peer's FP8 build, each
    /// against cuBLASLt in the row's own scheme on every standard shape, and each a kernel that takes the problem.
    #[test]
    fn the_main_job_has_fp8_rows_against_cublaslt_in_each_scheme() {
        let shapes = harness::kernel::problem::standard_shapes();
        let rows = fp8_rows(&shapes);
        let names: Vec<&str> = rows.iter().map(|t| t.name.as_str()).collect();
        for row in [
            "e4m3:rung10",
            "e4m3:auto",
            "e4m3-row:auto",
            "e4m3-block:auto",
            "e4m3:ext:triton_persistent_e4m3",
        ] {
            for s in &shapes {
                let name = format!("{FP8_ROW_PREFIX}{row}::{}", s.name);
                assert!(
                    names.contains(&name.as_str()),
                    "{name} missing from {names:?}"
                );
            }
        }
        assert_eq!(rows.len(), 5 * shapes.len(), "{names:?}");
        for t in &rows {
            let Job::Compare {
                baseline,
                candidate,
                shape,
                dtype,
            } = &t.job
            else {
                panic!("{}: not a comparison", t.name);
            };
            assert!(
                dtype.is_fp8() && matches!(baseline, VariantSpec::Cublas),
                "{}",
                t.name
            );
            assert!(
                t.name.contains(&format!("fp8::{}:", dtype.name())),
                "{}",
                t.name
            );
            candidate.validate_for(shape, *dtype).unwrap();
        }
    }

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
