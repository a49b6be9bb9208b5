//! Correctness against cuBLAS: fresh random inputs, the kernel's output poisoned with NaN and fenced by guard bands
//! and guard columns past N (operands.rs, GuardedOutput), then max error, relative Frobenius error, unwritten
//! outputs and out-of-bounds stores, judged by per-dtype tolerances.

use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::problem::{DType, Tolerance};
use crate::measure::operands::{GuardedOutput, Operands, UtilKernels, STATS};
use crate::measure::reference::Cublas;
use crate::measure::variant::IntoOutput;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub max_abs_err: f64,
    /// Max error beyond one ulp of the output type at its value (`Tolerance::rel_value`), over the reference's
    /// root-mean-square value: what the tolerance's `rel_max` judges.
    pub rel_max_err: f64,
    /// That error beyond one ulp, absolute, and where (records before the allowance lack them).
    #[serde(default)]
    pub max_excess_err: f64,
    #[serde(default)]
    pub excess_at: (usize, usize),
    /// ||out - ref||_F / ||ref||_F over the written outputs.
    pub rel_fro_err: f64,
    pub ref_rms: f64,
    /// Outputs still holding the NaN poison (or non-finite).
    pub unwritten: u64,
    pub first_unwritten: Option<(usize, usize)>,
    pub max_err_at: (usize, usize),
    pub reference_non_finite: u64,
    /// 16-bit words around C (guard bands before and after, guard columns past N in every row) overwritten.
    pub guard_damage: u64,
    pub tolerance: Tolerance,
    /// The seed A and B were drawn from: GEMM_ABLATE_SEED=<seed> replays the check.
    pub seed: u64,
    pub passed: bool,
    /// What is wrong, in words (None when passed).
    pub problem: Option<String>,
}

impl CheckReport {
    /// Judges raw statistics (see kernels/util.cu) of an `n`-column output.
    pub fn judge(
        raw: [u64; STATS],
        n: usize,
        total: usize,
        guard_damage: u64,
        dtype: DType,
        seed: u64,
    ) -> CheckReport {
        let sq_diff = f64::from_bits(raw[0]);
        let sq_ref = f64::from_bits(raw[1]);
        let max_abs_err = f64::from(f32::from_bits(raw[2] as u32));
        let unwritten = raw[3];
        let written = (total as u64).saturating_sub(unwritten).max(1);
        let ref_rms = (sq_ref / written as f64).sqrt();
        let rel_fro_err = if sq_ref > 0.0 {
            (sq_diff / sq_ref).sqrt()
        } else {
            f64::INFINITY
        };
        let max_excess_err = f64::from(f32::from_bits(raw[7] as u32));
        let rel_max_err = if ref_rms > 0.0 {
            max_excess_err / ref_rms
        } else {
            f64::INFINITY
        };
        let at = |i: u64| ((i as usize) / n, (i as usize) % n);
        let first_unwritten = (raw[5] != u64::MAX).then(|| at(raw[5]));
        let tolerance = dtype.tolerance();
        let mut problems = Vec::new();
        if unwritten > 0 {
            let (r, c) = first_unwritten.unwrap_or((0, 0));
            problems.push(format!(
                "{unwritten} of {total} outputs unwritten (still NaN after the poison), the first at row {r}, column {c}"
            ));
        }
        if raw[4] > 0 {
            problems.push(format!(
                "the cuBLAS reference has {} non-finite values",
                raw[4]
            ));
        }
        if guard_damage > 0 {
            problems.push(format!(
                "out-of-bounds store: {guard_damage} words of the guard bands and columns around C were overwritten"
            ));
        }
        if !(rel_fro_err <= tolerance.rel_fro && rel_max_err <= tolerance.rel_max) {
            let (r, c) = at(raw[6]);
            let (er, ec) = at(raw[8]);
            problems.push(format!(
                "max error {max_abs_err:.4} at row {r}, column {c}; beyond one {} ulp of its value {max_excess_err:.4} at row {er}, column {ec} ({rel_max_err:.2e} of the reference's rms); relative Frobenius error {rel_fro_err:.2e}: over the {} tolerance ({:.0e} of the rms beyond an ulp, {:.0e} Frobenius)",
                dtype.output().name(),
                dtype.name(),
                tolerance.rel_max,
                tolerance.rel_fro
            ));
        }
        CheckReport {
            max_abs_err,
            rel_max_err,
            max_excess_err,
            excess_at: at(raw[8]),
            rel_fro_err,
            ref_rms,
            unwritten,
            first_unwritten,
            max_err_at: at(raw[6]),
            reference_non_finite: raw[4],
            guard_damage,
            tolerance,
            seed,
            passed: problems.is_empty(),
            problem: (!problems.is_empty()).then(|| problems.join("; ")),
        }
    }
}

/// Operand set 0 drawn afresh from `seed`, and the reference on it (packed, ldc = N; NaN wherever it wrote nothing).
fn fresh_reference(
    gpu: &Gpu,
    util: &UtilKernels,
    operands: &Operands,
    cublas: &Cublas,
    seed: u64,
) -> Result<DeviceBuffer> {
    let shape = &operands.shape;
    let reference = DeviceBuffer::new(gpu, shape.m * shape.n * 2)?;
    operands.refill(gpu, util, 0, seed)?;
    reference.fill_u16(gpu, operands.dtype.nan_bits())?;
    cublas.reference_into(gpu, util, 0, reference.ptr())?;
    Ok(reference)
}

/// Checks `kernel` on operand set 0 against the reference (`Cublas::reference_into`) on the same inputs, freshly drawn from `seed`. cuBLAS
/// writes a packed reference (ldc = N); the kernel writes into a guarded output whose rows are padded past N.
pub fn check(
    gpu: &Gpu,
    util: &UtilKernels,
    operands: &Operands,
    cublas: &Cublas,
    hang: &HangWatch,
    kernel: &dyn IntoOutput,
    seed: u64,
) -> Result<CheckReport> {
    let shape = &operands.shape;
    let total = shape.m * shape.n;
    let reference = fresh_reference(gpu, util, operands, cublas, seed)?;
    let out = GuardedOutput::new(gpu, shape.m, shape.n)?;
    out.poison(gpu, operands.dtype)?;
    gpu.synchronize()?;
    hang.reset();
    kernel
        .launch_into(gpu, 0, &out)
        .map_err(|e| hang.explain(e))?;
    gpu.synchronize().map_err(|e| hang.explain(e))?;
    let raw = util.compare(gpu, out.c(), out.ldc, reference.ptr(), shape.n, total)?;
    let damage = out.guard_damage(gpu, util)?;
    Ok(CheckReport::judge(
        raw,
        shape.n,
        total,
        damage,
        operands.dtype,
        seed,
    ))
}

/// Checks cuBLAS's own timed path where it is not the reference: FP8's cuBLASLt path (its scales, its layouts)
/// against the reference (the dequantized operands multiplied in fp32), on fresh inputs. Both outputs packed (ldc = N): the
/// library's stores are not fenced.
pub fn check_cublas(
    gpu: &Gpu,
    util: &UtilKernels,
    operands: &Operands,
    cublas: &Cublas,
    seed: u64,
) -> Result<CheckReport> {
    let shape = &operands.shape;
    let total = shape.m * shape.n;
    let reference = fresh_reference(gpu, util, operands, cublas, seed)?;
    let out = DeviceBuffer::new(gpu, total * 2)?;
    out.fill_u16(gpu, operands.dtype.nan_bits())?;
    cublas.gemm_into(gpu, cublas.path, 0, out.ptr())?;
    gpu.synchronize()?;
    let raw = util.compare(gpu, out.ptr(), shape.n, reference.ptr(), shape.n, total)?;
    Ok(CheckReport::judge(
        raw,
        shape.n,
        total,
        0,
        operands.dtype,
        seed,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::problem::Scales;

    /// Raw statistics where the max error is also the error beyond an ulp (a value near 0 at that output).
    fn raw(
        sq_diff: f64,
        sq_ref: f64,
        max_err: f32,
        unwritten: u64,
        first: u64,
        max_at: u64,
    ) -> [u64; STATS] {
        [
            sq_diff.to_bits(),
            sq_ref.to_bits(),
            u64::from(max_err.to_bits()),
            unwritten,
            0,
            first,
            max_at,
            u64::from(max_err.to_bits()),
            max_at,
        ]
    }

    #[test]
    fn one_ulp_at_a_large_output_is_rounding_not_an_error() {
        // 8fb4f1b's cuBLASLt row-wise result: 2.0 off (one bf16 ulp at 256-512) where the rms is about 31.7, so
        // 6.3e-2 of the rms; beyond the ulp nothing.
        let mut r = raw(0.1, 1e6, 2.0, 0, u64::MAX, 7);
        r[7] = u64::from(0f32.to_bits());
        let ok = CheckReport::judge(r, 100, 1000, 0, DType::E4M3(Scales::Row), 7);
        assert!(ok.passed, "{:?}", ok.problem);
        assert!(ok.max_abs_err / ok.ref_rms > 6e-2);
        // The same error with nothing to round it away fails, and says where and how much.
        let bad = CheckReport::judge(
            raw(0.1, 1e6, 2.0, 0, u64::MAX, 7),
            100,
            1000,
            0,
            DType::E4M3(Scales::Row),
            7,
        );
        assert!(!bad.passed);
        assert!(bad
            .problem
            .unwrap()
            .contains("beyond one bf16 ulp of its value 2.0000"));
    }

    #[test]
    fn the_allowance_is_one_ulp_of_the_output_type() {
        assert_eq!(DType::BF16.tolerance().rel_value, 1.0 / 128.0);
        assert_eq!(DType::F16.tolerance().rel_value, 1.0 / 1024.0);
        assert_eq!(
            DType::E4M3(Scales::Tensor).tolerance().rel_value,
            1.0 / 128.0
        );
        assert_eq!(
            DType::E4M3F16(Scales::Row).tolerance().rel_value,
            1.0 / 1024.0
        );
    }

    #[test]
    fn a_close_result_passes() {
        let r = CheckReport::judge(
            raw(1e-4, 1e4, 0.005, 0, u64::MAX, 5),
            100,
            10_000,
            0,
            DType::F16,
            7,
        );
        assert!(r.passed, "{:?}", r.problem);
        assert!(r.rel_fro_err < 1e-3);
        assert_eq!(r.first_unwritten, None);
    }

    #[test]
    fn unwritten_outputs_are_named_with_their_position() {
        let r = CheckReport::judge(
            raw(0.0, 1e4, 0.0, 128, 205, 0),
            100,
            10_000,
            0,
            DType::F16,
            7,
        );
        assert!(!r.passed);
        assert_eq!(r.first_unwritten, Some((2, 5)));
        assert!(r
            .problem
            .unwrap()
            .contains("128 of 10000 outputs unwritten"));
    }

    #[test]
    fn large_errors_fail_with_their_size() {
        let r = CheckReport::judge(
            raw(1e3, 1e4, 4.0, 0, u64::MAX, 7),
            100,
            10_000,
            0,
            DType::BF16,
            7,
        );
        assert!(!r.passed);
        assert!(r
            .problem
            .unwrap()
            .contains("max error 4.0000 at row 0, column 7"));
    }

    #[test]
    fn guard_damage_is_an_out_of_bounds_store() {
        let r = CheckReport::judge(
            raw(1e-4, 1e4, 0.01, 0, u64::MAX, 0),
            100,
            10_000,
            64,
            DType::F16,
            7,
        );
        assert!(!r.passed);
        assert!(r.problem.unwrap().contains("out-of-bounds store"));
    }
}
