//! Hang diagnoses: the record a kernel's bounded wait writes before it traps, and the sentence it becomes.

use crate::error::{Error, Result};
use crate::gpu::device::Gpu;
use crate::gpu::memory::MappedHost;

/// Mirror of `HangRecord` in kernels/primitives.cuh.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HangRecord {
    pub claimed: u32,
    pub site: u32,
    pub parity: u32,
    pub block: [u32; 3],
    pub thread: u32,
    pub pad: u32,
    pub waited_ns: u64,
}

impl HangRecord {
    /// "consumer waited on full[2] at phase 1 in block (3,0,0) (thread 128) for 2.00 s"
    pub fn sentence(&self) -> String {
        let role = match self.site >> 16 {
            0 => "producer",
            1 => "consumer",
            2 => "epilogue",
            _ => "thread",
        };
        let barrier = match (self.site >> 8) & 0xFF {
            0 => "full",
            1 => "empty",
            2 => "turn",
            3 => "stream-K partial flag of cluster",
            _ => "barrier",
        };
        format!(
            "{role} waited on {barrier}[{}] at phase {} in block ({},{},{}) (thread {}) for {:.2} s",
            self.site & 0xFF,
            self.parity,
            self.block[0],
            self.block[1],
            self.block[2],
            self.thread,
            self.waited_ns as f64 / 1e9
        )
    }
}

/// Mapped host memory a kernel reports a hang into; one per process, reset before each launch that may hang.
pub struct HangWatch {
    record: MappedHost<HangRecord>,
}

impl HangWatch {
    pub fn new(gpu: &Gpu) -> Result<HangWatch> {
        Ok(HangWatch {
            record: MappedHost::new(gpu, HangRecord::default())?,
        })
    }
    pub fn device_ptr(&self) -> u64 {
        self.record.device_ptr()
    }
    pub fn reset(&self) {
        self.record.set(HangRecord::default());
    }
    pub fn hang(&self) -> Option<HangRecord> {
        let r = self.record.get();
        (r.claimed != 0).then_some(r)
    }

    /// Turns a failed synchronization into the most specific diagnosis available.
    pub fn explain(&self, err: Error) -> Error {
        if let Some(r) = self.hang() {
            return Error::Hang(r.sentence());
        }
        explain_cuda(err)
    }
}

/// Names the usual kernel failures in words (the CUDA codes are sticky: the process cannot go on after them).
pub fn explain_cuda(err: Error) -> Error {
    match &err {
        Error::Cuda { context, message } => {
            let hint = if message.contains("ILLEGAL_ADDRESS") {
                "illegal memory access (an out-of-bounds load or store)"
            } else if message.contains("LAUNCH_FAILED") {
                "the kernel trapped (unspecified launch failure)"
            } else if message.contains("ILLEGAL_INSTRUCTION") {
                "illegal instruction"
            } else if message.contains("MISALIGNED") {
                "misaligned address"
            } else if message.contains("LAUNCH_TIMEOUT") {
                "launch timed out"
            } else {
                return err;
            };
            Error::Cuda {
                context: context.clone(),
                message: format!("{hint}: {message}"),
            }
        }
        _ => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout_matches_the_kernel() {
        // u32 x 8 then a u64: 40 bytes, the u64 at offset 32.
        assert_eq!(std::mem::size_of::<HangRecord>(), 40);
        let r = HangRecord::default();
        let base = &r as *const _ as usize;
        assert_eq!(&r.waited_ns as *const _ as usize - base, 32);
        assert_eq!(&r.thread as *const _ as usize - base, 24);
    }

    #[test]
    fn sentence_names_role_barrier_phase_and_block() {
        let r = HangRecord {
            claimed: 1,
            site: (1 << 16) | 2,
            parity: 1,
            block: [3, 0, 0],
            thread: 128,
            pad: 0,
            waited_ns: 2_000_000_000,
        };
        assert_eq!(
            r.sentence(),
            "consumer waited on full[2] at phase 1 in block (3,0,0) (thread 128) for 2.00 s"
        );
        let p = HangRecord { site: 1 << 8, ..r };
        assert!(p.sentence().starts_with("producer waited on empty[0]"));
    }

    #[test]
    fn cuda_codes_become_words() {
        let e = explain_cuda(Error::Cuda {
            context: "x".into(),
            message: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        });
        assert!(e.to_string().contains("illegal memory access"));
        let e = explain_cuda(Error::Cuda {
            context: "x".into(),
            message: "CUDA_ERROR_LAUNCH_FAILED".into(),
        });
        assert!(e.to_string().contains("trapped"));
    }
}
