//! An external kernel (harness/kernel/external.rs) bound to a problem's operand sets: built, loaded, its entry
//! point's parameters checked against the manifest, and its launch evaluated once, here, not at every launch.

use crate::error::{config_err, Error, Result};
use crate::gpu::compile::ResourceReport;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch_dims, Kernel, LaunchDims};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::external::{ExternalSpec, LaunchPlan, Manifest, PlannedParam, MAX_PARAMS};
use crate::measure::operands::{GuardedOutput, Operands};
use crate::measure::variant::{IntoOutput, Variant};
use std::collections::BTreeMap;

pub struct ExternalKernel<'a> {
    pub label: String,
    pub report: ResourceReport,
    kernel: Kernel,
    manifest: Manifest,
    switches: BTreeMap<String, String>,
    operands: &'a Operands,
    dims: LaunchDims,
    /// Each operand set's parameter values, in 64-bit slots (the launch copies them onto the stack).
    slots: Vec<[u64; MAX_PARAMS]>,
    count: usize,
    /// The zeroed workspaces, one per `scratch(...)` parameter (None: 0 bytes, passed as a null pointer).
    scratch: Vec<Option<DeviceBuffer>>,
}

impl<'a> ExternalKernel<'a> {
    pub fn new(
        gpu: &Gpu,
        label: &str,
        spec: &ExternalSpec,
        operands: &'a Operands,
    ) -> Result<Self> {
        let built = spec.build(label, operands.dtype)?;
        let (manifest, switches) = (built.manifest, built.switches);
        let shape = &operands.shape;
        // Everything the CPU can check, before the module is even loaded.
        let plan = manifest.plan(&switches, shape, operands.dtype, shape.n)?;
        // The architecture was checked where the variant was bound (trial/bound.rs).
        let kernel = Kernel::load(gpu, &built.compiled, &manifest.entry).map_err(|e| {
            Error::Config(format!(
                "{}: module or entry `{}`: {e}",
                manifest.path.display(),
                manifest.entry
            ))
        })?;
        if let Some(sizes) = kernel.param_sizes()? {
            let want = manifest.param_sizes();
            if sizes != want {
                return config_err(format!(
                    "{}: params: the manifest lists {} parameters of {want:?} bytes; `{}` in the module takes {} of \
                     {sizes:?} bytes",
                    manifest.path.display(),
                    want.len(),
                    manifest.entry,
                    sizes.len()
                ));
            }
        }
        if plan.shared_memory > 48 * 1024 {
            kernel.set_dynamic_smem(gpu, plan.shared_memory)?;
        }
        let scratch = plan
            .params
            .iter()
            .filter_map(|p| match p {
                PlannedParam::Scratch(bytes) => Some(*bytes),
                _ => None,
            })
            .map(|bytes| -> Result<Option<DeviceBuffer>> {
                if bytes == 0 {
                    return Ok(None);
                }
                let buffer = DeviceBuffer::new(gpu, bytes as usize)?;
                buffer.zero(gpu)?;
                Ok(Some(buffer))
            })
            .collect::<Result<Vec<_>>>()?;
        let dims = LaunchDims {
            grid: plan.grid,
            block: plan.block,
            cluster: plan.cluster,
            smem: plan.shared_memory,
        };
        let mut k = ExternalKernel {
            label: label.to_string(),
            report: built.compiled.report.clone(),
            kernel,
            manifest,
            switches,
            operands,
            dims,
            slots: Vec::new(),
            count: plan.params.len(),
            scratch,
        };
        k.slots = (0..operands.sets.len())
            .map(|set| {
                let s = &operands.sets[set];
                k.slots_for(&plan, s.a.ptr(), s.b.ptr(), s.c())
            })
            .collect();
        Ok(k)
    }

    fn slots_for(&self, plan: &LaunchPlan, a: u64, b: u64, c: u64) -> [u64; MAX_PARAMS] {
        let mut slots = [0u64; MAX_PARAMS];
        let mut scratch = self.scratch.iter();
        for (slot, p) in slots.iter_mut().zip(&plan.params) {
            *slot = match p {
                PlannedParam::A => a,
                PlannedParam::B => b,
                PlannedParam::C => c,
                PlannedParam::Scratch(_) => scratch
                    .next()
                    .and_then(|s| s.as_ref())
                    .map_or(0, |s| s.ptr()),
                PlannedParam::Value(v) => *v,
            };
        }
        slots
    }

    fn enqueue(&self, gpu: &Gpu, dims: LaunchDims, slots: &[u64; MAX_PARAMS]) -> Result<()> {
        let mut values = *slots;
        let mut pointers = [std::ptr::null_mut::<std::ffi::c_void>(); MAX_PARAMS];
        for (p, v) in pointers.iter_mut().zip(values.iter_mut()) {
            *p = v as *mut u64 as *mut std::ffi::c_void;
        }
        // SAFETY: the parameters' number and sizes were checked against the entry point when it was loaded (on a
        // driver from CUDA 12.4 on); each value sits in the low bytes of its slot, little-endian.
        unsafe { launch_dims(gpu, &self.kernel, dims, &mut pointers[..self.count]) }
    }
}

impl Variant for ExternalKernel<'_> {
    fn label(&self) -> String {
        self.label.clone()
    }
    fn launch(&self, gpu: &Gpu, set: usize) -> Result<()> {
        self.enqueue(gpu, self.dims, &self.slots[set])
    }
}

impl IntoOutput for ExternalKernel<'_> {
    fn launch_into(&self, gpu: &Gpu, set: usize, out: &GuardedOutput) -> Result<()> {
        // The guarded output's stride is wider than N: the launch is planned again with it (checks only).
        let plan = self.manifest.plan(
            &self.switches,
            &self.operands.shape,
            self.operands.dtype,
            out.ldc,
        )?;
        let s = &self.operands.sets[set];
        let slots = self.slots_for(&plan, s.a.ptr(), s.b.ptr(), out.c());
        let dims = LaunchDims {
            grid: plan.grid,
            block: plan.block,
            cluster: plan.cluster,
            smem: plan.shared_memory,
        };
        self.enqueue(gpu, dims, &slots)
    }
}
