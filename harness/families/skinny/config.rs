//! The skinny kernel (kernels/skinny.cu): a GEMM for a few tokens whose weight stream feeds `mma.sync` straight
//! from 16-byte loads (H80). On the command line: `skinny` (the defaults) or
//! `skinny:split=8,unroll=4,tiles=1,evict_first=1,pdl=1`.

use crate::error::{config_err, Result};
use crate::kernel::config::HOPPER_SMEM_OPTIN;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::source;
use crate::kernel::spec::{flag, switches, whole};
use serde::{Deserialize, Serialize};

/// Weight rows a CTA (mma's 16-row side).
pub const ROWS: usize = 16;

/// The switches a `skinny:` spec takes, as `list` and the parse error name them.
pub const SWITCHES: &str = "split, unroll, tiles, evict_first, pdl, interleave, ring";
/// Tokens a tile (mma's 8-column side).
pub const TOKENS: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkinnyConfig {
    /// Warps a CTA, each a slice of K, their partial sums added in shared memory.
    pub split: u32,
    /// k-steps of 32 whose loads each thread issues before any MMA uses them.
    pub unroll: u32,
    /// Tiles of 8 tokens: M up to 8 times this.
    pub token_tiles: u32,
    pub evict_first: bool,
    pub pdl: bool,
    /// k-steps dealt to the warps in turns of `unroll` (one long run of each row read by the CTA's warps together,
    /// H81), not a contiguous slice of K a warp.
    pub interleave: bool,
    /// 0: each turn's loads into registers. R >= 2: through a ring of R turns in shared memory (cp.async), the
    /// next R - 1 turns' loads in flight while a turn's MMAs run (H91).
    #[serde(default)]
    pub ring: u32,
}

impl Default for SkinnyConfig {
    /// H80's kernel: 8 warps, 4 k-steps in flight (8 weight loads of 16 bytes a thread), one token tile.
    fn default() -> SkinnyConfig {
        SkinnyConfig {
            split: 8,
            unroll: 4,
            token_tiles: 1,
            evict_first: true,
            pdl: true,
            interleave: false,
            ring: 0,
        }
    }
}

impl SkinnyConfig {
    /// `skinny` or `skinny:key=value,...`; None where the spec names something else.
    pub fn parse(spec: &str) -> Option<Result<SkinnyConfig>> {
        let pairs = switches(spec, "skinny")?;
        Some(pairs.and_then(|pairs| {
            let mut c = SkinnyConfig::default();
            for (key, value) in pairs {
                match key {
                    "split" => c.split = whole(spec, key, value)?,
                    "unroll" => c.unroll = whole(spec, key, value)?,
                    "tiles" => c.token_tiles = whole(spec, key, value)?,
                    "evict_first" => c.evict_first = flag(spec, key, value)?,
                    "pdl" => c.pdl = flag(spec, key, value)?,
                    "interleave" => c.interleave = flag(spec, key, value)?,
                    "ring" => c.ring = whole(spec, key, value)?,
                    _ => {
                        return config_err(format!(
                            "unknown skinny switch `{key}` in `{spec}`: the switches are {SWITCHES}"
                        ))
                    }
                }
            }
            c.validate().map(|_| c)
        }))
    }

    pub fn validate(&self) -> Result<()> {
        if !(1..=32).contains(&self.split) {
            return config_err(format!(
                "skinny: split must be 1..32 warps a CTA, got {}",
                self.split
            ));
        }
        if !(1..=8).contains(&self.unroll) {
            return config_err(format!(
                "skinny: unroll must be 1..8 k-steps in flight, got {}",
                self.unroll
            ));
        }
        if self.ring == 1 || self.ring > 8 {
            return config_err(format!(
                "skinny: ring must be 0 (loads into registers) or 2..8 turns in shared memory, got {}",
                self.ring
            ));
        }
        if !(1..=4).contains(&self.token_tiles) {
            return config_err(format!(
                "skinny: tiles must be 1..4 tiles of 8 tokens (M <= 32), got {}",
                self.token_tiles
            ));
        }
        let ring = self.ring_bytes();
        if ring + self.partial_bytes() > HOPPER_SMEM_OPTIN {
            return config_err(format!(
                "skinny: a ring of {} turns takes {ring} B of shared memory ({} threads x {} slots of 16 B a turn), \
                 over the {HOPPER_SMEM_OPTIN} B a CTA may have with the partial sums",
                self.ring,
                self.threads(),
                self.slots()
            ));
        }
        Ok(())
    }

    /// 16-byte slots a thread fills per turn: two weight chunks and a token chunk per tile, per k-step.
    fn slots(&self) -> u32 {
        self.unroll * (2 + self.token_tiles)
    }

    /// The cp.async ring's dynamic shared memory (0 without one).
    pub fn ring_bytes(&self) -> u32 {
        self.ring * self.slots() * 16 * self.threads()
    }

    /// The warps' partial sums (static shared memory).
    fn partial_bytes(&self) -> u32 {
        self.split * self.token_tiles * 4 * 32 * 4
    }

    /// M up to 8 x tiles, K a multiple of 8 (whole 16-byte chunks), any N; sizes that fit its 32-bit indices.
    pub fn validate_shape(&self, shape: &Shape) -> Result<()> {
        self.validate()?;
        let most = TOKENS * self.token_tiles as usize;
        if shape.m == 0 || shape.m > most {
            return config_err(format!(
                "{}: the skinny kernel with tiles={} takes M from 1 to {most}, got {} (tiles=T takes up to 8T, \
                 T <= 4)",
                shape.name, self.token_tiles, shape.m
            ));
        }
        if shape.n == 0 || shape.k == 0 || !shape.k.is_multiple_of(8) {
            return config_err(format!(
                "{}: the skinny kernel needs N >= 1 and K a positive multiple of 8 (16-byte rows), got N = {}, K = {}",
                shape.name, shape.n, shape.k
            ));
        }
        if shape.n > i32::MAX as usize || shape.k > i32::MAX as usize - 32 {
            return config_err(format!(
                "{}: N and K must fit the kernel's 32-bit indices",
                shape.name
            ));
        }
        Ok(())
    }

    /// The spec that builds it; `interleave` and `ring` only where set, so that labels measured before they existed
    /// still name the same kernel.
    pub fn label(&self) -> String {
        format!(
            "skinny:split={},unroll={},tiles={},evict_first={},pdl={}{}{}",
            self.split,
            self.unroll,
            self.token_tiles,
            u32::from(self.evict_first),
            u32::from(self.pdl),
            if self.interleave { ",interleave=1" } else { "" },
            if self.ring > 0 {
                format!(",ring={}", self.ring)
            } else {
                String::new()
            }
        )
    }

    pub fn threads(&self) -> u32 {
        32 * self.split
    }

    /// One CTA per 16 weight rows.
    pub fn grid(&self, shape: &Shape) -> u32 {
        shape.n.div_ceil(ROWS) as u32
    }

    pub fn defines(&self, dtype: DType) -> Vec<(&'static str, String)> {
        let mut d = source::util_defines(dtype);
        d.extend([
            ("SK_SPLIT", self.split.to_string()),
            ("SK_UNROLL", self.unroll.to_string()),
            ("SK_TOKEN_TILES", self.token_tiles.to_string()),
            ("SK_EVICT_FIRST", u32::from(self.evict_first).to_string()),
            ("SK_PDL", u32::from(self.pdl).to_string()),
            ("SK_INTERLEAVE", u32::from(self.interleave).to_string()),
            ("SK_RING", self.ring.to_string()),
        ]);
        d
    }

    pub fn program(&self, dtype: DType) -> String {
        source::program(&self.defines(dtype), source::SKINNY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_name_is_h80s_kernel() {
        let c = SkinnyConfig::parse("skinny").unwrap().unwrap();
        assert_eq!(c, SkinnyConfig::default());
        assert_eq!(
            c.label(),
            "skinny:split=8,unroll=4,tiles=1,evict_first=1,pdl=1"
        );
        assert_eq!(c.threads(), 256);
        assert_eq!(c.grid(&Shape::new("s", 1, 8192, 8192)), 512);
        assert_eq!(c.grid(&Shape::new("s", 1, 8200, 8192)), 513);
    }

    #[test]
    fn every_switch_listed_is_one_the_parser_takes() {
        for key in SWITCHES.split(", ") {
            let e = SkinnyConfig::parse(&format!("skinny:{key}=x"))
                .unwrap()
                .unwrap_err();
            assert!(!e.to_string().contains("unknown"), "{key}: {e}");
        }
    }

    #[test]
    fn switches_parse_and_other_specs_are_not_skinny() {
        let c = SkinnyConfig::parse("skinny:split=4,unroll=2,tiles=2,evict_first=0,pdl=0")
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.split, c.unroll, c.token_tiles, c.evict_first, c.pdl),
            (4, 2, 2, false, false)
        );
        let i = SkinnyConfig::parse("skinny:interleave=1").unwrap().unwrap();
        assert!(i.interleave);
        assert_eq!(
            i.label(),
            "skinny:split=8,unroll=4,tiles=1,evict_first=1,pdl=1,interleave=1"
        );
        let r = SkinnyConfig::parse("skinny:ring=4,unroll=2")
            .unwrap()
            .unwrap();
        assert_eq!(
            r.label(),
            "skinny:split=8,unroll=2,tiles=1,evict_first=1,pdl=1,ring=4"
        );
        // 4 turns x 6 slots of 16 B x 256 threads.
        assert_eq!(r.ring_bytes(), 4 * 6 * 16 * 256);
        assert!(r
            .defines(DType::F16)
            .contains(&("SK_RING", "4".to_string())));
        assert_eq!(SkinnyConfig::default().ring_bytes(), 0);
        assert!(SkinnyConfig::parse("stream").is_none());
        assert!(SkinnyConfig::parse("rung10").is_none());
    }

    #[test]
    fn bad_switches_and_shapes_name_the_constraint() {
        let err = |s: &str| SkinnyConfig::parse(s).unwrap().unwrap_err().to_string();
        assert!(err("skinny:split=0").contains("split must be 1..32"));
        assert!(err("skinny:unroll=9").contains("unroll must be 1..8"));
        assert!(err("skinny:tiles=5").contains("tiles must be 1..4"));
        assert!(err("skinny:pdl=2").contains("0 or 1"));
        assert!(err("skinny:unroll=x").contains("not a whole number"));
        assert!(err("skinny:rows=32").contains("unknown skinny switch"));
        assert!(err("skinny:ring=1").contains("ring must be 0"));
        assert!(err("skinny:ring=8,unroll=8,tiles=4").contains("over the"));
        let c = SkinnyConfig::default();
        let shape_err = |m, n, k| {
            c.validate_shape(&Shape::new("s", m, n, k))
                .unwrap_err()
                .to_string()
        };
        assert!(shape_err(9, 8192, 8192).contains("takes M from 1 to 8"));
        assert!(shape_err(1, 8192, 8190).contains("multiple of 8"));
        assert!(c.validate_shape(&Shape::new("s", 7, 8200, 8200)).is_ok());
    }
}
