//! FP8 e4m3 numbers on the CPU, for issue 40's correctness checks: the OCP E4M3 format that Hopper's tensor cores
//! take (`__nv_fp8_e4m3`: 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities, S.1111.111 is NaN,
//! the largest finite magnitude 448), encoding as the device's `cvt.rn.satfinite.e4m3x2.f32` does (round to the
//! nearest, ties to even, saturating to ±448), the three scaling schemes the issue names, and a float64 GEMM of the
//! dequantized operands as the reference. Nothing here runs on the GPU: the scale layouts here are the ones the
//! device code reads (`Scaling::scale_index`), and `reference::cublas_vs_cpu` checks the GPU's FP8 reference
//! against `reference_gemm` on small shapes.

use crate::kernel::problem::Scales;

/// The largest finite e4m3 magnitude.
pub const E4M3_MAX: f32 = 448.0;

/// The value of an e4m3 code (NaN for the two NaN codes).
pub fn e4m3_to_f32(code: u8) -> f32 {
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((code >> 3) & 0x0f);
    let mantissa = f32::from(code & 0x07);
    if exponent == 0x0f && mantissa == 7.0 {
        return f32::NAN;
    }
    let magnitude = if exponent == 0 {
        // Subnormal: m/8 x 2^(1 - 7).
        mantissa / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + mantissa / 8.0) * 2f32.powi(exponent - 7)
    };
    sign * magnitude
}

/// The e4m3 code nearest `x` (ties to the even code), saturating to ±448; NaN becomes 0x7f.
pub fn e4m3_from_f32(x: f32) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs().min(E4M3_MAX);
    // The finite magnitudes are codes 0..=0x7e in increasing order: find the nearest by bisection.
    let (mut lo, mut hi) = (0u8, 0x7eu8);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if e4m3_to_f32(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (below, above) = (e4m3_to_f32(lo), e4m3_to_f32(hi));
    let code = if a - below < above - a || (a - below == above - a && lo % 2 == 0) {
        lo
    } else {
        hi
    };
    sign | code
}

/// Scales between consecutive 128-row blocks of a 128x128-scaled operand with `k` columns: its k-blocks, rounded
/// up to a multiple of 4. cuBLASLt reads `BLK128x128_32F` scales with this stride (NVIDIA's cuBLASLt samples size
/// the tensor `roundoff(ceildiv(K, 128), 4) * ceildiv(rows, 128)`); unpadded, every block row past the first would
/// be read from the wrong place wherever ceil(K/128) is not a multiple of 4. The padding entries are never read.
pub fn block_row_stride(k: usize) -> usize {
    k.div_ceil(128).next_multiple_of(4)
}

/// How the real operand is recovered from its e4m3 codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// One scale for the whole tensor.
    PerTensor,
    /// One scale per row (a token of A, an output channel of B).
    RowWise,
    /// One scale per row per 128 k-elements (A in DeepSeek-V3's recipe).
    Blocks1x128,
    /// One scale per 128 x 128 block (B in DeepSeek-V3's recipe).
    Blocks128x128,
}

impl Scaling {
    /// The number of scales of a `rows` x `k` operand.
    pub fn scale_count(self, rows: usize, k: usize) -> usize {
        match self {
            Scaling::PerTensor => 1,
            Scaling::RowWise => rows,
            Scaling::Blocks1x128 => rows * k.div_ceil(128),
            Scaling::Blocks128x128 => rows.div_ceil(128) * block_row_stride(k),
        }
    }

    /// The index of the scale of element (row, col) of a `rows` x `k` operand, in the layouts cuBLASLt takes: 1x128
    /// scales M-major (`[ceil(k/128)][rows]`, a k-block's scales of consecutive rows side by side), 128x128 scales
    /// row-major with each row of k-blocks padded to a multiple of 4 (`[ceil(rows/128)][block_row_stride(k)]`).
    /// kernels/util.cu's `dequantize_e4m3` and kernels/gemm.cu read the same layouts.
    pub fn scale_index(self, row: usize, col: usize, rows: usize, k: usize) -> usize {
        match self {
            Scaling::PerTensor => 0,
            Scaling::RowWise => row,
            Scaling::Blocks1x128 => (col / 128) * rows + row,
            Scaling::Blocks128x128 => (row / 128) * block_row_stride(k) + col / 128,
        }
    }

    /// `dequantize_e4m3`'s layout argument for these scales.
    pub fn layout_code(self) -> u32 {
        match self {
            Scaling::PerTensor => 0,
            Scaling::RowWise => 1,
            Scaling::Blocks1x128 => 2,
            Scaling::Blocks128x128 => 3,
        }
    }

    /// The scalings of A and of B in a problem of `scales`.
    pub fn of(scales: Scales) -> (Scaling, Scaling) {
        match scales {
            Scales::Tensor => (Scaling::PerTensor, Scaling::PerTensor),
            Scales::Row => (Scaling::RowWise, Scaling::RowWise),
            Scales::Block => (Scaling::Blocks1x128, Scaling::Blocks128x128),
        }
    }
}

/// An operand of `rows` x `k` (row-major, K innermost) in e4m3 with its scales: value = decode(code) x scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    pub rows: usize,
    pub k: usize,
    pub codes: Vec<u8>,
    pub scales: Vec<f32>,
    pub scaling: Scaling,
}

impl Quantized {
    /// Quantizes `values` (row-major `rows` x `k`): each scale maps its group's largest magnitude to 448, so the
    /// group uses e4m3's whole range (a group of zeros gets scale 1).
    pub fn new(values: &[f32], rows: usize, k: usize, scaling: Scaling) -> Quantized {
        assert_eq!(values.len(), rows * k, "a {rows} x {k} operand");
        let mut amax = vec![0f32; scaling.scale_count(rows, k)];
        for r in 0..rows {
            for c in 0..k {
                let i = scaling.scale_index(r, c, rows, k);
                amax[i] = amax[i].max(values[r * k + c].abs());
            }
        }
        let scales: Vec<f32> = amax
            .iter()
            .map(|&m| if m > 0.0 { m / E4M3_MAX } else { 1.0 })
            .collect();
        let codes = (0..rows * k)
            .map(|i| e4m3_from_f32(values[i] / scales[scaling.scale_index(i / k, i % k, rows, k)]))
            .collect();
        Quantized {
            rows,
            k,
            codes,
            scales,
            scaling,
        }
    }

    /// The value the kernel multiplies: the decoded code times its scale.
    pub fn value(&self, row: usize, col: usize) -> f64 {
        f64::from(e4m3_to_f32(self.codes[row * self.k + col]))
            * f64::from(self.scales[self.scaling.scale_index(row, col, self.rows, self.k)])
    }
}

/// The float64 reference C = A B^T of the dequantized operands (A is M x K, B is N x K), row-major M x N.
pub fn reference_gemm(a: &Quantized, b: &Quantized) -> Vec<f64> {
    assert_eq!(a.k, b.k, "A and B share K");
    let k = a.k;
    let (a_values, b_values): (Vec<f64>, Vec<f64>) = (
        (0..a.rows * k).map(|i| a.value(i / k, i % k)).collect(),
        (0..b.rows * k).map(|i| b.value(i / k, i % k)).collect(),
    );
    let mut c = vec![0f64; a.rows * b.rows];
    for i in 0..a.rows {
        let ar = &a_values[i * k..(i + 1) * k];
        for j in 0..b.rows {
            let br = &b_values[j * k..(j + 1) * k];
            c[i * b.rows + j] = ar.iter().zip(br).map(|(x, y)| x * y).sum();
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_decodes_and_encodes_back() {
        let mut finite = 0;
        for code in 0..=255u8 {
            let v = e4m3_to_f32(code);
            if code & 0x7f == 0x7f {
                assert!(v.is_nan(), "{code:#x}");
                continue;
            }
            finite += 1;
            assert_eq!(e4m3_from_f32(v), code, "{code:#x} = {v}");
        }
        assert_eq!(finite, 254);
        assert_eq!(e4m3_to_f32(0x7e), 448.0);
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9));
        assert_eq!(e4m3_to_f32(0x38), 1.0);
        assert_eq!(e4m3_to_f32(0xb8), -1.0);
    }

    #[test]
    fn encoding_rounds_to_nearest_even_and_saturates() {
        // Between 1.0 (0x38) and 1.125 (0x39): the midpoint goes to the even code, either side to the nearer.
        assert_eq!(e4m3_from_f32(1.0625), 0x38);
        assert_eq!(e4m3_from_f32(1.07), 0x39);
        assert_eq!(e4m3_from_f32(1.05), 0x38);
        // Between 1.125 (0x39) and 1.25 (0x3a): the midpoint goes up, to the even code.
        assert_eq!(e4m3_from_f32(1.1875), 0x3a);
        assert_eq!(e4m3_from_f32(1e6), 0x7e);
        assert_eq!(e4m3_from_f32(-1e6), 0xfe);
        assert_eq!(e4m3_from_f32(f32::INFINITY), 0x7e);
        assert_eq!(e4m3_from_f32(f32::NAN), 0x7f);
        assert_eq!(e4m3_from_f32(2f32.powi(-11)), 0x00);
        // Every finite value's error is at most half a step: 2^-4 relative above the subnormals.
        for i in 0..10_000 {
            let x = 0.015625 + i as f32 * 0.0447;
            let back = e4m3_to_f32(e4m3_from_f32(x));
            assert!(((back - x) / x).abs() <= 1.0 / 16.0 + 1e-6, "{x} -> {back}");
        }
    }

    #[test]
    fn each_scaling_groups_its_elements_and_uses_the_whole_range() {
        assert_eq!(Scaling::Blocks1x128.scale_count(3, 300), 9);
        // 128x128 scales: rows of k-blocks padded to a multiple of 4, as cuBLASLt reads them (3 k-blocks: stride 4).
        assert_eq!(Scaling::Blocks128x128.scale_count(300, 300), 3 * 4);
        assert_eq!(
            Scaling::Blocks128x128.scale_index(129, 257, 300, 300),
            4 + 2
        );
        assert_eq!(block_row_stride(512), 4);
        assert_eq!(block_row_stride(513), 8);
        assert_eq!(block_row_stride(7168), 56);
        // 1x128 scales M-major, as cuBLASLt takes them: a k-block's scales of consecutive rows side by side.
        assert_eq!(Scaling::Blocks1x128.scale_index(2, 257, 3, 300), 2 * 3 + 2);
        assert_eq!(Scaling::Blocks1x128.scale_index(1, 0, 3, 300), 1);
        let (rows, k) = (130, 260);
        let values: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * (1.0 + (i / k) as f32))
            .collect();
        for scaling in [
            Scaling::PerTensor,
            Scaling::RowWise,
            Scaling::Blocks1x128,
            Scaling::Blocks128x128,
        ] {
            let q = Quantized::new(&values, rows, k, scaling);
            assert_eq!(q.scales.len(), scaling.scale_count(rows, k));
            // Each group's largest magnitude lands on 448 exactly, and every value within half a step of its own.
            assert!(q.codes.iter().any(|&c| c & 0x7f == 0x7e), "{scaling:?}");
            for (i, &value) in values.iter().enumerate() {
                let v = f64::from(value);
                let err = (q.value(i / k, i % k) - v).abs();
                let step = f64::from(q.scales[scaling.scale_index(i / k, i % k, rows, k)]);
                assert!(
                    err <= v.abs() / 16.0 + step * 2f64.powi(-10),
                    "{scaling:?} {i}: {v} {err}"
                );
            }
        }
    }

    #[test]
    fn the_reference_multiplies_what_the_kernel_sees() {
        let (m, n, k) = (3, 2, 256);
        let a: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 - 2.0).collect();
        let b: Vec<f32> = (0..n * k).map(|i| (i % 3) as f32 - 1.0).collect();
        let (qa, qb) = (
            Quantized::new(&a, m, k, Scaling::Blocks1x128),
            Quantized::new(&b, n, k, Scaling::Blocks128x128),
        );
        let c = reference_gemm(&qa, &qb);
        // The integers land on e4m3 codes exactly (x 224 and x 448); only the scales, 2/448 and 1/448 in f32,
        // round: the product matches the plain one to f32's precision of the terms' magnitudes.
        for i in 0..m {
            for j in 0..n {
                let terms = (0..k).map(|p| f64::from(a[i * k + p]) * f64::from(b[j * k + p]));
                let (exact, size) =
                    terms.fold((0.0, 0.0), |(s, t): (f64, f64), x| (s + x, t + x.abs()));
                let got = c[i * n + j];
                assert!(
                    (got - exact).abs() <= 1e-6 * size,
                    "{i} {j}: {got} against {exact}"
                );
            }
        }
    }
}
