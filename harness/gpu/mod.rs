//! Talking to the GPU and to NVRTC: finding the device, its clocks (NVML), memory, tensor maps, compiling and
//! launching kernels, and turning a hang into a sentence.

pub mod arch;
pub mod compile;
pub mod cubin;
pub mod device;
pub mod diag;
pub mod hold;
pub mod launch;
pub mod memory;
pub mod nvml;
pub mod probe;
