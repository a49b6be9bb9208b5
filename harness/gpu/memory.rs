//! Device buffers (raw allocations the kernels address directly) and mapped host memory for diagnoses.

use crate::error::{CudaContext as _, Error, Result};
use crate::gpu::device::Gpu;
use cudarc::driver::{result, sys, CudaContext};
use std::sync::Arc;

/// A device allocation freed on drop.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

impl DeviceBuffer {
    pub fn new(gpu: &Gpu, bytes: usize) -> Result<DeviceBuffer> {
        gpu.ctx.bind_to_thread().during("binding the context")?;
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(|e| {
            let free = gpu.free_memory().unwrap_or(0);
            Error::Cuda {
                context: format!("allocating {:.1} MB", bytes as f64 / 1e6),
                message: format!(
                    "{e:?} (device memory exhausted? {:.1} MB free)",
                    free as f64 / 1e6
                ),
            }
        })?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            ctx: gpu.ctx.clone(),
        })
    }
    pub fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// Fills 16-bit words with `value` (NaN poison, guard patterns).
    pub fn fill_u16(&self, gpu: &Gpu, value: u16) -> Result<()> {
        self.fill_u16_range(gpu, 0, self.bytes / 2, value)
    }
    pub fn fill_u16_range(&self, gpu: &Gpu, first: usize, count: usize, value: u16) -> Result<()> {
        unsafe { sys::cuMemsetD16Async(self.ptr + 2 * first as u64, value, count, gpu.cu_stream()) }
            .result()
            .during("filling a buffer")
    }
    /// Fills `width` 16-bit words in each of `height` rows, `pitch` words apart, from word `first` on (a matrix
    /// inside a wider allocation).
    pub fn fill_u16_rows(
        &self,
        gpu: &Gpu,
        first: usize,
        pitch: usize,
        width: usize,
        height: usize,
        value: u16,
    ) -> Result<()> {
        unsafe {
            sys::cuMemsetD2D16Async(
                self.ptr + 2 * first as u64,
                2 * pitch,
                value,
                width,
                height,
                gpu.cu_stream(),
            )
        }
        .result()
        .during("filling the rows of a matrix")
    }
    pub fn zero(&self, gpu: &Gpu) -> Result<()> {
        unsafe { result::memset_d8_async(self.ptr, 0, self.bytes, gpu.cu_stream()) }
            .during("zeroing a buffer")
    }
    /// Copies the whole buffer to the host (synchronizes first).
    pub fn read<T: Copy + Default>(&self, gpu: &Gpu) -> Result<Vec<T>> {
        gpu.synchronize()?;
        let mut host = vec![T::default(); self.bytes / std::mem::size_of::<T>()];
        unsafe { result::memcpy_dtoh_sync(&mut host, self.ptr) }.during("copying to the host")?;
        Ok(host)
    }
    pub fn write<T: Copy>(&self, gpu: &Gpu, data: &[T]) -> Result<()> {
        gpu.synchronize()?;
        unsafe { result::memcpy_htod_sync(self.ptr, data) }.during("copying to the device")
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // After a sticky error the free fails too; nothing useful can be done about it here.
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Copies `elems` 16-bit values from a device address (for example C of an operand set).
pub fn read_raw(gpu: &Gpu, ptr: sys::CUdeviceptr, elems: usize) -> Result<Vec<u16>> {
    gpu.synchronize()?;
    let mut host = vec![0u16; elems];
    unsafe { result::memcpy_dtoh_sync(&mut host, ptr) }.during("copying to the host")?;
    Ok(host)
}

/// Pinned host memory mapped into the device's address space: readable by the host after a kernel traps.
pub struct MappedHost<T: Copy> {
    host: *mut T,
    device: sys::CUdeviceptr,
    ctx: Arc<CudaContext>,
}

impl<T: Copy> MappedHost<T> {
    pub fn new(gpu: &Gpu, init: T) -> Result<MappedHost<T>> {
        gpu.ctx.bind_to_thread().during("binding the context")?;
        let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
        unsafe {
            sys::cuMemHostAlloc(
                &mut host,
                std::mem::size_of::<T>(),
                sys::CU_MEMHOSTALLOC_DEVICEMAP,
            )
            .result()
            .during("allocating mapped host memory")?;
            let mut device = 0;
            sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0)
                .result()
                .during("mapping host memory")?;
            let host = host as *mut T;
            std::ptr::write_volatile(host, init);
            Ok(MappedHost {
                host,
                device,
                ctx: gpu.ctx.clone(),
            })
        }
    }
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.device
    }
    pub fn get(&self) -> T {
        unsafe { std::ptr::read_volatile(self.host) }
    }
    pub fn set(&self, value: T) {
        unsafe { std::ptr::write_volatile(self.host, value) }
    }
}

impl<T: Copy> Drop for MappedHost<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::free_host(self.host as *mut std::ffi::c_void) };
    }
}
