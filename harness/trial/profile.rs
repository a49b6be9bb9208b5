//! `profile SPEC SHAPE`: Nsight Compute on one variant and on cuBLAS for the same problem, side by side.
//!
//! The trial's child process runs under ncu with `--profile-from-start off`: it checks the variant, warms both
//! up, and launches each once inside a profiler range, so exactly two kernels are profiled. Clocks and caches
//! are left as the suite times them (`--clock-control none --cache-control none`), so durations match the
//! suite's timing. The raw report is kept; the metrics are read back from it as CSV in base units. Which cuBLAS
//! path is "cuBLAS" is chosen by timing, which ncu distorts: a plain child chooses it first (remembered on disk
//! for the machine), and the child under ncu only reads that choice.

use crate::error::{Error, Result};
use crate::trial::job::{Job, Observed, TrialRecord};
use crate::trial::subprocess;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed's metric set, with how to show each: (ncu metric, label, scale applied to the base unit, unit).
pub const METRICS: [(&str, &str, f64, &str); 14] = [
    ("gpu__time_duration.sum", "duration", 1e-3, "us"),
    ("sm__cycles_elapsed.avg.per_second", "SM clock", 1e-6, "MHz"),
    (
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "tensor pipe active",
        1.0,
        "%",
    ),
    (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM throughput",
        1.0,
        "% of peak",
    ),
    ("dram__bytes_read.sum", "DRAM read", 1e-6, "MB"),
    ("dram__bytes_write.sum", "DRAM written", 1e-6, "MB"),
    ("lts__t_sector_hit_rate.pct", "L2 hit rate", 1.0, "%"),
    (
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "achieved occupancy",
        1.0,
        "%",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
        "smem bank conflicts (wgmma reads)",
        1.0,
        "",
    ),
    (
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "stall: long scoreboard",
        1.0,
        "warps/issue",
    ),
    (
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
        "stall: barrier",
        1.0,
        "warps/issue",
    ),
    (
        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
        "stall: wait",
        1.0,
        "warps/issue",
    ),
    (
        "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
        "stall: math pipe throttle",
        1.0,
        "warps/issue",
    ),
    (
        "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
        "stall: MIO throttle",
        1.0,
        "warps/issue",
    ),
];

/// One metric for both kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileRow {
    pub metric: String,
    pub label: String,
    pub unit: String,
    pub variant: Option<f64>,
    pub cublas: Option<f64>,
}

/// What `profile` found: the two kernels' names and their metrics, and the check of the run that was profiled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub variant_kernel: String,
    pub cublas_kernel: String,
    pub rows: Vec<ProfileRow>,
    pub record: TrialRecord,
    /// The ncu report, openable in Nsight Compute.
    pub report: PathBuf,
}

fn metric_names() -> Vec<&'static str> {
    METRICS.iter().map(|m| m.0).collect()
}

/// ncu: on PATH, under CUDA_HOME, or where the CUDA toolkit installs it.
pub fn find_ncu() -> Result<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("ncu")).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(home).join("bin/ncu"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/ncu"));
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        Error::Config(
            "Nsight Compute (ncu) was not found on PATH, under $CUDA_HOME/bin or in /usr/local/cuda/bin: install the CUDA toolkit's ncu or put it on PATH".into(),
        )
    })
}

/// Why ncu failed, in words a user can act on.
fn ncu_failure(output: &str) -> String {
    if output.contains("ERR_NVGPUCTRPERM") {
        return "ncu may not read the GPU's performance counters as this user (ERR_NVGPUCTRPERM): run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0".into();
    }
    let tail: Vec<&str> = output.lines().rev().take(8).collect();
    format!(
        "ncu failed:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )
}

/// Profiles `job` (a `Job::Profile`) under ncu, keeps the report in `dir`, and returns the side-by-side table.
/// `full`: ncu's full section set besides the table's metrics (dozens of replay passes a kernel), its details
/// page written to `details.txt` beside the report, its source page (SASS with warp-stall samples) to `source.csv`
/// and summarized per kernel in `source-summary.txt` (`source_page`).
pub fn run(name: &str, job: &Job, dir: &Path, full: bool) -> Result<Profile> {
    let ncu = find_ncu()?;
    std::fs::create_dir_all(dir)?;
    let exe = std::env::current_exe()?;
    let record_path = dir.join("record.json");
    let report = dir.join("profile.ncu-rep");
    let metrics = metric_names().join(",");
    choose_cublas_outside_the_profiler(name, job)?;
    let out = Command::new(&ncu)
        .args([
            "--profile-from-start",
            "off",
            "--target-processes",
            "all",
            "--clock-control",
            "none",
            "--cache-control",
            "none",
            "--force-overwrite",
            "--metrics",
            &metrics,
        ])
        .args(if full { &["--set", "full"][..] } else { &[] })
        .arg("--export")
        .arg(dir.join("profile"))
        .arg(&exe)
        .env(subprocess::JOB_ENV, serde_json::to_string(job)?)
        .env(crate::measure::cublas_choice::UNDER_PROFILER_ENV, "1")
        .env(subprocess::NAME_ENV, name)
        .env(subprocess::RECORD_ENV, &record_path)
        .output()?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.join("ncu.log"), &log)?;
    let record: TrialRecord = std::fs::read_to_string(&record_path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .ok_or_else(|| Error::Other(ncu_failure(&log)))?;
    match &record.observed {
        Observed::Correct => {}
        o => {
            return Err(Error::Other(format!(
                "the profiled run did not complete correctly ({}): {}",
                o.kind(),
                record.flags.join("; ")
            )))
        }
    }
    if !out.status.success() || !report.is_file() {
        return Err(Error::Other(ncu_failure(&log)));
    }
    let csv = Command::new(&ncu)
        .args(["--import"])
        .arg(&report)
        .args(["--csv", "--page", "raw", "--print-units", "base"])
        .output()?;
    let text = String::from_utf8_lossy(&csv.stdout).into_owned();
    std::fs::write(dir.join("metrics.csv"), &text)?;
    if !csv.status.success() {
        return Err(Error::Other(ncu_failure(&String::from_utf8_lossy(
            &csv.stderr,
        ))));
    }
    if full {
        let details = Command::new(&ncu)
            .arg("--import")
            .arg(&report)
            .args(["--page", "details"])
            .output()?;
        std::fs::write(dir.join("details.txt"), &details.stdout)?;
        // The source page: each SASS instruction with its stall samples (the full set samples warp states).
        let source = Command::new(&ncu)
            .arg("--import")
            .arg(&report)
            .args(["--page", "source", "--csv", "--print-source", "sass"])
            .output()?;
        let text = String::from_utf8_lossy(&source.stdout).into_owned();
        std::fs::write(dir.join("source.csv"), &text)?;
        if source.status.success() {
            let kernels = crate::trial::source_page::parse(&text)?;
            std::fs::write(
                dir.join("source-summary.txt"),
                crate::trial::source_page::summary(&kernels, 12),
            )?;
        }
    }
    let kernels = parse_raw_csv(&text)?;
    let profile = side_by_side(&kernels, record, report, &variant_kernel(job))?;
    std::fs::write(
        dir.join("profile.json"),
        serde_json::to_string_pretty(&profile)?,
    )?;
    Ok(profile)
}

/// Checks cuBLAS on the profiled problem in a child that no profiler watches, which times cuBLAS's paths and
/// remembers the fastest for the machine, before the child under ncu reads that choice.
fn choose_cublas_outside_the_profiler(name: &str, job: &Job) -> Result<()> {
    let Job::Profile { shape, dtype, .. } = job else {
        return Err(Error::Other(format!("{name}: profile runs a profile job")));
    };
    let check = Job::Check {
        variant: crate::trial::job::VariantSpec::Cublas,
        shape: shape.clone(),
        dtype: *dtype,
    };
    let outcome = subprocess::run_in_child(
        &format!("{name}::cublas_path"),
        &check,
        std::time::Duration::from_secs(120),
    );
    match outcome.record.observed {
        Observed::Correct => Ok(()),
        other => Err(Error::Other(format!(
            "choosing the cuBLAS path before profiling: {other:?}\n{}",
            outcome.output
        ))),
    }
}

/// One profiled kernel: its name and every metric ncu reported for it (base units).
pub type KernelMetrics = (String, Vec<(String, f64)>);

/// Reads `ncu --csv --page raw`: a header of column names, a row of units, then one row per kernel.
pub fn parse_raw_csv(text: &str) -> Result<Vec<KernelMetrics>> {
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(crate::trial::source_page::split_csv_line)
        .collect();
    let Some(header) = rows.first() else {
        return Err(Error::Other(
            "ncu's CSV has no header: nothing was profiled (was any kernel launched in the profiler range?)"
                .into(),
        ));
    };
    let name_col = header
        .iter()
        .position(|h| h == "Kernel Name")
        .ok_or_else(|| Error::Other("ncu's CSV has no Kernel Name column".into()))?;
    Ok(rows
        .iter()
        .skip(2)
        .map(|row| {
            let metrics = header
                .iter()
                .zip(row)
                .filter_map(|(h, v)| {
                    v.replace(',', "")
                        .parse::<f64>()
                        .ok()
                        .map(|x| (h.clone(), x))
                })
                .collect();
            (row.get(name_col).cloned().unwrap_or_default(), metrics)
        })
        .collect())
}

/// The name of the kernel a profile job's variant launches, as its family names it (an external kernel's entry
/// point, the skinny kernel's, the ladder's `gemm_kernel` ...).
fn variant_kernel(job: &Job) -> String {
    match job {
        Job::Profile { variant, .. } => match variant.kernel() {
            Some(Ok(k)) => k.profiled(),
            _ => "gemm_kernel".into(),
        },
        _ => "gemm_kernel".into(),
    }
}

/// The variant's kernel (named `kernel`) against cuBLAS's (any other name), metric by metric.
fn side_by_side(
    kernels: &[KernelMetrics],
    record: TrialRecord,
    report: PathBuf,
    kernel: &str,
) -> Result<Profile> {
    let variant = kernels.iter().find(|(n, _)| n.starts_with(kernel));
    let cublas = kernels.iter().find(|(n, _)| !n.starts_with(kernel));
    let (Some(variant), Some(cublas)) = (variant, cublas) else {
        return Err(Error::Other(format!(
            "expected the variant's {kernel} and one cuBLAS kernel in the profile, found: {}",
            kernels
                .iter()
                .map(|k| k.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let value = |k: &KernelMetrics, metric: &str, scale: f64| {
        k.1.iter()
            .find(|(name, _)| name == metric)
            .map(|(_, v)| v * scale)
    };
    let rows = METRICS
        .iter()
        .map(|&(metric, label, scale, unit)| ProfileRow {
            metric: metric.into(),
            label: label.into(),
            unit: unit.into(),
            variant: value(variant, metric, scale),
            cublas: value(cublas, metric, scale),
        })
        .collect();
    Ok(Profile {
        variant_kernel: variant.0.clone(),
        cublas_kernel: cublas.0.clone(),
        rows,
        record,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"==PROF== Disconnected
"ID","Process ID","Process Name","Host Name","Kernel Name","gpu__time_duration.sum","lts__t_sector_hit_rate.pct","sm__cycles_elapsed.avg.per_second"
"","","","","","nsecond","%","hertz"
"0","77","gemm-ablate","h","gemm_kernel","193200","61.5","1,755,000,000"
"1","77","gemm-ablate","h","nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT","183900","70.25","1,780,000,000"
"#;

    #[test]
    fn ncu_raw_csv_reads_as_two_kernels_side_by_side() {
        let kernels = parse_raw_csv(SAMPLE).unwrap();
        assert_eq!(kernels.len(), 2);
        let p = side_by_side(
            &kernels,
            sample_record(),
            PathBuf::from("r.ncu-rep"),
            "gemm_kernel",
        )
        .unwrap();
        assert!(p.cublas_kernel.starts_with("nvjet"));
        let row = |label: &str| p.rows.iter().find(|r| r.label == label).unwrap().clone();
        let near = |v: Option<f64>, x: f64| (v.unwrap() - x).abs() < 1e-9;
        assert!(near(row("duration").variant, 193.2));
        assert!(near(row("duration").cublas, 183.9));
        assert!(near(row("SM clock").cublas, 1780.0));
        assert_eq!(row("L2 hit rate").variant, Some(61.5));
        assert_eq!(
            row("DRAM read").variant,
            None,
            "a metric ncu did not report is left empty"
        );
    }

    #[test]
    fn the_variant_kernel_is_found_by_its_own_name() {
        use crate::trial::job::VariantSpec;
        let job = |variant| Job::Profile {
            variant,
            shape: crate::kernel::problem::shape("square4096"),
            dtype: crate::kernel::problem::DType::F16,
        };
        let ext = VariantSpec::outside_ladder("ext:mma_tile")
            .unwrap()
            .unwrap();
        assert_eq!(variant_kernel(&job(ext)), "mma_tile_gemm");
        let rung = crate::kernel::ladder::Rung::top();
        assert_eq!(
            variant_kernel(&job(VariantSpec::gemm(rung.name(), rung.config()))),
            "gemm_kernel"
        );
        let renamed = SAMPLE.replace("\"gemm_kernel\"", "\"mma_tile_gemm\"");
        let kernels = parse_raw_csv(&renamed).unwrap();
        let p = side_by_side(&kernels, sample_record(), PathBuf::new(), "mma_tile_gemm").unwrap();
        assert!(p.cublas_kernel.starts_with("nvjet"));
    }

    #[test]
    fn a_profile_without_both_kernels_says_what_it_found() {
        let only: String = SAMPLE.lines().take(4).collect::<Vec<_>>().join("\n");
        let kernels = parse_raw_csv(&only).unwrap();
        let e = side_by_side(&kernels, sample_record(), PathBuf::new(), "gemm_kernel")
            .unwrap_err()
            .to_string();
        assert!(e.contains("found: gemm_kernel"), "{e}");
        assert!(parse_raw_csv("==PROF== nothing\n").is_err());
    }

    #[test]
    fn quoted_fields_with_commas_and_quotes_split_right() {
        assert_eq!(
            crate::trial::source_page::split_csv_line(r#""a","b,c","d ""e""""#),
            vec!["a", "b,c", r#"d "e""#]
        );
    }

    #[test]
    fn missing_counters_permission_is_named() {
        let m = ncu_failure("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission");
        assert!(m.contains("ERR_NVGPUCTRPERM") && m.contains("root"), "{m}");
    }

    fn sample_record() -> TrialRecord {
        TrialRecord::new(
            "profile",
            &Job::CublasVsCpu {
                dtype: crate::DType::F16,
            },
            Observed::Correct,
        )
    }
}
