//! Something a trial times, bound to a problem's operand sets: the `Variant` trait (timing and checking see only
//! this), the ladder's GEMM kernel, the load-path isolation kernel and the read-floor kernel (cuBLAS implements it
//! in reference.rs).

use crate::error::Result;
use crate::gpu::compile::{self, ResourceReport};
use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::gpu::launch::{launch, max_active_clusters, Kernel, LaunchShape};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::config::{GemmConfig, TileOrder};
use crate::kernel::loadpath::{LoadPathConfig, ROWS};
use crate::kernel::skinny::SkinnyConfig;
use crate::kernel::source;
use crate::kernel::stream::StreamConfig;
use crate::kernel::tile_order;
use crate::kernel::tma::{self, TmaDesc};
use crate::measure::operands::{GuardedOutput, Operands, UtilKernels};

pub trait Variant {
    fn label(&self) -> String;
    /// Enqueues one GEMM on operand set `set` (no synchronization).
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()>;
    /// The SM clock the last launch ran at, in MHz, where the kernel measures it (`clock_probe=1`): cycles over
    /// nanoseconds of one thread from its start to its end, read after the queued work.
    fn probed_clock_mhz(&self, _gpu: &Gpu) -> Result<Option<f64>> {
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
        config.validate_shape(shape)?;
        let raster = config.raster_group(shape)? as i32;
        let compiled = compile::compile(label, &source::gemm_program(config, operands.dtype))?;
        let kernel = Kernel::load(gpu, &compiled, "gemm_kernel")?;
        kernel.set_dynamic_smem(gpu, config.smem_bytes())?;
        if config.tile_order == TileOrder::Hilbert {
            let order = tile_order::hilbert(config.tile_rows(shape), config.tile_cols(shape))?;
            kernel.write_global(gpu, "tile_order_table", &order)?;
        }
        // The kernel's A and B: the problem's, or with swap-AB its B (the weights) and A (the tokens).
        let kernel_shape = config.kernel_shape(shape);
        let a_params = tma::operand(
            kernel_shape.m,
            shape.k,
            config.a_box_rows(),
            config.tile_k,
            config.swizzle,
        )?;
        let b_params = tma::operand(
            kernel_shape.n,
            shape.k,
            config.b_box_rows(),
            config.tile_k,
            config.swizzle,
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
                    tma::encode(&a_params, a, operands.dtype)?,
                    tma::encode(&b_params, b, operands.dtype)?,
                    tma::encode(&c_params, s.c(), operands.dtype)?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let mut launch_shape = LaunchShape {
            grid: config.grid(shape, gpu.info.sm_count),
            block: config.threads(),
            smem: config.smem_bytes(),
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
        let map = tma::encode(&params, out.c(), self.operands.dtype)?;
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
}

/// A load-path variant bound to a problem's operands; `check` verifies the staged bytes by checksum.
pub struct LoadPathKernel<'a> {
    pub label: String,
    pub config: LoadPathConfig,
    timed: Kernel,
    checked: Kernel,
    operands: &'a Operands,
    maps: Vec<[TmaDesc; 2]>,
    shape: LaunchShape,
    checksum: DeviceBuffer,
    hang: &'a HangWatch,
}

impl<'a> LoadPathKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &LoadPathConfig,
        operands: &'a Operands,
        hang: &'a HangWatch,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape(shape)?;
        let load = |checksum: bool| -> Result<Kernel> {
            let c = compile::compile(label, &config.program(checksum))?;
            let k = Kernel::load(gpu, &c, "load_path_kernel")?;
            k.set_dynamic_smem(gpu, config.smem_bytes())?;
            Ok(k)
        };
        let (pa, pb) = (
            config.tma_params(shape.m, shape.k)?,
            config.tma_params(shape.n, shape.k)?,
        );
        let maps = operands
            .sets
            .iter()
            .map(|s| {
                Ok([
                    tma::encode(&pa, s.a.ptr(), operands.dtype)?,
                    tma::encode(&pb, s.b.ptr(), operands.dtype)?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let grid = ((shape.m / ROWS as usize) * (shape.n / ROWS as usize)) as u32;
        Ok(LoadPathKernel {
            label: label.to_string(),
            config: config.clone(),
            timed: load(false)?,
            checked: load(true)?,
            operands,
            maps,
            shape: LaunchShape {
                grid,
                block: 64,
                smem: config.smem_bytes(),
                cluster: 1,
                pdl: false,
            },
            checksum: DeviceBuffer::new(gpu, 8)?,
            hang,
        })
    }

    fn run(&self, gpu: &Gpu, kernel: &Kernel, set: usize) -> Result<()> {
        let s = &self.operands.shape;
        let [mut ta, mut tb] = self.maps[set];
        let (mut m, mut n, mut k) = (s.m as i32, s.n as i32, s.k as i32);
        let (mut sum, mut rec) = (self.checksum.ptr(), self.hang.device_ptr());
        let mut params =
            crate::kernel_params![&mut ta, &mut tb, &mut m, &mut n, &mut k, &mut sum, &mut rec];
        unsafe { launch(gpu, kernel, self.shape, &mut params) }
    }

    /// Runs the checksum build once on set 0 and compares with what the tiles it loads must sum to.
    pub fn check(&self, gpu: &Gpu, util: &UtilKernels) -> Result<(u64, u64)> {
        let s = &self.operands.shape;
        let set = &self.operands.sets[0];
        self.checksum.zero(gpu)?;
        self.hang.reset();
        self.run(gpu, &self.checked, 0)
            .map_err(|e| self.hang.explain(e))?;
        gpu.synchronize().map_err(|e| self.hang.explain(e))?;
        let got = self.checksum.read::<u64>(gpu)?[0];
        let (tiles_m, tiles_n) = ((s.m / ROWS as usize) as u64, (s.n / ROWS as usize) as u64);
        let want = if self.config.same_tile {
            let rows = ROWS as usize * s.k;
            tiles_m
                * tiles_n
                * (util.sum_u16(gpu, set.a.ptr(), rows)? + util.sum_u16(gpu, set.b.ptr(), rows)?)
        } else {
            tiles_n * util.sum_u16(gpu, set.a.ptr(), s.m * s.k)?
                + tiles_m * util.sum_u16(gpu, set.b.ptr(), s.n * s.k)?
        };
        Ok((got, want))
    }
}

impl Variant for LoadPathKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.run(gpu, &self.timed, set)
    }
}

/// The read-floor kernel bound to a problem's operands; `check` compares the sum of what it read with the operands'.
pub struct StreamKernel<'a> {
    pub label: String,
    pub config: StreamConfig,
    kernel: Kernel,
    operands: &'a Operands,
    shape: LaunchShape,
    checksum: DeviceBuffer,
}

impl<'a> StreamKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &StreamConfig,
        operands: &'a Operands,
    ) -> Result<Self> {
        config.validate_shape(&operands.shape)?;
        let compiled = compile::compile(label, &config.program())?;
        Ok(StreamKernel {
            label: label.to_string(),
            config: config.clone(),
            kernel: Kernel::load(gpu, &compiled, "stream_read_kernel")?,
            operands,
            shape: LaunchShape {
                grid: config.grid(&operands.shape, gpu.info.sm_count),
                block: config.threads,
                smem: 0,
                cluster: 1,
                pdl: config.pdl,
            },
            checksum: DeviceBuffer::new(gpu, 8)?,
        })
    }

    /// Runs once on set 0 from a zeroed sum; returns (what the kernel summed, what A and B sum to).
    pub fn check(&self, gpu: &Gpu, util: &UtilKernels) -> Result<(u64, u64)> {
        let s = &self.operands.shape;
        let set = &self.operands.sets[0];
        self.checksum.zero(gpu)?;
        self.launch(gpu, 0)?;
        gpu.synchronize()?;
        let got = self.checksum.read::<u64>(gpu)?[0];
        let want = util.sum_u16(gpu, set.a.ptr(), s.m * s.k)?
            + util.sum_u16(gpu, set.b.ptr(), s.n * s.k)?;
        Ok((got, want))
    }
}

impl Variant for StreamKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        let s = &self.operands.shape;
        let ops = &self.operands.sets[set];
        let (mut a, mut a16, mut b, mut b16, mut row16, mut sum) = (
            ops.a.ptr(),
            (s.m * s.k / 8) as u64,
            ops.b.ptr(),
            (s.n * s.k / 8) as u64,
            (s.k / 8) as u64,
            self.checksum.ptr(),
        );
        let mut params =
            crate::kernel_params![&mut a, &mut a16, &mut b, &mut b16, &mut row16, &mut sum];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}

/// The skinny GEMM bound to a problem's operand sets.
pub struct SkinnyKernel<'a> {
    pub label: String,
    pub config: SkinnyConfig,
    pub report: ResourceReport,
    kernel: Kernel,
    operands: &'a Operands,
    shape: LaunchShape,
}

impl<'a> SkinnyKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        config: &SkinnyConfig,
        operands: &'a Operands,
    ) -> Result<Self> {
        let shape = &operands.shape;
        config.validate_shape(shape)?;
        let compiled = compile::compile(label, &config.program(operands.dtype))?;
        let kernel = Kernel::load(gpu, &compiled, "skinny_kernel")?;
        let ring = config.ring_bytes();
        if ring > 0 {
            kernel.set_dynamic_smem(gpu, ring)?;
        }
        Ok(SkinnyKernel {
            label: label.to_string(),
            config: config.clone(),
            report: compiled.report.clone(),
            kernel,
            operands,
            shape: LaunchShape {
                grid: config.grid(shape),
                block: config.threads(),
                smem: ring,
                cluster: 1,
                pdl: config.pdl,
            },
        })
    }

    fn enqueue(&self, gpu: &Gpu, set: usize, c: u64, ldc: usize) -> Result<()> {
        let s = &self.operands.shape;
        let ops = &self.operands.sets[set];
        let (mut a, mut b, mut c, mut ldc) = (ops.a.ptr(), ops.b.ptr(), c, ldc as i32);
        let (mut m, mut n, mut k) = (s.m as i32, s.n as i32, s.k as i32);
        let mut params =
            crate::kernel_params![&mut a, &mut b, &mut c, &mut ldc, &mut m, &mut n, &mut k];
        unsafe { launch(gpu, &self.kernel, self.shape, &mut params) }
    }
}

impl Variant for SkinnyKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.enqueue(gpu, set, self.operands.sets[set].c(), self.operands.shape.n)
    }
}

impl IntoOutput for SkinnyKernel<'_> {
    fn launch_into(&self, gpu: &Gpu, set: usize, out: &GuardedOutput) -> Result<()> {
        self.enqueue(gpu, set, out.c(), out.ldc)
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
