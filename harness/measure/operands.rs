//! Device operands for one problem: rotation sets of A, B and C, the guarded output a correctness check writes
//! (NaN poison inside guard bands and guard columns), random fill, and the small utility kernels that fill and
//! compare them on the GPU.

use crate::error::Result;
use crate::gpu::compile;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch, Kernel, LaunchShape};
use crate::gpu::memory::{ChunkPool, DeviceBuffer};
use crate::kernel::problem::{DType, Scales, Shape};
use crate::kernel::source;
use crate::kernel::tma::rows_to_allocate;
use crate::measure::fp8::{block_row_stride, Scaling};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where random inputs come from: GEMM_ABLATE_SEED (to replay a run) or the clock and process id. Each draw is
/// recorded beside what it filled (a round's operands, a check's inputs), so any failure can be replayed.
pub struct Seeds {
    base: u64,
    /// Set from GEMM_ABLATE_SEED: every draw is the base seed.
    fixed: bool,
    drawn: AtomicU64,
}

impl Seeds {
    pub fn new(fixed: Option<u64>) -> Seeds {
        let base = fixed.unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            nanos ^ (u64::from(std::process::id()) << 32)
        });
        Seeds {
            base,
            fixed: fixed.is_some(),
            drawn: AtomicU64::new(0),
        }
    }
    /// The next seed. With GEMM_ABLATE_SEED set, every draw is that seed: a check replays exactly.
    pub fn next(&self) -> u64 {
        let i = self.drawn.fetch_add(1, Ordering::Relaxed);
        if self.fixed {
            self.base
        } else {
            mix(self.base, i)
        }
    }
}

/// A well-mixed seed for stream `i` of `seed` (splitmix64 finalizer).
pub use crate::gpu::memory::splitmix as mix;

/// Pattern written around a checked output; any other value found there after a launch is an out-of-bounds store.
pub const GUARD_PATTERN: u16 = 0x5A5A;

/// Guard columns after each row of a checked output: as wide as the widest tile, so a tile stored without its
/// column bound lands wholly in them.
pub const GUARD_COLUMNS: usize = 256;

/// Slots of the comparison statistics (kernels/util.cu, `compare`).
pub const STATS: usize = 9;

/// Utility kernels compiled for one data type.
pub struct UtilKernels {
    /// Random operands: 16-bit values, or FP8 codes.
    fill: Kernel,
    /// FP8 only: codes dequantized to fp32 by their scales, and fp32 rounded to the output type (the reference's
    /// operands and result).
    fp8: Option<(Kernel, Kernel)>,
    compare: Kernel,
    check_guard: Kernel,
    sum: Kernel,
    /// The comparison's allowance at each output: one ulp of the output type (`Tolerance::rel_value`).
    rel_value: f32,
    sm_count: u32,
    compiled: std::sync::Arc<compile::Compiled>,
}

impl UtilKernels {
    pub fn new(gpu: &Gpu, dtype: DType) -> Result<UtilKernels> {
        let program = source::program(&source::util_defines(dtype), source::UTIL);
        let compiled = compile::compile(&format!("util_{}", dtype.name()), &program)?;
        let fp8 = dtype.is_fp8();
        Ok(UtilKernels {
            fill: Kernel::load(
                gpu,
                &compiled,
                if fp8 {
                    "fill_uniform_e4m3"
                } else {
                    "fill_uniform"
                },
            )?,
            fp8: fp8
                .then(|| -> Result<(Kernel, Kernel)> {
                    Ok((
                        Kernel::load(gpu, &compiled, "dequantize_e4m3")?,
                        Kernel::load(gpu, &compiled, "round_f32")?,
                    ))
                })
                .transpose()?,
            compare: Kernel::load(gpu, &compiled, "compare")?,
            check_guard: Kernel::load(gpu, &compiled, "check_guard")?,
            sum: Kernel::load(gpu, &compiled, "sum_u16")?,
            rel_value: dtype.tolerance().rel_value as f32,
            sm_count: gpu.info.sm_count,
            compiled,
        })
    }

    /// Another copy of the utility program's module, loaded only to take up code space (GEMM_ABLATE_RANDOMIZE=code).
    pub fn padding_module(&self, gpu: &Gpu) -> Result<Kernel> {
        Kernel::load(gpu, &self.compiled, "fill_uniform")
    }

    fn grid_for(&self, n: usize) -> LaunchShape {
        let blocks = n.div_ceil(256).min(self.sm_count as usize * 8).max(1) as u32;
        LaunchShape {
            grid: blocks,
            block: 256,
            smem: 0,
            cluster: 1,
            pdl: false,
        }
    }

    fn fp8_kernels(&self) -> Result<&(Kernel, Kernel)> {
        self.fp8.as_ref().ok_or_else(|| {
            crate::error::Error::Other(
                "internal: FP8 reference kernels asked of a 16-bit utility program".into(),
            )
        })
    }

    /// A `rows` x `k` operand of FP8 codes at `codes` dequantized by `scales` (laid out as `scaling` says) into
    /// fp32 at `out`.
    #[allow(clippy::too_many_arguments)]
    pub fn dequantize_e4m3(
        &self,
        gpu: &Gpu,
        codes: u64,
        scales: &DeviceBuffer,
        scaling: Scaling,
        rows: usize,
        k: usize,
        out: u64,
    ) -> Result<()> {
        let (dequantize, _) = self.fp8_kernels()?;
        let (mut i, mut s, mut layout) = (codes, scales.ptr(), scaling.layout_code());
        let (mut r, mut kk, mut o) = (rows as u64, k as u64, out);
        let mut params =
            crate::kernel_params![&mut i, &mut s, &mut layout, &mut r, &mut kk, &mut o];
        unsafe { launch(gpu, dequantize, self.grid_for(rows * k), &mut params) }
    }

    /// `elems` fp32 values at `values` rounded to the output type at `out` (FP8 utility programs only).
    pub fn round_f32(&self, gpu: &Gpu, values: u64, out: u64, elems: usize) -> Result<()> {
        let (_, round) = self.fp8_kernels()?;
        let (mut i, mut o, mut n) = (values, out, elems as u64);
        let mut params = crate::kernel_params![&mut i, &mut o, &mut n];
        unsafe { launch(gpu, round, self.grid_for(elems), &mut params) }
    }

    /// A launch of 9 blocks of 32 threads that do nothing (the fill kernel over no elements), waited for: on an
    /// H100 it put the block scheduler's rotation in one state from every state seen (H145;
    /// GEMM_ABLATE_RANDOMIZE=scheduler, H146).
    pub fn reset_scheduler(&self, gpu: &Gpu) -> Result<()> {
        let (mut out, mut n, mut seed) = (0u64, 0u64, 0u64);
        let mut params = crate::kernel_params![&mut out, &mut n, &mut seed];
        let shape = LaunchShape {
            grid: 9,
            block: 32,
            smem: 0,
            cluster: 1,
            pdl: false,
        };
        unsafe { launch(gpu, &self.fill, shape, &mut params) }?;
        gpu.synchronize()
    }

    /// Uniform values in [-1, 1) from a counter-based generator seeded with `seed` (FP8: rounded to e4m3 codes).
    pub fn fill_random(&self, gpu: &Gpu, ptr: u64, elems: usize, seed: u64) -> Result<()> {
        let mut seed = seed;
        let (mut out, mut n) = (ptr, elems as u64);
        let mut params = crate::kernel_params![&mut out, &mut n, &mut seed];
        unsafe { launch(gpu, &self.fill, self.grid_for(elems), &mut params) }
    }

    /// Raw comparison statistics of `out` (rows `ld_out` apart) against `reference` (`elems` values in packed
    /// rows of `cols`); see kernels/util.cu for the slots.
    pub fn compare(
        &self,
        gpu: &Gpu,
        out: u64,
        ld_out: usize,
        reference: u64,
        cols: usize,
        elems: usize,
    ) -> Result<[u64; STATS]> {
        let stats = DeviceBuffer::new(gpu, STATS * 8)?;
        stats.zero(gpu)?;
        // Slot 5 holds the first unwritten index: it starts at "none".
        stats.fill_u16_range(gpu, 20, 4, 0xFFFF)?;
        let (mut o, mut ld, mut r, mut c, mut n, mut s) = (
            out,
            ld_out as u64,
            reference,
            cols as u64,
            elems as u64,
            stats.ptr(),
        );
        let mut rtol = self.rel_value;
        let mut params =
            crate::kernel_params![&mut o, &mut ld, &mut r, &mut c, &mut n, &mut s, &mut rtol];
        unsafe { launch(gpu, &self.compare, self.grid_for(elems), &mut params)? };
        let v: Vec<u64> = stats.read(gpu)?;
        let mut raw = [0u64; STATS];
        raw.copy_from_slice(&v[..STATS]);
        Ok(raw)
    }

    /// Sum of the raw 16-bit words in [ptr, ptr + 2 * elems).
    pub fn sum_u16(&self, gpu: &Gpu, ptr: u64, elems: usize) -> Result<u64> {
        let out = DeviceBuffer::new(gpu, 8)?;
        out.zero(gpu)?;
        let (mut p, mut n, mut o) = (ptr, elems as u64, out.ptr());
        let mut params = crate::kernel_params![&mut p, &mut n, &mut o];
        unsafe { launch(gpu, &self.sum, self.grid_for(elems), &mut params)? };
        Ok(out.read::<u64>(gpu)?[0])
    }

    /// Number of 16-bit words of `out`'s allocation outside C that no longer hold GUARD_PATTERN.
    fn guard_damage(&self, gpu: &Gpu, out: &GuardedOutput) -> Result<u64> {
        let count = DeviceBuffer::new(gpu, 8)?;
        count.zero(gpu)?;
        let words = out.alloc.bytes() / 2;
        let (mut p, mut n, mut pat) = (out.alloc.ptr(), words as u64, GUARD_PATTERN);
        let (mut first, mut rows, mut ld, mut cols, mut c) = (
            out.guard_before as u64,
            out.rows as u64,
            out.ldc as u64,
            out.cols as u64,
            count.ptr(),
        );
        let mut params = crate::kernel_params![
            &mut p, &mut n, &mut pat, &mut first, &mut rows, &mut ld, &mut cols, &mut c
        ];
        unsafe { launch(gpu, &self.check_guard, self.grid_for(words), &mut params)? };
        Ok(count.read::<u64>(gpu)?[0])
    }
}

/// One set of operands: A and B (each allocated in whole 8-row groups, the padding zeroed: tma::rows_to_allocate)
/// and C, row-major with ldc = N, as cuBLAS and the timed kernels write it.
pub struct OperandSet {
    pub a: DeviceBuffer,
    pub b: DeviceBuffer,
    pub c: DeviceBuffer,
}

impl OperandSet {
    pub fn c(&self) -> u64 {
        self.c.ptr()
    }
}

/// The output a correctness check launches a kernel into, in one allocation: a guard band, then M rows of
/// `ldc` = N + GUARD_COLUMNS words (C in the first N, guard columns after), then a guard band of at least one
/// 256-row tile. NaN fills C and the guard pattern everything else before the launch.
///
/// Why rows padded past N: with ldc = N, a store past the last column of a row lands in the first columns of the
/// next row, inside C, where the right tile overwrites it (or a NaN check cannot tell it from a right value); in
/// the guard columns it is a changed guard word. The timed launches keep ldc = N (operand sets above), so the
/// layout they are measured on is the one every earlier run measured; only the check pays for the padding.
pub struct GuardedOutput {
    alloc: DeviceBuffer,
    guard_before: usize,
    pub rows: usize,
    pub cols: usize,
    /// Words between the starts of two rows.
    pub ldc: usize,
}

impl GuardedOutput {
    pub fn new(gpu: &Gpu, rows: usize, cols: usize) -> Result<GuardedOutput> {
        let ldc = cols + GUARD_COLUMNS;
        let guard_before = 1 << 19;
        // At least 256 rows, the tallest tile: a tile stored one matrix too far down lands wholly in it.
        let guard_after = (256 * ldc).max(1 << 19);
        Ok(GuardedOutput {
            alloc: DeviceBuffer::new(gpu, (guard_before + rows * ldc + guard_after) * 2)?,
            guard_before,
            rows,
            cols,
            ldc,
        })
    }
    /// Address of C's first element.
    pub fn c(&self) -> u64 {
        self.alloc.ptr() + 2 * self.guard_before as u64
    }
    /// Writes the guard pattern over the whole allocation, then NaN over C (before a correctness launch).
    pub fn poison(&self, gpu: &Gpu, dtype: DType) -> Result<()> {
        self.alloc.fill_u16(gpu, GUARD_PATTERN)?;
        self.alloc.fill_u16_rows(
            gpu,
            self.guard_before,
            self.ldc,
            self.cols,
            self.rows,
            dtype.nan_bits(),
        )
    }
    /// 16-bit words outside C (the bands and every row's guard columns) that something wrote over.
    pub fn guard_damage(&self, gpu: &Gpu, util: &UtilKernels) -> Result<u64> {
        util.guard_damage(gpu, self)
    }
}

/// Rotation sets for a problem: enough copies that the operands of one launch are out of L2 by the time
/// they are used again.
pub struct Operands {
    pub shape: Shape,
    pub dtype: DType,
    pub sets: Vec<OperandSet>,
    /// The seed A and B were drawn from (set i's A from mix(seed, 2i), its B from mix(seed, 2i + 1)).
    pub seed: u64,
    /// FP8: the scales of A and of B, shared by every set (fp32, in the layouts of `fp8::Scaling::scale_index`).
    pub scales: Option<ScaleBuffers>,
}

/// FP8's per-tensor scales of A and B (`FP8_SCALES.0 * FP8_SCALES.1` is exact in fp32): C = scale_a scale_b A B^T
/// over the codes. Not 1, so that a kernel which drops a scale is caught.
pub const FP8_SCALES: (f32, f32) = (0.5, 0.75);

/// Zero scales past the last one of each buffer: the kernel reads the scales of whole tiles (up to 1024 rows or
/// columns past the last, a 4-CTA cluster of 256-row tiles) without a bound check, and block scales one k-block
/// row further (8 more rows of 128-column blocks).
const SCALE_PADDING: usize = 1024;

/// An FP8 problem's scales on the device: of A (M rows) and of B (N rows), each with its scheme, padded with zeros
/// (`SCALE_PADDING`).
pub struct ScaleBuffers {
    pub a: DeviceBuffer,
    pub b: DeviceBuffer,
    pub a_scaling: Scaling,
    pub b_scaling: Scaling,
}

/// Scales of a `rows` x `k` operand under `scaling`: the per-tensor constant, else values drawn from `seed` in
/// [0.25, 2), so that a kernel that takes a neighbour's scale, or none, fails its check.
pub fn draw_scales(
    scaling: Scaling,
    rows: usize,
    k: usize,
    per_tensor: f32,
    seed: u64,
) -> Vec<f32> {
    // 128x128 scales: the padding of each row of k-blocks (never read) is zero.
    let padding =
        |i: usize| scaling == Scaling::Blocks128x128 && i % block_row_stride(k) >= k.div_ceil(128);
    match scaling {
        Scaling::PerTensor => vec![per_tensor],
        _ => (0..scaling.scale_count(rows, k))
            .map(|i| match padding(i) {
                true => 0.0,
                false => 0.25 + 1.75 * ((mix(seed, i as u64) >> 40) as f32 / 16_777_216.0),
            })
            .collect(),
    }
}

impl ScaleBuffers {
    /// The scales of an FP8 problem of `scales` on `shape`, drawn from `seed`.
    fn new(gpu: &Gpu, shape: &Shape, scales: Scales, seed: u64) -> Result<ScaleBuffers> {
        let (a_scaling, b_scaling) = Scaling::of(scales);
        let upload = |mut values: Vec<f32>| -> Result<DeviceBuffer> {
            values.resize(
                values.len() + SCALE_PADDING + 8 * shape.k.div_ceil(128),
                0.0,
            );
            let buffer = DeviceBuffer::new(gpu, values.len() * 4)?;
            buffer.write(gpu, &values)?;
            Ok(buffer)
        };
        Ok(ScaleBuffers {
            a: upload(draw_scales(
                a_scaling,
                shape.m,
                shape.k,
                FP8_SCALES.0,
                mix(seed, 0xA),
            ))?,
            b: upload(draw_scales(
                b_scaling,
                shape.n,
                shape.k,
                FP8_SCALES.1,
                mix(seed, 0xB),
            ))?,
            a_scaling,
            b_scaling,
        })
    }
}

impl Operands {
    /// The factor C carries beyond the product of A's and B's values under per-tensor scales: FP8's two scales,
    /// else 1.
    pub fn scale(&self) -> f32 {
        match self.dtype.scales() {
            Some(Scales::Tensor) => FP8_SCALES.0 * FP8_SCALES.1,
            _ => 1.0,
        }
    }

    /// FP8's scale buffers; an error for 16-bit operands.
    pub fn fp8_scales(&self) -> Result<&ScaleBuffers> {
        self.scales.as_ref().ok_or_else(|| {
            crate::error::Error::Other(format!(
                "internal: {} operands have no FP8 scales",
                self.dtype.name()
            ))
        })
    }
}

/// How many operand sets to rotate through so that the rotated footprint is at least 3x the L2 (A and B at the
/// operands' bytes, C at 2).
pub fn rotation_sets(shape: &Shape, l2_bytes: u64, dtype: DType) -> usize {
    let footprint = ((shape.m * shape.k + shape.n * shape.k) * dtype.operand_bytes()
        + shape.m * shape.n * 2)
        .max(1) as f64;
    ((3.0 * l2_bytes as f64 / footprint).ceil() as usize).clamp(1, 8)
}

impl Operands {
    /// Allocates the sets and fills A and B with fresh random values (the rows padding A and B to whole 8-row
    /// groups with zeros).
    pub fn new(
        gpu: &Gpu,
        util: &UtilKernels,
        shape: &Shape,
        dtype: DType,
        sets: usize,
        seed: u64,
    ) -> Result<Operands> {
        Operands::new_on(gpu, util, shape, dtype, sets, seed, None).map(|(ops, _)| ops)
    }

    /// `new`, with every buffer mapped onto chunks drawn at random from `pool` where one is given; returns the
    /// chunk numbers mapped, in order, beside the operands (empty without a pool).
    pub fn new_on(
        gpu: &Gpu,
        util: &UtilKernels,
        shape: &Shape,
        dtype: DType,
        sets: usize,
        seed: u64,
        pool: Option<&ChunkPool>,
    ) -> Result<(Operands, Vec<u32>)> {
        let (a_elems, b_elems) = (shape.m * shape.k, shape.n * shape.k);
        let (a_alloc, b_alloc) = (
            rows_to_allocate(shape.m) * shape.k,
            rows_to_allocate(shape.n) * shape.k,
        );
        let bytes = dtype.operand_bytes();
        let sizes = [a_alloc * bytes, b_alloc * bytes, shape.m * shape.n * 2];
        let mut buffers = Vec::new();
        let mut chunks = Vec::new();
        for i in 0..sets.max(1) as u64 {
            match pool {
                Some(pool) => {
                    let (b, c) = pool.buffers(gpu, &sizes, mix(seed, 1000 + i))?;
                    buffers.push(b);
                    chunks.extend(c);
                }
                None => buffers.push(
                    sizes
                        .iter()
                        .map(|&bytes| DeviceBuffer::new(gpu, bytes))
                        .collect::<Result<Vec<_>>>()?,
                ),
            }
        }
        let mut out = Vec::new();
        for (i, set) in buffers.into_iter().enumerate() {
            let i = i as u64;
            let [a, b, c]: [DeviceBuffer; 3] = set.try_into().map_err(|_| {
                crate::error::Error::Other("internal: an operand set of three".into())
            })?;
            let set = OperandSet { a, b, c };
            util.fill_random(gpu, set.a.ptr(), a_elems, mix(seed, 2 * i))?;
            util.fill_random(gpu, set.b.ptr(), b_elems, mix(seed, 2 * i + 1))?;
            // The padding rows, in 16-bit words (K is a multiple of 8, so whole words at one byte an element too).
            let words = |elems: usize| elems * bytes / 2;
            set.a
                .fill_u16_range(gpu, words(a_elems), words(a_alloc - a_elems), 0)?;
            set.b
                .fill_u16_range(gpu, words(b_elems), words(b_alloc - b_elems), 0)?;
            out.push(set);
        }
        let scales = dtype
            .scales()
            .map(|scales| ScaleBuffers::new(gpu, shape, scales, mix(seed, 0x5CA1E)))
            .transpose()?;
        gpu.synchronize()?;
        Ok((
            Operands {
                shape: shape.clone(),
                dtype,
                sets: out,
                seed,
                scales,
            },
            chunks,
        ))
    }

    /// Draws fresh random A and B for set `i` from `seed` (before each correctness check).
    pub fn refill(&self, gpu: &Gpu, util: &UtilKernels, i: usize, seed: u64) -> Result<()> {
        let s = &self.sets[i];
        util.fill_random(gpu, s.a.ptr(), self.shape.m * self.shape.k, mix(seed, 0))?;
        util.fill_random(gpu, s.b.ptr(), self.shape.n * self.shape.k, mix(seed, 1))
    }

    /// Device addresses of A and B of every set: where this allocation landed.
    pub fn addresses(&self) -> Vec<u64> {
        self.sets
            .iter()
            .flat_map(|s| [s.a.ptr(), s.b.ptr()])
            .collect()
    }
}
