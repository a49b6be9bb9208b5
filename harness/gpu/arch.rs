//! GPU architectures: what a kernel needs (`sm_80`: that compute capability or later; `sm_90a`: exactly 9.0, for
//! the architecture-specific instructions the ladder's kernels use) and what NVRTC compiles for on the GPU at hand.
//! The suite runs on any CUDA GPU from sm_80 on; a trial whose kernels need more is skipped there, saying why.

/// A compute capability a kernel needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub major: i32,
    pub minor: i32,
    /// `a`: architecture-specific features (wgmma, setmaxnreg): runs on this compute capability only.
    pub specific: bool,
}

impl Arch {
    /// The ladder's kernels: wgmma, TMA multicast within clusters, setmaxnreg.
    pub const HOPPER: Arch = Arch {
        major: 9,
        minor: 0,
        specific: true,
    };
    /// Programmatic dependent launch (`griddepcontrol`), which the read floor and the skinny GEMM use when their
    /// `pdl` switch is on.
    pub const PDL: Arch = Arch {
        major: 9,
        minor: 0,
        specific: false,
    };
    /// The oldest GPU the suite runs on: cuBLAS, the checks, the statistics and the portable kernels need nothing
    /// newer (bf16 mma.sync, cp.async and L2 cache hints arrived with sm_80).
    pub const OLDEST: Arch = Arch {
        major: 8,
        minor: 0,
        specific: false,
    };

    pub fn parse(s: &str) -> Option<Arch> {
        let digits = s.strip_prefix("sm_")?;
        let (digits, specific) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        if digits.len() < 2 || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let n: i32 = digits.parse().ok()?;
        Some(Arch {
            major: n / 10,
            minor: n % 10,
            specific,
        })
    }

    pub fn name(&self) -> String {
        format!(
            "sm_{}{}{}",
            self.major,
            self.minor,
            if self.specific { "a" } else { "" }
        )
    }

    /// Whether a GPU of compute capability `cc` runs it.
    pub fn runs_on(&self, cc: (i32, i32)) -> bool {
        if self.specific {
            cc == (self.major, self.minor)
        } else {
            cc >= (self.major, self.minor)
        }
    }

    /// Why the GPU `gpu` of compute capability `cc` cannot run it, in words; None where it can.
    pub fn refused_by(&self, gpu: &str, cc: (i32, i32)) -> Option<String> {
        (!self.runs_on(cc)).then(|| {
            let exactly = if self.specific { " exactly" } else { "" };
            format!(
                "needs{exactly} {}, this GPU is {} ({gpu})",
                self.name(),
                Arch::of(cc).name()
            )
        })
    }

    /// The GPU of compute capability `cc`, as an architecture.
    pub fn of(cc: (i32, i32)) -> Arch {
        Arch {
            major: cc.0,
            minor: cc.1,
            specific: false,
        }
    }

    /// What NVRTC compiles for on a GPU of compute capability `cc`: on Hopper its architecture-specific target
    /// (what the ladder's kernels need, and what every committed H200 run was compiled for), elsewhere its own.
    pub fn target_for(cc: (i32, i32)) -> Arch {
        if Arch::HOPPER.runs_on(cc) {
            Arch::HOPPER
        } else {
            Arch::of(cc)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Arch {
        Arch::parse(s).unwrap()
    }

    #[test]
    fn names_parse_back_and_say_where_they_run() {
        for s in ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"] {
            assert_eq!(a(s).name(), s);
        }
        assert!(a("sm_80").runs_on((9, 0)) && a("sm_80").runs_on((8, 0)));
        assert!(!a("sm_89").runs_on((8, 6)));
        assert!(a("sm_90a").runs_on((9, 0)) && !a("sm_90a").runs_on((10, 0)));
        for bad in ["sm_9", "90", "sm_9x", "sm_", "sm_90b"] {
            assert!(Arch::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_refusal_names_both_architectures_and_the_gpu() {
        assert_eq!(
            Arch::HOPPER.refused_by("NVIDIA L40S", (8, 9)).unwrap(),
            "needs exactly sm_90a, this GPU is sm_89 (NVIDIA L40S)"
        );
        assert_eq!(
            Arch::PDL.refused_by("NVIDIA A100", (8, 0)).unwrap(),
            "needs sm_90, this GPU is sm_80 (NVIDIA A100)"
        );
        assert_eq!(Arch::HOPPER.refused_by("NVIDIA H200", (9, 0)), None);
        assert!(Arch::HOPPER.refused_by("NVIDIA B200", (10, 0)).is_some());
        assert_eq!(Arch::OLDEST.refused_by("NVIDIA B200", (10, 0)), None);
        assert!(Arch::OLDEST.refused_by("Tesla V100", (7, 0)).is_some());
    }

    #[test]
    fn nvrtc_compiles_for_hoppers_specific_target_and_elsewhere_for_the_gpus_own() {
        assert_eq!(Arch::target_for((9, 0)).name(), "sm_90a");
        assert_eq!(Arch::target_for((8, 9)).name(), "sm_89");
        assert_eq!(Arch::target_for((10, 0)).name(), "sm_100");
        assert_eq!(Arch::target_for((12, 0)).name(), "sm_120");
    }
}
