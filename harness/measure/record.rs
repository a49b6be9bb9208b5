//! What a trial's record keeps of each variant: its label, configuration, resources, check and figures.

use crate::gpu::compile::ResourceReport;
use crate::kernel::config::GemmConfig;
use crate::measure::check::CheckReport;
use crate::measure::measures::{self, Measure};
use serde::{Deserialize, Serialize};

/// Figures for one variant of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "VariantRecordWire")]
pub struct VariantRecord {
    pub name: String,
    /// What actually ran: the kernel label, or the cuBLAS path chosen.
    pub label: String,
    pub config: Option<GemmConfig>,
    pub resources: Option<ResourceReport>,
    pub check: Option<CheckReport>,
    /// Timed variants: time, throughput and bandwidth (GEMMs) or fill rate (load paths).
    pub measures: Vec<Measure>,
    /// Load-path and read-floor kernels: the checksum of the bytes loaded (got, expected).
    pub checksum: Option<(u64, u64)>,
}

impl VariantRecord {
    pub fn measure(&self, name: &str) -> Option<f64> {
        measures::find(&self.measures, name)
    }
    pub fn median_us(&self) -> Option<f64> {
        self.measure(measures::TIME)
    }
}

/// A variant record as stored, also in the older form with `median_us`, `rate` and `rate_unit`.
#[derive(Deserialize)]
struct VariantRecordWire {
    name: String,
    label: String,
    config: Option<GemmConfig>,
    resources: Option<ResourceReport>,
    check: Option<CheckReport>,
    #[serde(flatten)]
    measures: measures::StoredMeasures,
    checksum: Option<(u64, u64)>,
}

impl From<VariantRecordWire> for VariantRecord {
    fn from(w: VariantRecordWire) -> VariantRecord {
        VariantRecord {
            name: w.name,
            label: w.label,
            config: w.config,
            resources: w.resources,
            check: w.check,
            measures: w.measures.into_measures(),
            checksum: w.checksum,
        }
    }
}
