//! Results files: the environment a run measured in, and every trial's record, as JSON.

use crate::gpu::device::DeviceInfo;
use crate::trial::job::TrialRecord;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where and how a run was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub device: Option<DeviceInfo>,
    pub commit: String,
    /// UTC, ISO 8601.
    pub date: String,
    pub host: String,
    pub nvrtc: Option<String>,
    /// The settings (environment variables) the run used.
    pub settings: Vec<(String, String)>,
    /// The GPUs the trials were spread over (each trial's record names its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<crate::gpu::device::GpuSeat>,
    /// What every round drew afresh or fixed (GEMM_ABLATE_RANDOMIZE's words; `none` for the default), named even
    /// where it is the default, so that runs under the fixed start stay told apart if the default changes (H149).
    /// Absent in records before it: there `settings` holds the variable where it was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub randomize: Option<String>,
}

impl Environment {
    pub fn capture() -> Environment {
        Environment {
            device: crate::gpu::device::query(0).ok(),
            commit: env!("GEMM_ABLATE_COMMIT").to_string(),
            date: utc_now(),
            host: std::fs::read_to_string("/etc/hostname")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            nvrtc: crate::gpu::probe::nvrtc_available()
                .then(crate::gpu::compile::nvrtc_version_string)
                .flatten(),
            settings: crate::settings::own_vars()
                .into_iter()
                .filter(|(k, _)| !k.contains("CHILD") && k != "GEMM_ABLATE_COMMIT")
                .map(|(k, v)| (k, v.to_string_lossy().into_owned()))
                .collect(),
            gpus: Vec::new(),
            randomize: crate::settings::Settings::from_env()
                .ok()
                .map(|s| s.randomize.name()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    pub suite: String,
    pub environment: Environment,
    pub trials: Vec<TrialRecord>,
    /// Calibration runs: the table of true effects against verdict counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration: Vec<crate::trial::calibration::CalibrationRow>,
}

/// The results directory: GEMM_ABLATE_RESULTS_DIR, or results/ under the current directory.
pub fn results_dir() -> PathBuf {
    std::env::var_os("GEMM_ABLATE_RESULTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("results"))
}

/// A name (a trial's, a variant's) as a file or folder name: letters and digits kept, the rest `_`; past 120
/// characters cut to 96 and a hash of the whole name appended, so that two long names stay apart and no name
/// reaches the 255-byte limit of a file name (a `compare` of two written-out specs makes names past it).
pub fn file_stem(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if safe.len() <= 120 {
        return safe;
    }
    format!(
        "{}_{}",
        &safe[..96],
        crate::trial::subprocess::name_key(name)
    )
}

/// A results file's text. Older runs are kept xz-compressed beside where they were written (`NAME.json.xz`,
/// tools/archive-results.py; results/h200/README.md): a `NAME.json` that is not there is read from `NAME.json.xz`,
/// and a path ending in `.xz` is read decompressed, so that every reader names runs as they were written.
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    let compressed = if path.extension().is_some_and(|e| e == "xz") {
        path.to_path_buf()
    } else if path.is_file() {
        return std::fs::read_to_string(path);
    } else {
        let mut name = path.as_os_str().to_owned();
        name.push(".xz");
        let xz = std::path::PathBuf::from(name);
        if !xz.is_file() {
            // The plain file's own error: it names what was asked for.
            return std::fs::read_to_string(path);
        }
        xz
    };
    let mut input = std::io::BufReader::new(std::fs::File::open(&compressed)?);
    let mut bytes = Vec::new();
    lzma_rs::xz_decompress(&mut input, &mut bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: not a readable xz file: {e}", compressed.display()),
        )
    })?;
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: not UTF-8: {e}", compressed.display()),
        )
    })
}

impl RunFile {
    /// `<dir>/<suite>-<date>.json`, the date being the run's start.
    pub fn path(&self) -> crate::error::Result<PathBuf> {
        let dir = results_dir();
        std::fs::create_dir_all(&dir)?;
        let stamp = self.environment.date.replace([':', '-'], "");
        Ok(dir.join(format!("{}-{}.json", self.suite, stamp)))
    }

    /// Writes (or rewrites) the file and returns its path.
    pub fn write(&self) -> crate::error::Result<PathBuf> {
        let path = self.path()?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_text()?)?;
        std::fs::rename(&tmp, &path)?;
        Ok(path)
    }

    /// The file's text: compact JSON, one trial a line (about half the indented size: the indentation was
    /// whitespace around every per-batch value), so that runs stay small in git and a trial is one line to grep or
    /// diff. Any JSON reader reads it; `jq .` indents it for a person.
    pub fn to_text(&self) -> serde_json::Result<String> {
        let mut v = serde_json::to_value(self)?;
        let trials = v
            .as_object_mut()
            .and_then(|o| o.insert("trials".into(), serde_json::Value::Array(Vec::new())))
            .unwrap_or_default();
        let head = serde_json::to_string(&v)?;
        let lines = match trials.as_array() {
            Some(ts) if !ts.is_empty() => ts
                .iter()
                .map(serde_json::to_string)
                .collect::<serde_json::Result<Vec<_>>>()?,
            _ => return Ok(head + "\n"),
        };
        // The empty "trials" array the head ends with is filled with one trial a line.
        let open = head
            .rfind("\"trials\":[]")
            .map(|i| i + "\"trials\":[".len())
            .unwrap_or(head.len());
        Ok(format!(
            "{}\n{}\n{}\n",
            &head[..open],
            lines.join(",\n"),
            &head[open..]
        ))
    }

    /// Reads a results file and checks that what it says can be true (`validate`).
    pub fn read(path: &std::path::Path) -> crate::error::Result<RunFile> {
        let text = read_text(path)?;
        if let Some(why) = summary_instead(&text) {
            return Err(crate::error::Error::Other(why));
        }
        let run: RunFile = serde_json::from_str(&text)?;
        run.validate().map_err(crate::error::Error::Other)?;
        Ok(run)
    }

    /// A file that parses can still say what cannot be: a suite with no name, a ratio that is not a positive
    /// number, an interval that does not hold its own estimate or runs backwards, one trial of a test suite twice
    /// (outside a run that repeated its trials, `GEMM_ABLATE_REPEAT`; calibration repeats by design). Each is named
    /// with its trial.
    pub fn validate(&self) -> Result<(), String> {
        if self.suite.trim().is_empty() {
            return Err("the run names no suite".into());
        }
        crate::settings::shard(&self.environment.settings)
            .map_err(|e| format!("the run's shard setting cannot be: {e}"))?;
        let repeated = !matches!(self.suite.as_str(), "ablations" | "microbench")
            || self
                .environment
                .settings
                .iter()
                .any(|(k, v)| k == "GEMM_ABLATE_REPEAT" && v.trim() != "1");
        let mut seen = std::collections::HashSet::new();
        for t in &self.trials {
            // A time, throughput or bandwidth is a finite number of 0 or more, and far below what would overflow a
            // chart's axis (at 1.8e308 TFLOP/s `report` looped drawing one: found by fuzzing the records).
            for v in &t.variants {
                if let Some(m) = v
                    .measures
                    .iter()
                    .find(|m| !(m.value.is_finite() && (0.0..1e12).contains(&m.value)))
                {
                    return Err(format!(
                        "trial {}: {}'s {} of {} {} cannot be",
                        t.name, v.name, m.name, m.value, m.unit
                    ));
                }
            }
            if !repeated && !seen.insert(t.name.as_str()) {
                return Err(format!(
                    "trial {} appears twice in a run that did not repeat its trials",
                    t.name
                ));
            }
            if let crate::trial::job::Observed::Compared(e) = &t.observed {
                let (lo, hi) = e.ci;
                let sane = e.ratio.is_finite()
                    && e.ratio > 0.0
                    && lo >= 0.0
                    && lo <= hi
                    && (lo <= e.ratio * (1.0 + 1e-9) && e.ratio <= hi * (1.0 + 1e-9));
                if !sane {
                    return Err(format!(
                        "trial {}: ratio {} with interval [{lo}, {hi}] cannot be (a ratio is a positive number \
                         inside its own interval)",
                        t.name, e.ratio
                    ));
                }
                // What `baseline` and `agree` compute from: the log estimate behind the ratio, its standard error,
                // and the rule's band and confidence.
                let s = &e.settings;
                let log_sane = e.log_mean.is_finite()
                    && (e.log_mean.exp() / e.ratio - 1.0).abs() < 1e-6
                    && e.log_se.is_finite()
                    && e.log_se >= 0.0
                    && s.band > 0.0
                    && s.band < 0.5
                    && s.confidence > 0.0
                    && s.confidence < 1.0;
                if !log_sane {
                    return Err(format!(
                        "trial {}: log estimate {} (se {}) for ratio {}, band {} and confidence {} cannot be (the \
                         log of the ratio, a standard error of 0 or more, a band in (0, 0.5), a confidence in (0, 1))",
                        t.name, e.log_mean, e.log_se, e.ratio, s.band, s.confidence
                    ));
                }
                // A decisive verdict lies on its side of 1.
                let sided = match e.verdict {
                    crate::measure::stats::Verdict::Faster => hi < 1.0,
                    crate::measure::stats::Verdict::Slower => lo > 1.0,
                    _ => true,
                };
                if !sided {
                    return Err(format!(
                        "trial {}: verdict {} with interval [{lo}, {hi}] cannot be",
                        t.name,
                        e.verdict.word()
                    ));
                }
            }
        }
        Ok(())
    }
}

pub use crate::when::{format_utc, utc_now};

/// Where `text` is a run's summary (`NAME.summary.json`, tools/archive-results.py: per-trial outcomes without the
/// rounds, for readers), the message that names the record to read instead (the caller names the file).
pub fn summary_instead(text: &str) -> Option<String> {
    let head = text.get(..text.len().min(4096))?;
    if !head.trim_start().starts_with("{\"summary_of\"") {
        return None;
    }
    let of = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["summary_of"].as_str().map(str::to_string))
        .unwrap_or_else(|| "the .json.xz beside it".into());
    Some(format!(
        "a summary for reading (each trial's outcome, without its rounds); commands read the run's record beside \
         it: {of}"
    ))
}

/// A run's name from its file: the file name without `.json` or `.json.xz`.
pub fn run_name(path: &std::path::Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("run");
    let name = name.strip_suffix(".xz").unwrap_or(name);
    name.strip_suffix(".json").unwrap_or(name).to_string()
}

/// A committed H200 results file, by its path under results/h200/ (for the tests that read them).
#[cfg(test)]
pub(crate) fn committed_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("results/h200")
        .join(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_make_short_distinct_file_stems() {
        assert_eq!(
            super::file_stem("ladder::rung10_stmatrix::square4096"),
            "ladder__rung10_stmatrix__square4096"
        );
        let spec = "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn=104,epilogue=direct,stmatrix=0,swap_ab=1,evict_first=1,pdl=1,stages=7,swap_store=pairs";
        let a = super::file_stem(&format!("compare::{spec}::{spec}::200x8192x8192"));
        let b = super::file_stem(&format!("compare::{spec}::{spec}::208x8192x8192"));
        assert!(a.len() <= 120 && b.len() <= 120, "{a}");
        assert_ne!(a, b);
    }

    use super::*;

    #[test]
    fn results_round_trip_through_json() {
        let rounds: Vec<Vec<f64>> = vec![vec![-1.1, -1.2]; 8];
        let e = crate::measure::stats::estimate(
            &rounds,
            crate::measure::stats::StatsSettings::default(),
        );
        let record = crate::trial::job::TrialRecord {
            passed: true,
            judgement: "confirmed".into(),
            shape: Some(crate::kernel::problem::shape("square4096")),
            dtype: Some(crate::kernel::problem::DType::F16),
            flags: vec!["a flag".into()],
            ..crate::trial::job::TrialRecord::new(
                "ablation::swizzle::square4096",
                &crate::trial::job::Job::CublasVsCpu {
                    dtype: crate::kernel::problem::DType::F16,
                },
                crate::trial::job::Observed::Compared(e),
            )
        };
        let file = RunFile {
            suite: "ablations".into(),
            environment: Environment {
                device: None,
                commit: "abc".into(),
                date: format_utc(0),
                host: "h".into(),
                nvrtc: Some("13.0".into()),
                settings: vec![("GEMM_ABLATE_BAND".into(), "0.02".into())],
                gpus: vec![crate::gpu::device::GpuSeat {
                    index: 1,
                    name: "NVIDIA H200".into(),
                    pci_bus_id: "00000000:19:00.0".into(),
                }],
                randomize: Some("scheduler".into()),
            },
            trials: vec![record],
            calibration: Vec::new(),
        };
        let json = serde_json::to_string(&file).unwrap();
        assert_eq!(serde_json::from_str::<RunFile>(&json).unwrap(), file);
        // As written: one trial a line, read back the same, with no trial and with several.
        let mut several = file.clone();
        several.trials.push(several.trials[0].clone());
        for f in [
            &file,
            &several,
            &RunFile {
                trials: Vec::new(),
                ..file.clone()
            },
        ] {
            let text = f.to_text().unwrap();
            assert_eq!(&serde_json::from_str::<RunFile>(&text).unwrap(), f);
            let trial_lines = text.lines().filter(|l| l.contains("\"passed\":")).count();
            assert_eq!(trial_lines, f.trials.len(), "{text}");
        }
    }

    /// Every committed run, in this format (results/h200/*.json) or an older one (a subfolder per commit),
    /// names an H200, a clean 40-digit commit, and holds trials.
    #[test]
    fn committed_reference_runs_carry_their_provenance() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200");
        let mut files = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                // Profiles (ncu reports and their tables) and the cuBLAS chooser's path lists
                // (`gemm-ablate cublas-paths`, a format of their own) are not runs.
                if path.is_dir() && name != "profiles" {
                    stack.push(path);
                } else if (name.ends_with(".json") || name.ends_with(".json.xz"))
                    && !name.starts_with("cublas-paths")
                {
                    files.push(path);
                }
            }
        }
        let mut current = 0;
        for path in &files {
            // Archived runs are read through their compression, so that none is checked less for being kept
            // small.
            let text = read_text(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let v: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let env = &v["environment"];
            assert_eq!(env["device"]["name"], "NVIDIA H200", "{}", path.display());
            let commit = env["commit"].as_str().unwrap_or_default();
            assert!(
                !commit.contains("dirty") && commit.len() >= 40,
                "{}",
                path.display()
            );
            assert!(v["trials"].as_array().is_some_and(|t| !t.is_empty()));
            if path.parent() == Some(dir.as_path()) {
                // Top-level runs are in the current format.
                RunFile::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                current += 1;
            }
        }
        assert!(files.len() >= 10, "{} committed runs", files.len());
        let _ = current;
    }

    /// A run kept as `NAME.json.xz` reads as `NAME.json` did, by either name; a missing run's error names it.
    #[test]
    fn an_archived_run_reads_by_its_written_name() {
        let dir = std::env::temp_dir().join(format!("gemm-ablate-xz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = "{\"suite\": \"ablations\"}\n";
        // xz of the text above, as tools/archive-results.py makes them (Python's lzma, preset 9, CRC64).
        const XZ: &[u8] = &[
            253, 55, 122, 88, 90, 0, 0, 4, 230, 214, 180, 70, 2, 0, 33, 1, 28, 0, 0, 0, 16, 207,
            88, 204, 1, 0, 22, 123, 34, 115, 117, 105, 116, 101, 34, 58, 32, 34, 97, 98, 108, 97,
            116, 105, 111, 110, 115, 34, 125, 10, 0, 0, 8, 167, 180, 35, 244, 21, 247, 195, 0, 1,
            47, 23, 129, 8, 73, 177, 31, 182, 243, 125, 1, 0, 0, 0, 0, 4, 89, 90,
        ];
        std::fs::write(dir.join("run.json.xz"), XZ).unwrap();
        assert_eq!(read_text(&dir.join("run.json")).unwrap(), text);
        assert_eq!(read_text(&dir.join("run.json.xz")).unwrap(), text);
        let missing = read_text(&dir.join("other.json")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        std::fs::write(dir.join("bad.json.xz"), b"not xz").unwrap();
        assert!(read_text(&dir.join("bad.json"))
            .unwrap_err()
            .to_string()
            .contains("not a readable xz file"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A run's summary (tools/archive-results.py) is refused with the record to read instead, and a record kept as
    /// NAME.json.xz is named NAME, as its plain file was.
    #[test]
    fn a_summary_names_its_record_and_xz_keeps_the_run_name() {
        let dir = std::env::temp_dir().join(format!("gemm-ablate-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let summary = dir.join("ablations-1.summary.json");
        std::fs::write(
            &summary,
            "{\"summary_of\":\"ablations-1.json.xz\",\"suite\":\"ablations\",\"trials\":[\n]}\n",
        )
        .unwrap();
        let e = super::RunFile::read(&summary).err().unwrap().to_string();
        assert!(
            e.contains("a summary") && e.contains("ablations-1.json.xz"),
            "{e}"
        );
        let e = crate::report::markdown::read_runs(&[summary])
            .err()
            .unwrap();
        assert!(e.contains("ablations-1.summary.json: a summary"), "{e}");
        assert_eq!(
            super::run_name(std::path::Path::new("a/ablations-2.json.xz")),
            "ablations-2"
        );
        assert_eq!(
            super::run_name(std::path::Path::new("ablations-2.json")),
            "ablations-2"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Files that parse but say what cannot be are refused on load, naming the trial.
    #[test]
    fn impossible_results_are_refused_on_load() {
        let good = super::read_text(&super::committed_path(
            "9a8c135/ablations-20261130T123530Z.json",
        ))
        .unwrap();
        let dir = std::env::temp_dir().join(format!("gemm-ablate-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first_compared = |v: &mut serde_json::Value| -> usize {
            v["trials"]
                .as_array()
                .unwrap()
                .iter()
                .position(|t| t["observed"].get("Compared").is_some())
                .unwrap()
        };
        type Break<'a> = Box<dyn Fn(&mut serde_json::Value) + 'a>;
        let cases: Vec<(&str, Break)> = vec![
            (
                "ratio 0",
                Box::new(|v| {
                    let i = first_compared(v);
                    v["trials"][i]["observed"]["Compared"]["ratio"] = 0.0.into();
                }),
            ),
            (
                "interval",
                Box::new(|v| {
                    let i = first_compared(v);
                    v["trials"][i]["observed"]["Compared"]["ci"] = serde_json::json!([1.2, 0.8]);
                }),
            ),
            (
                "appears twice",
                Box::new(|v| {
                    let t = v["trials"][0].clone();
                    v["trials"].as_array_mut().unwrap().push(t);
                }),
            ),
            ("no suite", Box::new(|v| v["suite"] = "".into())),
            // Found by fuzzing (after f6883b2): `baseline` called an unchanged ratio faster from the log field,
            // and `report` looped charting a throughput of 1.8e308.
            (
                "log estimate",
                Box::new(|v| {
                    let i = first_compared(v);
                    v["trials"][i]["observed"]["Compared"]["log_mean"] = (-5.0).into();
                }),
            ),
            (
                "log estimate",
                Box::new(|v| {
                    let i = first_compared(v);
                    v["trials"][i]["observed"]["Compared"]["settings"]["band"] = (-1.0).into();
                }),
            ),
            (
                "verdict",
                Box::new(|v| {
                    let i = first_compared(v);
                    let c = &mut v["trials"][i]["observed"]["Compared"];
                    let lo = c["ci"][0].as_f64().unwrap();
                    c["verdict"] = if lo > 1.0 { "Faster" } else { "Slower" }.into();
                    if lo <= 1.0 && c["ci"][1].as_f64().unwrap() >= 1.0 {
                        c["verdict"] = "Faster".into();
                    }
                }),
            ),
            (
                "us cannot be",
                Box::new(|v| {
                    let t = v["trials"]
                        .as_array_mut()
                        .unwrap()
                        .iter_mut()
                        .find(|t| t["variants"][0]["median_us"].is_number())
                        .unwrap();
                    t["variants"][0]["median_us"] = f64::MAX.into();
                }),
            ),
            (
                "shard setting",
                Box::new(|v| {
                    let s = v["environment"]["settings"].as_array_mut().unwrap();
                    s.push(serde_json::json!(["GEMM_ABLATE_SHARD", "7/6"]));
                }),
            ),
        ];
        for (what, break_it) in cases {
            let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
            break_it(&mut v);
            let path = dir.join("bad.json");
            std::fs::write(&path, v.to_string()).unwrap();
            let e = RunFile::read(&path).unwrap_err().to_string();
            let expected = if what == "ratio 0" || what == "interval" {
                "cannot be"
            } else {
                what
            };
            assert!(e.contains(expected), "{what}: {e}");
        }
        let path = dir.join("good.json");
        std::fs::write(&path, &good).unwrap();
        assert!(RunFile::read(&path).is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(1_796_000_000), "2026-11-30T00:53:20Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
    }
}
