//! The state a worker process starts every GPU job from: the device, the hang watch, the settings and the seeds.

use crate::gpu::device::Gpu;
use crate::gpu::diag::HangWatch;
use crate::measure::operands::Seeds;
use crate::settings::Settings;

/// The per-process state every GPU job starts from.
pub(crate) struct TrialContext<'g> {
    /// Opened by the process for this job, or for an earlier one (a kept worker process).
    pub(crate) gpu: &'g Gpu,
    pub(crate) hang: HangWatch,
    pub(crate) settings: Settings,
    pub(crate) seeds: Seeds,
    /// Physical chunks rounds map their operands onto (GEMM_ABLATE_RANDOMIZE=memory), made at the first round.
    pub(crate) pool: std::sync::OnceLock<crate::gpu::memory::ChunkPool>,
    /// When the job started, and the phases marked since (`mark`).
    pub(crate) started: std::time::Instant,
    pub(crate) phases: std::sync::Mutex<Vec<(String, f64)>>,
    /// A kept worker found the card at its working clock when the job came (H133): the first warm-up is
    /// `kept_warmup_ms`.
    pub(crate) card_warm: bool,
}

impl TrialContext<'_> {
    /// Marks the end of a phase of the job, in seconds since it started (kept in the record, TrialRecord::phases).
    pub(crate) fn mark(&self, phase: &str) {
        let at = self.started.elapsed().as_secs_f64();
        if let Ok(mut p) = self.phases.lock() {
            p.push((phase.to_string(), at));
        }
    }
}
