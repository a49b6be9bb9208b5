//! Finding the GPU without panicking, its properties and clocks, and the CUDA context a trial works in.

use crate::error::{CudaContext as _, Error, Result};
use crate::gpu::arch::Arch;
use crate::gpu::nvml::Nvml;
use crate::gpu::probe;
use cudarc::driver::{result, sys, CudaContext, CudaStream};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a results file records about the device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub smem_optin_bytes: u32,
    pub total_memory_bytes: u64,
    pub driver_version: String,
    pub cuda_driver_api: String,
    pub max_sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub pci_bus_id: String,
    /// The GPU's UUID ("GPU-..." as nvidia-smi prints it): tells one physical GPU, so one host, from another where
    /// two runs' times differ (records before 5d68642 lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

/// The UUID in nvidia-smi's form: GPU-8-4-4-4-12 hex digits.
fn uuid_text(bytes: [u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn attribute(dev: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
    unsafe { result::device::get_attribute(dev, attr) }.during("reading a device attribute")
}

/// Reads the properties of device `ordinal` with the driver API only (no context is created).
pub fn query(ordinal: usize) -> Result<DeviceInfo> {
    probe::require(&[probe::DRIVER])?;
    result::init().map_err(|e| {
        Error::NoGpu(format!(
            "cuInit failed: {e:?} (is there a GPU and a driver?)"
        ))
    })?;
    let count = result::device::get_count()
        .map_err(|e| Error::NoGpu(format!("cuDeviceGetCount: {e:?}")))?;
    if count as usize <= ordinal {
        return Err(Error::NoGpu(format!(
            "the driver sees {count} CUDA devices; device {ordinal} was asked for"
        )));
    }
    let dev = result::device::get(ordinal as i32).during("opening the device")?;
    use sys::CUdevice_attribute::*;
    let cc = (
        attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    let mut bus = [0 as std::ffi::c_char; 32];
    unsafe { sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as i32, dev) }
        .result()
        .during("reading the PCI bus id")?;
    let pci_bus_id = unsafe { std::ffi::CStr::from_ptr(bus.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut total = 0usize;
    unsafe { sys::cuDeviceTotalMem_v2(&mut total, dev) }
        .result()
        .during("reading device memory size")?;
    let mut api = 0;
    unsafe { sys::cuDriverGetVersion(&mut api) }
        .result()
        .during("reading the driver version")?;
    let mut raw_uuid = sys::CUuuid_st { bytes: [0; 16] };
    let uuid = unsafe { sys::cuDeviceGetUuid_v2(&mut raw_uuid, dev) }
        .result()
        .ok()
        .map(|()| uuid_text(raw_uuid.bytes.map(|b| b as u8)));
    let nvml = Nvml::open(&pci_bus_id);
    Ok(DeviceInfo {
        name: result::device::get_name(dev).during("reading the device name")?,
        compute_capability: cc,
        sm_count: attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        l2_bytes: attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        smem_optin_bytes: attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as u32,
        total_memory_bytes: total as u64,
        driver_version: nvml
            .as_ref()
            .and_then(|n| n.driver_version())
            .unwrap_or_else(|| "unknown".into()),
        cuda_driver_api: format!("{}.{}", api / 1000, (api % 1000) / 10),
        max_sm_clock_mhz: nvml.as_ref().and_then(|n| n.max_sm_clock_mhz()),
        mem_clock_mhz: nvml.as_ref().and_then(|n| n.mem_clock_mhz()),
        pci_bus_id,
        uuid,
    })
}

/// How many CUDA devices this process sees (after CUDA_VISIBLE_DEVICES).
pub fn count() -> Result<usize> {
    probe::require(&[probe::DRIVER])?;
    result::init().map_err(|e| Error::NoGpu(format!("cuInit failed: {e:?}")))?;
    Ok(
        result::device::get_count().map_err(|e| Error::NoGpu(format!("cuDeviceGetCount: {e:?}")))?
            as usize,
    )
}

/// The GPU one trial ran on: its CUDA ordinal in the parent process (the suite's numbering), name and bus id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSeat {
    pub index: usize,
    pub name: String,
    pub pci_bus_id: String,
}

/// The value of CUDA_VISIBLE_DEVICES that shows a child process only the parent's device `ordinal`: the
/// parent's own list entry when it has one (the ordinal counts within that list), else the ordinal itself.
pub fn visible_devices_for(ordinal: usize, parent_visible: Option<&str>) -> String {
    parent_visible
        .and_then(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .nth(ordinal)
                .map(str::to_string)
        })
        .unwrap_or_else(|| ordinal.to_string())
}

/// The suite runs on compute capability 8.0 and later (cuBLAS, the checks and the portable kernels); which trials
/// need more is each trial's to say (`Arch::refused_by`).
pub fn check_supported(info: &DeviceInfo) -> Result<()> {
    if Arch::OLDEST.runs_on(info.compute_capability) {
        return Ok(());
    }
    Err(Error::WrongArch {
        found: format!(
            "{} (compute capability {}.{})",
            info.name, info.compute_capability.0, info.compute_capability.1
        ),
        needed: format!("compute capability 8.0 or later ({})", Arch::OLDEST.name()),
    })
}

/// Ok(info) if GPU trials can run here (a GPU of compute capability 8.0 or later, NVRTC, cuBLAS and cuBLASLt),
/// else the reason they cannot (for ignored trials).
/// The SM count and name of the visible GPU (device 0), asked once a process; None without one. `auto` resolves
/// for it where a spec names `auto` (the command line, hypothesis files), the H200's count otherwise.
pub fn visible_sm_count() -> Option<(u32, String)> {
    static SMS: std::sync::OnceLock<Option<(u32, String)>> = std::sync::OnceLock::new();
    SMS.get_or_init(|| query(0).ok().map(|info| (info.sm_count, info.name)))
        .clone()
}

pub fn gpu_available() -> std::result::Result<DeviceInfo, String> {
    let info = query(0).map_err(|e| e.to_string())?;
    check_supported(&info).map_err(|e| e.to_string())?;
    if let Err(e) = probe::require(&[probe::NVRTC, probe::CUBLAS, probe::CUBLASLT]) {
        return Err(e.to_string());
    }
    Ok(info)
}

/// A context and stream on one GPU, with NVML for its clocks.
pub struct Gpu {
    /// What must live as long as the context and no longer, once `keep` kept it: the stream hold timed batches
    /// wait behind (gpu/hold.rs). First, so that it is dropped while the context lives; held as `Any` so that
    /// the device does not depend on what it keeps.
    kept: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    nvml: Option<Nvml>,
}

impl Gpu {
    pub fn open() -> Result<Gpu> {
        let info = query(0)?;
        check_supported(&info)?;
        probe::require(&[probe::NVRTC, probe::CUBLAS, probe::CUBLASLT])?;
        crate::gpu::compile::set_target(info.compute_capability);
        let ctx = CudaContext::new(0).during("creating the CUDA context")?;
        let stream = ctx.new_stream().during("creating a stream")?;
        let nvml = Nvml::open(&info.pci_bus_id);
        Ok(Gpu {
            kept: std::sync::OnceLock::new(),
            ctx,
            stream,
            info,
            nvml,
        })
    }

    /// Keeps what `make` makes for the context's life, once: a later call keeps the first and makes nothing.
    pub fn keep(
        &self,
        make: impl FnOnce() -> Result<Box<dyn std::any::Any + Send + Sync>>,
    ) -> Result<()> {
        if self.kept.get().is_none() {
            let _ = self.kept.set(make()?);
        }
        Ok(())
    }

    /// What `keep` kept, if anything.
    pub fn kept(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.kept.get().map(|k| k.as_ref())
    }

    pub fn sm_clock_mhz(&self) -> Option<u32> {
        self.nvml.as_ref().and_then(|n| n.sm_clock_mhz())
    }
    pub fn throttle_reasons(&self) -> Option<u64> {
        self.nvml.as_ref().and_then(|n| n.throttle_reasons())
    }
    pub fn power_w(&self) -> Option<f64> {
        self.nvml
            .as_ref()
            .and_then(|n| n.power_mw())
            .map(|mw| f64::from(mw) / 1e3)
    }
    pub fn energy_mj(&self) -> Option<u64> {
        self.nvml.as_ref().and_then(|n| n.energy_mj())
    }

    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().during("synchronizing the stream")
    }

    /// Runs `f` inside a profiler range (cuProfilerStart / cuProfilerStop): with `--profile-from-start off`,
    /// Nsight Compute profiles only the kernels launched in it.
    pub fn profiled(&self, f: impl FnOnce() -> Result<()>) -> Result<()> {
        self.ctx.bind_to_thread().during("binding the context")?;
        unsafe { sys::cuProfilerStart() }
            .result()
            .during("starting the profiler range")?;
        let ran = f();
        let stopped = unsafe { sys::cuProfilerStop() }
            .result()
            .during("stopping the profiler range");
        ran.and(stopped)
    }

    /// Raw stream handle for driver calls.
    pub fn cu_stream(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }

    /// Free device memory in bytes.
    pub fn free_memory(&self) -> Result<usize> {
        self.ctx
            .mem_get_info()
            .map(|(free, _)| free)
            .during("reading free device memory")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_reads_as_nvidia_smi_prints_it() {
        let bytes = [
            0x5b, 0x1c, 0x0f, 0x7e, 0x9a, 0x10, 0x4d, 0x2e, 0x81, 0x33, 0x02, 0xaa, 0xbb, 0xcc,
            0xdd, 0xee,
        ];
        assert_eq!(uuid_text(bytes), "GPU-5b1c0f7e-9a10-4d2e-8133-02aabbccddee");
    }

    #[test]
    fn a_child_sees_the_parents_device_under_its_own_name() {
        assert_eq!(visible_devices_for(1, None), "1");
        assert_eq!(visible_devices_for(1, Some("2,3")), "3");
        assert_eq!(
            visible_devices_for(0, Some("GPU-ab12, GPU-cd34")),
            "GPU-ab12"
        );
    }

    #[test]
    fn compute_capability_8_0_and_later_pass_the_architecture_check() {
        let mut info = DeviceInfo {
            name: "Tesla V100".into(),
            compute_capability: (7, 0),
            ..Default::default()
        };
        let msg = check_supported(&info).unwrap_err().to_string();
        assert!(
            msg.contains("wrong GPU architecture") && msg.contains("7.0") && msg.contains("8.0"),
            "{msg}"
        );
        for cc in [(8, 0), (8, 9), (9, 0), (10, 0), (12, 0)] {
            info.compute_capability = cc;
            assert!(check_supported(&info).is_ok(), "{cc:?}");
        }
    }
}
