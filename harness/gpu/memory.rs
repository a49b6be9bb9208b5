//! Device buffers (raw allocations the kernels address directly) and mapped host memory for diagnoses.

use crate::error::{CudaContext as _, Error, Result};
use crate::gpu::device::Gpu;
use cudarc::driver::{result, sys, CudaContext};
use std::sync::Arc;

/// A device allocation freed on drop: from the driver's allocator, or chunks of a `ChunkPool` mapped into an
/// address range of its own.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    /// The reserved range's size, for a buffer mapped onto pool chunks (unmapped and freed on drop).
    mapped: Option<usize>,
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
            mapped: None,
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
        match self.mapped {
            None => {
                let _ = unsafe { result::free_sync(self.ptr) };
            }
            Some(size) => unsafe {
                let _ = sys::cuCtxSynchronize();
                let _ = sys::cuMemUnmap(self.ptr, size);
                let _ = sys::cuMemAddressFree(self.ptr, size);
            },
        }
    }
}

/// Physical device memory in chunks of the driver's allocation granularity (2 MB on Hopper), created once in a
/// process and grown as needed. `buffers` maps each buffer of a round onto chunks drawn at random from the whole
/// pool, so that where an operand lies physically changes from round to round, as it does from one process to
/// the next (ablations/HYPOTHESES.md H106), instead of being fixed for the process by the driver's allocator.
pub struct ChunkPool {
    handles: std::sync::Mutex<Vec<sys::CUmemGenericAllocationHandle>>,
    chunk_bytes: usize,
    ctx: Arc<CudaContext>,
}

/// Chunks a pool holds beyond what one round draws: the draw is a random choice among at least this many
/// times as many chunks as it needs.
pub const POOL_FACTOR: usize = 4;

fn device_prop() -> sys::CUmemAllocationProp {
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop
}

impl ChunkPool {
    pub fn new(gpu: &Gpu) -> Result<ChunkPool> {
        gpu.ctx.bind_to_thread().during("binding the context")?;
        let prop = device_prop();
        let mut chunk_bytes = 0usize;
        unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut chunk_bytes,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        }
        .result()
        .during("reading the allocation granularity")?;
        Ok(ChunkPool {
            handles: std::sync::Mutex::new(Vec::new()),
            chunk_bytes: chunk_bytes.max(1),
            ctx: gpu.ctx.clone(),
        })
    }

    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// Grows the pool to at least `chunks` chunks.
    fn ensure(&self, chunks: usize) -> Result<()> {
        let mut handles = self.handles.lock().expect("the pool's lock");
        let prop = device_prop();
        while handles.len() < chunks {
            let mut h: sys::CUmemGenericAllocationHandle = 0;
            unsafe { sys::cuMemCreate(&mut h, self.chunk_bytes, &prop, 0) }
                .result()
                .during(&format!(
                    "creating physical chunk {} of {} MB (GEMM_ABLATE_RANDOMIZE=memory holds {POOL_FACTOR}x a round's operands)",
                    handles.len(),
                    self.chunk_bytes >> 20
                ))?;
            handles.push(h);
        }
        Ok(())
    }

    /// One buffer of each size in `sizes`, on distinct chunks drawn at random (from `seed`) from a pool of at
    /// least `POOL_FACTOR` times the chunks they need; returns the buffers and the chunk numbers each mapped, in
    /// order (recorded with the round).
    pub fn buffers(
        &self,
        gpu: &Gpu,
        sizes: &[usize],
        seed: u64,
    ) -> Result<(Vec<DeviceBuffer>, Vec<u32>)> {
        let chunks_of = |bytes: usize| bytes.max(1).div_ceil(self.chunk_bytes);
        let need: usize = sizes.iter().map(|&b| chunks_of(b)).sum();
        self.ensure((POOL_FACTOR * need).max(need + 16))?;
        let handles = self.handles.lock().expect("the pool's lock").clone();
        // A random permutation of the pool (Fisher-Yates on splitmix64 draws): the first `need` are used.
        let mut order: Vec<u32> = (0..handles.len() as u32).collect();
        for i in (1..order.len()).rev() {
            let j = (splitmix(seed, i as u64) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut drawn = order.into_iter();
        let mut out = Vec::with_capacity(sizes.len());
        let mut used = Vec::with_capacity(need);
        for &bytes in sizes {
            let n = chunks_of(bytes);
            let size = n * self.chunk_bytes;
            let mut va: sys::CUdeviceptr = 0;
            unsafe { sys::cuMemAddressReserve(&mut va, size, self.chunk_bytes, 0, 0) }
                .result()
                .during("reserving an address range")?;
            // From here the buffer owns the range: an error below drops it, which unmaps and frees it.
            let buffer = DeviceBuffer {
                ptr: va,
                bytes,
                mapped: Some(size),
                ctx: gpu.ctx.clone(),
            };
            for c in 0..n {
                let chunk = drawn
                    .next()
                    .expect("the pool holds the chunks a round draws");
                unsafe {
                    sys::cuMemMap(
                        va + (c * self.chunk_bytes) as u64,
                        self.chunk_bytes,
                        0,
                        handles[chunk as usize],
                        0,
                    )
                }
                .result()
                .during("mapping a physical chunk")?;
                used.push(chunk);
            }
            let access = sys::CUmemAccessDesc {
                location: device_prop().location,
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            unsafe { sys::cuMemSetAccess(va, size, &access, 1) }
                .result()
                .during("making mapped chunks accessible")?;
            out.push(buffer);
        }
        Ok((out, used))
    }
}

/// Draw `i` of a splitmix64 stream seeded with `seed` (a well-mixed seed for stream `i`).
pub fn splitmix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i + 1));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Drop for ChunkPool {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // A chunk still mapped somewhere is freed by the driver once its last mapping goes.
        for h in self.handles.lock().map(|h| h.clone()).unwrap_or_default() {
            let _ = unsafe { sys::cuMemRelease(h) };
        }
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
