//! The state a worker process starts every GPU job from: the device, the hang watch, the settings and the seeds.

use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::measure::operands::Seeds;
use crate::settings::Settings;

/// The per-process state every GPU job starts from.
pub(crate) struct TrialContext {
    pub(crate) gpu: Gpu,
    pub(crate) hang: HangWatch,
    pub(crate) settings: Settings,
    pub(crate) seeds: Seeds,
    /// Physical chunks rounds map their operands onto (GEMM_ABLATE_RANDOMIZE=memory), made at the first round.
    pub(crate) pool: std::sync::OnceLock<crate::gpu::memory::ChunkPool>,
}
