//! An external kernel (manifest.rs) bound to a problem's operand sets: built, loaded, its entry
//! point's parameters checked against the manifest, and its launch evaluated once, here, not at every launch.

use crate::error::{config_err, Error, Result};
use crate::families::external::manifest::{
    ExternalSpec, LaunchPlan, Manifest, MapOperand, PlannedParam, MAX_PARAMS, TMA_PARAM_BYTES,
};
use crate::gpu::compile::ResourceReport;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{launch_dims, Kernel, LaunchDims};
use crate::gpu::memory::DeviceBuffer;
use crate::kernel::tma;
use crate::measure::operands::{GuardedOutput, Operands};
use crate::measure::variant::{IntoOutput, Variant};
use std::collections::BTreeMap;

/// One parameter's bytes, aligned as a tensor map is (the driver copies each parameter's declared size from it).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Slot([u8; TMA_PARAM_BYTES]);

impl Slot {
    fn value(v: u64) -> Slot {
        let mut s = Slot([0; TMA_PARAM_BYTES]);
        s.0[..8].copy_from_slice(&v.to_le_bytes());
        s
    }
}

/// Each parameter's bytes for one operand set: pointers and scalars little-endian in the low bytes of their slot,
/// tensor maps encoded by the driver over the set's A or B (a map holds its operand's address); FP8's scales are
/// the problem's, shared by every set.
fn slots_for(
    plan: &LaunchPlan,
    scratch: &[Option<DeviceBuffer>],
    operands: &Operands,
    (a, b, c): (u64, u64, u64),
) -> Result<Vec<Slot>> {
    let dtype = operands.dtype;
    let mut scratch = scratch.iter();
    (plan.params.iter())
        .map(|p| {
            Ok(match p {
                PlannedParam::A => Slot::value(a),
                PlannedParam::B => Slot::value(b),
                PlannedParam::C => Slot::value(c),
                PlannedParam::Scales(operand) => {
                    let scales = operands.fp8_scales()?;
                    Slot::value(match operand {
                        MapOperand::A => scales.a.ptr(),
                        MapOperand::B => scales.b.ptr(),
                    })
                }
                PlannedParam::Scratch(_) => Slot::value(
                    scratch
                        .next()
                        .and_then(|s| s.as_ref())
                        .map_or(0, |s| s.ptr()),
                ),
                PlannedParam::Value(v) => Slot::value(*v),
                PlannedParam::Tma { operand, map } => {
                    let address = match operand {
                        MapOperand::A => a,
                        MapOperand::B => b,
                    };
                    let desc = tma::encode(map, address, dtype)?;
                    let mut s = Slot([0; TMA_PARAM_BYTES]);
                    for (chunk, word) in s.0.chunks_exact_mut(8).zip(desc.0) {
                        chunk.copy_from_slice(&word.to_le_bytes());
                    }
                    s
                }
            })
        })
        .collect()
}

pub struct ExternalKernel<'a> {
    pub label: String,
    pub report: ResourceReport,
    kernel: Kernel,
    manifest: Manifest,
    switches: BTreeMap<String, String>,
    operands: &'a Operands,
    dims: LaunchDims,
    /// Each operand set's parameters, one slot each (the launch points the driver at them).
    slots: Vec<Vec<Slot>>,
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
            .filter_map(|p| match *p {
                PlannedParam::Scratch(bytes) => Some(bytes),
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
        let slots = (operands.sets.iter())
            .map(|s| slots_for(&plan, &scratch, operands, (s.a.ptr(), s.b.ptr(), s.c())))
            .collect::<Result<Vec<_>>>()?;
        Ok(ExternalKernel {
            label: label.to_string(),
            report: built.compiled.report.clone(),
            kernel,
            manifest,
            switches,
            operands,
            dims,
            slots,
            scratch,
        })
    }

    fn enqueue(&self, gpu: &Gpu, dims: LaunchDims, slots: &[Slot]) -> Result<()> {
        let mut pointers = [std::ptr::null_mut::<std::ffi::c_void>(); MAX_PARAMS];
        for (p, slot) in pointers.iter_mut().zip(slots) {
            *p = slot.0.as_ptr() as *mut std::ffi::c_void;
        }
        // SAFETY: the parameters' number and sizes were checked against the entry point when it was loaded (on a
        // driver from CUDA 12.4 on); each value sits in the low bytes of its slot, little-endian, and a slot holds
        // 128 bytes, the largest parameter (a tensor map). The driver only reads the slots.
        unsafe { launch_dims(gpu, &self.kernel, dims, &mut pointers[..slots.len()]) }
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
        let slots = slots_for(
            &plan,
            &self.scratch,
            self.operands,
            (s.a.ptr(), s.b.ptr(), out.c()),
        )?;
        let dims = LaunchDims {
            grid: plan.grid,
            block: plan.block,
            cluster: plan.cluster,
            smem: plan.shared_memory,
        };
        self.enqueue(gpu, dims, &slots)
    }
}
