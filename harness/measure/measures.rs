//! Named figures with their units: what a record keeps for each timed variant or sweep point. The report layer
//! decides how to show them; the records only hold name, value and unit.

use crate::kernel::problem::Shape;
use serde::{Deserialize, Serialize};

/// One figure: `time` 190.5 `us`, `throughput` 722.1 `TFLOP/s`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// Median time per launch.
pub const TIME: &str = "time";
/// Useful floating-point work per second (2·M·N·K per GEMM).
pub const THROUGHPUT: &str = "throughput";
/// Bytes of A, B and C each moved once, per second: the figure to hold against the memory floor when the
/// weights are streamed (small M).
pub const BANDWIDTH: &str = "effective bandwidth";
/// The floor an effective bandwidth is held against: a device-to-device copy on the H200, 4.30 TB/s of reads
/// and writes together (measured on these machines, ../shared/notes/beyond-the-seed.md). Streaming an 8192x8192
/// fp16 weight (134 MB) at this rate takes 31 us.
pub const COPY_FLOOR_TB_S: f64 = 4.30;

/// The read floor: a kernel that does nothing but read decode_m1's A and B (134 MB) once, back to back under PDL
/// (`stream`, kernels/stream_read.cu), measured at 4.07-4.14 TB/s in five calls on four hosts, 4.09 the median
/// (ced21d7, e7f7856, 979d348, c026bf9: `results/h200/<commit>/h79-read-floor/` and the H80-H81 sweeps; H79). The
/// `read_floor::` trials measure it again in every microbench run. A GEMM that streams weights cannot go faster.
pub const READ_FLOOR_TB_S: f64 = 4.09;

/// The floors above were measured on the H200 and hold only there: another GPU's bandwidth is shown without them
/// (an H100's HBM3 reads about a fifth slower, and no floor of its own has been committed).
pub fn floors_for(gpu_name: Option<&str>) -> Option<(f64, f64)> {
    gpu_name
        .filter(|name| name.contains("H200"))
        .map(|_| (READ_FLOOR_TB_S, COPY_FLOOR_TB_S))
}

/// Load-path kernels: bytes landed in shared memory per second.
pub const FILL_RATE: &str = "shared-memory fill";

/// The read-floor kernel: bytes of A and B read per second (H79).
pub const READ_RATE: &str = "read rate";

fn measure(name: &str, value: f64, unit: &str) -> Measure {
    Measure {
        name: name.into(),
        value,
        unit: unit.into(),
    }
}

/// What a GEMM that takes `us` per launch on `shape` achieved (2-byte elements: fp16 and bf16).
pub fn gemm(us: f64, shape: &Shape) -> Vec<Measure> {
    gemm_of(us, shape, crate::kernel::problem::DType::F16)
}

/// `gemm` for operands of `dtype` (the output 16-bit in every type).
pub fn gemm_of(us: f64, shape: &Shape, dtype: crate::kernel::problem::DType) -> Vec<Measure> {
    let seconds = us * 1e-6;
    let bytes = ((shape.m * shape.k + shape.n * shape.k) * dtype.operand_bytes()
        + shape.m * shape.n * 2) as f64;
    vec![
        measure(TIME, us, "us"),
        measure(THROUGHPUT, shape.flops() / seconds / 1e12, "TFLOP/s"),
        measure(BANDWIDTH, bytes / seconds / 1e12, "TB/s"),
    ]
}

/// What a load-path kernel that lands `bytes` in shared memory in `us` achieved.
pub fn load_path(us: f64, bytes: f64) -> Vec<Measure> {
    vec![
        measure(TIME, us, "us"),
        measure(FILL_RATE, bytes / (us * 1e-6) / 1e12, "TB/s"),
    ]
}

/// What the read-floor kernel that reads `bytes` (A and B) in `us` achieved.
pub fn read_floor(us: f64, bytes: f64) -> Vec<Measure> {
    vec![
        measure(TIME, us, "us"),
        measure(READ_RATE, bytes / (us * 1e-6) / 1e12, "TB/s"),
    ]
}

/// The value of the measure called `name`, if it was taken.
pub fn find(measures: &[Measure], name: &str) -> Option<f64> {
    measures.iter().find(|m| m.name == name).map(|m| m.value)
}

/// The headline rate (throughput for GEMMs, fill rate for load paths, read rate for the read floor), with its
/// unit.
pub fn headline(measures: &[Measure]) -> Option<&Measure> {
    measures
        .iter()
        .find(|m| m.name == THROUGHPUT || m.name == FILL_RATE || m.name == READ_RATE)
}

/// The measures of a stored record (flattened into it): its own list, or, in a record written before measures
/// existed, `median_us`, `rate` and `rate_unit`.
#[derive(Deserialize)]
pub struct StoredMeasures {
    #[serde(default)]
    measures: Vec<Measure>,
    #[serde(default)]
    median_us: Option<f64>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    rate_unit: String,
}

impl StoredMeasures {
    pub fn into_measures(self) -> Vec<Measure> {
        if self.measures.is_empty() {
            from_legacy(self.median_us, self.rate, &self.rate_unit)
        } else {
            self.measures
        }
    }
}

/// Records written before measures existed kept `median_us`, `rate` and `rate_unit`; this reads them as measures.
fn from_legacy(median_us: Option<f64>, rate: Option<f64>, rate_unit: &str) -> Vec<Measure> {
    let mut out = Vec::new();
    if let Some(us) = median_us {
        out.push(measure(TIME, us, "us"));
    }
    if let Some(r) = rate {
        if rate_unit.starts_with("TB/s") {
            out.push(measure(FILL_RATE, r, "TB/s"));
        } else {
            out.push(measure(THROUGHPUT, r, rate_unit));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_measures_follow_from_time_and_shape() {
        let s = Shape::new("t", 4096, 4096, 4096);
        let m = gemm(200.0, &s);
        assert_eq!(find(&m, TIME), Some(200.0));
        let tflops = find(&m, THROUGHPUT).unwrap();
        assert!((tflops - 2.0 * 4096f64.powi(3) / 200e-6 / 1e12).abs() < 1e-9);
        let tbs = find(&m, BANDWIDTH).unwrap();
        assert!((tbs - 3.0 * 4096.0 * 4096.0 * 2.0 / 200e-6 / 1e12).abs() < 1e-9);
        assert_eq!(headline(&m).unwrap().unit, "TFLOP/s");
    }

    #[test]
    fn legacy_fields_read_as_measures() {
        let m = from_legacy(Some(190.5), Some(11.27), "TB/s into shared memory");
        assert_eq!(find(&m, TIME), Some(190.5));
        assert_eq!(find(&m, FILL_RATE), Some(11.27));
        let g = from_legacy(Some(100.0), Some(700.0), "TFLOP/s");
        assert_eq!(headline(&g).unwrap().name, THROUGHPUT);
        assert!(from_legacy(None, None, "").is_empty());
    }
}
