//! Hypotheses as data: one TOML file per hypothesis (name, baseline, candidates, shapes, dtype, the expected
//! verdict or time ratio, its reason, the date it was written), read from the repository's `hypotheses/` and
//! from the folders in GEMM_ABLATE_HYPOTHESES. Each file becomes the trials `hypothesis::FILE::CANDIDATE::SHAPE`;
//! a file that cannot become trials becomes one broken trial whose message names the file and the field, so a
//! bad file never takes down the binary or its listing.

use crate::error::{Error, Result};
use crate::kernel::problem::{parse_shape, DType, Shape};
use crate::measure::stats::Verdict;
use crate::trial::expect::{Expect, Expectation};
use crate::trial::job::{GpuTrial, Job, VariantSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The setting that names more folders of hypothesis files (colon-separated).
pub const FOLDERS_SETTING: &str = "GEMM_ABLATE_HYPOTHESES";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHypothesis {
    /// The hypothesis in one sentence.
    name: String,
    /// The date it was written (YYYY-MM-DD): before the runs that judge it.
    written: String,
    baseline: String,
    candidates: Vec<String>,
    shapes: Vec<String>,
    #[serde(default)]
    dtype: Option<String>,
    /// The verdict of each candidate against the baseline: faster, slower, no change or inconclusive.
    #[serde(default)]
    expect: Option<String>,
    /// Or the candidate's time over the baseline's, from lo to hi.
    #[serde(default)]
    expect_ratio: Option<Vec<f64>>,
    reason: String,
    /// The GPU model the expectation is about, as `nvidia-smi` names it ("NVIDIA H200"), where it was drawn from
    /// that model's measurements: on another model its trials are skipped with the reason. Absent: any GPU.
    #[serde(default)]
    gpu: Option<String>,
}

/// A file that could not become trials: one failing trial, named after the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Broken {
    pub name: String,
    pub message: String,
}

/// What the hypothesis folders hold.
#[derive(Default)]
pub struct Loaded {
    pub trials: Vec<GpuTrial>,
    pub broken: Vec<Broken>,
}

/// The repository's `hypotheses/`, then each folder GEMM_ABLATE_HYPOTHESES names.
pub fn folders() -> Vec<PathBuf> {
    let mut out = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("hypotheses")];
    if let Some(more) = std::env::var_os(FOLDERS_SETTING) {
        out.extend(
            more.to_string_lossy()
                .split(':')
                .filter(|s| !s.trim().is_empty())
                .map(PathBuf::from),
        );
    }
    out
}

/// Every hypothesis in the default folders.
pub fn load() -> Loaded {
    load_folders(&folders())
}

/// Every `.toml` file in `folders` (sorted by name), each as its trials or as one broken trial.
pub fn load_folders(folders: &[PathBuf]) -> Loaded {
    let mut loaded = Loaded::default();
    let mut stems: Vec<(String, PathBuf)> = Vec::new();
    for (i, folder) in folders.iter().enumerate() {
        let entries = match std::fs::read_dir(folder) {
            Ok(e) => e,
            // The repository's own folder may be absent in a stripped copy; a folder the user named may not.
            Err(_) if i == 0 => continue,
            Err(e) => {
                loaded.broken.push(Broken {
                    name: format!("hypothesis::{}", folder.display()),
                    message: format!(
                        "{FOLDERS_SETTING} names {}, which cannot be read: {e}",
                        folder.display()
                    ),
                });
                continue;
            }
        };
        // `.toml` in any case: a file the user named `X.TOML` is not passed over in silence.
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case("toml"))
            })
            .collect();
        files.sort();
        for path in files {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some((_, first)) = stems.iter().find(|(s, _)| *s == stem) {
                loaded.broken.push(Broken {
                    name: format!("hypothesis::{stem}::{}", path.display()),
                    message: format!(
                        "{}: a hypothesis named {stem} was already read from {}: rename one",
                        path.display(),
                        first.display()
                    ),
                });
                continue;
            }
            stems.push((stem.clone(), path.clone()));
            // A defect the file reaches in the harness fails this file's trial, never the listing of the rest
            // (at f6883b2 a `cluster=0` candidate divided by zero and took every trial down with it).
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| load_file(&path)))
                .unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Err(Error::Config(format!(
                        "{}: reading it panicked ({what}): a defect of the harness, please report it with the file",
                        path.display()
                    )))
                });
            match read {
                Ok(trials) => loaded.trials.extend(trials),
                Err(e) => loaded.broken.push(Broken {
                    name: format!("hypothesis::{stem}"),
                    message: e.to_string(),
                }),
            }
        }
    }
    loaded
}

/// A spec as a hypothesis (or the command line) writes it: `cublas`, `auto` (resolved for the shape on the visible
/// GPU's SMs, the H200's without one), a kernel outside the ladder (`stream...`, `skinny...`, `ext:...`), or a rung
/// with switches; checked for the shape.
pub fn resolve_spec(spec: &str, shape: &Shape, dtype: DType) -> Result<VariantSpec> {
    let s = spec.trim();
    let v = if s.eq_ignore_ascii_case("cublas") {
        VariantSpec::Cublas
    } else if s.eq_ignore_ascii_case("auto") {
        let sms = crate::gpu::device::visible_sm_count()
            .map_or(crate::kernel::dispatch::H200_SMS, |(sms, _)| sms);
        let (label, config) = crate::kernel::dispatch::auto_variant_for(shape, sms, dtype);
        VariantSpec::gemm(label, config)
    } else if let Some(outside) = VariantSpec::outside_ladder(s) {
        outside?
    } else {
        let config = crate::kernel::ladder::parse_spec(s)?;
        config.validate_for(dtype)?;
        VariantSpec::gemm(s, config)
    };
    v.validate_for(shape, dtype)?;
    Ok(v)
}

/// The trials of one hypothesis file, or an error naming the file and the field.
pub fn load_file(path: &Path) -> Result<Vec<GpuTrial>> {
    // A pipe would block the listing, a device would be read without end.
    if !path.is_file() {
        return Err(Error::Config(format!(
            "{}: not a regular file (a folder, a pipe or a device): a hypothesis is a TOML file",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Config(format!("{}: cannot read it: {e}", path.display())))?;
    trials_from_text(path, &text)
}

/// `load_file` on text already read; `path` names the file in errors and trial names.
pub fn trials_from_text(path: &Path, text: &str) -> Result<Vec<GpuTrial>> {
    let at =
        |field: &str, msg: String| Error::Config(format!("{}: {field}: {msg}", path.display()));
    let raw: RawHypothesis = toml::from_str(text).map_err(|e| {
        Error::Config(format!(
            "{}: {}",
            path.display(),
            e.to_string().trim_end().replace('\n', "\n  ")
        ))
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if raw.name.trim().is_empty() {
        return Err(at("name", "say the hypothesis in one sentence".into()));
    }
    if raw.reason.trim().is_empty() {
        return Err(at("reason", "say why it is expected".into()));
    }
    if !is_date(&raw.written) {
        return Err(at(
            "written",
            format!("`{}`: the date it was written, as YYYY-MM-DD", raw.written),
        ));
    }
    let dtype = match &raw.dtype {
        None => DType::F16,
        Some(d) => DType::parse(d).ok_or_else(|| {
            at(
                "dtype",
                format!("`{d}`: fp16, bf16, e4m3, e4m3-row or e4m3-block"),
            )
        })?,
    };
    let expect = match (&raw.expect, &raw.expect_ratio) {
        (Some(word), None) => Expect::Verdict(verdict(word).ok_or_else(|| {
            at(
                "expect",
                format!("`{word}`: faster, slower, no change or inconclusive"),
            )
        })?),
        (None, Some(range)) => match range.as_slice() {
            [lo, hi] if lo.is_finite() && hi.is_finite() && 0.0 < *lo && lo < hi => {
                Expect::time_ratio_between(*lo, *hi)
            }
            _ => {
                return Err(at(
                    "expect_ratio",
                    format!(
                        "{range:?}: [lo, hi] with 0 < lo < hi (candidate time over baseline time)"
                    ),
                ))
            }
        },
        _ => {
            return Err(at(
                "expect",
                "give exactly one of `expect` (a verdict) and `expect_ratio` ([lo, hi])".into(),
            ))
        }
    };
    if raw.candidates.is_empty() {
        return Err(at("candidates", "name at least one spec".into()));
    }
    if raw.shapes.is_empty() {
        return Err(at("shapes", "name at least one shape".into()));
    }
    let mut shapes = Vec::new();
    for (i, s) in raw.shapes.iter().enumerate() {
        let shape = parse_shape(s).map_err(|e| at(&format!("shapes[{i}]"), inner(&e)))?;
        if shapes.iter().any(|x: &Shape| x.name == shape.name) {
            return Err(at(
                &format!("shapes[{i}]"),
                format!("`{s}` is listed twice"),
            ));
        }
        shapes.push(shape);
    }
    // Specs compare as the trial names them (trimmed, case aside), shapes by their dimensions: `" cublas"` and
    // `CUBLAS` are one variant, `square4096` and `4096x4096x4096` one problem.
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    for (i, s) in shapes.iter().enumerate() {
        if let Some(j) = shapes[..i]
            .iter()
            .position(|x| (x.m, x.n, x.k) == (s.m, s.n, s.k))
        {
            return Err(at(
                &format!("shapes[{i}]"),
                format!("`{}` is the problem of shapes[{j}] again", raw.shapes[i]),
            ));
        }
    }
    for (i, c) in raw.candidates.iter().enumerate() {
        if raw.candidates[..i].iter().any(|x| same(x, c)) {
            return Err(at(
                &format!("candidates[{i}]"),
                format!("`{c}` is listed twice"),
            ));
        }
        if same(c, &raw.baseline) {
            return Err(at(
                &format!("candidates[{i}]"),
                format!("`{c}` is the baseline: a candidate is compared against it"),
            ));
        }
    }
    let gpu = match raw.gpu.as_deref().map(str::trim) {
        Some("") => {
            return Err(at(
                "gpu",
                "name the GPU model as nvidia-smi does (\"NVIDIA H200\"), or leave the field out for any GPU"
                    .into(),
            ))
        }
        other => other.map(str::to_string),
    };
    let why = format!(
        "{} ({}, written {}: {})",
        raw.reason.trim(),
        path.display(),
        raw.written,
        raw.name.trim()
    );
    let mut trials = Vec::new();
    for shape in &shapes {
        let baseline = resolve_spec(&raw.baseline, shape, dtype).map_err(|e| {
            at(
                "baseline",
                format!("`{}` on {}: {}", raw.baseline, shape.name, inner(&e)),
            )
        })?;
        for (i, c) in raw.candidates.iter().enumerate() {
            let candidate = resolve_spec(c, shape, dtype).map_err(|e| {
                at(
                    &format!("candidates[{i}]"),
                    format!("`{c}` on {}: {}", shape.name, inner(&e)),
                )
            })?;
            let trial = GpuTrial::new(
                format!("hypothesis::{stem}::{}::{}", c.trim(), shape.name),
                Job::Compare {
                    baseline: baseline.clone(),
                    candidate,
                    shape: shape.clone(),
                    dtype,
                },
                Expectation::hypothesis(expect.clone(), why.clone()),
            );
            trials.push(match &gpu {
                Some(model) => trial.about_gpu(model),
                None => trial,
            });
        }
    }
    Ok(trials)
}

/// An error's message without the kind's prefix, for nesting inside another error's sentence.
fn inner(e: &Error) -> String {
    match e {
        Error::Config(m) => m.clone(),
        other => other.to_string(),
    }
}

/// A verdict word, in any case, its words apart by a space, `_` or `-` (`no change`, `No_Change`); nothing else.
fn verdict(word: &str) -> Option<Verdict> {
    let w = word
        .trim()
        .to_ascii_lowercase()
        .split([' ', '_', '-'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    [
        Verdict::Faster,
        Verdict::Slower,
        Verdict::NoChange,
        Verdict::Inconclusive,
    ]
    .into_iter()
    .find(|v| v.word() == w)
}

/// A date of the calendar as YYYY-MM-DD, from 1970 on (2026-02-31 is none).
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4
        || m.len() != 2
        || d.len() != 2
        || ![y, m, d]
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    let (y, m, d) = (
        y.parse::<u32>().unwrap_or(0),
        m.parse::<u32>().unwrap_or(0),
        d.parse::<u32>().unwrap_or(0),
    );
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    y >= 1970 && (1..=days).contains(&d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::external::manifest::tests::{damaged, scratch_folder};
    use crate::measure::oc::Rng;

    const GOOD: &str = r#"
name = "64-wide tiles are slower"
written = "2026-12-03"
baseline = "ext:mma_tile"
candidates = ["ext:mma_tile:BM=64,BN=64", "cublas"]
shapes = ["square4096", "1024x2048x512"]
dtype = "fp16"
expect = "no change"
reason = "a test"
"#;

    #[test]
    fn a_good_file_becomes_one_trial_per_candidate_and_shape() {
        let path = Path::new("/somewhere/tiles.toml");
        let trials = trials_from_text(path, GOOD).unwrap();
        let names: Vec<&str> = trials.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "hypothesis::tiles::ext:mma_tile:BM=64,BN=64::square4096",
                "hypothesis::tiles::cublas::square4096",
                "hypothesis::tiles::ext:mma_tile:BM=64,BN=64::1024x2048x512",
                "hypothesis::tiles::cublas::1024x2048x512",
            ]
        );
        let Job::Compare {
            baseline, shape, ..
        } = &trials[2].job
        else {
            panic!("a comparison");
        };
        assert_eq!(baseline.name(), "ext:mma_tile");
        assert_eq!((shape.m, shape.n, shape.k), (1024, 2048, 512));
        assert_eq!(
            trials[0].expectation.expect,
            Expect::Verdict(Verdict::NoChange)
        );
        let ratio = trials_from_text(
            path,
            &GOOD.replace("expect = \"no change\"", "expect_ratio = [1.5, 3.0]"),
        )
        .unwrap();
        assert!(matches!(
            ratio[0].expectation.expect,
            Expect::RatioNear { .. }
        ));
        // `auto` is resolved for each shape.
        let auto = trials_from_text(path, &GOOD.replace("ext:mma_tile\"", "auto\"")).unwrap();
        let Job::Compare { baseline, .. } = &auto[0].job else {
            panic!("a comparison");
        };
        assert!(baseline.name().starts_with("auto"), "{}", baseline.name());
        // Without `gpu` a hypothesis is about any GPU; with it, about that model only.
        assert!(trials.iter().all(|t| t.gpu.is_none()));
        let scoped =
            trials_from_text(path, &format!("{GOOD}gpu = \"NVIDIA H100 80GB HBM3\"\n")).unwrap();
        assert!(scoped
            .iter()
            .all(|t| t.gpu.as_deref() == Some("NVIDIA H100 80GB HBM3")));
    }

    #[test]
    fn a_file_broken_in_any_way_is_one_failing_trial_naming_file_and_field() {
        let dir = scratch_folder("broken-hypotheses");
        let cases = [
            ("syntax", "name = \"x", "line 2"),
            (
                "unknown_field",
                "baseline = \"ext:mma_tile\"",
                "unknown field `baselin`",
            ),
            (
                "missing_field",
                "reason = \"a test\"",
                "missing field `reason`",
            ),
            ("shape", "\"1024x2048x512\"", "shapes[1]"),
            ("spec", "\"cublas\"", "candidates[1]: `rung99`"),
            ("ext", "\"cublas\"", "candidates[1]: `ext:nonesuch`"),
            ("switch", "BN=64", "candidates[0]"),
            (
                "dtype",
                "dtype = \"fp16\"",
                "baseline: `ext:mma_tile` on square4096: ",
            ),
            ("requires", "\"1024x2048x512\"", "fails `M % BM == 0`"),
            ("verdict", "\"no change\"", "expect: `sooner`"),
            ("both", "expect = \"no change\"", "expect: give exactly one"),
            (
                "ratio",
                "expect = \"no change\"",
                "expect_ratio: [3.0, 1.5]",
            ),
            ("date", "2026-12-03", "written: `yesterday`"),
            (
                "twice",
                "\"cublas\"",
                "candidates[1]: `ext:mma_tile:BM=64,BN=64` is listed twice",
            ),
            ("gpu", "reason = \"a test\"", "gpu: name the GPU model"),
        ];
        let replacement = |case: &str| -> (&str, String) {
            match case {
                "syntax" => ("name = \"64-wide tiles are slower\"", "name = \"x".into()),
                "unknown_field" => ("baseline =", "baselin =".into()),
                "missing_field" => ("reason = \"a test\"", String::new()),
                "shape" => ("\"1024x2048x512\"", "\"square4097\"".into()),
                "spec" => ("\"cublas\"", "\"rung99\"".into()),
                "ext" => ("\"cublas\"", "\"ext:nonesuch\"".into()),
                "switch" => ("BN=64", "BN=65".into()),
                "dtype" => ("dtype = \"fp16\"", "dtype = \"bf16\"".into()),
                "requires" => ("\"1024x2048x512\"", "\"1000x2048x512\"".into()),
                "verdict" => ("\"no change\"", "\"sooner\"".into()),
                "both" => (
                    "expect = \"no change\"",
                    "expect = \"no change\"\nexpect_ratio = [1.0, 2.0]".into(),
                ),
                "ratio" => ("expect = \"no change\"", "expect_ratio = [3.0, 1.5]".into()),
                "date" => ("2026-12-03", "yesterday".into()),
                "twice" => ("\"cublas\"", "\"ext:mma_tile:BM=64,BN=64\"".into()),
                "gpu" => (
                    "reason = \"a test\"",
                    "reason = \"a test\"\ngpu = \" \"".into(),
                ),
                _ => unreachable!(),
            }
        };
        for (case, _, _) in cases {
            let (from, to) = replacement(case);
            assert!(GOOD.contains(from), "{case}");
            std::fs::write(
                dir.join(format!("{case}.toml")),
                GOOD.replacen(from, &to, 1),
            )
            .unwrap();
        }
        std::fs::write(dir.join("not_a_hypothesis.txt"), "ignored").unwrap();
        let loaded = load_folders(&[PathBuf::from("/no/such/repo/folder"), dir.clone()]);
        assert!(
            loaded.trials.is_empty(),
            "{:?}",
            loaded.trials.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        assert_eq!(loaded.broken.len(), cases.len());
        for (case, _, says) in cases {
            let b = loaded
                .broken
                .iter()
                .find(|b| b.name == format!("hypothesis::{case}"))
                .unwrap_or_else(|| panic!("no broken trial for {case}"));
            let file = dir.join(format!("{case}.toml")).display().to_string();
            assert!(b.message.contains(&file), "{case}: {}", b.message);
            assert!(b.message.contains(says), "{case}: {}", b.message);
        }
        // A folder the user named that cannot be read, and a second file of the same name, are one trial each.
        let again = scratch_folder("broken-hypotheses-again");
        std::fs::write(again.join("date.toml"), GOOD).unwrap();
        let loaded = load_folders(&[dir, again, PathBuf::from("/no/such/folder")]);
        assert_eq!(loaded.broken.len(), cases.len() + 2);
        assert!(loaded
            .broken
            .iter()
            .any(|b| b.message.contains("already read from")));
        assert!(loaded.broken.iter().any(|b| b
            .message
            .contains("GEMM_ABLATE_HYPOTHESES names /no/such/folder")));
    }

    /// What fuzzing the files found read too generously (at f6883b2) is refused, naming the field.
    #[test]
    fn near_misses_are_refused_not_read_generously() {
        let path = Path::new("near.toml");
        let read = |from: &str, to: &str| trials_from_text(path, &GOOD.replacen(from, to, 1));
        let err = |from: &str, to: &str| match read(from, to) {
            Ok(_) => panic!("`{to}` in place of `{from}` was read"),
            Err(e) => e.to_string(),
        };
        assert!(err("\"no change\"", "\"no change!!\"").contains("expect: `no change!!`"));
        assert!(err("\"no change\"", "\"n o change\"").contains("expect: "));
        assert!(read("\"no change\"", "\"No_Change\"").is_ok());
        assert!(err("2026-12-03", "2026-02-31").contains("written: `2026-02-31`"));
        assert!(err("2026-12-03", "0000-01-01").contains("written: "));
        assert!(read("2026-12-03", "2024-02-29").is_ok());
        assert!(err("\"cublas\"]", "\"cublas\", \" CUBLAS \"]")
            .contains("candidates[2]: ` CUBLAS ` is listed twice"));
        assert!(err("\"cublas\"]", "\"ext:mma_tile\"]").contains("is the baseline"));
        assert!(err("\"1024x2048x512\"", "\"4096x4096x4096\"").contains("the problem of shapes[0]"));
        assert!(err("BN=64", "BN=64,").contains("doubled or trailing comma"));
    }

    /// Every `.toml` in any case is read; one that is not a regular file, or whose variants are invalid in a way
    /// that once panicked (`cluster=0`), is its own failing trial and the others still load.
    #[test]
    fn every_file_in_a_folder_is_read_or_named_and_none_takes_the_rest_down() {
        let dir = scratch_folder("folder-of-hypotheses");
        std::fs::write(dir.join("upper.TOML"), GOOD).unwrap();
        std::fs::create_dir(dir.join("folder.toml")).unwrap();
        std::fs::write(
            dir.join("zero_cluster.toml"),
            GOOD.replacen("\"cublas\"]", "\"10:cluster=0\"]", 1),
        )
        .unwrap();
        let loaded = load_folders(std::slice::from_ref(&dir));
        assert_eq!(loaded.trials.len(), 4, "upper.TOML's four trials");
        let said: Vec<&str> = loaded.broken.iter().map(|b| b.message.as_str()).collect();
        assert_eq!(said.len(), 2, "{said:#?}");
        assert!(
            said.iter()
                .any(|m| m.contains("folder.toml: not a regular file")),
            "{said:#?}"
        );
        assert!(
            said.iter()
                .any(|m| m.contains("cluster size must be 1, 2 or 4")),
            "{said:#?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_hypothesis_files_never_panic() {
        let mut rng = Rng::new(3838);
        let path = Path::new("/fuzz/damaged.toml");
        let mut good = 0;
        for _ in 0..400 {
            let text = damaged(GOOD, &mut rng);
            match trials_from_text(path, &text) {
                Ok(_) => good += 1,
                Err(e) => assert!(e.to_string().contains("/fuzz/damaged.toml"), "{e}"),
            }
        }
        assert!(good < 400, "the damage changed nothing");
    }

    /// The compile trials build every variant a hypothesis names: a kernel that does not compile fails its trial
    /// on a machine without a GPU.
    #[test]
    fn the_compile_trials_build_every_variant_a_hypothesis_names() {
        let dir = scratch_folder("hypothesis-compile");
        let kernel = dir.join("k");
        std::fs::create_dir_all(&kernel).unwrap();
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/ext/mma_tile");
        for file in ["kernel.toml", "mma_tile.cu"] {
            std::fs::copy(example.join(file), kernel.join(file)).unwrap();
        }
        let folder = dir.join("hypotheses");
        std::fs::create_dir_all(&folder).unwrap();
        let ext = format!("ext:{}:BM=64", kernel.join("kernel.toml").display());
        std::fs::write(
            folder.join("h.toml"),
            GOOD.replace("ext:mma_tile:BM=64,BN=64", &ext)
                .replace("\"cublas\"", "\"rung8:raster=upto8\""),
        )
        .unwrap();
        let loaded = load_folders(&[folder]);
        assert!(loaded.broken.is_empty(), "{:?}", loaded.broken);
        let trials = crate::suite::compile_trials_with(&loaded.trials, &[]);
        let names: Vec<&str> = trials.iter().map(|t| t.name()).collect();
        for want in [
            format!("compile::{ext}::fp16"),
            "compile::ext:mma_tile::fp16".to_string(),
            "compile::rung8:raster=upto8::fp16".to_string(),
        ] {
            assert!(names.contains(&want.as_str()), "{want} not in {names:?}");
        }
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and no NVRTC"
            );
            println!("skipped building: libnvrtc.so.13 not found");
            return;
        }
        // Only the external kernels' trials run here (the others compile the whole suite ahead).
        std::fs::write(kernel.join("mma_tile.cu"), "this is not CUDA\n").unwrap();
        let args = libtest_mimic::Arguments {
            filter: Some(format!("compile::{ext}")),
            exact: false,
            test_threads: Some(1),
            // Its report goes to a file: a "FAILED" line of an inner run must not read as this run's.
            logfile: Some(dir.join("inner-run.log").display().to_string()),
            ..Default::default()
        };
        let ran = libtest_mimic::run(&args, trials);
        assert_eq!((ran.num_passed, ran.num_failed), (0, 1));
        let log = std::fs::read_to_string(dir.join("inner-run.log")).unwrap();
        assert!(log.contains("NVRTC failed to compile"), "{log}");
    }

    /// The worked example as a user brings it: the manifest, the kernel and a hypothesis file copied into a
    /// folder outside the repository, with no harness edit: it loads as trials and builds through NVRTC.
    /// The README's hypothesis file, as a newcomer copies it, becomes its trial.
    #[test]
    fn the_readme_hypothesis_file_loads() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
                .unwrap();
        let (_, rest) = readme
            .split_once("```toml\n")
            .expect("the README shows a hypothesis file");
        let (file, _) = rest.split_once("```").unwrap();
        let trials = trials_from_text(Path::new("hypotheses/raster_prefill.toml"), file).unwrap();
        let names: Vec<&str> = trials.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["hypothesis::raster_prefill::rung8:raster=upto8::prefill_attn_out"]
        );
    }

    #[test]
    fn the_worked_example_builds_from_a_scratch_folder() {
        let dir = scratch_folder("bring-your-kernel");
        let kernel = dir.join("my_kernel");
        std::fs::create_dir_all(&kernel).unwrap();
        for file in ["kernel.toml", "mma_tile.cu"] {
            let from = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("kernels/ext/mma_tile")
                .join(file);
            std::fs::copy(from, kernel.join(file)).unwrap();
        }
        let manifest = kernel.join("kernel.toml");
        let hypotheses = dir.join("hypotheses");
        std::fs::create_dir_all(&hypotheses).unwrap();
        std::fs::write(
            hypotheses.join("mine.toml"),
            format!(
                "name = \"my kernel is slower than auto\"\nwritten = \"2026-12-03\"\nbaseline = \"auto\"\n\
                 candidates = [\"ext:{}:BM=64\"]\nshapes = [\"square4096\"]\nexpect = \"slower\"\nreason = \"unpipelined\"\n",
                manifest.display()
            ),
        )
        .unwrap();
        let loaded = load_folders(&[hypotheses]);
        assert!(loaded.broken.is_empty(), "{:?}", loaded.broken);
        assert_eq!(loaded.trials.len(), 1);
        assert!(loaded.trials[0].name.starts_with("hypothesis::mine::ext:"));
        let Job::Compare { candidate, .. } = &loaded.trials[0].job else {
            panic!("a comparison");
        };
        let VariantSpec::Family { name, config, .. } = candidate else {
            panic!("an external kernel");
        };
        let spec: crate::families::external::manifest::ExternalSpec =
            crate::families::read_back("ext", config).unwrap();
        assert_eq!(spec.manifest, std::fs::canonicalize(&manifest).unwrap());
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and libnvrtc.so.13 not found"
            );
            println!("skipped the NVRTC build: libnvrtc.so.13 not found (pip install nvidia-cuda-nvrtc==13.0.88)");
            return;
        }
        let built = spec.build(name, DType::F16).unwrap();
        assert!(!built.compiled.cubin.is_empty());
        let f = built.compiled.report.function("mma_tile_gemm").unwrap();
        assert!(f.registers > 0 && f.spill_store_bytes == 0, "{f:?}");
        // A kernel that does not compile says so, with NVRTC's log.
        std::fs::write(
            kernel.join("mma_tile.cu"),
            "extern \"C\" __global__ void mma_tile_gemm( {}\n",
        )
        .unwrap();
        let e = spec
            .build(name, DType::F16)
            .err()
            .expect("a broken source")
            .to_string();
        assert!(e.contains("NVRTC failed to compile"), "{e}");
    }

    /// The FP8 hypotheses waiting for their first run (ablations/fp8-hypotheses and its steps/) load without a broken file, every
    /// trial in an FP8 type, each able to fail.
    #[test]
    fn the_waiting_fp8_hypotheses_load_and_can_fail() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("ablations/fp8-hypotheses");
        let loaded = load_folders(&[folder.clone(), folder.join("steps")]);
        assert!(loaded.broken.is_empty(), "{:?}", loaded.broken);
        assert_eq!(loaded.trials.len(), 19 + 10);
        for t in &loaded.trials {
            assert!(t.job.dtype().is_fp8(), "{}", t.name);
            assert_eq!(
                crate::trial::pins::cannot_fail(&t.expectation.expect),
                None,
                "{}",
                t.name
            );
        }
    }

    /// One process, two commits (docs/external-kernels.md): an earlier build of a kernel, exported beside the
    /// repository (`tools/kernel-at.sh`), and today's are two variants of one comparison, each built from its own
    /// manifest and source.
    #[test]
    fn an_earlier_build_and_todays_are_one_comparison() {
        let dir = scratch_folder("two-commits");
        let before = dir.join("kernels/ext/mma_tile");
        std::fs::create_dir_all(&before).unwrap();
        let today = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/ext/mma_tile");
        std::fs::copy(today.join("kernel.toml"), before.join("kernel.toml")).unwrap();
        // The earlier source: today's with its k loop unrolled differently, as an edit between commits would be.
        let source = std::fs::read_to_string(today.join("mma_tile.cu")).unwrap();
        std::fs::write(
            before.join("mma_tile.cu"),
            format!("#define GEMM_ABLATE_EARLIER 1\n{source}"),
        )
        .unwrap();
        let hypotheses = dir.join("hypotheses");
        std::fs::create_dir_all(&hypotheses).unwrap();
        std::fs::write(
            hypotheses.join("same.toml"),
            format!(
                "name = \"the edit changed nothing\"\nwritten = \"2026-12-04\"\nbaseline = \"ext:{}\"\n\
                 candidates = [\"ext:mma_tile\"]\nshapes = [\"square4096\"]\nexpect = \"no change\"\nreason = \"a define\"\n",
                before.join("kernel.toml").display()
            ),
        )
        .unwrap();
        let loaded = load_folders(&[hypotheses]);
        assert!(loaded.broken.is_empty(), "{:?}", loaded.broken);
        let Job::Compare {
            baseline,
            candidate,
            ..
        } = &loaded.trials[0].job
        else {
            panic!("a comparison");
        };
        let spec = |v: &VariantSpec| {
            let VariantSpec::Family { name, config, .. } = v else {
                panic!("an external kernel: {v:?}");
            };
            let spec: crate::families::external::manifest::ExternalSpec =
                crate::families::read_back("ext", config).unwrap();
            (name.clone(), spec)
        };
        let ((old_name, old), (new_name, new)) = (spec(baseline), spec(candidate));
        assert_ne!(old_name, new_name);
        assert_eq!(
            old.manifest,
            std::fs::canonicalize(before.join("kernel.toml")).unwrap()
        );
        assert_eq!(
            new.manifest,
            std::fs::canonicalize(today.join("kernel.toml")).unwrap()
        );
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and libnvrtc.so.13 not found"
            );
            return;
        }
        let (a, b) = (
            old.build(&old_name, DType::F16).unwrap(),
            new.build(&new_name, DType::F16).unwrap(),
        );
        assert!(!a.compiled.cubin.is_empty() && !b.compiled.cubin.is_empty());
    }
}
