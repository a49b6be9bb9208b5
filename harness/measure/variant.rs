//! Something a trial times, bound to a problem's operand sets: the `Variant` trait (timing and checking see only
//! this) and the ladder's GEMM kernel (cuBLAS implements it in reference.rs; the other families theirs, in
//! harness/families/).

use crate::error::Result;
use crate::gpu::compile::{self, ResourceReport};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::launch::{launch, max_active_clusters, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::config::{GemmConfig, TileOrder};
use crate::kernel::source;
use crate::kernel::tile_order;
use crate::kernel::tma::{self, TmaDesc};
use crate::measure::operands::{GuardedOutput, Operands};

pub trait Variant {
    fn label(&self) -> String;
    /// Enqueues one GEMM on operand set `set` (no synchronization).
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()>;
    /// The SM clock the last launch ran at, in MHz, where the kernel measures it (`clock_probe=1`): cycles over
    /// nanoseconds of one thread from its start to its end, read after the queued work.
    fn probed_clock_mhz(&self, _gpu: &Gpu) -> Result<Option<f64>> {
        Ok(None)
    }
    /// The SM each CTA of the last launch ran on, by CTA index, where the kernel records it (`place_probe=1`).
    fn placement(&self, _gpu: &Gpu) -> Result<Option<Vec<u32>>> {
        Ok(None)
    }
}

/// A variant that computes the GEMM: it can write into a correctness check's guarded output.
pub trait IntoOutput {
    /// Enqueues one GEMM on operand set `set`'s A and B into `out` (its padded rows included in the stride, so a
    /// store past column N lands in the guard columns).
    fn launch_into(&self, gpu: &Gpu, set: usize, out: &GuardedOutput) -> Result<()>;
}

/// A ladder configuration, compiled, loaded and bound to a problem's operand sets.
pub struct GemmKernel<'a> {
    pub label: String,
    pub config: GemmConfig,
    pub report: ResourceReport,
    kernel: Kernel,
    operands: &'a Operands,
    maps: Vec<[TmaDesc; 3]>,
    shape: LaunchShape,
    raster: i32,
    hang: &'a HangWatch,
    /// Stream-K: fp32 partial accumulators and their flags (zeroed once; each launch clears what it sets).
    streamk: Option<(DeviceBuffer, DeviceBuffer)>,
    /// A warning when the grid has more clusters than can be resident at once.
    pub placement: Option<String>,
}

impl<'a> GemmKernel<'a> {
    /// Validates the config against the shape and device, compiles it, and encodes the tensor maps of every set.
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &GemmConfig,
        operands: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape_for(shape, operands.dtype)?;
        let raster = config.raster_group(shape)? as i32;
        let dtype = operands.dtype;
        let compiled = compile::compile(label, &source::gemm_program(config, dtype))?;
        let kernel = Kernel::load(gpu, &compiled, "gemm_kernel")?;
        let operand_bytes = dtype.operand_bytes() as u32;
        let smem = config.smem_bytes_of(operand_bytes);
        kernel.set_dynamic_smem(gpu, smem)?;
        write_scales(gpu, &kernel, config, operands)?;
        if config.tile_order == TileOrder::Hilbert {
            let order = tile_order::hilbert(config.tile_rows(shape), config.tile_cols(shape))?;
            kernel.write_global(gpu, "tile_order_table", &order)?;
        }
        // The kernel's A and B: the problem's, or with swap-AB its B (the weights) and A (the tokens).
        let kernel_shape = config.kernel_shape(shape);
        let a_params = tma::operand_of(
            kernel_shape.m,
            shape.k,
            config.a_box_rows(),
            config.tile_k,
            config.swizzle,
            operand_bytes,
        )?;
        let b_params = tma::operand_of(
            kernel_shape.n,
            shape.k,
            config.b_box_rows(),
            config.tile_k,
            config.swizzle,
            operand_bytes,
        )?;
        let c_params = tma::output(shape.m, shape.n, shape.n)?;
        let maps = operands
            .sets
            .iter()
            .map(|s| -> Result<[TmaDesc; 3]> {
                let (a, b) = if config.swap_ab {
                    (s.b.ptr(), s.a.ptr())
                } else {
                    (s.a.ptr(), s.b.ptr())
                };
                Ok([
                    tma::encode(&a_params, a, dtype)?,
                    tma::encode(&b_params, b, dtype)?,
                    tma::encode(&c_params, s.c(), dtype.output())?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let mut launch_shape = LaunchShape {
            grid: config.grid(shape, gpu.info.sm_count),
            block: config.threads(),
            smem,
            cluster: config.cluster,
            pdl: config.pdl,
        };
        // Clusters resident at once, asked once: stream-K needs it (an error stops the build), the placement warning
        // below only reads it.
        let resident = if config.streamk > 0 {
            Some(max_active_clusters(gpu, &kernel, launch_shape)?)
        } else if config.cluster > 1 && config.persistent {
            max_active_clusters(gpu, &kernel, launch_shape).ok()
        } else {
            None
        };
        let streamk = match resident.filter(|_| config.streamk > 0) {
            Some(clusters) => {
                // A tile's owner waits for partials from other clusters: every cluster must be resident at once.
                launch_shape.grid = launch_shape.grid.min(clusters * config.cluster);
                let (workspace, flags) = config.stream_k_workspace(launch_shape.grid);
                let flags = DeviceBuffer::new(gpu, flags)?;
                flags.zero(gpu)?;
                Some((DeviceBuffer::new(gpu, workspace)?, flags))
            }
            None => None,
        };
        // A persistent grid meant as one wave whose clusters do not all fit at once (each needs its CTAs' SMs in
        // one GPC): the rest wait for a whole cluster to finish, a second wave a user should see (H68: 32
        // four-CTA clusters on 132 SMs ran 2x slower). Non-persistent grids run in waves by design.
        let placement = resident
            .filter(|_| config.cluster > 1 && config.persistent)
            .and_then(|clusters| {
                placement_warning(label, launch_shape.grid, config.cluster, clusters)
            });
        Ok(GemmKernel {
            label: label.to_string(),
            placement,
            config: config.clone(),
            report: compiled.report.clone(),
            kernel,
            operands,
            maps,
            shape: launch_shape,
            raster,
            hang,
            streamk,
        })
    }
}

/// FP8: where the kernel finds the problem's scales (its globals, written once before the first launch): the
/// per-tensor product, or the addresses of the operands' scale buffers. Under swap-AB the kernel's A is the
/// problem's B, so its row scales are B's.
fn write_scales(
    gpu: &Gpu,
    kernel: &Kernel,
    config: &GemmConfig,
    operands: &Operands,
) -> Result<()> {
    use crate::kernel::problem::Scales;
    let Some(scheme) = operands.dtype.scales() else {
        return Ok(());
    };
    let scales = operands.fp8_scales()?;
    let address = |buffer: &DeviceBuffer| {
        let p = buffer.ptr();
        [p as u32, (p >> 32) as u32]
    };
    match scheme {
        Scales::Tensor => kernel.write_global(gpu, "ab_scale", &[operands.scale().to_bits()]),
        Scales::Row => {
            let (rows, cols) = if config.swap_ab {
                (&scales.b, &scales.a)
            } else {
                (&scales.a, &scales.b)
            };
            kernel.write_global(gpu, "row_scales", &address(rows))?;
            kernel.write_global(gpu, "col_scales", &address(cols))
        }
        // validate_fp8 refuses swap-AB with block scales.
        Scales::Block => {
            kernel.write_global(gpu, "a_block_scales", &address(&scales.a))?;
            kernel.write_global(gpu, "b_block_scales", &address(&scales.b))
        }
    }
}

/// The warning for a grid of `grid` CTAs in clusters of `cluster` when only `resident` clusters fit at once, or
/// None when they all fit.
fn placement_warning(label: &str, grid: u32, cluster: u32, resident: u32) -> Option<String> {
    let clusters = grid / cluster;
    (clusters > resident).then(|| {
        format!(
            "{label}: {clusters} clusters of {cluster} CTAs launched, {resident} resident at once: they run in {} waves",
            clusters.div_ceil(resident.max(1))
        )
    })
}

impl GemmKernel<'_> {
    /// Enqueues one GEMM on operand set `set`'s A and B, writing C to `c` with rows `ldc` elements apart through
    /// the C tensor map `map` (the direct epilogue uses `c` and `ldc`, the TMA epilogue the map).
    fn enqueue(&self, gpu: &Gpu, set: usize, map: TmaDesc, c: u64, ldc: usize) -> Result<()> {
        // The kernel's M and N (exchanged under swap-AB); C and its row stride stay the problem's.
        let shape = &self.config.kernel_shape(&self.operands.shape);
        let [mut ta, mut tb, _] = self.maps[set];
        let (mut tc, mut c, mut ldc) = (map, c, ldc as i32);
        let (mut m, mut n, mut k, mut raster) =
            (shape.m as i32, shape.n as i32, shape.k as i32, self.raster);
        let mut rec = self.hang.device_ptr();
        let (mut workspace, mut flags) = match &self.streamk {
            Some((w, f)) => (w.ptr(), f.ptr()),
            None => (0, 0),
        };
        let mut params = crate::kernel_params![
            &mut ta,
            &mut tb,
            &mut tc,
            &mut c,
            &mut ldc,
            &mut m,
            &mut n,
            &mut k,
            &mut raster,
            &mut rec,
            &mut workspace,
            &mut flags
        ];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}

impl IntoOutput for GemmKernel<'_> {
    fn launch_into(&self, gpu: &Gpu, set: usize, out: &GuardedOutput) -> Result<()> {
        // The C map is encoded with the guarded output's stride.
        let shape = &self.operands.shape;
        let params = tma::output(shape.m, shape.n, out.ldc)?;
        let map = tma::encode(&params, out.c(), self.operands.dtype.output())?;
        self.enqueue(gpu, set, map, out.c(), out.ldc)
    }
}

impl Variant for GemmKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        let n = self.operands.shape.n;
        self.enqueue(gpu, set, self.maps[set][2], self.operands.sets[set].c(), n)
    }
    fn probed_clock_mhz(&self, gpu: &Gpu) -> Result<Option<f64>> {
        if !self.config.clock_probe {
            return Ok(None);
        }
        let probe = self.kernel.read_global_u64(gpu, "clock_probe", 2)?;
        Ok((probe[1] > 0).then(|| probe[0] as f64 * 1e3 / probe[1] as f64))
    }
    fn placement(&self, gpu: &Gpu) -> Result<Option<Vec<u32>>> {
        if !self.config.place_probe {
            return Ok(None);
        }
        // PLACE_PROBE_CTAS in kernels/gemm.cu.
        let ctas = (self.shape.grid as usize).min(1024);
        let sms = self.kernel.read_global_u64(gpu, "place_probe", ctas)?;
        Ok(Some(sms.into_iter().map(|s| s as u32).collect()))
    }
}

#[cfg(test)]
mod placement_tests {
    use super::placement_warning;

    #[test]
    fn a_grid_that_fits_has_no_warning() {
        assert_eq!(placement_warning("k", 132, 2, 66), None);
        assert_eq!(placement_warning("k", 120, 4, 30), None);
    }

    #[test]
    fn clusters_past_the_resident_ones_are_a_second_wave() {
        // H68 on the H200: 32 four-CTA clusters, 30 resident.
        let w = placement_warning("k", 128, 4, 30).unwrap();
        assert_eq!(
            w,
            "k: 32 clusters of 4 CTAs launched, 30 resident at once: they run in 2 waves"
        );
        // No resident cluster at all still names a count of waves, not a division by zero.
        assert!(placement_warning("k", 8, 4, 0).unwrap().contains("2 waves"));
    }
}
