//! cuBLAS on the same device tensors: cublasGemmEx (fp32 compute) and cuBLASLt (the fastest of its heuristic's
//! top algorithms). The fastest path in the rounds' conditions is "cuBLAS" (cublas_choice.rs). A float64 CPU
//! GEMM on small shapes validates the cuBLAS call itself (layouts, transposes).
//!
//! cuBLAS is column-major: row-major C[M,N] = A[M,K] B[N,K]^T is computed as C^T = B A^T with transa = T on B
//! (ld K), transb = N on A (ld K) and ldc = N.

use crate::error::{CudaContext as _, Error, Result};
use crate::gpu::device::Gpu;
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::problem::{DType, Shape};
use crate::measure::fp8::Scaling;
use crate::measure::operands::{Operands, ScaleBuffers};
use crate::measure::variant::Variant;
use cudarc::cublas::sys as blas;
use cudarc::cublaslt::sys as lt;
use serde::{Deserialize, Serialize};
use std::ffi::c_void;

const WORKSPACE_BYTES: usize = 32 << 20;
const LT_CANDIDATES: usize = 8;

/// Which cuBLAS path a reference launch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CublasPath {
    GemmEx,
    /// cuBLASLt with the heuristic's n-th algorithm.
    Lt(usize),
}

pub struct Cublas<'a> {
    blas: blas::cublasHandle_t,
    lt: lt::cublasLtHandle_t,
    workspace: DeviceBuffer,
    operands: &'a Operands,
    lt_plan: LtPlan,
    pub path: CublasPath,
}

/// The cuBLASLt descriptors of one problem and its candidate algorithms.
struct LtPlan {
    desc: lt::cublasLtMatmulDesc_t,
    a: lt::cublasLtMatrixLayout_t,
    b: lt::cublasLtMatrixLayout_t,
    c: lt::cublasLtMatrixLayout_t,
    algos: Vec<lt::cublasLtMatmulAlgo_t>,
}

/// cuBLASLt's scale mode for an FP8 operand's scales.
fn lt_scale_mode(scaling: Scaling) -> lt::cublasLtMatmulMatrixScale_t {
    use lt::cublasLtMatmulMatrixScale_t as Mode;
    match scaling {
        Scaling::PerTensor => Mode::CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
        Scaling::RowWise => Mode::CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
        Scaling::Blocks1x128 => Mode::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
        Scaling::Blocks128x128 => Mode::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
    }
}

/// cublasGemmEx's type for 16-bit operands (FP8's reference multiplies its dequantized operands in fp32:
/// `reference_into`).
fn data_type_blas(d: DType) -> blas::cudaDataType {
    match d.output() {
        DType::F16 => blas::cudaDataType::CUDA_R_16F,
        _ => blas::cudaDataType::CUDA_R_16BF,
    }
}

fn data_type_lt(d: DType) -> lt::cudaDataType {
    match d {
        DType::F16 => lt::cudaDataType::CUDA_R_16F,
        DType::BF16 => lt::cudaDataType::CUDA_R_16BF,
        DType::E4M3(_) | DType::E4M3F16(_) => lt::cudaDataType::CUDA_R_8F_E4M3,
    }
}

fn lt_ok(s: lt::cublasStatus_t, what: &str) -> Result<()> {
    if s == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda {
            context: format!("cuBLASLt {what}"),
            message: format!("{s:?}"),
        })
    }
}

/// Sets a matmul descriptor's attribute to `value`, passed as its bytes (the attribute's declared type: i32 for
/// transa, i8 for FAST_ACCUM, u32 for a scale mode, a u64 device pointer for scales).
///
/// # Safety
/// `desc` is a live descriptor and `T` the attribute's type.
unsafe fn set_attribute<T>(
    desc: lt::cublasLtMatmulDesc_t,
    attribute: lt::cublasLtMatmulDescAttributes_t,
    value: &T,
    what: &str,
) -> Result<()> {
    lt_ok(
        lt::cublasLtMatmulDescSetAttribute(
            desc,
            attribute,
            value as *const T as *const c_void,
            std::mem::size_of::<T>(),
        ),
        what,
    )
}

impl LtPlan {
    /// `scales`: FP8's scales of our A and B, None for 16-bit operands.
    fn new(
        handle: lt::cublasLtHandle_t,
        shape: &Shape,
        dtype: DType,
        scales: Option<&ScaleBuffers>,
    ) -> Result<LtPlan> {
        let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
        let ty = data_type_lt(dtype);
        // The output is 16-bit in every type (bf16 for FP8), and C takes D's type.
        let out_ty = data_type_lt(dtype.output());
        // The plan owns each handle as soon as it is created, so an error part-way destroys what was made.
        let mut plan = LtPlan {
            desc: std::ptr::null_mut(),
            a: std::ptr::null_mut(),
            b: std::ptr::null_mut(),
            c: std::ptr::null_mut(),
            algos: Vec::new(),
        };
        unsafe {
            lt_ok(
                lt::cublasLtMatmulDescCreate(
                    &mut plan.desc,
                    lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    lt::cudaDataType::CUDA_R_32F,
                ),
                "creating a matmul descriptor",
            )?;
            let trans_t: i32 = 1; // CUBLAS_OP_T on the first operand (B, stored N x K row-major = K x N column-major)
            let desc = plan.desc;
            set_attribute(
                desc,
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                &trans_t,
                "setting transa",
            )?;
            lt_ok(
                lt::cublasLtMatrixLayoutCreate(&mut plan.a, ty, k, n, k as i64),
                "creating layout of B",
            )?;
            lt_ok(
                lt::cublasLtMatrixLayoutCreate(&mut plan.b, ty, k, m, k as i64),
                "creating layout of A",
            )?;
            lt_ok(
                lt::cublasLtMatrixLayoutCreate(&mut plan.c, out_ty, n, m, n as i64),
                "creating layout of C",
            )?;
            let (a, b, c) = (plan.a, plan.b, plan.c);
            // FP8 (TN only, as here): D = dequant(op(A)) dequant(op(B)) with cuBLASLt's A our B and its B our A,
            // each operand's scales in the mode of the problem's scheme (cuBLAS 12.9 on: per tensor, per row as an
            // outer vector, 1x128 and 128x128 blocks); the scale buffers are the operands' own.
            if let Some(scales) = scales {
                // Precise accumulation, said rather than left to the default: cuBLASLt promotes the tensor core's
                // FP8 partial sums to fp32 periodically unless FAST_ACCUM is set (its documentation), as torch's
                // `_scaled_mm` asks by default. A kernel of ours without `promote` does not (H128).
                let fast_accum: i8 = 0;
                set_attribute(
                    desc,
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                    &fast_accum,
                    "setting FP8 accumulation to precise (FAST_ACCUM off)",
                )?;
                for (mode_attribute, pointer_attribute, scaling, at, whose) in [
                    (
                        lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                        lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                        scales.b_scaling,
                        scales.b.ptr(),
                        "B (cuBLASLt's A)",
                    ),
                    (
                        lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                        lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        scales.a_scaling,
                        scales.a.ptr(),
                        "A (cuBLASLt's B)",
                    ),
                ] {
                    let mode = lt_scale_mode(scaling) as u32;
                    set_attribute(
                        desc,
                        mode_attribute,
                        &mode,
                        &format!("setting the scale mode of {whose} ({scaling:?})"),
                    )?;
                    set_attribute(
                        desc,
                        pointer_attribute,
                        &at,
                        &format!("setting the scales of {whose}"),
                    )?;
                }
            }
            let mut pref = std::ptr::null_mut();
            lt_ok(
                lt::cublasLtMatmulPreferenceCreate(&mut pref),
                "creating a preference",
            )?;
            let ws = WORKSPACE_BYTES as u64;
            lt_ok(
                lt::cublasLtMatmulPreferenceSetAttribute(
                    pref,
                    lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                    &ws as *const u64 as *const c_void,
                    8,
                ),
                "setting the workspace size",
            )?;
            let mut results: Vec<lt::cublasLtMatmulHeuristicResult_t> =
                vec![std::mem::zeroed(); LT_CANDIDATES];
            let mut count = 0;
            let status = lt::cublasLtMatmulAlgoGetHeuristic(
                handle,
                desc,
                a,
                b,
                c,
                c,
                pref,
                LT_CANDIDATES as i32,
                results.as_mut_ptr(),
                &mut count,
            );
            lt::cublasLtMatmulPreferenceDestroy(pref);
            // The heuristic says "no algorithm fits" as NOT_SUPPORTED more often than as a count of 0 (FP8 scale
            // modes and output types a version lacks): the same thing, a plan with no paths, so that the problem
            // keeps its reference and only timing cuBLAS fails.
            if status == lt::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED {
                count = 0;
            } else {
                lt_ok(status, "asking the heuristic for algorithms")?;
            }
            plan.algos = results[..count as usize]
                .iter()
                .filter(|r| r.state == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS)
                .map(|r| r.algo)
                .collect();
            Ok(plan)
        }
    }
}

impl Drop for LtPlan {
    /// Destroys what was created (a plan that failed part-way holds null handles for the rest).
    fn drop(&mut self) {
        unsafe {
            for layout in [self.a, self.b, self.c] {
                if !layout.is_null() {
                    lt::cublasLtMatrixLayoutDestroy(layout);
                }
            }
            if !self.desc.is_null() {
                lt::cublasLtMatmulDescDestroy(self.desc);
            }
        }
    }
}

impl<'a> Cublas<'a> {
    /// Creates both handles on the GPU's stream and plans cuBLASLt for this problem. The path starts as GemmEx;
    /// `cublas_choice::choose_cublas_path` picks the reference.
    pub fn new(gpu: &Gpu, operands: &'a Operands) -> Result<Cublas<'a>> {
        gpu.ctx.bind_to_thread().during("binding the context")?;
        let blas_handle =
            cudarc::cublas::result::create_handle().during("creating the cuBLAS handle")?;
        let lt_handle =
            cudarc::cublaslt::result::create_handle().during("creating the cuBLASLt handle")?;
        let workspace = DeviceBuffer::new(gpu, WORKSPACE_BYTES)?;
        unsafe {
            blas::cublasSetStream_v2(blas_handle, gpu.cu_stream() as blas::cudaStream_t)
                .result()
                .during("binding cuBLAS to the stream")?;
            blas::cublasSetWorkspace_v2(
                blas_handle,
                workspace.ptr() as *mut c_void,
                WORKSPACE_BYTES,
            )
            .result()
            .during("giving cuBLAS its workspace")?;
        }
        let fp8 = operands.dtype.is_fp8();
        let lt_plan = LtPlan::new(
            lt_handle,
            &operands.shape,
            operands.dtype,
            operands.scales.as_ref(),
        )?;
        // FP8 without any cuBLASLt algorithm still has its reference (cublasGemmEx in fp32): timing cuBLAS is
        // what fails then, saying why (`gemm_into`).
        Ok(Cublas {
            blas: blas_handle,
            lt: lt_handle,
            workspace,
            operands,
            lt_plan,
            // cublasGemmEx takes no FP8: there cuBLAS is cuBLASLt.
            path: if fp8 {
                CublasPath::Lt(0)
            } else {
                CublasPath::GemmEx
            },
        })
    }

    /// Every path worth timing: GemmEx (16-bit operands only) and each cuBLASLt candidate.
    pub fn paths(&self) -> Vec<CublasPath> {
        let gemm_ex = (!self.operands.dtype.is_fp8()).then_some(CublasPath::GemmEx);
        gemm_ex
            .into_iter()
            .chain((0..self.lt_plan.algos.len()).map(CublasPath::Lt))
            .collect()
    }

    pub fn with_path(mut self, path: CublasPath) -> Self {
        self.path = path;
        self
    }

    /// Enqueues one GEMM through `path` on operand set `set`, writing C to `c`.
    pub fn gemm_into(&self, gpu: &Gpu, path: CublasPath, set: usize, c: u64) -> Result<()> {
        let s = &self.operands.sets[set];
        let (alpha, beta) = (1.0f32, 0.0f32);
        match path {
            CublasPath::GemmEx if self.operands.dtype.is_fp8() => Err(Error::Other(
                "cublasGemmEx takes no FP8 operands: FP8's cuBLAS paths are cuBLASLt's".into(),
            )),
            CublasPath::GemmEx => self.gemm_ex(s.a.ptr(), s.b.ptr(), self.operands.dtype, c),
            CublasPath::Lt(i) => unsafe {
                let p = &self.lt_plan;
                let algo = p.algos.get(i).ok_or_else(|| {
                    Error::Other(if p.algos.is_empty() {
                        format!(
                            "cuBLASLt {} offers no algorithm for {} in {} (its heuristic returned none)",
                            self.version(),
                            self.operands.shape.name,
                            self.operands.dtype.name()
                        )
                    } else {
                        format!("no cuBLASLt algorithm {i}")
                    })
                })?;
                lt_ok(
                    lt::cublasLtMatmul(
                        self.lt,
                        p.desc,
                        &alpha as *const f32 as *const c_void,
                        s.b.ptr() as *const c_void,
                        p.a,
                        s.a.ptr() as *const c_void,
                        p.b,
                        &beta as *const f32 as *const c_void,
                        c as *const c_void,
                        p.c,
                        c as *mut c_void,
                        p.c,
                        algo,
                        self.workspace.ptr() as *mut c_void,
                        WORKSPACE_BYTES,
                        gpu.cu_stream() as lt::cudaStream_t,
                    ),
                    "running cublasLtMatmul",
                )
            },
        }
    }

    /// Row-major C = A B^T through cublasGemmEx, A and B 16-bit of `dtype` (fp32 compute).
    fn gemm_ex(&self, a: u64, b: u64, dtype: DType, c: u64) -> Result<()> {
        self.gemm_ex_typed(
            a,
            b,
            data_type_blas(dtype),
            c,
            blas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        )
    }

    /// Row-major C = A B^T through cublasGemmEx, A, B and C of type `ty`, computed as `compute`.
    fn gemm_ex_typed(
        &self,
        a: u64,
        b: u64,
        ty: blas::cudaDataType,
        c: u64,
        compute: blas::cublasComputeType_t,
    ) -> Result<()> {
        let shape = &self.operands.shape;
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        let (alpha, beta) = (1.0f32, 0.0f32);
        unsafe {
            cudarc::cublas::result::gemm_ex(
                self.blas,
                blas::cublasOperation_t::CUBLAS_OP_T,
                blas::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                &alpha as *const f32 as *const c_void,
                b as *const c_void,
                ty,
                k,
                a as *const c_void,
                ty,
                k,
                &beta as *const f32 as *const c_void,
                c as *mut c_void,
                ty,
                n,
                compute,
                blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
            .during("running cublasGemmEx")
        }
    }

    /// The reference a check compares with, into `c` (packed, ldc = N), on set `set`: cublasGemmEx on 16-bit
    /// operands; on FP8, the operands dequantized to fp32 by their scales (each code widened exactly, times its
    /// scale), multiplied by cublasGemmEx in fp32 (pedantic: no TF32), rounded to bf16 once.
    pub fn reference_into(
        &self,
        gpu: &Gpu,
        util: &crate::measure::operands::UtilKernels,
        set: usize,
        c: u64,
    ) -> Result<()> {
        if !self.operands.dtype.is_fp8() {
            return self.gemm_into(gpu, CublasPath::GemmEx, set, c);
        }
        let s = &self.operands.sets[set];
        let scales = self.operands.fp8_scales()?;
        let shape = &self.operands.shape;
        let (a_elems, b_elems, c_elems) = (shape.m * shape.k, shape.n * shape.k, shape.m * shape.n);
        let (a32, b32, c32) = (
            DeviceBuffer::new(gpu, 4 * a_elems)?,
            DeviceBuffer::new(gpu, 4 * b_elems)?,
            DeviceBuffer::new(gpu, 4 * c_elems)?,
        );
        util.dequantize_e4m3(
            gpu,
            s.a.ptr(),
            &scales.a,
            scales.a_scaling,
            shape.m,
            shape.k,
            a32.ptr(),
        )?;
        util.dequantize_e4m3(
            gpu,
            s.b.ptr(),
            &scales.b,
            scales.b_scaling,
            shape.n,
            shape.k,
            b32.ptr(),
        )?;
        self.gemm_ex_typed(
            a32.ptr(),
            b32.ptr(),
            blas::cudaDataType::CUDA_R_32F,
            c32.ptr(),
            blas::cublasComputeType_t::CUBLAS_COMPUTE_32F_PEDANTIC,
        )?;
        util.round_f32(gpu, c32.ptr(), c, c_elems)?;
        // The fp32 copies are freed on return: the kernels that read them are done first.
        gpu.synchronize()
    }

    /// Enqueues one GEMM through `path` on operand set `set`, writing that set's C.
    pub fn launch_on_path(&self, gpu: &Gpu, path: CublasPath, set: usize) -> Result<()> {
        self.gemm_into(gpu, path, set, self.operands.sets[set].c())
    }

    pub fn shape(&self) -> &Shape {
        &self.operands.shape
    }

    pub fn dtype(&self) -> DType {
        self.operands.dtype
    }

    /// Name of the current path, for reports.
    pub fn path_name(&self) -> String {
        match self.path {
            CublasPath::GemmEx => "cublasGemmEx".into(),
            CublasPath::Lt(i) => format!("cublasLt[algo {i}]"),
        }
    }

    /// cuBLAS library version (for the results file).
    pub fn version(&self) -> String {
        cublas_version_of(self.blas)
    }
}

impl Variant for Cublas<'_> {
    fn label(&self) -> String {
        format!("cuBLAS ({})", self.path_name())
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.launch_on_path(gpu, self.path, set)
    }
}

impl Drop for Cublas<'_> {
    fn drop(&mut self) {
        unsafe {
            let _ = cudarc::cublas::result::destroy_handle(self.blas);
            let _ = cudarc::cublaslt::result::destroy_handle(self.lt);
        }
    }
}

/// The version of the cuBLAS library behind `handle`.
pub(crate) fn cublas_version_of(handle: blas::cublasHandle_t) -> String {
    let mut v = 0;
    unsafe { blas::cublasGetVersion_v2(handle, &mut v) };
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}

/// Row-major C[M,N] = A[M,K] B[N,K]^T in float64 on the CPU.
pub fn cpu_gemm(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
        }
    }
    c
}

/// A 16-bit output value of `dtype` (its output type's bits) as f64.
pub fn to_f64(bits: u16, dtype: DType) -> f64 {
    match dtype.output() {
        DType::F16 => half::f16::from_bits(bits).to_f64(),
        _ => half::bf16::from_bits(bits).to_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_gemm_is_a_times_b_transposed() {
        // A = [[1,2],[3,4]] (2x2), B = [[5,6],[7,8],[9,10]] (3x2): C = A B^T is 2x3.
        let c = cpu_gemm(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
            2,
            3,
            2,
        );
        assert_eq!(c, vec![17.0, 23.0, 29.0, 39.0, 53.0, 67.0]);
    }

    #[test]
    fn sixteen_bit_decoding() {
        assert_eq!(to_f64(0x3C00, DType::F16), 1.0);
        assert_eq!(to_f64(0x3F80, DType::BF16), 1.0);
        assert!(to_f64(DType::F16.nan_bits(), DType::F16).is_nan());
        assert!(to_f64(DType::BF16.nan_bits(), DType::BF16).is_nan());
    }
}
