//! Loading compiled kernels and launching them (plain or as clusters) through cuLaunchKernelEx.

use crate::error::{config_err, CudaContext as _, Result};
use crate::gpu::compile::Compiled;
use crate::gpu::device::Gpu;
use cudarc::driver::{sys, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::ffi::c_void;
use std::sync::Arc;

pub struct Kernel {
    pub name: String,
    function: CudaFunction,
    _module: Arc<CudaModule>,
}

impl Kernel {
    pub fn load(gpu: &Gpu, compiled: &Compiled, function: &str) -> Result<Kernel> {
        let module = gpu
            .ctx
            .load_module(Ptx::from_binary(compiled.cubin.clone()))
            .during(&format!("loading the cubin of {}", compiled.variant))?;
        let f = module
            .load_function(function)
            .during(&format!("finding {function} in {}", compiled.variant))?;
        Ok(Kernel {
            name: format!("{}::{function}", compiled.variant),
            function: f,
            _module: module,
        })
    }

    /// Copies `data` into the module's global array `name` (after the work queued before it), checking its size.
    pub fn write_global(&self, gpu: &Gpu, name: &str, data: &[u32]) -> Result<()> {
        let mut symbol = self
            ._module
            .get_global(name, &gpu.stream)
            .during(&format!("finding {name} in {}", self.name))?;
        let bytes = symbol.len();
        let Some(mut words) = (unsafe { symbol.transmute_mut::<u32>(data.len()) }) else {
            return config_err(format!(
                "{}: {} entries do not fit {name} ({bytes} B)",
                self.name,
                data.len()
            ));
        };
        gpu.stream
            .memcpy_htod(data, &mut words)
            .during(&format!("writing {name} of {}", self.name))?;
        gpu.synchronize()
    }

    /// Reads the module's global array `name` of `len` u64 (after the work queued before it).
    pub fn read_global_u64(&self, gpu: &Gpu, name: &str, len: usize) -> Result<Vec<u64>> {
        let symbol = self
            ._module
            .get_global(name, &gpu.stream)
            .during(&format!("finding {name} in {}", self.name))?;
        let Some(words) = (unsafe { symbol.transmute::<u64>(len) }) else {
            return config_err(format!("{}: {name} holds fewer than {len} u64", self.name));
        };
        gpu.stream
            .clone_dtoh(&words)
            .during(&format!("reading {name} of {}", self.name))
    }

    /// Raises the kernel's dynamic shared memory limit, after checking it against the device's opt-in limit.
    pub fn set_dynamic_smem(&self, gpu: &Gpu, bytes: u32) -> Result<()> {
        if bytes > gpu.info.smem_optin_bytes {
            return config_err(format!(
                "{} asks for {bytes} B of shared memory; this device allows at most {} B per block",
                self.name, gpu.info.smem_optin_bytes
            ));
        }
        self.function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
            .during("raising the dynamic shared memory limit")
    }
}

/// The kernel-parameter array cuLaunchKernelEx takes: a pointer to each argument's value, in order.
#[macro_export]
macro_rules! kernel_params {
    ($($arg:expr),* $(,)?) => {
        [$($arg as *mut _ as *mut std::ffi::c_void),*]
    };
}

/// Grid, block, shared memory and cluster of one launch.
#[derive(Clone, Copy, Debug)]
pub struct LaunchShape {
    pub grid: u32,
    pub block: u32,
    pub smem: u32,
    pub cluster: u32,
    /// Launched with programmatic stream serialization (the kernel must wait with griddepcontrol.wait).
    pub pdl: bool,
}

/// Builds the driver's launch configuration for `shape` and hands it to `f`. The cluster attribute is set when
/// the shape has a cluster (always for an occupancy query, which needs the cluster size), PDL when asked for a
/// launch.
fn with_launch_config<R>(
    gpu: &Gpu,
    shape: LaunchShape,
    occupancy_query: bool,
    f: impl FnOnce(&sys::CUlaunchConfig) -> R,
) -> R {
    // SAFETY: CUlaunchAttribute is a plain C struct and union, valid when zeroed.
    let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
    let mut n = 0;
    if shape.cluster > 1 || occupancy_query {
        attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n].value.clusterDim.x = shape.cluster;
        attrs[n].value.clusterDim.y = 1;
        attrs[n].value.clusterDim.z = 1;
        n += 1;
    }
    if shape.pdl && !occupancy_query {
        attrs[n].id =
            sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n].value.programmaticStreamSerializationAllowed = 1;
        n += 1;
    }
    let config = sys::CUlaunchConfig {
        gridDimX: shape.grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: shape.block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shape.smem,
        hStream: gpu.cu_stream(),
        attrs: attrs.as_mut_ptr(),
        numAttrs: n as u32,
    };
    f(&config)
}

/// How many clusters of this launch's shape can be resident at once (the occupancy API's answer, which knows
/// how the GPCs' SMs pair up into clusters).
pub fn max_active_clusters(gpu: &Gpu, kernel: &Kernel, shape: LaunchShape) -> Result<u32> {
    let mut n: std::ffi::c_int = 0;
    with_launch_config(gpu, shape, true, |config| unsafe {
        sys::cuOccupancyMaxActiveClusters(&mut n, kernel.function.cu_function(), config).result()
    })
    .during(&format!(
        "asking how many clusters of {} fit at once",
        kernel.name
    ))?;
    if n <= 0 {
        return crate::error::config_err(format!(
            "{}: not one cluster of {} CTAs with {} B shared memory fits on this GPU",
            kernel.name, shape.cluster, shape.smem
        ));
    }
    Ok(n as u32)
}

/// Launches `kernel` with the given parameter pointers (each points at one argument's value).
///
/// # Safety
/// `params` must match the kernel's parameter list in number, order and size.
pub unsafe fn launch(
    gpu: &Gpu,
    kernel: &Kernel,
    shape: LaunchShape,
    params: &mut [*mut c_void],
) -> Result<()> {
    with_launch_config(gpu, shape, false, |config| {
        sys::cuLaunchKernelEx(
            config,
            kernel.function.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
        .result()
    })
    .during(&format!("launching {}", kernel.name))
}

/// A launch in three dimensions with an optional cluster: what an external kernel's manifest describes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// [1, 1, 1]: no cluster attribute.
    pub cluster: [u32; 3],
    pub smem: u32,
}

/// Launches `kernel` with `dims` and the given parameter pointers.
///
/// # Safety
/// `params` must match the kernel's parameter list in number, order and size.
pub unsafe fn launch_dims(
    gpu: &Gpu,
    kernel: &Kernel,
    dims: LaunchDims,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: CUlaunchAttribute is a plain C struct and union, valid when zeroed.
    let mut attrs: [sys::CUlaunchAttribute; 1] = std::mem::zeroed();
    let clustered = dims.cluster != [1, 1, 1];
    if clustered {
        attrs[0].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[0].value.clusterDim.x = dims.cluster[0];
        attrs[0].value.clusterDim.y = dims.cluster[1];
        attrs[0].value.clusterDim.z = dims.cluster[2];
    }
    let config = sys::CUlaunchConfig {
        gridDimX: dims.grid[0],
        gridDimY: dims.grid[1],
        gridDimZ: dims.grid[2],
        blockDimX: dims.block[0],
        blockDimY: dims.block[1],
        blockDimZ: dims.block[2],
        sharedMemBytes: dims.smem,
        hStream: gpu.cu_stream(),
        attrs: attrs.as_mut_ptr(),
        numAttrs: clustered as u32,
    };
    sys::cuLaunchKernelEx(
        &config,
        kernel.function.cu_function(),
        params.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
    .during(&format!("launching {}", kernel.name))
}

impl Kernel {
    /// The size in bytes of each of the entry point's parameters, as the module declares them; None where the
    /// driver is older than CUDA 12.4 (cuFuncGetParamInfo; cudarc would panic on the missing symbol).
    pub fn param_sizes(&self) -> Result<Option<Vec<usize>>> {
        let mut version = 0;
        unsafe { sys::cuDriverGetVersion(&mut version) }
            .result()
            .during("reading the driver version")?;
        if version < 12040 {
            return Ok(None);
        }
        let mut sizes = Vec::new();
        // The driver answers CUDA_ERROR_INVALID_VALUE past the last parameter.
        for index in 0..256 {
            let (mut offset, mut size) = (0usize, 0usize);
            let rc = unsafe {
                sys::cuFuncGetParamInfo(self.function.cu_function(), index, &mut offset, &mut size)
            };
            if rc != sys::CUresult::CUDA_SUCCESS {
                break;
            }
            sizes.push(size);
        }
        Ok(Some(sizes))
    }
}
