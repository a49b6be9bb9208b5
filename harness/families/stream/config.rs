//! The read-floor kernel (kernels/stream_read.cu): A and B read once with plain vector loads and summed, nothing
//! else, so that a GEMM's weight stream is held against a measured read rate rather than a copy's (H79).
//! On the command line: `stream` (the defaults) or `stream:unroll=2,hint=plain,pdl=0,ctas=2,threads=512`;
//! `stream:rows=64,threads=512` reads the weights in the GEMMs' order instead (H84).

use crate::error::{config_err, Result};
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::kernel::spec::{flag, switches, whole};
use serde::{Deserialize, Serialize};

/// How each 16-byte load is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamHint {
    /// `ld.global`.
    Plain,
    /// `ld.global.nc.L1::no_allocate`: through the read-only path, not kept in L1.
    NoAllocate,
    /// That, with an L2 evict-first cache policy (what the GEMMs' `evict_first=1` puts on the weights).
    EvictFirst,
}

impl StreamHint {
    fn code(self) -> u32 {
        match self {
            StreamHint::Plain => 0,
            StreamHint::NoAllocate => 1,
            StreamHint::EvictFirst => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            StreamHint::Plain => "plain",
            StreamHint::NoAllocate => "nc",
            StreamHint::EvictFirst => "evict_first",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamConfig {
    /// 16-byte loads each thread has in flight.
    pub unroll: u32,
    /// Threads a CTA.
    pub threads: u32,
    /// CTAs an SM (the grid is this many times the SM count).
    pub ctas_per_sm: u32,
    pub hint: StreamHint,
    /// Launched under programmatic dependent launch, waiting for the previous grid as the GEMMs do.
    pub pdl: bool,
    /// 0: one linear sweep over A and B. R > 0: B in the GEMMs' order, each CTA R weight rows, a k-block of 128
    /// bytes of each per load step, 8 threads a row (threads = 8 R); the grid is then one CTA per R rows.
    #[serde(default)]
    pub rows: u32,
    /// The linear sweep with a chain of this many dependent `mma.sync` on each lap's loads once they land (H90).
    #[serde(default)]
    pub mmas: u32,
}

impl Default for StreamConfig {
    /// H79's floor kernel: 8 loads in flight a thread, two CTAs of 512 an SM (128 KB in flight an SM).
    fn default() -> StreamConfig {
        StreamConfig {
            unroll: 8,
            threads: 512,
            ctas_per_sm: 2,
            hint: StreamHint::NoAllocate,
            pdl: true,
            rows: 0,
            mmas: 0,
        }
    }
}

/// An SM holds at most this many threads.
const THREADS_PER_SM: u32 = 2048;

/// The switches a `stream:` spec takes, as `list` and the parse error name them.
pub const SWITCHES: &str = "unroll, threads, ctas, hint=plain|nc|evict_first, pdl, rows, mmas";

impl StreamConfig {
    /// `stream` or `stream:key=value,...`; None where the spec names something else (a rung).
    pub fn parse(spec: &str) -> Option<Result<StreamConfig>> {
        let pairs = switches(spec, "stream")?;
        Some(pairs.and_then(|pairs| {
            let mut c = StreamConfig::default();
            for (key, value) in pairs {
                match key {
                    "unroll" => c.unroll = whole(spec, key, value)?,
                    "threads" => c.threads = whole(spec, key, value)?,
                    "ctas" => c.ctas_per_sm = whole(spec, key, value)?,
                    "rows" => c.rows = whole(spec, key, value)?,
                    "mmas" => c.mmas = whole(spec, key, value)?,
                    "pdl" => c.pdl = flag(spec, key, value)?,
                    "hint" => {
                        c.hint = match value {
                            "plain" => StreamHint::Plain,
                            "nc" => StreamHint::NoAllocate,
                            "evict_first" => StreamHint::EvictFirst,
                            _ => {
                                return config_err(format!(
                                    "`hint={value}` in `{spec}`: plain, nc or evict_first"
                                ))
                            }
                        }
                    }
                    _ => {
                        return config_err(format!(
                            "unknown stream switch `{key}` in `{spec}`: the switches are {SWITCHES}"
                        ))
                    }
                }
            }
            c.validate().map(|_| c)
        }))
    }

    pub fn validate(&self) -> Result<()> {
        if !(1..=16).contains(&self.unroll) {
            return config_err(format!(
                "stream: unroll must be 1..16 loads in flight a thread (a lap's sum is a u32), got {}",
                self.unroll
            ));
        }
        if self.threads == 0 || !self.threads.is_multiple_of(32) || self.threads > 1024 {
            return config_err(format!(
                "stream: threads must be a multiple of 32 from 32 to 1024, got {}",
                self.threads
            ));
        }
        if self.ctas_per_sm == 0 || self.ctas_per_sm * self.threads > THREADS_PER_SM {
            return config_err(format!(
                "stream: {} CTAs of {} threads do not fit an SM ({THREADS_PER_SM} threads at most)",
                self.ctas_per_sm, self.threads
            ));
        }
        if self.rows > 0 && self.threads != 8 * self.rows {
            return config_err(format!(
                "stream: rows={} reads a k-block of 8 chunks of each row with 8 threads a row, so threads must be \
                 8 x rows = {} (got {})",
                self.rows,
                8 * self.rows,
                self.threads
            ));
        }
        if self.mmas > 64 || (self.mmas > 0 && self.rows > 0) {
            return config_err(format!(
                "stream: mmas (a chain of mma.sync after each lap of the linear sweep) must be 0..64, without rows \
                 (got mmas={}, rows={})",
                self.mmas, self.rows
            ));
        }
        Ok(())
    }

    /// Any shape the GEMMs take: every row of A and B is a whole number of 16-byte chunks when K is a multiple of 8.
    pub fn validate_shape(&self, shape: &Shape) -> Result<()> {
        self.validate()?;
        if shape.k == 0 || !shape.k.is_multiple_of(8) {
            return config_err(format!(
                "{}: the read-floor kernel reads 16-byte chunks, so K must be a positive multiple of 8 (got {})",
                shape.name, shape.k
            ));
        }
        Ok(())
    }

    /// The linear sweep's label is the one H79's records carry; the GEMMs' order adds its rows.
    pub fn label(&self) -> String {
        let mut order = if self.rows > 0 {
            format!(",rows={}", self.rows)
        } else {
            String::new()
        };
        if self.mmas > 0 {
            order.push_str(&format!(",mmas={}", self.mmas));
        }
        format!(
            "stream:unroll={},threads={},ctas={},hint={},pdl={}{order}",
            self.unroll,
            self.threads,
            self.ctas_per_sm,
            self.hint.name(),
            u32::from(self.pdl)
        )
    }

    /// The linear sweep: `ctas` CTAs an SM. The GEMMs' order: one CTA per `rows` weight rows (`ctas` unused).
    pub fn grid(&self, shape: &Shape, sm_count: u32) -> u32 {
        if self.rows > 0 {
            shape.n.div_ceil(self.rows as usize) as u32
        } else {
            sm_count * self.ctas_per_sm
        }
    }

    pub fn defines(&self) -> Vec<(&'static str, String)> {
        let mut d = source::util_defines(DType::F16);
        d.extend([
            ("SR_UNROLL", self.unroll.to_string()),
            ("SR_THREADS", self.threads.to_string()),
            ("SR_CTAS", self.ctas_per_sm.to_string()),
            ("SR_HINT", self.hint.code().to_string()),
            ("SR_PDL", u32::from(self.pdl).to_string()),
            ("SR_ROWS", self.rows.to_string()),
            ("SR_MMAS", self.mmas.to_string()),
        ]);
        d
    }

    pub fn program(&self) -> String {
        source::program(&self.defines(), source::STREAM_READ)
    }

    /// Bytes one launch reads: A and B, once.
    pub fn bytes_per_launch(shape: &Shape) -> f64 {
        ((shape.m * shape.k + shape.n * shape.k) * 2) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_name_is_h79s_floor_kernel() {
        let c = StreamConfig::parse("stream").unwrap().unwrap();
        assert_eq!(c, StreamConfig::default());
        assert_eq!(
            c.label(),
            "stream:unroll=8,threads=512,ctas=2,hint=nc,pdl=1"
        );
        assert_eq!(c.grid(&Shape::new("s", 1, 8192, 8192), 132), 264);
    }

    #[test]
    fn switches_parse_and_rungs_are_not_streams() {
        let c = StreamConfig::parse("stream:unroll=2,hint=evict_first,pdl=0,ctas=4,threads=256")
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.unroll, c.hint, c.pdl, c.ctas_per_sm, c.threads),
            (2, StreamHint::EvictFirst, false, 4, 256)
        );
        assert!(StreamConfig::parse("rung10:bn=128").is_none());
        assert!(StreamConfig::parse("streamk").is_none());
    }

    #[test]
    fn every_switch_listed_is_one_the_parser_takes() {
        for key in SWITCHES.split(", ").map(|s| s.split('=').next().unwrap()) {
            let e = StreamConfig::parse(&format!("stream:{key}=x"))
                .unwrap()
                .unwrap_err();
            assert!(!e.to_string().contains("unknown"), "{key}: {e}");
        }
    }

    #[test]
    fn bad_switches_name_the_constraint() {
        let err = |s: &str| StreamConfig::parse(s).unwrap().unwrap_err().to_string();
        assert!(err("stream:unroll=0").contains("unroll must be 1..16"));
        assert!(err("stream:unroll=17").contains("unroll must be 1..16"));
        assert!(err("stream:threads=100").contains("multiple of 32"));
        assert!(err("stream:ctas=3,threads=1024").contains("do not fit an SM"));
        assert!(err("stream:hint=l2").contains("plain, nc or evict_first"));
        assert!(err("stream:pdl=2").contains("0 or 1"));
        assert!(err("stream:depth=4").contains("unknown stream switch"));
        assert!(err("stream:unroll").contains("not key=value"));
        assert!(err("stream:rows=32").contains("threads must be 8 x rows = 256"));
        assert!(err("stream:mmas=65").contains("must be 0..64"));
        assert!(err("stream:rows=64,mmas=8").contains("without rows"));
    }

    #[test]
    fn the_gemms_order_takes_a_cta_per_block_of_rows() {
        let c = StreamConfig::parse("stream:rows=64,threads=512")
            .unwrap()
            .unwrap();
        assert_eq!(c.rows, 64);
        assert_eq!(c.grid(&Shape::new("s", 1, 8192, 8192), 132), 128);
        assert_eq!(c.grid(&Shape::new("s", 1, 8200, 8192), 132), 129);
        assert_eq!(
            c.label(),
            "stream:unroll=8,threads=512,ctas=2,hint=nc,pdl=1,rows=64"
        );
        assert!(c.defines().contains(&("SR_ROWS", "64".to_string())));
    }

    #[test]
    fn a_chain_of_mmas_after_each_lap_is_named_in_the_label() {
        let c = StreamConfig::parse("stream:mmas=8").unwrap().unwrap();
        assert_eq!(
            c.label(),
            "stream:unroll=8,threads=512,ctas=2,hint=nc,pdl=1,mmas=8"
        );
        assert!(c.defines().contains(&("SR_MMAS", "8".to_string())));
    }

    #[test]
    fn any_k_in_whole_chunks_and_the_bytes_it_reads() {
        let c = StreamConfig::default();
        assert!(c.validate_shape(&Shape::new("s", 1, 8192, 8192)).is_ok());
        assert!(c.validate_shape(&Shape::new("s", 1500, 8192, 8200)).is_ok());
        let e = c
            .validate_shape(&Shape::new("s", 1, 8192, 8190))
            .unwrap_err();
        assert!(e.to_string().contains("multiple of 8"));
        assert_eq!(
            StreamConfig::bytes_per_launch(&Shape::new("s", 1, 8192, 8192)),
            ((8192 + 8192 * 8192) * 2) as f64
        );
    }
}
