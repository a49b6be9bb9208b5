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
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
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
            match load_file(&path) {
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

/// A spec as a hypothesis (or the command line) writes it: `cublas`, `auto` (resolved for the shape), a kernel
/// outside the ladder (`stream...`, `skinny...`, `ext:...`), or a rung with switches; checked for the shape.
pub fn resolve_spec(spec: &str, shape: &Shape, dtype: DType) -> Result<VariantSpec> {
    let s = spec.trim();
    let v = if s.eq_ignore_ascii_case("cublas") {
        VariantSpec::Cublas
    } else if s.eq_ignore_ascii_case("auto") {
        let (label, config) =
            crate::kernel::dispatch::auto_variant(shape, crate::kernel::dispatch::H200_SMS);
        VariantSpec::gemm(label, config)
    } else if let Some(outside) = VariantSpec::outside_ladder(s) {
        outside?
    } else {
        let config = crate::kernel::ladder::parse_spec(s)?;
        config.validate()?;
        VariantSpec::gemm(s, config)
    };
    match &v {
        VariantSpec::External { spec, .. } => spec.validate(shape, dtype)?,
        other => other.validate(shape)?,
    }
    Ok(v)
}

/// The trials of one hypothesis file, or an error naming the file and the field.
pub fn load_file(path: &Path) -> Result<Vec<GpuTrial>> {
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
        Some(d) => DType::parse(d).ok_or_else(|| at("dtype", format!("`{d}`: fp16 or bf16")))?,
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
        let shape = parse_shape(s).map_err(|e| at(&format!("shapes[{i}]"), e.to_string()))?;
        if shapes.iter().any(|x: &Shape| x.name == shape.name) {
            return Err(at(
                &format!("shapes[{i}]"),
                format!("`{s}` is listed twice"),
            ));
        }
        shapes.push(shape);
    }
    for (i, c) in raw.candidates.iter().enumerate() {
        if raw.candidates[..i].contains(c) {
            return Err(at(
                &format!("candidates[{i}]"),
                format!("`{c}` is listed twice"),
            ));
        }
    }
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
                format!("`{}` on {}: {e}", raw.baseline, shape.name),
            )
        })?;
        for (i, c) in raw.candidates.iter().enumerate() {
            let candidate = resolve_spec(c, shape, dtype).map_err(|e| {
                at(
                    &format!("candidates[{i}]"),
                    format!("`{c}` on {}: {e}", shape.name),
                )
            })?;
            trials.push(GpuTrial::new(
                format!("hypothesis::{stem}::{}::{}", c.trim(), shape.name),
                Job::Compare {
                    baseline: baseline.clone(),
                    candidate,
                    shape: shape.clone(),
                    dtype,
                },
                Expectation::hypothesis(expect.clone(), why.clone()),
            ));
        }
    }
    Ok(trials)
}

fn verdict(word: &str) -> Option<Verdict> {
    let w: String = word
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphabetic())
        .collect();
    [
        Verdict::Faster,
        Verdict::Slower,
        Verdict::NoChange,
        Verdict::Inconclusive,
    ]
    .into_iter()
    .find(|v| v.word().replace(' ', "") == w)
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d]
        if y.len() == 4 && m.len() == 2 && d.len() == 2
            && [y, m, d].iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
            && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
            && (1..=31).contains(&d.parse::<u32>().unwrap_or(0)))
}
